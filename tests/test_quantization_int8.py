"""The int8 path (per-row int8 activations, int8 weights re-quantized per output channel from the 4-bit codes,
int32 accumulation by torch's int8 GEMM): equal to its reference twin, within its rounding bound of the
dequantized layer, and what ``TwinQuantLinear`` runs when the dispatch picks it."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn_frontier.kernels.quantization import (  # noqa: E402
    int8_matmul,
    int8_matmul_available,
    pack_int8_weight,
)

needs_int_mm = pytest.mark.skipif(not int8_matmul_available(), reason="torch._int_mm unavailable on this CPU")


def _weight(rng, N, K, g, asym=False):
    G = -(-K // g)
    codes = rng.integers(0 if asym else -8, 16 if asym else 8, size=(N, K)).astype(np.int8)
    scales = (rng.random((N, G)) + 0.1).astype(np.float32)
    zeros = rng.integers(0, 16, size=(N, G)).astype(np.uint8) if asym else None
    gidx = np.arange(K) // g
    W = (codes - (0 if zeros is None else zeros[:, gidx].astype(np.float64))) * scales[:, gidx]
    return codes, scales, zeros, W


@needs_int_mm
@pytest.mark.parametrize("M,N,K,g,r,asym", [(1, 32, 64, 32, 0, False), (17, 40, 96, 32, 4, True),
                                            (64, 384, 256, 128, 8, False), (3, 7, 33, 32, 2, False)])
def test_int8_matmul_equals_reference_twin(M, N, K, g, r, asym):
    rng = np.random.default_rng(M + N + K)
    codes, scales, zeros, _ = _weight(rng, N, K, g, asym)
    wq, ch = pack_int8_weight(codes, scales, zeros, g)
    x = torch.from_numpy(rng.standard_normal((M, K)).astype(np.float32))
    xr = x * 1.5
    down = torch.randn(r, K) if r else None
    up_t = torch.randn(r, N) if r else None
    bias = torch.randn(N)
    kw = dict(tensor_scale=0.7, down=down, up_t=up_t, bias=bias, xr=xr)
    fast = int8_matmul(x, wq, ch, **kw)
    ref = int8_matmul(x, wq, ch, backend="reference", **kw)
    # the integer sums are exact on both sides; the epilogue sums the scaled product, the low-rank branch and
    # the bias in another float32 order: equal up to float32 rounding of the output
    torch.testing.assert_close(fast, ref, rtol=0, atol=1e-5 * float(ref.abs().max()))


def test_int8_activation_codes_are_bitwise_those_of_the_reference():
    from sklearn_frontier.kernels.quantization._int8_parts import quantize_rows_int8
    from sklearn_frontier.kernels.quantization._numba import int8_quantize_rows

    rng = np.random.default_rng(3)
    x = rng.standard_normal((33, 77)).astype(np.float32) * rng.random((33, 1)).astype(np.float32) * 10
    x[5] = 0.0
    x[7, 3] = 0.5 * float(np.abs(x[7]).max()) / 127 * 2 + 0.0  # a value on a rounding tie's neighbourhood
    xq, s = np.empty(x.shape, np.int8), np.empty(33, np.float32)
    int8_quantize_rows(x, xq, s)
    ref_q, ref_s = quantize_rows_int8(torch.from_numpy(x))
    np.testing.assert_array_equal(xq, ref_q.numpy())
    np.testing.assert_array_equal(s, ref_s.numpy().ravel())


@pytest.mark.parametrize("backend", ["reference", None])
def test_int8_matmul_within_rounding_bound_of_dequantized(backend):
    if backend is None and not int8_matmul_available():
        pytest.skip("torch._int_mm unavailable")
    rng = np.random.default_rng(0)
    N, K, g = 64, 256, 64
    codes, scales, zeros, W = _weight(rng, N, K, g)
    wq, ch = pack_int8_weight(codes, scales, zeros, g)
    x = rng.standard_normal((9, K))
    y = int8_matmul(torch.from_numpy(x.astype(np.float32)), wq, ch, backend=backend).double().numpy()
    exact = x @ W.T
    # activations off by at most half a row step, the weight by at most half a channel step, per entry
    s_row = np.abs(x).max(1, keepdims=True) / 127
    s_ch = np.abs(W).max(1) / 127
    bound = (s_row / 2) * np.abs(W).sum(1)[None, :] + np.abs(x).sum(1, keepdims=True) * (s_ch / 2)[None, :] \
        + (s_row / 2) * (s_ch / 2)[None, :] * K
    assert np.all(np.abs(y - exact) <= bound * (1 + 1e-5) + 1e-5)
    rel = np.sum((y - exact) ** 2) / np.sum(exact**2)
    assert rel < 1e-3


def test_pack_int8_weight_is_per_channel_and_exact_on_the_row_maximum():
    rng = np.random.default_rng(1)
    codes, scales, zeros, W = _weight(rng, 5, 64, 32)
    wq, ch = pack_int8_weight(codes, scales, zeros, 32)
    assert wq.dtype == torch.int8 and tuple(ch.shape) == (5,)
    assert np.all(np.abs(wq.numpy()).max(1) == 127)
    np.testing.assert_allclose(wq.numpy() * ch.numpy()[:, None], W, atol=float(ch.max()) / 2 + 1e-7)
    zero, zch = pack_int8_weight(np.zeros((2, 32), np.int8), np.ones((2, 1), np.float32), None, 32)
    assert not zero.any() and torch.equal(zch, torch.ones(2))


def test_int8_matmul_bad_input():
    wq, ch = pack_int8_weight(np.ones((2, 32), np.int8), np.ones((2, 1), np.float32), None, 32)
    with pytest.raises(ValueError, match="32 features"):
        int8_matmul(torch.ones(1, 16), wq, ch)
    with pytest.raises(ValueError, match="together"):
        int8_matmul(torch.ones(1, 32), wq, ch, down=torch.ones(1, 32))
    with pytest.raises(ValueError, match="scales must have shape"):
        pack_int8_weight(np.ones((2, 32), np.int8), np.ones((2, 2), np.float32), None, 32)


def test_minilm_int8_path_costs_little_beyond_the_weights():
    """End to end on all-MiniLM-L6-v2 (RTN weights, quick to make): with every layer on the int8 path at every
    row count, the embedding cosine to fp32 stays within 0.01 of the weight-only product's (exact decode).
    The absolute bound (cosine >= 0.97 with TwinQuant rank 8) needs TwinQuant's minutes-long fit: it is checked
    by ``python -m benchmarks twinquant_kernel``."""
    import copy

    from sklearn_frontier.quantization import TwinQuantLinear, _cpu_dispatch, quantize_model

    if not int8_matmul_available():
        pytest.skip("torch._int_mm unavailable")
    try:
        from sklearn_frontier.datasets import load_minilm_l6_v2

        model, _ = load_minilm_l6_v2()
    except ImportError as exc:
        pytest.skip(str(exc))
    texts = ["How do I open a file?", "The stock market crashed today.",
             "Return a new list containing all items from the iterable in ascending order.",
             "A man is eating a piece of bread."]
    q = copy.deepcopy(model)
    quantize_model(q, method="rtn", group_size=128, act_quant="int8")
    cos = {}
    with torch.no_grad():
        ref = model.encode(texts)
        for path in ("int8", "dequantize"):
            with _cpu_dispatch.force_path(path):
                cos[path] = np.sum(ref * q.encode(texts), axis=1)
            assert {m.last_path_ for m in q.modules() if isinstance(m, TwinQuantLinear)} == {path}
    assert np.all(cos["int8"] >= cos["dequantize"] - 0.01), cos
