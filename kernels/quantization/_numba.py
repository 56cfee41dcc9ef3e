"""numba twins of the quantization kernels, and the W4A8 kernels (4-bit weights, int8 activations)."""

from contextlib import contextmanager

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
    with numba_threads():
        y = nibble_matmul_np(_np32(x), _np32(qweight, np.uint8), _np32(lut), _np32(scales), _np32(zeros),
                             group_size)
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


# ---------------------------------------------------------------------------------------------------------- W4A8
# numba W4A8 kernels: 4-bit weights packed weight-stationary, int8 activations per 32-block, int32 block sums.
#
# Layout (:func:`pack_w4a8`, once per layer): ``packed[16 b + j, n]`` holds, for output ``n`` and 32-input block
# ``b``, the unsigned code of input ``32 b + j`` in its low nibble and of ``32 b + 16 + j`` in its high nibble.
# The inner loops then run along the outputs ``n`` (contiguous), which LLVM vectorizes without horizontal sums.
#
# ``y[i, n] = ts (sum_b xs[i, b] s[g(b), n] (sum_{k in b} u[n, k] xq[i, k] - z[g(b), n] sum_{k in b} xq[i, k])
# + sum_r h[i, r] up[r, n]) + bias[n]``: the integer part is exact (int32); the zero point enters once per block
# and output; the only approximation is the rounding of the activations to int8 (``xq = rint(x 127 / amax)``).

BLOCK = 32
#: activation rows that share one pass over the weight
ROWS = 4


@njit(cache=True, nogil=True)
def quantize_activations(xr, t, has_t, Kp, xq, xs, xsum):
    """Round ``xr * t`` (M, K) to int8 per 32-block into xq (M, Kp); block scales xs and code sums xsum (M, nb)."""
    M, K = xr.shape
    nb = Kp // BLOCK
    q127 = np.float32(127.0)
    for i in range(M):
        for b in range(nb):
            k0 = b * BLOCK
            k1 = min(K, k0 + BLOCK)
            amax = np.float32(0.0)
            for k in range(k0, k1):
                v = xr[i, k] * t[k] if has_t else xr[i, k]
                a = abs(v)
                if a > amax:
                    amax = a
            inv = q127 / amax if amax > 0 else np.float32(0.0)
            xs[i, b] = amax / q127
            s = 0
            for k in range(k0, k1):
                v = xr[i, k] * t[k] if has_t else xr[i, k]
                q = np.int32(np.rint(v * inv))
                xq[i, k] = np.int8(q)
                s += q
            for k in range(k1, k0 + BLOCK):
                xq[i, k] = 0
            xsum[i, b] = s


@njit(cache=True, nogil=True, inline="always")
def _zero(acc, W):
    for n in range(W):
        acc[n] = 0


@njit(cache=True, nogil=True, inline="always")
def _accumulate(row, a, e, acc, W):
    for n in range(W):
        byte = np.int32(row[n])
        acc[n] += (byte & 15) * a + (byte >> 4) * e


@njit(cache=True, nogil=True, inline="always")
def _flush(sacc, acc, W):
    for n in range(W):
        acc[n] += sacc[n]
        sacc[n] = 0


@njit(cache=True, nogil=True, inline="always")
def _epilogue(acc, offset, xsb, srow, facc, W):
    for n in range(W):
        facc[n] += np.float32(acc[n] - offset) * (xsb * srow[n])


@njit(cache=True, nogil=True, inline="always")
def _epilogue_zero(acc, zrow, zs, xsb, srow, facc, W):
    for n in range(W):
        facc[n] += np.float32(acc[n] - np.int32(zrow[n]) * zs) * (xsb * srow[n])


@njit(cache=True, nogil=True, inline="always")
def _axpy(a, src, dst, W):
    for n in range(W):
        dst[n] += a * src[n]


@njit(cache=True, nogil=True, inline="always")
def _store(facc, ts, bias, has_bias, dst, W):
    if has_bias:
        for n in range(W):
            dst[n] = facc[n] * ts + bias[n]
    else:
        for n in range(W):
            dst[n] = facc[n] * ts


@njit(cache=True, nogil=True, fastmath=True)
def _lowrank_projection(x, down):
    """``h = x down^T`` (M, r) for the few rows of a W4A8 call (rank x K multiply-adds per row; fastmath lets
    LLVM split each dot product into vector lanes, a fixed order, so a call is still deterministic)."""
    M, K = x.shape
    r = down.shape[0]
    h = np.zeros((M, r), dtype=np.float32)
    for i in range(M):
        for q in range(r):
            acc = np.float32(0.0)
            for k in range(K):
                acc += x[i, k] * down[q, k]
            h[i, q] = acc
    return h


def _w4a8_py(x, xr, t, has_t, packed, scale_t, zero_t, has_zero, group_size, tensor_scale, down, up_t, bias,
             has_bias):
    M = xr.shape[0]
    n_chunks, nbytes, CHUNK = packed.shape
    N = scale_t.shape[1]
    nb = nbytes // 16
    out = np.empty((M, N), dtype=np.float32)
    xq = np.empty((M, 2 * nbytes), dtype=np.int8)  # M * K bytes: the only allocations besides the output
    xs = np.empty((M, nb), dtype=np.float32)
    xsum = np.empty((M, nb), dtype=np.int32)
    quantize_activations(xr, t, has_t, 2 * nbytes, xq, xs, xsum)
    h = _lowrank_projection(x, down)  # the low-rank branch's input side, in the same call
    rank = h.shape[1]
    n_rowgroups = (M + ROWS - 1) // ROWS
    for task in prange(n_chunks * n_rowgroups):
        c = task % n_chunks
        i0 = (task // n_chunks) * ROWS
        R = min(ROWS, M - i0)
        n0 = c * CHUNK
        W = min(CHUNK, N - n0)
        iacc = np.empty((ROWS, CHUNK), dtype=np.int32)
        sacc = np.zeros((ROWS, CHUNK), dtype=np.int16)
        facc = np.zeros((ROWS, CHUNK), dtype=np.float32)
        for b in range(nb):
            g = (b * BLOCK) // group_size
            for r in range(R):
                _zero(iacc[r], W)
            for j in range(16):
                row = packed[c, 16 * b + j]
                for r in range(R):
                    _accumulate(row, np.int32(xq[i0 + r, BLOCK * b + j]), np.int32(xq[i0 + r, BLOCK * b + 16 + j]),
                                sacc[r], W)
                if j == 7 or j == 15:  # 8 byte rows fit in int16 (|term| <= 2 * 15 * 127), then widen
                    for r in range(R):
                        _flush(sacc[r], iacc[r], W)
            srow = scale_t[g, n0:n0 + W]
            for r in range(R):
                if has_zero:
                    _epilogue_zero(iacc[r], zero_t[g, n0:n0 + W], xsum[i0 + r, b], xs[i0 + r, b], srow, facc[r], W)
                else:
                    _epilogue(iacc[r], np.int32(8) * xsum[i0 + r, b], xs[i0 + r, b], srow, facc[r], W)
        for r in range(R):
            for q in range(rank):
                _axpy(h[i0 + r, q], up_t[q, n0:n0 + W], facc[r], W)
            _store(facc[r], tensor_scale, bias[n0:n0 + W] if has_bias else facc[r], has_bias, out[i0 + r, n0:n0 + W],
                   W)
    return out


# Two compilations of one body: the threaded one for large layers, the serial one where a parallel launch
# costs more than the work (one thread, or small layers at one row).
_w4a8_parallel = njit(cache=True, nogil=True, parallel=True)(_w4a8_py)
_w4a8_serial = njit(cache=True, nogil=True)(_w4a8_py)

#: below this many packed weight bytes times rows a call runs serially (a parallel launch costs more)
SERIAL_BELOW = 1 << 18


def placeholders(K, N):
    """Empty stand-ins of the optional arguments (no transform, symmetric codes, rank 0, no bias)."""
    return (np.zeros(1, np.float32), np.zeros((1, 1), np.uint8), np.zeros((0, K), np.float32),
            np.zeros((0, N), np.float32), np.zeros(1, np.float32))


def w4a8_entry(packed_size, rows, threads):
    """The compiled W4A8 body for a call of ``rows`` rows on ``threads`` threads (serial where a parallel launch
    costs more than the work). Arguments: ``(x, xr, t, has_t, packed, scale_t, zero_t, has_zero, group_size,
    tensor_scale, down, up_t, bias, has_bias)``, float32 C-contiguous arrays (placeholders for absent parts);
    returns the float32 (M, N) output."""
    return _w4a8_serial if threads <= 1 or packed_size * rows < SERIAL_BELOW else _w4a8_parallel


_STARTED = []


@contextmanager
def numba_threads():
    """Run the enclosed numba calls on ``torch.get_num_threads()`` threads (at most numba's pool), then give
    the calling thread back the count it had: a user's own numba code keeps its setting."""
    import numba

    n = _torch_threads()
    if not _STARTED:
        # Starting numba's OpenMP layer resizes the OpenMP pool torch shares with it: restore torch's count.
        numba.get_num_threads()
        _STARTED.append(True)
        _restore_torch_threads(n)
    n = min(n, numba.config.NUMBA_NUM_THREADS)
    prev = numba.get_num_threads()
    if prev != n:
        numba.set_num_threads(n)
    try:
        yield n
    finally:
        if prev != n:
            numba.set_num_threads(prev)


def _torch_threads():
    import torch

    return torch.get_num_threads()


def _restore_torch_threads(n):
    import torch

    if torch.get_num_threads() != n:
        torch.set_num_threads(n)


def prepared_w4a8(packed, scale_t, zero_t, group_size, tensor_scale, t, down, up_t, bias):
    """``run(x, xr)`` over float32 C-contiguous numpy rows with every weight-side argument converted once; a
    one-threaded call (or one below ``SERIAL_BELOW``) runs the serial build, others the threaded one under
    :func:`numba_threads`."""
    K, N = packed.shape[1] * 2, scale_t.shape[1]
    t0, z0, d0, u0, b0 = placeholders(down.shape[1] if down is not None else K, N)

    def f32(a, empty):
        return empty if a is None else np.ascontiguousarray(a, dtype=np.float32)

    args = (f32(t, t0), t is not None, np.ascontiguousarray(packed), f32(scale_t, None),
            z0 if zero_t is None else np.ascontiguousarray(zero_t, dtype=np.uint8), zero_t is not None,
            int(group_size), np.float32(tensor_scale), f32(down, d0), f32(up_t, u0), f32(bias, b0), bias is not None)
    serial_rows = SERIAL_BELOW // max(packed.size, 1)

    def run(x, xr):
        if x.shape[0] < serial_rows or _torch_threads() <= 1:
            return _w4a8_serial(x, xr, *args)
        with numba_threads():
            return _w4a8_parallel(x, xr, *args)

    return run


def w4a8_matmul(x, xr, t, packed, scale_t, zero_t, group_size, tensor_scale, down, up_t, bias):
    """``ts ((xr t) Q^T + (x down^T) up_t) + bias`` (float32 numpy, see the module doc); zero_t None: symmetric
    codes stored with the offset 8; t None: no diagonal transform; xr the residual input (x, or x with a block
    transform applied)."""
    import numba

    K, N = x.shape[1], scale_t.shape[1]
    t0, z0, d0, u0, b0 = placeholders(K, N)

    def f32(a, empty):
        return empty if a is None else np.ascontiguousarray(a, dtype=np.float32)

    fn = w4a8_entry(packed.size, x.shape[0], numba.get_num_threads())
    return fn(f32(x, None), f32(xr, None), f32(t, t0), t is not None, np.ascontiguousarray(packed),
              f32(scale_t, None), z0 if zero_t is None else np.ascontiguousarray(zero_t, dtype=np.uint8),
              zero_t is not None, int(group_size), np.float32(tensor_scale), f32(down, d0), f32(up_t, u0),
              f32(bias, b0), bias is not None)


_EMPTY_U8 = np.zeros((1, 1), dtype=np.uint8)


@njit(cache=True, nogil=True, parallel=True)
def _decode_t(packed, scale_t, zero_t, has_zero, group_size, K, row_scale, out):
    """``out[k, n] = row_scale[k] Q[n, k]`` for k < K (rows of ``out`` from K on are left as they are)."""
    n_chunks, nbytes, chunk = packed.shape
    N = scale_t.shape[1]
    for row in prange(nbytes):
        b, j = row // 16, row % 16
        k_lo = BLOCK * b + j
        k_hi = k_lo + 16
        g = (BLOCK * b) // group_size
        for c in range(n_chunks):
            n0 = c * chunk
            W = min(chunk, N - n0)
            src = packed[c, row]
            srow = scale_t[g, n0:n0 + W]
            if k_lo < K:
                _decode_row(src, srow, zero_t[g, n0:n0 + W] if has_zero else src, has_zero, 0, row_scale[k_lo],
                            out[k_lo, n0:n0 + W], W)
            if k_hi < K:
                _decode_row(src, srow, zero_t[g, n0:n0 + W] if has_zero else src, has_zero, 4, row_scale[k_hi],
                            out[k_hi, n0:n0 + W], W)


@njit(cache=True, nogil=True, inline="always")
def _decode_row(src, srow, zrow, has_zero, shift, a, dst, W):
    if has_zero:
        for n in range(W):
            dst[n] = (np.float32((np.int32(src[n]) >> shift) & 15) - np.float32(zrow[n])) * (a * srow[n])
    else:
        for n in range(W):
            dst[n] = (np.float32((np.int32(src[n]) >> shift) & 15) - np.float32(8.0)) * (a * srow[n])


def w4a8_decode_t(packed, scale_t, zero_t, group_size, K, out=None, row_scale=None):
    """Transposed float32 residual ``Q^T`` (K, N) (no tensor scale) decoded from the weight-stationary layout;
    with ``row_scale`` (K,), row k is multiplied by ``row_scale[k]`` (a tensor scale and a diagonal transform
    folded into the decode); ``out`` may have more than K rows (the rest is left untouched)."""
    if out is None:
        out = np.empty((K, scale_t.shape[1]), dtype=np.float32)
    if row_scale is None:
        row_scale = np.ones(K, dtype=np.float32)
    with numba_threads():
        _decode_t(packed, scale_t, _EMPTY_U8 if zero_t is None else zero_t, zero_t is not None, int(group_size),
                  int(K), np.ascontiguousarray(row_scale, dtype=np.float32), out)
    return out


# ------------------------------------------------------------------ the int8 path's passes over activations/outputs
@njit(cache=True, nogil=True, fastmath={"nnan", "ninf", "nsz", "reassoc"})
def _row_amax(row):
    amax = np.float32(0.0)
    for k in range(row.shape[0]):
        amax = max(amax, abs(row[k]))
    return amax


_RNE = np.float32(12582912.0)  # 1.5 * 2**23: (v + c) - c rounds |v| < 2**22 half to even in float32


@njit(cache=True, nogil=True)  # strict float32: x / s and the rounding exactly as torch computes them
def _row_codes(row, sc, out):
    for k in range(row.shape[0]):
        q = (row[k] / sc + _RNE) - _RNE
        out[k] = np.int8(np.int32(min(max(q, np.float32(-127.0)), np.float32(127.0))))


@njit(cache=True, nogil=True)
def int8_quantize_rows(xr, xq, s):
    """One pass per row: ``s = amax / 127`` (1 for a zero row), ``xq = round(xr / s)`` half to even in int8 (float32
    arithmetic, the same operations as the torch reference: bitwise the same codes)."""
    for m in range(xr.shape[0]):
        sc = _row_amax(xr[m]) / np.float32(127.0)
        if sc == 0:
            sc = np.float32(1.0)
        s[m] = sc
        _row_codes(xr[m], sc, xq[m])


@njit(cache=True, nogil=True, fastmath=True)
def int8_epilogue(acc, s, ch, z, up_t, has_lowrank, bias, has_bias, out):
    """``out = acc s_row ch + z up_t + bias`` in one pass over the output (float32)."""
    M, N = acc.shape
    R = z.shape[1]
    for m in range(M):
        sm = s[m]
        for n in range(N):
            out[m, n] = np.float32(acc[m, n]) * sm * ch[n]
        if has_lowrank:
            for r in range(R):
                zr = z[m, r]
                for n in range(N):
                    out[m, n] += zr * up_t[r, n]
        if has_bias:
            for n in range(N):
                out[m, n] += bias[n]
