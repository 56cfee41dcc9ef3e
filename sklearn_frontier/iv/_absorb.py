"""The exogenous part of a linear IV fit before its two stages: absorbed fixed effects and the weight type.

Absorbed fixed effects are partialled out of y, the treatments, the instruments and the controls by weighted
alternating projections (the ``demean`` kernel); no dummy column is ever built. Analytic weights are turned into
an unweighted problem exactly as linearmodels does: every row is scaled by ``√(w / mean w)`` and the intercept
becomes that scaling column, so all statistics are scale-invariant in the weights.
"""

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from sklearn_frontier.utils._warnings import user_stacklevel

# Relative convergence tolerance of the alternating projections (the largest level mean subtracted in a sweep,
# relative to the column's largest value) and the most sweeps allowed.
DEMEAN_TOL = 1e-10
DEMEAN_MAXITER = 10_000
# A column whose norm falls below this fraction of its norm by the demeaning lies in the fixed effects' span:
# it is set to exactly zero, so that rank checks see it as absorbed instead of as rounding noise.
ABSORBED_FRACTION = 1e-8


@dataclass(frozen=True)
class AbsorbedEffects:
    """Validated absorbed fixed effects: integer level codes per row and per fixed effect, with their names."""

    codes: np.ndarray
    names: tuple
    n_levels: tuple

    def take(self, rows):
        """The same fixed effects on a subset of rows (levels renumbered, empty ones dropped)."""
        codes = np.column_stack([np.unique(c[rows], return_inverse=True)[1] for c in self.codes.T])
        return AbsorbedEffects(codes.astype(np.intp), self.names,
                               tuple(int(c.max()) + 1 for c in codes.T))


def _missing(column):
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is installed wherever DataFrames are passed
        pd = None
    if pd is not None:
        return np.asarray(pd.isna(column), dtype=bool)
    if column.dtype.kind == "f":
        return np.isnan(column)
    return np.array([v is None or (isinstance(v, float) and v != v) for v in column], dtype=bool)


def _codes(column, name):
    try:
        import pandas as pd

        codes, _ = pd.factorize(column, sort=True)  # hashing: O(n), where np.unique sorts
        return codes.astype(np.intp)
    except ImportError:  # pragma: no cover - pandas is installed wherever DataFrames are passed
        pass
    try:
        _, codes = np.unique(column, return_inverse=True)
    except TypeError:  # mixed label types: their text tells them apart
        _, codes = np.unique(np.asarray([f"{type(v).__name__}:{v}" for v in column]), return_inverse=True)
    return codes.astype(np.intp).ravel()


def validate_absorb(absorb, n_samples):
    """:class:`AbsorbedEffects` from one or more categorical columns (array or DataFrame), or None.

    Every error names ``absorb``: wrong length or shape, sparse input, missing values, a single level.
    """
    if absorb is None:
        return None
    if sp.issparse(absorb):
        raise TypeError("Sparse absorb is not supported; pass the fixed effects as categorical columns (an array "
                        "or a DataFrame).")
    if hasattr(absorb, "columns"):  # DataFrame
        names = tuple(str(c) for c in absorb.columns)
        columns = [np.asarray(absorb[c].to_numpy()) for c in absorb.columns]
    elif hasattr(absorb, "to_numpy"):  # Series
        names = (str(absorb.name) if absorb.name is not None else "fe0",)
        columns = [np.asarray(absorb.to_numpy())]
    else:
        arr = np.asarray(absorb)
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2:
            raise ValueError(f"absorb must be 1-D or 2-D (n_samples, n_fixed_effects), got absorb.ndim={arr.ndim}.")
        names = tuple(f"fe{j}" for j in range(arr.shape[1]))
        columns = [arr[:, j] for j in range(arr.shape[1])]
    if not columns:
        raise ValueError("absorb has 0 columns; pass at least one fixed effect or absorb=None.")
    codes = []
    for name, column in zip(names, columns):
        if column.shape[0] != n_samples:
            raise ValueError(f"absorb has {column.shape[0]} samples but X has {n_samples}.")
        missing = _missing(column)
        if missing.any():
            raise ValueError(f"absorb column {name!r} has {int(missing.sum())} missing values; a fixed effect "
                             "needs a level for every row: drop those rows or code the missing values as a level "
                             "of their own.")
        c = _codes(column, name)
        if c.max() < 1:
            raise ValueError(f"absorb column {name!r} has a single level: it is the intercept, not a fixed effect; "
                             "drop it.")
        codes.append(c)
    codes = np.column_stack(codes)
    return AbsorbedEffects(codes, names, tuple(int(c.max()) + 1 for c in codes.T))


def _nested_in(fe_codes, groups):
    """Whether every level of a fixed effect lies inside one cluster (O(n): each level's cluster, then a check)."""
    cluster_of = np.empty(int(fe_codes.max()) + 1, dtype=groups.dtype)
    cluster_of[fe_codes] = groups
    return bool(np.all(cluster_of[fe_codes] == groups))


def fixed_effect_dof(absorbed, groups=None):
    """Degrees of freedom the absorbed fixed effects use, by pyfixest's defaults (``ssc()``).

    All levels count, less one for each fixed effect after the first; under clustering (``groups`` given) a
    fixed effect nested in the clusters counts as one parameter instead of its levels (``k_fixef="nonnested"``).
    """
    levels = np.asarray(absorbed.n_levels, dtype=float)
    n_fe = levels.size
    dof = levels.sum() - (n_fe - 1)
    if groups is not None:
        nested = np.array([_nested_in(c, groups) for c in absorbed.codes.T])
        if nested.any():
            dof += -levels[nested].sum() + nested.sum()
    return float(dof)


@dataclass
class ExogenousPartial:
    """The arrays of a linear IV fit after absorbing fixed effects and applying the weight type.

    ``X``, ``y``, ``Z``, ``W`` are the arrays the two stages see (Z and W None when absent); ``w`` the frequency
    weights they carry (ones after the analytic transform); ``center`` whether the two stages still centre;
    ``extra_rank`` the degrees of freedom of the absorbed fixed effects; ``intercept_column`` whether W's first
    column is the (scaled) intercept; ``rows`` the kept rows (None: all); ``X_norms`` the √w-column norms of the
    treatments before any partialling.
    """

    X: np.ndarray
    y: np.ndarray
    Z: np.ndarray | None
    W: np.ndarray | None
    w: np.ndarray
    groups: np.ndarray | None
    center: bool
    extra_rank: float
    intercept_column: bool
    rows: np.ndarray | None
    X_norms: np.ndarray


def _zero_absorbed(after, before):
    """Set to exactly zero the columns the demeaning removed (they lie in the fixed effects' span)."""
    gone = np.linalg.norm(after, axis=0) <= ABSORBED_FRACTION * np.linalg.norm(before, axis=0)
    after[:, gone] = 0.0
    return after


def partial_exogenous(X, y, Z, W, groups, w, *, center, analytic, absorbed):
    """Absorb the fixed effects (weighted alternating projections) and apply analytic weights.

    With ``analytic``, rows of zero weight are dropped, the weights are normalised to mean 1 and every array is
    scaled by their square root; the intercept (when ``center``) becomes the first control column. With
    ``absorbed``, the fixed effects (which contain the intercept) are partialled out first, with the weights.
    """
    from sklearn_frontier.kernels.iv import demean

    rows = None
    if analytic and np.any(w <= 0):
        rows = np.flatnonzero(w > 0)
        X, y, w = X[rows], y[rows], w[rows]
        Z = None if Z is None else Z[rows]
        W = None if W is None else W[rows]
        groups = None if groups is None else np.unique(groups[rows], return_inverse=True)[1].astype(np.intp)
        absorbed = None if absorbed is None else absorbed.take(rows)
    X_norms = np.linalg.norm(np.sqrt(w)[:, None] * X, axis=0)
    extra_rank = 0.0
    if absorbed is not None:
        blocks = [y[:, None], X] + [A for A in (Z, W) if A is not None]
        stacked = np.hstack(blocks)
        out, _, converged = demean(stacked, absorbed.codes, w, tol=DEMEAN_TOL, maxiter=DEMEAN_MAXITER)
        if not converged:
            warnings.warn(f"Absorbing the fixed effects {list(absorbed.names)} did not converge in "
                          f"{DEMEAN_MAXITER} sweeps; the estimates may be inaccurate.", UserWarning,
                          stacklevel=user_stacklevel())
        out = _zero_absorbed(out, stacked)
        splits = np.cumsum([b.shape[1] for b in blocks])[:-1]
        parts = np.split(out, splits, axis=1)
        y, X = parts[0][:, 0], parts[1]
        Z = parts[2] if Z is not None else None
        W = parts[-1] if W is not None else None
        extra_rank = fixed_effect_dof(absorbed, groups)
        center = False
    intercept_column = False
    if analytic:
        s = np.sqrt(w / w.mean())
        X, y = s[:, None] * X, s * y
        Z = None if Z is None else s[:, None] * Z
        W = None if W is None else s[:, None] * W
        if center:
            W = s[:, None] if W is None else np.hstack([s[:, None], W])
            intercept_column = True
        w = np.ones_like(w)
        center = False
    return ExogenousPartial(X, y, Z, W, w, groups, center, extra_rank, intercept_column, rows, X_norms)
