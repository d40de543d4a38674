"""Files that hold only what nvidia-smi's MIG commands answer: ``-mig 1``, ``mig -lgipp``, ``-cgi -C``, ``-dci``, ``-dgi``.

No header, table border or CSV row opens such a file (a MIG setup script's log, a notes page's console blocks):
its wordings alone must claim it for nvidia_smi, and each answer names its GPU (index, or bus id for ``-mig``).
"""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca import sources
from tests.conftest import fixture_path, head_lines

A100 = "nvidia_smi_mig_cgi_cci_answers_only_a100_01.txt"
H100 = "nvidia_smi_mig_lgipp_cgi_dci_dgi_h100_notes_01.txt"


def _parse(name: str) -> pl.DataFrame:
    return rca.parse_text(fixture_path(name).read_text(encoding="utf-8"), file=name)


def _attrs(events: pl.DataFrame, line: int) -> dict:
    return json.loads(events.filter(pl.col("line") == line)["attrs"][0])


def test_answer_only_files_are_sniffed_as_nvidia_smi() -> None:
    for name in (A100, H100):
        source, _ = sources.sniff(head_lines(fixture_path(name)))
        assert source is not None and source.name == "nvidia_smi"


def test_each_answer_alone_is_enough_to_sniff() -> None:
    lines = fixture_path(H100).read_text(encoding="utf-8").splitlines()
    for one in (lines[2:9], lines[9:11], lines[23:30], lines[30:37]):  # -lgipp, -cgi -C, -dci, -dgi
        source, _ = sources.sniff(one)
        assert source is not None and source.name == "nvidia_smi", one[0]


def test_a_prose_line_about_mig_is_not_nvidia_smi() -> None:
    source, _ = sources.sniff(["We enabled MIG mode for GPU 0 and created a GPU instance on it."])
    assert source is None or source.name != "nvidia_smi"


def test_mig_mode_answer_names_the_gpu_bus() -> None:
    events = _parse(H100)
    assert events.filter(pl.col("line").is_in([1, 38]))["pci_bus"].to_list() == ["00000000:16:00.0"] * 2
    assert _parse(A100).filter(pl.col("line") == 1)["pci_bus"].to_list() == ["00000000:10:1C.0"]


def test_lgipp_placements_give_profile_starts_and_size() -> None:
    events = _parse(H100)
    assert _attrs(events, 3) == {"mig_profile_id": 19, "mig_placements": "0,1,2,3,4,5,6", "mig_placement_size": 1}
    # A profile with a single start says "Placement :".
    assert _attrs(events, 9) == {"mig_profile_id": 0, "mig_placements": "0", "mig_placement_size": 8}
    assert events.filter(pl.col("line").is_between(3, 9))["gpu_index"].to_list() == [0] * 7


def test_create_and_destroy_answers_keep_instance_ids() -> None:
    events = _parse(H100)
    assert _attrs(events, 10) == {"mig_profile": "1g.10gb", "mig_profile_id": 19, "gi": 13}
    assert _attrs(events, 11) == {"mig_profile": "1g.10gb", "mig_profile_id": 0, "gi": 13, "ci": 0}
    assert _attrs(events, 30) == {"gi": 13, "ci": 0}
    assert _attrs(events, 37) == {"gi": 13}
    a100 = _parse(A100)
    assert a100.filter(pl.col("line").is_between(3, 13))["gpu_index"].to_list() == [0] * 11
    assert [_attrs(a100, line)["gi"] for line in range(3, 10)] == [9, 7, 8, 11, 12, 13, 14]


@settings(max_examples=30, deadline=None)
@given(
    gpu=st.integers(0, 15),
    profile=st.integers(0, 99),
    starts=st.lists(st.integers(0, 7), min_size=1, max_size=7, unique=True),
    size=st.integers(1, 8),
)
def test_placement_line_shape(gpu: int, profile: int, starts: list[int], size: int) -> None:
    # nvidia-smi pads the GPU index and the profile id to two columns, and says "Placement :" for one start.
    word = "Placements:" if len(starts) > 1 else "Placement :"
    line = f"GPU {gpu:2d} Profile ID {profile:2d} {word} {{{','.join(map(str, starts))}}}:{size}"
    events = rca.parse_text(line + "\n", file="lgipp.txt")
    assert events["source"].to_list() == ["nvidia_smi"]
    assert events["gpu_index"].to_list() == [gpu]
    assert json.loads(events["attrs"][0]) == {
        "mig_profile_id": profile, "mig_placements": ",".join(map(str, starts)), "mig_placement_size": size,
    }
