"""numba twins of the quantization kernels."""

import numpy as np
from numba import njit, prange


@njit(cache=True, nogil=True)
def _pack(codes):
    m, n = codes.shape
    half = (n + 1) // 2
    out = np.zeros((m, half), dtype=np.uint8)
    for i in range(m):
        for j in range(half):
            lo = np.int16(codes[i, 2 * j]) & 15
            hi = 0
            if 2 * j + 1 < n:
                hi = np.int16(codes[i, 2 * j + 1]) & 15
            out[i, j] = np.uint8(lo | (hi << 4))
    return out


def pack_int4(codes):
    return _pack(np.ascontiguousarray(codes, dtype=np.int8))


@njit(cache=True, nogil=True)
def _unpack(packed, n, signed):
    m = packed.shape[0]
    out = np.empty((m, n), dtype=np.int8)
    for i in range(m):
        for k in range(n):
            b = np.int16(packed[i, k // 2])
            v = (b >> (4 * (k % 2))) & 15
            if signed and v >= 8:
                v -= 16
            out[i, k] = np.int8(v)
    return out


def unpack_int4(packed, n, signed):
    return _unpack(np.ascontiguousarray(packed, dtype=np.uint8), int(n), bool(signed))


@njit(cache=True, nogil=True)
def _gram(X):
    N, n = X.shape
    G = np.zeros((n, n))
    for t in range(N):
        for i in range(n):
            xi = X[t, i]
            if xi != 0.0:
                for j in range(i, n):
                    G[i, j] += xi * X[t, j]
    for i in range(n):
        for j in range(i):
            G[i, j] = G[j, i]
    return G


def accumulate_gram(X):
    return _gram(np.ascontiguousarray(X, dtype=np.float64))


@njit(cache=True, nogil=True)
def _fwht(X):
    out = X.copy()
    N, n = out.shape
    for t in range(N):
        h = 1
        while h < n:
            for i in range(0, n, 2 * h):
                for j in range(i, i + h):
                    a = out[t, j]
                    b = out[t, j + h]
                    out[t, j] = a + b
                    out[t, j + h] = a - b
            h *= 2
    return out / np.sqrt(n)


def fwht(X):
    return _fwht(np.ascontiguousarray(X, dtype=np.float64))


@njit(cache=True, nogil=True, parallel=True, fastmath=True)
def _nibble_matmul(xT, qweight, lut, scales, zeros, has_zeros, group_size):
    """``yT[n, i] = sum_k x[i, k] (lut[q_nk] - z_ng) s_ng`` from packed nibbles; xT is (K, M), yT (N, M).

    Parallel over output rows; each nibble is decoded in a register and applied to all M activations
    (contiguous in xT), so no dequantized weight (not even one row of it) is ever written to memory.
    """
    K, M = xT.shape
    N = qweight.shape[0]
    G = scales.shape[1]
    yT = np.zeros((N, M), dtype=np.float32)
    for n in prange(N):
        for g in range(G):
            s = scales[n, g]
            z = np.float32(0.0)
            if has_zeros:
                z = np.float32(zeros[n, g])
            k1 = min(K, (g + 1) * group_size)
            if M == 1:
                acc = np.float32(0.0)
                for k in range(g * group_size, k1):
                    c = (np.int64(qweight[n, k >> 1]) >> (4 * (k & 1))) & 15
                    acc += xT[k, 0] * (lut[c] - z)
                yT[n, 0] += acc * s
            else:
                for k in range(g * group_size, k1):
                    c = (np.int64(qweight[n, k >> 1]) >> (4 * (k & 1))) & 15
                    w = (lut[c] - z) * s
                    for i in range(M):
                        yT[n, i] += xT[k, i] * w
    return yT


@njit(cache=True, nogil=True, parallel=True)
def _lut4_dequantize(qweight, lut, scales, zeros, has_zeros, group_size, n):
    N = qweight.shape[0]
    G = scales.shape[1]
    out = np.empty((N, n), dtype=np.float32)
    for r in prange(N):
        for g in range(G):
            s = scales[r, g]
            z = np.float32(0.0)
            if has_zeros:
                z = zeros[r, g]
            table = np.empty(16, dtype=np.float32)  # the group's 16 values: one multiply per group, not per weight
            for c in range(16):
                table[c] = (lut[c] - z) * s
            for k in range(g * group_size, min(n, (g + 1) * group_size)):
                out[r, k] = table[(np.int64(qweight[r, k >> 1]) >> (4 * (k & 1))) & 15]
    return out


def lut4_dequantize(qweight, lut, scales, zeros, group_size, n):
    """numba twin of the packed 4-bit dequantization (rows in parallel; torch tensors in, torch tensor out)."""
    import torch

    zeros_n = np.zeros((1, 1), np.float32) if zeros is None else _np32(zeros)
    out = _lut4_dequantize(_np32(qweight, np.uint8), _np32(lut), _np32(scales), zeros_n, zeros is not None,
                           int(group_size), int(n))
    return torch.from_numpy(out)


_INT_SIGNED_LUT = np.array([0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1], dtype=np.float32)
_INT_UNSIGNED_LUT = np.arange(16, dtype=np.float32)


def _np32(a, dtype=np.float32):
    if a is None:
        return None
    if hasattr(a, "detach"):
        a = a.detach().cpu()
        if a.dtype.is_floating_point:
            a = a.float()
        a = a.numpy()
    return np.ascontiguousarray(np.asarray(a), dtype=dtype)


def nibble_matmul_np(x, qweight, lut, scales, zeros, group_size):
    """numpy-in/numpy-out core: ``x @ W^T`` with ``W[n, k] = (lut[q_nk] - z_ng) s_ng`` (float32)."""
    xT = np.ascontiguousarray(np.asarray(x, dtype=np.float32).T)
    N = qweight.shape[0]
    zeros_n = np.zeros((1, 1), np.float32) if zeros is None else np.asarray(zeros, np.float32)
    yT = _nibble_matmul(xT, np.ascontiguousarray(qweight, dtype=np.uint8), np.asarray(lut, np.float32),
                        np.ascontiguousarray(scales, dtype=np.float32), np.ascontiguousarray(zeros_n),
                        zeros is not None, int(group_size))
    return np.ascontiguousarray(yT.T) if N else np.zeros((x.shape[0], 0), np.float32)


def lut4_matmul(x, qweight, lut, scales, zeros, group_size):
    """numba twin of the 4-bit look-up-table matmul (torch tensors or numpy arrays in, same kind out)."""
    y = nibble_matmul_np(_np32(x), _np32(qweight, np.uint8), _np32(lut), _np32(scales), _np32(zeros), group_size)
    if hasattr(x, "detach"):
        import torch

        return torch.from_numpy(y).to(x.dtype)
    return y.astype(x.dtype)


def dual_matmul(x, qweight, scales, zeros, tensor_scale, up, down, t, bias, group_size):
    """numba twin of the dual-component matmul (torch tensors or numpy arrays in, same kind out).

    The residual runs through the packed-nibble kernel; the low-rank branch is two thin matmuls.
    """
    xn = _np32(x)
    xr = xn if t is None else xn * _np32(t)[None, :]
    lut = _INT_SIGNED_LUT if zeros is None else _INT_UNSIGNED_LUT
    y = nibble_matmul_np(xr, _np32(qweight, np.uint8), lut, _np32(scales), _np32(zeros), group_size)
    y *= np.float32(tensor_scale)
    if up is not None and up.shape[1] > 0:
        y += (xn @ _np32(down).T) @ _np32(up).T
    if bias is not None:
        y += _np32(bias)[None, :]
    if hasattr(x, "detach"):
        import torch

        return torch.from_numpy(y).to(x.dtype)
    return y.astype(x.dtype)
