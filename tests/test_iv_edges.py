"""Edges of the linear IV workflows: collinear treatments, and the two kinds of sample weights.

A duplicated or near-duplicated treatment must not come back as two "significant" halves or ±1e6
coefficients without a word; frequency weights must equal duplicated rows in every statistic (Wooldridge's
robust endogeneity test included) and refuse sums that cannot carry the model; analytic weights must equal
linearmodels' ``weights=`` under every covariance and be invariant to the weights' scale.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from sklearn_frontier.exceptions import WeakInstrumentWarning
from sklearn_frontier.iv import KClassIVRegressor, TwoStageLeastSquares


def _data(n=500, seed=0):
    rng = np.random.RandomState(seed)
    Z = rng.normal(size=(n, 3))
    W = rng.normal(size=(n, 2))
    h = rng.normal(size=n)
    X = Z @ np.array([[1.0, 0.2], [0.3, 1.0], [0.5, -0.4]]) + W @ np.array([[0.3, 0.1], [0.0, 0.4]]) \
        + h[:, None] + rng.normal(size=(n, 2))
    u = (1 + np.abs(Z[:, 0])) * rng.normal(size=n)
    y = X @ np.array([1.0, -0.5]) + W @ np.array([0.3, 0.7]) + 1.5 * h + u + 1.0
    return (pd.DataFrame(X, columns=["price", "income"]), pd.Series(y, name="y"),
            pd.DataFrame(Z, columns=["z0", "z1", "z2"]), pd.DataFrame(W, columns=["w0", "w1"]),
            rng.randint(0, 30, size=n))


# -- collinear treatments ------------------------------------------------------------------------------------
@pytest.mark.parametrize("Est", [TwoStageLeastSquares, KClassIVRegressor])
def test_same_treatment_twice_is_an_error_naming_the_columns(Est):
    X, y, Z, _, _ = _data()
    Xd = X.assign(price_again=X["price"])
    with pytest.raises(ValueError, match=r"'price', 'price_again'\] of the treatments X are exactly collinear"):
        Est().fit(Xd, y, Z=Z)
    with pytest.raises(ValueError, match=r"\['x0', 'x2'\] of the treatments X are exactly"):  # numpy input: x0, x1, x2
        Est().fit(Xd.to_numpy(), y, Z=Z.to_numpy())


def test_near_duplicate_treatment_warns_naming_the_columns():
    X, y, Z, _, _ = _data()
    rng = np.random.RandomState(1)
    Xn = X.assign(price_noisy=X["price"] + 1e-7 * rng.normal(size=len(X)))
    with pytest.warns(UserWarning, match=r"'price', 'price_noisy'\] of the treatments X are nearly collinear: cond"):
        TwoStageLeastSquares().fit(Xn, y, Z=Z)


def test_treatment_equal_to_a_control_or_a_combination():
    X, y, Z, W, _ = _data()
    with pytest.raises(ValueError, match=r"\['w0'\] of the treatments X are collinear with the intercept, the con"):
        TwoStageLeastSquares().fit(X.assign(w0=W["w0"]), y, Z=Z, W=W)
    combo = X.assign(total=X["price"] + 2 * X["income"])
    with pytest.raises(ValueError, match=r"\['price', 'income', 'total'\] of the treatments X are exactly collinear"):
        TwoStageLeastSquares().fit(combo, y, Z=Z)
    with pytest.raises(ValueError, match="collinear with the intercept"):
        TwoStageLeastSquares().fit(X.assign(const=3.0), y, Z=Z)


def test_instruments_that_do_not_separate_the_treatments():
    """x2 − x1 is orthogonal to the instruments: each treatment varies, but their first stages coincide."""
    X, y, Z, _, _ = _data()
    C = np.column_stack([np.ones(len(X)), Z])
    u = np.random.RandomState(2).normal(size=len(X))
    u -= C @ np.linalg.lstsq(C, u, rcond=None)[0]
    X2 = pd.DataFrame({"a": X["price"], "b": X["price"] + u})
    with pytest.raises(ValueError, match=r"\['a', 'b'\] of the second-stage design .* are exactly collinear"):
        TwoStageLeastSquares().fit(X2, y, Z=Z)


def test_correlated_but_separable_treatments_fit_silently():
    X, y, Z, _, _ = _data()
    X = X.assign(income=0.9 * X["price"] + 0.45 * X["income"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = TwoStageLeastSquares().fit(X, y, Z=Z)
    assert np.all(np.isfinite(est.stderr_))


# -- frequency weights ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("cov_type", ["nonrobust", "HC0", "HC1", "cluster"])
def test_frequency_weights_equal_duplicated_rows_in_every_statistic(cov_type):
    X, y, Z, W, g = _data(300)
    counts = np.random.RandomState(3).randint(1, 4, size=len(y))
    rows = np.repeat(np.arange(len(y)), counts)
    weighted = TwoStageLeastSquares(cov_type=cov_type).fit(X, y, Z=Z, W=W, groups=g, sample_weight=counts)
    dup = TwoStageLeastSquares(cov_type=cov_type).fit(X.iloc[rows], y.iloc[rows], Z=Z.iloc[rows], W=W.iloc[rows],
                                                      groups=g[rows])
    np.testing.assert_allclose(weighted.coef_, dup.coef_, rtol=1e-10)
    np.testing.assert_allclose(weighted.params_cov_, dup.params_cov_, rtol=1e-8)
    for name in ("endogeneity_", "sargan_", "hansen_j_"):
        np.testing.assert_allclose(getattr(weighted, name), getattr(dup, name), rtol=1e-8, err_msg=name)
    np.testing.assert_allclose(weighted.first_stage_f_robust_, dup.first_stage_f_robust_, rtol=1e-8)
    np.testing.assert_allclose(weighted.kleibergen_paap_, dup.kleibergen_paap_, rtol=1e-8)
    assert weighted.endogeneity_test_ == dup.endogeneity_test_


@pytest.mark.parametrize("scale", [1.0 / 300, 1e-3])
def test_frequency_weights_too_small_to_carry_the_model_are_refused(scale):
    X, y, Z, W, _ = _data(300)
    w = np.random.RandomState(4).uniform(0.5, 1.5, size=len(y))
    w = w / w.sum() if scale == 1.0 / 300 else w * scale
    with pytest.raises(ValueError, match=r"sample_weight sums to .*weight_type='analytic'"):
        TwoStageLeastSquares().fit(X, y, Z=Z, W=W, sample_weight=w)
    est = TwoStageLeastSquares(weight_type="analytic").fit(X, y, Z=Z, W=W, sample_weight=w)
    assert np.all(np.isfinite(est.stderr_)) and est.n_weighted_ == len(y)


def test_guided_estimator_refuses_weights_normalised_to_one_in_a_pipeline():
    """Weights that sum to 1 gave InstrumentGuidedIVRegressor NaN standard errors without a word; as frequency
    weights they cannot carry the model, so the fit says so (and counts of the same shape fit)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_frontier.iv import InstrumentGuidedIVRegressor

    X, y, Z, _, _ = _data(300)  # pandas, as users pass them
    w = np.random.RandomState(4).uniform(0.5, 1.5, size=len(y))
    pipe = make_pipeline(StandardScaler(), InstrumentGuidedIVRegressor())
    with pytest.raises(ValueError, match=r"sample_weight sums to .*frequency weights only"):
        pipe.fit(X, y, instrumentguidedivregressor__Z=Z, instrumentguidedivregressor__sample_weight=w / w.sum())
    pipe.fit(X, y, instrumentguidedivregressor__Z=Z, instrumentguidedivregressor__sample_weight=w)
    assert np.all(np.isfinite(pipe[-1].representation_stderr_))


# -- analytic weights ----------------------------------------------------------------------------------------
linearmodels = pytest.importorskip("linearmodels")
from linearmodels.iv import IV2SLS, IVLIML  # noqa: E402

CONVENTIONS = [("nonrobust", True, "unadjusted", True), ("nonrobust", False, "unadjusted", False),
               ("HC0", None, "robust", False), ("HC1", None, "robust", True),
               ("cluster", True, "clustered", True), ("cluster", False, "clustered", False)]


def _exog(W):
    return pd.concat([pd.Series(1.0, index=W.index, name="const"), W], axis=1)


@pytest.mark.parametrize("Est", [TwoStageLeastSquares, KClassIVRegressor])
@pytest.mark.parametrize("convention", CONVENTIONS, ids=lambda c: f"{c[0]}-{c[1]}")
def test_analytic_weights_equal_linearmodels(Est, convention):
    cov_type, debiased, lm_cov, lm_debiased = convention
    X, y, Z, W, g = _data(400)
    w = np.random.RandomState(5).uniform(0.2, 3.0, size=len(y))
    kw = {"kappa": "liml"} if Est is KClassIVRegressor else {}
    ours = Est(cov_type=cov_type, debiased=debiased, weight_type="analytic", **kw).fit(
        X, y, Z=Z, W=W, groups=g, sample_weight=w)
    lm_model = (IVLIML if kw else IV2SLS)(y, _exog(W), X, Z, weights=w)
    lm = lm_model.fit(cov_type=lm_cov, debiased=lm_debiased, **({"clusters": g} if lm_cov == "clustered" else {}))
    params = np.concatenate([[ours.intercept_], ours.controls_coef_, ours.coef_])
    np.testing.assert_allclose(params, lm.params.to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(ours.params_cov_, lm.cov.to_numpy(), rtol=1e-7, atol=1e-14)
    np.testing.assert_allclose(ours.cov_, lm.cov.to_numpy()[-2:, -2:], rtol=1e-7)
    assert ours.n_weighted_ == len(y) and ours.df_resid_ == len(y) - 5


def test_analytic_weights_diagnostics_equal_linearmodels():
    from linearmodels.iv import IVGMM

    X, y, Z, W, _ = _data(400)
    w = np.random.RandomState(5).uniform(0.2, 3.0, size=len(y))
    robust = TwoStageLeastSquares(cov_type="HC0", weight_type="analytic").fit(X, y, Z=Z, W=W, sample_weight=w)
    plain = TwoStageLeastSquares(cov_type="nonrobust", weight_type="analytic").fit(X, y, Z=Z, W=W, sample_weight=w)
    lm_robust = IV2SLS(y, _exog(W), X, Z, weights=w).fit(cov_type="robust")
    lm_plain = IV2SLS(y, _exog(W), X, Z, weights=w).fit(cov_type="unadjusted")
    gmm = IVGMM(y, _exog(W), X, Z, weights=w).fit(cov_type="robust")
    np.testing.assert_allclose(robust.endogeneity_[0], lm_robust.wooldridge_score.stat, rtol=1e-8)
    np.testing.assert_allclose(plain.endogeneity_[0], lm_plain.durbin().stat, rtol=1e-8)
    np.testing.assert_allclose(plain.sargan_[0], lm_plain.sargan.stat, rtol=1e-7)
    np.testing.assert_allclose(robust.hansen_j_[0], gmm.j_stat.stat, rtol=1e-7)


def test_analytic_weights_are_scale_invariant_and_drop_zero_rows():
    X, y, Z, W, g = _data(300)
    w = np.random.RandomState(6).uniform(0.2, 3.0, size=len(y))
    est = TwoStageLeastSquares(weight_type="analytic", cov_type="cluster")
    base = est.fit(X, y, Z=Z, W=W, groups=g, sample_weight=w)
    cov, coef, stats = base.params_cov_.copy(), base.coef_.copy(), base.endogeneity_
    for scaled in (w / w.sum(), 1e4 * w):
        other = TwoStageLeastSquares(weight_type="analytic", cov_type="cluster").fit(
            X, y, Z=Z, W=W, groups=g, sample_weight=scaled)
        np.testing.assert_allclose(other.coef_, coef, rtol=1e-10)
        np.testing.assert_allclose(other.params_cov_, cov, rtol=1e-8)
        np.testing.assert_allclose(other.endogeneity_, stats, rtol=1e-8)
    w0 = w.copy()
    w0[:25] = 0.0
    zero = TwoStageLeastSquares(weight_type="analytic").fit(X, y, Z=Z, W=W, sample_weight=w0)
    kept = TwoStageLeastSquares(weight_type="analytic").fit(X[25:], y[25:], Z=Z[25:], W=W[25:],
                                                          sample_weight=w[25:])
    np.testing.assert_allclose(zero.coef_, kept.coef_, rtol=1e-10)
    np.testing.assert_allclose(zero.params_cov_, kept.params_cov_, rtol=1e-8)
    assert zero.n_weighted_ == len(y) - 25


def test_without_weights_the_weight_type_changes_nothing_and_bad_type_is_refused():
    X, y, Z, W, _ = _data(200)
    a = TwoStageLeastSquares(weight_type="analytic").fit(X, y, Z=Z, W=W)
    f = TwoStageLeastSquares().fit(X, y, Z=Z, W=W)
    np.testing.assert_allclose(a.params_cov_, f.params_cov_, rtol=1e-12)
    with pytest.raises(ValueError, match="weight_type"):
        TwoStageLeastSquares(weight_type="probability").fit(X, y, Z=Z)


def test_analytic_weights_in_a_pipeline_with_cross_val_score():
    X, y, Z, W, _ = _data(300)
    w = np.random.RandomState(7).uniform(0.2, 3.0, size=len(y))
    pipe = make_pipeline(FunctionTransformer(), TwoStageLeastSquares(weight_type="analytic"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        scores = cross_val_score(pipe, X, y, cv=3,
                                 params={"twostageleastsquares__Z": Z, "twostageleastsquares__sample_weight": w})
    assert np.all(np.isfinite(scores))
