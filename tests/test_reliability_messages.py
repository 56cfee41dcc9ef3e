"""Error messages of the property matrix that named the wrong thing: each names the actual input now."""

import numpy as np
import pytest

from sklearn_frontier.configurations import MixConfigAugmenter
from sklearn_frontier.iv import (
    InstrumentGuidedIVRegressor,
    InstrumentGuidedRepresentation,
    PCATwoStageLeastSquares,
    TwoStageLeastSquares,
)

IV = [TwoStageLeastSquares, PCATwoStageLeastSquares, InstrumentGuidedIVRegressor, InstrumentGuidedRepresentation]
N = 30


def _fit(cls, X, y, **kw):
    est = cls()
    return est.fit(X, **kw) if cls is InstrumentGuidedRepresentation else est.fit(X, y, **kw)


@pytest.mark.parametrize("cls", IV, ids=lambda c: c.__name__)
@pytest.mark.parametrize("with_z", [False, True], ids=["Z=None", "Z given"])
def test_constant_treatments_are_named_as_treatments(cls, with_z):
    # was: "X has no variation ...; IV regression needs instruments that vary" (Z=None), or a silent fit (Z given)
    rng = np.random.default_rng(0)
    kw = {"Z": rng.normal(size=(N, 3))} if with_z else {}
    with pytest.raises(ValueError, match=r"X \(the treatments\) has no variation.*needs treatments that vary"):
        _fit(cls, np.full((N, 3), 2.0), rng.normal(size=N), **kw)


@pytest.mark.parametrize("cls", IV, ids=lambda c: c.__name__)
def test_constant_instruments_are_named_as_instruments(cls):
    rng = np.random.default_rng(1)
    with pytest.raises(ValueError, match=r"Z \(the instruments\) has no variation.*needs instruments that vary"):
        _fit(cls, rng.normal(size=(N, 2)), rng.normal(size=N), Z=np.ones((N, 2)))


def test_zero_treatments_without_intercept_say_why():
    rng = np.random.default_rng(2)
    with pytest.raises(ValueError, match="every value is 0 and fit_intercept=False"):
        TwoStageLeastSquares(fit_intercept=False).fit(np.zeros((N, 2)), rng.normal(size=N), Z=rng.normal(size=(N, 3)))
    # a constant non-zero treatment without intercept is a regressor like any other
    est = TwoStageLeastSquares(fit_intercept=False).fit(np.ones((N, 1)), np.full(N, 3.0), Z=rng.normal(size=(N, 2)))
    np.testing.assert_allclose(est.coef_, [3.0])


def test_varying_treatments_still_fit():
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(N, 2))
    X = Z @ rng.normal(size=(2, 2)) + 0.1 * rng.normal(size=(N, 2))
    for cls in IV:
        _fit(cls, X, X @ [1.0, -1.0] + 0.01 * rng.normal(size=N), Z=Z)


def test_infinite_target_of_the_augmenter_names_y():
    # was: "Input contains infinity or a value too large" (scikit-learn's type_of_target, no input name)
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, N).astype(float)
    y[1] = np.inf
    with pytest.raises(ValueError, match="Input y contains infinity; mark unlabelled rows"):
        MixConfigAugmenter().fit(rng.normal(size=(N, 3)), y)


def test_nan_in_class_labels_marks_unlabelled_rows():
    """Missing class labels (NaN, as pandas writes them) are unlabelled rows, like -1."""
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, N).astype(float)
    y[3] = np.nan
    aug = MixConfigAugmenter(task="classification", n_resolutions=8, n_restarts=1, max_epochs=5,
                             random_state=0).fit(rng.normal(size=(N, 3)), y)
    assert not aug.labelled_mask_[3] and aug.labelled_mask_.sum() == N - 1
    assert list(aug.classes_) == [0, 1]
