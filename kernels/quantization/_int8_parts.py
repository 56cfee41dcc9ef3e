"""The float parts both twins of ``int8_matmul`` share (activation rounding, epilogue): the twins then differ
only in how the integer products are summed."""


def quantize_rows_int8(xr):
    """Per-row symmetric int8 activations: ``xq = round(xr / s)``, ``s = amax / 127`` (1 for a zero row), torch.

    Shared by both twins of :func:`int8_matmul`, which then differ only in how the integer products are summed.
    """
    import torch

    s = xr.abs().amax(dim=1, keepdim=True).div_(127.0)
    s = torch.where(s > 0, s, torch.ones_like(s))
    xq = torch.round(xr / s).clamp_(-127, 127).to(torch.int8)
    return xq, s


def int8_epilogue(acc, s_row, ch_scale, x, tensor_scale, down, up_t, bias):
    """``ts (acc s_row ch + (x down^T) up_t) + bias`` in float32 (both twins of :func:`int8_matmul`)."""
    import torch

    y = torch.mul(acc, s_row)  # int32 x float32 -> float32 in one pass
    y.mul_(ch_scale if tensor_scale == 1.0 else ch_scale * tensor_scale)
    if down is not None:
        y.addmm_(x @ down.T, up_t, alpha=tensor_scale)
    return y if bias is None else y.add_(bias)
