"""Second stage, inference and diagnostics shared by every IV regressor (2SLS, HC covariances, interventions)."""

import warnings
from collections import namedtuple
from numbers import Real

import numpy as np
import scipy.linalg
from scipy.stats import norm as _normal
from sklearn.base import (
    RegressorMixin,
)

from sklearn_frontier.exceptions import (
    IVScoreWarning,
    UnidentifiedInterventionWarning,
    WeakInstrumentWarning,
)
from sklearn_frontier.iv._scoring import projected_mse
from sklearn_frontier.iv._validation import _EPS
from sklearn_frontier.utils._compat import (
    check_is_fitted,
    validate_data,
)


class Intervention(namedtuple("Intervention", ["shift", "effect", "stderr"])):
    """A recommended treatment shift with its estimated effect.

    Parameters
    ----------
    shift : ndarray of shape (n_features,) or (n_components,)
        The shift (X-space for linear representations, D-space for the autoencoder).
    effect : float
        Estimated effect of the shift on y.
    stderr : float
        Standard error of ``effect``.

    See Also
    --------
    InstrumentGuidedIVRegressor.recommend_intervention : Returns it.

    Examples
    --------
    >>> from sklearn_frontier.iv import Intervention
    >>> Intervention(shift=[1.0, 0.0], effect=2.0, stderr=0.1).effect
    2.0
    """

    __slots__ = ()


# ----------------------------------------------------------------------------------------------------------
# second stage, inference and diagnostics (shared by every regressor)
# ----------------------------------------------------------------------------------------------------------
def _second_stage(D, y, w, Uz, *, center=True, cov_type="HC1"):
    """2SLS of y on the features D (n, r) with instrument basis Uz (n, k_z); O(n k_z r + n k_z²).

    Returns a dict with b, intercept, the r × r covariance and the weak-IV diagnostics.
    """
    n_w = w.sum()
    sw = np.sqrt(w)
    dbar = (w @ D) / n_w if center else np.zeros(D.shape[1])
    ybar = float(w @ y) / n_w if center else 0.0
    Dc = D - dbar
    Dt = sw[:, None] * Dc
    yt = sw * (y - ybar)
    k_z, r = Uz.shape[1], D.shape[1]
    Q = Uz.T @ Dt
    c = Uz.T @ yt
    # Pseudo-inverse semantics: directions the instruments do not move get a zero coefficient.
    uq, sq, vqt = scipy.linalg.svd(Q, full_matrices=False, check_finite=False)
    keep = sq > max(Q.shape) * _EPS * 1e3 * (sq[0] if sq.size else 0.0)
    Qpinv = (vqt[keep].T / sq[keep]) @ uq[:, keep].T  # r × k_z
    b = Qpinv @ c
    bread = Qpinv @ Qpinv.T  # pinv(QᵀQ)
    raw_resid = (y - ybar) - Dc @ b
    # Frequency-weight meat U_zᵀ diag(e²/w) U_z with e = √w ⊙ residual, i.e. diag(residual²):
    # the rows of U_z already carry √w.
    omega = Q.T @ ((Uz.T * raw_resid**2) @ Uz) @ Q
    hc0 = bread @ omega @ bread
    dof = n_w - r - (1.0 if center else 0.0)
    if cov_type == "HC0":
        cov = hc0
    elif cov_type == "HC1":
        cov = hc0 * n_w / dof if dof > 0 else np.full((r, r), np.nan)
    else:  # nonrobust
        cov = (float(w @ raw_resid**2) / dof) * bread if dof > 0 else np.full((r, r), np.nan)
    cov = 0.5 * (cov + cov.T)

    # Weak-IV diagnostics: per-direction partial F and the Cragg–Donald minimum eigenvalue statistic.
    qn = np.sum(Q**2, axis=0)
    dn = np.sum(Dt**2, axis=0)
    df2 = n_w - k_z - (1.0 if center else 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        unexplained = np.maximum(dn - qn, 0.0)
        tiny = 1e-12 * np.maximum(dn, np.finfo(float).tiny)
        F = np.where(unexplained <= tiny, np.inf, (qn / k_z) / (unexplained / df2)) if df2 > 0 \
            else np.full(r, np.nan)
    if df2 > 0:
        QtQ = Q.T @ Q
        S_vv = (Dt.T @ Dt - QtQ) / df2
        S_vv = 0.5 * (S_vv + S_vv.T)
        ev = np.linalg.eigvalsh(S_vv)
        scale = max(np.abs(np.linalg.eigvalsh(Dt.T @ Dt / df2)).max(), np.finfo(float).tiny)
        if ev[0] <= 1e-12 * scale:
            cd = np.inf
        else:
            cd = float(scipy.linalg.eigh(QtQ, S_vv, eigvals_only=True)[0] / k_z)
    else:
        cd = np.nan
    return {"b": b, "intercept": ybar - float(dbar @ b), "cov": cov, "first_stage_f": F, "cragg_donald": cd,
            "feature_mean": dbar, "n_weighted": n_w}


def _warn_if_weak(stats, singular_values, threshold, instruments_supplied):
    cd = stats["cragg_donald"]
    if instruments_supplied and np.isfinite(threshold) and cd < threshold:
        warnings.warn(
            f"Weak instruments: Cragg–Donald statistic {cd:.3g} < weak_iv_threshold={threshold:g}. "
            f"First-stage singular values {np.array2string(np.asarray(singular_values), precision=3)}, "
            f"first-stage F per direction {np.array2string(np.asarray(stats['first_stage_f']), precision=3)}. "
            "Effects and intervals are unreliable; use fewer components or stronger instruments.",
            WeakInstrumentWarning, stacklevel=3)


class _IVInferenceMixin:
    """Effects of treatment shifts, their intervals, and the recommended intervention.

    Needs ``identified_subspace_`` (p, r) orthonormal, ``representation_coef_`` (r,) and
    ``representation_cov_`` (r, r); only rotation-invariant targets are reported.
    """

    def _has_x_space(self):
        return getattr(self, "identified_subspace_", None) is not None

    def predict(self, X):
        """Predict the structural outcome ``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Structural predictions.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_

    def score(self, X, y, *, Z=None, sample_weight=None):
        """Score with the negative projected MSE when Z is given, else R² (``IVScoreWarning`` after a fit with Z).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.
        y : array-like of shape (n_samples,)
            Outcome.
        Z : array-like of shape (n_samples, n_instruments), default=None
            Instruments of these samples; None falls back to R².
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights.

        Returns
        -------
        score : float
            Greater is better.
        """
        return _iv_score(self, X, y, Z, sample_weight)

    def _check_delta(self, delta, space):
        if space not in ("X", "D"):
            raise ValueError(f"space must be 'X' or 'D', got space={space!r}.")
        if space == "X" and not self._has_x_space():
            raise ValueError("space='X' needs a linear representation; the autoencoder has no X-space effect "
                             "(use space='D' or decode_intervention).")
        dim = self.n_features_in_ if space == "X" else self.n_components_
        delta = np.asarray(delta, dtype=np.float64)
        if delta.ndim == 1:
            delta = delta[None, :]
        if delta.ndim != 2 or delta.shape[1] != dim or not np.all(np.isfinite(delta)):
            raise ValueError(f"delta must be finite with shape ({dim},) or (m, {dim}) for space={space!r}, "
                             f"got shape {np.shape(delta)}.")
        return delta

    def identified_fraction(self, delta):
        """Compute the fraction ``‖WᵀΔ‖² / ‖Δ‖²`` of each X-space shift inside the identified subspace.

        Parameters
        ----------
        delta : array-like of shape (n_features,) or (m, n_features)
            Shifts of the treatments.

        Returns
        -------
        fraction : ndarray of shape (m,)
            Identified share of each shift, in [0, 1] (1 for a zero shift).
        """
        check_is_fitted(self)
        delta = self._check_delta(delta, "X")
        inside = np.sum((delta @ self.identified_subspace_) ** 2, axis=1)
        total = np.sum(delta**2, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, inside / np.where(total > 0, total, 1.0), 1.0)

    def _effect_and_se(self, delta, space):
        delta = self._check_delta(delta, space)
        if space == "X":
            frac = self.identified_fraction(delta)
            if np.any(frac < 0.5):
                warnings.warn(f"The shift lies mostly outside the identified subspace (identified_fraction="
                              f"{np.array2string(frac, precision=3)}); only its projection is identified.",
                              UnidentifiedInterventionWarning, stacklevel=3)
            d = delta @ self.identified_subspace_
        else:
            d = delta
        effect = d @ self.representation_coef_
        var = np.einsum("mi,ij,mj->m", d, self.representation_cov_, d)
        return effect, np.sqrt(np.maximum(var, 0.0))

    def intervention_effect(self, delta, *, space="X"):
        """Causal effect on y of shifting the treatments by ``delta``.

        Parameters
        ----------
        delta : array-like of shape (p,) or (m, p) for ``space="X"``, (r,) or (m, r) for ``space="D"``
            Treatment shifts.
        space : {"X", "D"}, default="X"
            Shifts of the raw treatments X, or of the representation coordinates D̃.

        Returns
        -------
        effect : ndarray of shape (m,)
            Effect on y of each shift (only the identified part of an X-space shift counts).
        """
        check_is_fitted(self)
        return self._effect_and_se(delta, space)[0]

    def intervention_effect_interval(self, delta, *, alpha=0.05, space="X"):
        """Compute normal ``1 - alpha`` confidence intervals of :meth:`intervention_effect`.

        Parameters
        ----------
        delta : array-like of shape (p,) or (m, p) for ``space="X"``, (r,) or (m, r) for ``space="D"``
            Treatment shifts.
        alpha : float, default=0.05
            One minus the coverage, in (0, 1).
        space : {"X", "D"}, default="X"
            Shifts of the raw treatments X, or of the representation coordinates D̃.

        Returns
        -------
        interval : ndarray of shape (m, 2)
            Lower and upper bounds.
        """
        check_is_fitted(self)
        if not isinstance(alpha, Real) or not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got alpha={alpha!r}.")
        effect, se = self._effect_and_se(delta, space)
        q = _normal.ppf(1 - alpha / 2)
        return np.column_stack([effect - q * se, effect + q * se])

    def recommend_intervention(self, norm=1.0):
        """Recommend the shift of size ``norm`` with the largest identified effect, ``norm · W b / ‖b‖``.

        Parameters
        ----------
        norm : float, default=1.0
            Euclidean size of the shift.

        Returns
        -------
        intervention : Intervention
            ``shift`` (X-space for linear representations, else D-space), ``effect = norm · ‖b‖`` and its
            standard error.
        """
        check_is_fitted(self)
        b = self.representation_coef_
        nb = float(np.linalg.norm(b))
        direction = b / nb if nb > 0 else np.zeros_like(b)
        d = norm * direction
        se = float(np.sqrt(max(d @ self.representation_cov_ @ d, 0.0)))
        shift = self.identified_subspace_ @ d if self._has_x_space() else d
        return Intervention(shift=shift, effect=float(norm * nb), stderr=se)


def _store_inference(est, stats, W, singular_values):
    est.representation_coef_ = stats["b"]
    est.representation_cov_ = stats["cov"]
    est.representation_stderr_ = np.sqrt(np.maximum(np.diag(stats["cov"]), 0.0))
    est.identified_subspace_ = W
    est.first_stage_singular_values_ = np.asarray(singular_values, dtype=np.float64)
    est.first_stage_f_ = stats["first_stage_f"]
    est.cragg_donald_ = stats["cragg_donald"]
    est.n_components_ = stats["b"].shape[0]


def _iv_score(est, X, y, Z, sample_weight):
    if Z is not None:
        return -projected_mse(y, est.predict(X), Z=Z, sample_weight=sample_weight)
    if getattr(est, "instruments_supplied_", False):
        warnings.warn(f"{type(est).__name__} was fitted with instruments but scored without Z: returning R², "
                      "which rewards absorbing the confounding. Pass Z (or use make_iv_scorer() with metadata "
                      "routing) for model selection.", IVScoreWarning, stacklevel=3)
    return RegressorMixin.score(est, X, y, sample_weight=sample_weight)
