"""DCGM exporter metrics: Prometheus text-exposition scrapes and Prometheus query-API JSON exports.

dcgm-exporter serves ``curl :9400/metrics`` as Prometheus text exposition::

    # HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
    # TYPE DCGM_FI_DEV_FB_USED gauge
    DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-…",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",
        Hostname="gpu-node-07",container="trainer",namespace="research",pod="llama-ft-0"} 40506

Samples may end in a millisecond timestamp (Prometheus ``/federate``, or a scrape saved
with one); a scrape without timestamps takes the file's modification time, and scrapes
saved one after another in one file are told apart by each series' occurrence number
(``attrs.scrape``). A range or instant query exported from Prometheus' HTTP API
(``{"status":"success","data":{"resultType":"matrix","result":[{"metric":{…},"values":[[t,"v"],…]}]}}``)
is one JSON document, read whole (:func:`parse_bytes`), so its size is no line length.

Events: one ``gpu_sample`` per GPU (and MIG instance) per timestamp, merging
``DCGM_FI_DEV_FB_USED`` / ``FB_FREE`` (MiB → ``mem_used_bytes``, ``mem_total_bytes`` =
used + free + ``FB_RESERVED`` where exported) and ``DCGM_FI_DEV_GPU_UTIL`` (``gpu_util_pct``), with the other DCGM fields in
``attrs`` (named ones like ``temp_c``, ``power_w``; the rest under their metric name). GPU,
UUID, pod, namespace and container come from the labels (``exported_*`` after Prometheus
relabelling; ``uuid``, ``pod_name``, ``pod_namespace``, ``container_name`` from an exporter run with
``--use-old-namespace``), and a field named in lowercase (``dcgm_fi_prof_gr_engine_active``) reads as
DCGM's, as do the 1.x exporter's own names (``dcgm_gpu_temp``, ``dcgm_fb_used``, ``dcgm_gpu_utilization``,
…). ``DCGM_FI_DEV_XID_ERRORS`` holds the last Xid seen, so an ``xid`` event is written where it changes
to a non-zero code, with the kernel source's catalog attrs; so is one
where the exporter's Xid counter (``DCGM_EXP_XID_ERRORS_COUNT{…,xid="42"}``) changes to a positive
count, the code from its ``xid`` label. The exporter's clock-event counter
(``DCGM_EXP_CLOCK_EVENTS_COUNT{…,clock_event="hw_thermal"}``, ``…THROTTLE_REASONS_COUNT{…,throttle_reason=…}``
before) is a series per event within one scrape, kept as ``attrs.clock_events_<event>``; a hardware
slowdown (that count above 0, or its bit set in the ``DCGM_FI_DEV_CLOCKS_EVENT_REASONS`` bitmask) makes
the sample a warning, as ``-q``'s "HW Slowdown : Active". DCGM's blank values (9223372036854775792 and up), NaN
and ±Inf are null. The ``Hostname`` label (``hostname`` in newer exporters) is the host (``host_in_content``) unless it names
the exporter's own pod or is a Docker container's default hostname (12 hex digits); other
metrics (go_*, process_*) are skipped as "other metric", comments as "comment".

``dcgmi diag -r N`` prints a boxed table: a Metadata section (DCGM version, driver, device
ids) and sections of tests, each ``| Test | Pass |`` with per-GPU rows under it (DCGM 3:
``Fail - GPU: 0`` / ``Fail - All``; DCGM 4: ``GPU0: Pass``) and ``Warning`` / ``Info`` rows
whose text is cut into fixed-width chunks over several rows (mid-word). Each result row is
an event (Fail → error, Warn → warning, Pass/Skip → info), each Warning/Info its chunks
joined into one event; kind ``xid`` where the text names an Xid, else ``log``; test, result
and the metadata in ``attrs``. ``dcgmi diag -j`` prints the same results as one JSON document (DCGM 2.x/3.x
``{"DCGM GPU Diagnostic": {"test_categories": [{"category", "tests": [{"name", "results": [{"gpu_ids",
"status", "warnings", "info"}]}]}]}}``; DCGM 4.x keys it ``"DCGM Diagnostic"``, gives each result an
``entity_group`` / ``entity_id``, a ``test_summary`` per test and the versions under ``metadata``), read
whole: an event per result as the table's rows, its warnings and info in the message, the first warning's
``error_id`` in ``attrs``, and one per test summary's text the results do not already carry. ``dcgmi discovery -l`` prints the same box, a GPU per row
(name, PCI bus id and UUID wrapped under its index): one ``log`` event per GPU carrying
them. The tables have no time: the file's modification time.

``dcgmi health -c`` prints a "Health Monitor Report": the overall health, then per entity (``GPU`` /
``-> 0``) and system (``-> PCIe system``) a result with the incident's text wrapped at word breaks
under it (DCGM 1.x: ``| GPU ID: 0 | Warning |`` over ``PCIe system: Warning - …`` rows). Each
incident is an event of its GPU (Failure → error, Warning → warning; ``xid`` where the text names
one), the overall line a ``log`` event. ``dcgmi stats -j`` / ``--pid`` prints a box per GPU
(``GPU ID: 6``; ``Summary`` for a group) of ``name | value`` rows: one ``gpu_sample`` each, at
its End Time (its Start Time while still running; zone-less ctime read in the ``--tz`` zone),
``mem_used_bytes`` the job's maximum and ``gpu_util_pct`` its average SM utilisation, the
counters (ECC, PCIe replays, critical Xids, energy, power) and the job id or pid in ``attrs``;
severity from its Overall Health (ECC double-bit or critical Xid errors at least a warning). A
verbose report's per-system health rows are events of their own. A table pasted indented (from
docs or a script's heredoc) reads the same.

``dcgmi dmon -e …`` prints a ``#Entity`` header of field tags (``GPUTL FBUSD …``) over an ``ID``
line, then a row per entity and sample (``GPU 0   34   15640 …``): one ``gpu_sample`` per row
(``GPUTL`` the utilisation, ``FBUSD`` / ``FBFRE`` / ``FBTTL`` the memory in MiB, the other tags
in ``attrs``; MIG instance rows carry their entity instead of a GPU index), at the file's time with
``attrs.sample`` the row's number for its entity; ``XIDER`` turning to a non-zero code is an
``xid`` event.

``dcgmi nvlink -s`` prints a ``NvLink Link Status`` box, then per GPU (``gpuId 0:``) and NvSwitch
(``physicalId 8:``) a row of link states (``U U D _ …``): one ``log`` event per device with the states
counted in ``attrs`` (``links_up`` / ``links_down`` / ``links_disabled``), a warning where a link is down.

dcgmi's and NVVS' lines printed without a table (``dcgmi diag`` refusing ``GPU 0's MIG configuration is incompatible
with the diagnostic…``, NVVS' ``DCGM GPU Diagnostic (version 418)`` banner, dcgmi's ``Error: Health watches not
enabled.``) are claimed where they make most of the file and read as ``log`` events: a refused GPU a warning with its
``gpu_index``, dcgmi's own error an error (its group and return code in ``attrs``), the banner info.

nv-hostengine's own log (``/var/log/nv-hostengine.log``: ``2024-05-24 10:11:29.243 ERROR [5231:5273] [[NvSwitch]] … [file.cpp:388]
[Function]``) is claimed where most of its first lines open so: an event per stamped line (unstamped lines under it its message's),
the stamp read in the ``--tz`` zone, severity from the level, pid the first of ``[pid:tid]``, process ``nv-hostengine``, the tid,
module, source line and function in ``attrs``; ``xid`` where the message names one. NVVS' ``nvvs.log`` has the same layout and
is read so too, as ``format=nvvs_log`` with process ``nvvs``, where the C++ sources its lines name lie under ``nvvs/``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import polars as pl

from rca import schema
from rca.errors import FileFormatError
from rca.sources import _xid, register
from rca.sources._base import (
    ParseContext, Parsed, Source, attrs_json, by_head, file_column, joined_json, map_distinct, one_head, parse_apart, per_file, within_file,
)
from rca.sources._nvsmi_common import ctime_to_utc
from rca.timeutil import naive_to_utc

MIB = 2**20
_DCGM_BLANK = 9.2233720368547758e18  # DCGM_*_BLANK and its NOT_FOUND / NOT_SUPPORTED / NOT_PERMISSIONED neighbours

_USED, _FREE, _UTIL, _XID = "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_XID_ERRORS"
# Metrics with an attribute name of their own, and the factor from the metric's unit.
_NAMED_ATTRS: dict[str, tuple[str, float]] = {
    "DCGM_FI_DEV_GPU_TEMP": ("temp_c", 1.0),
    "DCGM_FI_DEV_MEMORY_TEMP": ("memory_temp_c", 1.0),
    "DCGM_FI_DEV_POWER_USAGE": ("power_w", 1.0),
    "DCGM_FI_DEV_MEM_COPY_UTIL": ("mem_copy_util_pct", 1.0),
    "DCGM_FI_DEV_SM_CLOCK": ("sm_clock_mhz", 1.0),
    "DCGM_FI_DEV_MEM_CLOCK": ("mem_clock_mhz", 1.0),
    "DCGM_FI_DEV_FB_RESERVED": ("fb_reserved_bytes", float(MIB)),
    "DCGM_FI_DEV_FB_TOTAL": ("fb_total_bytes", float(MIB)),
    _XID: ("last_xid", 1.0),
}
_COLUMN_METRICS = (_USED, _FREE, _UTIL)

# label in the exposition -> column; the first of several labels that is set wins (see _LABEL_COLUMNS).
_LABELS = (
    "gpu", "UUID", "pci_bus_id", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION", "GPU_I_ID", "GPU_I_PROFILE",
    "pod", "namespace", "container", "exported_pod", "exported_namespace", "exported_container", "xid", "clock_event",
)
# Labels that split one metric of a GPU into several series of one scrape: DCGM_EXP_XID_ERRORS_COUNT{…,xid="42"},
# DCGM_EXP_CLOCK_EVENTS_COUNT{…,clock_event="hw_thermal"} (DCGM_FI_EXP_CLOCK_THROTTLE_REASONS_COUNT{…,throttle_reason=…}
# before 3.3.5: read as clock_event).
_SERIES_LABELS = ("xid", "clock_event")
# a label read under any of its names (the pattern that finds it in a sample's labels): dcgm-exporter names the node
# "hostname" since its Hostname label was renamed (after 4.5.3-4.8.2), and with --use-old-namespace (its 1.x label set)
# the GPU "uuid" and the pod "pod_name" / "pod_namespace" / "container_name".
_LABEL_SPELLINGS = {
    "clock_event": r"(?:clock_event|throttle_reason)",
    "Hostname": r"(?:Hostname|hostname)",
    "UUID": r"(?:UUID|uuid)",
    "pod": r"(?:pod|pod_name)",
    "namespace": r"(?:namespace|pod_namespace)",
    "container": r"(?:container|container_name)",
}
# The other spellings as a query-API export's metric object keys them (JSON keys are read by exact name).
_JSON_LABEL_ALIASES = {
    "Hostname": ("hostname", "kubernetes_node", "node"), "UUID": ("uuid",), "pod": ("pod_name",),
    "namespace": ("pod_namespace",), "container": ("container_name",), "clock_event": ("throttle_reason",),
}
# Clock events the hardware forces (heat, an external power brake): the clocks were held down, as -q's "HW Slowdown : Active".
_HW_CLOCK_EVENTS = ("hw_slowdown", "hw_thermal", "hw_power_brake")
# The same, told by the bitmask of the GPU's current clock event reasons (nvml.h: HW_SLOWDOWN 0x8, HW_THERMAL 0x40, HW_POWER_BRAKE 0x80).
_CLOCK_REASON_METRICS = ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS")
_HW_CLOCK_REASON_BITS = 0x8 | 0x40 | 0x80
_LABEL_VALUE = r'"((?:[^"\\]|\\.)*)"'
# dcgm-exporter prints "ERROR - FAILED TO CONVERT TO STRING" as the value of a field it cannot render (a vGPU's
# per-process utilisation): a sample of its GPU still, with no number. Any other value is a number (Prometheus' float,
# NaN, ±Inf): a line of two words ("Error: timeout") is no sample, and is kept as the line it is.
_SAMPLE_LINE = (
    r'^(?P<metric>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>(?:[^}"]|"(?:[^"\\]|\\.)*")*)\})?'
    r"\s+(?P<value>ERROR - FAILED TO CONVERT TO STRING|[-+]?(?:[0-9.][0-9.eE+-]*|Inf|NaN))(?:\s+(?P<stamp>-?[0-9]+))?\s*$"
)
# A scrape pasted into docs keeps their indent (a reST code block); the samples are read stripped.
# DCGM's field names, as dcgm-exporter prints them, or lowercased (a collectors file listing "dcgm_fi_prof_gr_engine_active",
# gpud's DCGM metrics): the lowercase name is read as the field's.
_LOWERCASE_FIELD = "dcgm_fi_"
# The 1.x exporter (gpu-monitoring-tools' dcgm-exporter script, node-exporter's textfile, pod-gpu-metrics-exporter) named
# each field "dcgm_" and a short name of its own: read as the field it printed (its "dcgm_fi_prof_*" are lowercase fields).
_V1_PREFIX = "dcgm_"
_V1_FIELDS = {
    f"{_V1_PREFIX}{name}": f"DCGM_FI_DEV_{field}"
    for name, field in {
        "gpu_temp": "GPU_TEMP", "memory_temp": "MEMORY_TEMP", "sm_clock": "SM_CLOCK", "memory_clock": "MEM_CLOCK",
        "power_usage": "POWER_USAGE", "total_energy_consumption": "TOTAL_ENERGY_CONSUMPTION",
        "pcie_tx_throughput": "PCIE_TX_THROUGHPUT", "pcie_rx_throughput": "PCIE_RX_THROUGHPUT", "pcie_replay_counter": "PCIE_REPLAY_COUNTER",
        "gpu_utilization": "GPU_UTIL", "mem_copy_utilization": "MEM_COPY_UTIL", "enc_utilization": "ENC_UTIL", "dec_utilization": "DEC_UTIL",
        "xid_errors": "XID_ERRORS", "power_violation": "POWER_VIOLATION", "thermal_violation": "THERMAL_VIOLATION",
        "sync_boost_violation": "SYNC_BOOST_VIOLATION", "board_limit_violation": "BOARD_LIMIT_VIOLATION",
        "low_util_violation": "LOW_UTIL_VIOLATION", "reliability_violation": "RELIABILITY_VIOLATION",
        "fb_total": "FB_TOTAL", "fb_free": "FB_FREE", "fb_used": "FB_USED",
        "ecc_sbe_volatile_total": "ECC_SBE_VOL_TOTAL", "ecc_dbe_volatile_total": "ECC_DBE_VOL_TOTAL",
        "ecc_sbe_aggregate_total": "ECC_SBE_AGG_TOTAL", "ecc_dbe_aggregate_total": "ECC_DBE_AGG_TOTAL",
        "retired_pages_sbe": "RETIRED_SBE", "retired_pages_dbe": "RETIRED_DBE", "retired_pages_pending": "RETIRED_PENDING",
        "nvlink_flit_crc_error_count_total": "NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
        "nvlink_data_crc_error_count_total": "NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
        "nvlink_replay_error_count_total": "NVLINK_REPLAY_ERROR_COUNT_TOTAL",
        "nvlink_recovery_error_count_total": "NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
        "nvlink_bandwidth_total": "NVLINK_BANDWIDTH_TOTAL",
    }.items()
}
_DCGM_COMMENT = r"^[ \t]*#\s*(?:HELP|TYPE)\s+(?:DCGM_|dcgm_)"
_DCGM_SAMPLE = r"^[ \t]*(?:DCGM_[A-Z0-9_]+|dcgm_[a-z0-9_]+)(?:\{|\s)"
_JSON_NUMBER = r"^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$"
# The exporter's own pod, or its Docker container's default hostname (the container id's first 12 hex
# digits, when run without --hostname): neither names the node.
_EXPORTER_HOST = r"(?i)dcgm-exporter|^[0-9a-f]{12}$"

# dcgmi diag's table (and discovery -l's, the same box): header, section rules (`|-----  Metadata  ---+---|`, `+-----  Hardware  ---+---+`;
# stats' `+--  Compute Process Utilization  ---+---+`), borders, rows.
_DIAG_HEADER = r"^\|\s*(?:Diagnostic\s*\|\s*Result|(?<discovery>GPU ID)\s*\|\s*Device Information)\s*\|$"
_DIAG_SECTION = r"^[|+]-{2,}\s+([A-Za-z][^|+]*?)\s+-+\+-+[|+]$"
_DIAG_BORDER = r"^\+[-=]+\+[-=]+\+$"
_DIAG_ROW = r"^\|(?P<name>[^|]*)\| (?P<cell>.*) \|$"
_DIAG_RESULT = (
    r"^(?:GPU\s*(?P<gpu>[0-9]+):\s*)?(?P<result>Pass|Fail|Warn|Skip)[a-z]*"
    r"(?:\s*-\s*(?:All|GPUs?:\s*(?P<gpus>[0-9]+(?:\s*,\s*[0-9]+)*)))?$"
)
# A result row of dcgmi diag's fixed 27 + 48 column grid: what an excerpt cut below the header still shows.
_DIAG_GRID_ROW = r"^\|[^|]{27}\| .{46} \|$"
_DIAG_RESULT_CELL = r"^\|[^|]*\|\s*(?:GPU\s*[0-9]+:\s*)?(?:Pass|Fail|Warn|Skip)"
_DIAG_DETAILS = {"Warning": "warning", "Info": "info", "Error": "error"}
_DIAG_SEVERITY = {"Fail": "error", "Warn": "warning", "Pass": "info", "Skip": "info"}
_DIAG_METADATA = {"DCGM Version": "dcgm_version", "Driver Version Detected": "driver_version", "GPU Device IDs Detected": "gpu_device_ids"}
_XID_IN_TEXT = r"(?i)\bXID\s*(?:error\s*)?([0-9]+)"
# The GPU a Warning/Info row names; DCGM 2.x doubles the prefix with no space ("GPU 0GPU 0's NvLink link 0 is currently down").
_GPU_IN_DETAIL = r"\bGPU\s*([0-9]+)(?:\b|GPU\b)"
# dcgmi diag -j: DCGM 2.x/3.x key the report "DCGM GPU Diagnostic", DCGM 4.x "DCGM Diagnostic"; the key opens the document.
_DIAG_JSON_KEY = r'"DCGM (?:GPU )?Diagnostic"\s*:'
# dcgmi health -c -j: dcgmi's JSON writer opens with "body"; the overall result or an entity's "Errors" branch names the report
# (JsonCpp sorts the keys: a report of many incidents puts "Overall Health" and its "Health Monitor Report" header last).
_HEALTH_JSON_BODY = r'^\s*\{\s*"body"\s*:'
_HEALTH_JSON_KEY = r'"(?:Overall Health|Errors)"\s*:'
_DIAG_JSON_HEAD = 4096
_DIAG_JSON_PREAMBLE = 3  # lines a dcgmi run may print before its document
_DIAG_JSON_SCHEMA = {
    "section": pl.String, "test": pl.String, "status": pl.String, "entity_group": pl.String,
    "entity_id": pl.Int64, "gpus": pl.String, "warnings": pl.String, "info": pl.String, "error_id": pl.Int64,
    "device_id": pl.String, "summary": pl.Boolean,
}

# dcgmi dmon: "#Entity  GPUTL  FBUSD" over "ID", then "GPU 0   34   15640" (MIG: "GPU-I 3", "GPU-CI 5").
_DMON_HEADER = r"^#\s*Entity\s+(\S.*)$"  # "# Entity" in DCGM 2's docs
_DMON_UNITS = r"(?i)^ID(?:\s|$)"  # the line under it: "ID" ("Id" in DCGM 2), DCGM 4 adds the tags' units ("ID   W   C")
# dcgmi's own failure lines: "Error setting watches. Result: …", "Error: Unable to connect to host engine. …".
_DCGMI_ERROR = r"^Error(?::| setting| getting| adding| creating)"
# dcgmi's and NVVS' plain lines, outside any table: the diagnostic's banner ("DCGM GPU Diagnostic (version 418)", nvvs run
# alone), a GPU it refuses to test, the command that was run (a pasted session's prompt before it).
_NVVS_BANNER = r"^DCGM (?:GPU )?Diagnostic \(version (?<version>[^)]+)\)$"
_MIG_REFUSED = r"^GPU (?<gpu>[0-9]+)'s MIG configuration is incompatible with the diagnostic"
_DCGMI_COMMAND = r"(?:^|[\s$#%>])(?:dcgmi\s+(?:diag|health|dmon|stats|discovery|nvlink|group|policy)\b|\S*/nvvs$)"
# "Error: Unable to complete diagnostic for group 1. Return: (-35) The specified group is empty, …"
_DCGMI_RETURN = r"\bgroup (?<group>[0-9]+)\. Return: \((?<code>-?[0-9]+)\)"
_DMON_ROW = r"^(?<group>GPU-CI|GPU-I|GPU|Switch|Link|CPU_CORE|CPU|ConnectX)\s+(?<entity>[0-9]+)\s+(?<values>\S.*)$"
# field tag -> (attribute or column, factor); the tags of DCGM's field table (dcgmlib/src/dcgm_fields.cpp)
_DMON_FIELDS: dict[str, tuple[str, float]] = {
    "GPUTL": ("gpu_util_pct", 1.0), "FBUSD": ("used", float(MIB)), "FBFRE": ("free", float(MIB)), "FBTTL": ("total", float(MIB)),
    "TMPTR": ("temp_c", 1.0), "POWER": ("power_w", 1.0), "XIDER": ("last_xid", 1.0),
}

# dcgmi health -c and dcgmi stats: their headers (the report title; a full-width "GPU ID: N" or
# "Summary" row) and the line stats prints before its boxes, naming the job or process.
_HEALTH_HEADER = r"^(?:\|\s*)?Health Monitor Report\s*\|?$"
_STATS_HEADER = r"^\|\s*(?:GPU ID:\s*(?<gpu>[0-9]+)|Summary)\s*\|$"
_STATS_BANNER = (
    r"^Successfully retrieved (?:statistics for (?:job:\s*)?(?<job>\S.*?)|process info for (?:PID|pid):\s*(?<pid>[0-9]+))\.?(?:\s|$)"
)
_HEALTH_RESULT = {"Healthy": "info", "Warning": "warning", "Failure": "error"}
_HEALTH_OVERALL = "Overall Health"
# DCGM 1.x's health rows: "PCIe system: Warning - Detected more than 8 PCIe" (the text wraps on).
_HEALTH_INCIDENT = r"^(?<system>[A-Za-z][A-Za-z0-9 ]*?):\s*(?<result>Healthy|Warning|Failure)(?:\s+-\s+(?<text>.*))?$"
# stats row name -> attribute; the value's first number (an Avg: / Max: pair is split below).
_STATS_COUNTERS = {
    "Total Execution Time (sec)": "duration_s",
    "No. of Processes": "processes",
    "No. of Conflicting Processes": "conflicting_processes",
    "Energy Consumed (Joules)": "energy_j",
    "Single Bit ECC Errors": "ecc_sbe",
    "Double Bit ECC Errors": "ecc_dbe",
    "PCIe Replay Warnings": "pcie_replays",
    "Critical XID Errors": "critical_xid_errors",
}


# dcgmi nvlink --link-status (-s): a title box, then under "GPUs:" / "NvSwitches:" an entity line ("    gpuId 0:",
# "    physicalId 8:") over a row of one state letter per link slot (U up, D down, X disabled, _ not supported).
_NVLINK_TITLE = r"^\|\s*NvLink Link Status\s*\|$"
_NVLINK_ENTITY = r"^(?<group>gpuId|physicalId)\s+(?<entity>[0-9]+):$"
_NVLINK_STATES = r"^[UDX_](?: [UDX_])*$"
_NVLINK_LAYOUT = r"^(?:\+-+\+|GPUs:|NvSwitches:|Key: Up=U, .*)$"

# nv-hostengine's own log (/var/log/nv-hostengine.log): "2024-05-24 10:11:29.243 ERROR [5231:5273] [[NvSwitch]] <message>
# [/…/DcgmModuleNvSwitch.cpp:388] [DcgmNs::DcgmModuleNvSwitch::RunOnce]"; the level padded to five characters ("INFO  ").
_HOSTENGINE_HEAD = (
    r"^(?<head>(?<stamp>[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]+) (?<level>[A-Z]+) +"
    r"\[(?<pid>[0-9]+):(?<tid>[0-9]+)\] (?:\[\[(?<module>[^\]]*)\]\] )?)"
)
_HOSTENGINE_TAIL = r"(?<tail> \[(?<source>[^\[\]\s]+:[0-9]+)\](?: \[(?<function>[^\[\]]*)\])?)$"
_HOSTENGINE_LEVELS = {
    "FATAL": "critical", "ERROR": "error", "WARN": "warning", "WARNING": "warning", "INFO": "info", "DEBUG": "debug", "VERB": "debug",
    "VERBOSE": "debug",
}
_HOSTENGINE_SHARE = 0.5  # of a head's lines: a log with a pasted hostengine line or two stays its own
# NVVS (the diag runner nv-hostengine starts) writes nvvs.log in the same layout; only the C++ sources it names tell it
# apart: its own under nvvs/ ("…/nvvs/src/TestFramework.cpp:871", "…/nvvs/plugin_src/…").
_NVVS_SOURCE = r"(?:^|/)nvvs/"


def sniff(head: Sequence[str]) -> float:
    """0.95 when the head holds DCGM HELP/TYPE lines, is mostly DCGM samples or a dcgmi table; 0.9 for a JSON export of DCGM metrics;
    0.75 where dcgmi's plain lines (no table) make most of it."""
    return one_head(sniff_heads, head)


def sniff_heads(heads: pl.DataFrame) -> dict[int, float]:
    """:func:`sniff` of many heads in two queries: a folder of scrapes saved a minute apart is thousands of heads."""
    text = pl.col("text")
    lines = dict(heads.group_by("head", maintain_order=True).agg(text).iter_rows())
    found = by_head(
        heads,
        comment=text.str.contains(_DCGM_COMMENT).any(),
        samples=text.str.contains(_DCGM_SAMPLE).mean(),
        diag=_is_diag_line(text).any(),
        results=_is_result_row(text).any(),
        dmon=(_is_dmon_header(text) & (text.shift(-1).str.strip_chars().str.to_uppercase() == "ID")).any(),
        boxed=text.str.strip_chars_start().str.contains(r"^[|+]").mean(),
        nvlink=_is_nvlink_title(text).any(),
        telling=_is_dcgmi_telling(text).any(),
        plain=_is_dcgmi_plain(text).sum() / (text.str.strip_chars() != "").sum(),
        hostengine=text.str.contains(_HOSTENGINE_HEAD).mean(),
    )
    return {number: _document_score(head) or _content_score(found[number]) for number, head in lines.items()}


def _document_score(head: Sequence[str]) -> float:
    if _is_json_export(head):
        return 0.9
    return 0.95 if _diag_json_opening(head) is not None or _is_health_json("\n".join(head)) else 0.0


def _content_score(found: dict) -> float:
    if found["comment"] or (found["samples"] or 0.0) >= 0.5 or found["dmon"] or found["nvlink"]:
        return 0.95
    if found["telling"] and (found["plain"] or 0.0) >= 0.5:
        # dcgmi's or NVVS' own lines, mostly: a run that printed no table (a GPU refused, watches not set); among
        # a longer log's lines they stay the log's. Below a job log's own markers (0.8 where they are a third of its
        # lines): "Error: …" is no word of dcgmi's alone, and a short job that ran dcgmi, then failed, stays the job's.
        return 0.75
    if (found["diag"] or found["results"]) and (found["boxed"] or 0.0) >= 0.5:
        # a dcgmi table within a longer log (a job's preflight check) is left to the log's parser
        return 0.95 if found["diag"] else 0.9
    return 0.9 if (found["hostengine"] or 0.0) >= _HOSTENGINE_SHARE else 0.0


def _is_json_export(head: Sequence[str]) -> bool:
    joined = "\n".join(head)
    return joined.lstrip().startswith("{") and '"resultType"' in joined and ("DCGM_" in joined or _V1_PREFIX in joined)


def _is_diag_json(text: str) -> bool:
    """``dcgmi diag -j``'s document: an object whose key names the diagnostic (DCGM 4's sorted keys put it first too)."""
    return text.lstrip().startswith("{") and re.search(_DIAG_JSON_KEY, text) is not None


def _is_health_json(text: str) -> bool:
    """``dcgmi health -c -j``'s document (dcgmi's JSON writer: ``{"body": {…}, "header": ["Health Monitor Report"]}``)."""
    return re.search(_HEALTH_JSON_BODY, text) is not None and re.search(_HEALTH_JSON_KEY, text) is not None


def _diag_json_opening(head: Sequence[str]) -> int | None:
    """The index of the line opening a ``dcgmi diag -j`` document: the first, or one after the few lines printed before it
    ("Successfully ran diagnostic for group.", a warning: DCGM's own reader skips to the first brace too)."""
    opening = next((index for index, line in enumerate(head[: _DIAG_JSON_PREAMBLE + 1]) if line.lstrip().startswith("{")), None)
    return opening if opening is not None and _is_diag_json("\n".join(head[opening:])) else None


def _is_diag_line(text: pl.Expr) -> pl.Expr:
    """A dcgmi table's header or section rule (cheap literal first: most lines have neither)."""
    text = text.str.strip_chars()
    literal = text.str.contains_any(["Diagnostic", "Device Information", "-----  ", "Health Monitor Report"])
    return literal & (text.str.contains(_DIAG_HEADER) | text.str.contains(_DIAG_SECTION) | text.str.contains(_HEALTH_HEADER))


def _is_result_row(text: pl.Expr) -> pl.Expr:
    """A ``dcgmi diag`` result row (``| GPU Memory   | Fail - GPU: 0   |``) in the table's own grid."""
    text = text.str.strip_chars()
    return text.str.starts_with("|") & text.str.contains(_DIAG_GRID_ROW) & text.str.contains(_DIAG_RESULT_CELL)


def _is_dcgmi_telling(text: pl.Expr) -> pl.Expr:
    """A line only dcgmi or NVVS prints or runs them: the diagnostic's banner, a GPU it refuses, a dcgmi command."""
    text = text.str.strip_chars()
    literal = text.str.contains_any(["Diagnostic (version", "MIG configuration", "dcgmi", "nvvs"])
    return literal & (text.str.contains(_NVVS_BANNER) | text.str.contains(_MIG_REFUSED) | text.str.contains(_DCGMI_COMMAND))


def _is_dcgmi_plain(text: pl.Expr) -> pl.Expr:
    """A plain dcgmi line: a telling one (:func:`_is_dcgmi_telling`) or dcgmi's own error ("Error: Health watches not enabled")."""
    return _is_dcgmi_telling(text) | text.str.strip_chars().str.contains(_DCGMI_ERROR)


def _is_dmon_header(text: pl.Expr) -> pl.Expr:
    """``dcgmi dmon``'s header line of field tags (the literal first: a scrape's many comments lack it)."""
    return text.str.contains("Entity", literal=True) & text.str.strip_chars().str.contains(_DMON_HEADER)


def _is_nvlink_title(text: pl.Expr) -> pl.Expr:
    """``dcgmi nvlink -s``'s title row (the literal first)."""
    return text.str.contains("NvLink Link Status", literal=True) & text.str.strip_chars().str.contains(_NVLINK_TITLE)


def sniff_bytes(head: bytes) -> float:
    """0.95 for a Prometheus query-API JSON document about DCGM metrics, a ``dcgmi diag -j`` or ``dcgmi health -c -j`` report."""
    start = head.lstrip()[:1]
    if start != b"{":
        return 0.0
    query_export = b'"resultType"' in head and (b"DCGM_" in head or _V1_PREFIX.encode() in head)
    text = head.decode("utf-8", errors="replace")
    return 0.95 if query_export or _is_diag_json(text[:_DIAG_JSON_HEAD]) or _is_health_json(text) else 0.0


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Text exposition: samples grouped into GPU events; comments skipped; other lines kept as ``log``.

    A JSON export or ``dcgmi diag -j`` document handed over as lines (``rca.parse_text``) is parsed as one document covering them.
    Of the lines of several files (a ``batch_file`` column), the scrapes are read together, each with its own time, and
    a file of another kind (a dcgmi table, a dmon loop, a document) alone, as it would be by itself.
    """
    if within_file(lines):
        return _parse_files(lines, ctx)
    if lines.select(_is_hostengine_log(pl.col("text"))).item():
        return _parse_hostengine(lines, ctx)
    if _is_document(lines["text"].head(60).to_list()):
        return _parse_document_lines(lines, ctx)
    if lines.select(_is_dmon_header(pl.col("text")).any()).item():
        return _parse_dmon(lines, ctx)
    # the literal over every line, the title's pattern over the few that hold it (a scrape holds none)
    titled = lines.filter(pl.col("text").str.contains("NvLink Link Status", literal=True))
    if titled.height and titled.select(_is_nvlink_title(pl.col("text")).any()).item():
        return _parse_nvlink_status(lines, ctx)
    if lines.select((_is_diag_line(pl.col("text")) | _is_result_row(pl.col("text"))).any()).item():
        return _parse_tables(lines, ctx)
    return _parse_scrapes(lines, ctx)


def _is_document(head: list[str]) -> bool:
    """Whether a file's first lines open a JSON document: a Prometheus export, a ``dcgmi diag -j`` or ``health -c -j`` report."""
    return _is_json_export(head) or _diag_json_opening(head) is not None or _is_health_json("\n".join(head))


def _parse_document_lines(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    opening = _diag_json_opening(lines["text"].head(60).to_list())
    return _parse_document(lines.head(opening or 0), lines.slice(opening or 0), ctx)


def _parse_files(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """The lines of several files: their scrapes in one parse (a folder of scrapes saved a minute apart is thousands of
    small files), every other file alone with its own name and time."""
    return parse_apart(lines, ctx, _scrape_files(lines), _parse_scrapes, parse)


def _scrape_files(lines: pl.DataFrame) -> list[int]:
    """The files (by ``batch_file``) that :func:`parse` would read as scrapes: no hostengine log, document, dmon loop, NvLink box
    or dcgmi table."""
    text = pl.col("text")
    kinds = lines.group_by("batch_file", maintain_order=True).agg(
        head=text.head(60),
        other_kind=(_is_dmon_header(text) | _is_nvlink_title(text) | _is_diag_line(text) | _is_result_row(text)).any()
        | _is_hostengine_log(text),
    )
    return [number for number, head, other_kind in kinds.iter_rows() if not other_kind and not _is_document(head)]


def _parse_scrapes(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Text exposition (of one file, or of several with a ``batch_file`` column): samples grouped into GPU events."""
    text = pl.col("text").str.strip_chars()
    classified = lines.with_columns(comment=text.str.starts_with("#"), sample=text.str.extract_groups(_SAMPLE_LINE))
    candidates = classified.filter(~pl.col("comment"))
    is_sample = pl.col("sample").struct.field("metric").is_not_null()
    unparsed = _plain_lines(candidates.filter(~is_sample), ctx)
    samples = _exposition_samples(candidates.filter(is_sample))
    events = _events(samples, ctx)
    file = file_column(lines)
    skipped_lines = pl.concat([
        classified.filter("comment").select(*file, "line", reason=pl.lit("comment")),
        samples.filter(~_is_dcgm_metric()).select(*file, "line", reason=pl.lit("other metric")),
    ])
    skipped = dict(skipped_lines.group_by("reason", maintain_order=True).len().iter_rows())
    by_file = None
    if file:
        by_file = {}
        for number, reason, count in skipped_lines.group_by("batch_file", "reason", maintain_order=True).len().iter_rows():
            by_file.setdefault(number, {})[reason] = count
    return Parsed(events=pl.concat([events, unparsed], how="diagonal_relaxed").sort("line"), skipped=skipped, skipped_by_file=by_file)


def _plain_lines(lines: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Lines of no table or sample, kept; dcgmi's and NVVS' own among them read.

    A GPU the diagnostic refuses (its MIG layout hides part of it) went untested: a warning of that GPU. dcgmi's own
    error (watches not enabled, an empty group) means the check did not run: an error, as dmon's. The banner names
    the diagnostic's version.
    """
    text = pl.col("text").str.strip_chars()
    refused = text.str.extract(_MIG_REFUSED, 1).cast(pl.Int32, strict=False)
    version = text.str.extract(_NVVS_BANNER, 1)
    failed = text.str.contains(_DCGMI_ERROR)
    returned = text.str.extract_groups(_DCGMI_RETURN).struct
    read = refused.is_not_null() | version.is_not_null() | failed
    return lines.select(
        "line", message="text", n_lines=pl.lit(1, pl.Int32),
        **{name: pl.when(read).then(value) for name, value in _file_time(ctx, lines).items()},
        format=pl.when(read).then(pl.lit("dcgmi_text")),
        severity=pl.when(refused.is_not_null()).then(pl.lit("warning")).when(failed).then(pl.lit("error"))
        .when(version.is_not_null()).then(pl.lit("info")),
        gpu_index=refused,
        attrs=pl.when(read).then(attrs_json({
            "diag_version": version, "diag_refused": pl.when(refused.is_not_null()).then(pl.lit("mig_configuration")),
            "group_id": returned.field("group").cast(pl.Int64, strict=False),
            "return_code": returned.field("code").cast(pl.Int64, strict=False),
        })),
    )


def _parse_document(preamble: pl.DataFrame, document: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """A JSON document handed over as lines, parsed whole: its first event covers them; the lines before it are kept as logs."""
    kept = preamble.select("line", message="text", n_lines=pl.lit(1, pl.Int32))
    try:
        parsed = parse_bytes("\n".join(document["text"].to_list()).encode("utf-8"), ctx)
    except FileFormatError:
        return Parsed(events=pl.concat([kept, document.select("line", message="text", n_lines=pl.lit(1, pl.Int32))]))
    first = pl.int_range(pl.len()) == 0
    covering = pl.when(first).then(pl.lit(document.height)).otherwise(0).cast(pl.Int32)
    events = parsed.events.with_columns(line=pl.lit(document["line"][0], pl.Int64), n_lines=covering)
    return Parsed(events=pl.concat([kept, events], how="diagonal_relaxed"),
                  skipped={} if parsed.events.height else {reason: document.height for reason in parsed.skipped})


def parse_bytes(data: bytes, ctx: ParseContext) -> Parsed:
    """A Prometheus query-API JSON export (matrix or vector), a ``dcgmi diag -j`` or ``dcgmi health -c -j`` report: one document,
    counted as one line."""
    text = data.decode("utf-8", errors="replace")
    if _is_diag_json(text[:_DIAG_JSON_HEAD]):
        return _parse_diag_json(text, ctx)
    if _is_health_json(text):
        return _parse_health_json(text, ctx)
    try:
        document = pl.DataFrame({"doc": [text]}).select(pl.col("doc").str.json_decode(_JSON_DTYPE).struct.unnest())
    except pl.exceptions.PolarsError as err:
        raise FileFormatError(f"not a readable Prometheus JSON export: {_first_line(str(err))}") from None
    result = document.select(pl.col("data").struct.field("resultType"), pl.col("data").struct.field("result"), "status")
    if result["status"][0] != "success" or result["resultType"][0] not in ("matrix", "vector"):
        raise FileFormatError("Prometheus JSON export without a successful matrix or vector result")
    samples = _json_samples(result.select("result"))
    events = _events(samples, ctx)
    if events.height == 0:
        other = samples.filter(~_is_dcgm_metric()).height
        return Parsed(events=events, skipped={"no DCGM samples" if not other else "other metric": 1})
    first = pl.int_range(pl.len()) == 0
    return Parsed(events=events.with_columns(
        line=pl.lit(1, pl.Int64), n_lines=pl.when(first).then(1).otherwise(0).cast(pl.Int32), format=pl.lit("prometheus_json"),
    ))


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:200] if text.strip() else "unknown error"


# --- nv-hostengine's own log -------------------------------------------------------------------


def _is_hostengine_log(text: pl.Expr) -> pl.Expr:
    """Aggregate: whether most of a file's first non-blank lines open with nv-hostengine's stamp, level and ``[pid:tid]``."""
    head = text.head(60)
    return (head.str.contains(_HOSTENGINE_HEAD).filter(head.str.strip_chars() != "").mean() >= _HOSTENGINE_SHARE).fill_null(False)


def _parse_hostengine(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """A record per stamped line, the unstamped lines under it its message's own (a multi-line message); lines above the
    first stamp kept as they are.

    The file states no zone: its stamps are read in ``ctx.tz``. The ``[file:line] [function]`` DCGM appends to a message
    ends the record's last line.
    """
    head = pl.col("text").str.extract_groups(_HOSTENGINE_HEAD)
    framed = lines.with_columns(head=head).with_columns(record=pl.col("head").struct.field("stamp").is_not_null().cum_sum())
    loose = framed.filter(pl.col("record") == 0).select("line", message="text", n_lines=pl.lit(1, pl.Int32))
    records = framed.filter(pl.col("record") > 0).group_by("record", maintain_order=True).agg(
        pl.col("line").first(), pl.len().cast(pl.Int32).alias("n_lines"), pl.col("head").first(), body=pl.col("text").str.join("\n"),
    )
    fields = pl.col("head").struct
    text = pl.col("body").str.slice(fields.field("head").str.len_chars())
    tail = text.str.extract_groups(_HOSTENGINE_TAIL)
    message = text.str.slice(0, text.str.len_chars() - tail.struct.field("tail").str.len_chars().fill_null(0))
    records = records.with_columns(tail=tail, message=message)
    is_nvvs = records.select(pl.col("tail").struct.field("source").str.contains(_NVVS_SOURCE).any()).item()
    xid = pl.col("message").str.extract(_XID_IN_TEXT, 1).cast(pl.Int32, strict=False)
    events = records.select(
        "line", "n_lines", "message",
        ts=naive_to_utc(fields.field("stamp").str.to_datetime("%Y-%m-%d %H:%M:%S%.f", strict=False), ctx.tz),
        ts_raw=fields.field("stamp"),
        ts_quality=pl.lit("exact"),
        kind=pl.when(xid.is_not_null()).then(pl.lit("xid")).otherwise(pl.lit("log")),
        format=pl.lit("nvvs_log" if is_nvvs else "hostengine_log"),
        severity=fields.field("level").replace_strict(_HOSTENGINE_LEVELS, default=None),
        pid=fields.field("pid").cast(pl.Int64, strict=False),
        process=pl.lit("nvvs" if is_nvvs else "nv-hostengine"),
        xid=xid,
        attrs=attrs_json({
            "tid": fields.field("tid").cast(pl.Int64, strict=False), "module": fields.field("module"),
            "source": pl.col("tail").struct.field("source"), "function": pl.col("tail").struct.field("function"),
            **_xid.catalog_attrs(xid),
        }),
    )
    return Parsed(events=pl.concat([loose, events], how="diagonal_relaxed").sort("line"))


# --- dcgmi tables: diag, discovery, health, stats ----------------------------------------------


def _parse_tables(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Each table parsed by its kind's rules: a header (or stats' banner line) opens the table's lines.

    Lines before the first header, and those of diag / discovery tables, go to :func:`_parse_diag`,
    which keeps what it cannot read as log lines.
    """
    text = pl.col("text").str.strip_chars()
    opens = (
        pl.when(text.str.contains(_DIAG_HEADER)).then(pl.lit("diag"))
        .when(text.str.contains(_HEALTH_HEADER)).then(pl.lit("health"))
        .when(text.str.contains(_STATS_HEADER) | text.str.contains(_STATS_BANNER)).then(pl.lit("stats"))
    )
    tagged = lines.with_columns(table=opens.forward_fill().fill_null("diag"))
    parsers = {"diag": _parse_diag, "health": _parse_health, "stats": _parse_stats}
    parts = [parsers[kind](part.drop("table"), ctx) for (kind,), part in tagged.partition_by("table", as_dict=True).items()]
    skipped: dict[str, int] = {}
    for part in parts:
        for reason, count in part.skipped.items():
            skipped[reason] = skipped.get(reason, 0) + count
    return Parsed(events=pl.concat([part.events for part in parts], how="diagonal_relaxed").sort("line"), skipped=skipped)


def _table_rows(lines: pl.DataFrame) -> pl.DataFrame:
    """``lines`` with ``name`` / ``cell`` of a ``| name | cell |`` row, ``section`` of a rule, ``border``."""
    text = pl.col("text").str.strip_chars()
    row = text.str.extract_groups(_DIAG_ROW).struct
    return lines.with_columns(
        section=text.str.extract(_DIAG_SECTION, 1),
        border=text.str.contains(_DIAG_BORDER) | text.str.contains(r"^\+-+\+$"),
        name=row.field("name").str.strip_chars(),
        cell=row.field("cell").str.strip_chars(),
    )


def _file_time(ctx: ParseContext, lines: pl.DataFrame | None = None) -> dict[str, pl.Expr]:
    """The time of lines that state none: their file's modification time (each file's own, of the ``lines`` of several)."""
    times = [when for _, when in ctx.files] if lines is not None and within_file(lines) else [ctx.reference_time]
    return {"ts": per_file(times, schema.UTC_MICROS), "ts_quality": per_file(["file_mtime" if when else "missing" for when in times], pl.String())}


def _parse_health(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """``dcgmi health -c``: an event per entity's system incident, its wrapped text joined; the overall result."""
    rows = _table_rows(lines)
    name, cell = pl.col("name"), pl.col("cell")
    is_row = name.is_not_null() & pl.col("section").is_null() & ~pl.col("border")
    old = cell.str.extract_groups(_HEALTH_INCIDENT).struct
    # Tree layout: "-> 0" an entity of the group named above it, "-> PCIe system" a system's result.
    entity = name.str.extract(r"^(?:GPU ID:\s*|->\s*)([0-9]+)$", 1).cast(pl.Int32, strict=False)
    tree_system = pl.when(entity.is_null() & (name != "-> Errors")).then(name.str.extract(r"^->\s*(.+)$", 1))
    system = pl.coalesce(tree_system, pl.when(name == "").then(old.field("system")))
    overall = pl.coalesce(pl.when(name == "Overall Health").then(cell), cell.str.extract(r"^Overall Health:\s*(\S+)", 1))
    group = pl.when(name.str.contains(r"^[A-Za-z][A-Za-z ]*$") & (name != "Overall Health")).then(name).when(name.str.starts_with("GPU ID")).then(pl.lit("GPU"))
    framed = rows.with_columns(
        is_row=is_row, entity=entity, group=group, overall=pl.when(is_row).then(overall),
        system=pl.when(is_row).then(system),
        result=pl.when(is_row).then(pl.coalesce(pl.when(tree_system.is_not_null()).then(cell), old.field("result"))),
        chunk=pl.when(is_row & (name == "")).then(pl.coalesce(old.field("text"), pl.when(old.field("system").is_null()).then(cell))),
    ).with_columns(
        pl.col("group").forward_fill(), pl.col("entity").forward_fill(),
        # A row without a name continues the incident above it, unless it opens one (DCGM 1.x).
        record=(~pl.col("is_row") | (name != "") | pl.col("system").is_not_null()).cum_sum(),
    )
    incidents = framed.filter(pl.col("is_row")).group_by("record", maintain_order=True).agg(
        pl.col("line").first(), pl.len().cast(pl.Int32).alias("n_lines"), pl.col("group").first(), pl.col("entity").first(),
        pl.col("system").first(), pl.col("result").first(), text=pl.col("chunk").drop_nulls().str.join(" "),
    ).filter(pl.col("system").is_not_null())
    on_gpu = pl.col("group").is_null() | (pl.col("group") == "GPU")
    xid = pl.col("text").str.extract(_XID_IN_TEXT, 1).cast(pl.Int32, strict=False)
    events = incidents.select(
        "line", "n_lines", **_file_time(ctx),
        kind=pl.when(xid.is_not_null()).then(pl.lit("xid")).otherwise(pl.lit("log")),
        format=pl.lit("health"),
        severity=pl.col("result").replace_strict(_HEALTH_RESULT, default=None),
        gpu_index=pl.when(on_gpu).then(pl.col("entity")),
        xid=xid,
        message=pl.concat_str([pl.format("{} {}", pl.col("group").fill_null("GPU"), pl.col("entity")), "system", "result",
                               pl.when(pl.col("text") != "").then(pl.col("text"))], separator=": ", ignore_nulls=True),
        attrs=attrs_json({
            "system": pl.col("system"), "result": pl.col("result"),
            "entity_group": pl.when(~on_gpu).then(pl.col("group")), "entity_id": pl.when(~on_gpu).then(pl.col("entity")),
            **_xid.catalog_attrs(xid),
        }),
    )
    summary = framed.filter(pl.col("overall").is_not_null()).select(
        "line", **_file_time(ctx), n_lines=pl.lit(1, pl.Int32), kind=pl.lit("log"), format=pl.lit("health"),
        severity=pl.col("overall").replace_strict(_HEALTH_RESULT, default=None),
        message=pl.format("Overall Health: {}", pl.col("overall")),
        attrs=attrs_json({"overall_health": pl.col("overall")}),
    )
    framed = framed.with_columns(border=pl.col("border") | pl.col("text").str.strip_chars().str.contains(_HEALTH_HEADER))
    claimed = framed.filter(pl.col("is_row") | pl.col("border") | pl.col("section").is_not_null())
    other = framed.filter(~pl.col("is_row") & ~pl.col("border") & pl.col("section").is_null())
    kept = other.select("line", **_file_time(ctx), message=pl.col("text").str.strip_chars_end(), n_lines=pl.lit(1, pl.Int32))
    # Borders, the title and the rows naming an entity or its "Errors" branch: layout, no event.
    layout = claimed.height - int(events["n_lines"].sum() or 0) - summary.height
    return Parsed(events=pl.concat([events, summary, kept], how="diagonal_relaxed").sort("line"), skipped={"table border": layout} if layout else {})


def _parse_stats(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """``dcgmi stats``: a ``gpu_sample`` per GPU box (its rows and rules), per-system health rows as events."""
    text = pl.col("text").str.strip_chars()
    banner = text.str.extract_groups(_STATS_BANNER).struct
    header = text.str.extract_groups(_STATS_HEADER).struct
    opens = text.str.contains(_STATS_HEADER)
    rows = _table_rows(lines).with_columns(
        job=banner.field("job").forward_fill(), banner_pid=banner.field("pid").cast(pl.Int64, strict=False).forward_fill(),
        header_gpu=pl.when(opens).then(header.field("gpu").cast(pl.Int32, strict=False).fill_null(-1)),
        box=opens.cum_sum(),
    ).with_columns(
        # Lines of a box: from its header to the last row or rule before the next header or text line.
        in_box=(pl.col("box") > 0) & (pl.col("name").is_not_null() | pl.col("border") | pl.col("section").is_not_null() | opens),
    ).with_columns(pl.col("section").forward_fill().over("box"))
    # A text line (a footnote, the next command) closes the box: rows after it belong to none.
    framed = rows.with_columns(in_box=pl.col("in_box") & ((~pl.col("in_box")).cum_sum().over("box") == 0))
    # Row names carry padding and, for process statistics, a "*" marker.
    boxed = framed.filter(pl.col("in_box")).with_columns(key=pl.col("name").str.strip_chars(" *"))
    health_rows = boxed.filter((pl.col("section") == "Overall Health") & (pl.col("key") != "Overall Health") & pl.col("cell").is_in(list(_HEALTH_RESULT)))

    def value(name: str) -> pl.Expr:
        return pl.col("cell").filter(pl.col("key") == name).first()

    def avg(name: str, part: str = "Avg") -> pl.Expr:
        return value(name).str.extract(rf"\b{part}:\s*([-+0-9.eE]+)", 1).cast(pl.Float64, strict=False)

    def count(name: str) -> pl.Expr:
        return value(name).str.extract(r"^([0-9]+(?:\.[0-9]+)?)$", 1).cast(pl.Float64, strict=False)

    boxes = boxed.group_by("box", maintain_order=True).agg(
        pl.col("line").first(), pl.len().cast(pl.Int32).alias("n_lines"),
        pl.col("header_gpu").drop_nulls().first(), pl.col("job").first(), pl.col("banner_pid").first(),
        start=value("Start Time"), end=value("End Time"), health=value("Overall Health"),
        max_bytes=count("Max GPU Memory Used (bytes)"), pid=count("PID"),
        sm_util=avg("SM Utilization (%)"), sm_util_max=avg("SM Utilization (%)", "Max"), mem_util=avg("Memory Utilization (%)"),
        power_avg=avg("Power Usage (Watts)"), power_max=avg("Power Usage (Watts)", "Max"),
        **{attr: count(name) for name, attr in _STATS_COUNTERS.items()},
    ).filter(pl.col("header_gpu").is_not_null())
    start, end = ctime_to_utc(pl.col("start"), ctx.tz), ctime_to_utc(pl.col("end"), ctx.tz)
    faulted = (pl.col("ecc_dbe") > 0) | (pl.col("critical_xid_errors") > 0)
    severity = pl.col("health").replace_strict(_HEALTH_RESULT, default=None)
    gpu = pl.when(pl.col("header_gpu") >= 0).then(pl.col("header_gpu"))

    def integral(column: str) -> pl.Expr:
        return pl.col(column).round().cast(pl.Int64, strict=False)

    samples = boxes.select(
        "line", "n_lines",
        ts=pl.coalesce(end, start, pl.lit(ctx.reference_time, schema.UTC_MICROS)),
        ts_quality=pl.when(pl.coalesce(end, start).is_not_null()).then(pl.lit("exact"))
        .otherwise(pl.lit("file_mtime" if ctx.reference_time else "missing")),
        kind=pl.lit("gpu_sample"), format=pl.lit("stats"),
        severity=pl.when(faulted & (severity.fill_null("info") == "info")).then(pl.lit("warning")).otherwise(severity.fill_null("info")),
        gpu_index=gpu,
        pid=pl.coalesce(pl.col("banner_pid"), integral("pid")),
        mem_used_bytes=integral("max_bytes"),
        gpu_util_pct=pl.col("sm_util"),
        message=pl.concat_str([
            pl.when(gpu.is_not_null()).then(pl.format("DCGM job stats gpu {}", gpu)).otherwise(pl.lit("DCGM job stats summary")),
            pl.format("job {}", pl.col("job")), pl.format("pid {}", pl.coalesce(pl.col("banner_pid"), integral("pid"))),
            pl.format("max memory {} bytes", integral("max_bytes")), pl.format("SM util avg {}%", pl.col("sm_util")),
            pl.format("health {}", pl.col("health")),
        ], separator=", ", ignore_nulls=True),
        attrs=attrs_json({
            "job_id": pl.col("job"), "start_time": pl.col("start"), "end_time": pl.col("end"), "mem_used_stat": pl.when(pl.col("max_bytes").is_not_null()).then(pl.lit("max")),
            "sm_util_max_pct": pl.col("sm_util_max"), "mem_util_avg_pct": pl.col("mem_util"), "power_avg_w": pl.col("power_avg"), "power_max_w": pl.col("power_max"),
            "duration_s": pl.col("duration_s"), "energy_j": integral("energy_j"),
            **{attr: integral(attr) for attr in _STATS_COUNTERS.values() if attr not in ("duration_s", "energy_j")},
            "overall_health": pl.col("health"),
        }),
    )
    box_gpu = boxes.select("box", gpu_index=gpu, job=pl.col("job"))
    # Their rows are counted in the box's sample: these events cover no line of their own.
    incidents = health_rows.join(box_gpu, on="box", how="left").select(
        "line", **_file_time(ctx), n_lines=pl.lit(0, pl.Int32), kind=pl.lit("log"), format=pl.lit("stats"),
        severity=pl.col("cell").replace_strict(_HEALTH_RESULT, default=None), gpu_index="gpu_index",
        message=pl.format("{}: {}", pl.col("key"), pl.col("cell")),
        attrs=attrs_json({"system": pl.col("key"), "result": pl.col("cell"), "job_id": pl.col("job")}),
    )
    # The top border printed above a box's header is no text line of its own.
    outside = framed.filter(~pl.col("in_box"))
    other = outside.filter(~pl.col("border")).select("line", **_file_time(ctx), message=pl.col("text").str.strip_chars_end(), n_lines=pl.lit(1, pl.Int32))
    borders = outside.height - other.height
    return Parsed(events=pl.concat([samples, incidents, other], how="diagonal_relaxed").sort("line"), skipped={"table border": borders} if borders else {})


# --- dcgmi dmon: a row per entity and sample under a header of field tags ---------------------------


def _parse_dmon(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """``dcgmi dmon``: each row's values paired with the tags of the header above it."""
    text = pl.col("text").str.strip_chars()
    row = text.str.extract_groups(_DMON_ROW).struct
    framed = lines.with_columns(
        tags=text.str.extract(_DMON_HEADER, 1).str.extract_all(r"\S+").forward_fill(),
        values=row.field("values").str.extract_all(r"\S+"),
        group=row.field("group"), entity=row.field("entity").cast(pl.Int32, strict=False),
        header=_is_dmon_header(text) | (text.str.to_uppercase() == "ID"),
    )
    # A row cut short (or a stray line under the header) keeps its text.
    paired = pl.col("group").is_not_null() & (pl.col("values").list.len() == pl.col("tags").list.len()).fill_null(False)
    readings = framed.filter(paired).select("line", "group", "entity", "tags", "values").explode(["tags", "values"])
    number = pl.col("values").cast(pl.Float64, strict=False)
    named = {attr: number.filter(pl.col("tags") == tag).first() * factor for tag, (attr, factor) in _DMON_FIELDS.items()}
    # the other tags' readings as they are printed (N/A left out)
    printed = number.is_not_null() & pl.col("values").str.contains(_JSON_NUMBER)
    unnamed = pl.format('"{}":{}', "tags", "values").filter(printed & ~pl.col("tags").is_in(list(_DMON_FIELDS))).str.join(",")
    rows = readings.group_by("line", maintain_order=True).agg(pl.col("group").first(), pl.col("entity").first(), unnamed=unnamed, **named)
    on_gpu = pl.col("group") == "GPU"
    rows = rows.with_columns(
        sample=pl.int_range(pl.len()).over("group", "entity"),
        xid=pl.col("last_xid").cast(pl.Int32, strict=False),
    ).with_columns(
        # XIDER holds the last Xid: an event where it turns to a new non-zero code.
        is_xid=(pl.col("xid") > 0).fill_null(False) & pl.col("xid").ne_missing(pl.col("xid").shift(1).over("group", "entity")),
    )
    used, total = pl.col("used").round().cast(pl.Int64), pl.coalesce(pl.col("total"), pl.col("used") + pl.col("free")).round().cast(pl.Int64)
    attrs = attrs_json({
        "entity_group": pl.when(~on_gpu).then(pl.col("group")), "entity_id": pl.when(~on_gpu).then(pl.col("entity")),
        "temp_c": pl.col("temp_c"), "power_w": pl.col("power_w"), "last_xid": pl.col("xid"),
        "sample": pl.when(pl.col("sample") > 0).then(pl.col("sample")),
    })
    events = rows.select(
        "line", **_file_time(ctx),
        n_lines=pl.lit(1, pl.Int32),
        kind=pl.when(pl.col("is_xid")).then(pl.lit("xid")).otherwise(pl.lit("gpu_sample")),
        format=pl.lit("dmon"),
        severity=pl.when(pl.col("is_xid")).then(_xid.catalog_severity(pl.col("xid"))).otherwise(pl.lit("info")),
        gpu_index=pl.when(on_gpu).then(pl.col("entity")),
        xid=pl.when(pl.col("is_xid")).then(pl.col("xid")),
        mem_used_bytes=used, mem_total_bytes=total, gpu_util_pct=pl.col("gpu_util_pct"),
        message=pl.concat_str([
            pl.format("DCGM dmon {} {}", "group", "entity"), pl.format("fb_used {} MiB", (pl.col("used") / MIB).round().cast(pl.Int64)),
            pl.format("util {}%", pl.col("gpu_util_pct")), pl.when(pl.col("is_xid")).then(pl.format("Xid {}", "xid")),
        ], separator=", ", ignore_nulls=True),
        attrs=joined_json(
            pl.when(pl.col("is_xid")).then(joined_json(attrs, attrs_json(_xid.catalog_attrs(pl.col("xid"))))).otherwise(attrs),
            pl.when(pl.col("unnamed") != "").then(pl.format("{{{}}}", "unnamed")),
        ),
    )
    headers = framed.filter(pl.col("header")).height
    # dcgmi reports a failure as a line of its own ("Error setting watches. Result: …"): monitoring stopped there.
    failed = pl.when(pl.col("text").str.strip_chars().str.contains(_DCGMI_ERROR)).then(pl.lit("error"))
    kept = framed.filter(~paired & ~pl.col("header")).select(
        "line", **_file_time(ctx), message=pl.col("text"), severity=failed, format=pl.lit("dmon"), n_lines=pl.lit(1, pl.Int32)
    )
    return Parsed(events=pl.concat([events, kept], how="diagonal_relaxed").sort("line"), skipped={"header": headers} if headers else {})


def carried_lines(lines: pl.DataFrame) -> pl.DataFrame:
    """The header (and units line) of the ``dcgmi dmon`` table the lines end in, which its rows in the next batch read by;
    under a header with ``XIDER``, each entity's last row too, whose Xid the entity's next row is compared with.

    Nothing when the lines end outside such a table (their last line none of its rows, its header or units line).
    """
    text = pl.col("text").str.strip_chars()
    content = lines.select("line", "text").filter(text != "")
    # the last line first: a batch of a scrape or a diag table ends in none of these, and stops here
    in_table = text.str.contains(_DMON_ROW) | text.str.contains(_DMON_UNITS) | _is_dmon_header(text)
    if content.is_empty() or not content.tail(1).select(in_table).item():
        return content.clear()
    framed = content.with_columns(header=_is_dmon_header(pl.col("text")))
    if not framed["header"].any():
        return content.clear()
    headers = framed.with_row_index("at").filter(pl.col("header"))["at"]
    head = content.slice(headers[-1], 2).filter((pl.int_range(pl.len()) == 0) | text.str.contains(_DMON_UNITS))
    tags = re.match(_DMON_HEADER, head["text"][0].strip())[1]
    if "XIDER" not in tags.split():
        return head
    # (dcgmi prints every entity's row between two headers: the last rows are below the header before the last one)
    return pl.concat([head, _last_rows(framed.slice(headers[-2] if headers.len() > 1 else 0), tags)])


def _last_rows(framed: pl.DataFrame, tags: str) -> pl.DataFrame:
    """Each entity's last row (as :func:`_parse_dmon` pairs rows with tags: a row cut short is none), where it was read by ``tags``."""
    text = pl.col("text").str.strip_chars()
    row = text.str.extract_groups(_DMON_ROW).struct
    read = framed.with_columns(
        tags=pl.when(pl.col("header")).then(text.str.extract(_DMON_HEADER, 1)).forward_fill(),
        group=row.field("group"), entity=row.field("entity"), count=row.field("values").str.count_matches(r"\S+"),
    ).filter(pl.col("group").is_not_null() & (pl.col("count") == pl.col("tags").str.count_matches(r"\S+")))
    last = read.unique(["group", "entity"], keep="last", maintain_order=True)
    return last.filter(pl.col("tags") == tags).sort("line").select("line", "text")


def _parse_nvlink_status(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """``dcgmi nvlink -s``: an event per GPU or NvSwitch, its link states counted; a link down is a warning.

    A down link (``D``) is one the hardware has and is not up: collectives over it fall back to PCIe or hang.
    Slots the device lacks print ``_``, so a PCIe-only GPU is all ``_`` and no warning.
    """
    text = pl.col("text").str.strip_chars()
    entity = text.str.extract_groups(_NVLINK_ENTITY).struct
    framed = lines.with_columns(
        group=entity.field("group"), entity=entity.field("entity").cast(pl.Int32, strict=False),
        states=pl.when(text.str.contains(_NVLINK_STATES)).then(text),
        layout=_is_nvlink_title(pl.col("text")) | text.str.contains(_NVLINK_LAYOUT),
    )
    # A state row belongs to the entity line right above it (dcgmi prints them as one record).
    above = pl.col("group").shift(1).is_not_null()
    owned = pl.col("states").is_not_null() & above
    records = framed.with_columns(
        owned=owned, opens=pl.col("group").is_not_null() & owned.shift(-1).fill_null(False),
    ).with_columns(record=pl.col("opens").cum_sum())
    pairs = records.filter(pl.col("opens") | pl.col("owned")).group_by("record", maintain_order=True).agg(
        pl.col("line").first(), pl.col("group").first(), pl.col("entity").first(), pl.col("states").drop_nulls().first(),
        message=pl.col("text").str.strip_chars().str.join(" "),
    )
    on_gpu = pl.col("group") == "gpuId"
    count = {name: pl.col("states").str.count_matches(letter, literal=True) for name, letter in
             (("links_up", "U"), ("links_down", "D"), ("links_disabled", "X"))}
    events = pairs.select(
        "line", "message", **_file_time(ctx),
        n_lines=pl.lit(2, pl.Int32), kind=pl.lit("log"), format=pl.lit("nvlink_status"),
        severity=pl.when(count["links_down"] > 0).then(pl.lit("warning")).otherwise(pl.lit("info")),
        gpu_index=pl.when(on_gpu).then(pl.col("entity")),
        attrs=attrs_json({
            "entity_group": pl.when(~on_gpu).then(pl.lit("NvSwitch")), "entity_id": pl.when(~on_gpu).then(pl.col("entity")),
            **count, "link_states": pl.col("states").str.replace_all(" ", "", literal=True),
        }),
    )
    claimed = pl.col("opens") | pl.col("owned") | pl.col("layout")
    kept = records.filter(~claimed & (pl.col("text").str.strip_chars() != "")).select(
        "line", **_file_time(ctx), message=pl.col("text").str.strip_chars_end(), format=pl.lit("nvlink_status"),
        n_lines=pl.lit(1, pl.Int32),
    )
    layout = records.filter(pl.col("layout")).height
    return Parsed(events=pl.concat([events, kept], how="diagonal_relaxed").sort("line"), skipped={"table border": layout} if layout else {})


# --- dcgmi diag: the boxed table of test results ---------------------------------------------


def _parse_diag(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Result rows and joined Warning/Info rows as events; metadata into attrs; rules and borders skipped."""
    text = pl.col("text").str.strip_chars()
    name, cell = pl.col("row").struct.field("name").str.strip_chars(), pl.col("row").struct.field("cell")
    discovery = lines.select(text.str.extract(_DIAG_HEADER, 1).is_not_null().any()).item()
    framed = lines.with_columns(
        section=text.str.extract(_DIAG_SECTION, 1),
        border=text.str.contains(_DIAG_BORDER) | text.str.contains(_DIAG_HEADER),
        row=text.str.extract_groups(_DIAG_ROW),
    ).with_columns(pl.col("section").forward_fill().alias("in_section"), name=name, cell=cell)
    is_row = pl.col("cell").is_not_null() & pl.col("section").is_null() & ~pl.col("border")
    metadata = pl.col("in_section").str.to_lowercase() == "metadata"
    result = pl.col("cell").str.strip_chars().str.extract_groups(_DIAG_RESULT)
    detail = pl.col("name").is_in(list(_DIAG_DETAILS))
    framed = framed.with_columns(
        is_row=is_row, metadata=metadata.fill_null(False) & is_row,
        result=pl.when(is_row & ~detail & (not discovery)).then(result),
    ).with_columns(
        test=pl.when(pl.col("is_row") & ~pl.col("metadata") & (pl.col("name") != "") & ~detail & (not discovery)).then(pl.col("name")).forward_fill(),
        # A row without a name continues the one above, unless it holds a result of its own (a GPU's).
        record=(~pl.col("is_row") | (pl.col("name") != "") | pl.col("result").struct.field("result").is_not_null()).cum_sum(),
    )
    meta = framed.filter(pl.col("metadata") & (pl.col("name") != "")).select("name", value=pl.col("cell").str.strip_chars())
    meta_attrs = {_DIAG_METADATA.get(key, re.sub(r"[^0-9A-Za-z_]+", "_", key.lower()).strip("_")): value for key, value in meta.iter_rows()}
    skipped = {reason: count for reason, count in {
        "table border": framed["border"].sum(), "section": framed["section"].is_not_null().sum(), "metadata": framed["metadata"].sum(),
    }.items() if count}
    other = framed.filter(~pl.col("is_row") & ~pl.col("border") & pl.col("section").is_null())
    # Wrapped text is cut into chunks one narrower than the cell, mid-word: the last cell character is
    # padding. A chunk padded further ended at a word (another layout): one space stands for the padding.
    chunk = pl.col("cell").str.slice(0, pl.col("cell").str.len_chars() - 1)
    piece = pl.when(chunk.str.ends_with(" ")).then(chunk.str.strip_chars_end() + " ").otherwise(chunk)
    records = framed.filter(pl.col("is_row") & ~pl.col("metadata")).group_by("record", maintain_order=True).agg(
        pl.col("line").first(), pl.len().cast(pl.Int32).alias("n_lines"), pl.col("name").first(), pl.col("test").first(),
        pl.col("in_section").first(), pl.col("result").first(), text=piece.str.join("").str.strip_chars(),
    )
    outcome, gpus = pl.col("result").struct.field("result"), pl.col("result").struct.field("gpus")
    label = pl.when(pl.col("name").is_in(list(_DIAG_DETAILS))).then(pl.col("name"))
    gpu = pl.coalesce(
        pl.when(discovery).then(pl.col("name")),
        pl.col("result").struct.field("gpu"),
        pl.when(~gpus.str.contains(",")).then(gpus),
        pl.when(label.is_not_null()).then(pl.col("text").str.extract(_GPU_IN_DETAIL, 1)),
    ).cast(pl.Int32, strict=False)
    xid = pl.col("text").str.extract(_XID_IN_TEXT, 1).cast(pl.Int32, strict=False)
    events = records.select(
        "line", "n_lines",
        ts=pl.lit(ctx.reference_time, schema.UTC_MICROS),
        ts_quality=pl.lit("file_mtime" if ctx.reference_time else "missing"),
        kind=pl.when(xid.is_not_null()).then(pl.lit("xid")).otherwise(pl.lit("log")),
        format=pl.lit("discovery" if discovery else "diag"),
        severity=pl.coalesce(outcome.replace_strict(_DIAG_SEVERITY, default=None), label.replace_strict(_DIAG_DETAILS, default=None)),
        gpu_index=gpu,
        gpu_uuid=pl.col("text").str.extract(r"\bUUID:\s*(GPU-[0-9a-fA-F-]+)", 1),
        pci_bus=pl.col("text").str.extract(r"\bPCI Bus ID:\s*([0-9A-Fa-f]+:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])", 1),
        xid=xid,
        message=pl.concat_str([pl.when(discovery).then(pl.format("GPU {}", pl.col("name"))), pl.col("test"), label, pl.col("text")],
                              separator=": ", ignore_nulls=True),
        attrs=attrs_json({
            "test": pl.col("test"), "section": pl.col("in_section"), "result": outcome,
            "gpus": pl.when(pl.col("text").str.contains(r"-\s*All$")).then(pl.lit("all")).otherwise(gpus),
            "detail": label.str.to_lowercase(),
            **_xid.catalog_attrs(xid),
            **{key: pl.lit(value) for key, value in meta_attrs.items()},
        }),
    )
    unparsed = other.select("line", message="text", n_lines=pl.lit(1, pl.Int32))
    return Parsed(events=pl.concat([events, unparsed], how="diagonal_relaxed").sort("line"), skipped=skipped)


# --- dcgmi diag -j: the same results as one JSON document ---------------------------------------


def _parse_diag_json(text: str, ctx: ParseContext) -> Parsed:
    """``dcgmi diag -j``: an event per (test, entity) result, as the table's result rows, and one per test summary's own text.

    DCGM 3.x gives a result per GPU as ``gpu_ids`` (a CSV of all GPUs for software tests), warnings as
    strings or ``{"warning", "error_id"}`` objects and info as a list or one string; DCGM 4.x a result per
    entity (``entity_group`` / ``entity_id``), a ``test_summary`` and the versions under ``metadata``.
    The document is a few hundred results at most and its members change type between versions, so it is
    walked as Python objects and the events built from the rows that walk yields.
    """
    try:
        document = json.loads(text)
    except ValueError as err:
        raise FileFormatError(f"not a readable dcgmi diag JSON report: {_first_line(str(err))}") from None
    diag = next((document.get(key) for key in ("DCGM Diagnostic", "DCGM GPU Diagnostic") if isinstance(document, dict) and key in document), None)
    if not isinstance(diag, dict):
        raise FileFormatError("dcgmi diag JSON report without its diagnostic object")
    metadata = _members(document.get("metadata"))
    meta = {
        "dcgm_version": _text(metadata.get("version")) or _text(diag.get("version")),
        "driver_version": _text(metadata.get("Driver Version Detected")) or _text(diag.get("Driver Version Detected")),
    }
    records = pl.DataFrame(_diag_json_rows(diag, _device_ids(document.get("entity_groups"))), schema=_DIAG_JSON_SCHEMA)
    runtime_error = _text(diag.get("runtime_error")) or _text(document.get("runtime_error"))
    events = _diag_json_events(records, runtime_error, meta, ctx)
    first = pl.int_range(pl.len()) == 0
    return Parsed(
        events=events.with_columns(line=pl.lit(1, pl.Int64), n_lines=pl.when(first).then(1).otherwise(0).cast(pl.Int32)),
        skipped={} if events.height else {"no diagnostic results": 1},
    )


def _members(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _items(value: object) -> list:
    return value if isinstance(value, list) else []


def _text(value: object) -> str | None:
    return str(value) if isinstance(value, str | int | float) and not isinstance(value, bool) and str(value) != "" else None


def _messages(value: object) -> list[tuple[str, int | None]]:
    """Warning or info texts with their DCGM error id: one string, a list of strings, or DCGM's message objects."""
    found = []
    for item in [value] if isinstance(value, str) else _items(value):
        entry = _members(item)
        message = _text(item) if isinstance(item, str) else _text(entry.get("warning")) or _text(entry.get("message"))
        error_id = entry.get("error_id")
        if message:
            found.append((message, error_id if isinstance(error_id, int) and not isinstance(error_id, bool) else None))
    return found


def _device_ids(groups: object) -> dict[tuple[str, int], str]:
    """DCGM 4's ``entity_groups``: each entity's PCI device id (``2e12``)."""
    return {
        (str(group.get("entity_group")), entity["entity_id"]): str(entity["device_id"])
        for group in map(_members, _items(groups))
        for entity in map(_members, _items(group.get("entities")))
        if isinstance(entity.get("entity_id"), int) and _text(entity.get("device_id"))
    }


def _diag_json_rows(diag: dict, devices: dict[tuple[str, int], str]) -> list[dict]:
    rows: list[dict] = []
    for category in map(_members, _items(diag.get("test_categories"))):
        for test in map(_members, _items(category.get("tests"))):
            base = {"section": _text(category.get("category")), "test": _text(test.get("name"))}
            seen: set[str] = set()
            # DCGM 3's JsonCpp output holds a null where a GPU index has no result
            for result in (result for result in _items(test.get("results")) if isinstance(result, dict)):
                warnings, info = _messages(result.get("warnings")), _messages(result.get("info"))
                seen.update(message for message, _ in warnings)
                group, entity = _text(result.get("entity_group")), result.get("entity_id")
                entity = entity if isinstance(entity, int) and not isinstance(entity, bool) else None
                rows.append({
                    **base, "status": _text(result.get("status")), "entity_group": group, "entity_id": entity,
                    "gpus": _text(result.get("gpu_ids")) or _text(result.get("gpu_id")),
                    "warnings": "; ".join(message for message, _ in warnings) or None, "info": "; ".join(message for message, _ in info) or None,
                    "error_id": next((code for _, code in warnings if code is not None), None),
                    "device_id": devices.get((group or "GPU", entity)) if entity is not None else None, "summary": False,
                })
            # DCGM 4 repeats the results' warnings in the test summary: only what it adds is an event.
            summary = _members(test.get("test_summary"))
            extra = [(message, code) for message, code in _messages(summary.get("warnings")) if message not in seen]
            info = _messages(summary.get("info"))
            if extra or info:
                rows.append({
                    **base, "status": "Warn" if extra else None, "warnings": "; ".join(message for message, _ in extra) or None,
                    "info": "; ".join(message for message, _ in info) or None,
                    "error_id": next((code for _, code in extra if code is not None), None), "summary": True,
                })
    return rows


def _diag_json_events(records: pl.DataFrame, runtime_error: str | None, meta: dict[str, str | None], ctx: ParseContext) -> pl.DataFrame:
    # "PASS" / "Pass" / "SKIPPED" / "Skip": the table's four results
    outcome = pl.col("status").str.slice(0, 4).str.to_titlecase()
    on_gpu = pl.col("entity_group").is_null() | (pl.col("entity_group") == "GPU")
    joined = pl.concat_str(["warnings", "info"], separator="; ", ignore_nulls=True)
    text = pl.when(joined != "").then(joined)
    gpu = pl.coalesce(
        pl.when(on_gpu).then(pl.col("entity_id")),
        pl.col("gpus").str.extract(r"^\s*([0-9]+)\s*$", 1).cast(pl.Int64, strict=False),
        pl.when(pl.col("summary")).then(text.str.extract(r"\bGPU\s*([0-9]+)\b", 1).cast(pl.Int64, strict=False)),
    ).cast(pl.Int32)
    entity = pl.coalesce(
        pl.when(on_gpu & pl.col("entity_id").is_not_null()).then(pl.format("GPU {}", "entity_id")),
        pl.format("{} {}", "entity_group", "entity_id"),
        pl.when(pl.col("gpus").str.contains(",")).then(pl.format("GPUs {}", "gpus")).otherwise(pl.format("GPU {}", "gpus")),
    )
    xid = text.str.extract(_XID_IN_TEXT, 1).cast(pl.Int32, strict=False)
    severity = pl.when(pl.col("summary")).then(pl.when(pl.col("warnings").is_not_null()).then(pl.lit("warning")).otherwise(pl.lit("info")))
    results = records.select(
        **_file_time(ctx),
        kind=pl.when(xid.is_not_null()).then(pl.lit("xid")).otherwise(pl.lit("log")),
        format=pl.lit("diag_json"),
        severity=pl.coalesce(severity, outcome.replace_strict(_DIAG_SEVERITY, default=None)),
        gpu_index=gpu,
        xid=xid,
        # tabs align dcgmi's own bandwidth lines: one space in a message
        message=pl.concat_str(["test", pl.when(~pl.col("summary")).then(entity), outcome, text.str.replace_all(r"\s+", " ")],
                              separator=": ", ignore_nulls=True),
        attrs=attrs_json({
            "test": pl.col("test"), "section": pl.col("section"), "result": outcome,
            "gpus": pl.when(pl.col("gpus").str.contains(",")).then(pl.col("gpus")),
            "entity_group": pl.when(~on_gpu).then(pl.col("entity_group")), "entity_id": pl.when(~on_gpu).then(pl.col("entity_id")),
            "detail": pl.when(pl.col("summary")).then(pl.lit("summary")), "error_id": pl.col("error_id"), "device_id": pl.col("device_id"),
            **_xid.catalog_attrs(xid),
            **{key: pl.lit(value, pl.String) for key, value in meta.items()},
        }),
    )
    failure = pl.DataFrame({"message": [f"DCGM diagnostic runtime error: {runtime_error}"] if runtime_error else []}, schema={"message": pl.String})
    errors = failure.select(
        **_file_time(ctx), kind=pl.lit("log"), format=pl.lit("diag_json"), severity=pl.lit("error"), message="message",
        attrs=attrs_json({key: pl.lit(value, pl.String) for key, value in meta.items()}),
    )
    return pl.concat([errors, results], how="diagonal_relaxed")


# --- dcgmi health -c -j: the health report as one JSON document --------------------------------


def _parse_health_json(text: str, ctx: ParseContext) -> Parsed:
    """``dcgmi health -c -j``: the events of the table (:func:`_parse_health`) from dcgmi's JSON tree.

    The tree is the table's: ``body`` holds ``Overall Health`` (``{"value": "Warning"}``) and per entity group
    (``GPU``, ``Switch``, …) ``children`` keyed by entity id, each ``{"value": <its health>, "children": {"Errors":
    {"children": {"PCIe system": {"value": "Warning", "overflow": [<the incident's text in word-wrapped chunks>]}}}}}``.
    """
    try:
        document = json.loads(text)
    except ValueError as err:
        raise FileFormatError(f"not a readable dcgmi health JSON report: {_first_line(str(err))}") from None
    body = _members(_members(document).get("body"))
    overall = _text(_members(body.get(_HEALTH_OVERALL)).get("value"))
    incidents = [
        {"group": group, "entity": int(entity) if entity.isdigit() else None, "system": system,
         "result": _text(_members(node).get("value")),
         "text": " ".join(chunk for chunk in map(_text, _items(_members(node).get("overflow"))) if chunk) or None}
        for group, branch in body.items() if group != _HEALTH_OVERALL
        for entity, member in _members(_members(branch).get("children")).items()
        for system, node in _members(_members(_members(_members(member).get("children")).get("Errors")).get("children")).items()
    ]
    records = pl.DataFrame(incidents, schema={"group": pl.String, "entity": pl.Int32, "system": pl.String, "result": pl.String, "text": pl.String})
    on_gpu = pl.col("group") == "GPU"
    xid = pl.col("text").str.extract(_XID_IN_TEXT, 1).cast(pl.Int32, strict=False)
    events = records.select(
        **_file_time(ctx),
        kind=pl.when(xid.is_not_null()).then(pl.lit("xid")).otherwise(pl.lit("log")),
        severity=pl.col("result").replace_strict(_HEALTH_RESULT, default=None),
        gpu_index=pl.when(on_gpu).then(pl.col("entity")),
        xid=xid,
        message=pl.concat_str([pl.format("{} {}", "group", "entity"), "system", "result", "text"], separator=": ", ignore_nulls=True),
        attrs=attrs_json({
            "system": pl.col("system"), "result": pl.col("result"),
            "entity_group": pl.when(~on_gpu).then(pl.col("group")), "entity_id": pl.when(~on_gpu).then(pl.col("entity")),
            **_xid.catalog_attrs(xid),
        }),
    )
    summary = pl.DataFrame({"overall": [overall] if overall else []}, schema={"overall": pl.String}).select(
        **_file_time(ctx), kind=pl.lit("log"), severity=pl.col("overall").replace_strict(_HEALTH_RESULT, default=None),
        message=pl.format("Overall Health: {}", "overall"), attrs=attrs_json({"overall_health": pl.col("overall")}),
    )
    parsed = pl.concat([events, summary], how="diagonal_relaxed").with_columns(format=pl.lit("health_json"))
    first = pl.int_range(pl.len()) == 0
    return Parsed(
        events=parsed.with_columns(line=pl.lit(1, pl.Int64), n_lines=pl.when(first).then(1).otherwise(0).cast(pl.Int32)),
        skipped={} if parsed.height else {"no health results": 1},
    )


# --- samples: one row per (metric, series, time) -----------------------------------------------


def _label_fields(labels: pl.Expr) -> pl.Expr:
    """The labels rca reads, as a struct (escaped quotes and backslashes undone)."""
    def label(name: str) -> pl.Expr:
        spelled = _LABEL_SPELLINGS.get(name, re.escape(name))
        raw = labels.str.extract(rf"(?:^|,)\s*{spelled}\s*=\s*{_LABEL_VALUE}", 1)
        return raw.str.replace_all('\\"', '"', literal=True).str.replace_all("\\\\", "\\", literal=True).alias(name)

    return pl.struct([label(name) for name in _LABELS])


def _exposition_samples(rows: pl.DataFrame) -> pl.DataFrame:
    sample = pl.col("sample").struct
    labels = rows.select(sample.field("labels").fill_null("")).to_series()
    fields = map_distinct(labels, _label_fields).struct.unnest()
    stamp_ms = sample.field("stamp").cast(pl.Int64, strict=False)
    return pl.concat(
        [
            rows.select(
                *file_column(rows),
                "line",
                metric=_field_name(sample.field("metric")),
                value=sample.field("value"),
                stamp_us=pl.when(stamp_ms.is_between(0, 10**14)).then(stamp_ms * 1000),
                message=pl.col("text"),
                n_lines=pl.lit(1, pl.Int32),
            ),
            fields,
        ],
        how="horizontal",
    )


def _field_name(metric: pl.Expr) -> pl.Expr:
    """The metric's DCGM field name: a lowercased one (``dcgm_fi_dev_fb_used``) as DCGM spells it, a 1.x exporter's
    (``dcgm_gpu_utilization``) as the field it printed."""
    return (
        pl.when(metric.str.starts_with(_LOWERCASE_FIELD))
        .then(metric.str.to_uppercase())
        .when(metric.str.starts_with(_V1_PREFIX))
        .then(metric.replace(_V1_FIELDS))
        .otherwise(metric)
    )


_METRIC_DTYPE = pl.Struct({"__name__": pl.String(), **{name: pl.String() for name in _LABELS},
                           **{alias: pl.String() for aliases in _JSON_LABEL_ALIASES.values() for alias in aliases}})
_RESULT_DTYPE = pl.List(pl.Struct({"metric": _METRIC_DTYPE, "values": pl.List(pl.List(pl.String())), "value": pl.List(pl.String())}))
_JSON_DTYPE = pl.Struct({"status": pl.String(), "data": pl.Struct({"resultType": pl.String(), "result": _RESULT_DTYPE})})


def _json_samples(frame: pl.DataFrame) -> pl.DataFrame:
    series = frame.explode("result").unnest("result").filter(pl.col("metric").is_not_null()).with_row_index("series_index")
    matrix = series.filter(pl.col("values").is_not_null()).explode("values").drop("value").rename({"values": "point"})
    vector = series.filter(pl.col("values").is_null()).drop("values").rename({"value": "point"})
    points = pl.concat([matrix, vector]).filter(pl.col("point").list.len() == 2)
    metric = pl.col("metric").struct
    seconds = pl.col("point").list.get(0).cast(pl.Float64, strict=False)
    value = pl.col("point").list.get(1)
    return points.select(
        line=pl.lit(1, pl.Int64),
        metric=_field_name(metric.field("__name__")),
        value=value,
        stamp_us=(seconds * 1e6).round().cast(pl.Int64, strict=False),
        message=pl.concat_str([metric.field("__name__").fill_null(""), pl.lit('{gpu="'), metric.field("gpu").fill_null(""), pl.lit('",UUID="'),
                               metric.field("UUID").fill_null(""), pl.lit('"} '), value, pl.lit(" @"), pl.col("point").list.get(0)]),
        n_lines=pl.lit(1, pl.Int32),
        **{name: pl.coalesce(metric.field(name), *map(metric.field, _JSON_LABEL_ALIASES.get(name, ()))) for name in _LABELS},
    ).select("line", "metric", "value", "stamp_us", "message", "n_lines", *_LABELS)


# --- events: samples of one GPU at one time merged ----------------------------------------------


def _is_dcgm_metric() -> pl.Expr:
    return pl.col("metric").str.starts_with("DCGM_").fill_null(False)


def _events(samples: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """GPU events from the samples of DCGM's metrics (of one file, or of several with a ``batch_file`` column)."""
    number = pl.col("value").cast(pl.Float64, strict=False)
    file_time = _file_time(ctx, samples)
    # A GPU shared by several pods (time-slicing, MPS) has a series per pod: one event each. A file's series are its own.
    gpu_key = [*file_column(samples), "Hostname", "gpu", "UUID", "GPU_I_ID", "pod", "namespace", "container", "exported_pod", "exported_namespace",
               "exported_container"]
    dcgm = samples.filter(_is_dcgm_metric()).with_columns(
        number=pl.when(number.is_finite() & (number.abs() < _DCGM_BLANK)).then(number),
        ts=pl.coalesce(pl.col("stamp_us").cast(schema.UTC_MICROS), file_time["ts"]),
        ts_quality=pl.when(pl.col("stamp_us").is_not_null()).then(pl.lit("exact")).otherwise(file_time["ts_quality"]),
        # Without timestamps, the k-th sample of a GPU's metric belongs to the k-th scrape saved in the file.
        scrape=pl.when(pl.col("stamp_us").is_null()).then(pl.int_range(pl.len()).over("metric", *_series(samples), *gpu_key)).cast(pl.Int32),
    ).sort([*gpu_key, "ts", "scrape"], nulls_last=True, maintain_order=True)
    # DCGM_FI_DEV_XID_ERRORS holds the last Xid; DCGM_EXP_XID_ERRORS_COUNT{…,xid="42"} how often Xid 42
    # occurred in the exporter's window. Either is an event where its value changes to a positive one.
    value = pl.col("number")
    of_xid = (pl.col("metric") == _XID) | pl.col("xid").is_not_null()
    changed = value.ne_missing(value.shift(1).over(*gpu_key, "metric", "xid")).fill_null(True)
    dcgm = dcgm.with_columns(xid_event=of_xid & (value > 0).fill_null(False) & changed)
    events = pl.concat(
        [_gpu_samples(dcgm.filter(~pl.col("xid_event")), gpu_key), _xid_events(dcgm.filter(pl.col("xid_event")))],
        how="diagonal_relaxed",
    )
    return events.sort("line", maintain_order=True)


def _identity() -> dict[str, pl.Expr]:
    def present(expr: pl.Expr) -> pl.Expr:
        return pl.when(expr != "").then(expr)

    hostname = present(pl.col("Hostname"))
    return {
        "host": pl.when(~hostname.str.contains(_EXPORTER_HOST)).then(hostname),
        "gpu_index": pl.col("gpu").cast(pl.Int32, strict=False),
        "gpu_uuid": present(pl.col("UUID")),
        "pci_bus": present(pl.col("pci_bus_id")),
        "pod": pl.coalesce(present(pl.col("pod")), present(pl.col("exported_pod"))),
        "namespace": pl.coalesce(present(pl.col("namespace")), present(pl.col("exported_namespace"))),
        "container": pl.coalesce(present(pl.col("container")), present(pl.col("exported_container"))),
    }


def _series(samples: pl.DataFrame) -> list[str]:
    """The series labels set on some sample (a null count is free: most scrapes have none of them)."""
    return [label for label in _SERIES_LABELS if samples[label].null_count() < samples.height]


def _hw_slowdown(rows: pl.DataFrame, counted: bool) -> pl.Expr:
    """Aggregation: whether a GPU's samples tell of a hardware clock slowdown (its clock-event counts, its reasons bitmask).

    Only the metrics a scrape holds are looked at, so one without them pays a single pass over its metric names.
    """
    value = pl.col("number")
    told = [(value.filter(pl.col("clock_event").is_in(_HW_CLOCK_EVENTS)).sum() > 0)] if counted else []
    if rows.select(pl.col("metric").is_in(_CLOCK_REASON_METRICS).any()).item():
        reasons = value.filter(pl.col("metric").is_in(_CLOCK_REASON_METRICS)).cast(pl.Int64, strict=False).fill_null(0)
        told.append((reasons & _HW_CLOCK_REASON_BITS).max() > 0)
    return pl.any_horizontal(told) if told else pl.lit(False)


def _gpu_samples(rows: pl.DataFrame, gpu_key: list[str]) -> pl.DataFrame:
    metric, value = pl.col("metric"), pl.col("number")

    def reading(name: str) -> pl.Expr:
        return value.filter(metric == name).first()

    named = {attr: (value.filter(metric == name).first() * factor) for name, (attr, factor) in _NAMED_ATTRS.items()}
    json_value = pl.when(pl.col("number").is_not_null() & pl.col("value").str.contains(_JSON_NUMBER)).then(pl.col("value"))
    # a clock-event count is named by its event (one series each), the other metrics by their name
    counted = "clock_event" in _series(rows)
    key = pl.coalesce(pl.format("clock_events_{}", pl.col("clock_event")), metric) if counted else metric
    unnamed = pl.format('"{}":{}', key, json_value.fill_null("null")).filter(~metric.is_in([*_COLUMN_METRICS, *_NAMED_ATTRS]))
    slowdown = _hw_slowdown(rows, counted)
    label_columns = ["pci_bus_id", "modelName", "DCGM_FI_DRIVER_VERSION", "GPU_I_PROFILE"]
    grouped = rows.group_by([*gpu_key, "ts", "ts_quality", "scrape"], maintain_order=True).agg(
        pl.col("line").min(),
        pl.col("n_lines").sum().cast(pl.Int32),
        *(pl.col(name).drop_nulls().first() for name in label_columns),
        used=reading(_USED),
        free=reading(_FREE),
        util=reading(_UTIL),
        unnamed=unnamed.str.join(","),
        slowdown=slowdown,
        **named,
    )
    used_bytes = (pl.col("used") * MIB).round().cast(pl.Int64, strict=False)
    # DCGM 3.x+ exports FB_RESERVED (driver 5xx holds it back): the GPU's total, as nvidia-smi -q's "Total", counts it.
    total_bytes = ((pl.col("used") + pl.col("free")) * MIB + pl.col("fb_reserved_bytes").fill_null(0)).round().cast(pl.Int64, strict=False)
    attrs = attrs_json({
        "model_name": pl.col("modelName"),
        "driver_version": pl.col("DCGM_FI_DRIVER_VERSION"),
        "mig_device": pl.col("GPU_I_ID").cast(pl.Int64, strict=False),
        "mig_profile": pl.col("GPU_I_PROFILE"),
        "scrape": pl.when(pl.col("scrape") > 0).then(pl.col("scrape")),
        **{attr: _integral(pl.col(attr), attr) for attr, _ in _NAMED_ATTRS.values()},
    })
    return grouped.select(
        "line", "n_lines", "ts", "ts_quality",
        kind=pl.lit("gpu_sample"),
        # as nvidia-smi's samples: a reading, not a problem, unless the hardware held the clocks down in the exporter's window
        severity=pl.when(pl.col("slowdown")).then(pl.lit("warning")).otherwise(pl.lit("info")),
        format=pl.lit("exposition"),
        mem_used_bytes=pl.when(used_bytes >= 0).then(used_bytes),
        mem_total_bytes=pl.when(total_bytes >= 0).then(total_bytes).otherwise(pl.col("fb_total_bytes").round().cast(pl.Int64, strict=False)),
        gpu_util_pct=pl.col("util"),
        # the extra '"key":value' members of the metrics without a name of their own
        attrs=joined_json(attrs, pl.when(pl.col("unnamed").fill_null("") != "").then(pl.format("{{{}}}", "unnamed"))),
        message=pl.concat_str(
            [
                pl.format("DCGM gpu {} {}", pl.col("gpu").fill_null("?"), pl.col("UUID").fill_null("")),
                pl.format("fb_used {} MiB", pl.col("used").round().cast(pl.Int64, strict=False)),
                pl.format("fb_free {} MiB", pl.col("free").round().cast(pl.Int64, strict=False)),
                pl.format("util {}%", pl.col("util")),
            ],
            separator=", ",
            ignore_nulls=True,
        ),
        **_identity(),
    )


def _integral(value: pl.Expr, attr: str) -> pl.Expr:
    """Counts and byte sizes as integers in attrs; readings with a fraction (power) as they are."""
    return value.round().cast(pl.Int64, strict=False) if attr.endswith(("_bytes", "_mhz", "_c", "_xid")) else value


def _xid_events(rows: pl.DataFrame) -> pl.DataFrame:
    code = pl.coalesce(pl.col("xid").cast(pl.Int32, strict=False), pl.col("number").cast(pl.Int32, strict=False))
    return rows.select(
        "line", "n_lines", "ts", "ts_quality", "message",
        kind=pl.lit("xid"),
        format=pl.lit("exposition"),
        xid=code,
        severity=_xid.catalog_severity(code),
        # The driver that reported it: an Xid's meaning and fix can change between driver branches.
        attrs=attrs_json({**_xid.catalog_attrs(code), "model_name": pl.col("modelName"), "driver_version": pl.col("DCGM_FI_DRIVER_VERSION")}),
        **_identity(),
    )


SOURCE = register(
    Source(
        name="dcgm",
        sniff=sniff,
        sniff_heads=sniff_heads,
        parse=parse,
        sniff_literals=(
            "DCGM_", _V1_PREFIX,
            "Diagnostic", "Device Information", "-----  ", "Health Monitor Report", "Entity", "Overall Health", "\"Errors\"",
            "| Pass", "| Fail", "| Warn", "| Skip",  # result rows of a diag excerpt (DCGM 4's "| GPU0: Pass" too)
            ": Pass", ": Fail", ": Warn", "NvLink Link Status",
            "MIG configuration", "dcgmi", "nvvs",  # plain dcgmi / NVVS lines (the banner holds "Diagnostic")
            ".cpp:", "] [[",  # nv-hostengine's log: the C++ source it names, the module tag
        ),
        formats=(
            "exposition", "prometheus_json", "diag", "diag_json", "discovery", "health", "health_json", "stats", "dmon", "nvlink_status",
            "dcgmi_text", "hostengine_log", "nvvs_log",
        ),
        host_in_content=True,
        sniff_bytes=sniff_bytes,
        parse_bytes=parse_bytes,
        carried_lines=carried_lines,
        segmented=True,
    )
)
