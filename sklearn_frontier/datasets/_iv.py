"""IV designs with known causal effects: many treatments, few instruments."""

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["make_iv_many_treatments", "make_iv_digits"]


def _orthonormal(rng, p, k):
    q, r = np.linalg.qr(rng.normal(size=(p, k)))
    return q * np.sign(np.diag(r))


def _random_rotation(rng, k):
    return _orthonormal(rng, k, k)


def _outcome_and_truth(rng, X, H, B_D, theta, gamma, noise_y):
    n, k = H.shape
    y = X @ theta + (gamma / np.sqrt(k)) * H.sum(axis=1) + noise_y * rng.normal(size=n)
    return y, {"instrumented_basis": B_D, "coef": theta, "identified_coef": B_D @ (B_D.T @ theta)}


def make_iv_many_treatments(n_samples=4000, n_features=80, n_instruments=3, *, angle=50.0,
                            instrument_strength=None, confounding=1.5, gamma=1.5, nuisance_scale=2.5,
                            noise_x=0.2, noise_y=1.0, random_state=None):
    """Linear synthetic IV family G1: p treatments driven by k instruments plus high-variance nuisance.

    ``B_D`` (instrumented directions) and ``E`` (nuisance-only directions) are orthonormal p × k with
    ``B_Dᵀ E = 0``; the nuisance loads on ``B_V = cos(angle)·B_D R + sin(angle)·E``. ``Z ~ N(0, I_k)``,
    hidden confounder ``H ~ N(0, I_k)``, ``D = Z Aᵀ + c_u H`` with ``A = R_A diag(a)``, nuisance
    ``V ~ N(0, s_v² I_k)``, ``X = D B_Dᵀ + V B_Vᵀ + σ_x N``, ``θ = B_D β_D + E β_E`` and
    ``y = X θ + (γ/√k) 1ᵀH + σ_y ε``. The identified effect is ``Pθ = B_D B_Dᵀ θ``; ``angle = 0`` is the
    control design in which PCA already spans ``B_D``.

    Parameters
    ----------
    n_samples : int, default=4000
        Number of samples n.
    n_features : int, default=80
        Number of treatments p (at least 2k).
    n_instruments : int, default=3
        Number of instruments k.
    angle : float, default=50.0
        Overlap angle α of the nuisance with the instrumented span, in degrees.
    instrument_strength : array-like of shape (k,), default=None
        First-stage strengths a (default ``linspace(1.2, 0.6, k)``).
    confounding : float, default=1.5
        Loading c_u of the hidden confounder on the instrumented treatments.
    gamma : float, default=1.5
        Loading γ of the hidden confounder on y.
    nuisance_scale : float, default=2.5
        Standard deviation s_v of the nuisance factors.
    noise_x : float, default=0.2
        Treatment noise σ_x.
    noise_y : float, default=1.0
        Outcome noise σ_y.
    random_state : int, RandomState instance or None, default=None
        Seed of every draw.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Treatments.
    y : ndarray of shape (n_samples,)
        Outcome.
    Z : ndarray of shape (n_samples, n_instruments)
        Instruments.
    truth : dict
        ``instrumented_basis`` B_D (p, k), ``coef`` θ (p,), ``identified_coef`` Pθ (p,).

    See Also
    --------
    make_iv_digits : Semi-synthetic version with real digit images as nuisance.

    Examples
    --------
    >>> from sklearn_frontier.datasets import make_iv_many_treatments
    >>> X, y, Z, truth = make_iv_many_treatments(200, 20, 2, random_state=0)
    >>> X.shape, Z.shape, truth["instrumented_basis"].shape
    ((200, 20), (200, 2), (20, 2))
    """
    rng = check_random_state(random_state)
    n, p, k = int(n_samples), int(n_features), int(n_instruments)
    if p < 2 * k:
        raise ValueError(f"n_features={p} must be >= 2 * n_instruments={2 * k}.")
    a = np.linspace(1.2, 0.6, k) if instrument_strength is None else np.asarray(instrument_strength, float)
    if a.shape != (k,):
        raise ValueError(f"instrument_strength must have shape ({k},), got {a.shape}.")
    basis = _orthonormal(rng, p, 2 * k)
    B_D, E = basis[:, :k], basis[:, k:]
    R, R_A = _random_rotation(rng, k), _random_rotation(rng, k)
    alpha = np.deg2rad(angle)
    B_V = np.cos(alpha) * B_D @ R + np.sin(alpha) * E
    A = R_A * a
    theta = B_D @ rng.normal(size=k) + E @ rng.normal(size=k)
    Z = rng.normal(size=(n, k))
    H = rng.normal(size=(n, k))
    D = Z @ A.T + confounding * H
    V = nuisance_scale * rng.normal(size=(n, k))
    X = D @ B_D.T + V @ B_V.T + noise_x * rng.normal(size=(n, p))
    y, truth = _outcome_and_truth(rng, X, H, B_D, theta, gamma, noise_y)
    return X, y, Z, truth


def make_iv_digits(n_samples=6000, n_instruments=3, *, instrument_strength=None, confounding=1.0,
                   gamma=1.5, nuisance_scale=1.0, noise_x=0.5, noise_y=1.0, random_state=None):
    """Semi-synthetic design G2 on ``sklearn.datasets.load_digits`` (real, anisotropic nuisance).

    Rows of the 64-pixel digits are resampled, centred and divided by the global pixel std (V_digits);
    ``X = s_v·V_digits + D B_Dᵀ + σ_x N`` with a random orthonormal ``B_D`` (64 × k) and D as in
    :func:`make_iv_many_treatments`; ``θ = B_D β_D + U_V β_V`` with ``U_V`` the top-2 digit PCs.

    Parameters
    ----------
    n_samples : int, default=6000
        Number of samples n (digit rows are resampled with replacement).
    n_instruments : int, default=3
        Number of instruments k.
    instrument_strength : array-like of shape (k,), default=None
        First-stage strengths a (default ``linspace(1.0, 0.6, k)``).
    confounding : float, default=1.0
        Loading c_u of the hidden confounder on the instrumented treatments.
    gamma : float, default=1.5
        Loading γ of the hidden confounder on y.
    nuisance_scale : float, default=1.0
        Scale s_v of the digit nuisance.
    noise_x : float, default=0.5
        Treatment noise σ_x.
    noise_y : float, default=1.0
        Outcome noise σ_y.
    random_state : int, RandomState instance or None, default=None
        Seed of every draw.

    Returns
    -------
    X : ndarray of shape (n_samples, 64)
        Treatments.
    y : ndarray of shape (n_samples,)
        Outcome.
    Z : ndarray of shape (n_samples, n_instruments)
        Instruments.
    truth : dict
        ``instrumented_basis`` B_D, ``coef`` θ and ``identified_coef`` ``B_D B_Dᵀ θ``.

    See Also
    --------
    make_iv_many_treatments : The fully synthetic family G1.

    Examples
    --------
    >>> from sklearn_frontier.datasets import make_iv_digits
    >>> X, y, Z, truth = make_iv_digits(300, random_state=0)
    >>> X.shape
    (300, 64)
    """
    from sklearn.datasets import load_digits

    rng = check_random_state(random_state)
    n, k = int(n_samples), int(n_instruments)
    pixels = load_digits().data
    V = pixels[rng.randint(0, pixels.shape[0], size=n)]
    V = V - V.mean(axis=0)
    V = V / V.std()
    p = V.shape[1]
    a = np.linspace(1.0, 0.6, k) if instrument_strength is None else np.asarray(instrument_strength, float)
    B_D = _orthonormal(rng, p, k)
    R_A = _random_rotation(rng, k)
    A = R_A * a
    centred = pixels - pixels.mean(axis=0)
    U_V = np.linalg.svd(centred, full_matrices=False)[2][:2].T
    theta = B_D @ rng.normal(size=k) + U_V @ rng.normal(size=2)
    Z = rng.normal(size=(n, k))
    H = rng.normal(size=(n, k))
    D = Z @ A.T + confounding * H
    X = nuisance_scale * V + D @ B_D.T + noise_x * rng.normal(size=(n, p))
    y, truth = _outcome_and_truth(rng, X, H, B_D, theta, gamma, noise_y)
    return X, y, Z, truth
