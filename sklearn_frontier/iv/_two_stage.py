"""The baselines: textbook two-stage least squares, and PCA of the treatments followed by 2SLS."""

from numbers import Integral

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, RegressorMixin

from sklearn_frontier.iv._inference import (
    _IVInferenceMixin,
    _move_intercept_to_origin,
    _store_inference,
    _warn_if_weak,
)
from sklearn_frontier.iv._kclass import fit_linear_iv
from sklearn_frontier.iv._regressor_base import (
    COV_TYPES,
    FIT_REQUEST,
    FIT_REQUEST_ABSORB,
    PREDICT_REQUEST,
    SCORE_REQUEST,
    THRESHOLD,
    WEIGHT_TYPES,
    prepare_fit,
    second_stage_for,
)
from sklearn_frontier.iv._representation import _resolve_n_components
from sklearn_frontier.iv._validation import _ControlDesign, _instrument_basis
from sklearn_frontier.utils._compat import Interval, StrOptions, _fit_context, validate_data


class TwoStageLeastSquares(_IVInferenceMixin, RegressorMixin, BaseEstimator):
    """Textbook two-stage least squares (needs at least as many instruments as treatments).

    Regresses y on the treatments X instrumented by Z, with the exogenous controls W in both stages, and
    reports linearmodels' and Stata's standard errors and weak-instrument diagnostics. With ``Z=None`` the
    treatments instrument themselves (OLS). Raises when the instruments under-identify X.

    Read more in the :doc:`User Guide </guide/iv>`.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Centre X, Z and y (an intercept) before the two stages.
    cov_type : {"HC1", "HC0", "nonrobust", "cluster", "robust", "unadjusted", "clustered"}, default="HC1"
        Covariance of the coefficients. ``"nonrobust"``: ``s²(X̂ᵀX̂)⁻¹`` (linearmodels ``"unadjusted"``,
        Stata's default); ``"HC0"``/``"HC1"``: heteroskedasticity-robust sandwich without / with the
        ``n/(n−k)`` factor (linearmodels ``"robust"`` with ``debiased=False`` / ``True``, Stata ``robust``
        / ``robust small``); ``"cluster"``: one-way clustered by the ``groups`` passed to fit (linearmodels
        ``"clustered"``, Stata ``vce(cluster)``), k counting the intercept, controls and treatments.
        linearmodels' names are accepted as they map: ``"unadjusted"``, ``"robust"`` (HC0, or HC1 with
        ``debiased=True``, as in linearmodels) and ``"clustered"``; ``cov_type_`` holds the resolved name.
    debiased : bool, default=None
        Small-sample correction, as linearmodels' ``debiased`` and Stata's ``small``: ``s² = e'e/(n−k)``
        (else ``/n``), ``G/(G−1)·(n−1)/(n−k)`` for clusters, and t / F reference distributions in
        :meth:`summary`. None keeps the convention of ``cov_type``: True for "nonrobust", "HC1" and
        "cluster", False for "HC0" (an explicit value contradicting "HC0"/"HC1" raises).
    weak_iv_threshold : float or "stock-yogo", default=10.0
        Warn (``WeakInstrumentWarning``) when the Cragg–Donald statistic (Kleibergen–Paap under a robust
        ``cov_type``) is below this; ``"stock-yogo"`` uses the 10% maximal-size critical value.
    weight_type : {"frequency", "analytic"}, default="frequency"
        Meaning of ``sample_weight``. ``"frequency"`` (scikit-learn's): a weight counts observations, so every
        statistic equals the fit on rows repeated that many times, and weights must sum to more than the number
        of parameters. ``"analytic"`` (Stata's aweights, linearmodels' ``weights=``): relative precisions or
        probabilities; only their ratios matter (``n_weighted_`` is the number of rows with positive weight).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features_in_,)
        Effect of each treatment.
    intercept_ : float
        Structural prediction at X = 0 and W = 0 (0.0 with ``fit_intercept=False``).
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
        Partial F of the excluded instruments for each treatment (controls partialled out), Stata's
        first-stage F.
    first_stage_f_robust_ : ndarray of shape (n_features_in_,)
        Its robust Wald form (Wald / n_instruments) under ``cov_type`` (HC0/HC1 by ``debiased`` when
        ``cov_type="nonrobust"``).
    cragg_donald_ : float
        Minimum-eigenvalue statistic over the identified directions (perfectly predicted ones left out).
    kleibergen_paap_ : float
        Kleibergen–Paap rk Wald F under ``cov_type`` (equals ``first_stage_f_robust_`` for one treatment).

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
        Sargan's over-identification statistic and p-value (nan where exactly identified).
    hansen_j_ : tuple of (float, float)
        Hansen's J (two-step efficient GMM) and p-value (nan where exactly identified).
    endogeneity_ : tuple of (float, float)
        Statistic and p-value of the endogeneity test named by ``endogeneity_test_``.
    endogeneity_test_ : str
        "Durbin" under ``cov_type="nonrobust"``, else "Wooldridge score" (robust).
    controls_coef_ : ndarray of shape (n_controls_,)
        Coefficients of the controls W.
    params_cov_ : ndarray of shape (k, k)
        Covariance of [``intercept_`` (when there is one), ``controls_coef_``, ``coef_``], the rows of
        :meth:`summary`; k = has_intercept_ + n_controls_ + n_features_in_.
    n_controls_ : int
        Number of controls W seen in fit (0 without W).
    control_names_ : ndarray of str of shape (n_controls_,)
        Names of the controls in :meth:`summary`: W's columns, else "w0", "w1", ...
    control_feature_names_in_ : ndarray of shape (n_controls_,) or None
        W's column names seen in fit (a DataFrame with string columns), else None; ``predict`` and ``score``
        check W's against them as X's are checked.
    instrument_feature_names_in_ : ndarray of shape (n_instruments_,) or None
        Z's column names seen in fit, else None; ``score`` and :func:`make_iv_scorer` check Z's against them.
    n_groups_ : int
        Number of clusters with ``cov_type="cluster"``, else 0.
    has_intercept_ : bool
        Whether the model has an intercept row in ``params_cov_`` (``fit_intercept``; False when fixed effects
        are absorbed: they hold the intercept).
    n_weighted_ : float
        Sum of the frequency weights (the number of samples without weights, or with analytic weights).
    fixed_effect_levels_ : ndarray of int of shape (n_absorbed,)
        Number of levels of each absorbed fixed effect (empty without ``absorb``).
    fixed_effect_dof_ : float
        Degrees of freedom the absorbed fixed effects use in ``df_resid_`` (pyfixest's count; 0 without).
    df_resid_ : float
        Residual degrees of freedom ``n_weighted_ − k``.
    debiased_ : bool
        Whether the covariance carries the small-sample factor (from ``cov_type`` and ``debiased``).
    cov_type_ : str
        The covariance computed: ``cov_type`` with linearmodels' names resolved to "nonrobust", "HC0", "HC1" or
        "cluster".
    n_instruments_ : int
        Number of instrument columns (of X itself without Z).
    instrument_rank_ : int
        Rank of the instruments after partialling out the intercept and the controls.
    instruments_supplied_ : bool
        Whether Z was given (False: the fit is OLS).
    n_features_in_ : int
        Number of treatments seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the treatments seen during fit. Defined only when X has feature names that are all strings.

    See Also
    --------
    InstrumentGuidedIVRegressor : For more treatments than instruments.

    Notes
    -----
    With U_z an orthonormal basis of the centred (or, with controls, residualised) instruments,
    ``coef_ = lstsq(U_zᵀX̃, U_zᵀỹ)``. The controls are partialled out of X, y and Z (Frisch–Waugh–Lovell):
    coefficients, residuals and covariances are those of 2SLS with W in both X and Z, and ``params_cov_``
    covers the intercept and the controls too. ``tests/test_iv_linearmodels.py`` checks agreement with
    linearmodels' ``IV2SLS`` for every ``cov_type``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.iv import TwoStageLeastSquares
    >>> rng = np.random.RandomState(0)
    >>> Z = rng.normal(size=(500, 1)); u = rng.normal(size=500)
    >>> x = Z[:, 0] + u; y = 2 * x + u + 0.1 * rng.normal(size=500)
    >>> round(float(TwoStageLeastSquares().fit(x[:, None], y, Z=Z).coef_[0]), 1)
    2.0
    """

    __metadata_request__fit = FIT_REQUEST_ABSORB
    __metadata_request__score = SCORE_REQUEST
    __metadata_request__predict = PREDICT_REQUEST

    _parameter_constraints = {
        "fit_intercept": ["boolean"],
        "cov_type": [COV_TYPES],
        "debiased": ["boolean", None],
        "weak_iv_threshold": THRESHOLD,
        "weight_type": [WEIGHT_TYPES],
    }

    def __init__(self, *, fit_intercept=True, cov_type="HC1", debiased=None, weak_iv_threshold=10.0,
                 weight_type="frequency"):
        self.fit_intercept = fit_intercept
        self.cov_type = cov_type
        self.debiased = debiased
        self.weak_iv_threshold = weak_iv_threshold
        self.weight_type = weight_type

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, Z=None, W=None, groups=None, sample_weight=None, absorb=None):
        """Fit 2SLS of y on X (instrumented by Z; None: OLS) and the exogenous controls W.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments (the endogenous regressors).
        y : array-like of shape (n_samples,)
            Outcome.
        Z : array-like of shape (n_samples, n_instruments), default=None
            Excluded instruments; None means the treatments are exogenous (OLS).
        W : array-like of shape (n_samples, n_controls), default=None
            Exogenous controls: in the outcome equation and their own instruments (the intercept is added
            as usual); partialled out of X, y and Z (Frisch–Waugh–Lovell). Routed like Z.
        groups : array-like of shape (n_samples,), default=None
            Cluster labels, used only with ``cov_type="cluster"`` (routed like Z).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights, of the kind ``weight_type`` names (frequency weights by default).
        absorb : array-like of shape (n_samples,) or (n_samples, n_fixed_effects), default=None
            Categorical columns (an array or a DataFrame) whose fixed effects are absorbed: partialled out of y,
            X, Z and W by weighted alternating projections, never built as dummy columns. They hold the
            intercept. Degrees of freedom follow pyfixest's defaults. Routed like Z.

        Returns
        -------
        self : object
            The fitted regressor.
        """
        return fit_linear_iv(self, X, y, Z=Z, W=W, groups=groups, sample_weight=sample_weight, absorb=absorb)

    def _treatment_names(self):
        names = getattr(self, "feature_names_in_", None)
        return [str(v) for v in names] if names is not None else [f"x{j}" for j in range(self.n_features_in_)]


class PCATwoStageLeastSquares(_IVInferenceMixin, RegressorMixin, BaseEstimator):
    """Baseline: PCA of the treatments (ignoring Z), then 2SLS on the scores.

    Biased whenever the instruments reach y through directions PCA dropped ("omitted treatment"); shipped
    as the baseline :class:`InstrumentGuidedIVRegressor` is measured against.

    Read more in the :doc:`User Guide </guide/iv>`.

    Parameters
    ----------
    n_components : int, default=None
        None means ``min(instrument_rank, n_features, n_samples - 1)``.
    svd_solver : {"auto", "full", "covariance_eigh", "arpack", "randomized"}, default="auto"
        Solver of the PCA.
    cov_type : {"HC1", "HC0", "nonrobust", "cluster", "robust", "unadjusted", "clustered"}, default="HC1"
        Covariance of the second-stage coefficients (see :class:`TwoStageLeastSquares`).
    debiased : bool, default=None
        Small-sample correction (see :class:`TwoStageLeastSquares`).
    weak_iv_threshold : float or "stock-yogo", default=10.0
        Warn (``WeakInstrumentWarning``) when the Cragg–Donald statistic (Kleibergen–Paap under a robust
        ``cov_type``) is below this; ``"stock-yogo"`` uses the 10% maximal-size critical value.
    random_state : int, RandomState instance or None, default=None
        Seeds randomized PCA solvers.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features_in_,)
        Effect of each treatment, ``identified_subspace_ @ representation_coef_`` (zero outside the PCA span).
    intercept_ : float
        Structural prediction at X = 0 and W = 0.
    representation_ : PCA
        The fitted PCA of the treatments.
    representation_coef_ : ndarray of shape (n_components_,)
        Second-stage coefficients on the principal-component scores.
    representation_cov_ : ndarray of shape (n_components_, n_components_)
        Covariance of ``representation_coef_`` under ``cov_type_``.
    representation_stderr_ : ndarray of shape (n_components_,)
        Standard errors of ``representation_coef_``.
    identified_subspace_ : ndarray of shape (n_features_in_, n_components_)
        The principal directions (``representation_.components_.T``).
    first_stage_singular_values_ : ndarray of shape (n_components_,)
        Singular values of the instruments' cross-covariance with the component scores.
    n_components_ : int
        Number of principal components used.
    first_stage_f_ : ndarray of shape (n_components_,)
        Partial F of the excluded instruments for each component (controls partialled out), Stata's
        first-stage F.
    first_stage_f_robust_ : ndarray of shape (n_components_,)
        Its robust Wald form (Wald / n_instruments) under ``cov_type`` (HC0/HC1 by ``debiased`` when
        ``cov_type="nonrobust"``).
    cragg_donald_ : float
        Minimum-eigenvalue statistic over the identified directions (perfectly predicted ones left out).
    kleibergen_paap_ : float
        Kleibergen–Paap rk Wald F under ``cov_type`` (equals ``first_stage_f_robust_`` for one component).
    effective_f_ : float
        Montiel Olea–Pflueger effective F of the excluded instruments under ``cov_type_`` (one component; nan
        with several); equals ``first_stage_f_`` with one instrument under ``"nonrobust"``.
    effective_f_critical_value_ : float
        Its simplified critical value for a 10% worst-case 2SLS bias at the 5% level (nan with several
        components).
    kleibergen_paap_lm_ : tuple of (float, float)
        Kleibergen–Paap rk LM underidentification statistic and p-value (χ²(n_instruments); Anderson's
        canonical-correlation LM under ``"nonrobust"``; nan with several components).
    stock_yogo_ : dict or None
        2SLS maximal-size critical values (keys "10%", "15%", "20%", "25%") where tabulated.
    sargan_ : tuple of (float, float)
        Sargan's over-identification statistic and p-value (nan where exactly identified).
    hansen_j_ : tuple of (float, float)
        Hansen's J (two-step efficient GMM) and p-value (nan where exactly identified).
    endogeneity_ : tuple of (float, float)
        Statistic and p-value of the endogeneity test named by ``endogeneity_test_``.
    endogeneity_test_ : str
        "Durbin" under ``cov_type="nonrobust"``, else "Wooldridge score" (robust).
    controls_coef_ : ndarray of shape (n_controls_,)
        Coefficients of the controls W.
    params_cov_ : ndarray of shape (k, k)
        Covariance of [``intercept_`` (when there is one), ``controls_coef_``, ``representation_coef_``], the rows of
        :meth:`summary`; k = 1 + n_controls_ + n_components_.
    n_controls_ : int
        Number of controls W seen in fit (0 without W).
    control_names_ : ndarray of str of shape (n_controls_,)
        Names of the controls in :meth:`summary`: W's columns, else "w0", "w1", ...
    control_feature_names_in_ : ndarray of shape (n_controls_,) or None
        W's column names seen in fit (a DataFrame with string columns), else None; ``predict`` and ``score``
        check W's against them as X's are checked.
    instrument_feature_names_in_ : ndarray of shape (n_instruments_,) or None
        Z's column names seen in fit, else None; ``score`` and :func:`make_iv_scorer` check Z's against them.
    n_groups_ : int
        Number of clusters with ``cov_type="cluster"``, else 0.
    has_intercept_ : bool
        Whether the model has an intercept (always True).
    n_weighted_ : float
        Sum of the sample weights (the number of samples without weights).
    df_resid_ : float
        Residual degrees of freedom ``n_weighted_ − k``.
    debiased_ : bool
        Whether the covariance carries the small-sample factor (from ``cov_type`` and ``debiased``).
    cov_type_ : str
        The covariance computed: ``cov_type`` with linearmodels' names resolved to "nonrobust", "HC0", "HC1" or
        "cluster".
    n_instruments_ : int
        Number of instrument columns (of X itself without Z).
    instrument_rank_ : int
        Rank of the instruments after partialling out the intercept and the controls.
    instruments_supplied_ : bool
        Whether Z was given (False: the fit is OLS).
    n_features_in_ : int
        Number of treatments seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the treatments seen during fit. Defined only when X has feature names that are all strings.

    See Also
    --------
    make_pca_2sls : The same as a Pipeline.
    InstrumentGuidedIVRegressor : The bias-free representation.

    Notes
    -----
    The PCA is fitted on X alone (neither Z nor W enter it); the second stage is that of
    :class:`TwoStageLeastSquares` on the scores, with W in both stages. Its intercept is moved back to X = 0
    with its covariance, as in :class:`InstrumentGuidedIVRegressor`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.iv import PCATwoStageLeastSquares
    >>> rng = np.random.RandomState(0)
    >>> Z = rng.normal(size=(100, 2)); X = Z @ rng.normal(size=(2, 5)) + rng.normal(size=(100, 5))
    >>> PCATwoStageLeastSquares().fit(X, X @ np.ones(5), Z=Z).n_components_
    2
    """

    __metadata_request__fit = FIT_REQUEST
    __metadata_request__score = SCORE_REQUEST
    __metadata_request__predict = PREDICT_REQUEST

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "svd_solver": [StrOptions({"auto", "full", "covariance_eigh", "arpack", "randomized"})],
        "cov_type": [COV_TYPES],
        "debiased": ["boolean", None],
        "weak_iv_threshold": THRESHOLD,
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=None, *, svd_solver="auto", cov_type="HC1", debiased=None,
                 weak_iv_threshold=10.0, random_state=None):
        self.n_components = n_components
        self.svd_solver = svd_solver
        self.cov_type = cov_type
        self.debiased = debiased
        self.weak_iv_threshold = weak_iv_threshold
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, Z=None, W=None, groups=None):
        """Fit PCA on X, then 2SLS of y on the scores and W instrumented by Z (None: OLS).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.
        y : array-like of shape (n_samples,)
            Outcome.
        Z : array-like of shape (n_samples, n_instruments), default=None
            Instruments; None means the treatments are exogenous (OLS on the PCA scores).
        W : array-like of shape (n_samples, n_controls), default=None
            Exogenous controls: in the outcome equation and their own instruments (the intercept is added
            as usual); partialled out of X, y and Z (Frisch–Waugh–Lovell). Routed like Z.
        groups : array-like of shape (n_samples,), default=None
            Cluster labels, used only with ``cov_type="cluster"`` (routed like Z).

        Returns
        -------
        self : object
            The fitted regressor.
        """
        from sklearn.decomposition import PCA

        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2, y_numeric=True, order="C")
        w = np.ones(X.shape[0])
        side = prepare_fit(self, X, Z, W, groups, w)
        Z, W = side.Z, side.W
        Zuse = X if Z is None else Z
        Uz, _, _ = _instrument_basis(Zuse, w, name="X" if Z is None else "Z", warn_rank=Z is not None,
                                     controls=None if W is None else _ControlDesign(W, w), treatments=X)
        n, p = X.shape
        r = _resolve_n_components(self.n_components, Uz.shape[1], p, n)
        solver = self.svd_solver
        if solver == "arpack" and r >= min(n, p):
            solver = "full"
        pca = PCA(n_components=r, svd_solver=solver, random_state=self.random_state).fit(X)
        D = pca.transform(X)
        stats = second_stage_for(self, D, y, w, Uz, W, side.groups)
        directions = pca.components_.T
        sv = scipy.linalg.svdvals(Uz.T @ (X - X.mean(axis=0)) @ directions) / np.sqrt(n)
        _store_inference(self, stats, directions, sv)
        self.representation_ = pca
        self.coef_ = directions @ stats["b"]
        _move_intercept_to_origin(self, stats, pca.mean_ @ directions)
        self.n_instruments_ = Zuse.shape[1]
        self.instrument_rank_ = Uz.shape[1]
        self.instruments_supplied_ = Z is not None
        _warn_if_weak(stats, sv, self.weak_iv_threshold, Z is not None, self.cov_type_)
        return self


def make_pca_2sls(n_components, **tsls_params):
    """Build ``Pipeline([("pca", PCA(n_components)), ("iv", TwoStageLeastSquares(**tsls_params))])``.

    Pass the instruments as ``iv__Z=Z`` (routing off) or ``Z=Z`` (metadata routing on); controls W likewise.

    Read more in the :doc:`User Guide </guide/iv>`.

    Parameters
    ----------
    n_components : int
        Number of principal components.
    **tsls_params : dict
        Parameters of :class:`TwoStageLeastSquares`.

    Returns
    -------
    pipeline : Pipeline
        The unfitted PCA → 2SLS pipeline.

    See Also
    --------
    PCATwoStageLeastSquares : The same as one estimator.

    Examples
    --------
    >>> from sklearn_frontier.iv import make_pca_2sls
    >>> [name for name, _ in make_pca_2sls(2).steps]
    ['pca', 'iv']
    """
    from sklearn.decomposition import PCA
    from sklearn.pipeline import Pipeline

    return Pipeline([("pca", PCA(n_components)), ("iv", TwoStageLeastSquares(**tsls_params))])
