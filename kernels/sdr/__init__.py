"""Kernels of sufficient dimension reduction (SMAVE, OPG, RMAVE, MAVEDimensionCV).

K1 ``sdr_local_wls`` (local weighted linear fits in the projected space), K2 ``sdr_grad`` (closed-form Euclidean =
Riemannian gradient of the MAVE objective over a batch of anchors), K4 ``sdr_rmave_normal_eqs`` (RMAVE's global
weighted least squares), K5 ``sdr_nw_cv_mae`` (R MAVE's cross-validated smoother error), plus
``sdr_local_wls_weighted`` (K1 with given weights, SMAVE's frozen mode). K3 (OPG's ambient slopes) is K1 run on the
ambient coordinates: :func:`sdr_opg_slopes`. No Triton twin: one SGD step is about 4e5 flops, far below launch
overhead, so ``backend="triton"`` runs the numba twin.
"""

import numpy as np

from .._dispatch import register_kernel

__all__ = ["sdr_local_wls", "sdr_local_wls_weighted", "sdr_grad", "sdr_opg_slopes", "sdr_rmave_normal_eqs",
           "sdr_nw_cv_mae", "KERNEL_CODES"]

KERNEL_CODES = {"gaussian": 0, "epanechnikov": 1, "uniform": 2}
_REF = "sklearn_frontier.kernels.sdr._reference:"
_NB = "sklearn_frontier.kernels.sdr._numba:"


def _sizes(rng):
    d = int(rng.choice([1, 2, 3]))
    p = int(rng.choice([1, 7, 30]))
    m = int(rng.choice([1, 16, 17, 64]))
    k = int(rng.choice([d + 2, 30, 200]))
    return d, p, m, k


def _make_local_inputs(rng, with_weights=False):
    d, _, m, k = _sizes(rng)
    n = max(k, 40)
    P = rng.normal(size=(n, d))
    y = rng.normal(size=n)
    anchors = rng.choice(n, size=min(m, n), replace=False)
    nbr = np.stack([np.concatenate([[a], rng.choice(np.delete(np.arange(n), a), k - 1, replace=False)])
                    for a in anchors]).astype(np.int64)
    C = P[anchors].copy()
    if with_weights:
        w = 0.5 + rng.random(nbr.shape)  # bounded weights: k = d + 2 fits stay well conditioned
        return (P, y, C, nbr, w / w.sum(axis=1, keepdims=True), float(rng.choice([0.0, 1e-8, 1e-3]))), {}
    if rng.random() < 0.3:  # one anchor whose neighbours all coincide with its centre: the fit must fail cleanly
        j = int(rng.integers(nbr.shape[0]))
        nbr[j] = nbr[j, 0]
    kernel = int(rng.integers(0, 3))
    bandwidth = float(rng.choice([0.0, 0.0, 0.7]))
    return (P, y, C, nbr, kernel, bandwidth, float(rng.choice([0.0, 1e-8, 1e-3]))), {}


def _make_grad_inputs(rng):
    d, p, m, k = _sizes(rng)
    n = max(k, 40)
    X = rng.normal(size=(n, p))
    nbr = rng.integers(0, n, size=(m, k)).astype(np.int64)
    w = rng.random((m, k))
    w /= w.sum(axis=1, keepdims=True)
    return (X, X[nbr[:, 0]].copy(), nbr, w, rng.normal(size=(m, k)), rng.normal(size=(m, d + 1))), {}


def _make_rmave_inputs(rng):
    d, p, m, k = _sizes(rng)
    n = max(k, 40)
    X = rng.normal(size=(n, p))
    nbr = rng.integers(0, n, size=(m, k)).astype(np.int64)
    w = rng.random((m, k))
    w[:, -1] = 0.0
    w /= w.sum(axis=1, keepdims=True)
    return (X, rng.normal(size=n), X[nbr[:, 0]].copy(), nbr, w, rng.normal(size=(m, d + 1))), {}


def _make_cv_inputs(rng):
    d = int(rng.choice([1, 2, 3]))
    n = int(rng.choice([3, 17, 60]))
    R = int(rng.choice([1, 5]))
    Zp = rng.normal(size=(n, d))
    n_tr = max(1, (2 * n) // 3)
    perms = np.stack([rng.permutation(n) for _ in range(R)]).astype(np.int64)
    return (Zp, rng.normal(size=n), perms[:, :n_tr].copy(), perms[:, n_tr:].copy(),
            float(rng.choice([0.0, 0.3]))), {}


_sdr_local_wls = register_kernel("sdr_local_wls", reference=_REF + "sdr_local_wls", numba=_NB + "sdr_local_wls",
                                 make_inputs=_make_local_inputs, rtol=1e-9, atol=1e-11)
_sdr_local_wls_weighted = register_kernel(
    "sdr_local_wls_weighted", reference=_REF + "local_wls_weighted", numba=_NB + "local_wls_weighted",
    make_inputs=lambda rng: _make_local_inputs(rng, with_weights=True), rtol=1e-9, atol=1e-11)
_sdr_grad = register_kernel("sdr_grad", reference=_REF + "sdr_grad", numba=_NB + "sdr_grad",
                            make_inputs=_make_grad_inputs, rtol=1e-10, atol=1e-12)
_sdr_rmave_normal_eqs = register_kernel(
    "sdr_rmave_normal_eqs", reference=_REF + "sdr_rmave_normal_eqs", numba=_NB + "sdr_rmave_normal_eqs",
    make_inputs=_make_rmave_inputs, rtol=1e-10, atol=1e-12)
_sdr_nw_cv_mae = register_kernel("sdr_nw_cv_mae", reference=_REF + "sdr_nw_cv_mae", numba=_NB + "sdr_nw_cv_mae",
                                 make_inputs=_make_cv_inputs, rtol=1e-11, atol=1e-13)


def _f2(a, name):
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {a.shape}.")
    return a


def _f1(a, name, n=None):
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim != 1 or (n is not None and a.shape[0] != n):
        raise ValueError(f"{name} must be 1-D of length {n}, got shape {a.shape}.")
    return a


def _index(nbr, n, name="nbr"):
    nbr = np.ascontiguousarray(nbr, dtype=np.int64)
    if nbr.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {nbr.shape}.")
    if nbr.size and (nbr.min() < 0 or nbr.max() >= n):
        raise ValueError(f"{name} holds indices outside [0, {n}).")
    return nbr


def _kernel_code(kernel):
    if isinstance(kernel, str):
        try:
            return KERNEL_CODES[kernel]
        except KeyError:
            raise ValueError(f"kernel must be one of {sorted(KERNEL_CODES)}, got {kernel!r}.") from None
    if int(kernel) not in (0, 1, 2):
        raise ValueError(f"kernel code must be 0, 1 or 2, got {kernel!r}.")
    return int(kernel)


def _check_local(P, y, C, nbr):
    P, C = _f2(P, "P"), _f2(C, "C")
    y = _f1(y, "y", P.shape[0])
    nbr = _index(nbr, P.shape[0])
    if C.shape[1] != P.shape[1] or nbr.shape[0] != C.shape[0]:
        raise ValueError(f"C must be (m, {P.shape[1]}) with m = nbr.shape[0], got C {C.shape}, nbr {nbr.shape}.")
    return P, y, C, nbr


def sdr_local_wls(P, y, C, nbr, kernel="gaussian", bandwidth=0.0, ridge=1e-8):
    """K1: local weighted linear fits of ``y`` on the projected points ``P`` around centres ``C``.

    Parameters
    ----------
    P : array-like of shape (n, d)
        Projected points ``Z @ B``.
    y : array-like of shape (n,)
        Standardised response.
    C : array-like of shape (m, d)
        Anchor centres.
    nbr : array-like of int of shape (m, k)
        Neighbour indices into ``P`` for each anchor.
    kernel : {"gaussian", "epanechnikov", "uniform"} or int, default="gaussian"
        Weight profile on the adaptive radius (ignored when ``bandwidth > 0``).
    bandwidth : float, default=0.0
        ``<= 0``: adaptive radius ``r_j = max_i ||P_i - C_j||``; ``> 0``: Gaussian ``exp(-delta**2 / (2 h**2))``.
    ridge : float, default=1e-8
        Relative slope ridge ``ridge * tr(S_slope) / d``.

    Returns
    -------
    w : ndarray of shape (m, k)
        Normalised weights.
    e : ndarray of shape (m, k)
        Local residuals.
    theta : ndarray of shape (m, d + 1)
        Intercepts and slopes.
    rss : ndarray of shape (m,)
        Weighted residual sums of squares.
    ok : ndarray of bool of shape (m,)
        False where the local solve failed (slopes set to zero).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import sdr_local_wls
    >>> P = np.arange(5.0)[:, None]
    >>> w, e, theta, rss, ok = sdr_local_wls(P, 2 * P[:, 0] + 1, P[[2]], np.array([[2, 0, 1, 3, 4]]))
    >>> theta.round(6), bool(ok[0])
    (array([[5., 2.]]), True)
    """
    P, y, C, nbr = _check_local(P, y, C, nbr)
    return _sdr_local_wls(P, y, C, nbr, _kernel_code(kernel), float(bandwidth), float(ridge))


def sdr_local_wls_weighted(P, y, C, nbr, w, ridge=1e-8):
    """K1 with given (frozen) weights: SMAVE's fixed-localisation mode.

    Parameters
    ----------
    P : array-like of shape (n, d)
        Projected points.
    y : array-like of shape (n,)
        Standardised response.
    C : array-like of shape (m, d)
        Anchor centres.
    nbr : array-like of int of shape (m, k)
        Neighbour indices into ``P``.
    w : array-like of shape (m, k)
        Normalised weights.
    ridge : float, default=1e-8
        Relative slope ridge.

    Returns
    -------
    e : ndarray of shape (m, k)
        Local residuals.
    theta : ndarray of shape (m, d + 1)
        Intercepts and slopes.
    rss : ndarray of shape (m,)
        Weighted residual sums of squares.
    ok : ndarray of bool of shape (m,)
        False where the local solve failed.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import sdr_local_wls_weighted
    >>> P = np.arange(4.0)[:, None]
    >>> e, theta, rss, ok = sdr_local_wls_weighted(P, P[:, 0], P[[0]], np.array([[0, 1, 2, 3]]), np.full((1, 4), .25))
    >>> theta.round(6)
    array([[0., 1.]])
    """
    P, y, C, nbr = _check_local(P, y, C, nbr)
    w = _f2(w, "w")
    if w.shape != nbr.shape:
        raise ValueError(f"w must have nbr's shape {nbr.shape}, got {w.shape}.")
    return _sdr_local_wls_weighted(P, y, C, nbr, w, float(ridge))


def sdr_grad(X, Xc, nbr, w, e, theta):
    """K2: the closed-form gradient ``(2/m) sum_j [sum_i w_ij e_ij (X[nbr_ij] - Xc_j)] theta_j[1:]^T``.

    Parameters
    ----------
    X : array-like of shape (n, p)
        Standardised data.
    Xc : array-like of shape (m, p)
        Anchor rows of ``X``.
    nbr : array-like of int of shape (m, k)
        Neighbour indices into ``X``.
    w : array-like of shape (m, k)
        Local weights.
    e : array-like of shape (m, k)
        Local residuals (from K1).
    theta : array-like of shape (m, d + 1)
        Local intercepts and slopes (from K1).

    Returns
    -------
    G : ndarray of shape (p, d)
        Euclidean gradient of the MAVE objective (horizontal at ridge 0).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import sdr_grad
    >>> X = np.eye(2)
    >>> sdr_grad(X, X[[0]], np.array([[0, 1]]), np.full((1, 2), .5), np.array([[0., 1.]]), np.array([[0., 1.]]))
    array([[-1.],
           [ 1.]])
    """
    X, Xc = _f2(X, "X"), _f2(Xc, "Xc")
    nbr = _index(nbr, X.shape[0])
    w, e, theta = _f2(w, "w"), _f2(e, "e"), _f2(theta, "theta")
    if w.shape != nbr.shape or e.shape != nbr.shape or theta.shape[0] != nbr.shape[0] or Xc.shape != (
            nbr.shape[0], X.shape[1]):
        raise ValueError("inconsistent shapes for sdr_grad.")
    return _sdr_grad(X, Xc, nbr, w, e, theta)


def sdr_opg_slopes(X, y, Xc, nbr, kernel="gaussian", bandwidth=0.0, ridge=1e-6):
    """K3: OPG's local slopes in the ambient space (K1 run on ``X`` itself).

    Parameters
    ----------
    X : array-like of shape (n, p)
        Standardised data.
    y : array-like of shape (n,)
        Standardised response.
    Xc : array-like of shape (m, p)
        Anchor centres.
    nbr : array-like of int of shape (m, k)
        Neighbour indices into ``X``.
    kernel : {"gaussian", "epanechnikov", "uniform"} or int, default="gaussian"
        Weight profile on the adaptive radius.
    bandwidth : float, default=0.0
        ``<= 0``: adaptive radius; ``> 0``: fixed Gaussian bandwidth.
    ridge : float, default=1e-6
        Relative slope ridge.

    Returns
    -------
    b : ndarray of shape (m, p)
        Local gradient estimates.
    ok : ndarray of bool of shape (m,)
        False where the local solve failed (slopes zero).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import sdr_opg_slopes
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> b, ok = sdr_opg_slopes(X, X @ [1.0, -2.0], X[:1], np.arange(30)[None], ridge=0.0)
    >>> b.round(6)
    array([[ 1., -2.]])
    """
    _, _, theta, _, ok = sdr_local_wls(X, y, Xc, nbr, kernel, bandwidth, ridge)
    return theta[:, 1:], ok


def sdr_rmave_normal_eqs(X, y, Xc, nbr, w, theta):
    """K4: RMAVE's global normal equations ``A vec(B) = c`` (column-major ``vec``).

    Parameters
    ----------
    X : array-like of shape (n, p)
        Standardised data.
    y : array-like of shape (n,)
        Standardised response.
    Xc : array-like of shape (m, p)
        Anchor rows of ``X``.
    nbr : array-like of int of shape (m, k)
        Neighbour indices into ``X``.
    w : array-like of shape (m, k)
        Local weights.
    theta : array-like of shape (m, d + 1)
        Local intercepts and slopes.

    Returns
    -------
    A : ndarray of shape (p d, p d)
        ``sum_j (b_j b_j^T) kron C_j``.
    c : ndarray of shape (p d,)
        ``sum_j b_j kron s_j``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import sdr_rmave_normal_eqs
    >>> X = np.array([[0.0], [1.0]])
    >>> A, c = sdr_rmave_normal_eqs(X, np.array([0., 2.]), X[[0]], np.array([[0, 1]]), np.full((1, 2), .5),
    ...                             np.array([[0., 1.]]))
    >>> A, c
    (array([[0.5]]), array([1.]))
    """
    X, Xc = _f2(X, "X"), _f2(Xc, "Xc")
    y = _f1(y, "y", X.shape[0])
    nbr = _index(nbr, X.shape[0])
    w, theta = _f2(w, "w"), _f2(theta, "theta")
    if w.shape != nbr.shape or theta.shape[0] != nbr.shape[0] or Xc.shape != (nbr.shape[0], X.shape[1]):
        raise ValueError("inconsistent shapes for sdr_rmave_normal_eqs.")
    return _sdr_rmave_normal_eqs(X, y, Xc, nbr, w, theta)


def sdr_nw_cv_mae(Zp, y, train, test, h):
    """K5: R MAVE's ``CVfast`` smoother error on each split.

    Parameters
    ----------
    Zp : array-like of shape (n, d)
        Projected data.
    y : array-like of shape (n,)
        Standardised response.
    train : array-like of int of shape (R, n_train)
        Training rows of each split.
    test : array-like of int of shape (R, n_test)
        Test rows of each split.
    h : float
        Bandwidth; the squared-radius floor of test point t is ``max(2 h**2, 2nd-smallest delta2)``.

    Returns
    -------
    mae : ndarray of shape (R,)
        Mean absolute error of the smoother on each split.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import sdr_nw_cv_mae
    >>> Z = np.arange(6.0)[:, None]
    >>> sdr_nw_cv_mae(Z, np.ones(6), np.array([[0, 1, 2, 3]]), np.array([[4, 5]]), 1.0).round(4)
    array([0.])
    """
    Zp = _f2(Zp, "Zp")
    y = _f1(y, "y", Zp.shape[0])
    train, test = _index(train, Zp.shape[0], "train"), _index(test, Zp.shape[0], "test")
    if train.shape[0] != test.shape[0] or train.shape[1] < 1 or test.shape[1] < 1:
        raise ValueError("train and test must be (R, n_train) and (R, n_test) with n_train, n_test >= 1.")
    return _sdr_nw_cv_mae(Zp, y, train, test, float(h))


for _public, _dispatch in ((sdr_local_wls, _sdr_local_wls), (sdr_local_wls_weighted, _sdr_local_wls_weighted),
                           (sdr_grad, _sdr_grad), (sdr_rmave_normal_eqs, _sdr_rmave_normal_eqs),
                           (sdr_nw_cv_mae, _sdr_nw_cv_mae)):
    _public.kernel_spec = _dispatch.kernel_spec
