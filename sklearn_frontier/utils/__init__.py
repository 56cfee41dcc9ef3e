"""Shared plumbing of the estimators; the MCMC convergence diagnostics are public."""

from ._mcmc import ess_bulk, rank_normalized_split_rhat

__all__ = ["ess_bulk", "rank_normalized_split_rhat"]
