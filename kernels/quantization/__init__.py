"""Quantization kernels: int4 pack/unpack, Gram accumulation, Walsh-Hadamard transform, dual-component matmul.

``dual_matmul`` has a torch reference, a numba twin (CPU) and a Triton twin (CUDA, or the CPU interpreter
under ``TRITON_INTERPRET=1``); ``lut4_matmul`` (any 4-bit format through a 16-entry value table: MXFP4, NVFP4,
INT4 group sizes torch's op does not take) a torch reference and a numba twin; the other kernels have numpy
references and numba twins.
"""

import numpy as np

from .._dispatch import register_kernel

__all__ = ["pack_int4", "unpack_int4", "accumulate_gram", "fwht", "dual_matmul", "lut4_matmul"]

_REF = "sklearn_frontier.kernels.quantization._reference"
_NUMBA = "sklearn_frontier.kernels.quantization._numba"
_TRITON = "sklearn_frontier.kernels.quantization._triton"


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


def _compare_dual(expected, actual):
    import torch

    scale = float(expected.abs().max()) if expected.numel() else 1.0
    torch.testing.assert_close(actual, expected, rtol=0, atol=1e-4 * max(scale, 1e-6))


_pack = register_kernel("pack_int4", reference=f"{_REF}:pack_int4", numba=f"{_NUMBA}:pack_int4",
                        make_inputs=_pack_inputs, rtol=0, atol=0)
_unpack = register_kernel("unpack_int4", reference=f"{_REF}:unpack_int4", numba=f"{_NUMBA}:unpack_int4",
                          make_inputs=_unpack_inputs, rtol=0, atol=0)
_gram = register_kernel("accumulate_gram", reference=f"{_REF}:accumulate_gram", numba=f"{_NUMBA}:accumulate_gram",
                        make_inputs=_gram_inputs, rtol=1e-10, atol=1e-10)
_fwht = register_kernel("fwht", reference=f"{_REF}:fwht", numba=f"{_NUMBA}:fwht", make_inputs=_fwht_inputs,
                        rtol=1e-10, atol=1e-12)
_dual = register_kernel("dual_matmul", reference=f"{_REF}:dual_matmul", numba=f"{_NUMBA}:dual_matmul",
                        triton=f"{_TRITON}:dual_matmul", make_inputs=_dual_inputs, compare=_compare_dual)

_lut4 = register_kernel("lut4_matmul", reference=f"{_REF}:lut4_matmul", numba=f"{_NUMBA}:lut4_matmul",
                        make_inputs=_lut4_inputs, compare=_compare_dual)


def pack_int4(codes):
    """Pack int4 codes (m, n), values in [-8, 15], into uint8 (m, ceil(n/2)), low nibble first.

    Parameters
    ----------
    codes : array-like of shape (m, n)
        Integer codes in [-8, 15].

    Returns
    -------
    packed : ndarray of uint8 of shape (m, ceil(n / 2))
        Two codes per byte, column ``2j`` in the low nibble.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels.quantization import pack_int4
    >>> pack_int4(np.array([[1, -1, 3]], dtype=np.int8))
    array([[241,   3]], dtype=uint8)
    """
    codes = np.asarray(codes)
    if codes.ndim != 2:
        raise ValueError(f"codes must be 2-D, got shape {codes.shape}.")
    if codes.size and (codes.min() < -8 or codes.max() > 15):
        raise ValueError("codes must lie in [-8, 15] to fit in a nibble.")
    return _pack(np.ascontiguousarray(codes, dtype=np.int8))


def unpack_int4(packed, n, signed=True):
    """Unpack the output of :func:`pack_int4` into int8 codes, two's-complement when ``signed``.

    Parameters
    ----------
    packed : ndarray of uint8 of shape (m, ceil(n / 2))
        Packed codes.
    n : int
        Number of codes per row.
    signed : bool, default=True
        Read each nibble as two's complement (else unsigned).

    Returns
    -------
    codes : ndarray of int8 of shape (m, n)
        The unpacked codes.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels.quantization import unpack_int4
    >>> unpack_int4(np.array([[241, 3]], dtype=np.uint8), 3)
    array([[ 1, -1,  3]], dtype=int8)
    """
    packed = np.asarray(packed)
    if packed.ndim != 2 or packed.dtype != np.uint8:
        raise ValueError("packed must be a 2-D uint8 array.")
    if not 0 <= n <= 2 * packed.shape[1] or n < 2 * packed.shape[1] - 1:
        raise ValueError(f"n={n} does not match {packed.shape[1]} packed bytes per row.")
    return _unpack(np.ascontiguousarray(packed), int(n), bool(signed))


def accumulate_gram(X):
    """Compute ``X^T X`` in float64 (the unnormalised Gram of calibration activations).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Calibration activations.

    Returns
    -------
    gram : ndarray of shape (n_features, n_features)
        The float64 Gram matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels.quantization import accumulate_gram
    >>> accumulate_gram(np.array([[1.0, 2.0]]))
    array([[1., 2.],
           [2., 4.]])
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}.")
    return _gram(np.ascontiguousarray(X))


def fwht(X):
    """Apply the normalised fast Walsh-Hadamard transform to each row (row length a power of 2).

    Parameters
    ----------
    X : array-like of shape (m, n)
        Rows to transform, ``n`` a power of 2.

    Returns
    -------
    Y : ndarray of shape (m, n)
        The transformed rows.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels.quantization import fwht
    >>> fwht(np.array([[1.0, 1.0]])).round(4)
    array([[1.4142, 0.    ]])
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] & (X.shape[1] - 1) or X.shape[1] == 0:
        raise ValueError(f"X must be 2-D with a power-of-2 number of columns, got shape {X.shape}.")
    return _fwht(np.ascontiguousarray(X))


def dual_matmul(x, qweight, scales, zeros=None, tensor_scale=1.0, up=None, down=None, t=None, bias=None, *,
                group_size):
    """Compute ``tensor_scale (t*x) deq(W)^T + (x down^T) up^T + bias`` over packed int4 weights (fused).

    Parameters
    ----------
    x : torch.Tensor of shape (M, K), float32 or float16
        Input activations.
    qweight : torch.Tensor uint8 of shape (N, ceil(K/2))
        Packed codes (column 2j in the low nibble); two's complement unless ``zeros`` is given.
    scales : torch.Tensor of shape (N, ceil(K/group_size))
        Per-group scales.
    zeros : torch.Tensor uint8 of shape (N, ceil(K/group_size)) or None
        Per-group zero points (unsigned codes); None for symmetric codes.
    tensor_scale : float
        Global scale of the quantized branch.
    up, down : torch.Tensor of shapes (N, r) and (r, K), or None
        Low-rank residual factors.
    t : torch.Tensor of shape (K,) or None
        Diagonal input transform of the residual branch.
    bias : torch.Tensor of shape (N,) or None
        Output bias.
    group_size : int
        Number of input columns sharing a scale.

    Returns
    -------
    y : torch.Tensor of shape (M, N)
        The output, in x's dtype (float32 accumulation).

    Examples
    --------
    >>> import torch
    >>> from sklearn_frontier.kernels.quantization import dual_matmul
    >>> qweight = torch.tensor([[0x11]], dtype=torch.uint8)  # W = [[1, 1]]
    >>> y = dual_matmul(torch.ones(1, 2), qweight, torch.ones(1, 1), group_size=2)
    >>> y.tolist()
    [[2.0]]
    """
    if x.ndim != 2:
        raise ValueError(f"x must be 2-D, got shape {tuple(x.shape)}.")
    K = x.shape[1]
    if qweight.shape[1] != (K + 1) // 2:
        raise ValueError(f"x has {K} features but qweight packs {qweight.shape[1]} bytes per row.")
    if (up is None) != (down is None):
        raise ValueError("up and down must be given together.")
    return _dual(x, qweight, scales, zeros, tensor_scale, up, down, t, bias, group_size)


dual_matmul.kernel_spec = _dual.kernel_spec


def lut4_matmul(x, qweight, lut, scales, zeros=None, *, group_size):
    """Compute ``x @ W^T`` over packed 4-bit codes decoded through a 16-entry table, ``W = (lut[q] - z) s``.

    One kernel for every 4-bit format: INT4 (the integers as table), E2M1 for MXFP4/NVFP4 (with the decoded
    block scales). float32 accumulation.

    Parameters
    ----------
    x : torch.Tensor of shape (M, K)
        Input activations.
    qweight : torch.Tensor uint8 of shape (N, ceil(K/2))
        Packed codes (column 2j in the low nibble).
    lut : torch.Tensor of shape (16,)
        Value of each nibble.
    scales : torch.Tensor of shape (N, ceil(K/group_size))
        Per-group scales.
    zeros : torch.Tensor of shape (N, ceil(K/group_size)) or None, default=None
        Per-group zero points, in table units.
    group_size : int
        Number of input columns sharing a scale.

    Returns
    -------
    y : torch.Tensor of shape (M, N)
        The product, in x's dtype.

    Examples
    --------
    >>> import torch
    >>> from sklearn_frontier.kernels.quantization import lut4_matmul
    >>> lut = torch.arange(16, dtype=torch.float32)
    >>> lut4_matmul(torch.ones(1, 2), torch.tensor([[0x21]], dtype=torch.uint8), lut, torch.ones(1, 1),
    ...             group_size=2).tolist()
    [[3.0]]
    """
    if x.ndim != 2:
        raise ValueError(f"x must be 2-D, got shape {tuple(x.shape)}.")
    if qweight.shape[1] != (x.shape[1] + 1) // 2:
        raise ValueError(f"x has {x.shape[1]} features but qweight packs {qweight.shape[1]} bytes per row.")
    if tuple(lut.shape) != (16,):
        raise ValueError(f"lut must have shape (16,), got {tuple(lut.shape)}.")
    return _lut4(x, qweight, lut, scales, zeros, group_size)


lut4_matmul.kernel_spec = _lut4.kernel_spec
