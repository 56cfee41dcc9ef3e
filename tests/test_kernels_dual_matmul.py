"""Fused dual-component matmul: numba and Triton (interpreter) twins against the torch reference."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn_frontier.kernels._dispatch import triton_available, triton_interpret  # noqa: E402
from sklearn_frontier.kernels.quantization import dual_matmul, fwht, pack_int4, unpack_int4  # noqa: E402
from sklearn_frontier.kernels.quantization._numba import dual_matmul as dual_numba  # noqa: E402
from sklearn_frontier.kernels.quantization._reference import dual_matmul as dual_ref  # noqa: E402

SHAPES = [(1, 32, 64, 32, 4), (16, 64, 128, 64, 8), (48, 96, 256, 64, 16), (33, 40, 96, 32, 0)]


def _inputs(M, N, K, g, r, *, asym, with_t, with_bias, dtype, seed=0, scale_dtype=torch.float16):
    gen = torch.Generator().manual_seed(seed)
    G = -(-K // g)
    x = torch.randn(M, K, generator=gen).to(dtype)
    codes = torch.randint(0 if asym else -8, 16 if asym else 8, (N, K), generator=gen, dtype=torch.int8)
    qweight = torch.from_numpy(pack_int4(codes.numpy()))
    scales = (torch.rand(N, G, generator=gen) * 0.1 + 0.01).to(scale_dtype)
    zeros = torch.randint(0, 16, (N, G), generator=gen, dtype=torch.uint8) if asym else None
    up = (torch.randn(N, r, generator=gen) * 0.1).to(torch.float16) if r else None
    down = torch.randn(r, K, generator=gen).to(torch.float16) if r else None
    t = (torch.rand(K, generator=gen) + 0.5).to(torch.float16) if with_t else None
    bias = torch.randn(N, generator=gen) if with_bias else None
    return x, qweight, scales, zeros, 1.7, up, down, t, bias, g


def _check(y, ref, dtype):
    scale = float(ref.float().abs().max())
    tol = 1e-4 * scale if dtype == torch.float32 else 1e-2 * scale
    assert y.dtype == ref.dtype and y.shape == ref.shape
    assert float((y.float() - ref.float()).abs().max()) <= tol


@pytest.mark.triton
@pytest.mark.parametrize("shape", SHAPES, ids=[str(s) for s in SHAPES])
@pytest.mark.parametrize("asym", [False, True])
def test_triton_twin_matches_reference(shape, asym):
    if not triton_available() or not (triton_interpret() or torch.cuda.is_available()):
        pytest.skip("triton needs CUDA or TRITON_INTERPRET=1")
    from sklearn_frontier.kernels.quantization._triton import dual_matmul as dual_triton

    i = SHAPES.index(shape)
    with_t, with_bias = (i + asym) % 2 == 0, i % 2 == 1  # +-t and +-bias across the shape grid
    args = _inputs(*shape, asym=asym, with_t=with_t, with_bias=with_bias, dtype=torch.float32, seed=i)
    _check(dual_triton(*args), dual_ref(*args), torch.float32)


@pytest.mark.triton
@pytest.mark.parametrize("shape", SHAPES[:2], ids=[str(s) for s in SHAPES[:2]])
def test_triton_twin_float16(shape):
    if not triton_available() or not (triton_interpret() or torch.cuda.is_available()):
        pytest.skip("triton needs CUDA or TRITON_INTERPRET=1")
    from sklearn_frontier.kernels.quantization._triton import dual_matmul as dual_triton

    args = _inputs(*shape, asym=False, with_t=True, with_bias=True, dtype=torch.float16)
    _check(dual_triton(*args), dual_ref(*args), torch.float16)


@pytest.mark.parametrize("shape", SHAPES, ids=[str(s) for s in SHAPES])
@pytest.mark.parametrize("asym", [False, True])
@pytest.mark.parametrize("scale_dtype", [torch.float16, torch.bfloat16], ids=["fp16-scales", "bf16-scales"])
def test_numba_twin_matches_reference(shape, asym, scale_dtype):
    # INT group scales are stored as bfloat16 (float16 in older files): both decode exactly
    args = _inputs(*shape, asym=asym, with_t=True, with_bias=True, dtype=torch.float32, scale_dtype=scale_dtype)
    ref = dual_ref(*args)
    y = dual_numba(*args)
    torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-5 * float(ref.abs().max()))


def test_integer_inputs_give_bitwise_equal_twins():
    # Integer-valued operands: every partial sum is an exact float32 integer, so all twins agree bitwise.
    gen = torch.Generator().manual_seed(0)
    M, N, K, g, r = 5, 24, 70, 32, 3
    x = torch.randint(-3, 4, (M, K), generator=gen).float()
    codes = torch.randint(-8, 8, (N, K), generator=gen, dtype=torch.int8)
    qweight = torch.from_numpy(pack_int4(codes.numpy()))
    scales = torch.ones(N, -(-K // g), dtype=torch.float16)
    up = torch.randint(-2, 3, (N, r), generator=gen).half()
    down = torch.randint(-2, 3, (r, K), generator=gen).half()
    args = (x, qweight, scales, None, 1.0, up, down, None, None, g)
    ref = dual_ref(*args)
    expected = x @ codes.float().T + (x @ down.float().T) @ up.float().T
    assert torch.equal(ref, expected)
    assert torch.equal(dual_numba(*args), ref)
    if triton_available() and (triton_interpret() or torch.cuda.is_available()):
        from sklearn_frontier.kernels.quantization._triton import dual_matmul as dual_triton

        assert torch.equal(dual_triton(*args), ref)


def test_public_dispatch_validates_and_runs_every_backend():
    import sklearn_frontier

    args = _inputs(3, 16, 40, 8, 2, asym=False, with_t=False, with_bias=True, dtype=torch.float32)
    x, q, s, z, ts, up, down, t, b, g = args
    ref = dual_ref(*args)
    backends = ["reference", "numba"] + (["triton"] if triton_available() and triton_interpret() else [])
    for backend in backends:
        with sklearn_frontier.config_context(backend=backend):
            y = dual_matmul(x, q, s, z, ts, up, down, t, b, group_size=g)
        _check(y, ref, torch.float32)
    with pytest.raises(ValueError, match="features"):
        dual_matmul(x[:, :-2], q, s, group_size=g)


def test_unpack_validation_and_fwht_is_orthonormal():
    with pytest.raises(ValueError):
        unpack_int4(np.zeros((2, 3), dtype=np.uint8), 9)
    X = np.random.default_rng(0).standard_normal((3, 16))
    Y = fwht(X)
    np.testing.assert_allclose(np.linalg.norm(Y, axis=1), np.linalg.norm(X, axis=1), rtol=1e-12)
    np.testing.assert_allclose(fwht(Y), X, atol=1e-12)


@pytest.mark.parametrize("asym", [False, True])
def test_lut4_dequantize_is_the_weight_lut4_matmul_multiplies_by(asym):
    from sklearn_frontier.kernels.quantization import lut4_dequantize, lut4_matmul
    from sklearn_frontier.kernels.quantization._numba import lut4_dequantize as deq_numba
    from sklearn_frontier.kernels.quantization._reference import lut4_dequantize as deq_ref

    gen = torch.Generator().manual_seed(1)
    N, K, g = 13, 75, 16
    G = -(-K // g)
    qweight = torch.randint(0, 256, (N, (K + 1) // 2), generator=gen, dtype=torch.uint8)
    lut = torch.randn(16, generator=gen)
    scales = torch.rand(N, G, generator=gen).to(torch.bfloat16).float()
    zeros = torch.randint(0, 16, (N, G), generator=gen).float() if asym else None
    W = deq_ref(qweight, lut, scales, zeros, g, K)
    assert torch.equal(deq_numba(qweight, lut, scales, zeros, g, K), W)  # one rounding, (lut - z) * s, in both
    x = torch.randn(4, K, generator=gen)
    torch.testing.assert_close(lut4_matmul(x, qweight, lut, scales, zeros, group_size=g), x @ W.T,
                               rtol=1e-5, atol=1e-5 * float((x.abs() @ W.abs().T).max()))
    with pytest.raises(ValueError, match="does not match"):
        lut4_dequantize(qweight, lut, scales, zeros, group_size=g, n=K + 2)
