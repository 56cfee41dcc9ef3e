"""Instrument-guided treatment representations and IV regression (linear core, baselines, scorers).

The linear representation is our reconstruction of LIRR (Lin, Lan & Syrgkanis, ICML 2026): the top
left singular vectors of the (whitened) treatment–instrument cross-covariance, computed in
O(n·p·k) without any p × p or n × n matrix. See ``shared/design/iv.md`` §2 for the derivations.
"""

import warnings
from collections import namedtuple
from numbers import Integral, Real

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.stats import norm as _normal
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, RegressorMixin, TransformerMixin, clone
from sklearn.metrics import make_scorer
from sklearn.utils import check_array, check_random_state
from sklearn.utils.extmath import randomized_svd

from sklearn_frontier.exceptions import IVScoreWarning, UnidentifiedInterventionWarning, WeakInstrumentWarning
from sklearn_frontier.utils._compat import (
    Interval,
    StrOptions,
    _check_sample_weight,
    _fit_context,
    check_is_fitted,
    validate_data,
)

__all__ = [
    "InstrumentGuidedRepresentation",
    "InstrumentGuidedIVRegressor",
    "TwoStageLeastSquares",
    "PCATwoStageLeastSquares",
    "Intervention",
    "make_pca_2sls",
    "projected_mse",
    "make_iv_scorer",
]

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


_EPS = np.finfo(np.float64).eps


# ----------------------------------------------------------------------------------------------------------
# validation helpers
# ----------------------------------------------------------------------------------------------------------
def _validate_instruments(Z, n_samples):
    """Validated float64 (n, k) instruments, or None. Every error names Z."""
    if Z is None:
        return None
    if sp.issparse(Z):
        raise TypeError("Sparse instruments Z are not supported; pass a dense array (Z.toarray()).")
    try:
        Z = check_array(Z, dtype=np.float64, ensure_2d=False, allow_nd=True, ensure_min_samples=1,
                        input_name="Z")
    except ValueError as exc:
        raise ValueError(f"Invalid instruments Z: {exc}") from exc
    if Z.ndim == 1:
        Z = Z.reshape(-1, 1)
    if Z.ndim != 2:
        raise ValueError(f"Z must be 1-D or 2-D (n_samples, n_instruments), got Z.ndim={Z.ndim}.")
    if Z.shape[0] != n_samples:
        raise ValueError(f"Z has {Z.shape[0]} samples but X has {n_samples}.")
    if Z.shape[1] == 0:
        raise ValueError("Z has 0 columns; pass at least one instrument or Z=None.")
    if n_samples < Z.shape[1] + 2:
        raise ValueError(f"n_samples={n_samples} is too small for Z with {Z.shape[1]} instruments: "
                         f"IV regression needs n_samples >= n_instruments + 2 = {Z.shape[1] + 2}.")
    return Z


def _weights(sample_weight, X):
    w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight must be finite.")
    if w.sum() <= 0:
        raise ValueError("sample_weight must have a positive sum.")
    return w


def _instrument_basis(Z, w, *, center=True, name="Z", warn_rank=True):
    """Orthonormal basis U_z of diag(√w)(Z − 1 z̄ᵀ), its singular values and z̄ (O(n k²))."""
    sw = np.sqrt(w)
    zbar = (w @ Z) / w.sum() if center else np.zeros(Z.shape[1])
    Zt = sw[:, None] * (Z - zbar)
    U, S, _ = scipy.linalg.svd(Zt, full_matrices=False, check_finite=False, lapack_driver="gesdd")
    if S.size == 0 or S[0] <= 0:
        raise ValueError(f"{name} has no variation (rank 0 after centring); IV regression needs "
                         "instruments that vary across samples.")
    k_z = int(np.sum(S > max(Zt.shape) * _EPS * S[0]))
    if warn_rank and k_z < Z.shape[1]:
        warnings.warn(f"{name} is rank deficient: rank {k_z} < {Z.shape[1]} columns after centring; "
                      f"continuing with {k_z} instrument directions.", UserWarning, stacklevel=3)
    return U[:, :k_z], S[:k_z], zbar


def _fix_signs(W):
    """Deterministic column signs: the largest-magnitude entry of each column is positive."""
    idx = np.argmax(np.abs(W), axis=0)
    signs = np.sign(W[idx, np.arange(W.shape[1])])
    signs[signs == 0] = 1.0
    return W * signs


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


# ----------------------------------------------------------------------------------------------------------
# linear representation
# ----------------------------------------------------------------------------------------------------------
def _linear_representation(X, Uz, Sz, w, n_components, *, whiten, z_ridge):
    """W (p, r), the first-stage singular values (all k_z), mean μ.  O(n p k_z + p k_z²)."""
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
    Wfull, S, _ = scipy.linalg.svd(M, full_matrices=False, check_finite=False)
    W = _fix_signs(Wfull[:, :n_components])
    return W, S, mu


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

    The linear method keeps the top ``n_components`` left singular vectors of the whitened cross-covariance
    ``X̃ᵀZ̃ (Z̃ᵀZ̃)^(-1/2)`` between centred treatments and instruments: the directions of X that the
    instruments move. For ``n_components`` equal to the instrument rank its span is ``col(Σ_XZ)``, the unique
    representation free of omitted-treatment bias. With ``Z=None`` the treatments instrument themselves
    and the representation is exactly PCA.

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
    random_state : int, RandomState instance or None, default=None
        Seeds the residual randomized SVD and the autoencoder.

    Attributes
    ----------
    components_ : ndarray of shape (n_components_, n_features_in_)
        Orthonormal rows W ᵀ.
    mean_ : ndarray of shape (n_features_in_,)
    z_mean_ : ndarray of shape (n_instruments_,)
    n_components_ : int
    first_stage_singular_values_ : ndarray of shape (n_components_,)
    explained_instrumented_ratio_ : ndarray of shape (n_components_,)
        ``s_j² / Σ_i s_i²`` over all instrumented directions.
    residual_components_ : ndarray of shape (q, n_features_in_)
    n_instruments_ : int
    instrument_rank_ : int
    instruments_supplied_ : bool
    lambdas_ : dict or None
    module_ : torch.nn.Module
        The trained autoencoder (``method="autoencoder"`` only).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    See Also
    --------
    InstrumentGuidedIVRegressor : IV regression on this representation.
    sklearn.decomposition.PCA : The Z=None limit.

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

    __metadata_request__fit = {"Z": True}
    __metadata_request__score = {"Z": True}

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
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=None, *, method="linear", whiten_instruments=True, z_ridge=0.0,
                 n_residual_components=None, hidden_layer_sizes=(128, 128), lambdas=None, max_epochs=200,
                 lr=1e-3, batch_size=256, device="cpu", random_state=None):
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
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, Z=None, sample_weight=None):
        """Learn the representation from treatments X and instruments Z (y is ignored).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.
        y : None
            Ignored (the representation never sees the outcome).
        Z : array-like of shape (n_samples, n_instruments), default=None
            Instruments; None uses X itself (exogenous treatments: PCA).
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights.

        Returns
        -------
        self : object
            The fitted representation.
        """
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2, order="C")
        Z = _validate_instruments(Z, X.shape[0])
        w = _weights(sample_weight, X)
        self._fit_representation(X, Z, w)
        return self

    def _fit_representation(self, X, Z, w):
        """Fit on validated arrays; returns the instrument basis U_z (for the regressor's second stage)."""
        n, p = X.shape
        self.instruments_supplied_ = Z is not None
        Zuse = X if Z is None else Z
        Uz, Sz, zbar = _instrument_basis(Zuse, w, name="X" if Z is None else "Z", warn_rank=Z is not None)
        self.n_instruments_ = Zuse.shape[1]
        self.instrument_rank_ = Uz.shape[1]
        self.z_mean_ = zbar
        r = _resolve_n_components(self.n_components, Uz.shape[1], p, n)
        W, S, mu = _linear_representation(X, Uz, Sz, w, r, whiten=self.whiten_instruments,
                                          z_ridge=self.z_ridge)
        self.mean_ = mu
        self.components_ = W.T
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
            Xt = sw[:, None] * (X - mu)
            R = Xt - (Xt @ W) @ W.T
            _, _, Vt = randomized_svd(R, q, random_state=check_random_state(self.random_state))
            self.residual_components_ = _fix_signs(Vt.T).T
        else:
            self.residual_components_ = np.zeros((0, p))
        if self.method == "autoencoder":
            from sklearn_frontier._iv_autoencoder import fit_autoencoder

            fit_autoencoder(self, X, Zuse, w)
        else:
            self.lambdas_ = None
        return Uz

    def _check_transform_input(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False)

    def _encode(self, X):
        if self.method == "autoencoder":
            from sklearn_frontier._iv_autoencoder import encode

            return encode(self, X)
        Xc = X - self.mean_
        return Xc @ self.components_.T, Xc @ self.residual_components_.T

    def _decode(self, D, V):
        if self.method == "autoencoder":
            from sklearn_frontier._iv_autoencoder import decode

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

    def score(self, X, y=None, *, Z=None):
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

        Returns
        -------
        score : float
            Reconstructed share, at most 1; greater is better.
        """
        X = self._check_transform_input(X)
        Z = _validate_instruments(Z, X.shape[0]) if Z is not None else None
        w = np.ones(X.shape[0])
        Uz, _, _ = _instrument_basis(X if Z is None else Z, w, name="X" if Z is None else "Z", warn_rank=False)
        Xc = X - X.mean(axis=0)
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


class InstrumentGuidedIVRegressor(_IVInferenceMixin, RegressorMixin, BaseEstimator):
    """IV regression on an instrument-guided treatment representation (more treatments than instruments).

    Learns W (p × r) from (X, Z) with :class:`InstrumentGuidedRepresentation`, then runs 2SLS of y on
    D̃ = (X − μ)W instrumented by Z. For r equal to the instrument rank, ``coef_`` is the minimum-norm IV
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
    cov_type : {"HC1", "HC0", "nonrobust"}, default="HC1"
        Covariance of the second-stage coefficients.
    split : {"none", "sample"}, default="none"
        ``"sample"`` learns W on a random half and runs the second stage and inference on the other.
    weak_iv_threshold : float, default=10.0
        Warn (``WeakInstrumentWarning``) when the Cragg–Donald statistic is below this.
    random_state : int, RandomState instance or None, default=None
        Seeds the sample split and the representation.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features_in_,)
        X-space effect ``W b`` (linear representations only).
    intercept_ : float
    representation_coef_ : ndarray of shape (n_components_,)
    representation_cov_ : ndarray of shape (n_components_, n_components_)
    representation_stderr_ : ndarray of shape (n_components_,)
    representation_ : InstrumentGuidedRepresentation
    identified_subspace_ : ndarray of shape (n_features_in_, n_components_) or None
    first_stage_singular_values_ : ndarray of shape (n_components_,)
    first_stage_f_ : ndarray of shape (n_components_,)
    cragg_donald_ : float
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

    __metadata_request__fit = {"Z": True}
    __metadata_request__score = {"Z": True}

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "representation": [StrOptions({"linear", "autoencoder"}), InstrumentGuidedRepresentation],
        "whiten_instruments": ["boolean"],
        "z_ridge": [Interval(Real, 0, None, closed="left")],
        "cov_type": [StrOptions({"HC0", "HC1", "nonrobust"})],
        "split": [StrOptions({"none", "sample"})],
        "weak_iv_threshold": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=None, *, representation="linear", whiten_instruments=True, z_ridge=0.0,
                 cov_type="HC1", split="none", weak_iv_threshold=10.0, random_state=None):
        self.n_components = n_components
        self.representation = representation
        self.whiten_instruments = whiten_instruments
        self.z_ridge = z_ridge
        self.cov_type = cov_type
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
    def fit(self, X, y, *, Z=None, sample_weight=None):
        """Fit the representation on (X, Z), then 2SLS of y on it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.
        y : array-like of shape (n_samples,)
            Outcome.
        Z : array-like of shape (n_samples, n_instruments), default=None
            Instruments; None means the treatments are exogenous (OLS).
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights.

        Returns
        -------
        self : object
            The fitted regressor.
        """
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2, y_numeric=True, order="C")
        Z = _validate_instruments(Z, X.shape[0])
        w = _weights(sample_weight, X)
        rep = self._make_representation()
        Zuse = X if Z is None else Z
        if self.split == "sample":
            first, second = _split_halves(X.shape[0], self.random_state, Zuse.shape[1])
            rep._fit_representation(X[first], None if Z is None else Z[first], w[first])
            X2, y2, Z2, w2 = X[second], y[second], Zuse[second], w[second]
            Uz, _, _ = _instrument_basis(Z2, w2, name="Z", warn_rank=False)
        else:
            Uz = rep._fit_representation(X, Z, w)
            X2, y2, w2 = X, y, w
        D2 = self._features(rep, X2)
        stats = _second_stage(D2, y2, w2, Uz, cov_type=self.cov_type)
        linear = rep.method == "linear"
        W = rep.components_.T if linear else None
        _store_inference(self, stats, W, rep.first_stage_singular_values_)
        self.representation_ = rep
        self.n_instruments_ = rep.n_instruments_
        self.instrument_rank_ = rep.instrument_rank_
        self.instruments_supplied_ = Z is not None
        if linear:
            self.coef_ = W @ stats["b"]
            self.intercept_ = float(stats["intercept"] - rep.mean_ @ self.coef_)
        else:
            self.intercept_ = float(stats["intercept"])
        _warn_if_weak(stats, self.first_stage_singular_values_, self.weak_iv_threshold, Z is not None)
        return self

    @staticmethod
    def _features(rep, X):
        return rep._encode(X)[0]

    def predict(self, X):
        """Predict the structural outcome ``intercept_ + X @ coef_`` (autoencoder: ``intercept_ + e_D(X) @ b``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Structural predictions (without the confounding).
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if hasattr(self, "coef_"):
            return X @ self.coef_ + self.intercept_
        return self._features(self.representation_, X) @ self.representation_coef_ + self.intercept_

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
    cov_type : {"HC1", "HC0", "nonrobust"}, default="HC1"
        Covariance of the coefficients.
    weak_iv_threshold : float, default=10.0
        Warn (``WeakInstrumentWarning``) when the Cragg–Donald statistic is below this.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features_in_,)
    intercept_ : float
    cov_ : ndarray of shape (n_features_in_, n_features_in_)
    stderr_ : ndarray of shape (n_features_in_,)
    first_stage_f_ : ndarray of shape (n_features_in_,)
    cragg_donald_ : float
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

    __metadata_request__fit = {"Z": True}
    __metadata_request__score = {"Z": True}

    _parameter_constraints = {
        "fit_intercept": ["boolean"],
        "cov_type": [StrOptions({"HC0", "HC1", "nonrobust"})],
        "weak_iv_threshold": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, *, fit_intercept=True, cov_type="HC1", weak_iv_threshold=10.0):
        self.fit_intercept = fit_intercept
        self.cov_type = cov_type
        self.weak_iv_threshold = weak_iv_threshold

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, Z=None, sample_weight=None):
        """Fit 2SLS of y on X instrumented by Z (None: OLS).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.
        y : array-like of shape (n_samples,)
            Outcome.
        Z : array-like of shape (n_samples, n_instruments), default=None
            Instruments; None means the treatments are exogenous (OLS).
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights.

        Returns
        -------
        self : object
            The fitted regressor.
        """
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2, y_numeric=True, order="C")
        Z = _validate_instruments(Z, X.shape[0])
        w = _weights(sample_weight, X)
        Zuse = X if Z is None else Z
        Uz, Sz, _ = _instrument_basis(Zuse, w, center=self.fit_intercept, name="X" if Z is None else "Z",
                                      warn_rank=Z is not None)
        p = X.shape[1]
        if Z is not None and Uz.shape[1] < p:
            raise ValueError(f"TwoStageLeastSquares is under-identified: instrument rank {Uz.shape[1]} < "
                             f"n_features={p}. Use InstrumentGuidedIVRegressor for more treatments than "
                             "instruments.")
        stats = _second_stage(X, y, w, Uz, center=self.fit_intercept, cov_type=self.cov_type)
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
        _warn_if_weak(stats, sv, self.weak_iv_threshold, Z is not None)
        return self



class PCATwoStageLeastSquares(_IVInferenceMixin, RegressorMixin, BaseEstimator):
    """Baseline: PCA of the treatments (ignoring Z), then 2SLS on the scores.

    Biased whenever the instruments reach y through directions PCA dropped ("omitted treatment").

    Parameters
    ----------
    n_components : int, default=None
        None means ``min(instrument_rank, n_features, n_samples - 1)``.
    svd_solver : {"auto", "full", "covariance_eigh", "arpack", "randomized"}, default="auto"
        Solver of the PCA.
    cov_type : {"HC1", "HC0", "nonrobust"}, default="HC1"
        Covariance of the second-stage coefficients.
    weak_iv_threshold : float, default=10.0
        Warn (``WeakInstrumentWarning``) when the Cragg–Donald statistic is below this.
    random_state : int, RandomState instance or None, default=None
        Seeds randomized PCA solvers.

    Attributes
    ----------
    coef_, intercept_, representation_ (the fitted PCA), representation_coef_, representation_cov_,
    identified_subspace_, first_stage_singular_values_, first_stage_f_, cragg_donald_, n_components_,
    n_instruments_, instrument_rank_, instruments_supplied_, n_features_in_, feature_names_in_

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

    __metadata_request__fit = {"Z": True}
    __metadata_request__score = {"Z": True}

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "svd_solver": [StrOptions({"auto", "full", "covariance_eigh", "arpack", "randomized"})],
        "cov_type": [StrOptions({"HC0", "HC1", "nonrobust"})],
        "weak_iv_threshold": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=None, *, svd_solver="auto", cov_type="HC1", weak_iv_threshold=10.0,
                 random_state=None):
        self.n_components = n_components
        self.svd_solver = svd_solver
        self.cov_type = cov_type
        self.weak_iv_threshold = weak_iv_threshold
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, Z=None):
        """Fit PCA on X, then 2SLS of y on the scores instrumented by Z (None: OLS).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Treatments.
        y : array-like of shape (n_samples,)
            Outcome.
        Z : array-like of shape (n_samples, n_instruments), default=None
            Instruments; None means the treatments are exogenous (OLS on the PCA scores).

        Returns
        -------
        self : object
            The fitted regressor.
        """
        from sklearn.decomposition import PCA

        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2, y_numeric=True, order="C")
        Z = _validate_instruments(Z, X.shape[0])
        w = np.ones(X.shape[0])
        Zuse = X if Z is None else Z
        Uz, _, _ = _instrument_basis(Zuse, w, name="X" if Z is None else "Z", warn_rank=Z is not None)
        n, p = X.shape
        r = _resolve_n_components(self.n_components, Uz.shape[1], p, n)
        solver = self.svd_solver
        if solver == "arpack" and r >= min(n, p):
            solver = "full"
        pca = PCA(n_components=r, svd_solver=solver, random_state=self.random_state).fit(X)
        D = pca.transform(X)
        stats = _second_stage(D, y, w, Uz, cov_type=self.cov_type)
        W = pca.components_.T
        sv = scipy.linalg.svdvals(Uz.T @ (X - X.mean(axis=0)) @ W) / np.sqrt(n)
        _store_inference(self, stats, W, sv)
        self.representation_ = pca
        self.coef_ = W @ stats["b"]
        self.intercept_ = float(stats["intercept"] - pca.mean_ @ self.coef_)
        self.n_instruments_ = Zuse.shape[1]
        self.instrument_rank_ = Uz.shape[1]
        self.instruments_supplied_ = Z is not None
        _warn_if_weak(stats, sv, self.weak_iv_threshold, Z is not None)
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


# ----------------------------------------------------------------------------------------------------------
# Z-aware scoring
# ----------------------------------------------------------------------------------------------------------
def projected_mse(y_true, y_pred, *, Z=None, sample_weight=None):
    """Mean squared residual projected onto the instruments: ``‖P_[1,Z] (y − ŷ)‖² / n_w``.

    The population version is zero at the structural function (and at anything agreeing with it on the
    instrumented span), unlike the MSE, which is minimised by ``E[y | X]`` and so rewards absorbing the
    confounding. Weighted rows use the √w metric. Cost O(n k²).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Observed outcomes.
    y_pred : array-like of shape (n_samples,)
        Predicted (structural) outcomes.
    Z : array-like of shape (n_samples, n_instruments)
        Required; None raises (with routing off a scorer receives no Z).
    sample_weight : array-like of shape (n_samples,), default=None
        Frequency weights.

    Returns
    -------
    loss : float
        Non-negative; lower is better.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.iv import projected_mse
    >>> projected_mse(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]), Z=np.array([0.0, 1.0, 2.0]))
    0.0
    """
    if Z is None:
        raise ValueError("projected_mse needs the instruments Z. Pass Z=..., or enable metadata routing "
                         "(sklearn.set_config(enable_metadata_routing=True)) so that make_iv_scorer() receives "
                         "each test fold's Z from GridSearchCV.fit(X, y, Z=Z) / cross_validate(params={'Z': Z}).")
    y_true = check_array(y_true, ensure_2d=False, dtype=np.float64, input_name="y_true").ravel()
    y_pred = check_array(y_pred, ensure_2d=False, dtype=np.float64, input_name="y_pred").ravel()
    if sp.issparse(Z):
        raise TypeError("Sparse instruments Z are not supported; pass a dense array.")
    try:
        Z = check_array(Z, dtype=np.float64, ensure_2d=False, input_name="Z")
    except ValueError as exc:
        raise ValueError(f"Invalid instruments Z: {exc}") from exc
    Z = Z.reshape(-1, 1) if Z.ndim == 1 else Z
    if Z.shape[0] != y_true.shape[0]:
        raise ValueError(f"Z has {Z.shape[0]} samples but y_true has {y_true.shape[0]}.")
    if y_pred.shape != y_true.shape:
        raise ValueError(f"y_pred has {y_pred.shape[0]} samples but y_true has {y_true.shape[0]}.")
    w = _weights(sample_weight, y_true.reshape(-1, 1))
    sw = np.sqrt(w)
    A = sw[:, None] * np.column_stack([np.ones(y_true.shape[0]), Z])
    U, S, _ = scipy.linalg.svd(A, full_matrices=False, check_finite=False)
    U = U[:, S > max(A.shape) * _EPS * S[0]]
    proj = U.T @ (sw * (y_true - y_pred))
    return float(proj @ proj / w.sum())


def make_iv_scorer():
    """Greater-is-better scorer ``-projected_mse`` that requests Z through metadata routing.

    With routing on (``sklearn.set_config(enable_metadata_routing=True)``), ``GridSearchCV(...,
    scoring=make_iv_scorer()).fit(X, y, Z=Z)`` scores each test fold with its own Z. With routing off the
    scorer receives no Z and raises a ValueError asking to enable routing.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, Z=...)`` returning ``-projected_mse``.

    Examples
    --------
    >>> from sklearn_frontier.iv import make_iv_scorer
    >>> scorer = make_iv_scorer()
    """
    import sklearn

    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_scorer(projected_mse, greater_is_better=False).set_score_request(Z=True)
    return scorer
