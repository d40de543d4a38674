"""Time resolution: years, zones, boot offsets and epoch magnitudes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import polars as pl
import pytest

import rca
from rca import timeutil
from rca.sources._base import ParseContext


def _resolve(frame: pl.DataFrame, ctx: ParseContext) -> list:
    ts, quality = timeutil.yearless_to_utc(timeutil.month_number(pl.col("mon")), pl.col("day"), pl.col("clock"), ctx)
    return frame.select(ts.alias("ts"), quality.alias("q")).rows()


def test_year_rolls_over_new_year_in_file_order() -> None:
    frame = pl.DataFrame({"mon": ["Dec", "Dec", "Jan"], "day": ["31", "31", " 1"], "clock": ["23:59:58", "23:59:59.5", "00:00:01"]})
    rows = _resolve(frame, ParseContext(file="f", year=2025))
    assert [r[0] for r in rows] == [
        datetime(2025, 12, 31, 23, 59, 58, tzinfo=UTC),
        datetime(2025, 12, 31, 23, 59, 59, 500000, tzinfo=UTC),
        datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC),
    ]
    assert {r[1] for r in rows} == {"year_inferred"}


def test_mtime_year_steps_back_for_lines_after_the_mtime() -> None:
    frame = pl.DataFrame({"mon": ["Dec", "Jan"], "day": ["30", "2"], "clock": ["10:00:00", "10:00:00"]})
    rows = _resolve(frame, ParseContext(file="f", reference_time=datetime(2026, 1, 3, tzinfo=UTC)))
    assert [r[0].year for r in rows] == [2025, 2026]
    assert rows[0][1] == "year_from_mtime"


def test_no_year_anywhere_leaves_time_unknown() -> None:
    rows = _resolve(pl.DataFrame({"mon": ["May"], "day": ["1"], "clock": ["10:00:00"]}), ParseContext(file="f"))
    assert rows == [(None, "missing")]


def test_the_lines_of_several_files_take_each_file_s_year_or_reference() -> None:
    frame = pl.DataFrame({
        "mon": ["Dec", "Jan", "Jan", "Dec", "May"], "day": ["31", "1", "1", "30", "1"], "clock": ["23:00:00"] * 5,
        "batch_file": [0, 0, 1, 2, 3],
    })
    mtime = datetime(2026, 1, 3, tzinfo=UTC)
    years = ((2025, "year_inferred", None), (2025, "year_inferred", None), (None, "year_from_mtime", mtime), (None, "year_from_mtime", None))
    ts, quality = timeutil.yearless_to_utc(
        timeutil.month_number(pl.col("mon")), pl.col("day"), pl.col("clock"), ParseContext(file="f", file_years=years), within="batch_file"
    )
    rows = frame.select(ts.alias("ts"), quality.alias("q")).rows()
    # file 0 rolls over into 2026; file 1 starts in January of its own year; file 2 steps back from its mtime
    assert [r[0].year if r[0] else None for r in rows] == [2025, 2026, 2025, 2025, None]
    assert [r[1] for r in rows] == ["year_inferred", "year_inferred", "year_inferred", "year_from_mtime", "missing"]
    alone = [_resolve(frame.filter(pl.col("batch_file") == n), ParseContext(file="f", year=y, year_quality=q, reference_time=r))
             for n, (y, q, r) in enumerate(years)]
    assert rows == [row for rows_of_file in alone for row in rows_of_file]


def test_the_reference_year_is_that_of_the_reference_s_own_zone() -> None:
    # 2026-01-01 03:00 at +05:00 is still 2025 in UTC: the file was written in 2026 where it was written.
    reference = datetime(2026, 1, 1, 3, 0, tzinfo=timezone(timedelta(hours=5)))
    frame = pl.DataFrame({"mon": ["Jan"], "day": ["1"], "clock": ["01:00:00"], "batch_file": [0]})
    alone = _resolve(frame, ParseContext(file="f", reference_time=reference))
    ts, _ = timeutil.yearless_to_utc(
        timeutil.month_number(pl.col("mon")), pl.col("day"), pl.col("clock"),
        ParseContext(file="f", file_years=((None, "year_from_mtime", reference), (2020, "year_inferred", None))), within="batch_file",
    )
    assert alone[0][0] == frame.select(ts).item() == datetime(2026, 1, 1, 1, 0, tzinfo=UTC)


def test_several_files_years_need_the_column_that_tells_the_files_apart() -> None:
    ctx = ParseContext(file="f", file_years=((2025, "year_inferred", None), (2024, "year_inferred", None)))
    with pytest.raises(ValueError, match="within="):
        timeutil.yearless_to_utc(pl.col("m"), pl.col("d"), pl.col("c"), ctx)


def test_localized_month_and_zone() -> None:
    frame = pl.DataFrame({"mon": ["янв"], "day": ["20"], "clock": ["00:20:07"]})
    rows = _resolve(frame, ParseContext(file="f", year=2018, tz="Europe/Moscow"))
    assert rows[0][0] == datetime(2018, 1, 19, 21, 20, 7, tzinfo=UTC)


def test_cjk_month_names_are_their_numbers() -> None:
    names = pl.DataFrame({"mon": ["12月", "1月", "03月", "11월", "Dec", "13月"]})
    assert names.select(timeutil.month_number(pl.col("mon"))).to_series().to_list() == [12, 1, 3, 11, 12, None]


def test_journal_in_a_chinese_locale_keeps_its_times() -> None:
    text = "12月 25 19:09:01 gpu-a100-07 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.\n"
    events = rca.parse_text(text, file="syslog", year=2025)
    assert (events["kind"][0], events["ts"][0], events["ts_raw"][0]) == ("xid", datetime(2025, 12, 25, 19, 9, 1, tzinfo=UTC), "12月 25 19:09:01")


def test_iso_forms() -> None:
    values = ["2024-03-25T14:41:34.123456789Z", "2025-03-06 12:04:09,913", "2021-08-21T10:38:36+08:00", "2026/07/14 08:12:53.500"]
    got = pl.DataFrame({"v": values}).select(timeutil.iso_to_utc(pl.col("v"), "UTC")).to_series().to_list()
    assert got == [
        datetime(2024, 3, 25, 14, 41, 34, 123456, tzinfo=UTC),
        datetime(2025, 3, 6, 12, 4, 9, 913000, tzinfo=UTC),
        datetime(2021, 8, 21, 2, 38, 36, tzinfo=UTC),
        datetime(2026, 7, 14, 8, 12, 53, 500000, tzinfo=UTC),
    ]


def test_epoch_magnitudes() -> None:
    got = pl.DataFrame({"v": ["1700000000", "1700000000123", "1700000000123456"]}).select(timeutil.epoch_to_utc(pl.col("v"))).to_series()
    assert got.dt.epoch("ms").to_list() == [1700000000000, 1700000000123, 1700000000123]


def test_boot_relative_needs_a_boot_time() -> None:
    frame = pl.DataFrame({"s": [1.5]})
    ts, quality = timeutil.boot_to_utc(pl.col("s"), ParseContext(file="f"))
    assert frame.select(ts.alias("ts"), quality.alias("q")).rows() == [(None, "boot_relative")]
    ts, quality = timeutil.boot_to_utc(pl.col("s"), ParseContext(file="f", boot_time=datetime(2026, 1, 1, tzinfo=UTC)))
    assert frame.select(ts.alias("ts"), quality.alias("q")).rows() == [(datetime(2026, 1, 1, 0, 0, 1, 500000, tzinfo=UTC), "boot_aligned")]


def test_iso_with_a_space_before_utc_and_airflow_s_comma_after_the_date() -> None:
    stamps = pl.DataFrame({"t": ["2022-11-09 09:59:40 UTC", "2022-11-09, 09:59:40 UTC", "2022-11-09T09:59:40 UTC"]})
    parsed = stamps.select(timeutil.iso_to_utc(pl.col("t"), "Asia/Tokyo")).to_series().to_list()
    assert parsed == [datetime(2022, 11, 9, 9, 59, 40, tzinfo=UTC)] * 3


def test_a_slashed_date_keeps_its_offset() -> None:
    # pingcap/log's stamp (TiDB, TiKV, Milvus: "[2023/01/15 23:08:42.416 +00:00] [DEBUG] …"), its offset with or without a colon.
    stamps = pl.DataFrame({"t": ["2023/01/15 23:08:42.416 +00:00", "2023/08/15 08:00:00.123 +08:00", "2023/08/15 08:00:00 -0530"]})
    parsed = stamps.select(timeutil.iso_to_utc(pl.col("t"), "Europe/Berlin")).to_series().to_list()
    assert parsed == [
        datetime(2023, 1, 15, 23, 8, 42, 416000, tzinfo=UTC), datetime(2023, 8, 15, 0, 0, 0, 123000, tzinfo=UTC), datetime(2023, 8, 15, 13, 30, tzinfo=UTC),
    ]


def test_zone_names_and_offsets_in_minutes_and_as_iso_text() -> None:
    zones = pl.DataFrame({"zone": ["+09", "-0530", "+05:30", "CET", "PDT", "UCT", "IST", "Europe/Paris"]})
    minutes = zones.select(timeutil.zone_minutes(pl.col("zone")).alias("m"))
    # IST is India's, Ireland's and Israel's: a name in doubt gives no offset (the stamp is read in --tz).
    assert minutes["m"].to_list() == [540, -330, 330, 60, -420, 0, None, None]
    assert minutes.select(timeutil.offset_text(pl.col("m")).alias("text"))["text"].to_list() == [
        "+09:00", "-05:30", "+05:30", "+01:00", "-07:00", "+00:00", None, None,
    ]
