"""Absorbed fixed effects: fit(..., absorb=...) equals pyfixest's feols and the dummy-column fit; routed like groups."""

import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from sklearn_frontier.exceptions import WeakInstrumentWarning
from sklearn_frontier.iv import KClassIVRegressor, TwoStageLeastSquares


def _panel(n=1500, seed=0):
    """One treatment, two instruments, one control; firm effects (60) correlated with everything, 40 clusters."""
    rng = np.random.RandomState(seed)
    firm, year, cl = rng.randint(0, 60, n), rng.randint(0, 15, n), rng.randint(0, 40, n)
    a = rng.normal(size=60)[firm] + 0.5 * rng.normal(size=15)[year]
    z, z2, w, h = rng.normal(size=n) + 0.3 * a, rng.normal(size=n), rng.normal(size=n) + a, rng.normal(size=n)
    x = z + 0.5 * z2 + 0.5 * w + h + a + rng.normal(size=n)
    y = 1.5 * x + 0.3 * w + 2 * h + 3 * a + (1 + np.abs(z2)) * rng.normal(size=n)
    return pd.DataFrame({"y": y, "x": x, "z": z, "z2": z2, "w": w, "firm": firm, "year": year, "cl": cl})


@pytest.fixture(scope="module")
def panel():
    return _panel()


pyfixest = pytest.importorskip("pyfixest")

# (formula's fixed-effect part, absorb columns, our cov_type, pyfixest vcov)
CASES = [("firm", ["firm"], "cluster", {"CRV1": "cl"}), ("firm + year", ["firm", "year"], "cluster", {"CRV1": "cl"}),
         ("cl", ["cl"], "cluster", {"CRV1": "cl"}), ("firm", ["firm"], "HC1", "hetero"),
         ("firm + year", ["firm", "year"], "nonrobust", "iid")]


@pytest.mark.parametrize("Est", [TwoStageLeastSquares, KClassIVRegressor])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[2]}")
def test_coefficients_and_standard_errors_equal_pyfixest(panel, case, Est):
    fe, absorb, cov_type, vcov = case
    kw = {"kappa": "2sls"} if Est is KClassIVRegressor else {}
    est = Est(cov_type=cov_type, **kw).fit(panel[["x"]], panel["y"], Z=panel[["z", "z2"]], W=panel[["w"]],
                                           groups=panel["cl"], absorb=panel[absorb])
    fit = pyfixest.feols(f"y ~ w | {fe} | x ~ z + z2", data=panel, vcov=vcov, fixef_rm="none")
    np.testing.assert_allclose(np.r_[est.controls_coef_, est.coef_], fit.coef().to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(np.sqrt(np.diag(est.params_cov_)), fit.se().to_numpy(), rtol=1e-7)
    assert not est.has_intercept_ and est.params_cov_.shape == (2, 2)
    assert est.fixed_effect_levels_.tolist() == [panel[c].nunique() for c in absorb]


def test_analytic_weights_equal_pyfixest_weights(panel):
    w = np.random.RandomState(1).uniform(0.3, 3.0, len(panel))
    est = TwoStageLeastSquares(cov_type="cluster", weight_type="analytic").fit(
        panel[["x"]], panel["y"], Z=panel[["z", "z2"]], W=panel[["w"]], groups=panel["cl"], absorb=panel[["firm"]],
        sample_weight=w)
    fit = pyfixest.feols("y ~ w | firm | x ~ z + z2", data=panel.assign(wt=w), weights="wt", vcov={"CRV1": "cl"},
                         fixef_rm="none")
    np.testing.assert_allclose(np.r_[est.controls_coef_, est.coef_], fit.coef().to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(np.sqrt(np.diag(est.params_cov_)), fit.se().to_numpy(), rtol=1e-7)


def test_equals_the_fit_with_dummy_columns(panel):
    """Absorbing equals entering the dummies as controls: same coefficients, same covariance of the treatment."""
    d = panel.iloc[:600]
    dummies = pd.get_dummies(d["year"], prefix="year", drop_first=True, dtype=float)
    for cov_type in ("nonrobust", "HC1", "HC0"):
        absorbed = TwoStageLeastSquares(cov_type=cov_type).fit(d[["x"]], d["y"], Z=d[["z", "z2"]], W=d[["w"]],
                                                               absorb=d["year"])
        dummy = TwoStageLeastSquares(cov_type=cov_type).fit(d[["x"]], d["y"], Z=d[["z", "z2"]],
                                                            W=pd.concat([d[["w"]], dummies], axis=1))
        np.testing.assert_allclose(absorbed.coef_, dummy.coef_, rtol=1e-9)
        np.testing.assert_allclose(absorbed.cov_, dummy.cov_, rtol=1e-7)
        np.testing.assert_allclose(absorbed.controls_coef_, dummy.controls_coef_[:1], rtol=1e-9)
        assert absorbed.df_resid_ == dummy.df_resid_
    # predictions carry the mean fixed effect: their mean is the outcome's
    np.testing.assert_allclose(absorbed.predict(d[["x"]], W=d[["w"]]).mean(), d["y"].mean(), rtol=1e-9)


def test_frequency_weights_with_absorb_equal_duplicated_rows(panel):
    d = panel.iloc[:500]
    counts = np.random.RandomState(2).randint(1, 4, len(d))
    rows = np.repeat(np.arange(len(d)), counts)
    kw = dict(cov_type="cluster")
    a = TwoStageLeastSquares(**kw).fit(d[["x"]], d["y"], Z=d[["z", "z2"]], W=d[["w"]], groups=d["cl"],
                                       absorb=d[["firm", "year"]], sample_weight=counts)
    dd = d.iloc[rows]
    b = TwoStageLeastSquares(**kw).fit(dd[["x"]], dd["y"], Z=dd[["z", "z2"]], W=dd[["w"]], groups=dd["cl"],
                                       absorb=dd[["firm", "year"]])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-8)
    np.testing.assert_allclose(a.params_cov_, b.params_cov_, rtol=1e-6)
    np.testing.assert_allclose(a.endogeneity_, b.endogeneity_, rtol=1e-6)


def test_absorb_inputs_arrays_series_and_labels(panel):
    d = panel.iloc[:400]
    ref = TwoStageLeastSquares().fit(d[["x"]], d["y"], Z=d[["z", "z2"]], absorb=d[["firm"]])
    labels = np.array([f"firm-{v}" for v in d["firm"]], dtype=object)
    for absorb in (d["firm"], d["firm"].to_numpy(), labels, d["firm"].astype("category")):
        other = TwoStageLeastSquares().fit(d[["x"]], d["y"], Z=d[["z", "z2"]], absorb=absorb)
        np.testing.assert_allclose(other.coef_, ref.coef_, rtol=1e-12)


def test_bad_absorb_is_named(panel):
    d = panel.iloc[:300]
    X, y, Z = d[["x"]], d["y"], d[["z", "z2"]]
    with_nan = d["firm"].astype(float).copy()
    with_nan.iloc[3] = np.nan
    with pytest.raises(ValueError, match=r"absorb column 'firm' has 1 missing values"):
        TwoStageLeastSquares().fit(X, y, Z=Z, absorb=with_nan)
    labels = np.array([f"f{v}" for v in d["firm"]], dtype=object)
    labels[5] = None
    with pytest.raises(ValueError, match=r"absorb column 'fe0' has 1 missing"):
        TwoStageLeastSquares().fit(X, y, Z=Z, absorb=labels)
    with pytest.raises(ValueError, match=r"absorb column 'one' has a single level"):
        TwoStageLeastSquares().fit(X, y, Z=Z, absorb=pd.DataFrame({"one": np.zeros(len(d))}))
    with pytest.raises(ValueError, match=r"absorb has 10 samples but X has 300"):
        TwoStageLeastSquares().fit(X, y, Z=Z, absorb=d["firm"].iloc[:10])


def test_absorbed_treatment_or_instrument_is_reported(panel):
    d = panel.iloc[:600]
    firm_level = d.groupby("firm")["x"].transform("mean")
    with pytest.raises(ValueError, match=r"X .the treatments. has no variation .after partialling out the absorbed"):
        TwoStageLeastSquares().fit(firm_level.to_frame("x"), d["y"], Z=d[["z", "z2"]], absorb=d["firm"])
    z_firm = d.groupby("firm")["z"].transform("mean")
    with pytest.raises(ValueError, match="Z .the instruments. has no variation"):
        TwoStageLeastSquares().fit(d[["x"]], d["y"], Z=z_firm.to_frame("zf"), absorb=d["firm"])


class AbsorbSpy(TwoStageLeastSquares):
    """Records the absorb it receives in fit (module level so that clone works)."""

    seen = []

    def fit(self, X, y, *, Z=None, W=None, groups=None, sample_weight=None, absorb=None):
        AbsorbSpy.seen.append(None if absorb is None else np.asarray(absorb).copy())
        return super().fit(X, y, Z=Z, W=W, groups=groups, sample_weight=sample_weight, absorb=absorb)


def test_routing_on_pipeline_and_grid_search_slice_absorb(panel):
    d = panel.iloc[:600].reset_index(drop=True)
    X, y, Z, fe = d[["x"]], d["y"], d[["z", "z2"]], d[["firm"]]
    direct = TwoStageLeastSquares().fit(X, y, Z=Z, absorb=fe)
    cv = KFold(3, shuffle=True, random_state=0)
    AbsorbSpy.seen = []
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline([("identity", FunctionTransformer()), ("iv", TwoStageLeastSquares())]).fit(X, y, Z=Z,
                                                                                                  absorb=fe)
        np.testing.assert_allclose(pipe[-1].coef_, direct.coef_, rtol=1e-12)
        assert TwoStageLeastSquares().get_metadata_routing().fit.requests["absorb"] is True
        assert KClassIVRegressor().get_metadata_routing().fit.requests["absorb"] is True
        GridSearchCV(AbsorbSpy(), {"fit_intercept": [True]}, cv=cv, refit=False).fit(X, y, Z=Z, absorb=fe)
    folds = [fe.to_numpy()[train] for train, _ in cv.split(X)]
    assert len(AbsorbSpy.seen) == 3
    assert all(any(np.array_equal(seen, f) for f in folds) for seen in AbsorbSpy.seen)


def test_routing_off_step_params_slice_absorb(panel):
    d = panel.iloc[:600].reset_index(drop=True)
    X, y, Z, fe = d[["x"]], d["y"], d[["z", "z2"]], d[["firm"]]
    pipe = Pipeline([("identity", FunctionTransformer()), ("iv", KClassIVRegressor())])
    pipe.fit(X, y, iv__Z=Z, iv__absorb=fe)
    np.testing.assert_allclose(pipe[-1].coef_, KClassIVRegressor().fit(X, y, Z=Z, absorb=fe).coef_, rtol=1e-12)
    AbsorbSpy.seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scored without Z: R² with an IVScoreWarning
        GridSearchCV(AbsorbSpy(), {"fit_intercept": [True]}, cv=KFold(3), refit=False).fit(X, y, Z=Z, absorb=fe)
    assert len(AbsorbSpy.seen) == 3 and all(s.shape == (400, 1) for s in AbsorbSpy.seen)


def test_weak_instrument_warning_still_fires_with_absorb(panel):
    d = panel.iloc[:400]
    noise = np.random.RandomState(5).normal(size=(len(d), 1))
    with pytest.warns(WeakInstrumentWarning):
        TwoStageLeastSquares().fit(d[["x"]], d["y"], Z=noise, absorb=d["firm"])


def test_liml_and_fuller_with_absorb_equal_dummy_columns(panel):
    d = panel.iloc[:600]
    dummies = pd.get_dummies(d["year"], prefix="year", drop_first=True, dtype=float)
    for kappa in ("liml", "fuller"):
        absorbed = KClassIVRegressor(kappa, cov_type="HC1").fit(d[["x"]], d["y"], Z=d[["z", "z2"]], W=d[["w"]],
                                                                absorb=d["year"])
        dummy = KClassIVRegressor(kappa, cov_type="HC1").fit(d[["x"]], d["y"], Z=d[["z", "z2"]],
                                                             W=pd.concat([d[["w"]], dummies], axis=1))
        np.testing.assert_allclose(absorbed.kappa_, dummy.kappa_, rtol=1e-10)
        np.testing.assert_allclose(absorbed.coef_, dummy.coef_, rtol=1e-9)
        np.testing.assert_allclose(absorbed.cov_, dummy.cov_, rtol=1e-7)


def test_ols_with_absorbed_effects_equals_feols(panel):
    est = TwoStageLeastSquares(cov_type="cluster").fit(panel[["x", "w"]], panel["y"], groups=panel["cl"],
                                                       absorb=panel[["firm", "year"]])
    fit = pyfixest.feols("y ~ x + w | firm + year", data=panel, vcov={"CRV1": "cl"}, fixef_rm="none")
    np.testing.assert_allclose(est.coef_, fit.coef().to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(est.stderr_, fit.se().to_numpy(), rtol=1e-7)
