"""BART as a benchmark anchor: stochtree's ``BARTModel`` behind the fit / predict / predict_interval calls the
benchmarks make of every Bayesian regressor.

stochtree (BSD, binary wheels) is in the ``bench`` extra only, never a runtime dependency; without it
:func:`bart_missing_note` says why the BART rows are absent and the benchmarks run on.
"""

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr


@dataclass(frozen=True)
class BARTSettings:
    """One stochtree sampling schedule: grow-from-root (XBART) sweeps, then burn-in and kept MCMC sweeps."""

    label: str
    num_trees: int = 200
    num_gfr: int = 0
    num_burnin: int = 500
    num_mcmc: int = 500

    def describe(self):
        gfr = f"{self.num_gfr} GFR + " if self.num_gfr else ""
        return f"{self.num_trees} trees, {gfr}{self.num_burnin} burn-in + {self.num_mcmc} kept MCMC sweeps"

    def scaled(self, factor):
        """The same schedule with every sweep count times ``factor`` (at least one kept draw); for quick runs."""
        return BARTSettings(self.label, self.num_trees, int(round(self.num_gfr * factor)),
                            int(round(self.num_burnin * factor)), max(1, int(round(self.num_mcmc * factor))))


# Classic BART: no warm start, 500 burn-in + 500 kept sweeps of 200 trees (the usual R defaults' scale).
BART_DEFAULT = BARTSettings("BART")
# stochtree's own default call (``BARTModel().sample(X, y)``): 5 grow-from-root sweeps warm-start 100 MCMC sweeps.
BART_WARM_START = BARTSettings("BART warm-start (GFR)", num_gfr=5, num_burnin=0, num_mcmc=100)


def stochtree_version():
    """The installed stochtree version, or None."""
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version("stochtree")
    except PackageNotFoundError:
        return None


def bart_missing_note():
    """None when stochtree imports, else the note a result table carries in place of its BART rows."""
    try:
        import stochtree  # noqa: F401
    except ImportError as exc:
        return (f"- BART rows skipped: stochtree is not installed ({exc}); "
                "`pip install sklearn-frontier[bench]` adds it")
    return None


def _mixture_quantiles(means, sds, probs, n_iter=60):
    """Quantiles of the equal-weight normal mixture ``sum_s N(means[:, s], sds[s]^2) / S`` for each row, by
    bisection on the mixture CDF (deterministic, exact to ~1e-15 of the bracket)."""
    lo = (means - 8 * sds).min(axis=1)
    hi = (means + 8 * sds).max(axis=1)
    out = np.empty((means.shape[0], len(probs)))
    for j, p in enumerate(probs):
        a, b = lo.copy(), hi.copy()
        for _ in range(n_iter):
            mid = 0.5 * (a + b)
            below = ndtr((mid[:, None] - means) / sds).mean(axis=1) < p
            a = np.where(below, mid, a)
            b = np.where(below, b, mid)
        out[:, j] = 0.5 * (a + b)
    return out


class StochtreeBART:
    """stochtree BART with the benchmark's estimator calls; single-threaded like the estimators it is set beside.

    Parameters
    ----------
    settings : BARTSettings
        Trees and sweep schedule.
    random_state : int
        Seed of stochtree's sampler.

    Attributes
    ----------
    model_ : stochtree.BARTModel
        The sampled model.
    sigma_ : float
        Posterior mean of the noise standard deviation, in y units.
    """

    def __init__(self, settings=BART_DEFAULT, random_state=0):
        self.settings = settings
        self.random_state = random_state

    def fit(self, X, y):
        from stochtree import BARTModel

        s = self.settings
        self.model_ = BARTModel()
        self.model_.sample(X_train=np.asarray(X, dtype=np.float64), y_train=np.asarray(y, dtype=np.float64),
                           num_gfr=s.num_gfr, num_burnin=s.num_burnin, num_mcmc=s.num_mcmc,
                           general_params={"random_seed": int(self.random_state), "num_threads": 1},
                           mean_forest_params={"num_trees": s.num_trees})
        self.sigma2_draws_ = np.asarray(self.model_.global_var_samples, dtype=np.float64).ravel()
        self.sigma_ = float(np.sqrt(self.sigma2_draws_).mean())
        return self

    def _draws(self, X):
        """Posterior draws of f at X, (n, n_draws), in y units."""
        out = self.model_.predict(np.asarray(X, dtype=np.float64))
        return np.asarray(out["y_hat"] if isinstance(out, dict) else out, dtype=np.float64)

    def predict(self, X):
        return self._draws(X).mean(axis=1)

    def predict_interval(self, X, alpha=0.05, kind="prediction"):
        """Equal-tailed ``1 - alpha`` interval of a new y (``"prediction"``: the posterior-predictive mixture of
        ``N(f_s(x), sigma_s^2)`` over draws s) or of f (``"credible"``: quantiles of the draws)."""
        draws = self._draws(X)
        probs = (alpha / 2, 1 - alpha / 2)
        if kind == "credible":
            return np.quantile(draws, probs, axis=1).T
        return _mixture_quantiles(draws, np.sqrt(self.sigma2_draws_)[None, :], probs)
