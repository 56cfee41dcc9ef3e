"""The inference paths of ``TwinQuantLinear`` and the weight range of the quantizers.

Every CPU path the module dispatches to (torch's int4 op, the numba LUT kernel, dequantize-and-GEMM, the
reference; Triton under the interpreter) is compared with the reference ``x @ dequantize().T + bias`` within
a bound derived from that path's arithmetic:

* float32 paths (numba LUT, dequantize, reference, Triton): float32 accumulation, so
  ``|y - y_ref| <= 2 K eps32 (|x| @ |W_hat|^T + |bias|)``, eps32 = 2^-24 (a 4x margin: 8 K eps32);
* torch's int4 op: bfloat16 activations (relative rounding 2^-9), bfloat16 weight products and output
  (2^-9 each, float32 accumulation inside), so ``|y - y_ref| <= 3 * 2^-9 tensor_scale (|x T| @ |Q|^T)``
  on the residual ``Q`` (plus the float32 bound above for the low-rank branch and bias); 2^-7 is used.
"""

import io

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn_frontier.kernels.quantization import int4pack_matmul, pack_int4_torch  # noqa: E402
from sklearn_frontier.kernels.quantization._reference import int4pack_matmul as int4_ref  # noqa: E402
from sklearn_frontier.kernels.quantization._torch import available as torch_int4_available  # noqa: E402
from sklearn_frontier.kernels.quantization._torch import unpack  # noqa: E402

import sklearn_frontier  # noqa: E402
from sklearn_frontier.quantization import (  # noqa: E402
    RTNQuantizer,
    SVDQuantizer,
    TwinQuant,
    TwinQuantLinear,
    WUSHQuantizer,
    _cpu_dispatch,  # noqa: E402
)
from sklearn_frontier.quantization._formats import dequantize_groups  # noqa: E402

needs_op = pytest.mark.skipif(not torch_int4_available(), reason="this torch build has no CPU int4 op")
EPS32 = 2.0**-24


def _bf16(a):
    return torch.as_tensor(a, dtype=torch.float32).to(torch.bfloat16).to(torch.float64)


# ---------------------------------------------------------------------------------------------- kernel twin
@needs_op
@pytest.mark.parametrize("asym", [False, True])
@pytest.mark.parametrize("M,N,K,g", [(1, 16, 64, 32), (3, 37, 203, 64), (64, 48, 256, 128), (5, 20, 300, 256)])
def test_torch_int4_op_matches_its_reference_twin(M, N, K, g, asym):
    rng = np.random.default_rng(M * 1000 + K + asym)
    G = -(-K // g)
    codes = rng.integers(0 if asym else -8, 16 if asym else 8, size=(N, K)).astype(np.int8)
    scales = _bf16(rng.random((N, G)) + 0.05).numpy().astype(np.float32)
    zeros = rng.integers(0, 16, size=(N, G)).astype(np.uint8) if asym else None
    packed = pack_int4_torch(codes, scales, zeros, g)
    assert np.array_equal(unpack(packed[0], N, K, g, signed=not asym), codes)  # packing is lossless
    x = torch.from_numpy(rng.standard_normal((M, K)).astype(np.float32))
    gidx = np.arange(K) // g
    w = (codes.astype(np.float64) - (0.0 if zeros is None else zeros[:, gidx])) * scales[:, gidx]
    xb = _bf16(x).numpy()
    exact = xb @ w.T
    ref = int4_ref(x, *packed, g, N).numpy()
    np.testing.assert_allclose(ref, exact, rtol=1e-6, atol=1e-6 * (np.abs(xb) @ np.abs(w).T).max())  # float32 out
    y = int4pack_matmul(x, *packed, group_size=g, n_out=N).numpy()
    bound = 2 * 2.0**-9 * (np.abs(xb) @ np.abs(w).T) + 1e-6  # bf16 weight products and bf16 output
    assert np.all(np.abs(y - exact) <= bound)
    with sklearn_frontier.config_context(backend="reference"):
        np.testing.assert_array_equal(int4pack_matmul(x, *packed, group_size=g, n_out=N).numpy(), ref)


def test_torch_int4_packing_validates():
    with pytest.raises(ValueError, match="group_size"):
        pack_int4_torch(np.zeros((2, 32), np.int8), np.ones((2, 2), np.float32), None, 16)
    with pytest.raises(ValueError, match="codes must lie"):
        pack_int4_torch(np.full((2, 32), 9, np.int8), np.ones((2, 1), np.float32), None, 32)
    with pytest.raises(ValueError, match="scales must have shape"):
        pack_int4_torch(np.zeros((2, 32), np.int8), np.ones((2, 3), np.float32), None, 32)


# ---------------------------------------------------------------------------------------------- module paths
def _f32_bound(x, W_hat, bias):
    K = x.shape[1]
    b = 0.0 if bias is None else np.abs(bias)[None, :]
    return 8 * K * EPS32 * (np.abs(x) @ np.abs(W_hat).T + b) + 1e-30


def _check_path(mod, x, path):
    xs = x.numpy().astype(np.float64)
    W_hat = mod.dequantize().numpy().astype(np.float64)
    bias = None if mod.bias is None else mod.bias.numpy().astype(np.float64)
    ref = xs @ W_hat.T + (0.0 if bias is None else bias)
    y = mod(x)
    assert mod.last_path_ == path, (mod.last_path_, path)
    assert y.shape == (x.shape[0], mod.out_features) and y.dtype == x.dtype
    err = np.abs(y.numpy().astype(np.float64) - ref)
    bound = _f32_bound(xs, W_hat, bias)
    if path == "torch_int4":
        qw = mod.to_quantized()
        Q = dequantize_groups(qw.codes, qw.scales, qw.zero_points, qw.fmt, qw.format_scale).astype(np.float64)
        xt = mod._transformed(x, mod._fast).numpy().astype(np.float64)
        eye = mod._transformed(torch.eye(mod.in_features), mod._fast).numpy()
        lowrank = W_hat - float(mod.tensor_scale) * (eye @ Q.T).T
        bound = bound + 2.0**-7 * float(mod.tensor_scale) * (np.abs(xt) @ np.abs(Q).T) \
            + _f32_bound(xs, lowrank, None)
    assert np.all(err <= bound), f"{path}: max excess {np.max(err - bound)}"


def measured_path(mod, M):
    """The path the measured dispatch recorded for M rows (after a call of M rows)."""
    name = _cpu_dispatch.BUCKETS[_cpu_dispatch.bucket_of(M)][0]
    return next(r.path for r in mod.dispatch_table_ if r.bucket == name)


@pytest.fixture(autouse=True)
def _private_dispatch_cache(tmp_path, monkeypatch):
    """Measured decisions go to a fresh cache folder, not the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _cpu_dispatch.clear_memo()
    yield
    _cpu_dispatch.clear_memo()


def _layer(est, m, n, bias, seed=0):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((m, n)).astype(np.float32)
    X = rng.standard_normal((256, n))
    est.fit(W, X_calib=X)
    b = torch.from_numpy(rng.standard_normal(m).astype(np.float32)) if bias else None
    # float activations: these tests cover the weight-only kernels (tests/test_quantization_w4a8.py the int8 one)
    return TwinQuantLinear.from_quantized(est.quantize(), bias=b, act_quant=None)


INT4_CASES = [
    (RTNQuantizer(), 21, 333, False),  # default group 128, ragged last group, odd widths
    (RTNQuantizer(group_size=32, symmetric=False), 19, 96, True),
    (SVDQuantizer(rank=8, group_size=64, n_refinements=1, random_state=0), 33, 192, True),
    (TwinQuant(rank=8, max_iter=3, random_state=0), 17, 129, False),
    (WUSHQuantizer(), 24, 256, True),  # block transform folded into the activations
]


@needs_op
@pytest.mark.parametrize("case", range(len(INT4_CASES)), ids=["rtn", "rtn-asym", "svd-r8", "twinquant-r8", "wush"])
@pytest.mark.parametrize("M", [1, 3, 64])
def test_every_int4_path_matches_the_reference(case, M):
    est, m, n, bias = INT4_CASES[case]
    mod = _layer(est, m, n, bias)
    x = torch.randn(M, n, generator=torch.Generator().manual_seed(M))
    for path in ("torch_int4", "dequantize"):
        with _cpu_dispatch.force_path(path):
            _check_path(mod, x, path)
    mod.backend = "numba"
    _check_path(mod, x, "numba_lut4")
    mod.backend = "reference"
    _check_path(mod, x, "reference")
    from sklearn_frontier.kernels._dispatch import triton_available, triton_interpret

    if triton_available() and triton_interpret() and mod.transform != "block" and M <= 3:
        mod.backend = "triton"
        _check_path(mod, x, "triton")
    mod.backend = None
    mod(x)
    assert mod.last_path_ == measured_path(mod, M)


@pytest.mark.parametrize("est", [RTNQuantizer(weight_format="mxfp4"), RTNQuantizer(weight_format="nvfp4"),
                                 RTNQuantizer(group_size=16), SVDQuantizer(rank=4, group_size=16)],
                         ids=["mxfp4", "nvfp4", "int4-g16", "svd-g16"])
@pytest.mark.parametrize("M", [1, 3, 64])
def test_formats_the_op_does_not_cover_fall_back_to_the_lut_kernel(est, M):
    mod = _layer(est, 20, 96, bias=True)
    assert mod._fast.int4_torch is None
    x = torch.randn(M, 96, generator=torch.Generator().manual_seed(M))
    mod(x)
    path = measured_path(mod, M)
    assert path == ("dequantize" if M > 8 else path) and path in ("numba_lut4", "dequantize")
    _check_path(mod, x, path)
    mod.backend = "numba"
    _check_path(mod, x, "numba_lut4")


def test_int8_and_fake_quantized_activations_run_the_reference():
    mod = _layer(RTNQuantizer(n_bits=8, group_size=32), 12, 64, bias=True)
    _check_path(mod, torch.randn(3, 64), "reference")
    rng = np.random.default_rng(0)
    est = RTNQuantizer(group_size=32, act_bits=8).fit(rng.standard_normal((8, 64)),
                                                      X_calib=rng.standard_normal((64, 64)))
    mod = TwinQuantLinear.from_quantized(est.quantize())
    mod(torch.randn(2, 64))
    assert mod.last_path_ == "reference"


@needs_op
def test_real_minilm_layer_on_every_path():
    try:
        from sklearn_frontier.datasets import load_minilm_l6_v2

        model, _ = load_minilm_l6_v2()
    except ImportError as exc:
        pytest.skip(str(exc))
    lin = model.encoder.layer[0].intermediate.dense if hasattr(model.encoder.layer[0], "intermediate") else None
    if lin is None:
        lin = [m for m in model.modules() if isinstance(m, torch.nn.Linear)][4]
    mod = TwinQuantLinear.from_linear(lin, SVDQuantizer(rank=8, group_size=128, n_refinements=0, random_state=0),
                                      act_quant=None)
    assert mod._fast.int4_torch is not None
    for M in (1, 3, 64):
        x = torch.randn(M, lin.in_features, generator=torch.Generator().manual_seed(M))
        mod.backend = None
        with _cpu_dispatch.force_path("torch_int4"):
            _check_path(mod, x, "torch_int4")
        mod.backend = "numba"
        _check_path(mod, x, "numba_lut4")
        mod.backend = "reference"
        _check_path(mod, x, "reference")
    with torch.no_grad():
        rel = float((mod.dequantize() - lin.weight).norm() / lin.weight.norm())
    assert rel < 0.12  # a 4-bit layer, not garbage


# ---------------------------------------------------------------------------------------------- state
def _state_bytes(mod):
    return sum(t.numel() * t.element_size() for t in mod.state_dict().values())


@pytest.mark.parametrize("est", [RTNQuantizer(), RTNQuantizer(symmetric=False),
                                 SVDQuantizer(rank=8, n_refinements=0, random_state=0),
                                 RTNQuantizer(weight_format="nvfp4")], ids=["rtn", "asym", "svd-r8", "nvfp4"])
@pytest.mark.parametrize("m,n", [(48, 256), (33, 333)])
def test_state_dict_holds_only_the_stored_weight_and_round_trips(est, m, n):
    mod = _layer(est, m, n, bias=True)
    sd = mod.state_dict()
    assert set(sd) <= {"qweight", "scales", "zeros", "tensor_scale", "format_scale", "lowrank_up", "lowrank_down",
                       "input_transform", "bias"}
    assert sd["scales"].dtype == (torch.uint8 if mod.fmt.is_fp else torch.bfloat16)
    weight_bytes = _state_bytes(mod) - 4 * m  # minus the float32 bias
    stored = est.bits_breakdown_["total"] / 8  # = bits_per_weight_ * m * n / 8, in exact integers
    # beyond the counted bits: format_scale (4 bytes, counted only for NVFP4) and the half byte that ends a
    # row of nibbles when a row holds an odd number of codes or of 4-bit zero points
    G = -(-n // mod.fmt.group_size)
    slack = 4 + m * (n % 2) / 2 + (m * (G % 2) / 2 if mod.zeros is not None else 0)
    assert stored <= weight_bytes <= stored + slack
    x = torch.randn(5, n)
    for act_quant in (None, "int8"):
        mod.act_quant = act_quant
        mod.refresh()
        restored = TwinQuantLinear(n, m, rank=mod.rank, fmt=mod.fmt, transform=mod.transform, bias=True,
                                   act_quant=act_quant)
        restored(x)  # packs the zero weight first: loading must repack
        restored.load_state_dict(sd)
        np.testing.assert_array_equal(restored.dequantize().numpy(), mod.dequantize().numpy())
        torch.testing.assert_close(restored(x), mod(x), rtol=0, atol=0)
        assert restored.last_path_ == mod.last_path_


def test_dtype_casts_keep_the_stored_weight():
    mod = _layer(SVDQuantizer(rank=4, group_size=32, n_refinements=0, random_state=0), 16, 64, bias=True)
    W_hat = mod.dequantize()
    mod.half()
    assert mod.scales.dtype == torch.bfloat16 and mod.tensor_scale.dtype == torch.float32
    assert mod.bias.dtype == torch.float16
    assert torch.equal(mod.dequantize(), W_hat)
    y = mod(torch.randn(3, 64, dtype=torch.float16))
    assert y.dtype == torch.float16 and mod._fast is not None


def test_torch_save_load_of_a_quantized_model(tmp_path):
    from sklearn_frontier.quantization import quantize_model

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(64, 96), torch.nn.GELU(), torch.nn.Linear(96, 16))
    quantize_model(net, [torch.randn(32, 64)], method="svd", rank=4, group_size=32)
    x = torch.randn(4, 64)
    y = net(x)
    buf = io.BytesIO()
    torch.save(net, buf)
    buf.seek(0)
    net2 = torch.load(buf, weights_only=False)
    torch.testing.assert_close(net2(x), y, rtol=0, atol=0)
    path = tmp_path / "sd.pt"
    torch.save(net.state_dict(), path)
    sd = torch.load(path, weights_only=True)
    assert not any("packed" in k or "_fast" in k for k in sd)
    net[0].load_state_dict({k[2:]: v for k, v in sd.items() if k.startswith("0.")})
    torch.testing.assert_close(net(x), y, rtol=0, atol=0)


def test_skops_round_trip_of_fitted_quantizers(tmp_path):
    from sklearn_frontier import persistence

    W = np.random.default_rng(0).standard_normal((16, 64))
    for est in (RTNQuantizer(group_size=32), SVDQuantizer(rank=2, group_size=32, random_state=0)):
        est.fit(W)
        path = tmp_path / f"{type(est).__name__}.skops"
        persistence.dump(est, path)
        back = persistence.load(path)
        np.testing.assert_array_equal(back.transform(W), est.transform(W))
        np.testing.assert_array_equal(back.scales_, est.scales_)


def test_bad_shapes_keep_clear_errors():
    mod = _layer(RTNQuantizer(group_size=32), 8, 64, bias=False)
    with pytest.raises(ValueError, match="last dimension 64"):
        mod(torch.randn(3, 65))
    qw = RTNQuantizer(n_bits=2, group_size=32).fit(np.random.default_rng(0).standard_normal((8, 64))).quantize()
    with pytest.raises(ValueError, match="n_bits"):
        TwinQuantLinear.from_quantized(qw)
    y = mod(torch.randn(2, 3, 64))  # leading dimensions are kept
    assert y.shape == (2, 3, 8)


# ---------------------------------------------------------------------------------------------- weight range
QUANTIZERS = {
    "rtn": lambda: RTNQuantizer(group_size=32),
    "rtn-asym": lambda: RTNQuantizer(group_size=32, symmetric=False),
    "nvfp4": lambda: RTNQuantizer(weight_format="nvfp4"),
    "svd": lambda: SVDQuantizer(rank=2, group_size=32, random_state=0),
    "twinquant": lambda: TwinQuant(rank=2, group_size=32, max_iter=3, random_state=0),
    "wush": lambda: WUSHQuantizer(),
}
_W = np.random.default_rng(3).standard_normal((12, 64))


@pytest.mark.parametrize("name", list(QUANTIZERS))
@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(-95, 115))
def test_quantization_is_scale_equivariant_across_decades(name, k):
    """Quantizing 2^k W gives 2^k times the result exactly (every stored part is relative to the tensor scale)."""
    c = 2.0**k
    base = QUANTIZERS[name]().fit(_W)
    scaled = QUANTIZERS[name]().fit(c * _W)
    np.testing.assert_array_equal(scaled.codes_, base.codes_)
    np.testing.assert_array_equal(scaled.scales_, base.scales_)
    assert scaled.tensor_scale_ == np.float32(c) * base.tensor_scale_
    np.testing.assert_array_equal(scaled.transform(c * _W), c * base.transform(_W))
    assert scaled.reconstruction_error_ == base.reconstruction_error_


@pytest.mark.parametrize("name", list(QUANTIZERS))
@settings(max_examples=4, deadline=None, derandomize=True)
@given(e=st.integers(-28, 34), u=st.floats(1.0, 9.9))
def test_decimal_scales_quantize_as_well_anywhere_in_range(name, e, u):
    c = u * 10.0**e
    base = QUANTIZERS[name]().fit(_W)
    scaled = QUANTIZERS[name]().fit(c * _W)
    W_hat = scaled.transform(c * _W)
    assert np.all(np.isfinite(W_hat))
    # the tensor scale rounds differently for c W; a few codes may flip, the error stays the same
    assert scaled.reconstruction_error_ == pytest.approx(base.reconstruction_error_, rel=0.05)


@pytest.mark.parametrize("name", list(QUANTIZERS))
def test_magnitudes_outside_the_range_and_bad_weights_are_refused(name):
    with pytest.raises(ValueError, match="too large.*representable"):
        QUANTIZERS[name]().fit(_W * 1e150)
    with pytest.raises(ValueError, match="too small.*representable"):
        QUANTIZERS[name]().fit(_W * 1e-150)
    for bad in (np.full((4, 64), np.nan), np.full((4, 64), np.inf)):
        with pytest.raises(ValueError, match="NaN|infinity"):
            QUANTIZERS[name]().fit(bad)
    with pytest.raises(ValueError):
        QUANTIZERS[name]().fit(np.ones(64))
    with pytest.raises(ValueError):
        QUANTIZERS[name]().fit(np.ones((0, 64)))
    est = QUANTIZERS[name]().fit(np.zeros((4, 64)))  # an all-zero weight is representable
    assert np.all(est.transform(np.zeros((4, 64))) == 0)
