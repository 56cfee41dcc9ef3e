"""IV regressors: 2SLS on an instrument-guided representation, and the 2SLS / PCA→2SLS baselines."""

from numbers import Integral, Real

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.utils import check_random_state

from sklearn_frontier.iv._inference import (
    _IVInferenceMixin,
    _move_intercept_to_origin,
    _second_stage,
    _store_inference,
    _warn_if_weak,
)
from sklearn_frontier.iv._representation import (
    InstrumentGuidedRepresentation,
    _resolve_n_components,
)
from sklearn_frontier.iv._validation import (
    _ControlDesign,
    _instrument_basis,
    _validate_controls,
    _validate_groups,
    _validate_instruments,
    _weights,
    side_feature_names,
)
from sklearn_frontier.utils._compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)


# ----------------------------------------------------------------------------------------------------------
# regressors
# ----------------------------------------------------------------------------------------------------------
def _split_halves(n, random_state, k):
    rng = check_random_state(random_state)
    perm = rng.permutation(n)
    first, second = np.sort(perm[: n // 2]), np.sort(perm[n // 2:])
    if min(first.size, second.size) < k + 2:
        raise ValueError(f"split='sample' needs at least n_instruments + 2 = {k + 2} samples in each half; "
                         f"n_samples={n} is too small.")
    return first, second


_COV_TYPES = StrOptions({"HC0", "HC1", "nonrobust", "cluster", "unadjusted", "robust", "clustered"})
# linearmodels' names: "robust" is HC0, or HC1 with debiased=True (its default is debiased=False).
_LINEARMODELS_COV = {"unadjusted": "nonrobust", "clustered": "cluster"}


def _resolve_cov(cov_type, debiased):
    """``(cov_type, debiased)`` in this module's names, from ours or linearmodels'."""
    if cov_type == "robust":
        return ("HC1" if debiased else "HC0"), None
    return _LINEARMODELS_COV.get(cov_type, cov_type), debiased
_THRESHOLD = [Interval(Real, 0, None, closed="left"), StrOptions({"stock-yogo"})]
_METADATA = {"Z": True, "W": True, "groups": True}


def _validate_side(est, X, Z, W, groups, w, *, center=True):
    """Validate Z, W and groups like Z; record the control bookkeeping on ``est``."""
    n = X.shape[0]
    names_source_Z, names_source_W = Z, W
    Z = _validate_instruments(Z, n)
    names = getattr(W, "columns", None)
    W = _validate_controls(W, n)
    est.cov_type_, est._debiased_param = _resolve_cov(est.cov_type, est.debiased)
    groups = _validate_groups(groups, n, est.cov_type_)
    k_w = 0 if W is None else W.shape[1]
    k_z = X.shape[1] if Z is None else Z.shape[1]
    if W is not None and n < k_z + k_w + 2:
        raise ValueError(f"n_samples={n} is too small for {k_z} instruments and {k_w} controls W: IV regression "
                         f"needs n_samples >= n_instruments + n_controls + 2 = {k_z + k_w + 2}.")
    est.n_controls_ = k_w
    est.control_names_ = np.asarray([str(c) for c in names] if names is not None and k_w
                                    else [f"w{j}" for j in range(k_w)], dtype=object)
    est.control_feature_names_in_ = side_feature_names(names_source_W)
    est.instrument_feature_names_in_ = side_feature_names(names_source_Z)
    est.has_intercept_ = bool(center)
    est.n_weighted_ = float(w.sum())
    est.n_groups_ = 0 if groups is None else int(groups.max()) + 1
    return Z, W, groups


def _second_stage_for(est, D, y, w, Uz, W, groups, *, center=True):
    controls = None if W is None else _ControlDesign(W, w, center=center)
    return _second_stage(D, y, w, Uz, center=center, cov_type=est.cov_type_, controls=controls, groups=groups,
                         debiased=est._debiased_param)


class InstrumentGuidedIVRegressor(_IVInferenceMixin, RegressorMixin, BaseEstimator):
    """IV regression on an instrument-guided treatment representation (more treatments than instruments).

    Learns the directions V (p × r) from (X, Z) with :class:`InstrumentGuidedRepresentation`, then runs 2SLS
    of y on D̃ = (X − μ)V instrumented by Z (W always means the exogenous controls). For r equal to the instrument
    rank, ``coef_`` is the minimum-norm IV
    solution ``X̃ᵀZ̃(Z̃ᵀX̃X̃ᵀZ̃)⁻¹Z̃ᵀỹ``; its projection onto ``col(Σ_XZ)`` is identified, the rest is not.
    With ``Z=None`` the treatments instrument themselves and this is OLS (minimum-norm when p > n).

    ``coef_`` depends on the scaling of X's columns (a StandardScaler upstream changes it); identified
    effects ``coef_ᵀΔ`` for Δ in the instrumented span do not.

    Parameters
    ----------
    n_components : int, default=None
        Representation dimension r (None: the instrument rank bound). Must be None when ``representation``
        is an instance.
    representation : {"linear", "autoencoder"} or InstrumentGuidedRepresentation, default="linear"
        The representation learner (an instance is cloned).
    whiten_instruments : bool, default=True
        See :class:`InstrumentGuidedRepresentation`.
    z_ridge : float, default=0.0
        See :class:`InstrumentGuidedRepresentation`.
    cov_type : {"HC1", "HC0", "nonrobust", "cluster", "robust", "unadjusted", "clustered"}, default="HC1"
        Covariance of the second-stage coefficients (see :class:`TwoStageLeastSquares`).
    debiased : bool, default=None
        Small-sample correction (see :class:`TwoStageLeastSquares`).
    split : {"none", "sample"}, default="none"
        ``"sample"`` learns V on a random half and runs the second stage and inference on the other.
    weak_iv_threshold : float or "stock-yogo", default=10.0
        Warn (``WeakInstrumentWarning``) when the Cragg–Donald statistic (Kleibergen–Paap under a robust
        ``cov_type``) is below this; ``"stock-yogo"`` uses the 10% maximal-size critical value.
    random_state : int, RandomState instance or None, default=None
        Seeds the sample split and the representation.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features_in_,)
        X-space effect ``V b`` (linear representations only).
    intercept_ : float
    representation_coef_ : ndarray of shape (n_components_,)
    representation_cov_ : ndarray of shape (n_components_, n_components_)
    representation_stderr_ : ndarray of shape (n_components_,)
    representation_ : InstrumentGuidedRepresentation
    identified_subspace_ : ndarray of shape (n_features_in_, n_components_) or None
    first_stage_singular_values_ : ndarray of shape (n_components_,)
    first_stage_f_ : ndarray of shape (n_components_,)
        Partial F of the excluded instruments (controls partialled out), Stata's first-stage F.
    first_stage_f_robust_ : ndarray of shape (n_components_,)
        Its robust Wald form (Wald / n_instruments) under ``cov_type`` (HC0/HC1 by ``debiased`` when
        ``cov_type="nonrobust"``).
    cragg_donald_ : float
        Minimum-eigenvalue statistic over the identified directions (perfectly predicted ones left out).
    kleibergen_paap_ : float
        Kleibergen–Paap rk Wald F under ``cov_type`` (equals ``first_stage_f_robust_`` for one treatment).
    stock_yogo_ : dict or None
        2SLS maximal-size critical values (keys "10%", "15%", "20%", "25%") where tabulated.
    sargan_, hansen_j_, endogeneity_ : tuple of (float, float)
        (statistic, p-value) of Sargan's and Hansen's over-identification tests and of the endogeneity test
        named by ``endogeneity_test_`` (nan where exactly identified).
    controls_coef_ : ndarray of shape (n_controls_,)
    params_cov_ : ndarray
        Covariance of [intercept, controls_coef_, treatment coefficients].
    n_controls_, n_groups_ : int
    control_names_ : ndarray of str
    df_resid_ : float
    debiased_ : bool
        Whether the covariance carries the small-sample factor (from ``cov_type`` and ``debiased``).
    cov_type_ : str
        The covariance computed: ``cov_type`` with linearmodels' names resolved to "nonrobust", "HC0", "HC1" or
        "cluster".
    n_components_, n_instruments_, instrument_rank_ : int
    instruments_supplied_ : bool
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    See Also
    --------
    TwoStageLeastSquares : Textbook 2SLS (needs at least as many instruments as treatments).
    PCATwoStageLeastSquares : The biased PCA-then-2SLS baseline.
    make_iv_scorer : Z-aware scorer for model selection.

    References
    ----------
    Lin, Lan & Syrgkanis, ICML 2026, https://arxiv.org/abs/2506.02200.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.iv import InstrumentGuidedIVRegressor
    >>> rng = np.random.RandomState(0)
    >>> Z = rng.normal(size=(200, 2))
    >>> X = Z @ rng.normal(size=(2, 5)) + rng.normal(size=(200, 5))
    >>> y = X @ np.ones(5) + rng.normal(size=200)
    >>> reg = InstrumentGuidedIVRegressor().fit(X, y, Z=Z)
    >>> reg.coef_.shape, reg.n_components_
    ((5,), 2)
    """

    __metadata_request__fit = _METADATA
    __metadata_request__score = {"Z": True, "W": True}
    __metadata_request__predict = {"W": True}

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "representation": [StrOptions({"linear", "autoencoder"}), InstrumentGuidedRepresentation],
        "whiten_instruments": ["boolean"],
        "z_ridge": [Interval(Real, 0, None, closed="left")],
        "cov_type": [_COV_TYPES],
        "debiased": ["boolean", None],
        "split": [StrOptions({"none", "sample"})],
        "weak_iv_threshold": _THRESHOLD,
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=None, *, representation="linear", whiten_instruments=True, z_ridge=0.0,
                 cov_type="HC1", debiased=None, split="none", weak_iv_threshold=10.0, random_state=None):
        self.n_components = n_components
        self.representation = representation
        self.whiten_instruments = whiten_instruments
        self.z_ridge = z_ridge
        self.cov_type = cov_type
        self.debiased = debiased
        self.split = split
        self.weak_iv_threshold = weak_iv_threshold
        self.random_state = random_state

    def _make_representation(self):
        if isinstance(self.representation, InstrumentGuidedRepresentation):
            if self.n_components is not None:
                raise ValueError("n_components must be None when representation is an instance "
                                 "(set n_components on the representation).")
            return clone(self.representation)
        return InstrumentGuidedRepresentation(n_components=self.n_components, method=self.representation,
                                              whiten_instruments=self.whiten_instruments, z_ridge=self.z_ridge,
                                              random_state=self.random_state)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, *, Z=None, W=None, groups=None, sample_weight=None):
        """Fit the representation on (X, Z) with W partialled out, then 2SLS of y on it and W.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.
        y : array-like of shape (n_samples,)
            Outcome.
        Z : array-like of shape (n_samples, n_instruments), default=None
            Instruments; None means the treatments are exogenous (OLS).
        W : array-like of shape (n_samples, n_controls), default=None
            Exogenous controls: in the outcome equation and their own instruments (the intercept is added
            as today); partialled out of X, y and Z (Frisch–Waugh–Lovell). Routed like Z.
        groups : array-like of shape (n_samples,), default=None
            Cluster labels, used only with ``cov_type="cluster"`` (routed like Z).
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights.

        Returns
        -------
        self : object
            The fitted regressor.
        """
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2, y_numeric=True, order="C")
        w = _weights(sample_weight, X)
        Z, W, groups = _validate_side(self, X, Z, W, groups, w)
        rep = self._make_representation()
        Zuse = X if Z is None else Z
        if self.split == "sample":
            first, second = _split_halves(X.shape[0], self.random_state, Zuse.shape[1])
            rep._fit_representation(X[first], None if Z is None else Z[first], w[first],
                                    controls=None if W is None else _ControlDesign(W[first], w[first]))
            X2, y2, Z2, w2 = X[second], y[second], Zuse[second], w[second]
            W2 = None if W is None else W[second]
            g2 = None if groups is None else np.unique(groups[second], return_inverse=True)[1]
            Uz, _, _ = _instrument_basis(Z2, w2, name="Z", warn_rank=False,
                                         controls=None if W2 is None else _ControlDesign(W2, w2))
            self.n_weighted_ = float(w2.sum())
            self.n_groups_ = 0 if g2 is None else int(g2.max()) + 1
        else:
            Uz = rep._fit_representation(X, Z, w, controls=None if W is None else _ControlDesign(W, w))
            X2, y2, w2, W2, g2 = X, y, w, W, groups
        D2 = self._features(rep, X2)
        stats = _second_stage_for(self, D2, y2, w2, Uz, W2, g2)
        linear = rep.method == "linear"
        Wrep = rep.components_.T if linear else None
        _store_inference(self, stats, Wrep, rep.first_stage_singular_values_)
        self.representation_ = rep
        self.n_instruments_ = rep.n_instruments_
        self.instrument_rank_ = rep.instrument_rank_
        self.instruments_supplied_ = Z is not None
        if linear:
            self.coef_ = Wrep @ stats["b"]
            _move_intercept_to_origin(self, stats, rep.mean_ @ Wrep)
        else:
            self.intercept_ = float(stats["intercept"])
        _warn_if_weak(stats, self.first_stage_singular_values_, self.weak_iv_threshold, Z is not None,
                      self.cov_type_)
        return self

    @staticmethod
    def _features(rep, X):
        return rep._encode(X)[0]

    def predict(self, X, W=None):
        """Predict the structural outcome ``intercept_ + X @ coef_ + W @ controls_coef_``.

        With the autoencoder the treatment part is ``e_D(X) @ representation_coef_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.
        W : array-like of shape (n_samples, n_controls), default=None
            Controls of these samples; required exactly when fit was given W.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Structural predictions (without the confounding).
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        extra = self._controls_term(W, X.shape[0])
        if hasattr(self, "coef_"):
            return X @ self.coef_ + self.intercept_ + extra
        return self._features(self.representation_, X) @ self.representation_coef_ + self.intercept_ + extra

    def decode_intervention(self, X, delta):
        """Decode the treatments after shifting the representation of each row of X by ``delta``.

        Autoencoder representations only: ``x' = g(e_D(x) + delta, e_V(x))``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.
        delta : array-like of shape (n_components_,)
            Shift of the representation coordinates.

        Returns
        -------
        X_shifted : ndarray of shape (n_samples, n_features)
            Decoded shifted treatments.
        """
        check_is_fitted(self)
        rep = self.representation_
        if rep.method != "autoencoder":
            raise ValueError("decode_intervention is for representation='autoencoder'; for linear "
                             "representations the X-space shift is identified_subspace_ @ delta.")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        delta = self._check_delta(delta, "D")[0]
        D, V = rep._encode(X)
        return rep._decode(D + delta, V)


class TwoStageLeastSquares(_IVInferenceMixin, RegressorMixin, BaseEstimator):
    """Textbook two-stage least squares (needs at least as many instruments as treatments).

    ``coef_ = lstsq(U_zᵀX̃, U_zᵀỹ)`` with U_z an orthonormal basis of the centred instruments. With
    ``Z=None`` the treatments instrument themselves (OLS). Raises when the instruments under-identify X.

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

    Attributes
    ----------
    coef_ : ndarray of shape (n_features_in_,)
    intercept_ : float
    cov_ : ndarray of shape (n_features_in_, n_features_in_)
    stderr_ : ndarray of shape (n_features_in_,)
    first_stage_f_ : ndarray of shape (n_features_in_,)
        Partial F of the excluded instruments (controls partialled out), Stata's first-stage F.
    first_stage_f_robust_ : ndarray of shape (n_features_in_,)
        Its robust Wald form (Wald / n_instruments) under ``cov_type`` (HC0/HC1 by ``debiased`` when
        ``cov_type="nonrobust"``).
    cragg_donald_ : float
        Minimum-eigenvalue statistic over the identified directions (perfectly predicted ones left out).
    kleibergen_paap_ : float
        Kleibergen–Paap rk Wald F under ``cov_type`` (equals ``first_stage_f_robust_`` for one treatment).
    stock_yogo_ : dict or None
        2SLS maximal-size critical values (keys "10%", "15%", "20%", "25%") where tabulated.
    sargan_, hansen_j_, endogeneity_ : tuple of (float, float)
        (statistic, p-value) of Sargan's and Hansen's over-identification tests and of the endogeneity test
        named by ``endogeneity_test_`` (nan where exactly identified).
    controls_coef_ : ndarray of shape (n_controls_,)
    params_cov_ : ndarray
        Covariance of [intercept, controls_coef_, treatment coefficients].
    n_controls_, n_groups_ : int
    control_names_ : ndarray of str
    df_resid_ : float
    debiased_ : bool
        Whether the covariance carries the small-sample factor (from ``cov_type`` and ``debiased``).
    cov_type_ : str
        The covariance computed: ``cov_type`` with linearmodels' names resolved to "nonrobust", "HC0", "HC1" or
        "cluster".
    n_instruments_, instrument_rank_ : int
    instruments_supplied_ : bool
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    See Also
    --------
    InstrumentGuidedIVRegressor : For more treatments than instruments.

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

    __metadata_request__fit = _METADATA
    __metadata_request__score = {"Z": True, "W": True}
    __metadata_request__predict = {"W": True}

    _parameter_constraints = {
        "fit_intercept": ["boolean"],
        "cov_type": [_COV_TYPES],
        "debiased": ["boolean", None],
        "weak_iv_threshold": _THRESHOLD,
    }

    def __init__(self, *, fit_intercept=True, cov_type="HC1", debiased=None, weak_iv_threshold=10.0):
        self.fit_intercept = fit_intercept
        self.cov_type = cov_type
        self.debiased = debiased
        self.weak_iv_threshold = weak_iv_threshold

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, Z=None, W=None, groups=None, sample_weight=None):
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
            as today); partialled out of X, y and Z (Frisch–Waugh–Lovell). Routed like Z.
        groups : array-like of shape (n_samples,), default=None
            Cluster labels, used only with ``cov_type="cluster"`` (routed like Z).
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights.

        Returns
        -------
        self : object
            The fitted regressor.
        """
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2, y_numeric=True, order="C")
        w = _weights(sample_weight, X)
        Z, W, groups = _validate_side(self, X, Z, W, groups, w, center=self.fit_intercept)
        Zuse = X if Z is None else Z
        controls = None if W is None else _ControlDesign(W, w, center=self.fit_intercept)
        Uz, Sz, _ = _instrument_basis(Zuse, w, center=self.fit_intercept, name="X" if Z is None else "Z",
                                      warn_rank=Z is not None, controls=controls, treatments=X)
        p = X.shape[1]
        if Z is not None and Uz.shape[1] < p:
            raise ValueError(f"TwoStageLeastSquares is under-identified: instrument rank {Uz.shape[1]} < "
                             f"n_features={p}. Use InstrumentGuidedIVRegressor for more treatments than "
                             "instruments.")
        stats = _second_stage(X, y, w, Uz, center=self.fit_intercept, cov_type=self.cov_type_, controls=controls,
                              groups=groups, debiased=self._debiased_param)
        # First-stage singular values of the (whitened) cross-covariance, for the weak-IV message.
        sw = np.sqrt(w)
        sv = scipy.linalg.svdvals(Uz.T @ (sw[:, None] * (X - stats["feature_mean"]))) / np.sqrt(stats["n_weighted"])
        _store_inference(self, stats, np.eye(p), sv[:p])
        self.coef_ = stats["b"]
        self.intercept_ = float(stats["intercept"])
        self.cov_ = stats["cov"]
        self.stderr_ = self.representation_stderr_
        self.n_instruments_ = Zuse.shape[1]
        self.instrument_rank_ = Uz.shape[1]
        self.instruments_supplied_ = Z is not None
        _warn_if_weak(stats, sv, self.weak_iv_threshold, Z is not None, self.cov_type_)
        return self

    def _treatment_names(self):
        names = getattr(self, "feature_names_in_", None)
        return [str(v) for v in names] if names is not None else [f"x{j}" for j in range(self.n_features_in_)]


class PCATwoStageLeastSquares(_IVInferenceMixin, RegressorMixin, BaseEstimator):
    """Baseline: PCA of the treatments (ignoring Z), then 2SLS on the scores.

    Biased whenever the instruments reach y through directions PCA dropped ("omitted treatment").

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
    coef_, intercept_, representation_ (the fitted PCA), representation_coef_, representation_cov_,
    identified_subspace_, first_stage_singular_values_, first_stage_f_, first_stage_f_robust_, cragg_donald_,
    kleibergen_paap_, stock_yogo_, sargan_, hansen_j_, endogeneity_, controls_coef_, params_cov_, cov_type_,
    n_components_, n_instruments_, instrument_rank_, instruments_supplied_, n_features_in_, feature_names_in_
        As :class:`TwoStageLeastSquares` (diagnostics per PCA component).

    See Also
    --------
    make_pca_2sls : The same as a Pipeline.
    InstrumentGuidedIVRegressor : The bias-free representation.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.iv import PCATwoStageLeastSquares
    >>> rng = np.random.RandomState(0)
    >>> Z = rng.normal(size=(100, 2)); X = Z @ rng.normal(size=(2, 5)) + rng.normal(size=(100, 5))
    >>> PCATwoStageLeastSquares().fit(X, X @ np.ones(5), Z=Z).n_components_
    2
    """

    __metadata_request__fit = _METADATA
    __metadata_request__score = {"Z": True, "W": True}
    __metadata_request__predict = {"W": True}

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "svd_solver": [StrOptions({"auto", "full", "covariance_eigh", "arpack", "randomized"})],
        "cov_type": [_COV_TYPES],
        "debiased": ["boolean", None],
        "weak_iv_threshold": _THRESHOLD,
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
            as today); partialled out of X, y and Z (Frisch–Waugh–Lovell). Routed like Z.
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
        Z, W, groups = _validate_side(self, X, Z, W, groups, w)
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
        stats = _second_stage_for(self, D, y, w, Uz, W, groups)
        Wpca = pca.components_.T
        sv = scipy.linalg.svdvals(Uz.T @ (X - X.mean(axis=0)) @ Wpca) / np.sqrt(n)
        _store_inference(self, stats, Wpca, sv)
        self.representation_ = pca
        self.coef_ = Wpca @ stats["b"]
        _move_intercept_to_origin(self, stats, pca.mean_ @ Wpca)
        self.n_instruments_ = Zuse.shape[1]
        self.instrument_rank_ = Uz.shape[1]
        self.instruments_supplied_ = Z is not None
        _warn_if_weak(stats, sv, self.weak_iv_threshold, Z is not None, self.cov_type_)
        return self



def make_pca_2sls(n_components, **tsls_params):
    """Build ``Pipeline([("pca", PCA(n_components)), ("iv", TwoStageLeastSquares(**tsls_params))])``.

    Pass the instruments as ``iv__Z=Z`` (routing off) or ``Z=Z`` (metadata routing on).

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

    Examples
    --------
    >>> from sklearn_frontier.iv import make_pca_2sls
    >>> [name for name, _ in make_pca_2sls(2).steps]
    ['pca', 'iv']
    """
    from sklearn.decomposition import PCA
    from sklearn.pipeline import Pipeline

    return Pipeline([("pca", PCA(n_components)), ("iv", TwoStageLeastSquares(**tsls_params))])
