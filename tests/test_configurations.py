"""Known-answer tests of ConfigurationExtractor / MixConfigAugmenter."""

import pickle
import warnings

import numpy as np
import pytest
from scipy.sparse.csgraph import connected_components
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline

from sklearn_frontier.configurations import ConfigurationExtractor, MixConfigAugmenter, configurations_from_graph
from sklearn_frontier.configurations._graph import knn_graph
from sklearn_frontier.datasets import make_two_regime_hierarchy
from sklearn_frontier.exceptions import ConfigurationFallbackWarning
from sklearn_frontier.utils._compat import InvalidParameterError

FAST = dict(n_resolutions=16, n_restarts=1)


def _sphere(rng, k, d, r):
    v = rng.normal(size=(k, d))
    return r * v / np.linalg.norm(v, axis=1, keepdims=True)


def _hierarchical_blobs(sub_radius, seed=6):
    """4 groups on a radius-20 sphere in R^5 x 3 subgroups at ``sub_radius`` (sd 0.5, 40 points each)."""
    rng = np.random.default_rng(seed)
    centres = _sphere(rng, 4, 5, 20.0)
    X, fine, coarse = [], [], []
    for g in range(4):
        subs = _sphere(rng, 3, 5, sub_radius)
        for s in range(3):
            X.append(centres[g] + subs[s] + 0.5 * rng.normal(size=(40, 5)))
            fine += [3 * g + s] * 40
            coarse += [g] * 40
    return np.vstack(X), np.array(fine), np.array(coarse)


@pytest.fixture(scope="module")
def regime_data():
    X, y, regime = make_two_regime_hierarchy(n_per_subblob=20, n_per_coarse=120, random_state=0)
    train, test = train_test_split(np.arange(y.shape[0]), train_size=0.1, stratify=y, random_state=0)
    y_semi = np.full_like(y, -1)
    y_semi[train] = y[train]
    return X, y, regime, train, test, y_semi


@pytest.fixture(scope="module")
def fitted_modes(regime_data):
    X, y, regime, train, test, y_semi = regime_data
    return {m: MixConfigAugmenter(mixing=m, n_resolutions=24, max_epochs=150, random_state=0).fit(X, y_semi)
            for m in ("learned", "uniform", "single", "concat")}


# ----------------------------------------------------- planted two-level hierarchy
def test_hierarchical_blobs_both_levels_are_configurations():
    X, fine, coarse = _hierarchical_blobs(2.0)
    W = knn_graph(X, 10)
    # precondition of the known answer: each coarse group is (nearly) one connected piece
    assert connected_components(W)[0] <= 5
    labels, res, stab = configurations_from_graph(W, random_state=0)
    ari_fine = [adjusted_rand_score(fine, c) for c in labels]
    ari_coarse = [adjusted_rand_score(coarse, c) for c in labels]
    i_fine, i_coarse = int(np.argmax(ari_fine)), int(np.argmax(ari_coarse))
    assert ari_fine[i_fine] >= 0.9 and labels[i_fine].max() + 1 == 12
    assert ari_coarse[i_coarse] >= 0.9 and labels[i_coarse].max() + 1 <= 5
    assert i_fine != i_coarse
    # the fine level is the most stable configuration (widest band)
    assert int(np.argmax(stab[:, 3])) == i_fine


def test_disconnected_subgroups_have_no_coarse_configuration():
    X, fine, coarse = _hierarchical_blobs(4.0)
    W = knn_graph(X, 10)
    assert connected_components(W)[0] == 12
    labels, _, _ = configurations_from_graph(W, random_state=0)
    assert min(c.max() + 1 for c in labels) >= 12  # modularity never merges components
    assert max(adjusted_rand_score(coarse, c) for c in labels) < 0.9
    assert max(adjusted_rand_score(fine, c) for c in labels) == 1.0


def test_extractor_finds_hierarchy_and_invariants():
    X, fine, coarse = _hierarchical_blobs(2.0)
    ext = ConfigurationExtractor(n_neighbors=10, standardize=False, random_state=0).fit(X)
    assert max(adjusted_rand_score(fine, c) for c in ext.configurations_) >= 0.9
    assert max(adjusted_rand_score(coarse, c) for c in ext.configurations_) >= 0.9
    # invariants
    assert 1 <= ext.n_configurations_ <= 8 == ext.max_configurations
    for c, K in zip(ext.configurations_, ext.n_clusters_):
        assert c.dtype == np.int64 and set(c.tolist()) == set(range(K))
    res = ext.resolutions_
    assert np.all(res[:, 0] < res[:, 1])
    order = np.argsort(res[:, 0])
    assert np.all(res[order][1:, 0] >= res[order][:-1, 1] - 1e-12)  # non-overlapping bands
    assert np.all(np.diff(ext.n_clusters_) >= 0)
    assert np.all(np.isfinite(ext.stability_)) and ext.stability_.shape == (ext.n_configurations_, 4)
    S = ext.soft_assignments(X)
    for s in S:
        np.testing.assert_allclose(s.sum(axis=1), 1.0, atol=1e-12)
    # a point deep inside a separated blob is assigned one-hot
    i_fine = int(np.argmax([adjusted_rand_score(fine, c) for c in ext.configurations_]))
    deep = X[fine == 0].mean(axis=0, keepdims=True)
    s_deep = ext.soft_assignments(deep)[i_fine]
    assert s_deep.max() == 1.0
    assert ext.transform(X).shape == (X.shape[0], ext.n_clusters_.sum())
    assert ext.predict(X).shape == (X.shape[0], ext.n_configurations_)
    prof = ext.resolution_profile_
    assert prof["gamma"].shape == (48,) and prof["winner"].shape == (48,)
    assert len(ext.get_feature_names_out()) == ext.n_clusters_.sum()


def test_extractor_n_jobs_does_not_change_result():
    X, _ = make_blobs(n_samples=80, centers=3, random_state=1)
    a = ConfigurationExtractor(n_neighbors=8, **FAST, random_state=3).fit(X)
    b = ConfigurationExtractor(n_neighbors=8, **FAST, random_state=3, n_jobs=2).fit(X)
    for ca, cb in zip(a.configurations_, b.configurations_):
        np.testing.assert_array_equal(ca, cb)
    np.testing.assert_array_equal(a.resolutions_, b.resolutions_)


def test_backends_give_identical_configurations():
    from sklearn_frontier import config_context

    X, _ = make_blobs(n_samples=60, centers=3, random_state=2)
    ext = ConfigurationExtractor(n_neighbors=6, n_resolutions=6, n_restarts=1, random_state=0)
    with config_context(backend="numpy"):
        ref = clone(ext).fit(X)
    fast = clone(ext).fit(X)
    assert len(ref.configurations_) == len(fast.configurations_)
    for ca, cb in zip(ref.configurations_, fast.configurations_):
        np.testing.assert_array_equal(ca, cb)
    np.testing.assert_allclose(ref.resolutions_, fast.resolutions_, rtol=1e-10)


# ------------------------------------------------------------------ mixing
def test_mixing_weights_rows_and_modes(regime_data, fitted_modes):
    X = regime_data[0]
    p = X.shape[1]
    for mode, aug in fitted_modes.items():
        w = aug.mixing_weights(X)
        M = aug.n_configurations_
        assert w.shape == (X.shape[0], M)
        assert np.all(w >= 0)
        np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-6)
        Xt = aug.transform(X)
        np.testing.assert_array_equal(Xt[:, :p], X)  # passthrough: bit-for-bit
        assert Xt.dtype == np.float64
        if mode == "concat":
            assert Xt.shape[1] == p + aug.extractor_.n_clusters_.sum()
        else:
            assert Xt.shape[1] == p + aug.embed_dim
        assert len(aug.get_feature_names_out()) == Xt.shape[1]
    assert np.all(fitted_modes["uniform"].mixing_weights(X) == 1.0 / fitted_modes["uniform"].n_configurations_)
    single = fitted_modes["single"]
    w = single.mixing_weights(X)
    widths = single.extractor_.stability_[:, 3]
    assert single.single_index_ == int(np.argmax(widths))
    assert np.all(w[:, single.single_index_] == 1.0) and np.all(w.sum(axis=1) == 1.0)
    assert np.all(fitted_modes["concat"].mixing_weights(X) == 1.0 / fitted_modes["concat"].n_configurations_)


def test_output_assignments_and_no_passthrough(regime_data):
    X, _, _, _, _, y_semi = regime_data
    aug = MixConfigAugmenter(output="assignments", passthrough=False, **FAST, max_epochs=30, random_state=0)
    Xt = aug.fit(X, y_semi).transform(X)
    S = aug.extractor_.soft_assignments(X)
    w = aug.mixing_weights(X)
    assert Xt.shape == (X.shape[0], aug.extractor_.n_clusters_.sum())
    np.testing.assert_allclose(Xt, np.hstack([w[:, [i]] * s for i, s in enumerate(S)]), atol=1e-12)
    assert aug.get_feature_names_out()[0] == "config0_c0"


# ------------------------------------------------------------------ determinism
def test_determinism_and_refit(regime_data):
    X, _, _, _, _, y_semi = regime_data
    params = dict(**FAST, max_epochs=40)
    a = MixConfigAugmenter(**params, random_state=11).fit(X, y_semi)
    b = MixConfigAugmenter(**params, random_state=11).fit(X, y_semi)
    for ca, cb in zip(a.extractor_.configurations_, b.extractor_.configurations_):
        np.testing.assert_array_equal(ca, cb)
    np.testing.assert_array_equal(a.mixing_weights(X), b.mixing_weights(X))
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    np.testing.assert_array_equal(a.fit_transform(X, y_semi), a.transform(X))
    c = MixConfigAugmenter(**params, random_state=0).fit(X, y_semi)
    c.set_params(random_state=11).fit(X, y_semi)
    np.testing.assert_array_equal(c.transform(X), a.transform(X))
    restored = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(restored.transform(X), a.transform(X))
    assert all(isinstance(v, np.ndarray) for v in a.module_state_.values())


# ------------------------------------------------------------------ adaptivity
def test_learned_weights_adapt_to_regime_and_beat_single(regime_data, fitted_modes):
    X, y, regime, train, test, _ = regime_data
    w = fitted_modes["learned"].mixing_weights(X)
    tv = 0.5 * np.abs(w[regime == 0].mean(axis=0) - w[regime == 1].mean(axis=0)).sum()
    assert tv > 0.1
    for mode in ("uniform", "single"):
        wm = fitted_modes[mode].mixing_weights(X)
        assert np.ptp(wm, axis=0).max() == 0.0  # zero spread by construction

    def acc(mode):
        Xt = fitted_modes[mode].transform(X)
        return LogisticRegression(max_iter=2000).fit(Xt[train], y[train]).score(Xt[test], y[test])

    raw = LogisticRegression(max_iter=2000).fit(X[train], y[train]).score(X[test], y[test])
    assert acc("learned") > acc("single")
    assert acc("learned") > raw + 0.05


# ------------------------------------------------------------------ regression
def test_regression_auto_and_gain_over_raw():
    X, y, _ = make_two_regime_hierarchy(n_per_subblob=20, n_per_coarse=120, task="regression", random_state=1)
    train, test = train_test_split(np.arange(y.shape[0]), train_size=0.2, random_state=0)
    y_semi = np.full(y.shape, np.nan)
    y_semi[train] = y[train]
    aug = MixConfigAugmenter(n_resolutions=24, max_epochs=150, random_state=0).fit(X, y_semi)
    assert aug.task_ == "regression" and not hasattr(aug, "classes_")
    Xt = aug.transform(X)
    r2_aug = Ridge(alpha=1.0).fit(Xt[train], y[train]).score(Xt[test], y[test])
    r2_raw = Ridge(alpha=1.0).fit(X[train], y[train]).score(X[test], y[test])
    assert r2_aug > r2_raw + 0.2


def test_semi_supervised_rows_feed_extractor_not_loss(regime_data):
    X, y, _, train, _, y_semi = regime_data
    aug = MixConfigAugmenter(**FAST, max_epochs=20, random_state=0).fit(X, y_semi)
    assert aug.extractor_.X_fit_.shape[0] == X.shape[0]
    assert aug.classes_.tolist() == [0, 1]
    # the configurations do not depend on the labels: the same extractor fitted on X alone agrees
    ext_only = clone(aug.extractor_).fit(X)
    for ca, cb in zip(ext_only.configurations_, aug.extractor_.configurations_):
        np.testing.assert_array_equal(ca, cb)
    # regression: NaN marks unlabelled rows
    y_reg = np.where(y_semi >= 0, y_semi + 0.5, np.nan).astype(float)
    reg = MixConfigAugmenter(**FAST, max_epochs=20, random_state=0).fit(X, y_reg)
    assert reg.task_ == "regression" and reg.extractor_.X_fit_.shape[0] == X.shape[0]
    assert reg.y_mean_ == pytest.approx(np.nanmean(y_reg))


# ------------------------------------------------------------------ pipeline + search
def test_pipeline_grid_search(regime_data):
    X, y, *_ = regime_data
    Xs, _, ys, _ = train_test_split(X, y, train_size=120, stratify=y, random_state=0)
    pipe = Pipeline([("aug", MixConfigAugmenter(n_resolutions=8, n_restarts=1, max_epochs=30, random_state=0)),
                     ("clf", LogisticRegression(max_iter=500))])
    search = GridSearchCV(pipe, {"aug__mixing": ["learned", "uniform", "single"], "aug__n_neighbors": [10, 15]},
                          cv=3, error_score="raise").fit(Xs, ys)
    assert search.best_params_["aug__mixing"] in ("learned", "uniform", "single")
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    refit = clone(search.best_estimator_).fit(Xs, ys)
    np.testing.assert_array_equal(refit[0].transform(Xs), search.best_estimator_[0].transform(Xs))


def test_extractor_parameter_passes_through(regime_data):
    X, _, _, _, _, y_semi = regime_data
    ext = ConfigurationExtractor(n_neighbors=7, n_resolutions=8, n_restarts=1, random_state=5)
    aug = MixConfigAugmenter(extractor=ext, max_epochs=10, random_state=0).fit(X, y_semi)
    assert aug.extractor_ is not ext and aug.extractor_.n_neighbors == 7
    assert aug.get_params()["extractor__n_neighbors"] == 7


# ------------------------------------------------------------------ bad input
def test_bad_targets_and_parameters():
    X, y = make_blobs(n_samples=40, centers=2, random_state=0)
    aug = MixConfigAugmenter(n_resolutions=4, n_restarts=1, max_epochs=5)
    with pytest.raises(ValueError, match="requires y"):
        aug.fit(X, None)
    with pytest.raises(ValueError, match="at least 2 classes"):
        aug.fit(X, np.zeros(40, dtype=int))
    with pytest.raises(ValueError, match="multi-output"):
        aug.fit(X, np.c_[y, y])
    with pytest.raises(ValueError):
        aug.fit(X, np.array([object()] * 40, dtype=object))
    with pytest.raises(ValueError, match="1 sample"):
        aug.fit(X[:1], y[:1])
    with pytest.raises(TypeError):
        import scipy.sparse as sp

        aug.fit(sp.csr_matrix(X), y)
    for bad in [(0.0, 1.0), (2.0, 1.0), (1.0,)]:
        with pytest.raises(InvalidParameterError, match="resolution_range"):
            MixConfigAugmenter(resolution_range=bad).fit(X, y)
        with pytest.raises(InvalidParameterError, match="resolution_range"):
            ConfigurationExtractor(resolution_range=bad).fit(X)
    with pytest.raises(InvalidParameterError):
        ConfigurationExtractor(max_cluster_frac=0.0).fit(X)
    with pytest.raises(InvalidParameterError):
        MixConfigAugmenter(mixing="best").fit(X, y)


def test_structureless_input_falls_back_with_warning():
    X = np.ones((30, 3))
    y = np.r_[np.zeros(15, dtype=int), np.ones(15, dtype=int)]
    with pytest.warns(ConfigurationFallbackWarning):
        aug = MixConfigAugmenter(n_resolutions=4, n_restarts=1, max_epochs=5, random_state=0).fit(X, y)
    assert aug.n_configurations_ == 1
    np.testing.assert_array_equal(aug.mixing_weights(X), np.ones((30, 1)))
    # tiny data (check-estimator size) still yields at least one configuration
    Xs, _ = make_blobs(n_samples=12, centers=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigurationFallbackWarning)
        ext = ConfigurationExtractor(n_resolutions=4, n_restarts=1, random_state=0).fit(Xs)
    assert ext.n_configurations_ >= 1


def test_leidenalg_engine_missing_or_anchor():
    X, _ = make_blobs(n_samples=40, centers=2, random_state=0)
    try:
        import igraph  # noqa: F401
        import leidenalg  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match=r"igraph.*leidenalg.*\.\[leiden\]"):
            ConfigurationExtractor(engine="leidenalg").fit(X)
        return
    ext = ConfigurationExtractor(engine="leidenalg", n_resolutions=8, n_restarts=1, random_state=0).fit(X)
    assert ext.n_configurations_ >= 1


def test_float32_input_is_computed_in_float64():
    X, y = make_blobs(n_samples=40, centers=2, random_state=0)
    aug = MixConfigAugmenter(n_resolutions=4, n_restarts=1, max_epochs=5, random_state=0).fit(X.astype(np.float32), y)
    assert aug.transform(X.astype(np.float32)).dtype == np.float64


# ------------------------------------------------------------------ check_estimator, other modes
@pytest.mark.parametrize("mixing", ["uniform", "single", "concat"])
def test_check_estimator_other_mixing_modes(mixing):
    from sklearn.utils.estimator_checks import check_estimator

    est = MixConfigAugmenter(mixing=mixing, n_neighbors=8, n_resolutions=6, n_restarts=1, max_epochs=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failures = check_estimator(est, on_fail=None)
    bad = [f for f in failures if f["status"] == "failed"]
    assert not bad, [(f["check_name"], str(f["exception"])[:200]) for f in bad]


def test_example_runs(tmp_path, monkeypatch):
    import runpy
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "examples" / "plot_configurations_mixconfig.py"
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("SKLEARN_FRONTIER_EXAMPLE_DIR", str(tmp_path))
    runpy.run_path(str(script), run_name="__main__")
    assert (tmp_path / "plot_configurations_mixconfig.png").exists()


def test_early_stopping_and_single_rules(regime_data):
    X, _, _, _, _, y_semi = regime_data
    aug = MixConfigAugmenter(**FAST, max_epochs=200, validation_fraction=0.3, n_iter_no_change=3, lr=0.05,
                             random_state=0).fit(X, y_semi)
    assert 1 <= aug.n_iter_ <= 200 and len(aug.loss_curve_) == aug.n_iter_
    M = aug.n_configurations_
    for rule, index in (("finest", M - 1), ("coarsest", 0)):
        s = MixConfigAugmenter(mixing="single", single_rule=rule, **FAST, max_epochs=5, random_state=0).fit(X, y_semi)
        assert s.single_index_ == index
        assert np.all(s.dominant_configuration(X) == index)
