"""Regression on constrained domains: the mgcv horseshoe, BAMDT's rotated U with jumps, a slit annulus and a
spiral band."""

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["horseshoe_boundary", "horseshoe_function", "make_horseshoe", "make_rotated_u", "make_slit_annulus",
           "make_spiral_band", "rotated_u_boundary"]


def horseshoe_boundary(n_theta=40, r0=0.1, r=0.5, l=3.0):
    """Return the boundary polygon of the mgcv horseshoe (``fs.boundary``).

    Parameters
    ----------
    n_theta : int, default=40
        Number of points on each quarter arc.
    r0 : float, default=0.1
        Inner radius of the horseshoe's tip.
    r : float, default=0.5
        Radius of the horseshoe's centre line.
    l : float, default=3.0
        Length of the horseshoe's arms.

    Returns
    -------
    boundary : ndarray of shape (8 * n_theta, 2)
        Vertices of the closed boundary polygon.

    Examples
    --------
    >>> from sklearn_frontier.datasets import horseshoe_boundary
    >>> horseshoe_boundary(n_theta=10).shape
    (80, 2)
    """
    rr = 2 * r - r0
    t = np.linspace(np.pi, np.pi / 2, n_theta)
    x, y = list(rr * np.cos(t)), list(rr * np.sin(t))
    t = np.linspace(np.pi / 2, -np.pi / 2, 2 * n_theta)
    x += list((r - r0) * np.cos(t) + l)
    y += list((r - r0) * np.sin(t) + r)
    t = np.linspace(np.pi / 2, np.pi, n_theta)
    x += list(r0 * np.cos(t))
    y += list(r0 * np.sin(t))
    x, y = np.array(x), np.array(y)
    return np.c_[np.r_[x, x[::-1]], np.r_[y, -y[::-1]]]


def _along_distance(x, y, r):
    q = np.pi * r / 2
    a = np.zeros_like(x)
    d = np.zeros_like(x)
    ind = (x >= 0) & (y > 0)
    a[ind], d[ind] = q + x[ind], y[ind] - r
    ind = (x >= 0) & (y <= 0)
    a[ind], d[ind] = -q - x[ind], -r - y[ind]
    ind = x < 0
    with np.errstate(divide="ignore", invalid="ignore"):
        a[ind] = -np.arctan(y[ind] / x[ind]) * r
    d[ind] = np.sqrt(x[ind] ** 2 + y[ind] ** 2) - r
    return a, d


def horseshoe_function(X, r0=0.1, r=0.5, l=3.0, b=1.0):
    """Evaluate mgcv's ``fs.test``: ``f = a b + d^2`` (NaN outside the horseshoe).

    Parameters
    ----------
    X : array-like of shape (n_samples, 2)
        Points at which to evaluate the function.
    r0 : float, default=0.1
        Inner radius of the horseshoe's tip.
    r : float, default=0.5
        Radius of the horseshoe's centre line.
    l : float, default=3.0
        Length of the horseshoe's arms.
    b : float, default=1.0
        Slope along the horseshoe.

    Returns
    -------
    f : ndarray of shape (n_samples,)
        Function values, NaN outside the horseshoe.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.datasets import horseshoe_function
    >>> horseshoe_function(np.array([[1.0, 0.5], [5.0, 5.0]])).shape
    (2,)
    """
    X = np.asarray(X, dtype=np.float64)
    x, y = X[:, 0], X[:, 1]
    a, d = _along_distance(x, y, r)
    f = a * b + d ** 2
    out = (np.abs(d) > r - r0) | ((x > l) & ((x - l) ** 2 + d ** 2 > (r - r0) ** 2))
    f[out] = np.nan
    return f


def make_horseshoe(n_samples=500, *, noise=0.3, random_state=None):
    """Draw uniform points in the mgcv horseshoe with ``y = fs.test(x) + N(0, noise^2)``.

    Parameters
    ----------
    n_samples : int, default=500
        Number of points.
    noise : float, default=0.3
        Standard deviation of the Gaussian noise added to the truth.
    random_state : int, RandomState instance or None, default=None
        Seed or generator for reproducible draws.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
        Points in the horseshoe.
    y : ndarray of shape (n_samples,)
        Noisy responses.
    f : ndarray of shape (n_samples,)
        Noiseless truth.

    Examples
    --------
    >>> from sklearn_frontier.datasets import make_horseshoe
    >>> X, y, f = make_horseshoe(50, random_state=0)
    >>> X.shape, bool(abs(f).max() < 4.2)
    ((50, 2), True)
    """
    rng = check_random_state(random_state)
    pts = []
    n = 0
    while n < n_samples:
        P = np.c_[rng.uniform(-1, 4, 4 * n_samples + 16), rng.uniform(-1, 1, 4 * n_samples + 16)]
        P = P[np.isfinite(horseshoe_function(P))]
        pts.append(P)
        n += P.shape[0]
    X = np.concatenate(pts)[:n_samples]
    f = horseshoe_function(X)
    return X, f + noise * rng.normal(size=n_samples), f


def rotated_u_boundary(n_theta=20, n_line=14):
    """Return BAMDT's ``genURegion`` boundary rotated 45 degrees counter-clockwise.

    Parameters
    ----------
    n_theta : int, default=20
        Number of points on each arc.
    n_line : int, default=14
        Number of points on each straight side.

    Returns
    -------
    boundary : ndarray of shape (n_vertices, 2)
        Vertices of the closed boundary polygon.

    Examples
    --------
    >>> from sklearn_frontier.datasets import rotated_u_boundary
    >>> rotated_u_boundary().shape[1]
    2
    """
    t = np.linspace(np.pi, np.pi / 2, n_theta)
    x, y = list(0.9 * np.cos(t)), list(0.9 * np.sin(t))
    xl = np.linspace(3 / n_line, 3 - 3 / n_line, n_line)
    x += list(xl)
    y += [0.9] * n_line
    t = np.linspace(np.pi / 2, -np.pi / 2, n_theta)
    x += list(0.4 * np.cos(t) + 3)
    y += list(0.4 * np.sin(t) + 0.5)
    x += list(xl[::-1])
    y += [0.1] * n_line
    t = np.linspace(np.pi / 2, np.pi, 2)
    x += list(0.1 * np.cos(t))
    y += list(0.1 * np.sin(t))
    x, y = np.array(x), np.array(y)
    P = np.c_[np.r_[x, x[::-1]], np.r_[y, -y[::-1]]]
    return P @ _rotation(np.pi / 4).T


def _rotation(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s], [s, c]])


def make_rotated_u(n_train=500, n_test=200, *, noise=0.1, random_state=None):
    """Simulate BAMDT's rotated U with jumps (``SimData.R``).

    A GP draw ``X1`` on the (along, distance) coordinates enters ``f = a X1 + d^2``; then the arc part is
    scaled by -0.5 and the two arms are shifted by +4 / -4. Estimators see only the rotated coordinates.

    Parameters
    ----------
    n_train : int, default=500
        Number of training points.
    n_test : int, default=200
        Number of test points.
    noise : float, default=0.1
        Standard deviation of the Gaussian noise on the responses.
    random_state : int, RandomState instance or None, default=None
        Seed or generator for reproducible draws.

    Returns
    -------
    X_train : ndarray of shape (n_train, 2)
        Training points.
    y_train : ndarray of shape (n_train,)
        Noisy training responses.
    f_train : ndarray of shape (n_train,)
        Noiseless truth at the training points.
    X_test : ndarray of shape (n_test, 2)
        Test points.
    f_test : ndarray of shape (n_test,)
        Noiseless truth at the test points.
    boundary : ndarray of shape (n_vertices, 2)
        Boundary polygon of the domain.

    Examples
    --------
    >>> from sklearn_frontier.datasets import make_rotated_u
    >>> Xtr, ytr, ftr, Xte, fte, boundary = make_rotated_u(30, 10, random_state=0)
    >>> Xtr.shape, Xte.shape
    ((30, 2), (10, 2))
    """
    from sklearn_frontier.kernels import points_in_rings

    rng = check_random_state(random_state)
    boundary = rotated_u_boundary()
    a_seg, b_seg = boundary, np.roll(boundary, -1, axis=0)
    n = n_train + n_test
    pts, m = [], 0
    lo, hi = boundary.min(axis=0), boundary.max(axis=0)
    while m < n:
        P = lo + (hi - lo) * rng.uniform(size=(4 * n, 2))
        P = P[points_in_rings(P, a_seg, b_seg)]
        pts.append(P)
        m += P.shape[0]
    S = np.concatenate(pts)[:n]
    U = S @ _rotation(-np.pi / 4).T
    a, d = _along_distance(U[:, 0], U[:, 1], 0.5)
    AD = np.c_[a, d]
    dist = np.sqrt(np.sum((AD[:, None] - AD[None]) ** 2, axis=2))
    L = np.linalg.cholesky(np.exp(-dist) + 1e-8 * np.eye(n))
    x1 = L @ rng.normal(size=n)
    f = a * x1 + d ** 2
    arc = S[:, 0] ** 2 + S[:, 1] ** 2 <= 0.81
    f = np.where(arc, -0.5 * f, np.where(S[:, 0] > S[:, 1], f + 4, f - 4))
    y = f + noise * rng.normal(size=n)
    return S[:n_train], y[:n_train], f[:n_train], S[n_train:], f[n_train:], boundary


def make_slit_annulus(n_samples=500, *, noise=0.1, slit=0.05, n_theta=60, random_state=None):
    """Sample the annulus 0.5 <= r <= 1 with a thin slit along the positive x-axis; truth = polar angle.

    The truth (the angle in (0, 2 pi)) jumps by about 2 pi across the slit, which a Euclidean smoother blurs.

    Parameters
    ----------
    n_samples : int, default=500
        Number of points, uniform on the annulus minus the slit.
    noise : float, default=0.1
        Standard deviation of the Gaussian noise added to the truth.
    slit : float, default=0.05
        Half-width of the slit, in radians.
    n_theta : int, default=60
        Points per circle of the returned boundary.
    random_state : int, RandomState instance or None, default=None
        Seed of the points and the noise.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
        The points.
    y : ndarray of shape (n_samples,)
        Noisy responses.
    f : ndarray of shape (n_samples,)
        The noiseless truth (the polar angle).
    boundary : ndarray of shape (2 * n_theta, 2)
        The domain's boundary polygon (outer circle, then inner), as ``PRBASTRegressor(domain=...)`` takes it.

    Examples
    --------
    >>> from sklearn_frontier.datasets import make_slit_annulus
    >>> X, y, f, boundary = make_slit_annulus(20, random_state=0)
    >>> X.shape, boundary.shape
    ((20, 2), (120, 2))
    """
    rng = check_random_state(random_state)
    r = np.sqrt(rng.uniform(0.25, 1.0, n_samples))
    theta = rng.uniform(slit, 2 * np.pi - slit, n_samples)
    X = np.c_[r * np.cos(theta), r * np.sin(theta)]
    t = np.linspace(slit / 2, 2 * np.pi - slit / 2, n_theta)
    boundary = np.r_[np.c_[np.cos(t), np.sin(t)], 0.5 * np.c_[np.cos(t[::-1]), np.sin(t[::-1])]]
    return X, theta + noise * rng.normal(size=n_samples), theta, boundary


def _spiral_coordinates(X, spacing, half_width, theta_range):
    """Winding angle of the nearest turn of the spiral ``r = spacing * theta / (2 pi)`` and the radial offset from
    it; NaN for points outside the band (farther than ``half_width`` from every turn, or past either end)."""
    b = spacing / (2 * np.pi)
    r = np.hypot(X[:, 0], X[:, 1])
    phi = np.mod(np.arctan2(X[:, 1], X[:, 0]), 2 * np.pi)
    theta = phi + 2 * np.pi * np.round((r / b - phi) / (2 * np.pi))
    offset = r - b * theta
    inside = (np.abs(offset) <= half_width) & (theta >= theta_range[0]) & (theta <= theta_range[1])
    return np.where(inside, theta, np.nan), np.where(inside, offset, np.nan)


def make_spiral_band(n_samples=500, *, noise=0.2, turns=2.0, spacing=0.5, half_width=0.2, n_theta=100,
                     random_state=None):
    """Sample a band around an Archimedean spiral; the truth rises along the band and jumps between its turns.

    The band is the set of points within ``half_width`` (radially) of the spiral ``r = spacing * theta / (2 pi)``
    for ``theta`` from ``pi`` to ``pi + 2 pi turns``. Neighbouring turns are only ``spacing - 2 half_width`` apart
    across a curved gap, while the truth ``f = theta / 2 + 0.5 sin(3 theta) + 2 offset`` differs by ``pi`` between
    them: the barrier follows no coordinate axis, so axis-aligned splits and Euclidean smoothers both straddle it.

    Parameters
    ----------
    n_samples : int, default=500
        Number of points, uniform on the band.
    noise : float, default=0.2
        Standard deviation of the Gaussian noise added to the truth.
    turns : float, default=2.0
        Number of turns of the band.
    spacing : float, default=0.5
        Radial distance between consecutive turns of the spiral's centre line.
    half_width : float, default=0.2
        Radial half-width of the band; must be below ``spacing / 2`` so that the turns do not touch.
    n_theta : int, default=100
        Boundary points per turn on each side of the band.
    random_state : int, RandomState instance or None, default=None
        Seed of the points and the noise.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
        The points.
    y : ndarray of shape (n_samples,)
        Noisy responses.
    f : ndarray of shape (n_samples,)
        The noiseless truth.
    boundary : ndarray of shape (2 * (round(n_theta * turns) + 1), 2)
        The band's boundary polygon (outer side outwards, then inner side back), as
        ``PRBASTRegressor(domain=...)`` takes it.

    Examples
    --------
    >>> from sklearn_frontier.datasets import make_spiral_band
    >>> X, y, f, boundary = make_spiral_band(20, random_state=0)
    >>> X.shape, boundary.shape
    ((20, 2), (402, 2))
    """
    if not 0 < half_width < spacing / 2:
        raise ValueError(f"half_width must lie in (0, spacing / 2) = (0, {spacing / 2}), got {half_width!r}.")
    if not turns > 0:
        raise ValueError(f"turns must be positive, got {turns!r}.")
    rng = check_random_state(random_state)
    theta_range = (np.pi, np.pi + 2 * np.pi * turns)
    extent = spacing * theta_range[1] / (2 * np.pi) + half_width
    pts, n = [], 0
    while n < n_samples:
        P = rng.uniform(-extent, extent, size=(4 * n_samples + 16, 2))
        P = P[np.isfinite(_spiral_coordinates(P, spacing, half_width, theta_range)[0])]
        pts.append(P)
        n += P.shape[0]
    X = np.concatenate(pts)[:n_samples]
    theta, offset = _spiral_coordinates(X, spacing, half_width, theta_range)
    f = theta / 2 + 0.5 * np.sin(3 * theta) + 2 * offset
    t = np.linspace(*theta_range, int(round(n_theta * turns)) + 1)
    centre = spacing * t / (2 * np.pi)
    outer = (centre + half_width)[:, None] * np.c_[np.cos(t), np.sin(t)]
    inner = (centre - half_width)[:, None] * np.c_[np.cos(t), np.sin(t)]
    boundary = np.r_[outer, inner[::-1]]
    return X, f + noise * rng.normal(size=n_samples), f, boundary
