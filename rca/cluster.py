"""Failure modes: incidents grouped by what failed and why, stable across runs, each mapped to the knowledge base.

``rca cluster`` runs :func:`cluster_store`; :func:`cluster` does the same on frames.

1. **Vectors** (:mod:`rca.embed`): the signature's embedding (cached by a hash of the text),
   the weighted signals, and the knowledge base's rule profile.
2. **Earlier modes stay put.** The store keeps every mode's centroid and members
   (``failure_modes.parquet``). An incident a mode already holds stays in it.
3. **K-means** (scikit-learn; MiniBatchKMeans above ``minibatch_above`` distinct points;
   deterministic for a ``random_state``) clusters the other incidents *together with the
   earlier centroids*, each centroid a point weighted by its mode's size (:class:`ModeClusterer`).
   An incident whose cluster holds earlier centroids joins the nearest of them if it lies
   within ``join_distance`` (the centroid moves to the mean of old and new members); the
   incidents of a cluster that holds none make a new mode. So one criterion decides both
   how new incidents group and whether they are a known mode recurring.
4. **k** (``k="auto"``): the silhouette is computed for each k in [2, known + ``k_max``] (on
   the centroids and at most ``sample_size`` incidents), and the best k is taken among those
   at least as large as the smallest k whose clusters are all *tight* — every point within
   ``join_distance`` of its centre. Silhouette alone merges the singletons of a small first
   run (it scores a singleton 0); the tightness floor keeps modes at the scale at which later
   incidents join them. One cluster when every point is within ``join_distance / 2`` of the
   mean. The silhouette is taken over distinct points, so repeated identical incidents do
   not make a copy-per-cluster split look perfect.
   On the synthetic corpus this lifts the adjusted Rand index of a week clustered in two
   runs from about 0.73 to 0.87.
5. **Ids**: new modes get ``fm-NNN`` after the highest number ever used, in order of their
   first incident. Ids are never renumbered, merged or reused. Status as of the last run:
   ``new`` (made by it), ``recurring`` (it gained incidents), ``dormant`` (it gained none).
6. **Description**: size, hosts, first and last seen, the medoid (the member nearest the
   centroid) and a label: the anchor kind and signals most members share, then the signature
   words most specific to the mode (class-based TF-IDF).
7. **Knowledge base**: an incident's entry combines its rule scores with the best cosine
   between its signature and the entry's symptoms (rca.kb.combine_scores / best_matches, the
   rules weighted by :func:`default_rule_weight`); a mode's combines its members' mean rule
   scores with its centroid's similarity. Below ``kb_threshold`` the entry is ``unknown`` and
   the mode's medoid becomes a draft entry (rca.kb.draft_yaml) for ``STORE/kb_drafts/``.

When the feature space changes (another embedder, edited KB rules), the centroids of modes
whose members are still in the store are recomputed from them; the others stay dormant.
"""

from __future__ import annotations

import hashlib
import re
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from rca import embed, schema
from rca._failure_modes import drafts as draft_entries
from rca._failure_modes import mode_rules, mode_table, with_kb
from rca._mode_kmeans import JOIN_DISTANCE, ModeClusterer
from rca.store import Store

if TYPE_CHECKING:
    from rca.kb import KnowledgeBase

__all__ = [
    "JOIN_DISTANCE",
    "Clustering",
    "ModeClusterer",
    "cluster",
    "cluster_store",
    "default_rule_weight",
    "feature_space",
    "kb_reference",
    "parse_k",
]

FEATURES_VERSION = "features-v1"
_MODE_ID = re.compile(r"^fm-([0-9]+)$")


@dataclass(frozen=True)
class Clustering:
    """What :func:`cluster` found: the incidents with their mode and entry, the mode table, the cache, drafts."""

    incidents: pl.DataFrame  # rca.schema.CLUSTERED_INCIDENT_SCHEMA, in the input's order
    modes: pl.DataFrame  # rca.schema.FAILURE_MODE_SCHEMA: every mode ever made, by id
    embeddings: pl.DataFrame  # rca.schema.EMBEDDING_SCHEMA: the cache with this run's new vectors
    drafts: dict[str, str]  # file name → YAML of a draft entry, for each mode no entry matched
    report: dict


def cluster(
    incidents: pl.DataFrame,
    *,
    kb: KnowledgeBase | str | Path | None = None,
    embedder: embed.Embedder | str = "minilm",
    modes: pl.DataFrame | None = None,
    embeddings: pl.DataFrame | None = None,
    k: int | str = "auto",
    random_state: int | None = 0,
    join_distance: float = JOIN_DISTANCE,
    kb_threshold: float = 0.4,
    rule_weight: float | None = None,
) -> Clustering:
    """Group incidents (rca.schema.INCIDENT_SCHEMA) into failure modes, keeping the ``modes`` of earlier runs.

    ``kb``: a loaded knowledge base or its folder (default: the bundled one). ``embedder``: an
    :class:`rca.embed.Embedder` or a name from rca.embed.EMBEDDERS. ``embeddings``: the cache
    from earlier runs. ``k``: "auto", or K-means' k with the earlier modes counted in (on a
    first run, the number of modes). ``rule_weight``: the rules' share of a KB match (default:
    :func:`default_rule_weight`). The rest is described in the module docstring.
    """
    # Here, not at the top: rca.kb builds pydantic models (~0.2 s) that `import rca`, and so every
    # ingest worker process, would otherwise pay for.
    from rca.kb import KnowledgeBase, best_matches, combine_scores, load_kb, rule_scores

    started = time.perf_counter()
    base = _base(incidents)
    knowledge = kb if isinstance(kb, KnowledgeBase) else load_kb(kb)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", embed.EmbedderFallbackWarning)
        model = embed.load_embedder(embedder, kb_reference(knowledge)) if isinstance(embedder, str) else embedder
    notices = [str(warning.message) for warning in caught if issubclass(warning.category, embed.EmbedderFallbackWarning)]
    cache = embeddings if embeddings is not None else schema.empty(schema.EMBEDDING_SCHEMA)
    symptoms = knowledge.symptoms()
    vectors, cache_after = embed.encode_cached([*base["signature"].fill_null("").to_list(), *symptoms["text"].to_list()], model, cache)
    text, symptom_vectors, symptom_ids = vectors[: base.height], vectors[base.height :], symptoms["kb_id"].to_list()
    rules = rule_scores(base, knowledge)
    features = embed.incident_features(base, text, _profile(rules, base["incident_id"], knowledge.ids))
    prior = schema.conform(modes, schema.FAILURE_MODE_SCHEMA) if modes is not None else schema.empty(schema.FAILURE_MODE_SCHEMA)
    space = feature_space(model, knowledge)
    estimator = ModeClusterer(k, join_distance=join_distance, random_state=random_state)
    assigned = _assign(base, features, prior, space, estimator)
    similarity = _similarity(base["incident_id"].to_list(), text, symptom_vectors, symptom_ids)
    rule_weight = default_rule_weight(model) if rule_weight is None else rule_weight
    own = best_matches(combine_scores(rules, similarity, rule_weight=rule_weight), threshold=kb_threshold)
    table = mode_table(prior, base, features, assigned.mode_ids, assigned.centres, space)
    placed = table.filter(pl.col("mode_id").is_in(list(assigned.centres)))
    mode_similarity = _similarity(placed["mode_id"].to_list(), _text_part(placed, text.shape[1]), symptom_vectors, symptom_ids)
    table = with_kb(table, mode_rules(rules, base["incident_id"], assigned.mode_ids), mode_similarity, kb_threshold, rule_weight)
    clustered = _clustered(base, assigned.mode_ids, own)
    drafts = draft_entries(table, base)
    report = _report(clustered, table, assigned, model, cache, cache_after, drafts, notices, time.perf_counter() - started)
    return Clustering(clustered, table, cache_after, drafts, report)


def cluster_store(
    store: Store,
    *,
    k: int | str = "auto",
    seed: int | None = 0,
    embedder: embed.Embedder | str = "minilm",
    kb: KnowledgeBase | str | Path | None = None,
    **options: Any,
) -> dict:
    """Cluster a store's incidents and write the modes, the clustered incidents, the cache and drafts.

    Takes the store's lock (run it after ``correlate_store``). Returns the report, with
    ``drafts_written`` listing the draft files created (an existing draft is never overwritten).
    """
    with store.writing():
        result = cluster(
            store.incidents(), kb=kb, embedder=embedder, modes=store.failure_modes(), embeddings=store.embeddings(),
            k=k, random_state=seed, **options,
        )
        written = store.write_clustering(result.incidents, result.modes, result.embeddings, result.drafts)
    return {**result.report, "drafts_written": [str(path) for path in written]}


def parse_k(text: str) -> int | str:
    """``--k``: "auto" or a positive whole number."""
    cleaned = text.strip().lower()
    if cleaned == "auto":
        return "auto"
    if not cleaned.isdigit() or int(cleaned) < 1:
        raise ValueError(f"--k must be 'auto' or a positive whole number, not {text!r}")
    return int(cleaned)


def default_rule_weight(model: embed.Embedder) -> float:
    """The rules' share of a KB match: 0.6 next to MiniLM, 0.9 next to a lexical embedder.

    MiniLM's cosine to the symptoms is a real second opinion (it adds to the rules' accuracy
    on the synthetic corpus); TF-IDF's or hashing's mostly measures the boilerplate a CUDA OOM
    message shares with every GPU entry's symptoms, and at 0.4 it costs a tenth of the accuracy.
    """
    return 0.6 if isinstance(model, embed.MiniLMEmbedder) else 0.9


def kb_reference(kb: KnowledgeBase) -> list[str]:
    """The knowledge base's prose (titles, summaries, symptoms, root causes): what fits the TF-IDF embedder."""
    return [text for entry in kb for text in (entry.title, entry.summary, *entry.symptoms, entry.root_cause)]


def feature_space(model: embed.Embedder, kb: KnowledgeBase) -> str:
    """Names the space centroids live in: the embedder, the feature version and the KB's rules (the profile's columns)."""
    rules = "\x00".join(f"{entry.id}\x01" + "\x01".join(rule.model_dump_json() for rule in entry.signals) for entry in kb)
    return f"{model.name}+{FEATURES_VERSION}+kb-{hashlib.blake2b(rules.encode(), digest_size=4).hexdigest()}"


def _base(incidents: pl.DataFrame) -> pl.DataFrame:
    """The correlation's columns (an earlier clustering's are dropped and recomputed)."""
    kept = incidents.select([name for name in incidents.columns if name in schema.INCIDENT_SCHEMA])
    return schema.conform(kept, schema.INCIDENT_SCHEMA)


def _profile(rules: pl.DataFrame, incident_ids: pl.Series, entry_ids: list[str]) -> np.ndarray:
    """The rule score of every (incident, entry) as a matrix: incidents in order, entries in KB order."""
    if not entry_ids or not len(incident_ids):
        return np.zeros((len(incident_ids), len(entry_ids)), dtype=np.float32)
    wide = rules.pivot(on="kb_id", index="incident_id", values="rule_score", aggregate_function="first")
    ordered = pl.DataFrame({"incident_id": incident_ids}).join(wide, on="incident_id", how="left", maintain_order="left")
    columns = [pl.col(entry).fill_null(0.0) if entry in ordered.columns else pl.lit(0.0).alias(entry) for entry in entry_ids]
    return ordered.select(columns).to_numpy().astype(np.float32).reshape(len(incident_ids), len(entry_ids))


@dataclass(frozen=True)
class _Assignment:
    """Each incident's mode, the modes' new centroids, and how the incidents got there."""

    mode_ids: list[str]  # one per incident, in order
    centres: dict[str, np.ndarray]  # centroid of every mode that has a member in this run
    created: list[str]  # ids of the modes this run made, in order
    kept: int  # incidents an earlier run had already assigned
    joined: int  # new incidents that joined an earlier mode
    k: int  # K-means' k, earlier modes included
    silhouette: dict[int, float]


def _assign(base: pl.DataFrame, features: np.ndarray, prior: pl.DataFrame, space: str, estimator: ModeClusterer) -> _Assignment:
    """Incidents an earlier run assigned keep their mode; the others join a close mode or form new ones."""
    row_of = {incident_id: row for row, incident_id in enumerate(base["incident_id"].to_list())}
    mode_ids: list[str | None] = [None] * base.height
    known: list[tuple[str, np.ndarray, float]] = []
    for mode in prior.select("mode_id", "space", "centroid", "size", "incident_ids").iter_rows(named=True):
        members = [row_of[incident_id] for incident_id in mode["incident_ids"] or [] if incident_id in row_of]
        for row in members:
            mode_ids[row] = mode["mode_id"]
        if mode["space"] == space and mode["centroid"] is not None and len(mode["centroid"]) == features.shape[1]:
            known.append((mode["mode_id"], np.asarray(mode["centroid"], dtype=np.float64), float(mode["size"] or 1)))
        elif members:
            known.append((mode["mode_id"], features[members].mean(axis=0), float(len(members))))
    fresh = np.array([row for row, mode_id in enumerate(mode_ids) if mode_id is None], dtype=np.int64)
    centres = np.array([centre for _, centre, _ in known]).reshape(len(known), features.shape[1])
    estimator.fit(features[fresh], known_centers=centres, known_weights=[weight for _, _, weight in known])
    created = _new_ids(base, fresh, estimator, prior)
    names = [mode_id for mode_id, _, _ in known] + created
    for row, label in zip(fresh, estimator.labels_, strict=True):
        mode_ids[row] = names[label]
    moved = dict(zip(names, estimator.cluster_centers_, strict=True))
    present = set(mode_ids)
    for mode_id, centre, _ in known:
        if mode_id in present and mode_id not in moved:
            moved[mode_id] = centre
    return _Assignment(
        [str(mode_id) for mode_id in mode_ids],
        {mode_id: centre for mode_id, centre in moved.items() if mode_id in present},
        created,
        kept=base.height - len(fresh),
        joined=int(estimator.joined_.sum()),
        k=estimator.k_,
        silhouette=estimator.silhouette_,
    )


def _new_ids(base: pl.DataFrame, fresh: np.ndarray, estimator: ModeClusterer, prior: pl.DataFrame) -> list[str]:
    """Ids for the new clusters (by label), numbered after every id ever used, in order of each cluster's first incident."""
    numbers = [int(match.group(1)) for match in map(_MODE_ID.match, prior["mode_id"].to_list()) if match]
    start = max(numbers, default=0) + 1
    new_labels = estimator.labels_ - estimator.n_known_
    firsts = (
        base.select("incident_id", "start")[fresh.tolist()]
        .with_columns(label=pl.Series(new_labels))
        .filter(pl.col("label") >= 0)
        .group_by("label")
        .agg(pl.col("start").min(), pl.col("incident_id").min())
        .sort("start", "incident_id", nulls_last=True)
    )
    ids = [""] * estimator.n_new_
    for number, label in enumerate(firsts["label"].to_list(), start=start):
        ids[label] = f"fm-{number:03d}"
    return ids


def _similarity(ids: list[str], vectors: np.ndarray, symptom_vectors: np.ndarray, symptom_kb_ids: list[str]) -> pl.DataFrame:
    """(incident_id, kb_id, similarity): the best cosine between each vector and the entry's symptoms."""
    entries = list(dict.fromkeys(symptom_kb_ids))
    if not ids or not entries:
        return pl.DataFrame(schema={"incident_id": pl.String, "kb_id": pl.String, "similarity": pl.Float64})
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = (vectors / np.where(norms > 0, norms, 1.0)) @ symptom_vectors.T
    owner = np.array(symptom_kb_ids)
    best = np.column_stack([cosines[:, owner == entry].max(axis=1) for entry in entries])
    return pl.DataFrame(
        {"incident_id": np.repeat(ids, len(entries)), "kb_id": np.tile(entries, len(ids)), "similarity": best.ravel().astype(np.float64)}
    )


def _text_part(modes: pl.DataFrame, text_dim: int) -> np.ndarray:
    """The text block of each mode's centroid (the leading ``text_dim`` features): what is compared with the symptoms."""
    if modes.is_empty():
        return np.zeros((0, text_dim), dtype=np.float32)
    return np.array(modes["centroid"].to_list(), dtype=np.float32)[:, :text_dim]


def _clustered(base: pl.DataFrame, mode_ids: list[str], own: pl.DataFrame) -> pl.DataFrame:
    with_mode = base.with_columns(failure_mode=pl.Series(mode_ids, dtype=pl.String))
    joined = with_mode.join(own.select("incident_id", "kb_id", "kb_confidence"), on="incident_id", how="left", maintain_order="left")
    return schema.conform(joined, schema.CLUSTERED_INCIDENT_SCHEMA)


def _report(incidents: pl.DataFrame, modes: pl.DataFrame, assigned: _Assignment, model: embed.Embedder,
            cache_before: pl.DataFrame, cache_after: pl.DataFrame, drafts: dict[str, str], notices: list[str], seconds: float) -> dict:
    from rca.kb import UNKNOWN  # loaded by cluster() already (see there)

    statuses = dict(modes.group_by("status").len().iter_rows())
    return {
        "incidents": incidents.height,
        "modes": modes.height,
        **{f"{status}_modes": statuses.get(status, 0) for status in schema.MODE_STATUSES},
        "kept": assigned.kept,
        "joined": assigned.joined,
        "created": assigned.created,
        "k": assigned.k,
        "silhouette": round(assigned.silhouette[assigned.k], 4) if assigned.k in assigned.silhouette else None,
        "embedder": model.name,
        "embedded_texts": cache_after.height - cache_before.height,
        "unknown_incidents": int((incidents["kb_id"] == UNKNOWN).sum()),
        "unknown_modes": modes.filter((pl.col("kb_id") == UNKNOWN) & (pl.col("status") != "dormant"))["mode_id"].to_list(),
        "drafts": sorted(drafts),
        "notices": notices,
        "seconds": round(seconds, 3),
    }
