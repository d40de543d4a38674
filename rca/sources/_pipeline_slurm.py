"""Slurm's accounting saved as a table: `sacct` output read by its header's columns.

A row of sacct means nothing without its header: "   10000Mn    412420K" is ReqMem and MaxRSS only
under "    ReqMem     MaxRSS". Two layouts are read:

- the default, fixed-width: a header of field names over a rule of dashes, one dash run per column
  ("------------ ---------- "); a value is cut to its column (a "+" at its end), so the gaps between the
  runs are blank on every row, and a line whose gap holds text ends the table;
- ``-P``/``--parsable2`` (and ``-p``, with a trailing "|"): a header of names joined by "|", each row as
  many "|" as its header.

Tables are few in a file, so they are found by a vectorized pass and each read with one select.
The rows' facts are joined back onto their events by line (:func:`with_table_facts`).

Two reports of one job are read into the same cells, one row on the line that states the job's state:
``seff``'s ("Job ID: 1234" … "State: OUT_OF_MEMORY (exit code 0)" … "Memory Efficiency: 95.23% of 4.00 GB", some sites'
behind "# ") and ``scontrol show job``'s key=value block ("JobId=1234 JobName=x", "   JobState=OUT_OF_MEMORY …",
"   NodeList=gpu01", "   TRES=cpu=4,mem=16G,…").
"""

from __future__ import annotations

import itertools
import re

import polars as pl

from rca import timeutil
from rca.sources._base import joined_json
from rca.sources._pipeline_attrs import json_number, json_object, json_text

# sacct's field names a header is made of (case-insensitive: `-o reqmem` prints "ReqMem").
_FIELDS = frozenset(
    name.lower() for name in (
        "JobID", "JobIDRaw", "JobName", "Partition", "Account", "AllocCPUS", "NCPUS", "NNodes", "NTasks", "State", "ExitCode",
        "MaxRSS", "MaxRSSNode", "MaxRSSTask", "AveRSS", "MaxVMSize", "MaxVMSizeNode", "MaxVMSizeTask", "AveVMSize", "ReqMem",
        "NodeList", "Start", "End", "Submit", "Eligible", "Elapsed", "ElapsedRaw", "Timelimit", "TotalCPU", "CPUTime", "UserCPU",
        "SystemCPU", "User", "Group", "ReqCPUS", "ReqTRES", "AllocTRES", "ReqNodes", "AllocNodes", "MaxPages", "AveCPU", "MinCPU",
        "Reserved", "Suspended", "DerivedExitCode", "Cluster", "QOS", "WorkDir", "Comment", "Constraints", "Flags",
    )
)
_NAME = r"[A-Za-z][A-Za-z0-9]*"
_HEADER = rf"^ *{_NAME}(?: +{_NAME})* *$"
_PIPE_HEADER = rf"^{_NAME}(?:\|{_NAME})+\|?$"
_RULE = r"^ *-{2,}(?: +-{2,})* *$"
# A sacct header for the pipeline source's sniffing: names only, one of them a name no other tool's table heads a column with.
# seff's lines and scontrol's JobState line are as much Slurm's own.
SNIFF_MARKER = (
    r"^ *(?:[A-Za-z]+[ |]+)*(?:JobID|JobIDRaw|ReqMem|MaxRSS|MaxVMSize|AllocCPUS|ExitCode|NodeList)(?:[ |]+[A-Za-z]+)*[ |]*$"
    r"|^(?:# )?(?:State: +[A-Z_]+ \(exit code [0-9]+\)|(?:CPU|Memory) Efficiency: +[0-9.]+% of \S)|^ *JobState=[A-Z_]+ Reason=\S"
)
# A size as sacct prints it: 1024-based, its unit a letter ("412420K", "3.50G"); a bare number is bytes ("0").
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}
_SIZE = r"^([0-9]+(?:\.[0-9]+)?)([KMGTP]?)$"
# ReqMem: before Slurm 21.08 a "n" (per node) or "c" (per CPU) follows the size ("4000Mc", "10000Mn").
_REQ_MEM = r"^([0-9]+(?:\.[0-9]+)?)([KMGTP]?)([nc]?)$"
_STAMP = r"^[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]$"
# One node's name; a range ("node[01-04]") or a list names several, "None assigned" none.
_ONE_NODE = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"
# The columns read, by lower-cased field name.
_READ = (
    "jobid", "jobname", "state", "exitcode", "maxrss", "maxvmsize", "reqmem", "alloccpus", "ncpus", "nodelist", "maxrssnode", "start", "end",
    "elapsed", "cluster", "nnodes",
)
# The states of a job or step that ended badly (a state cut to its column ends in "+").
_FAILED_STATES = ("FAILED", "OUT_OF_MEMORY", "OUT_OF_ME+", "TIMEOUT", "NODE_FAIL")
# (a report's own: seff's memory efficiency, and whether the row is a report's rather than a table's)
_CELLS = {**{name: pl.String() for name in _READ}, "mem_efficiency": pl.String(), "report": pl.Boolean()}

# One line of seff's report: "Key: value" (aligned, behind "# ", at some sites).
_SEFF_LINE = (
    r"^(?:# )?(?<key>Job ID|Array Job ID|Cluster|User/Group|State|Nodes|Cores(?: per node)?|CPU Utilized|CPU Efficiency|"
    r"(?:Job )?Wall-clock time|Memory Utilized|Memory Efficiency): +(?<value>\S.*?) *$"
)
# seff's sizes are 1024-based with a "B" ("3.81 GB", "0.00 MB (estimated maximum)"): as sacct prints them ("3.81G")
_SEFF_SIZE = r"^([0-9]+(?:\.[0-9]+)?) ([KMGTP])B\b"
# One line of scontrol's block: "   Key=value Key=value" (a GRES line indented further).
_SCONTROL_LINE = r"^ *[A-Za-z][A-Za-z0-9_/:]*=\S*(?: +[A-Za-z][A-Za-z0-9_/:]*=\S*)* *$"
# The states whose EndTime (or StartTime) scontrol foretells rather than records.
_NOT_ENDED = ("PENDING", "RUNNING", "SUSPENDED", "CONFIGURING", "REQUEUED", "RESIZING")


def _is_header(text: str) -> bool:
    names = [name.lower() for name in text.replace("|", " ").split()]
    return bool(names) and all(name in _FIELDS for name in names)


def _headers(lines: pl.DataFrame) -> pl.DataFrame:
    """The header lines (with their rule's text for a fixed-width one) whose every word is a field of sacct's."""
    text, line = pl.col("text"), pl.col("line")
    same_file = pl.col("batch_file").eq_missing(pl.col("batch_file").shift(-1)) if "batch_file" in lines.columns else pl.lit(True)
    ruled = text.str.contains(_HEADER) & text.shift(-1).str.contains(_RULE) & (line.shift(-1) == line + 1) & same_file
    candidates = lines.with_columns(rule=pl.when(ruled).then(text.shift(-1))).filter(
        pl.col("rule").is_not_null() | text.str.contains(_PIPE_HEADER)
    ).select("line", "text", "rule", file=pl.col("batch_file") if "batch_file" in lines.columns else pl.lit(None, pl.Int32))
    # (the few lines that look so: a header is one of a table)
    return candidates.filter(pl.Series([_is_header(header) for header in candidates["text"]], dtype=pl.Boolean))


def _runs(rule: str) -> list[tuple[int, int]]:
    """The (start, end) of each dash run of a rule line."""
    runs, start = [], None
    for at, char in enumerate(rule + " "):
        if char == "-" and start is None:
            start = at
        elif char != "-" and start is not None:
            runs.append((start, at))
            start = None
    return runs


def _fixed_rows(lines: pl.DataFrame, header: str, rule: str, first: int, file: int | None) -> pl.DataFrame:
    runs = _runs(rule)
    names = [header[start:end].strip().lower() for start, end in runs]
    text = pl.col("text")
    # The gaps between the runs are blank on each row of the table (a value longer than its column is cut).
    gaps = [at for (_, end), (start, _) in itertools.pairwise(runs) for at in range(end, start)]
    fits = text.str.contains(r"\S") & pl.all_horizontal([text.str.slice(at, 1).is_in(["", " "]) for at in gaps] or [pl.lit(True)])
    cells = {name: text.str.slice(start, end - start).str.strip_chars() for name, (start, end) in zip(names, runs) if name in _CELLS}
    return _contiguous(lines, first, file, fits).select("line", **cells)


def _pipe_rows(lines: pl.DataFrame, header: str, first: int, file: int | None) -> pl.DataFrame:
    names = [name.lower() for name in header.split("|")]
    text = pl.col("text")
    fits = text.str.count_matches("|", literal=True) == header.count("|")
    parts = text.str.split("|")
    cells = {name: parts.list.get(at, null_on_oob=True) for at, name in enumerate(names) if name in _CELLS}
    return _contiguous(lines, first, file, fits).select("line", **cells)


def _contiguous(lines: pl.DataFrame, first: int, file: int | None, fits: pl.Expr) -> pl.DataFrame:
    """The lines of the header's ``file`` (of a batch) from ``first`` on, one after another, up to the first that does not fit."""
    after = lines.filter(pl.col("line") >= first, *([pl.col("batch_file") == file] if file is not None else []))
    kept = (fits & (pl.col("line") == first + pl.int_range(pl.len()))).cum_min()
    return after.filter(kept)


def table_cells(lines: pl.DataFrame) -> pl.DataFrame:
    """One row per data row of each sacct table in ``lines`` (``line``, ``text``[, ``batch_file``]), its cells by
    field name (null where its table has no such column)."""
    empty = pl.DataFrame(schema={"line": pl.Int64(), **_CELLS})
    if not lines.select(pl.col("text").str.contains(f"{_RULE}|{_PIPE_HEADER}|^(?:# )?State: |^ *JobState=").any()).item():
        return empty
    tables = [
        _fixed_rows(lines, header, rule, line + 2, file) if rule is not None else _pipe_rows(lines, header, line + 1, file)
        for line, header, rule, file in _headers(lines).iter_rows()
    ]
    cells = pl.concat([empty, *tables, *_reports(lines)], how="diagonal_relaxed")
    return cells.with_columns(pl.col("line").cast(pl.Int64), pl.col("report").fill_null(False)).unique("line", keep="first", maintain_order=True)


def carried_lines(lines: pl.DataFrame) -> pl.DataFrame:
    """The header (and its rule) of the sacct table the lines end in, which its rows in the next batch of the file read by."""
    none = lines.clear().select("line", "text")
    if lines.is_empty():
        return none
    last_text = lines["text"][-1]
    if re.search(_HEADER, last_text) and _is_header(last_text):
        return lines.tail(1).select("line", "text")  # its rule opens the next batch
    if not lines.select(pl.col("text").str.contains(f"{_RULE}|{_PIPE_HEADER}").any()).item():
        return none
    headers = _headers(lines)
    if headers.is_empty():
        return none
    line, header, rule, file = headers.row(-1)
    first = line + (2 if rule is not None else 1)
    rows = _fixed_rows(lines, header, rule, first, file) if rule is not None else _pipe_rows(lines, header, first, file)
    last = rows["line"].max() if rows.height else first - 1
    return lines.filter(pl.col("line").is_between(line, first - 1)).select("line", "text") if last == lines["line"].max() else none


def _runs_of(lines: pl.DataFrame, member: pl.Expr) -> pl.DataFrame:
    """The member lines, each with the number of its run of member lines one after another (of one file of a batch)."""
    line = pl.col("line")
    same_file = pl.col("batch_file").eq_missing(pl.col("batch_file").shift(1)) if "batch_file" in lines.columns else pl.lit(True)
    continues = member.shift(1).fill_null(False) & (line.shift(1) == line - 1).fill_null(False) & same_file
    return lines.with_columns(member=member, run=(member & ~continues).cum_sum()).filter(pl.col("member"))


def _reports(lines: pl.DataFrame) -> list[pl.DataFrame]:
    """seff's and scontrol's reports, each one row of cells on its State / JobState line."""
    text = pl.col("text")
    found = lines.select(seff=text.str.contains(r"^(?:# )?State: +[A-Z]").any(), scontrol=text.str.contains(r"^ *JobState=[A-Z]").any())
    seff, scontrol = found.row(0)
    return [*([_seff(lines)] if seff else []), *([_scontrol(lines)] if scontrol else [])]


def _seff(lines: pl.DataFrame) -> pl.DataFrame:
    kv = pl.col("text").str.extract_groups(_SEFF_LINE).struct
    rows = _runs_of(lines.with_columns(key=kv.field("key"), value=kv.field("value")), kv.field("key").is_not_null())

    def of(key: str) -> pl.Expr:
        return pl.col("value").filter(pl.col("key") == key).first()

    def size(value: pl.Expr) -> pl.Expr:
        return value.str.extract(_SEFF_SIZE, 1) + value.str.extract(_SEFF_SIZE, 2)

    report = rows.group_by("run").agg(
        line=pl.col("line").filter(pl.col("key") == "State").first(),
        jobid=pl.coalesce(of("Job ID"), of("Array Job ID")), cluster=of("Cluster"), nnodes=of("Nodes"),
        state=of("State").str.extract(r"^([A-Z_]+)", 1), exitcode=of("State").str.extract(r"\(exit code ([0-9]+)\)", 1),
        elapsed=pl.coalesce(of("Job Wall-clock time"), of("Wall-clock time")), maxrss=size(of("Memory Utilized")),
        # "95.23% of 4.00 GB": the request (the whole job's, when seff adds "(2.00 GB/core)")
        reqmem=size(of("Memory Efficiency").str.extract(r"^[0-9.]+% of (.*)$", 1)),
        mem_efficiency=of("Memory Efficiency").str.extract(r"^([0-9]+(?:\.[0-9]+)?)%", 1),
    )
    return report.filter(pl.col("line").is_not_null()).drop("run").with_columns(report=pl.lit(True))


def _scontrol(lines: pl.DataFrame) -> pl.DataFrame:
    rows = _runs_of(lines, pl.col("text").str.contains(_SCONTROL_LINE))

    def of(pattern: str) -> pl.Expr:
        return pl.col("text").str.extract(pattern, 1).drop_nulls().first()

    state = of(r"(?:^|\s)JobState=([A-Z_]+)")
    # a job not ended yet: its EndTime is its time limit's end; a pending one's StartTime a guess
    report = rows.group_by("run").agg(
        line=pl.col("line").filter(pl.col("text").str.contains(r"^ *JobState=")).first(),
        jobid=of(r"(?:^|\s)JobId=([0-9][0-9_]*)"), jobname=of(r"(?:^|\s)JobName=(\S+)"), state=state,
        exitcode=of(r"(?:^|\s)ExitCode=([0-9]+:[0-9]+)"), nodelist=of(r"(?:^|\s)NodeList=(\S+)"),
        nnodes=of(r"(?:^|\s)NumNodes=([0-9]+)"), ncpus=of(r"(?:^|\s)NumCPUs=([0-9]+)"),
        # TRES (AllocTRES since 23.02) is what the job holds: its "mem=16G" the whole job's
        reqmem=of(r"(?:^|\s)(?:Alloc)?TRES=(?:\S*,)?mem=([0-9]+(?:\.[0-9]+)?[KMGTP]?)(?:,|$|\s)"),
        start=pl.when(state != "PENDING").then(of(r"(?:^|\s)StartTime=(\S+)")),
        end=pl.when(~state.is_in(_NOT_ENDED)).then(of(r"(?:^|\s)EndTime=(\S+)")),
    )
    return report.filter(pl.col("line").is_not_null()).drop("run").with_columns(report=pl.lit(True))


def _size(cell: pl.Expr) -> pl.Expr:
    number = cell.str.extract(_SIZE, 1).cast(pl.Float64)
    unit = cell.str.extract(_SIZE, 2).replace_strict(_UNITS, default=None, return_dtype=pl.Float64)
    return (number * unit).round().cast(pl.Int64)


def _requested(cells: pl.DataFrame) -> pl.Expr:
    """ReqMem in bytes for the row: a per-CPU request times the row's CPUs (null when the table has no count of them)."""
    req = pl.col("reqmem")
    size = req.str.extract(_REQ_MEM, 1).cast(pl.Float64) * req.str.extract(_REQ_MEM, 2).replace_strict(_UNITS, default=None, return_dtype=pl.Float64)
    cpus = pl.coalesce("alloccpus", "ncpus").cast(pl.Float64, strict=False)
    per_cpu = req.str.extract(_REQ_MEM, 3) == "c"
    return pl.when(per_cpu).then(size * cpus).otherwise(size).round().cast(pl.Int64)


def with_table_facts(events: pl.DataFrame, cells: pl.DataFrame, tz: str) -> pl.DataFrame:
    """Each table row's event with the row's MaxRSS (``rss_bytes``), ReqMem (``mem_requested_bytes``), single node
    (``host``), End or else Start (its time, Slurm's local time in ``tz``) and, in attrs, its job name, elapsed time,
    MaxVMSize, and the id and state where the rules did not read them."""
    if cells.is_empty():
        return events
    stamp = pl.coalesce(*(pl.when(pl.col(name).str.contains(_STAMP)).then(pl.col(name)) for name in ("end", "start")))
    facts = cells.select(
        "line",
        s_rss=_size(pl.col("maxrss")), s_requested=_requested(cells),
        s_host=pl.coalesce(*(pl.when(pl.col(name).str.contains(_ONE_NODE)).then(pl.col(name)) for name in ("nodelist", "maxrssnode"))),
        # ExitCode's "code:signal" (seff prints the code alone)
        s_exit=pl.col("exitcode").str.extract(r"^([0-9]+)(?::[0-9]+)?$", 1).cast(pl.Int32),
        s_stamp=stamp, s_failed=pl.col("state").is_in(_FAILED_STATES),
        s_attrs=json_object({
            "slurm_job_name": json_text(pl.when(pl.col("jobname") != "").then(pl.col("jobname"))),
            "slurm_elapsed": json_text(pl.when(pl.col("elapsed") != "").then(pl.col("elapsed"))),
            "slurm_max_vmsize": json_number(_size(pl.col("maxvmsize"))),
            # as printed: its "n"/"c" says per node or per CPU
            "slurm_req_mem": json_text(pl.when(pl.col("reqmem") != "").then(pl.col("reqmem"))),
            "slurm_cluster": json_text(pl.when(pl.col("cluster") != "").then(pl.col("cluster"))),
            "slurm_nodes": json_number(pl.col("nnodes").cast(pl.Int64, strict=False)),
            # seff's MaxRSS over the request, in percent: over 100 where the job outgrew what it asked for
            "slurm_mem_efficiency_pct": json_number(pl.col("mem_efficiency").cast(pl.Float64, strict=False)),
        }),
        s_ruled=json_object({
            "slurm_step": json_text(pl.when(pl.col("jobid") != "").then(pl.col("jobid"))),
            "slurm_state": json_text(pl.when(pl.col("state") != "").then(pl.col("state"))),
        }),
    )
    read = events.join(facts, on="line", how="left")
    dated = pl.col("ts").is_null() & pl.col("s_stamp").is_not_null()
    # the rules' own reading of a row's id and state (a step cut to "3801897.bat+") stands
    unruled = ~pl.col("attrs").str.contains('"slurm_state":', literal=True).fill_null(False)
    return read.with_columns(
        rss_bytes=pl.coalesce("rss_bytes", "s_rss"),
        mem_requested_bytes=pl.coalesce("mem_requested_bytes", "s_requested"),
        host=pl.coalesce("s_host", "host"),
        exit_code=pl.coalesce("exit_code", "s_exit"),
        ts=pl.when(dated).then(timeutil.iso_to_utc(pl.col("s_stamp"), tz)).otherwise(pl.col("ts")),
        ts_raw=pl.when(dated).then(pl.col("s_stamp")).otherwise(pl.col("ts_raw")),
        ts_quality=pl.when(dated).then(pl.lit("exact")).otherwise(pl.col("ts_quality")),
        # a failed row the rules left a log (a table without ExitCode) is still the job's failure
        severity=pl.when(unruled & (pl.col("kind") == "log") & pl.col("s_failed").fill_null(False)).then(pl.lit("error")).otherwise(pl.col("severity")),
        attrs=joined_json(pl.col("attrs"), joined_json(pl.when(unruled).then(pl.col("s_ruled")), pl.col("s_attrs"))),
    ).drop("s_rss", "s_requested", "s_host", "s_exit", "s_stamp", "s_failed", "s_attrs", "s_ruled")


def unpeeled(framed: pl.DataFrame, lines: pl.DataFrame, cells: pl.DataFrame) -> pl.DataFrame:
    """A table row's body is its whole line: a step's id at its start ("1234.0 ") is no BuildKit step's seconds."""
    if cells.is_empty():
        return framed
    raw = lines.join(cells.filter(~pl.col("report")).select("line"), on="line").select("line", s_raw=pl.col("text").str.strip_chars_end())
    return framed.join(raw, on="line", how="left").with_columns(body=pl.coalesce("s_raw", "body")).drop("s_raw")
