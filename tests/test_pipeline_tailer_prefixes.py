"""The prefixes log tailers put before each line (stern, kubetail, `aws logs tail`, `logcli query`) are peeled: each line
names its pod and container (and namespace, host where the tailer says) and is parsed as the pipeline parses it alone."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

import rca

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of"
    " which 1.50 GiB is free."
)
TRACEBACK = ("Traceback (most recent call last):", '  File "train.py", line 10, in <module>', "    main()", OOM)
FIGURES = ("kind", "message", "gpu_index", "mem_requested_bytes", "mem_total_bytes", "n_lines")
STREAM = "ip-10-0-1-2.ec2.internal-application.var.log.containers.trainer-0_ml_pytorch-" + "ab" * 32 + ".log"


def _parse(lines: list[str]) -> pl.DataFrame:
    return rca.parse_text("\n".join(lines) + "\n", file="job.log", reference_time=datetime(2024, 6, 1, tzinfo=UTC))


def _figures(events: pl.DataFrame) -> list[dict]:
    return events.filter(pl.col("kind") == "cuda_oom").select(FIGURES).to_dicts()


def test_stern_traceback_is_one_cuda_oom_record_of_its_pod_with_the_figures_it_has_alone() -> None:
    events = _parse([f"trainer-0 pytorch {line}" for line in TRACEBACK] + ["trainer-1 pytorch RuntimeError: NCCL error"])
    alone = _parse(list(TRACEBACK))
    assert _figures(events) == _figures(alone)
    assert _figures(events)[0]["mem_requested_bytes"] == 2 * 2**30
    oom = events.row(0, named=True)
    assert (oom["pod"], oom["container"], oom["line"], oom["n_lines"]) == ("trainer-0", "pytorch", 1, 4)
    assert events.filter(pl.col("pod") == "trainer-1")["message"].to_list() == ["RuntimeError: NCCL error"]


def test_stern_timestamps_in_colour_give_the_time_and_keep_interleaved_pods_apart() -> None:
    def colored(pod: str, colour: int, second: int, line: str) -> str:
        return f"\x1b[{colour}m{pod}\x1b[0m \x1b[34mpytorch\x1b[0m 2024-05-01T12:00:0{second}.123456789Z {line}"

    events = _parse(
        [colored("trainer-0", 32, n, line) for n, line in enumerate(TRACEBACK)]
        + [colored("trainer-1", 33, 9, "Traceback (most recent call last):"), colored("trainer-1", 33, 9, "ValueError: bad")]
    )
    by_pod = {row["pod"]: row for row in events.to_dicts()}
    assert by_pod["trainer-0"]["kind"] == "cuda_oom"
    assert by_pod["trainer-0"]["ts"] == datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)
    assert by_pod["trainer-0"]["ts_quality"] == "exact"
    assert (by_pod["trainer-1"]["n_lines"], by_pod["trainer-1"]["container"]) == (2, "pytorch")


def test_stern_announcements_of_the_containers_it_tails_are_no_log_lines() -> None:
    events = _parse(["+ trainer-0 › pytorch", f"trainer-0 pytorch {OOM}", "- trainer-0 › pytorch"])
    assert events.select("kind", "pod", "container", "line").rows() == [("cuda_oom", "trainer-0", "pytorch", 2)]


def test_kubetail_brackets_the_pod_and_the_container_where_it_names_one() -> None:
    events = _parse([f"[trainer-0] {line}" for line in TRACEBACK] + ["[trainer-1 sidecar] ERROR upload failed"])
    assert _figures(events) == _figures(_parse(list(TRACEBACK)))
    assert events.select("pod", "container").rows() == [("trainer-0", None), ("trainer-1", "sidecar")]


def test_aws_logs_tail_names_the_pod_namespace_container_and_host_from_fluent_bits_stream() -> None:
    events = _parse([f"2024-05-01T12:00:0{n}.123000+00:00 {STREAM} {line}" for n, line in enumerate(TRACEBACK)])
    oom = events.row(0, named=True)
    assert _figures(events) == _figures(_parse(list(TRACEBACK)))
    assert (oom["pod"], oom["namespace"], oom["container"], oom["host"]) == ("trainer-0", "ml", "pytorch", "ip-10-0-1-2.ec2.internal")
    assert oom["ts"] == datetime(2024, 5, 1, 12, 0, 0, 123000, tzinfo=UTC)


def test_aws_logs_tail_of_another_stream_peels_it_and_keeps_the_lines_own_time() -> None:
    events = _parse(
        [
            "2024-05-01T12:00:00+00:00 ecs/trainer/4f1c2a 2024-05-01 11:59:59,500 ERROR worker died",
            f"2024-05-01T12:00:01.250000+00:00 ecs/trainer/4f1c2a {OOM}",
        ]
    )
    assert events.select("kind", "pod", "ts_raw").rows() == [
        ("log", None, "2024-05-01 11:59:59,500"),
        ("cuda_oom", None, "2024-05-01T12:00:01.250000+00:00"),
    ]
    assert events["message"][0] == _parse(["2024-05-01 11:59:59,500 ERROR worker died"])["message"][0]


def test_logcli_labels_in_any_order_name_the_pod_and_the_line_after_them_is_read() -> None:
    events = _parse(
        [
            f'2024-05-01T12:00:00Z {{container="pytorch", namespace="ml", pod="trainer-0"}}      {OOM}',
            '2024-05-01T12:00:01Z {pod="trainer-1", node_name="gpu-node-7", container="pytorch", namespace="ml"} [rank1]: RuntimeError: boom',
        ]
    )
    rows = events.select("kind", "pod", "container", "namespace", "host", "message").rows()
    assert rows[0][:5] == ("cuda_oom", "trainer-0", "pytorch", "ml", None)
    # the rank's tag is peeled as it is from the line alone
    assert rows[1] == ("log", "trainer-1", "pytorch", "ml", "gpu-node-7", "RuntimeError: boom")
    assert _figures(events)[0]["mem_total_bytes"] == _figures(_parse([OOM]))[0]["mem_total_bytes"]


def test_two_words_at_the_start_of_a_few_lines_are_the_lines_own() -> None:
    lines = ["pre-processing done in 3s", "loading shards", "re-sharding model weights", f"{OOM}"]
    assert _parse(lines)["message"][0] == "pre-processing done in 3s"
    # most lines look so, but each pair differs: prose, not stern's streams
    prose = ["data-loader ready", "multi-node run", "pre-train step", "fine-tune step", "warm-up over"]
    assert _parse(prose)["message"].to_list()[0] == "data-loader ready"
    assert _parse(prose)["pod"].is_null().all()
