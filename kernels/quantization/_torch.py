"""torch's own CPU int4 group-wise kernel (``aten._weight_int4pack_mm_for_cpu``) as a backend, for INT4 formats.

The op computes ``x @ ((q - 8) s + zero)^T`` per group of ``g`` input columns from unsigned nibbles ``q``,
bfloat16 activations, bfloat16 ``(scale, zero)`` pairs and a bfloat16 output (float32 accumulation). It needs
``g`` in {32, 64, 128, 256}; ``K`` a multiple of ``g`` and ``N`` a multiple of 16 are reached by padding at
packing time.

How the stored formats map onto it (exactly: no stored value is re-rounded; INT group scales are stored as
bfloat16 for this reason):

* symmetric INT4, code ``c`` in [-8, 7]: ``q = c + 8``, scale = the stored scale, zero = 0;
* asymmetric INT4, code ``q`` and integer zero point ``z``: ``(q - z) s = (q - 8) s + (8 - z) s``. The op runs
  with zero = 0 and the group-constant term is added as ``xsum_g @ ((8 - z) s)^T`` in float32 (exact: ``8 - z``
  is a small integer and ``s`` a bfloat16), a product with ``K / g`` times fewer terms;
* padded columns get code 8 (value 0) and meet zero activations; padded rows are sliced off the output.

:func:`pack` runs once per layer (at conversion time); :func:`unpack` recovers the codes from the op's layout
by probing the packing op itself, so it does not depend on the op's internal tiling (used by the reference twin
and the tests). On this build the op has only a CPU implementation; CUDA layers use the Triton kernel.

``_dyn_quant_matmul_4bit`` (the other int4 op torch ships) is not used: in an earlier measurement on one CPU
(one thread, AVX2 without AVX512-BF16; no committed results table) it was much slower than this one.
"""

import functools

import numpy as np
import torch

GROUP_SIZES = (32, 64, 128, 256)
_ATEN = torch.ops.aten


def available():
    """Whether this torch build ships the CPU int4 pack and matmul ops."""
    return hasattr(_ATEN, "_convert_weight_to_int4pack_for_cpu") and hasattr(_ATEN, "_weight_int4pack_mm_for_cpu")


def fits(weight_format, n_bits, group_size):
    """Whether a stored format runs on torch's CPU int4 op (INT4, sym or asym, group in GROUP_SIZES)."""
    return available() and weight_format == "int" and n_bits == 4 and group_size in GROUP_SIZES


def padded_shape(m, n, group_size):
    return -(-m // 16) * 16, -(-n // group_size) * group_size


def pack(codes, scales, zeros, group_size):
    """Pack stored INT4 codes once into the op's layout.

    Parameters
    ----------
    codes : ndarray of int8, shape (m, n)
        Two's complement codes (``zeros`` None) or unsigned codes.
    scales : ndarray of shape (m, G)
        Stored group scales (bfloat16 values).
    zeros : ndarray of shape (m, G), or None
        Integer zero points (asymmetric), else None.
    group_size : int
        One of GROUP_SIZES.

    Returns
    -------
    packed : torch.Tensor of uint8, shape (m_pad, n_pad / 2)
    scale_zeros : torch.Tensor of bfloat16, shape (G_pad, m_pad, 2)
    zero_offsets : torch.Tensor of float32, shape (m, G), or None
        ``(8 - z) s`` (exact in float32) for asymmetric codes.
    """
    codes = np.asarray(codes)
    m, n = codes.shape
    mp, kp = padded_shape(m, n, group_size)
    u = np.full((mp, kp), 8, dtype=np.int32)
    u[:m, :n] = codes.astype(np.int32) + (8 if zeros is None else 0)
    packed = _ATEN._convert_weight_to_int4pack_for_cpu(torch.from_numpy(u), 1)
    G = kp // group_size
    s = np.asarray(scales, dtype=np.float32)
    sz = torch.zeros((G, mp, 2), dtype=torch.bfloat16)
    sz[: s.shape[1], :m, 0] = torch.from_numpy(np.ascontiguousarray(s.T)).to(torch.bfloat16)
    zoff = None
    if zeros is not None:
        zoff = torch.from_numpy(((8.0 - np.asarray(zeros, dtype=np.float32)) * s).astype(np.float32))
    return packed, sz, zoff


def unpack(packed, m, n, group_size, signed):
    """Codes (m, n) int8 back from the op's layout (the inverse of :func:`pack`)."""
    mp, kp = padded_shape(m, n, group_size)
    total = mp * kp
    ids = np.arange(total, dtype=np.int64)
    src = np.zeros(total, dtype=np.int64)
    n_digits = max(1, int(np.ceil(np.log2(max(total, 2)) / 4)))
    for d in range(n_digits):  # where does each (row, col) land? one packing per hex digit of its index
        plane = torch.from_numpy(((ids >> (4 * d)) & 15).astype(np.int32).reshape(mp, kp))
        p = _ATEN._convert_weight_to_int4pack_for_cpu(plane, 1).numpy().astype(np.int64).reshape(-1)
        src |= np.stack([p & 15, p >> 4], axis=-1).reshape(-1) << (4 * d)
    p = packed.numpy().astype(np.int64).reshape(-1)
    vals = np.stack([p & 15, p >> 4], axis=-1).reshape(-1)
    u = np.empty(total, dtype=np.int64)
    u[src] = vals
    u = u.reshape(mp, kp)[:m, :n]
    return (u - 8 if signed else u).astype(np.int8)


def int4pack_matmul(x, packed, scale_zeros, zero_offsets, group_size, n_out):
    """``bf16(x) @ deq(W)^T`` (no tensor scale) as float32, on torch's op (bf16 output, float32 accumulation).

    x (M, K) float; packed, scale_zeros, zero_offsets from :func:`pack`. Returns (M, n_out) float32.
    """
    M, K = x.shape
    xb = x.to(torch.bfloat16)
    kp = scale_zeros.shape[0] * group_size
    if kp != K:
        xb = torch.nn.functional.pad(xb, (0, kp - K))
    y = _ATEN._weight_int4pack_mm_for_cpu(xb.contiguous(), packed, group_size, scale_zeros)
    y = y[:, :n_out].to(torch.float32)
    if zero_offsets is not None:
        xs = xb.to(torch.float32).reshape(M, -1, group_size).sum(dim=2)[:, : zero_offsets.shape[1]]
        y = y.addmm_(xs, zero_offsets.T)
    return y


def int8_matmul(x, xr, wq, ch_scale, tensor_scale, down, up_t, bias):
    """The int8 path on torch's int8 GEMM (``torch._int_mm``: int8 x int8 -> int32, oneDNN on CPU).

    Activations per row to int8 (the same codes as the reference twin), the weight ``wq`` (N, K) used
    transposed (a (K, N) view: the layout oneDNN's kernel reads fastest), then the scales, low-rank branch and
    bias in one pass over the output. With numba both passes over activations and outputs are single numba
    loops (a chain of torch element-wise ops costs more than the int8 GEMM itself); without it, torch ops.
    """
    try:
        from ._numba import int8_epilogue as nb_epilogue
        from ._numba import int8_quantize_rows
    except ImportError:
        from ._int8_parts import int8_epilogue, quantize_rows_int8

        xq, s_row = quantize_rows_int8(xr)
        return int8_epilogue(torch._int_mm(xq, wq.T), s_row, ch_scale, x, tensor_scale, down, up_t, bias)
    xn = xr.detach().numpy()
    if not xn.flags.c_contiguous or xn.dtype != np.float32:
        xn = np.ascontiguousarray(xn, dtype=np.float32)
    M, N = xn.shape[0], wq.shape[0]
    xq = np.empty(xn.shape, dtype=np.int8)
    s = np.empty(M, dtype=np.float32)
    int8_quantize_rows(xn, xq, s)
    acc = torch._int_mm(torch.from_numpy(xq), wq.T).numpy()
    ch = ch_scale.numpy() if tensor_scale == 1.0 else (ch_scale * tensor_scale).numpy()
    if down is not None:
        z = (x @ down.T).numpy()
        u = up_t.numpy() if tensor_scale == 1.0 else (up_t * tensor_scale).numpy()
    else:
        z, u = _EMPTY2, _EMPTY2
    out = np.empty((M, N), dtype=np.float32)
    nb_epilogue(acc, s, ch, z, u, down is not None, _EMPTY1 if bias is None else bias.numpy(), bias is not None,
                out)
    return torch.from_numpy(out)


_EMPTY1 = np.zeros(1, dtype=np.float32)
_EMPTY2 = np.zeros((1, 1), dtype=np.float32)


@functools.cache
def int_mm_available():
    """Whether this torch build has the int8 GEMM (``torch._int_mm``) on CPU (probed once)."""
    if not hasattr(torch, "_int_mm"):
        return False
    try:
        torch._int_mm(torch.ones((1, 8), dtype=torch.int8), torch.ones((8, 8), dtype=torch.int8))
    except (RuntimeError, NotImplementedError):
        return False
    return True
