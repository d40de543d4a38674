"""The mode table of rca.cluster: this run's members merged into the earlier modes, then labels, medoids and KB entries."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl

from rca import schema
from rca.embed import signature_words

_LABEL_SIGNALS = ("anchor_kind", "gpu_mem_growth_shape", "oom_constraint", "runtime_oom")
_TERMS = 3
_NO_STRINGS = pl.lit([], dtype=pl.List(pl.String))


def mode_table(prior: pl.DataFrame, base: pl.DataFrame, features: np.ndarray, mode_ids: list[str],
               centres: Mapping[str, np.ndarray], space: str) -> pl.DataFrame:
    """Every mode (FAILURE_MODE_SCHEMA, by number), this run's members merged into what earlier runs recorded.

    The knowledge-base columns are the earlier run's; :func:`with_kb` updates them.
    """
    members = _members(prior, base, features, mode_ids, centres)
    current = members.group_by("mode_id").agg(
        run_ids=pl.col("incident_id").sort(),
        run_hosts=pl.col("hosts").list.explode(keep_nulls=False, empty_as_null=False).unique().sort(),
        run_first=pl.col("start").min(),
        run_last=pl.col("end").max(),
        run_medoid=pl.col("incident_id").sort_by("distance", "incident_id").first(),
        run_new=pl.col("new").sum().cast(pl.Int32),
    )
    moved = pl.DataFrame(
        {"mode_id": list(centres), "run_centroid": [centre.astype(np.float32).tolist() for centre in centres.values()]},
        schema={"mode_id": pl.String, "run_centroid": pl.List(pl.Float32)},
    )
    table = (
        prior.with_columns(_earlier=pl.lit(True))
        .join(current, on="mode_id", how="full", coalesce=True)
        .join(mode_labels(members), on="mode_id", how="left")
        .join(moved, on="mode_id", how="left")
    )
    merged = table.with_columns(
        incident_ids=_union("incident_ids", "run_ids"),
        hosts=_union("hosts", "run_hosts"),
        first_seen=pl.min_horizontal("first_seen", "run_first"),
        last_seen=pl.max_horizontal("last_seen", "run_last"),
        status=pl.when(pl.col("_earlier").is_null()).then(pl.lit("new"))
        .when(pl.col("run_new") > 0).then(pl.lit("recurring"))
        .otherwise(pl.lit("dormant")),
        new_incidents=pl.col("run_new").fill_null(0),
        medoid_incident=pl.coalesce("run_medoid", "medoid_incident"),
        label=pl.coalesce("run_label", "label"),
        terms=pl.coalesce("run_terms", "terms"),
        centroid=pl.coalesce("run_centroid", "centroid"),
        space=pl.when(pl.col("run_centroid").is_not_null()).then(pl.lit(space)).otherwise(pl.col("space")),
    ).with_columns(size=pl.col("incident_ids").list.len())
    number = pl.col("mode_id").str.extract(r"([0-9]+)$").cast(pl.Int64, strict=False)
    ordered = merged.sort(number, "mode_id", nulls_last=True).select(list(schema.FAILURE_MODE_SCHEMA))
    return schema.conform(ordered, schema.FAILURE_MODE_SCHEMA)


def _union(earlier: str, now: str) -> pl.Expr:
    """The sorted distinct items of two list columns, either of which may be null."""
    return pl.concat_list(pl.col(earlier).fill_null(_NO_STRINGS), pl.col(now).fill_null(_NO_STRINGS)).list.unique().list.sort()


def _members(prior: pl.DataFrame, base: pl.DataFrame, features: np.ndarray, mode_ids: list[str],
             centres: Mapping[str, np.ndarray]) -> pl.DataFrame:
    """This run's incidents with their mode, their distance to its centroid, and whether no earlier run had assigned them."""
    if base.height:
        own_centre = np.stack([centres[mode_id] for mode_id in mode_ids])
        distance = np.linalg.norm(features - own_centre, axis=1)
    else:
        distance = np.zeros(0)
    earlier = prior.select(pl.col("incident_ids").explode().drop_nulls())["incident_ids"].implode()
    return base.select("incident_id", "hosts", "start", "end", "signature", *_LABEL_SIGNALS).with_columns(
        mode_id=pl.Series(mode_ids, dtype=pl.String),
        distance=pl.Series(distance, dtype=pl.Float64),
        new=~pl.col("incident_id").is_in(earlier),
    )


def mode_labels(members: pl.DataFrame) -> pl.DataFrame:
    """(mode_id, run_label, run_terms): what the members share, then the words most specific to the mode.

    The words are ranked by class-based TF-IDF: a word's share of the mode's words times
    log(1 + average words per mode / the word's count over all modes).
    """
    terms = _terms(members)
    shared = _shared_signals(members)
    modes = members.select("mode_id").unique().join(shared, on="mode_id", how="left").join(terms, on="mode_id", how="left")
    labels = [
        " · ".join(part for part in parts if part) + (f" — {', '.join(words)}" if words else "")
        for *parts, words in modes.select(*_LABEL_SIGNALS, "multi_host", pl.col("run_terms").fill_null(_NO_STRINGS)).rows()
    ]
    return modes.select("mode_id", run_label=pl.Series(labels, dtype=pl.String), run_terms=pl.col("run_terms").fill_null(_NO_STRINGS))


def _terms(members: pl.DataFrame) -> pl.DataFrame:
    signatures = members.select(pl.col("signature").fill_null("")).unique()
    split = [signature_words(text) for text in signatures["signature"].to_list()]
    words = signatures.with_columns(word=pl.Series(split, dtype=pl.List(pl.String)))
    counted = (
        members.select("mode_id", pl.col("signature").fill_null(""))
        .join(words, on="signature")
        .explode("word")
        .drop_nulls("word")
        .filter(~pl.col("word").is_in(list(_stop_words())))
        .group_by("mode_id", "word")
        .len("n")
    )
    if counted.is_empty():
        return pl.DataFrame(schema={"mode_id": pl.String, "run_terms": pl.List(pl.String)})
    per_mode = counted["n"].sum() / counted["mode_id"].n_unique()
    scored = counted.with_columns(
        score=pl.col("n") / pl.col("n").sum().over("mode_id") * (1 + per_mode / pl.col("n").sum().over("word")).log()
    )
    return scored.sort("mode_id", "score", "word", descending=[False, True, False]).group_by("mode_id", maintain_order=True).agg(
        run_terms=pl.col("word").head(_TERMS)
    )


def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return ENGLISH_STOP_WORDS | set(schema.KINDS)


def _shared_signals(members: pl.DataFrame) -> pl.DataFrame:
    """Per mode, each label signal's most common value when at least half the members have it."""
    size = members.group_by("mode_id").agg(size=pl.len(), multi=(pl.col("hosts").list.len() >= 2).sum())
    shared = size.select("mode_id", multi_host=pl.when(pl.col("multi") * 2 >= pl.col("size")).then(pl.lit("multi-host")))
    for column in _LABEL_SIGNALS:
        common = (
            members.drop_nulls(column)
            .group_by("mode_id", column)
            .len("n")
            .sort("mode_id", "n", column, descending=[False, True, False])
            .unique("mode_id", keep="first")
            .join(size, on="mode_id")
            .filter(pl.col("n") * 2 >= pl.col("size"))
            .select("mode_id", column)
        )
        shared = shared.join(common, on="mode_id", how="left")
    return shared.select("mode_id", *_LABEL_SIGNALS, "multi_host")


def mode_rules(rules: pl.DataFrame, incident_ids: pl.Series, mode_ids: list[str]) -> pl.DataFrame:
    """Each mode's rule scores: the mean over its members in this run, keyed by the mode id in ``incident_id``."""
    owner = pl.DataFrame({"incident_id": incident_ids, "mode_id": pl.Series(mode_ids, dtype=pl.String)})
    return (
        rules.join(owner, on="incident_id", maintain_order="left")
        .group_by("mode_id", "kb_id", maintain_order=True)
        .agg(rule_score=pl.col("rule_score").mean(), eligible=pl.col("eligible").any())
        .rename({"mode_id": "incident_id"})
    )


def with_kb(table: pl.DataFrame, rules: pl.DataFrame, similarity: pl.DataFrame, threshold: float, rule_weight: float) -> pl.DataFrame:
    """The modes' entries from their members' rules and their centroid's similarity (modes without members keep theirs)."""
    from rca.kb import best_matches, combine_scores  # imported where used: see rca.cluster.cluster

    best = best_matches(combine_scores(rules, similarity, rule_weight=rule_weight), threshold=threshold).select(
        mode_id="incident_id", run_kb="kb_id", run_confidence="kb_confidence", run_runner_up="runner_up"
    )
    updated = table.join(best, on="mode_id", how="left", maintain_order="left").with_columns(
        kb_id=pl.coalesce("run_kb", "kb_id"),
        kb_confidence=pl.when(pl.col("run_kb").is_not_null()).then(pl.col("run_confidence")).otherwise(pl.col("kb_confidence")),
        kb_runner_up=pl.when(pl.col("run_kb").is_not_null()).then(pl.col("run_runner_up")).otherwise(pl.col("kb_runner_up")),
    )
    return updated.select(list(schema.FAILURE_MODE_SCHEMA))


def drafts(table: pl.DataFrame, base: pl.DataFrame) -> dict[str, str]:
    """A draft entry (file name → YAML) from the medoid of each mode no entry matched, when the medoid is in this run."""
    from rca.kb import UNKNOWN, draft_entry, draft_yaml  # imported where used: see rca.cluster.cluster

    unknown = table.filter(pl.col("kb_id") == UNKNOWN).select(incident_id="medoid_incident")
    rows = base.join(unknown, on="incident_id", how="semi").to_dicts()
    return {f"{draft_entry(row)['id']}.yaml": draft_yaml(row) for row in rows}
