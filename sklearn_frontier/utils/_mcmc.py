"""MCMC diagnostics shared by the Bayesian estimators: rank-normalised split-R-hat and bulk ESS.

Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization, folding, and localization:
an improved R-hat for assessing convergence of MCMC", arXiv:1903.08008.
"""

import numpy as np
from scipy.special import ndtri
from scipy.stats import rankdata

__all__ = ["split_chains", "rank_normalize", "split_rhat", "rank_normalized_split_rhat", "ess_bulk"]


def split_chains(draws):
    """(n_chains, n_draws) -> (2 n_chains, n_draws // 2): each chain cut in halves (odd middle draw dropped)."""
    draws = np.asarray(draws, dtype=np.float64)
    if draws.ndim == 1:
        draws = draws[None]
    half = draws.shape[1] // 2
    return np.concatenate([draws[:, :half], draws[:, draws.shape[1] - half:]], axis=0)


def rank_normalize(draws):
    """Normal scores of the pooled ranks (fractional offset 3/8), same shape."""
    draws = np.asarray(draws, dtype=np.float64)
    r = rankdata(draws, axis=None).reshape(draws.shape)
    return ndtri((r - 0.375) / (draws.size + 0.25))


def split_rhat(draws):
    """Classic split-R-hat of (n_chains, n_draws) draws (NaN if fewer than 4 draws per chain)."""
    x = split_chains(draws)
    m, n = x.shape
    if n < 2:
        return np.nan
    w = np.mean(np.var(x, axis=1, ddof=1))
    b = n * np.var(np.mean(x, axis=1), ddof=1)
    if w <= 0:
        return 1.0 if b <= 0 else np.inf
    var_plus = (n - 1) / n * w + b / n
    return float(np.sqrt(var_plus / w))


def rank_normalized_split_rhat(draws):
    """max(bulk R-hat, tail R-hat) of Vehtari et al. (2021).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.utils import rank_normalized_split_rhat
    >>> x = np.random.default_rng(0).normal(size=(4, 500))
    >>> bool(rank_normalized_split_rhat(x) < 1.02)
    True
    """
    draws = np.asarray(draws, dtype=np.float64)
    if draws.ndim == 1:
        draws = draws[None]
    bulk = split_rhat(rank_normalize(split_chains(draws)))
    folded = np.abs(draws - np.median(draws))
    tail = split_rhat(rank_normalize(split_chains(folded)))
    return float(np.nanmax([bulk, tail])) if not (np.isnan(bulk) and np.isnan(tail)) else np.nan


def _autocov(x):
    n = x.shape[-1]
    f = np.fft.rfft(x - x.mean(axis=-1, keepdims=True), n=2 * n, axis=-1)
    ac = np.fft.irfft(f * np.conj(f), axis=-1)[..., :n] / n
    return ac


def ess_bulk(draws):
    """Bulk effective sample size (rank-normalised split chains, Geyer's initial monotone sequence)."""
    x = rank_normalize(split_chains(draws))
    m, n = x.shape
    if n < 4:
        return np.nan
    acov = _autocov(x)
    w = np.mean(acov[:, 0] * n / (n - 1))
    var_plus = w * (n - 1) / n + (np.var(np.mean(x, axis=1), ddof=1) if m > 1 else 0.0)
    if var_plus <= 0:
        return float(m * n)
    rho = 1.0 - (w - np.mean(acov, axis=0)) / var_plus
    rho[0] = 1.0
    # Geyer: sum pairs while positive, enforce monotone
    t = 0
    pairs = []
    while t + 1 < n:
        p = rho[t] + rho[t + 1]
        if p < 0:
            break
        pairs.append(p)
        t += 2
    pairs = np.minimum.accumulate(np.asarray(pairs)) if pairs else np.asarray([1.0])
    tau = -1.0 + 2.0 * np.sum(pairs)
    tau = max(tau, 1.0 / np.log10(m * n + 10))
    return float(m * n / tau)
