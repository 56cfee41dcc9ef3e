"""k-class IV estimation (LIML, Fuller, 2SLS, OLS) and the fit path it shares with TwoStageLeastSquares.

The fit path: validate, absorb fixed effects and apply the weight type (``_absorb``), partial out the controls,
check the rank of the treatments and of the second-stage design, run the second stage (2SLS, or the k-class
one), store the inference. In the partialled, √w-scaled coordinates (treatments Dt, outcome yt, instrument basis
U_z, first stage Q = U_zᵀDt, c = U_zᵀyt) the k-class estimator is

    b(κ) = [(1 − κ) DtᵀDt + κ QᵀQ]⁻¹ [(1 − κ) Dtᵀyt + κ Qᵀc],

κ = 1 being 2SLS and κ = 0 OLS. LIML's κ is the smallest eigenvalue of (EᵀM_Z E)⁻¹(EᵀE) with E = [yt, Dt];
Fuller's is κ_LIML − α / (n − k_exog − k_z). Covariances follow linearmodels' ``IVLIML``: the bread is
[(1 − κ)XᵀX + κ XᵀP_Z X]⁻¹ and the robust and clustered meats use the 2SLS fitted values P_Z X.
"""

from numbers import Real

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, RegressorMixin

from sklearn_frontier.iv._absorb import partial_exogenous, validate_absorb
from sklearn_frontier.iv._design import build_design
from sklearn_frontier.iv._diagnostics import _score_outer, _scores, overid_and_endogeneity, robust_scale
from sklearn_frontier.iv._inference import _IVInferenceMixin, _second_stage, _store_inference, _warn_if_weak
from sklearn_frontier.iv._regressor_base import (
    COV_TYPES,
    FIT_REQUEST_ABSORB,
    PREDICT_REQUEST,
    SCORE_REQUEST,
    THRESHOLD,
    WEIGHT_TYPES,
    prepare_fit,
)
from sklearn_frontier.iv._validation import (
    _ControlDesign,
    _instrument_basis,
    _weights,
    check_collinear,
    check_frequency_weights,
)
from sklearn_frontier.utils._compat import Interval, StrOptions, _fit_context, validate_data


def _partialled(A, w, center, controls):
    """A residualised on the exogenous design (centred, or on the controls), raw scale."""
    if controls is not None:
        return controls.residual(A)
    if center:
        return A - (w @ A) / w.sum()
    return A


def liml_kappa(Dt, yt, Uz):
    """LIML's κ: the smallest eigenvalue of (EᵀM_Z E)⁻¹ EᵀE, E = [yt, Dt] (already partialled)."""
    E = np.column_stack([yt, Dt])
    Ez = E - Uz @ (Uz.T @ E)
    A, B = E.T @ E, Ez.T @ Ez
    try:
        return float(scipy.linalg.eigh(0.5 * (A + A.T), 0.5 * (B + B.T), eigvals_only=True)[0])
    except np.linalg.LinAlgError as exc:
        raise ValueError("LIML's kappa is not defined: the residuals of y and the treatments on the instruments "
                         "and controls are linearly dependent (too few samples, or y or a treatment is an exact "
                         "combination of the instruments).") from exc


def _resolve_kappa(kappa, fuller_alpha, Dt, yt, Uz, n_w, k_exog):
    """(κ used, LIML's κ) for ``kappa`` in {"liml", "fuller", "2sls"} or a number."""
    liml = liml_kappa(Dt, yt, Uz) if isinstance(kappa, str) and kappa in ("liml", "fuller") else np.nan
    if kappa == "liml":
        return liml, liml
    if kappa == "fuller":
        return liml - fuller_alpha / (n_w - k_exog - Uz.shape[1]), liml
    if kappa == "2sls":
        return 1.0, liml
    return float(kappa), liml


def kclass_second_stage(D, y, w, Uz, *, kappa, fuller_alpha, center, cov_type, controls, groups, debiased):
    """The second stage of the k-class estimator: the 2SLS stage's diagnostics, k-class coefficients and covariances.

    First-stage statistics, Hansen's J and the endogeneity test do not depend on κ and are those of 2SLS; Sargan's
    statistic uses the k-class residuals (as linearmodels' ``IVLIML`` results do).
    """
    stats = _second_stage(D, y, w, Uz, center=center, cov_type=cov_type, controls=controls, groups=groups,
                          debiased=debiased)
    debiased = stats["debiased"]
    sw = np.sqrt(w)
    n_w = float(w.sum())
    Dc, yc = _partialled(D, w, center, controls), _partialled(y, w, center, controls)
    Dt, yt = sw[:, None] * Dc, sw * yc
    k_c = float(controls.rank) if controls is not None else (1.0 if center else 0.0)
    Q, c = Uz.T @ Dt, Uz.T @ yt
    r = D.shape[1]
    kap, liml = _resolve_kappa(kappa, fuller_alpha, Dt, yt, Uz, n_w, k_c)
    H = (1.0 - kap) * (Dt.T @ Dt) + kap * (Q.T @ Q)
    Hinv = np.linalg.pinv(0.5 * (H + H.T))
    b = Hinv @ ((1.0 - kap) * (Dt.T @ yt) + kap * (Q.T @ c))
    raw_resid = yc - Dc @ b
    dof = n_w - r - k_c
    n_groups = stats["n_groups"]
    if cov_type == "nonrobust":
        denom = dof if debiased else n_w
        cov = (float(w @ raw_resid**2) / denom) * Hinv if denom > 0 else np.full((r, r), np.nan)
    else:
        fitted = Uz @ Q
        meat = _score_outer(_scores(fitted, raw_resid, sw, None if cov_type != "cluster" else groups),
                            None if cov_type != "cluster" else groups)
        scale_type = "cluster" if cov_type == "cluster" else "HC"
        cov = robust_scale(scale_type, cov_type != "HC0" and debiased, n_w, r + k_c, n_groups) * (Hinv @ meat @ Hinv)
    cov = 0.5 * (cov + cov.T)
    design = controls if controls is not None else _ControlDesign(None, w, center=center)
    control_coef = design.coef(y) - design.coef(D) @ b if design.C.shape[1] else np.zeros(0)
    if controls is None:
        intercept = float(w @ (y - D @ b)) / n_w if center else 0.0
    else:
        intercept = float(control_coef[0]) if center else 0.0
    stats.update(overid_and_endogeneity(Dt, yt, raw_resid, Uz, design.basis, sw, n_w, cov_type=cov_type,
                                        groups=groups))
    stats.update({"b": b, "intercept": intercept, "cov": cov, "control_coef": control_coef, "kappa": kap,
                  "liml_kappa": liml,
                  "full_cov": _kclass_full_covariance(design, Dt, Uz @ Q, D, raw_resid, w, kap, cov_type, debiased,
                                                      groups, n_groups, dof)})
    return stats


def _kclass_full_covariance(design, Dt, Dhat_t, D, raw_resid, w, kap, cov_type, debiased, groups, n_groups, dof):
    """Covariance of [C coefficients (intercept, W), b]: bread [(1 − κ)XᵀX + κXᵀP_Z X]⁻¹ on the full design."""
    sw = np.sqrt(w)
    Ct = sw[:, None] * design.C
    fitted = np.hstack([Ct, sw[:, None] * D - (Dt - Dhat_t)])  # P_Z X, Z = [C, excluded instruments]
    V = Dt - Dhat_t
    k_c = Ct.shape[1]
    A = fitted.T @ fitted
    A[k_c:, k_c:] += (1.0 - kap) * (V.T @ V)  # XᵀX − XᵀP_Z X is VᵀV on the treatments' block only
    bread = np.linalg.pinv(0.5 * (A + A.T))
    n_w = w.sum()
    if cov_type == "nonrobust":
        denom = dof if debiased else n_w
        return (float(w @ raw_resid**2) / denom) * bread if denom > 0 else np.full(bread.shape, np.nan)
    g = groups if cov_type == "cluster" else None
    meat = _score_outer(_scores(fitted, raw_resid, sw, g), g)
    factor = robust_scale("cluster" if cov_type == "cluster" else "HC", debiased, n_w, n_w - dof, n_groups)
    cov = factor * (bread @ meat @ bread)
    return 0.5 * (cov + cov.T)


def fit_linear_iv(est, X, y, *, Z, W, groups, sample_weight, absorb, kappa=None, fuller_alpha=1.0):
    """Fit ``est`` (TwoStageLeastSquares, or KClassIVRegressor with ``kappa``) and set its fitted attributes."""
    X, y = validate_data(est, X, y, dtype=np.float64, ensure_min_samples=2, y_numeric=True, order="C")
    w = _weights(sample_weight, X)
    analytic = est.weight_type == "analytic" and sample_weight is not None
    side = prepare_fit(est, X, Z, W, groups, w, center=est.fit_intercept)
    absorbed = validate_absorb(absorb, X.shape[0])
    part = partial_exogenous(X, y, side.Z, side.W, side.groups, w, center=est.fit_intercept, analytic=analytic,
                             absorbed=absorbed)
    Xp, yp, Zp, wp, center = part.X, part.y, part.Z, part.w, part.center
    controls = None
    if part.W is not None or absorbed is not None:
        controls = _ControlDesign(part.W, wp, center=center)
        controls.rank = controls.rank + part.extra_rank  # the absorbed levels are partialled out already
        controls.absorbed = absorbed is not None
    Zuse = Xp if Zp is None else Zp
    Uz, _, _ = _instrument_basis(Zuse, wp, center=center, name="X" if Zp is None else "Z", warn_rank=Zp is not None,
                                 controls=controls, treatments=Xp)
    sw = np.sqrt(wp)
    names = est._treatment_names()
    Dt = sw[:, None] * _partialled(Xp, wp, center, controls)
    p = X.shape[1]
    owner = type(est).__name__
    if Zp is not None:
        # Without Z the fit is OLS with minimum-norm coefficients (p > n allowed), which never raises for rank.
        check_collinear(Dt, names, what="treatments X", raw_norms=part.X_norms)
        if Uz.shape[1] < p:
            raise ValueError(f"{owner} is under-identified: instrument rank {Uz.shape[1]} < n_features={p}. Use "
                             "InstrumentGuidedIVRegressor for more treatments than instruments.")
        check_collinear(Uz.T @ Dt, names, what="second-stage design (the treatments' first-stage fitted values)")
    k_exog = float(controls.rank) if controls is not None else float(center)
    if sample_weight is not None and not analytic:
        check_frequency_weights(wp, p + k_exog, owner)
    common = dict(center=center, cov_type=est.cov_type_, controls=controls, groups=part.groups,
                  debiased=est._debiased_param)
    if kappa is None:
        stats = _second_stage(Xp, yp, wp, Uz, **common)
    else:
        stats = kclass_second_stage(Xp, yp, wp, Uz, kappa=kappa, fuller_alpha=fuller_alpha, **common)
    est._design_ = build_design(Xp, yp, wp, Uz, controls=controls, center=center, groups=part.groups,
                                cov_type=est.cov_type_, debiased=stats["debiased"], n_absorbed=0.0)
    if part.intercept_column:  # analytic weights: the intercept is the first (scaled) control column
        stats["has_intercept"] = True
        stats["intercept"] = float(stats["control_coef"][0])
    sv = scipy.linalg.svdvals(Uz.T @ Dt) / np.sqrt(stats["n_weighted"])
    _store_inference(est, stats, np.eye(p), sv[:p])
    est.coef_ = stats["b"]
    est.intercept_ = float(stats["intercept"])
    est.n_weighted_ = float(wp.sum())
    est.n_groups_ = stats["n_groups"]
    if absorbed is not None:
        # The fixed effects hold the intercept: intercept_ is the mean fixed effect (predictions are right on
        # average over the fit's rows), and params_cov_ has no intercept row.
        rows = slice(None) if part.rows is None else part.rows
        fitted = X[rows] @ est.coef_ + (side.W[rows] @ est.controls_coef_ if side.W is not None else 0.0)
        wr = w[rows]
        est.intercept_ = float(wr @ (y[rows] - fitted)) / float(wr.sum())
        est.has_intercept_ = False
    est.fixed_effect_levels_ = np.asarray([] if absorbed is None else absorbed.n_levels, dtype=np.intp)
    est.fixed_effect_dof_ = float(part.extra_rank)
    est.cov_ = stats["cov"]
    est.stderr_ = est.representation_stderr_
    est.n_instruments_ = Zuse.shape[1]
    est.instrument_rank_ = Uz.shape[1]
    est.instruments_supplied_ = Z is not None
    if kappa is not None:
        est.kappa_ = float(stats["kappa"])
        est.liml_kappa_ = float(stats["liml_kappa"])
    _warn_if_weak(stats, sv, est.weak_iv_threshold, Z is not None, est.cov_type_)
    return est


class KClassIVRegressor(_IVInferenceMixin, RegressorMixin, BaseEstimator):
    """K-class IV regression: LIML, Fuller, 2SLS or any fixed κ, with the inference of the linear IV family.

    The k-class estimator ``b(κ) = [X'(I − κM_Z)X]⁻¹ X'(I − κM_Z)y`` (controls W and the intercept in both X and
    Z) is OLS at κ = 0 and 2SLS at κ = 1. LIML's κ (the smallest root of its eigenproblem) makes it median-
    unbiased and far less biased than 2SLS with many or weak instruments; Fuller's modification subtracts
    ``fuller_alpha / (n − k_instruments)`` so that the estimator has moments. Same
    ``fit(X, y, *, Z, W, groups, sample_weight, absorb)`` as :class:`TwoStageLeastSquares`.

    Read more in the :doc:`User Guide </guide/iv>`.

    Parameters
    ----------
    kappa : {"liml", "fuller", "2sls"} or float, default="liml"
        κ: LIML's, Fuller's (LIML's less ``fuller_alpha / (n − k_instruments)``, k_instruments counting the
        intercept, the controls and the excluded instruments), 1 (2SLS), or the number given (0 is OLS).
    fuller_alpha : float, default=1.0
        Fuller's α, used with ``kappa="fuller"`` (1 is nearly unbiased, 4 minimises the mean squared error).
    fit_intercept : bool, default=True
        Centre X, Z and y (an intercept) before the two stages.
    cov_type : {"HC1", "HC0", "nonrobust", "cluster", "robust", "unadjusted", "clustered"}, default="HC1"
        Covariance of the coefficients, named as in :class:`TwoStageLeastSquares`; for κ ≠ 1 they are those of
        linearmodels' ``IVLIML``: bread ``[X'(I − κM_Z)X]⁻¹``, robust and clustered meats on ``P_Z X``.
    debiased : bool, default=None
        Small-sample correction (see :class:`TwoStageLeastSquares`).
    weak_iv_threshold : float or "stock-yogo", default=10.0
        Warn (``WeakInstrumentWarning``) when the Cragg–Donald statistic (Kleibergen–Paap under a robust
        ``cov_type``) is below this; ``"stock-yogo"`` uses the 10% maximal-size critical value of 2SLS.
    weight_type : {"frequency", "analytic"}, default="frequency"
        Meaning of ``sample_weight`` (see :class:`TwoStageLeastSquares`).

    Attributes
    ----------
    kappa_ : float
        The κ used.
    liml_kappa_ : float
        LIML's κ (nan when ``kappa`` is "2sls" or a number).
    coef_ : ndarray of shape (n_features_in_,)
        Effect of each treatment.
    intercept_ : float
        Structural prediction at X = 0 and W = 0 (0.0 with ``fit_intercept=False``; the mean fixed effect when
        fixed effects are absorbed).
    cov_ : ndarray of shape (n_features_in_, n_features_in_)
        Covariance of ``coef_`` under ``cov_type_`` (its block of ``params_cov_``).
    stderr_ : ndarray of shape (n_features_in_,)
        Standard errors of ``coef_``.
    representation_coef_ : ndarray of shape (n_features_in_,)
        ``coef_`` (the treatments are their own representation; shared with the other IV regressors).
    representation_cov_ : ndarray of shape (n_features_in_, n_features_in_)
        ``cov_``.
    representation_stderr_ : ndarray of shape (n_features_in_,)
        ``stderr_``.
    identified_subspace_ : ndarray of shape (n_features_in_, n_features_in_)
        The identity: every treatment direction is identified.
    first_stage_singular_values_ : ndarray of shape (n_features_in_,)
        Singular values of the whitened treatment–instrument cross-covariance (the instruments' strength).
    n_components_ : int
        ``n_features_in_``.
    first_stage_f_ : ndarray of shape (n_features_in_,)
        Partial F of the excluded instruments for each treatment (controls partialled out).
    first_stage_f_robust_ : ndarray of shape (n_features_in_,)
        Its robust Wald form (Wald / n_instruments) under ``cov_type``.
    cragg_donald_ : float
        Minimum-eigenvalue statistic over the identified directions.
    kleibergen_paap_ : float
        Kleibergen–Paap rk Wald F under ``cov_type``.

    effective_f_ : float
        Montiel Olea–Pflueger effective F of the excluded instruments under ``cov_type_`` (one treatment; nan
        with several); equals ``first_stage_f_`` with one instrument under ``"nonrobust"``.
    effective_f_critical_value_ : float
        Its simplified critical value for a 10% worst-case 2SLS bias at the 5% level (nan with several
        treatments).
    kleibergen_paap_lm_ : tuple of (float, float)
        Kleibergen–Paap rk LM underidentification statistic and p-value (χ²(n_instruments); Anderson's
        canonical-correlation LM under ``"nonrobust"``; nan with several treatments).
    stock_yogo_ : dict or None
        2SLS maximal-size critical values (keys "10%", "15%", "20%", "25%") where tabulated.
    sargan_ : tuple of (float, float)
        Sargan's statistic on the k-class residuals and its p-value (nan where exactly identified).
    hansen_j_ : tuple of (float, float)
        Hansen's J (two-step efficient GMM) and p-value (nan where exactly identified).
    endogeneity_ : tuple of (float, float)
        Statistic and p-value of the endogeneity test named by ``endogeneity_test_``.
    endogeneity_test_ : str
        "Durbin" under ``cov_type="nonrobust"``, else "Wooldridge score" (robust).
    controls_coef_ : ndarray of shape (n_controls_,)
        Coefficients of the controls W.
    params_cov_ : ndarray of shape (k, k)
        Covariance of [``intercept_`` (when there is one), ``controls_coef_``, ``coef_``]; k = has_intercept_ +
        n_controls_ + n_features_in_.
    n_controls_ : int
        Number of controls W seen in fit (0 without W).
    control_names_ : ndarray of str of shape (n_controls_,)
        Names of the controls in :meth:`summary`: W's columns, else "w0", "w1", ...
    control_feature_names_in_ : ndarray of shape (n_controls_,) or None
        W's column names seen in fit (a DataFrame with string columns), else None.
    instrument_feature_names_in_ : ndarray of shape (n_instruments_,) or None
        Z's column names seen in fit, else None.
    n_groups_ : int
        Number of clusters with ``cov_type="cluster"``, else 0.
    has_intercept_ : bool
        Whether ``params_cov_`` has an intercept row (False when fixed effects are absorbed).
    n_weighted_ : float
        Sum of the frequency weights (the number of samples without weights, or with analytic weights).
    fixed_effect_levels_ : ndarray of int of shape (n_absorbed,)
        Number of levels of each absorbed fixed effect (empty without ``absorb``).
    fixed_effect_dof_ : float
        Degrees of freedom the absorbed fixed effects use in ``df_resid_`` (pyfixest's count; 0 without).
    df_resid_ : float
        Residual degrees of freedom ``n_weighted_ − k``.
    debiased_ : bool
        Whether the covariance carries the small-sample factor.
    cov_type_ : str
        The covariance computed: "nonrobust", "HC0", "HC1" or "cluster".
    n_instruments_ : int
        Number of instrument columns (of X itself without Z).
    instrument_rank_ : int
        Rank of the instruments after partialling out the intercept, the controls and absorbed effects.
    instruments_supplied_ : bool
        Whether Z was given (False: the treatments instrument themselves and every κ gives OLS).
    n_features_in_ : int
        Number of treatments seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the treatments seen during fit. Defined only when X has feature names that are all strings.

    See Also
    --------
    TwoStageLeastSquares : The estimator at κ = 1, with the same API.

    Notes
    -----
    With the exogenous part partialled out (Frisch–Waugh–Lovell) and U_z an orthonormal basis of the
    residualised instruments, ``b = [(1 − κ)X̃ᵀX̃ + κQᵀQ]⁻¹[(1 − κ)X̃ᵀỹ + κQᵀc]`` with ``Q = U_zᵀX̃`` and
    ``c = U_zᵀỹ``, O(n k_z p + n p²). LIML's κ is the smallest generalised eigenvalue of (EᵀE, EᵀM_Z E) with
    E = [ỹ, X̃]. ``tests/test_iv_kclass.py`` checks coefficients and covariances against linearmodels'
    ``IVLIML`` (``fuller=``, ``kappa=``) under every ``cov_type``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.iv import KClassIVRegressor
    >>> rng = np.random.RandomState(0)
    >>> Z = rng.normal(size=(1000, 3)); u = rng.normal(size=1000)
    >>> x = Z @ [1.0, 0.5, 0.5] + u; y = 2 * x + u + 0.1 * rng.normal(size=1000)
    >>> est = KClassIVRegressor(kappa="liml").fit(x[:, None], y, Z=Z)
    >>> round(float(est.coef_[0]), 1), bool(est.kappa_ >= 1.0)
    (2.0, True)
    """

    __metadata_request__fit = FIT_REQUEST_ABSORB
    __metadata_request__score = SCORE_REQUEST
    __metadata_request__predict = PREDICT_REQUEST

    _parameter_constraints = {
        "kappa": [StrOptions({"liml", "fuller", "2sls"}), Interval(Real, None, None, closed="neither")],
        "fuller_alpha": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "cov_type": [COV_TYPES],
        "debiased": ["boolean", None],
        "weak_iv_threshold": THRESHOLD,
        "weight_type": [WEIGHT_TYPES],
    }

    def __init__(self, kappa="liml", *, fuller_alpha=1.0, fit_intercept=True, cov_type="HC1", debiased=None,
                 weak_iv_threshold=10.0, weight_type="frequency"):
        self.kappa = kappa
        self.fuller_alpha = fuller_alpha
        self.fit_intercept = fit_intercept
        self.cov_type = cov_type
        self.debiased = debiased
        self.weak_iv_threshold = weak_iv_threshold
        self.weight_type = weight_type

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, Z=None, W=None, groups=None, sample_weight=None, absorb=None):
        """Fit the k-class estimator of y on X (instrumented by Z; None: OLS) and the exogenous controls W.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments (the endogenous regressors).
        y : array-like of shape (n_samples,)
            Outcome.
        Z : array-like of shape (n_samples, n_instruments), default=None
            Excluded instruments; None means the treatments are exogenous (OLS, whatever κ).
        W : array-like of shape (n_samples, n_controls), default=None
            Exogenous controls, partialled out of X, y and Z (Frisch–Waugh–Lovell). Routed like Z.
        groups : array-like of shape (n_samples,), default=None
            Cluster labels, used only with ``cov_type="cluster"`` (routed like Z).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights, of the kind ``weight_type`` names (frequency weights by default).
        absorb : array-like of shape (n_samples,) or (n_samples, n_fixed_effects), default=None
            Categorical columns whose fixed effects are absorbed (see :meth:`TwoStageLeastSquares.fit`).

        Returns
        -------
        self : object
            The fitted regressor.
        """
        # Without Z the treatments instrument themselves: M_Z X = 0, every κ gives OLS (kappa_ is then 1).
        kappa = self.kappa if Z is not None else 1.0
        return fit_linear_iv(self, X, y, Z=Z, W=W, groups=groups, sample_weight=sample_weight, absorb=absorb,
                             kappa=kappa, fuller_alpha=self.fuller_alpha)

    def _treatment_names(self):
        names = getattr(self, "feature_names_in_", None)
        return [str(v) for v in names] if names is not None else [f"x{j}" for j in range(self.n_features_in_)]
