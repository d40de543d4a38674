"""The only place that resolves time.

Every function returns polars expressions, so parsers convert whole columns at once.
Nothing here reads the clock: zone, year and boot time come from the ParseContext,
which the driver fills from options, the file's own dated lines and its mtime.
"""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from rca.sources._base import ParseContext, per_file

# Month abbreviations as syslog and journald print them: strftime's %b follows LC_TIME, so a journalctl or an rsyslog
# run under another locale writes that locale's month. Each row is one locale's twelve, January first, as glibc's
# localedata spells them ("abmon", and "ab_alt_mon" where it has one; older glibc's spelling where it changed), without a
# trailing dot: month_number strips it and lower-cases. A name two locales give different months is left out
# (Croatian's "lip", "srp", "lis" are June, July, October, but Polish July and Czech August and November).
_LOCALE_MONTHS = (
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),  # C, English
    ("янв", "фев", "мар", "апр", "май", "июн", "июл", "авг", "сен", "окт", "ноя", "дек"),  # ru_RU
    ("янв", "фев", "мар", "апр", "мая", "июня", "июля", "авг", "сен", "окт", "ноя", "дек"),  # ru_RU since glibc 2.27 (genitive "мая"), full genitives
    ("jan", "feb", "mär", "apr", "mai", "jun", "jul", "aug", "sep", "okt", "nov", "dez"),  # de_DE, de_CH
    ("jän", "feb", "mrz", "apr", "mai", "jun", "jul", "aug", "sep", "okt", "nov", "dez"),  # de_AT; "mrz" older de
    ("janv", "févr", "mars", "avril", "mai", "juin", "juil", "août", "sept", "oct", "nov", "déc"),  # fr_FR
    ("jan", "fév", "mar", "avr", "mai", "jun", "jui", "aoû", "sep", "oct", "nov", "déc"),  # fr_CA
    ("ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sep", "oct", "nov", "dic"),  # es_ES
    ("jan", "fev", "mar", "abr", "mai", "jun", "jul", "ago", "set", "out", "nov", "dez"),  # pt_PT, pt_BR
    ("gen", "feb", "mar", "apr", "mag", "giu", "lug", "ago", "set", "ott", "nov", "dic"),  # it_IT
    ("jan", "feb", "mrt", "apr", "mei", "jun", "jul", "aug", "sep", "okt", "nov", "dec"),  # nl_NL
    ("jan", "feb", "mar", "apr", "maj", "jun", "jul", "aug", "sep", "okt", "nov", "dec"),  # sv_SE, da_DK
    ("jan", "feb", "mars", "april", "mai", "juni", "juli", "aug", "sep", "okt", "nov", "des"),  # nb_NO, nn_NO
    ("tammi", "helmi", "maalis", "huhti", "touko", "kesä", "heinä", "elo", "syys", "loka", "marras", "joulu"),  # fi_FI
    ("sty", "lut", "mar", "kwi", "maj", "cze", "lip", "sie", "wrz", "paź", "lis", "gru"),  # pl_PL
    ("led", "úno", "bře", "dub", "kvě", "čen", "čec", "srp", "zář", "říj", "lis", "pro"),  # cs_CZ
    ("jan", "feb", "mar", "apr", "máj", "jún", "júl", "aug", "sep", "okt", "nov", "dec"),  # sk_SK
    ("jan", "febr", "márc", "ápr", "máj", "jún", "júl", "aug", "szept", "okt", "nov", "dec"),  # hu_HU
    ("ian", "feb", "mar", "apr", "mai", "iun", "iul", "aug", "sep", "oct", "nov", "dec"),  # ro_RO
    ("jan", "feb", "mar", "apr", "maj", "jun", "jul", "avg", "sep", "okt", "nov", "dec"),  # sl_SI, sr_RS@latin
    ("jan", "feb", "mar", "apr", "mai", "jūn", "jūl", "aug", "sep", "okt", "nov", "dec"),  # lv_LV
    ("saus", "vas", "kov", "bal", "geg", "birž", "liep", "rugp", "rugs", "spal", "lapkr", "gruod"),  # lt_LT
    ("jaan", "veebr", "märts", "apr", "mai", "juuni", "juuli", "aug", "sept", "okt", "nov", "dets"),  # et_EE
    ("jan", "feb", "mar", "apr", "maí", "jún", "júl", "ágú", "sep", "okt", "nóv", "des"),  # is_IS
    ("oca", "şub", "mar", "nis", "may", "haz", "tem", "ağu", "eyl", "eki", "kas", "ara"),  # tr_TR
    ("січ", "лют", "бер", "кві", "тра", "чер", "лип", "сер", "вер", "жов", "лис", "гру"),  # uk_UA
    ("яну", "фев", "мар", "апр", "май", "юни", "юли", "авг", "сеп", "окт", "ное", "дек"),  # bg_BG
    ("јан", "феб", "мар", "апр", "мај", "јун", "јул", "авг", "сеп", "окт", "нов", "дец"),  # sr_RS
    ("ιαν", "φεβ", "μαρ", "απρ", "μαΐ", "ιουν", "ιουλ", "αυγ", "σεπ", "οκτ", "νοε", "δεκ"),  # el_GR
    ("ιαν", "φεβ", "μάρ", "απρ", "μάι", "ιούν", "ιούλ", "αύγ", "σεπ", "οκτ", "νοέ", "δεκ"),  # el_GR before glibc 2.27
)
_MONTHS = {
    **{name: i for row in _LOCALE_MONTHS for i, name in enumerate(row, 1)},
    # Chinese and Japanese ("12月"), Korean ("12월"): the month's number and a sign
    **{f"{zero}{i}{sign}": i for i in range(1, 13) for sign in "月월" for zero in ("", "0") if not (zero and i > 9)},
}

# One word of three to five letters (Latin with its accents, Greek, Cyrillic) and a dot, a longer name of the table
# (Finnish's "maalis" and "marras"), or a CJK month. Any such word frames the line; month_number gives the month only to
# the names above. (Any six-letter word would frame a job's "Worker 3 12:00:01 node1 train[12]: …" as syslog.)
_LONG_NAMES = "|".join(f"[{name[0].upper()}{name[0]}]{name[1:]}" for name in sorted(_MONTHS) if len(name) > 5)
MONTH_NAME_PATTERN = rf"(?:[A-Za-zÀ-ſΆ-ώЀ-ӿ]{{3,5}}\.?|(?:{_LONG_NAMES})\.?|[0-9]{{1,2}}[月월])"

_CLOCK_FORMAT = "%Y-%m-%d %H:%M:%S%.f"

# %.f reads a fraction if there is one, so these also read the times written without.
# The slashed date with an offset: pingcap/log's "[2023/01/15 23:08:42.416 +00:00]" (TiDB, TiKV, Milvus).
_ISO_FORMATS_WITH_ZONE = ("%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%d %H:%M:%S%.f%z", "%Y/%m/%d %H:%M:%S%.f%z")
_ISO_FORMATS_NAIVE = ("%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y/%m/%d %H:%M:%S%.f")
# The shapes nearly every log prints (around any whitespace), and the one format each needs
# once ',' is '.' and ' ' is 'T'. Digits are ASCII as the formats read them: text with
# other digits fails every format, whichever path it takes.
_FRACTION = r"(?:[.,][0-9]{1,9})?"
_CLOCK = r"[0-9]{2}:[0-9]{2}:[0-9]{2}"
_DASHED_NAIVE = rf"^\s*[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}[T ]{_CLOCK}{_FRACTION}\s*$"
_DASHED_ZONED = rf"^\s*[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}[T ]{_CLOCK}{_FRACTION}(?:Z|[+-][0-9]{{2}}:?[0-9]{{2}})\s*$"
_SLASHED_NAIVE = rf"^\s*[0-9]{{4}}/[0-9]{{2}}/[0-9]{{2}} {_CLOCK}{_FRACTION}\s*$"
_ANY_SHAPE = "|".join((_DASHED_NAIVE, _DASHED_ZONED, _SLASHED_NAIVE))
_DASHED_NAIVE_FORMAT = "%Y-%m-%dT%H:%M:%S%.f"
_DASHED_ZONED_FORMAT = "%Y-%m-%dT%H:%M:%S%.f%#z"
_SLASHED_NAIVE_FORMAT = "%Y/%m/%d %H:%M:%S%.f"


def month_number(name: pl.Expr) -> pl.Expr:
    """Month number (1-12) of an abbreviated month name in any locale rca knows; null otherwise."""
    key = name.str.to_lowercase().str.strip_chars_end(".")
    return key.replace_strict(_MONTHS, default=None, return_dtype=pl.Int32)


def naive_to_utc(naive: pl.Expr, tz: str) -> pl.Expr:
    """Interpret a zone-less datetime expression in ``tz`` and convert it to UTC (µs)."""
    local = naive.cast(pl.Datetime("us")).dt.replace_time_zone(tz, ambiguous="earliest", non_existent="null")
    return local.dt.convert_time_zone("UTC")


def _clock_string(year: pl.Expr, month: pl.Expr, day: pl.Expr, clock: pl.Expr) -> pl.Expr:
    """'YYYY-MM-DD HH:MM:SS[.f]' from parts; the clock may carry a fraction of any length."""
    return pl.format(
        "{}-{}-{} {}",
        year.cast(pl.String),
        month.cast(pl.String).str.zfill(2),
        day.cast(pl.String).str.strip_chars().str.zfill(2),
        _fraction_to_micros(clock),
    )


def ctime_string(year: pl.Expr, month_name: pl.Expr, day: pl.Expr, clock: pl.Expr) -> pl.Expr:
    """'YYYY-MM-DD HH:MM:SS' from the parts of a C ctime ("Wed Nov 12 11:40:15 2025": dmesg -T, nvidia-smi, Snakemake)."""
    return _clock_string(year, month_number(month_name), day, clock)


def _fraction_to_micros(clock: pl.Expr) -> pl.Expr:
    # chrono's %.f accepts at most nanoseconds; klog and Go print up to 9 digits, some tools more.
    return clock.str.replace(r"^([0-9]{1,2}:[0-9][0-9]:[0-9][0-9](?:\.[0-9]{1,9})?)[0-9]*$", "$1")


def yearless_to_utc(
    month: pl.Expr, day: pl.Expr, clock: pl.Expr, ctx: ParseContext, *, within: str | None = None
) -> tuple[pl.Expr, pl.Expr]:
    """Resolve a time written without a year (syslog, journald short, klog).

    The year is ``ctx.year`` when known; a file that runs over New Year rolls over when
    the month goes backwards in file order (in the order of each ``within`` group: the
    files of a batch of several). Without ``ctx.year`` the year is that of
    ``ctx.reference_time`` (the file's mtime), and a line that would land more than a day
    after it belongs to the year before. Without either, the time stays unknown. With
    ``ctx.file_years`` each ``within`` group takes its own file's year or reference.
    Returns ``(ts, ts_quality)`` expressions.
    """
    year, quality, reference = _year_sources(ctx, within)
    missing = pl.lit(None, pl.Datetime("us", "UTC"))
    with_year = from_reference = missing
    if year is not None:
        months = month.cast(pl.Int32)
        before = months.forward_fill().shift(1)
        backwards = (months < (before.over(within) if within else before) - 5).fill_null(False).cast(pl.Int32).cum_sum()
        rolled = year + (backwards.over(within) if within else backwards)
        with_year = naive_to_utc(_clock_string(rolled, month, day, clock).str.to_datetime(_CLOCK_FORMAT, strict=False, time_unit="us"), ctx.tz)
    if reference is not None:
        reference_time, reference_year = reference
        this_year, last_year = (
            naive_to_utc(_clock_string(reference_year - back, month, day, clock).str.to_datetime(_CLOCK_FORMAT, strict=False, time_unit="us"), ctx.tz)
            for back in (0, 1)
        )
        from_reference = pl.when(this_year > reference_time + timedelta(days=1)).then(last_year).otherwise(this_year)
    if not ctx.file_years:
        return (with_year if year is not None else from_reference), quality
    return pl.when(year.is_not_null()).then(with_year).otherwise(from_reference), quality


def nearest_year_to_utc(month: pl.Expr, day: pl.Expr, clock: pl.Expr, near: pl.Expr, tz: str) -> pl.Expr:
    """A time written without a year (read in ``tz``), in the year that puts it nearest ``near``: a UTC time of the
    same moment that states its year, such as the exact envelope a journal puts around a program's own stamp."""
    year = near.dt.year()
    this, last, next_ = (
        naive_to_utc(_clock_string(year + shift, month, day, clock).str.to_datetime(_CLOCK_FORMAT, strict=False, time_unit="us"), tz)
        for shift in (0, -1, 1)
    )
    half_year = timedelta(days=183)
    return pl.when(this - near > half_year).then(last).when(near - this > half_year).then(next_).otherwise(this)


def _year_sources(ctx: ParseContext, within: str | None) -> tuple[pl.Expr | None, pl.Expr, tuple[pl.Expr, pl.Expr] | None]:
    """The year, its quality, and the reference time with its year (in its own zone), as expressions.

    Per ``within`` group from ``ctx.file_years``, else constants; None where there is none.
    """
    if ctx.file_years:
        if within is None:
            raise ValueError("the lines of several files need within= to take each file's year")
        years, _, references = zip(*ctx.file_years, strict=True)
        known = [quality if year is not None or reference is not None else "missing" for year, quality, reference in ctx.file_years]
        reference_years = [r.year if r else None for r in references]
        return (per_file(years, pl.Int32(), within), per_file(known, pl.String(), within),
                (per_file(references, pl.Datetime("us", "UTC"), within), per_file(reference_years, pl.Int32(), within)))
    if ctx.year is not None:
        return pl.lit(ctx.year, pl.Int32), pl.lit(ctx.year_quality), None
    if ctx.reference_time is not None:
        reference = pl.lit(ctx.reference_time).dt.convert_time_zone("UTC").dt.cast_time_unit("us")
        return None, pl.lit(ctx.reference_quality), (reference, pl.lit(ctx.reference_time.year, pl.Int32))
    return None, pl.lit("missing"), None


def dated_to_utc(text: pl.Expr, fmt: str, tz: str) -> pl.Expr:
    """A zone-less timestamp with a full date, parsed with ``fmt`` and taken to be in ``tz``."""
    return naive_to_utc(text.str.to_datetime(fmt, strict=False, time_unit="us"), tz)


def iso_shaped(text: pl.Expr) -> pl.Expr:
    """Whether ``text`` has a shape nearly every log prints, around any whitespace.

    'YYYY-MM-DD[T ]HH:MM:SS' with an optional '.' or ',' fraction of up to 9 digits and an
    optional 'Z' or numeric offset, or 'YYYY/MM/DD HH:MM:SS' with an optional fraction.
    """
    return text.str.contains(_ANY_SHAPE)


def iso_shaped_to_utc(text: pl.Expr, tz: str) -> pl.Expr:
    """:func:`iso_to_utc` of the text :func:`iso_shaped` accepts (null for other text).

    Each shape has the one format that reads it, so a row costs one parse; a date that
    format rejects (Feb 30, hour 24), every other format rejects too.
    """
    dotted = text.str.strip_chars().str.replace(",", ".", literal=True)
    dashed = dotted.str.replace(" ", "T", literal=True)
    zoned = pl.when(text.str.contains(_DASHED_ZONED)).then(dashed).str.to_datetime(
        _DASHED_ZONED_FORMAT, strict=False, time_unit="us", time_zone="UTC"
    )
    naive = pl.coalesce(
        pl.when(text.str.contains(_DASHED_NAIVE)).then(dashed).str.to_datetime(_DASHED_NAIVE_FORMAT, strict=False, time_unit="us"),
        pl.when(text.str.contains(_SLASHED_NAIVE)).then(dotted).str.to_datetime(_SLASHED_NAIVE_FORMAT, strict=False, time_unit="us"),
    )
    return pl.coalesce(zoned, naive_to_utc(naive, tz))


def iso_to_utc(text: pl.Expr, tz: str) -> pl.Expr:
    """ISO 8601 (and the common 'YYYY-MM-DD HH:MM:SS,mmm' and slash forms) to UTC.

    A time with an offset or 'Z' keeps it; a time without one is taken to be in ``tz``.
    """
    # Only text of no known shape tries every format; an expression is evaluated wherever
    # it is used, so that path is fed nulls for the rows a shape took.
    return pl.coalesce(iso_shaped_to_utc(text, tz), _iso_to_utc_general(pl.when(~iso_shaped(text)).then(text), tz))


def _iso_to_utc_general(text: pl.Expr, tz: str) -> pl.Expr:
    cleaned = (
        text.str.strip_chars()
        .str.replace(r"^([0-9]{4}-[0-9][0-9]-[0-9][0-9]), ", "$1 ")  # Airflow's "2022-11-09, 09:59:40 UTC"
        .str.replace(r"^([0-9]{4}[-/][0-9][0-9][-/][0-9][0-9][T ][0-9][0-9]:[0-9][0-9]:[0-9][0-9]),([0-9]+)", "$1.$2")
        .str.replace(r"^(\S+?:[0-9][0-9](?:\.[0-9]{1,9})?)[0-9]*((?:[Zz]|[+-][0-9][0-9]:?[0-9][0-9])?)$", "$1$2")
        .str.replace(r"[Zz]$", "+0000")
        .str.replace(r"([+-][0-9][0-9]):([0-9][0-9])$", "$1$2")
        .str.replace(r"^(.+?)\s+UTC$", "$1+0000")
    )
    zoned = pl.coalesce(
        [cleaned.str.to_datetime(f, strict=False, time_unit="us", time_zone="UTC") for f in _ISO_FORMATS_WITH_ZONE]
    )
    naive = pl.coalesce([cleaned.str.to_datetime(f, strict=False, time_unit="us") for f in _ISO_FORMATS_NAIVE])
    return pl.coalesce([zoned, naive_to_utc(naive, tz)])


def epoch_to_utc(value: pl.Expr) -> pl.Expr:
    """Epoch seconds, milliseconds, microseconds or nanoseconds (told apart by magnitude) to UTC."""
    number = value.cast(pl.Float64, strict=False)
    micros = (
        pl.when(number < 1e11).then(number * 1e6)
        .when(number < 1e14).then(number * 1e3)
        .when(number < 1e17).then(number)
        .otherwise(number / 1e3)
    )
    return micros.cast(pl.Int64, strict=False).cast(pl.Datetime("us")).dt.replace_time_zone("UTC")


def boot_to_utc(boot_seconds: pl.Expr, ctx: ParseContext) -> tuple[pl.Expr, pl.Expr]:
    """Boot-relative kernel seconds to UTC when the boot time is known, else null + 'boot_relative'."""
    if ctx.boot_time is None:
        return pl.lit(None, pl.Datetime("us", "UTC")), pl.lit("boot_relative")
    boot = pl.lit(ctx.boot_time).dt.convert_time_zone("UTC").dt.cast_time_unit("us")
    offset = pl.duration(microseconds=(boot_seconds * 1e6).round().cast(pl.Int64, strict=False))
    return boot + offset, pl.lit("boot_aligned")


def rfc1123_to_utc(text: pl.Expr) -> pl.Expr:
    """Go's RFC 1123 with a numeric zone ('Tue, 29 Apr 2025 13:43:32 +0800'), as kubectl describe prints.

    Go's zero time ('Mon, 01 Jan 0001 00:00:00 +0000') means "never set" and gives null.
    """
    parsed = text.str.strip_chars().str.to_datetime("%a, %d %b %Y %H:%M:%S %z", strict=False, time_unit="us", time_zone="UTC")
    return pl.when(parsed.dt.year() > 1).then(parsed)


# Zone abbreviations (as journalctl and date(1) print them) whose offset is not in doubt; CST, IST and BST each name
# several zones: they, like any name not here, are read in --tz.
ZONE_MINUTES = {
    "UTC": 0, "UCT": 0, "GMT": 0, "WET": 0, "WEST": 60, "CET": 60, "CEST": 120, "EET": 120, "EEST": 180, "MSK": 180,
    "EST": -300, "EDT": -240, "CDT": -300, "MST": -420, "MDT": -360, "PST": -480, "PDT": -420, "AKST": -540, "AKDT": -480,
    "HST": -600, "JST": 540, "KST": 540, "HKT": 480, "SGT": 480, "AWST": 480, "AEST": 600, "AEDT": 660, "NZST": 720, "NZDT": 780,
}


def zone_minutes(zone: pl.Expr) -> pl.Expr:
    """Minutes east of UTC of a zone as journalctl prints it: an offset ("+09", "-0530") or an abbreviation
    whose offset is not in doubt (ZONE_MINUTES); null for any other."""
    digits = pl.when(zone.str.starts_with("+") | zone.str.starts_with("-")).then(zone.str.replace(":", "", literal=True))
    minutes = digits.str.slice(1, 2).cast(pl.Int32, strict=False) * 60 + pl.coalesce(digits.str.slice(3, 2).replace("", None), pl.lit("0")).cast(pl.Int32, strict=False)
    signed = pl.when(digits.str.starts_with("-")).then(-minutes).otherwise(minutes)
    return pl.coalesce(signed, zone.replace_strict(ZONE_MINUTES, default=None, return_dtype=pl.Int32))


def offset_text(minutes: pl.Expr) -> pl.Expr:
    """ISO 8601's "+HH:MM" of ``minutes`` east of UTC."""
    size = minutes.abs()
    return pl.format(
        "{}{}:{}", pl.when(minutes < 0).then(pl.lit("-")).otherwise(pl.lit("+")),
        (size // 60).cast(pl.String).str.zfill(2), (size % 60).cast(pl.String).str.zfill(2),
    )
