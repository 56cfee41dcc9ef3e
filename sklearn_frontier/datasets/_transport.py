"""Probability paths with a known truth, sampled as destructive snapshots (the LOT active-experimentation family)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from sklearn_frontier.utils._compat import Interval, StrOptions, validate_params

__all__ = ["make_measure_path", "MeasurePath", "gaussian_w2"]


def _smoothstep(t, a, b):
    u = np.clip((t - a) / (b - a), 0.0, 1.0)
    return u * u * (3 - 2 * u)


def _sqrtm_psd(S):
    w, U = np.linalg.eigh((S + S.T) / 2)
    return (U * np.sqrt(np.clip(w, 0, None))) @ U.T


def gaussian_w2(m1, S1, m2, S2):
    """Closed-form W2 between N(m1, S1) and N(m2, S2) (the Bures-Wasserstein distance)."""
    r1 = _sqrtm_psd(S1)
    cross = _sqrtm_psd(r1 @ S2 @ r1)
    w2sq = float(np.sum((np.asarray(m1) - np.asarray(m2)) ** 2) + np.trace(S1 + S2 - 2 * cross))
    return float(np.sqrt(max(w2sq, 0.0)))


class MeasurePath:
    """A probability path ``t -> mu_t`` with a known truth; ``path(t, n, random_state)`` samples a snapshot.

    Each call draws fresh particles (destructive sampling). Attributes: ``kind``, ``t_range``, ``n_features``
    and the kind's parameters; ``mean(t)``; for ``kind="gaussian"`` also ``mean_cov(t)`` and the closed-form
    ``w2(s, t)``; ``speed(t)`` is the W2 speed (closed form for "drift" and "gaussian", a finite difference of the
    population mean and branch split for "bifurcation").
    """

    def __init__(self, kind, n_features, t_range, params, rotation):
        self.kind, self.n_features, self.t_range = kind, n_features, t_range
        self.params = dict(params)
        self._Q = rotation  # (2, n_features) orthonormal rows: the planar path embedded in R^D

    def __repr__(self):
        return f"MeasurePath(kind={self.kind!r}, n_features={self.n_features}, {self.params})"

    def _planar_mean(self, t):
        p = self.params
        if self.kind == "bifurcation":
            return np.array([p["drift"] * t, 0.0])
        if self.kind == "drift":
            return p["radius"] * np.array([np.cos(np.pi * t), np.sin(np.pi * t)])
        return np.array([2.0 * t, 0.5 * np.sin(2 * np.pi * t)])

    def _planar_cov(self, t):
        s = self.params["spread"]
        if self.kind != "gaussian":
            return s * s * np.eye(2)
        theta = np.pi * t / 2
        R = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
        return R @ np.diag([(s * (1 + 2 * t)) ** 2, s ** 2]) @ R.T

    def split(self, t):
        """Half-distance between the two branches at ``t`` ("bifurcation"; 0 for the other kinds)."""
        if self.kind != "bifurcation":
            return 0.0
        p = self.params
        return p["branch_scale"] * _smoothstep(t, p["t_split"] - p["width"] / 2, p["t_split"] + p["width"] / 2)

    def mean(self, t):
        """Mean of mu_t (shape (n_features,))."""
        return self._planar_mean(float(t)) @ self._Q

    def mean_cov(self, t):
        """(mean, covariance) of the Gaussian kind."""
        if self.kind != "gaussian":
            raise ValueError("mean_cov is defined for kind='gaussian' only.")
        t = float(t)
        return self.mean(t), self._Q.T @ self._planar_cov(t) @ self._Q

    def w2(self, s, t):
        """Closed-form W2(mu_s, mu_t) (Gaussian kind: Bures; drift: the mean distance)."""
        if self.kind == "gaussian":
            return gaussian_w2(*self.mean_cov(s), *self.mean_cov(t))
        if self.kind == "drift":
            return float(np.linalg.norm(self.mean(s) - self.mean(t)))
        raise ValueError("w2 has a closed form for kind='gaussian' or 'drift' only.")

    def speed(self, t, h=1e-4):
        """W2 speed |d mu_t / dt| (finite difference of the closed form; bifurcation: of mean and split)."""
        lo, hi = self.t_range
        s, u = max(lo, t - h), min(hi, t + h)
        if self.kind == "bifurcation":
            dm = np.linalg.norm(self.mean(u) - self.mean(s))
            ds = abs(self.split(u) - self.split(s))
            return float(np.hypot(dm, ds) / (u - s))
        return self.w2(s, u) / (u - s)

    def __call__(self, t, n=128, random_state=None):
        """A fresh snapshot of ``n`` particles from mu_t (shape (n, n_features))."""
        t = float(t)
        lo, hi = self.t_range
        if not (lo - 1e-12 <= t <= hi + 1e-12):
            raise ValueError(f"t={t} is outside t_range={self.t_range}.")
        rng = check_random_state(random_state)
        n = int(n)
        z = rng.standard_normal((n, 2))
        if self.kind == "gaussian":
            pts = self._planar_mean(t) + z @ _sqrtm_psd(self._planar_cov(t))
        else:
            pts = self._planar_mean(t) + self.params["spread"] * z
            if self.kind == "bifurcation":
                fate = np.where(rng.random_sample(n) < 0.5, -1.0, 1.0)
                pts[:, 1] += fate * self.split(t)
        out = pts @ self._Q
        if self.n_features > 2:
            out = out + self.params["ambient_noise"] * rng.standard_normal((n, self.n_features)) @ \
                (np.eye(self.n_features) - self._Q.T @ self._Q)
        return out

    sample = __call__


@validate_params(
    {
        "kind": [StrOptions({"bifurcation", "drift", "gaussian"})],
        "n_features": [Interval(Integral, 2, None, closed="left")],
        "t_split": [Interval(Real, 0, 1, closed="neither")],
        "width": [Interval(Real, 0, 1, closed="neither")],
        "branch_scale": [Interval(Real, 0, None, closed="left")],
        "spread": [Interval(Real, 0, None, closed="neither")],
        "drift": [Interval(Real, None, None, closed="neither")],
        "radius": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_measure_path(kind="bifurcation", *, n_features=2, t_split=0.5, width=0.08, branch_scale=1.5, spread=0.2,
                      drift=1.0, radius=1.5, random_state=None):
    """A probability path on t in [0, 1] with a known truth, as a snapshot sampler ``f(t, n, random_state)``.

    * ``"bifurcation"``: a Gaussian population ``N((drift t, 0), spread^2 I)`` that splits into two equal branches
      at ``y = +- branch_scale * S(t)``, ``S`` a smoothstep over ``[t_split - width/2, t_split + width/2]``: slow
      change everywhere except a short, fast transition at ``t_split`` (non-stationary in time).
    * ``"drift"``: a fixed Gaussian blob whose centre moves at constant speed along a half circle of ``radius``
      (stationary: constant W2 speed ``pi * radius``).
    * ``"gaussian"``: ``N(m(t), S(t))``, a drifting, rotating and stretching ellipse; W2 between times in closed
      form (``MeasurePath.w2``, Bures).

    For ``n_features > 2`` the planar path is embedded by a seeded orthonormal map, plus small isotropic noise
    (0.05 spread) in the orthogonal directions (not part of the Gaussian kind's closed form when D > 2).

    Parameters
    ----------
    kind : {"bifurcation", "drift", "gaussian"}, default="bifurcation"
        Which path.
    n_features : int, default=2
        Ambient dimension (>= 2).
    t_split : float in (0, 1), default=0.5
        Centre of the bifurcation.
    width : float in (0, 1), default=0.08
        Duration of the bifurcation.
    branch_scale : float, default=1.5
        Final half-distance between the branches.
    spread : float, default=0.2
        Standard deviation of the population.
    drift : float, default=1.0
        Horizontal drift speed of the bifurcation kind.
    radius : float, default=1.5
        Radius of the drift kind's half circle.
    random_state : int, RandomState instance or None, default=None
        Seeds the embedding for ``n_features > 2`` (snapshots take their own ``random_state``).

    Returns
    -------
    path : MeasurePath
        Callable ``path(t, n=128, random_state=None)`` returning a fresh (n, n_features) snapshot, with
        ``mean(t)``, ``split(t)``, ``speed(t)`` and, for the Gaussian kind, ``mean_cov(t)`` and ``w2(s, t)``.

    Examples
    --------
    >>> from sklearn_frontier.datasets import make_measure_path
    >>> path = make_measure_path("gaussian")
    >>> path(0.5, 100, random_state=0).shape
    (100, 2)
    >>> round(path.w2(0.0, 0.0), 6)
    0.0
    """
    rng = check_random_state(random_state)
    if n_features == 2:
        Q = np.eye(2)
    else:
        Q = np.linalg.qr(rng.standard_normal((n_features, 2)))[0].T
    params = {"spread": spread}
    if kind == "bifurcation":
        params.update(t_split=t_split, width=width, branch_scale=branch_scale, drift=drift)
    elif kind == "drift":
        params.update(radius=radius)
    if n_features > 2:
        params["ambient_noise"] = 0.05 * spread
    return MeasurePath(kind, n_features, (0.0, 1.0), params, Q)
