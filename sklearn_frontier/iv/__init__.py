"""Instrument-guided IV regression with more treatments than instruments.

Estimators of Lin, Lan & Syrgkanis, "Learning Treatment Representations for Downstream Instrumental
Variable Regression" (ICML 2026, https://arxiv.org/abs/2506.02200), and the baselines they are measured
against, all with ``fit(X, y, *, Z=None, W=None, groups=None, sample_weight=None)``: X holds the treatments
(endogenous regressors), Z the excluded instruments, W exogenous controls (in the outcome equation and
their own instruments; the intercept is added as usual), groups the clusters of ``cov_type="cluster"``.

- :class:`InstrumentGuidedRepresentation`: learn an r-dimensional treatment representation guided by Z.
- :class:`InstrumentGuidedIVRegressor`: 2SLS on that representation; ``coef_`` is the identified
  minimum-norm effect, with HC1 inference, weak-IV diagnostics and intervention effects.
- :class:`TwoStageLeastSquares`, :class:`PCATwoStageLeastSquares`, :func:`make_pca_2sls`: baselines.
- :class:`KClassIVRegressor`: LIML, Fuller and fixed-κ estimation beside 2SLS (equal to linearmodels' ``IVLIML``).
  It and :class:`TwoStageLeastSquares` absorb categorical fixed effects (``fit(..., absorb=...)``, partialled out
  by alternating projections, degrees of freedom as pyfixest's) and take ``weight_type="frequency"`` (default:
  a weight counts rows) or ``"analytic"`` (relative precisions, as linearmodels' ``weights=``).
- :func:`projected_mse`, :func:`make_iv_scorer`: Z-aware model selection (R² on a confounded y rewards
  absorbing the confounding, so it prefers OLS and too many components).

**Passing Z.** With ``sklearn.set_config(enable_metadata_routing=True)`` the estimators request Z by
default, so ``Pipeline.fit(X, y, Z=Z)``, ``GridSearchCV.fit(X, y, Z=Z)`` and
``cross_validate(..., params={"Z": Z})`` deliver each fold's Z (use ``scoring=make_iv_scorer()`` or the
estimator's own ``score``). With routing off use step parameters: ``pipe.fit(X, y, iv__Z=Z)``; scoring
then falls back to R² (with an ``IVScoreWarning``). W and groups are routed exactly like Z
(``pipe.fit(X, y, iv__W=W)`` with routing off), and one check serves them everywhere: at ``predict`` and
``score``, and in ``make_iv_scorer()``, W and Z must have the names (for DataFrames) and widths seen in fit,
as X must.

**Model selection with controls needs routing on**: ``GridSearchCV(est, grid,
scoring=make_iv_scorer()).fit(X, y, Z=Z, W=W)``. With routing off no scorer receives the test fold's W, so
every fold fails to score (GridSearchCV warns "Scoring failed", with the reason, and leaves NaN scores);
a scorer that calls ``predict(X)`` alone, such as ``"r2"``, cannot score a model with controls either.
``GridSearchCV.predict`` takes X only: predict with controls through ``search.best_estimator_.predict(X,
W=W)``.

**Controls.** W is partialled out of X, y and Z (Frisch–Waugh–Lovell): the coefficients, residuals and
covariances are those of 2SLS with W placed in both X and Z, and the instrument-guided representation is
learned from the residualised X and Z, so the controls never enter it. ``transform``,
``intervention_effect``, ``intervention_effect_interval``, ``recommend_intervention`` and
``identified_fraction`` need no W (a shift of the treatments has the same effect at every W); ``predict``
and ``score`` need the W of their samples after a fit with W (``predict(X, W=W)``), and raise without it.
Controls are for ``representation="linear"``.

**Diagnostics** (fitted attributes and :meth:`TwoStageLeastSquares.summary`): ``first_stage_f_`` is the
partial F of the excluded instruments for each treatment (or component), ``first_stage_f_robust_`` its
robust Wald form (÷ number of instruments) under ``cov_type``; ``cragg_donald_`` the minimum-eigenvalue
statistic over the identified directions (a perfectly predicted direction is left out through a Schur
complement instead of making it infinite); ``kleibergen_paap_`` the rk Wald F under ``cov_type``;
``stock_yogo_`` the 2SLS maximal-size critical values where tabulated. ``WeakInstrumentWarning`` compares
Cragg–Donald (Kleibergen–Paap under a robust ``cov_type``) with ``weak_iv_threshold`` (``"stock-yogo"`` for
the 10% size value). ``sargan_``, ``hansen_j_`` (two-step efficient GMM, as linearmodels' ``IVGMM.j_stat``
and Stata's ``ivreg2``) and ``endogeneity_`` (Durbin under ``cov_type="nonrobust"``, else Wooldridge's
robust score test) are (statistic, p-value) pairs. ``effective_f_`` is Montiel Olea and Pflueger's effective F
(one treatment) with ``effective_f_critical_value_`` for a 10% worst-case bias, ``kleibergen_paap_lm_`` the rk LM
underidentification test.

**Weak-instrument-robust inference** (every fitted regressor): ``weak_iv_test(beta0, method="AR" | "CLR" |
"LM", feature=None)`` returns (statistic, p-value) and ``confidence_set(feature, method, alpha)`` the inverted
set as a list of (low, high) intervals, possibly unbounded or two half-lines. Under ``cov_type="nonrobust"``
they equal ivmodels (subvector tests for one of several treatments); under ``"HC0"``, ``"HC1"`` and
``"cluster"`` AR uses the fit's sandwich (by projection for one of several treatments) and LM / CLR are
Kleibergen's robust versions for one treatment. :meth:`InstrumentGuidedIVRegressor.effect_confidence_set` gives
the set for the effect of a shift of the treatments; the summary prints the AR (and CLR) set of each treatment.

**Covariance conventions.** ``cov_type="nonrobust"`` is linearmodels' ``"unadjusted"`` and Stata's default;
``"HC0"`` / ``"HC1"`` are linearmodels' ``"robust"`` with ``debiased=False`` / ``True`` (Stata ``robust`` /
``robust small``); ``"cluster"`` is ``"clustered"`` / ``vce(cluster)``. ``debiased`` (None: True except for
HC0) divides by n − k instead of n (``G/(G−1)·(n−1)/(n−k)`` with clusters) and makes :meth:`summary` use
t(n − k); k counts the intercept, the controls and the treatments.

**The Mroz analysis** (428 working women; log wage on education, instrumented by the parents' education,
experience and its square as controls; the gallery example ``plot_iv_mroz.py``):

.. code-block:: python

    from linearmodels.datasets import mroz
    from sklearn_frontier.iv import TwoStageLeastSquares

    d = mroz.load().dropna(subset=["lwage"])
    est = TwoStageLeastSquares(cov_type="nonrobust").fit(
        d[["educ"]], d["lwage"], Z=d[["fatheduc", "motheduc"]], W=d[["exper", "expersq"]])
    print(est.summary())

========================================  ===================  ===================================
quantity                                  sklearn_frontier     linearmodels ``IV2SLS``
========================================  ===================  ===================================
educ coefficient                          0.0613966            0.0613966
SE nonrobust, debiased / not              0.0314367 / 0.03129  unadjusted, debiased True / False
SE HC0 / HC1                              0.0331824 / 0.03334  robust, debiased False / True
partial first-stage F (nonrobust)         55.4003              55.4003 (``first_stage``)
robust Wald F × 2 (HC1)                   99.0531              99.0531
Sargan (p)                                0.3781 (0.5386)      0.3781 (0.5386)
Hansen J (p)                              0.4435 (0.5055)      0.4435 (0.5055) (``IVGMM``)
Durbin / Wooldridge score                 2.8071 / 2.5286      2.8071 / 2.5286
========================================  ===================  ===================================

The partial F clears the Stock–Yogo 10% maximal-size value 19.93, Sargan does not reject the
over-identifying restriction, and the endogeneity tests reject exogeneity of education only at the 10%
level. ``tests/test_iv_linearmodels.py`` asserts these agreements (coefficients 1e-8, the rest 1e-6).
"""

from sklearn_frontier._registry import register_demo, register_estimator
from sklearn_frontier.iv._guided import InstrumentGuidedIVRegressor
from sklearn_frontier.iv._inference import Intervention
from sklearn_frontier.iv._kclass import KClassIVRegressor
from sklearn_frontier.iv._representation import InstrumentGuidedRepresentation
from sklearn_frontier.iv._scoring import make_iv_scorer, projected_mse
from sklearn_frontier.iv._two_stage import PCATwoStageLeastSquares, TwoStageLeastSquares, make_pca_2sls

__all__ = [
    "InstrumentGuidedRepresentation",
    "InstrumentGuidedIVRegressor",
    "TwoStageLeastSquares",
    "KClassIVRegressor",
    "PCATwoStageLeastSquares",
    "Intervention",
    "make_pca_2sls",
    "projected_mse",
    "make_iv_scorer",
    "representation_effect_error",
]

register_estimator(InstrumentGuidedRepresentation, method="iv", task="unsupervised_transform",
                   search_grid={"n_components": [1, 2]})
register_estimator(InstrumentGuidedIVRegressor, method="iv", task="regression",
                   search_grid={"cov_type": ["HC0", "HC1"]})
register_estimator(TwoStageLeastSquares, method="iv", task="regression",
                   search_grid={"fit_intercept": [True, False]}, baseline=True)
register_estimator(KClassIVRegressor, method="iv", task="regression",
                   search_grid={"kappa": ["liml", "2sls"]}, baseline=True)
register_estimator(PCATwoStageLeastSquares, method="iv", task="regression",
                   search_grid={"cov_type": ["HC0", "HC1"]}, baseline=True)


def representation_effect_error(estimator, truth):
    """Measure the error of a fitted representation's effects against a planted truth, M1 = ‖b − Γᵀθ‖ / ‖Pθ‖.

    ``b`` are the fitted coefficients on the representation's directions ``Γ`` (``identified_subspace_``),
    ``θ`` the true treatment effects and ``Pθ`` their identified part; the measure is invariant to rotations
    of ``Γ``.

    Read more in the :doc:`User Guide </guide/iv>`.

    Parameters
    ----------
    estimator : InstrumentGuidedIVRegressor
        A fitted regressor with a linear representation.
    truth : dict
        The truth returned by :func:`sklearn_frontier.datasets.make_iv_many_treatments` (``coef`` θ and
        ``identified_coef`` Pθ).

    Returns
    -------
    error : float
        The relative error of the identified effects (0 is perfect).

    Examples
    --------
    >>> from sklearn_frontier.datasets import make_iv_many_treatments
    >>> from sklearn_frontier.iv import InstrumentGuidedIVRegressor, representation_effect_error
    >>> X, y, Z, truth = make_iv_many_treatments(n_samples=2000, n_features=20, random_state=0)
    >>> bool(representation_effect_error(InstrumentGuidedIVRegressor().fit(X, y, Z=Z), truth) < 0.5)
    True
    """
    import numpy as np

    directions = estimator.identified_subspace_
    Ptheta = truth["identified_coef"]
    return float(np.linalg.norm(estimator.representation_coef_ - directions.T @ truth["coef"])
                 / np.linalg.norm(Ptheta))


def _demo(random_state):
    import time

    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer

    from sklearn_frontier.datasets import make_iv_many_treatments

    X, y, Z, truth = make_iv_many_treatments(4000, 80, 3, angle=50, random_state=random_state)
    scores, times = {}, {}
    for label, est in (("ig", InstrumentGuidedIVRegressor()), ("pca", PCATwoStageLeastSquares())):
        pipe = Pipeline([("identity", FunctionTransformer()), ("iv", est)])
        start = time.perf_counter()
        pipe.fit(X, y, iv__Z=Z)
        times[label] = time.perf_counter() - start
        scores[label] = representation_effect_error(pipe[-1], truth)
    return [{"estimator": "InstrumentGuidedIVRegressor", "task": "iv effect (G1, n=4000, p=80, k=3, 50°)",
             "metric": "effect error M1 (lower is better)", "score": scores["ig"],
             "baseline": "PCATwoStageLeastSquares", "baseline_score": scores["pca"], "fit_time": times["ig"]}]


register_demo("iv", _demo)
