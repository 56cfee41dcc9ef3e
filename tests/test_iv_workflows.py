"""IV workflows as the user guide shows them: model selection with controls and clusters under metadata routing,
pandas input, the summary of an OLS fit, and side arrays checked at predict like X."""

import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold, KFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_frontier.datasets import make_iv_many_treatments
from sklearn_frontier.exceptions import WeakInstrumentWarning
from sklearn_frontier.iv import (
    InstrumentGuidedIVRegressor,
    InstrumentGuidedRepresentation,
    PCATwoStageLeastSquares,
    TwoStageLeastSquares,
    make_iv_scorer,
    projected_mse,
)


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


@pytest.fixture(scope="module")
def data():
    X, y, Z, _ = make_iv_many_treatments(n_samples=400, n_features=12, n_instruments=3, random_state=0)
    rng = np.random.default_rng(1)
    W = rng.normal(size=(X.shape[0], 2))
    y = y + W @ np.array([0.5, -1.0])
    frame = lambda A, p: pd.DataFrame(A, columns=[f"{p}{j}" for j in range(A.shape[1])])  # noqa: E731
    return frame(X, "x"), pd.Series(y, name="y"), frame(Z, "z"), frame(W, "w"), rng.integers(0, 20, X.shape[0])


@pytest.mark.parametrize("estimator", [InstrumentGuidedIVRegressor(), PCATwoStageLeastSquares()],
                         ids=lambda e: type(e).__name__)
def test_grid_search_with_controls_scores_every_fold(routing, data, estimator):
    X, y, Z, W, _ = data
    search = GridSearchCV(estimator, {"n_components": [1, 2, 3]}, scoring=make_iv_scorer(), cv=KFold(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Scoring failed" must not happen
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        search.fit(X, y, Z=Z, W=W)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores))
    assert len(np.unique(scores)) == 3  # the candidates are told apart, not tied at a failure value
    if isinstance(estimator, InstrumentGuidedIVRegressor):
        assert search.best_params_["n_components"] == 3  # the full instrument rank wins on this design
    assert search.best_estimator_.n_controls_ == 2


def test_cross_validate_with_controls_and_groups(routing, data):
    X, y, Z, W, groups = data
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        res = cross_validate(TwoStageLeastSquares(cov_type="cluster"), X.iloc[:, :3], y, cv=GroupKFold(4),
                             scoring=make_iv_scorer(), params={"Z": Z, "W": W, "groups": groups})
    assert np.all(np.isfinite(res["test_score"])) and np.all(res["test_score"] <= 0)


def test_scorer_uses_controls_like_score(data):
    X, y, Z, W, groups = data
    X = X.iloc[:, :3]
    model = TwoStageLeastSquares().fit(X, y, Z=Z, W=W)
    scorer = make_iv_scorer()
    assert scorer(model, X, y, Z=Z, W=W, groups=groups) == pytest.approx(model.score(X, y, Z=Z, W=W), rel=1e-12)
    with pytest.raises(ValueError, match="W"):  # fitted with controls: predicting without them is refused
        scorer(model, X, y, Z=Z)


@pytest.mark.parametrize("estimator",
                         [TwoStageLeastSquares(), InstrumentGuidedIVRegressor(), PCATwoStageLeastSquares()],
                         ids=lambda e: type(e).__name__)
def test_summary_of_a_fit_without_instruments_says_ols(data, estimator):
    X, y, _, W, _ = data
    text = str(estimator.fit(X[["x0", "x1"]], y, W=W).summary())
    assert "OLS Estimation Summary" in text and "IV-2SLS" not in text
    assert "none (OLS)" in text and "first-stage" not in text


@pytest.mark.parametrize("estimator", [TwoStageLeastSquares(), InstrumentGuidedIVRegressor(n_components=2)],
                         ids=lambda e: type(e).__name__)
def test_controls_checked_at_predict_like_x(data, estimator):
    X, y, Z, W, _ = data
    X = X.iloc[:, :3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        model = estimator.fit(X, y, Z=Z, W=W)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # names given at fit and dropped here: warned, tested below
        np.testing.assert_allclose(model.predict(X, W=W), model.predict(X.to_numpy(), W=W.to_numpy()))
    with pytest.raises(ValueError, match="W.*feature names"):
        model.predict(X, W=W[["w1", "w0"]])  # reordered columns would silently swap the coefficients
    with pytest.raises(ValueError, match="W has 1 columns"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model.predict(X, W=W.to_numpy()[:, :1])
    with pytest.raises(ValueError, match="Z feature names"):
        model.score(X, y, Z=Z.rename(columns={"z0": "zz"}), W=W)
    with pytest.warns(UserWarning, match="W does not have valid feature names") as record:
        model.predict(X, W=W.to_numpy().tolist())
    assert record[0].filename == __file__  # the warning points at the user's line


def test_scorer_checks_instruments_like_score(data):
    """The scorer and ``score`` share one check of Z: renamed or missing columns raise in both."""
    X, y, Z, W, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        model = InstrumentGuidedIVRegressor().fit(X, y, Z=Z, W=W)
    for check in (make_iv_scorer(), lambda m, X, y, **kw: m.score(X, y, **kw)):
        with pytest.raises(ValueError, match="Z feature names"):
            check(model, X, y, Z=Z.rename(columns={"z0": "zz"}), W=W)
        with pytest.raises(ValueError, match="Z has 2 columns.*n_instruments_=3"):
            check(model, X, y, Z=Z.to_numpy()[:, :2], W=W.to_numpy())


def test_scorer_ranks_an_ols_fit_with_dataframe_instruments(data):
    """A model fitted without Z (OLS) has no instrument columns to match: scoring it against a DataFrame Z, as a
    model comparison does, is silent and equals the loss computed from arrays."""
    X, y, Z, W, _ = data
    ols = TwoStageLeastSquares().fit(X, y, W=W)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from_frame = make_iv_scorer()(ols, X, y, Z=Z, W=W)
    assert from_frame == pytest.approx(make_iv_scorer()(ols, X, y, Z=Z.to_numpy(), W=W))


def test_projected_mse_takes_the_controls(data):
    """The metric takes W like the scorer: the controls join the projection (held-out rows, so the loss is > 0)."""
    X, y, Z, W, _ = data
    X = X.iloc[:, :3]
    fit, held = slice(0, 200), slice(200, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        model = TwoStageLeastSquares().fit(X[fit], y[fit], Z=Z[fit], W=W[fit])
    pred = model.predict(X[held], W=W[held])
    loss = projected_mse(y[held], pred, Z=Z[held], W=W[held])
    assert make_iv_scorer()(model, X[held], y[held], Z=Z[held], W=W[held]) == pytest.approx(-loss, rel=1e-12)
    assert loss > projected_mse(y[held], pred, Z=Z[held]) > 0  # a wider projection keeps more of the residual


def test_pipeline_search_with_controls_and_pandas(routing, data):
    """A scaler before the regressor: W reaches the final step at fit, predict and in the scorer."""
    X, y, Z, W, _ = data
    pipe = make_pipeline(StandardScaler(), InstrumentGuidedIVRegressor())
    search = GridSearchCV(pipe, {"instrumentguidedivregressor__n_components": [1, 3]}, scoring=make_iv_scorer(),
                          cv=KFold(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        search.fit(X, y, Z=Z, W=W)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert search.best_params_ == {"instrumentguidedivregressor__n_components": 3}
    assert search.best_estimator_.predict(X, W=W).shape == (X.shape[0],)  # BaseSearchCV.predict takes X only


def test_representation_search_with_controls(routing, data):
    """The representation's own score receives each test fold's Z and W; it checks them like X."""
    X, _, Z, W, _ = data
    search = GridSearchCV(InstrumentGuidedRepresentation(), {"n_components": [1, 2, 3]}, cv=KFold(3))
    search.fit(X, Z=Z, W=W)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and np.all(np.diff(scores) > 0)
    rep = search.best_estimator_
    assert list(rep.control_feature_names_in_) == ["w0", "w1"]
    with pytest.raises(ValueError, match="W feature names"):
        rep.score(X, Z=Z, W=W[["w1", "w0"]])


def test_fitted_representation_of_the_regressor_checks_x(data):
    X, y, Z, W, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        model = InstrumentGuidedIVRegressor().fit(X, y, Z=Z, W=W)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the representation knows X's names: no "fitted without names" warning
        D = model.representation_.transform(X)
    assert D.shape == (X.shape[0], model.n_components_)
    with pytest.raises(ValueError, match="features"):
        model.representation_.transform(X.to_numpy()[:, :5])


def test_search_with_controls_and_routing_off_says_how_to_fix(data):
    """With routing off no scorer can receive W: every fold fails, and the message says what to turn on."""
    X, y, Z, W, _ = data
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        GridSearchCV(TwoStageLeastSquares(), {"fit_intercept": [True, False]}, cv=KFold(3)).fit(
            X.iloc[:, :3], y, Z=Z, W=W)
    failures = [str(w.message) for w in record if "Scoring failed" in str(w.message)]
    assert failures and all("enable_metadata_routing=True" in m and "make_iv_scorer" in m for m in failures)


def test_controls_with_the_autoencoder_name_the_right_parameter(data):
    X, y, Z, W, _ = data
    with pytest.raises(ValueError, match="representation='linear'") as info:
        InstrumentGuidedIVRegressor(representation="autoencoder").fit(X, y, Z=Z, W=W)
    assert "method=" not in str(info.value)
    with pytest.raises(ValueError, match="method='linear'") as info:
        InstrumentGuidedRepresentation(method="autoencoder").fit(X, Z=Z, W=W)
    assert "representation=" not in str(info.value)
