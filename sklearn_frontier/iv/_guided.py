"""IV regression on an instrument-guided treatment representation (more treatments than instruments)."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone

from sklearn_frontier.iv._inference import (
    _IVInferenceMixin,
    _move_intercept_to_origin,
    _store_inference,
    _warn_if_weak,
)
from sklearn_frontier.iv._regressor_base import (
    COV_TYPES,
    FIT_REQUEST,
    PREDICT_REQUEST,
    SCORE_REQUEST,
    THRESHOLD,
    prepare_fit,
    second_stage_for,
    split_halves,
)
from sklearn_frontier.iv._representation import InstrumentGuidedRepresentation
from sklearn_frontier.iv._validation import (
    _ControlDesign,
    _instrument_basis,
    _weights,
    check_frequency_weights,
    record_side_arrays,
)
from sklearn_frontier.utils._compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)


class InstrumentGuidedIVRegressor(_IVInferenceMixin, RegressorMixin, BaseEstimator):
    """IV regression on an instrument-guided treatment representation (more treatments than instruments).

    Learns r directions of the treatments that the instruments move (an
    :class:`InstrumentGuidedRepresentation`), then runs 2SLS of y on the treatments' coordinates along them,
    instrumented by Z, with the exogenous controls W in both stages. ``coef_`` is the identified
    minimum-norm effect of each treatment; :meth:`summary`, :meth:`intervention_effect` and
    :meth:`recommend_intervention` give inference on it. With ``Z=None`` the fit is OLS.

    Read more in the :doc:`User Guide </guide/iv>`.

    Parameters
    ----------
    n_components : int, default=None
        Representation dimension r (None: the instrument rank bound). Must be None when ``representation``
        is an instance.
    representation : {"linear", "autoencoder"} or InstrumentGuidedRepresentation, default="linear"
        The representation learner (an instance is cloned). Controls W need ``"linear"``.
    whiten_instruments : bool, default=True
        See :class:`InstrumentGuidedRepresentation`.
    z_ridge : float, default=0.0
        See :class:`InstrumentGuidedRepresentation`.
    cov_type : {"HC1", "HC0", "nonrobust", "cluster", "robust", "unadjusted", "clustered"}, default="HC1"
        Covariance of the second-stage coefficients (see :class:`TwoStageLeastSquares`; linearmodels' names
        are accepted as they map).
    debiased : bool, default=None
        Small-sample correction (see :class:`TwoStageLeastSquares`).
    split : {"none", "sample"}, default="none"
        ``"sample"`` learns the representation on a random half and runs the second stage and inference on
        the other.
    weak_iv_threshold : float or "stock-yogo", default=10.0
        Warn (``WeakInstrumentWarning``) when the Cragg–Donald statistic (Kleibergen–Paap under a robust
        ``cov_type``) is below this; ``"stock-yogo"`` uses the 10% maximal-size critical value.
    random_state : int, RandomState instance or None, default=None
        Seeds the sample split and the representation.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features_in_,)
        Effect of each treatment, ``identified_subspace_ @ representation_coef_``: the minimum-norm effect,
        identified in the span of ``identified_subspace_`` only. Linear representations only.
    intercept_ : float
        Structural prediction at X = 0 and W = 0 (the autoencoder: at representation coordinates 0).
    representation_coef_ : ndarray of shape (n_components_,)
        Second-stage coefficients b on the representation coordinates.
    representation_cov_ : ndarray of shape (n_components_, n_components_)
        Covariance of ``representation_coef_`` under ``cov_type_``.
    representation_stderr_ : ndarray of shape (n_components_,)
        Standard errors of ``representation_coef_``.
    representation_ : InstrumentGuidedRepresentation
        The fitted representation (learned on the first half with ``split="sample"``).
    identified_subspace_ : ndarray of shape (n_features_in_, n_components_) or None
        Orthonormal directions Γ of the representation (``representation_.components_.T``); shifts of the
        treatments in their span have identified effects. None for the autoencoder.
    first_stage_singular_values_ : ndarray of shape (n_components_,)
        Singular values of the (whitened) treatment–instrument cross-covariance along the directions: the
        strength of the instruments in each.
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
    stock_yogo_ : dict or None
        2SLS maximal-size critical values (keys "10%", "15%", "20%", "25%") where tabulated.
    effective_f_ : float
        Montiel Olea–Pflueger effective F of the excluded instruments under ``cov_type_`` (one component; nan
        with several); equals ``first_stage_f_`` with one instrument under ``"nonrobust"``.
    effective_f_critical_value_ : float
        Its simplified critical value for a 10% worst-case 2SLS bias at the 5% level (nan with several
        components).
    kleibergen_paap_lm_ : tuple of (float, float)
        Kleibergen–Paap rk LM underidentification statistic and p-value (χ²(n_instruments); Anderson's
        canonical-correlation LM under ``"nonrobust"``; nan with several components).
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
    params_cov_ : ndarray of shape (1 + n_controls_ + n_components_, 1 + n_controls_ + n_components_)
        Covariance of [``intercept_``, ``controls_coef_``, ``representation_coef_``], the rows of
        :meth:`summary`.
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
        Sum of the sample weights of the second stage (the number of its samples without weights).
    df_resid_ : float
        Residual degrees of freedom ``n_weighted_ − k``, k counting the intercept, controls and components.
    debiased_ : bool
        Whether the covariance carries the small-sample factor (from ``cov_type`` and ``debiased``).
    cov_type_ : str
        The covariance computed: ``cov_type`` with linearmodels' names resolved to "nonrobust", "HC0", "HC1" or
        "cluster".
    n_components_ : int
        Representation dimension r used.
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
    TwoStageLeastSquares : Textbook 2SLS (needs at least as many instruments as treatments).
    PCATwoStageLeastSquares : The biased PCA-then-2SLS baseline.
    make_iv_scorer : Z-aware scorer for model selection.

    Notes
    -----
    With the directions Γ (p × r) learned from (X, Z), the second stage regresses y on D̃ = (X − μ)Γ
    instrumented by Z. For r equal to the instrument rank, ``coef_`` is the minimum-norm IV solution
    ``X̃ᵀZ̃(Z̃ᵀX̃X̃ᵀZ̃)⁻¹Z̃ᵀỹ``; its projection onto ``col(Σ_XZ)`` is identified, the rest is not. With
    ``Z=None`` the treatments instrument themselves and this is OLS (minimum-norm when p > n).

    The controls W are partialled out of X, y and Z before the representation is learned
    (Frisch–Waugh–Lovell), so they never enter it; coefficients and covariances are those of 2SLS with W in
    both stages. The second stage fits its intercept at the representation mean; ``intercept_`` is moved back
    to X = 0 and ``params_cov_`` with it (a linear map J, so the covariance becomes ``J Σ Jᵀ`` exactly). With
    one treatment and r = 1 every entry of ``params_cov_`` equals :class:`TwoStageLeastSquares`'.

    ``coef_`` depends on the scaling of X's columns (a StandardScaler upstream changes it); identified
    effects ``coef_ᵀΔ`` for Δ in the instrumented span do not.

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

    __metadata_request__fit = FIT_REQUEST
    __metadata_request__score = SCORE_REQUEST
    __metadata_request__predict = PREDICT_REQUEST

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "representation": [StrOptions({"linear", "autoencoder"}), InstrumentGuidedRepresentation],
        "whiten_instruments": ["boolean"],
        "z_ridge": [Interval(Real, 0, None, closed="left")],
        "cov_type": [COV_TYPES],
        "debiased": ["boolean", None],
        "split": [StrOptions({"none", "sample"})],
        "weak_iv_threshold": THRESHOLD,
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

    def _make_representation(self, with_controls):
        if isinstance(self.representation, InstrumentGuidedRepresentation):
            if self.n_components is not None:
                raise ValueError("n_components must be None when representation is an instance "
                                 "(set n_components on the representation).")
            method, given = self.representation.method, f"representation={self.representation!r}"
        else:
            method, given = self.representation, f"representation={self.representation!r}"
        if with_controls and method != "linear":
            raise ValueError(f"Controls W need representation='linear' (got {given}); partial W out of X and y "
                             "by hand to use the autoencoder.")
        if isinstance(self.representation, InstrumentGuidedRepresentation):
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
            as usual); partialled out of X, y and Z (Frisch–Waugh–Lovell). Routed like Z.
        groups : array-like of shape (n_samples,), default=None
            Cluster labels, used only with ``cov_type="cluster"`` (routed like Z).
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights.

        Returns
        -------
        self : object
            The fitted regressor.
        """
        Z_in, W_in = Z, W
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2, y_numeric=True, order="C")
        w = _weights(sample_weight, X)
        rep = self._make_representation(with_controls=W is not None)
        side = prepare_fit(self, X, Z, W, groups, w)
        Z, W, groups = side.Z, side.W, side.groups
        Zuse = X if Z is None else Z
        if self.split == "sample":
            first, second = split_halves(X.shape[0], self.random_state, Zuse.shape[1])
            rep._fit_representation(X[first], None if Z is None else Z[first], w[first],
                                    controls=None if W is None else _ControlDesign(W[first], w[first]))
            X2, y2, Z2, w2 = X[second], y[second], Zuse[second], w[second]
            W2 = None if W is None else W[second]
            g2 = None if groups is None else np.unique(groups[second], return_inverse=True)[1]
            Uz, _, _ = _instrument_basis(Z2, w2, name="Z" if Z is not None else "X", warn_rank=False,
                                         controls=None if W2 is None else _ControlDesign(W2, w2))
            self.n_weighted_ = float(w2.sum())
            self.n_groups_ = 0 if g2 is None else int(g2.max()) + 1
        else:
            Uz = rep._fit_representation(X, Z, w, controls=None if W is None else _ControlDesign(W, w))
            X2, y2, w2, W2, g2 = X, y, w, W, groups
        self._share_input_checks(rep, Z_in, W_in, side)
        D2 = rep._encode(X2)[0]
        if sample_weight is not None:
            k = 1 + D2.shape[1] + (0 if W2 is None else W2.shape[1])  # intercept, components, controls
            check_frequency_weights(w2, k, type(self).__name__,
                                    remedy="this estimator takes frequency weights only, so pass counts (for "
                                           "example the weights times the number of rows), or fit "
                                           "TwoStageLeastSquares or KClassIVRegressor with weight_type='analytic'")
        stats = second_stage_for(self, D2, y2, w2, Uz, W2, g2)
        linear = rep.method == "linear"
        directions = rep.components_.T if linear else None
        _store_inference(self, stats, directions, rep.first_stage_singular_values_)
        self.representation_ = rep
        self.n_instruments_ = rep.n_instruments_
        self.instrument_rank_ = rep.instrument_rank_
        self.instruments_supplied_ = Z is not None
        if linear:
            self.coef_ = directions @ stats["b"]
            _move_intercept_to_origin(self, stats, rep.mean_ @ directions)
        else:
            self.intercept_ = float(stats["intercept"])
        _warn_if_weak(stats, self.first_stage_singular_values_, self.weak_iv_threshold, Z is not None,
                      self.cov_type_)
        return self

    def _share_input_checks(self, rep, Z, W, side):
        """Give the fitted representation what this fit checked, so that ``representation_`` checks X, Z and W."""
        rep.n_features_in_ = self.n_features_in_
        if hasattr(self, "feature_names_in_"):
            rep.feature_names_in_ = self.feature_names_in_
        record_side_arrays(rep, Z, W, side)

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
        return self.representation_._encode(X)[0] @ self.representation_coef_ + self.intercept_ + extra

    def effect_confidence_set(self, shift, method="AR", alpha=0.05):
        """Weak-instrument-robust ``1 - alpha`` confidence set for the effect of shifting the treatments by ``shift``.

        The effect ``θ = coef_ᵀshift`` of the identified part of the shift (its projection on
        ``identified_subspace_``, Γ) is ``aᵀb`` with ``a = Γᵀshift`` and b the coefficients of the
        representation; the set inverts :meth:`weak_iv_test` for that single linear combination with the rest
        of b left free (subvector AR and CLR under ``cov_type="nonrobust"``, the projection AR under a robust
        one). With one treatment and ``shift=1`` it equals ``TwoStageLeastSquares().confidence_set(0)``.

        Parameters
        ----------
        shift : array-like of shape (n_features_in_,)
            A shift of the treatments (X-space). Only its identified part counts; a shift mostly outside
            the identified subspace warns (``UnidentifiedInterventionWarning``).
        method : {"AR", "CLR", "LM"}, default="AR"
            The test inverted (LM needs a model with one component).
        alpha : float, default=0.05
            One minus the coverage, in (0, 1).

        Returns
        -------
        intervals : list of (float, float)
            Sorted disjoint intervals: bounded, ``[(-inf, inf)]``, two half-lines, or empty.
        """
        check_is_fitted(self)
        if not self._has_x_space():
            raise ValueError("effect_confidence_set needs a linear representation (representation='linear').")
        delta = self._check_delta(shift, "X")
        if delta.shape[0] != 1:
            raise ValueError(f"shift must be one shift of shape ({self.n_features_in_},), got shape "
                             f"{np.shape(shift)}.")
        a = (delta @ self.identified_subspace_)[0]
        if not np.any(a):
            raise ValueError("shift lies outside the identified subspace (identified_fraction=0): its effect is not "
                             "identified by the instruments.")
        self._effect_and_se(delta, "X")  # warns when the shift is mostly unidentified
        return self._effect_set(a, method, alpha)

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
