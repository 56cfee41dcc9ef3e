"""Shared machinery of the SDR estimators: validation, standardisation, localisation, canonical bases.

One copy of the local linear fits, bandwidth and neighbour rules, the OPG gradient outer product and the basis
canonicaliser, used by :class:`SMAVE`, :class:`OPG`, :class:`RMAVE` and :class:`MAVEDimensionCV`.
"""

import math
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.spatial import cKDTree
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin

from sklearn_frontier.kernels.sdr import KERNEL_CODES, sdr_local_wls, sdr_opg_slopes
from sklearn_frontier.utils._compat import Interval, StrOptions, check_is_fitted, validate_data
from sklearn_frontier.utils._manifolds import canonical_signs, qr_retraction

# Module constants of the method: anchor caps, neighbourhood sizes and step-size schedule.
MAX_OPG_ANCHORS = 1000
MAX_EVAL_ANCHORS = 2000
KNN_BLOCK = 256
DENSE_BLOCK = 64
OPG_RIDGE = 1e-6
KERNELS = tuple(KERNEL_CODES)

_COMMON_CONSTRAINTS = {
    "n_components": [Interval(Integral, 1, None, closed="left")],
    "kernel": [StrOptions(set(KERNELS))],
    "standardize": ["boolean"],
    "ridge": [Interval(Real, 0, None, closed="left")],
    "random_state": ["random_state"],
}


def default_n_neighbors(n_samples, n_components):
    """SMAVE's projected-space k: ``min(n, clip(ceil(n ** (4 / (d + 4))), 10 (d + 1), 200))``."""
    d = n_components
    k = math.ceil(n_samples ** (4.0 / (d + 4)))
    return int(min(n_samples, max(10 * (d + 1), min(k, 200))))


def ambient_n_neighbors(n_samples, n_features):
    """OPG's ambient k: ``min(n, max(4 p, 100))``."""
    return int(min(n_samples, max(4 * n_features, 100)))


def opg_bandwidth(n_samples, n_features):
    """Xia (2007)'s OPG bandwidth on standardised data: ``2.34 n ** (-1 / (max(p, 3) + 6))``."""
    return 2.34 * n_samples ** (-1.0 / (max(n_features, 3) + 6))


def projected_bandwidth(P):
    """RMAVE's kernel bandwidth: ``mean_a sd(P_a) * n ** (-1 / (d + 4))`` (orthoDr's ``hMave`` limit)."""
    n, d = P.shape
    h = float(np.mean(np.std(P, axis=0)))
    return (h if h > 0 else 1.0) * n ** (-1.0 / (d + 4))


def block_knn(Z, sq, rows, k):
    """k nearest rows of ``Z`` to ``Z[rows]`` (one block, at most ``KNN_BLOCK`` rows), ordered by (D^2, index)."""
    n = Z.shape[0]
    D2 = np.maximum(sq[rows, None] + sq[None, :] - 2.0 * (Z[rows] @ Z.T), 0.0)
    D2[np.arange(rows.shape[0]), rows] = 0.0
    part = np.argpartition(D2, k - 1, axis=1)[:, :k] if k < n else np.broadcast_to(np.arange(n), D2.shape)
    order = np.lexsort((part, np.take_along_axis(D2, part, axis=1)), axis=1)
    return np.take_along_axis(part, order, axis=1)


def ambient_knn(Z, anchors, k, block=KNN_BLOCK):
    """k nearest rows of ``Z`` to ``Z[anchors]`` by blocked brute force (``block`` anchors at a time).

    O(n_a n p): linear in n (an all-pairs ambient kNN would be a hidden O(n^2)). Neighbours are ordered by
    (squared distance, index), so the anchor itself comes first.
    """
    Z = np.asarray(Z, dtype=np.float64)
    anchors = np.asarray(anchors, dtype=np.int64)
    sq = np.einsum("ij,ij->i", Z, Z)
    out = np.empty((anchors.shape[0], k), dtype=np.int64)
    for start in range(0, anchors.shape[0], block):
        out[start:start + block] = block_knn(Z, sq, anchors[start:start + block], k)
    return out


def projected_tree(P):
    """k-d tree on the projected points (unbalanced: about half the build time, same answers)."""
    return cKDTree(P, leafsize=16, balanced_tree=False, compact_nodes=False)


def query_neighbors(tree, centres, k):
    """Indices (m, k) of the k nearest tree points to each centre."""
    _, idx = tree.query(centres, k=k)
    return np.asarray(idx, dtype=np.int64).reshape(centres.shape[0], k)


def projected_local_fits(Z, y, B, anchors, *, localization="knn", n_neighbors=None, kernel="gaussian",
                         bandwidth=None, ridge=1e-8, tree=None):
    """Local linear fits of ``y`` on ``Z @ B`` at ``anchors``: ``(P, nbr, w, e, theta, rss, ok)``.

    ``localization="knn"``: the k nearest projected points, adaptive weights; ``"kernel"``: every point, Gaussian
    weights of bandwidth ``bandwidth`` (``None``: :func:`projected_bandwidth`), streamed in blocks of 64 anchors
    (``nbr``, ``w`` and ``e`` are then None, only ``theta``, ``rss`` and ``ok`` are returned).
    """
    P = Z @ B
    code = KERNEL_CODES[kernel]
    if localization == "knn":
        tree = projected_tree(P) if tree is None else tree
        nbr = query_neighbors(tree, P[anchors], n_neighbors)
        w, e, theta, rss, ok = sdr_local_wls(P, y, P[anchors], nbr, code, 0.0, ridge)
        return P, nbr, w, e, theta, rss, ok
    h = projected_bandwidth(P) if bandwidth is None else bandwidth
    thetas, rsss, oks = [], [], []
    n = P.shape[0]
    for start in range(0, len(anchors), DENSE_BLOCK):
        idx = anchors[start:start + DENSE_BLOCK]
        nbr = np.broadcast_to(np.arange(n, dtype=np.int64), (len(idx), n))
        _, _, theta, rss, ok = sdr_local_wls(P, y, P[idx], nbr, 0, h, ridge)
        thetas.append(theta), rsss.append(rss), oks.append(ok)
    return P, None, None, None, np.concatenate(thetas), np.concatenate(rsss), np.concatenate(oks)


def opg_outer_product(Z, y, anchors, *, localization="knn", n_neighbors=None, bandwidth=None, kernel="gaussian",
                      ridge=OPG_RIDGE):
    """OPG's ``M = mean_j b_j b_j^T`` from ambient local linear fits at ``anchors``; returns ``(M, n_failed)``."""
    n, p = Z.shape
    code = KERNEL_CODES[kernel]
    if localization == "knn":
        k = n_neighbors or ambient_n_neighbors(n, p)
        nbr = ambient_knn(Z, anchors, min(k, n))
        b, ok = sdr_opg_slopes(Z, y, Z[anchors], nbr, code, 0.0, ridge)
    else:
        h = bandwidth or opg_bandwidth(n, p)
        bs, oks = [], []
        for start in range(0, len(anchors), DENSE_BLOCK):
            idx = anchors[start:start + DENSE_BLOCK]
            nbr = np.broadcast_to(np.arange(n, dtype=np.int64), (len(idx), n))
            b, ok = sdr_opg_slopes(Z, y, Z[idx], nbr, 0, h, ridge)
            bs.append(b), oks.append(ok)
        b, ok = np.concatenate(bs), np.concatenate(oks)
    return b.T @ b / max(len(anchors), 1), int(np.sum(~ok))


def top_eigenvectors(M, d):
    """Eigenvalues (descending) and the matching eigenvectors of the symmetric ``M``."""
    vals, vecs = np.linalg.eigh(0.5 * (M + M.T))
    order = np.argsort(-vals, kind="stable")
    return vals[order], vecs[:, order[:d]] if d is not None else vecs[:, order]


def opg_init(Z, y, d, rng, kernel="gaussian"):
    """kNN-OPG initial basis (p, d): at most 1000 anchors, neighbours among all n points."""
    n = Z.shape[0]
    anchors = np.arange(n) if n <= MAX_OPG_ANCHORS else np.sort(rng.choice(n, MAX_OPG_ANCHORS, replace=False))
    M, _ = opg_outer_product(Z, y, anchors, kernel=kernel)
    return top_eigenvectors(M, d)[1]


def canonical_basis(B, slopes, ok):
    """Rotate ``B`` (p, d) to the eigenbasis of ``mean b b^T`` over successful fits, then fix column signs.

    Returns ``(B, eigenvalues)``; with no successful fit only the signs are fixed (eigenvalues are zeros).
    """
    d = B.shape[1]
    good = slopes[ok]
    if good.shape[0] == 0:
        return canonical_signs(B), np.zeros(d)
    vals, vecs = top_eigenvectors(good.T @ good / good.shape[0], None)
    return canonical_signs(B @ vecs), vals


def subspace_change(B_old, B_new):
    """``||B_new B_new^T - B_old B_old^T||_F`` without forming p x p matrices."""
    d = B_old.shape[1]
    cross = B_old.T @ B_new
    return float(np.sqrt(max(2.0 * d - 2.0 * np.sum(cross * cross), 0.0)))


class _BaseSDR(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Validation, standardisation, canonical bases and ``transform`` shared by the SDR transformers."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def _prepare(self, X, y):
        """Validate ``X, y``; return the standardised ``Z, y_tilde`` and the validated ``y`` (float64)."""
        X, y = validate_data(self, X, y, y_numeric=True, dtype=[np.float64, np.float32], ensure_min_samples=2)
        n, p = X.shape
        d = self.n_components
        if d > p:
            raise ValueError(f"n_components={d} must be <= n_features={p}.")
        if n < d + 2:
            raise ValueError(f"n_samples={n} must be >= n_components + 2 = {d + 2} for the local linear fits.")
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        self.mean_ = X.mean(axis=0)
        scale = X.std(axis=0) if self.standardize else np.ones(p)
        scale[~(scale > 0)] = 1.0
        self.scale_ = scale
        self.y_mean_ = float(y.mean())
        y_scale = float(y.std())
        if not y_scale > 0:
            warnings.warn("y is constant: the regression carries no information, directions are arbitrary.",
                          UserWarning, stacklevel=3)
            y_scale = 1.0
        self.y_scale_ = y_scale
        self.n_components_ = d
        Z = X - self.mean_  # one n x p buffer (standardised in place): bounded memory at large n
        Z /= self.scale_
        return Z, (y - self.y_mean_) / self.y_scale_, y

    def _set_basis(self, B):
        """Store ``components_`` (Z-space rows) and ``directions_`` (unit rows in original units)."""
        B = np.ascontiguousarray(B, dtype=np.float64)
        self.components_ = B.T.copy()
        directions = B / self.scale_[:, None]
        norms = np.linalg.norm(directions, axis=0)
        norms[norms == 0] = 1.0
        self.directions_ = (directions / norms).T.copy()

    def _check_init_array(self, init, p, d):
        init = np.asarray(init, dtype=np.float64)
        if init.shape != (d, p):
            raise ValueError(f"init must have shape (n_components, n_features) = {(d, p)}, got {init.shape}.")
        if not np.all(np.isfinite(init)):
            raise ValueError("init must be finite.")
        B0 = self.scale_[:, None] * init.T
        sv = np.linalg.svd(B0, compute_uv=False)
        if not sv[-1] > 1e-10 * max(sv[0], 1e-300):
            raise ValueError(f"init must have rank n_components={d}.")
        return qr_retraction(B0)

    def transform(self, X):
        """Project ``X`` on the learned directions: ``((X - mean_) / scale_) @ components_.T``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            In ``X``'s float dtype.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        out = ((np.asarray(X, dtype=np.float64) - self.mean_) / self.scale_) @ self.components_.T
        return out.astype(X.dtype, copy=False)

    def score(self, X, y):
        """Leave-one-out local-linear R^2 of ``y`` on the projection of ``X`` (higher is better).

        Each sample is predicted by a local linear fit (slope ridge 1e-3) over its nearest projected neighbours
        among the *other* samples of ``X``, so a subspace that carries E[y | x] scores high on held-out data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        score : float
            The score (higher is better).
        """
        from sklearn.metrics import r2_score

        check_is_fitted(self)
        X, y = validate_data(self, X, y, reset=False, y_numeric=True, dtype=[np.float64, np.float32])
        Q = ((np.asarray(X, dtype=np.float64) - self.mean_) / self.scale_) @ self.components_.T
        y = np.asarray(y, dtype=np.float64)
        n, d = Q.shape
        if n < 3:
            raise ValueError(f"score needs n_samples >= 3, got {n}.")
        k = min(n - 1, default_n_neighbors(n, d))
        nbr = query_neighbors(projected_tree(Q), Q, k + 1)
        self_last = np.argsort(nbr == np.arange(n)[:, None], axis=1, kind="stable")
        nbr = np.take_along_axis(nbr, self_last, axis=1)[:, :k]
        yt = (y - self.y_mean_) / self.y_scale_
        theta = sdr_local_wls(Q, yt, Q, nbr, KERNEL_CODES.get(getattr(self, "kernel", "gaussian"), 0), 0.0, 1e-3)[2]
        return float(r2_score(y, self.y_mean_ + self.y_scale_ * theta[:, 0]))

    @property
    def _n_features_out(self):
        return self.components_.shape[0]
