"""Public wrapper of the int8 path: per-row int8 activations times an int8 weight re-quantized per output
channel from 4-bit codes, int32 sums by torch's int8 GEMM (``torch._int_mm``), with a torch reference twin."""

import numpy as np

from .._dispatch import register_kernel

__all__ = ["pack_int8_weight", "int8_matmul", "int8_matmul_available"]

_REF = "sklearn_frontier.kernels.quantization._reference"
_TORCH = "sklearn_frontier.kernels.quantization._torch"


_int8 = register_kernel("int8_matmul", reference=f"{_REF}:int8_matmul",
                        extra_backends={"torch": f"{_TORCH}:int8_matmul"})


def int8_matmul_available():
    """Whether torch's int8 GEMM (``torch._int_mm``) runs on this machine's CPU.

    Returns
    -------
    available : bool
        True when :func:`int8_matmul` runs torch's int8 kernel (else only its reference twin).

    Examples
    --------
    >>> from sklearn_frontier.kernels.quantization import int8_matmul_available
    >>> isinstance(int8_matmul_available(), bool)
    True
    """
    from ._torch import int_mm_available

    return int_mm_available()


def pack_int8_weight(codes, scales, zeros, group_size):
    """Int8 weight and per-output-channel scales for :func:`int8_matmul`, from 4-bit codes and group scales.

    The decoded weight ``(c - z) s`` (no tensor scale) is re-quantized to int8 with one scale per output
    channel (``amax / 127``, round half to even): the group scales fold into the channel scale, so one int8
    GEMM covers each row. The price is the re-rounding of the weight (at most half a channel step per entry).

    Parameters
    ----------
    codes : ndarray of int8 of shape (N, K)
        Two's complement codes (``zeros`` None) or unsigned codes.
    scales : ndarray of shape (N, ceil(K / group_size))
        Group scales.
    zeros : ndarray of shape (N, ceil(K / group_size)) or None
        Integer zero points of unsigned codes.
    group_size : int
        Columns per scale group.

    Returns
    -------
    wq : torch.Tensor of int8 of shape (N, K)
        The re-quantized weight.
    ch_scale : torch.Tensor of float32 of shape (N,)
        One scale per output channel.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels.quantization import pack_int8_weight
    >>> wq, ch = pack_int8_weight(np.array([[1, -2]], np.int8), np.ones((1, 1), np.float32), None, 32)
    >>> wq.tolist(), ch.tolist()
    ([[64, -127]], [0.015748031437397003])
    """
    import torch

    from ._reference import pack_int8_weight as _pack_int8

    codes = np.asarray(codes)
    if codes.ndim != 2:
        raise ValueError(f"codes must be 2-D, got shape {codes.shape}.")
    G = -(-codes.shape[1] // group_size)
    if np.shape(scales) != (codes.shape[0], G):
        raise ValueError(f"scales must have shape {(codes.shape[0], G)}, got {np.shape(scales)}.")
    wq, ch = _pack_int8(codes, scales, zeros, group_size)
    return torch.from_numpy(wq), torch.from_numpy(ch)


def int8_matmul(x, wq, ch_scale, *, tensor_scale=1.0, down=None, up_t=None, bias=None, xr=None, backend=None):
    """Compute ``ts (xr Wq^T diag(ch) + (x down^T) up_t) + bias`` with per-row int8 activations, int32 sums.

    Each row of the residual's input ``xr`` is rounded to int8 with one scale ``amax / 127``; the integer
    products are summed exactly in int32 by torch's int8 GEMM (``torch._int_mm``), then scaled by the row and
    channel scales; the low-rank branch and the bias are added after. ``backend="reference"`` (or the global
    config) runs the twin, which sums the same integers in int64.

    Parameters
    ----------
    x : torch.Tensor of float32 of shape (M, K)
        Input of the low-rank branch, and of the residual when ``xr`` is None.
    wq, ch_scale : torch.Tensor
        The output of :func:`pack_int8_weight`.
    tensor_scale : float, default=1.0
        Global scale ``ts``.
    down : torch.Tensor of shape (r, K) or None, default=None
        Down factor of the low-rank branch.
    up_t : torch.Tensor of shape (r, N) or None, default=None
        Transposed up factor of the low-rank branch.
    bias : torch.Tensor of shape (N,) or None, default=None
        Output bias.
    xr : torch.Tensor of shape (M, K) or None, default=None
        Input of the residual (e.g. with its input transform applied); None uses ``x``.
    backend : str or None, default=None
        ``"reference"`` for the twin; anything else runs torch's int8 GEMM when it is available.

    Returns
    -------
    y : torch.Tensor of float32 of shape (M, N)
        The product.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from sklearn_frontier.kernels.quantization import int8_matmul, pack_int8_weight
    >>> wq, ch = pack_int8_weight(np.ones((2, 32), np.int8), np.ones((2, 1), np.float32), None, 32)
    >>> int8_matmul(torch.ones(3, 32), wq, ch).tolist()
    [[32.0, 32.0], [32.0, 32.0], [32.0, 32.0]]
    """
    from sklearn_frontier._config import get_config

    from .._dispatch import _load

    if x.ndim != 2 or x.shape[1] != wq.shape[1]:
        raise ValueError(f"x must be 2-D with {wq.shape[1]} features, got shape {tuple(x.shape)}.")
    if (down is None) != (up_t is None):
        raise ValueError("down and up_t must be given together.")
    spec = _int8.kernel_spec
    path = spec.reference if ((backend or get_config()["backend"]) == "reference" or not int8_matmul_available()) \
        else spec.extra_backends["torch"]
    return _load(path)(x, x if xr is None else xr, wq, ch_scale, float(tensor_scale), down, up_t, bias)


int8_matmul.kernel_spec = _int8.kernel_spec
