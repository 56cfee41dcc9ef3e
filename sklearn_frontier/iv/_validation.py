"""Validation and linear-algebra helpers shared by the IV estimators (instruments, weights, bases)."""

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.utils import check_array

from sklearn_frontier.utils._compat import (
    _check_sample_weight,
)
from sklearn_frontier.utils._warnings import user_stacklevel

_EPS = np.finfo(np.float64).eps

# ----------------------------------------------------------------------------------------------------------
# side arrays: one validation of Z, W and groups for fit, predict, score and the scorers
# ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SideArrays:
    """The side arrays of one call, validated: instruments Z, controls W and cluster labels (None when absent)."""

    Z: np.ndarray | None = None
    W: np.ndarray | None = None
    groups: np.ndarray | None = None


_WHAT = {"Z": ("instruments", "n_instruments"), "W": ("controls", "n_controls")}


def _validate_side_array(A, n_samples, name):
    """Validated float64 (n, k) side array (instruments Z or controls W), or None. Every error names ``name``."""
    if A is None:
        return None
    what, columns = _WHAT[name]
    if sp.issparse(A):
        raise TypeError(f"Sparse {what} {name} are not supported; pass a dense array ({name}.toarray()).")
    try:
        A = check_array(A, dtype=np.float64, ensure_2d=False, allow_nd=True, ensure_min_samples=1,
                        input_name=name)
    except ValueError as exc:
        raise ValueError(f"Invalid {what} {name}: {exc}") from exc
    if A.ndim == 1:
        A = A.reshape(-1, 1)
    if A.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D (n_samples, {columns}), got {name}.ndim={A.ndim}.")
    if A.shape[0] != n_samples:
        raise ValueError(f"{name} has {A.shape[0]} samples but X has {n_samples}.")
    if A.shape[1] == 0:
        raise ValueError(f"{name} has 0 columns; pass at least one column or {name}=None.")
    return A


def _validate_instruments(Z, n_samples):
    """Validated float64 (n, k) instruments for a fit, or None. Every error names Z."""
    Z = _validate_side_array(Z, n_samples, "Z")
    if Z is not None and n_samples < Z.shape[1] + 2:
        raise ValueError(f"n_samples={n_samples} is too small for Z with {Z.shape[1]} instruments: "
                         f"IV regression needs n_samples >= n_instruments + 2 = {Z.shape[1] + 2}.")
    return Z


def _validate_controls(W, n_samples):
    """Validated float64 (n, k_w) exogenous controls, or None. Every error names W."""
    return _validate_side_array(W, n_samples, "W")


def side_feature_names(A):
    """The string column names of a side array (a DataFrame), else None: scikit-learn's rule for X."""
    columns = getattr(A, "columns", None)
    if columns is None or not len(columns) or not all(isinstance(c, str) for c in columns):
        return None
    return np.asarray(list(columns), dtype=object)


def fit_side_arrays(est, n_samples, *, Z=None, W=None, groups=None, cluster=False):
    """Validate the side arrays given to ``fit`` and record on ``est`` what later calls are checked against.

    Records ``n_controls_``, ``control_names_``, ``control_feature_names_in_`` and
    ``instrument_feature_names_in_``; ``groups`` are needed (and validated) only when ``cluster`` is true.
    """
    side = SideArrays(_validate_instruments(Z, n_samples), _validate_controls(W, n_samples),
                      _validate_groups(groups, n_samples, cluster))
    record_side_arrays(est, Z, W, side)
    return side


def record_side_arrays(est, Z, W, side):
    """Record the names and widths of the fit's side arrays (``Z``, ``W`` as the user passed them) on ``est``."""
    k_w = 0 if side.W is None else side.W.shape[1]
    columns = getattr(W, "columns", None)
    est.n_controls_ = k_w
    est.control_names_ = np.asarray([str(c) for c in columns] if columns is not None and k_w
                                    else [f"w{j}" for j in range(k_w)], dtype=object)
    est.control_feature_names_in_ = side_feature_names(W)
    est.instrument_feature_names_in_ = side_feature_names(Z)


def check_side_arrays(est, n_samples, **arrays):
    """Validate the Z and W of a ``predict`` / ``score`` call against those seen at fit, as scikit-learn checks X.

    Checks the arrays passed by keyword (``Z=...``, ``W=...``; a keyword given as None counts as passed): W is
    required exactly when fit had controls, with their names (for DataFrames) and number; Z, when given after a
    fit with instruments, must have their names and number. Used by the estimators and by the scorers.
    """
    owner = type(est).__name__
    Z, W = arrays.get("Z"), arrays.get("W")
    k_w = getattr(est, "n_controls_", 0)
    if "W" in arrays and W is None and k_w:
        calls = "predict(X, W=W) and score(X, y, Z=Z, W=W)" if hasattr(est, "predict") else "score(X, Z=Z, W=W)"
        raise ValueError(
            f"{owner} was fitted with {k_w} controls W: pass W=... (the controls of these samples), as {calls}. "
            "In GridSearchCV and cross_validate, W reaches the scoring only with metadata routing on "
            "(sklearn.set_config(enable_metadata_routing=True)) and scoring=make_iv_scorer() or the estimator's own "
            "score; a scorer that calls predict(X) alone, such as 'r2', cannot score a model with controls.")
    if W is not None:
        if not k_w:
            raise ValueError(f"{owner} was fitted without controls W, but W was passed; refit with W=... to use "
                             "controls.")
        _check_side_feature_names(est, W, "W", getattr(est, "control_feature_names_in_", None))
    if Z is not None and getattr(est, "instruments_supplied_", True):
        # a model fitted without instruments (OLS) has no Z columns to match: scoring it with a DataFrame Z is fine
        _check_side_feature_names(est, Z, "Z", getattr(est, "instrument_feature_names_in_", None))
    side = SideArrays(_validate_side_array(Z, n_samples, "Z"), _validate_side_array(W, n_samples, "W"))
    if side.W is not None and side.W.shape[1] != k_w:
        raise ValueError(f"W has {side.W.shape[1]} columns, but {owner} is expecting {k_w} controls as input "
                         f"(n_controls_={k_w}).")
    k_z = getattr(est, "n_instruments_", None)
    if side.Z is not None and getattr(est, "instruments_supplied_", False) and side.Z.shape[1] != k_z:
        raise ValueError(f"Z has {side.Z.shape[1]} columns, but {owner} is expecting {k_z} instruments as input "
                         f"(n_instruments_={k_z}).")
    return side


def _check_side_feature_names(est, A, name, fitted_names):
    """Check the columns of side array ``name`` against those seen at fit, as scikit-learn checks X's.

    Reordered or renamed columns raise (they would silently meet the wrong coefficients); names present on
    one side only warn, like X.
    """
    seen = side_feature_names(A)
    owner = type(est).__name__
    if fitted_names is None and seen is None:
        return
    if fitted_names is None:
        warnings.warn(f"{name} has feature names, but {owner} was fitted without feature names for {name}.",
                      UserWarning, stacklevel=user_stacklevel())
        return
    if seen is None:
        warnings.warn(f"{name} does not have valid feature names, but {owner} was fitted with feature names for "
                      f"{name}.", UserWarning, stacklevel=user_stacklevel())
        return
    if len(seen) == len(fitted_names) and np.all(seen == fitted_names):
        return
    message = f"The {name} feature names should match those that were passed during fit.\n"
    unexpected = [c for c in seen if c not in set(fitted_names)]
    missing = [c for c in fitted_names if c not in set(seen)]
    if unexpected:
        message += f"Feature names unseen at fit time: {unexpected}\n"
    if missing:
        message += f"Feature names seen at fit time, yet now missing: {missing}\n"
    if not unexpected and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
    raise ValueError(message)


def _validate_groups(groups, n_samples, cluster):
    """Integer cluster labels (n,) when ``cluster`` (``cov_type="cluster"``), else None (groups are ignored)."""
    if not cluster:
        return None
    if groups is None:
        raise ValueError("cov_type='cluster' needs the cluster labels: pass groups=... to fit.")
    groups = np.asarray(groups)
    if groups.ndim != 1 or groups.shape[0] != n_samples:
        raise ValueError(f"groups must be 1-D with one label per sample ({n_samples}), got shape {groups.shape}.")
    try:
        _, labels = np.unique(groups, return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"groups must hold sortable labels: {exc}") from exc
    if labels.max() < 1:
        raise ValueError("groups must contain at least 2 distinct clusters for cov_type='cluster'.")
    return labels.astype(np.intp)


class _ControlDesign:
    """The exogenous design C = [1, W] (or W without intercept) and weighted residualisation against it.

    Frisch–Waugh–Lovell: every IV quantity of the treatments is that of the residuals of X, y and Z on C.
    """

    def __init__(self, W, w, *, center=True):
        n = w.shape[0]
        cols = ([np.ones((n, 1))] if center else []) + ([W] if W is not None else [])
        self.C = np.hstack(cols) if cols else np.zeros((n, 0))
        self.sw = np.sqrt(w)
        Ct = self.sw[:, None] * self.C
        if Ct.shape[1] == 0:
            self.rank, self.basis, self._pinv = 0, Ct, Ct.T
            return
        U, S, Vt = scipy.linalg.svd(Ct, full_matrices=False, check_finite=False)
        keep = S > max(Ct.shape) * _EPS * S[0] if S.size and S[0] > 0 else np.zeros(S.shape, bool)
        self.rank = int(keep.sum())
        if W is not None and self.rank < Ct.shape[1]:
            warnings.warn(f"The controls W are collinear (with the intercept or each other): rank {self.rank} < "
                          f"{Ct.shape[1]} columns; their coefficients are minimum-norm.", UserWarning,
                          stacklevel=user_stacklevel())
        self.basis = U[:, keep]
        self._pinv = (Vt[keep].T / S[keep]) @ U[:, keep].T

    def coef(self, A):
        """Weighted least-squares coefficients of A (n, m) on C."""
        return self._pinv @ (self.sw[:, None] * A) if A.ndim == 2 else self._pinv @ (self.sw * A)

    def residual(self, A):
        """A minus its weighted projection on C (raw scale, exact for zero weights too)."""
        return A - self.C @ self.coef(A)


def _weights(sample_weight, X):
    w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight must be finite.")
    if w.sum() <= 0:
        raise ValueError("sample_weight must have a positive sum.")
    return w


def _no_variation_message(name, center, controls):
    if getattr(controls, "absorbed", False):
        after = "after partialling out the absorbed fixed effects" + (" and the controls W" if controls.C.shape[1]
                                                                      else "")
    else:
        after = ("after partialling out the intercept and the controls W" if center
                 else "after partialling out the controls W") if controls is not None \
            else ("rank 0 after centring" if center else "every value is 0 and fit_intercept=False")
    if name == "X":
        return (f"X (the treatments) has no variation ({after}); IV regression needs treatments that vary across "
                "samples.")
    return f"{name} (the instruments) has no variation ({after}); IV regression needs instruments that vary " \
           "across samples."


def check_treatments_vary(X, w, *, center=True, controls=None):
    """Raise a ``ValueError`` naming the treatments X when they do not vary (after centring / the controls W).

    A constant treatment is collinear with the intercept: its effect is not identified whatever the instruments.
    """
    sw = np.sqrt(w)
    Xr = X - (w @ X) / w.sum() if center and controls is None else X if controls is None else controls.residual(X)
    scale = float(np.linalg.norm(sw[:, None] * X))
    if float(np.linalg.norm(sw[:, None] * Xr)) <= max(X.shape) * _EPS * scale:
        raise ValueError(_no_variation_message("X", center, controls))


def _instrument_basis(Z, w, *, center=True, name="Z", warn_rank=True, controls=None, treatments=None):
    """Orthonormal basis U_z of diag(√w)(Z − 1 z̄ᵀ), its singular values and z̄ (O(n k²)).

    With ``controls`` (a :class:`_ControlDesign`) Z is residualised on [1, W] instead of centred. With
    ``treatments`` (X) their variation is checked first, so a constant X is named as the treatments.
    """
    if treatments is not None:
        check_treatments_vary(treatments, w, center=center, controls=controls)
    sw = np.sqrt(w)
    zbar = (w @ Z) / w.sum() if center else np.zeros(Z.shape[1])
    Zt = sw[:, None] * (Z - zbar if controls is None else controls.residual(Z))
    U, S, _ = scipy.linalg.svd(Zt, full_matrices=False, check_finite=False, lapack_driver="gesdd")
    if S.size == 0 or S[0] <= 0:
        raise ValueError(_no_variation_message(name, center, controls))
    k_z = int(np.sum(S > max(Zt.shape) * _EPS * S[0]))
    if warn_rank and k_z < Z.shape[1]:
        after = "centring" if controls is None else "partialling out the intercept and the controls W"
        warnings.warn(f"{name} is rank deficient: rank {k_z} < {Z.shape[1]} columns after {after}; "
                      f"continuing with {k_z} instrument directions.", UserWarning, stacklevel=user_stacklevel())
    return U[:, :k_z], S[:k_z], zbar


def _fix_signs(A):
    """Deterministic column signs: the largest-magnitude entry of each column is positive."""
    idx = np.argmax(np.abs(A), axis=0)
    signs = np.sign(A[idx, np.arange(A.shape[1])])
    signs[signs == 0] = 1.0
    return A * signs


# Condition number (of the design with unit-length columns) above which near-collinear regressors are reported.
# Belsley's diagnostics call 30 strong collinearity; this only flags designs whose coefficients the data barely
# separate (a near-duplicate treatment), not ordinary correlated regressors.
COLLINEARITY_CONDITION = 1e4


def check_collinear(A, names, *, what, raw_norms=None):
    """Raise for exactly collinear columns of ``A`` (n, p); warn, naming the columns, for nearly collinear ones.

    ``A`` is already √w-scaled and partialled (controls, intercept, absorbed effects); ``raw_norms`` are the column
    norms before partialling, so that a column the partialling removed is reported as collinear with it. ``what``
    describes the design in the messages ("treatments X", "second-stage design").
    """
    p = A.shape[1]
    norms = np.linalg.norm(A, axis=0)
    ref = norms if raw_norms is None else np.maximum(raw_norms, norms)
    gone = norms <= max(A.shape) * _EPS * 16 * np.maximum(ref, np.finfo(float).tiny)
    if np.any(gone):
        cols = [names[j] for j in np.flatnonzero(gone)]
        raise ValueError(f"Columns {cols} of the {what} are collinear with the intercept, the controls W or the "
                         "absorbed fixed effects: their effects are not identified. Drop them.")
    if p < 2:
        return
    U = A / norms
    _, S, Vt = scipy.linalg.svd(U, full_matrices=False, check_finite=False)
    tol = max(A.shape) * _EPS * S[0] * 16
    null = S <= tol
    if np.any(null):
        v = Vt[null][0]
        cols = [names[j] for j in np.flatnonzero(np.abs(v) > 1e-3 * np.abs(v).max())]
        raise ValueError(f"Columns {cols} of the {what} are exactly collinear (rank {int(np.sum(~null))} < {p} "
                         "columns: one is a linear combination of the others), so their separate effects are not "
                         "identified. Drop or combine them.")
    cond = S[0] / S[-1]
    if cond > COLLINEARITY_CONDITION:
        v = Vt[-1]
        cols = [names[j] for j in np.flatnonzero(np.abs(v) > 0.1 * np.abs(v).max())]
        warnings.warn(f"Columns {cols} of the {what} are nearly collinear: condition number {cond:.3g} > "
                      f"{COLLINEARITY_CONDITION:g} (columns scaled to unit length). Their separate coefficients and "
                      "standard errors are unreliable; drop or combine them.", UserWarning,
                      stacklevel=user_stacklevel())


def check_frequency_weights(w, k, owner, remedy="pass weight_type='analytic'"):
    """Refuse frequency weights whose sum cannot carry ``k`` parameters although the rows could.

    Weights normalised to sum to 1 (probabilities) leave ``n_weighted − k ≤ 0`` residual degrees of freedom and NaN
    standard errors; with as few rows as parameters the data themselves are the problem, which is not refused here.
    ``remedy`` ends the message: what the estimator at hand offers for such weights.
    """
    n_w = float(w.sum())
    if np.count_nonzero(w) - k > 0 >= n_w - k:
        raise ValueError(
            f"sample_weight sums to {n_w:g}, which as frequency weights (the number of observations each row stands "
            f"for) cannot carry {owner}'s {k:g} parameters: the residual degrees of freedom n_weighted - k = "
            f"{n_w - k:g} are not positive and every standard error would be NaN. Weights that are probabilities "
            f"or relative precisions (for example normalised to sum to 1) are analytic weights: {remedy}.")
