"""SMAVE streaming as users run it: partial_fit refuses a changed n_components, like IncrementalPCA."""

import pytest

from sklearn_frontier.datasets import make_sdr_regression
from sklearn_frontier.sdr import SMAVE


def test_partial_fit_refuses_a_changed_n_components():
    X, y = make_sdr_regression(n_samples=400, random_state=0)[:2]
    est = SMAVE(n_components=2, random_state=0).partial_fit(X[:200], y[:200])
    est.set_params(n_components=1)
    with pytest.raises(ValueError, match="n_components has changed from 2 to 1"):
        est.partial_fit(X[200:], y[200:])
    est.set_params(n_components=2).partial_fit(X[200:], y[200:])
    assert est.components_.shape[0] == 2 and est.n_samples_seen_ == 400


def test_small_chunks_warn_at_the_users_line():
    X, y = make_sdr_regression(n_samples=600, random_state=0)[:2]
    with pytest.warns(UserWarning, match="chunk of 200 rows") as record:
        SMAVE(n_components=2, random_state=0).partial_fit(X[:200], y[:200])
    assert record[0].filename == __file__
