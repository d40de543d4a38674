"""The nvidia_smi source: default table, CSV queries, -q text, -q -x XML, dmon/pmon, -L.

Real samples (tests/data/nvidia_smi/nvidia_smi_*, copied verbatim from shared/real_logs)
are checked against the facts in SOURCES.md. The hand-made fixtures follow those real
captures' layouts: a ``--query-gpu -l 5`` loop with a restarted logger, a ``nounits``
query in another column order, NVIDIA's header-less logging query, two concatenated
``nvidia-smi -l`` tables, ``-q -d MEMORY,UTILIZATION,TEMPERATURE,POWER,PIDS``, a
``-q -x -l`` loop, ``dmon -o DT -s pucm``, an idle-GPU pmon, ``-L`` with MIG devices and
a monitoring script's log that mixes ``-L``, a table and compute-apps queries.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rca
from rca import schema, sources
from rca.sources import nvidia_smi
from rca.sources._base import ParseContext, lines_frame
from rca.sources._nvsmi_common import number, to_bytes
from tests.conftest import DATA, attrs_of, head_lines, of_kind, sniffed

FOLDER = DATA / "nvidia_smi"
MIB = 2**20
FIXTURES = sorted(p for p in FOLDER.iterdir() if p.is_file())
OTHER_SOURCES = [s.name for s in sources.all_sources() if s.name != "nvidia_smi"]
OTHER_FILES = sorted(p for name in OTHER_SOURCES for p in (DATA / name).rglob("*") if p.is_file())


def _text(name: str) -> str:
    return (FOLDER / name).read_text(encoding="utf-8")


def _events(name: str, **kwargs: object) -> pl.DataFrame:
    return rca.parse_text(_text(name), file=name, **kwargs)


def _accounting(text: str, ctx: ParseContext | None = None) -> tuple[int, int]:
    content = lines_frame(text).filter(pl.col("text").str.strip_chars() != "")
    if content.height == 0:
        return 0, 0
    parsed = nvidia_smi.parse(content, ctx or ParseContext(file="t"))
    covered = int(parsed.events["n_lines"].sum()) if parsed.events.height else 0
    return covered + sum(parsed.skipped.values()), content.height


def _utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


# --- sniffing -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_every_fixture_is_sniffed_as_nvidia_smi(path: Path) -> None:
    source, score = sniffed(path)
    assert source is not None and source.name == "nvidia_smi"
    assert score >= 0.9


@pytest.mark.parametrize("path", OTHER_FILES, ids=[str(p.relative_to(DATA)) for p in OTHER_FILES])
def test_other_sources_files_are_not_nvidia_smi(path: Path) -> None:
    head = head_lines(path)
    assert nvidia_smi.sniff(head) == 0.0
    source, _ = sniffed(path)
    assert source is None or source.name != "nvidia_smi"


def test_kernel_line_naming_nvidia_smi_is_not_claimed() -> None:
    line = "[Fri Mar  3 04:27:08 2023] NVRM: Xid (PCI:0000:61:00): 119, pid=1346198, name=nvidia-smi, Timeout after 6s"
    assert nvidia_smi.sniff([line]) == 0.0


def test_header_less_rows_sniff_only_in_a_known_layout() -> None:
    assert nvidia_smi.sniff(head_lines(FOLDER / "query_gpu_noheader_kb_layout.csv")) >= 0.9
    assert nvidia_smi.sniff(["43, 1234, 8192", "44, 1300, 8192"]) == 0.0


# --- default table: real samples --------------------------------------------------------------


def test_table_h100_gpu_row_and_processes() -> None:
    events = _events("nvidia_smi_table_01.txt")
    gpu = of_kind(events, "gpu_sample").row(0, named=True)
    assert (gpu["line"], gpu["n_lines"], gpu["format"]) == (9, 3, "table")
    assert (gpu["gpu_index"], gpu["pci_bus"], gpu["gpu_util_pct"]) == (0, "00000000:00:09.0", 100.0)
    assert (gpu["mem_used_bytes"], gpu["mem_total_bytes"]) == (19818 * MIB, 81559 * MIB)
    assert gpu["ts"] == _utc(2026, 7, 14, 8, 12, 53)
    assert (gpu["ts_raw"], gpu["ts_quality"]) == ("Tue Jul 14 08:12:53 2026", "inherited")
    assert json.loads(gpu["attrs"]) == {
        "name": "NVIDIA H100 80GB HBM3", "temp_c": 59.0, "power_w": 629.0, "power_cap_w": 700.0, "pstate": "P0",
        "persistence": "On", "driver": "590.48.01", "cuda": "13.1", "display_active": "Off",
        "volatile_uncorr_ecc": "0", "compute_mode": "Default", "mig_mode": "Disabled",
    }
    procs = of_kind(events, "gpu_process")
    assert procs.select("pid", "process", "gpu_index").rows() == [
        (11327, "/root/tools/memhog", 0), (11328, "/root/tools/memhog", 0), (11345, "./gpu_burn", 0)
    ]
    assert procs["mem_used_bytes"].sum() == 19798 * MIB
    assert set(procs["pci_bus"]) == {"00000000:00:09.0"}
    assert [a["type"] for a in attrs_of(procs)] == ["C", "C", "C"]
    assert all("gi" not in a and "ci" not in a for a in attrs_of(procs))


def test_table_multi_gpu_ddp_same_pids_on_both_gpus() -> None:
    events = _events("nvidia_smi_table_multi_01.txt")
    gpus = of_kind(events, "gpu_sample")
    assert gpus.select("gpu_index", "pci_bus", "gpu_util_pct").rows() == [(0, "00000000:04:00.0", 25.0), (1, "00000000:05:00.0", 28.0)]
    assert gpus["mem_used_bytes"].to_list() == [18903 * MIB, 18905 * MIB]
    assert [(a["power_w"], a["temp_c"]) for a in attrs_of(gpus)] == [(193.0, 38.0), (199.0, 37.0)]
    procs = of_kind(events, "gpu_process")
    assert procs.select("gpu_index", "pid").rows() == [(0, 4935), (0, 4936), (1, 4935), (1, 4936)]
    assert procs["pci_bus"].to_list() == ["00000000:04:00.0"] * 2 + ["00000000:05:00.0"] * 2
    assert [m // MIB for m in procs["mem_used_bytes"]] == [18256, 630, 630, 18258]
    assert set(procs["process"]) == {"...und/unsloth/.venv/bin/python3"}
    prompt = of_kind(events, "log").row(0, named=True)
    assert (prompt["line"], prompt["message"], prompt["ts"]) == (1, "$ nvidia-smi", None)


def test_table_windows_wddm_processes_have_null_memory() -> None:
    events = _events("nvidia_smi_table_windows_01.txt")
    gpu = of_kind(events, "gpu_sample").row(0, named=True)
    attrs = json.loads(gpu["attrs"])
    assert attrs["name"] == "NVIDIA GeForce RTX 2080 ..."
    assert attrs["driver_model"] == "WDDM" and "persistence" not in attrs
    assert (attrs["fan_pct"], attrs["pstate"], attrs["power_w"]) == (38.0, "P2", 97.0)
    assert (gpu["mem_used_bytes"], gpu["mem_total_bytes"], gpu["gpu_util_pct"]) == (1296 * MIB, 8192 * MIB, 7.0)
    procs = of_kind(events, "gpu_process")
    assert procs["pid"].to_list() == [2056, 4680, 12332, 12444, 14160, 14184, 15076, 16280, 20372, 24804, 25704, 26660]
    assert procs["mem_used_bytes"].null_count() == 12
    assert [a["type"] for a in attrs_of(procs)].count("C+G") == 10
    assert "...m Files\\NZXT CAM\\NZXT CAM.exe" in procs["process"].to_list()
    assert procs["process"][0] == "C:\\Windows\\System32\\dwm.exe"


def test_table_2014_layout_three_titans_no_processes() -> None:
    events = _events("nvidia_smi_table_old_325_01.txt")
    assert events["kind"].to_list() == ["gpu_sample"] * 3
    assert events["pci_bus"].to_list() == ["0000:03:00.0", "0000:04:00.0", "0000:84:00.0"]
    assert set(events["mem_used_bytes"]) == {14 * MIB} and set(events["mem_total_bytes"]) == {6143 * MIB}
    assert events["gpu_util_pct"].null_count() == 3
    attrs = attrs_of(events)
    assert [(a["fan_pct"], a["temp_c"]) for a in attrs] == [(31.0, 44.0), (30.0, 35.0), (30.0, 31.0)]
    assert all("power_w" not in a and "pstate" not in a and "cuda" not in a for a in attrs)
    assert {a["driver"] for a in attrs} == {"325.15"}
    assert events["n_lines"].to_list() == [2, 2, 2]


def test_table_mig_devices_and_mig_processes() -> None:
    events = _events("nvidia_smi_table_mig_01.txt")
    samples = of_kind(events, "gpu_sample")
    whole = samples.filter(~pl.col("attrs").str.contains('"mig_device"')).row(0, named=True)
    assert (whole["mem_used_bytes"], whole["gpu_util_pct"]) == (11125 * MIB, None)
    assert json.loads(whole["attrs"])["mig_mode"] == "Enabled"
    migs = samples.filter(pl.col("attrs").str.contains('"mig_device"'))
    attrs = attrs_of(migs)
    assert [(a["mig_device"], a["gi"], a["ci"], a["sm_count"]) for a in attrs] == [
        (0, 2, 0, 60), (1, 3, 0, 32), (2, 9, 0, 16), (3, 10, 0, 16)
    ]
    assert [m // MIB for m in migs["mem_used_bytes"]] == [11091, 17, 9, 9]
    assert [m // MIB for m in migs["mem_total_bytes"]] == [40448, 20096, 9984, 9984]
    assert [a["bar1_total_bytes"] // MIB for a in attrs] == [24739, 12369, 6184, 6184]
    assert set(migs["n_lines"]) == {2} and set(migs["gpu_index"]) == {0} and set(migs["pci_bus"]) == {"00000000:00:09.0"}
    procs = of_kind(events, "gpu_process")
    assert procs["pid"].to_list() == [21180, 21181, 21198]
    assert [(a["gi"], a["ci"]) for a in attrs_of(procs)] == [(2, 0)] * 3


# --- CSV queries ----------------------------------------------------------------------------------


def test_query_gpu_212_columns() -> None:
    events = _events("nvidia_smi_query_gpu_allfields_01.csv")
    row = events.row(0, named=True)
    assert events.height == 1 and row["kind"] == "gpu_sample" and row["format"] == "query_csv"
    assert (row["gpu_index"], row["pci_bus"], row["gpu_uuid"]) == (0, "00000000:00:09.0", "GPU-00000000-0000-0000-0000-000000000000")
    assert (row["mem_used_bytes"], row["mem_total_bytes"], row["gpu_util_pct"]) == (20780679168, 85520809984, 100.0)
    assert (row["ts"], row["ts_quality"]) == (_utc(2026, 7, 14, 8, 12, 53, 353000), "exact")
    attrs = json.loads(row["attrs"])
    assert (attrs["name"], attrs["driver"], attrs["pstate"], attrs["temp_c"]) == ("NVIDIA H100 80GB HBM3", "590.48.01", "P0", 59.0)
    assert (attrs["power_w"], attrs["power_cap_w"]) == (631.95, 700.0)
    assert (attrs["mem_free_bytes"], attrs["mem_reserved_bytes"]) == (61263 * MIB, 479 * MIB)
    assert (attrs["mem_util_pct"], attrs["compute_cap"], attrs["ecc.mode.current"]) == (11.0, "9.0", "Enabled")
    assert attrs["remapped_rows.histogram.max"] == "2560"
    assert attrs["display_mode"] == "[Requested functionality has been deprecated]"
    assert "fan.speed" not in attrs and "fan_pct" not in attrs  # [N/A]
    assert "platform.chassis_serial_number" not in attrs  # empty field
    assert None not in attrs.values()


def test_query_gpu_of_two_gpus_without_a_timestamp_column() -> None:
    samples = of_kind(_events("nvidia_smi_query_gpu_two_gpus_no_timestamp_01.csv"), "gpu_sample")
    assert samples["mem_used_bytes"].to_list() == [2856 * MIB, 4 * MIB]
    assert samples["mem_total_bytes"].to_list() == [11175 * MIB, 6078 * MIB]
    assert samples["ts"].to_list() == [None, None] and samples["gpu_index"].to_list() == [None, None]


def test_query_compute_apps() -> None:
    events = _events("nvidia_smi_query_compute_apps_01.csv")
    assert events["kind"].to_list() == ["gpu_process"] * 3
    assert events.select("pid", "process").rows() == [(11327, "/root/tools/memhog"), (11328, "/root/tools/memhog"), (11345, "./gpu_burn")]
    assert events["mem_used_bytes"].to_list() == [2566 * MIB, 1542 * MIB, 15690 * MIB]
    assert set(events["pci_bus"]) == {"00000000:00:09.0"} and events["gpu_index"].null_count() == 3
    assert set(events["ts"]) == {_utc(2026, 7, 14, 8, 12, 53, 500000)}
    assert attrs_of(events)[0] == {"gpu_name": "NVIDIA H100 80GB HBM3", "serial": "0000000000000"}


def test_query_gpu_loop_shows_memory_growth_across_a_restarted_logger() -> None:
    events = _events("query_gpu_loop_memory_growth.csv")
    assert events["kind"].unique().to_list() == ["gpu_sample"]
    gpu0 = events.filter(pl.col("gpu_index") == 0).sort("ts")
    gpu1 = events.filter(pl.col("gpu_index") == 1)
    assert gpu0.height == gpu1.height == 37
    used = gpu0["mem_used_bytes"].to_list()
    assert used[0] == 2048 * MIB and used[-1] == 79448 * MIB
    assert used == sorted(set(used))  # strictly increasing
    assert set(gpu1["mem_used_bytes"]) == {512 * MIB} and set(events["mem_total_bytes"]) == {81920 * MIB}
    steps = gpu0["ts"].diff().drop_nulls().dt.total_milliseconds().unique().to_list()
    assert steps == [5007]
    assert gpu0["ts"][0] == _utc(2026, 3, 2, 14, 0, 0, 123000)
    assert gpu0["ts"][-1] - gpu0["ts"][0] > timedelta(minutes=3)
    assert set(events["pci_bus"]) == {"00000000:07:00.0", "00000000:0F:00.0"}
    assert {a["pcie.link.gen.max"] for a in attrs_of(events)} == {"4"}
    assert _accounting(_text("query_gpu_loop_memory_growth.csv")) == (76, 76)


def test_query_gpu_nounits_other_column_order() -> None:
    events = _events("query_gpu_nounits_reordered.csv")
    assert events.height == 8
    first = events.row(0, named=True)
    assert (first["gpu_index"], first["gpu_uuid"], first["mem_used_bytes"]) == (0, "GPU-5d3f0c52-8a0e-4b7e-9d61-2f6f3c1a9e01", 30000 * MIB)
    assert (first["mem_total_bytes"], first["gpu_util_pct"], first["ts"]) == (81559 * MIB, 85.0, _utc(2026, 3, 2, 15, 10, 0, 4000))
    assert (json.loads(first["attrs"])["power_w"], json.loads(first["attrs"])["temp_c"]) == (480.5, 60.0)
    gpu1 = events.filter(pl.col("gpu_index") == 1)
    assert gpu1["gpu_util_pct"].to_list() == [0.0, 0.0, 0.0, None]  # [Not Supported]
    assert ["power_w" in a for a in attrs_of(gpu1)] == [True, True, False, True]  # [N/A]


def test_header_less_rows_in_nvidias_logging_layout() -> None:
    events = _events("query_gpu_noheader_kb_layout.csv")
    assert events["kind"].to_list() == ["gpu_sample"] * 3
    assert set(events["pci_bus"]) == {"00000000:00:1E.0"} and events["gpu_index"].null_count() == 3
    assert [m // MIB for m in events["mem_used_bytes"]] == [12510, 16510, 20510]
    assert events["gpu_util_pct"].to_list() == [37.0, 57.0, 77.0]
    assert attrs_of(events)[0]["mem_free_bytes"] == 20000 * MIB


def test_ambiguous_header_less_rows_stay_log() -> None:
    events = rca.parse_text("43, 1234, 8192\n44, 1300, 8192\n", format="nvidia_smi")
    assert events["kind"].to_list() == ["log", "log"]
    assert events["mem_used_bytes"].null_count() == 2


# --- -q text and XML ---------------------------------------------------------------------------


def test_query_text_2019_header_without_memory() -> None:
    events = _events("nvidia_smi_q_02.txt")
    gpu = events.row(0, named=True)
    assert events.height == 1 and gpu["kind"] == "gpu_sample" and gpu["format"] == "query_text"
    assert (gpu["gpu_index"], gpu["pci_bus"], gpu["gpu_uuid"]) == (0, "00000000:01:00.0", "GPU-0200523e-f473-3a45-9b4a-fbbe0e41ccf8")
    assert (gpu["mem_used_bytes"], gpu["mem_total_bytes"], gpu["gpu_util_pct"]) == (None, None, None)
    assert gpu["ts"] == _utc(2019, 4, 14, 18, 55, 20)
    assert json.loads(gpu["attrs"]) == {"name": "GeForce GTX 1080", "persistence": "Disabled", "driver": "396.54"}
    assert _accounting(_text("nvidia_smi_q_02.txt")) == (30, 30)


def test_query_text_two_gpus_with_processes() -> None:
    events = _events("query_text_two_gpus_pids.txt")
    gpus = of_kind(events, "gpu_sample")
    assert gpus.select("gpu_index", "pci_bus").rows() == [(0, "00000000:07:00.0"), (1, "00000000:0F:00.0")]
    assert [m // MIB for m in gpus["mem_used_bytes"]] == [79448, 4]
    assert gpus["gpu_util_pct"].to_list() == [98.0, 0.0]
    assert set(gpus["ts"]) == {_utc(2026, 3, 2, 16, 20, 11)}
    first = attrs_of(gpus)[0]
    assert (first["temp_c"], first["power_w"], first["power_cap_w"], first["cuda"]) == (64.0, 387.12, 400.0, "12.2")
    assert (first["mem_free_bytes"], first["mem_reserved_bytes"]) == (1894 * MIB, 577 * MIB)
    procs = of_kind(events, "gpu_process")
    assert procs.select("gpu_index", "pid", "process").rows() == [
        (0, 48213, "python"), (0, 48377, "/usr/bin/python3 -m torch.distributed.run")
    ]
    assert procs["mem_used_bytes"].to_list() == [78870 * MIB, 552 * MIB]
    assert set(procs["n_lines"]) == {6} and set(procs["pci_bus"]) == {"00000000:07:00.0"}


def test_query_xml_mig_a100() -> None:
    events = _events("nvidia_smi_q_xml_mig_01.xml")
    whole, *migs = of_kind(events, "gpu_sample").iter_rows(named=True)
    assert (whole["gpu_index"], whole["pci_bus"], whole["gpu_uuid"]) == (0, "00000000:00:04.0", "GPU-27b94a00-ed54-5c24-b1fd-1054085de32a")
    assert (whole["mem_used_bytes"], whole["mem_total_bytes"], whole["gpu_util_pct"]) == (38 * MIB, 40960 * MIB, None)
    assert whole["ts"] == _utc(2023, 1, 27, 11, 32, 31)
    attrs = json.loads(whole["attrs"])
    assert (attrs["temp_c"], attrs["power_w"], attrs["power_cap_w"]) == (36.0, 66.92, 400.0)
    assert (attrs["driver"], attrs["cuda"], attrs["mig_mode"]) == ("510.47.03", "11.6", "Enabled")
    assert (attrs["mem_reserved_bytes"], attrs["mem_free_bytes"]) == (605 * MIB, 40315 * MIB)
    assert [(json.loads(m["attrs"])["gi"], json.loads(m["attrs"])["sm_count"]) for m in migs] == [(1, 42), (2, 42)]
    assert [(m["mem_used_bytes"], m["mem_total_bytes"]) for m in migs] == [(19 * MIB, 19968 * MIB)] * 2
    assert of_kind(events, "gpu_process").height == 0
    assert _accounting(_text("nvidia_smi_q_xml_mig_01.xml")) == (171, 171)


def test_truncated_xml_still_yields_its_gpu() -> None:
    events = _events("nvidia_smi_q_xml_snippet_02.xml")
    gpu = events.row(0, named=True)
    assert events.height == 1 and gpu["kind"] == "gpu_sample"
    assert (gpu["gpu_index"], gpu["pci_bus"], gpu["ts"]) == (0, "00000000:00:10.0", _utc(2024, 3, 25, 14, 41, 34))
    attrs = json.loads(gpu["attrs"])
    assert (attrs["name"], attrs["driver"], attrs["cuda"]) == ("Quadro P2000", "550.54.14", "12.4")
    assert _accounting(_text("nvidia_smi_q_xml_snippet_02.xml")) == (24, 24)


def test_xml_broken_mid_document_keeps_what_was_read() -> None:
    broken = _text("query_xml_loop_two_docs.xml").replace("<utilization>", "<utilization>\n<oops></utilization>", 1)
    events = rca.parse_text(broken, file="broken.xml")
    gpus = of_kind(events, "gpu_sample")
    assert gpus["pci_bus"].to_list()[:2] == ["00000000:07:00.0", "00000000:0F:00.0"]
    assert gpus["mem_used_bytes"][0] == 79448 * MIB  # read before the damage
    assert gpus["mem_used_bytes"][1] is None  # after it: bus id from the line only
    assert _accounting(broken)[0] == _accounting(broken)[1]


def test_xml_loop_two_documents_with_an_escaped_process_name() -> None:
    events = _events("query_xml_loop_two_docs.xml")
    gpus = of_kind(events, "gpu_sample")
    assert gpus.select("gpu_index", "gpu_uuid").rows()[:2] == [
        (0, "GPU-5d3f0c52-8a0e-4b7e-9d61-2f6f3c1a9e01"), (1, "GPU-a1b2c3d4-0e1f-4a5b-8c9d-0123456789ab")
    ]
    assert gpus["ts"].unique().sort().to_list() == [_utc(2026, 3, 2, 16, 30, 0), _utc(2026, 3, 2, 16, 30, 10)]
    assert [m // MIB for m in gpus["mem_used_bytes"]] == [79448, 4, 4, 4]
    proc = of_kind(events, "gpu_process").row(0, named=True)
    assert (proc["pid"], proc["process"], proc["mem_used_bytes"]) == (48213, "python train.py --config a&b.yaml", 78870 * MIB)
    assert (proc["gpu_index"], proc["n_lines"]) == (0, 8)


# --- dmon, pmon, -L ---------------------------------------------------------------------------


def test_dmon_rows_have_no_time() -> None:
    events = _events("nvidia_smi_dmon_01.txt")
    assert events["kind"].to_list() == ["gpu_sample"] * 5 and set(events["gpu_index"]) == {0}
    assert events["gpu_util_pct"].to_list() == [100.0] * 5
    attrs = attrs_of(events)
    assert [a["power_w"] for a in attrs] == [631.0, 634.0, 633.0, 634.0, 636.0]
    assert [a["mem_util_pct"] for a in attrs] == [10.0, 10.0, 9.0, 9.0, 9.0]
    assert {(a["mclk_mhz"], a["pclk_mhz"]) for a in attrs} == {(2619.0, 1980.0)}
    assert events["ts"].null_count() == 5 and set(events["ts_quality"]) == {"missing"}


def test_dmon_date_time_columns_and_frame_buffer() -> None:
    events = _events("dmon_dt_memory.txt", tz="Europe/Berlin")
    assert events.height == 6
    assert events["ts"][0] == _utc(2026, 3, 2, 13, 10, 0)  # 14:10 CET
    assert events["ts_raw"][0] == "20260302 14:10:00" and set(events["ts_quality"]) == {"exact"}
    gpu0 = events.filter(pl.col("gpu_index") == 0)
    assert [m // MIB for m in gpu0["mem_used_bytes"]] == [10253, 10317, 10381]
    last = events.row(-1, named=True)
    assert (last["gpu_index"], last["gpu_util_pct"]) == (1, None)
    assert "power_w" not in json.loads(last["attrs"])
    assert _accounting(_text("dmon_dt_memory.txt")) == (10, 10)


def test_pmon_processes_and_idle_gpu() -> None:
    events = _events("pmon_idle_gpu.txt")
    procs = of_kind(events, "gpu_process")
    assert procs.select("gpu_index", "pid", "process").rows() == [(0, 48213, "python")] * 2
    assert [a["sm_pct"] for a in attrs_of(procs)] == [97.0, 99.0]
    idle = of_kind(events, "log")
    assert idle["gpu_index"].to_list() == [1, 1] and idle["pid"].null_count() == 2


def test_list_maps_index_to_uuid_and_mig_devices() -> None:
    events = _events("list_gpus_mig.txt")
    assert events["gpu_index"].to_list() == [0, 0, 0, 1]
    assert events["gpu_uuid"].to_list() == [
        "GPU-5d3f0c52-8a0e-4b7e-9d61-2f6f3c1a9e01", None, None, "GPU-a1b2c3d4-0e1f-4a5b-8c9d-0123456789ab"
    ]
    mig = attrs_of(events)[1]
    assert mig == {"mig_profile": "3g.40gb", "mig_device": 0, "mig_uuid": "MIG-0b2ad4a4-7d4d-5a36-9f84-3f2c1b0e8d11"}


# --- concatenated and mixed captures --------------------------------------------------------


def test_two_table_snapshots_in_one_file() -> None:
    events = _events("table_two_snapshots.txt")
    gpus = of_kind(events, "gpu_sample")
    assert gpus.select("ts", "gpu_index").rows() == [
        (_utc(2026, 3, 2, 14, 0, 0), 0), (_utc(2026, 3, 2, 14, 0, 0), 1),
        (_utc(2026, 3, 2, 14, 0, 5), 0), (_utc(2026, 3, 2, 14, 0, 5), 1),
    ]
    assert [m // MIB for m in gpus["mem_used_bytes"]] == [4, 4, 10253, 4]
    assert gpus["ts_raw"].to_list()[2] == "Mon Mar  2 14:00:05 2026"
    proc = of_kind(events, "gpu_process").row(0, named=True)
    assert (proc["pid"], proc["process"], proc["ts"], proc["mem_used_bytes"]) == (48213, "python", _utc(2026, 3, 2, 14, 0, 5), 10240 * MIB)
    none_found = of_kind(events, "log").row(0, named=True)
    assert none_found["message"].strip("| ").startswith("No running processes found")
    assert none_found["ts"] == _utc(2026, 3, 2, 14, 0, 0)
    assert _accounting(_text("table_two_snapshots.txt")) == (46, 46)


def test_monitoring_script_log_mixing_list_table_and_queries() -> None:
    events = _events("monitor_script_mixed.log")
    assert of_kind(events, "gpu_sample")["mem_used_bytes"].to_list() == [10253 * MIB, 4 * MIB]
    procs = of_kind(events, "gpu_process")
    assert procs.select("format", "pid", "mem_used_bytes").rows() == [
        ("table", 48213, 10240 * MIB), ("query_csv", 48213, 10240 * MIB), ("query_csv", 48213, 41002 * MIB)
    ]
    listed = events.filter(pl.col("format") == "list")
    assert listed["gpu_uuid"].to_list() == ["GPU-5d3f0c52-8a0e-4b7e-9d61-2f6f3c1a9e01", "GPU-a1b2c3d4-0e1f-4a5b-8c9d-0123456789ab"]
    banners = events.filter(pl.col("message").str.starts_with("=== snapshot"))
    assert banners["kind"].to_list() == ["log", "log"]
    assert _accounting(_text("monitor_script_mixed.log")) == (31, 31)


def test_snapshot_time_is_read_in_the_context_zone() -> None:
    events = _events("nvidia_smi_table_01.txt", tz="America/New_York")
    assert set(events["ts"]) == {_utc(2026, 7, 14, 12, 12, 53)}


def test_lost_gpu_and_driver_failures_are_error_lines() -> None:
    text = (
        "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n"
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"
        "some unrelated note\n"
    )
    events = rca.parse_text(text, format="nvidia_smi")
    assert events["kind"].to_list() == ["log"] * 3
    assert events["severity"].to_list() == ["error", "error", None]


def test_pmon_command_with_spaces_and_a_ragged_dmon_row() -> None:
    text = (
        "# gpu         pid   type     sm    mem    enc    dec    command\n"
        "# Idx           #    C/G      %      %      %      %    name\n"
        "    0      48213     C     97     58      -      -    python train.py\n"
        "# gpu    pwr  gtemp     sm\n"
        "# Idx      W      C      %\n"
        "    0    297     41     99     12\n"
    )
    events = rca.parse_text(text)
    proc = of_kind(events, "gpu_process").row(0, named=True)
    assert (proc["pid"], proc["process"]) == (48213, "python train.py")
    assert events.filter(pl.col("line") == 6)["kind"].to_list() == ["log"]
    assert _accounting(text) == (6, 6)


# --- invariants ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_every_line_is_accounted_for_and_rows_fit_the_schema(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    covered, total = _accounting(text)
    assert covered == total
    events = rca.parse_text(text, file=path.name)
    schema.validate(events, schema.EVENT_SCHEMA, path.name)
    assert set(events["kind"]) <= set(schema.KINDS) and set(events["ts_quality"]) <= set(schema.TS_QUALITIES)
    assert set(events["format"]) <= set(nvidia_smi.SOURCE.formats)
    for attrs in attrs_of(events.filter(pl.col("attrs").is_not_null())):
        assert isinstance(attrs, dict) and None not in attrs.values()


def test_unit_conversions() -> None:
    printed = ["19818MiB", "19818 MiB", "14MB", "2 GiB", "512 KiB", "N/A", "[N/A]", "1e99 MiB", "99999999999999999999 MiB"]
    values = pl.DataFrame({"v": printed})
    assert values.select(to_bytes(pl.col("v"))).to_series().to_list() == [
        19818 * MIB, 19818 * MIB, 14 * MIB, 2 * 2**30, 512 * 1024, None, None, None, None
    ]
    readings = pl.DataFrame({"v": ["100 %", "629W", "59C", "631.95 W", "N/A", "ERR!", "0x0000"]})
    assert readings.select(number(pl.col("v"))).to_series().to_list() == [100.0, 629.0, 59.0, 631.95, None, None, None]


REAL_LINES = [line for path in FIXTURES for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_arbitrary_text_never_raises_and_is_accounted(text: str) -> None:
    covered, total = _accounting(text)
    assert covered == total


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(REAL_LINES), min_size=1, max_size=40), st.integers(0, 200), st.text(max_size=12))
def test_spliced_real_lines_never_raise_and_are_accounted(picked: list[str], cut: int, noise: str) -> None:
    lines = [line[:cut] + noise + line[cut:] if i % 3 == 1 else line for i, line in enumerate(picked)]
    covered, total = _accounting("\n".join(lines), ParseContext(file="t", tz="Asia/Kolkata"))
    assert covered == total


def test_a_jetson_s_table_row_of_n_a_fields_is_a_sample_with_nothing_known() -> None:
    sample = of_kind(_events("nvidia_smi_table_jetson_orin_01.txt"), "gpu_sample").row(0, named=True)
    assert (sample["gpu_index"], sample["pci_bus"], sample["mem_used_bytes"], sample["gpu_util_pct"]) == (0, None, None, None)
    assert json.loads(sample["attrs"]) == {"name": "Orin (nvgpu)", "driver": "540.4.0"}


def test_q_of_driver_610_reads_versions_without_their_note_and_the_power_readings_that_are_known() -> None:
    sample = of_kind(_events("nvidia_smi_q_610_wddm_deprecated_versions_01.txt"), "gpu_sample").row(0, named=True)
    attrs = json.loads(sample["attrs"])
    assert (attrs["driver"], attrs["cuda"], attrs["power_w"], attrs["power_cap_w"]) == ("610.62", "13.3", 97.99, 250.0)


def test_index_and_memory_query_rows_are_not_process_rows() -> None:
    text = "index, memory.used [MiB], memory.total [MiB]\n0, 100 MiB, 81559 MiB\n1, 200 MiB, 81559 MiB\n"
    samples = rca.parse_text(text, file="q.csv")
    assert samples.select("kind", "gpu_index", "mem_used_bytes").rows() == [("gpu_sample", 0, 100 * MIB), ("gpu_sample", 1, 200 * MIB)]


# --- a MIG devices table alone, topo -m -------------------------------------------------------


def test_mig_devices_table_alone_is_nvidia_smi_with_a_sample_per_mig_device() -> None:
    events = _events("nvidia_smi_mig_devices_only_01.txt")
    assert events["source"].unique().to_list() == ["nvidia_smi"]
    assert events["kind"].to_list() == ["gpu_sample"] * 3
    assert events["gpu_index"].to_list() == [1, 1, 1]
    assert events["mem_used_bytes"].to_list() == [14366 * 2**20, 9826 * 2**20, 13 * 2**20]
    assert events["mem_total_bytes"].unique().to_list() == [19968 * 2**20]
    assert [(a["mig_device"], a["gi"], a["bar1_used_bytes"]) for a in attrs_of(events)] == [(0, 3, 4 * 2**20), (1, 5, 2 * 2**20), (2, 6, 2 * 2**20)]
    assert _accounting(_text("nvidia_smi_mig_devices_only_01.txt")) == (16, 16)


def test_topo_matrix_is_nvidia_smi_kept_as_log_lines() -> None:
    events = _events("nvidia_smi_topo_m_01.txt")
    assert events["source"].unique().to_list() == ["nvidia_smi"]
    assert events["kind"].unique().to_list() == ["log"]
    assert events["gpu_index"].is_null().all()
    assert events.height == 11


def test_partial_query_memory_only_gives_the_fb_figures() -> None:
    events = _events("nvidia_smi_q_d_memory_01.txt", reference_time=_utc(2024, 8, 1))
    (sample,) = events.filter(pl.col("kind") == "gpu_sample").to_dicts()
    assert (sample["pci_bus"], sample["mem_used_bytes"], sample["mem_total_bytes"]) == ("00000000:01:00.0", 659 * 2**20, 8192 * 2**20)
    assert sample["ts"].replace(tzinfo=None) == datetime(2024, 7, 23, 12, 34, 41)
    assert attrs_of(events.filter(pl.col("kind") == "gpu_sample"))[0]["driver"] == "560.70"


def test_remapped_rows_query_flags_pending_and_failed_remaps() -> None:
    text = (
        "gpu_bus_id, gpu_uuid, remapped_rows.correctable, remapped_rows.uncorrectable, remapped_rows.pending, remapped_rows.failure\n"
        "00000000:07:00.0, GPU-6e6f1a55-1c6e-8d1b-6d1e-3b0b5a8c2f10, 0, 4, Yes, No\n"
        "00000000:0F:00.0, GPU-0a1b2c3d-1c6e-8d1b-6d1e-3b0b5a8c2f11, 0, 0, No, No\n"
        "00000000:10:00.0, GPU-0a1b2c3d-1c6e-8d1b-6d1e-3b0b5a8c2f12, 0, 512, No, Yes\n"
    )
    events = rca.parse_text(text, file="remapped.csv")
    assert events["source"].unique().to_list() == ["nvidia_smi"]
    assert events["pci_bus"].to_list() == ["00000000:07:00.0", "00000000:0F:00.0", "00000000:10:00.0"]
    assert events["severity"].to_list() == ["warning", None, "error"]
    assert attrs_of(events)[0]["remapped_rows.uncorrectable"] == "4"


# --- real H200 captures (driver 580) and public samples of failing GPUs -------------------------

H200_UUID = "GPU-04ab082b-0c51-633d-bb28-6139bd8c9eb2"
H200_TOTAL = 143771 * MIB


def test_h200_table_during_training_has_the_gpu_and_its_process() -> None:
    events = _events("nvidia_smi_h200_580_table_during_train_01.txt")
    sample = of_kind(events, "gpu_sample").row(0, named=True)
    process = of_kind(events, "gpu_process").row(0, named=True)
    assert (sample["pci_bus"], sample["mem_used_bytes"], sample["mem_total_bytes"]) == ("00000000:00:06.0", 787 * MIB, H200_TOTAL)
    assert sample["ts"] == _utc(2026, 12, 4, 17, 27, 6)
    attrs = json.loads(sample["attrs"])
    assert (attrs["driver"], attrs["cuda"], attrs["mig_mode"], attrs["power_w"]) == ("580.159.04", "13.0", "Disabled", 126.0)
    assert (process["pid"], process["process"], process["mem_used_bytes"], process["pci_bus"]) == (592, "python3", 778 * MIB, "00000000:00:06.0")


def test_h200_headerless_query_row_keeps_only_the_gpu_identity() -> None:
    events = _events("nvidia_smi_h200_query_gpu_noheader_nounits_01.csv")
    row = events.row(0, named=True)
    assert (row["source"], row["kind"], row["format"]) == ("nvidia_smi", "log", "query_csv")
    assert (row["gpu_uuid"], row["pci_bus"]) == (H200_UUID, "00000000:00:06.0")
    # Which of 143771, 0 and 143156 is used memory cannot be told without the header.
    assert (row["mem_used_bytes"], row["mem_total_bytes"], row["gpu_index"]) == (None, None, None)


def test_headerless_row_with_a_timestamp_and_bus_id_gets_both() -> None:
    text = "2026/12/04 17:27:04.272, 00000000:00:06.0, 778, 143771\n2026/12/04 17:27:05.274, 00000000:00:06.0, 780, 143771\n"
    events = rca.parse_text(text, file="gpu.csv")
    assert events["source"].unique().to_list() == ["nvidia_smi"]
    assert events["ts"].to_list() == [_utc(2026, 12, 4, 17, 27, 4, 272000), _utc(2026, 12, 4, 17, 27, 5, 274000)]
    assert events["pci_bus"].unique().to_list() == ["00000000:00:06.0"]
    assert events["mem_used_bytes"].is_null().all()


def test_headerless_row_that_fits_the_header_above_is_still_read_by_it() -> None:
    text = "index, pci.bus_id, memory.used [MiB]\n0, 00000000:00:06.0, 778 MiB\n1, 00000000:00:07.0, 10 MiB\n"
    events = rca.parse_text(text, file="gpu.csv")
    assert events.select("kind", "gpu_index", "mem_used_bytes").rows() == [("gpu_sample", 0, 778 * MIB), ("gpu_sample", 1, 10 * MIB)]


def test_a_comma_list_without_a_gpu_identity_is_not_a_query_row() -> None:
    assert nvidia_smi.sniff(["0, 45, 81.33, 345", "1, 47, 80.10, 345"]) == 0.0


def test_h200_topo_matrix_with_underline_escape_is_nvidia_smi_and_the_escape_is_dropped() -> None:
    events = _events("nvidia_smi_h200_topo_m_ansi_underline_01.txt")
    assert events["source"].unique().to_list() == ["nvidia_smi"]
    assert events["message"][0] == "\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"
    assert not events["message"].str.contains("\x1b", literal=True).any()


def test_h200_q_reads_identity_memory_and_the_memory_error_state() -> None:
    (sample,) = of_kind(_events("nvidia_smi_h200_q_580_01.txt"), "gpu_sample").to_dicts()
    assert (sample["gpu_index"], sample["gpu_uuid"], sample["pci_bus"]) == (0, H200_UUID, "00000000:00:06.0")
    assert (sample["mem_used_bytes"], sample["mem_total_bytes"], sample["severity"]) == (0, H200_TOTAL, "info")
    attrs = json.loads(sample["attrs"])
    assert (attrs["volatile_uncorr_ecc"], attrs["remapped_rows_pending"], attrs["remapped_rows_failure"]) == ("0", "No", "No")


@pytest.mark.parametrize(
    ("old", "new", "severity"),
    [
        ("        Pending                                        : No", "        Pending                                        : Yes", "warning"),
        ("        Remapping Failure Occurred                     : No", "        Remapping Failure Occurred                     : Yes", "error"),
        ("            DRAM Uncorrectable                         : 0\n        Aggregate",
         "            DRAM Uncorrectable                         : 2\n        Aggregate", "warning"),
    ],
)
def test_q_memory_errors_set_the_severity(old: str, new: str, severity: str) -> None:
    text = _text("nvidia_smi_h200_q_580_01.txt")
    assert text.count(old) == 1
    (sample,) = of_kind(rca.parse_text(text.replace(old, new), file="q.txt"), "gpu_sample").to_dicts()
    assert sample["severity"] == severity


def test_h200_q_xml_reads_the_memory_error_state_and_a_remap_failure_is_an_error() -> None:
    text = _text("nvidia_smi_h200_q_x_580_01.xml")
    (sample,) = of_kind(rca.parse_text(text, file="q.xml"), "gpu_sample").to_dicts()
    assert (sample["gpu_uuid"], sample["mem_total_bytes"], sample["severity"]) == (H200_UUID, H200_TOTAL, "info")
    assert json.loads(sample["attrs"])["volatile_uncorr_ecc"] == "0"
    broken = text.replace("<remapped_row_failure>No</remapped_row_failure>", "<remapped_row_failure>Yes</remapped_row_failure>")
    assert broken != text
    (failed,) = of_kind(rca.parse_text(broken, file="q.xml"), "gpu_sample").to_dicts()
    assert (failed["severity"], json.loads(failed["attrs"])["remapped_rows_failure"]) == ("error", "Yes")


def test_h200_compute_apps_loop_follows_the_process_to_out_of_memory() -> None:
    events = _events("nvidia_smi_h200_compute_apps_loop_oom_01.csv")
    assert events["kind"].unique().to_list() == ["gpu_process"]
    assert events["pid"].unique().to_list() == [592]
    assert events["mem_used_bytes"].to_list()[-1] == 125320 * MIB
    assert events["ts"].to_list()[-1] == _utc(2026, 12, 4, 17, 27, 12, 288000)


def test_h200_dmon_with_date_and_time_and_the_ccpm_column() -> None:
    events = _events("nvidia_smi_h200_dmon_o_dt_s_pucm_01.txt")
    peak = events.filter(pl.col("ts") == _utc(2026, 12, 4, 17, 27, 12)).row(0, named=True)
    assert (peak["kind"], peak["gpu_index"], peak["mem_used_bytes"], peak["ts_quality"]) == ("gpu_sample", 0, 125329 * MIB, "exact")
    assert json.loads(peak["attrs"])["ccpm"] == 0.0


def test_table_of_driver_610_reads_kmd_and_cuda_umd_versions() -> None:
    events = _events("nvidia_smi_table_610_kmd_umd_rtx5090_01.txt")
    samples = of_kind(events, "gpu_sample")
    assert [(a["driver"], a["cuda"]) for a in attrs_of(samples)] == [("610.57.04", "13.3")] * 2
    assert samples["gpu_util_pct"].to_list() == [0.0, 2.0]
    assert of_kind(events, "log").height == 0  # the version box is a header, not a stray line


def test_table_excerpt_without_header_is_sniffed_and_err_cells_warn() -> None:
    path = FOLDER / "nvidia_smi_table_excerpt_fan_err_rtx4000ada_01.txt"
    assert sources.sniff(head_lines(path))[0].name == "nvidia_smi"
    samples = of_kind(_events(path.name), "gpu_sample")
    assert samples.select("gpu_index", "severity", "gpu_util_pct").rows() == [(13, "info", 0.0), (14, "warning", 93.0)]
    assert "fan_pct" not in attrs_of(samples)[1]


def test_power_err_in_a_lone_gpu_box_is_a_warning_and_no_power_reading() -> None:
    (sample,) = of_kind(_events("nvidia_smi_table_excerpt_power_err_v100_azure_01.txt"), "gpu_sample").to_dicts()
    assert (sample["gpu_index"], sample["pci_bus"], sample["severity"]) == (1, "00008ED0:00:00.0", "warning")
    assert "power_w" not in json.loads(sample["attrs"])


@pytest.mark.parametrize(("cell", "severity"), [("[Unknown Error]", "warning"), ("[GPU requires reset]", "error"), ("[GPU is lost]", "error")])
def test_query_cells_nvml_could_not_read_set_the_severity(cell: str, severity: str) -> None:
    text = f"index, pci.bus_id, memory.used [MiB], power.draw [W]\n0, 00000000:00:06.0, 778 MiB, {cell}\n"
    (row,) = rca.parse_text(text, file="q.csv").to_dicts()
    assert (row["kind"], row["severity"], row["mem_used_bytes"]) == ("gpu_sample", severity, 778 * MIB)


def test_windows_query_with_unknown_error_cell_and_blank_line_under_the_header() -> None:
    (row,) = of_kind(_events("nvidia_smi_query_gpu_unknown_error_win_01.csv"), "gpu_sample").to_dicts()
    assert (row["severity"], row["gpu_util_pct"], json.loads(row["attrs"])["power.default_limit"]) == ("warning", 100.0, "[Unknown Error]")


def test_q_cuda_version_not_found_is_unknown() -> None:
    (sample,) = of_kind(_events("nvidia_smi_q_d_cuda_not_found_vgpu_01.txt"), "gpu_sample").to_dicts()
    attrs = json.loads(sample["attrs"])
    assert (sample["pci_bus"], attrs["driver"], attrs["pstate"], "cuda" in attrs) == ("00000000:42:00.0", "580.105.06", "P8", False)


def test_q_of_a_driver_with_only_kmd_and_umd_versions() -> None:
    text = _text("nvidia_smi_q_610_wddm_deprecated_versions_01.txt")
    text = "\n".join(line for line in text.splitlines() if not line.startswith(("Driver Version", "CUDA Version")))
    attrs = attrs_of(of_kind(rca.parse_text(text, file="q.txt"), "gpu_sample"))[0]
    assert (attrs["driver"], attrs["cuda"]) == ("610.62", "13.3")


def test_table_gpu_with_uncorrectable_ecc_errors_is_a_warning() -> None:
    text = _text("nvidia_smi_h200_580_table_during_train_01.txt")
    old = "|   0  NVIDIA H200                    On  |   00000000:00:06.0 Off |                    0 |"
    assert old in text
    sample = of_kind(rca.parse_text(text.replace(old, old.replace("   0 |", "   2 |")), file="t.txt"), "gpu_sample").row(0, named=True)
    assert (sample["severity"], json.loads(sample["attrs"])["volatile_uncorr_ecc"]) == ("warning", "2")


# --- nvlink and MIG instance listings ------------------------------------------------------------


def test_nvlink_status_pasted_indented_gives_each_link_its_gpu() -> None:
    path = FOLDER / "nvidia_smi_nvlink_s_h100_pcie_indented_01.txt"
    assert sources.sniff(head_lines(path))[0].name == "nvidia_smi"
    events = _events(path.name)
    links = events.filter(pl.col("message").str.contains("Link "))
    assert links["gpu_index"].to_list() == [0] * 18 + [1] * 2
    assert set(links["gpu_uuid"][18:]) == {"GPU-9b1446e2-8a89-4cf6-b68c-a98d99e958d3"}
    assert json.loads(links.row(4, named=True)["attrs"]) == {"nvlink": 4, "nvlink_state": "<inactive>"}
    assert links["severity"].null_count() == links.height


def test_nvlink_error_counters_warn_when_not_zero() -> None:
    text = (
        "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-abcdefab-cdef-abdc-abcd-abababababab)\n"
        "\t Link 0: Replay Errors: 0\n\t Link 0: Recovery Errors: 0\n\t Link 0: CRC Errors: 7\n"
    )
    events = rca.parse_text(text).sort("line")
    assert events["severity"].to_list() == [None, None, None, "warning"]
    assert json.loads(events["attrs"][3]) == {"nvlink": 0, "nvlink_counter": "CRC Errors", "nvlink_count": 7}
    assert _accounting(text) == (4, 4)


def test_mig_instance_listings_name_gpu_instance_profile_and_placement() -> None:
    events = _events("nvidia_smi_mig_lgi_a100_thetagpu_01.txt")
    assert set(events["source"]) == {"nvidia_smi"}
    rows = events.filter(pl.col("gpu_index").is_not_null())
    assert rows["line"].to_list() == [7, 9]
    assert [json.loads(a) for a in rows["attrs"]] == [
        {"mig_profile": "3g.20gb", "mig_profile_id": 9, "gi": 1, "placement": "4:4"},
        {"mig_profile": "3g.20gb", "mig_profile_id": 9, "gi": 2, "placement": "0:4"}]
    compute = (
        "+-------------------------------------------------------+\n"
        "| Compute instances:                                    |\n"
        "| GPU     GPU       Name             Profile   Instance |\n"
        "|       Instance                       ID        ID     |\n"
        "|         ID                                            |\n"
        "|=======================================================|\n"
        "|   0      1       MIG 1c.3g.20gb       0         1     |\n"
        "+-------------------------------------------------------+\n"
    )
    (ci,) = rca.parse_text(compute).to_dicts()
    assert (ci["line"], ci["gpu_index"], json.loads(ci["attrs"])) == (7, 0, {"mig_profile": "1c.3g.20gb", "mig_profile_id": 0, "gi": 1, "ci": 1})
    assert _accounting(compute) == (8, 8)


# --- memory error state ---------------------------------------------------------------------------


def test_q_excerpt_without_its_banner_is_a_sample_and_a_pending_remap_warns() -> None:
    path = FOLDER / "nvidia_smi_q_excerpt_a100_remap_pending_01.txt"
    assert nvidia_smi.sniff(head_lines(path)) == 0.95
    sample = of_kind(_events(path.name), "gpu_sample").row(0, named=True)
    assert (sample["line"], sample["pci_bus"], sample["severity"]) == (6, "00000000:10:1C.0", "warning")
    assert (sample["ts"], sample["ts_quality"]) == (_utc(2023, 6, 7, 19, 32, 16), "inherited")
    attrs = json.loads(sample["attrs"])
    assert (attrs["remapped_rows_pending"], attrs["driver"], attrs["cuda"]) == ("Yes", "510.73.08", "11.6")
    assert "retired_pages_pending" not in attrs  # N/A on an A100


def test_a_page_pending_retirement_warns_in_text_and_xml() -> None:
    text = (
        "==============NVSMI LOG==============\n\n"
        "Timestamp                                 : Tue Mar  3 10:00:00 2020\n"
        "Driver Version                            : 418.87.01\n\n"
        "GPU 00000000:86:00.0\n"
        "    Product Name                          : Tesla V100-SXM2-32GB\n"
        "    Retired Pages\n"
        "        Single Bit ECC                    : 2\n"
        "        Double Bit ECC                    : 1\n"
        "        Pending                           : Yes\n"
    )
    sample = of_kind(rca.parse_text(text), "gpu_sample").row(0, named=True)
    attrs = json.loads(sample["attrs"])
    assert (sample["severity"], attrs["retired_pages_pending"], attrs["retired_pages_dbe"]) == ("warning", "Yes", 1)
    xml = _text("nvidia_smi_h200_q_x_580_01.xml").replace("<pending_blacklist>N/A</pending_blacklist>", "<pending_blacklist>Yes</pending_blacklist>")
    sample = of_kind(rca.parse_text(xml), "gpu_sample").row(0, named=True)
    assert (sample["severity"], json.loads(sample["attrs"])["retired_pages_pending"]) == ("warning", "Yes")


def test_a_hardware_slowdown_or_a_requested_reset_warns_in_text_and_xml() -> None:
    text = _text("nvidia_smi_h200_q_580_01.txt")
    slowed = text.replace(
        "        HW Slowdown                                    : Not Active\n"
        "            HW Thermal Slowdown                        : Not Active\n"
        "            HW Power Brake Slowdown                    : Not Active\n",
        "        HW Slowdown                                    : Active\n"
        "            HW Thermal Slowdown                        : Not Active\n"
        "            HW Power Brake Slowdown                    : Active\n",
    )
    assert slowed != text
    sample = of_kind(rca.parse_text(slowed), "gpu_sample").row(0, named=True)
    attrs = json.loads(sample["attrs"])
    assert (sample["severity"], attrs["hw_slowdown"], attrs["hw_power_brake_slowdown"]) == ("warning", "Active", "Active")
    assert "hw_thermal_slowdown" not in attrs
    assert of_kind(_events("nvidia_smi_h200_q_580_01.txt"), "gpu_sample")["severity"].to_list() == ["info"]
    xml = _text("nvidia_smi_h200_q_x_580_01.xml").replace(
        "<clocks_event_reason_hw_slowdown>Not Active</clocks_event_reason_hw_slowdown>",
        "<clocks_event_reason_hw_slowdown>Active</clocks_event_reason_hw_slowdown>")
    assert of_kind(rca.parse_text(xml), "gpu_sample")["severity"].to_list() == ["warning"]
    reset = text.replace(
        "    Performance State                                  : P0\n",
        "    GPU Reset Status\n"
        "        Reset Required                                 : Yes\n"
        "        Drain and Reset Recommended                    : No\n"
        "    Performance State                                  : P0\n",
    )
    sample = of_kind(rca.parse_text(reset), "gpu_sample").row(0, named=True)
    assert (sample["severity"], json.loads(sample["attrs"])["reset_required"]) == ("warning", "Yes")


def test_csv_queries_warn_on_the_same_memory_clock_and_reset_states_as_q() -> None:
    text = (
        "index, pci.bus_id, clocks_event_reasons.hw_slowdown, ecc.errors.uncorrected.volatile.total, retired_pages.pending\n"
        "0, 00000000:04:00.0, Not Active, 0, No\n"
        "1, 00000000:05:00.0, Active, 0, No\n"
        "2, 00000000:06:00.0, Not Active, 2, No\n"
        "3, 00000000:07:00.0, Not Active, 0, Yes\n"
        "4, 00000000:08:00.0, Not Active, [N/A], [N/A]\n"
    )
    events = rca.parse_text(text).sort("line")
    assert events["severity"].to_list() == ["info", "warning", "warning", "warning", "info"]
    assert _accounting(text) == (6, 6)


_BLACKWELL_ECC = "nvidia_smi_q_d_ecc_595_blackwell_repair_fields_01.txt"


def test_blackwell_ecc_fields_of_a_q_report_are_read() -> None:
    (row,) = _events(_BLACKWELL_ECC).to_dicts()
    assert (row["kind"], row["gpu_index"], row["pci_bus"], row["severity"], row["n_lines"]) == ("gpu_sample", 0, "00000000:54:00.0", "info", 27)
    attrs = json.loads(row["attrs"])
    assert (attrs["volatile_sram_uncorr_ecc"], attrs["volatile_sram_uncorr_parity"], attrs["driver"]) == (0, 0, "595.58.03")
    assert not {"channel_repair_pending", "tpc_repair_pending", "unrepairable_memory"} & attrs.keys()


@pytest.mark.parametrize(
    ("line", "value", "severity", "attr"),
    [
        ("Unrepairable Memory", "Yes", "error", "unrepairable_memory"),
        ("Channel Repair Pending", "Yes", "warning", "channel_repair_pending"),
        ("TPC Repair Pending", "Yes", "warning", "tpc_repair_pending"),
        ("SRAM Uncorrectable SEC-DED", "2", "warning", "volatile_sram_uncorr_ecc"),
    ],
)
def test_blackwell_memory_health_sets_the_severity(line: str, value: str, severity: str, attr: str) -> None:
    # The first such line (the volatile counter's, for the SRAM one) set as a failing GPU prints it.
    text = _text(_BLACKWELL_ECC)
    start = text.index(f"{line} ")
    colon, end = text.index(": ", start), text.index("\n", start)
    (row,) = rca.parse_text(text[: colon + 2] + value + text[end:], file="q.txt").to_dicts()
    assert row["severity"] == severity
    assert str(json.loads(row["attrs"])[attr]) == value


def test_blackwell_xml_repair_fields_set_the_severity() -> None:
    xml = (
        '<?xml version="1.0" ?>\n<nvidia_smi_log>\n<driver_version>595.58.03</driver_version>\n<attached_gpus>1</attached_gpus>\n'
        '<gpu id="00000000:54:00.0">\n<ecc_errors>\n<volatile>\n<sram_uncorrectable_parity>0</sram_uncorrectable_parity>\n'
        "<sram_uncorrectable_secded>0</sram_uncorrectable_secded>\n<dram_uncorrectable>0</dram_uncorrectable>\n</volatile>\n"
        "<channel_repair_pending>No</channel_repair_pending>\n<tpc_repair_pending>No</tpc_repair_pending>\n"
        "<unrepairable_memory>Yes</unrepairable_memory>\n</ecc_errors>\n</gpu>\n</nvidia_smi_log>\n"
    )
    (row,) = rca.parse_text(xml, file="q.xml").to_dicts()
    assert (row["kind"], row["pci_bus"], row["severity"]) == ("gpu_sample", "00000000:54:00.0", "error")
    assert json.loads(row["attrs"])["unrepairable_memory"] == "Yes"


def test_a_watch_header_names_the_host_of_the_screens_below_it() -> None:
    events = _events("nvidia_smi_watch_595_a100_vllm_engine_core_01.txt")
    assert events.select("kind", "host", "gpu_index").rows() == [("log", "dg05", None), ("gpu_sample", "dg05", 2), ("gpu_process", "dg05", 2)]
    sample = events.row(1, named=True)
    assert (sample["ts"], sample["mem_used_bytes"], sample["pci_bus"]) == (_utc(2026, 10, 6, 17, 7, 38), 74143 * 2**20, "00000000:81:00.0")
    # procps before 3.3.10 printed no host: nothing to take.
    older = _text("nvidia_smi_watch_595_a100_vllm_engine_core_01.txt").replace("dg05: ", "")
    assert rca.parse_text(older, file="watch.txt")["host"].null_count() == 3


def test_an_uncorrectable_ecc_count_in_a_table_excerpt_is_a_warning() -> None:
    events = _events("nvidia_smi_table_excerpt_rtx_pro_6000_ecc_2_01.txt")
    assert events.select("gpu_index", "pci_bus", "severity").rows() == [(0, "00000000:54:00.0", "info"), (1, "00000000:55:00.0", "warning")]
    assert attrs_of(events)[1]["volatile_uncorr_ecc"] == "2"


def test_accounted_apps_give_each_process_its_utilisation_and_lifetime_as_numbers() -> None:
    # --format=csv prints "97 %" and "41397 ms"; the header's unit says what the number is.
    events = rca.parse_text(_text("nvidia_smi_h200_mig_compute_accounted_apps_590_01.csv"), file="apps.csv")
    processes = of_kind(events, "gpu_process")
    assert processes["line"].to_list() == [2, 3, 4, 7, 8, 9, 10, 11, 12]
    running = processes.row(2, named=True)
    assert (running["pid"], running["process"], running["mem_used_bytes"], running["pci_bus"]) == (12267, "./gpu_burn", 13526 * MIB, "00000000:83:00.0")
    accounted = processes.row(8, named=True)
    assert (accounted["pid"], accounted["mem_used_bytes"], accounted["ts"]) == (10550, None, datetime(2026, 7, 3, 22, 22, 27, 394000, tzinfo=UTC))
    attrs = json.loads(accounted["attrs"])
    assert (attrs["gpu_util_pct"], attrs["mem_util_pct"], attrs["time_ms"], attrs["max_memory_bytes"]) == (97.0, 7.0, 41397.0, 14410 * MIB)
    retired = events.filter(pl.col("line") == 15).row(0, named=True)
    assert (retired["kind"], json.loads(retired["attrs"])["retired_pages.cause"]) == ("log", "Single Bit ECC")


def test_a_table_indented_as_a_notebook_output_cell_is_read() -> None:
    # nbconvert's markdown indents a cell's output by four spaces; every row keeps its shape after the indent.
    name = "nvidia_smi_table_535_t4_notebook_indented_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "nvidia_smi"
    events = rca.parse_text(_text(name), file=name)
    (gpu,) = of_kind(events, "gpu_sample").to_dicts()
    assert (gpu["line"], gpu["n_lines"], gpu["gpu_index"], gpu["pci_bus"]) == (9, 3, 0, "00000000:00:04.0")
    assert (gpu["mem_used_bytes"], gpu["mem_total_bytes"], gpu["gpu_util_pct"]) == (0, 15360 * MIB, 0.0)
    assert (gpu["ts"], gpu["ts_quality"]) == (datetime(2025, 1, 7, 16, 29, 27, tzinfo=UTC), "inherited")
    assert json.loads(gpu["attrs"])["driver"] == "535.104.05"
    assert events.filter(pl.col("kind") == "log")["line"].to_list() == [19]  # "No running processes found"


def test_q_reports_indented_in_a_doc_are_read_from_their_banners_margin() -> None:
    # Two "-q -d" reports pasted with a 4-space indent: sections nest relative to the banner's indent.
    name = "nvidia_smi_q_d_performance_ecc_555_a100_indented_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "nvidia_smi"
    samples = rca.parse_text(_text(name), file=name)
    assert samples["kind"].unique().to_list() == ["gpu_sample"]
    assert samples.select("line", "n_lines", "gpu_index", "pci_bus").rows() == [
        (8, 13, 0, "00000000:12:00.0"), (22, 13, 1, "00000000:8A:00.0"), (43, 24, 0, "00000000:12:00.0"), (68, 24, 1, "00000000:8A:00.0")]
    assert (samples["ts"] == datetime(2024, 6, 13, 17, 51, 27, tzinfo=UTC)).all()
    performance, ecc = attrs_of(samples.head(1))[0], attrs_of(samples.slice(2, 1))[0]
    assert (performance["pstate"], performance["driver"]) == ("P0", "555.42.02")
    assert (ecc["volatile_sram_uncorr_ecc"], ecc["volatile_sram_uncorr_parity"], ecc["volatile_uncorr_ecc"]) == (0, 0, "0")


def test_nvidia_smi_crashing_mid_table_is_an_error() -> None:
    # Under WSL 2 (driver 555.99) nvidia-smi printed the header and died; the shell's report is the only event.
    events = rca.parse_text(_text("nvidia_smi_table_555_wsl2_segfault_01.txt"), file="smi.txt")
    (crash,) = events.to_dicts()
    assert (crash["kind"], crash["severity"], crash["line"], crash["message"]) == ("log", "error", 9, "Segmentation fault")
    assert crash["ts"] == datetime(2024, 6, 21, 13, 11, 6, tzinfo=UTC)


def test_q_excerpt_with_a_deep_blog_indent_keeps_its_sections() -> None:
    # 24 spaces before the banner, 28 before a GPU's fields: the MIG Mode section still nests under the GPU.
    (gpu,) = rca.parse_text(_text("nvidia_smi_q_535_a100_mig_openshift_indented_01.txt"), file="q.txt").to_dicts()
    assert (gpu["kind"], gpu["line"], gpu["n_lines"], gpu["pci_bus"], gpu["gpu_index"]) == ("gpu_sample", 6, 11, "00000001:00:00.0", 0)
    assert json.loads(gpu["attrs"]) == {"name": "NVIDIA A100 80GB PCIe", "persistence": "Enabled", "driver": "535.104.12", "mig_mode": "Enabled"}


def test_dmon_log_indented_in_a_readme_is_read() -> None:
    # A Slurm job's "nvidia-smi dmon" log quoted in a README list item, 4 spaces before the header.
    name = "nvidia_smi_dmon_a100_slurm_job_indented_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "nvidia_smi"
    samples = rca.parse_text(_text(name), file=name)
    assert samples["kind"].unique().to_list() == ["gpu_sample"]
    assert samples.select("line", "gpu_index", "mem_used_bytes").rows() == [
        (3, 0, 4 * MIB), (4, 1, 4 * MIB), (5, 0, 452 * MIB), (6, 1, 24 * MIB), (7, 0, 916 * MIB)]
    last = attrs_of(samples.tail(1))[0]
    assert (last["power_w"], last["pclk_mhz"], last["bar1_used_mib"]) == (87.0, 1410.0, 4.0)


def test_lost_gpu_handle_line_names_its_index_and_bus() -> None:
    # "--query-gpu=index,pci.bus_id,name --format=csv,noheader" with GPU 3 off the bus: the stderr line names it
    # (index and bus id); the rows that answered keep their bus ids.
    name = "nvidia_smi_query_gpu_noheader_handle_lost_gpu3_rtx3080_01.csv"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "nvidia_smi"
    events = rca.parse_text(_text(name), file=name)
    lost = events.row(0, named=True)
    assert (lost["kind"], lost["severity"], lost["gpu_index"], lost["pci_bus"]) == ("log", "error", 3, "0000:04:00.0")
    assert events["pci_bus"].to_list()[1:] == [f"00000000:0{n}:00.0" for n in (1, 2, 3, 5, 6, 7, 8)]
    assert events["severity"].to_list()[1:] == [None] * 7


@pytest.mark.parametrize(
    ("line", "index", "bus"),
    [
        ("Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error", None, "0000:3B:00.0"),
        ("Unable to determine the device handle for GPU 0000:01:00.0: Not Found", None, "0000:01:00.0"),
        ("Unable to determine the device handle for GPU2: Unknown Error", 2, None),
    ],
)
def test_every_form_of_the_device_handle_failure_names_its_gpu(line: str, index: int | None, bus: str | None) -> None:
    (event,) = rca.parse_text(line + "\n", format="nvidia_smi").to_dicts()
    assert (event["severity"], event["gpu_index"], event["pci_bus"]) == ("error", index, bus)


def test_q_accounting_report_without_accounted_processes() -> None:
    # "-q -d ACCOUNTING" with accounting on and nothing run yet: one sample per GPU, no process from "None".
    events = rca.parse_text(_text("nvidia_smi_q_d_accounting_525_3gpu_none_01.txt"), file="q.txt")
    assert events["kind"].unique().to_list() == ["gpu_sample"]
    assert events.select("line", "n_lines", "gpu_index", "pci_bus").rows() == [
        (8, 4, 0, "00000000:13:00.0"), (13, 4, 1, "00000000:37:00.0"), (18, 4, 2, "00000000:D8:00.0")]
    assert events["ts"].unique().to_list() == [datetime(2023, 7, 3, 10, 50, 43, tzinfo=UTC)]
    assert events["ts_quality"].unique().to_list() == ["inherited"]
    assert attrs_of(events.head(1))[0] == {"driver": "525.60.13", "cuda": "12.0"}


def test_q_fabric_not_registered_or_failed_flags_the_gpu() -> None:
    # Hand-made around the Fabric blocks posted from real nodes: "State : In Progress / Status : N/A" while the fabric
    # manager is down (CUDA error 802), "State : Completed / Status : Insufficient Resources" (Azure/azhpc-images PR 506).
    text = (
        "==============NVSMI LOG==============\n\n"
        "Timestamp                                 : Thu May  1 13:50:00 2025\n"
        "Driver Version                            : 570.133.20\n\n"
        "Attached GPUs                             : 3\n"
        "GPU 00000000:53:00.0\n"
        "    Fabric\n"
        "        State                             : In Progress\n"
        "        Status                            : N/A\n"
        "GPU 00000000:64:00.0\n"
        "    Fabric\n"
        "        State                             : Completed\n"
        "        Status                            : Insufficient Resources\n"
        "        CliqueId                          : 0\n"
        "GPU 00000000:75:00.0\n"
        "    Fabric\n"
        "        State                             : Completed\n"
        "        Status                            : Success\n"
    )
    events = rca.parse_text(text, file="q.txt")
    assert events["severity"].to_list() == ["warning", "error", "info"]
    fabric = [(a.get("fabric_state"), a.get("fabric_status")) for a in attrs_of(events)]
    assert fabric == [("In Progress", None), ("Completed", "Insufficient Resources"), ("Completed", "Success")]


def test_q_x_fabric_state_is_read_like_the_text_report() -> None:
    xml = _text("nvidia_smi_h200_q_x_580_01.xml").replace("<state>N/A</state>", "<state>Not Started</state>", 1)
    sample = rca.parse_text(xml, file="q.xml").filter(pl.col("kind") == "gpu_sample").head(1)
    assert sample["severity"].item() == "warning"
    assert attrs_of(sample)[0]["fabric_state"] == "Not Started"


def test_q_report_cut_below_its_timestamp_is_read() -> None:
    # A 580 laptop's "nvidia-smi -q" pasted from its "Driver Version" line on (no banner, no timestamp).
    name = "nvidia_smi_q_580_rtx3050_laptop_no_stamp_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "nvidia_smi"
    events = _events(name)
    assert events.select("kind", "line", "format").rows() == [("gpu_sample", 5, "query_text"), ("gpu_process", 96, "query_text")]
    sample, process = events.to_dicts()
    assert (sample["gpu_index"], sample["pci_bus"], sample["gpu_uuid"]) == (0, "00000000:01:00.0", "GPU-c2511218-82b7-8df6-6091-4dda966d3868")
    assert (sample["mem_used_bytes"], sample["mem_total_bytes"], sample["gpu_util_pct"]) == (12 * MIB, 6144 * MIB, 6.0)
    assert (sample["ts"], sample["ts_quality"]) == (None, "missing")
    attrs = attrs_of(events.head(1))[0]
    assert (attrs["driver"], attrs["cuda"], attrs["temp_c"], attrs["power_w"], attrs["pstate"]) == ("580.119.02", "13.0", 42.0, 1.0, "P0")
    assert (process["pid"], process["process"], process["mem_used_bytes"], process["gpu_index"]) == (2355, "/usr/bin/gnome-shell", MIB, 0)
    assert _accounting(_text(name)) == (102, 102)


def test_query_gpu_of_fabric_columns_only_is_sniffed_and_flags_unregistered_gpus() -> None:
    # "--query-gpu=index,name,fabric.state,fabric.status" on a GB300 node whose fabric never came up (driver 595).
    name = "nvidia_smi_query_gpu_gb300_fabric_in_progress_595_01.csv"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "nvidia_smi"
    events = _events(name)
    assert events.select("kind", "gpu_index", "severity").rows() == [("gpu_sample", n, "warning") for n in range(4)]
    assert attrs_of(events.head(1))[0] == {"name": "NVIDIA GB300", "fabric_state": "In Progress"}
    failed = rca.parse_text("index, fabric.state, fabric.status\n0, Completed, Insufficient Resources\n1, Completed, Success\n", file="f.csv")
    assert failed["severity"].to_list() == ["error", "info"]


def test_missing_nvml_library_in_a_capture_is_an_error() -> None:
    # nvidia-smi run in a container without the driver's libnvidia-ml.so (NVIDIA/nvidia-docker issue #1163's message),
    # appended to a monitoring log after a table.
    table = _text("nvidia_smi_table_01.txt")
    failure = (
        "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver "
        "is properly installed and present in your system.\n"
        "Please also try adding directory that contains libnvidia-ml.so to your system PATH.\n"
    )
    events = rca.parse_text(table + failure, file="gpu.log")
    last = events.filter(pl.col("message").str.starts_with("NVIDIA-SMI couldn't find"))
    assert last.select("kind", "severity").rows() == [("log", "error")]


def test_a_parameter_name_in_a_training_log_is_no_csv_header() -> None:
    # A model's parameter names printed one a line share nvidia-smi's field prefixes ("encoder.", "module.", "power."):
    # a field alone is a header only with its unit or over a value.
    log = "2024-06-05 14:36:17,236 - root - INFO - a\nencoder.layer.0.attention.self.query.weight\n2024-06-05 14:36:18,236 - root - INFO - b\n"
    assert set(rca.parse_text(log, file="train.log")["source"]) == {"pipeline"}
    for capture in ("memory.used [MiB]\n1234 MiB\n1240 MiB\n", "memory.used\n1234\n1240\n"):
        events = rca.parse_text(capture, file="gpu.csv")
        assert events.select("source", "kind", "mem_used_bytes").rows() == [("nvidia_smi", "gpu_sample", 1234 << 20), ("nvidia_smi", "gpu_sample", 1240 << 20)]


def test_query_gpu_of_clock_columns_only_is_sniffed() -> None:
    # "--query-gpu=clocks.mem,clocks.max.mem --format=csv" on a B200 (pytorch/ao PR #4002): no memory./utilization. column.
    name = "nvidia_smi_query_gpu_b200_clocks_mem_only_01.csv"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "nvidia_smi"
    (sample,) = _events(name).to_dicts()
    assert (sample["kind"], sample["line"], sample["gpu_index"]) == ("gpu_sample", 2, None)
    assert attrs_of(_events(name))[0] == {"mclk_mhz": 3996.0, "max_mclk_mhz": 3996.0}


def test_q_cut_to_its_gpu_block_keeps_the_minor_number_and_guesses_no_index() -> None:
    # A README's "nvidia-smi -q" pasted from the GPU's bus-id line on (the second GPU of its box: Minor Number 1).
    name = "nvidia_smi_q_gpu_block_only_rtx2080_minor1_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "nvidia_smi"
    sample, process = _events(name).to_dicts()
    assert (sample["kind"], sample["line"], sample["n_lines"], sample["gpu_index"], sample["pci_bus"]) == (
        "gpu_sample", 1, 72, 1, "00000000:02:00.0")
    assert (sample["mem_used_bytes"], sample["mem_total_bytes"], sample["gpu_util_pct"]) == (8 * MIB, 8192 * MIB, 0.0)
    assert (process["kind"], process["pid"], process["process"], process["gpu_index"]) == ("gpu_process", 1394, "/usr/lib/xorg/Xorg", 1)
    # Without its Minor Number, a block cut out of a report has no index: its place in the cut says nothing.
    cut = "".join(line for line in _text(name).splitlines(keepends=True) if "Minor Number" not in line)
    assert rca.parse_text(cut, file="q.txt")["gpu_index"].to_list() == [None, None]


def test_a_lost_gpu_line_among_q_blocks_is_an_error_of_that_gpu_not_a_head_field() -> None:
    # "-q" prints the blocks of the GPUs that answered and, at its left margin, nvidia-smi's complaint about the one
    # that did not: neither a head field nor part of the block above it.
    text = (
        "GPU 00000000:03:00.0\n"
        "    Product Name                          : NVIDIA GeForce RTX 3060\n"
        "Unable to determine the device handle for GPU1: 0000:04:00.0: Unknown Error\n"
    )
    sample, lost = rca.parse_text(text, file="q.txt").to_dicts()
    assert (sample["kind"], sample["n_lines"], sample["pci_bus"]) == ("gpu_sample", 2, "00000000:03:00.0")
    assert (lost["kind"], lost["severity"], lost["gpu_index"], lost["pci_bus"]) == ("log", "error", 1, "0000:04:00.0")


def test_q_fabric_section_grepped_out_of_the_report_is_a_gpu_sample() -> None:
    # "nvidia-smi -q | grep -E -C3 'ClusterUUID|CliqueId'" on a fabric-attached node (kubernetes-sigs/dra-driver-nvidia-gpu
    # issue 626): a Fabric block without its GPU line, registered but "Unhealthy".
    name = "nvidia_smi_q_grep_fabric_unhealthy_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "nvidia_smi"
    events = _events(name)
    assert events.select("kind", "line", "n_lines", "format").rows() == [
        ("log", 1, 1, "other"), ("gpu_sample", 2, 8, "query_text"), ("log", 10, 1, "query_text")]
    sample = events.filter(pl.col("kind") == "gpu_sample")
    assert sample.select("severity", "ts", "ts_quality", "gpu_index", "pci_bus").row(0) == ("warning", None, "missing", None, None)
    assert attrs_of(sample)[0] == {
        "fabric_state": "Completed", "fabric_status": "Success", "fabric_health": "Unhealthy",
        "fabric_clique_id": "2", "fabric_cluster_uuid": "dc6e40c4-d722-4357-9ba6-5291dd461278"}


def test_q_fabric_sections_of_several_gpus_grepped_flush_left_are_one_sample_each() -> None:
    # "grep -A4 Fabric" over two GPUs (grep's "--" between them), pasted flush left as in Azure/azhpc-images PR 506.
    text = (
        "Fabric\n    State                             : Completed\n    Status                            : Insufficient Resources\n"
        "    CliqueId                          : 0\n    ClusterUUID                       : 00000000-0000-0000-0000-000000000000\n--\n"
        "Fabric\n    State                             : In Progress\n    Status                            : N/A\n"
        "    CliqueId                          : N/A\n    ClusterUUID                       : N/A\n"
    )
    events = rca.parse_text(text, file="fabric.txt")
    assert events.select("kind", "line", "n_lines", "severity").rows() == [
        ("gpu_sample", 1, 5, "error"), ("log", 6, 1, None), ("gpu_sample", 7, 5, "warning")]
    assert [a.get("fabric_status") for a in attrs_of(events.filter(pl.col("kind") == "gpu_sample"))] == ["Insufficient Resources", None]


def test_q_accounted_processes_are_gpu_processes_even_re_indented() -> None:
    # A Slurm epilog's "nvidia-smi -q -d ACCOUNTING" and table (driver 580, 2 L40S) as a cluster's docs show it: fields
    # re-indented by 3 columns, records by 6 (nvidia-smi prints 4 and 8). Each accounted process is its GPU's gpu_process.
    events = _events("nvidia_smi_q_d_accounting_580_l40s_epilog_reindented_01.txt")
    processes = of_kind(events, "gpu_process")
    assert processes.select("line", "n_lines", "pid", "gpu_index", "pci_bus", "mem_used_bytes", "ts_quality").rows() == [
        (14, 6, 3072883, 0, "00000000:61:00.0", None, "inherited"), (25, 6, 3072884, 1, "00000000:CA:00.0", None, "inherited")]
    assert processes["ts"].unique().to_list() == [datetime(2026, 6, 8, 15, 8, 15, tzinfo=UTC)]
    assert attrs_of(processes) == [
        {"max_memory_bytes": 998 * MIB, "gpu_util_pct": 12.0, "mem_util_pct": 3.0, "time_ms": 86816.0, "is_running": "0"},
        {"max_memory_bytes": 998 * MIB, "gpu_util_pct": 15.0, "mem_util_pct": 3.0, "time_ms": 86868.0, "is_running": "0"}]
    samples = of_kind(events, "gpu_sample")
    assert samples.select("line", "n_lines", "gpu_index", "format").rows() == [
        (10, 4, 0, "query_text"), (21, 4, 1, "query_text"), (40, 3, 0, "table"), (44, 3, 1, "table")]


def test_q_accounted_processes_at_nvidia_smi_indents_split_per_process() -> None:
    # The layout nvidia-smi prints (driver 515): "Process ID" 8 columns in, its figures 12; two records in one GPU.
    text = (
        "==============NVSMI LOG==============\n\nTimestamp                                 : Wed Jan 11 16:23:46 2023\n"
        "Driver Version                            : 515.65.01\nCUDA Version                              : 11.7\n\n"
        "Attached GPUs                             : 1\nGPU 00000000:88:00.0\n"
        "    Accounting Mode                       : Enabled\n    Accounting Mode Buffer Size           : 4000\n"
        "    Accounted Processes\n"
        "        Process ID                        : 30976\n            GPU Utilization               : 48 %\n"
        "            Max memory usage              : 29185 MiB\n            Is Running                    : 0\n"
        "        Process ID                        : 31000\n            GPU Utilization               : 8 %\n"
        "            Max memory usage              : 185 MiB\n            Is Running                    : 1\n"
    )
    processes = of_kind(rca.parse_text(text, file="acct.txt"), "gpu_process")
    assert processes.select("line", "n_lines", "pid", "gpu_index").rows() == [(12, 4, 30976, 0), (16, 4, 31000, 0)]
    assert [a["max_memory_bytes"] for a in attrs_of(processes)] == [29185 * MIB, 185 * MIB]


def test_q_remapped_rows_section_grepped_out_of_the_report_is_a_gpu_sample() -> None:
    # The "Remapped Rows" section of "nvidia-smi -q" alone, as posted in leptonai/gpud PR 80: a reset is pending.
    name = "nvidia_smi_q_grep_remapped_rows_pending_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "nvidia_smi"
    events = _events(name)
    assert events.select("kind", "line", "n_lines", "severity", "ts_quality").rows() == [("gpu_sample", 1, 4, "warning", "missing")]
    assert attrs_of(events) == [{"remapped_rows_pending": "Yes"}]


def test_q_x_fabric_health_summary_is_read_like_the_text_report() -> None:
    xml = _text("nvidia_smi_h200_q_x_580_01.xml").replace("<summary>N/A</summary>", "<summary>Unhealthy</summary>", 1)
    sample = rca.parse_text(xml, file="q.xml").filter(pl.col("kind") == "gpu_sample").head(1)
    assert sample["severity"].item() == "warning"
    assert attrs_of(sample)[0]["fabric_health"] == "Unhealthy"


def test_q_clocks_throttle_section_grepped_out_of_the_report_is_a_gpu_sample() -> None:
    # "nvidia-smi -q | grep -A8 'Clocks Throttle'" (kubeflow/kubeflow issue 68): an idle GPU, nothing holding its clocks down.
    name = "nvidia_smi_q_grep_clocks_throttle_idle_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "nvidia_smi"
    events = _events(name)
    assert events.select("kind", "line", "n_lines", "severity").rows() == [("log", 1, 1, None), ("gpu_sample", 2, 9, "info")]
    # The same section of a GPU whose clocks a hardware slowdown holds down (driver 535+ names it "Clocks Event Reasons").
    text = _text(name).replace("Clocks Throttle", "Clocks Event").replace("HW Slowdown                 : Not Active", "HW Slowdown                 : Active")
    sample = of_kind(rca.parse_text(text, file="grep.txt"), "gpu_sample")
    assert sample["severity"].to_list() == ["warning"]
    assert attrs_of(sample) == [{"hw_slowdown": "Active"}]


def test_gpu_recovery_action_other_than_none_is_a_warning_in_q_xml_and_csv() -> None:
    # Driver 570+ says what a faulted GPU needs in "GPU Recovery Action" (the older Reset Status fields then read
    # "Requested functionality has been deprecated"): the excerpt scitix/sichek keeps from an H200 stuck awaiting a reset.
    name = "nvidia_smi_q_grep_reset_status_recovery_reset_h200_570_01.txt"
    assert sources.sniff(head_lines(FOLDER / name))[0].name == "nvidia_smi"
    events = _events(name)
    assert events.select("kind", "line", "n_lines", "severity").rows() == [("gpu_sample", 1, 4, "warning")]
    assert attrs_of(events) == [{"gpu_recovery_action": "Reset"}]
    # A whole report and its XML: "None" stays info and out of attrs, any action is a warning.
    report = _text("nvidia_smi_h200_q_580_01.txt")
    assert "gpu_recovery_action" not in attrs_of(of_kind(rca.parse_text(report, file="q.txt"), "gpu_sample"))[0]
    drained = report.replace("GPU Recovery Action                                : None", "GPU Recovery Action                                : Drain and Reset")
    sample = of_kind(rca.parse_text(drained, file="q.txt"), "gpu_sample").head(1)
    assert (sample["severity"].item(), attrs_of(sample)[0]["gpu_recovery_action"]) == ("warning", "Drain and Reset")
    xml = _text("nvidia_smi_h200_q_x_580_01.xml").replace("<gpu_recovery_action>None</", "<gpu_recovery_action>Reboot</", 1)
    sample = of_kind(rca.parse_text(xml, file="q.xml"), "gpu_sample").head(1)
    assert (sample["severity"].item(), attrs_of(sample)[0]["gpu_recovery_action"]) == ("warning", "Reboot")
    # --query-gpu=index,gpu_recovery_action (the query of NVIDIA/DCGM issue 263): the field alone makes the header a query's.
    csv = rca.parse_text("index, gpu_recovery_action\n0, None\n1, Reset\n2, [N/A]\n", file="ra.csv")
    assert csv.select("source", "kind", "gpu_index", "severity").rows() == [
        ("nvidia_smi", "gpu_sample", 0, "info"), ("nvidia_smi", "gpu_sample", 1, "warning"), ("nvidia_smi", "gpu_sample", 2, "info")]
