"""The ``rca`` command: a thin typer layer over the Python API (no logic lives here)."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from rca import ingest as ingest_stage
from rca.errors import RcaError

app = typer.Typer(help="Offline log forensics and root-cause analysis for GPU / ML infrastructure.", no_args_is_help=True)
console = Console(stderr=True)
out = Console()



@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.", is_eager=True)] = False,
) -> None:
    """Offline log forensics and root-cause analysis for GPU / ML infrastructure."""
    if version:
        from rca import __version__

        out.print(f"rca {__version__}")
        raise typer.Exit()


StoreOption = Annotated[Path, typer.Option("--store", "-s", help="Store folder (created if missing).")]


@app.command()
def ingest(
    path: Annotated[Path, typer.Argument(help="Folder of logs (DIR/<host>/...) or a single log file.")],
    store: StoreOption = Path("rca-store"),
    format: Annotated[str | None, typer.Option("--format", help="Parse every file as this source (kernel, kubelet, k8s, nvidia_smi, pipeline) instead of sniffing.")] = None,
    host: Annotated[str | None, typer.Option("--host", help="Host name for every event (overrides the folder layout and the log lines).")] = None,
    tz: Annotated[str, typer.Option("--tz", help="Time zone of timestamps written without one (IANA name).")] = "UTC",
    year: Annotated[int | None, typer.Option("--year", help="Year of timestamps written without one (default: from the file's dated lines, else its mtime).")] = None,
    boot_time: Annotated[datetime | None, typer.Option("--boot-time", help="Boot time (UTC) that boot-relative kernel timestamps count from.", formats=["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S%z"])] = None,
    workers: Annotated[int | None, typer.Option("--workers", "-j", help="Parallel processes (default: all cores).", min=1)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout.")] = False,
) -> None:
    """Parse every log under PATH into the store's event table (only new or grown files are read)."""
    options = ingest_stage.IngestOptions(format=format, host=host, tz=tz, year=year, boot_time=_as_utc(boot_time))
    try:
        with _progress() as tracker:
            report = ingest_stage.ingest(path, store, options, workers=workers, progress=tracker)
    except RcaError as err:
        console.print(f"[bold red]error:[/] {err}")
        raise typer.Exit(2) from None
    if as_json:
        out.print_json(json.dumps({"run_id": report.run_id, "store": str(report.store), "changes": report.changes, **report.summary}))
    else:
        _print_summary(report)
    readable = report.files.filter(report.files["status"].is_in(["ok", "warning"])).height
    if report.files.height and not readable and not report.changes.get("unchanged"):
        raise typer.Exit(1)


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
        self._bar = Progress(TextColumn("ingest"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[bytes]}"), TimeElapsedColumn(), console=console, transient=True)
        self._bar.start()
        self._task = self._bar.add_task("files", total=None, bytes="")
        self._bytes = 0
        return self

    def __call__(self, result: ingest_stage.FileResult) -> None:
        self._bytes += result.manifest.get("bytes") or 0
        self._bar.update(self._task, advance=1, bytes=f"{self._bytes / 1e6:,.1f} MB")

    def __exit__(self, *exc: object) -> None:
        if sys.stderr.isatty():
            self._bar.stop()


def _print_summary(report: ingest_stage.IngestReport) -> None:
    s = report.summary
    changes = ", ".join(f"{n} {what}" for what, n in sorted(report.changes.items())) or "no files"
    out.print(f"[bold]rca ingest[/] → {report.store}  ({changes})")
    out.print(f"{s['files']} files, {s['lines']:,} lines, {s['events']:,} new events; hosts: {', '.join(s['hosts']) or '-'}")
    if s["time_range"]:
        out.print(f"time range: {s['time_range'][0]} … {s['time_range'][1]}  ({s['events_without_time']:,} events without a time)")
    out.print(f"OOM-class events: [bold]{s['oom_class_events']}[/]   lines kept as plain log: {s['unparsed_lines']:,}")
    table = Table("source", "kind", "events", title="events by source and kind")
    for row in s["by_source_kind"]:
        table.add_row(row["source"], row["kind"], f"{row['events']:,}")
    if s["by_source_kind"]:
        out.print(table)
    if s["problem_files"]:
        problems = Table("file", "status", "problem", title="files with problems")
        for row in s["problem_files"]:
            problems.add_row(row["path"], row["status"], row["error"] or "")
        out.print(problems)


def main() -> None:
    """Console-script entry point."""
    app()
