"""MixConfig as users run it: the semi-supervised recipe in one estimator, the broken plain Pipeline refused
loudly, and the task read from y by documented rules (pandas nullable labels, many integer values)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_frontier.configurations import MixConfigAugmenter, SemiSupervisedAugmentation
from sklearn_frontier.datasets import make_two_regime_hierarchy
from sklearn_frontier.exceptions import UnlabelledRowsWarning

FAST = dict(n_resolutions=8, n_restarts=1, max_epochs=30, random_state=0)


@pytest.fixture(scope="module")
def partially_labelled():
    X, y, _ = make_two_regime_hierarchy(n_per_subblob=10, n_per_coarse=60, random_state=0)
    labelled = np.random.default_rng(0).random(y.shape[0]) < 0.3
    X = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    return X, y, np.where(labelled, y, -1), labelled


def test_plain_pipeline_with_unlabelled_rows_warns(partially_labelled):
    X, _, y_partial, _ = partially_labelled
    with pytest.warns(UnlabelledRowsWarning, match="SemiSupervisedAugmentation") as record:
        make_pipeline(MixConfigAugmenter(**FAST), LogisticRegression(max_iter=500)).fit(X, y_partial)
    assert record[0].filename == __file__


def test_semi_supervised_recipe_in_a_pipeline_and_grid_search(partially_labelled):
    X, y, y_partial, labelled = partially_labelled
    model = make_pipeline(StandardScaler(), SemiSupervisedAugmentation(LogisticRegression(max_iter=1000),
                                                                       MixConfigAugmenter(**FAST)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnlabelledRowsWarning)
        model.fit(X, y_partial)
    final = model[-1]
    assert -1 not in final.classes_ and set(final.classes_) == set(y[labelled])
    np.testing.assert_array_equal(final.labelled_mask_, labelled)
    assert final.augmenter_.labelled_mask_.sum() == labelled.sum()
    accuracy = np.mean(model.predict(X[~labelled]) == y[~labelled])
    assert accuracy > 0.8  # the classes of the planted hierarchy are learnable from 30 % labels
    # score ignores the unlabelled rows: it equals the accuracy on the labelled ones
    assert model.score(X, y_partial) == pytest.approx(np.mean(model.predict(X[labelled]) == y[labelled]))
    search = GridSearchCV(SemiSupervisedAugmentation(LogisticRegression(max_iter=1000), MixConfigAugmenter(**FAST)),
                          {"estimator__C": [0.01, 1.0]}, cv=KFold(3, shuffle=True, random_state=0))
    search.fit(X, y_partial)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def test_regression_with_nan_targets():
    X, y, _ = make_two_regime_hierarchy(n_per_subblob=10, n_per_coarse=60, random_state=1)
    target = X[:, 0] * 2.0 + np.random.default_rng(0).normal(scale=0.1, size=X.shape[0])
    target[::3] = np.nan
    model = SemiSupervisedAugmentation(Ridge(), MixConfigAugmenter(**FAST)).fit(X, target)
    assert model.augmenter_.task_ == "regression" and model.labelled_mask_.sum() == np.isfinite(target).sum()
    assert model.score(X, target) > 0.9


@pytest.mark.parametrize("make_y", [
    lambda y: pd.Series(np.where(np.arange(y.size) % 4 == 0, np.nan, y)),   # float labels, NaN for missing
    lambda y: pd.Series(pd.array(np.where(np.arange(y.size) % 4 == 0, None, y), dtype="Int64")),  # nullable
    lambda y: pd.Series(np.array([f"c{v}" for v in y], dtype=object)).mask(np.arange(y.size) % 4 == 0),
], ids=["float-nan", "Int64-NA", "strings-None"])
def test_class_labels_with_missing_values_are_classes(make_y):
    X, y, _ = make_two_regime_hierarchy(n_per_subblob=10, n_per_coarse=60, random_state=0)
    aug = MixConfigAugmenter(**FAST).fit(X, make_y(y))
    assert aug.task_ == "classification"
    assert aug.labelled_mask_.sum() == np.sum(np.arange(y.size) % 4 != 0)
    assert len(aug.classes_) == len(np.unique(y))


def test_integer_target_with_many_values_is_a_regression_with_a_warning():
    X, _, _ = make_two_regime_hierarchy(n_per_subblob=10, n_per_coarse=60, random_state=0)
    y = np.random.default_rng(0).integers(0, 214, size=X.shape[0])
    with pytest.warns(UserWarning, match="task='classification'"):
        aug = MixConfigAugmenter(**FAST).fit(X, y)
    assert aug.task_ == "regression"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert MixConfigAugmenter(task="classification", **FAST).fit(X, y % 3).task_ == "classification"
