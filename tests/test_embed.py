"""Embedders, the embedding cache, and the incident feature vectors of rca.embed."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca import embed, schema
from rca.embed import (
    KB_WEIGHT,
    MINILM_DIM,
    SIGNAL_FEATURES,
    TEXT_WEIGHT,
    EmbedderFallbackWarning,
    HashingEmbedder,
    MiniLMEmbedder,
    TfidfEmbedder,
    encode_cached,
    incident_features,
    load_embedder,
    signal_features,
    text_hash,
)

CUDA_OOM = (
    "cuda_oom: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate <NUM> GiB. GPU <NUM> has a total capacity of "
    "<NUM> GiB of which <NUM> MiB is free. Of the allocated memory <NUM> GiB is allocated by PyTorch"
)
REFERENCE = [
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "Memory cgroup out of memory: Killed process 4242 (python3)",
    "The node was low on resource: memory. Threshold quantity: 100Mi",
    "NCCL watchdog caught collective operation timeout",
]


class CountingEmbedder:
    """A hashing embedder that records every text it is asked to embed."""

    def __init__(self, name: str = "counting") -> None:
        self.name = name
        self.dim = 32
        self.seen: list[str] = []
        self._inner = HashingEmbedder(32)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.seen += list(texts)
        return self._inner.encode(texts)


def _empty_cache() -> pl.DataFrame:
    return schema.empty(schema.EMBEDDING_SCHEMA)


def test_hashing_vectors_are_deterministic_unit_rows() -> None:
    first = HashingEmbedder().encode([CUDA_OOM, "oom_kill: Memory cgroup out of memory: Killed process <NUM> (<PROCESS>)"])
    again = HashingEmbedder().encode([CUDA_OOM])
    assert first.shape == (2, 256) and first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), [1.0, 1.0], rtol=1e-6)
    np.testing.assert_array_equal(first[0], again[0])
    assert float(first[0] @ first[1]) < 0.5


def test_placeholders_are_not_words() -> None:
    vectors = HashingEmbedder().encode(["Tried to allocate <NUM> GiB", "Tried to allocate <SIZE> GiB"])
    np.testing.assert_array_equal(vectors[0], vectors[1])
    assert embed.signature_words("xid: NVRM: Xid (PCI:<PCI>): <NUM>, pid=<NUM>") == ["xid", "nvrm", "xid", "pci", "pid"]


def test_tfidf_vectors_depend_only_on_the_reference() -> None:
    alone = TfidfEmbedder(REFERENCE).encode([CUDA_OOM])
    among = TfidfEmbedder(REFERENCE).encode(["Memory cgroup out of memory", CUDA_OOM, "watchdog timeout"])
    np.testing.assert_allclose(alone[0], among[1], atol=1e-6)
    assert TfidfEmbedder(REFERENCE).name == TfidfEmbedder(list(REFERENCE)).name != TfidfEmbedder(REFERENCE[:3]).name
    assert TfidfEmbedder(REFERENCE).dim == len(REFERENCE) - 1  # the SVD cannot keep more than the reference supports


def test_tfidf_text_without_known_words_is_a_zero_vector() -> None:
    vectors = TfidfEmbedder(REFERENCE).encode(["zzz qqq", CUDA_OOM])
    assert not vectors[0].any() and np.linalg.norm(vectors[1]) == pytest.approx(1.0, rel=1e-5)


def test_text_hash_is_a_stable_blake2b_digest() -> None:
    assert text_hash("cuda_oom: CUDA out of memory") == "dc5c839e48149eaa827e15ac8d8c045a"
    assert len({text_hash("a"), text_hash("b"), text_hash("a ")}) == 3


def test_the_cache_embeds_each_distinct_text_once() -> None:
    counting = CountingEmbedder()
    vectors, cache = encode_cached(["x fails", "y fails", "x fails", "x fails"], counting, _empty_cache())
    assert counting.seen == ["x fails", "y fails"]
    assert cache.height == 2 and cache.schema == pl.Schema(schema.EMBEDDING_SCHEMA)
    np.testing.assert_array_equal(vectors[0], vectors[2])
    again, cache = encode_cached(["x fails", "z fails", "y fails"], counting, cache)
    assert counting.seen == ["x fails", "y fails", "z fails"]
    np.testing.assert_array_equal(again[0], vectors[0])
    assert cache.height == 3


def test_vectors_of_another_embedder_are_never_reused() -> None:
    _, cache = encode_cached(["x fails"], CountingEmbedder("one"), _empty_cache())
    other = CountingEmbedder("two")
    _, cache = encode_cached(["x fails"], other, cache)
    assert other.seen == ["x fails"]
    assert sorted(cache["embedder"].to_list()) == ["one", "two"]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["a b", "c d", "cuda_oom: out of memory", "", "<NUM>", "Killed process"]), max_size=12))
def test_cached_vectors_equal_direct_ones_in_input_order(texts: list[str]) -> None:
    hashing = HashingEmbedder(32)
    vectors, cache = encode_cached(texts, hashing, _empty_cache())
    assert vectors.shape == (len(texts), 32)
    if texts:
        np.testing.assert_array_equal(vectors, hashing.encode(texts))
    assert cache.height == len(set(texts))


def test_minilm_without_sentence_transformers_falls_back_to_tfidf_with_a_notice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "minilm_available", lambda: False)
    with pytest.warns(EmbedderFallbackWarning, match="TF-IDF"):
        chosen = load_embedder("minilm", REFERENCE)
    assert isinstance(chosen, TfidfEmbedder)


def test_minilm_is_chosen_when_installed_and_loads_nothing_until_it_embeds() -> None:
    if not embed.minilm_available():
        pytest.skip("sentence-transformers is not installed")
    chosen = load_embedder("minilm")
    assert isinstance(chosen, MiniLMEmbedder) and chosen._model is None
    assert (chosen.name, chosen.dim) == ("all-MiniLM-L6-v2", MINILM_DIM)
    assert chosen.encode([]).shape == (0, MINILM_DIM) and chosen._model is None


def test_embedder_names() -> None:
    assert isinstance(load_embedder("tfidf", REFERENCE), TfidfEmbedder)
    assert isinstance(load_embedder("hashing"), HashingEmbedder)
    with pytest.raises(ValueError, match="unknown embedder 'bert'"):
        load_embedder("bert")


def _oom(**signals: object) -> dict[str, object]:
    return {"incident_id": "inc", "anchor_kind": "cuda_oom", "signature": CUDA_OOM, "hosts": ["gpu-1"], "gpu_processes": 1, **signals}


LEAK = {"gpu_mem_growth_shape": "steady_leak", "gpu_mem_growth_bytes_per_s": 1.2e7, "gpu_mem_growth_sustained_s": 660.0,
        "gpu_mem_peak_pct": 99.4, "requested_over_free": 2.2}
HUGE_ALLOCATION = {"gpu_mem_growth_shape": "single_step", "gpu_mem_growth_bytes_per_s": 9.0e6, "gpu_mem_growth_sustained_s": 30.0,
                   "gpu_mem_peak_pct": 99.6, "requested_over_free": 53.0}


def _features(*rows: dict[str, object]) -> np.ndarray:
    incidents = schema.conform(pl.DataFrame(list(rows)), schema.INCIDENT_SCHEMA)
    return incident_features(incidents, HashingEmbedder().encode(incidents["signature"].to_list()))


def test_the_same_oom_message_from_a_leak_and_from_one_huge_allocation_lands_apart() -> None:
    leak, other_leak, huge = _features(_oom(**LEAK), _oom(**{**LEAK, "gpu_mem_growth_bytes_per_s": 9.5e6}), _oom(**HUGE_ALLOCATION))
    assert np.linalg.norm(leak - huge) > 0.6  # two unrelated signatures are TEXT_WEIGHT · √2 ≈ 1 apart
    assert np.linalg.norm(leak - other_leak) < 0.1


def test_signal_block_transforms_and_weights() -> None:
    incidents = schema.conform(pl.DataFrame([_oom(**LEAK), {"incident_id": "bare", "hosts": ["a", "b"]}]), schema.INCIDENT_SCHEMA)
    before = incidents.clone()
    block = signal_features(incidents)
    names = [feature.name for feature in SIGNAL_FEATURES]
    value = dict(zip(names, block[0], strict=True))
    assert block.shape == (2, len(SIGNAL_FEATURES)) and block.dtype == np.float32
    assert value["anchor_kind=cuda_oom"] == pytest.approx(0.35) and value["anchor_kind=oom_kill"] == 0.0
    assert value["gpu_mem_growth_shape=steady_leak"] == pytest.approx(0.45)
    assert value["gpu_mem_growth_bytes_per_s"] == pytest.approx(0.35 * np.log10(13.0) / 2, rel=1e-5)
    assert value["gpu_mem_peak_pct"] == pytest.approx(0.15 * 0.994, rel=1e-5)
    bare = dict(zip(names, block[1], strict=True))
    assert bare["hosts>=2"] == pytest.approx(0.35) and sum(abs(v) for k, v in bare.items() if k != "hosts>=2") == 0.0
    assert incidents.equals(before)


def test_incident_features_are_weighted_text_signals_and_rule_profile() -> None:
    incidents = schema.conform(pl.DataFrame([_oom(**LEAK)]), schema.INCIDENT_SCHEMA)
    text = HashingEmbedder(8).encode([CUDA_OOM])
    profile = np.array([[0.5, 1.0]], dtype=np.float32)
    features = incident_features(incidents, text, profile)
    assert features.shape == (1, 8 + len(SIGNAL_FEATURES) + 2)
    np.testing.assert_allclose(features[0, :8], TEXT_WEIGHT * text[0], rtol=1e-6)
    np.testing.assert_allclose(features[0, -2:], [0.5 * KB_WEIGHT, KB_WEIGHT])
