"""Sufficient dimension reduction: SMAVE (stochastic Riemannian MAVE) and its baselines OPG and RMAVE.

Supervised linear dimension reduction for the central mean subspace: ``E[y | x]`` depends on ``x`` only through
``B^T x``. :class:`SMAVE` costs linear time in n per step; :class:`OPG` and :class:`RMAVE` are the classical
comparators with the same API; :class:`MAVEDimensionCV` picks the dimension; :class:`SMAVERegressor` predicts.
"""

import time

from sklearn_frontier._registry import register_demo, register_estimator

from ._dimension import MAVEDimensionCV
from ._metrics import subspace_distance
from ._opg import OPG
from ._regressor import SMAVERegressor
from ._rmave import RMAVE
from ._smave import SMAVE

__all__ = ["SMAVE", "OPG", "RMAVE", "MAVEDimensionCV", "SMAVERegressor", "subspace_distance"]

_GRID = {"n_components": [1, 2]}
register_estimator(SMAVE, method="sdr", task="supervised_transform", search_grid=_GRID,
                   fast_params={"max_iter": 20})
register_estimator(OPG, method="sdr", task="supervised_transform", search_grid=_GRID, baseline=True)
register_estimator(RMAVE, method="sdr", task="supervised_transform", search_grid=_GRID,
                   fast_params={"max_iter": 3}, baseline=True)
register_estimator(MAVEDimensionCV, method="sdr", task="supervised_transform", search_grid={"max_components": [1, 2]},
                   fast_params={"estimator": SMAVE(max_iter=10), "max_components": 2, "n_repeats": 5})
register_estimator(SMAVERegressor, method="sdr", task="regression", search_grid=_GRID, fast_params={"max_iter": 20})


def _demo(random_state):
    """Model B (n = 2000, p = 20): kNN regression on the SMAVE projection vs on the OPG projection."""
    from sklearn.model_selection import train_test_split
    from sklearn.neighbors import KNeighborsRegressor
    from sklearn.pipeline import make_pipeline

    from sklearn_frontier.datasets import make_sdr_regression

    X, y, B0 = make_sdr_regression("B", n_samples=2000, n_features=20, random_state=random_state)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, random_state=random_state)
    scores, times = {}, {}
    for name, sdr in (("SMAVE", SMAVE(random_state=random_state)), ("OPG", OPG())):
        pipe = make_pipeline(sdr, KNeighborsRegressor(20, weights="distance"))
        start = time.perf_counter()
        pipe.fit(X_tr, y_tr)
        times[name] = time.perf_counter() - start
        scores[name] = pipe.score(X_te, y_te)
    return [{"estimator": "SMAVE+kNN", "task": "regression", "metric": "test R2", "score": scores["SMAVE"],
             "baseline": "OPG+kNN", "baseline_score": scores["OPG"], "fit_time": times["SMAVE"]}]


register_demo("sdr", _demo)
