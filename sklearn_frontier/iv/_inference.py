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
from sklearn_frontier.iv._diagnostics import (
    _score_outer,
    _scores,
    effective_f,
    first_stage,
    kleibergen_paap_lm,
    overid_and_endogeneity,
    robust_scale,
    stock_yogo_critical_values,
)
from sklearn_frontier.iv._scoring import iv_loss
from sklearn_frontier.iv._validation import _EPS, _ControlDesign, check_side_arrays
from sklearn_frontier.iv._weak_iv import _WeakIVMixin
from sklearn_frontier.utils._compat import (
    check_is_fitted,
    validate_data,
)
from sklearn_frontier.utils._warnings import user_stacklevel


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
def _second_stage(D, y, w, Uz, *, center=True, cov_type="HC1", controls=None, groups=None, debiased=None):
    """2SLS of y on the features D (n, r) with instrument basis Uz (n, k_z); O(n k_z r + n k_z²).

    ``controls`` (a ``_ControlDesign`` of [1, W]) are partialled out of D and y (Frisch–Waugh–Lovell;
    Uz must span the instruments residualised on them too). ``groups`` are integer cluster labels for
    ``cov_type="cluster"``. ``debiased=None`` takes the convention of ``cov_type`` (see ``_resolve_debiased``).
    Returns a dict with b, intercept, the r × r covariance, the full-parameter covariance and the diagnostics.
    """
    debiased = _resolve_debiased(cov_type, debiased)
    n_w = w.sum()
    sw = np.sqrt(w)
    if controls is None:
        dbar = (w @ D) / n_w if center else np.zeros(D.shape[1])
        ybar = float(w @ y) / n_w if center else 0.0
        Dc = D - dbar
        yc = y - ybar
        k_c = 1.0 if center else 0.0
    else:
        Dc, yc = controls.residual(D), controls.residual(y)
        k_c = float(controls.rank)
    Dt = sw[:, None] * Dc
    yt = sw * yc
    k_z, r = Uz.shape[1], D.shape[1]
    Q = Uz.T @ Dt
    c = Uz.T @ yt
    # Pseudo-inverse semantics: directions the instruments do not move get a zero coefficient.
    uq, sq, vqt = scipy.linalg.svd(Q, full_matrices=False, check_finite=False)
    keep = sq > max(Q.shape) * _EPS * 1e3 * (sq[0] if sq.size else 0.0)
    Qpinv = (vqt[keep].T / sq[keep]) @ uq[:, keep].T  # r × k_z
    b = Qpinv @ c
    bread = Qpinv @ Qpinv.T  # pinv(QᵀQ)
    raw_resid = yc - Dc @ b
    dof = n_w - r - k_c
    n_groups = int(groups.max()) + 1 if groups is not None else 0
    if cov_type in ("HC0", "HC1"):
        # Frequency-weight meat U_zᵀ diag(e²/w) U_z with e = √w ⊙ residual, i.e. diag(residual²):
        # the rows of U_z already carry √w.
        omega = Q.T @ ((Uz.T * raw_resid**2) @ Uz) @ Q
        hc0 = bread @ omega @ bread
        cov = hc0 if cov_type == "HC0" else (hc0 * n_w / dof if dof > 0 else np.full((r, r), np.nan))
    elif cov_type == "cluster":
        omega = _score_outer(_scores(Uz @ Q, raw_resid, sw, groups), groups)
        cov = robust_scale("cluster", debiased, n_w, r + k_c, n_groups) * (bread @ omega @ bread)
    else:  # nonrobust
        denom = dof if debiased else n_w
        cov = (float(w @ raw_resid**2) / denom) * bread if denom > 0 else np.full((r, r), np.nan)
    cov = 0.5 * (cov + cov.T)
    stats = first_stage(Dt, Uz, Q, sw, n_w, k_c, cov_type=cov_type, debiased=debiased, groups=groups,
                        n_groups=n_groups)
    design = controls if controls is not None else _ControlDesign(None, w, center=center)
    stats.update(overid_and_endogeneity(Dt, yt, raw_resid, Uz, design.basis, sw, n_w, cov_type=cov_type,
                                        groups=groups))
    control_coef = design.coef(y) - design.coef(D) @ b if design.C.shape[1] else np.zeros(0)
    if controls is None:
        intercept = ybar - float(dbar @ b)
    else:
        intercept = float(control_coef[0]) if center else 0.0
    stats.update({"b": b, "intercept": intercept, "cov": cov, "n_weighted": n_w,
                  "feature_mean": (w @ D) / n_w if center else np.zeros(r),
                  "control_coef": control_coef, "df_resid": dof, "n_excluded": k_z, "has_intercept": center,
                  "debiased": debiased, "n_groups": n_groups,
                  "full_cov": _full_covariance(design, Dt, Uz @ Q, D, raw_resid, w, cov_type, debiased, groups,
                                               n_groups, dof)})
    return stats


def _resolve_debiased(cov_type, debiased):
    """``debiased=None``: nonrobust and HC1 and cluster are debiased (n − k, Stata's ``small``), HC0 is not."""
    if debiased is None:
        return cov_type != "HC0"
    if (cov_type == "HC0" and debiased) or (cov_type == "HC1" and not debiased):
        raise ValueError(f"debiased={debiased!r} contradicts cov_type={cov_type!r} (HC1 is the debiased HC0); "
                         "leave debiased=None or pick the other HC name.")
    return bool(debiased)


def _full_covariance(design, Dt, Dhat_t, D, raw_resid, w, cov_type, debiased, groups, n_groups, dof):
    """Covariance of all parameters [C coefficients (intercept, W), b] of the 2SLS with controls included."""
    sw = np.sqrt(w)
    Ct = sw[:, None] * design.C
    fitted = np.hstack([Ct, sw[:, None] * D - (Dt - Dhat_t)])  # first-stage fitted values of [C, D]
    bread = np.linalg.pinv(fitted.T @ fitted)
    if cov_type == "nonrobust":
        n_w = w.sum()
        denom = dof if debiased else n_w
        return (float(w @ raw_resid**2) / denom) * bread if denom > 0 else np.full(bread.shape, np.nan)
    meat = _score_outer(_scores(fitted, raw_resid, sw, groups), groups)
    k = w.sum() - dof
    factor = robust_scale(cov_type if cov_type == "cluster" else "HC", debiased, w.sum(), k, n_groups)
    cov = factor * (bread @ meat @ bread)
    return 0.5 * (cov + cov.T)


def _weak_iv_threshold(threshold, n_endogenous, n_instruments):
    """The numeric threshold: a float, or the Stock–Yogo 10% maximal-size value (10 where not tabulated)."""
    if isinstance(threshold, str):
        cv = stock_yogo_critical_values(n_endogenous, n_instruments)
        return 10.0 if cv is None else cv["10%"]
    return threshold


def _warn_if_weak(stats, singular_values, threshold, instruments_supplied, cov_type="nonrobust"):
    """Warn when the weak-identification statistic (Cragg–Donald; Kleibergen–Paap under a robust
    ``cov_type``) is below the threshold."""
    cd = stats["cragg_donald"]
    kp = stats.get("kleibergen_paap", np.nan)
    use_kp = cov_type != "nonrobust" and np.isfinite(kp)
    value, label = (kp, "Kleibergen–Paap rk Wald F") if use_kp else (cd, "Cragg–Donald statistic")
    r, k_z = len(stats["b"]), stats.get("n_excluded", 0)
    threshold = _weak_iv_threshold(threshold, r, k_z)
    if instruments_supplied and np.isfinite(threshold) and value < threshold:
        cv = stock_yogo_critical_values(r, k_z)
        sy = "" if cv is None else (f" Stock–Yogo critical values (2SLS maximal size 10/15/20/25%): "
                                    f"{', '.join(f'{v:g}' for v in cv.values())}.")
        warnings.warn(
            f"Weak instruments: {label} {value:.3g} < weak_iv_threshold={threshold:g}.{sy} "
            f"First-stage singular values {np.array2string(np.asarray(singular_values), precision=3)}, "
            f"first-stage F per direction {np.array2string(np.asarray(stats['first_stage_f']), precision=3)}. "
            "Effects and intervals are unreliable; use fewer components or stronger instruments.",
            WeakInstrumentWarning, stacklevel=user_stacklevel())


class _IVInferenceMixin(_WeakIVMixin):
    """Effects of treatment shifts, their intervals, and the recommended intervention.

    Needs ``identified_subspace_`` (p, r) orthonormal, ``representation_coef_`` (r,) and
    ``representation_cov_`` (r, r); only rotation-invariant targets are reported.
    """

    def _has_x_space(self):
        return getattr(self, "identified_subspace_", None) is not None

    def _controls_term(self, W, n_samples):
        """``W @ controls_coef_`` (0 without controls); W is checked like X, and required exactly when fit saw it."""
        W = check_side_arrays(self, n_samples, W=W).W
        return 0.0 if W is None else W @ self.controls_coef_

    def predict(self, X, W=None):
        """Predict the structural outcome ``X @ coef_ + W @ controls_coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.
        W : array-like of shape (n_samples, n_controls), default=None
            Controls of these samples; required exactly when fit was given W.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Structural predictions.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_ + self._controls_term(W, X.shape[0])

    def score(self, X, y, *, Z=None, W=None, sample_weight=None):
        """Score with the negative projected MSE when Z is given, else R² (``IVScoreWarning`` after a fit with Z).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.
        y : array-like of shape (n_samples,)
            Outcome.
        Z : array-like of shape (n_samples, n_instruments), default=None
            Instruments of these samples; None falls back to R².
        W : array-like of shape (n_samples, n_controls), default=None
            Controls of these samples (required after a fit with W); they join Z in the projection.
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights.

        Returns
        -------
        score : float
            Greater is better.
        """
        return _iv_score(self, X, y, Z, W, sample_weight)

    def summary(self, alpha=0.05):
        """Summarise the fit: coefficients with standard errors, t, p and intervals; then the diagnostics.

        Rows are the intercept, the controls and the treatments (or representation components); p-values
        and intervals use t(``df_resid_``) when the covariance is debiased, else the normal (as linearmodels).

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the coverage of the confidence intervals, in (0, 1).

        Returns
        -------
        summary : IVSummary
            ``print(summary)`` shows the table; ``summary.params`` holds its columns.
        """
        from sklearn_frontier.iv._summary import build_summary

        check_is_fitted(self)
        if not isinstance(alpha, Real) or not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got alpha={alpha!r}.")
        return build_summary(self, alpha, self._treatment_names())

    def _treatment_names(self):
        return [f"component_{j}" for j in range(self.n_components_)]

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
                              UnidentifiedInterventionWarning, stacklevel=user_stacklevel())
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
        """Recommend the shift of size ``norm`` with the largest identified effect, ``norm · Γ b / ‖b‖``.

        ``Γ`` (``identified_subspace_``) holds the representation's directions, ``b`` their coefficients.

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


def _store_inference(est, stats, directions, singular_values):
    """Set the fitted attributes every IV regressor shares from its second stage (``directions``: Γ, p × r)."""
    est.representation_coef_ = stats["b"]
    est.representation_cov_ = stats["cov"]
    est.representation_stderr_ = np.sqrt(np.maximum(np.diag(stats["cov"]), 0.0))
    est.identified_subspace_ = directions
    est.first_stage_singular_values_ = np.asarray(singular_values, dtype=np.float64)
    est.first_stage_f_ = stats["first_stage_f"]
    est.first_stage_f_robust_ = stats["first_stage_f_robust"]
    est.cragg_donald_ = stats["cragg_donald"]
    est.kleibergen_paap_ = stats["kleibergen_paap"]
    est.stock_yogo_ = stock_yogo_critical_values(stats["b"].shape[0], stats["n_excluded"])
    est.sargan_ = stats["sargan"]
    est.hansen_j_ = stats["hansen_j"]
    est.endogeneity_ = stats["endogeneity"]
    est.endogeneity_test_ = stats["endogeneity_test"]
    est.controls_coef_ = stats["control_coef"][1:] if stats["has_intercept"] else stats["control_coef"]
    est.params_cov_ = stats["full_cov"]
    est.df_resid_ = float(stats["df_resid"])
    est.debiased_ = bool(stats["debiased"])
    est.n_components_ = stats["b"].shape[0]
    design = getattr(est, "_design_", None)
    if design is not None:
        est.effective_f_, est.effective_f_critical_value_, _ = effective_f(design)
        est.kleibergen_paap_lm_ = kleibergen_paap_lm(design)
    else:
        est.effective_f_ = est.effective_f_critical_value_ = np.nan
        est.kleibergen_paap_lm_ = (np.nan, np.nan)


def _move_intercept_to_origin(est, stats, shift):
    """Set ``intercept_`` at X = 0 and carry its covariance along.

    The second stage fits ``y = a + D b`` on features centred at the representation mean, so the intercept at
    X = 0 is ``a - shift @ b`` with ``shift`` the mean in feature coordinates. The map is linear, so the
    covariance moves exactly: ``params_cov_ <- J params_cov_ Jᵀ`` with ``J`` the identity plus ``-shift`` in the
    intercept row under the treatment columns.
    """
    b = stats["b"]
    est.intercept_ = float(stats["intercept"] - shift @ b)
    if not stats["has_intercept"]:
        return
    J = np.eye(est.params_cov_.shape[0])
    J[0, -b.shape[0]:] = -shift
    cov = J @ est.params_cov_ @ J.T
    est.params_cov_ = 0.5 * (cov + cov.T)


def _iv_score(est, X, y, Z, W, sample_weight):
    if Z is not None:  # the scorer's path: one check of Z and W, one loss
        return -iv_loss(est, X, y, Z=Z, W=W, sample_weight=sample_weight)
    if getattr(est, "instruments_supplied_", False):
        warnings.warn(f"{type(est).__name__} was fitted with instruments but scored without Z: returning R², "
                      "which rewards absorbing the confounding. Pass Z (or use make_iv_scorer() with metadata "
                      "routing) for model selection.", IVScoreWarning, stacklevel=user_stacklevel())
    if W is not None or getattr(est, "n_controls_", 0):
        from sklearn.metrics import r2_score

        return float(r2_score(y, est.predict(X, W=W), sample_weight=sample_weight))
    return RegressorMixin.score(est, X, y, sample_weight=sample_weight)
