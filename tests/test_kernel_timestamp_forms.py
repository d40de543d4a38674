"""Kernel lines in the timestamp forms real hosts write: each form's stamp, host and Xid facts are read."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

import rca

REFERENCE = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
XID_TEXT = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus."
AT_STAMP = datetime(2026, 1, 5, 10, 11, 12, 123456, tzinfo=UTC)

# (line prefix, ts, ts_quality, host, boot_seconds): synthetic lines, one per form
FORMS = [
    ("2026-01-05T10:11:12.123456+00:00 gpu-node-1 kernel: ", AT_STAMP, "exact", "gpu-node-1", None),  # rsyslog RFC 3339
    ("2026-01-05T10:11:12.123456+0000 gpu-node-1 kernel: ", AT_STAMP, "exact", "gpu-node-1", None),  # short-iso-precise
    ("Jan 05 10:11:12.123456 gpu-node-1 kernel: ", AT_STAMP, "year_from_mtime", "gpu-node-1", None),  # short-precise
    ("[  123.456789] gpu-node-1 kernel: ", None, "boot_relative", "gpu-node-1", 123.456789),  # short-monotonic
    ("[Mon Jan  5 10:11:12 2026] ", AT_STAMP.replace(microsecond=0), "exact", None, None),  # dmesg -T
]


def _events(text: str, file: str = "dmesg_forms.log") -> pl.DataFrame:
    return rca.parse_text(text, file=file, reference_time=REFERENCE)


@pytest.mark.parametrize(("prefix", "ts", "quality", "host", "boot_seconds"), FORMS, ids=[f[2] + str(i) for i, f in enumerate(FORMS)])
def test_xid_line_in_each_form_keeps_its_stamp_and_facts(prefix, ts, quality, host, boot_seconds) -> None:
    row = _events(prefix + XID_TEXT + "\n").row(0, named=True)
    assert (row["kind"], row["xid"], row["pid"], row["process"], row["pci_bus"]) == ("xid", 79, 1234, "python3", "0000:3b:00")
    assert (row["ts"], row["ts_quality"], row["host"], row["boot_seconds"]) == (ts, quality, host, boot_seconds)


def test_decoded_iso_sxid_line_keeps_comma_microseconds_and_stays_out_of_xid() -> None:
    line = (
        "kern  :err   : 2025-01-25T10:34:54,859532+00:00 nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, "
        "Data {0x000001c0, 0x00bd5c8a, 0x00000500, 0x00000064, 0x00000000, 0x40008000, 0x5a001100, 0x00000000, 0x00000000}\n"
    )
    row = _events(line).row(0, named=True)
    assert row["ts"] == datetime(2025, 1, 25, 10, 34, 54, 859532, tzinfo=UTC)
    assert (row["ts_quality"], row["format"], row["severity"]) == ("exact", "dmesg_iso", "error")
    assert (row["xid"], row["pci_bus"], row["attrs"]) == (None, "0000:84:00.0", '{"sxid":12028}')
