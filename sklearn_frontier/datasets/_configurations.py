"""Generators with a planted two-level cluster hierarchy (MixConfig)."""

import numpy as np
from sklearn.utils import check_random_state


def _directions(rng, k, d):
    """``k`` unit vectors: orthonormal when ``k <= d`` (random rotation), else random."""
    if k <= d:
        Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
        return Q[:, :k].T
    v = rng.normal(size=(k, d))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def make_two_regime_hierarchy(n_fine_groups=3, n_coarse_groups=3, n_per_subblob=60, n_per_coarse=400, n_features=6,
                              group_radius=12.0, sub_radius=1.8, sub_sd=0.5, coarse_sd=2.0, task="classification",
                              noise=0.0, random_state=None):
    """Generate data whose label lives at a fine resolution in one region and at a coarse one elsewhere.

    Group centres lie on a sphere of radius ``group_radius`` (orthonormal directions when they fit).
    *Fine regime* (``regime == 0``): ``n_fine_groups`` groups, each of 4 tight sub-blobs (centres at
    ``sub_radius`` from the group centre, sd ``sub_sd``, ``n_per_subblob`` rows); the label is the
    sub-blob parity, so only a fine partition predicts it. *Coarse regime* (``regime == 1``):
    ``n_coarse_groups`` broad Gaussian groups (sd ``coarse_sd``, ``n_per_coarse`` rows); the label
    is the group parity, so a coarse partition suffices.

    Parameters
    ----------
    n_fine_groups, n_coarse_groups : int, default=3
        Number of groups in the fine and in the coarse regime.
    n_per_subblob, n_per_coarse : int, default=60, 400
        Rows per fine sub-blob and per coarse group.
    n_features : int, default=6
        Number of features.
    group_radius, sub_radius, sub_sd, coarse_sd : float
        Radius of the group centres' sphere, sub-blob offset, sub-blob sd and coarse-group sd.
    task : {"classification", "regression"}, default="classification"
        Regression: ``y = label + 0.1 * N(0, 1)``.
    noise : float, default=0.0
        Label-flip rate (classification).
    random_state : int, RandomState instance or None, default=None
        Seed or generator for reproducible draws.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The samples.
    y : ndarray of shape (n_samples,)
        The int64 labels in {0, 1} (classification) or float targets.
    regime : ndarray of shape (n_samples,)
        0 for the fine regime, 1 for the coarse one.

    Examples
    --------
    >>> from sklearn_frontier.datasets import make_two_regime_hierarchy
    >>> X, y, regime = make_two_regime_hierarchy(n_per_subblob=10, n_per_coarse=40, random_state=0)
    >>> X.shape, sorted(set(y.tolist())), int(regime.sum())
    ((240, 6), [0, 1], 120)
    """
    if task not in ("classification", "regression"):
        raise ValueError(f"task must be 'classification' or 'regression', got {task!r}.")
    if not 0 <= noise <= 1:
        raise ValueError(f"noise must be in [0, 1], got {noise}.")
    rng = check_random_state(random_state)
    centres = group_radius * _directions(rng, n_fine_groups + n_coarse_groups, n_features)
    X, y, regime = [], [], []
    for g in range(n_fine_groups):
        subs = centres[g] + sub_radius * _directions(rng, 4, n_features)
        for s in range(4):
            X.append(subs[s] + sub_sd * rng.normal(size=(n_per_subblob, n_features)))
            y += [s % 2] * n_per_subblob
            regime += [0] * n_per_subblob
    for g in range(n_coarse_groups):
        X.append(centres[n_fine_groups + g] + coarse_sd * rng.normal(size=(n_per_coarse, n_features)))
        y += [g % 2] * n_per_coarse
        regime += [1] * n_per_coarse
    X = np.vstack(X)
    y = np.asarray(y, dtype=np.int64)
    regime = np.asarray(regime, dtype=np.int64)
    if noise > 0:
        flip = rng.random_sample(y.shape[0]) < noise
        y = np.where(flip, 1 - y, y)
    if task == "regression":
        y = y + 0.1 * rng.normal(size=y.shape[0])
    return X, y, regime
