"""IMEX output that opens with lines of another writer: the banner claims it for ``fabric_log``.

The DRA driver's compute-domain daemon echoes its nodes_config.cfg (a path and one address a line)
before IMEX writes its banner and first header, so the headers alone are a minority of the file.
"""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import rca
from rca import sources
from rca.sources import fabric_log
from tests.conftest import DATA, head_lines

SAMPLE = DATA / "fabric" / "nvidia_imex_dra_nodes_config_echo_570_01.log"
BANNER = "IMEX Log initializing at: 3/26/2025 16:41:27.217"
HEADER = "[Mar 26 2025 16:41:27] [INFO] [tid 40] IMEX version 570.124.06 is running with the following configuration options"


def _events(text: str) -> pl.DataFrame:
    return rca.parse_text(text, file="imex.log", reference_time=datetime(2026, 1, 1, tzinfo=UTC))


def test_the_echoed_config_before_the_banner_is_imex_output() -> None:
    source, score = sources.sniff(head_lines(SAMPLE))
    assert (source.name, score) == ("fabric_log", 0.6)
    events = _events(SAMPLE.read_text())
    assert events["source"].unique().to_list() == ["syslog"]
    assert events["process"].unique().to_list() == ["nvidia-imex"]
    assert events["ts"].is_null().to_list() == [True, True, True, True, False]
    header = events.row(4, named=True)
    assert (header["ts"], header["severity"]) == (datetime(2025, 3, 26, 16, 41, 27, tzinfo=UTC), "info")


def test_a_banner_without_any_header_is_not_claimed() -> None:
    assert fabric_log.sniff(["/etc/nvidia-imex/nodes_config.cfg:", "10.0.0.1", BANNER]) == 0.0


@settings(max_examples=10)
@given(addresses=st.lists(st.ip_addresses(v=4).map(str), min_size=1, max_size=20))
def test_any_number_of_echoed_addresses_keeps_the_file_imex(addresses: list[str]) -> None:
    head = ["/etc/nvidia-imex/nodes_config.cfg:", *addresses, BANNER, HEADER]
    assert fabric_log.sniff(head) >= 0.6
    events = _events("\n".join(head) + "\n")
    assert events.height == len(head)
    assert events.filter(pl.col("ts").is_not_null())["line"].to_list() == [len(head)]
    assert events["process"].unique().to_list() == ["nvidia-imex"]
