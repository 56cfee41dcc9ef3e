"""Reference (numpy / torch) bodies of the quantization kernels: the oracles of the numba and Triton twins."""

import numpy as np


def pack_int4(codes):
    """Pack int8 codes (m, n) into uint8 (m, ceil(n/2)): column 2j in the low nibble, 2j+1 in the high one."""
    codes = np.asarray(codes)
    m, n = codes.shape
    nib = (codes.astype(np.int16) & 15).astype(np.uint8)
    if n % 2:
        nib = np.concatenate([nib, np.zeros((m, 1), dtype=np.uint8)], axis=1)
    return np.ascontiguousarray(nib[:, 0::2] | (nib[:, 1::2] << 4))


def unpack_int4(packed, n, signed):
    """Inverse of :func:`pack_int4`: int8 (m, n), sign-extended (two's complement) when ``signed``."""
    packed = np.asarray(packed, dtype=np.uint8)
    m = packed.shape[0]
    out = np.empty((m, 2 * packed.shape[1]), dtype=np.int16)
    out[:, 0::2] = packed & 15
    out[:, 1::2] = packed >> 4
    out = out[:, :n]
    if signed:
        out = np.where(out >= 8, out - 16, out)
    return np.ascontiguousarray(out.astype(np.int8))


def accumulate_gram(X):
    """``X^T X`` in float64 (unnormalised; callers divide by the token count)."""
    X = np.asarray(X, dtype=np.float64)
    return X.T @ X


def sylvester_hadamard(n):
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h


def fwht(X):
    """Normalised Walsh-Hadamard transform of each row, ``X @ Had_n / sqrt(n)`` (n a power of 2)."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[1]
    return X @ sylvester_hadamard(n) / np.sqrt(n)


def dequantize_int4_torch(qweight, scales, zeros, group_size, n):
    """Float32 (N, K) dequantized int4 weight (without tensor scale) from packed bytes, torch."""
    import torch

    q = qweight.to(torch.int16)
    codes = torch.stack([q & 15, q >> 4], dim=-1).reshape(q.shape[0], -1)[:, :n].to(torch.float32)
    gidx = torch.arange(n, device=qweight.device) // group_size
    s = scales.to(torch.float32)[:, gidx]
    if zeros is None:
        codes = torch.where(codes >= 8, codes - 16, codes)
    else:
        codes = codes - zeros.to(torch.float32)[:, gidx]
    return codes * s


def dual_matmul(x, qweight, scales, zeros, tensor_scale, up, down, t, bias, group_size):
    """``tensor_scale (t*x) deq(W)^T + (x down^T) up^T + bias`` with float32 accumulation, torch.

    x (M, K) float32/float16; qweight uint8 (N, ceil(K/2)); scales (N, G); zeros uint8 (N, G) or None
    (symmetric two's-complement codes); up (N, r), down (r, K) or None; t (K,) or None; bias (N,) or None.
    Returns (M, N) in x's dtype.
    """
    import torch

    K = x.shape[1]
    xf = x.to(torch.float32)
    w = dequantize_int4_torch(qweight, scales, zeros, group_size, K)
    xr = xf if t is None else xf * t.to(torch.float32)
    y = (xr @ w.T) * float(tensor_scale)
    if up is not None and up.shape[1] > 0:
        y = y + (xf @ down.to(torch.float32).T) @ up.to(torch.float32).T
    if bias is not None:
        y = y + bias.to(torch.float32)
    return y.to(x.dtype)


def lut4_matmul(x, qweight, lut, scales, zeros, group_size):
    """``x @ W^T`` with ``W[n, k] = (lut[q_nk] - z_ng) s_ng`` from packed nibbles, float32 accumulation, torch.

    x (M, K); qweight uint8 (N, ceil(K/2)) low nibble first; lut (16,) value of each nibble; scales (N, G);
    zeros (N, G) (in lut units) or None. Returns (M, N) in x's dtype.
    """
    import torch

    K = x.shape[1]
    q = qweight.to(torch.int64)
    nib = torch.stack([q & 15, q >> 4], dim=-1).reshape(q.shape[0], -1)[:, :K]
    w = lut.to(torch.float32)[nib]
    gidx = torch.arange(K, device=x.device) // group_size
    if zeros is not None:
        w = w - zeros.to(torch.float32)[:, gidx]
    w = w * scales.to(torch.float32)[:, gidx]
    return (x.to(torch.float32) @ w.T).to(x.dtype)


def int4pack_matmul(x, packed, scale_zeros, zero_offsets, group_size, n_out):
    """Twin of torch's int4 op backend: ``bf16(x) @ deq(W)^T`` in float64, returned as float32, torch.

    Decodes the op's packed layout (through the packing op itself, see ``_torch.unpack``) and the bfloat16
    scales exactly, then multiplies exactly; the op differs from it only by its bfloat16 rounding of the
    weight products and of the output.
    """
    import torch

    from ._torch import unpack

    K = x.shape[1]
    mp, kp = packed.shape[0], scale_zeros.shape[0] * group_size
    u = unpack(packed, mp, kp, group_size, signed=False).astype(np.float64) - 8.0
    s = scale_zeros[:, :, 0].to(torch.float64).T.numpy()  # (mp, G)
    w = (u.reshape(mp, -1, group_size) * s[:, :, None]).reshape(mp, kp)[:n_out, :K]
    xb = x.to(torch.bfloat16).to(torch.float64).numpy()
    y = xb @ w.T
    if zero_offsets is not None:
        G = zero_offsets.shape[1]
        gidx = np.minimum(np.arange(K) // group_size, G - 1)
        y = y + xb @ zero_offsets.to(torch.float64).numpy()[:, gidx].T
    return torch.from_numpy(y.astype(np.float32))


def lut4_dequantize(qweight, lut, scales, zeros, group_size, n):
    """Float32 (N, n) ``(lut[q] - z) s`` from packed nibbles (the weight :func:`lut4_matmul` multiplies by), torch."""
    import torch

    q = qweight.to(torch.int64)
    nib = torch.stack([q & 15, q >> 4], dim=-1).reshape(q.shape[0], -1)[:, :n]
    w = lut.to(torch.float32)[nib]
    gidx = torch.arange(n, device=qweight.device) // group_size
    if zeros is not None:
        w = w - zeros.to(torch.float32)[:, gidx]
    return w * scales.to(torch.float32)[:, gidx]


W4A8_BLOCK = 32


def pack_w4a8(codes, scales, zeros, group_size, chunk=64):
    """Weight-stationary layout of INT4 codes (N, K): ``(packed (C, Kp/2, chunk) uint8, scale_t (G, N) float32,
    zero_t (G, N) uint8 or None)``, Kp = K rounded up to 32, C = ceil(N / chunk) tiles of ``chunk`` outputs.

    ``packed[c, 16 b + j, i]`` = code of (n, 32 b + j) | code of (n, 32 b + 16 + j) << 4 for output
    ``n = c chunk + i``: each tile is contiguous, so a kernel task streams its weights in order. Codes are
    unsigned: two's complement codes (``zeros`` None) are stored with the offset 8 (the kernels subtract 8),
    unsigned codes with their zero points. Padded inputs and outputs hold code 0 and meet zero activations /
    are never written.
    """
    codes = np.asarray(codes)
    N, K = codes.shape
    Kp = -(-K // W4A8_BLOCK) * W4A8_BLOCK
    C = -(-N // chunk)
    u = np.zeros((C * chunk, Kp), dtype=np.uint8)
    u[:N, :K] = (codes.astype(np.int16) + (8 if zeros is None else 0)).astype(np.uint8)
    blocks = u.reshape(C * chunk, Kp // W4A8_BLOCK, 2, 16)  # (n, b, half, j)
    packed = (blocks[:, :, 0, :] | (blocks[:, :, 1, :] << 4)).reshape(C, chunk, Kp // 2)
    scale_t = np.ascontiguousarray(np.asarray(scales, dtype=np.float32).T)
    zero_t = None if zeros is None else np.ascontiguousarray(np.asarray(zeros, dtype=np.uint8).T)
    return np.ascontiguousarray(packed.transpose(0, 2, 1)), scale_t, zero_t


def unpack_w4a8(packed, N, K):
    """Unsigned codes (N, K) back from the weight-stationary layout (inverse of :func:`pack_w4a8`'s packing)."""
    packed = np.asarray(packed, dtype=np.uint8)
    C, half, chunk = packed.shape
    rows = packed.transpose(0, 2, 1).reshape(C * chunk, half // 16, 1, 16)
    u = np.concatenate([rows & 15, rows >> 4], axis=2).reshape(C * chunk, 2 * half)
    return np.ascontiguousarray(u[:N, :K])


def quantize_activations_w4a8(xr, t=None):
    """Per-32-block int8 activations of ``xr * t``: ``(xq (M, Kp) int8, xs (M, nb) float32)`` with
    ``xq = rint(v * (127 / amax))`` in float32 and ``xs = amax / 127`` (the arithmetic of the numba twin)."""
    v = np.asarray(xr, dtype=np.float32)
    if t is not None:
        v = v * np.asarray(t, dtype=np.float32)
    M, K = v.shape
    Kp = -(-K // W4A8_BLOCK) * W4A8_BLOCK
    vp = np.zeros((M, Kp), dtype=np.float32)
    vp[:, :K] = v
    vb = vp.reshape(M, -1, W4A8_BLOCK)
    amax = np.abs(vb).max(axis=2)
    with np.errstate(divide="ignore"):
        inv = np.where(amax > 0, np.float32(127.0) / amax, np.float32(0.0)).astype(np.float32)
    xq = np.rint(vb * inv[:, :, None]).astype(np.int8).reshape(M, Kp)
    return xq, (amax / np.float32(127.0)).astype(np.float32)


def w4a8_matmul(x, xr, t, packed, scale_t, zero_t, group_size, tensor_scale, down, up_t, bias):
    """Reference of the W4A8 product: ``ts (sum_b xs_b s_g (U_b xq_b - z_g sum xq_b) + (x down^T) up_t) + bias``.

    Integer block sums in int64, the rest in float64; returns float32 (M, N). Arguments as the numba twin.
    """
    xq, xs = quantize_activations_w4a8(xr, t)
    M = xq.shape[0]
    N = scale_t.shape[1]
    Kp = packed.shape[1] * 2
    u = unpack_w4a8(packed, N, Kp).astype(np.int64)  # (N, Kp)
    nb = Kp // W4A8_BLOCK
    gidx = (np.arange(nb) * W4A8_BLOCK) // group_size
    s = np.asarray(scale_t, dtype=np.float64)[gidx]  # (nb, N)
    z = np.full((nb, N), 8, dtype=np.int64) if zero_t is None else np.asarray(zero_t, dtype=np.int64)[gidx]
    xqb = xq.astype(np.int64).reshape(M, nb, W4A8_BLOCK)
    ub = u.reshape(N, nb, W4A8_BLOCK)
    dots = np.einsum("mbk,nbk->mbn", xqb, ub) - xqb.sum(axis=2)[:, :, None] * z[None]  # exact integers
    y = np.einsum("mbn,mb,bn->mn", dots.astype(np.float64), xs.astype(np.float64), s)
    if down is not None and down.shape[0]:
        h = np.asarray(x, dtype=np.float64) @ np.asarray(down, dtype=np.float64).T
        y = y + h @ np.asarray(up_t, dtype=np.float64)
    y = y * float(tensor_scale)
    if bias is not None:
        y = y + np.asarray(bias, dtype=np.float64)
    return y.astype(np.float32)


def w4a8_decode_t(packed, scale_t, zero_t, group_size, K, out=None, row_scale=None):
    """Reference of the transposed decode: float32 ``Q^T`` (K, N), ``Q = (u - z) s`` (no tensor scale); row k
    times ``row_scale[k]`` when given."""
    u = unpack_w4a8(packed, scale_t.shape[1], K).astype(np.float32)  # (N, K)
    gidx = np.arange(K) // group_size
    z = np.float32(8.0) if zero_t is None else np.asarray(zero_t, dtype=np.float32)[gidx].T
    w = ((u - z) * np.asarray(scale_t, dtype=np.float32)[gidx].T).T
    if row_scale is not None:
        w = w * np.asarray(row_scale, dtype=np.float32)[:, None]
    if out is None:
        return np.ascontiguousarray(w)
    out[...] = w
    return out


def pack_int8_weight(codes, scales, zeros, group_size):
    """Int8 weight (N, K) and float32 per-output-channel scale (N,) from 4-bit codes and their group scales.

    ``W[n, k] = (c[n, k] - z[n, g]) s[n, g]`` (no tensor scale; exact in float32: a small integer times a scale
    of at most 16 significant bits) is re-quantized with one scale per output channel, ``amax_n / 127`` (1 for
    an all-zero row), rounded half to even: the group scales fold into one channel scale, so that one int8 GEMM
    with int32 accumulation covers the whole row. Torch float32 ops, once per layer (a float64 numpy version
    took seconds on a 4096 x 4096 weight).
    """
    import torch

    c = torch.from_numpy(np.ascontiguousarray(codes)).to(torch.float32)
    N, K = c.shape
    G = -(-K // group_size)
    if G * group_size != K:
        c = torch.nn.functional.pad(c, (0, G * group_size - K))
    w = c.view(N, G, group_size)
    if zeros is not None:
        w -= torch.from_numpy(np.asarray(zeros, dtype=np.float32)).view(N, G, 1)
    w *= torch.from_numpy(np.ascontiguousarray(scales, dtype=np.float32)).view(N, G, 1)
    w = w.view(N, G * group_size)[:, :K]
    amax = w.abs().amax(dim=1) if K else torch.zeros(N)
    ch = torch.where(amax > 0, amax / 127.0, torch.ones_like(amax))
    wq = torch.round(w / ch[:, None]).clamp_(-127, 127).to(torch.int8)
    return wq.numpy(), ch.numpy()


def int8_matmul(x, xr, wq, ch_scale, tensor_scale, down, up_t, bias):
    """Twin of the int8 GEMM backend: the same int8 activations, integer products summed exactly in int64."""
    import torch

    from ._int8_parts import int8_epilogue, quantize_rows_int8

    xq, s_row = quantize_rows_int8(xr)
    acc = xq.to(torch.int64) @ wq.to(torch.int64).T
    return int8_epilogue(acc, s_row, ch_scale, x, tensor_scale, down, up_t, bias)
