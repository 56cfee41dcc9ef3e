"""The PR-BAST benchmark's plumbing: the BART anchor's intervals, its absence handled, the cases and the targets."""

import sys

import numpy as np
import pytest
from scipy.stats import norm

from benchmarks import _bart, prbast


def test_mixture_quantiles_match_known_answers():
    # one component: the normal quantiles; two symmetric components: the median is the midpoint
    means = np.array([[0.0], [3.0]])
    q = _bart._mixture_quantiles(means, np.array([[2.0]]), (0.025, 0.5, 0.975))
    np.testing.assert_allclose(q, means + 2.0 * norm.ppf([0.025, 0.5, 0.975]), atol=1e-10)
    two = _bart._mixture_quantiles(np.array([[-1.0, 1.0]]), np.array([[0.5, 0.5]]), (0.5, 0.975))
    assert two[0, 0] == pytest.approx(0.0, abs=1e-10)
    cdf = 0.5 * (norm.cdf(two[0, 1], -1.0, 0.5) + norm.cdf(two[0, 1], 1.0, 0.5))
    assert cdf == pytest.approx(0.975, abs=1e-10)


def test_schedules_are_described_and_scaled():
    assert _bart.BART_DEFAULT.describe() == "200 trees, 500 burn-in + 500 kept MCMC sweeps"
    assert _bart.BART_WARM_START.describe() == "200 trees, 5 GFR + 0 burn-in + 100 kept MCMC sweeps"
    quick = _bart.BART_DEFAULT.scaled(0.3)
    assert (quick.num_burnin, quick.num_mcmc, quick.label) == (150, 150, "BART")


def test_bart_rows_are_skipped_with_a_note_without_stochtree(monkeypatch):
    monkeypatch.setitem(sys.modules, "stochtree", None)  # import stochtree now raises ImportError
    note = _bart.bart_missing_note()
    assert note is not None and "stochtree is not installed" in note
    case = prbast.make_case("horseshoe", 0, 30, 10)
    labels = prbast._estimators(case.boundary, 0, True, ["PRBAST", *prbast.BART_LABELS, "kNN"], 30)
    assert list(labels) == ["PRBAST", "kNN"]


@pytest.mark.parametrize("name", prbast.CASES)
def test_cases_give_train_and_fresh_test_points(name):
    case = prbast.make_case(name, 1, 40, 25)
    assert case.X.shape == (40, 2) and case.y.shape == (40,)
    assert case.X_test.shape == (25, 2) and case.f_test.shape == case.y_test.shape == (25,)
    assert case.boundary.ndim == 2 and case.boundary.shape[1] == 2
    assert not np.array_equal(case.X[:25], case.X_test)
    # same seed, same data
    np.testing.assert_array_equal(prbast.make_case(name, 1, 40, 25).y, case.y)


def test_target_rows_report_ratios_and_verdicts_per_case():
    def row(case, n, est, seed, rmse, cpu, cover=0.95):
        return {"section": "accuracy", "case": case, "n": n, "estimator": est, "seed": seed, "rmse": rmse,
                "fit_cpu_s": cpu, "cover_y": cover}

    rows = [row("a", 100, "PRBAST", 0, 0.8, 1.0, 0.96), row("a", 100, "BART", 0, 1.0, 4.0),
            row("a", 400, "PRBAST", 0, 0.95, 3.0, 0.99), row("a", 400, "BART", 0, 1.0, 4.0),
            row("a", 400, "PRBAST", 1, 0.85, 1.0, 0.97), row("a", 400, "BART", 1, 1.0, 4.0)]
    targets = prbast.target_rows(rows, 400)
    assert [(t["n"], t["estimator"]) for t in targets] == [(100, "PRBAST / BART"), (400, "PRBAST / BART")]
    small, large = targets
    assert small["rmse_ratio"] == pytest.approx(0.8) and small["rmse_met"] == "yes" and "cpu_met" not in small
    assert large["rmse_ratio"] == pytest.approx(0.9) and large["rmse_ratio_max"] == pytest.approx(0.95)
    assert large["rmse_met"] == "yes"  # <= 0.9 at the largest n
    assert large["cpu_ratio"] == pytest.approx(0.5) and large["cpu_met"] == "yes"
    assert large["prbast_cover_y"] == pytest.approx(0.98) and large["cover_met"] == "no"


def test_stochtree_bart_fits_a_tiny_case():
    pytest.importorskip("stochtree")
    case = prbast.make_case("horseshoe", 0, 200, 50)
    settings = _bart.BARTSettings("BART", num_trees=20, num_gfr=2, num_burnin=10, num_mcmc=20)
    est = _bart.StochtreeBART(settings, random_state=0).fit(case.X, case.y)
    pred = est.predict(case.X_test)
    assert pred.shape == (50,) and np.all(np.isfinite(pred))
    assert np.sqrt(np.mean((pred - case.f_test) ** 2)) < np.std(case.f_test)  # learns something
    y_int = est.predict_interval(case.X_test)
    f_int = est.predict_interval(case.X_test, kind="credible")
    assert y_int.shape == f_int.shape == (50, 2)
    assert np.all(y_int[:, 0] < pred) and np.all(pred < y_int[:, 1])
    # a new y's interval holds the noise too: wider than the credible interval of f
    assert np.all(y_int[:, 1] - y_int[:, 0] > f_int[:, 1] - f_int[:, 0])
    assert est.sigma_ > 0
    again = _bart.StochtreeBART(settings, random_state=0).fit(case.X, case.y).predict(case.X_test)
    np.testing.assert_array_equal(pred, again)  # same seed, same draws
    row = prbast._evaluate(_bart.StochtreeBART(settings, random_state=0), case)
    assert {"rmse", "cover_y", "width_y", "cover_f", "width_f", "fit_cpu_s", "fit_s"} <= set(row)
