"""Instrument-guided treatment representations: the directions of the treatments that the instruments move.

The linear representation is our reconstruction of LIRR (Lin, Lan & Syrgkanis, ICML 2026): the top
left singular vectors of the (whitened) treatment–instrument cross-covariance, computed in
O(n·p·k) without any p × p or n × n matrix.
"""

from numbers import Integral, Real

import numpy as np
import scipy.linalg
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils import check_array, check_random_state
from sklearn.utils.extmath import randomized_svd

from sklearn_frontier.iv._validation import (
    _ControlDesign,
    _fix_signs,
    _instrument_basis,
    _weights,
    check_side_arrays,
    fit_side_arrays,
)
from sklearn_frontier.utils._compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)


# ----------------------------------------------------------------------------------------------------------
# linear representation
# ----------------------------------------------------------------------------------------------------------
def _linear_representation(X, Uz, Sz, w, n_components, *, whiten, z_ridge):
    """The directions Γ (p, r), the first-stage singular values (all k_z), mean μ.  O(n p k_z + p k_z²)."""
    n_w = w.sum()
    sw = np.sqrt(w)
    mu = (w @ X) / n_w
    if whiten and z_ridge == 0:
        g = np.full(Sz.shape, 1.0 / np.sqrt(n_w))
    elif whiten:
        g = Sz / np.sqrt(n_w * (Sz**2 + n_w * z_ridge))
    else:
        g = Sz / n_w
    # X̃ᵀU_z = Xᵀ(√w ⊙ U_z): exact because √wᵀU_z = 0, so X̃ is never formed.
    M = (X.T @ (sw[:, None] * Uz)) * g
    left, S, _ = scipy.linalg.svd(M, full_matrices=False, check_finite=False)
    return _fix_signs(left[:, :n_components]), S, mu


def _resolve_n_components(n_components, k_z, p, n):
    bound = min(k_z, p, n - 1)
    if n_components is None:
        return bound
    if n_components > bound:
        raise ValueError(f"n_components={n_components} must be <= min(instrument_rank={k_z}, n_features={p}, "
                         f"n_samples - 1={n - 1}) = {bound}.")
    return n_components


class InstrumentGuidedRepresentation(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Treatment representation guided by instruments (linear: LIRR; non-linear: IRAE).

    Learns the r directions of the treatments X that the instruments Z move, and transforms X to its
    coordinates along them (``transform``); the residual directions the instruments do not move are available
    too (``transform_residual``). It is the first step of :class:`InstrumentGuidedIVRegressor`, and a
    transformer in its own right (a Pipeline step before :class:`TwoStageLeastSquares`).

    Read more in the :doc:`User Guide </guide/iv>`.

    Parameters
    ----------
    n_components : int, default=None
        Dimension r; None means ``min(instrument_rank, n_features, n_samples - 1)``.
    method : {"linear", "autoencoder"}, default="linear"
        Linear cross-covariance SVD, or the instrument-regularised autoencoder (torch).
    whiten_instruments : bool, default=True
        Whiten Z (reduced-rank regression of X on Z). False gives the ``PLSSVD(scale=False)`` span.
        The two agree when ``n_components`` equals the instrument rank.
    z_ridge : float, default=0.0
        Ridge added to the instrument covariance before whitening.
    n_residual_components : int, default=None
        Number q of residual (non-instrumented) directions; None means 0 (linear) or
        ``min(8, p - r)`` (autoencoder).
    hidden_layer_sizes : tuple of int, default=(128, 128)
        Autoencoder hidden layers.
    lambdas : dict, default=None
        Autoencoder loss weights (keys ``reconstruction``, ``first_stage``, ``hsic_residual_instrument``,
        ``hsic_confounder_instrument``, ``hsic_confounder_residual``, ``scale``); missing keys are 1.
    max_epochs : int, default=200
        Autoencoder training epochs (0 keeps the linear warm start).
    lr : float, default=1e-3
        Adam learning rate (autoencoder).
    batch_size : int, default=256
        Minibatch size (autoencoder).
    device : str, default="cpu"
        Torch device (autoencoder).
    optimizer : {"adam", "adamw", "sgd", "rmsprop", "lbfgs"} or torch.optim.Optimizer subclass, default="adam"
        Optimiser of the autoencoder's skorch net (its options go in ``net_params`` as ``optimizer__*``).
    callbacks : list of skorch callbacks, default=None
        Extra callbacks of the autoencoder's skorch net (e.g. ``skorch.callbacks.LRScheduler``,
        ``EarlyStopping``, ``Checkpoint``); copied on each fit.
    validation_fraction : float in (0, 1) or None, default=None
        Share of the rows held out (seeded by ``random_state``) to record ``valid_loss`` in ``history_``
        (autoencoder); with ``n_iter_no_change`` it drives early stopping.
    n_iter_no_change : int or None, default=10
        With ``validation_fraction``: stop after this many epochs without a lower validation loss and
        restore the best epoch's weights (skorch ``EarlyStopping(load_best=True)``); None never stops.
    net_params : dict, default=None
        Further skorch settings of the autoencoder's net: ``train_split`` (a callable such as
        ``skorch.dataset.ValidSplit``, overriding ``validation_fraction``) and prefixed keys
        ``optimizer__*``, ``iterator_train__*``, ``iterator_valid__*``, ``callbacks__*``.
    random_state : int, RandomState instance or None, default=None
        Seeds the residual randomized SVD and the autoencoder.

    Attributes
    ----------
    components_ : ndarray of shape (n_components_, n_features_in_)
        Orthonormal rows Γᵀ: the directions Γ (p × r) of the representation, ``transform(X) = (X − mean_) Γ``
        for the linear method (the autoencoder's linear part).
    mean_ : ndarray of shape (n_features_in_,)
        Weighted mean of the treatments seen in fit.
    z_mean_ : ndarray of shape (n_instruments_,)
        Weighted mean of the instruments (of X itself without Z).
    n_components_ : int
        Dimension r of the representation.
    first_stage_singular_values_ : ndarray of shape (n_components_,)
        Singular values of the (whitened) treatment–instrument cross-covariance along the directions: how
        strongly the instruments move each.
    explained_instrumented_ratio_ : ndarray of shape (n_components_,)
        ``s_j² / Σ_i s_i²`` over all instrumented directions.
    residual_components_ : ndarray of shape (q, n_features_in_)
        Orthonormal residual directions (the treatment variation left after the representation), q =
        ``n_residual_components`` after clipping; empty by default for the linear method.
    n_instruments_ : int
        Number of instrument columns (of X itself without Z).
    instrument_rank_ : int
        Rank of the centred (or, with controls, residualised) instruments.
    instruments_supplied_ : bool
        Whether Z was given (False: the treatments instrument themselves and the representation is PCA).
    n_controls_ : int
        Number of controls W seen in fit (0 without W).
    control_names_ : ndarray of str of shape (n_controls_,)
        W's column names, else "w0", "w1", ...
    control_feature_names_in_ : ndarray of shape (n_controls_,) or None
        W's column names seen in fit (a DataFrame with string columns), else None; ``score`` checks W's
        against them as X's are checked.
    instrument_feature_names_in_ : ndarray of shape (n_instruments_,) or None
        Z's column names seen in fit, else None; ``score`` checks Z's against them.
    lambdas_ : dict or None
        The autoencoder's loss weights with defaults filled in (None for the linear method).
    module_state_ : dict of ndarray
        The trained autoencoder's ``state_dict`` as numpy arrays (``method="autoencoder"`` only); the torch
        module is rebuilt on use, so pickles and skops files hold no torch objects.
    history_ : list of dict
        The skorch net's per-epoch history (``train_loss``, ``valid_loss`` with a validation split,
        ``dur``, ...) as plain dicts (autoencoder only).
    loss_curve_ : list of float
        Training loss per epoch (autoencoder only).
    n_iter_ : int
        Epochs run (autoencoder only).
    n_features_in_ : int
        Number of treatments seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the treatments seen during fit. Defined only when X has feature names that are all strings.

    See Also
    --------
    InstrumentGuidedIVRegressor : IV regression on this representation.
    sklearn.decomposition.PCA : The Z=None limit.

    Notes
    -----
    The linear method keeps the top ``n_components`` left singular vectors of the whitened cross-covariance
    ``X̃ᵀZ̃ (Z̃ᵀZ̃)^(-1/2)`` between the centred treatments and instruments, computed in O(n·p·k) without any
    p × p or n × n matrix. For ``n_components`` equal to the instrument rank its span is ``col(Σ_XZ)``, the
    unique representation free of omitted-treatment bias. With ``Z=None`` the treatments instrument
    themselves and the representation is exactly PCA. With controls W the directions are those of the
    residuals of X and Z on [1, W] (Frisch–Waugh–Lovell), so the controls never enter the representation.

    The autoencoder (``method="autoencoder"``) starts from the linear directions and adds tanh networks,
    trained with a reconstruction loss, a first-stage loss and HSIC penalties that keep the residual
    coordinates independent of the instruments.

    References
    ----------
    Lin, Lan & Syrgkanis, "Learning Treatment Representations for Downstream Instrumental Variable
    Regression", ICML 2026, https://arxiv.org/abs/2506.02200.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.iv import InstrumentGuidedRepresentation
    >>> rng = np.random.RandomState(0)
    >>> Z = rng.normal(size=(100, 2))
    >>> X = Z @ rng.normal(size=(2, 6)) + rng.normal(size=(100, 6))
    >>> rep = InstrumentGuidedRepresentation().fit(X, Z=Z)
    >>> rep.transform(X).shape
    (100, 2)
    """

    __metadata_request__fit = {"Z": True, "W": True}
    __metadata_request__score = {"Z": True, "W": True}

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "method": [StrOptions({"linear", "autoencoder"})],
        "whiten_instruments": ["boolean"],
        "z_ridge": [Interval(Real, 0, None, closed="left")],
        "n_residual_components": [Interval(Integral, 0, None, closed="left"), None],
        "hidden_layer_sizes": [tuple, list],
        "lambdas": [dict, None],
        "max_epochs": [Interval(Integral, 0, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "device": [str],
        "optimizer": [StrOptions({"adam", "adamw", "sgd", "rmsprop", "lbfgs"}), type],
        "callbacks": [list, None],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left"), None],
        "net_params": [dict, None],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=None, *, method="linear", whiten_instruments=True, z_ridge=0.0,
                 n_residual_components=None, hidden_layer_sizes=(128, 128), lambdas=None, max_epochs=200,
                 lr=1e-3, batch_size=256, device="cpu", optimizer="adam", callbacks=None, validation_fraction=None,
                 n_iter_no_change=10, net_params=None, random_state=None):
        self.n_components = n_components
        self.method = method
        self.whiten_instruments = whiten_instruments
        self.z_ridge = z_ridge
        self.n_residual_components = n_residual_components
        self.hidden_layer_sizes = hidden_layer_sizes
        self.lambdas = lambdas
        self.max_epochs = max_epochs
        self.lr = lr
        self.batch_size = batch_size
        self.device = device
        self.optimizer = optimizer
        self.callbacks = callbacks
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.net_params = net_params
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, Z=None, W=None, sample_weight=None):
        """Learn the representation from treatments X and instruments Z (y is ignored).

        With controls W the directions are those of the residuals of X and Z on [1, W]
        (Frisch–Waugh–Lovell), so the controls never enter the representation; ``transform`` needs no W.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.
        y : None
            Ignored (the representation never sees the outcome).
        Z : array-like of shape (n_samples, n_instruments), default=None
            Instruments; None uses X itself (exogenous treatments: PCA).
        W : array-like of shape (n_samples, n_controls), default=None
            Exogenous controls, partialled out of X and Z before the directions are learned
            (``method="linear"`` only).
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights.

        Returns
        -------
        self : object
            The fitted representation.
        """
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2, order="C")
        if W is not None and self.method != "linear":
            raise ValueError(f"Controls W need method='linear' (got method={self.method!r}); partial W out of X "
                             "by hand to use the autoencoder.")
        side = fit_side_arrays(self, X.shape[0], Z=Z, W=W)
        w = _weights(sample_weight, X)
        self._fit_representation(X, side.Z, w, controls=None if side.W is None else _ControlDesign(side.W, w))
        return self

    def _fit_representation(self, X, Z, w, controls=None):
        """Fit on validated arrays; returns the instrument basis U_z (for the regressor's second stage)."""
        n, p = X.shape
        self.instruments_supplied_ = Z is not None
        Zuse = X if Z is None else Z
        Uz, Sz, zbar = _instrument_basis(Zuse, w, name="X" if Z is None else "Z", warn_rank=Z is not None,
                                         controls=controls, treatments=X)
        self.n_instruments_ = Zuse.shape[1]
        self.instrument_rank_ = Uz.shape[1]
        self.z_mean_ = zbar
        r = _resolve_n_components(self.n_components, Uz.shape[1], p, n)
        directions, S, mu = _linear_representation(X, Uz, Sz, w, r, whiten=self.whiten_instruments,
                                                   z_ridge=self.z_ridge)
        self.mean_ = mu
        self.components_ = directions.T
        self.n_components_ = r
        self._n_features_out = r
        total = float(np.sum(S**2))
        self.first_stage_singular_values_ = S[:r]
        self.explained_instrumented_ratio_ = S[:r] ** 2 / total if total > 0 else np.zeros(r)
        q = self.n_residual_components
        if q is None:
            q = 0 if self.method == "linear" else min(8, p - r)
        q = min(q, p - r, n - 1)
        if q > 0:
            sw = np.sqrt(w)
            Xt = sw[:, None] * (X - mu if controls is None else controls.residual(X))
            R = Xt - (Xt @ directions) @ directions.T
            _, _, Vt = randomized_svd(R, q, random_state=check_random_state(self.random_state))
            self.residual_components_ = _fix_signs(Vt.T).T
        else:
            self.residual_components_ = np.zeros((0, p))
        if self.method == "autoencoder":
            from sklearn_frontier.iv._autoencoder import fit_autoencoder

            fit_autoencoder(self, X, Zuse, w)
        else:
            self.lambdas_ = None
        return Uz

    def _check_transform_input(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False)

    def _encode(self, X):
        if self.method == "autoencoder":
            from sklearn_frontier.iv._autoencoder import encode

            return encode(self, X)
        Xc = X - self.mean_
        return Xc @ self.components_.T, Xc @ self.residual_components_.T

    def _decode(self, D, V):
        if self.method == "autoencoder":
            from sklearn_frontier.iv._autoencoder import decode

            return decode(self, D, V)
        return self.mean_ + D @ self.components_ + V @ self.residual_components_

    def transform(self, X):
        """Compute the representation coordinates D̃ of X (no instruments needed).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.

        Returns
        -------
        D : ndarray of shape (n_samples, n_components_)
            Coordinates along the instrument-guided directions.
        """
        return self._encode(self._check_transform_input(X))[0]

    def transform_residual(self, X):
        """Compute the residual (non-instrumented) coordinates Ṽ of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.

        Returns
        -------
        V : ndarray of shape (n_samples, q)
            Coordinates along ``residual_components_`` (q may be 0).
        """
        return self._encode(self._check_transform_input(X))[1]

    def score(self, X, y=None, *, Z=None, W=None):
        """Compute the share of the instrumented treatment variation that the representation reconstructs.

        ``1 − ‖P_Z(X̃ − X̂_D)‖² / ‖P_Z X̃‖²`` on the given data, with ``X̂_D`` the reconstruction from D̃
        alone (``inverse_transform(transform(X))``) and ``P_Z`` the projection onto the centred
        instruments. With ``Z=None`` the treatments instrument themselves, so this is the explained
        variance share of the representation (as for PCA). Greater is better, at most 1.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.
        y : None
            Ignored.
        Z : array-like of shape (n_samples, n_instruments), default=None
            Instruments; None uses X itself.
        W : array-like of shape (n_samples, n_controls), default=None
            Controls, partialled out of X and Z (as in fit).

        Returns
        -------
        score : float
            Reconstructed share, at most 1; greater is better.
        """
        X = self._check_transform_input(X)
        side = check_side_arrays(self, X.shape[0], Z=Z, W=W)
        Z, W = side.Z, side.W
        w = np.ones(X.shape[0])
        controls = None if W is None else _ControlDesign(W, w)
        Uz, _, _ = _instrument_basis(X if Z is None else Z, w, name="X" if Z is None else "Z", warn_rank=False,
                                     controls=controls)
        Xc = X - X.mean(axis=0) if controls is None else controls.residual(X)
        total = float(np.sum((Uz.T @ Xc) ** 2))
        if total <= 0:
            return 1.0
        D = self._encode(X)[0]
        missed = Uz.T @ (X - self._decode(D, np.zeros((X.shape[0], self.residual_components_.shape[0]))))
        return 1.0 - float(np.sum(missed**2)) / total

    def inverse_transform(self, X, residual=None):
        """Decode representation coordinates (and optional residual coordinates) back to treatments.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components_)
            Coordinates D̃.
        residual : array-like of shape (n_samples, q), default=None
            Residual coordinates Ṽ (zero if None).

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features_in_)
            Decoded treatments.
        """
        check_is_fitted(self)
        D = check_array(X, dtype=np.float64, input_name="X")
        if D.shape[1] != self.n_components_:
            raise ValueError(f"X has {D.shape[1]} features, but inverse_transform expects {self.n_components_}.")
        q = self.residual_components_.shape[0]
        V = np.zeros((D.shape[0], q)) if residual is None else check_array(residual, dtype=np.float64,
                                                                           input_name="residual")
        if V.shape != (D.shape[0], q):
            raise ValueError(f"residual must have shape ({D.shape[0]}, {q}), got {V.shape}.")
        return self._decode(D, V)
