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
def _dual_matmul(x, qweight, scales, zeros, has_zeros, tensor_scale, up, down, t, has_t, bias, has_bias,
                 group_size):
    M, K = x.shape
    N = qweight.shape[0]
    r = up.shape[1]
    z = np.zeros((M, r), dtype=np.float32)
    for i in range(M):
        for k in range(r):
            acc = np.float32(0.0)
            for c in range(K):
                acc += x[i, c] * down[k, c]
            z[i, k] = acc
    xt = x.copy()
    if has_t:
        for i in range(M):
            for c in range(K):
                xt[i, c] = x[i, c] * t[c]
    y = np.empty((M, N), dtype=np.float32)
    n_bytes = qweight.shape[1]
    gidx = np.empty(2 * n_bytes, dtype=np.int64)
    for c in range(2 * n_bytes):
        gidx[c] = min(c, K - 1) // group_size
    for n in prange(N):
        # unpack + dequantize one row without per-element divisions (byte pairs inside each group)
        w = np.zeros(2 * n_bytes, dtype=np.float32)
        for j in range(n_bytes):
            b = np.int32(qweight[n, j])
            lo = b & 15
            hi = b >> 4
            c = 2 * j
            g0 = gidx[c]
            g1 = gidx[c + 1]
            if has_zeros:
                w[c] = (np.float32(lo) - np.float32(zeros[n, g0])) * scales[n, g0]
                if c + 1 < K:
                    w[c + 1] = (np.float32(hi) - np.float32(zeros[n, g1])) * scales[n, g1]
            else:
                if lo >= 8:
                    lo -= 16
                if hi >= 8:
                    hi -= 16
                w[c] = np.float32(lo) * scales[n, g0]
                if c + 1 < K:
                    w[c + 1] = np.float32(hi) * scales[n, g1]
        for i in range(M):
            acc = np.float32(0.0)
            for c in range(K):
                acc += xt[i, c] * w[c]
            out = acc * tensor_scale
            lr = np.float32(0.0)
            for k in range(r):
                lr += z[i, k] * up[n, k]
            out += lr
            if has_bias:
                out += bias[n]
            y[i, n] = out
    return y


def dual_matmul(x, qweight, scales, zeros, tensor_scale, up, down, t, bias, group_size):
    """numba twin of the dual-component matmul (torch tensors or numpy arrays in, same kind out)."""
    is_torch = hasattr(x, "detach")

    def np32(a, dtype=np.float32):
        if a is None:
            return None
        a = a.detach().cpu().numpy() if hasattr(a, "detach") else np.asarray(a)
        return np.ascontiguousarray(a, dtype=dtype)

    xn = np32(x)
    K = xn.shape[1]
    N = qweight.shape[0]
    up_n = np32(up) if up is not None else np.zeros((N, 0), np.float32)
    down_n = np32(down) if down is not None else np.zeros((0, K), np.float32)
    zeros_n = np32(zeros, np.uint8) if zeros is not None else np.zeros((1, 1), np.uint8)
    t_n = np32(t) if t is not None else np.zeros(1, np.float32)
    b_n = np32(bias) if bias is not None else np.zeros(1, np.float32)
    y = _dual_matmul(xn, np32(qweight, np.uint8), np32(scales), zeros_n, zeros is not None,
                     np.float32(tensor_scale), up_n, down_n, t_n, t is not None, b_n, bias is not None,
                     int(group_size))
    if is_torch:
        import torch

        return torch.from_numpy(y).to(x.dtype)
    return y.astype(x.dtype)
