"""Agreement of the IV estimators with linearmodels (Mroz, Card and a simulated over-identified design).

Conventions (``TwoStageLeastSquares`` docstring): ``nonrobust`` = linearmodels "unadjusted", ``HC0`` /
``HC1`` = "robust" with debiased False / True, ``cluster`` = "clustered"; ``debiased`` as linearmodels'.
"""

import warnings

import numpy as np
import pytest
import scipy.linalg

from sklearn_frontier.exceptions import WeakInstrumentWarning
from sklearn_frontier.iv import InstrumentGuidedIVRegressor, PCATwoStageLeastSquares, TwoStageLeastSquares

linearmodels = pytest.importorskip("linearmodels")
from linearmodels.datasets import card as card_data  # noqa: E402
from linearmodels.datasets import mroz as mroz_data  # noqa: E402
from linearmodels.iv import IV2SLS, IVGMM  # noqa: E402

# (our cov_type, our debiased, linearmodels cov_type, linearmodels debiased)
CONVENTIONS = [("nonrobust", True, "unadjusted", True), ("nonrobust", False, "unadjusted", False),
               ("HC0", None, "robust", False), ("HC1", None, "robust", True),
               ("cluster", True, "clustered", True), ("cluster", False, "clustered", False)]


@pytest.fixture(scope="module")
def mroz():
    d = mroz_data.load().dropna(subset=["lwage"])
    exog = d[["exper", "expersq"]].assign(const=1.0)[["const", "exper", "expersq"]]
    return {"y": d["lwage"], "X": d[["educ"]], "Z": d[["fatheduc", "motheduc"]], "W": d[["exper", "expersq"]],
            "exog": exog, "groups": d["age"].to_numpy()}


def _simulated(n=600, seed=0):
    """Two endogenous treatments, four instruments, two controls, heteroskedastic errors, 40 clusters."""
    rng = np.random.RandomState(seed)
    Z = rng.normal(size=(n, 4))
    W = rng.normal(size=(n, 2))
    H = rng.normal(size=n)
    X = Z @ rng.normal(size=(4, 2)) + W @ rng.normal(size=(2, 2)) + H[:, None] + rng.normal(size=(n, 2))
    u = (1 + np.abs(Z[:, 0])) * rng.normal(size=n)
    y = X @ np.array([1.0, -0.5]) + W @ np.array([0.3, 0.7]) + 2 * H + u + 1.0
    import pandas as pd

    exog = pd.DataFrame(np.column_stack([np.ones(n), W]), columns=["const", "w0", "w1"])
    return {"y": pd.Series(y, name="y"), "X": pd.DataFrame(X, columns=["x0", "x1"]),
            "Z": pd.DataFrame(Z, columns=[f"z{j}" for j in range(4)]), "W": pd.DataFrame(W, columns=["w0", "w1"]),
            "exog": exog, "groups": rng.randint(0, 40, size=n)}


def _fit_both(data, cov_type, debiased, lm_cov, lm_debiased):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        ours = TwoStageLeastSquares(cov_type=cov_type, debiased=debiased).fit(
            data["X"], data["y"], Z=data["Z"], W=data["W"], groups=data["groups"])
    kw = {"clusters": data["groups"]} if lm_cov == "clustered" else {}
    lm = IV2SLS(data["y"], data["exog"], data["X"], data["Z"]).fit(cov_type=lm_cov, debiased=lm_debiased, **kw)
    return ours, lm


def _ours_params(est):
    return np.concatenate([[est.intercept_], est.controls_coef_, est.coef_])


@pytest.mark.parametrize("design", ["mroz", "simulated"])
@pytest.mark.parametrize("convention", CONVENTIONS, ids=lambda c: f"{c[0]}-{c[1]}")
def test_coefficients_standard_errors_and_first_stage(design, convention, mroz):
    data = mroz if design == "mroz" else _simulated()
    ours, lm = _fit_both(data, *convention)
    np.testing.assert_allclose(_ours_params(ours), lm.params.to_numpy(), rtol=1e-8)
    np.testing.assert_allclose(np.sqrt(np.diag(ours.params_cov_)), lm.std_errors.to_numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.stderr_, lm.std_errors.to_numpy()[-ours.n_features_in_:], rtol=1e-6)
    summary = ours.summary()
    np.testing.assert_allclose(summary.params["p_value"], lm.pvalues.to_numpy(), rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(summary.params["ci_lower"], lm.conf_int()["lower"].to_numpy(), rtol=1e-6)
    fs = lm.first_stage.diagnostics
    k_z = data["Z"].shape[1]
    if convention[2] == "unadjusted" and convention[3]:
        # the textbook partial F of the excluded instruments (Stata's first-stage F)
        np.testing.assert_allclose(ours.first_stage_f_, fs["f.stat"].to_numpy(dtype=float), rtol=1e-6)
    if convention[2] != "unadjusted":
        # linearmodels reports the robust Wald statistic itself; ours is its F form (÷ k_z), as Stata / R ivreg
        np.testing.assert_allclose(ours.first_stage_f_robust_ * k_z, fs["f.stat"].to_numpy(dtype=float),
                                   rtol=1e-6)


@pytest.mark.parametrize("design", ["mroz", "simulated"])
def test_overidentification_and_endogeneity(design, mroz):
    data = mroz if design == "mroz" else _simulated()
    nonrobust, lm = _fit_both(data, "nonrobust", True, "unadjusted", True)
    np.testing.assert_allclose(nonrobust.sargan_, [lm.sargan.stat, lm.sargan.pval], rtol=1e-6)
    durbin = lm.durbin()
    np.testing.assert_allclose(nonrobust.endogeneity_, [durbin.stat, durbin.pval], rtol=1e-6)
    assert nonrobust.endogeneity_test_ == "Durbin"
    robust, lm_r = _fit_both(data, "HC0", None, "robust", False)
    gmm = IVGMM(data["y"], data["exog"], data["X"], data["Z"]).fit()  # heteroskedastic weight, 2 steps
    np.testing.assert_allclose(robust.hansen_j_, [gmm.j_stat.stat, gmm.j_stat.pval], rtol=1e-6)
    score = lm_r.wooldridge_score
    np.testing.assert_allclose(robust.endogeneity_, [score.stat, score.pval], rtol=1e-6)
    assert robust.endogeneity_test_ == "Wooldridge score"
    # Sargan does not depend on the covariance; with one treatment KP is the robust first-stage F
    np.testing.assert_allclose(robust.sargan_, nonrobust.sargan_, rtol=1e-12)
    if data["X"].shape[1] == 1:
        np.testing.assert_allclose(robust.kleibergen_paap_, robust.first_stage_f_robust_[0], rtol=1e-10)


def test_mroz_reference_values(mroz):
    """The numbers of the textbook analysis (Wooldridge, Example 15.40; Stata ivreg2 with ``small``)."""
    est, _ = _fit_both(mroz, "nonrobust", True, "unadjusted", True)
    np.testing.assert_allclose(est.coef_[0], 0.0613966, rtol=1e-5)
    np.testing.assert_allclose(est.stderr_[0], 0.0314367, rtol=1e-5)
    np.testing.assert_allclose(est.first_stage_f_[0], 55.4003, rtol=1e-5)
    np.testing.assert_allclose(est.cragg_donald_, est.first_stage_f_[0], rtol=1e-10)  # one treatment
    np.testing.assert_allclose(est.sargan_, [0.378071, 0.538637], rtol=1e-5)
    assert est.stock_yogo_["10%"] == 19.93 and est.cragg_donald_ > est.stock_yogo_["10%"]


def test_more_treatments_than_instruments_minimum_norm(mroz):
    data = _simulated()
    rng = np.random.RandomState(1)
    X = np.column_stack([data["X"].to_numpy(), data["X"].to_numpy() @ rng.normal(size=(2, 4))
                         + rng.normal(size=(600, 4))])  # 6 treatments, 4 instruments
    with pytest.raises(ValueError):
        IV2SLS(data["y"], data["exog"], X, data["Z"]).fit()
    est = InstrumentGuidedIVRegressor().fit(X, data["y"], Z=data["Z"], W=data["W"])
    C = data["exog"].to_numpy()

    def resid(A):
        return A - C @ np.linalg.lstsq(C, A, rcond=None)[0]

    Xr, Zr, yr = resid(X), resid(data["Z"].to_numpy()), resid(data["y"].to_numpy())
    minimum_norm = Xr.T @ Zr @ np.linalg.solve(Zr.T @ Xr @ Xr.T @ Zr, Zr.T @ yr)
    np.testing.assert_allclose(est.coef_, minimum_norm, rtol=1e-8, atol=1e-10 * np.abs(minimum_norm).max())
    gamma = np.linalg.lstsq(C, data["y"].to_numpy() - X @ est.coef_, rcond=None)[0]
    np.testing.assert_allclose(np.concatenate([[est.intercept_], est.controls_coef_]), gamma, rtol=1e-8)
    with pytest.raises(ValueError, match="under-identified"):
        TwoStageLeastSquares().fit(X, data["y"], Z=data["Z"], W=data["W"])


@pytest.fixture(scope="module")
def card():
    d = card_data.load()
    d = d.assign(agesq=d["age"] ** 2)
    exog = ["black", "smsa", "south", "smsa66"] + [f"reg66{i}" for i in range(2, 10)]
    cols = ["lwage", "educ", "exper", "expersq", "nearc2", "nearc4", "age", "agesq"] + exog
    return d[cols].dropna(), exog


def test_card_cragg_donald_against_linearmodels_first_stages(card):
    d, exog = card
    endog, instr = ["educ", "exper", "expersq"], ["nearc2", "nearc4", "age", "agesq"]
    with pytest.warns(WeakInstrumentWarning, match="Cragg–Donald statistic 3.01"):
        ours = TwoStageLeastSquares(cov_type="nonrobust").fit(d[endog], d["lwage"], Z=d[instr], W=d[exog])
    lm = IV2SLS(d["lwage"], d[exog].assign(const=1.0), d[endog], d[instr]).fit(cov_type="unadjusted")
    np.testing.assert_allclose(ours.coef_, lm.params[endog].to_numpy(), rtol=1e-8)
    # Rebuild the statistic from linearmodels' own first-stage regressions: partialled fitted values and
    # residuals; exper = age - educ - 6 makes one direction perfectly predicted (zero residual variance).
    C = d[exog].assign(const=1.0).to_numpy()
    Zr = d[instr].to_numpy() - C @ np.linalg.lstsq(C, d[instr].to_numpy(), rcond=None)[0]
    first = lm.first_stage.individual
    fitted = np.column_stack([Zr @ first[e].params[instr].to_numpy() for e in endog])
    V = np.column_stack([first[e].resids.to_numpy() for e in endog])
    n, k_z = d.shape[0], len(instr)
    S = V.T @ V / (n - k_z - C.shape[1])
    G = fitted.T @ fitted
    assert np.linalg.eigvalsh(S)[0] < 1e-10 * np.trace(S)
    # minimum over the identified directions = the limit of a vanishing ridge on the singular direction
    limit = scipy.linalg.eigh(G, S + 1e-10 * np.trace(S) * np.eye(3), eigvals_only=True)[0] / k_z
    np.testing.assert_allclose(ours.cragg_donald_, limit, rtol=1e-6)
    assert round(ours.cragg_donald_, 4) == 3.0071
    # small noise on the collinear column converges to it (the old code returned inf without the noise)
    noise = np.random.RandomState(0).normal(size=n)
    noisy = d[endog].to_numpy(dtype=float)
    gaps = []
    for eps in (1e-2, 1e-4, 1e-6):
        noisy[:, 1] = d["exper"].to_numpy() + eps * noise
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", WeakInstrumentWarning)
            value = TwoStageLeastSquares(cov_type="nonrobust").fit(noisy, d["lwage"], Z=d[instr],
                                                                   W=d[exog]).cragg_donald_
        gaps.append(abs(value - ours.cragg_donald_))
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-5 * ours.cragg_donald_


def test_card_weak_design_now_warns(card):
    """Partial F 0.09 for educ: the warning fires (it used to be silenced by an infinite Cragg–Donald)."""
    d, _ = card
    endog, instr = ["educ", "exper", "expersq"], ["nearc4", "nearc2", "age"]
    with pytest.warns(WeakInstrumentWarning):
        est = TwoStageLeastSquares(cov_type="nonrobust").fit(d[endog], d["lwage"], Z=d[instr])
    assert np.isfinite(est.cragg_donald_) and est.cragg_donald_ < 1


@pytest.mark.parametrize("with_controls", [False, True], ids=["no-controls", "controls"])
@pytest.mark.parametrize("convention", CONVENTIONS, ids=lambda c: f"{c[0]}-{c[1]}")
def test_instrument_guided_one_treatment_agrees_with_linearmodels(convention, with_controls, mroz):
    """One treatment, one direction: the instrument-guided fit is 2SLS, so every parameter, standard error and
    covariance entry (the intercept moved back to X = 0 with its covariance) matches linearmodels and ours."""
    cov_type, debiased, lm_cov, lm_debiased = convention
    data = dict(mroz)
    if not with_controls:
        data["W"], data["exog"] = None, mroz["exog"][["const"]]
    ours, lm = _fit_both(data, *convention)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        guided = InstrumentGuidedIVRegressor(n_components=1, cov_type=cov_type, debiased=debiased).fit(
            data["X"], data["y"], Z=data["Z"], W=data["W"], groups=data["groups"])
    np.testing.assert_allclose(_ours_params(guided), lm.params.to_numpy(), rtol=1e-8)
    np.testing.assert_allclose(np.sqrt(np.diag(guided.params_cov_)), lm.std_errors.to_numpy(), rtol=1e-6)
    np.testing.assert_allclose(guided.params_cov_, ours.params_cov_, rtol=1e-8, atol=1e-14)
    np.testing.assert_allclose(guided.summary().params["p_value"], lm.pvalues.to_numpy(), rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("convention", [CONVENTIONS[i] for i in (0, 2, 3, 4)], ids=lambda c: f"{c[0]}-{c[1]}")
def test_pca_one_treatment_covariance_equals_two_stage(convention, mroz):
    """PCA of one treatment is the centred treatment up to sign: the PCA baseline's intercept, moved back to X = 0
    with its covariance, and every other entry of params_cov_ equal TwoStageLeastSquares'."""
    cov_type, debiased = convention[:2]
    kw = {"Z": mroz["Z"], "W": mroz["W"], "groups": mroz["groups"]}
    tsls = TwoStageLeastSquares(cov_type=cov_type, debiased=debiased).fit(mroz["X"], mroz["y"], **kw)
    pca = PCATwoStageLeastSquares(cov_type=cov_type, debiased=debiased).fit(mroz["X"], mroz["y"], **kw)
    sign = np.ones(tsls.params_cov_.shape[0])
    sign[-1] = pca.representation_.components_[0, 0]
    np.testing.assert_allclose(pca.params_cov_ * np.outer(sign, sign), tsls.params_cov_, rtol=1e-8, atol=1e-14)
    np.testing.assert_allclose(pca.intercept_, tsls.intercept_, rtol=1e-10)


@pytest.mark.parametrize("lm_cov,lm_debiased", [("unadjusted", True), ("robust", False), ("robust", True),
                                                 ("clustered", True)])
def test_linearmodels_covariance_names_are_accepted(lm_cov, lm_debiased, mroz):
    """The docstring maps linearmodels' names; passing them gives linearmodels' covariance."""
    ours = TwoStageLeastSquares(cov_type=lm_cov, debiased=lm_debiased).fit(
        mroz["X"], mroz["y"], Z=mroz["Z"], W=mroz["W"], groups=mroz["groups"])
    kw = {"clusters": mroz["groups"]} if lm_cov == "clustered" else {}
    lm = IV2SLS(mroz["y"], mroz["exog"], mroz["X"], mroz["Z"]).fit(cov_type=lm_cov, debiased=lm_debiased, **kw)
    np.testing.assert_allclose(np.sqrt(np.diag(ours.params_cov_)), lm.std_errors.to_numpy(), rtol=1e-6)
    assert ours.cov_type_ in ("nonrobust", "HC0", "HC1", "cluster")
