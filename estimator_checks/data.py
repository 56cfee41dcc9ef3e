"""Tiny data for each registry task, shared by the contract checks."""

import warnings

import numpy as np
from sklearn.datasets import make_blobs, make_classification, make_regression


def make_task_data(task, n_samples=60, n_features=4, random_state=0):
    """``(X, y)`` for one registry task (``y`` is None for unsupervised tasks).

    ``"annotation"`` returns an annotation matrix ``Y`` of shape (n_samples, 3) with NaN for missing
    labels (each row has at least one label).
    """
    rng = np.random.RandomState(random_state)
    if task in ("regression", "supervised_transform"):
        X, y = make_regression(n_samples=n_samples, n_features=n_features, n_informative=2, noise=0.1,
                               random_state=random_state)
        return X, y
    if task == "classification":
        return make_classification(n_samples=n_samples, n_features=n_features, n_informative=2, n_redundant=0,
                                   random_state=random_state)
    if task in ("clustering", "unsupervised_transform"):
        X, _ = make_blobs(n_samples=n_samples, n_features=n_features, centers=3, random_state=random_state)
        return X, None
    if task == "annotation":
        X, truth = make_classification(n_samples=n_samples, n_features=n_features, n_informative=2,
                                       n_redundant=0, random_state=random_state)
        Y = np.where(rng.rand(n_samples, 3) < 0.8, truth[:, None], 1 - truth[:, None]).astype(float)
        missing = rng.rand(n_samples, 3) < 0.4
        missing[:, 0] = False
        Y[missing] = np.nan
        return X, Y
    raise ValueError(f"unknown task {task!r}")


def fit_on_task_data(entry):
    """``(estimator, X, y)``: ``entry``'s instance (``random_state=0`` where it has one) fitted on its task data."""
    X, y = make_task_data(entry.task)
    params = entry.estimator().get_params()
    est = entry.instance(**({"random_state": 0} if "random_state" in params else {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X) if y is None else est.fit(X, y)
    return est, X, y
