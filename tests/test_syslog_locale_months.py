"""Journal and syslog lines whose month is another locale's (strftime's %b follows LC_TIME).

The month names below are glibc's localedata "abmon" strings, as written there (capitals, trailing dots); the lines built
from them follow journalctl's short format. The Turkish journal is a real sample
(tests/data/syslog/journal_podman_quadlet_died_ellipsized_tr_month_01.log, containers/quadlet issue #38).
"""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

import rca
from rca import timeutil
from tests.conftest import DATA, FIXED_MTIME

GLIBC_ABMON = {
    "tr_TR": "Oca Şub Mar Nis May Haz Tem Ağu Eyl Eki Kas Ara",
    "de_DE": "Jan Feb Mär Apr Mai Jun Jul Aug Sep Okt Nov Dez",
    "de_AT": "Jän Feb Mär Apr Mai Jun Jul Aug Sep Okt Nov Dez",
    "fr_FR": "janv. févr. mars avril mai juin juil. août sept. oct. nov. déc.",
    "fr_CA": "jan fév mar avr mai jun jui aoû sep oct nov déc",
    "es_ES": "ene feb mar abr may jun jul ago sep oct nov dic",
    "pt_BR": "jan fev mar abr mai jun jul ago set out nov dez",
    "it_IT": "gen feb mar apr mag giu lug ago set ott nov dic",
    "nl_NL": "jan feb mrt apr mei jun jul aug sep okt nov dec",
    "sv_SE": "jan feb mar apr maj jun jul aug sep okt nov dec",
    "nb_NO": "jan. feb. mars april mai juni juli aug. sep. okt. nov. des.",
    "fi_FI": "tammi helmi maalis huhti touko kesä heinä elo syys loka marras joulu",
    "pl_PL": "sty lut mar kwi maj cze lip sie wrz paź lis gru",
    "cs_CZ": "led úno bře dub kvě čen čec srp zář říj lis pro",
    "sk_SK": "jan feb mar apr máj jún júl aug sep okt nov dec",
    "hu_HU": "jan febr márc ápr máj jún júl aug szept okt nov dec",
    "ro_RO": "ian feb mar apr mai iun iul aug sep oct nov dec",
    "sl_SI": "jan feb mar apr maj jun jul avg sep okt nov dec",
    "lv_LV": "jan feb mar apr mai jūn jūl aug sep okt nov dec",
    "lt_LT": "saus. vas. kov. bal. geg. birž. liep. rugp. rugs. spal. lapkr. gruod.",
    "et_EE": "jaan veebr märts apr mai juuni juuli aug sept okt nov dets",
    "is_IS": "jan feb mar apr maí jún júl ágú sep okt nóv des",
    "ru_RU": "янв фев мар апр мая июн июл авг сен окт ноя дек",
    "uk_UA": "січ лют бер кві тра чер лип сер вер жов лис гру",
    "bg_BG": "яну фев мар апр май юни юли авг сеп окт ное дек",
    "sr_RS": "јан феб мар апр мај јун јул авг сеп окт нов дец",
    "el_GR": "Ιαν Φεβ Μαρ Απρ Μαΐ Ιουν Ιουλ Αυγ Σεπ Οκτ Νοε Δεκ",
    "el_GR (glibc < 2.27)": "Ιαν Φεβ Μάρ Απρ Μάι Ιούν Ιούλ Αύγ Σεπ Οκτ Νοέ Δεκ",
}


@pytest.mark.parametrize("locale", list(GLIBC_ABMON))
def test_every_month_of_the_locale_is_its_number(locale: str) -> None:
    names = pl.DataFrame({"mon": GLIBC_ABMON[locale].split()})
    assert names.select(timeutil.month_number(pl.col("mon"))).to_series().to_list() == list(range(1, 13))


def test_no_name_is_two_months() -> None:
    months: dict[str, set[int]] = {}
    for row in timeutil._LOCALE_MONTHS:
        assert len(row) == 12
        for number, name in enumerate(row, 1):
            months.setdefault(name, set()).add(number)
    assert {name: numbers for name, numbers in months.items() if len(numbers) > 1} == {}


def test_croatian_names_that_are_other_months_elsewhere_stay_unread() -> None:
    # hr_HR: "lip" is June, "srp" July, "lis" October; Polish "lip" is July, Czech "srp" August, "lis" November.
    names = pl.DataFrame({"mon": ["lip", "srp", "lis", "sij", "velj", "Foo", "Started"]})
    assert names.select(timeutil.month_number(pl.col("mon"))).to_series().to_list() == [7, 8, 11, None, None, None, None]


@pytest.mark.parametrize(
    ("stamp", "month"),
    [("Ara 01", 12), ("Şub 14", 2), ("Dez 01", 12), ("déc. 01", 12), ("dic 01", 12), ("říj 01", 10), ("Μαΐ 01", 5),
     ("січ 01", 1), ("maalis 01", 3), ("szept 01", 9), ("gruod. 01", 12)],
)
def test_journal_line_in_the_locale_keeps_its_time(stamp: str, month: int) -> None:
    text = f"{stamp} 03:17:05 node1 systemd[1]: Started Session 12 of user core.\n"
    events = rca.parse_text(text, file="syslog", year=2025)
    day = int(stamp.split()[1])
    assert events.select("source", "host", "process", "pid", "ts", "ts_raw").row(0) == (
        "syslog", "node1", "systemd", 1, datetime(2025, month, day, 3, 17, 5, tzinfo=UTC), f"{stamp} 03:17:05"
    )


def test_turkish_kernel_xid_keeps_its_time() -> None:
    text = "Ara 25 19:09:01 gpu-a100-07 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.\n"
    events = rca.parse_text(text, file="syslog", year=2025)
    assert (events["kind"][0], events["ts"][0], events["host"][0]) == ("xid", datetime(2025, 12, 25, 19, 9, 1, tzinfo=UTC), "gpu-a100-07")


def test_german_kubelet_journal_keeps_its_time() -> None:
    text = "Mär 03 10:02:11 node kubelet[2480]: I0303 10:02:11.402117    2480 kubelet.go:2404] SyncLoop (ADD, \"api\"): \"\"\n"
    events = rca.parse_text(text, file="syslog", year=2025)
    assert (events["process"][0], events["pid"][0], events["ts"][0]) == ("kubelet", 2480, datetime(2025, 3, 3, 10, 2, 11, 402117, tzinfo=UTC))


def test_an_unknown_word_frames_the_line_without_a_time() -> None:
    text = "Foo 01 03:17:05 node1 systemd[1]: Started Session 12 of user core.\n"
    events = rca.parse_text(text, file="syslog", year=2025)
    assert (events["host"][0], events["process"][0], events["ts"][0]) == ("node1", "systemd", None)


def test_real_turkish_journal_reads_haz_as_june() -> None:
    name = "journal_podman_quadlet_died_ellipsized_tr_month_01.log"
    events = rca.parse_text((DATA / "syslog" / name).read_text(), file=name, reference_time=FIXED_MTIME)
    # podman's "+0300" stamps tell the journal's zone: 16:50:48 local is 13:50:48 UTC, the year from those stamps.
    assert events.select("line", "ts", "ts_quality").rows() == [
        (line, datetime(2022, 6, 4, 13, 50, 48, tzinfo=UTC), quality)
        for line, quality in [(1, "year_inferred"), (2, "year_inferred"), (3, "year_inferred"), (4, "year_inferred"), (5, "exact"), (6, "exact")]
    ]


def test_a_six_letter_word_that_names_no_month_frames_no_line() -> None:
    # (Only the table's six-letter names widen the month's word: a job's numbered worker stays the job's text, whole.)
    text = "Worker 3 12:00:01 node1 train[12]: loss 0.5\nWorker 3 12:00:02 node1 train[12]: loss 0.4\n"
    events = rca.parse_text(text, file="train.log")
    assert events.select("source", "message").rows() == [("pipeline", line) for line in text.splitlines()]
