"""PR-BAST as users run it: intervals that mean what their names say, clear errors, a warning when the chain has
not mixed."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning

from sklearn_frontier.datasets import make_horseshoe
from sklearn_frontier.spanning_trees import BASTRegressor, PRBASTRegressor


@pytest.fixture(scope="module")
def fitted():
    X, y, _ = make_horseshoe(400, random_state=0)
    X = pd.DataFrame(X, columns=["x0", "x1"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return PRBASTRegressor(n_trees=10, n_iter=300, n_burnin=100, random_state=0).fit(X, y)


def test_predict_interval_is_a_prediction_interval_by_default(fitted):
    Xt, yt, _ = make_horseshoe(400, random_state=1)
    Xt = pd.DataFrame(Xt, columns=["x0", "x1"])
    lo, hi = fitted.predict_interval(Xt).T
    coverage = np.mean((yt >= lo) & (yt <= hi))
    assert 0.9 <= coverage <= 0.99  # new observations, 95 % nominal
    lo_c, hi_c = fitted.predict_interval(Xt, kind="credible").T
    assert np.mean((yt >= lo_c) & (yt <= hi_c)) < coverage - 0.1  # the credible interval of f is narrower
    np.testing.assert_allclose(fitted.predict_quantiles(Xt, (0.025, 0.975)), np.c_[lo, hi], rtol=0.2, atol=0.2)


@pytest.mark.parametrize("Est", [PRBASTRegressor, BASTRegressor])
def test_string_targets_get_a_clear_error(Est):
    X, _, _ = make_horseshoe(50, random_state=0)
    with pytest.raises(ValueError, match="y must be numeric"):
        Est(n_trees=2, n_iter=5, n_burnin=1).fit(X, np.array(["a", "b"] * 25))


def test_unmixed_chain_warns_at_the_users_line():
    X, y, _ = make_horseshoe(60, random_state=0)
    with pytest.warns(ConvergenceWarning, match="has not mixed") as record:
        PRBASTRegressor(n_trees=3, n_iter=30, n_burnin=5, random_state=1).fit(X, y)  # split R-hat 1.27
    assert record[0].filename == __file__


def test_a_domain_is_used_whatever_the_coordinate_scale():
    """Data whose spread needs no rescaling (scale exactly 1) keeps its domain: the graph is the same as for the
    same data scaled by a power of two, where the domain was always used."""
    from sklearn_frontier.datasets import horseshoe_boundary

    X, y, _ = make_horseshoe(120, random_state=0)
    boundary = horseshoe_boundary()
    kw = dict(n_trees=2, n_iter=4, n_burnin=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        half = PRBASTRegressor(domain=boundary / 4, **kw).fit(X / 4, y)  # spread about 1: scale exactly 1
        full = PRBASTRegressor(domain=boundary, **kw).fit(X, y)
        none = PRBASTRegressor(**kw).fit(X / 4, y)
    edges = lambda est: {tuple(e) for e in np.sort(est.graph_.edges, axis=1).tolist()}  # noqa: E731
    assert edges(half) == edges(full)
    assert edges(half) != edges(none)  # the hole cuts edges a plain kNN graph keeps
