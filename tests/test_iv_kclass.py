"""KClassIVRegressor: LIML, Fuller and fixed κ against linearmodels' IVLIML, and as users fit it."""

import functools
import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.model_selection import GridSearchCV, KFold

from sklearn_frontier.exceptions import WeakInstrumentWarning
from sklearn_frontier.iv import KClassIVRegressor, TwoStageLeastSquares, make_iv_scorer

linearmodels = pytest.importorskip("linearmodels")
from linearmodels.datasets import mroz as mroz_data  # noqa: E402
from linearmodels.iv import IVLIML  # noqa: E402

CONVENTIONS = [("nonrobust", True, "unadjusted", True), ("nonrobust", False, "unadjusted", False),
               ("HC0", None, "robust", False), ("HC1", None, "robust", True),
               ("cluster", True, "clustered", True), ("cluster", False, "clustered", False)]
# (our kappa, fuller_alpha, linearmodels' keyword arguments)
KAPPAS = [("liml", 1.0, {}), ("fuller", 1.0, {"fuller": 1.0}), ("fuller", 4.0, {"fuller": 4.0}),
          (0.7, 1.0, {"kappa": 0.7}), ("2sls", 1.0, {"kappa": 1.0})]


@functools.cache
def _simulated(n=500, seed=0):
    """Two endogenous treatments, four instruments, two controls, heteroskedastic errors, 35 clusters."""
    rng = np.random.RandomState(seed)
    Z = rng.normal(size=(n, 4))
    W = rng.normal(size=(n, 2))
    h = rng.normal(size=n)
    X = Z @ rng.normal(size=(4, 2)) * 0.5 + W @ rng.normal(size=(2, 2)) + h[:, None] + rng.normal(size=(n, 2))
    y = X @ np.array([1.0, -0.5]) + W @ np.array([0.3, 0.7]) + 2 * h + (1 + np.abs(Z[:, 0])) * rng.normal(size=n)
    return {"y": pd.Series(y + 1.0, name="y"), "X": pd.DataFrame(X, columns=["x0", "x1"]),
            "Z": pd.DataFrame(Z, columns=[f"z{j}" for j in range(4)]), "W": pd.DataFrame(W, columns=["w0", "w1"]),
            "groups": rng.randint(0, 35, size=n)}


@functools.cache
def _mroz():
    d = mroz_data.load().dropna(subset=["lwage"])
    return {"y": d["lwage"], "X": d[["educ"]], "Z": d[["fatheduc", "motheduc"]], "W": d[["exper", "expersq"]],
            "groups": d["age"].to_numpy()}


def _exog(W):
    return pd.concat([pd.Series(1.0, index=W.index, name="const"), W], axis=1)


def _fit_both(data, kappa, alpha, lm_kw, convention):
    cov_type, debiased, lm_cov, lm_debiased = convention
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        ours = KClassIVRegressor(kappa, fuller_alpha=alpha, cov_type=cov_type, debiased=debiased).fit(
            data["X"], data["y"], Z=data["Z"], W=data["W"], groups=data["groups"])
    lm = IVLIML(data["y"], _exog(data["W"]), data["X"], data["Z"], **lm_kw).fit(
        cov_type=lm_cov, debiased=lm_debiased, **({"clusters": data["groups"]} if lm_cov == "clustered" else {}))
    return ours, lm


@pytest.mark.parametrize("design", ["mroz", "simulated"])
@pytest.mark.parametrize("kappa", KAPPAS, ids=lambda k: f"{k[0]}-{k[1]}")
@pytest.mark.parametrize("convention", CONVENTIONS, ids=lambda c: f"{c[0]}-{c[1]}")
def test_coefficients_and_covariances_equal_linearmodels(design, kappa, convention):
    data = _mroz() if design == "mroz" else _simulated()
    ours, lm = _fit_both(data, *kappa, convention)
    params = np.concatenate([[ours.intercept_], ours.controls_coef_, ours.coef_])
    np.testing.assert_allclose(params, lm.params.to_numpy(), rtol=1e-8)
    np.testing.assert_allclose(ours.params_cov_, lm.cov.to_numpy(), rtol=1e-7, atol=1e-15)
    np.testing.assert_allclose(ours.stderr_, lm.std_errors.to_numpy()[-ours.n_features_in_:], rtol=1e-7)
    np.testing.assert_allclose(ours.kappa_, lm.kappa, rtol=1e-10)
    if design == "mroz":  # one treatment: the summary's weak-IV sets are quick to invert
        summary = ours.summary()
        np.testing.assert_allclose(summary.params["p_value"], lm.pvalues.to_numpy(), rtol=1e-6, atol=1e-12)


def test_without_intercept_equals_linearmodels():
    data = _simulated()
    ours = KClassIVRegressor("fuller", fit_intercept=False, cov_type="HC0").fit(data["X"], data["y"], Z=data["Z"],
                                                                               W=data["W"])
    lm = IVLIML(data["y"], data["W"], data["X"], data["Z"], fuller=1.0).fit(cov_type="robust", debiased=False)
    np.testing.assert_allclose(np.concatenate([ours.controls_coef_, ours.coef_]), lm.params.to_numpy(), rtol=1e-8)
    np.testing.assert_allclose(ours.params_cov_, lm.cov.to_numpy(), rtol=1e-7)


def test_known_answers_2sls_ols_and_exact_identification():
    data = _simulated()
    X, y, Z, W = data["X"], data["y"], data["Z"], data["W"]
    tsls = TwoStageLeastSquares(cov_type="cluster").fit(X, y, Z=Z, W=W, groups=data["groups"])
    k1 = KClassIVRegressor("2sls", cov_type="cluster").fit(X, y, Z=Z, W=W, groups=data["groups"])
    np.testing.assert_allclose(k1.coef_, tsls.coef_, rtol=1e-10)
    np.testing.assert_allclose(k1.params_cov_, tsls.params_cov_, rtol=1e-8)
    ols = TwoStageLeastSquares().fit(pd.concat([X, W], axis=1), y)
    np.testing.assert_allclose(KClassIVRegressor(0.0).fit(X, y, Z=Z, W=W).coef_, ols.coef_[:2], rtol=1e-10)
    # exactly identified: LIML's kappa is 1 and LIML is 2SLS
    liml = KClassIVRegressor().fit(X, y, Z=Z.iloc[:, :2], W=W)
    np.testing.assert_allclose(liml.kappa_, 1.0, rtol=1e-10)
    np.testing.assert_allclose(liml.coef_, TwoStageLeastSquares().fit(X, y, Z=Z.iloc[:, :2], W=W).coef_, rtol=1e-7)
    # without instruments every kappa is OLS
    np.testing.assert_allclose(KClassIVRegressor().fit(X, y).coef_, TwoStageLeastSquares().fit(X, y).coef_,
                               rtol=1e-10)


def test_liml_is_less_biased_than_2sls_with_many_weak_instruments():
    """Median of 40 draws, 15 weak instruments, strong confounding: 2SLS leans to OLS, LIML stays near β = 1."""
    liml, tsls = [], []
    for seed in range(40):
        rng = np.random.RandomState(seed)
        n, k = 400, 15
        Z = rng.normal(size=(n, k))
        v = rng.normal(size=n)
        x = Z @ np.full(k, 0.08) + v
        y = x + 0.8 * v + 0.6 * rng.normal(size=n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", WeakInstrumentWarning)
            liml.append(KClassIVRegressor().fit(x[:, None], y, Z=Z).coef_[0])
            tsls.append(TwoStageLeastSquares().fit(x[:, None], y, Z=Z).coef_[0])
    bias_liml, bias_tsls = abs(np.median(liml) - 1.0), abs(np.median(tsls) - 1.0)
    assert bias_tsls > 0.2 and bias_liml < 0.5 * bias_tsls


def test_grid_search_over_kappa_with_routing():
    data = _simulated()
    with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        search = GridSearchCV(KClassIVRegressor(), {"kappa": ["liml", "fuller", "2sls"]},
                              scoring=make_iv_scorer(), cv=KFold(3)).fit(
            data["X"], data["y"], Z=data["Z"], W=data["W"])
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert search.best_estimator_.kappa_ > 0


def test_bad_parameters_are_named():
    data = _simulated(100)
    with pytest.raises(ValueError, match="kappa"):
        KClassIVRegressor("ols").fit(data["X"], data["y"], Z=data["Z"])
    with pytest.raises(ValueError, match="fuller_alpha"):
        KClassIVRegressor("fuller", fuller_alpha=-1.0).fit(data["X"], data["y"], Z=data["Z"])
    with pytest.raises(ValueError, match="under-identified"):
        KClassIVRegressor().fit(data["X"], data["y"], Z=data["Z"].iloc[:, :1])
