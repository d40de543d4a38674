"""The ``rca`` command: a thin typer layer over the Python API (no logic lives here)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import polars as pl
import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column, Table

from rca.errors import RcaError
from rca.ingest import FileResult, IngestOptions, IngestReport
from rca.ingest import ingest as run_ingest
from rca.store import open_store

if TYPE_CHECKING:
    from rca.explain import Explanation
    from rca.redact import Redaction

app = typer.Typer(help="Offline log forensics and root-cause analysis for GPU / ML infrastructure.", no_args_is_help=True)


def _stdout() -> Console:
    """A console on stdout, made for each use: rich fixes a console's width from COLUMNS when it is made."""
    return Console()


def _stderr() -> Console:
    return Console(stderr=True, soft_wrap=True)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.", is_eager=True)] = False,
) -> None:
    """Offline log forensics and root-cause analysis for GPU / ML infrastructure."""
    if version:
        from rca import __version__

        _stdout().print(f"rca {__version__}")
        raise typer.Exit()


StoreOption = Annotated[str, typer.Option("--store", "-s", help="Store folder (created if missing), or an fsspec URL such as s3://BUCKET/PREFIX (needs rca\\[s3]).")]
RedactOption = Annotated[bool, typer.Option("--redact", help="Mask secrets and personal data (tokens, API keys, URL passwords, e-mails, IPs) in the output, for sharing; the store keeps the originals.")]
RedactRulesOption = Annotated[Path | None, typer.Option("--redact-rules", help="YAML file of redaction rules: 'disable: [category, ...]' and extra 'rules:' (implies --redact).")]
RedactSkipOption = Annotated[list[str] | None, typer.Option("--redact-skip", help="A redaction category to leave unmasked (repeatable): tokens, api_keys, url_passwords, emails, ipv4, ipv6 (implies --redact).")]


def _redaction(redact: bool, rules: Path | None, skip: list[str] | None) -> Redaction | None:
    """The redaction the --redact options ask for; None when they ask for none."""
    from rca.redact import redaction

    return redaction(rules, disable=skip or ()) if redact or rules is not None or skip else None


@app.command()
def ingest(
    path: Annotated[Path, typer.Argument(help="Folder of logs (DIR/<host>/...), a single log file, or an archive (tar, tar.gz/xz/bz2, zip).")],
    store: StoreOption = "rca-store",
    format: Annotated[str | None, typer.Option("--format", help="Parse every file as this source (kernel, kubelet, k8s, nvidia_smi, pipeline) instead of sniffing.")] = None,
    host: Annotated[str | None, typer.Option("--host", help="Host name for every event (overrides the folder layout and the log lines).")] = None,
    tz: Annotated[str, typer.Option("--tz", help="Time zone of timestamps written without one (IANA name); a syslog or journal file whose banner or own zoned stamps tell its zone is read at that zone. Files the store read with another --tz are read again.")] = "UTC",
    year: Annotated[int | None, typer.Option("--year", help="Year of timestamps written without one (default: from the file's dated lines, else its mtime).")] = None,
    boot_time: Annotated[datetime | None, typer.Option("--boot-time", help="Boot time (UTC) that boot-relative kernel timestamps count from.", formats=["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S%z"])] = None,
    workers: Annotated[int | None, typer.Option("--workers", "-j", help="Parallel processes (default: all cores).", min=1)] = None,
    scheduler: Annotated[str | None, typer.Option("--scheduler", envvar="DASK_SCHEDULER_ADDRESS", help="Run on the Dask cluster of this scheduler (tcp://HOST:8786) instead of local processes; needs rca\\[dask], and workers that see PATH at the same paths and the store at the same path or URL.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout.")] = False,
    correlate: Annotated[bool, typer.Option("--correlate/--no-correlate", help="Group the events into incidents once ingested.")] = True,
    window: Annotated[str, typer.Option("--window", help="How far before a failure evidence is looked for (e.g. 15m, 1h).")] = "15m",
    wait: Annotated[float, typer.Option("--wait", help="When another rca process is writing the store, wait up to this many seconds for it (default: refuse at once).", min=0)] = 0.0,
) -> None:
    """Parse every log under PATH into the store's event table (only new or grown files are read), then correlate."""
    options = IngestOptions(format=format, host=host, tz=tz, year=year, boot_time=_as_utc(boot_time))

    def waiting(holder: str) -> None:
        _stderr().print(f"waiting up to {wait:g} s for the lock on {store}: it is being written by {holder}", highlight=False)

    try:
        with _progress() as tracker:
            report = run_ingest(path, store, options, workers=workers, scheduler=scheduler, progress=tracker, lock_wait=wait, on_lock_wait=waiting)
        correlation = _correlate_after_ingest(report, window) if correlate else None
    except (RcaError, ValueError) as err:
        _stderr().print(f"[bold red]error:[/] {err}")
        raise typer.Exit(2) from None
    if as_json:
        summary = {"run_id": report.run_id, "store": str(report.store), "changes": report.changes, **report.summary}
        _stdout().print_json(json.dumps({**summary, "correlation": correlation}, default=str))
    else:
        _print_summary(report)
        _print_zone_hints(report.summary["zone_hints"], path, tz)
        if correlation is not None:
            _print_correlation(correlation, store)
            _print_next_steps(store)
    readable = report.files.filter(report.files["status"].is_in(["ok", "warning"])).height
    if report.files.height and not readable and not report.changes.get("unchanged"):
        raise typer.Exit(1)


def _correlate_after_ingest(report: IngestReport, window: str) -> dict:
    from rca.correlate import correlate_store, parse_window

    return correlate_store(open_store(report.store), window=parse_window(window))


def _as_utc(moment: datetime | None) -> datetime | None:
    from datetime import UTC

    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


class _progress:
    """A rich progress bar on a terminal; nothing at all when stderr is not one."""

    def __enter__(self) -> _progress | None:
        if not sys.stderr.isatty():
            return None
        self._bar = Progress(TextColumn("ingest"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[bytes]}"), TimeElapsedColumn(), console=_stderr(), transient=True)
        self._bar.start()
        self._task = self._bar.add_task("files", total=None, bytes="")
        self._bytes = 0
        return self

    def __call__(self, result: FileResult) -> None:
        self._bytes += result.manifest.get("bytes") or 0
        self._bar.update(self._task, advance=1, bytes=f"{self._bytes / 1e6:,.1f} MB")

    def __exit__(self, *exc: object) -> None:
        if sys.stderr.isatty():
            self._bar.stop()


def _print_summary(report: IngestReport) -> None:
    s = report.summary
    changes = ", ".join(f"{n} {what}" for what, n in sorted(report.changes.items())) or "no files"
    _stdout().print(f"[bold]rca ingest[/] → {report.store}  ({changes})")
    _stdout().print(f"{s['files']} files, {s['lines']:,} lines, {s['events']:,} new events; hosts: {', '.join(s['hosts']) or '-'}")
    if s["files_without_host"]:
        _stdout().print(f"[yellow]{s['files_without_host']} file(s) name no host[/]: lay the folder out as DIR/<host>/… or pass --host "
                  "(correlation takes the one host their folder, or the nearest one above, names; else each such file alone)")
    if s["time_range"]:
        _stdout().print(f"time range: {s['time_range'][0]} … {s['time_range'][1]}  ({s['events_without_time']:,} events without a time)")
    _stdout().print(f"OOM-class events: [bold]{s['oom_class_events']}[/]   lines kept as plain log: {s['unparsed_lines']:,}")
    table = Table("source", "kind", "events", title="events by source and kind")
    for row in s["by_source_kind"]:
        table.add_row(row["source"], row["kind"], f"{row['events']:,}")
    if s["by_source_kind"]:
        _wide_out().print(table)
    if s["problem_files"]:
        problems = Table("file", "status", "problem", title="files with problems")
        for row in s["problem_files"]:
            problems.add_row(row["path"], row["status"], row["error"] or "")
        _wide_out().print(problems)


def _print_zone_hints(hints: list[dict], path: Path, tz: str) -> None:
    for hint in hints:
        _stdout().print(
            f"[yellow]{hint['host']} states its zone as UTC{hint['stated_zone']}[/] ({hint['stated_events']:,} stamp(s) in "
            f"{hint['stated_in']}…) but {hint['zoneless_events']:,} times in {hint['zoneless_files']} file(s) ({hint['zoneless_example']}…) "
            f"carry no zone and were read at --tz {tz}: if they are its local time, run [bold]rca ingest {path} --tz "
            f"{hint['stated_zone']}[/] (files read at another --tz are read again)",
            highlight=False,
        )


kb_app = typer.Typer(help="The failure-mode knowledge base: validate, list, show, and explain a match.", no_args_is_help=True)
app.add_typer(kb_app, name="kb")
KbOption = Annotated[Path | None, typer.Option("--kb", help="Knowledge-base folder (default: the bundled one).")]


@kb_app.command("validate")
def kb_validate(kb: KbOption = None) -> None:
    """Check every YAML file; print problems as file:line: message (exit 1 when there are any)."""
    from rca import kb as kb_stage

    errors = kb_stage.validate_kb(kb)
    for error in errors:
        _stdout().print(error, markup=False, highlight=False, soft_wrap=True)
    if errors:
        raise typer.Exit(1)
    _stdout().print(f"{kb or kb_stage.default_kb_path()}: valid ({len(kb_stage.load_kb(kb))} entries)")


@kb_app.command("list")
def kb_list(kb: KbOption = None) -> None:
    """One line per failure mode."""
    from rca import kb as kb_stage

    try:
        summary = kb_stage.load_kb(kb).summary()
    except RcaError as err:
        _stderr().print(f"[bold red]error:[/] {err}", markup=True, highlight=False)
        raise typer.Exit(2) from None
    table = Table("id", "title", "rules", "steps", "shared checklist")
    for row in summary.iter_rows(named=True):
        table.add_row(row["id"], row["title"], str(row["rules"]), str(row["steps"]), row["shared_checklist"] or "")
    _wide_out().print(table)


@kb_app.command("show")
def kb_show(entry_id: Annotated[str, typer.Argument(help="Failure-mode id, e.g. gpu-memory-fragmentation.")], kb: KbOption = None) -> None:
    """An entry with its symptoms, rules and resolved checklist."""
    from rca import kb as kb_stage

    try:
        text = kb_stage.describe_entry(kb_stage.load_kb(kb), entry_id)
    except RcaError as err:
        _stderr().print(f"[bold red]error:[/] {err}", highlight=False)
        raise typer.Exit(2) from None
    _stdout().print(Markdown(text))


@kb_app.command("match")
def kb_match(incident_id: str, store: StoreOption = "rca-store", kb: KbOption = None, top: int = 3) -> None:
    """Why an incident got its entry: every rule of its best entries, matched or not."""
    from rca import kb as kb_stage

    try:
        why = kb_stage.explain_match(open_store(store).incidents(), kb_stage.load_kb(kb), incident_id, top=top)
    except RcaError as err:
        _stderr().print(f"[bold red]error:[/] {err}", highlight=False)
        raise typer.Exit(2) from None
    if why.is_empty():
        _stderr().print(f"[bold red]error:[/] no incident {incident_id} in {store}")
        raise typer.Exit(2)
    table = Table("entry", "rule score", "rule", "weight", "matched")
    for row in why.iter_rows(named=True):
        table.add_row(row["kb_id"], f"{row['rule_score']:.2f}", row["rule"], f"{row['weight']:+g}" + (" (required)" if row["required"] else ""), "yes" if row["matched"] else "")
    _wide_out().print(table)


def _print_correlation(report: dict, store: str) -> None:
    _stdout().print(f"[bold]rca correlate[/] → {store}: {report['incidents']} incidents from {report['anchors']} anchors "
              f"({report['multi_host_incidents']} multi-host), {report['links']:,} links, {report['seconds']:.2f} s")
    if report["alignment"]:
        table = Table("host", "file", "boot", "method", "events", "matches", "boot time", "skew (s)", title="boot-relative clocks")
        for row in report["alignment"]:
            skew = "" if row["residual_skew_s"] is None else f"{row['residual_skew_s']:.3f}"
            table.add_row(row["host"] or "-", row["file"], str(row["boot"]), row["method"], str(row["events"]), str(row["matches"]), row["boot_time"] or "-", skew)
        _wide_out().print(table)
    for row in report["year_shifts"]:
        _stdout().print(f"[yellow]year corrected:[/] {row['host'] or '(no host)'} {row['file']} shifted by {row['shifted_years']} year(s) to agree with the host's dated logs")
    taken: dict[str, list[str]] = {}
    for row in report.get("hosts_of_folders", []):
        taken.setdefault(row["host"], []).append(row["file"])
    for host, files in taken.items():
        shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        _stdout().print(f"[yellow]host taken from the folder:[/] {shown} (naming no host) correlated as {host}'s, the one host their folder (or the nearest one above) names", highlight=False)


def _print_next_steps(store: str) -> None:
    """What to run next, on the incident most recently started (one of no time when none has one)."""
    incidents = open_store(store).incidents()
    if incidents.is_empty():
        return
    latest = incidents.sort("start", "incident_id", descending=True, nulls_last=True).row(0, named=True)
    flag = "" if store == "rca-store" else f" --store {store}"
    _stdout().print(f"next: [bold]rca incidents{flag}[/] lists them; [bold]rca explain {latest['incident_id']}{flag}[/] walks the latest "
              f"({latest['anchor_kind']}), [bold]rca postmortem {latest['incident_id']}{flag} --html[/] writes its notebook", highlight=False)


datasets_app = typer.Typer(help="Synthetic incident corpora with known answers.", no_args_is_help=True)
app.add_typer(datasets_app, name="datasets")


@datasets_app.command("generate")
def datasets_generate(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder to write logs/, ground_truth.csv and evidence.jsonl into.")],
    seed: Annotated[int, typer.Option("--seed", help="Same seed, same bytes.")] = 0,
    days: Annotated[int, typer.Option("--days", help="Days of logs.", min=1)] = 7,
    hosts: Annotated[int, typer.Option("--hosts", help="GPU hosts.", min=1)] = 6,
    incidents_per_mode: Annotated[int, typer.Option("--incidents-per-mode", help="Incidents injected per failure mode.", min=1)] = 3,
    size: Annotated[str, typer.Option("--size", help="Total size, e.g. 5MB, 300MB, 1GB.")] = "20MB",
) -> None:
    """Write a multi-host GPU-cluster log corpus with injected incidents of every failure mode."""
    from rca.datasets import generate

    try:
        result = generate(out_dir, seed=seed, days=days, hosts=hosts, incidents_per_mode=incidents_per_mode, size=size)
    except ValueError as err:
        _fail(err)
    _stdout().print(f"wrote {result.files} files ({result.bytes / 1e6:,.1f} MB, {result.lines:,} lines, {result.noise_ratio:.1%} noise) "
              f"with {result.incidents} incidents on {len(result.hosts)} hosts → {result.out}/logs, truth in {result.out}/ground_truth.csv")


@app.command("eval")
def eval_command(
    truth: Annotated[Path, typer.Option("--truth", help="ground_truth.csv written by 'rca datasets generate'.")],
    store: StoreOption = "rca-store",
    tolerance: Annotated[float, typer.Option("--tolerance", help="Seconds of slack when matching incident times to the truth.")] = 120.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the scores as JSON on stdout.")] = False,
) -> None:
    """Score the store's incidents against a corpus' ground truth (recall, precision, KB accuracy, ARI, NMI)."""
    from rca import evaluate

    try:
        report = evaluate.score(open_store(store).incidents(), evaluate.load_truth(truth), tolerance)
    except (RcaError, OSError) as err:
        _stderr().print(f"[bold red]error:[/] {err}")
        raise typer.Exit(2) from None
    if as_json:
        _stdout().print_json(json.dumps(report.as_dict()))
        return
    _stdout().print(f"incidents: {report.truth} in truth, {report.found} found, {report.matched} matched")
    _stdout().print(f"recall {report.recall:.3f}   precision {report.precision:.3f}")
    for name, value in (("KB top-1 accuracy", report.kb_top1_accuracy), ("ARI", report.ari), ("NMI", report.nmi)):
        _stdout().print(f"{name}: {value:.3f}" if value is not None else f"{name}: n/a")
    if report.missing_columns:
        _stdout().print(f"[yellow]not scored yet:[/] the incidents have no {', '.join(report.missing_columns)} column (run 'rca cluster')")
    table = Table("mode", "truth", "matched", "recall", "KB correct", title="per failure mode")
    for row in report.per_mode:
        table.add_row(row["mode_id"], str(row["truth"]), str(row["matched"]), f"{row['recall']:.2f}", "" if row["kb_correct"] is None else str(row["kb_correct"]))
    _wide_out().print(table)


_TIME_FORMATS = ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%d"]
WindowOption = Annotated[str, typer.Option("--window", help="Evidence window before an anchor, e.g. 15m, 90s, 1h.")]


def _fail(err: Exception) -> None:
    _stderr().print(f"[bold red]error:[/] {err}")
    raise typer.Exit(2) from None


@app.command("correlate")
def correlate_command(
    store: StoreOption = "rca-store",
    window: WindowOption = "15m",
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON on stdout.")] = False,
) -> None:
    """Group the store's events into incidents (one per failure) with evidence links and signals."""
    from rca.correlate import correlate_store, parse_window

    try:
        report = correlate_store(open_store(store), window=parse_window(window))
    except (RcaError, ValueError) as err:
        _fail(err)
    if as_json:
        _stdout().print_json(json.dumps(report, default=str))
        return
    _print_correlation(report, store)


@app.command("migrate")
def migrate_command(store: StoreOption = "rca-store") -> None:
    """Convert a store written by an older rca to this one's layout, in place."""
    from rca.store import Store

    try:
        version = Store(store).migrate()
    except RcaError as err:
        _fail(err)
    _stdout().print(f"{store}: already in the current layout" if version is None else f"{store}: converted from store schema {version}")


@app.command("incidents")
def incidents_command(
    store: StoreOption = "rca-store",
    host: Annotated[str | None, typer.Option("--host", help="Only incidents involving this host.")] = None,
    since: Annotated[datetime | None, typer.Option("--since", help="Only incidents starting at or after this time (UTC).", formats=_TIME_FORMATS)] = None,
    until: Annotated[datetime | None, typer.Option("--until", help="Only incidents starting before this time (UTC).", formats=_TIME_FORMATS)] = None,
    kind: Annotated[str | None, typer.Option("--kind", help="Only incidents with this anchor kind (e.g. cuda_oom, oom_kill).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the incidents as JSON lines on stdout.")] = False,
) -> None:
    """List the incidents of the last correlation."""
    from rca.timeline import duration, filter_incidents

    try:
        found = filter_incidents(open_store(store).incidents(), host=host, since=_as_utc(since), until=_as_utc(until), kind=kind)
    except RcaError as err:
        _fail(err)
    if as_json:
        sys.stdout.write(found.write_ndjson())
        return
    table = Table(_whole("incident", found["incident_id"]), _whole("start (UTC)", ["0000-00-00 00:00:00"]), "host", "kind", "pod / pid", "GPU",
                  "events", "sources", "signals", title=f"{found.height} incidents")
    for row in found.iter_rows(named=True):
        who = "/".join(x for x in (row["namespace"], row["pod"]) if x) or (f"pid {row['pid']}" if row["pid"] else "-")
        hosts = (row["host"] or "-") + (f" +{len(row['hosts']) - 1}" if len(row["hosts"]) > 1 else "")
        span = (row["end"] - row["start"]).total_seconds() if row["start"] and row["end"] else 0.0
        signals = " ".join(part for part in (_signal_summary(row), f"span {duration(span)}" if span >= 1 else "") if part)
        table.add_row(row["incident_id"], f"{row['start']:%Y-%m-%d %H:%M:%S}" if row["start"] else "?", hosts, row["anchor_kind"], who,
                      "" if row["gpu_index"] is None else str(row["gpu_index"]), str(row["n_events"]), ",".join(row["sources"] or []),
                      signals)
    _wide_out().print(table)


def _wide_out() -> Console:
    """stdout, 200 columns wide when piped into a file or a pager with no COLUMNS (rich would squeeze everything into 80)."""
    drawn = _stdout()
    return drawn if drawn.is_terminal or "COLUMNS" in os.environ else Console(width=200)


def _whole(header: str, values: Iterable[str | None]) -> Column:
    """A column of ids that are copied into the next command: never cut or wrapped, however narrow the terminal."""
    return Column(header, no_wrap=True, min_width=max((len(v) for v in values if v), default=len(header)))


def _signal_summary(row: dict) -> str:
    parts = []
    if row["gpu_mem_growth_shape"]:
        parts.append(row["gpu_mem_growth_shape"])
    if row["gpu_mem_peak_pct"] is not None:
        parts.append(f"peak {row['gpu_mem_peak_pct']:.0f}%")
    if row["reserved_unallocated_frac"] is not None:
        parts.append(f"frag {row['reserved_unallocated_frac']:.0%}")
    if row["oom_constraint"]:
        parts.append(row["oom_constraint"])
    if row["runtime_oom"]:
        parts.append(row["runtime_oom"])
    if row["xid_codes"]:
        parts.append("xid " + ",".join(str(x) for x in row["xid_codes"]))
    return " ".join(parts)


@app.command("timeline")
def timeline_command(
    incident_id: Annotated[str | None, typer.Argument(help="Incident to draw (from 'rca incidents').")] = None,
    store: StoreOption = "rca-store",
    host: Annotated[str | None, typer.Option("--host", help="Draw every event of this host instead (needs --since and --until).")] = None,
    since: Annotated[datetime | None, typer.Option("--since", help="Window start (UTC) with --host.", formats=_TIME_FORMATS)] = None,
    until: Annotated[datetime | None, typer.Option("--until", help="Window end (UTC) with --host.", formats=_TIME_FORMATS)] = None,
    width: Annotated[int | None, typer.Option("--width", help="Width of the drawing in characters (default: the terminal's).", min=40)] = None,
) -> None:
    """Swimlane timeline of one incident (one lane per source, anchors highlighted) or of a host's time window."""
    from rca.timeline import incident_timeline, swimlanes, window_timeline

    if (incident_id is None) == (host is None) or (host and (since is None or until is None)):
        _fail(ValueError("give an INCIDENT_ID, or --host with --since and --until"))
    try:
        opened = open_store(store)
        if incident_id:
            frame, title = incident_timeline(opened, incident_id), f"incident {incident_id} (times relative to its first anchor)"
        else:
            frame, title = window_timeline(opened, host, _as_utc(since), _as_utc(until)), f"{host} from {since} to {until}"
    except RcaError as err:
        _fail(err)
    drawn = _wide_out()
    drawn.print(swimlanes(frame, width=width or drawn.width, title=title))


@app.command("export")
def export_command(
    out_path: Annotated[Path, typer.Option("--out", "-o", help="File to write.")],
    format: Annotated[str, typer.Option("--format", help="timesketch (JSONL; CSV when --out ends in .csv), csv or parquet.")] = "timesketch",
    store: StoreOption = "rca-store",
    incident: Annotated[str | None, typer.Option("--incident", help="Only this incident's events.")] = None,
    redact: RedactOption = False,
    redact_rules: RedactRulesOption = None,
    redact_skip: RedactSkipOption = None,
) -> None:
    """Export the incidents' linked events for Timesketch or other tools."""
    from rca.timeline import export_frame, flat_times, timesketch

    if format not in ("timesketch", "csv", "parquet"):
        _fail(ValueError(f"unknown export format {format!r}; use timesketch, csv or parquet"))
    try:
        frame = export_frame(open_store(store), incident, redact=_redaction(redact, redact_rules, redact_skip))
    except RcaError as err:
        _fail(err)
    if format == "parquet":
        frame.write_parquet(out_path)
    elif format == "csv":
        flat_times(frame).write_csv(out_path)
    elif out_path.suffix == ".csv":
        timesketch(frame).write_csv(out_path)
    else:
        timesketch(frame).write_ndjson(out_path)
    untimed = frame["ts"].null_count()
    if format == "timesketch" and untimed:
        _stderr().print(f"{untimed} events without a time left out (Timesketch needs one)")
    _stdout().print(f"wrote {frame.height:,} events to {out_path}")


@app.command("cluster")
def cluster_command(
    store: StoreOption = "rca-store",
    k: Annotated[str, typer.Option("--k", help="K-means' k ('auto': chosen by silhouette); earlier modes count towards it.")] = "auto",
    seed: Annotated[int, typer.Option("--seed", help="Random seed of K-means: the same seed and incidents give the same modes.")] = 0,
    embedder: Annotated[str, typer.Option("--embedder", help="minilm (all-MiniLM-L6-v2, offline) or tfidf (light).")] = "minilm",
    kb: KbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON on stdout.")] = False,
) -> None:
    """Group the store's incidents into failure modes (stable across runs) and map each to the knowledge base."""
    from rca.cluster import cluster_store, parse_k

    try:
        report = cluster_store(open_store(store), k=parse_k(k), seed=seed, embedder=embedder, kb=kb)
    except (RcaError, ValueError) as err:
        _fail(err)
    for notice in report["notices"]:
        _stderr().print(f"[yellow]notice:[/] {notice}", highlight=False)
    if not report["incidents"]:
        _stderr().print(f"[yellow]notice:[/] {store} holds no incidents: run 'rca correlate --store {store}' first", highlight=False)
    if as_json:
        _stdout().print_json(json.dumps(report, default=str))
        return
    _stdout().print(f"[bold]rca cluster[/] → {store}: {report['incidents']} incidents in {report['modes']} failure modes "
              f"({report['new_modes']} new, {report['recurring_modes']} recurring, {report['dormant_modes']} dormant), "
              f"embedder {report['embedder']}, {report['embedded_texts']} texts embedded, {report['seconds']:.2f} s")
    _print_modes(open_store(store).failure_modes())
    for path in report["drafts_written"]:
        _stdout().print(f"[yellow]draft:[/] {path}: no knowledge-base entry matched this mode; complete it "
                  f"('rca kb validate --kb {Path(path).parent}' lists what is missing)")


@app.command("modes")
def modes_command(
    store: StoreOption = "rca-store",
    as_json: Annotated[bool, typer.Option("--json", help="Print the modes as JSON lines on stdout (without centroids).")] = False,
) -> None:
    """The failure modes of the store: one row per mode, with its knowledge-base entry."""
    try:
        modes = open_store(store).failure_modes()
    except RcaError as err:
        _fail(err)
    if as_json:
        sys.stdout.write(modes.drop("centroid").write_ndjson())
        return
    if modes.is_empty():
        _stdout().print(f"no failure modes in {store} yet: run 'rca cluster --store {store}'")
        return
    _print_modes(modes)


def _print_modes(modes: pl.DataFrame) -> None:
    table = Table(_whole("mode", modes["mode_id"]), "status", "size", "entry", "conf.", "label", "hosts", "first seen (UTC)", "last seen (UTC)",
                  _whole("medoid", modes["medoid_incident"]), title=f"{modes.height} failure modes")
    for row in modes.iter_rows(named=True):
        hosts = ", ".join(row["hosts"][:3]) + (f" +{len(row['hosts']) - 3}" if len(row["hosts"]) > 3 else "")
        entry = f"[red]{row['kb_id']}[/]" if row["kb_id"] == "unknown" else row["kb_id"]
        seen = [f"{moment:%Y-%m-%d %H:%M}" if moment else "?" for moment in (row["first_seen"], row["last_seen"])]
        new = f" (+{row['new_incidents']})" if row["new_incidents"] and row["status"] != "new" else ""
        table.add_row(row["mode_id"], row["status"], f"{row['size']}{new}", entry, f"{row['kb_confidence']:.2f}", row["label"], hosts,
                      *seen, row["medoid_incident"])
    _wide_out().print(table)


@app.command("digest")
def digest_command(
    store: StoreOption = "rca-store",
    week: Annotated[str | None, typer.Option("--week", help="ISO week to cover, e.g. 2026-W48 (default: the last 7 days of data).")] = None,
    since: Annotated[datetime | None, typer.Option("--since", help="Window start (UTC), instead of --week.", formats=_TIME_FORMATS)] = None,
    until: Annotated[datetime | None, typer.Option("--until", help="Window end (UTC, exclusive), instead of --week.", formats=_TIME_FORMATS)] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Folder to write digest-<week>.md and digest-<week>.html into.")] = Path("."),
    redact: RedactOption = False,
    redact_rules: RedactRulesOption = None,
    redact_skip: RedactSkipOption = None,
) -> None:
    """Weekly incident digest: Markdown and a self-contained HTML page with charts; prints their paths."""
    from rca.report import write_digest

    try:
        paths = write_digest(open_store(store), out_dir, week=week, since=_as_utc(since), until=_as_utc(until),
                             redact=_redaction(redact, redact_rules, redact_skip))
    except (RcaError, ValueError) as err:
        _fail(err)
    for path in paths:
        _stdout().print(str(path), markup=False, highlight=False, soft_wrap=True)


@app.command("postmortem")
def postmortem_command(
    incident_id: Annotated[str, typer.Argument(help="Incident to write up (from 'rca incidents').")],
    store: StoreOption = "rca-store",
    out_path: Annotated[Path | None, typer.Option("--out", help="Notebook to write, or a folder to write postmortem-<incident>.ipynb into (default: that name here).")] = None,
    html: Annotated[bool, typer.Option("--html", help="Also convert the executed notebook to HTML next to it.")] = False,
    redact: RedactOption = False,
    redact_rules: RedactRulesOption = None,
    redact_skip: RedactSkipOption = None,
) -> None:
    """Run the postmortem notebook for one incident (papermill) and, with --html, convert it (nbconvert); prints the paths."""
    from rca.report import run_postmortem

    try:
        result = run_postmortem(open_store(store), incident_id, out_path, html=html, redact=_redaction(redact, redact_rules, redact_skip))
    except RcaError as err:
        _fail(err)
    for path in (result.notebook, result.html):
        if path is not None:
            _stdout().print(str(path), markup=False, highlight=False, soft_wrap=True)


@app.command("explain")
def explain_command(
    incident_id: Annotated[str, typer.Argument(help="Incident to explain (from 'rca incidents').")],
    store: StoreOption = "rca-store",
    kb: KbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the walk as JSON on stdout.")] = False,
) -> None:
    """Walk one incident through the OOM stages (cgroup, GPU processes, PyTorch allocator), then its failure mode and checklist."""
    from rca.explain import explain

    try:
        explanation = explain(open_store(store), incident_id, kb=kb)
    except RcaError as err:
        _fail(err)
    if as_json:
        _stdout().print_json(json.dumps(explanation.to_dict(), default=str))
        return
    _print_explanation(explanation)


def _print_explanation(explanation: Explanation) -> None:
    from rich.console import Group
    from rich.panel import Panel
    from rich.text import Text

    from rca._explain_stages import host_name
    from rca.explain import format_figure, runtime_label

    start = f"{explanation.start:%Y-%m-%d %H:%M:%S} UTC" if explanation.start else "an unknown time"
    what = explanation.anchor_kind + (f" ({runtime_label(explanation.runtime_oom)} out of memory)" if explanation.runtime_oom else "")
    _stdout().print(f"[bold]rca explain[/] {explanation.incident_id}: {what} on {host_name(explanation.host)} at {start}", highlight=False)
    for number, stage in enumerate(explanation.stages, 1):
        figures = Table.grid(padding=(0, 2))
        for name, value in stage.figures.items():
            if value is not None:
                figures.add_row(Text(name, style="dim"), Text(format_figure(name, value)))
        lines = [Text.assemble((line.location, "cyan"), "  ", line.text) for line in stage.evidence]
        body = [Text(stage.summary, style="bold" if stage.explains else ""), figures, *lines]
        if stage.missing:
            body.append(Text(stage.missing, style="yellow"))
        style = "green" if stage.name == explanation.deciding_stage else ("red" if stage.verdict == "no_data" else "blue")
        _stdout().print(Panel(Group(*body), title=f"{number}. {stage.name}: {stage.question}", subtitle=stage.verdict, border_style=style,
                        title_align="left"))
    decided = f"decided by {explanation.deciding_stage}" if explanation.deciding_stage else "no stage decides"
    _stdout().print(f"[bold]{decided}[/]: {explanation.reason}", highlight=False)
    confidence = f", confidence {explanation.kb_confidence:.2f}" if explanation.kb_confidence is not None else ""
    mode = f"failure mode {explanation.failure_mode}, " if explanation.failure_mode else ""
    basis = "matched by rca cluster" if explanation.kb_basis == "cluster" else "best rule match (not clustered yet)"
    steps = Text()
    for number, step in enumerate(explanation.checklist, 1):
        steps.append(f"{number}. ", style="bold").append(step.check + "\n", style="cyan")
        if step.expect:
            steps.append(f"   expect: {step.expect}\n")
        steps.append(f"   fix: {step.fix}\n")
    title = f"{mode}{explanation.kb_id}" + (f": {explanation.kb_title}" if explanation.kb_title else "")
    _stdout().print(Panel(Group(Text(f"{basis}{confidence}", style="dim"), Text("Checklist", style="bold"), steps) if explanation.checklist
                    else Text(f"{basis}{confidence}; no checklist for an unknown mode", style="dim"), title=title, title_align="left"))


@app.command("snapshot-diff")
def snapshot_diff_command(
    before: Annotated[Path, typer.Argument(help="The earlier torch.cuda.memory._dump_snapshot pickle.")],
    after: Annotated[Path, typer.Argument(help="The later snapshot of the same process.")],
    top: Annotated[int, typer.Option("--top", min=1, help="Allocation sites to show.")] = 15,
    as_json: Annotated[bool, typer.Option("--json", help="Print the sites as JSON on stdout.")] = False,
) -> None:
    """Which allocation sites grew between two PyTorch memory snapshots, and by how much (bytes and blocks)."""
    from rca.snapshots import diff

    try:
        grown = diff(before, after, top=top)
    except (RcaError, OSError) as err:
        _fail(err)
    if as_json:
        _stdout().print_json(json.dumps(grown.to_dicts()))
        return
    table = Table("allocation site", "growth", "blocks", "before", "after", title=f"allocation sites, {before.name} -> {after.name}")
    for row in grown.iter_rows(named=True):
        table.add_row(row["frame"], _mib(row["bytes_growth"], signed=True), f"{row['count_growth']:+d}", _mib(row["bytes_before"]),
                      _mib(row["bytes_after"]))
    _wide_out().print(table)


def _mib(size: int, signed: bool = False) -> str:
    return f"{size / 2**20:{'+' if signed else ''}.1f} MiB"


def main() -> None:
    """Console-script entry point."""
    app()
