"""Failure modes: the K-means estimator, stable mode ids across runs, the embedding cache, KB mapping and drafts."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from sklearn.base import clone

import rca
from rca import datasets, embed, schema
from rca.cluster import Clustering, ModeClusterer, cluster, cluster_store
from rca.correlate import correlate_store
from rca.embed import HashingEmbedder, MiniLMEmbedder
from rca.evaluate import load_truth, score
from rca.kb import UNKNOWN, validate_kb
from rca.store import KB_DRAFTS_DIR, Store, open_store

T0 = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)
CUDA_OOM = (
    "cuda_oom: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate <NUM> GiB. GPU <NUM> has a total capacity of "
    "<NUM> GiB of which <NUM> MiB is free. Of the allocated memory <NUM> GiB is allocated by PyTorch"
)
KINDS_OF_INCIDENT = {
    "leak": {"anchor_kind": "cuda_oom", "signature": CUDA_OOM, "gpu_mem_growth_shape": "steady_leak", "gpu_mem_growth_bytes_per_s": 1.1e7,
             "gpu_mem_growth_sustained_s": 700.0, "gpu_mem_peak_pct": 99.4, "requested_over_free": 2.5, "victim_was_grower": True,
             "gpu_processes": 1},
    "huge": {"anchor_kind": "cuda_oom", "signature": CUDA_OOM, "gpu_mem_growth_shape": "single_step", "gpu_mem_growth_bytes_per_s": 8e6,
             "gpu_mem_growth_sustained_s": 30.0, "gpu_mem_peak_pct": 99.6, "requested_over_free": 55.0, "gpu_processes": 1},
    "eviction": {"anchor_kind": "eviction", "sources": ["kubelet"],
                 "signature": "eviction: Evicted: The node was low on resource: memory. Threshold quantity: <SIZE>, available: <SIZE>\n"
                              "eviction: \"Eviction manager: must evict pod(s) to reclaim\" resourceName=<NAME>"},
    "jvm": {"anchor_kind": "log", "runtime_oom": "jvm_heap",
            "signature": "log: Terminating due to java.lang.OutOfMemoryError: Java heap space"},
    "quota": {"anchor_kind": "log", "signature": "log: scratch volume quota exceeded, writer <NAME> stopped by supervisor"},
}


def incident(kind: str, number: int, *, hour: float = 0.0, host: str = "gpu-1", jitter: float = 1.0) -> dict:
    """One incident of ``kind`` (KINDS_OF_INCIDENT), its growth rate scaled by ``jitter``."""
    fields = dict(KINDS_OF_INCIDENT[kind])
    if "gpu_mem_growth_bytes_per_s" in fields:
        fields["gpu_mem_growth_bytes_per_s"] *= jitter
    start = T0 + timedelta(hours=hour)
    end = start + timedelta(seconds=30)
    return {"incident_id": f"inc-{kind}-{number}", "host": host, "hosts": [host], "start": start, "end": end, **fields}


def frame(rows: Sequence[dict]) -> pl.DataFrame:
    return schema.conform(pl.DataFrame(list(rows), infer_schema_length=None), schema.INCIDENT_SCHEMA)


def week(kinds: Sequence[str], *, per_kind: int = 3, first: int = 0, hour: float = 0.0) -> pl.DataFrame:
    rows = [incident(kind, first + n, hour=hour + 2 * n + index / 10, host=f"gpu-{n % 2}", jitter=1 + n / 20)
            for index, kind in enumerate(kinds) for n in range(per_kind)]
    return frame(rows)


def modes_of(result: Clustering) -> dict[str, str]:
    return dict(zip(result.incidents["incident_id"], result.incidents["failure_mode"], strict=True))


def store_with(path: Path, incidents: pl.DataFrame) -> Store:
    store = Store(path)
    with store.writing():
        store.write_incidents(incidents, schema.empty(schema.INCIDENT_EVENTS_SCHEMA), {})
    return store


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(64)
        self.seen: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.seen += list(texts)
        return super().encode(texts)


# --- the estimator --------------------------------------------------------------------------

BLOB_CENTRES = np.array([[0.0, 0.0, 0.0], [3.0, 0.0, 0.0], [0.0, 3.0, 0.0]])


def blobs(per_blob: int = 20, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(centre, 0.05, (per_blob, 3)) for centre in BLOB_CENTRES])


def test_three_separate_groups_make_three_clusters_deterministically() -> None:
    points = blobs()
    fitted = ModeClusterer(random_state=3).fit(points)
    assert fitted.k_ == 3 and fitted.n_new_ == 3 and fitted.n_known_ == 0
    np.testing.assert_array_equal(fitted.labels_, np.repeat([0, 1, 2], 20))  # numbered in the order of their first row
    np.testing.assert_allclose(fitted.cluster_centers_, BLOB_CENTRES, atol=0.05)
    np.testing.assert_array_equal(ModeClusterer(random_state=3).fit_predict(points), fitted.labels_)
    assert max(fitted.silhouette_, key=fitted.silhouette_.get) == 3


def test_the_estimator_follows_scikit_learn_conventions() -> None:
    estimator = ModeClusterer(k_max=7, random_state=1)
    assert estimator.get_params()["k_max"] == 7 and not hasattr(estimator, "labels_")
    copy = clone(estimator)
    assert copy is not estimator and copy.get_params() == estimator.get_params()
    assert repr(copy) == "ModeClusterer(k_max=7, random_state=1)"
    assert estimator.set_params(n_init=2) is estimator and estimator.n_init == 2
    assert estimator.fit(blobs()) is estimator
    with pytest.raises(ValueError, match="invalid parameter 'k'"):
        estimator.set_params(k=3)
    with pytest.raises(ValueError, match="n_clusters must be 'auto' or a positive integer"):
        ModeClusterer(n_clusters=0).fit(blobs())


def test_rows_near_a_known_centre_join_it_and_rows_near_none_make_a_new_cluster() -> None:
    known = BLOB_CENTRES[:2]
    rows = np.array([[0.1, 0.0, 0.0], [2.9, 0.1, 0.0], [0.0, 0.1, 0.0], [9.0, 9.0, 9.0], [9.1, 9.0, 9.0]])
    fitted = ModeClusterer().fit(rows, known_centers=known, known_weights=[8, 2])
    np.testing.assert_array_equal(fitted.labels_, [0, 1, 0, 2, 2])
    np.testing.assert_array_equal(fitted.joined_, [True, True, True, False, False])
    assert (fitted.n_known_, fitted.n_new_) == (2, 1)
    np.testing.assert_allclose(fitted.cluster_centers_[0], (8 * known[0] + rows[0] + rows[2]) / 10)
    np.testing.assert_allclose(fitted.cluster_centers_[1], (2 * known[1] + rows[1]) / 3)
    np.testing.assert_allclose(fitted.cluster_centers_[2], [9.05, 9.0, 9.0])


def test_a_row_beyond_join_distance_of_its_clusters_known_centre_makes_a_new_cluster() -> None:
    rows = np.array([[0.0, 0.0, 1.6]])
    fitted = ModeClusterer(n_clusters=1, join_distance=1.0).fit(rows, known_centers=BLOB_CENTRES[:1])
    assert fitted.labels_.tolist() == [1] and not fitted.joined_.any()


def test_a_fixed_k_and_a_single_tight_group() -> None:
    assert ModeClusterer(n_clusters=2).fit(blobs()).n_new_ == 2
    tight = ModeClusterer().fit(np.random.default_rng(1).normal(0, 0.05, (30, 4)))
    assert tight.k_ == 1 and set(tight.labels_) == {0} and tight.silhouette_ == {}


def test_identical_rows_are_clustered_once_with_their_count() -> None:
    repeated = np.repeat(blobs(per_blob=4), 50, axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fitted = ModeClusterer().fit(repeated)
    assert fitted.n_new_ == 3
    assert len({tuple(row) for row in np.column_stack([fitted.labels_, repeated.round(6)])}) == 12


def test_many_rows_use_minibatch_kmeans_started_from_the_sample() -> None:
    points = blobs(per_blob=400)
    fitted = ModeClusterer(minibatch_above=500, sample_size=200).fit(points)
    assert fitted.n_new_ == 3
    np.testing.assert_array_equal(fitted.labels_, np.repeat([0, 1, 2], 400))


# --- incidents → failure modes ---------------------------------------------------------------


def test_the_same_oom_message_with_different_causes_makes_different_modes() -> None:
    result = cluster(week(["leak", "huge"]), embedder="hashing")
    modes = modes_of(result)
    assert len({modes[f"inc-leak-{n}"] for n in range(3)}) == 1
    assert len({modes[f"inc-huge-{n}"] for n in range(3)}) == 1
    assert modes["inc-leak-0"] != modes["inc-huge-0"]
    entries = dict(zip(result.incidents["incident_id"], result.incidents["kb_id"], strict=True))
    assert entries["inc-leak-0"] == "gpu-memory-leak-autograd" and entries["inc-huge-0"] == "cuda-oom-batch-too-large"


def test_each_mode_is_described() -> None:
    incidents = week(["leak", "eviction", "jvm"])
    result = cluster(incidents, embedder="hashing")
    table = result.modes
    assert table.schema == pl.Schema(schema.FAILURE_MODE_SCHEMA)
    assert table["mode_id"].to_list() == ["fm-001", "fm-002", "fm-003"]
    rows = {row["kb_id"]: row for row in table.iter_rows(named=True)}
    assert set(rows) == {"gpu-memory-leak-autograd", "eviction-memory-pressure", "jvm-heap-metaspace"}
    leak = rows["gpu-memory-leak-autograd"]
    assert leak["label"].startswith("cuda_oom · steady_leak — ") and len(leak["terms"]) == 3
    assert rows["jvm-heap-metaspace"]["label"].startswith("log · jvm_heap — ")
    assert (leak["size"], leak["status"], leak["new_incidents"]) == (3, "new", 3)
    assert leak["incident_ids"] == ["inc-leak-0", "inc-leak-1", "inc-leak-2"] and leak["medoid_incident"] in leak["incident_ids"]
    assert leak["hosts"] == ["gpu-0", "gpu-1"]
    assert (leak["first_seen"], leak["last_seen"]) == (T0, T0 + timedelta(hours=4, seconds=30))
    assert 0.4 <= leak["kb_confidence"] <= 1.0 and leak["space"].startswith("hashing-256+features-v1+kb-")
    assert len(leak["centroid"]) == 256 + len(embed.SIGNAL_FEATURES) + len(rca.kb.load_kb())
    assert result.report["new_modes"] == 3 and result.report["created"] == ["fm-001", "fm-002", "fm-003"]


def test_the_incidents_keep_their_order_and_gain_three_columns() -> None:
    incidents = week(["jvm", "leak"]).reverse()
    before = incidents.clone()
    result = cluster(incidents, embedder="hashing")
    assert result.incidents.schema == pl.Schema(schema.CLUSTERED_INCIDENT_SCHEMA)
    assert result.incidents["incident_id"].to_list() == incidents["incident_id"].to_list()
    assert result.incidents.select(list(schema.INCIDENT_SCHEMA)).equals(incidents)
    assert incidents.equals(before)
    assert result.incidents["kb_confidence"].is_between(0, 1).all()


def test_an_incident_is_embedded_once_and_cost_follows_distinct_signatures() -> None:
    counting = CountingEmbedder()
    incidents = week(["leak", "huge", "eviction"], per_kind=4)  # 12 incidents, 2 distinct signatures
    first = cluster(incidents, embedder=counting)
    symptoms = rca.kb.load_kb().symptoms()["text"].n_unique()
    assert len(counting.seen) == 2 + symptoms and len(set(counting.seen)) == len(counting.seen)
    assert first.report["embedded_texts"] == 2 + symptoms
    counting.seen.clear()
    more = pl.concat([incidents, week(["leak"], first=10, hour=30)])
    again = cluster(more, embedder=counting, modes=first.modes, embeddings=first.embeddings)
    assert counting.seen == [] and again.report["embedded_texts"] == 0


def test_mode_ids_survive_a_second_run_with_new_incidents(tmp_path: Path) -> None:
    store = store_with(tmp_path / "store", week(["leak", "huge", "eviction"]))
    first = cluster_store(store, embedder="hashing")
    ids = modes_of_store(store)
    assert first["created"] == ["fm-001", "fm-002", "fm-003"]
    leak_mode = ids["inc-leak-0"]

    next_week = pl.concat([week(["leak", "huge", "eviction"]), week(["leak", "jvm"], first=10, hour=168)])
    store_with(store.path, next_week)
    second = cluster_store(store, embedder="hashing")
    again = modes_of_store(store)
    assert {incident_id: again[incident_id] for incident_id in ids} == ids  # nothing reshuffled
    assert {again[f"inc-leak-{n}"] for n in (10, 11, 12)} == {leak_mode}  # the known kind recurs
    assert second["created"] == ["fm-004"] and {again[f"inc-jvm-{n}"] for n in (10, 11, 12)} == {"fm-004"}
    table = store.failure_modes()
    status = dict(zip(table["mode_id"], table["status"], strict=True))
    assert status == {leak_mode: "recurring", "fm-004": "new", **{m: "dormant" for m in {ids["inc-huge-0"], ids["inc-eviction-0"]}}}
    assert table.filter(pl.col("mode_id") == leak_mode)["size"].item() == 6

    third = cluster_store(store, embedder="hashing")  # the same incidents again: nothing changes but the statuses
    assert modes_of_store(store) == again and third["created"] == [] and third["kept"] == next_week.height
    assert set(store.failure_modes()["status"]) == {"dormant"}
    assert store.failure_modes().drop("status", "new_incidents").equals(table.drop("status", "new_incidents"))


def modes_of_store(store: Store) -> dict[str, str]:
    incidents = store.incidents()
    return dict(zip(incidents["incident_id"], incidents["failure_mode"], strict=True))


def test_a_mode_no_entry_matches_is_unknown_and_gets_a_draft(tmp_path: Path) -> None:
    store = store_with(tmp_path / "store", week(["quota", "eviction"]))
    report = cluster_store(store, embedder="hashing")
    incidents = store.incidents()
    assert set(incidents.filter(pl.col("incident_id").str.contains("quota"))["kb_id"]) == {UNKNOWN}
    unknown = store.failure_modes().filter(pl.col("kb_id") == UNKNOWN)
    assert unknown.height == 1 and report["unknown_modes"] == unknown["mode_id"].to_list()
    drafts = sorted((store.path / KB_DRAFTS_DIR).glob("*.yaml"))
    assert [str(path) for path in drafts] == report["drafts_written"] and len(drafts) == 1
    text = drafts[0].read_text()
    assert "scratch volume quota exceeded" in text and unknown["medoid_incident"].item() in text
    problems = "\n".join(validate_kb(drafts[0].parent))
    assert "summary" in problems and "root_cause" in problems

    drafts[0].write_text(text + "# a person's notes\n")
    assert cluster_store(store, embedder="hashing")["drafts_written"] == []
    assert drafts[0].read_text().endswith("# a person's notes\n")


def test_another_embedder_keeps_the_modes_of_incidents_still_in_the_store(tmp_path: Path) -> None:
    store = store_with(tmp_path / "store", week(["leak", "eviction"]))
    cluster_store(store, embedder="hashing")
    before = modes_of_store(store)
    report = cluster_store(store, embedder="tfidf")
    assert modes_of_store(store) == before and report["created"] == []
    assert all(space.startswith("tfidf-") for space in store.failure_modes()["space"])


def test_no_incidents_no_modes(tmp_path: Path) -> None:
    result = cluster(schema.empty(schema.INCIDENT_SCHEMA), embedder="hashing")
    assert result.incidents.height == 0 and result.modes.height == 0 and result.drafts == {}
    assert result.incidents.schema == pl.Schema(schema.CLUSTERED_INCIDENT_SCHEMA)


def test_cluster_is_public() -> None:
    assert rca.cluster is cluster and "cluster" in rca.__all__


# --- the real embedder and a generated corpus --------------------------------------------------


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    if not embed.minilm_available():
        pytest.skip("sentence-transformers is not installed")
    return MiniLMEmbedder()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A small generated corpus (two of every failure mode) ingested and correlated: (incidents, ground truth)."""
    root = tmp_path_factory.mktemp("cluster-corpus")
    datasets.generate(root / "corpus", seed=4, days=2, hosts=4, incidents_per_mode=2, size="1MB")
    rca.ingest(root / "corpus" / "logs", root / "store", workers=2)
    correlate_store(open_store(root / "store"))
    return open_store(root / "store").incidents(), load_truth(root / "corpus" / "ground_truth.csv")


def test_minilm_embeds_offline_and_puts_alike_failures_close(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.encode([CUDA_OOM, "cuda_oom: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate <NUM> MiB",
                             KINDS_OF_INCIDENT["eviction"]["signature"]])
    assert vectors.shape == (3, 384) and np.linalg.norm(vectors, axis=1) == pytest.approx([1, 1, 1], abs=1e-5)
    assert vectors[0] @ vectors[1] > 0.7 > vectors[0] @ vectors[2]
    import os

    assert os.environ["HF_HUB_OFFLINE"] == os.environ["TRANSFORMERS_OFFLINE"] == "1"


@pytest.mark.parametrize("embedder", ["tfidf", "minilm"])
def test_modes_and_entries_match_the_ground_truth(embedder: str, corpus: tuple[pl.DataFrame, pl.DataFrame],
                                                  request: pytest.FixtureRequest) -> None:
    incidents, truth = corpus
    model = request.getfixturevalue("minilm") if embedder == "minilm" else embedder
    result = cluster(incidents, embedder=model)
    scores = score(result.incidents, truth)
    assert scores.recall >= 0.95
    assert scores.kb_top1_accuracy >= 0.9, scores.per_mode
    assert scores.ari >= 0.8
