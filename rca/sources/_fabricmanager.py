"""NVIDIA Fabric Manager's lines: the daemon that trains and watches the NVSwitch / NVLink fabric of an HGX node.

When the fabric fails, the GPUs' own telemetry stays healthy and the job sees only NCCL hangs or
``CUDA_ERROR_SYSTEM_NOT_READY``: the journal of ``nv-fabricmanager`` (and of the
``nvidia-fabricmanager-start.sh`` that starts it on NVLink-5 systems) says why. Its messages carry
its own header, ``[Jul 23 2024 07:53:55] [ERROR] [tid 841] …``, whose level is kept as the severity:

* ``detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33``
  → an SXid (NVSwitch error: its code in attrs ``sxid``, kept out of the GPU ``xid`` column), ``critical``
  when fatal, ``warning`` when ``non-fatal``; the switch's bus in ``pci_bus`` (the kernel's
  ``nvidia-nvswitch: SXid (PCI:…)`` line names the same), its physical id and port in attrs;
* the fabric manager giving up (``… aborting fabric manager``, ``[NV_WARN_NOTHING_TO_DO]`` from the
  NVSwitch driver, the start script's ``"…nv-fabricmanager …" failed! Exit code: 1``) → an error with
  the exit code when given.

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
    r"|(?<failed>failed! Exit code: (?<exit_code>[0-9]+)))"
)
_SEVERITY = {"DEBUG": "debug", "INFO": "info", "WARNING": "warning", "WARN": "warning", "ERROR": "error", "FATAL": "critical"}
_FATALITY = {"fatal": "critical", "non-fatal": "warning"}


def fabricmanager_rules(framed: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Event rows for the fabric manager's lines: NVSwitch errors by fatality, the daemon giving up."""
    # Matched once: an expression is evaluated wherever it is used.
    framed = framed.with_columns(fabric=pl.col("message").str.extract_groups(_LINE))
    line = pl.col("fabric").struct
    level = pl.col("message").str.extract(_HEADER, 1).replace_strict(_SEVERITY, default=None)
    gave_up = line.field("aborted").is_not_null() | line.field("failed").is_not_null()
    return _syslog.program_events(
        framed,
        severity=pl.coalesce(
            line.field("fatality").replace_strict(_FATALITY, default=None), pl.when(gave_up).then(pl.lit("error")), level, pl.col("severity")
        ),
        pci_bus=line.field("bus"),
        exit_code=line.field("exit_code").cast(pl.Int32, strict=False),
        attrs=attrs_json({
            "sxid": line.field("sxid").cast(pl.Int32, strict=False),
            "nvswitch_physical_id": line.field("physical_id").cast(pl.Int32, strict=False),
            "nvswitch_port": line.field("port").cast(pl.Int32, strict=False),
            "fabric_manager": pl.when(gave_up).then(pl.lit("failed")),
        }),
    )


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
