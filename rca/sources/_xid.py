"""NVIDIA driver (NVRM) messages in the kernel log: the Xid catalog and the line rules (and NVSwitch SXids).

The catalog follows NVIDIA's public "Analyzing Xid Errors with the Xid Catalog"
(https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html, Ampere and newer):
per code the mnemonic, the description, the immediate and the investigatory resolution
buckets exactly as NVIDIA names them. Codes the catalog marks unused are left out, except
61, which older GPUs still log. The severity column is rca's own reading of the immediate
action: a GPU reset or node reboot is critical, an application restart an error, a code
NVIDIA says to ignore or that only follows another Xid a warning.
"""

from __future__ import annotations

import polars as pl

from rca.sources._base import file_column, forward_fill_within, starts_file

# (code, mnemonic, description, immediate action, investigatory action, severity)
_CATALOG: tuple[tuple[int, str, str, str | None, str | None, str], ...] = (
    (8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", "GPU stopped processing", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (11, "ROBUST_CHANNEL_GR_ERROR_MISSING_HW", "Invalid or corrupted push buffer stream", "RESTART_APP", "CHECK_APP/CUDA", "error"),
    (13, "ROBUST_CHANNEL_GR_EXCEPTION", "Graphics Engine Exception", "RESTART_APP", "WORKFLOW_XID_13", "error"),
    (14, "ROBUST_CHANNEL_FAKE_ERROR", "Fake or injected error from userspace", "IGNORE", "CONTACT_SUPPORT", "notice"),
    (25, "ROBUST_CHANNEL_GR_ILLEGAL_NOTIFY", "Invalid or illegal push buffer stream", "RESTART_APP", "CHECK_APP/CUDA", "error"),
    (31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault", "RESTART_APP", "WORKFLOW_XID_31", "error"),
    (32, "ROBUST_CHANNEL_PBDMA_ERROR", "Invalid or corrupted push buffer stream", "RESTART_APP", "CHECK_APP/CUDA", "error"),
    (37, "ROBUST_CHANNEL_FECS_ERR_UNIMP_FIRMWARE_METHOD", "Driver firmware error", "IGNORE", "CHECK_APP/CUDA", "warning"),
    (38, "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT", "Driver firmware error", "IGNORE", "CONTACT_SUPPORT", "warning"),
    (39, "ROBUST_CHANNEL_CE0_ERROR", "Copy Engine Exception", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (40, "ROBUST_CHANNEL_CE1_ERROR", "Copy Engine Exception", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (41, "ROBUST_CHANNEL_CE2_ERROR", "Copy Engine Exception", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "GPU stopped processing", "IGNORE", "CONTACT_SUPPORT", "warning"),
    (44, "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW", "Graphics Engine fault during context switch", "IGNORE", "CONTACT_SUPPORT", "warning"),
    (45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "Preemptive cleanup, due to previous errors", "WORKFLOW_XID_45",
     "Solo: RESTART_FM; not solo: IGNORE (follow other Xid)", "warning"),
    (46, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", "GPU stopped processing", "RESET_GPU", "CONTACT_SUPPORT", "critical"),
    (48, "ROBUST_CHANNEL_GPU_ECC_DBE", "Double Bit ECC Error", "WORKFLOW_XID_48", "WORKFLOW_XID_48", "critical"),
    (54, "SILENT_RUNNING_PWR_REDUCED_CLOCKING", "Auxiliary power is not connected to the GPU board", "CHECK_MECHANICALS",
     "CONTACT_SUPPORT", "error"),
    (60, "ROBUST_CHANNEL_SEC2_ERROR", "Video processor exception", "RESTART_APP", "INVESTIGATE_SW", "error"),
    (61, "PMU_BREAKPOINT", "Internal micro-controller breakpoint/warning (unused on Ampere and newer)", "CONTACT_SUPPORT", None, "warning"),
    (62, "PMU_HALT_ERROR", "Internal micro-controller halt", "RESET_GPU", "CONTACT_SUPPORT", "critical"),
    (63, "INFOROM_DRAM_RETIREMENT_EVENT", "GPU memory remapping event", "IGNORE", "IGNORE", "notice"),
    (64, "INFOROM_DRAM_RETIREMENT_FAILURE", "GPU memory remapping failure", "RESET_GPU", "CONTACT_SUPPORT", "critical"),
    (66, "ROBUST_CHANNEL_FECS_ERR_REG_ACCESS_VIOLATION", "Illegal access by driver", "IGNORE", "INVESTIGATE_SW", "warning"),
    (67, "ROBUST_CHANNEL_FECS_ERR_VERIF_VIOLATION", "Illegal access by driver", "IGNORE", "CONTACT_SUPPORT", "warning"),
    (68, "ROBUST_CHANNEL_NVDEC0_ERROR", "NVDEC0 Exception", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (69, "ROBUST_CHANNEL_GR_CLASS_ERROR", "Graphics Engine class error", "RESTART_APP", "CHECK_APP/CUDA", "error"),
    (70, "ROBUST_CHANNEL_CE3_ERROR", "CE3: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (71, "ROBUST_CHANNEL_CE4_ERROR", "CE4: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (72, "ROBUST_CHANNEL_CE5_ERROR", "CE5: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (74, "NVLINK_ERROR", "NVLINK Error", "WORKFLOW_NVLINK_ERR", "CONTACT_SUPPORT", "critical"),
    (75, "ROBUST_CHANNEL_CE6_ERROR", "CE6: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (76, "ROBUST_CHANNEL_CE7_ERROR", "CE7: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (77, "ROBUST_CHANNEL_CE8_ERROR", "CE8: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (78, "VGPU_START_ERROR", "vGPU Start Error", "UPDATE_SWFW", "UPDATE_SWFW", "error"),
    (79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "GPU has fallen off the bus", "RESTART_BM", "CONTACT_SUPPORT", "critical"),
    (80, "PBDMA_PUSHBUFFER_CRC_MISMATCH", "Corrupted data sent to GPU", "RESTART_APP", "CHECK_APP/CUDA", "error"),
    (82, "ROBUST_CHANNEL_NVJPG0_ERROR", "NVJPG0 Error", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (83, "ROBUST_CHANNEL_NVDEC1_ERROR", "NVDEC1 Error", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (84, "ROBUST_CHANNEL_NVDEC2_ERROR", "NVDEC2 Error", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (85, "ROBUST_CHANNEL_CE9_ERROR", "CE9: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (86, "ROBUST_CHANNEL_OFA0_ERROR", "OFA Exception", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (88, "ROBUST_CHANNEL_NVDEC3_ERROR", "NVDEC3 Error", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (89, "ROBUST_CHANNEL_NVDEC4_ERROR", "NVDEC4 Error", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (92, "EXCESSIVE_SBE_INTERRUPTS", "High single-bit ECC error rate", "IGNORE", "CONTACT_SUPPORT", "warning"),
    (93, "INFOROM_ERASE_LIMIT_EXCEEDED", "Non-fatal violation of provisioned InfoROM wear limit", "IGNORE", "CONTACT_SUPPORT", "warning"),
    (94, "ROBUST_CHANNEL_CONTAINED_ERROR", "Contained memory error", "RESTART_APP", "IGNORE (sympathetic)", "error"),
    (95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "Uncontained memory error", "RESET_GPU", "IGNORE (sympathetic)", "critical"),
    *((code, f"ROBUST_CHANNEL_NVDEC{code - 91}_ERROR", f"NVDEC{code - 91} Error", "RESTART_APP", "CONTACT_SUPPORT", "error")
      for code in range(96, 99)),
    *((code, f"ROBUST_CHANNEL_NVJPG{code - 98}_ERROR", f"NVJPG{code - 98} Error", "RESTART_APP", "CONTACT_SUPPORT", "error")
      for code in range(99, 106)),
    (106, "SMBPBI_TEST_MESSAGE", "SMBPBI Test Message", "IGNORE", "IGNORE", "info"),
    (107, "SMBPBI_TEST_MESSAGE_SILENT", "SMBPBI Test Message Silent", "IGNORE", "IGNORE", "info"),
    (109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "Context Switch Timeout Error", "RESET_GPU", "CONTACT_SUPPORT", "critical"),
    (110, "SEC_FAULT_ERROR", "Security Fault Error", "RESET_GPU", "INVESTIGATE_SW", "critical"),
    (119, "GSP_RPC_TIMEOUT", "GSP RPC Timeout", "RESET_GPU", "INVESTIGATE_SW", "critical"),
    (120, "GSP_ERROR", "GSP Error", "RESET_GPU", "INVESTIGATE_SW", "critical"),
    (121, "C2C_ERROR", "C2C Error", "IGNORE", "CONTACT_SUPPORT", "warning"),
    *((code, f"ROBUST_CHANNEL_CE{code - 116}_ERROR", f"CE{code - 116}: Unknown Error", "RESTART_APP", "CONTACT_SUPPORT", "error")
      for code in range(126, 136)),
    (136, "ALI_TRAINING_FAIL", "Link Training Failed", "RESET_GPU", "INVESTIGATE_LINK_SI", "critical"),
    (137, "NVLINK_PRIV_ERR", "NVLink Privilege Error", "IGNORE", "XID_137_FLOW", "warning"),
    (139, "ROBUST_CHANNEL_OFA1_ERROR", "OFA1 Error", "RESTART_APP", "CONTACT_SUPPORT", "error"),
    (140, "UNRECOVERABLE_ECC_ERROR_ESCAPE", "ECC Unrecovered Error", "RESET_GPU", "CONTACT_SUPPORT", "critical"),
    (141, "ROBUST_CHANNEL_FAST_PATH_ERROR", "CUDA Fast Path Error", "IGNORE", "CONTACT_SUPPORT", "warning"),
    (142, "ROBUST_CHANNEL_NVENC3_ERROR", "NVENC3 Error", "CONTACT_SUPPORT", None, "error"),
    (143, "GPU_INIT_ERROR", "GPU Initialization Error", "RESET_GPU", "CONTACT_SUPPORT", "critical"),
    (144, "NVLINK_SAW_ERROR", "NVLINK: SAW Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", "error"),
    (145, "NVLINK_RLW_ERROR", "NVLINK: RLW Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", "error"),
    (146, "NVLINK_TLW_ERROR", "NVLINK: TLW Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", "error"),
    (147, "NVLINK_TREX_ERROR", "NVLINK: TREX Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", "error"),
    (148, "NVLINK_NVLPW_CTRL_ERROR", "NVLINK: NVLPW_CTRL Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", "error"),
    (149, "NVLINK_NETIR_ERROR", "NVLINK: NETIR Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", "error"),
    (150, "NVLINK_MSE_ERROR", "NVLINK: MSE Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", "error"),
    (151, "ROBUST_CHANNEL_KEY_ROTATION_ERROR", "Key rotation Error", "RESTART_VM", "CONTACT_SUPPORT", "critical"),
    (152, "ROBUST_CHANNEL_DLA_SMMU_ERROR", "DLA SMMU Error", "IGNORE", "CONTACT_SUPPORT", "warning"),
    (153, "ROBUST_CHANNEL_DLA_TIMEOUT", "DLA timeout Error", "IGNORE", "CONTACT_SUPPORT", "warning"),
    (154, "GPU_RECOVERY_ACTION_CHANGED", "GPU Recovery Action Changed", "XID_154", None, "notice"),
    (155, "NVLINK_SW_DEFINED_ERROR", "NVLINK: SW Defined Error", "RESET_GPU", "INVESTIGATE_SW_USER", "error"),
    (156, "RESOURCE_RETIREMENT_EVENT", "Resource Retirement Event", "RESET_GPU", "IGNORE", "error"),
    (157, "RESOURCE_RETIREMENT_FAILURE", "Resource Retirement Failure", "IGNORE", "CONTACT_SUPPORT", "error"),
    (158, "GPU_FATAL_TIMEOUT", "GPU Fatal Timeout", "RESET_GPU", "CONTACT_SUPPORT", "critical"),
    (159, "ROBUST_CHANNEL_CHI_NON_DATA_ERROR", "CHI Non-Data Error", "CHECK_UVM", "SYMPATHETIC_REPORT_SOLO", "error"),
    (160, "CHANNEL_RETIREMENT_EVENT", "Channel Retirement Event", "IGNORE", "INVESTIGATE_SW", "warning"),
    (161, "CHANNEL_RETIREMENT_FAILURE", "Channel Retirement Failure", "IGNORE", "INVESTIGATE_SW", "warning"),
    (162, "PSHC_REENGAGED", "Power Smoothing HW Circuitry capability reengaged", None, None, "info"),
    (163, "PSHC_DISENGAGED", "Power Smoothing HW Circuitry capability disengaged", None, None, "warning"),
    (164, "PSHC_LOW_LIFETIME", "Power Smoothing HW Circuitry low lifetime reached", None, None, "warning"),
    (165, "PSHC_ZERO_LIFETIME", "Power Smoothing HW Circuitry lifetime exhausted", None, None, "error"),
    (166, "NVLINK_SECURE_CRYPTO_ERR", "CC traffic seen prior to link properly being configured for encrypted traffic", None, None, "error"),
    (167, "PCIE_FATAL_TIMEOUT", "PCIE_FATAL_TIMEOUT", None, None, "critical"),
    (168, "REDUCED_GPU_MEMORY_CAPACITY", "Errors found in WPR (write protected region)", None, None, "error"),
    (169, "SEC2_HALT_ERROR", "Internal micro-controller halt", None, None, "critical"),
    (170, "NVLINK_SECURE_OTHER", "Interrupt seen in CC mode", None, None, "error"),
    (171, "UNCORRECTABLE_DRAM_ERROR", "Additional to Xid 48: the uncorrectable error was in DRAM", None, None, "critical"),
    (172, "UNCORRECTABLE_SRAM_ERROR", "Additional to Xid 48: the uncorrectable error was in SRAM", None, None, "critical"),
)

CATALOG = pl.DataFrame(
    _CATALOG,
    schema={"xid": pl.Int32(), "mnemonic": pl.String(), "description": pl.String(), "resolution": pl.String(),
            "investigation": pl.String(), "severity": pl.String()},
    orient="row",
)

# Xid 154 names the recovery the driver now requires for the GPU; its severity follows that.
_RECOVERY_SEVERITY = {"None": "info", "Drain P2P": "warning", "Drain and Reset": "critical",
                      "GPU Reset Required": "critical", "Node Reboot Required": "critical"}
# Drivers word the action differently ("0x1 (PF FLR)" for a GPU reset, 610's "0x2 (OS Reboot)"); the code before the name is
# NVML's nvmlDeviceGpuRecoveryAction_t, stable across them: 0 none, 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain and reset.
_RECOVERY_CODE_SEVERITY = {"0x0": "info", "0x1": "critical", "0x2": "critical", "0x3": "warning", "0x4": "critical"}
UNKNOWN_XID_SEVERITY = "error"
_BY_CODE = {column: dict(zip(CATALOG["xid"].to_list(), CATALOG[column].to_list(), strict=True))
            for column in ("mnemonic", "description", "resolution", "investigation", "severity")}

# domain:bus:device[.function]; drivers before ~2008 wrote bus:device alone, as "0001:00".
_PCI = r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2})?(?:\.[0-7])?"
# Newer drivers print "pid=…, name=…, " before the detail text (a report without one ends at the name); older ones
# go straight to it. On a MIG GPU the parenthesis also names the GPU instance and the compute instance ("GPU-I:05
# GPU-CI:00"); a bus someone redacted ("PCI:...") still leaves the code.
XID_LINE = (
    rf"NVRM: Xid \((?:PCI:)?(?:(?<pci>{_PCI})(?: (?<instance>GPU-I:[0-9]+))?(?: (?<compute>GPU-CI:[0-9]+))?|[^)]*)\): (?<code>[0-9]+)"
    r"(?:, (?:pid=(?<pid>[^,]*)(?:, |,?$))?(?:name=(?<name>[^,]*)(?:, |,?$))?(?<detail>.*))?$"
)
GPU_AT_LINE = rf"NVRM: GPU at (?:PCI:)?(?<pci>{_PCI}): (?<uuid>GPU-[0-9A-Fa-f]{{8}}(?:-[0-9A-Fa-f]{{4}}){{3}}-[0-9A-Fa-f]{{12}})"
# "NVRM: GPU 0000:01:00.0: …", "NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: …)", older drivers'
# "NVRM: GPU at 0000:01:00.0 has fallen off the bus." and a GPU named inside the text ("NVRM: Rate limiting
# GSP RPC error prints for GPU at PCI:0000:61:00 …") or after the reporting function's name, as the H100's FSP boot
# dump names it ("NVRM: kfspDumpDebugState_GH100: GPU 0000:01:00").
# The kernel's own lines about the GPU's PCI function carry the driver's name first ("nvidia 0000:03:00.0: AER: …"), as
# the AMD GPU driver's own do ("amdgpu 0000:42:00.0: {1}[Hardware Error]: …").
_NVRM_GPU = rf"(?:NVRM: (?:The NVIDIA GPU |GPU(?: at)? |.*? GPU at PCI:|[A-Za-z0-9_]+: GPU )(?:PCI:)?|^(?:nvidia|amdgpu) )({_PCI})"
_PCI_ID = r"\(PCI ID: ([0-9A-Fa-f]{4}:[0-9A-Fa-f]{4})\)"
# Before a GPU's first Xid the driver names it: "NVRM: GPU at PCI:0000:00:08: GPU-<uuid>", then on a line of its own
# "NVRM: GPU Board Serial Number: 1652923018111" (the serial an RMA asks for), which names no bus; a board without one
# (a GeForce) prints "0".
_BOARD_SERIAL = r"NVRM: GPU Board Serial Number: ([0-9A-Za-z]+)"
# The driver refuses a client of another version (the user-space driver updated, the module not reloaded) in one record
# of four or five lines, each after the first indented under the stamp: "NVRM: API mismatch: the client has the version
# 570.153.02, but" / "NVRM: this kernel module has the version 570.144.  Please" / …; since the 575 drivers the client
# is named first, "NVRM: API mismatch: the client 'kwin_wayland' (pid 1005)" / "NVRM: has the version 595.84, but this
# kernel module has" / "NVRM: the version 595.80.  Please …". rsyslog writes the record's newlines as "#012".
_API_MISMATCH_CLIENT = r"NVRM: API mismatch: the client '(?<client>[^']*)' \(pid (?<pid>[0-9]+)\)"
_API_GAP = r"(?:\s|#012)+(?:NVRM: )?"
_API_MISMATCH_VERSIONS = (
    rf"NVRM: API mismatch: the client (?:'[^']*' \(pid [0-9]+\){_API_GAP})?has the version (?<client>[0-9]+(?:\.[0-9]+)+),"
    rf" but{_API_GAP}this kernel module has{_API_GAP}the version (?<module>[0-9]+(?:\.[0-9]+)+)"
)
# A GPU the driver could not bring up: "NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:894)" (before ~2017 without the
# bus: "NVRM: RmInitAdapter failed! (0x26:0xffff:1375)"). The code names the failing step and status (0x62 a GSP boot, 0x22:0x56
# a failed mapping, …): what NVIDIA support asks for, and what tells one failure mode from another.
_RM_INIT_ERROR = r"RmInitAdapter failed! \((0x[0-9a-fA-F]+:0x[0-9a-fA-F]+:[0-9]+)\)"
# The driver's failed internal checks name the status code and the source line: "NVRM: nvAssertOkFailedNoLog: Assertion
# failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) returned from status @ kernel_gsp.c:4615" ("nvCheckOkFailedNoLog:
# Check failed: …", "NVRM: GPU0 nvAssertOkFailedNoLog: …"); the code tells a GSP timeout from an allocation failure.
_RM_STATUS = r"NVRM: (?:GPU[0-9]+ )?nv(?:Assert|Check)OkFailed(?:NoLog)?: .*?\[(?<status>NV_ERR_[A-Z0-9_]+)\].*? @ (?<at>\S+:[0-9]+)$"
_DRIVER_LOAD = r"NVRM: loading NVIDIA UNIX .*?Kernel Module.*?\s([0-9]+\.[0-9]+(?:\.[0-9]+)?)\s"
_RECOVERY_ACTION = r"GPU recovery action changed from \S+ \([^)]*\) to (\S+) \(([^)]*)\)"
# A GPU's state dump names the GPU on its first line only: after the "GPU at PCI:…: GPU-<uuid>" line before a GPU's first
# Xid, after an Xid report (119, 120 and 79 are followed by the GSP's RPC history, "NVRM: GPU0 GSP RPC buffer contains …")
# or after a header naming the GPU after its function's name ("NVRM: kfspDumpDebugState_GH100: GPU 0000:01:00").
_DUMP_HEADER = rf"^NVRM: [A-Za-z0-9_]+: GPU (?:PCI:)?{_PCI}$"
# A dump's lines come in one burst: a line more than a second after the one before is another report.
_DUMP_GAP_S = 1.0
# NVSwitch errors (nvidia-nvswitch, fabric manager's "SXid" catalog): one report is a line naming the error and
# whether it is fatal, then "<code>, Severity N Engine instance …" and "<code>, Data {…}" lines (``more``: joined to
# the line above when that is the same switch's same SXid; the switches of a node interleave their reports). SXid
# codes are not Xid codes: they stay out of the xid column.
SXID_LINE = rf"(?:^|: )SXid \((?:PCI:)?(?<pci>{_PCI})\): (?<code>[0-9]+), (?<more>Severity [0-9]|Data \{{)?"
# NVLink-5 Xids (144-150) and SXids say themselves whether the error is fatal: a fatal Xid is critical whatever
# its code's usual severity (a non-fatal one keeps the catalog's); an SXid has no other severity.
_FATALITY = r"\b([Nn]on-?[Ff]atal|[Ff]atal)\b"
_FATALITY_SEVERITY = {"fatal": "critical", "nonfatal": "warning"}


def line_columns() -> list[pl.Expr]:
    """Per-line NVRM facts, from the ``message`` column, as ``xid_*`` / ``gpu_at_*`` / ``nvrm_*`` columns."""
    xid = pl.col("message").str.extract_groups(XID_LINE)
    gpu_at = pl.col("message").str.extract_groups(GPU_AT_LINE)
    sxid = pl.col("message").str.extract_groups(SXID_LINE)
    rm_status = pl.col("message").str.extract_groups(_RM_STATUS)
    name = xid.struct.field("name").str.strip_chars(" '")
    return [
        xid.struct.field("code").cast(pl.Int32, strict=False).alias("xid"),
        xid.struct.field("pci").alias("xid_pci"),
        xid.struct.field("instance").alias("xid_instance"),
        xid.struct.field("compute").alias("xid_compute_instance"),
        xid.struct.field("pid").str.strip_chars(" '").cast(pl.Int64, strict=False).alias("xid_pid"),
        pl.when(name != "<unknown>").then(name).alias("xid_process"),
        xid.struct.field("detail").str.extract(r"caused by previous Xid ([0-9]+)", 1).cast(pl.Int32, strict=False).alias("xid_previous"),
        gpu_at.struct.field("pci").alias("gpu_at_pci"),
        gpu_at.struct.field("uuid").alias("gpu_at_uuid"),
        pl.col("message").str.extract(_NVRM_GPU, 1).alias("nvrm_pci"),
        sxid.struct.field("code").cast(pl.Int32, strict=False).alias("sxid"),
        sxid.struct.field("pci").alias("sxid_pci"),
        sxid.struct.field("more").is_not_null().alias("sxid_more"),
        pl.col("message").str.extract(_DRIVER_LOAD, 1).alias("nvidia_driver"),
        pl.col("message").str.extract(_RM_INIT_ERROR, 1).alias("nvrm_init_error"),
        rm_status.struct.field("status").alias("nvrm_status"),
        rm_status.struct.field("at").alias("nvrm_failed_at"),
    ]


def continues_sxid() -> pl.Expr:
    """Whether a line of :func:`line_columns` continues the SXid report on the line before it."""
    same = (pl.col("sxid_pci") == pl.col("sxid_pci").shift(1)) & (pl.col("sxid") == pl.col("sxid").shift(1))
    return (pl.col("sxid_more") & same).fill_null(False)


def catalog_lookup(code: pl.Expr, column: str) -> pl.Expr:
    """The catalog's ``column`` (mnemonic, description, resolution, investigation, severity) for Xid ``code``."""
    return code.replace_strict(_BY_CODE[column], default=None, return_dtype=pl.String)


def catalog_attrs(code: pl.Expr) -> dict[str, pl.Expr]:
    """The attrs the kernel source gives an Xid event, from the catalog alone (for sources that see only the code)."""
    return {
        "xid_name": catalog_lookup(code, "mnemonic"),
        "xid_description": catalog_lookup(code, "description"),
        "xid_resolution": catalog_lookup(code, "resolution"),
        "xid_investigation": catalog_lookup(code, "investigation"),
    }


def catalog_severity(code: pl.Expr) -> pl.Expr:
    """The catalog's severity for Xid ``code``; an unknown code is an error."""
    return pl.coalesce(catalog_lookup(code, "severity"), pl.lit(UNKNOWN_XID_SEVERITY))


def _fatality(message: pl.Expr) -> pl.Expr:
    """"critical" / "warning" where the message says the error is fatal / non-fatal."""
    return (
        message.str.extract(_FATALITY, 1).str.to_lowercase().str.replace("-", "", literal=True)
        .replace_strict(_FATALITY_SEVERITY, default=None)
    )


def recovery_action(message: pl.Expr) -> pl.Expr:
    """The recovery an Xid 154 report says the GPU now needs ("GPU Reset Required", …)."""
    return message.str.extract(_RECOVERY_ACTION, 2)


def _recovery_severity(message: pl.Expr) -> pl.Expr:
    """The severity of the recovery an Xid 154 report names: by its name where known, else by its NVML code."""
    return pl.coalesce(recovery_action(message).replace_strict(_RECOVERY_SEVERITY, default=None),
                       message.str.extract(_RECOVERY_ACTION, 1).str.to_lowercase().replace_strict(_RECOVERY_CODE_SEVERITY, default=None))


def report_severity(code: pl.Expr, message: pl.Expr) -> pl.Expr:
    """An Xid report's severity: the recovery Xid 154 names, critical for a fatal error, else the catalog's."""
    return pl.when(code.is_not_null()).then(
        pl.coalesce(_recovery_severity(message),
                    pl.when(_fatality(message) == "critical").then(pl.lit("critical")), catalog_severity(code))
    )


def record_columns(records: pl.DataFrame, position: pl.Expr) -> pl.DataFrame:
    """Record-level NVRM facts: catalog fields, the bus of fallen-off-the-bus reports, of a board serial (the "GPU at"
    line's before it) and of a crash-dump notice (the GPU line's or Xid's before it), each bus's GPU UUID, the client and
    the versions of an API mismatch (the module's as ``nvidia_driver``, as a load line names it).

    "fallen off the bus" is reported either in one multi-line record ("The NVIDIA GPU <bus>
    (PCI ID: …) installed in this system has / fallen off the bus") or, in kern.log, as
    separate lines; the bus then comes from one of the two lines before (so for "… installed / in
    this system is not supported by the 280.13 NVIDIA Linux …"). ``position`` numbers
    the records in the batch, so records the caller left out of ``records`` still count.
    """
    code = pl.col("xid")

    def lookup(column: str) -> pl.Expr:
        return catalog_lookup(code, column)

    fallen = pl.col("message").str.contains("fallen off the bus") & code.is_null()
    # RmLogGpuCrash's notice names no GPU: it is the one the driver's lines just before it name (the Xid's bus, its
    # "GPU <bus>: GPU has fallen off the bus." and serial number lines)
    crash_dump = pl.col("message").str.starts_with("NVRM: A GPU crash dump has been created.")
    # the same report's other ending: the driver does not support the GPU (an older driver's separate lines too)
    unsupported = pl.col("message").str.contains("in this system is not supported by", literal=True)
    board = pl.col("message").str.extract(_BOARD_SERIAL, 1)
    mismatch = pl.when(pl.col("message").str.contains("NVRM: API mismatch: ", literal=True)).then(pl.col("message"))
    client = mismatch.str.extract_groups(_API_MISMATCH_CLIENT)
    versions = mismatch.str.extract_groups(_API_MISMATCH_VERSIONS)
    with_facts = records.with_columns(
        nvrm_client=client.struct.field("client"),
        nvrm_client_pid=client.struct.field("pid").cast(pl.Int64, strict=False),
        nvrm_client_version=versions.struct.field("client"),
        nvidia_driver=pl.coalesce("nvidia_driver", versions.struct.field("module")),
        xid_mnemonic=lookup("mnemonic"),
        xid_description=lookup("description"),
        xid_resolution=lookup("resolution"),
        xid_investigation=lookup("investigation"),
        xid_severity=report_severity(code, pl.col("message")),
        sxid_severity=pl.when(pl.col("sxid").is_not_null()).then(_fatality(pl.col("message"))),
        xid_recovery_action=pl.when(code == 154).then(recovery_action(pl.col("message"))),
        fallen_off_bus=pl.when(fallen).then(pl.lit(True)),
        pci_id=pl.col("message").str.extract(_PCI_ID, 1),
        gpu_serial=pl.when(board.str.contains("[1-9A-Za-z]")).then(board),
        pci_bus=pl.coalesce("xid_pci", "gpu_at_pci", "nvrm_pci", "sxid_pci",
                            pl.when(fallen | unsupported).then(_within_two_before(pl.col("nvrm_pci"), position)),
                            pl.when(board.is_not_null()).then(_within_two_before(pl.col("gpu_at_pci"), position)),
                            pl.when(crash_dump).then(_within_two_before(pl.coalesce("nvrm_pci", "xid_pci"), position))),
    )
    return _with_gpu_uuid(_with_dump_bus(with_facts, position))


def _within_two_before(value: pl.Expr, position: pl.Expr) -> pl.Expr:
    """``value.forward_fill(limit=2)``, with the limit counted in ``position``."""
    set_at = pl.when(value.is_not_null()).then(position).forward_fill()
    return pl.when(position - set_at <= 2).then(value.forward_fill())


def _bus_key(bus: pl.Expr) -> pl.Expr:
    """A bus as one GPU's key: "0000:01:00" and "0000:01:00.0" are the same GPU."""
    return bus.str.to_lowercase().str.replace(r"\.[0-7]$", "")


def _with_dump_bus(records: pl.DataFrame, position: pl.Expr) -> pl.DataFrame:
    """``records`` whose NVRM lines name no GPU given the bus of the dump they are lines of: the dump a "GPU at PCI:…:
    GPU-<uuid>" line, an Xid report or a :data:`_DUMP_HEADER` opens.

    A dump is the NVRM lines in a row after its opener, within :data:`_DUMP_GAP_S` of each other, in one file, on one
    host and one boot. It ends at any other line, at a line naming another bus and at one naming another GPU index ("GPU6 …") than
    the dump named before: GPUs that fail together print their own lines among each other's.
    """
    message = pl.col("message")
    nvrm = message.str.starts_with("NVRM: ")
    opener = pl.coalesce("gpu_at_pci", "xid_pci", pl.when(message.str.contains(_DUMP_HEADER)).then("nvrm_pci")).is_not_null()
    seconds = pl.coalesce(pl.col("ts").dt.epoch("us") / 1e6, pl.col("boot_seconds"))
    step = seconds - seconds.shift(1)
    goes_on = (
        nvrm
        & nvrm.shift(1)
        & (position == position.shift(1) + 1)
        & ~starts_file(records)
        & pl.col("host").eq_missing(pl.col("host").shift(1))
        & ((step >= 0) & (step <= _DUMP_GAP_S)).fill_null(True)
    ).fill_null(False)
    run = (opener | ~goes_on).cum_sum()
    opener_bus = forward_fill_within(pl.when(opener).then(pl.col("pci_bus")), run)
    index = message.str.extract(r"^NVRM: (?:.*?\b)?GPU([0-9]+)\b", 1)
    index_before = forward_fill_within(index, run).shift(1)
    other_gpu = (_bus_key(pl.col("pci_bus")) != _bus_key(opener_bus)).fill_null(False) | (index != index_before).fill_null(False)
    dump = (opener | ~goes_on | other_gpu).cum_sum()
    bus = forward_fill_within(pl.when(opener).then(pl.col("pci_bus")), dump)
    return records.with_columns(pci_bus=pl.coalesce("pci_bus", pl.when(nvrm).then(bus)))


def _with_gpu_uuid(records: pl.DataFrame) -> pl.DataFrame:
    # The driver names a GPU's UUID once ("GPU at PCI:…: GPU-…") before that bus's first Xid;
    # later reports on the bus take the latest UUID named before them, earlier ones the first after.
    # A bus is one host's: a log server's file holds many nodes, each with a GPU at 0000:01:00.
    bus_key = _bus_key(pl.col("pci_bus"))
    uuid = pl.col("gpu_at_uuid")
    return records.with_columns(
        gpu_uuid=pl.when(pl.col("pci_bus").is_not_null())
        .then(uuid.forward_fill().backward_fill().over(bus_key, "host", *file_column(records)))
    )
