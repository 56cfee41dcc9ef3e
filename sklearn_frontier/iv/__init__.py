"""Instrument-guided IV regression with more treatments than instruments.

Estimators of Lin, Lan & Syrgkanis, "Learning Treatment Representations for Downstream Instrumental
Variable Regression" (ICML 2026, https://arxiv.org/abs/2506.02200), and the baselines they are measured
against, all with ``fit(X, y, *, Z=None)``: X holds the treatments, Z the instruments.

- :class:`InstrumentGuidedRepresentation`: learn an r-dimensional treatment representation guided by Z.
- :class:`InstrumentGuidedIVRegressor`: 2SLS on that representation; ``coef_`` is the identified
  minimum-norm effect, with HC1 inference, weak-IV diagnostics and intervention effects.
- :class:`TwoStageLeastSquares`, :class:`PCATwoStageLeastSquares`, :func:`make_pca_2sls`: baselines.
- :func:`projected_mse`, :func:`make_iv_scorer`: Z-aware model selection (R² on a confounded y rewards
  absorbing the confounding, so it prefers OLS and too many components).

**Passing Z.** With ``sklearn.set_config(enable_metadata_routing=True)`` the estimators request Z by
default, so ``Pipeline.fit(X, y, Z=Z)``, ``GridSearchCV.fit(X, y, Z=Z)`` and
``cross_validate(..., params={"Z": Z})`` deliver each fold's Z (use ``scoring=make_iv_scorer()`` or the
estimator's own ``score``). With routing off use step parameters: ``pipe.fit(X, y, iv__Z=Z)``; scoring
then falls back to R² (with an ``IVScoreWarning``).
"""

from sklearn_frontier._registry import register_demo, register_estimator
from sklearn_frontier.iv._inference import Intervention
from sklearn_frontier.iv._regressors import (
    InstrumentGuidedIVRegressor,
    PCATwoStageLeastSquares,
    TwoStageLeastSquares,
    make_pca_2sls,
)
from sklearn_frontier.iv._representation import InstrumentGuidedRepresentation
from sklearn_frontier.iv._scoring import make_iv_scorer, projected_mse

__all__ = [
    "InstrumentGuidedRepresentation",
    "InstrumentGuidedIVRegressor",
    "TwoStageLeastSquares",
    "PCATwoStageLeastSquares",
    "Intervention",
    "make_pca_2sls",
    "projected_mse",
    "make_iv_scorer",
]

register_estimator(InstrumentGuidedRepresentation, method="iv", task="unsupervised_transform",
                   search_grid={"n_components": [1, 2]})
register_estimator(InstrumentGuidedIVRegressor, method="iv", task="regression",
                   search_grid={"cov_type": ["HC0", "HC1"]})
register_estimator(TwoStageLeastSquares, method="iv", task="regression",
                   search_grid={"fit_intercept": [True, False]}, baseline=True)
register_estimator(PCATwoStageLeastSquares, method="iv", task="regression",
                   search_grid={"cov_type": ["HC0", "HC1"]}, baseline=True)


def representation_effect_error(estimator, truth):
    """M1 = ‖b − Wᵀθ‖ / ‖Pθ‖ (error of the representation's effects, rotation-invariant)."""
    import numpy as np

    W = estimator.identified_subspace_
    Ptheta = truth["identified_coef"]
    return float(np.linalg.norm(estimator.representation_coef_ - W.T @ truth["coef"]) / np.linalg.norm(Ptheta))


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
