"""The memory figures of PBS/Torque, LSF and Grid Engine job reports on the event of the job's end (rca.sources._pipeline_batch)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

import rca

PIPELINE = Path(__file__).parent / "data" / "pipeline"
GIB = 1024**3


def _events(*names: str) -> pl.DataFrame:
    text = "".join((PIPELINE / name).read_text() for name in names)
    return rca.parse_text(text, format="pipeline")


def _at(events: pl.DataFrame, line: int) -> dict:
    return events.filter(pl.col("line") == line).row(0, named=True)


def test_torque_mail_resources_used_mem_is_the_rss_of_the_exit_status_event() -> None:
    events = _events("pbs_torque_mail_exit_status_271_resources_used_01.log")
    end = _at(events, 6)
    assert (end["kind"], end["exit_code"], end["rss_bytes"]) == ("process_killed", 271, 251686472 * 1024)
    # the attrs the rules gave the line stand alone: vmem is read into no column
    assert end["attrs"] == '{"signal":"SIGTERM"}'
    assert events.filter(pl.col("line") != 6)["rss_bytes"].null_count() == events.height - 1


def test_lsf_report_max_and_requested_memory_go_on_the_term_line() -> None:
    events = _events("lsf_term_runlimit_exited_140_gpuv100_report_01.log")
    term, exited = _at(events, 1), _at(events, 2)
    assert (term["kind"], term["rss_bytes"], term["mem_requested_bytes"]) == ("process_killed", 13062 * 1024**2, 25600 * 1024**2)
    assert (exited["exit_code"], exited["rss_bytes"], exited["mem_requested_bytes"]) == (140, None, None)
    assert events.filter(pl.col("line") > 2)["rss_bytes"].null_count() == events.height - 2


def test_qacct_maxvmem_is_put_on_exit_status() -> None:
    events = _events("sge_qacct_exit_status_0_maxvmem_riboviz_01.log")
    end = _at(events, 24)
    assert (end["exit_code"], end["rss_bytes"], end["mem_requested_bytes"]) == (0, round(1.656 * GIB), None)
    assert _at(events, 49)["rss_bytes"] is None


def test_qacct_figures_stay_in_their_own_record() -> None:
    # two qacct records, each from its rule of "=": the first states no maxvmem, the second's is not the first's
    events = _events("sge_qacct_failed_0_exit_status_1_canu_01.log", "sge_qacct_exit_status_0_maxvmem_riboviz_01.log")
    assert (_at(events, 19)["exit_code"], _at(events, 19)["rss_bytes"]) == (1, None)
    assert (_at(events, 19 + 24)["exit_code"], _at(events, 19 + 24)["rss_bytes"]) == (0, round(1.656 * GIB))


# `qacct -j 628 | grep vmem` as the University of Sheffield's HPC documentation prints it (willfurnass/sheffield_hpc,
# referenceinfo/imports/scheduler/memory_used_commands.rst): too short to be sniffed as the pipeline source, so no fixture.
QACCT_GREP_VMEM = "maxvmem      4.807G\ncategory     -u username -l h_vmem=8G -pe smp 1 -P SHEFFIELD\n"


def test_figures_without_an_end_keep_their_own_lines() -> None:
    events = rca.parse_text(QACCT_GREP_VMEM, format="pipeline")
    assert (_at(events, 1)["rss_bytes"], _at(events, 1)["mem_requested_bytes"]) == (round(4.807 * GIB), None)
    assert (_at(events, 2)["rss_bytes"], _at(events, 2)["mem_requested_bytes"]) == (None, 8 * GIB)


def test_a_kill_line_without_a_report_is_left_as_the_rules_read_it() -> None:
    events = _events("pbs_pro_job_killed_mem_exceeded_limit_canu_01.log")
    kill = _at(events, 2)
    # "Mem usage : 38427376kb" is the site's own epilogue wording, no resources_used line: nothing is moved
    assert (kill["mem_used_bytes"], kill["rss_bytes"], kill["mem_requested_bytes"]) == (38427376 * 1024, None, None)


# PBS's accounting log, an `E` record a line (the layout PBS Professional's reference guide gives); job 101 was deleted
# before it ran (Exit_status=-3) and used nothing.
PBS_ACCOUNTING = (
    "04/01/2020 10:00:00;E;101.pbs01;user=alice group=users jobname=prep queue=gpu Exit_status=-3 Resource_List.mem=4gb\n"
    "04/01/2020 11:00:00;E;102.pbs01;user=bob group=users jobname=train queue=gpu Exit_status=0 "
    "Resource_List.mem=16gb resources_used.mem=9000000kb resources_used.walltime=00:59:00\n"
    "04/01/2020 12:00:00;E;103.pbs01;user=bob group=users jobname=eval queue=gpu Exit_status=271 "
    "Resource_List.mem=8gb resources_used.mem=8388608kb\n"
)


def test_each_pbs_accounting_record_keeps_its_own_figures() -> None:
    events = rca.parse_text(PBS_ACCOUNTING, format="pipeline").sort("line")
    assert events["rss_bytes"].to_list() == [None, 9000000 * 1024, 8 * GIB]
    assert events["mem_requested_bytes"].to_list() == [4 * GIB, 16 * GIB, 8 * GIB]
