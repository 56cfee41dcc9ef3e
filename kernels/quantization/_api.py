"""Public wrappers and registrations of the quantization kernels (the package re-exports them)."""

import numpy as np

from .._dispatch import register_kernel

__all__ = ["pack_int4", "unpack_int4", "accumulate_gram", "fwht", "dual_matmul", "lut4_matmul", "lut4_dequantize",
           "pack_int4_torch", "int4pack_matmul", "torch_int4_fits", "pack_w4a8", "w4a8_matmul", "w4a8_decode_t",
           "w4a8_prepare"]

_REF = "sklearn_frontier.kernels.quantization._reference"
_NUMBA = "sklearn_frontier.kernels.quantization._numba"
_TORCH = "sklearn_frontier.kernels.quantization._torch"
_TRITON = "sklearn_frontier.kernels.quantization._triton"


_pack = register_kernel("pack_int4", reference=f"{_REF}:pack_int4", numba=f"{_NUMBA}:pack_int4")
_unpack = register_kernel("unpack_int4", reference=f"{_REF}:unpack_int4", numba=f"{_NUMBA}:unpack_int4")
_gram = register_kernel("accumulate_gram", reference=f"{_REF}:accumulate_gram", numba=f"{_NUMBA}:accumulate_gram")
_fwht = register_kernel("fwht", reference=f"{_REF}:fwht", numba=f"{_NUMBA}:fwht")
_dual = register_kernel("dual_matmul", reference=f"{_REF}:dual_matmul", numba=f"{_NUMBA}:dual_matmul",
                        triton=f"{_TRITON}:dual_matmul")

_lut4 = register_kernel("lut4_matmul", reference=f"{_REF}:lut4_matmul", numba=f"{_NUMBA}:lut4_matmul")


_lut4_deq = register_kernel("lut4_dequantize", reference=f"{_REF}:lut4_dequantize", numba=f"{_NUMBA}:lut4_dequantize")


# torch's own kernel is a backend of its own (no numba/Triton twin: it is the fast CPU path); the reference
# is its twin (tests/test_kernels_dual_matmul.py checks them against each other).
_int4pack = register_kernel("int4pack_matmul", reference=f"{_REF}:int4pack_matmul",
                            extra_backends={"torch": f"{_TORCH}:int4pack_matmul"})


def torch_int4_fits(weight_format, n_bits, group_size):
    """Whether a stored format runs on torch's CPU int4 kernel (INT4, group size 32, 64, 128 or 256).

    Parameters
    ----------
    weight_format : str
        Element format ("int", "mxfp4", "nvfp4").
    n_bits : int
        Bits per code.
    group_size : int
        Columns per scale group.

    Returns
    -------
    fits : bool
        True when this torch build has the op and the format maps onto it exactly.

    Examples
    --------
    >>> from sklearn_frontier.kernels.quantization import torch_int4_fits
    >>> torch_int4_fits("mxfp4", 4, 32)
    False
    """
    from ._torch import fits

    return fits(weight_format, n_bits, group_size)


def pack_int4_torch(codes, scales, zeros, group_size):
    """Pack stored INT4 codes and bfloat16 group scales once into torch's int4 kernel layout.

    Parameters
    ----------
    codes : ndarray of int8 of shape (m, n)
        Two's complement codes (``zeros`` None) or unsigned codes in [0, 15].
    scales : ndarray of shape (m, ceil(n / group_size))
        Group scales, bfloat16 values (as stored by the INT formats).
    zeros : ndarray of shape (m, ceil(n / group_size)) or None
        Integer zero points (asymmetric codes).
    group_size : int
        32, 64, 128 or 256.

    Returns
    -------
    packed : tuple of torch.Tensor
        ``(packed_codes, scale_zeros, zero_offsets)``, the inputs of :func:`int4pack_matmul`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels.quantization import pack_int4_torch
    >>> p, sz, zoff = pack_int4_torch(np.zeros((3, 40), np.int8), np.ones((3, 2), np.float32), None, 32)
    >>> tuple(sz.shape), zoff is None
    ((2, 16, 2), True)
    """
    from ._torch import fits, pack

    if not fits("int", 4, group_size):
        raise ValueError(f"group_size must be one of 32, 64, 128, 256 for torch's int4 kernel, got {group_size}.")
    codes = np.asarray(codes)
    if codes.ndim != 2:
        raise ValueError(f"codes must be 2-D, got shape {codes.shape}.")
    lo, hi = (-8, 7) if zeros is None else (0, 15)
    if codes.size and (codes.min() < lo or codes.max() > hi):
        raise ValueError(f"codes must lie in [{lo}, {hi}] for {'symmetric' if zeros is None else 'asymmetric'} "
                         "INT4.")
    G = -(-codes.shape[1] // group_size)
    if np.shape(scales) != (codes.shape[0], G):
        raise ValueError(f"scales must have shape {(codes.shape[0], G)}, got {np.shape(scales)}.")
    return pack(codes, scales, zeros, group_size)


def int4pack_matmul(x, packed, scale_zeros, zero_offsets=None, *, group_size, n_out, backend=None):
    """``x @ deq(W)^T`` (float32) over weights packed by :func:`pack_int4_torch`, bfloat16 activations.

    Runs torch's CPU int4 kernel (float32 accumulation, bfloat16 output) unless ``backend`` (or the global
    config) is ``"reference"``, which runs the exact twin.

    Parameters
    ----------
    x : torch.Tensor of shape (M, K)
        Input activations (rounded to bfloat16 by the kernel).
    packed, scale_zeros, zero_offsets : torch.Tensor
        The output of :func:`pack_int4_torch`.
    group_size : int
        Columns per scale group.
    n_out : int
        Number of output features (rows of W).
    backend : str or None, default=None
        ``"reference"`` for the twin; anything else runs torch's kernel.

    Returns
    -------
    y : torch.Tensor of shape (M, n_out), float32
        The product.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from sklearn_frontier.kernels.quantization import int4pack_matmul, pack_int4_torch
    >>> p = pack_int4_torch(np.ones((2, 32), np.int8), np.ones((2, 1), np.float32), None, 32)
    >>> int4pack_matmul(torch.ones(1, 32), *p, group_size=32, n_out=2).tolist()
    [[32.0, 32.0]]
    """
    from sklearn_frontier._config import get_config

    from .._dispatch import _load

    if x.ndim != 2 or x.shape[1] > scale_zeros.shape[0] * group_size:
        raise ValueError(f"x must be 2-D with at most {scale_zeros.shape[0] * group_size} features, "
                         f"got shape {tuple(x.shape)}.")
    spec = _int4pack.kernel_spec
    if (backend or get_config()["backend"]) == "reference" or x.device.type != "cpu":
        return _load(spec.reference)(x, packed, scale_zeros, zero_offsets, group_size, n_out)
    return _load(spec.extra_backends["torch"])(x, packed, scale_zeros, zero_offsets, group_size, n_out)


int4pack_matmul.kernel_spec = _int4pack.kernel_spec


def lut4_dequantize(qweight, lut, scales, zeros=None, *, group_size, n):
    """Float32 weight ``W[r, k] = (lut[q_rk] - z_rg) s_rg`` (N, n) from packed 4-bit codes.

    The weight :func:`lut4_matmul` multiplies by, written out once (the large-batch CPU path of
    ``TwinQuantLinear``, where one float32 GEMM is cheaper than the int4 kernels).

    Parameters
    ----------
    qweight : torch.Tensor uint8 of shape (N, ceil(n/2))
        Packed codes (column 2j in the low nibble).
    lut : torch.Tensor of shape (16,)
        Value of each nibble.
    scales : torch.Tensor of shape (N, ceil(n/group_size))
        Per-group scales.
    zeros : torch.Tensor of shape (N, ceil(n/group_size)) or None, default=None
        Per-group zero points, in table units.
    group_size : int
        Number of columns sharing a scale.
    n : int
        Number of columns.

    Returns
    -------
    W : torch.Tensor of shape (N, n), float32
        The decoded weight.

    Examples
    --------
    >>> import torch
    >>> from sklearn_frontier.kernels.quantization import lut4_dequantize
    >>> lut = torch.arange(16, dtype=torch.float32)
    >>> lut4_dequantize(torch.tensor([[0x21]], dtype=torch.uint8), lut, torch.ones(1, 1), group_size=2, n=2).tolist()
    [[1.0, 2.0]]
    """
    if qweight.ndim != 2 or not 0 <= n <= 2 * qweight.shape[1] or n < 2 * qweight.shape[1] - 1:
        raise ValueError(f"n={n} does not match qweight of shape {tuple(qweight.shape)}.")
    if tuple(lut.shape) != (16,):
        raise ValueError(f"lut must have shape (16,), got {tuple(lut.shape)}.")
    return _lut4_deq(qweight, lut, scales, zeros, group_size, n)


lut4_dequantize.kernel_spec = _lut4_deq.kernel_spec


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


_w4a8 = register_kernel("w4a8_matmul", reference=f"{_REF}:w4a8_matmul", numba=f"{_NUMBA}:w4a8_matmul")
_w4a8_decode = register_kernel("w4a8_decode_t", reference=f"{_REF}:w4a8_decode_t", numba=f"{_NUMBA}:w4a8_decode_t")


def pack_w4a8(codes, scales, zeros, group_size):
    """Pack INT4 codes once into the weight-stationary layout of :func:`w4a8_matmul`.

    Parameters
    ----------
    codes : ndarray of int8 of shape (N, K)
        Two's complement codes in [-8, 7] (``zeros`` None) or unsigned codes in [0, 15].
    scales : ndarray of shape (N, ceil(K / group_size))
        Group scales.
    zeros : ndarray of shape (N, ceil(K / group_size)) or None
        Integer zero points of unsigned codes.
    group_size : int
        Columns per scale group, a multiple of 32.

    Returns
    -------
    packed : ndarray of uint8 of shape (ceil(N / 128), ceil(K / 32) * 16, 128)
        Tiles of 128 outputs; row ``16 b + j`` of a tile holds inputs ``32 b + j`` (low nibble) and
        ``32 b + 16 + j`` (high nibble) of each output.
    scale_t : ndarray of float32 of shape (G, N)
        Transposed group scales.
    zero_t : ndarray of uint8 of shape (G, N) or None
        Transposed zero points (None: symmetric codes, stored with the offset 8).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels.quantization import pack_w4a8
    >>> packed, scale_t, zero_t = pack_w4a8(np.zeros((3, 40), np.int8), np.ones((3, 2), np.float32), None, 32)
    >>> packed.shape, scale_t.shape, zero_t is None
    ((1, 32, 128), (2, 3), True)
    """
    from ._reference import pack_w4a8 as _pack_w4a8

    codes = np.asarray(codes)
    if codes.ndim != 2:
        raise ValueError(f"codes must be 2-D, got shape {codes.shape}.")
    if group_size % 32:
        raise ValueError(f"group_size must be a multiple of 32 for the W4A8 kernel, got {group_size}.")
    lo, hi = (-8, 7) if zeros is None else (0, 15)
    if codes.size and (codes.min() < lo or codes.max() > hi):
        raise ValueError(f"codes must lie in [{lo}, {hi}].")
    G = -(-codes.shape[1] // group_size)
    if np.shape(scales) != (codes.shape[0], G):
        raise ValueError(f"scales must have shape {(codes.shape[0], G)}, got {np.shape(scales)}.")
    return _pack_w4a8(codes, scales, zeros, group_size, W4A8_CHUNK)


W4A8_CHUNK = 128


def w4a8_matmul(x, packed, scale_t, zero_t=None, *, group_size, tensor_scale=1.0, t=None, down=None, up_t=None,
                bias=None, xr=None):
    """Compute ``ts ((xr t) Q^T + (x down^T) up_t) + bias`` with int8 activations and packed INT4 ``Q``.

    ``Q = (u - z) s`` from the weight-stationary codes of :func:`pack_w4a8`. Each 32-block of the residual's
    input is rounded to int8 with one float32 scale ``amax / 127``; block dot products are exact int32 sums,
    the zero point and the group scale enter once per block and output. The only approximation is the
    activation rounding: ``|y - y_exact| <= ts * sum_b (xs_b / 2) * sum_{k in b} |Q_nk|`` per output.

    Parameters
    ----------
    x : ndarray of float32 of shape (M, K)
        Input of the low-rank branch, and of the residual when ``xr`` is None.
    packed, scale_t, zero_t : ndarray
        The output of :func:`pack_w4a8`.
    group_size : int
        Columns per scale group.
    tensor_scale : float, default=1.0
        Global scale ``ts``.
    t : ndarray of shape (K,) or None, default=None
        Diagonal input transform of the residual.
    down : ndarray of shape (r, K) or None, default=None
        Down factor of the low-rank branch.
    up_t : ndarray of shape (r, N) or None, default=None
        Transposed up factor of the low-rank branch.
    bias : ndarray of shape (N,) or None, default=None
        Output bias.
    xr : ndarray of shape (M, K) or None, default=None
        Input of the residual (e.g. with a block transform applied); None uses ``x``.

    Returns
    -------
    y : ndarray of float32 of shape (M, N)
        The product.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels.quantization import pack_w4a8, w4a8_matmul
    >>> p = pack_w4a8(np.ones((2, 32), np.int8), np.ones((2, 1), np.float32), None, 32)
    >>> w4a8_matmul(np.ones((1, 32), np.float32), *p, group_size=32).tolist()
    [[32.0, 32.0]]
    """
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2 or packed.ndim != 3 or 2 * packed.shape[1] < x.shape[1] or 2 * packed.shape[1] - x.shape[1] >= 32:
        raise ValueError(f"x must be 2-D with the K the weight was packed for, got shape {x.shape}.")
    if (down is None) != (up_t is None):
        raise ValueError("down and up_t must be given together.")
    return _w4a8(x, x if xr is None else np.asarray(xr, dtype=np.float32), t, packed, scale_t, zero_t, group_size,
                 tensor_scale, down, up_t, bias)


w4a8_matmul.kernel_spec = _w4a8.kernel_spec


def w4a8_prepare(packed, scale_t, zero_t=None, *, group_size, tensor_scale=1.0, t=None, down=None, up_t=None,
                 bias=None):
    """:func:`w4a8_matmul` with every weight-side argument converted once: returns ``run(x, xr)``.

    For a layer called many times (``TwinQuantLinear``): ``run`` takes float32 C-contiguous numpy arrays
    ``x`` and ``xr`` (M, K) and returns the float32 (M, N) product, on the numba kernel (serial below a size
    where a threaded launch costs more than the work; threaded calls run on ``torch.get_num_threads()``
    threads and give the caller back its numba thread count), or on the reference twin without numba or
    under ``backend="reference"``.

    Parameters
    ----------
    packed, scale_t, zero_t : ndarray
        The output of :func:`pack_w4a8`.
    group_size : int
        Columns per scale group.
    tensor_scale : float, default=1.0
        Global scale.
    t, down, up_t, bias : ndarray or None, default=None
        As in :func:`w4a8_matmul`.

    Returns
    -------
    run : callable
        ``run(x, xr) -> ndarray of shape (M, N)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels.quantization import pack_w4a8, w4a8_prepare
    >>> run = w4a8_prepare(*pack_w4a8(np.ones((2, 32), np.int8), np.ones((2, 1), np.float32), None, 32),
    ...                    group_size=32)
    >>> x = np.ones((1, 32), np.float32)
    >>> run(x, x).tolist()
    [[32.0, 32.0]]
    """
    from sklearn_frontier._config import get_config

    from .._dispatch import _load, available_backends

    if "numba" in available_backends("w4a8_matmul") and get_config()["backend"] != "reference":
        from ._numba import prepared_w4a8

        return prepared_w4a8(packed, scale_t, zero_t, group_size, tensor_scale, t, down, up_t, bias)
    ref = _load(_w4a8.kernel_spec.reference)

    def run(x, xr):
        return ref(x, xr, t, packed, scale_t, zero_t, group_size, tensor_scale, down, up_t, bias)

    return run


def w4a8_decode_t(packed, scale_t, zero_t=None, *, group_size, n_features, out=None, row_scale=None):
    """Transposed float32 residual ``Q^T`` (K, N) from the weight-stationary codes (no tensor scale).

    The large-batch path: decoded once per call, then one float32 GEMM.

    Parameters
    ----------
    packed, scale_t, zero_t : ndarray
        The output of :func:`pack_w4a8`.
    group_size : int
        Columns per scale group.
    n_features : int
        K, the number of inputs.
    out : ndarray of float32 of shape (n_features, N) or None, default=None
        Buffer to write into (reused across calls).
    row_scale : ndarray of float32 of shape (n_features,) or None, default=None
        Factor of each row of the result (a tensor scale and a diagonal input transform folded in).

    Returns
    -------
    QT : ndarray of float32 of shape (n_features, N)
        The decoded residual, transposed.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels.quantization import pack_w4a8, w4a8_decode_t
    >>> p = pack_w4a8(np.array([[1, -2]], np.int8), np.ones((1, 1), np.float32), None, 32)
    >>> w4a8_decode_t(*p, group_size=32, n_features=2).ravel().tolist()
    [1.0, -2.0]
    """
    return _w4a8_decode(packed, scale_t, zero_t, group_size, int(n_features), out, row_scale)


w4a8_decode_t.kernel_spec = _w4a8_decode.kernel_spec
