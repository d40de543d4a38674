"""Inputs that once broke a parser, or would if it were written the obvious way; each stays here once fixed."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from hostile_inputs import accounting, event_problems, reconciles

from rca import sources
from rca.ingest import parse_lines
from rca.sources import ParseContext, lines_frame


def _nested_aliases(levels: int) -> str:
    """A "billion laughs" document: ``levels`` lines of nine aliases each expand to 9**levels strings."""
    rows = ['- a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    rows += [f"  a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 9) + "]" for n in range(1, levels)]
    return "apiVersion: v1\nkind: List\nitems:\n" + "\n".join(rows) + "\n"


def test_a_yaml_alias_bomb_is_read_as_lines_not_expanded() -> None:
    # Found by review of the k8s object reader: an item without a kind was summarised with json.dumps, which
    # walked every alias (9 such lines took 9 s and 0.8 GB, each further line nine times that). Aliases are now
    # refused, kubectl writes none, so the document is read line by line; 4 levels show it without the cost.
    text = _nested_aliases(4)
    lines = lines_frame(text)
    events, skipped = parse_lines(lines, ParseContext(file="bomb.yaml"), sources.get("k8s"))
    assert reconciles(accounting(lines.height, events, skipped))
    assert event_problems(events, lines.height) == []
    assert int(events["message"].str.len_chars().max()) <= max(len(line) for line in text.splitlines())


def test_kubectl_yaml_without_aliases_is_still_read_as_objects() -> None:
    text = Path(__file__).resolve().parents[1].joinpath("data", "k8s", "kubectl_get_pod_oomkilled.yaml").read_text()
    events, _ = parse_lines(lines_frame(text), ParseContext(file="pod.yaml"), sources.get("k8s"))
    assert events.filter(pl.col("kind") == "container_oomkilled").height >= 1


def test_xml_entity_expansion_in_nvidia_smi_xml_is_not_expanded() -> None:
    entities = ['<!ENTITY e0 "lollollollollollollollollollol">']
    entities += [f'<!ENTITY e{n} "' + f"&e{n - 1};" * 10 + '">' for n in range(1, 10)]
    text = "\n".join([
        '<?xml version="1.0" ?>', "<!DOCTYPE nvidia_smi_log [", *entities, "]>", "<nvidia_smi_log>",
        '<gpu id="00000000:3B:00.0">', "<product_name>&e9;</product_name>", "<uuid>GPU-1</uuid>", "</gpu>", "</nvidia_smi_log>",
    ])
    lines = lines_frame(text)
    events, skipped = parse_lines(lines, ParseContext(file="q.xml"), sources.get("nvidia_smi"))
    assert reconciles(accounting(lines.height, events, skipped))
    assert event_problems(events, lines.height) == []
    assert "lollol" not in "".join(events["attrs"].drop_nulls().to_list() + events["message"].drop_nulls().to_list())


def test_xml_external_entities_are_not_fetched(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    text = "\n".join([
        '<?xml version="1.0" ?>', f'<!DOCTYPE nvidia_smi_log [<!ENTITY x SYSTEM "file://{secret}">]>', "<nvidia_smi_log>",
        '<gpu id="00000000:3B:00.0">', "<product_name>&x;</product_name>", "</gpu>", "</nvidia_smi_log>",
    ])
    events, _ = parse_lines(lines_frame(text), ParseContext(file="q.xml"), sources.get("nvidia_smi"))
    assert "TOP-SECRET" not in "".join(events["attrs"].drop_nulls().to_list() + events["message"].drop_nulls().to_list())


def test_a_syslog_pid_past_int64_is_null_not_an_error_for_the_batch() -> None:
    # Found by the property tests (test_hostile_bytes_through_the_file_path[syslog]): the strict cast of the
    # program's pid raised for the whole batch, and parse_file let it escape, ending the ingest run.
    text = "Dec  1 03:17:05 gpu-node-1 trainer[9223372036854775808]: step 7 done\nDec  1 03:17:06 gpu-node-1 trainer[4242]: step 8 done\n"
    lines = lines_frame(text)
    events, skipped = parse_lines(lines, ParseContext(file="syslog", year=2026), sources.get("syslog"))
    assert events.select("pid", "message").rows() == [(None, "step 7 done"), (4242, "step 8 done")]
    assert reconciles(accounting(lines.height, events, skipped))


def test_a_lines_frame_made_of_concatenated_pieces_parses_like_one_piece() -> None:
    # Found while batching files: polars 2.1 panicked ("assertion failed: i < self.len()") in the kernel
    # parser on these two dmesg files concatenated without a rechunk; parse_lines now makes one chunk.
    data = Path(__file__).resolve().parents[1] / "data" / "kernel"
    texts = [(data / name).read_text() for name in ("dmesg_oom_invoked_python_01.log", "dmesg_xid_119_ctime_01.log")]
    pieces = pl.concat([lines_frame(text) for text in texts], rechunk=False).with_columns(line=pl.int_range(1, pl.len() + 1))
    ctx = ParseContext(file="dmesg.log", year=2023)
    events, _ = parse_lines(pieces, ctx, sources.get("kernel"))
    whole, _ = parse_lines(lines_frame("".join(texts)), ctx, sources.get("kernel"))
    assert events.equals(whole)
    assert events.filter(pl.col("kind") == "xid")["xid"].to_list() == [119] * 7
