"""NVIDIA Fabric Manager's lines: the daemon that trains and watches the NVSwitch / NVLink fabric of an HGX node.

When the fabric fails, the GPUs' own telemetry stays healthy and the job sees only NCCL hangs or
``CUDA_ERROR_SYSTEM_NOT_READY``: the journal of ``nv-fabricmanager`` (and of the
``nvidia-fabricmanager-start.sh`` that starts it on NVLink-5 systems) says why. Its messages carry
its own header, ``[Jul 23 2024 07:53:55] [ERROR] [tid 841] …``, whose level is kept as the severity:

* ``detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33``
  → an SXid (NVSwitch error: its code in attrs ``sxid``, kept out of the GPU ``xid`` column), ``critical``
  when fatal, ``warning`` when ``non-fatal``; the switch's bus in ``pci_bus`` (the kernel's
  ``nvidia-nvswitch: SXid (PCI:…)`` line names the same), its physical id and port in attrs;
* ``Trunk port failure detected for switch GUID 0x… … port number 61 …`` and ``… received port down event on switch
  with GUID 0x…, port GUID 0x…, and port num 1`` (GB200 NVL) → the switch's GUID and port in attrs (``nvswitch_guid``,
  ``nvswitch_port``, ``fabric_event`` ``trunk_port_failure`` / ``port_down``), the line's own level kept;
* ``Fabric Manager detected GPU NVL Fatal error on :`` (GB200 NVL racks; also ``Non Fatal`` and ``stale …``), the
  header of a record with one ``key : value`` line per field under it (``moduleId : 3``, ``gpuGuid : 0x…``,
  ``portNum : 4``, ``errorCode : 0x06``, …) → ``critical`` when fatal, ``warning`` otherwise; the GPU's module id,
  fabric GUID, NVLink port and error codes in attrs (the record's field lines are its event's, as framed);
* the fabric manager giving up (``… aborting fabric manager``, ``[NV_WARN_NOTHING_TO_DO]`` from the
  NVSwitch driver, the start script's ``"…nv-fabricmanager …" failed! Exit code: 1``, a package of another
  version than the loaded driver's: ``fabric manager NVIDIA GPU driver interface version 595.71.05 don't match
  with driver version 590.48.01``) → an error with the exit code when given, both versions of a mismatch in attrs
  (``fabric_manager_version``, ``driver_version``).

All stay ``kind=log`` events (the vocabulary has no kind for the fabric). Registered with
:mod:`rca.sources._syslog` as the rules of programs ``nv-fabricmanager`` and ``nvidia-fabricmanager-start.sh``.

NVIDIA's persistence daemon (``nvidia-persistenced``), which keeps the driver loaded for the GPUs, writes no
level of its own: a GPU it could not keep initialised leaves CUDA jobs failing on a healthy-looking node.
``nvidia-persistenced failed to initialize. Check syslog for more details.``, ``NUMA: Failed to open …:
Permission denied``, ``Failed to create directory …`` and ``Unable to access …`` are errors; ``device
0000:3d:00.0 - registered`` names a GPU's bus (``pci_bus``).
"""

from __future__ import annotations

import polars as pl

from rca.sources import _syslog
from rca.sources._base import ParseContext, attrs_json

_HEADER = r"^\[[A-Z][a-z]{2} [0-9]{1,2} [0-9]{4} [0-9:]{8}\] \[(?<level>[A-Z]+)\]"
_LINE = (
    r"(?:detected NVSwitch (?<fatality>non-fatal|fatal) error (?<sxid>[0-9]+) on fid (?<fid>[0-9]+) on NVSwitch pci bus id (?<bus>\S+)"
    r" physical id (?<physical_id>[0-9]+) port (?<port>[0-9]+)"
    r"|(?<aborted>aborting fabric manager|\[NV_WARN_NOTHING_TO_DO\])"
    r"|(?<failed>failed! Exit code: (?<exit_code>[0-9]+))"
    # A fabric manager package not of the loaded driver's version refuses to start (the GPUs stay unregistered).
    r"|(?<mismatch>driver interface version (?<fm_version>[0-9][0-9.]*) (?:don't|doesn't) match with driver version"
    r" (?<driver_version>[0-9][0-9.]*[0-9]))"
    # GB200 NVL racks: an NVLink trunk (switch tray to switch tray) port lost, a switch port going down.
    r"|(?<trunk>Trunk port failure) detected for switch GUID (?<trunk_switch>0x[0-9A-Fa-f]+)\b.*?\bport number (?<trunk_port>[0-9]+)"
    r"|received (?<down>port down) event on switch with GUID (?<down_switch>0x[0-9A-Fa-f]+), port GUID 0x[0-9A-Fa-f]+,"
    r" and port num (?<down_port>[0-9]+))"
)
# The header of a GPU NVLink error record; its fields follow one a line (the name of each as the record spells it).
_NVL_ERROR = r"detected (?<stale>stale )?GPU NVL (?<nvl>Non Fatal|Fatal) error on :"
_NVL_NUMBERS = {"moduleId": "gpu_module_id", "nodeId": "node_id", "partitionId": "partition_id", "portNum": "nvlink_port"}
_NVL_CODES = {
    "gpuGuid": "gpu_fabric_guid", "errorCode": "nvl_error_code", "errorSubcode": "nvl_error_subcode",
    "portDownReasonCode": "port_down_reason_code",
}
_SEVERITY = {"DEBUG": "debug", "INFO": "info", "WARNING": "warning", "WARN": "warning", "ERROR": "error", "FATAL": "critical"}
_FATALITY = {"fatal": "critical", "non-fatal": "warning", "Fatal": "critical", "Non Fatal": "warning"}


def fabricmanager_rules(framed: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Event rows for the fabric manager's lines: NVSwitch errors by fatality, the daemon giving up."""
    # Matched once: an expression is evaluated wherever it is used.
    framed = framed.with_columns(fabric=pl.col("message").str.extract_groups(_LINE))
    line = pl.col("fabric").struct
    level = pl.col("message").str.extract(_HEADER, 1).replace_strict(_SEVERITY, default=None)
    gave_up = line.field("aborted").is_not_null() | line.field("failed").is_not_null() | line.field("mismatch").is_not_null()
    framed, nvl, nvl_attrs = _nvl_errors(framed)
    return _syslog.program_events(
        framed,
        severity=pl.coalesce(
            pl.coalesce(line.field("fatality"), nvl).replace_strict(_FATALITY, default=None),
            pl.when(gave_up).then(pl.lit("error")), level, pl.col("severity"),
        ),
        pci_bus=line.field("bus"),
        exit_code=line.field("exit_code").cast(pl.Int32, strict=False),
        attrs=attrs_json({
            "sxid": line.field("sxid").cast(pl.Int32, strict=False),
            "nvswitch_physical_id": line.field("physical_id").cast(pl.Int32, strict=False),
            "nvswitch_guid": pl.coalesce(line.field("trunk_switch"), line.field("down_switch")),
            "nvswitch_port": pl.coalesce(line.field("port"), line.field("trunk_port"), line.field("down_port")).cast(pl.Int32, strict=False),
            "fabric_event": pl.coalesce(line.field("trunk"), line.field("down")).str.to_lowercase().str.replace_all(" ", "_", literal=True),
            "fabric_manager": pl.when(gave_up).then(pl.lit("failed")),
            "fabric_manager_version": line.field("fm_version"), "driver_version": line.field("driver_version"),
            **nvl_attrs,
        }),
    )


def _nvl_errors(framed: pl.DataFrame) -> tuple[pl.DataFrame, pl.Expr, dict[str, pl.Expr]]:
    """``framed`` with the fields of each GPU NVL error record on its header line, its fatality, and its attrs.

    A record is its header and the lines under it that carry its time (``ts_quality`` inherited).
    """
    nvl = pl.col("nvl_error").struct
    if not framed.select(pl.col("message").str.contains("GPU NVL", literal=True).any()).item():
        return framed, pl.lit(None, pl.String), {}
    record = (pl.col("ts_quality") != "inherited").cum_sum()
    message = pl.col("message")
    fields = {
        name: message.str.extract(rf"^{key} : ({'[0-9]+' if name in _NVL_NUMBERS.values() else '0x[0-9A-Fa-f]+'})", 1)
        .drop_nulls().first().over(record)
        for key, name in {**_NVL_NUMBERS, **_NVL_CODES}.items()
    }
    framed = framed.with_columns(nvl_error=message.str.extract_groups(_NVL_ERROR), **fields)
    header = nvl.field("nvl").is_not_null()
    attrs = {
        "nvl_error": pl.when(header).then(nvl.field("nvl").str.to_lowercase().str.replace(" ", "-", literal=True)),
        "stale": pl.when(header & nvl.field("stale").is_not_null()).then(pl.lit(True)),
        **{name: pl.when(header).then(pl.col(name).cast(pl.Int64, strict=False)) for name in _NVL_NUMBERS.values()},
        **{name: pl.when(header).then(pl.col(name)) for name in _NVL_CODES.values()},
    }
    return framed, nvl.field("nvl"), attrs


# The persistence daemon's words for what it could not do (it writes them without a level).
_PERSISTENCED_FAILURES = ["failed to initialize", "Failed to ", "Unable to ", "Permission denied"]
_PERSISTENCED_DEVICE = r"^device ([0-9A-Fa-f]+:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]) - "


def persistenced_rules(framed: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Event rows for nvidia-persistenced's lines: its failures are errors, a GPU it registers names its bus."""
    message = pl.col("message")
    return _syslog.program_events(
        framed,
        severity=pl.when(message.str.contains_any(_PERSISTENCED_FAILURES)).then(pl.lit("error")).otherwise(pl.col("severity")),
        pci_bus=pl.when(message.str.starts_with("device ")).then(message).str.extract(_PERSISTENCED_DEVICE, 1).str.to_lowercase(),
    )


# Not a source of its own: its lines are the file's, as other programs' lines are.
_syslog.register_program("nvidia-persistenced", None, persistenced_rules)
for _program in ("nv-fabricmanager", "nvidia-fabricmanager-start.sh"):
    _syslog.register_program(_program, None, fabricmanager_rules)
