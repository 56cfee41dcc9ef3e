"""The W4A8 CPU path: int8 activations per 32-block times weight-stationary INT4 codes.

Every comparison with the exact product uses the activation-rounding bound: rounding each 32-block of the
residual's input ``v = x T`` to ``xs_b * rint(v / xs_b)``, ``xs_b = max|v_b| / 127``, moves each input by at
most ``xs_b / 2``, so ``|y_n - y_exact_n| <= ts * sum_b (xs_b / 2) * sum_{k in b} |Q_nk|`` (``Q`` the decoded
residual), plus float32 summation slack. Twins (numba vs numpy) share the rounding and sum integers exactly,
so they agree to float32 summation order.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

from sklearn_frontier.kernels.quantization import pack_w4a8, w4a8_decode_t, w4a8_matmul  # noqa: E402

import sklearn_frontier  # noqa: E402
from sklearn_frontier.quantization import (  # noqa: E402
    RTNQuantizer,
    SVDQuantizer,
    TwinQuant,
    TwinQuantLinear,
    WUSHQuantizer,
    _cpu_dispatch,
)
from sklearn_frontier.quantization._formats import apply_input_transform, dequantize_groups  # noqa: E402


def activation_rounding_bound(mod, x):
    """Per-output bound on |forward(x) - x W_hat^T - b| of the module's W4A8 path (see the module doc)."""
    qw = mod.to_quantized()
    Q = dequantize_groups(qw.codes, qw.scales, qw.zero_points, qw.fmt, qw.format_scale).astype(np.float64)
    x64 = x.reshape(-1, mod.in_features).double().numpy()
    T = qw.input_transform
    v = apply_input_transform(x64, None if T is None else (
        T.astype(np.float64) if np.ndim(T) == 1 else np.transpose(T.astype(np.float64), (0, 2, 1))))
    K = v.shape[1]
    Kp = -(-K // 32) * 32
    vp = np.zeros((v.shape[0], Kp))
    vp[:, :K] = v
    xs = np.abs(vp.reshape(v.shape[0], -1, 32)).max(axis=2) / 127.0  # (M, nb)
    Qp = np.zeros((Q.shape[0], Kp))
    Qp[:, :K] = np.abs(Q)
    l1 = Qp.reshape(Q.shape[0], -1, 32).sum(axis=2)  # (N, nb)
    rounding = float(qw.tensor_scale) * (xs / 2.0) @ l1.T
    W_hat = mod.dequantize().double().numpy()
    slack = 1e-5 * (np.abs(x64) @ np.abs(W_hat).T + 1.0)
    return rounding + slack


def w4a8_for_every_row_count():
    """The W4A8 kernel for every M in calls inside the block (the measured dispatch runs it where it is fastest
    only), so that its arithmetic is tested at every M."""
    return _cpu_dispatch.force_path("w4a8")


@pytest.fixture(autouse=True)
def _private_dispatch_cache(tmp_path, monkeypatch):
    """Measured decisions go to a fresh cache folder, not the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _cpu_dispatch.clear_memo()
    yield
    _cpu_dispatch.clear_memo()


def _exact(mod, x):
    y = x.reshape(-1, mod.in_features).double() @ mod.dequantize().double().T
    return y if mod.bias is None else y + mod.bias.double()


@pytest.mark.parametrize("M", [1, 3, 8, 64])
@pytest.mark.parametrize("case", ["sym-r0", "asym-r8", "sym-r8-odd", "ragged-odd-k", "twinquant-diag", "wush-block"])
def test_w4a8_forward_within_the_activation_rounding_bound(case, M):
    rng = np.random.default_rng(M)
    m, n = {"sym-r8-odd": (37, 96), "ragged-odd-k": (21, 333)}.get(case, (40, 128))
    W = rng.standard_normal((m, n)).astype(np.float32)
    X = rng.standard_normal((256, n))
    est = {"sym-r0": RTNQuantizer(group_size=32), "asym-r8": SVDQuantizer(rank=8, group_size=64, symmetric=False),
           "sym-r8-odd": SVDQuantizer(rank=8, group_size=32),
           "ragged-odd-k": RTNQuantizer(),  # group 128 over 333 inputs: a ragged last group, a partial 32-block
           "twinquant-diag": TwinQuant(rank=8, group_size=32, max_iter=3, random_state=0),
           "wush-block": WUSHQuantizer(group_size=32, block_size=32)}[case]
    est.fit(W, X_calib=X)
    bias = None if case in ("sym-r0", "ragged-odd-k") else torch.randn(m)
    mod = TwinQuantLinear.from_quantized(est.quantize(), bias=bias, act_quant="int8")
    x = torch.randn(M, n)
    with torch.no_grad(), w4a8_for_every_row_count():
        y = mod(x)
        assert mod.last_path_ == "w4a8"
        err = (y.double() - _exact(mod, x)).abs().numpy()
        assert np.all(err <= activation_rounding_bound(mod, x))
        np.testing.assert_array_equal(mod(x).numpy(), y.numpy())  # same input, same output
    exact_mod = TwinQuantLinear.from_quantized(est.quantize(), bias=bias, act_quant=None)
    with torch.no_grad():
        exact_mod(x)
    assert exact_mod.last_path_ != "w4a8"


@pytest.mark.parametrize("asym", [False, True])
@pytest.mark.parametrize("M", [1, 3, 8, 64])
def test_numba_twin_equals_the_reference(M, asym):
    rng = np.random.default_rng(10 * M + asym)
    N, K, g = 131, 200, 64  # odd N, K not a multiple of 32
    G = -(-K // g)
    codes = rng.integers(0 if asym else -8, 16 if asym else 8, size=(N, K)).astype(np.int8)
    scales = (rng.random((N, G)) + 0.1).astype(np.float32)
    zeros = rng.integers(0, 16, size=(N, G)).astype(np.uint8) if asym else None
    p = pack_w4a8(codes, scales, zeros, g)
    x = rng.standard_normal((M, K)).astype(np.float32)
    t = (rng.random(K) + 0.5).astype(np.float32)
    down, up_t = rng.standard_normal((8, K)).astype(np.float32), rng.standard_normal((8, N)).astype(np.float32)
    bias = rng.standard_normal(N).astype(np.float32)
    out = {}
    for backend in ("reference", "numba"):
        with sklearn_frontier.config_context(backend=backend):
            out[backend] = w4a8_matmul(x, *p, group_size=g, tensor_scale=0.7, t=t, down=down, up_t=up_t,
                                       bias=bias)
            out[backend + "-decode"] = w4a8_decode_t(*p, group_size=g, n_features=K)
    scale = np.abs(out["reference"]).max()
    np.testing.assert_allclose(out["numba"], out["reference"], rtol=0, atol=1e-5 * scale)
    np.testing.assert_array_equal(out["numba-decode"], out["reference-decode"])
    # the decode is the stored weight: (codes - z) s
    gidx = np.arange(K) // g
    Q = (codes.astype(np.float32) - (0 if zeros is None else zeros[:, gidx])) * scales[:, gidx]
    np.testing.assert_array_equal(out["reference-decode"], Q.T)


def test_packing_round_trip_and_validation():
    from sklearn_frontier.kernels.quantization._reference import unpack_w4a8

    rng = np.random.default_rng(0)
    codes = rng.integers(-8, 8, size=(70, 45)).astype(np.int8)
    p, _, _ = pack_w4a8(codes, np.ones((70, 2), np.float32), None, 32)
    np.testing.assert_array_equal(unpack_w4a8(p, 70, 45).astype(np.int16) - 8, codes)
    with pytest.raises(ValueError, match="multiple of 32"):
        pack_w4a8(codes, np.ones((70, 3), np.float32), None, 16)
    with pytest.raises(ValueError, match="scales"):
        pack_w4a8(codes, np.ones((70, 3), np.float32), None, 32)


@pytest.mark.parametrize("case", ["svd-r4-bias", "twinquant-diag", "wush-block", "asym-nobias"])
def test_large_batches_decode_once_and_match_the_weight(case):
    """The decode + GEMM path (tensor scale and diagonal transform folded into the decoded buffer, low-rank
    branch after the GEMM) equals ``x W_hat^T + b`` up to float32 summation, on a reused buffer."""
    rng = np.random.default_rng(1)
    W = rng.standard_normal((48, 96)).astype(np.float32)
    X = rng.standard_normal((256, 96))
    est = {"svd-r4-bias": SVDQuantizer(rank=4, group_size=32),
           "twinquant-diag": TwinQuant(rank=4, group_size=32, max_iter=3, random_state=0),
           "wush-block": WUSHQuantizer(group_size=32, block_size=32),
           "asym-nobias": RTNQuantizer(group_size=32, symmetric=False)}[case].fit(W, X_calib=X)
    mod = TwinQuantLinear.from_quantized(est.quantize(), bias=None if case == "asym-nobias" else torch.randn(48))
    for M in (300, 7):
        x = torch.randn(M, 96)
        # the decode path at every M (the measured dispatch runs it only where it is fastest)
        with torch.no_grad(), _cpu_dispatch.force_path("dequantize"):
            y = mod(x)
            again = mod(x)  # the second call reuses the decode buffer
        assert mod.last_path_ == "dequantize"
        torch.testing.assert_close(y.double(), _exact(mod, x), rtol=1e-5, atol=1e-4)
        np.testing.assert_array_equal(again.numpy(), y.numpy())


def test_threads_follow_torch_and_the_users_numba_setting_is_kept():
    """numba kernels run on torch's thread count inside the call; the caller's own numba count comes back."""
    code = ("import torch, numba, numpy as np\n"
            "from sklearn_frontier.quantization import RTNQuantizer, TwinQuantLinear\n"
            "from sklearn_frontier.kernels.quantization._numba import numba_threads\n"
            "W = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)\n"
            "mod = TwinQuantLinear.from_quantized(RTNQuantizer(group_size=32).fit(W).quantize(), act_quant='int8')\n"
            "numba.get_num_threads(); torch.set_num_threads(1)\n"  # numba's start resizes the shared OpenMP pool
            "numba.set_num_threads(2)\n"
            "for M in (1, 2, 64, 300): mod(torch.randn(M, 256))\n"
            "with numba_threads() as n: inside = (n, numba.get_num_threads())\n"
            "print(*inside, numba.get_num_threads(), torch.get_num_threads())\n")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "2", "SKLEARN_FRONTIER_QUANT_DISPATCH": "off"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "1", "2", "1"]


def test_real_minilm_layer_within_the_bound():
    from sklearn_frontier.datasets import load_minilm_l6_v2

    try:
        model, _ = load_minilm_l6_v2()
    except ImportError:
        pytest.skip("all-MiniLM-L6-v2 weights not installed")
    lin = next(m for m in model.modules() if isinstance(m, torch.nn.Linear) and m.in_features == 384
               and m.out_features == 1536)
    mod = TwinQuantLinear.from_linear(lin, SVDQuantizer(rank=8, group_size=128, random_state=0), act_quant="int8")
    x = torch.randn(5, 384)
    with torch.no_grad(), w4a8_for_every_row_count():
        y = mod(x)
    assert mod.last_path_ == "w4a8"
    err = (y.double() - _exact(mod, x)).abs().numpy()
    assert np.all(err <= activation_rounding_bound(mod, x))


def test_minilm_saved_and_loaded_in_a_fresh_process(tmp_path):
    from sklearn_frontier.datasets import load_minilm_l6_v2
    from sklearn_frontier.quantization import quantize_model, save_quantized

    try:
        model, _ = load_minilm_l6_v2()
    except ImportError:
        pytest.skip("all-MiniLM-L6-v2 weights not installed")
    quantize_model(model, method="rtn", group_size=128, act_quant="int8")
    texts = ["A man is eating food.", "The stock market crashed today."]
    with torch.no_grad():
        expected = np.asarray(model.encode(texts))
    path = save_quantized(model, tmp_path / "minilm.safetensors")
    np.save(tmp_path / "expected.npy", expected)
    code = ("import sys, numpy as np, torch\n"
            "from sklearn_frontier.datasets import load_minilm_l6_v2\n"
            "from sklearn_frontier.quantization import load_quantized, TwinQuantLinear\n"
            "model, _ = load_minilm_l6_v2()\n"
            "load_quantized(model, sys.argv[1])\n"
            "assert sum(isinstance(m, TwinQuantLinear) for m in model.modules()) == 36\n"
            "with torch.no_grad():\n"
            "    emb = np.asarray(model.encode(['A man is eating food.', 'The stock market crashed today.']))\n"
            "np.testing.assert_array_equal(emb, np.load(sys.argv[2]))\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code, str(path), str(tmp_path / "expected.npy")],
                         capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
