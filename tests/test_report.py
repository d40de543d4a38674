"""The weekly digest: its windows, its numbers against the store, escaping, and the page in a headless browser."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest
from markdown_it import MarkdownIt

import rca
from rca.datasets import generate
from rca.kb import UNKNOWN, draft_yaml, load_kb
from rca.report import build_digest, iso_week, resolve_window, window_between, write_digest
from rca.report._markdown import code, escape, fenced
from rca.report.digest import before

PLANTED = "<script>document.title='pwned'</script> **bold** [link](http://example.invalid/x) `tick` | pipe & <b>tag</b>"


@dataclass(frozen=True)
class ReportStores:
    """One small generated corpus, correlated (``plain``) and also clustered (``clustered``)."""

    plain: Path
    clustered: Path


def build_report_stores(tmp_path_factory: pytest.TempPathFactory) -> ReportStores:
    """Build the stores once per test session, whichever module asks first (the second finds them done)."""
    from rca.cluster import cluster_store
    from rca.correlate import correlate_store

    root = tmp_path_factory.getbasetemp() / "report-stores"
    stores = ReportStores(root / "plain", root / "clustered")
    if (root / "done").exists():
        return stores
    shutil.rmtree(root, ignore_errors=True)
    corpus = generate(root / "corpus", seed=3, days=7, incidents_per_mode=1, size="3MB")
    rca.ingest(corpus.out / "logs", stores.plain)
    correlate_store(rca.open_store(stores.plain))
    shutil.copytree(stores.plain, stores.clustered)
    cluster_store(rca.open_store(stores.clustered), embedder="hashing")
    (root / "done").touch()
    return stores


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> ReportStores:
    return build_report_stores(tmp_path_factory)


def _week_of_data(store: Path) -> tuple[datetime, datetime]:
    newest = rca.open_store(store).events()["ts"].max()
    until = datetime.combine(newest.date() + timedelta(days=1), datetime.min.time(), tzinfo=UTC)
    return until - timedelta(days=7), until


def _in(frame: pl.DataFrame, since: datetime, until: datetime) -> pl.DataFrame:
    return frame.filter((pl.col("start") >= since) & (pl.col("start") < until))


class _Tables(HTMLParser):
    """Every <table> of a page as rows of cell texts, keyed by the table's class."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table: list[list[str]] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._table = self.tables.setdefault(dict(attrs).get("class") or "", [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._table:
            self._table[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _html_tables(html: str) -> dict[str, list[list[str]]]:
    parser = _Tables()
    parser.feed(html)
    return parser.tables


def _markdown_tables(markdown: str) -> list[list[list[str]]]:
    """Tables of a Markdown document as a GFM renderer sees them: rows of cell texts."""
    tables, rows, cells = [], None, None
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        if token.type == "table_open":
            rows = []
        elif token.type == "table_close":
            tables.append(rows)
        elif token.type == "tr_open":
            cells = []
            rows.append(cells)
        elif token.type == "inline" and cells is not None and rows is not None:
            cells.append(token.content)
        elif token.type == "tr_close":
            cells = None
    return tables


# --- windows ---------------------------------------------------------------------------------------


def test_default_window_is_the_last_seven_days_of_data_not_the_wall_clock(stores: ReportStores) -> None:
    since, until = _week_of_data(stores.plain)
    window = resolve_window(rca.open_store(stores.plain))
    assert (window.since, window.until) == (since, until)
    assert window.until - window.since == timedelta(days=7)
    assert window.previous().until == window.since and window.previous().since == since - timedelta(days=7)


def test_iso_weeks_and_ranges_get_labels_for_file_names() -> None:
    week = iso_week("2026-W48")
    assert (week.since, week.until, week.label) == (datetime(2026, 11, 23, tzinfo=UTC), datetime(2026, 11, 30, tzinfo=UTC), "2026-W48")
    assert window_between(date(2026, 11, 23), date(2026, 11, 30)).label == "2026-W48"
    assert window_between(date(2026, 11, 25), date(2026, 11, 28)).label == "2026-11-25_2026-11-28"
    assert window_between(datetime(2026, 11, 25, 6, 30), datetime(2026, 11, 25, 7)).label == "2026-11-25T063000_2026-11-25T070000"
    assert window_between(date(2026, 11, 25), date(2026, 11, 28)).days() == [date(2026, 11, 25), date(2026, 11, 26), date(2026, 11, 27)]
    for bad in ("48", "2026-48", "2026-W54"):
        with pytest.raises(ValueError):
            iso_week(bad)
    with pytest.raises(ValueError, match="before it starts"):
        window_between(date(2026, 11, 28), date(2026, 11, 25))


def test_week_and_range_together_are_refused(stores: ReportStores) -> None:
    with pytest.raises(ValueError, match="not both"):
        resolve_window(rca.open_store(stores.plain), week="2026-W48", since=date(2026, 11, 25))


# --- numbers against the store ---------------------------------------------------------------------


def test_clustered_digest_counts_failure_modes_hosts_and_days_as_the_store_does(stores: ReportStores) -> None:
    digest = build_digest(stores.clustered)
    since, until = digest.window.since, digest.window.until
    incidents = rca.open_store(stores.clustered).incidents()
    week = _in(incidents, since, until)
    assert digest.facts.clustered and digest.facts.incidents == week.height > 0
    expected = dict(week.group_by("failure_mode").len().iter_rows())
    assert {row["group"]: row["count"] for row in digest.facts.groups if row["count"]} == expected
    for row in digest.facts.groups:
        members = week.filter(pl.col("failure_mode") == row["group"])
        if row["count"]:
            assert row["hosts"] == sorted(members["hosts"].explode().unique().to_list())
            assert row["example"]["incident_id"] in members["incident_id"].to_list()
    assert sum(digest.facts.daily_totals) == week.height
    per_day = dict(week.group_by(pl.col("start").dt.date()).len().iter_rows())
    assert digest.facts.daily_totals == [per_day.get(day, 0) for day in digest.facts.days]
    headline = {row["name"]: row for row in digest.facts.headline}
    assert headline["incidents"]["this"] == week.height
    assert headline["hosts affected"]["this"] == week["hosts"].explode().n_unique()
    assert headline["failure modes seen"]["this"] == len(expected)

    markdown_rows = _markdown_tables(digest.markdown)
    modes_md = next(table for table in markdown_rows if table[0][0] == "mode" and "status" in table[0])
    assert {re.match(r"`(fm-\d+)`", row[0]).group(1): int(row[2]) for row in modes_md[1:] if int(row[2])} == expected
    modes_html = _html_tables(digest.html)["groups"]
    assert {row[0].split()[0]: int(row[2]) for row in modes_html[1:] if int(row[2])} == expected
    hosts = dict(week.explode("hosts").group_by("hosts").len().iter_rows())
    assert {row[0]: int(row[1]) for row in _html_tables(digest.html)["hosts"][1:]} == hosts


def test_failure_mode_rows_carry_the_kb_entry_and_its_checklist(stores: ReportStores) -> None:
    digest = build_digest(stores.clustered)
    kb = load_kb()
    modes = rca.open_store(stores.clustered).failure_modes()
    mode_kb = dict(modes.select("mode_id", "kb_id").iter_rows())
    for row in digest.facts.groups:
        assert row["kb_id"] == mode_kb[row["group"]]
    assert digest.facts.checklists
    for entry in digest.facts.checklists:
        steps = kb.checklist(entry["kb_id"])
        assert [step["fix"] for step in entry["steps"]] == [step.fix for step in steps]
        assert escape(steps[0].fix) in digest.markdown
        assert entry["kb_id"] in digest.html


def test_unclustered_store_groups_by_anchor_kind_and_says_what_is_missing(stores: ReportStores) -> None:
    digest = build_digest(stores.plain)
    week = _in(rca.open_store(stores.plain).incidents(), digest.window.since, digest.window.until)
    assert not digest.facts.clustered and digest.facts.group_by == "anchor_kind"
    expected = dict(week.group_by("anchor_kind").len().iter_rows())
    assert {row["group"]: row["count"] for row in digest.facts.groups if row["count"]} == expected
    assert digest.facts.unexplained is None and digest.facts.checklists == []
    for text in (digest.markdown, digest.html):
        assert "Not available in this digest" in text and f"rca cluster --store {stores.plain}" in text
        assert "by anchor kind" in text and "knowledge-base entries and their checklists" in text
    assert "knowledge-base entry" not in _html_tables(digest.html)["groups"][0]


def test_empty_week_says_so(stores: ReportStores, tmp_path: Path) -> None:
    md_path, html_path = write_digest(stores.clustered, tmp_path, week="2031-W10")
    assert md_path.name == "digest-2031-W10.md" and html_path.name == "digest-2031-W10.html"
    markdown, html = md_path.read_text(), html_path.read_text()
    assert "**No incidents in this window.**" in markdown and 'id="empty-window"' in html
    assert "No incidents to chart in this window." in markdown and "<img" not in html
    assert "No incidents in this window or the one before." in markdown
    # It says where the incidents are, and the command that shows their busiest week.
    timed = rca.open_store(stores.clustered).incidents().filter(pl.col("start").is_not_null())
    weeks = timed.group_by(week=pl.col("start").dt.strftime("%G-W%V")).len().sort(["len", "week"], descending=[True, False])
    busiest, count = weeks.row(0)
    assert f"Its {timed.height} timed incidents start between {timed['start'].min():%Y-%m-%d %H:%M} and " in markdown
    assert f"the busiest week is {busiest} ({count}): `rca digest --week {busiest}`" in markdown
    assert f"<code>rca digest --week {busiest}</code>" in html


def test_week_after_the_data_shows_every_mode_gone_quiet_with_negative_deltas(stores: ReportStores) -> None:
    since, until = _week_of_data(stores.clustered)
    last_week = _in(rca.open_store(stores.clustered).incidents(), since, until)
    digest = build_digest(stores.clustered, since=until, until=until + timedelta(days=7))
    assert digest.facts.incidents == 0
    assert {row["status"] for row in digest.facts.groups} == {"gone quiet"}
    assert {row["group"]: row["previous"] for row in digest.facts.groups} == dict(last_week.group_by("failure_mode").len().iter_rows())
    incidents = next(row for row in digest.facts.headline if row["name"] == "incidents")
    assert (incidents["this"], incidents["previous"], incidents["delta"]) == (0, last_week.height, -last_week.height)
    assert f"| incidents | 0 | {last_week.height} | −{last_week.height} |" in digest.markdown


def test_a_week_with_one_incident(stores: ReportStores) -> None:
    incidents = rca.open_store(stores.plain).incidents().drop_nulls("start").sort("start")
    first = incidents.row(0, named=True)
    digest = build_digest(stores.plain, since=first["start"], until=first["start"] + timedelta(seconds=1))
    assert digest.facts.incidents == 1
    assert [(row["group"], row["count"], row["status"]) for row in digest.facts.groups] == [(first["anchor_kind"], 1, "new")]
    assert digest.facts.daily_totals == [1]
    assert digest.html.count('src="data:image/png;base64,') >= 1
    assert first["incident_id"] in digest.markdown and first["incident_id"] in digest.html


def test_gpu_memory_curve_is_the_incidents_own_gpu_before_the_failure(stores: ReportStores) -> None:
    digest = build_digest(stores.clustered)
    store = rca.open_store(stores.clustered)
    drawn = [curve for curve in digest.facts.curves if curve["samples"]]
    assert drawn, "the corpus's CUDA OOM modes have nvidia-smi samples"
    events = store.events().filter(pl.col("kind") == "gpu_sample")
    incidents = store.incidents()
    for curve in drawn:
        incident = incidents.filter(pl.col("incident_id") == curve["incident_id"]).row(0, named=True)
        assert all(minute <= 0 for minute in curve["minutes"])
        own = events.filter((pl.col("host") == incident["host"]) & (pl.col("gpu_index") == incident["gpu_index"]))
        assert set(curve["used"]) <= set(own["mem_used_bytes"].to_list())
        assert len(curve["used"]) == curve["samples"] >= 2
        # how far back the samples reach, in words, in both versions (never "from 1 minutes before it")
        told = f"{curve['samples']} samples {before(curve['minutes'][0])}."
        assert told in digest.markdown and told in digest.html
    assert digest.html.count('src="data:image/png;base64,') == 1 + len(drawn)
    assert "minutes before it" not in digest.markdown


@pytest.mark.parametrize("minutes,told", [(-1.0, "from the 1 min before it"), (-4.5, "from the 4 min 30 s before it"),
                                          (-0.25, "from the 15 s before it"), (-90.0, "from the 1 h 30 min before it"),
                                          (0.0, "at the failure")])
def test_how_far_back_a_curve_reaches_is_said_in_words(minutes: float, told: str) -> None:
    assert before(minutes) == told


def test_unexplained_incidents_list_their_draft_entry(stores: ReportStores, tmp_path: Path) -> None:
    store_path = tmp_path / "store"
    shutil.copytree(stores.clustered, store_path)
    incidents = rca.open_store(store_path).incidents()
    since, until = _week_of_data(store_path)
    target = _in(incidents, since, until).sort("start").row(0, named=True)
    unknown = pl.when(pl.col("incident_id") == target["incident_id"]).then(pl.lit(UNKNOWN)).otherwise("kb_id")
    incidents.with_columns(kb_id=unknown).write_parquet(store_path / "incidents.parquet")
    draft = store_path / "kb_drafts" / "draft-planted.yaml"
    draft.parent.mkdir(exist_ok=True)
    draft.write_text(draft_yaml(target))
    digest = build_digest(store_path)
    listed = {row["incident_id"]: row for row in digest.facts.unexplained["incidents"]}
    assert listed[target["incident_id"]]["draft"] == str(draft)
    assert next(row for row in digest.facts.headline if row["name"] == "incidents the KB could not explain")["this"] == len(listed)
    unexplained = _html_tables(digest.html)["unexplained-incidents"]
    assert any(row[0] == target["incident_id"] and row[-1] == str(draft) for row in unexplained[1:])
    assert str(code(str(draft))) in digest.markdown


def test_data_quality_notes_come_from_the_manifest_and_the_correlation_report(stores: ReportStores) -> None:
    digest = build_digest(stores.plain)
    store = rca.open_store(stores.plain)
    quality = digest.facts.quality
    manifest = store.manifest()
    assert quality["totals"]["unparsed"] == manifest["unparsed_lines"].sum()
    assert sum(row["events"] for row in quality["events_without_time"]) == store.events()["ts"].null_count()
    unaligned = [row for row in store.correlation_report()["alignment"] if row["method"] == "unaligned"]
    assert len(quality["unaligned"]) == len(unaligned)
    for row in unaligned:
        assert f"Clock not aligned: {code(row['file'])}" in digest.markdown
        assert f"Clock not aligned: <code>{row['file']}</code>" in digest.html


def test_an_unaligned_clock_of_no_known_host_says_so(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "dmesg.txt").write_text(
        "[ 5012.345678] Memory cgroup out of memory: Killed process 4242 (python) total-vm:100kB, anon-rss:10kB, file-rss:0kB, "
        "shmem-rss:0kB, UID:0 pgtables:10kB oom_score_adj:0\n"
    )
    (logs / "train.log").write_text("2026-11-30 10:00:05,000 ERROR DataLoader worker (pid 5151) is killed by signal: Killed.\n")
    from rca.correlate import correlate_store

    rca.ingest(logs, tmp_path / "store", workers=1)
    correlate_store(rca.open_store(tmp_path / "store"))
    digest = build_digest(tmp_path / "store", week="2026-W48")
    assert "Clock not aligned: `dmesg.txt` on an unknown host (boot 0, " in digest.markdown
    assert "Clock not aligned: <code>dmesg.txt</code> on an unknown host (boot 0, " in digest.html


# --- escaping and the page itself -------------------------------------------------------------------


@pytest.fixture(scope="module")
def planted_digest(stores: ReportStores, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """The digest of a store whose signatures and one manifest error carry HTML and Markdown syntax."""
    store_path = tmp_path_factory.mktemp("planted") / "store"
    shutil.copytree(stores.clustered, store_path)
    incidents = pl.read_parquet(store_path / "incidents.parquet")
    incidents.with_columns(signature=pl.lit(PLANTED + "\n") + pl.col("signature")).write_parquet(store_path / "incidents.parquet")
    manifest = pl.read_parquet(store_path / "files.parquet")
    first = pl.int_range(pl.len()) == 0
    manifest.with_columns(
        status=pl.when(first).then(pl.lit("error")).otherwise("status"), error=pl.when(first).then(pl.lit(PLANTED)).otherwise("error")
    ).write_parquet(store_path / "files.parquet")
    digest = build_digest(store_path)
    return digest.markdown, digest.html


def test_log_text_is_escaped_in_the_html(planted_digest: tuple[str, str]) -> None:
    _, html = planted_digest
    assert "<script>document.title" not in html and "<b>tag</b>" not in html
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt; **bold**" in html
    assert html.count("&lt;b&gt;tag&lt;/b&gt;") >= 2  # in the failure-mode table and in the problem-file table


def test_log_text_is_escaped_in_the_markdown(planted_digest: tuple[str, str]) -> None:
    markdown, _ = planted_digest
    rendered = MarkdownIt("commonmark").enable("table").render(markdown)  # raw HTML on, as most renderers have it
    assert "<script" not in rendered and "<b>tag</b>" not in rendered
    assert "<strong>bold</strong>" not in rendered and 'href="http://example.invalid/x"' not in rendered
    literal = "&lt;script&gt;document.title='pwned'&lt;/script&gt; **bold** [link](http://example.invalid/x) `tick` | pipe"
    assert f"{literal} &amp; &lt;b&gt;tag&lt;/b&gt;" in rendered
    for table in _markdown_tables(markdown):  # a pipe in log text never splits a cell
        assert {len(row) for row in table} == {len(table[0])}


def test_markdown_helpers_keep_text_literal() -> None:
    assert escape("a_b *c* <d>\nnext") == r"a\_b \*c\* \<d\> ⏎ next"
    assert code("x | `y`") == "`` x \\| `y` ``"
    assert fenced("a\n```\nb", "  ") == "  ````\n  a\n  ```\n  b\n  ````"
    rendered = MarkdownIt("commonmark").render(f"{code('<i>x</i>')} {escape('[a](b)')}")
    assert rendered == "<p><code>&lt;i&gt;x&lt;/i&gt;</code> [a](b)</p>\n"


def test_html_is_self_contained(stores: ReportStores) -> None:
    html = build_digest(stores.clustered).html
    assert "<script" not in html and "<link" not in html and "@import" not in html and "url(" not in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    sources = re.findall(r'<img src="([^"]+)"', html)
    assert sources and all(source.startswith("data:image/png;base64,") for source in sources)
    for source in sources:
        assert base64.b64decode(source.split(",", 1)[1]).startswith(b"\x89PNG\r\n\x1a\n")


_CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
_PROBE = """<script nonce="probe">
window.addEventListener("load", () => {
  const images = [...document.images];
  document.body.dataset.images = images.length;
  document.body.dataset.loaded = images.filter((image) => image.complete && image.naturalWidth > 0).length;
  document.body.dataset.tables = document.querySelectorAll("table").length;
  document.body.dataset.scripts = document.scripts.length;
  document.body.dataset.title = document.title;
  document.body.dataset.planted = document.body.innerText.includes("<script>document.title='pwned'<" + "/script> **bold**");
});
</script>"""


def _chromium(*args: str) -> str:
    command = [_CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--virtual-time-budget=5000", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True).stdout


@pytest.mark.skipif(_CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install chromium)")
def test_headless_chromium_renders_the_page_and_runs_no_planted_script(planted_digest: tuple[str, str], tmp_path: Path) -> None:
    _, html = planted_digest
    page = tmp_path / "digest.html"
    page.write_text(html)
    dom = _chromium("--dump-dom", page.as_uri())
    assert "<table" in dom and "<script" not in dom  # the planted script never became an element
    # A copy with a probe script (allowed by nonce) reports what the browser loaded and ran.
    probed = tmp_path / "probed.html"
    allowed = html.replace("default-src 'none';", "default-src 'none'; script-src 'nonce-probe';")
    probed.write_text(allowed.replace("</body>", _PROBE + "</body>"))
    body = re.search(r"<body([^>]*)>", _chromium("--dump-dom", probed.as_uri())).group(1)
    facts = dict(re.findall(r'data-(\w+)="([^"]*)"', body))
    assert int(facts["images"]) >= 2 and facts["loaded"] == facts["images"]
    assert int(facts["tables"]) >= 5 and facts["scripts"] == "1"
    assert facts["title"].startswith("Incident digest") and facts["planted"] == "true"
    screenshot = tmp_path / "digest.png"
    _chromium(f"--screenshot={screenshot}", "--window-size=1280,2400", page.as_uri())
    assert screenshot.read_bytes().startswith(b"\x89PNG") and screenshot.stat().st_size > 50_000
