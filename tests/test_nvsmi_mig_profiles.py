"""``nvidia-smi mig -lgip`` / ``-lcip`` profile boxes and the answers of ``mig -cgi`` / ``-cci``.

A profile is printed over two rows (its counts, then its engines under them): one ``log`` event of its
GPU per profile, the column headers none. A refused ``-cgi`` is an error of the GPU it names.
"""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca import sources
from tests.conftest import fixture_path, head_lines

A30 = "nvidia_smi_mig_lgip_lcip_a30_535_01.txt"
GH200 = "nvidia_smi_mig_lgip_cgi_failures_gh200_01.txt"


def _parse(name: str) -> pl.DataFrame:
    return rca.parse_text(fixture_path(name).read_text(encoding="utf-8"), file=name)


def test_profile_fixtures_are_sniffed_as_nvidia_smi() -> None:
    for name in (A30, GH200):
        source, _ = sources.sniff(head_lines(fixture_path(name)))
        assert source is not None and source.name == "nvidia_smi"


def test_lgip_profiles_are_one_event_each_with_both_rows() -> None:
    events = _parse(A30)
    assert events["line"].to_list() == [6, 9, 12, 15, 18, 27, 30, 39]  # no header row is an event
    assert set(events["n_lines"].to_list()) == {2}
    assert set(events["gpu_index"].to_list()) == {0}
    first = json.loads(events["attrs"][0])
    assert first == {
        "mig_profile": "1g.6gb", "mig_profile_id": 14, "instances_free": 4, "instances_total": 4, "memory_gib": 5.81,
        "p2p": "No", "sm_count": 14, "decoders": 1, "encoders": 0, "ofa": 0, "copy_engines": 1, "jpg": 0,
    }
    media = json.loads(events["attrs"][1])
    assert (media["mig_profile"], media["ofa"], media["jpg"]) == ("1g.6gb+me", 1, 1)


def test_lcip_profiles_carry_their_gpu_instance_and_default_mark() -> None:
    events = _parse(A30).filter(pl.col("line") >= 27)
    attrs = [json.loads(a) for a in events["attrs"]]
    assert [(a["gi"], a["mig_profile"], a["mig_profile_id"], a["default_profile"]) for a in attrs] == [
        (2, "1c.2g.12gb", 0, False), (2, "2g.12gb", 1, True), (3, "1g.6gb", 0, True),
    ]
    assert [(a["instances_free"], a["instances_total"], a["sm_count"], a["copy_engines"]) for a in attrs] == [
        (0, 2, 14, 2), (0, 1, 28, 2), (0, 1, 14, 1),
    ]
    assert all("memory_gib" not in a for a in attrs)


def test_three_digit_sm_count_still_reads() -> None:
    row = _parse(GH200).filter(pl.col("line") == 24)
    attrs = json.loads(row["attrs"][0])
    assert (attrs["mig_profile"], attrs["sm_count"], attrs["memory_gib"], attrs["copy_engines"]) == ("7g.96gb", 132, 93.0, 8)
    assert row["n_lines"][0] == 2


def test_cgi_answers_name_their_gpu_instance_and_failures_are_errors() -> None:
    events = _parse(GH200).filter(pl.col("line") >= 27).sort("line")
    assert events["severity"].to_list()[:4] == ["error"] * 4
    assert events["gpu_index"].to_list() == [0, None, 0, None, 0, 0, 0, 0, 0, 0]
    refused = json.loads(events["attrs"][2])
    assert refused == {"mig_profile_id": 20, "reason": "Insufficient Resources"}
    made = [json.loads(a) for a in events["attrs"][4:6]]
    assert made == [{"mig_profile": "1g.24gb", "mig_profile_id": 15, "gi": 5},
                    {"mig_profile": "1g.24gb", "mig_profile_id": 7, "gi": 5, "ci": 0}]
    assert events["severity"][4] is None


def test_destroyed_instance_answer_reads_from_gpu() -> None:
    box = fixture_path(GH200).read_text(encoding="utf-8").splitlines()[:8]  # a -lgip box, then the answer
    text = "\n".join([*box, "Successfully destroyed GPU instance ID  1 from GPU  2"]) + "\n"
    event = rca.parse_text(text, file="nvidia_smi_x.txt").filter(pl.col("line") == 9)
    assert event["gpu_index"][0] == 2
    assert json.loads(event["attrs"][0]) == {"gi": 1}


_PROFILE = st.tuples(
    st.integers(0, 15), st.sampled_from(["1g.10gb", "2g.20gb+me", "7g.80gb", "1g.23gb"]), st.integers(0, 99),
    st.integers(0, 7), st.integers(1, 7), st.integers(1, 9999).map(lambda n: n / 100), st.integers(1, 999),
    st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(0, 9)), st.integers(1, 4),
)


@settings(deadline=None, max_examples=30)  # a parse pays a first-call warm-up; the machine is shared
@given(st.lists(_PROFILE, min_size=1, max_size=5))
def test_lgip_rows_of_any_width_read_back(profiles: list) -> None:
    """However wide the values make the columns, each profile's fields read back as printed."""
    rows = ["+" + "-" * 77 + "+", "| GPU instance profiles:" + " " * 54 + "|",
            "| GPU   Name             ID    Instances   Memory     P2P    SM    DEC   ENC  |",
            "|                              Free/Total   GiB              CE    JPEG  OFA  |", "|" + "=" * 77 + "|"]
    for gpu, name, pid, free, total, mem, sm, (dec, ce, jpg), gap in profiles:
        pad = " " * gap
        rows.append(f"| {gpu:3d}  MIG {name:<13}{pad}{pid:3d}{pad}{free}/{total}{pad}{mem:.2f}{pad}No{pad}{sm}{pad}{dec}{pad}0   |")
        rows.append(f"|{' ' * 50}{ce}{pad}{jpg}{pad}0   |")
        rows.append("+" + "-" * 77 + "+")
    events = rca.parse_text("\n".join(rows) + "\n", file="nvidia_smi_x.txt")
    assert events["n_lines"].to_list() == [2] * len(profiles)
    got = [json.loads(a) for a in events["attrs"]]
    want = [(gpu, name, pid, free, total, round(mem, 2), sm, dec, ce, jpg) for gpu, name, pid, free, total, mem, sm, (dec, ce, jpg), _ in profiles]
    assert [(g, a["mig_profile"], a["mig_profile_id"], a["instances_free"], a["instances_total"], a["memory_gib"], a["sm_count"],
             a["decoders"], a["copy_engines"], a["jpg"]) for g, a in zip(events["gpu_index"], got, strict=True)] == want
