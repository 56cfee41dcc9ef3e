"""LOT active experimentation: a Wasserstein-path surrogate over time and where to measure next.

Probability paths (cell populations over time, say) are observed only as sparse, destructive snapshots. Each
snapshot is mapped into the tangent space of linearized optimal transport at a fixed reference measure
(:class:`LOTEmbedding`, POT solves the plans); :class:`WassersteinPathRegressor` models the path there with a
Gaussian process over a time axis warped where the path moves fast (the warp chosen by marginal likelihood), and
:class:`LOTActiveExperimenter` picks the next measurement times that most reduce the surrogate's integrated
variance. Baselines with the same API: ``strategy="uniform"``, ``"random"`` and ``"max_variance"``, the
stationary surrogate ``warp="identity"``, and :class:`DisplacementInterpolator` (piecewise McCann
interpolation between the bracketing snapshots). :func:`make_measure_path` generates paths with a known truth.

When to use it: snapshots are expensive, times can be chosen, and the dynamics may be faster in some periods
than others (a bifurcation at an unknown time). With smooth, constant-speed dynamics a uniform grid is already
near optimal and the method only matches it.
"""

import time

from sklearn_frontier._registry import register_demo, register_estimator
from sklearn_frontier.datasets._transport import make_measure_path

from ._active import LOTActiveExperimenter
from ._baselines import DisplacementInterpolator
from ._lot import LOTEmbedding, wasserstein2_squared
from ._path import WassersteinPathRegressor

__all__ = ["LOTEmbedding", "WassersteinPathRegressor", "LOTActiveExperimenter", "DisplacementInterpolator",
           "make_measure_path", "wasserstein2_squared", "run_experiment"]

register_estimator(LOTEmbedding, method="transport", task="unsupervised_transform",
                   search_grid={"n_support": [1, 2]}, fast_params={"n_support": 8, "barycenter_iter": 2})
register_estimator(WassersteinPathRegressor, method="transport", task="regression",
                   search_grid={"n_components": [1, 2]}, fast_params={"n_components": 2, "n_restarts_optimizer": 0})
register_estimator(LOTActiveExperimenter, method="transport", task="regression",
                   search_grid={"strategy": ["integrated_variance", "uniform"]},
                   fast_params={"time_range": None,
                                "path": WassersteinPathRegressor(n_components=2, n_restarts_optimizer=0)})


def run_experiment(path, strategy, budget, *, n_points=128, n_candidates=51, seed=0, warp="auto", n_support=64,
                   eval_times=None, n_eval_points=None):
    """Run one active experiment on a measure path: start at both ends, query until ``budget``, score.

    Snapshots of ``n_points`` fresh particles, a pool of ``n_candidates`` equispaced times, evaluation at
    ``eval_times`` (default: the pool's midpoints) against fresh truth samples of ``n_eval_points``.

    Parameters
    ----------
    path : callable
        ``path(t, n, random_state=...)`` returns a snapshot at time ``t`` (see
        :func:`sklearn_frontier.datasets.make_measure_path`).
    strategy : {"integrated_variance", "max_variance", "uniform", "random"}
        The acquisition of :class:`LOTActiveExperimenter`.
    budget : int
        Number of snapshots in all, the two ends included.
    n_points : int, default=128
        Particles per snapshot.
    n_candidates : int, default=51
        Equispaced candidate times in [0, 1].
    seed : int, default=0
        Seed of the snapshots and the estimators.
    warp : {"auto"} or float, default="auto"
        Time warp of the path surrogate (see :class:`WassersteinPathRegressor`).
    n_support : int, default=64
        Atoms of the LOT reference.
    eval_times : array-like, default=None
        Times to score at; the pool's midpoints when None.
    n_eval_points : int, default=None
        Particles of each truth sample; ``n_points`` when None.

    Returns
    -------
    experimenter : LOTActiveExperimenter
        The fitted experimenter after the run.
    error : float
        Mean W2² of the predicted measures to the truth samples.
    seconds : float
        Wall time of the run.

    Examples
    --------
    >>> from sklearn_frontier.datasets import make_measure_path
    >>> from sklearn_frontier.transport import run_experiment
    >>> exp, error, seconds = run_experiment(make_measure_path("drift"), "uniform", 4, n_points=32,
    ...                                      n_candidates=11, n_support=16)
    >>> len(exp.times_), bool(error >= 0)
    (4, True)
    """
    import numpy as np

    cands = np.linspace(0.0, 1.0, n_candidates)
    eval_times = (cands[:-1] + cands[1:]) / 2 if eval_times is None else eval_times
    counter = iter(range(10 ** 9))

    def oracle(t):
        return path(t, n_points, random_state=seed * 100_003 + next(counter))

    start = time.perf_counter()
    reg = WassersteinPathRegressor(LOTEmbedding(n_support, random_state=seed), warp=warp, random_state=seed)
    exp = LOTActiveExperimenter(strategy, candidates=cands, path=reg, budget=budget, random_state=seed)
    exp.fit([0.0, 1.0], [oracle(0.0), oracle(1.0)])
    exp.run(oracle, budget - 2)
    seconds = time.perf_counter() - start
    truth = [path(t, n_eval_points or n_points, random_state=10 ** 8 + seed * 1000 + i) for i, t in
             enumerate(eval_times)]
    err = float(np.mean(wasserstein2_squared(exp.predict(eval_times), truth)))
    return exp, err, seconds


def _demo(random_state):
    """Bifurcation path, budget 8 snapshots from both ends: integrated variance vs the uniform grid."""
    path = make_measure_path("bifurcation", t_split=0.62)
    seed = 0 if random_state is None else int(random_state)
    _, ours, seconds = run_experiment(path, "integrated_variance", 8, seed=seed, n_eval_points=512)
    _, base, _ = run_experiment(path, "uniform", 8, seed=seed, n_eval_points=512)
    return [{"estimator": "LOTActiveExperimenter", "task": "active timepoints", "metric": "mean W2^2 (lower)",
             "score": ours, "baseline": "uniform grid", "baseline_score": base, "fit_time": seconds}]


register_demo("transport", _demo)
