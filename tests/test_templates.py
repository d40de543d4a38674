"""Template masks, id stability and grouping accuracy on the Loghub-2k samples."""

from __future__ import annotations

import hashlib

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.templates import PUBLISHED_DRAIN_GA, grouping_accuracy, load_dataset
from rca import templates
from rca.templates import MASKS, mask, shape, template_ids

# One real line per mask (Loghub Linux/BGL, tests/data/real_logs) and its masked form.
MASK_CASES = {
    "DATETIME": (
        "User unknown timed out after 900 seconds at Sat Jun 18 02:23:10 2005",
        "User unknown timed out after <NUM> seconds at <DATETIME>",
    ),
    "UUID": (
        "'nvidia.com/gpu' device marked unhealthy: GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8",
        "'nvidia.com/gpu' device marked unhealthy: GPU-<UUID>",
    ),
    "URL": (
        "See documentation for Memory Management (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
        "See documentation for Memory Management (<URL>)",
    ),
    "MAC": (
        "New ido chip inserted into the database: FF:F2:9F:15:1F:72:00:0D:60:EA:E0:8D ip=10.7.0.13 v=9 t=2",
        "New ido chip inserted into the database: <MAC> ip=<IP> v=<NUM> t=<NUM>",
    ),
    "PCI": (
        "NVRM: Xid (PCI:0000:01:00): 13, Graphics Exception: Class 0x0 Subchannel 0x0 Mismatch",
        "NVRM: Xid (PCI:<PCI>): <NUM>, Graphics Exception: Class <HEX> Subchannel <HEX> Mismatch",
    ),
    "IP": ("Received SNMP packet(s) from 67.170.148.126", "Received SNMP packet(s) from <IP>"),
    "PATH": (
        "ciod: Error loading /home/draeger/testQboxhang-nozerobytebug-nosleepyescomm: invalid or missing program image",
        "ciod: Error loading <PATH>: invalid or missing program image",
    ),
    "PROCESS": (
        "oom_reaper: reaped process 63214 (uwsgi), now anon-rss:0kB, file-rss:0kB, shmem-rss:92kB",
        "oom_reaper: reaped process <NUM> (<PROCESS>), now anon-rss:<NUM>, file-rss:<NUM>, shmem-rss:<NUM>",
    ),
    "POD": ("Name:           treetracker-pgpool-598947fd8f-vzvkq", "Name: <POD>"),
    "HEX": ("CE sym 2, at 0x0b85eee0, mask 0x05", "CE sym <NUM>, at <HEX>, mask <HEX>"),
    "USER": ("session opened for user cyrus by (uid=0)", "session opened for user <USER> by (uid=<NUM>)"),
    "NAME": (
        "authentication failure; logname= uid=0 euid=0 tty=NODEVssh ruser= rhost=massive.merukuru.org  user=root",
        "authentication failure; logname=<EMPTY_VALUE> uid=<NUM> euid=<NUM> tty=NODEVssh ruser=<EMPTY_VALUE> rhost=<NAME> user=<NAME>",
    ),
    "NUM": ("Lustre mount FAILED : bglio78 : block_id : location", "Lustre mount FAILED : <NUM> : block_id : location"),
    "VALUE": (
        "eviction manager: observations: signal=memory.available, available: 60489772Ki, capacity: 65973468Ki",
        "eviction manager: observations: signal=<VALUE>, available: <NUM>, capacity: <NUM>",
    ),
    "EMPTY": (
        "connection from 222.33.90.199 () at Mon Jun 20 03:40:59 2005",
        "connection from <IP> (<EMPTY>) at <DATETIME>",
    ),
    "EMPTY_VALUE": (
        "authentication failure; logname= uid=0 euid=0 tty=:0 ruser= rhost=",
        "authentication failure; logname=<EMPTY_VALUE> uid=<NUM> euid=<NUM> tty=:<NUM> ruser=<EMPTY_VALUE> rhost=<EMPTY_VALUE>",
    ),
}

# Pairs of real lines of one shape each: same id within a pair, different ids across pairs.
SAME_SHAPE = [
    ("generating core.2275", "generating core.12"),
    ("session opened for user cyrus by (uid=0)", "session opened for user news by (uid=0)"),
    (
        "connection from 222.33.90.199 () at Mon Jun 20 03:40:59 2005",
        "connection from 24.54.76.216 (24-54-76-216.bflony.adelphia.net) at Fri Jun 17 07:07:00 2005",
    ),
    (
        "authentication failure; logname= uid=0 euid=0 tty=NODEVssh ruser= rhost=218.188.2.4",
        "authentication failure; logname= uid=0 euid=0 tty=NODEVssh ruser= rhost=massive.merukuru.org",
    ),
    ("program interrupt: fp cr update.............0", "program interrupt: fp cr update.............1"),
    (
        "Memory cgroup out of memory: Killed process 5740 (pause) total-vm:1028kB, anon-rss:4kB, file-rss:0kB, shmem-rss:0kB",
        "Memory cgroup out of memory: Killed process 18524 (cdi-importer) total-vm:2701352kB, anon-rss:23032kB, file-rss:0kB, "
        "shmem-rss:0kB",
    ),
    ("Reason=OOMKilled exit_code=137", "Reason=OOMKilled exit_code=1"),
    ("Reason=Evicted exit_code=137", "Reason=Evicted exit_code=0"),
]


def masked(text: str) -> str:
    return pl.select(mask(pl.lit(text))).item()


def test_every_mask_has_a_case() -> None:
    assert sorted(MASK_CASES) == sorted(name for name, _ in MASKS)


@pytest.mark.parametrize("name", sorted(MASK_CASES))
def test_mask_on_a_real_line(name: str) -> None:
    text, expected = MASK_CASES[name]
    assert masked(text) == expected


def test_shape_reads_every_placeholder_as_a_wildcard() -> None:
    text = "connection from 222.33.90.199 () at Mon Jun 20 03:40:59 2005"
    assert pl.select(shape(pl.lit(text))).item() == "connection from <*> (<*>) at <*>"


def test_id_is_the_blake2b_of_the_shape() -> None:
    expected = hashlib.blake2b(b"generating <*>", digest_size=8).hexdigest()
    assert template_ids(pl.Series(["generating core.2275"])).to_list() == [expected]


def test_same_text_same_id_across_separate_calls_and_batches() -> None:
    lines = [line for pair in SAME_SHAPE for line in pair]
    whole = template_ids(pl.Series(lines)).to_list()
    one_by_one = [template_ids(pl.Series([line])).item() for line in lines]
    reversed_batch = template_ids(pl.Series(lines[::-1])).to_list()[::-1]
    assert whole == one_by_one == reversed_batch


def test_same_shape_shares_an_id_and_shapes_differ_across_pairs() -> None:
    ids = template_ids(pl.Series([line for pair in SAME_SHAPE for line in pair])).to_list()
    pair_ids = list(zip(ids[::2], ids[1::2], strict=True))
    assert all(first == second for first, second in pair_ids)
    assert len({first for first, _ in pair_ids}) == len(SAME_SHAPE)


def test_nulls_and_whitespace_runs() -> None:
    ids = template_ids(pl.Series(["check pass;  user unknown", None, "check pass; user unknown", ""])).to_list()
    assert ids[0] == ids[2]
    assert ids[1] == ids[3]
    assert template_ids(pl.Series([], dtype=pl.String)).len() == 0


def test_grouping_accuracy_definition() -> None:
    truth = pl.Series(["a", "a", "b", "b", "c"])
    predicted = pl.Series([1, 1, 2, 3, 4])
    assert grouping_accuracy(truth, predicted) == pytest.approx(3 / 5)


@pytest.mark.parametrize("dataset", sorted(PUBLISHED_DRAIN_GA))
def test_grouping_accuracy_beats_published_drain(dataset: str) -> None:
    frame = load_dataset(dataset)
    accuracy = grouping_accuracy(frame["EventId"], template_ids(frame["Content"]))
    assert accuracy > PUBLISHED_DRAIN_GA[dataset]


REAL_LINES = [text for text, _ in MASK_CASES.values()] + [line for pair in SAME_SHAPE for line in pair]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.one_of(st.none(), st.text(), st.sampled_from(REAL_LINES), st.tuples(st.sampled_from(REAL_LINES), st.text()).map("".join)),
        max_size=30,
    )
)
def test_template_ids_never_raise_and_give_one_id_per_input(messages: list[str | None]) -> None:
    ids = template_ids(pl.Series(messages, dtype=pl.String))
    assert ids.len() == len(messages)
    assert ids.null_count() == 0
    by_text: dict[str, str] = {}
    for message, template_id in zip(messages, ids.to_list(), strict=True):
        assert by_text.setdefault(message or "", template_id) == template_id


def test_ids_of_messages_shaped_before_are_the_ids_of_a_fresh_shaping(monkeypatch: pytest.MonkeyPatch) -> None:
    messages = pl.Series(["gpu 3 used 40506 MiB", "Killed process 42 (python)", None, "gpu 1 used 39122 MiB"])
    monkeypatch.setattr(templates, "_SHAPED_BEFORE", {})
    fresh = templates.template_ids(messages)
    assert len(templates._SHAPED_BEFORE) == 3  # the zeroed forms: both gpu lines are one
    again = templates.template_ids(pl.Series(["Killed process 7 (java)", "gpu 0 used 1 MiB"]))
    assert again.to_list() == [fresh[1], fresh[0]]
    assert fresh[0] == fresh[3] and fresh[2] == templates.template_ids(pl.Series([""]))[0]


def test_the_ids_remembered_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(templates, "_SHAPED_BEFORE", {})
    monkeypatch.setattr(templates, "_SHAPED_BEFORE_LIMIT", 3)
    templates.template_ids(pl.Series(["a x", "b x", "c x"]))
    ids = templates.template_ids(pl.Series(["d x", "a x"]))
    assert len(templates._SHAPED_BEFORE) <= 3
    assert ids[1] == templates.template_ids(pl.Series(["a x"]))[0]
