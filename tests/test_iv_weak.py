"""Weak-instrument-robust inference: AR / CLR / LM tests and sets, the effective F, effect_confidence_set."""

import warnings

import numpy as np
import pytest
from scipy.stats import ncx2

from sklearn_frontier.exceptions import WeakInstrumentWarning
from sklearn_frontier.iv import InstrumentGuidedIVRegressor, TwoStageLeastSquares


def _one_treatment(seed, n=300, k=3, strength=0.3, n_controls=2, het=False):
    rng = np.random.RandomState(seed)
    Z = rng.normal(size=(n, k))
    W = rng.normal(size=(n, n_controls))
    v = rng.normal(size=n)
    scale = np.exp(0.8 * Z[:, 0]) if het else 1.0
    e = (0.8 * v + 0.6 * rng.normal(size=n)) * scale
    x = Z @ np.full(k, strength) + W @ np.linspace(0.5, -0.2, n_controls) + v
    y = 1.0 * x + W @ np.arange(1.0, n_controls + 1) + e
    return x[:, None], y, Z, W


def _fit(X, y, Z, W=None, cov_type="nonrobust", groups=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        return TwoStageLeastSquares(cov_type=cov_type).fit(X, y, Z=Z, W=W, groups=groups)


def _ivmodels_set(ivm, Z, X, y, W, nuisance=None, method="AR"):
    from ivmodels.confidence_set import ConfidenceSet
    from ivmodels.tests import inverse_anderson_rubin_test, inverse_conditional_likelihood_ratio_test

    if method == "AR":
        return ConfidenceSet.from_quadric(inverse_anderson_rubin_test(Z, X, y, W=nuisance, C=W)).boundaries
    return inverse_conditional_likelihood_ratio_test(Z, X, y, W=nuisance, C=W).boundaries


def _assert_same_set(ours, theirs, rtol=1e-7):
    theirs = sorted((float(lo), float(hi)) for lo, hi in theirs)
    assert len(ours) == len(theirs), (ours, theirs)
    for (a, b), (c, d) in zip(ours, theirs):
        for u, v in ((a, c), (b, d)):
            assert (np.isinf(u) and u == v) or np.isclose(u, v, rtol=rtol, atol=rtol), (ours, theirs)


# ------------------------------------------------------------------ agreement with ivmodels (homoskedastic)
@pytest.mark.parametrize("strength, shape", [(0.3, "bounded"), (0.1, "two half-lines"), (0.0, "unbounded")])
def test_ar_and_clr_sets_equal_ivmodels_in_every_shape(strength, shape):
    ivm = pytest.importorskip("ivmodels")
    seeds = {"bounded": 0, "two half-lines": 0, "unbounded": 1}
    X, y, Z, W = _one_treatment(seeds[shape], n=200, k=2, strength=strength)
    est = _fit(X, y, Z, W)
    ar = est.confidence_set(0)
    kinds = {1: "bounded" if np.isfinite(ar[0][0]) and np.isfinite(ar[0][1]) else "unbounded", 2: "two half-lines"}
    assert kinds[len(ar)] == shape and (shape != "unbounded" or ar == [(-np.inf, np.inf)])
    _assert_same_set(ar, _ivmodels_set(ivm, Z, X, y, W))
    _assert_same_set(est.confidence_set(0, method="CLR"), _ivmodels_set(ivm, Z, X, y, W, method="CLR"), rtol=1e-6)


def test_statistics_equal_ivmodels_one_treatment():
    pytest.importorskip("ivmodels")
    from ivmodels.tests import anderson_rubin_test, conditional_likelihood_ratio_test, lagrange_multiplier_test

    X, y, Z, W = _one_treatment(0)
    est = _fit(X, y, Z, W)
    for b0 in (0.5, 1.0, 2.0):
        beta = np.array([b0])
        for method, ref in (("AR", anderson_rubin_test), ("CLR", conditional_likelihood_ratio_test),
                            ("LM", lagrange_multiplier_test)):
            stat, p = est.weak_iv_test(b0, method=method)
            ref_stat, ref_p = ref(Z, X, y, beta, C=W)
            np.testing.assert_allclose(stat, ref_stat, rtol=1e-10)
            np.testing.assert_allclose(p, ref_p, rtol=1e-6, atol=1e-12)


def _two_treatments(seed=1, n=400, k=4, cov_type="nonrobust"):
    rng = np.random.RandomState(seed)
    Z = rng.normal(size=(n, k))
    W = rng.normal(size=(n, 1))
    U = rng.normal(size=(n, 2))
    X = Z @ rng.normal(size=(k, 2)) * 0.3 + U + rng.normal(size=(n, 2))
    y = X @ [1.0, -0.5] + W[:, 0] + U.sum(1) + rng.normal(size=n)
    return X, y, Z, W, _fit(X, y, Z, W, cov_type=cov_type)


def test_several_treatments_joint_and_subvector_equal_ivmodels():
    ivm = pytest.importorskip("ivmodels")
    from ivmodels.tests import anderson_rubin_test, conditional_likelihood_ratio_test, lagrange_multiplier_test

    X, y, Z, W, est = _two_treatments()
    b = np.array([0.8, -0.3])
    np.testing.assert_allclose(est.weak_iv_test(b), anderson_rubin_test(Z, X, y, b, C=W), rtol=1e-9)
    np.testing.assert_allclose(est.weak_iv_test(b, "LM"), lagrange_multiplier_test(Z, X, y, b, C=W), rtol=1e-9)
    # several coefficients jointly: CLR with the bound conditional on the smallest eigenvalue
    np.testing.assert_allclose(est.weak_iv_test(b, "CLR"), conditional_likelihood_ratio_test(
        Z, X, y, b, C=W, critical_values="kleibergen2007generalizing"), rtol=1e-6)
    for j in (0, 1):
        o = [1 - j]
        ref = anderson_rubin_test(Z, X[:, [j]], y, b[[j]], W=X[:, o], C=W)
        np.testing.assert_allclose(est.weak_iv_test(b[j], feature=j), ref, rtol=1e-9)
        ref = conditional_likelihood_ratio_test(Z, X[:, [j]], y, b[[j]], W=X[:, o], C=W,
                                                critical_values="kleibergen2007generalizing")
        np.testing.assert_allclose(est.weak_iv_test(b[j], "CLR", feature=j), ref, rtol=1e-6)
        _assert_same_set(est.confidence_set(j), _ivmodels_set(ivm, Z, X[:, [j]], y, W, nuisance=X[:, o]), 1e-8)
        _assert_same_set(est.confidence_set(j, "CLR"),
                         _ivmodels_set(ivm, Z, X[:, [j]], y, W, nuisance=X[:, o], method="CLR"), 1e-6)


# ------------------------------------------------------------------ robust tests hold their size
def _size(cov_type, draw, reps=300):
    rejections = {"ar": 0, "nonrobust_ar": 0}
    for r in range(reps):
        X, y, Z, groups = draw(np.random.RandomState(1000 + r))
        est = _fit(X, y, Z, cov_type=cov_type, **({} if groups is None else {"groups": groups}))
        rejections["ar"] += est.weak_iv_test(1.0)[1] < 0.05
        rejections["nonrobust_ar"] += _fit(X, y, Z).weak_iv_test(1.0)[1] < 0.05
    return {key: value / reps for key, value in rejections.items()}


def _heteroskedastic(rng, n=200, k=3):
    X, y, Z, _ = _one_treatment(rng.randint(2**31), n=n, k=k, strength=0.05, n_controls=1, het=True)
    return X, y, Z, None


def _clustered(rng, n_groups=60, size=5, k=2):
    g = np.repeat(np.arange(n_groups), size)
    Z = rng.normal(size=(n_groups, k))[g] + 0.3 * rng.normal(size=(n_groups * size, k))
    v = rng.normal(size=n_groups)[g] + rng.normal(size=g.size)
    e = 0.8 * v + rng.normal(size=n_groups)[g] * (1 + np.abs(Z[:, 0])) + 0.3 * rng.normal(size=g.size)
    x = Z @ np.full(k, 0.05) + v
    return x[:, None], 1.0 * x + e, Z, g


@pytest.mark.parametrize("cov_type, draw", [("HC1", _heteroskedastic), ("HC0", _heteroskedastic),
                                            ("cluster", _clustered)])
def test_robust_ar_holds_its_size_where_the_homoskedastic_one_does_not(cov_type, draw):
    rates = _size(cov_type, draw)
    # 300 draws: a standard error of 0.013 at 5%; the homoskedastic AR over-rejects on these designs
    assert rates["ar"] <= 0.09, rates
    assert rates["nonrobust_ar"] >= 0.12, rates


def test_robust_clr_and_lm_reduce_to_the_robust_ar_when_just_identified():
    X, y, Z, W = _one_treatment(2, k=1, het=True)
    est = _fit(X, y, Z, W, cov_type="HC1")
    ar, p_ar = est.weak_iv_test(1.3)
    for method in ("CLR", "LM"):
        stat, p = est.weak_iv_test(1.3, method=method)
        np.testing.assert_allclose([stat, p], [ar, p_ar], rtol=1e-8)


def test_robust_sets_are_unbounded_with_irrelevant_instruments_and_cover_the_estimate_when_strong():
    X, y, Z, W = _one_treatment(1, strength=0.0, het=True)
    sets = _fit(X, y, Z, W, cov_type="HC1").confidence_set(0)
    assert np.isinf(sets[0][0]) and np.isinf(sets[-1][1])
    X, y, Z, W = _one_treatment(0, strength=0.6, het=True)
    est = _fit(X, y, Z, W, cov_type="HC1")
    for method in ("AR", "CLR"):
        (lo, hi), = est.confidence_set(0, method=method)
        assert lo < est.coef_[0] < hi and hi - lo < 1.0
    # K is zero wherever AR is extremal (here also at its maximum far out), so LM sets can have a spurious piece
    lm = est.confidence_set(0, method="LM")
    assert any(lo < est.coef_[0] < hi for lo, hi in lm)


def test_projection_ar_of_one_of_several_treatments_contains_the_subvector_sets_coverage():
    X, y, Z, W, est = _two_treatments(cov_type="HC0")
    sets = est.confidence_set(0)
    stat, p = est.weak_iv_test(est.coef_[0], feature=0)
    assert p > 0.05 and any(lo <= est.coef_[0] <= hi for lo, hi in sets)


# ------------------------------------------------------------------ effective F and its critical value
def test_effective_f_equals_first_stage_f_with_one_instrument():
    X, y, Z, W = _one_treatment(0, k=1)
    est = _fit(X, y, Z, W)
    np.testing.assert_allclose(est.effective_f_, est.first_stage_f_[0], rtol=1e-12)
    robust = _fit(X, y, Z, W, cov_type="HC1")
    np.testing.assert_allclose(robust.effective_f_, robust.first_stage_f_robust_[0], rtol=1e-10)
    # Montiel Olea–Pflueger's simplified 10% critical value with one instrument (their table: 23.109)
    np.testing.assert_allclose(est.effective_f_critical_value_, 23.109, atol=1e-3)


def test_effective_f_formula_under_heteroskedasticity():
    X, y, Z, W = _one_treatment(4, k=3, het=True)
    est = _fit(X, y, Z, W, cov_type="HC0")
    # textbook form on the raw instruments: F = π̂ᵀ Z̃ᵀZ̃ π̂ / tr(Σ̂ Z̃ᵀZ̃), Σ̂ the HC0 covariance of π̂
    C = np.column_stack([np.ones(len(y)), W])
    res = lambda A: A - C @ np.linalg.lstsq(C, A, rcond=None)[0]  # noqa: E731
    Zt, xt = res(Z), res(X[:, 0])
    pi, *_ = np.linalg.lstsq(Zt, xt, rcond=None)
    v = xt - Zt @ pi
    bread = np.linalg.inv(Zt.T @ Zt)
    Sigma = bread @ (Zt.T * v**2) @ Zt @ bread
    np.testing.assert_allclose(est.effective_f_, pi @ Zt.T @ Zt @ pi / np.trace(Sigma @ Zt.T @ Zt), rtol=1e-10)
    # K_eff from the eigenvalues of Σ̂ in the orthonormal instrument basis, then the non-central χ² quantile
    ev = np.linalg.eigvalsh(np.linalg.cholesky(Zt.T @ Zt).T @ Sigma @ np.linalg.cholesky(Zt.T @ Zt))
    k_eff = ev.sum() ** 2 * 21 / (np.sum(ev**2) + 20 * ev.sum() * ev.max())
    np.testing.assert_allclose(est.effective_f_critical_value_, ncx2.ppf(0.95, k_eff, 10 * k_eff) / k_eff,
                               rtol=1e-8)


def test_kleibergen_paap_lm_is_n_r2_under_nonrobust():
    X, y, Z, W = _one_treatment(0)
    est = _fit(X, y, Z, W)
    C = np.column_stack([np.ones(len(y)), W])
    res = lambda A: A - C @ np.linalg.lstsq(C, A, rcond=None)[0]  # noqa: E731
    Zt, xt = res(Z), res(X[:, 0])
    fitted = Zt @ np.linalg.lstsq(Zt, xt, rcond=None)[0]
    np.testing.assert_allclose(est.kleibergen_paap_lm_[0], len(y) * (fitted @ fitted) / (xt @ xt), rtol=1e-10)


# ------------------------------------------------------------------ effect_confidence_set
@pytest.mark.parametrize("cov_type", ["nonrobust", "HC1"])
@pytest.mark.parametrize("method", ["AR", "CLR"])
def test_effect_confidence_set_with_one_treatment_equals_the_2sls_set(cov_type, method):
    X, y, Z, W = _one_treatment(3, k=2, strength=0.1)
    tsls = _fit(X, y, Z, W, cov_type=cov_type)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        guided = InstrumentGuidedIVRegressor(cov_type=cov_type).fit(X, y, Z=Z, W=W)
    ours, ref = guided.effect_confidence_set([1.0], method=method), tsls.confidence_set(0, method=method)
    _assert_same_set(ours, ref, rtol=1e-7)
    # the effect of a doubled shift is twice as large
    _assert_same_set(guided.effect_confidence_set([2.0], method=method), [(2 * a, 2 * b) for a, b in ref], 1e-7)


def test_effect_confidence_set_many_treatments_covers_the_identified_effect():
    from sklearn_frontier.datasets import make_iv_many_treatments

    X, y, Z, truth = make_iv_many_treatments(n_samples=1000, n_features=20, random_state=0)
    est = InstrumentGuidedIVRegressor(cov_type="nonrobust").fit(X, y, Z=Z)
    shift = est.recommend_intervention().shift
    (lo, hi), = est.effect_confidence_set(shift)
    assert lo < truth["identified_coef"] @ shift < hi
    assert lo < est.intervention_effect(shift)[0] < hi


# ------------------------------------------------------------------ user workflow and bad input
def test_pandas_names_and_pipeline_workflow():
    pd = pytest.importorskip("pandas")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X, y, Z, W = _one_treatment(0)
    Xd = pd.DataFrame({"educ": X[:, 0]})
    pipe = make_pipeline(FunctionTransformer(), TwoStageLeastSquares(cov_type="HC1"))
    pipe.fit(Xd, y, twostageleastsquares__Z=pd.DataFrame(Z, columns=["z0", "z1", "z2"]),
             twostageleastsquares__W=W)
    est = pipe[-1]
    assert est.confidence_set("educ") == est.confidence_set(0)
    assert est.weak_iv_test(1.0, feature="educ") == est.weak_iv_test([1.0])


def test_bad_input_names_the_parameter():
    X, y, Z, W, est = _two_treatments()
    with pytest.raises(ValueError, match="beta0 must be finite with length 2"):
        est.weak_iv_test([1.0])
    with pytest.raises(ValueError, match="beta0 must be finite with length 1"):
        est.weak_iv_test([1.0, 2.0], feature=0)
    with pytest.raises(ValueError, match="method must be one of"):
        est.weak_iv_test([1.0, 2.0], method="Wald")
    with pytest.raises(ValueError, match="method must be one of"):
        est.confidence_set(0, method="ar")
    with pytest.raises(ValueError, match="feature must be a column index"):
        est.confidence_set(5)
    with pytest.raises(ValueError, match="alpha must be in"):
        est.confidence_set(0, alpha=1.5)
    with pytest.raises(ValueError, match="method='LM'"):
        est.weak_iv_test(1.0, method="LM", feature=0)
    robust = _fit(X, y, Z, W, cov_type="HC1")
    with pytest.raises(ValueError, match="use method='AR'"):
        robust.confidence_set(0, method="CLR")
    with pytest.raises(ValueError, match="fitted without instruments"):
        TwoStageLeastSquares().fit(X, y).weak_iv_test([0.0, 0.0])


def test_ar_with_more_instruments_than_samples_refuses():
    rng = np.random.RandomState(0)
    n, k = 12, 6
    Z = rng.normal(size=(n, k))
    x = Z.sum(1) + rng.normal(size=n)
    y = x + rng.normal(size=n)
    # frequency weights summing to fewer samples than instruments plus the intercept
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = TwoStageLeastSquares(cov_type="nonrobust").fit(x[:, None], y, Z=Z, sample_weight=np.full(n, 0.5))
    with pytest.raises(ValueError, match="n_instruments=6"):
        est.weak_iv_test(1.0)
    with pytest.raises(ValueError, match="more samples than instruments"):
        est.confidence_set(0)


def test_cluster_robust_needs_more_clusters_than_instruments():
    X, y, Z, _ = _clustered(np.random.RandomState(0), n_groups=3, size=20, k=3)
    est = TwoStageLeastSquares(cov_type="cluster").fit(X, y, Z=Z, groups=np.repeat(np.arange(3), 20))
    with pytest.raises(ValueError, match="groups has 3 clusters"):
        est.weak_iv_test(1.0)


# ------------------------------------------------------------------ the summary table
def test_summary_shows_the_weak_iv_block_like_ivreg2():
    mroz = pytest.importorskip("linearmodels.datasets.mroz")
    d = mroz.load().dropna(subset=["lwage"])
    est = TwoStageLeastSquares(cov_type="nonrobust").fit(d[["educ"]], d["lwage"], Z=d[["fatheduc", "motheduc"]],
                                                         W=d[["exper", "expersq"]])
    summary = est.summary(alpha=0.1)
    text = str(summary)
    for label in ("AR 90% set, educ", "CLR 90% set, educ", "Effective F (Montiel Olea-Pflueger)",
                  "critical value, 10% worst-case bias", "Kleibergen-Paap rk LM", "Kleibergen-Paap rk Wald F",
                  "Hansen J"):
        assert label in text
    ar, clr = summary.weak_iv_sets
    assert (ar.method, clr.method, ar.name) == ("AR", "CLR", "educ")
    assert ar.intervals == est.confidence_set("educ", alpha=0.1)
    lo, hi = ar.intervals[0]
    assert f"[{lo:.4f}, {hi:.4f}]" in text
    # one excluded instrument short of the treatments' strength: an unbounded set is written out
    X, y, Z, W = _one_treatment(1, n=200, k=2, strength=0.0)
    assert "(-inf, inf)" in str(_fit(X, y, Z, W).summary())
    robust = str(_fit(X, y, Z, W, cov_type="HC1").summary())
    assert "robust AR 95% set, x0" in robust and "robust CLR 95% set, x0" in robust
    # a representation's single coefficients depend on its rotation: no per-component sets
    guided = InstrumentGuidedIVRegressor(cov_type="nonrobust").fit(X, y, Z=Z, W=W)
    assert guided.summary().weak_iv_sets == [] and "AR 95% set" not in str(guided.summary())


# ------------------------------------------------------------------ known answers: weights, projection, invariance
@pytest.mark.parametrize("cov_type", ["nonrobust", "HC1"])
def test_frequency_weights_equal_repeated_rows(cov_type):
    X, y, Z, W = _one_treatment(5, n=120, k=2, strength=0.2)
    w = np.random.RandomState(0).randint(1, 4, size=len(y))
    rows = np.repeat(np.arange(len(y)), w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        weighted = TwoStageLeastSquares(cov_type=cov_type).fit(X, y, Z=Z, W=W, sample_weight=w)
    repeated = _fit(X[rows], y[rows], Z[rows], W[rows], cov_type=cov_type)
    for method in ("AR", "CLR", "LM"):
        np.testing.assert_allclose(weighted.weak_iv_test(1.2, method), repeated.weak_iv_test(1.2, method), rtol=1e-9)
    _assert_same_set(weighted.confidence_set(0), repeated.confidence_set(0), rtol=1e-8)
    np.testing.assert_allclose(weighted.effective_f_, repeated.effective_f_, rtol=1e-10)


def test_projection_ar_is_the_minimum_over_the_other_coefficient():
    X, y, Z, W, est = _two_treatments(cov_type="HC0")
    stat, _ = est.weak_iv_test(1.3, feature=0)
    grid = np.linspace(-3.0, 2.0, 2001)
    brute = min(est.weak_iv_test([1.3, g])[0] for g in grid)
    assert stat <= brute + 1e-9 and stat >= brute - 1e-3 * brute


def test_tests_do_not_depend_on_the_instruments_basis():
    X, y, Z, W = _one_treatment(6, k=3, het=True)
    A = np.random.RandomState(1).normal(size=(3, 3))
    for cov_type in ("nonrobust", "HC1"):
        a, b = _fit(X, y, Z, W, cov_type=cov_type), _fit(X, y, Z @ A + 5.0, W, cov_type=cov_type)
        for method in ("AR", "CLR", "LM"):
            np.testing.assert_allclose(a.weak_iv_test(0.7, method), b.weak_iv_test(0.7, method), rtol=1e-8)
        np.testing.assert_allclose(a.effective_f_, b.effective_f_, rtol=1e-8)


# ------------------------------------------------------------------ k-class and absorbed fixed effects flow in
@pytest.mark.parametrize("cov_type", ["nonrobust", "HC1", "cluster"])
def test_kclass_and_absorbed_fixed_effects_share_the_weak_iv_inference(cov_type):
    from sklearn_frontier.iv import KClassIVRegressor

    rng = np.random.RandomState(7)
    n, levels = 300, 12
    fe = rng.randint(0, levels, size=n)
    X, y, Z, W = _one_treatment(7, n=n, k=2, strength=0.15, n_controls=1, het=True)
    y = y + np.linspace(-2, 2, levels)[fe]
    X = X + np.linspace(1, -1, levels)[fe][:, None]
    # clusters that do not nest the fixed effects (nested ones drop out of the small-sample factor, as in pyfixest)
    groups = rng.randint(0, 30, size=n) if cov_type == "cluster" else None
    dummies = (fe[:, None] == np.arange(1, levels)).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        tsls = TwoStageLeastSquares(cov_type=cov_type).fit(X, y, Z=Z, W=W, groups=groups)
        liml = KClassIVRegressor(kappa="liml", cov_type=cov_type).fit(X, y, Z=Z, W=W, groups=groups)
        absorbed = TwoStageLeastSquares(cov_type=cov_type).fit(X, y, Z=Z, W=W, groups=groups, absorb=fe)
        with_dummies = TwoStageLeastSquares(cov_type=cov_type).fit(X, y, Z=Z, W=np.column_stack([W, dummies]),
                                                                   groups=groups)
    # the weak-IV tests do not depend on the estimator of the coefficient
    for method in ("AR", "CLR", "LM"):
        np.testing.assert_allclose(liml.weak_iv_test(0.8, method), tsls.weak_iv_test(0.8, method), rtol=1e-9)
    _assert_same_set(liml.confidence_set(0), tsls.confidence_set(0), rtol=1e-7)
    # absorbing the fixed effects equals putting their dummies among the controls
    np.testing.assert_allclose(absorbed.weak_iv_test(0.8), with_dummies.weak_iv_test(0.8), rtol=1e-7)
    _assert_same_set(absorbed.confidence_set(0), with_dummies.confidence_set(0), rtol=1e-6)
    np.testing.assert_allclose(absorbed.effective_f_, with_dummies.effective_f_, rtol=1e-7)


def test_robust_statistics_approach_the_homoskedastic_ones_under_homoskedasticity():
    rng = np.random.RandomState(0)
    n, k = 20000, 3
    Z = rng.normal(size=(n, k))
    V = rng.normal(size=(n, 2))
    X = Z @ rng.normal(size=(k, 2)) * 0.05 + V
    y = X @ [1.0, 0.5] + V @ [0.6, 0.3] + rng.normal(size=n)
    plain, robust = _fit(X, y, Z), _fit(X, y, Z, cov_type="HC0")
    one_plain, one_robust = _fit(X[:, :1], y, Z), _fit(X[:, :1], y, Z, cov_type="HC0")
    for b0 in (0.8, 1.0, 1.3):
        np.testing.assert_allclose(robust.weak_iv_test([b0, 0.5])[0], plain.weak_iv_test([b0, 0.5])[0], rtol=0.05)
        np.testing.assert_allclose(robust.weak_iv_test([b0, 0.5], "LM")[0], plain.weak_iv_test([b0, 0.5], "LM")[0],
                                   rtol=0.05)
        for method in ("CLR", "LM"):
            np.testing.assert_allclose(one_robust.weak_iv_test(b0, method)[0], one_plain.weak_iv_test(b0, method)[0],
                                       rtol=0.05)


def test_weak_iv_inference_survives_pickle_and_skops():
    import pickle

    from sklearn_frontier import persistence

    X, y, Z, W = _one_treatment(0, k=2, strength=0.1)
    est = _fit(X, y, Z, W, cov_type="HC1")
    before = est.confidence_set(0), est.weak_iv_test(1.0, "CLR"), str(est.summary())
    import io

    buffer = io.BytesIO()
    persistence.dump(est, buffer)
    buffer.seek(0)
    for restored in (pickle.loads(pickle.dumps(est)), persistence.load(buffer)):
        after = restored.confidence_set(0), restored.weak_iv_test(1.0, "CLR"), str(restored.summary())
        assert after == before
    # a refit is a new design: its sets are computed afresh, not read from the first fit's
    est.fit(X[:150], y[:150], Z=Z[:150], W=W[:150])
    assert est.confidence_set(0) == _fit(X[:150], y[:150], Z[:150], W[:150], cov_type="HC1").confidence_set(0)
    assert est.confidence_set(0) != before[0]
