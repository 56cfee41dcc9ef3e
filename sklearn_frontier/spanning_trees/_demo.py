"""Demo rows: PR-BAST vs BAST on the mgcv horseshoe inside a Pipeline (short chains)."""

import time

import numpy as np
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer


def demo_rows(random_state=0):
    from sklearn_frontier.datasets._spanning_trees import horseshoe_boundary, make_horseshoe

    from ._estimators import BASTRegressor, PRBASTRegressor

    X, y, _ = make_horseshoe(300, random_state=random_state)
    Xt, _, ft = make_horseshoe(300, random_state=random_state + 1)
    boundary = horseshoe_boundary()

    def run(est):
        pipe = make_pipeline(FunctionTransformer(), est)  # coordinates must not be rescaled
        start = time.perf_counter()
        pipe.fit(X, y)
        return float(np.sqrt(np.mean((pipe.predict(Xt) - ft) ** 2))), time.perf_counter() - start

    pr, t_pr = run(PRBASTRegressor(n_trees=10, domain=boundary, n_iter=200, n_burnin=80, random_state=random_state))
    ba, _ = run(BASTRegressor(n_trees=10, domain=boundary, n_iter=200, n_burnin=80, random_state=random_state))
    return [{"estimator": "PRBASTRegressor", "task": "regression (horseshoe)", "metric": "RMSE vs truth",
             "score": pr, "baseline": "BASTRegressor", "baseline_score": ba, "fit_time": t_pr}]
