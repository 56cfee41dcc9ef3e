"""The element formats (INT, MXFP4, NVFP4): one table entry each, holding how a group is stored and decoded.

:data:`FORMATS` maps ``weight_format`` to an :class:`ElementFormat`, whose functions quantize grouped values to
codes and stored scales (exact storage semantics, numpy), decode them, fake-quantize in torch for training
(straight-through estimator), and give the 16-entry value table of a packed 4-bit code. A new format is one
entry here; ``_formats.py`` and the quantized module dispatch through the table.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: Magnitudes of the E2M1 (FP4) element grid; index = the 3 magnitude bits.
E2M1_GRID = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
_E2M1_MIDS = 0.5 * (E2M1_GRID[1:] + E2M1_GRID[:-1])
_E2M1_SIGNED = np.concatenate([E2M1_GRID, -E2M1_GRID])  # code c: sign bit 8, magnitude index c & 7
#: Representable magnitudes of a weight: the tensor scale (its RMS) is a float32 and every stored part below
#: it (group scales in bfloat16/E8M0/E4M3, float16 factors and transforms) is relative to it, so quantization
#: is scale-equivariant between these bounds. The reconstruction is float32: its RMS must stay a normal
#: float32 with room for values 1e-8 of it (lower bound), its largest value below float32's maximum with
#: a margin for rounding up and the low-rank branch (upper bound).
MIN_WEIGHT_RMS = 1e-30
MAX_WEIGHT_ABS = 1e36


def round_bfloat16(a):
    """Round to the nearest bfloat16 value (ties to even), returned as float32 (numpy has no bfloat16).

    INT group scales are stored as bfloat16 because torch's CPU int4 kernel takes its scales in the
    activation dtype, bfloat16: the stored value is then exactly what that kernel multiplies by.

    Parameters
    ----------
    a : array-like
        Finite values.

    Returns
    -------
    r : ndarray of float32
        The bfloat16 values, widened exactly to float32.
    """
    with np.errstate(over="ignore"):
        a32 = np.ascontiguousarray(np.asarray(a, dtype=np.float32))
    u = a32.view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32).reshape(a32.shape)


# ----------------------------------------------------------------------------------------------- FP8/FP4 codecs
def e2m1_encode(a):
    """Nearest E2M1 code (ties to the even code, saturating at +-6) of each value; int8 in [0, 15]."""
    a = np.asarray(a, dtype=np.float64)
    mag = np.abs(a)
    idx = np.searchsorted(_E2M1_MIDS, mag, side="right")
    tie_down = (idx > 0) & (idx % 2 == 1) & (mag == _E2M1_MIDS[np.maximum(idx - 1, 0)])
    idx = np.where(tie_down, idx - 1, idx)
    sign = (a < 0) & (idx > 0)
    return (idx + 8 * sign).astype(np.int8)


def e2m1_decode(codes, dtype=np.float32):
    return _E2M1_SIGNED.astype(dtype)[np.asarray(codes).astype(np.int64) & 15]


def e4m3_round(x):
    """Round non-negative values to the FP8 E4M3 (fn) grid, half-to-even, saturating at 448."""
    x = np.asarray(x, dtype=np.float64)
    e = np.floor(np.log2(np.maximum(x, 2.0**-20)))
    e = np.maximum(e, -6.0)
    step = 2.0 ** (e - 3)
    return np.minimum(np.rint(x / step) * step, 448.0)


def e4m3_encode(x):
    """Bits (uint8) of ``e4m3_round(x)`` for non-negative ``x``."""
    v = e4m3_round(x)
    out = np.zeros(v.shape, dtype=np.uint8)
    sub = v < 2.0**-6
    out[sub] = np.rint(v[sub] / 2.0**-9).astype(np.uint8)
    nv = v[~sub]
    e = np.floor(np.log2(nv))
    mant = np.rint((nv / 2.0**e - 1.0) * 8)
    out[~sub] = ((e + 7).astype(np.int64) << 3 | mant.astype(np.int64)).astype(np.uint8)
    return out


def e4m3_decode(bits):
    bits = np.asarray(bits).astype(np.int64)
    expf, mant = bits >> 3 & 15, bits & 7
    return np.where(expf == 0, mant * 2.0**-9, (1 + mant / 8.0) * 2.0 ** (expf - 7)).astype(np.float32)


# ----------------------------------------------------------------------------------------------- grouping
def _grouped(a, g):
    """(m, n) -> (m, G, g) zero-padded view/copy."""
    m, n = a.shape
    n_groups = -(-n // g)
    pad = n_groups * g - n
    if pad:
        a = np.concatenate([a, np.zeros((m, pad), dtype=a.dtype)], axis=1)
    return a.reshape(m, n_groups, g)


def _stored_scale(s):
    """INT group scales as stored: bfloat16 values (in float32), refusing values bfloat16 cannot hold."""
    with np.errstate(over="ignore"):
        s32 = round_bfloat16(np.asarray(s, dtype=np.float64).astype(np.float32))
    if not np.all(np.isfinite(s32)):
        raise ValueError("a group scale overflows bfloat16 in X: values too large for the stored format "
                         f"(group scales are relative to the tensor scale; max |X| <= {MAX_WEIGHT_ABS:g}).")
    return s32


# ----------------------------------------------------------------------------------------------- INT
def _quantize_int(Rg, fmt, format_scale):
    if fmt.symmetric:
        amax = np.abs(Rg).max(axis=2)
        s16 = _stored_scale(np.maximum(amax / fmt.qmax, 1e-10))
        sd = s16.astype(np.float64)[..., None]
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(sd > 0, np.rint(Rg / np.where(sd > 0, sd, 1.0)), 0.0)
        return np.clip(q, -fmt.qmax - 1, fmt.qmax), s16, None
    levels = 2**fmt.n_bits - 1
    # The range always contains 0 (as in GPTQ/HQQ) so that the clamped zero point is representable.
    lo, hi = np.minimum(Rg.min(axis=2), 0.0), np.maximum(Rg.max(axis=2), 0.0)
    s16 = _stored_scale(np.maximum((hi - lo) / levels, 1e-10))
    sd = s16.astype(np.float64)
    safe = np.where(sd > 0, sd, 1.0)
    z0 = np.where(sd > 0, np.clip(np.rint(-lo / safe), 0, levels), 0.0)
    q = np.where(sd[..., None] > 0, np.rint(Rg / safe[..., None]) + z0[..., None], 0.0)
    return np.clip(q, 0, levels), s16, z0.astype(np.uint8)


def _dequantize_int(cg, scales, zero_points, fmt, format_scale):
    q = cg.astype(np.float32)
    if zero_points is not None:
        q = q - np.asarray(zero_points).astype(np.float32)[..., None]
    return q * np.asarray(scales).astype(np.float32)[..., None]


def _fake_int(Rg, fmt, scale_gradient):
    import torch

    if fmt.symmetric:
        amax = Rg.abs().amax(dim=2, keepdim=True)
        if scale_gradient == "pnorm":
            # Forward value: the exact AbsMax; gradient: that of the smooth ||r_g||_16 (reaches every large entry).
            p = (Rg.abs() / amax.detach().clamp_min(1e-30)).pow(16).sum(dim=2, keepdim=True).pow(1 / 16)
            smooth = p * amax.detach()
            amax = amax.detach() + smooth - smooth.detach()
        s = amax.clamp_min(1e-10) / fmt.qmax
        if not scale_gradient:
            s = s.detach()
        return torch.clamp(_round_ste(Rg / s), -fmt.qmax - 1, fmt.qmax) * s
    levels = 2**fmt.n_bits - 1
    lo, hi = Rg.amin(dim=2, keepdim=True).clamp_max(0), Rg.amax(dim=2, keepdim=True).clamp_min(0)
    s = ((hi - lo) / levels).clamp_min(1e-10)
    if not scale_gradient:
        s, lo = s.detach(), lo.detach()
    z = torch.clamp(torch.round(-lo / s), 0, levels).detach()
    q = torch.clamp(_round_ste(Rg / s) + z, 0, levels)
    return (q - z) * s


def _lut_int(signed, scales, scales_f32, format_scale):
    lut = np.arange(16, dtype=np.float32)
    if signed:
        lut = np.where(lut >= 8, lut - 16, lut).astype(np.float32)
    return lut, scales_f32


# ----------------------------------------------------------------------------------------------- FP4 (E2M1)
def _quantize_mxfp4(Rg, fmt, format_scale):
    amax = np.abs(Rg).max(axis=2)
    with np.errstate(divide="ignore"):
        if fmt.mx_scale_rule == "ceil":
            e = np.ceil(np.log2(np.where(amax > 0, amax / 6.0, 2.0**-127)))
        else:
            e = np.floor(np.log2(np.where(amax > 0, amax, 2.0**-125))) - 2
    e = np.clip(e, -127, 127)
    return e2m1_encode(Rg / 2.0 ** e[..., None]), (e + 127).astype(np.uint8), None


def _dequantize_mxfp4(cg, scales, zero_points, fmt, format_scale):
    return e2m1_decode(cg) * np.exp2(np.asarray(scales).astype(np.float32) - np.float32(127))[..., None]


def _quantize_nvfp4(Rg, fmt, format_scale):
    amax = np.abs(Rg).max(axis=2)
    scales = e4m3_encode(amax / (6.0 * format_scale))
    eb = e4m3_decode(scales).astype(np.float64) * format_scale
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(eb[..., None] > 0, Rg / np.where(eb > 0, eb, 1.0)[..., None], 0.0)
    return e2m1_encode(u), scales, None


def _dequantize_nvfp4(cg, scales, zero_points, fmt, format_scale):
    return e2m1_decode(cg) * (e4m3_decode(scales)[..., None] * np.float32(format_scale))


def _fake_fp4(power_of_two):
    def fake(Rg, fmt, scale_gradient):
        import torch

        grid = torch.as_tensor(E2M1_GRID, dtype=Rg.dtype, device=Rg.device)
        amax = Rg.abs().amax(dim=2, keepdim=True).detach()
        if power_of_two:
            s = torch.exp2(torch.clamp(torch.floor(torch.log2(amax.clamp_min(2.0**-125))) - 2, -127, 127))
        else:
            s = (amax / 6.0).clamp_min(1e-30)
        u = Rg / s
        mids = torch.as_tensor(_E2M1_MIDS, dtype=Rg.dtype, device=Rg.device)
        idx = torch.bucketize(u.abs().detach(), mids, right=True)
        snapped = torch.sign(u.detach()) * grid[idx]
        return (u + (snapped - u).detach()) * s

    return fake


def _lut_mxfp4(signed, scales, scales_f32, format_scale):
    import torch

    return _E2M1_SIGNED.astype(np.float32), torch.exp2(scales.float() - 127.0)


def _lut_nvfp4(signed, scales, scales_f32, format_scale):
    import torch

    return _E2M1_SIGNED.astype(np.float32), torch.from_numpy(e4m3_decode(scales.cpu().numpy())) * float(format_scale)


# ----------------------------------------------------------------------------------------------- the table
@dataclass(frozen=True)
class ElementFormat:
    """One element format: its fixed block (None: any group size), storage cost and group codecs."""

    block: int | None  # group size fixed by the format (FP4 block formats), None for INT
    default_group: int
    scale_bits: int  # bits of one stored group scale
    tensor_scale_bits: int  # bits of the per-tensor scale (NVFP4 keeps a second, FP32 one)
    second_scale: bool  # group scales relative to a per-tensor ``format_scale`` (NVFP4's E4M3 range needs one)
    quantize: Callable  # (grouped values (m, G, g), fmt, format_scale) -> (codes, scales, zero points | None)
    dequantize: Callable  # (grouped codes, scales, zero points, fmt, format_scale) -> grouped float32 values
    fake_quantize: Callable  # torch (grouped values, fmt, scale_gradient) -> straight-through values
    lut: Callable  # (signed, scales tensor, float32 scales, format_scale) -> (16 code values, group scales)

    @property
    def is_fp(self):
        return self.block is not None


FORMATS = {
    "int": ElementFormat(None, 128, 16, 32, False, _quantize_int, _dequantize_int, _fake_int, _lut_int),
    "mxfp4": ElementFormat(32, 32, 8, 32, False, _quantize_mxfp4, _dequantize_mxfp4, _fake_fp4(True), _lut_mxfp4),
    "nvfp4": ElementFormat(16, 16, 8, 64, True, _quantize_nvfp4, _dequantize_nvfp4, _fake_fp4(False), _lut_nvfp4),
}


def _round_ste(u):
    return u + (u.round() - u).detach()  # torch.round is half-to-even


