"""Twin-test inputs and tolerances of the quantization kernels, keyed by kernel name."""

import numpy as np

from kernel_inputs import TwinCase


def _pack_inputs(rng):
    m, n = int(rng.integers(1, 9)), int(rng.integers(1, 40))
    return (rng.integers(-8, 8, size=(m, n)).astype(np.int8),), {}


def _unpack_inputs(rng):
    m, n = int(rng.integers(1, 9)), int(rng.integers(1, 40))
    packed = rng.integers(0, 256, size=(m, (n + 1) // 2)).astype(np.uint8)
    return (packed, n, bool(rng.integers(0, 2))), {}


def _gram_inputs(rng):
    N, n = int(rng.integers(1, 50)), int(rng.integers(1, 20))
    return (rng.standard_normal((N, n)),), {}


def _fwht_inputs(rng):
    N, n = int(rng.integers(1, 10)), 2 ** int(rng.integers(0, 7))
    return (rng.standard_normal((N, n)),), {}


def _dual_inputs(rng):
    import torch

    M, N = int(rng.integers(1, 20)), int(rng.integers(1, 40))
    g = int(rng.choice([8, 16, 32]))
    K = int(rng.integers(1, 3)) * g + int(rng.choice([0, 0, 3]))  # a ragged last group sometimes
    r = int(rng.choice([0, 1, 4]))
    n_groups = -(-K // g)
    gen = torch.Generator().manual_seed(int(rng.integers(0, 2**31)))
    x = torch.randn(M, K, generator=gen)
    qweight = torch.randint(0, 256, (N, (K + 1) // 2), generator=gen, dtype=torch.uint8)
    scales = (torch.rand(N, n_groups, generator=gen) + 0.1).to(torch.float16)
    zeros = torch.randint(0, 16, (N, n_groups), generator=gen, dtype=torch.uint8) if rng.random() < 0.5 else None
    up = torch.randn(N, r, generator=gen).to(torch.float16) if r else None
    down = torch.randn(r, K, generator=gen).to(torch.float16) if r else None
    t = torch.rand(K, generator=gen) + 0.5 if rng.random() < 0.5 else None
    bias = torch.randn(N, generator=gen) if rng.random() < 0.5 else None
    return (x, qweight, scales, zeros, float(rng.random() + 0.5), up, down, t, bias, g), {}


def _lut4_inputs(rng):
    import torch

    M, N = int(rng.integers(1, 20)), int(rng.integers(1, 40))
    g = int(rng.choice([8, 16, 32]))
    K = int(rng.integers(1, 3)) * g + int(rng.choice([0, 0, 3]))
    n_groups = -(-K // g)
    gen = torch.Generator().manual_seed(int(rng.integers(0, 2**31)))
    x = torch.randn(M, K, generator=gen)
    qweight = torch.randint(0, 256, (N, (K + 1) // 2), generator=gen, dtype=torch.uint8)
    lut = torch.randn(16, generator=gen)
    scales = torch.rand(N, n_groups, generator=gen) + 0.1
    zeros = torch.randint(0, 16, (N, n_groups), generator=gen).to(torch.float32) if rng.random() < 0.5 else None
    return (x, qweight, lut, scales, zeros, g), {}


def _int4pack_inputs(rng):
    import torch
    from sklearn_frontier.kernels.quantization._torch import pack

    M, N = int(rng.integers(1, 20)), int(rng.integers(1, 40))
    g = int(rng.choice([32, 64]))
    K = int(rng.integers(1, 3)) * g + int(rng.choice([0, 0, 5]))
    G = -(-K // g)
    asym = bool(rng.random() < 0.5)
    codes = rng.integers(0 if asym else -8, 16 if asym else 8, size=(N, K)).astype(np.int8)
    scales = torch.from_numpy(rng.random((N, G)) + 0.1).to(torch.bfloat16).float().numpy()
    zeros = rng.integers(0, 16, size=(N, G)).astype(np.uint8) if asym else None
    packed, sz, zoff = pack(codes, scales, zeros, g)
    x = torch.from_numpy(rng.standard_normal((M, K)).astype(np.float32))
    return (x, packed, sz, zoff, g, N), {}


def _compare_dual(expected, actual):
    import torch

    scale = float(expected.abs().max()) if expected.numel() else 1.0
    torch.testing.assert_close(actual, expected, rtol=0, atol=1e-4 * max(scale, 1e-6))


def _lut4_deq_inputs(rng):
    (x, qweight, lut, scales, zeros, g), _ = _lut4_inputs(rng)
    return (qweight, lut, scales, zeros, g, x.shape[1]), {}


def _w4a8_inputs(rng):
    from sklearn_frontier.kernels.quantization._reference import pack_w4a8

    M, N = int(rng.choice([1, 3, 8, 64])), int(rng.integers(1, 150))
    g = int(rng.choice([32, 64, 128]))
    K = int(rng.integers(1, 3)) * g + int(rng.choice([0, 0, 7]))
    G = -(-K // g)
    asym = bool(rng.random() < 0.5)
    codes = rng.integers(0 if asym else -8, 16 if asym else 8, size=(N, K)).astype(np.int8)
    scales = (rng.random((N, G)) + 0.1).astype(np.float32)
    zeros = rng.integers(0, 16, size=(N, G)).astype(np.uint8) if asym else None
    packed, scale_t, zero_t = pack_w4a8(codes, scales, zeros, g)
    x = rng.standard_normal((M, K)).astype(np.float32)
    t = (rng.random(K) + 0.5).astype(np.float32) if rng.random() < 0.5 else None
    r = int(rng.choice([0, 8]))
    down = rng.standard_normal((r, K)).astype(np.float32) if r else None
    up_t = rng.standard_normal((r, N)).astype(np.float32) if r else None
    bias = rng.standard_normal(N).astype(np.float32) if rng.random() < 0.5 else None
    return (x, x, t, packed, scale_t, zero_t, g, float(rng.random() + 0.5), down, up_t, bias), {}


def _compare_w4a8(expected, actual):
    # Both twins round the activations identically (same float32 arithmetic) and sum the integer block
    # products exactly; they differ only in the order of the float32 sums over blocks: bound that.
    scale = float(np.abs(expected).max()) if expected.size else 1.0
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-5 * max(scale, 1e-6))


def _w4a8_decode_inputs(rng):
    (x, _, _, packed, scale_t, zero_t, g, *_), _ = _w4a8_inputs(rng)
    return (packed, scale_t, zero_t, g, x.shape[1]), {}


def _int8_inputs(rng):
    import torch
    from sklearn_frontier.kernels.quantization._reference import pack_int8_weight

    (x, _, _, _, _, _, g, ts, down, up_t, bias), _ = _w4a8_inputs(rng)
    N, K = (up_t.shape[1] if up_t is not None else int(rng.integers(1, 150))), x.shape[1]
    G = -(-K // g)
    codes = rng.integers(-8, 8, size=(N, K)).astype(np.int8)
    wq, ch = pack_int8_weight(codes, (rng.random((N, G)) + 0.1).astype(np.float32), None, g)
    if bias is not None:
        bias = rng.standard_normal(N).astype(np.float32)

    def t(a):
        return None if a is None else torch.from_numpy(a)

    return (t(x), t(x), t(wq), t(ch), ts, t(down), t(up_t), t(bias)), {}


CASES = {
    "pack_int4": TwinCase(make_inputs=_pack_inputs, rtol=0, atol=0),
    "unpack_int4": TwinCase(make_inputs=_unpack_inputs, rtol=0, atol=0),
    "accumulate_gram": TwinCase(make_inputs=_gram_inputs, rtol=1e-10, atol=1e-10),
    "fwht": TwinCase(make_inputs=_fwht_inputs, rtol=1e-10, atol=1e-12),
    "dual_matmul": TwinCase(make_inputs=_dual_inputs, compare=_compare_dual),
    "lut4_matmul": TwinCase(make_inputs=_lut4_inputs, compare=_compare_dual),
    "lut4_dequantize": TwinCase(make_inputs=_lut4_deq_inputs, rtol=0, atol=0),
    "int4pack_matmul": TwinCase(make_inputs=_int4pack_inputs),
    "w4a8_matmul": TwinCase(make_inputs=_w4a8_inputs, compare=_compare_w4a8),
    "w4a8_decode_t": TwinCase(make_inputs=_w4a8_decode_inputs, rtol=0, atol=0),
    "int8_matmul": TwinCase(make_inputs=_int8_inputs, compare=_compare_dual),
}
