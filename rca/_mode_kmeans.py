"""The estimator of rca.cluster: K-means that keeps the clusters it already knows."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

JOIN_DISTANCE = 1.0
"""The scale of a mode in rca.embed's feature space: no member is farther from its centroid when
k is chosen, and a new incident joins a mode only within it (two unrelated signatures are ≈ 1 apart)."""


class ModeClusterer:
    """K-means that keeps the clusters it already knows (scikit-learn estimator conventions).

    The known centres take part in the clustering as points of their own, weighted by how
    many members each stands for, so one criterion decides both how to group the new rows
    and whether they belong to a known cluster: a row whose cluster holds known centres
    joins the nearest of them; a cluster that holds none joins the known centre nearest its
    mean when that is within ``join_distance``, and otherwise makes a new cluster. A row
    never joins a centre farther than ``join_distance``. Known clusters are never merged or split.

    scikit-learn is imported only by :meth:`fit`, so ``import rca`` stays fast;
    ``sklearn.base.clone`` works on it.

    Parameters
    ----------
    n_clusters : "auto" or int, default "auto"
        K-means' k, the known centres included. ``"auto"``: the k with the highest silhouette
        among those in [2, n_known + ``k_max``] at least as large as the smallest k whose
        clusters are tight (every point within ``join_distance`` of its centre); 1 when
        every point lies within ``join_distance / 2`` of the mean (so within
        ``join_distance`` of each other).
    k_max : int, default 40
        How many clusters beyond the known ones ``"auto"`` tries at most.
    join_distance : float, default JOIN_DISTANCE
        The farthest a row may be from a known centre and still join it.
    minibatch_above : int, default 5000
        MiniBatchKMeans instead of KMeans for more distinct points than this.
    sample_size : int, default 1000
        Points (the known centres and a seeded random sample of the rows) on which
        ``"auto"`` chooses k, with one k-means++ start per k; the final fit uses every row,
        starting from the sample's clustering.
    n_init : int, default 4
        K-means restarts of the final fit when it does not start from a sample's clustering:
        one bad start can merge two small clusters.
    random_state : int or None, default 0
        Seed of the sample and of the K-means initialisations.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Index into ``cluster_centers_``: below ``n_known_`` a known centre, then the new clusters.
    cluster_centers_ : ndarray of shape (n_known_ + n_new_, n_features)
        The known centres, each moved to the weighted mean of its old weight and its new rows,
        then the new clusters' centres (numbered in the order of their first row).
    n_known_ : int
        Number of known centres.
    n_new_ : int
        Number of new clusters.
    joined_ : ndarray of bool, shape (n_samples,)
        Whether the row joined a known centre.
    k_ : int
        The k of the K-means fit (known centres included).
    silhouette_ : dict of int to float
        Silhouette of each k that ``"auto"`` chose among (empty when k was given or not chosen).
    """

    def __init__(
        self,
        n_clusters: int | str = "auto",
        *,
        k_max: int = 40,
        join_distance: float = JOIN_DISTANCE,
        minibatch_above: int = 5000,
        sample_size: int = 1000,
        n_init: int = 4,
        random_state: int | None = 0,
    ) -> None:
        self.n_clusters = n_clusters
        self.k_max = k_max
        self.join_distance = join_distance
        self.minibatch_above = minibatch_above
        self.sample_size = sample_size
        self.n_init = n_init
        self.random_state = random_state

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's parameters, as scikit-learn's ``get_params``."""
        return {name: getattr(self, name) for name in _init_parameters(type(self))}

    def set_params(self, **params: Any) -> ModeClusterer:
        """Set constructor parameters, as scikit-learn's ``set_params``."""
        valid = self.get_params()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; valid: {', '.join(valid)}")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = _init_parameters(type(self))
        changed = [f"{name}={value!r}" for name, value in self.get_params().items() if value != defaults[name]]
        return f"{type(self).__name__}({', '.join(changed)})"

    def fit(self, X: Any, y: None = None, *, known_centers: Any = None, known_weights: Any = None) -> ModeClusterer:
        """Assign rows to the known centres or to new clusters.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        known_centers : array-like of shape (n_known, n_features), optional
        known_weights : array-like of shape (n_known,), optional
            How many earlier members each known centre stands for (default 1 each).
        """
        self._check_params()
        data = np.asarray(X, dtype=np.float64)
        if data.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, not of shape {data.shape}")
        width = data.shape[1]
        centres = np.empty((0, width)) if known_centers is None else np.asarray(known_centers, dtype=np.float64).reshape(-1, width)
        weights = np.ones(len(centres)) if known_weights is None else np.asarray(known_weights, dtype=np.float64).reshape(len(centres))
        if np.any(weights <= 0):
            raise ValueError("known_weights must be positive")
        points, masses = np.vstack([centres, data]), np.concatenate([weights, np.ones(len(data))])
        # The products K-means and the silhouette make are small (a thousand points by a few hundred features):
        # a multi-threaded BLAS spends longer synchronising than computing them (15x slower on a busy 2-core box).
        with threadpool_limits(limits=1, user_api="blas"):
            groups, self.k_, self.silhouette_ = self._groups(points, masses, len(centres))
        labels = self._join(data, centres, groups[: len(centres)], groups[len(centres) :])
        fresh = labels < 0
        new_labels, new_centres = np.zeros(0, np.int64), np.empty((0, width))
        if fresh.any():
            new_labels, new_centres = _renumbered(groups[len(centres) :][fresh], data[fresh])
        labels[fresh] = new_labels + len(centres)
        self.labels_ = labels
        self.joined_ = ~fresh
        self.cluster_centers_ = np.vstack([_moved(centres, weights, data, labels), new_centres])
        self.n_known_ = len(centres)
        self.n_new_ = len(new_centres)
        return self

    def fit_predict(self, X: Any, y: None = None, **fit_params: Any) -> np.ndarray:
        """:meth:`fit`, then ``labels_``."""
        return self.fit(X, **fit_params).labels_

    def _check_params(self) -> None:
        if not (self.n_clusters == "auto" or (isinstance(self.n_clusters, (int, np.integer)) and self.n_clusters >= 1)):
            raise ValueError(f"n_clusters must be 'auto' or a positive integer, not {self.n_clusters!r}")
        if self.k_max < 1 or self.sample_size < 2 or self.n_init < 1:
            raise ValueError("k_max and n_init must be at least 1, sample_size at least 2")
        if self.join_distance < 0:
            raise ValueError("join_distance must not be negative")

    def _join(self, data: np.ndarray, centres: np.ndarray, centre_groups: np.ndarray, row_groups: np.ndarray) -> np.ndarray:
        """Each row's known centre (-1 for none), within join_distance of the row.

        A row may join the known centres its K-means cluster holds, the nearest first; a
        cluster that holds none may join the known centre nearest its own mean, when that is
        within join_distance (k can be finer than the known clusters: a recurring cluster
        split in two is still the same cluster).
        """
        labels = np.full(len(data), -1, dtype=np.int64)
        if not len(centres) or not len(data):
            return labels
        reachable = centre_groups[None, :] == row_groups[:, None]
        for group in np.unique(row_groups[~reachable.any(axis=1)]):
            members = row_groups == group
            gaps = np.linalg.norm(centres - data[members].mean(axis=0), axis=1)
            if gaps.min() <= self.join_distance:
                reachable[members, gaps.argmin()] = True
        distances = np.where(reachable, _distances(data, centres), np.inf)
        nearest = distances.argmin(axis=1)
        near = distances[np.arange(len(data)), nearest] <= self.join_distance
        labels[near] = nearest[near]
        return labels

    def _groups(self, points: np.ndarray, weights: np.ndarray, n_known: int) -> tuple[np.ndarray, int, dict[int, float]]:
        """K-means cluster of every point (the known centres first), k, and the silhouettes that chose it.

        Identical points (repeated signatures with the same signals) are clustered once with
        their summed weight, which gives the same K-means as clustering every copy.
        """
        if len(points) == 0:
            return np.zeros(0, dtype=np.int64), 0, {}
        distinct, inverse = _distinct(points)
        mass = np.bincount(inverse, weights=weights)
        silhouettes: dict[int, float] = {}
        start: np.ndarray | None = None
        if self.n_clusters != "auto":
            k = min(int(self.n_clusters), len(distinct))
        elif np.linalg.norm(distinct - np.average(distinct, axis=0, weights=mass), axis=1).max() <= self.join_distance / 2:
            k = 1
        else:
            silhouettes, starts, sampled = self._silhouettes(points, weights, n_known)
            k = max(silhouettes, key=lambda key: (silhouettes[key], -key)) if silhouettes else min(2, len(distinct))
            start = starts.get(k) if sampled else None
        if k == 1:
            return np.zeros(len(points), dtype=np.int64), 1, silhouettes
        return self._kmeans(k, len(distinct), start).fit_predict(distinct, sample_weight=mass)[inverse], k, silhouettes

    def _silhouettes(self, points: np.ndarray, weights: np.ndarray, n_known: int) -> tuple[dict[int, float], dict[int, np.ndarray], bool]:
        """Silhouette and centres of each k in [2, n_known + k_max] on the known centres and a sample of the rows.

        The silhouette is taken over the distinct points: copies of one point would score
        1 each for any k that gives that point its own cluster. The third value says whether
        the rows were sampled (then the final fit starts from these centres).
        """
        from sklearn.metrics import silhouette_score

        chosen = np.arange(len(points))
        sampled = len(points) > self.sample_size
        if sampled:
            rows = max(self.sample_size - n_known, self.sample_size // 2)
            picked = np.random.default_rng(self.random_state).choice(len(points) - n_known, size=rows, replace=False)
            chosen = np.concatenate([np.arange(n_known), n_known + np.sort(picked)])
        distinct, inverse = _distinct(points[chosen])
        mass = np.bincount(inverse, weights=weights[chosen])
        scores, centres, tight = {}, {}, set()
        for k in range(2, min(n_known + self.k_max, len(distinct) - 1) + 1):
            model = self._kmeans(k, len(distinct), n_init=1)
            labels = model.fit_predict(distinct, sample_weight=mass)
            if len(np.unique(labels)) > 1:
                scores[k] = float(silhouette_score(distinct, labels))
                centres[k] = model.cluster_centers_
                if np.linalg.norm(distinct - model.cluster_centers_[labels], axis=1).max() <= self.join_distance:
                    tight.add(k)
        if tight:
            scores = {k: score for k, score in scores.items() if k >= min(tight)}
        return scores, centres, sampled

    def _kmeans(self, k: int, points: int, start: np.ndarray | None = None, n_init: int | None = None) -> Any:
        """KMeans, or MiniBatchKMeans above ``minibatch_above`` points; started from ``start`` centres when given."""
        from sklearn.cluster import KMeans, MiniBatchKMeans

        estimator = MiniBatchKMeans if points > self.minibatch_above else KMeans
        if start is not None:
            return estimator(n_clusters=k, init=start, n_init=1, random_state=self.random_state)
        return estimator(n_clusters=k, n_init=self.n_init if n_init is None else n_init, random_state=self.random_state)


def _init_parameters(cls: type) -> dict[str, Any]:
    """The keyword parameters of ``cls.__init__`` and their defaults."""
    return {name: parameter.default for name, parameter in inspect.signature(cls.__init__).parameters.items() if name != "self"}


def _distinct(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct points and each point's index among them."""
    distinct, inverse = np.unique(points, axis=0, return_inverse=True)
    return distinct, inverse.reshape(-1)


def _distances(rows: np.ndarray, centres: np.ndarray) -> np.ndarray:
    squared = (rows**2).sum(axis=1)[:, None] + (centres**2).sum(axis=1)[None, :] - 2.0 * rows @ centres.T
    return np.sqrt(np.clip(squared, 0.0, None))


def _moved(centres: np.ndarray, weights: np.ndarray, data: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each known centre moved to the weighted mean of its old weight and the rows that joined it."""
    moved = centres.copy()
    for index in np.unique(labels[(labels >= 0) & (labels < len(centres))]):
        members = data[labels == index]
        moved[index] = (weights[index] * centres[index] + members.sum(axis=0)) / (weights[index] + len(members))
    return moved


def _renumbered(labels: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Clusters numbered by their first row (K-means' own numbering follows its random start), with exact mean centres."""
    _, first = np.unique(labels, return_index=True)
    order = labels[np.sort(first)]
    renumber = np.empty(labels.max() + 1, dtype=np.int64)
    renumber[order] = np.arange(len(order))
    numbered = renumber[labels]
    centres = np.zeros((len(order), rows.shape[1]))
    np.add.at(centres, numbered, rows)
    return numbered, centres / np.bincount(numbered)[:, None]
