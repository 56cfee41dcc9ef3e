"""SMAVE at scale: the stopping rule, neighbour reuse, streaming partial_fit, determinism, the exact solver."""

import os
import subprocess
import sys

import numpy as np
import pytest

from sklearn_frontier.datasets import make_sdr_regression
from sklearn_frontier.sdr import SMAVE, SMAVERegressor, _base, _sgd, _stream, subspace_distance
from sklearn_frontier.utils._compat import InvalidParameterError
from sklearn_frontier.utils._manifolds import projection_distance, qr_retraction, stiefel_project


def _dist(est, B0):
    return subspace_distance(est.directions_.T, B0)


@pytest.fixture(scope="module")
def model_b():
    return make_sdr_regression("B", n_samples=1000, n_features=10, noise=0.2, random_state=0)


@pytest.fixture(scope="module")
def stream_data():
    return make_sdr_regression("B", n_samples=20000, n_features=10, noise=0.2, random_state=1)


# ---------------------------------------------------------------- the stopping rule

def test_stopping_rule_stops_early_at_the_long_runs_accuracy(model_b):
    X, y, B0 = model_b
    short = SMAVE(random_state=0).fit(X, y)
    long = SMAVE(tol=None, max_iter=400, random_state=0).fit(X, y)
    w = short.n_iter_no_change
    assert short.converged_ and short.n_iter_ % w == 0 and short.n_iter_ <= 5 * w
    assert not long.converged_ and long.n_iter_ == 400 and long.loss_curve_.shape == (400,)
    # the rule fired: the last window-to-window distance is below max(tol, the window's own scatter)
    assert short.window_change_curve_.shape == (short.n_iter_ // w - 1,)
    assert _dist(short, B0) < 0.05 and _dist(short, B0) <= 1.1 * _dist(long, B0) + 0.005


def test_stopping_rule_keeps_going_while_the_subspace_moves(model_b):
    X, y, B0 = model_b
    # from a random start the first windows move far (distance between window means >> tol)
    est = SMAVE(init="random", random_state=0).fit(X, y)
    assert est.window_change_curve_[0] > 10 * est.tol
    assert est.n_iter_ >= 3 * est.n_iter_no_change


def test_window_distance_equals_explicit_projections():
    rng = np.random.default_rng(0)
    Bs = [qr_retraction(rng.normal(size=(7, 2))) for _ in range(8)]
    Ua, Ub = np.hstack(Bs[:4]) / 2.0, np.hstack(Bs[4:]) / 2.0
    Pa = sum(B @ B.T for B in Bs[:4]) / 4
    Pb = sum(B @ B.T for B in Bs[4:]) / 4
    assert _sgd.window_distance(Ua, Ub) == pytest.approx(np.linalg.norm(Pa - Pb), rel=1e-10)
    spread = np.sqrt(np.mean([np.linalg.norm(B @ B.T - Pa) ** 2 for B in Bs[:4]]))
    assert _sgd.window_spread(Ua, 2) == pytest.approx(spread, rel=1e-8)
    top = _sgd.window_mean_basis(Ua, 2)
    vals, vecs = np.linalg.eigh(Pa)
    assert projection_distance(top, vecs[:, -2:]) < 1e-10


# ---------------------------------------------------------------- neighbour reuse

def test_neighbour_memo_is_pure_caching(model_b, monkeypatch):
    X, y, _ = model_b
    kw = dict(tol=None, max_iter=60, random_state=0)
    memo = SMAVE(**kw).fit(X, y)
    monkeypatch.setattr(_sgd, "MEMO_ENTRIES", 0)  # no memo: the same stale-tree queries, one per step
    direct = SMAVE(**kw).fit(X, y)
    np.testing.assert_array_equal(memo.components_, direct.components_)


def test_auto_refresh_matches_refresh_every_step(model_b):
    X, y, B0 = model_b
    auto = SMAVE(random_state=0).fit(X, y)
    every = SMAVE(refresh_neighbors=1, random_state=0).fit(X, y)
    assert auto.n_refresh_ < every.n_refresh_ == every.n_iter_
    assert _dist(auto, B0) <= _dist(every, B0) + 0.01


def test_auto_batch_grows_with_n():
    assert _sgd.auto_batch_size(1000) == 64 and _sgd.auto_batch_size(10 ** 5) == 500
    assert _sgd.auto_batch_size(10 ** 6) == 5000 and _sgd.auto_batch_size(10 ** 8) == 8192
    assert _sgd.auto_batch_size(30) == 30


# ---------------------------------------------------------------- streaming

def test_partial_fit_chunked_matches_full_fit(stream_data):
    X, y, B0 = stream_data
    full_dists, stream_dists = [], []
    for seed in range(3):
        full = SMAVE(random_state=seed).fit(X, y)
        stream = SMAVE(reservoir_size=5000, random_state=seed)
        for start in range(0, 20000, 2000):
            stream.partial_fit(X[start:start + 2000], y[start:start + 2000])
        full_dists.append(_dist(full, B0))
        stream_dists.append(_dist(stream, B0))
    assert stream.n_samples_seen_ == 20000 and stream._stream.reservoir_X.shape == (5000, 10)
    # stated margin: over three seeds, the chunked fit's mean subspace error is within 1.5x of the one-shot
    # fit's (single seeds scatter: 0.5x-1.7x), and both recover the planted subspace
    assert np.mean(stream_dists) <= 1.5 * np.mean(full_dists) and max(stream_dists) < 0.02
    np.testing.assert_allclose(stream.mean_, X.mean(axis=0), atol=1e-10)
    np.testing.assert_allclose(stream.scale_, X.std(axis=0), rtol=1e-10)


def test_partial_fit_after_fit_continues(stream_data):
    X, y, _ = stream_data
    est = SMAVE(random_state=0).fit(X[:2000], y[:2000])
    fitted, t_fit, init = est.directions_.copy(), est.t_, est.init_components_.copy()
    est.set_params(eta0=1e-9)  # (almost) no movement: the continued run must start from the fitted basis
    est.partial_fit(X[2000:4000], y[2000:4000])
    # a quarter of the chunk (500 rows, at least one batch) is anchored, in batches of batch_size_
    assert est.t_ == t_fit + est.n_iter_ and est.n_iter_ == -(-max(500, est.batch_size_) // est.batch_size_)
    np.testing.assert_array_equal(est.init_components_, init)
    # original-unit directions are compared (the running standardisation changed with the new chunk)
    assert subspace_distance(est.directions_.T, fitted.T) < 1e-6
    fresh = SMAVE(eta0=1e-9, random_state=0).partial_fit(X[2000:4000], y[2000:4000])
    assert subspace_distance(fresh.directions_.T, fitted.T) > 1e-3


def test_partial_fit_running_mean_carries_earlier_chunks(stream_data):
    X, y, B0 = stream_data
    # one chunk's estimate is limited by its working set; the stream's mean over chunks must beat the last
    # chunk's own iterate and improve on the first chunk's estimate
    est = SMAVE(reservoir_size=2000, random_state=0)
    dists = []
    for start in range(0, 20000, 2000):
        est.partial_fit(X[start:start + 2000], y[start:start + 2000])
        dists.append(_dist(est, B0))
    last_iterate = est._stream.iterate / est.scale_[:, None]  # original-unit directions of the iterate
    assert dists[-1] < dists[0] and dists[-1] < subspace_distance(last_iterate, B0)
    no_mean = SMAVE(reservoir_size=2000, average=False, random_state=0)
    for start in range(0, 20000, 2000):
        no_mean.partial_fit(X[start:start + 2000], y[start:start + 2000])
    assert dists[-1] < _dist(no_mean, B0)


def test_stream_average_is_the_weighted_mean_projection():
    rng = np.random.default_rng(1)
    base = qr_retraction(rng.normal(size=(8, 2)))
    Bs = [qr_retraction(base + 0.01 * rng.normal(size=(8, 2))) for _ in range(30)]
    mean = _sgd.StreamAverage(gamma=1.0)
    P, total = np.zeros((8, 8)), 0.0
    for t, B in enumerate(Bs):
        w = mean.step_weight(t, 64)
        assert w == 64 * (t + 1.0)
        mean.add(B, w)
        P, total = P + w * B @ B.T, total + w
    top = np.linalg.eigh(P / total)[1][:, -2:]
    # rank-d truncation after each step: exact to first order in the iterates' spread (0.01)
    assert projection_distance(mean.B, top) < 1e-3 and mean.weight == pytest.approx(total)


def test_partial_fit_is_deterministic_and_validates(stream_data):
    X, y, _ = stream_data
    a, b = SMAVE(random_state=3), SMAVE(random_state=3)
    for start in range(0, 6000, 3000):
        a.partial_fit(X[start:start + 3000], y[start:start + 3000])
        b.partial_fit(X[start:start + 3000], y[start:start + 3000])
    np.testing.assert_array_equal(a.components_, b.components_)
    with pytest.raises(ValueError, match="features"):
        a.partial_fit(X[:100, :5], y[:100])
    assert not hasattr(SMAVERegressor(), "partial_fit")


def test_reservoir_is_a_uniform_bounded_sample():
    counts = np.zeros(10)
    for seed in range(200):
        res = _stream.Reservoir(100, 1)
        rng = np.random.RandomState(seed)
        for start in range(0, 1000, 250):
            rows = np.arange(start, start + 250, dtype=float)
            res.add(rows[:, None], rows, rng)
        assert res.X.shape == (100, 1) and len(np.unique(res.y)) == 100
        counts += np.bincount((res.y // 100).astype(int), minlength=10)
    share = counts / counts.sum()  # each tenth of the stream: 10 % of the sample (sd about 0.2 %)
    assert np.all(np.abs(share - 0.1) < 0.012)


def test_running_moments_and_rescaled_basis():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(500, 4)) * [1, 2, 3, 4] + 5
    mom = _stream.RunningMoments(4)
    for start in range(0, 500, 137):
        mom.update(A[start:start + 137])
    np.testing.assert_allclose(mom.mean, A.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(mom.std, A.std(axis=0), rtol=1e-12)
    B = qr_retraction(rng.normal(size=(4, 2)))
    s_old, s_new = np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 1.0, 5.0, 0.5])
    B_new = _stream.rescale_basis(B, s_old, s_new)
    assert projection_distance(B / s_old[:, None], B_new / s_new[:, None]) < 1e-12


# ---------------------------------------------------------------- determinism across thread counts

_THREAD_SCRIPT = """
import sys
import numpy as np
from sklearn_frontier.datasets import make_sdr_regression
from sklearn_frontier.sdr import SMAVE
X, y, _ = make_sdr_regression("B", n_samples=6000, n_features=20, random_state=0)
est = SMAVE(n_neighbors=200, batch_size=1024, max_iter=10, tol=None, random_state=0).fit(X, y)
est.partial_fit(X[:2000], y[:2000])
sys.stdout.write(est.components_.tobytes().hex())
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs 2 cores for NUMBA_NUM_THREADS=2")
def test_fit_is_bit_identical_across_thread_counts():
    # batch 1024 x k 200 x p 20 > PARALLEL_WORK: the gradient runs the prange kernel with 2 threads
    outs = []
    for threads in ("1", "2"):
        env = {**os.environ, "NUMBA_NUM_THREADS": threads, "OMP_NUM_THREADS": threads}
        proc = subprocess.run([sys.executable, "-c", _THREAD_SCRIPT], env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        outs.append(proc.stdout)
    assert outs[0] == outs[1] and len(outs[0]) > 0


# ---------------------------------------------------------------- the exact (pymanopt) solver

def test_trust_regions_recovers_planted_subspace_to_a_stationary_point():
    X, y, B0 = make_sdr_regression("B", n_samples=400, n_features=8, noise=0.2, random_state=1)
    est = SMAVE(solver="trust-regions", random_state=0).fit(X, y)
    assert _dist(est, B0) < 0.08
    assert est.converged_ and est.grad_norm_ <= 1e-6 and np.isfinite(est.loss_)
    assert est.loss_curve_[-1] <= est.loss_curve_[0]


def test_exact_objective_equals_kernel_local_fits():
    torch = pytest.importorskip("torch")
    from sklearn_frontier.sdr._exact import mave_kernel_objective

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(200, 6))
    y = np.sin(Z[:, 0]) + 0.1 * rng.normal(size=200)
    B = qr_retraction(rng.normal(size=(6, 2)))
    h = _base.projected_bandwidth(Z @ B)
    f = mave_kernel_objective(Z, y, np.arange(200), h)
    rss = _base.projected_local_fits(Z, y, B, np.arange(200), localization="kernel", bandwidth=h, ridge=1e-8)[5]
    assert float(f(torch.from_numpy(B))) == pytest.approx(rss.mean(), rel=1e-7)
    O = qr_retraction(rng.normal(size=(2, 2)))
    assert float(f(torch.from_numpy(B @ O))) == pytest.approx(float(f(torch.from_numpy(B))), rel=1e-10)


def test_pymanopt_manifold_ops_match_ours():
    pytest.importorskip("pymanopt")
    from pymanopt.manifolds import Grassmann, Stiefel

    rng = np.random.default_rng(0)
    st, gr = Stiefel(9, 3), Grassmann(9, 3)
    B = qr_retraction(rng.normal(size=(9, 3)))
    V = rng.normal(size=(9, 3))
    np.testing.assert_allclose(st.projection(B, V), stiefel_project(B, V), atol=1e-12)
    xi = stiefel_project(B, V)
    np.testing.assert_allclose(st.retraction(B, 0.3 * xi), qr_retraction(B, 0.3 * xi), atol=1e-12)
    C = qr_retraction(rng.normal(size=(9, 3)))
    # Grassmann geodesic distance sqrt(sum theta^2) vs our ||P_B - P_C||_F = sqrt(2 sum sin^2 theta)
    angles = np.arccos(np.clip(np.linalg.svd(B.T @ C, compute_uv=False), -1, 1))
    assert gr.dist(B, C) == pytest.approx(np.linalg.norm(angles), rel=1e-6)
    assert projection_distance(B, C) == pytest.approx(np.sqrt(2 * np.sum(np.sin(angles) ** 2)), rel=1e-10)


def test_bad_solver_parameters_raise():
    X, y, _ = make_sdr_regression("C", n_samples=100, n_features=5, random_state=0)
    for bad in (dict(solver="newton"), dict(batch_size="big"), dict(refresh_neighbors="sometimes"),
                dict(reservoir_size=0), dict(refresh_tol=-1.0)):
        with pytest.raises(InvalidParameterError, match=next(iter(bad))):
            SMAVE(n_components=1, **bad).fit(X, y)


def test_scaling_docs_streaming_snippet_runs():
    pytest.importorskip("dask.array")
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "scaling.rst").read_text()
    section = text[text.index("Streaming fits larger than memory"):]
    block = re.search(r"\.\. code-block:: python\n\n((?:   .*\n|\n)+)", section).group(1)
    namespace = {}
    exec(compile("\n".join(line[3:] for line in block.splitlines()), "scaling.rst", "exec"), namespace)
    smave, B0 = namespace["smave"], namespace["B0"]
    assert smave.n_samples_seen_ == 40_000
    assert subspace_distance(smave.directions_.T, B0) < 0.05
