"""text-generation-inference's launcher names the shard it lost by rank; the event carries it."""

from __future__ import annotations

import json

import rca
from tests.conftest import fixture_path


def _ranks(name: str) -> dict[int, int | None]:
    events = rca.parse_text(fixture_path(name).read_text(), file=name).to_dicts()
    return {e["line"]: (json.loads(e["attrs"]) if e["attrs"] else {}).get("rank") for e in events}


def test_shard_failed_to_start_and_shard_terminated_name_their_rank() -> None:
    ranks = _ranks("pytorch_tgi_valueerror_num_heads_shard_terminated_rank1_01.log")
    assert ranks[15] == 0  # "Shard 0 failed to start"
    assert ranks[17] == 1  # "Shard terminated rank=1"
    assert ranks[16] is None and ranks[18] is None


def test_a_line_that_only_mentions_shards_has_no_rank() -> None:
    text = "2023-12-16T09:36:24.632149Z  INFO text_generation_launcher: Sharding model on 2 processes\n"
    (event,) = rca.parse_text(text, file="x.log").to_dicts()
    assert not event["attrs"] or "rank" not in json.loads(event["attrs"])
