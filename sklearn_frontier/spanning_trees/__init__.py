"""Bayesian additive spanning-tree regression on constrained domains: PR-BAST and its parent BAST."""

from sklearn_frontier._registry import register_demo, register_estimator

from ._components import RoutedField
from ._domain import DomainGraph, build_domain_graph
from ._estimators import BASTRegressor, PRBASTRegressor

__all__ = ["PRBASTRegressor", "BASTRegressor", "RoutedField", "DomainGraph", "build_domain_graph"]

register_estimator(PRBASTRegressor, method="spanning_trees", task="regression", search_grid={"n_trees": [2, 3]},
                   fast_params={"n_trees": 3, "n_iter": 30, "n_burnin": 10, "thin": 1})
register_estimator(BASTRegressor, method="spanning_trees", task="regression", search_grid={"n_trees": [2, 3]},
                   fast_params={"n_trees": 10, "n_iter": 60, "n_burnin": 20, "thin": 1}, baseline=True)


def _demo(random_state):
    from ._demo import demo_rows

    return demo_rows(random_state)


register_demo("spanning_trees", _demo)
