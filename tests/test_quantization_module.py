"""TwinQuantLinear and quantize_model on small torch models; Stiefel geometry of the optimiser."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn_frontier.kernels._dispatch import available_backends  # noqa: E402
from sklearn_frontier.kernels.quantization import torch_int4_fits  # noqa: E402

import sklearn_frontier  # noqa: E402
from sklearn_frontier.quantization import (  # noqa: E402
    RTNQuantizer,
    SVDQuantizer,
    TwinQuant,
    TwinQuantLinear,
    WUSHQuantizer,
    quantize_model,
)
from sklearn_frontier.quantization._riemannian import RiemannianAdam  # noqa: E402
from sklearn_frontier.utils._manifolds import cayley_retraction, qr_retraction, stiefel_project  # noqa: E402


@pytest.fixture(scope="module")
def layer_data():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((24, 64)).astype(np.float32)
    X = rng.standard_normal((200, 64))
    return W, X


@pytest.fixture(autouse=True)
def _private_dispatch_cache(tmp_path, monkeypatch):
    """Measured kernel decisions go to a fresh cache folder, not the user's."""
    from sklearn_frontier.quantization import _cpu_dispatch

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _cpu_dispatch.clear_memo()
    yield
    _cpu_dispatch.clear_memo()


@pytest.mark.parametrize("est", [RTNQuantizer(group_size=32), RTNQuantizer(group_size=32, symmetric=False),
                                 SVDQuantizer(rank=3, group_size=32),
                                 TwinQuant(rank=3, group_size=32, max_iter=5, random_state=0),
                                 WUSHQuantizer(), RTNQuantizer(weight_format="mxfp4")],
                         ids=["rtn", "rtn-asym", "svd", "twinquant", "wush", "mxfp4"])
def test_module_dequantize_and_forward(est, layer_data):
    W, X = layer_data
    est.fit(W, X_calib=X)
    bias = torch.randn(W.shape[0])
    mod = TwinQuantLinear.from_quantized(est.quantize(), bias=bias)
    W_hat = est.transform(W)
    np.testing.assert_array_equal(mod.dequantize().numpy(), W_hat)  # bitwise
    assert mod.memory_bits() == pytest.approx(est.bits_per_weight_ * W.size, abs=1e-6)
    x = torch.randn(2, 5, W.shape[1])
    expected = x @ torch.from_numpy(W_hat).T + bias
    triton_ok = (mod.transform != "block" and mod.fmt.weight_format == "int"
                 and "triton" in available_backends("dual_matmul"))
    paths = {"reference": "reference", "numba": "numba_lut4", "triton": "triton" if triton_ok else "reference"}
    for backend, path in paths.items():
        with sklearn_frontier.config_context(backend=backend):
            y = mod(x)
        assert y.shape == (2, 5, W.shape[0]) and mod.last_path_ == path
        torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-5 * float(expected.abs().max()))
    # "auto": the path the measured dispatch chose for M = 10 rows (bucket 9-64), within the accuracy contract
    # it was chosen under and within its own arithmetic bound: the activation-rounding bound for W4A8 (derived
    # in tests/test_quantization_w4a8.py), 2^-7 of |x| |W_hat|^T for bf16 activations and output (see
    # tests/test_quantization_int4.py), per-row int8 rounding for the int8 path, float32 summation otherwise
    from test_quantization_w4a8 import activation_rounding_bound

    fits = torch_int4_fits(mod.fmt.weight_format, mod.fmt.n_bits, mod.fmt.group_size)
    for act_quant in ("int8", None):
        mod = TwinQuantLinear.from_quantized(est.quantize(), bias=bias, act_quant=act_quant)
        with sklearn_frontier.config_context(backend="auto"):
            y = mod(x)
        (rec,) = mod.dispatch_table_
        assert rec.bucket == "9-64" and mod.last_path_ == rec.path and rec.rel_err[rec.path] <= rec.tolerance
        allowed = {"dequantize", "torch_int4" if fits else "numba_lut4"} | (
            {"w4a8", "int8"} if act_quant == "int8" and mod.fmt.weight_format == "int" else set())
        assert set(rec.times_ms) <= allowed and rec.path in allowed
        path = rec.path
        if path == "w4a8":
            err = (y.reshape(-1, W.shape[0]).double() - expected.reshape(-1, W.shape[0]).double()).abs().numpy()
            assert np.all(err <= activation_rounding_bound(mod, x))
        elif path == "int8":
            rel = float(((y - expected) ** 2).sum() / (expected**2).sum())
            assert rel < 1e-3
        else:
            W_hat = mod.dequantize().numpy()
            rel = 2.0**-7 if path == "torch_int4" else 1e-5
            bound = rel * (x.abs() @ torch.from_numpy(np.abs(W_hat)).T + bias.abs())
            assert bool(((y - expected).abs() <= bound).all())
    restored = TwinQuantLinear(W.shape[1], W.shape[0], rank=mod.rank, fmt=mod.fmt, transform=mod.transform,
                               transform_block_size=mod.transform_block_size, bias=True)
    restored.load_state_dict(mod.state_dict())
    np.testing.assert_array_equal(restored.dequantize().numpy(), W_hat)
    with pytest.raises(ValueError):
        mod(torch.randn(3, W.shape[1] + 1))


def test_module_rejects_unpacked_bits(layer_data):
    W, _ = layer_data
    with pytest.raises(ValueError, match="n_bits"):
        TwinQuantLinear.from_quantized(RTNQuantizer(n_bits=3, group_size=32).fit(W).quantize())


def test_quantize_model_on_small_mlp():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 32))
    data = [torch.randn(32, 64) for _ in range(4)]
    ref = [net(b).detach() for b in data]
    W0 = net[0].weight.detach().numpy().copy()
    report = quantize_model(net, data, method="twinquant", rank=4, group_size=32,
                            quantizer_params={"max_iter": 10}, random_state=0)
    assert [r["name"] for r in report.layers] == ["0", "2"]
    assert isinstance(net[0], TwinQuantLinear) and isinstance(net[2], TwinQuantLinear)
    # the report row equals the per-layer score of the same quantizer on the same statistics
    X0 = torch.cat(data).numpy().astype(np.float64)
    est = TwinQuant(rank=4, group_size=32, max_iter=10, random_state=0).fit(W0, X_calib=X0)
    assert report.layers[0]["calib_relative_error"] == pytest.approx(-est.score(W0, X_calib=X0), rel=1e-6)
    out = [net(b).detach() for b in data]
    rel = sum(float(((o - r) ** 2).sum()) for o, r in zip(out, ref)) / sum(float((r**2).sum()) for r in ref)
    assert rel < 0.02
    assert report.mean_bits_per_weight > 4
    # re-running is a no-op (TwinQuantLinear is skipped)
    with pytest.warns(UserWarning, match="no matching"):
        again = quantize_model(net, data)
    assert again.layers == []


def test_quantize_model_exclude_and_errors():
    net = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8))
    report = quantize_model(net, None, method="rtn", group_size=16, exclude=["2"])
    assert [r["name"] for r in report.layers] == ["0"] and isinstance(net[2], torch.nn.Linear)
    with pytest.raises(ValueError, match="method"):
        quantize_model(torch.nn.Sequential(torch.nn.Linear(4, 4)), None, method="gptq")

    def bad_forward(module, batch):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="batch 0"):
        quantize_model(torch.nn.Sequential(torch.nn.Linear(4, 4)), [torch.ones(1, 4)], method="svd", rank=1,
                       forward_fn=bad_forward)


def test_one_calibration_tensor_is_one_batch():
    calls = []

    def forward(module, batch):
        calls.append(tuple(batch.shape))
        return module(batch)

    net = torch.nn.Sequential(torch.nn.Linear(32, 16))
    X = torch.randn(512, 32)
    report = quantize_model(net, X, method="svd", rank=2, group_size=32, forward_fn=forward)
    assert calls == [(512, 32)]
    assert np.isfinite(report.layers[0]["calib_relative_error"])
    calls.clear()
    rtn = quantize_model(torch.nn.Sequential(torch.nn.Linear(32, 16)), X, method="rtn", group_size=32,
                         forward_fn=forward)
    # RTN's weights do not depend on data, but the one pass scores them on it
    assert calls == [(512, 32)] and np.isfinite(rtn.layers[0]["calib_relative_error"])


def test_reservoir_keeps_a_uniform_sample():
    from sklearn_frontier.quantization import CalibrationStats

    counts = np.zeros(200)
    for seed in range(300):
        st = CalibrationStats(1, max_samples=20, random_state=seed)
        for chunk in np.array_split(np.arange(200, dtype=float)[:, None], 7):
            st.update(chunk)
        assert st.samples_.shape == (20, 1) and len(np.unique(st.samples_)) == 20
        counts[st.samples_[:, 0].astype(int)] += 1
    # each token kept with probability 20/200: 30 expected per token over 300 runs
    assert abs(counts[:100].mean() - counts[100:].mean()) < 4 and counts.min() > 8


# ------------------------------------------------------------------------------------------------ geometry
def test_projection_and_qr_retraction_match_pymanopt():
    pytest.importorskip("pymanopt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pymanopt.manifolds import Stiefel

    rng = np.random.default_rng(0)
    n, r = 10, 3
    man = Stiefel(n, r)
    V = qr_retraction(rng.standard_normal((n, r)))
    Z = rng.standard_normal((n, r))
    g = stiefel_project(V, Z)
    np.testing.assert_allclose(g, man.euclidean_to_riemannian_gradient(V, Z), atol=1e-12)
    sym = V.T @ g
    np.testing.assert_allclose(sym + sym.T, 0, atol=1e-12)
    xi = 0.3 * g
    np.testing.assert_allclose(qr_retraction(V, xi), man.retraction(V, xi), atol=1e-12)


def test_cayley_matches_dense_form():
    rng = np.random.default_rng(1)
    n, r = 9, 2
    V = qr_retraction(rng.standard_normal((n, r)))
    xi = stiefel_project(V, rng.standard_normal((n, r))) * 0.2
    P = xi - 0.5 * V @ (V.T @ xi)
    A = P @ V.T - V @ P.T
    dense = np.linalg.solve(np.eye(n) - 0.5 * A, (np.eye(n) + 0.5 * A) @ V)
    np.testing.assert_allclose(cayley_retraction(V, xi), dense, atol=1e-12)


@pytest.mark.parametrize("retraction", ["qr", "cayley"])
def test_riemannian_adam_stays_orthonormal_and_finds_top_eigenspace(retraction):
    gen = torch.Generator().manual_seed(0)
    n, r = 12, 3
    Q = torch.linalg.qr(torch.randn(n, n, generator=gen))[0]
    A = Q @ torch.diag(torch.arange(n, 0, -1, dtype=torch.float32)) @ Q.T
    V = qr_retraction(torch.randn(n, r, generator=gen))
    opt = RiemannianAdam(0.05, retraction=retraction)
    for _ in range(1000):
        V = opt.step(V, -2 * A @ V)  # minimise -tr(V^T A V)
    torch.testing.assert_close(V.T @ V, torch.eye(r), atol=1e-6, rtol=0)
    top = Q[:, :r]
    assert float(torch.linalg.norm(V @ V.T - top @ top.T)) < 1e-2


def test_tradeoff_example_smoke(tmp_path):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "plot_quantization_tradeoff.py"
    spec = importlib.util.spec_from_file_location("plot_quantization_tradeoff", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    res = module.main(n_layers=1, max_iter=3, path=tmp_path / "tradeoff.png")
    assert (tmp_path / "tradeoff.png").exists()
    assert res["SVD+RTN"][-1, 1] < res["RTN"][0, 1]  # rank 8 SVD beats RTN g128


def test_quantize_model_layers_in_parallel_equal_sequential():
    import torch

    from sklearn_frontier.quantization import quantize_model

    def model():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16))

    batches = [torch.randn(16, 32, generator=torch.Generator().manual_seed(1))]
    sequential, parallel = model(), model()
    report_seq = quantize_model(sequential, batches, method="twinquant", group_size=16, rank=2,
                                quantizer_params={"max_iter": 5}, random_state=0)
    report_par = quantize_model(parallel, batches, method="twinquant", group_size=16, rank=2,
                                quantizer_params={"max_iter": 5}, random_state=0, n_jobs=2)
    assert [r["name"] for r in report_par.layers] == [r["name"] for r in report_seq.layers]
    for a, b in zip(sequential.state_dict().values(), parallel.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    x = torch.randn(4, 32)
    torch.testing.assert_close(sequential(x), parallel(x), rtol=0, atol=0)


@pytest.mark.parametrize("method", ["twinquant", "rtn"])
def test_quantize_model_meets_a_bits_per_weight_budget(method):
    """``bits_per_weight`` sizes each layer (rank, or group size) to the budget, scales and factors included."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(256, 128), torch.nn.ReLU(), torch.nn.Linear(128, 64))
    report = quantize_model(net, method=method, bits_per_weight=4.5, random_state=0,
                            quantizer_params={"max_iter": 2} if method == "twinquant" else None)
    for row in report.layers:
        assert row["bits_per_weight"] <= 4.5
    with pytest.raises(ValueError, match="bits_per_weight"):
        quantize_model(torch.nn.Sequential(torch.nn.Linear(64, 8)), method="rtn", bits_per_weight=-1)


def test_calibration_pass_is_one_forward(monkeypatch):
    from sklearn_frontier.quantization import _model

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(64, 32))
    calls = []
    net.register_forward_pre_hook(lambda mod, inputs: calls.append(1))
    data = [torch.randn(8, 64) for _ in range(5)]
    quantize_model(net, data, method="rtn", group_size=32)  # one pass, for the report's calibration error
    assert len(calls) == len(data) and isinstance(net[0], TwinQuantLinear)
    # data-aware: one forward per batch; the Gram gathered over several chunks equals the one of all tokens
    monkeypatch.setattr(_model, "_CHUNK_TOKENS", 12)
    net = torch.nn.Sequential(torch.nn.Linear(64, 32))
    W0 = net[0].weight.detach().numpy().copy()
    calls = []
    net.register_forward_pre_hook(lambda mod, inputs: calls.append(1))
    report = quantize_model(net, data, method="svd", rank=4, group_size=32, random_state=0)
    assert len(calls) == len(data)
    X0 = torch.cat(data).numpy().astype(np.float64)
    est = SVDQuantizer(rank=4, group_size=32, random_state=0).fit(W0, X_calib=X0)
    # (chunked sums differ from one product in summation order only: the tolerance of the single-pass test above)
    assert report.layers[0]["calib_relative_error"] == pytest.approx(-est.score(W0, X_calib=X0), rel=1e-6)


def test_rtn_report_scores_the_calibration_data():
    """RTN stores the same weights whatever the data, but given data its report scores them on it (not NaN)."""
    from sklearn_frontier.quantization import RTNQuantizer

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.GELU(), torch.nn.Linear(32, 8))
    data = [torch.randn(16, 64) for _ in range(3)]
    W0 = net[0].weight.detach().numpy().copy()
    report = quantize_model(net, data, method="rtn", group_size=32)
    X0 = torch.cat(data).numpy().astype(np.float64)
    est = RTNQuantizer(group_size=32).fit(W0, X_calib=X0)
    assert report.layers[0]["calib_relative_error"] == pytest.approx(-est.score(W0, X_calib=X0), rel=1e-6)
    assert all(np.isfinite(r["calib_relative_error"]) for r in report.layers)
    # the stored weights do not depend on the data
    torch.manual_seed(0)
    net2 = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.GELU(), torch.nn.Linear(32, 8))
    quantize_model(net2, None, method="rtn", group_size=32)
    assert torch.equal(net[0].qweight, net2[0].qweight)
    assert np.isnan(quantize_model(torch.nn.Sequential(torch.nn.Linear(64, 8)), None, method="rtn",
                                   group_size=32).layers[0]["calib_relative_error"])
