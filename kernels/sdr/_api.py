"""Public wrappers and registrations of the sdr kernels (the package re-exports them)."""


from .._dispatch import register_kernel
from .._validation import float_1d, float_2d, index_2d

__all__ = ["sdr_local_wls", "sdr_local_wls_weighted", "sdr_grad", "sdr_opg_slopes", "sdr_rmave_normal_eqs",
           "sdr_nw_cv_mae", "KERNEL_CODES"]

KERNEL_CODES = {"gaussian": 0, "epanechnikov": 1, "uniform": 2}
_REF = "sklearn_frontier.kernels.sdr._reference:"
_NB = "sklearn_frontier.kernels.sdr._numba:"


_sdr_local_wls = register_kernel("sdr_local_wls", reference=_REF + "sdr_local_wls", numba=_NB + "sdr_local_wls")
_sdr_local_wls_weighted = register_kernel(
    "sdr_local_wls_weighted", reference=_REF + "local_wls_weighted", numba=_NB + "local_wls_weighted")
_sdr_grad = register_kernel("sdr_grad", reference=_REF + "sdr_grad", numba=_NB + "sdr_grad")
_sdr_rmave_normal_eqs = register_kernel(
    "sdr_rmave_normal_eqs", reference=_REF + "sdr_rmave_normal_eqs", numba=_NB + "sdr_rmave_normal_eqs")
_sdr_nw_cv_mae = register_kernel("sdr_nw_cv_mae", reference=_REF + "sdr_nw_cv_mae", numba=_NB + "sdr_nw_cv_mae")


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
    P, C = float_2d(P, "P"), float_2d(C, "C")
    y = float_1d(y, "y", P.shape[0])
    nbr = index_2d(nbr, P.shape[0], "nbr")
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
    w = float_2d(w, "w")
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
    X, Xc = float_2d(X, "X"), float_2d(Xc, "Xc")
    nbr = index_2d(nbr, X.shape[0], "nbr")
    w, e, theta = float_2d(w, "w"), float_2d(e, "e"), float_2d(theta, "theta")
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
    X, Xc = float_2d(X, "X"), float_2d(Xc, "Xc")
    y = float_1d(y, "y", X.shape[0])
    nbr = index_2d(nbr, X.shape[0], "nbr")
    w, theta = float_2d(w, "w"), float_2d(theta, "theta")
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
    Zp = float_2d(Zp, "Zp")
    y = float_1d(y, "y", Zp.shape[0])
    train, test = index_2d(train, Zp.shape[0], "train"), index_2d(test, Zp.shape[0], "test")
    if train.shape[0] != test.shape[0] or train.shape[1] < 1 or test.shape[1] < 1:
        raise ValueError("train and test must be (R, n_train) and (R, n_test) with n_train, n_test >= 1.")
    return _sdr_nw_cv_mae(Zp, y, train, test, float(h))


for _public, _dispatch in ((sdr_local_wls, _sdr_local_wls), (sdr_local_wls_weighted, _sdr_local_wls_weighted),
                           (sdr_grad, _sdr_grad), (sdr_rmave_normal_eqs, _sdr_rmave_normal_eqs),
                           (sdr_nw_cv_mae, _sdr_nw_cv_mae)):
    _public.kernel_spec = _dispatch.kernel_spec
