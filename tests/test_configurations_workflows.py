"""MixConfig as users run it: the semi-supervised recipe in one estimator, the broken plain Pipeline refused
loudly, the task read from y by documented rules (pandas nullable labels, many integer values), the unlabelled
marker rule (a real class -1, None in object arrays, the string "-1", explicit markers) and cross-validation
scored on the labelled rows."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_frontier.configurations import MixConfigAugmenter, SemiSupervisedAugmentation, make_labelled_scorer
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


# ----------------------------------------------------------------------------- the unlabelled marker
@pytest.fixture(scope="module")
def three_classes():
    """Three classes labelled -1, 0 and 1 (a real class -1), 30 % of the rows labelled."""
    X, y = make_blobs(n_samples=240, centers=[[0, 0], [6, 0], [0, 6]], cluster_std=1.2, random_state=0)
    labelled = np.random.default_rng(1).random(y.shape[0]) < 0.3
    return X, y - 1, labelled


@pytest.mark.parametrize("mark", [
    lambda y, lab: np.where(lab, y.astype(float), np.nan),                                    # float, NaN
    lambda y, lab: np.array([int(v) if keep else None for v, keep in zip(y, lab)], dtype=object),  # None
    lambda y, lab: pd.Series(pd.array(np.where(lab, y, 0), dtype="Int64")).mask(~lab),        # Int64, pd.NA
], ids=["nan", "object-None", "Int64-NA"])
def test_minus_one_is_a_class_when_missing_values_mark_the_unlabelled_rows(three_classes, mark):
    X, y, labelled = three_classes
    model = make_pipeline(StandardScaler(), SemiSupervisedAugmentation(LogisticRegression(max_iter=1000),
                                                                       MixConfigAugmenter(**FAST)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(X, mark(y, labelled))
    final = model[-1]
    np.testing.assert_array_equal(final.classes_, [-1, 0, 1])
    assert final.unlabelled_marker_ == "missing" and final.classes_.dtype.kind == "i"
    np.testing.assert_array_equal(final.labelled_mask_, labelled)
    assert np.mean(model.predict(X[~labelled]) == y[~labelled]) > 0.9


def test_explicit_markers(three_classes):
    X, y, labelled = three_classes
    fit = lambda target, **kw: SemiSupervisedAugmentation(  # noqa: E731
        LogisticRegression(max_iter=1000), MixConfigAugmenter(**FAST, **kw)).fit(X, target)
    by_number = fit(np.where(labelled, y, 99), unlabelled_marker=99)
    np.testing.assert_array_equal(by_number.classes_, [-1, 0, 1])
    np.testing.assert_array_equal(by_number.labelled_mask_, labelled)
    names = np.array(["minus", "zero", "one"])[y + 1]
    by_string = fit(np.where(labelled, names, "unknown"), unlabelled_marker="unknown")
    np.testing.assert_array_equal(by_string.classes_, ["minus", "one", "zero"])
    assert by_string.score(X, np.where(labelled, names, "unknown")) == pytest.approx(
        np.mean(by_string.predict(X[labelled]) == names[labelled]))
    # every row labelled with classes {-1, 1}: "auto" reads -1 as the marker and says how to keep it
    binary = np.where(y == 0, 1, y)
    with pytest.raises(ValueError, match="unlabelled_marker='missing'"):
        fit(binary)
    assert fit(binary, unlabelled_marker="missing").classes_.tolist() == [-1, 1]
    with pytest.raises(ValueError, match="unlabelled_marker"):
        fit(y, unlabelled_marker=None)
    with pytest.raises(ValueError, match="at least one labelled row.*'unknown'"):
        fit(np.full(y.shape, "unknown", dtype=object), unlabelled_marker="unknown")


def test_string_minus_one_is_the_marker_not_a_class(partially_labelled):
    X, y, y_partial, labelled = partially_labelled
    as_strings = y_partial.astype(str)  # "-1", "0", "1": labels read from a text file
    model = SemiSupervisedAugmentation(LogisticRegression(max_iter=1000), MixConfigAugmenter(**FAST)).fit(
        X, as_strings)
    assert model.classes_.tolist() == ["0", "1"] and model.unlabelled_marker_ == "-1"
    np.testing.assert_array_equal(model.labelled_mask_, labelled)
    assert np.mean(model.predict(X[~labelled]) == y[~labelled].astype(str)) > 0.8
    with pytest.warns(UnlabelledRowsWarning, match=r"'-1'") as record:
        make_pipeline(MixConfigAugmenter(**FAST), LogisticRegression(max_iter=500)).fit(X, as_strings)
    assert record[0].filename == __file__


def test_cross_validation_scores_the_labelled_rows(partially_labelled):
    X, y, y_partial, labelled = partially_labelled
    model = make_pipeline(StandardScaler(), SemiSupervisedAugmentation(LogisticRegression(max_iter=1000),
                                                                       MixConfigAugmenter(**FAST)))
    cv = KFold(3, shuffle=True, random_state=0)
    own = cross_val_score(model, X, y_partial, cv=cv)  # the estimator's score ignores unlabelled rows
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scorer = make_labelled_scorer("accuracy")
        labelled_scores = cross_val_score(model, X, y_partial, cv=cv, scoring=scorer)
    np.testing.assert_array_equal(labelled_scores, own)
    assert labelled_scores.mean() > 0.8
    # by hand: each fold's accuracy over its labelled test rows
    for (train, test), score in zip(cv.split(X), labelled_scores):
        fitted = clone(model).fit(X.iloc[train], y_partial[train])
        keep = test[labelled[test]]
        assert score == pytest.approx(np.mean(fitted.predict(X.iloc[keep]) == y[keep]))
    # scikit-learn's accuracy counts every unlabelled test row as an error: it warns, at this line
    with pytest.warns(UnlabelledRowsWarning, match="make_labelled_scorer") as record:
        plain = cross_val_score(model, X, y_partial, cv=cv, scoring="accuracy")
    assert record[0].filename == __file__
    assert plain.mean() < labelled_scores.mean() - 0.3
    # other metrics and markers, and a grid search
    proba = cross_val_score(model, X, np.where(labelled, y.astype(float), np.nan), cv=cv,
                            scoring=make_labelled_scorer("neg_log_loss"))
    assert np.all(np.isfinite(proba)) and np.all(proba < 0)
    search = GridSearchCV(model, {"semisupervisedaugmentation__estimator__C": [0.01, 1.0]}, cv=cv,
                          scoring=make_labelled_scorer("balanced_accuracy")).fit(X, y_partial)
    assert search.best_score_ > 0.8
    assert "make_labelled_scorer('accuracy'" in repr(scorer)


def test_labelled_scorer_for_a_regression_target():
    X, _, _ = make_two_regime_hierarchy(n_per_subblob=10, n_per_coarse=60, random_state=1)
    target = X[:, 0] * 2.0 + np.random.default_rng(0).normal(scale=0.1, size=X.shape[0])
    target[::3] = np.nan
    model = SemiSupervisedAugmentation(Ridge(), MixConfigAugmenter(**FAST))
    cv = KFold(3, shuffle=True, random_state=0)
    np.testing.assert_allclose(cross_val_score(model, X, target, cv=cv, scoring=make_labelled_scorer("r2")),
                               cross_val_score(model, X, target, cv=cv), rtol=1e-12)
    # the augmenter's own head scores the labelled rows too
    aug = MixConfigAugmenter(**FAST).fit(X, target)
    keep = ~np.isnan(target)
    assert aug.score(X, target) == pytest.approx(aug.score(X[keep], target[keep]))
