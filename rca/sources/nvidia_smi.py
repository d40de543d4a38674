"""nvidia-smi output in every form people save it: table, CSV queries, ``-q``, ``-q -x``, dmon/pmon, ``-L``.

A file is often several captures glued together (``nvidia-smi -l 5 > file``, a cron job
appending a table and a CSV query every minute, a support bundle with one section per
command). Lines are therefore cut into segments at lines only one sub-format starts with
(a table timestamp or border, a CSV header, ``==NVSMI LOG==``, ``<?xml``, ``# gpu``),
and each sub-format parses all of its segments in one pass:

=============  =========================================  ======================================
format         module                                     events
=============  =========================================  ======================================
table          :mod:`rca.sources._nvsmi_table`            gpu_sample per GPU and MIG device,
                                                          gpu_process per process row
query_csv      :mod:`rca.sources._nvsmi_csv`              gpu_sample per ``--query-gpu`` row,
                                                          gpu_process per ``--query-*-apps`` row
query_text     :mod:`rca.sources._nvsmi_query`            as the table, from ``-q``
query_xml      :mod:`rca.sources._nvsmi_xml`              as the table, from ``-q -x``
dmon / pmon    :mod:`rca.sources._nvsmi_dmon`             gpu_sample / gpu_process per row
list           this module                                log per ``-L`` line (index ↔ UUID) and per
                                                          ``nvlink -s/-e/-R`` link row (its GPU's)
=============  =========================================  ======================================

A table, ``-q`` report or dmon log pasted with an indent (a doc's code block, a notebook's output cell)
reads as the same capture without it. A MIG devices table saved on its own is a table;
``nvidia-smi topo -m`` (a matrix of links, no readings) is claimed by its header and kept as log lines.

Conventions shared by all of them: memory in ``mem_*_bytes`` (MiB and the old "MB" are
2**20 bytes); N/A is null, never 0; the GPU name and readings that have no schema column
go in ``attrs`` (``name``, ``temp_c``, ``power_w``, ``power_cap_w``, ``pstate``,
``fan_pct``, ...). MIG devices are ``gpu_sample`` rows of their parent GPU carrying
``attrs.mig_device`` (and ``gi``/``ci``), so a per-GPU series must drop rows that have
it. Snapshot stamps are zone-less: they are read in ``ctx.tz``, and rows that take their
time from the snapshot header have ``ts_quality="inherited"``. Lines nvidia-smi prints
when a GPU or the driver is gone ("Unable to determine the device handle …: GPU is lost",
"NVIDIA-SMI has failed …") stay ``log`` with severity ``error``; a device-handle failure keeps the
bus id and index of the GPU it names in ``pci_bus`` / ``gpu_index``.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from rca.sources import _nvsmi_csv, _nvsmi_dmon, _nvsmi_query, _nvsmi_table, _nvsmi_xml, register
from rca.sources._base import ParseContext, Parsed, Source, add_skipped, any_of, by_head, forward_fill_within, one_head, split_rows
from rca.sources._nvsmi_common import HANDLE_BUS, HANDLE_GPU, HANDLE_LITERAL, attrs_json, conform_events, empty_events, integer, log_rows

# ``-L`` and the GPU lines ``nvidia-smi nvlink`` heads its link rows with (indented when pasted from a doc). A post often
# hides the UUID ("(UUID: ...)", "(UUID: GPU-xxx)"): the line still names the GPU's index, without a UUID.
LIST_LINE = r"^\s*GPU (?<index>[0-9]+): (?<name>.+?) \(UUID: (?:(?<uuid>GPU-[0-9a-fA-F-]+)|[^()\s]*)\)?\s*$"
MIG_LIST_LINE = r"^\s+MIG (?<profile>\S+)\s+Device\s+(?<device>[0-9]+): \(UUID: (?<uuid>MIG-[0-9a-fA-F-]+)\)\s*$"
# ``nvidia-smi nvlink -s`` / ``-e`` / ``-R``: a row per link of the GPU above (``Link 4: <inactive>``,
# ``Link 0: CRC Errors: 3``, ``Link 0: Remote Device 00000000:D5:00.0: Link 0``).
# What ``nvidia-smi nvlink -s`` prints under a GPU none of whose links is up (a B200 whose NVLink is gone): "NVML: Unable to
# retrieve NVLink information as all links are inActive" (driver 590 spells it "NVML:Unable to retrieve Nvlink …").
NVLINK_ALL_INACTIVE = r"(?i)^\s*NVML: ?Unable to retrieve NVLink information as all links are inactive\b"
NVLINK_LINE = r"^\s+Link (?<link>[0-9]+): (?:(?<counter>[A-Za-z][A-Za-z ]*?(?:Errors?|Counts?)): (?<count>[0-9]+)|(?<state>.+?))\s*$"
# What ``nvidia-smi mig -cgi / -cci / -dgi / -dci`` answer per instance: "Successfully created compute instance ID  0 on
# GPU  0 GPU instance ID  3 using profile MIG 1g.6gb (ID  0)", "Unable to create a GPU instance on GPU  0 using profile 20:
# Insufficient Resources" (the profile as given: an id or a name), "Successfully destroyed GPU instance ID  1 from GPU  0".
MIG_COMMAND_LINE = (
    r"^\s*(?:Successfully|Unable to) (?:create|destroy)(?:d|ed)? (?:an? )?(?<what>GPU|compute) instance(?: ID\s+(?<id>[0-9]+))?"
    r" (?:on|from) GPU\s+(?<gpu>[0-9]+)(?: GPU instance ID\s+(?<gi>[0-9]+))?"
    r"(?: using profile (?:MIG )?(?<profile>[^\s:]+)(?: \(ID\s+(?<profile_id>[0-9]+)\))?)?(?::\s*(?<reason>.*?))?\s*$"
)
# What ``nvidia-smi -mig 1 -i 0`` answers per GPU ("Enabled MIG Mode for GPU 00000000:10:1C.0"), often the first line of a
# file that holds only the MIG commands' answers.
MIG_MODE_LINE = rf"^\s*(?:Enabled|Disabled) MIG Mode for GPU (?<bus>{HANDLE_BUS})\s*$"
# ``nvidia-smi mig -lgipp``: where a GPU instance profile may be placed, its start slots and its size in slots
# ("GPU  0 Profile ID  9 Placements: {0,4}:4"; a profile with one start says "Placement :").
MIG_PLACEMENT_LINE = r"^\s*GPU\s+(?<gpu>[0-9]+) Profile ID\s+(?<profile_id>[0-9]+) Placements? ?: \{(?<starts>[0-9,]*)\}:(?<size>[0-9]+)\s*$"

# What ``nvidia-smi --gpu-reset [-i N]`` answers per GPU: "GPU 00000000:18:00.0 was successfully reset.", or why it was not
# ("Unable to reset GPU 00000000:18:00.0 because it's being used by some other process …", older drivers "Unable to reset this
# GPU because …" without the bus id, "GPU Reset couldn't run because GPU 00000000:01:00.0 is the primary GPU."), then "Some GPUs
# could not be reset." A reset ends every context on the GPU, so the timeline keeps the GPU it names.
GPU_RESET_LINE = (
    rf"^\s*(?:GPU (?<done>{HANDLE_BUS}) was successfully reset\.|Unable to reset (?:GPU (?<busy>{HANDLE_BUS})|this GPU) because "
    rf"|GPU Reset couldn't run because GPU (?<refused>{HANDLE_BUS}) |Some GPUs could not be reset\.)"
)

# What nvidia-smi answers per GPU to a setting (``-pm 1``, ``-pl 300``, ``-ac``/``-acp``, ``-lgc``, ``-c``, ``-e``): "Enabled persistence
# mode for GPU 00000000:05:00.0.", "Power limit for GPU 00000000:05:00.0 was set to 110.00 W from 180.00 W.", "Applications clocks
# set to "(MEM 2505, SM 875)" for GPU 0000:00:1E.0", "GPU clocks set to "(gpuClkMin 1980, gpuClkMax 1980)" for GPU …", "Set
# compute mode to EXCLUSIVE_PROCESS for GPU ….", "Disabled ECC support for GPU …." (each run then says "All done.").
GPU_SETTING_LINE = (
    r"^\s*(?:(?:Enabled|Disabled) persistence mode|Persistence mode is already (?:Enabled|Disabled)|Power limit"
    r'|Applications clocks (?:set to "\(MEM (?<app_mem>[0-9]+), SM (?<app_sm>[0-9]+)\)"|commands have been set to [A-Z_]+)'
    r'|GPU clocks set to "\(gpuClkMin (?<clk_min>[0-9]+), gpuClkMax (?<clk_max>[0-9]+)\)"'
    r"|Set compute mode to (?<compute_mode>[A-Z_]+)|(?:Enabled|Disabled) ECC support)"
    rf" for GPU (?<bus>{HANDLE_BUS})(?: was set to (?<cap>[0-9.]+) W from (?<prev>[0-9.]+) W)?\.?\s*$"
)

# What nvidia-smi prints instead of a report when a GPU or the driver is gone (Xid 79, a
# crashed or mismatched driver, a container without the driver's NVML library mounted), or when
# it crashes itself mid-table (the shell's "Segmentation fault", seen under WSL 2): kept as log
# lines, but flagged so they are not lost in noise.
FAILURE_LINE = (
    r"Unable to (?:determine|detect) the device handle|GPU is lost|No devices were found|NVIDIA-SMI has failed|NVIDIA-SMI couldn't find"
    r"|Failed to initialize NVML|Driver/library version mismatch|Unknown Error|^Segmentation fault"
    r"|^\s*(?:Unable|Failed) to (?:create|destroy) (?:an? )?(?:GPU|compute) instance"  # a MIG layout that was not made
    # a GPU reset that did not run, and the line nvidia-smi ends such a run with
    r"|^\s*(?:Unable to reset |GPU Reset couldn't run |Some GPUs could not be reset)|^Terminating early due to previous errors"
    r"|^\s*Failed to properly shut down NVML: |^\s*GPU access blocked by the operating system"  # NVML refused (WSL 2, a VM)
)
# What nvidia-smi prints instead of any report: no driver, no GPU, a GPU it cannot reach, NVML refused, an option the GPU or
# the command line does not take (then "Treating as warning and moving on." and "All done."). A file of these alone (a health
# check's output) is nvidia-smi's, though none has a header. Not "couldn't find libnvidia-ml.so": that one is printed where
# the driver's library was never mounted, a container's log, and stays the container's.
ANSWER_LINE = (
    r"^\s*(?:NVIDIA-SMI has failed because |No devices were found\s*$"
    r"|Failed to (?:initialize|properly shut down) NVML: |NVML library version: [0-9.]+\s*$"
    r"|Unable to (?:determine|detect) the device handle for (?:GPU|gpu)|GPU access blocked by the operating system\s*$"
    r"|Not supported on the device\(s\)|Failed to process command line"
    rf"|Changing [a-z ]+ is not supported for GPU: {HANDLE_BUS}|Treating as warning and moving on\.\s*$|All done\.\s*$)"
)
# Of those, the ones that refuse an option: the run goes on (nvidia-smi says "Treating as warning"), a warning with the GPU's bus id.
REFUSED_LINE = rf"^\s*(?:Not supported on the device\(s\)|Failed to process command line|Changing [a-z ]+ is not supported for GPU: (?<bus>{HANDLE_BUS}))"
# Only the few lines that tell of a lost device handle pay for the extraction.
_HANDLE_FAILURE = (pl.col("kind") == "log") & pl.col("message").str.contains(HANDLE_LITERAL, literal=True)
# Likewise the answers of ``mig -cgi`` / ``-cci`` (printed after whichever capture came before them).
_MIG_COMMAND = (pl.col("kind") == "log") & (
    pl.col("message").str.contains(" instance ", literal=True) | pl.col("message").str.contains(" MIG Mode for GPU ", literal=True)
    | pl.col("message").str.contains(" Profile ID ", literal=True)
)

# Likewise the answers of ``--gpu-reset``.
_GPU_RESET = (pl.col("kind") == "log") & pl.col("message").str.contains("eset", literal=True)  # "reset", "Reset"
# Likewise the answers to a setting (all name their GPU "for GPU <bus id>").
_GPU_SETTING = (pl.col("kind") == "log") & pl.col("message").str.contains(" for GPU ", literal=True)
# Likewise the options refused ("not supported for GPU: <bus id>", "Not supported on the device(s)", "Failed to process ...").
_REFUSED = (pl.col("kind") == "log") & (
    pl.col("message").str.contains("ot supported ", literal=True) | pl.col("message").str.contains("Failed to process", literal=True)
)

# ``watch nvidia-smi`` heads each screen with its interval, the command and (procps-ng 3.3.10+) the host and time:
# "Every 1.0s: nvidia-smi -i 2        dg05: Tue Oct  6 17:07:38 2026". The host is the captures' below it.
_WATCH_HEADER = r"^Every [0-9.]+s: .*?\s(?<host>[A-Za-z0-9][-A-Za-z0-9_.]*): [A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8} [0-9]{4}\s*$"

_XML_START = rf"{_nvsmi_xml.DECLARATION_LINE}|{_nvsmi_xml.DOCTYPE_LINE}|{_nvsmi_xml.ROOT_LINE}"
_TABLE_START = rf"{_nvsmi_table.TIMESTAMP_LINE}|{_nvsmi_table.VERSION_LINE}|{_nvsmi_table.BORDER_LINE}"
_TABLE_HEADER = (
    r"^[ \t]*\|\s*GPU\s+Name\s.*(?:Persistence-M|Driver-Model)|^[ \t]*\|\s*(?:Compute )?[Pp]rocesses:|^[ \t]*\|\s*MIG devices:"
    r"|^[ \t]*\|\s*(?:GPU|Compute) instance(?:s| profiles):"
)
# A -q GPU block's first line under its bus id: a field ("    Product Name   : …") or a section title ("    Temperature").
_QUERY_FIELD = r"^[ \t]+[A-Z][A-Za-z0-9 .()/+-]*?(?:\s+:\s.*)?$"
# The first field of a -q Fabric section (a state NVML names, nvmlGpuFabricState_t, or N/A), Remapped Rows section,
# Clocks Event (Throttle) Reasons section or GPU Reset Status section (driver 570+: "Requested functionality has been deprecated").
_SECTION_FIELD = (
    r"^[ \t]+(?:State\s+:\s+(?:N/A|Not Supported|Not Started|In Progress|Completed)|Correctable Error\s+:\s+(?:[0-9]+|N/A)"
    r"|Idle\s+:\s+(?:Active|Not Active|N/A)|Reset Required\s+:\s+(?:Yes|No|N/A|Requested functionality has been deprecated))\s*$"
)
# The first field of a -q FB Memory Usage section: its total in MiB.
_MEMORY_FIELD = r"^[ \t]+Total\s+:\s+[0-9]+ MiB\s*$"
# The value row under a one-field CSV header: a reading with its unit, a bracketed NVML answer, N/A.
_ONE_VALUE = r"^\s*(?:[0-9][0-9.]*(?: ?[A-Za-z%]+)?|\[[^\]]+\]|N/A)\s*$"
# A line of another program's log, which nvidia-smi never prints: klog's header, logfmt (logrus, go-kit), an ISO-stamped line
# (Python logging, a container runtime's or kubectl's --timestamps prefix), a syslog stamp, a Python traceback's head, frames
# and exception.
_OTHER_LOG_LINE = (
    r"^[IWEF][0-9]{4} [0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]+ +[0-9]+ |^(?:\S+ )?(?:time|ts)=\"?[0-9]{4}-|\blevel=[a-z]+\b"
    r"|^\[?[0-9]{4}-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]|^[A-Z][a-z]{2} [ 0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] \S"
    r'|^Traceback \(most recent call last\):|^\s+File "[^"]+", line [0-9]+|^[A-Za-z_][0-9A-Za-z_.]*(?:Error|Exception): '
)
_TABLE_ROW = r"^[ \t]*[|+]"  # a table's rows and borders
# ``nvidia-smi topo -m``: a matrix of links, read as log lines (it holds no reading). Its header
# row is underlined with an SGR escape even when written to a file (driver 580).
_TOPO_HEADER = r"^\s+(?:\x1b\[[0-9;]*m)?GPU0\s.*\bCPU Affinity\b"

_PARSERS = {
    "query_xml": _nvsmi_xml.parse,
    "query_text": _nvsmi_query.parse,
    "dmon": _nvsmi_dmon.parse,
    "query_csv": _nvsmi_csv.parse,
    "table": _nvsmi_table.parse,
}


# A line that opens a segment matches one of these; the others (the rows of a long CSV log)
# are ruled out by one pass instead of one per sub-format.
_ANY_START = any_of(
    _XML_START, _nvsmi_query.BANNER_LINE, _nvsmi_query.STAMP_LINE, _nvsmi_query.HEAD_LINE, _nvsmi_query.GPU_LINE, _nvsmi_query.SECTION_LINE,
    _nvsmi_query.MEMORY_SECTION_LINE,
    _nvsmi_dmon.HEADER_LINE, _nvsmi_csv.HEADER_SHAPE, *_nvsmi_csv.LAYOUT_PATTERNS,
    _TABLE_START, LIST_LINE, MIG_LIST_LINE,
)


def _with_starts(lines: pl.DataFrame) -> pl.DataFrame:
    """``lines`` with ``start``: the sub-format a line opens, or null for a line any sub-format may contain.

    The CSV header and layout tests are kept (``csv_header``, ``csv_layout``) for the CSV parser.
    """
    text = pl.col("text")

    def opening(rows: pl.DataFrame) -> pl.DataFrame:
        marked = rows.with_columns(csv_header=_nvsmi_csv.header_expr(text), csv_layout=_nvsmi_csv.noheader_layout_expr(text))
        return marked.with_columns(
            start=pl.when(text.str.contains(_XML_START)).then(pl.lit("query_xml"))
            .when(text.str.contains(_nvsmi_query.BANNER_LINE) | text.str.contains(_nvsmi_query.STAMP_LINE)
                  | text.str.contains(_nvsmi_query.HEAD_LINE) | text.str.contains(_nvsmi_query.GPU_LINE)
                  | text.str.contains(_nvsmi_query.SECTION_LINE)
                  | text.str.contains(_nvsmi_query.MEMORY_SECTION_LINE)).then(pl.lit("query_text"))
            .when(text.str.contains(_nvsmi_dmon.HEADER_LINE)).then(pl.lit("dmon"))
            .when(pl.col("csv_header") | pl.col("csv_layout").is_not_null()).then(pl.lit("query_csv"))
            .when(text.str.contains(_TABLE_START)).then(pl.lit("table"))
            .when(text.str.contains(LIST_LINE) | text.str.contains(MIG_LIST_LINE)).then(pl.lit("list"))
        )

    def inside(rows: pl.DataFrame) -> pl.DataFrame:
        return rows.with_columns(csv_header=pl.lit(False), csv_layout=pl.lit(None, pl.String), start=pl.lit(None, pl.String))

    return split_rows(lines, text.str.contains(_ANY_START), opening, inside)


def sniff(head: Sequence[str]) -> float:
    """0.95 for a header only nvidia-smi prints; a share of recognised rows for header-less CSV."""
    return one_head(sniff_heads, head)


def sniff_heads(heads: pl.DataFrame) -> dict[int, float]:
    """:func:`sniff` of each head of :func:`~rca.sources._base.heads_frame`."""
    text = pl.col("text")
    next_line = text.shift(-1).over("head")
    unmistakable = (
        text.str.contains(_nvsmi_table.VERSION_LINE)
        | text.str.contains(_TABLE_HEADER)
        | text.str.contains(_TOPO_HEADER)
        | text.str.contains(_nvsmi_query.BANNER_LINE)
        | text.str.contains(r"^\s*<nvidia_smi_log\b|<!DOCTYPE\s+nvidia_smi_log\b")
        # a -q excerpt without its banner: its timestamp over the driver version
        | (text.str.contains(_nvsmi_query.STAMP_LINE) & next_line.str.contains(r"^[ \t]*(?:Driver|KMD) Version\s+:")).fill_null(False)
        # one cut below the timestamp: the GPU count only -q prints; one cut to GPU blocks: a bus id alone over the block's fields
        | text.str.contains(r"^[ \t]*Attached GPUs\s+:\s+[0-9]+\s*$")
        | (text.str.contains(_nvsmi_query.GPU_LINE) & next_line.str.contains(_QUERY_FIELD)).fill_null(False)
        # a -q health section grepped out of the report (``nvidia-smi -q | grep -A4 Fabric``): its title over its first field
        | (text.str.contains(_nvsmi_query.SECTION_LINE) & next_line.str.contains(_SECTION_FIELD)).fill_null(False)
        | (text.str.contains(_nvsmi_query.MEMORY_SECTION_LINE) & next_line.str.contains(_MEMORY_FIELD)).fill_null(False)
    )
    # A header of one field without its unit ("memory.used") reads as a header only over a value: a training log prints
    # parameter names such as "encoder.layer.0.attention.self.query.weight" one a line.
    one_bare_field = ~text.str.contains(",", literal=True) & ~text.str.contains(r"\[[^\]]+\]\s*$")
    structured = (
        (_nvsmi_csv.header_expr(text) & (~one_bare_field | next_line.str.contains(_ONE_VALUE)).fill_null(False))
        | text.str.contains(LIST_LINE)
        # The GPU rows of a table pasted without its header (an excerpt cut to the failing GPU).
        | (text.str.contains(_nvsmi_table.GPU_NAME_ROW) & next_line.str.contains(_nvsmi_table.GPU_USAGE_ROW))
        | (text.str.contains(_nvsmi_dmon.HEADER_LINE) & next_line.str.contains(_nvsmi_dmon.UNITS_LINE))
        # A file of ``mig -cgi`` / ``-cci`` answers alone (a MIG setup script's log): no header, but wordings only nvidia-smi prints.
        | text.str.contains(MIG_COMMAND_LINE) | text.str.contains(MIG_MODE_LINE) | text.str.contains(MIG_PLACEMENT_LINE)
        | text.str.contains(GPU_RESET_LINE)  # a GPU reset's answers alone (an epilog's or a runbook's)
        | text.str.contains(GPU_SETTING_LINE)  # a setup script's settings (persistence mode, power limit, clocks)
    )
    found = by_head(
        heads,
        unmistakable=unmistakable.any(),
        structured=structured.fill_null(False).any(),
        # nvidia-smi's stderr for a GPU it lost is written among the rows of the GPUs that answered.
        layout_share=(
            _nvsmi_csv.noheader_layout_expr(text).is_not_null() | _nvsmi_csv.identified_expr(text)
            | text.str.contains(HANDLE_LITERAL, literal=True)
        ).mean(),
        # A head of nvidia-smi's plain answers only (the file holds no report); one such line among a program's output is not.
        answer_share=text.str.contains(ANSWER_LINE).mean(),
        other_log=text.str.contains(_OTHER_LOG_LINE).sum(),
        table_rows=text.str.contains(_TABLE_ROW).sum(),
        lines=pl.len(),
    )
    return {head: _score_among_other_log(row) for head, row in found.items()}


def _score_among_other_log(found: dict) -> float:
    """:func:`_score`, or 0 where the head is another log with nvidia-smi's output inside it.

    A job's or a GPU operator component's log that prints a table at its start: most of the head's lines outside the table
    are that log's (at least two of them). The file is that log's source's to read (its levels, times, errors); claimed here,
    they would be plain lines stamped with the table's time.
    """
    other, outside_table = found["other_log"], found["lines"] - found["table_rows"]
    return _score(found) if other < 2 or 2 * other <= outside_table else 0.0


def _score(found: dict) -> float:
    if found["unmistakable"]:
        return 0.95
    if found["structured"] or (found["answer_share"] or 0.0) >= 0.5:
        return 0.9
    share = found["layout_share"] or 0.0
    return 0.5 + 0.4 * share if share >= 0.5 else 0.0


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Cut the lines into sub-format segments and parse each sub-format's segments together.

    Of the lines of several files (a ``batch_file`` column), none takes its sub-format from
    the file before. The CSV rows of all the files are read together (a header reaches to the
    end of its segment only, and a segment opens at a header or layout row of its own file);
    the other sub-formats, whose records are found by what comes before them, parse each
    file's segments alone.
    """
    file = pl.col("batch_file") if "batch_file" in lines.columns else pl.repeat(0, pl.len(), dtype=pl.Int32)
    starts = _with_starts(lines)
    segmented = _with_identified_rows(
        starts.with_columns(fmt=forward_fill_within(pl.col("start"), file).fill_null("list"), opens=pl.col("start").is_not_null())
    )
    new_segment = pl.col("opens") | pl.col("fmt").ne_missing(pl.col("fmt").shift(1))
    segmented = segmented.with_columns(segment=new_segment.cast(pl.Int32).cum_sum()).drop("start")
    events: list[pl.DataFrame] = []
    skipped: dict[str, int] = {}
    by_file: dict[int, dict[str, int]] | None = {} if "batch_file" in lines.columns else None
    for fmt in segmented["fmt"].unique(maintain_order=True).to_list():
        part = segmented.filter(pl.col("fmt") == fmt).drop("fmt", "opens")
        for parsed in _parse_format(fmt, part, ctx):
            events.append(conform_events(parsed.events))
            add_skipped(skipped, parsed.skipped)
            for number, counts in (parsed.skipped_by_file or {}).items():
                add_skipped(by_file.setdefault(number, {}), counts)
    if not events:
        return Parsed(events=empty_events(), skipped=skipped, skipped_by_file=by_file)
    failure = (pl.col("kind") == "log") & pl.col("message").str.contains(FAILURE_LINE)
    flagged = pl.concat(events).with_columns(severity=pl.when(failure).then(pl.lit("error")).otherwise(pl.col("severity")))
    located = split_rows(flagged, _HANDLE_FAILURE, _with_handle_gpu, lambda rows: rows)
    located = split_rows(located, _MIG_COMMAND, _with_mig_command, lambda rows: rows)
    located = split_rows(located, _GPU_RESET, _with_gpu_reset, lambda rows: rows)
    located = split_rows(located, _GPU_SETTING, _with_gpu_setting, lambda rows: rows)
    located = split_rows(located, _REFUSED, _with_refused, lambda rows: rows)
    return Parsed(events=_with_watch_host(located, lines, file).sort("line"), skipped=skipped, skipped_by_file=by_file)


def carried_lines(lines: pl.DataFrame) -> pl.DataFrame:
    """The header of the CSV or monitor table the lines end in, which its rows in the next batch of the file read by;
    of a ``-q`` report they end in, what :func:`rca.sources._nvsmi_query.carried_lines` keeps.

    (A header-less CSV row that names its own layout opens no segment here: the header above it still names its columns.)
    """
    starts = _with_starts(lines).filter(pl.col("start").is_not_null() & ((pl.col("start") != "query_csv") | pl.col("csv_header")))
    # a -q report opens segments at its head, GPU blocks and grepped sections: it runs from the last other sub-format's start
    if starts.height and starts["start"][-1] == "query_text":
        other = starts.filter(pl.col("start") != "query_text")["line"].max()
        opened = starts.filter((pl.col("start") == "query_text") & (pl.col("line") > (other if other is not None else -1)))
        return _nvsmi_query.carried_lines(lines.filter(pl.col("line") >= opened["line"][0]))
    last = starts.tail(1)
    return last.filter(pl.col("csv_header") | pl.col("text").str.contains(_nvsmi_dmon.HEADER_LINE)).select("line", "text")


def _with_handle_gpu(events: pl.DataFrame) -> pl.DataFrame:
    """Device-handle failures with the bus id and index of the GPU they name, to meet its Xid 79 and its samples."""
    named = pl.col("message").str.extract_groups(HANDLE_GPU).struct
    return events.with_columns(
        pci_bus=pl.coalesce(pl.col("pci_bus"), named.field("bus")),
        gpu_index=pl.coalesce(pl.col("gpu_index"), integer(named.field("index"))),
    )


def _with_mig_command(events: pl.DataFrame) -> pl.DataFrame:
    """``mig -cgi`` / ``-cci`` answers with the GPU they name, the instance ids and the profile, to meet its MIG samples.

    So are ``-lgipp`` placements (a profile's start slots and size) and ``-mig 1`` answers (the GPU's bus id).
    """
    made = pl.col("message").str.extract_groups(MIG_COMMAND_LINE).struct
    placed = pl.col("message").str.extract_groups(MIG_PLACEMENT_LINE).struct
    mode_bus = pl.col("message").str.extract(MIG_MODE_LINE, 1)
    of_gi = made.field("what") == "GPU"
    by_id = made.field("profile").str.contains(r"^[0-9]+$")  # "-cgi 20" names the profile by its id
    return events.with_columns(
        gpu_index=pl.coalesce(pl.col("gpu_index"), integer(made.field("gpu")), integer(placed.field("gpu"))),
        pci_bus=pl.coalesce(pl.col("pci_bus"), mode_bus),
        attrs=pl.when(made.field("gpu").is_not_null()).then(
            attrs_json(mig_profile=pl.when(~by_id).then(made.field("profile")),
                       mig_profile_id=integer(pl.when(by_id).then(made.field("profile")).otherwise(made.field("profile_id"))),
                       gi=integer(pl.when(of_gi).then(made.field("id")).otherwise(made.field("gi"))),
                       ci=integer(pl.when(~of_gi).then(made.field("id"))), reason=made.field("reason"))
        ).when(placed.field("gpu").is_not_null()).then(
            attrs_json(mig_profile_id=integer(placed.field("profile_id")), mig_placements=placed.field("starts"),
                       mig_placement_size=integer(placed.field("size")))
        ).otherwise(pl.col("attrs")),
    )


def _with_gpu_reset(events: pl.DataFrame) -> pl.DataFrame:
    """``--gpu-reset`` answers with the bus id of the GPU they name and whether it was reset (``attrs.gpu_reset``).

    A done reset is a notice: every process on that GPU lost its context there.
    """
    named = pl.col("message").str.extract_groups(GPU_RESET_LINE).struct
    answered = pl.col("message").str.contains(GPU_RESET_LINE)
    done = named.field("done").is_not_null()
    return events.with_columns(
        pci_bus=pl.coalesce(pl.col("pci_bus"), named.field("done"), named.field("busy"), named.field("refused")),
        severity=pl.when(done).then(pl.lit("notice")).otherwise(pl.col("severity")),
        attrs=pl.when(answered).then(
            attrs_json(gpu_reset=pl.when(done).then(pl.lit("done")).otherwise(pl.lit("failed")))
        ).otherwise(pl.col("attrs")),
    )


def _with_gpu_setting(events: pl.DataFrame) -> pl.DataFrame:
    """Answers to a setting with the GPU's bus id and the value set (``attrs``: ``power_cap_w`` and ``prev_power_cap_w``,
    ``app_clocks_mem_mhz`` / ``app_clocks_sm_mhz``, ``locked_clocks_min_mhz`` / ``locked_clocks_max_mhz``, ``compute_mode``).

    A changed power limit is a notice: a lower cap holds the clocks down from then on, as a power brake would.
    """
    named = pl.col("message").str.extract_groups(GPU_SETTING_LINE).struct
    answered = named.field("bus").is_not_null()
    capped = named.field("cap").is_not_null()

    def number(field: str) -> pl.Expr:
        return named.field(field).cast(pl.Float64, strict=False)

    values = attrs_json(
        power_cap_w=number("cap"), prev_power_cap_w=number("prev"), app_clocks_mem_mhz=integer(named.field("app_mem")),
        app_clocks_sm_mhz=integer(named.field("app_sm")), locked_clocks_min_mhz=integer(named.field("clk_min")),
        locked_clocks_max_mhz=integer(named.field("clk_max")), compute_mode=named.field("compute_mode"),
    )
    return events.with_columns(
        pci_bus=pl.coalesce(pl.col("pci_bus"), named.field("bus")),
        severity=pl.when(capped).then(pl.lit("notice")).when(answered).then(pl.coalesce(pl.col("severity"), pl.lit("info")))
        .otherwise(pl.col("severity")),
        attrs=pl.when(answered & (values != "{}")).then(values).otherwise(pl.col("attrs")),  # persistence mode sets no value
    )


def _with_refused(events: pl.DataFrame) -> pl.DataFrame:
    """Refused options as warnings with the bus id of the GPU named: the GPU keeps running, on settings other than asked."""
    refused = pl.col("message").str.contains(REFUSED_LINE)
    return events.with_columns(
        pci_bus=pl.coalesce(pl.col("pci_bus"), pl.col("message").str.extract(REFUSED_LINE, 1)),
        severity=pl.when(refused & pl.col("severity").is_null()).then(pl.lit("warning")).otherwise(pl.col("severity")),
    )


def _with_watch_host(events: pl.DataFrame, lines: pl.DataFrame, file: pl.Expr) -> pl.DataFrame:
    """Events under a ``watch`` header (to the next one, within its file) take the host it names."""
    if not lines["text"].str.starts_with("Every ").any():
        return events
    host = pl.col("text").str.extract(_WATCH_HEADER, 1)
    hosts = lines.select("line", watch_host=forward_fill_within(host, file)).filter(pl.col("watch_host").is_not_null())
    # No sub-format writes a host of its own.
    return events.join(hosts.with_columns(pl.col("line").cast(events.schema["line"])), on="line", how="left").rename({"watch_host": "host"})


def _with_identified_rows(lines: pl.DataFrame) -> pl.DataFrame:
    """Stray lines (under no sub-format's start) that are CSV rows naming their GPU, moved to the CSV parser.

    Such a row opens no segment: tested as a start, every row of a long CSV log would pay for
    the start tests; only the few lines no sub-format claims are tested here.
    """
    def identify(rows: pl.DataFrame) -> pl.DataFrame:
        named = _nvsmi_csv.identified_expr(pl.col("text"))
        return rows.with_columns(
            fmt=pl.when(named).then(pl.lit("query_csv")).otherwise(pl.col("fmt")),
            csv_layout=pl.when(named).then(pl.lit(_nvsmi_csv.IDENTIFIED)).otherwise(pl.col("csv_layout")),
        )

    return split_rows(lines, (pl.col("fmt") == "list") & ~pl.col("opens"), identify, lambda rows: rows)


def _parse_format(fmt: str, part: pl.DataFrame, ctx: ParseContext) -> list[Parsed]:
    """The sub-format's parse of ``part``: of several files, with each file's skipped lines."""
    parser = _PARSERS.get(fmt, _parse_list)
    if fmt == "query_csv" or "batch_file" not in part.columns:
        return [parser(part, ctx)]
    files = part.partition_by("batch_file", maintain_order=True)
    return [_of_file(parser(one, ctx), one["batch_file"][0]) for one in files]


def _of_file(parsed: Parsed, number: int) -> Parsed:
    return Parsed(parsed.events, parsed.skipped, {number: parsed.skipped})


def _parse_list(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """``nvidia-smi -L``: which index and bus order each GPU (and MIG device) UUID has; ``nvlink`` link rows.

    A link row is its GPU's (the GPU line above it); a non-zero error counter (``-e``) is a warning, and so is a GPU
    whose links are all down (``attrs.nvlink_state`` "all inactive"): its peers fall back to PCIe or fail. A single
    ``<inactive>`` link is kept as printed: a PCIe GPU without its bridge has such links by design.
    """
    gpu = pl.col("text").str.extract_groups(LIST_LINE).struct
    mig = pl.col("text").str.extract_groups(MIG_LIST_LINE).struct
    link = pl.when(pl.col("text").str.contains("Link ", literal=True)).then(pl.col("text").str.extract_groups(NVLINK_LINE)).struct
    is_gpu = gpu.field("index").is_not_null()
    is_mig = mig.field("uuid").is_not_null()
    all_down = pl.col("text").str.contains(NVLINK_ALL_INACTIVE)
    is_link = link.field("link").is_not_null() | all_down
    parent = pl.when(is_gpu).then(integer(gpu.field("index"))).forward_fill()
    # (a GPU line with its UUID hidden ends the UUID of the GPU above it)
    parent_uuid = pl.when(is_gpu).then(pl.coalesce(gpu.field("uuid"), pl.lit(""))).forward_fill().replace("", None)
    count = integer(link.field("count"))
    rows = log_rows(
        lines,
        "list",
        gpu_index=pl.when(is_gpu | is_mig | is_link).then(parent),
        gpu_uuid=pl.when(is_gpu | is_link).then(parent_uuid),
        severity=pl.when((count > 0) | all_down).then(pl.lit("warning")),
        attrs=pl.when(is_gpu | is_mig | is_link).then(
            attrs_json(name=gpu.field("name"), mig_profile=mig.field("profile"), mig_device=integer(mig.field("device")),
                       mig_uuid=mig.field("uuid"), nvlink=integer(link.field("link")), nvlink_counter=link.field("counter"),
                       nvlink_count=count,
                       nvlink_state=pl.when(all_down).then(pl.lit("all inactive")).otherwise(link.field("state")))
        ),
    )
    listed = pl.col("gpu_index").is_not_null()
    return Parsed(events=rows.with_columns(format=pl.when(listed).then(pl.lit("list")).otherwise(pl.lit("other"))))


SOURCE = register(
    Source(
        name="nvidia_smi",
        sniff=sniff,
        sniff_heads=sniff_heads,
        parse=parse,
        sniff_literals=(
            "NVIDIA-SMI", "NVSMI LOG", "nvidia_smi_log", "Persistence-M", "Driver-Model", "rocesses:",
            "# gpu", "#gpu", "#Date", "#Time", *_nvsmi_csv.HEADER_LITERALS, "(UUID: ", "MiB", "GPU-", "MIG devices", "CPU Affinity",
            "00000000:",  # the bus id of a CSV row without a header
            # GPU rows cut from a table of a unified-memory GPU (GB10): no MiB, and a bus id of another PCI domain (0000000F:)
            "Not Supported",
            "instances:", "instance profiles:",  # mig -lgi / -lci / -lgip
            "instance ID", "MIG Mode for GPU", "Profile ID",  # mig -cgi / -cci answers, nvidia-smi -mig 1, mig -lgipp
            "Driver Version", "Attached GPUs",  # a -q excerpt without its banner
            "successfully reset", "Unable to reset", "GPU Reset couldn't", "could not be reset",  # nvidia-smi --gpu-reset
            "persistence mode for GPU", "Persistence mode is already", "Power limit for GPU", "clocks set to",  # -pm, -pl, -ac, -lgc
            "clocks commands have been set", "Set compute mode to", "ECC support for GPU",  # -acp, -c, -e
            "NVML", "No devices were found", "device handle", "GPU access blocked", "Not supported on the device",  # plain answers
            "Failed to process command line", "is not supported for GPU",
            "Fabric", "Remapped Rows", "Event Reasons", "Throttle Reasons", "Reset Status",  # a -q health section grepped out of the report
        ),
        formats=("table", "query_csv", "query_text", "query_xml", "dmon", "pmon", "list", "other"),
        segmented=True,
        carried_lines=carried_lines,
    )
)
