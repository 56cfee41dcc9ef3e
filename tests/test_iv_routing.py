"""Instruments through Pipelines, searches and cross-validation, with metadata routing on and off."""

import numpy as np
import pytest
import sklearn
from sklearn.decomposition import PCA
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.pipeline import Pipeline

from sklearn_frontier.datasets import make_iv_many_treatments
from sklearn_frontier.exceptions import IVScoreWarning
from sklearn_frontier.iv import (
    InstrumentGuidedIVRegressor,
    InstrumentGuidedRepresentation,
    TwoStageLeastSquares,
    make_iv_scorer,
    make_pca_2sls,
    projected_mse,
)


@pytest.fixture
def data():
    X, y, Z, _ = make_iv_many_treatments(300, 12, 3, instrument_strength=(2.0, 1.6, 1.3), random_state=0)
    return X, y, Z


class SpyRegressor(InstrumentGuidedIVRegressor):
    """Records the Z it receives in fit and score (module level so that clone works)."""

    seen = []

    def fit(self, X, y, *, Z=None, sample_weight=None):
        SpyRegressor.seen.append(("fit", None if Z is None else np.asarray(Z).copy()))
        return super().fit(X, y, Z=Z, sample_weight=sample_weight)

    def score(self, X, y, *, Z=None, sample_weight=None):
        SpyRegressor.seen.append(("score", None if Z is None else np.asarray(Z).copy()))
        return super().score(X, y, Z=Z, sample_weight=sample_weight)


def test_routing_on_pipeline_equals_regressor(data):
    X, y, Z = data
    direct = InstrumentGuidedIVRegressor(2).fit(X, y, Z=Z)
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline([("rep", InstrumentGuidedRepresentation(2)), ("iv", TwoStageLeastSquares())])
        pipe.fit(X, y, Z=Z)
        np.testing.assert_allclose(pipe.predict(X), direct.predict(X), rtol=1e-10, atol=1e-10)
        pca_pipe = make_pca_2sls(2).fit(X, y, Z=Z)  # PCA does not request Z: fine
        assert pca_pipe[-1].instruments_supplied_
        routing = InstrumentGuidedIVRegressor().get_metadata_routing()
        assert routing.fit.requests["Z"] is True and routing.score.requests["Z"] is True
        assert InstrumentGuidedRepresentation().get_metadata_routing().fit.requests["Z"] is True


def test_routing_on_grid_search_sees_test_fold_z(data):
    X, y, Z = data
    cv = KFold(3, shuffle=True, random_state=0)
    folds = list(cv.split(X))
    SpyRegressor.seen = []
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(SpyRegressor(), {"n_components": [1, 3]}, cv=cv, scoring=make_iv_scorer(),
                              refit=False)
        search.fit(X, y, Z=Z)
        # the estimator's own score (scoring=None) also receives Z
        own = GridSearchCV(SpyRegressor(), {"n_components": [1, 3]}, cv=cv, refit=False).fit(X, y, Z=Z)
    fit_z = [z for kind, z in SpyRegressor.seen if kind == "fit"]
    train_folds = [Z[train] for train, _ in folds]
    assert all(any(z.shape == t.shape and np.array_equal(z, t) for t in train_folds) for z in fit_z)
    score_z = [z for kind, z in SpyRegressor.seen if kind == "score"]
    assert score_z and all(z is not None for z in score_z)
    test_folds = [Z[test] for _, test in folds]
    assert all(any(z.shape == t.shape and np.array_equal(z, t) for t in test_folds) for z in score_z)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert np.all(own.cv_results_["mean_test_score"] <= 0)
    # the scorer's value is the negative projected MSE of the held-out fold
    train, test = folds[0]
    est = InstrumentGuidedIVRegressor(1).fit(X[train], y[train], Z=Z[train])
    expected = -projected_mse(y[test], est.predict(X[test]), Z=Z[test])
    np.testing.assert_allclose(search.cv_results_["split0_test_score"][0], expected, rtol=1e-10)


def test_routing_on_cross_validate(data):
    X, y, Z = data
    with sklearn.config_context(enable_metadata_routing=True):
        res = cross_validate(InstrumentGuidedIVRegressor(), X, y, params={"Z": Z}, cv=3, scoring=make_iv_scorer())
    assert np.all(res["test_score"] <= 0)


def test_routing_off_step_params_and_scorer_error(data):
    X, y, Z = data
    pipe = Pipeline([("rep", InstrumentGuidedRepresentation(2)), ("iv", TwoStageLeastSquares())])
    pipe.fit(X, y, rep__Z=Z, iv__Z=Z)
    direct = InstrumentGuidedIVRegressor(2).fit(X, y, Z=Z)
    np.testing.assert_allclose(pipe.predict(X), direct.predict(X), rtol=1e-10, atol=1e-10)
    SpyRegressor.seen = []
    search = GridSearchCV(Pipeline([("pca", PCA(3)), ("iv", SpyRegressor())]), {"iv__n_components": [1, 2]},
                          cv=KFold(3), refit=False)
    with pytest.warns(UserWarning):  # IVScoreWarning: scored without Z (R²)
        search.fit(X, y, iv__Z=Z)
    fit_z = [z for kind, z in SpyRegressor.seen if kind == "fit"]
    assert all(z is not None and z.shape[0] == 200 for z in fit_z)  # sliced per fold
    with pytest.warns(IVScoreWarning):  # default scoring gets no Z: R²
        res = cross_validate(InstrumentGuidedIVRegressor(), X, y, params={"Z": Z}, cv=3)
    assert np.all(np.isfinite(res["test_score"]))
    with pytest.raises(ValueError, match="enable metadata routing"):
        make_iv_scorer()(InstrumentGuidedIVRegressor().fit(X, y, Z=Z), X, y)
    # GridSearchCV turns the scorer's error into NaN scores plus a warning (error_score=nan)
    with pytest.warns(UserWarning):
        bad = GridSearchCV(InstrumentGuidedIVRegressor(), {"n_components": [1, 2]}, scoring=make_iv_scorer(),
                           cv=3, refit=False).fit(X, y, Z=Z)
    assert np.all(np.isnan(bad.cv_results_["mean_test_score"]))


class ControlSpy(TwoStageLeastSquares):
    """Records the W and groups it receives in fit (module level so that clone works)."""

    seen = []

    def fit(self, X, y, *, Z=None, W=None, groups=None, sample_weight=None):
        ControlSpy.seen.append((None if W is None else np.asarray(W).copy(),
                                None if groups is None else np.asarray(groups).copy()))
        return super().fit(X, y, Z=Z, W=W, groups=groups, sample_weight=sample_weight)


@pytest.fixture
def controls(data):
    X, y, Z = data
    rng = np.random.RandomState(3)
    W = rng.normal(size=(X.shape[0], 2)) + Z[:, :1]
    return W, np.arange(X.shape[0]) % 20


def test_routing_on_controls_and_groups_reach_every_step(data, controls):
    X, y, Z = data
    W, g = controls
    direct = InstrumentGuidedIVRegressor(2, cov_type="cluster").fit(X, y, Z=Z, W=W, groups=g)
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline([("rep", InstrumentGuidedRepresentation(2)), ("iv", TwoStageLeastSquares(cov_type="cluster"))])
        pipe.fit(X, y, Z=Z, W=W, groups=g)
        np.testing.assert_allclose(pipe.predict(X, W=W), direct.predict(X, W=W), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(pipe[-1].cov_, direct.representation_cov_, rtol=1e-8)
        ControlSpy.seen = []
        cv = KFold(3, shuffle=True, random_state=0)
        GridSearchCV(ControlSpy(), {"fit_intercept": [True]}, cv=cv, refit=False).fit(X[:, :2], y, Z=Z, W=W,
                                                                                     groups=g)
        routing = TwoStageLeastSquares().get_metadata_routing()
        assert routing.fit.requests["W"] is True and routing.fit.requests["groups"] is True
        assert routing.predict.requests["W"] is True
    folds = [train for train, _ in cv.split(X)]
    for w_seen, g_seen in ControlSpy.seen:
        assert any(np.array_equal(w_seen, W[t]) and np.array_equal(g_seen, g[t]) for t in folds)


def test_routing_off_controls_as_step_params(data, controls):
    X, y, Z = data
    W, _ = controls
    pipe = Pipeline([("rep", InstrumentGuidedRepresentation(2)), ("iv", TwoStageLeastSquares())])
    pipe.fit(X, y, rep__Z=Z, rep__W=W, iv__Z=Z, iv__W=W)
    direct = InstrumentGuidedIVRegressor(2).fit(X, y, Z=Z, W=W)
    np.testing.assert_allclose(pipe.predict(X, W=W), direct.predict(X, W=W), rtol=1e-10, atol=1e-10)
    ControlSpy.seen = []
    with pytest.warns(IVScoreWarning):
        GridSearchCV(ControlSpy(), {"fit_intercept": [True]}, cv=KFold(3), refit=False).fit(X[:, :2], y, Z=Z,
                                                                                             W=W)
    assert all(w_seen is not None and w_seen.shape == (200, 2) for w_seen, _ in ControlSpy.seen)
