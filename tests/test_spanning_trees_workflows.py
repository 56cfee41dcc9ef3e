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
