"""Known-answer tests of the linear instrument-guided IV estimators."""

import warnings

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cross_decomposition import PLSSVD
from sklearn.decomposition import PCA
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import Pipeline
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_frontier.datasets import make_iv_many_treatments
from sklearn_frontier.exceptions import IVScoreWarning, UnidentifiedInterventionWarning, WeakInstrumentWarning
from sklearn_frontier.iv import (
    InstrumentGuidedIVRegressor,
    InstrumentGuidedRepresentation,
    PCATwoStageLeastSquares,
    TwoStageLeastSquares,
    make_pca_2sls,
    projected_mse,
)
from sklearn_frontier.iv import representation_effect_error as m1_error


def _design(n, p, k, seed=0, confounded=True):
    rng = np.random.RandomState(seed)
    Z = rng.normal(size=(n, k))
    H = rng.normal(size=n)
    X = Z @ rng.normal(size=(k, p)) + rng.normal(size=(n, p)) + (H[:, None] if confounded else 0)
    y = X @ rng.normal(size=p) + 2 * H + rng.normal(size=n) + 3.0
    return X, y, Z


def _centred(*arrays):
    return [a - a.mean(axis=0) for a in arrays]


def _proj(A):
    """Orthogonal projector onto col(A) (dense, tests only)."""
    q, _ = np.linalg.qr(A)
    return q @ q.T


def _span_distance(A, B):
    return np.linalg.norm(_proj(A) - _proj(B), 2)


# 1. Minimum-norm equivalence ----------------------------------------------------------------------------
@pytest.mark.parametrize("n,p,k", [(500, 30, 4), (60, 200, 3)])
def test_full_rank_coef_is_minimum_norm_iv_solution(n, p, k):
    X, y, Z = _design(n, p, k)
    reg = InstrumentGuidedIVRegressor().fit(X, y, Z=Z)
    assert reg.n_components_ == k
    Xc, Zc, yc = _centred(X, Z, y)
    closed_form = Xc.T @ Zc @ np.linalg.solve(Zc.T @ Xc @ Xc.T @ Zc, Zc.T @ yc)
    hat = Zc @ np.linalg.solve(Zc.T @ Zc, Zc.T)  # dense hat matrix P_Z
    lstsq = np.linalg.lstsq(hat @ Xc, yc, rcond=None)[0]
    np.testing.assert_allclose(reg.coef_, closed_form, rtol=1e-10, atol=1e-12 * np.abs(closed_form).max())
    np.testing.assert_allclose(reg.coef_, lstsq, rtol=1e-10, atol=1e-12 * np.abs(lstsq).max())
    np.testing.assert_allclose(reg.intercept_, y.mean() - X.mean(axis=0) @ reg.coef_, rtol=1e-12)


# 2. r < k -------------------------------------------------------------------------------------------------
def test_reduced_rank_is_truncated_svd_and_generic_2sls():
    X, y, Z = _design(300, 12, 4, seed=1)
    r = 2
    reg = InstrumentGuidedIVRegressor(r).fit(X, y, Z=Z)
    Xc, Zc, yc = _centred(X, Z, y)
    PZ = _proj(Zc)
    U, S, Vt = np.linalg.svd(PZ @ Xc, full_matrices=False)
    truncated = Vt[:r].T @ ((U[:, :r].T @ yc) / S[:r])
    np.testing.assert_allclose(reg.coef_, truncated, rtol=1e-10, atol=1e-13)
    W = reg.identified_subspace_
    D = Xc @ W
    Dhat = PZ @ D
    generic = W @ np.linalg.solve(Dhat.T @ D, Dhat.T @ yc)
    np.testing.assert_allclose(reg.coef_, generic, rtol=1e-10, atol=1e-13)
    pipe = Pipeline([("rep", InstrumentGuidedRepresentation(r)), ("iv", TwoStageLeastSquares())])
    pipe.fit(X, y, rep__Z=Z, iv__Z=Z)
    np.testing.assert_allclose(pipe.predict(X), reg.predict(X), rtol=1e-10, atol=1e-10)


# 3. Spans -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("r", [1, 2, 3])
def test_unwhitened_span_is_plssvd(r):
    X, _, Z = _design(200, 10, 3, seed=2)
    rep = InstrumentGuidedRepresentation(r, whiten_instruments=False).fit(X, Z=Z)
    pls = PLSSVD(r, scale=False).fit(X, Z)
    assert _span_distance(rep.components_.T, pls.x_weights_) <= 1e-10


def test_whitened_spans():
    X, _, Z = _design(200, 10, 3, seed=3)
    full = InstrumentGuidedRepresentation(3).fit(X, Z=Z)
    pls = PLSSVD(3, scale=False).fit(X, Z)
    assert _span_distance(full.components_.T, pls.x_weights_) <= 1e-10
    Xc, Zc = _centred(X, Z)
    top = np.linalg.svd(_proj(Zc) @ Xc, full_matrices=False)[2][:2].T
    rep = InstrumentGuidedRepresentation(2).fit(X, Z=Z)
    assert _span_distance(rep.components_.T, top) <= 1e-10
    np.testing.assert_allclose(rep.components_ @ rep.components_.T, np.eye(2), atol=1e-12)


# 4. Invariances -------------------------------------------------------------------------------------------
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.floats(0.1, 10), shift=st.floats(-5, 5))
def test_invariances(seed, scale, shift):
    X, y, Z = _design(80, 7, 3, seed=seed)
    rng = np.random.RandomState(seed + 1)
    base = InstrumentGuidedIVRegressor(2).fit(X, y, Z=Z)
    T = rng.normal(size=(3, 3)) + 3 * np.eye(3)
    moved = InstrumentGuidedIVRegressor(2).fit(X, y, Z=Z @ T + rng.normal(size=3))
    np.testing.assert_allclose(moved.coef_, base.coef_, rtol=1e-7, atol=1e-9)
    Q = np.linalg.qr(rng.normal(size=(7, 7)))[0]
    rotated = InstrumentGuidedIVRegressor(2).fit(X @ Q, y, Z=Z)
    np.testing.assert_allclose(rotated.coef_, Q.T @ base.coef_, rtol=1e-7, atol=1e-9)
    perm = rng.permutation(80)
    permuted = InstrumentGuidedIVRegressor(2).fit(X[perm], y[perm], Z=Z[perm])
    np.testing.assert_allclose(permuted.coef_, base.coef_, rtol=1e-9, atol=1e-11)
    affine = InstrumentGuidedIVRegressor(2).fit(X, scale * y + shift, Z=Z)
    np.testing.assert_allclose(affine.coef_, scale * base.coef_, rtol=1e-8, atol=1e-10)


def test_integer_weights_equal_repeated_rows():
    X, y, Z = _design(40, 6, 3, seed=4)
    w = np.random.RandomState(0).randint(0, 4, size=40)
    w[:5] = 1
    a = InstrumentGuidedIVRegressor(2).fit(X, y, Z=Z, sample_weight=w)
    rep = np.repeat(np.arange(40), w)
    b = InstrumentGuidedIVRegressor(2).fit(X[rep], y[rep], Z=Z[rep])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.representation_cov_, b.representation_cov_, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(a.first_stage_f_, b.first_stage_f_, rtol=1e-9)
    np.testing.assert_allclose(a.cragg_donald_, b.cragg_donald_, rtol=1e-9)


# 5. Fallback (Z=None) -------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,p", [(100, 6), (20, 50)])
def test_no_instruments_is_pca_and_ols(n, p):
    X, y, _ = _design(n, p, 2, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rep = InstrumentGuidedRepresentation(3).fit(X)
        reg = InstrumentGuidedIVRegressor().fit(X, y)
        tsls = TwoStageLeastSquares().fit(X, y)
        pca2 = PCATwoStageLeastSquares().fit(X, y)
    pca = PCA(3).fit(X)
    assert _span_distance(rep.components_.T, pca.components_.T) <= 1e-10
    np.testing.assert_allclose(rep.first_stage_singular_values_ ** 2, pca.explained_variance_ * (n - 1) / n,
                               rtol=1e-10)
    assert not rep.instruments_supplied_ and not reg.instruments_supplied_
    if n > p:
        expected = LinearRegression().fit(X, y).coef_
    else:
        Xc, yc = _centred(X, y)
        expected = np.linalg.pinv(Xc) @ yc
    for est in (reg, tsls, pca2):
        np.testing.assert_allclose(est.coef_, expected, rtol=1e-8, atol=1e-10)


# 6. Known effect on G1 ------------------------------------------------------------------------------------
def _median_errors(angle, n, seeds=range(5), p=40):
    ig, pca, ig_ptheta = [], [], []
    for seed in seeds:
        X, y, Z, truth = make_iv_many_treatments(n, p, 3, angle=angle, random_state=seed)
        a = InstrumentGuidedIVRegressor().fit(X, y, Z=Z)
        b = PCATwoStageLeastSquares().fit(X, y, Z=Z)
        ig.append(m1_error(a, truth))
        pca.append(m1_error(b, truth))
        P = truth["instrumented_basis"] @ truth["instrumented_basis"].T
        ig_ptheta.append(np.linalg.norm(P @ a.coef_ - truth["identified_coef"])
                         / np.linalg.norm(truth["identified_coef"]))
    return np.median(ig), np.median(pca), np.median(ig_ptheta)


def test_known_effect_instrument_guided_beats_pca():
    ig70, pca70, ig70_pt = _median_errors(70, 3000)
    assert ig70 <= 0.2 * pca70, (ig70, pca70)
    ig0, pca0, _ = _median_errors(0, 3000)
    assert 0.5 <= ig0 / pca0 <= 2, (ig0, pca0)
    ig_big, pca_big, ig_big_pt = _median_errors(70, 16 * 3000)
    assert ig_big_pt <= ig70_pt / 2, (ig70_pt, ig_big_pt)  # consistent
    assert pca_big >= 0.7 * pca70, (pca70, pca_big)  # PCA's error is bias: it does not shrink with n


# 7. Inference ---------------------------------------------------------------------------------------------
def test_covariances_match_formulas():
    X, y, Z = _design(150, 8, 3, seed=6)
    r = 2
    fits = {c: InstrumentGuidedIVRegressor(r, cov_type=c).fit(X, y, Z=Z) for c in ("HC0", "HC1", "nonrobust")}
    reg = fits["HC0"]
    Xc, Zc, yc = _centred(X, Z, y)
    D = Xc @ reg.identified_subspace_
    PZ = _proj(Zc)
    Dhat = PZ @ D
    bread = np.linalg.inv(Dhat.T @ Dhat)
    b = bread @ Dhat.T @ yc
    np.testing.assert_allclose(reg.representation_coef_, b, rtol=1e-10)
    e = yc - D @ b
    hc0 = bread @ (Dhat.T * e**2) @ Dhat @ bread
    n = X.shape[0]
    tol = dict(rtol=1e-9, atol=1e-12 * np.abs(hc0).max())
    np.testing.assert_allclose(fits["HC0"].representation_cov_, hc0, **tol)
    np.testing.assert_allclose(fits["HC1"].representation_cov_, hc0 * n / (n - r - 1), **tol)
    np.testing.assert_allclose(fits["nonrobust"].representation_cov_, e @ e / (n - r - 1) * bread, **tol)
    np.testing.assert_allclose(fits["HC1"].representation_stderr_, np.sqrt(np.diag(hc0 * n / (n - r - 1))),
                               rtol=1e-9)
    # partial first-stage F of each learned direction on Z (with intercept)
    for j in range(r):
        fitted = PZ @ D[:, j]
        rss = np.sum((D[:, j] - fitted) ** 2)
        F = (np.sum(fitted**2) / 3) / (rss / (n - 3 - 1))
        np.testing.assert_allclose(reg.first_stage_f_[j], F, rtol=1e-9)


def test_tsls_matches_linearmodels():
    linearmodels = pytest.importorskip("linearmodels")
    X, y, Z = _design(200, 2, 3, seed=7)
    ours = TwoStageLeastSquares().fit(X, y, Z=Z)
    exog = np.ones((200, 1))
    res = linearmodels.IV2SLS(y, exog, X, Z).fit(cov_type="robust", debiased=True)
    np.testing.assert_allclose(ours.coef_, np.asarray(res.params)[1:], rtol=1e-8)


def test_tsls_formula_and_weights():
    X, y, Z = _design(200, 2, 3, seed=8)
    est = TwoStageLeastSquares(cov_type="HC0").fit(X, y, Z=Z)
    Xc, Zc, yc = _centred(X, Z, y)
    Xhat = _proj(Zc) @ Xc
    bread = np.linalg.inv(Xhat.T @ Xhat)
    coef = bread @ Xhat.T @ yc
    np.testing.assert_allclose(est.coef_, coef, rtol=1e-10)
    e = yc - Xc @ coef
    np.testing.assert_allclose(est.cov_, bread @ (Xhat.T * e**2) @ Xhat @ bread, rtol=1e-9)
    np.testing.assert_allclose(est.stderr_, np.sqrt(np.diag(est.cov_)))
    no_intercept = TwoStageLeastSquares(fit_intercept=False).fit(X, y, Z=Z)
    Xh = _proj(Z) @ X
    np.testing.assert_allclose(no_intercept.coef_, np.linalg.solve(Xh.T @ X, Xh.T @ y), rtol=1e-10)
    assert no_intercept.intercept_ == 0.0


def test_sample_split_runs_second_stage_on_other_half():
    X, y, Z, truth = make_iv_many_treatments(2000, 30, 3, angle=50, random_state=0)
    reg = InstrumentGuidedIVRegressor(split="sample", random_state=0).fit(X, y, Z=Z)
    assert m1_error(reg, truth) < 0.2
    again = InstrumentGuidedIVRegressor(split="sample", random_state=0).fit(X, y, Z=Z)
    np.testing.assert_array_equal(reg.coef_, again.coef_)
    rng = np.random.RandomState(0)
    perm = rng.permutation(2000)
    first, second = np.sort(perm[:1000]), np.sort(perm[1000:])
    rep = InstrumentGuidedRepresentation().fit(X[first], Z=Z[first])
    np.testing.assert_allclose(reg.identified_subspace_, rep.components_.T, atol=1e-12)
    tsls = TwoStageLeastSquares().fit(rep.transform(X[second]), y[second], Z=Z[second])
    np.testing.assert_allclose(reg.representation_coef_, tsls.coef_, rtol=1e-10)
    np.testing.assert_allclose(reg.representation_cov_, tsls.cov_, rtol=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("split", ["none", "sample"])
def test_interval_coverage(split):
    covered = []
    for seed in range(300):
        X, y, Z, truth = make_iv_many_treatments(2000, 40, 3, angle=50, random_state=seed)
        reg = InstrumentGuidedIVRegressor(split=split, random_state=seed).fit(X, y, Z=Z)
        delta = truth["instrumented_basis"][:, 0]
        lo, hi = reg.intervention_effect_interval(delta)[0]
        covered.append(lo <= truth["coef"] @ delta <= hi)
    assert 0.91 <= np.mean(covered) <= 0.98, np.mean(covered)


# 8. Weak IV and interventions -----------------------------------------------------------------------------
def test_weak_instruments_warn():
    X, y, Z, _ = make_iv_many_treatments(1000, 20, 3, instrument_strength=(1, 1, 0.02), random_state=0)
    with pytest.warns(WeakInstrumentWarning, match="singular values"):
        reg = InstrumentGuidedIVRegressor().fit(X, y, Z=Z)
    assert reg.first_stage_f_.min() < 10 and reg.cragg_donald_ < 10
    with pytest.warns(WeakInstrumentWarning):
        PCATwoStageLeastSquares().fit(X, y, Z=Z)
    X, y, Z, _ = make_iv_many_treatments(1000, 20, 3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        strong = InstrumentGuidedIVRegressor().fit(X, y, Z=Z)
    assert strong.cragg_donald_ > 10
    r1 = InstrumentGuidedIVRegressor(1).fit(X, y, Z=Z)
    np.testing.assert_allclose(r1.cragg_donald_, r1.first_stage_f_[0], rtol=1e-9)


def test_interventions():
    X, y, Z, truth = make_iv_many_treatments(1000, 20, 3, random_state=1)
    reg = InstrumentGuidedIVRegressor().fit(X, y, Z=Z)
    rec = reg.recommend_intervention()
    np.testing.assert_allclose(rec.effect, np.linalg.norm(reg.representation_coef_), rtol=1e-12)
    np.testing.assert_allclose(reg.intervention_effect(rec.shift)[0], rec.effect, rtol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(rec.shift), 1.0)
    lo, hi = reg.intervention_effect_interval(rec.shift)[0]
    np.testing.assert_allclose([(hi - lo) / 2], [1.959963984540054 * rec.stderr], rtol=1e-9)
    W = reg.identified_subspace_
    outside = np.random.RandomState(0).normal(size=20)
    outside -= W @ (W.T @ outside)
    np.testing.assert_allclose(reg.identified_fraction(outside), [0.0], atol=1e-12)
    with pytest.warns(UnidentifiedInterventionWarning, match="identified_fraction"):
        reg.intervention_effect(outside)
    inside = truth["instrumented_basis"]
    effects = reg.intervention_effect(inside.T)
    assert effects.shape == (3,)
    lo_hi = reg.intervention_effect_interval(inside.T, alpha=1e-4)  # ~3.9 standard errors
    truth_effects = inside.T @ truth["coef"]
    assert np.all((lo_hi[:, 0] <= truth_effects) & (truth_effects <= lo_hi[:, 1])), (lo_hi, truth_effects)
    np.testing.assert_allclose(reg.intervention_effect(np.eye(3), space="D"), reg.representation_coef_)
    with pytest.raises(ValueError, match="delta"):
        reg.intervention_effect(np.ones(3))
    with pytest.raises(ValueError, match="alpha"):
        reg.intervention_effect_interval(rec.shift, alpha=1.5)
    with pytest.raises(ValueError, match="space"):
        reg.intervention_effect(rec.shift, space="Y")


# 9. Scoring -----------------------------------------------------------------------------------------------
def test_projected_mse_formula():
    rng = np.random.RandomState(0)
    y, yhat, Z = rng.normal(size=50), rng.normal(size=50), rng.normal(size=(50, 3))
    A = np.column_stack([np.ones(50), Z])
    H = A @ np.linalg.solve(A.T @ A, A.T)
    np.testing.assert_allclose(projected_mse(y, yhat, Z=Z), np.sum((H @ (y - yhat)) ** 2) / 50, rtol=1e-12)
    w = rng.randint(1, 3, size=50)
    rep = np.repeat(np.arange(50), w)
    np.testing.assert_allclose(projected_mse(y, yhat, Z=Z, sample_weight=w),
                               projected_mse(y[rep], yhat[rep], Z=Z[rep]), rtol=1e-12)
    with pytest.raises(ValueError, match="enable metadata routing"):
        projected_mse(y, yhat)


def _confounded_1d(n, seed):
    rng = np.random.RandomState(seed)
    z = rng.normal(size=n)
    u = rng.normal(size=n)
    x = z + u
    y = 1.0 * x + 2.0 * u + 0.5 * rng.normal(size=n)
    return x[:, None], y, z[:, None]


def test_r2_prefers_ols_projected_mse_prefers_2sls():
    X, y, Z = _confounded_1d(4000, 0)
    Xt, yt, Zt = _confounded_1d(4000, 1)
    ols = LinearRegression().fit(X, y)
    iv = TwoStageLeastSquares().fit(X, y, Z=Z)
    assert abs(iv.coef_[0] - 1.0) < 0.1 and ols.coef_[0] > 1.5
    with pytest.warns(IVScoreWarning):
        r2_iv = iv.score(Xt, yt)
    assert ols.score(Xt, yt) > r2_iv
    ols_pmse = -projected_mse(yt, ols.predict(Xt), Z=Zt)
    assert iv.score(Xt, yt, Z=Zt) > ols_pmse


# Bad input ------------------------------------------------------------------------------------------------
def test_bad_instruments():
    X, y, Z = _design(100, 6, 2)
    reg = InstrumentGuidedIVRegressor()
    with pytest.raises(ValueError, match="Z has 99 samples but X has 100"):
        reg.fit(X, y, Z=Z[:99])
    for value in (np.nan, np.inf):
        Zbad = Z.copy()
        Zbad[3, 1] = value
        with pytest.raises(ValueError, match="Z"):
            reg.fit(X, y, Z=Zbad)
    with pytest.raises(ValueError, match="Z"):
        reg.fit(X, y, Z=Z.astype(complex))
    with pytest.raises(ValueError, match="Z"):
        reg.fit(X, y, Z=np.full((100, 2), "a", dtype=object))
    with pytest.raises(ValueError, match="Z.ndim"):
        reg.fit(X, y, Z=Z[:, :, None])
    import scipy.sparse as sp

    with pytest.raises(TypeError, match="Z"):
        reg.fit(X, y, Z=sp.csr_matrix(Z))
    with pytest.raises(ValueError, match="no variation"):
        reg.fit(X, y, Z=np.ones((100, 2)))
    with pytest.raises(ValueError, match="n_samples.*Z"):
        reg.fit(X[:3], y[:3], Z=Z[:3])
    with pytest.raises(ValueError, match="n_components=3.*2"):
        InstrumentGuidedIVRegressor(3).fit(X, y, Z=Z)
    with pytest.warns(UserWarning, match="rank deficient"):
        InstrumentGuidedIVRegressor().fit(X, y, Z=np.column_stack([Z, Z[:, 0]]))
    one_d = InstrumentGuidedIVRegressor().fit(X, y, Z=Z[:, 0])
    assert one_d.n_instruments_ == 1
    with pytest.raises(ValueError, match="under-identified"):
        TwoStageLeastSquares().fit(X, y, Z=Z)
    with pytest.raises(InvalidParameterError):
        InstrumentGuidedIVRegressor(0).fit(X, y, Z=Z)
    with pytest.raises(InvalidParameterError):
        InstrumentGuidedIVRegressor(cov_type="HC3").fit(X, y, Z=Z)
    with pytest.raises(ValueError, match="n_components"):
        InstrumentGuidedIVRegressor(2, representation=InstrumentGuidedRepresentation()).fit(X, y, Z=Z)
    with pytest.raises(ValueError, match="sample_weight|negative"):
        reg.fit(X, y, Z=Z, sample_weight=-np.ones(100))
    with pytest.raises(ValueError, match="decode_intervention"):
        reg.fit(X, y, Z=Z).decode_intervention(X, np.ones(2))


def test_representation_instance_and_pca_pipeline_agree():
    X, y, Z = _design(200, 10, 3, seed=9)
    rep = InstrumentGuidedRepresentation(2, whiten_instruments=False)
    a = InstrumentGuidedIVRegressor(representation=rep).fit(X, y, Z=Z)
    b = InstrumentGuidedIVRegressor(2, whiten_instruments=False).fit(X, y, Z=Z)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12)
    assert rep.get_params() == InstrumentGuidedRepresentation(2, whiten_instruments=False).get_params()
    pca_est = PCATwoStageLeastSquares(2, svd_solver="full").fit(X, y, Z=Z)
    pipe = make_pca_2sls(2).fit(X, y, iv__Z=Z)
    np.testing.assert_allclose(pca_est.predict(X), pipe.predict(X), rtol=1e-10)


def test_transformer_round_trip_and_residual():
    X, _, Z = _design(100, 8, 2, seed=10)
    rep = InstrumentGuidedRepresentation(2, n_residual_components=3, random_state=0).fit(X, Z=Z)
    D, V = rep.transform(X), rep.transform_residual(X)
    assert D.shape == (100, 2) and V.shape == (100, 3)
    basis = np.vstack([rep.components_, rep.residual_components_])
    np.testing.assert_allclose(basis @ basis.T, np.eye(5), atol=1e-10)
    recon = rep.inverse_transform(D, V)
    P = basis.T @ basis
    np.testing.assert_allclose(recon, rep.mean_ + (X - rep.mean_) @ P, atol=1e-10)
    np.testing.assert_allclose(rep.explained_instrumented_ratio_.sum(), 1.0)
    assert list(rep.get_feature_names_out()) == ["instrumentguidedrepresentation0",
                                                 "instrumentguidedrepresentation1"]
    assert 0.99 < rep.score(X, Z=Z) <= 1.0 + 1e-12


# 9. Exogenous controls W and diagnostics on the excluded instruments ----------------------------------------
def _design_with_controls(n=400, p=2, k=4, k_w=2, seed=11, hetero=False):
    rng = np.random.RandomState(seed)
    Z = rng.normal(size=(n, k))
    W = rng.normal(size=(n, k_w)) + 0.5 * Z[:, :1]  # controls correlated with the instruments
    H = rng.normal(size=n)
    X = Z @ rng.normal(size=(k, p)) + W @ rng.normal(size=(k_w, p)) + H[:, None] + rng.normal(size=(n, p))
    u = rng.normal(size=n) * ((1 + np.abs(Z[:, 1])) if hetero else 1.0)
    y = X @ rng.normal(size=p) + W @ rng.normal(size=k_w) + 2 * H + u + 1.5
    return X, y, Z, W


def _residual_on(C, A):
    C1 = np.column_stack([np.ones(C.shape[0]), C])
    return A - C1 @ np.linalg.lstsq(C1, A, rcond=None)[0]


@pytest.mark.parametrize("cov_type", ["nonrobust", "HC0", "HC1"])
def test_controls_are_exogenous_regressors_and_instruments(cov_type):
    """Frisch–Waugh–Lovell: W as controls = W placed in both X and Z (the treatment block of everything)."""
    X, y, Z, W = _design_with_controls()
    ours = TwoStageLeastSquares(cov_type=cov_type).fit(X, y, Z=Z, W=W)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the controls' own first stage is perfect
        both = TwoStageLeastSquares(cov_type=cov_type).fit(np.column_stack([X, W]), y, Z=np.column_stack([Z, W]))
    np.testing.assert_allclose(ours.coef_, both.coef_[:2], rtol=1e-10)
    np.testing.assert_allclose(ours.controls_coef_, both.coef_[2:], rtol=1e-10)
    np.testing.assert_allclose(ours.intercept_, both.intercept_, rtol=1e-10)
    np.testing.assert_allclose(ours.cov_, both.cov_[:2, :2], rtol=1e-9)
    np.testing.assert_allclose(ours.params_cov_[1:, 1:][[2, 3, 0, 1]][:, [2, 3, 0, 1]], both.cov_, rtol=1e-8)
    np.testing.assert_allclose(ours.predict(X, W=W), both.predict(np.column_stack([X, W])), rtol=1e-10)
    # the partial F of the excluded instruments, by hand with the controls partialled out
    Xr, Zr = _residual_on(W, X), _residual_on(W, Z)
    n, k, k_w = 400, 4, 2
    for j in range(2):
        fitted = _proj(Zr) @ Xr[:, j]
        rss = np.sum((Xr[:, j] - fitted) ** 2)
        np.testing.assert_allclose(ours.first_stage_f_[j], (fitted @ fitted / k) / (rss / (n - k - k_w - 1)),
                                   rtol=1e-9)
    assert ours.n_controls_ == 2 and list(ours.control_names_) == ["w0", "w1"]
    with pytest.raises(ValueError, match="pass W"):
        ours.predict(X)
    with pytest.raises(ValueError, match="n_controls_=2"):
        ours.predict(X, W=W[:, :1])


def test_representation_learns_with_controls_partialled_out():
    X, y, Z, W = _design_with_controls(n=300, p=8, k=3, seed=12)
    rep = InstrumentGuidedRepresentation().fit(X, Z=Z, W=W)
    by_hand = InstrumentGuidedRepresentation().fit(_residual_on(W, X), Z=_residual_on(W, Z))
    np.testing.assert_allclose(rep.components_, by_hand.components_, atol=1e-10)
    np.testing.assert_allclose(rep.transform(X), (X - rep.mean_) @ rep.components_.T)  # no W needed
    reg = InstrumentGuidedIVRegressor().fit(X, y, Z=Z, W=W)
    np.testing.assert_allclose(reg.identified_subspace_, rep.components_.T, atol=1e-10)
    # second stage: 2SLS of y on D = X·W_rep with the controls, as TwoStageLeastSquares computes it
    tsls = TwoStageLeastSquares().fit(rep.transform(X), y, Z=Z, W=W)
    np.testing.assert_allclose(reg.representation_coef_, tsls.coef_, rtol=1e-9)
    np.testing.assert_allclose(reg.representation_cov_, tsls.cov_, rtol=1e-8)
    np.testing.assert_allclose(reg.predict(X, W=W), tsls.predict(rep.transform(X), W=W), rtol=1e-9, atol=1e-9)
    assert reg.score(X, y, Z=Z, W=W) <= 0
    pca = PCATwoStageLeastSquares().fit(X, y, Z=Z, W=W)
    assert pca.controls_coef_.shape == (2,) and np.isfinite(pca.predict(X, W=W)).all()
    with pytest.raises(ValueError, match="method='linear'"):
        InstrumentGuidedRepresentation(method="autoencoder").fit(X, Z=Z, W=W)


def test_integer_weights_equal_repeated_rows_with_controls_and_clusters():
    X, y, Z, W = _design_with_controls(n=60, seed=13, hetero=True)
    g = np.arange(60) % 12
    w = np.random.RandomState(1).randint(0, 4, size=60)
    w[:5] = 1
    rep = np.repeat(np.arange(60), w)
    for cov_type in ("HC1", "cluster", "nonrobust"):
        a = TwoStageLeastSquares(cov_type=cov_type).fit(X, y, Z=Z, W=W, groups=g, sample_weight=w)
        b = TwoStageLeastSquares(cov_type=cov_type).fit(X[rep], y[rep], Z=Z[rep], W=W[rep], groups=g[rep])
        for attr in ("coef_", "controls_coef_", "cov_", "params_cov_", "first_stage_f_", "first_stage_f_robust_",
                     "cragg_donald_", "kleibergen_paap_", "sargan_", "hansen_j_"):
            np.testing.assert_allclose(getattr(a, attr), getattr(b, attr), rtol=1e-8, err_msg=attr)


def test_cluster_covariance_formula_and_groups_only_used_when_clustering():
    X, y, Z, W = _design_with_controls(n=200, seed=14, hetero=True)
    g = np.repeat(np.arange(25), 8)
    est = TwoStageLeastSquares(cov_type="cluster").fit(X, y, Z=Z, W=W, groups=g)
    C = np.column_stack([np.ones(200), W])
    R, inst = np.column_stack([C, X]), np.column_stack([C, Z])
    Rhat = _proj(inst) @ R
    bread = np.linalg.inv(Rhat.T @ Rhat)
    e = y - R @ np.linalg.solve(Rhat.T @ R, Rhat.T @ y)
    scores = np.array([Rhat[g == c].T @ e[g == c] for c in range(25)])
    cov = bread @ scores.T @ scores @ bread * (25 / 24) * (199 / (200 - 5))
    np.testing.assert_allclose(est.params_cov_, cov, rtol=1e-9)
    plain = TwoStageLeastSquares().fit(X, y, Z=Z, W=W)
    with_groups = TwoStageLeastSquares().fit(X, y, Z=Z, W=W, groups=g)
    np.testing.assert_array_equal(plain.cov_, with_groups.cov_)


def test_kleibergen_paap_properties():
    X, y, Z, W = _design_with_controls(n=500, seed=15, hetero=True)
    est = TwoStageLeastSquares().fit(X, y, Z=Z, W=W)
    A = np.array([[2.0, 0.3], [-1.0, 0.7]])
    rotated = TwoStageLeastSquares().fit(X @ A, y, Z=Z, W=W)
    np.testing.assert_allclose(rotated.kleibergen_paap_, est.kleibergen_paap_, rtol=1e-8)  # invariant
    np.testing.assert_allclose(rotated.cragg_donald_, est.cragg_donald_, rtol=1e-8)
    one = TwoStageLeastSquares(cov_type="HC0").fit(X[:, :1], y, Z=Z, W=W)
    np.testing.assert_allclose(one.kleibergen_paap_, one.first_stage_f_robust_[0], rtol=1e-10)
    # homoskedastic first stage, large n: the robust statistic estimates the same quantity as Cragg–Donald
    X, y, Z, W = _design_with_controls(n=20000, seed=16)
    big = TwoStageLeastSquares().fit(X, y, Z=Z, W=W)
    assert abs(big.kleibergen_paap_ / big.cragg_donald_ - 1) < 0.05


def test_cragg_donald_takes_minimum_over_identified_directions():
    rng = np.random.RandomState(17)
    n = 500
    Z = rng.normal(size=(n, 3))
    H = rng.normal(size=n)
    x1 = 0.08 * Z[:, 0] + H + rng.normal(size=n)
    X = np.column_stack([x1, Z[:, 1] + 2 * Z[:, 2]])  # the second treatment is a function of Z
    y = X @ [1.0, 1.0] + H + rng.normal(size=n)
    with pytest.warns(WeakInstrumentWarning):
        est = TwoStageLeastSquares(cov_type="nonrobust").fit(X, y, Z=Z)
    assert np.isfinite(est.cragg_donald_) and est.first_stage_f_[1] == np.inf
    Xc, Zc = _centred(X, Z)
    fitted = _proj(Zc) @ Xc
    G, S = fitted.T @ fitted, (Xc - fitted).T @ (Xc - fitted) / (n - 3 - 1)
    limit = scipy.linalg.eigh(G, S + 1e-11 * np.trace(S) * np.eye(2), eigvals_only=True)[0] / 3
    np.testing.assert_allclose(est.cragg_donald_, limit, rtol=1e-6)


def test_stock_yogo_threshold_and_summary():
    rng = np.random.RandomState(18)
    n = 1000
    Z = rng.normal(size=(n, 2))
    H = rng.normal(size=n)
    x = 0.17 * Z @ [1.0, 1.0] + H + rng.normal(size=n)
    y = 2 * x + H + rng.normal(size=n)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = TwoStageLeastSquares(cov_type="nonrobust").fit(x[:, None], y, Z=Z)
    assert est.stock_yogo_ == {"10%": 19.93, "15%": 11.59, "20%": 8.75, "25%": 7.25}
    assert 10 < est.cragg_donald_ < 19.93
    with pytest.warns(WeakInstrumentWarning, match="Stock–Yogo"):
        TwoStageLeastSquares(cov_type="nonrobust", weak_iv_threshold="stock-yogo").fit(x[:, None], y, Z=Z)
    text = str(est.summary(alpha=0.1))
    for part in ("const", "x0", "Cragg-Donald", "Sargan", "Hansen J", "Durbin", "19.93"):
        assert part in text
    s = est.summary()
    np.testing.assert_allclose(s.params["coef"], [est.intercept_, est.coef_[0]])
    np.testing.assert_allclose(s.params["std_err"][1], est.stderr_[0], rtol=1e-10)
    with pytest.raises(ValueError, match="alpha"):
        est.summary(alpha=2)


def test_bad_controls_and_covariance_options():
    X, y, Z, W = _design_with_controls(n=100)
    est = TwoStageLeastSquares()
    with pytest.raises(ValueError, match="W has 99 samples but X has 100"):
        est.fit(X, y, Z=Z, W=W[:99])
    Wbad = W.copy()
    Wbad[0, 0] = np.nan
    with pytest.raises(ValueError, match="controls W"):
        est.fit(X, y, Z=Z, W=Wbad)
    import scipy.sparse as sp

    with pytest.raises(TypeError, match="W"):
        est.fit(X, y, Z=Z, W=sp.csr_matrix(W))
    with pytest.raises(ValueError, match="W.ndim"):
        est.fit(X, y, Z=Z, W=W[:, :, None])
    with pytest.raises(ValueError, match="n_controls"):
        est.fit(X[:8], y[:8], Z=Z[:8], W=np.random.RandomState(0).normal(size=(8, 4)))
    with pytest.raises(ValueError, match="groups"):
        TwoStageLeastSquares(cov_type="cluster").fit(X, y, Z=Z, W=W)
    with pytest.raises(ValueError, match="groups"):
        TwoStageLeastSquares(cov_type="cluster").fit(X, y, Z=Z, groups=np.zeros(100))
    with pytest.raises(ValueError, match="debiased"):
        TwoStageLeastSquares(cov_type="HC0", debiased=True).fit(X, y, Z=Z)
    with pytest.raises(InvalidParameterError):
        TwoStageLeastSquares(weak_iv_threshold="five").fit(X, y, Z=Z)
    with pytest.warns(UserWarning, match="Z is rank deficient.*partialling out"):
        TwoStageLeastSquares().fit(X, y, Z=np.column_stack([Z, W[:, 0]]), W=W)
