"""SMAVE, OPG, RMAVE, MAVEDimensionCV and SMAVERegressor: planted subspaces, invariances, structure, bad input."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import Pipeline
from sklearn_frontier.kernels import sdr as sdr_kernels

from sklearn_frontier import config_context
from sklearn_frontier.datasets import make_sdr_regression
from sklearn_frontier.sdr import (
    OPG,
    RMAVE,
    SMAVE,
    MAVEDimensionCV,
    SMAVERegressor,
    _base,
    _dimension,
    _sgd,
    subspace_distance,
)
from sklearn_frontier.utils._compat import InvalidParameterError


def _dist(est, B0):
    return subspace_distance(est.directions_.T, B0)


@pytest.fixture(scope="module")
def model_b():
    return make_sdr_regression("B", n_samples=1000, n_features=10, noise=0.2, random_state=0)


# ---------------------------------------------------------------- recovery of planted subspaces (known answers)

def test_single_index_recovered():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(1000, 10))
    y = 0.6 * X[:, 0] + 0.8 * X[:, 1] + 0.2 * rng.normal(size=1000)
    beta = np.zeros((10, 1))
    beta[:2, 0] = [0.6, 0.8]
    smave = SMAVE(n_components=1, random_state=0).fit(X, y)
    opg = OPG(n_components=1).fit(X, y)
    ols = np.linalg.lstsq(np.c_[np.ones(1000), X], y, rcond=None)[0][1:, None]  # efficient for a linear mean
    assert _dist(smave, beta) < 0.05
    assert _dist(opg, beta) < 1.5 * subspace_distance(ols, beta)


def test_model_b_smave_beats_opg(model_b):
    X, y, B0 = model_b
    smave = SMAVE(random_state=0).fit(X, y)
    opg = OPG().fit(X, y)
    assert _dist(smave, B0) < 0.05
    assert _dist(smave, B0) < 0.5 * _dist(opg, B0)
    np.testing.assert_allclose(smave.components_ @ smave.components_.T, np.eye(2), atol=1e-12)
    # the windowed stopping rule ends the run well before max_iter, at a multiple of the window
    assert smave.converged_ and smave.n_iter_ < smave.max_iter and smave.n_iter_ % smave.n_iter_no_change == 0
    assert smave.loss_curve_.shape == (smave.n_iter_,) and smave.objective_path_.shape == (smave.n_iter_,)


def test_model_a_smave_matches_rmave_and_beats_opg():
    X, y, B0 = make_sdr_regression("A", n_samples=1000, n_features=10, noise=0.2, random_state=0)
    smave = SMAVE(random_state=0).fit(X, y)
    rmave = RMAVE(localization="knn").fit(X, y)
    opg = OPG().fit(X, y)
    assert _dist(smave, B0) < min(0.2, _dist(opg, B0))
    assert abs(_dist(smave, B0) - _dist(rmave, B0)) <= 0.03


def test_model_c_single_index():
    X, y, B0 = make_sdr_regression("C", n_samples=1000, n_features=10, noise=0.2, random_state=0)
    assert _dist(SMAVE(n_components=1, random_state=0).fit(X, y), B0) < 0.06


def test_rmave_kernel_recovers_model_b():
    X, y, B0 = make_sdr_regression("B", n_samples=400, n_features=8, noise=0.2, random_state=1)
    rmave = RMAVE(max_iter=5).fit(X, y)
    assert _dist(rmave, B0) < 0.1
    assert 1 <= rmave.n_iter_ <= 5 and rmave.loss_curve_.shape == (rmave.n_iter_,)


# ---------------------------------------------------------------- the frozen ("simplified") objective

def test_frozen_mode_is_monotone_ascent():
    rng = np.random.default_rng(0)
    n, p = 300, 6
    X = rng.normal(size=(n, p))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    est = SMAVE(n_components=2, n_neighbors=30, batch_size=n, learning_rate="constant", eta0=0.2,
                refresh_neighbors="never", init="random", max_iter=200, ridge=0.0, random_state=0).fit(X, y)
    # full batch, frozen sets and weights: loss_curve_ is exactly -F + const, so it never increases
    assert np.all(np.diff(est.loss_curve_) <= 1e-12)
    assert est.grad_norm_curve_[-1] <= est.grad_norm_curve_[0] / 10


# ---------------------------------------------------------------- invariances and determinism

def test_affine_invariances_and_permutation(model_b):
    X, y, _ = model_b
    base = SMAVE(max_iter=60, random_state=0).fit(X, y)
    scaled = SMAVE(max_iter=60, random_state=0).fit(X * np.arange(1, 11), 3 * y + 5)
    np.testing.assert_allclose(scaled.components_, base.components_, atol=1e-8)
    perm = np.random.RandomState(1).permutation(10)
    permuted = SMAVE(max_iter=60, random_state=0).fit(X[:, perm], y)
    np.testing.assert_allclose(permuted.components_, base.components_[:, perm], atol=1e-6)


def test_same_seed_identical_other_seed_close(model_b):
    X, y, B0 = model_b
    a = SMAVE(random_state=3).fit(X, y)
    b = SMAVE(random_state=3).fit(X, y)
    c = SMAVE(random_state=4).fit(X, y)
    np.testing.assert_array_equal(a.directions_, b.directions_)
    assert subspace_distance(a.directions_.T, c.directions_.T) < 0.05
    assert np.all(np.diff(a.eigenvalues_) <= 0)
    for row in a.components_:  # sign rule: the largest-|value| entry is positive
        assert row[np.argmax(np.abs(row))] > 0


def test_canonicalisation_is_basis_independent():
    rng = np.random.default_rng(0)
    B = _base.qr_retraction(rng.normal(size=(6, 2)))
    slopes = rng.normal(size=(50, 2)) * [3.0, 1.0]
    ok = np.ones(50, dtype=bool)
    ref, vals = _base.canonical_basis(B, slopes, ok)
    O = _base.qr_retraction(rng.normal(size=(2, 2))) * [1, -1]
    # the same subspace in the basis B O has slopes b O
    other, vals_other = _base.canonical_basis(B @ O, slopes @ O, ok)
    np.testing.assert_allclose(other, ref, atol=1e-10)
    np.testing.assert_allclose(vals_other, vals, rtol=1e-10)


def test_numba_and_numpy_backends_agree(model_b):
    X, y, _ = model_b
    with config_context(backend="numba"):
        a = SMAVE(max_iter=10, random_state=0).fit(X, y)
    with config_context(backend="numpy"):
        b = SMAVE(max_iter=10, random_state=0).fit(X, y)
    np.testing.assert_allclose(a.transform(X), b.transform(X), atol=1e-9)


# ---------------------------------------------------------------- structural linear cost

def test_each_step_queries_only_the_batch(monkeypatch):
    X, y, _ = make_sdr_regression("B", n_samples=3000, n_features=10, random_state=0)
    calls, blocks = [], []
    real_query, real_block = _base.query_neighbors, _base.block_knn

    def spy_query(tree, centres, k):
        calls.append((centres.shape[0], k))
        return real_query(tree, centres, k)

    def spy_block(Z, sq, rows, k):
        blocks.append(rows.shape[0])
        return real_block(Z, sq, rows, k)

    monkeypatch.setattr(_sgd, "query_neighbors", spy_query)
    monkeypatch.setattr(_base, "block_knn", spy_block)
    est = SMAVE(max_iter=5, batch_size=64, refresh_neighbors=1, tol=None, random_state=0).fit(X, y)
    assert calls == [(64, est.n_neighbors_)] * 5  # refreshed every step: exactly the batch is queried
    assert sum(blocks) <= 1000 and max(blocks) <= 256  # the OPG init: <= 1000 anchors, blocks of <= 256 rows
    calls.clear()
    est = SMAVE(max_iter=40, batch_size=64, tol=None, random_state=0).fit(X, y)
    # reuse: each anchor is queried at most once per rebuild, and never more rows than the batch per step
    assert max(c[0] for c in calls) <= 64 and sum(c[0] for c in calls) <= 64 * 40
    assert est.n_refresh_ < 40


# ---------------------------------------------------------------- MAVEDimensionCV

@pytest.mark.parametrize("model,expected", [("A", 2), ("B", 2), ("C", 1)])
def test_dimension_cv_selects_planted_dimension(model, expected):
    X, y, _ = make_sdr_regression(model, n_samples=1000, n_features=10, random_state=0)
    cv = MAVEDimensionCV(SMAVE(max_iter=100, random_state=0), max_components=3, n_repeats=20,
                         random_state=0).fit(X, y)
    assert cv.n_components_ == expected
    assert cv.transform(X).shape == (1000, expected)
    assert list(cv.get_feature_names_out()) == [f"mavedimensioncv{i}" for i in range(expected)]


def test_dimension_cv_opg_fast_path_equals_slow_path():
    X, y, _ = make_sdr_regression("B", n_samples=300, n_features=8, random_state=0)
    fast = MAVEDimensionCV(OPG(), max_components=3, n_repeats=5, random_state=0).fit(X, y)
    rng = np.random.RandomState(0)
    rng.randint(np.iinfo(np.int32).max)  # the seed draw for unseeded estimators
    perms = np.stack([rng.permutation(300) for _ in range(5)])
    yt = (y - y.mean()) / y.std()
    slow = [_dimension._score_repeated_splits(OPG(), d, X, y, yt, perms[:, :200], perms[:, 200:])[0].mean()
            for d in (1, 2, 3)]
    np.testing.assert_allclose(fast.cv_results_["mean_test_mae"], y.std() * np.array(slow), rtol=1e-12)


def test_dimension_cv_honest_folds_and_parallel():
    X, y, _ = make_sdr_regression("C", n_samples=200, n_features=4, random_state=0)
    from joblib import parallel_config

    serial = MAVEDimensionCV(OPG(), max_components=2, cv=3, random_state=0).fit(X, y)
    with parallel_config(backend="threading"):  # processes cost seconds of start-up on 2 cores
        parallel = MAVEDimensionCV(OPG(), max_components=2, cv=3, n_jobs=2, random_state=0).fit(X, y)
    np.testing.assert_allclose(serial.cv_results_["mean_test_mae"], parallel.cv_results_["mean_test_mae"])
    assert serial.n_components_ == 1


# ---------------------------------------------------------------- SMAVERegressor and pipelines

def test_regressor_with_knn_equals_pipeline(model_b):
    X, y, _ = model_b
    reg = SMAVERegressor(max_iter=30, random_state=0, regressor=KNeighborsRegressor(15)).fit(X, y)
    pipe = Pipeline([("sdr", SMAVE(max_iter=30, random_state=0)), ("reg", KNeighborsRegressor(15))]).fit(X, y)
    np.testing.assert_array_equal(reg.predict(X[:50]), pipe.predict(X[:50]))


def test_default_predictor_beats_raw_knn_at_p30():
    X, y, _ = make_sdr_regression("A", n_samples=1500, n_features=30, random_state=0)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.33, random_state=0)
    r2 = SMAVERegressor(random_state=0).fit(X_tr, y_tr).score(X_te, y_te)
    raw = KNeighborsRegressor(15).fit(X_tr, y_tr).score(X_te, y_te)
    assert r2 > raw + 0.1


def test_grid_search_over_pipeline_n_components():
    X, y, _ = make_sdr_regression("C", n_samples=300, n_features=5, random_state=0)
    pipe = Pipeline([("sdr", SMAVE(max_iter=30, random_state=0)), ("reg", KNeighborsRegressor(10))])
    search = GridSearchCV(pipe, {"sdr__n_components": [1, 3]}, cv=3).fit(X, y)
    assert search.best_params_ == {"sdr__n_components": 1}


def test_set_output_pandas_and_feature_names():
    pd = pytest.importorskip("pandas")
    X, y, _ = make_sdr_regression("C", n_samples=100, n_features=4, random_state=0)
    frame = pd.DataFrame(X, columns=list("abcd"))
    out = SMAVE(max_iter=5, random_state=0).set_output(transform="pandas").fit(frame, y).transform(frame)
    assert list(out.columns) == ["smave0", "smave1"]


# ---------------------------------------------------------------- bad input and edge cases

def test_bad_inputs_raise_clear_errors():
    X, y, _ = make_sdr_regression("C", n_samples=50, n_features=4, random_state=0)
    with pytest.raises(ValueError, match="n_features=1"):
        SMAVE().fit(X[:, :1], y)
    with pytest.raises(ValueError, match="n_components"):
        SMAVE().fit(X[:3], y[:3])
    with pytest.raises(ValueError, match="n_neighbors"):
        SMAVE(n_neighbors=3).fit(X, y)
    with pytest.raises(ValueError, match="init"):
        SMAVE(init=np.ones((2, 3))).fit(X, y)
    with pytest.raises(ValueError, match="rank"):
        SMAVE(init=np.ones((2, 4))).fit(X, y)
    with pytest.raises(InvalidParameterError):
        SMAVE(kernel="cosine").fit(X, y)
    with pytest.raises(InvalidParameterError):
        SMAVE(eta0=0).fit(X, y)
    with pytest.raises(InvalidParameterError):
        SMAVE(refresh_neighbors="sometimes").fit(X, y)
    with pytest.raises(ValueError):
        SMAVE().fit(X, np.c_[y, y])
    with pytest.raises(NotFittedError):
        SMAVE().transform(X)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError):
        OPG().fit(Xn, y)


def test_constant_y_and_columns_are_handled():
    X, y, _ = make_sdr_regression("C", n_samples=80, n_features=4, random_state=0)
    X[:, 3] = 1.0
    with pytest.warns(UserWarning, match="constant"):
        a = SMAVE(max_iter=10, random_state=0).fit(X, np.full(80, 2.0))
    with pytest.warns(UserWarning, match="constant"):
        b = SMAVE(max_iter=10, random_state=0).fit(X, np.full(80, 2.0))
    np.testing.assert_array_equal(a.components_, b.components_)
    for est in (SMAVE(max_iter=10, random_state=0), OPG(), RMAVE(max_iter=2)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = est.fit(X, y).transform(X)
        assert np.all(np.isfinite(out)) and np.all(np.isfinite(est.directions_))


def test_float32_and_full_dimension():
    X, y, _ = make_sdr_regression("C", n_samples=60, n_features=3, random_state=0)
    est = SMAVE(n_components=3, max_iter=5, random_state=0).fit(X.astype(np.float32), y)
    assert est.transform(X.astype(np.float32)).dtype == np.float32
    assert est.components_.dtype == np.float64
    np.testing.assert_allclose(np.abs(np.linalg.det(est.components_)), 1.0, atol=1e-10)


def test_make_sdr_regression_and_distance():
    X, y, B0 = make_sdr_regression("B", n_samples=20, n_features=8, rho=0.5, random_state=0)
    np.testing.assert_allclose(B0.T @ B0, np.eye(2), atol=1e-15)
    assert subspace_distance(B0, B0) == pytest.approx(0.0, abs=1e-12)
    assert subspace_distance(B0, B0, metric="trace") == pytest.approx(1.0)
    with pytest.raises(ValueError, match="n_features >= 8"):
        make_sdr_regression("B", n_features=5)
    assert "sdr_local_wls" in sdr_kernels.__all__
