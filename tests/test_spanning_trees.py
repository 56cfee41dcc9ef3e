"""PR-BAST / BAST: exact posteriors, domain graphs, accuracy smoke tests and API contracts."""

import warnings

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern
from sklearn.neighbors import KNeighborsRegressor
from sklearn_frontier.kernels import tree_precision_solve
from sklearn_frontier.kernels.spanning_trees._reference import routed_coefficients

from sklearn_frontier import config_context
from sklearn_frontier.datasets._spanning_trees import horseshoe_boundary, make_horseshoe
from sklearn_frontier.spanning_trees import BASTRegressor, PRBASTRegressor, RoutedField, build_domain_graph
from sklearn_frontier.utils._mcmc import ess_bulk, rank_normalized_split_rhat

FAST = dict(n_iter=40, n_burnin=10, thin=1)


def _chain_data(n=25, seed=0):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0, 3, n))
    y = np.sin(2 * x) + 0.2 * rng.normal(size=n)
    return x[:, None], y


def test_chain_posterior_equals_exponential_gp():
    X, y = _chain_data()
    lam_rel, tau2, noise = 0.4, 0.7, 0.05
    est = PRBASTRegressor(n_trees=1, component=RoutedField(tau2=tau2, length_scale_bounds=(lam_rel, lam_rel)),
                          noise_variance=noise, n_iter=600, n_burnin=100, thin=1, random_state=0).fit(X, y)
    G = est.graph_
    lam = lam_rel * G.diameter
    scale, ybar = est.y_scale_, est.y_mean_
    # kernel on the only spanning tree of the chain
    order = np.argsort(G.vertices[:, 0])
    parent = np.r_[-1, order[:-1]][np.argsort(order)]
    plen = np.r_[0.0, np.diff(G.vertices[order, 0])][np.argsort(order)]
    root = order[0]
    rho, prec = routed_coefficients(plen, lam, tau2, root)
    W = np.bincount(G.sample_vertex, minlength=G.n_vertices).astype(float)
    S = np.bincount(G.sample_vertex, weights=(y - ybar) / scale, minlength=G.n_vertices)
    mean, _, _ = tree_precision_solve(order, parent, rho, prec, W, S, noise / scale ** 2)
    gp = GaussianProcessRegressor(ConstantKernel(scale ** 2 * tau2, "fixed") * Matern(lam, "fixed", nu=0.5),
                                  alpha=noise, optimizer=None).fit(X, y - ybar)
    gp_mean, gp_std = gp.predict(G.vertices, return_std=True)
    np.testing.assert_allclose(scale * mean, gp_mean, rtol=1e-8, atol=1e-8)
    B = np.zeros((G.n_vertices,) * 2)
    B[np.arange(G.n_vertices)[parent >= 0], parent[parent >= 0]] = rho[parent >= 0]
    Q = (np.eye(G.n_vertices) - B).T @ np.diag(prec) @ (np.eye(G.n_vertices) - B)
    post_sd = scale * np.sqrt(np.diag(np.linalg.inv(Q + np.diag(W * scale ** 2 / noise))))
    np.testing.assert_allclose(post_sd, gp_std, rtol=1e-8)
    # the MCMC draws are exact (one tree, fixed lambda and noise): predict agrees within MC error
    n_draws = est.draws_["sigma"].size
    pred = est.predict(G.vertices)
    assert np.all(np.abs(pred - (ybar + gp_mean)) < 4.5 * gp_std / np.sqrt(n_draws))


def test_backfitting_three_components_match_gp():
    X, y = _chain_data(n=15, seed=1)
    lam_rel, tau2, noise = 0.3, 0.9, 0.1
    est = PRBASTRegressor(n_trees=3, component=RoutedField(tau2=tau2, length_scale_bounds=(lam_rel, lam_rel)),
                          noise_variance=noise, n_iter=3000, n_burnin=200, thin=1, random_state=1).fit(X, y)
    lam = lam_rel * est.graph_.diameter
    scale, ybar = est.y_scale_, est.y_mean_
    gp = GaussianProcessRegressor(ConstantKernel(scale ** 2 * tau2, "fixed") * Matern(lam, "fixed", nu=0.5),
                                  alpha=noise, optimizer=None).fit(X, y - ybar)
    V = est.graph_.vertices
    gp_mean, gp_std = gp.predict(V, return_std=True)
    F = ybar + scale * est.draws_["fit"].astype(float)[0]  # (n_kept, n_v)
    for j in range(0, V.shape[0], 3):
        ess = ess_bulk(F[None, :, j])
        assert abs(F[:, j].mean() - ybar - gp_mean[j]) < 4.5 * gp_std[j] / np.sqrt(ess)
    np.testing.assert_allclose(F.std(axis=0), gp_std, rtol=0.2)


def test_horseshoe_graph_respects_the_gap():
    X, _, _ = make_horseshoe(500, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        G = build_domain_graph(X, domain=horseshoe_boundary())
    assert not G.repaired.any()
    t = np.linspace(0, 1, 50)
    P = G.vertices[G.edges[:, 0], None, :] * (1 - t[:, None]) + G.vertices[G.edges[:, 1], None, :] * t[:, None]
    in_gap = (np.abs(P[..., 1]) < 0.09) & (P[..., 0] > 0.2)
    assert not in_gap.any()
    # the unconstrained Delaunay graph does cross it
    G0 = build_domain_graph(X)
    P0 = G0.vertices[G0.edges[:, 0], None, :] * (1 - t[:, None]) + G0.vertices[G0.edges[:, 1], None, :] * t[:, None]
    assert ((np.abs(P0[..., 1]) < 0.09) & (P0[..., 0] > 0.2)).any()


def test_isolated_point_is_repaired_with_warning():
    X, _, _ = make_horseshoe(200, random_state=1)
    X = np.r_[X, [[3.9, 0.0]]]
    with pytest.warns(UserWarning, match="repair"):
        G = build_domain_graph(X, domain=horseshoe_boundary())
    assert G.repaired.sum() == 1


@pytest.mark.parametrize("kind", ["collinear", "duplicates", "d1", "d3"])
def test_degenerate_inputs_work(kind):
    rng = np.random.default_rng(0)
    if kind == "collinear":
        X = np.c_[np.linspace(0, 1, 12), np.linspace(0, 2, 12)]
    elif kind == "duplicates":
        X = np.repeat(rng.random((6, 2)), 3, axis=0)
    elif kind == "d1":
        X = rng.random((12, 1))
    else:
        X = rng.random((15, 3))
    y = X.sum(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for Est in (PRBASTRegressor, BASTRegressor):
            est = Est(n_trees=2, random_state=0, **FAST).fit(X, y)
            assert np.all(np.isfinite(est.predict(X)))
    if kind == "duplicates":
        assert est.graph_.n_vertices == 6


def test_bast_recovers_a_step_on_the_horseshoe():
    X, _, _ = make_horseshoe(300, random_state=2)
    f = np.sign(X[:, 1])
    y = f + 0.1 * np.random.default_rng(0).normal(size=300)
    Xt, _, _ = make_horseshoe(300, random_state=3)
    est = BASTRegressor(n_trees=10, domain=horseshoe_boundary(), n_iter=300, n_burnin=100, random_state=0).fit(X, y)
    rmse = np.sqrt(np.mean((est.predict(Xt) - np.sign(Xt[:, 1])) ** 2))
    assert rmse < 0.2 * 2.0


def test_prbast_beats_knn_on_smooth_truth():
    X, y, _ = make_horseshoe(300, random_state=4)
    Xt, _, ft = make_horseshoe(400, random_state=5)
    est = PRBASTRegressor(n_trees=10, domain=horseshoe_boundary(), n_iter=200, n_burnin=80, random_state=0).fit(X, y)
    knn = KNeighborsRegressor(8, weights="distance").fit(X, y)
    rmse = lambda p: np.sqrt(np.mean((p - ft) ** 2))  # noqa: E731
    assert rmse(est.predict(Xt)) < rmse(knn.predict(Xt))


@pytest.fixture(scope="module")
def fitted():
    X, y, _ = make_horseshoe(120, random_state=6)
    est = PRBASTRegressor(n_trees=4, domain=horseshoe_boundary(), random_state=0, **FAST).fit(X, y)
    return est, X, y


def test_predict_at_training_points_is_vertex_mean_and_batch_invariant(fitted):
    est, X, _ = fitted
    vm = est.y_mean_ + est.y_scale_ * est.draws_["fit"].astype(float).mean(axis=(0, 1))
    np.testing.assert_allclose(est.predict(X), vm[est.graph_.sample_vertex], rtol=1e-10, atol=1e-10)
    Xt, _, _ = make_horseshoe(40, random_state=7)
    full = est.predict(Xt)
    perm = np.random.default_rng(0).permutation(40)
    np.testing.assert_allclose(est.predict(Xt[perm]), full[perm], rtol=1e-12)
    np.testing.assert_allclose(np.r_[est.predict(Xt[:7]), est.predict(Xt[7:])], full, rtol=1e-12)


def test_intervals(fitted):
    est, _, _ = fitted
    Xt, _, _ = make_horseshoe(30, random_state=8)
    _, std = est.predict(Xt, return_std=True)
    cred = est.sample_posterior_predictive(Xt, kind="credible", n_samples_per_draw=5)
    assert np.all(std >= cred.std(axis=0) * 0.999)
    q = est.predict_quantiles(Xt, quantiles=(0.05, 0.5, 0.95))
    assert np.all(np.diff(q, axis=1) >= 0)
    lo_c, hi_c = est.predict_interval(Xt, kind="credible").T
    lo_p, hi_p = est.predict_interval(Xt, kind="prediction").T
    assert np.mean(hi_p - lo_p) > np.mean(hi_c - lo_c)
    assert est.sample_posterior(Xt, n_samples=17).shape == (17, 30)
    with pytest.raises(ValueError, match="quantiles"):
        est.predict_quantiles(Xt, quantiles=(1.5,))
    with pytest.raises(ValueError, match="kind"):
        est.sample_posterior_predictive(Xt, kind="bogus")


@pytest.mark.parametrize("Est", [PRBASTRegressor, BASTRegressor])
def test_warm_start_continues_the_chain(Est):
    X, y, _ = make_horseshoe(60, random_state=9)
    one = Est(n_trees=3, n_iter=30, n_burnin=10, thin=2, random_state=3).fit(X, y)
    two = Est(n_trees=3, n_iter=18, n_burnin=10, thin=2, random_state=3).fit(X, y)
    two.set_params(warm_start=True, n_iter=12).fit(X, y)
    assert two.n_iter_ == 30
    assert set(one.draws_) == set(two.draws_)
    for key in one.draws_:
        np.testing.assert_array_equal(one.draws_[key], two.draws_[key])
    np.testing.assert_array_equal(one.predict(X), two.predict(X))
    with pytest.raises(ValueError, match="same training locations"):
        two.fit(X[:-1], y[:-1])


@pytest.mark.parametrize("Est", [PRBASTRegressor, BASTRegressor])
def test_backends_give_the_same_chain(Est):
    X, y, _ = make_horseshoe(40, random_state=10)
    with config_context(backend="numba"):
        a = Est(n_trees=3, n_iter=10, n_burnin=0, thin=1, tree_update_prob=0.5, random_state=0).fit(X, y) \
            if Est is PRBASTRegressor else Est(n_trees=3, n_iter=10, n_burnin=0, thin=1, random_state=0).fit(X, y)
    with config_context(backend="reference"):
        b = Est(**a.get_params()).fit(X, y)
    np.testing.assert_allclose(a.draws_["fit"], b.draws_["fit"], rtol=1e-6, atol=1e-7)
    if "vertex_values" in a.draws_:
        np.testing.assert_allclose(a.draws_["vertex_values"], b.draws_["vertex_values"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(a.draws_["sigma"], b.draws_["sigma"], rtol=1e-9)


@pytest.mark.parametrize("Est", [PRBASTRegressor, BASTRegressor])
def test_sample_weights_equal_duplicated_and_removed_rows(Est):
    X, y, _ = make_horseshoe(40, random_state=11)
    w = np.random.default_rng(0).integers(0, 3, 40)
    params = dict(n_trees=3, random_state=0, **FAST)
    a = Est(**params).fit(X, y, sample_weight=w)
    b = Est(**params).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-7, atol=1e-9)


def test_same_seed_same_draws_and_n_chains():
    X, y, _ = make_horseshoe(50, random_state=12)
    a = PRBASTRegressor(n_trees=2, n_chains=2, n_jobs=2, random_state=5, **FAST).fit(X, y)
    b = PRBASTRegressor(n_trees=2, n_chains=2, random_state=5, **FAST).fit(X, y)
    assert set(a.draws_) == set(b.draws_)
    for key in a.draws_:
        np.testing.assert_array_equal(a.draws_[key], b.draws_[key])
    assert a.draws_["fit"].shape == (2, 30, a.graph_.n_vertices)
    assert np.isfinite(a.convergence_["rhat_sigma"])
    diag = a.convergence_diagnostics(X[:3])
    assert len(diag["rhat"]) == len(diag["names"]) and diag["names"][-1] == "predict[2]"
    assert a.edge_boundary_score_.shape == (a.graph_.edges.shape[0],)
    np.testing.assert_allclose(a.feature_importances_.sum(), 1.0)


def test_rhat_detects_shifted_chains():
    rng = np.random.default_rng(0)
    iid = rng.normal(size=(4, 400))
    assert rank_normalized_split_rhat(iid) < 1.02
    assert rank_normalized_split_rhat(iid + np.arange(4)[:, None]) > 1.1


def test_interpretability_on_a_step():
    X, _, _ = make_horseshoe(150, random_state=13)
    y = np.sign(X[:, 1]) * 2.0
    est = BASTRegressor(n_trees=5, domain=horseshoe_boundary(), n_iter=120, n_burnin=40, random_state=0).fit(X, y)
    E = est.graph_.edges
    across = np.sign(est.graph_.vertices[E[:, 0], 1]) != np.sign(est.graph_.vertices[E[:, 1], 1])
    assert est.edge_boundary_score_[across].mean() > 3 * est.edge_boundary_score_[~across].mean()


@pytest.mark.parametrize("params,match", [
    (dict(n_burnin=50, n_iter=50), "n_burnin"),
    (dict(noise_variance=-1.0), "noise_variance"),
    (dict(component=RoutedField(length_scale_bounds=(2.0, 1.0))), "length_scale_bounds"),
])
def test_bad_parameters_raise(params, match):
    X, y, _ = make_horseshoe(20, random_state=0)
    with pytest.raises(ValueError, match=match):
        PRBASTRegressor(**{**dict(n_trees=2, n_iter=20, n_burnin=5), **params}).fit(X, y)


@pytest.mark.parametrize("domain,exc", [
    (np.array([[0, 0], [1, 1]]), ValueError), (np.zeros((4, 2)), ValueError), ("square", TypeError),
    (np.array([[0, 0], [1, 0], [np.nan, 1]]), ValueError),
])
def test_bad_domains_raise(domain, exc):
    X, y, _ = make_horseshoe(20, random_state=0)
    with pytest.raises(exc, match="domain"):
        PRBASTRegressor(n_trees=2, domain=domain, n_iter=20, n_burnin=5).fit(X, y)


def test_bast_bad_params_and_callable_domain():
    X, y, _ = make_horseshoe(40, random_state=0)
    with pytest.raises(ValueError, match="k_max"):
        BASTRegressor(k_max=0, n_iter=20, n_burnin=5).fit(X, y)
    with pytest.raises(ValueError, match="lambda_k"):
        BASTRegressor(lambda_k=0.0, n_iter=20, n_burnin=5).fit(X, y)
    from sklearn_frontier.datasets._spanning_trees import horseshoe_function

    inside = lambda P: np.isfinite(horseshoe_function(P))  # noqa: E731
    est = BASTRegressor(n_trees=2, domain=inside, **FAST).fit(X, y)
    assert est.graph_.edges.shape[0] >= X.shape[0] - 1


def test_example_runs(tmp_path, monkeypatch):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[1] / "examples" / "plot_spanning_trees_horseshoe.py"
    spec = importlib.util.spec_from_file_location("plot_spanning_trees_horseshoe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = module.main(n_train=100, n_iter=45, n_trees=3, grid_shape=(46, 20), out=tmp_path / "horseshoe.png")
    assert out.exists()


def test_attachment_modes_share_the_mean(fitted):
    est, _, _ = fitted
    Xt, _, _ = make_horseshoe(25, random_state=14)
    other = PRBASTRegressor(**{**est.get_params(), "attachment": "random"}).fit(*fitted[1:])
    np.testing.assert_allclose(est.predict(Xt), other.predict(Xt), rtol=1e-12)
    assert np.all(other.predict(Xt, return_std=True)[1] >= est.predict(Xt, return_std=True)[1] - 1e-12)


def _k4_context():
    from sklearn_frontier.spanning_trees._domain import DomainGraph
    from sklearn_frontier.spanning_trees._trees import TreeContext

    V = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    E = np.array([(i, j) for i in range(4) for j in range(i + 1, 4)])
    G = DomainGraph(vertices=V, edges=E, lengths=np.linalg.norm(V[E[:, 0]] - V[E[:, 1]], axis=1),
                    repaired=np.zeros(6, bool), sample_vertex=np.arange(4), diameter=np.sqrt(2), kind="knn")
    return TreeContext(G)


def test_prior_recovery_with_zero_data():
    from scipy.stats import chisquare, kstest, poisson

    from sklearn_frontier.spanning_trees._components import HardPartition

    rng = np.random.default_rng(0)
    # a path graph of 12 vertices: BAST's k chain must follow the truncated Poisson on {1..k_max}
    from sklearn_frontier.spanning_trees._trees import TreeContext

    G = build_domain_graph(np.arange(12.0)[:, None])
    ctx = TreeContext(G)
    fam = HardPartition(k_max=5, lambda_k=2.0, sigma_mu=0.3)
    st = fam.init_state(ctx, ctx.mst(G.lengths), 0, rng)
    W = np.zeros(12)
    acc = {m: [0, 0] for m in ("birth", "death", "change", "hyper")}
    ks = []
    for _ in range(20000):
        fam.sweep_component(ctx, st, W, W, 1.0, {}, rng, None, 0, 0, acc)
        ks.append(st["k"])
    counts = np.bincount(ks, minlength=6)[1:]
    p = poisson(2.0).pmf(np.arange(1, 6))
    # thinned to reduce autocorrelation before the chi-square test
    counts_thin = np.bincount(ks[::10], minlength=6)[1:]
    assert chisquare(counts_thin, p / p.sum() * counts_thin.sum()).pvalue > 1e-3
    np.testing.assert_allclose(counts / counts.sum(), p / p.sum(), atol=0.02)
    # routed field: lambda follows its log-uniform prior and every tree proposal is accepted
    fam = RoutedField(length_scale_bounds=(0.1, 10.0), length_scale_step=1.0)
    ctx4 = _k4_context()
    from sklearn_frontier.spanning_trees._mcmc import ChainData

    states = fam.init_states(ctx4, [ctx4.mst(ctx4.lengths)], [0])
    acc = {"length_scale": [0, 0], "tree": [0, 0]}
    lams = []
    F, no_data = np.zeros(4), ChainData(np.zeros(4), np.zeros(4), 0.0, 0.0)
    for _ in range(4000):
        F = fam.sweep(ctx4, states, F, no_data, 1.0, {"tau2": 0.5, "M": 1}, rng, "uniform", 0.0, 1.0, acc)
        lams.append(states["lam"][0])
    u = (np.log(np.array(lams[::4]) / ctx4.diameter) - np.log(0.1)) / (np.log(10.0) - np.log(0.1))
    assert kstest(u, "uniform").pvalue > 1e-3
    assert acc["tree"][0] == acc["tree"][1] > 0


def test_uniform_tree_prior_hits_the_16_trees_of_k4():
    from scipy.stats import chisquare

    ctx = _k4_context()
    rng = np.random.default_rng(1)
    trees = [tuple(sorted(ctx.draw_tree("uniform", rng))) for _ in range(3200)]
    uniq, counts = np.unique(np.array(trees), axis=0, return_counts=True)
    assert uniq.shape[0] == 16
    assert chisquare(counts).pvalue > 1e-3


def test_warm_start_with_new_y_restarts_from_the_saved_state():
    X, y, _ = make_horseshoe(50, random_state=15)
    est = PRBASTRegressor(n_trees=2, n_iter=20, n_burnin=5, thin=1, random_state=0).fit(X, y)
    est.set_params(warm_start=True).fit(X, y + 1.0)
    assert est.n_iter_ == 20 and est.draws_["fit"].shape[1] == 15
    assert abs(est.predict(X).mean() - (y.mean() + 1.0)) < 0.5


# ------------------------------------------------------------------ degenerate geometry and extreme scales
RELIABILITY_FAST = dict(n_trees=3, n_iter=30, n_burnin=10, thin=1)


@pytest.mark.parametrize("Est", [PRBASTRegressor, BASTRegressor])
@pytest.mark.parametrize("n_features", [1, 2, 3])
def test_two_training_rows_fit_and_predict(Est, n_features):
    # 1-D with two rows used to crash in _predict.py ("could not broadcast (2,3) into (2,2)")
    X = np.random.default_rng(0).random((2, n_features))
    est = Est(random_state=0, **RELIABILITY_FAST).fit(X, [0.0, 1.0])
    assert est.graph_.edges.tolist() == [[0, 1]]
    pred = est.predict(np.r_[X, X.mean(axis=0, keepdims=True)])
    assert pred.shape == (3,) and np.all(np.isfinite(pred))


@pytest.mark.parametrize("Est", [PRBASTRegressor, BASTRegressor])
def test_all_rows_at_one_point_is_a_clear_error(Est):
    # used to raise IndexError in _trees.py
    with pytest.raises(ValueError, match="at least 2 distinct training locations.*all at one point"):
        Est(**RELIABILITY_FAST).fit(np.ones((10, 2)), np.arange(10.0))
    # zero-weight rows are dropped first: the remaining rows decide
    X = np.r_[np.ones((5, 2)), [[2.0, 3.0]]]
    with pytest.raises(ValueError, match="at least 2 distinct"):
        Est(**RELIABILITY_FAST).fit(X, np.arange(6.0), sample_weight=[1, 1, 1, 1, 1, 0])


@pytest.mark.parametrize("Est", [PRBASTRegressor, BASTRegressor])
def test_collinear_points_fall_back_to_knn_graph(Est):
    X = np.c_[np.arange(10.0), 2 * np.arange(10.0)]
    with pytest.warns(UserWarning, match="Delaunay triangulation failed.*kNN"):
        est = Est(random_state=0, **RELIABILITY_FAST).fit(X, np.sin(X[:, 0]))
    assert est.graph_.kind == "knn" and not est.graph_.repaired.any()
    assert np.all(np.isfinite(est.predict(X + 0.25)))


@pytest.mark.parametrize("Est", [PRBASTRegressor, BASTRegressor])
@pytest.mark.parametrize("c", [2.0 ** -500, 1e-150, 1e-300, 3.7, 1e150])
def test_predictions_are_scale_equivariant(Est, c):
    # PRBAST at 1e-150 used to predict NaN everywhere (float32 length scale underflowed to 0)
    rng = np.random.default_rng(0)
    X, Xt = rng.random((25, 2)), rng.random((7, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1]
    ref = Est(random_state=0, **RELIABILITY_FAST).fit(X, y)
    est = Est(random_state=0, **RELIABILITY_FAST).fit(c * X, y)
    pred, std = est.predict(c * Xt, return_std=True)
    assert np.all(np.isfinite(pred)) and np.all(np.isfinite(std))
    ref_pred, ref_std = ref.predict(Xt, return_std=True)
    np.testing.assert_allclose(pred, ref_pred, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(std, ref_std, rtol=1e-6, atol=1e-8)
    # graph_ stays in the units of X
    np.testing.assert_allclose(est.graph_.vertices, c * ref.graph_.vertices, rtol=1e-12)
    np.testing.assert_allclose(est.graph_.diameter, c * ref.graph_.diameter, rtol=1e-12)
    if c == 2.0 ** -500:  # a power of two: bit-for-bit the same fit
        np.testing.assert_array_equal(pred, ref_pred)


def test_scaled_polygon_domain_keeps_the_same_graph():
    X, _, _ = make_horseshoe(120, random_state=0)
    y = np.sign(X[:, 1])
    c = 1e-150
    a = BASTRegressor(domain=horseshoe_boundary(), random_state=0, **RELIABILITY_FAST).fit(X, y)
    ring = np.asarray(horseshoe_boundary(), dtype=float) * c
    b = BASTRegressor(domain=ring, random_state=0, **RELIABILITY_FAST).fit(c * X, y)
    np.testing.assert_array_equal(a.graph_.edges, b.graph_.edges)
    np.testing.assert_allclose(b.predict(c * X), a.predict(X), rtol=1e-6, atol=1e-8)


_SEEN_BY_DOMAIN = []


def _whole_plane_recording(P):
    _SEEN_BY_DOMAIN.append(float(np.max(np.abs(P))))
    return np.ones(P.shape[0], dtype=bool)


def test_scaled_callable_domain_sees_original_units():
    import pickle

    X = np.random.default_rng(1).random((30, 2)) * 1e150
    _SEEN_BY_DOMAIN.clear()
    est = BASTRegressor(domain=_whole_plane_recording, random_state=0, **RELIABILITY_FAST).fit(X, X[:, 0] / 1e150)
    assert _SEEN_BY_DOMAIN and min(_SEEN_BY_DOMAIN) > 1e140  # called in the units of X, not standardised ones
    restored = pickle.loads(pickle.dumps(est))  # the wrapped callable stays picklable
    np.testing.assert_array_equal(restored.predict(X), est.predict(X))
    assert np.all(np.isfinite(est.predict(X)))
