"""Block formats (INT, MXFP4, NVFP4), straight-through fake quantization, packing and bit accounting.

The one home of every number format used by the quantizers: RTN, SVD, WUSH and TwinQuant all call
:func:`quantize_groups` / :func:`dequantize_groups` (numpy, exact storage semantics) and, when they
train, :func:`fake_quantize_torch` (torch, straight-through estimator).

Groups are contiguous runs of ``group_size`` columns along each row; a ragged last group is
zero-padded internally. Rounding is half-to-even everywhere.
"""

from dataclasses import dataclass, field, replace

import numpy as np

from ._codecs import (
    E2M1_GRID,
    FORMATS,
    MAX_WEIGHT_ABS,
    MIN_WEIGHT_RMS,
    _grouped,
    e2m1_decode,
    e2m1_encode,
    e4m3_decode,
    e4m3_encode,
    round_bfloat16,
)

__all__ = [
    "FormatSpec",
    "QuantizedWeight",
    "E2M1_GRID",
    "quantize_groups",
    "dequantize_groups",
    "dequantize_weight",
    "fake_quantize_torch",
    "bits_breakdown",
    "bits_per_weight",
    "group_size_for_budget",
    "rank_for_budget",
    "e4m3_encode",
    "e4m3_decode",
    "e2m1_encode",
    "e2m1_decode",
    "round_bfloat16",
    "check_weight_magnitude",
    "MIN_WEIGHT_RMS",
    "MAX_WEIGHT_ABS",
]


@dataclass(frozen=True)
class FormatSpec:
    """A weight (or activation) number format: element format, bits, group size and symmetry.

    Parameters
    ----------
    weight_format : {"int", "mxfp4", "nvfp4"}, default="int"
        Element format: integers with a per-group scale, or the OCP MX / NVIDIA FP4 block formats.
    n_bits : int, default=4
        Bits per element.
    group_size : int, default=128
        Elements sharing one scale (the block size for the FP4 formats).
    symmetric : bool, default=True
        Symmetric integer codes (no zero point) or asymmetric ones with a zero point per group.
    mx_scale_rule : {"ocp", ...}, default="ocp"
        How the shared E8M0 exponent of MXFP4 is chosen.

    See Also
    --------
    bits_per_weight : The storage cost of a weight in a format.

    Examples
    --------
    >>> from sklearn_frontier.quantization import FormatSpec
    >>> fmt = FormatSpec("int", 4, 64, symmetric=False)
    >>> fmt.qmax, fmt.zero_bits
    (7, 4)
    """

    weight_format: str = "int"
    n_bits: int = 4
    group_size: int = 128
    symmetric: bool = True
    mx_scale_rule: str = "ocp"

    @property
    def is_fp(self):
        return FORMATS[self.weight_format].is_fp

    @property
    def qmax(self):
        return 2 ** (self.n_bits - 1) - 1

    @property
    def scale_bits(self):
        return FORMATS[self.weight_format].scale_bits

    @property
    def zero_bits(self):
        return 0 if (self.symmetric or self.is_fp) else self.n_bits


def resolve_format(weight_format, n_bits, group_size, symmetric, n_features, mx_scale_rule="ocp",
                   default_group=None):
    """Validate a format request and return a :class:`FormatSpec` (ValueError naming the parameter)."""
    element = FORMATS[weight_format]
    if not element.is_fp:
        if n_bits not in (2, 3, 4, 8):
            raise ValueError(f"n_bits must be one of 2, 3, 4, 8 for weight_format='int', got {n_bits}.")
        g = group_size if group_size is not None else (default_group or element.default_group)
    else:
        block = element.block
        if n_bits != 4:
            raise ValueError(f"n_bits must be 4 for weight_format={weight_format!r}, got {n_bits}.")
        if not symmetric:
            raise ValueError(f"symmetric must be True for weight_format={weight_format!r} (FP4 is sign-magnitude).")
        if group_size is not None and group_size != block:
            raise ValueError(f"group_size must be None or {block} for weight_format={weight_format!r}, "
                             f"got {group_size}.")
        g = block
    if group_size is not None and n_features % group_size != 0:
        raise ValueError(f"group_size={group_size} does not divide in_features={n_features}; "
                         "use group_size=None for the format default (a ragged last group is allowed then).")
    return FormatSpec(weight_format, int(n_bits), int(g), bool(symmetric), mx_scale_rule)


def check_weight_magnitude(W, name="X"):
    """Return ``(max |W|, RMS of W)`` (overflow-free), refusing magnitudes the stored format cannot hold.

    Parameters
    ----------
    W : ndarray of shape (m, n)
        Finite float weight.
    name : str, default="X"
        Name of the parameter, for the error message.

    Returns
    -------
    amax : float
        Largest magnitude.
    rms : float
        Root mean square (0.0 for an all-zero weight, which is accepted).

    Raises
    ------
    ValueError
        When ``max |W| > MAX_WEIGHT_ABS`` (too large) or ``0 < RMS < MIN_WEIGHT_RMS`` (too small).
    """
    W = np.asarray(W, dtype=np.float64)
    amax = float(np.abs(W).max()) if W.size else 0.0
    if amax == 0.0:
        return 0.0, 0.0
    rms = amax * float(np.sqrt(np.mean((W / amax) ** 2)))
    rng = f"representable: RMS >= {MIN_WEIGHT_RMS:g} and max |{name}| <= {MAX_WEIGHT_ABS:g}"
    if amax > MAX_WEIGHT_ABS:
        raise ValueError(f"{name} is too large for the stored format: max |{name}| = {amax:.3g} ({rng}; the "
                         "tensor scale and the reconstruction are float32). Rescale the weight.")
    if rms < MIN_WEIGHT_RMS:
        raise ValueError(f"{name} is too small for the stored format: RMS = {rms:.3g} ({rng}; the tensor scale "
                         "and the reconstruction are float32). Rescale the weight.")
    return amax, rms


def quantize_groups(R, fmt, format_scale=1.0):
    """Quantize ``R`` (m, n) group-wise in ``fmt``; returns ``(codes int8, scales, zero_points | None)``.

    ``scales`` are the stored values: bfloat16 (held in float32 arrays) for INT, uint8 E8M0 exponent (MXFP4) or E4M3
    bits (NVFP4,
    relative to ``format_scale``). Codes are computed against the stored (decoded) scale, so dequantizing
    the returned triple is the format's exact reconstruction.
    """
    R = np.asarray(R, dtype=np.float64)
    m, n = R.shape
    q, scales, zeros = FORMATS[fmt.weight_format].quantize(_grouped(R, fmt.group_size), fmt, format_scale)
    codes = q.astype(np.int8).reshape(m, -1)[:, :n]
    return np.ascontiguousarray(codes), scales, zeros


def dequantize_groups(codes, scales, zero_points, fmt, format_scale=1.0):
    """Float32 values of stored codes (m, n) with their group scales."""
    codes = np.asarray(codes)
    m, n = codes.shape
    cg = _grouped(codes.astype(np.int8), fmt.group_size)
    out = FORMATS[fmt.weight_format].dequantize(cg, scales, zero_points, fmt, format_scale)
    return np.ascontiguousarray(out.reshape(m, -1)[:, :n].astype(np.float32))


def nvfp4_tensor_scale(R):
    amax = float(np.abs(R).max()) if R.size else 0.0
    return np.float32(amax / (6.0 * 448.0)) if amax > 0 else np.float32(1.0)


# ----------------------------------------------------------------------------------------------- stored weight
@dataclass
class QuantizedWeight:
    """Everything stored for one quantized weight; :func:`dequantize_weight` defines its value exactly.

    ``W_hat = tensor_scale * (deq(codes) T + lowrank_up @ lowrank_down)`` in float32, where ``T`` is
    ``input_transform`` (None, a diagonal (n,), or blocks (n_blocks, B, B) acting on column blocks).
    Every part but ``tensor_scale`` is relative to it, so the stored weight of ``c W`` is that of ``W``
    with ``c`` times the tensor scale.

    Parameters
    ----------
    shape : tuple of int
        Shape ``(m, n)`` of the weight.
    fmt : FormatSpec
        Number format of the codes.
    codes : ndarray of shape (m, n)
        Int8 codes: two's complement (symmetric int), unsigned (asymmetric) or E2M1 bits (FP4).
    scales : ndarray
        Group scales: bfloat16 values held in float32 (INT), E8M0 exponents (MXFP4), E4M3 bits (NVFP4).
    zero_points : ndarray or None
        Group zero points (asymmetric formats), else None.
    tensor_scale : numpy.float32
        Global scale of the quantized residual.
    format_scale : numpy.float32, default=1.0
        Scale applied inside the format (NVFP4 two-level scaling).
    lowrank_up : ndarray of shape (m, r) or None, default=None
        Float16 up factor of the low-rank branch (relative to ``tensor_scale``).
    lowrank_down : ndarray of shape (r, n) or None, default=None
        Float16 down factor of the low-rank branch.
    input_transform : ndarray of shape (n,) or (n_blocks, B, B) or None, default=None
        Float16 input transform ``T`` of the residual.
    act_bits : int or None, default=None
        Activation bit width the weight was quantized for.
    act_format : str or None, default=None
        Activation number format.
    metadata : dict, default={}
        Free-form information (method, timings).

    See Also
    --------
    dequantize_weight : The float32 value of a stored weight.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.quantization import RTNQuantizer
    >>> W = np.random.default_rng(0).standard_normal((8, 64))
    >>> qw = RTNQuantizer(group_size=32).fit(W).quantize()
    >>> qw.shape, qw.qweight.shape
    ((8, 64), (8, 32))
    """

    shape: tuple
    fmt: FormatSpec
    codes: np.ndarray  # int8 (m, n): two's complement (sym int), unsigned (asym), E2M1 bits (FP4)
    scales: np.ndarray
    zero_points: np.ndarray | None
    tensor_scale: np.float32
    format_scale: np.float32 = np.float32(1.0)
    lowrank_up: np.ndarray | None = None  # float16 (m, r), relative to tensor_scale
    lowrank_down: np.ndarray | None = None  # float16 (r, n)
    input_transform: np.ndarray | None = None  # float16 (n,) or (n_blocks, B, B)
    act_bits: int | None = None
    act_format: str | None = None
    metadata: dict = field(default_factory=dict)

    @property
    def rank(self):
        return 0 if self.lowrank_up is None else int(self.lowrank_up.shape[1])

    @property
    def qweight(self):
        """Packed codes: uint8 (m, ceil(n/2)) for 4-bit formats, int8 (m, n) for 8-bit."""
        if self.fmt.n_bits == 4:
            from sklearn_frontier.kernels.quantization import pack_int4

            return pack_int4(self.codes)
        return self.codes

    def rows(self, idx):
        """The same stored weight restricted to output rows ``idx``.

        Parameters
        ----------
        idx : array-like of int or slice
            Output rows to keep.

        Returns
        -------
        qw : QuantizedWeight
            The stored weight of those rows.
        """
        up = None if self.lowrank_up is None else self.lowrank_up[idx]
        zp = None if self.zero_points is None else self.zero_points[idx]
        return replace(self, shape=(len(np.arange(self.shape[0])[idx]), self.shape[1]), codes=self.codes[idx],
                       scales=self.scales[idx], zero_points=zp, lowrank_up=up)


def apply_input_transform(A, T):
    """``A @ T`` for T None / diagonal (n,) / blocks (n_blocks, B, B), in A's dtype."""
    if T is None:
        return A
    T = np.asarray(T).astype(A.dtype)
    if T.ndim == 1:
        return A * T[None, :]
    nb, B, _ = T.shape
    out = np.empty_like(A)
    for b in range(nb):
        out[:, b * B:(b + 1) * B] = A[:, b * B:(b + 1) * B] @ T[b]
    return out


def dequantize_weight(qw):
    """The float32 (m, n) value of a :class:`QuantizedWeight` (the single definition of W_hat).

    Parameters
    ----------
    qw : QuantizedWeight
        The stored weight.

    Returns
    -------
    W_hat : ndarray of shape (m, n), dtype float32
        The dequantized weight.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.quantization import RTNQuantizer
    >>> from sklearn_frontier.quantization import dequantize_weight
    >>> W = np.random.default_rng(0).standard_normal((8, 64))
    >>> dequantize_weight(RTNQuantizer(group_size=32).fit(W).quantize()).shape
    (8, 64)
    """
    deq = dequantize_groups(qw.codes, qw.scales, qw.zero_points, qw.fmt, qw.format_scale)
    out = apply_input_transform(deq, qw.input_transform)
    if qw.lowrank_up is not None and qw.lowrank_up.shape[1] > 0:
        out = out + qw.lowrank_up.astype(np.float32) @ qw.lowrank_down.astype(np.float32)
    return np.ascontiguousarray(np.float32(qw.tensor_scale) * out, dtype=np.float32)


def fake_quantize_torch(R, fmt, *, scale_gradient=True, format_scale=1.0):
    """Straight-through fake quantization of a torch tensor (m, n) in ``fmt`` (training only)."""
    import torch

    m, n = R.shape
    g = fmt.group_size
    n_groups = -(-n // g)
    pad = n_groups * g - n
    Rp = torch.nn.functional.pad(R, (0, pad)) if pad else R
    Rg = Rp.reshape(m, n_groups, g)
    out = FORMATS[fmt.weight_format].fake_quantize(Rg, fmt, scale_gradient)
    out = out.reshape(m, n_groups * g)
    return out[:, :n] if pad else out


# ----------------------------------------------------------------------------------------------- accounting
def _transform_bits(kind, n, block_size):
    if kind in (None, "none", "hadamard", "identity"):
        return 0
    if kind == "diag":
        return 16 * n
    if kind == "block":
        return 16 * n * block_size
    if kind == "full":
        return 16 * n * n
    raise ValueError(f"unknown transform kind {kind!r}")


def bits_breakdown(m, n, fmt, *, rank=0, lowrank_bits=16, transform="none", transform_block_size=32):
    """Count the exact stored bits of one quantized (m, n) weight, by part (bias excluded).

    Parameters
    ----------
    m : int
        Number of output features.
    n : int
        Number of input features.
    fmt : FormatSpec
        Number format of the codes.
    rank : int, default=0
        Rank of the low-rank branch.
    lowrank_bits : int, default=16
        Bits per low-rank factor entry (8 adds a per-row scale).
    transform : str, default="none"
        Kind of the stored input transform (``"none"``, ``"diag"``, ``"block"``, ...).
    transform_block_size : int, default=32
        Block size of a block transform.

    Returns
    -------
    parts : dict of str to int
        Bits of ``codes``, ``scales``, ``zero_points``, ``lowrank``, ``transform``, ``tensor_scale`` and their
        ``total``.

    Examples
    --------
    >>> from sklearn_frontier.quantization import FormatSpec, bits_breakdown
    >>> parts = bits_breakdown(384, 384, FormatSpec("int", 4, 128))
    >>> parts["codes"], parts["scales"], parts["tensor_scale"]
    (589824, 18432, 32)
    """
    n_groups = -(-n // fmt.group_size)
    parts = {
        "codes": fmt.n_bits * m * n,
        "scales": m * n_groups * fmt.scale_bits,
        "zero_points": m * n_groups * fmt.zero_bits,
        "lowrank": rank * (m + n) * lowrank_bits + (16 * (m + rank) if (lowrank_bits == 8 and rank) else 0),
        "transform": _transform_bits(transform, n, transform_block_size),
        "tensor_scale": FORMATS[fmt.weight_format].tensor_scale_bits,
    }
    parts["total"] = sum(parts.values())
    return parts


def bits_per_weight(m, n, fmt, **kwargs):
    """Stored bits per weight, ``bits_breakdown(...)["total"] / (m n)``.

    Parameters
    ----------
    m : int
        Number of output features.
    n : int
        Number of input features.
    fmt : FormatSpec
        Number format of the codes.
    **kwargs : dict
        Further arguments of :func:`bits_breakdown` (rank, lowrank_bits, transform, transform_block_size).

    Returns
    -------
    bpw : float
        Total stored bits divided by ``m n``.

    Examples
    --------
    >>> from sklearn_frontier.quantization import FormatSpec, bits_per_weight
    >>> round(bits_per_weight(4096, 4096, FormatSpec("int", 4, 32)), 4)
    4.5
    """
    return bits_breakdown(m, n, fmt, **kwargs)["total"] / (m * n)


def group_size_for_budget(m, n, budget_bpw, *, n_bits=4, symmetric=True, candidates=(16, 32, 64, 128, 256)):
    """Largest-bit (smallest) group size whose INT bpw stays within ``budget_bpw`` (None if none fits).

    Parameters
    ----------
    m : int
        Number of output features.
    n : int
        Number of input features.
    budget_bpw : float
        Budget in bits per weight.
    n_bits : int, default=4
        Bit width of the codes.
    symmetric : bool, default=True
        Symmetric (no zero points) when True.
    candidates : tuple of int, default=(16, 32, 64, 128, 256)
        Group sizes to consider.

    Returns
    -------
    group_size : int or None
        The smallest fitting candidate, or None.

    Examples
    --------
    >>> from sklearn_frontier.quantization import group_size_for_budget
    >>> group_size_for_budget(4096, 4096, 4.5)
    64
    """
    best = None
    for g in sorted(candidates, reverse=True):
        if bits_per_weight(m, n, FormatSpec("int", n_bits, g, symmetric)) <= budget_bpw + 1e-12:
            best = g
    return best


def rank_for_budget(m, n, budget_bpw, fmt, *, lowrank_bits=16, transform="none"):
    """Largest rank whose total bpw stays within ``budget_bpw`` (0 if even rank 0 exceeds it).

    Parameters
    ----------
    m : int
        Number of output features.
    n : int
        Number of input features.
    budget_bpw : float
        Budget in bits per weight.
    fmt : FormatSpec
        Number format of the codes.
    lowrank_bits : int, default=16
        Storage precision of the low-rank factors.
    transform : str, default="none"
        Kind of the stored input transform.

    Returns
    -------
    rank : int
        The largest fitting rank.

    Examples
    --------
    >>> from sklearn_frontier.quantization import FormatSpec, rank_for_budget
    >>> rank_for_budget(4096, 4096, 4.75, FormatSpec("int", 4, 32))
    31
    """
    r = 0
    while r + 1 < min(m, n) and bits_per_weight(m, n, fmt, rank=r + 1, lowrank_bits=lowrank_bits,
                                                transform=transform) <= budget_bpw + 1e-12:
        r += 1
    return r
