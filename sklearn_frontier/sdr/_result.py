"""The one record every SMAVE solver returns (the stochastic steps and the exact trust-region solve alike)."""

from dataclasses import dataclass, field

import numpy as np


def _empty():
    return np.empty(0)


@dataclass
class SolverRun:
    """What a solver run produced: the basis, its iteration counts, curves and diagnostics.

    Fields a solver does not measure keep their empty defaults, so every consumer reads the same names.
    """

    B: np.ndarray  # the fitted basis (p, d): the window or stream mean where averaging is on
    B_last: np.ndarray  # the last iterate, where a stream continues from
    n_iter: int  # steps (or trust-region iterations) run
    t: int  # step-size clock after the run
    loss_curve: np.ndarray
    grad_norm_curve: np.ndarray
    converged: bool
    n_failed: int = 0  # local fits whose solve failed
    window_curve: np.ndarray = field(default_factory=_empty)  # change of the window-mean subspace per check
    spread_curve: np.ndarray = field(default_factory=_empty)  # RMS spread of the iterates within a window
    grad_norm: float = np.nan  # final Riemannian gradient norm (exact solver)
    n_refresh: int = 0  # neighbour rebuilds
    n_queried: int = 0  # rows whose neighbours were queried
    bandwidth: float = np.nan  # kernel bandwidth (exact solver)
    stopping_criterion: str = ""  # the optimiser's reason to stop (exact solver)


@dataclass
class StreamState:
    """What ``partial_fit`` carries between chunks: running moments, the reservoir, the iterate and its mean."""

    reservoir_X: np.ndarray  # earlier rows kept uniformly, in original units
    reservoir_y: np.ndarray
    x_mean: np.ndarray  # running moments of every row seen (Welford)
    x_m2: np.ndarray
    y_mean: float
    y_m2: float
    seed: int  # with ``calls``, seeds each chunk's generator
    calls: int = 0
    iterate: np.ndarray | None = None  # the basis to continue from (standardised units of its call)
    mean_B: np.ndarray | None = None  # the stream's running mean basis
    mean_weight: float = 0.0
