"""Triton twin of the fused dual-component matmul (low-rank branch + dequantized int4 residual in one pass).

One program per (BLOCK_M x BLOCK_N) output tile. The K loop reads the x tile as its even and odd columns
(so packed bytes need no interleave: low nibble <-> even column, high nibble <-> odd column), dequantizes
the int4 nibbles with their gathered group scales (minus zero points), accumulates
``acc += (t*x) w^T`` and, in the same loop, ``lr += x down^T`` (BLOCK_M x R_PAD on chip); the epilogue
adds ``tensor_scale * acc + lr up^T + bias`` and stores once.

Under ``TRITON_INTERPRET=1`` (CPU) a single small config runs; on CUDA the launch is autotuned.
"""

import torch
import triton
import triton.language as tl

INTERPRET = bool(getattr(getattr(getattr(triton, "knobs", None), "runtime", None), "interpret", False))

if INTERPRET:
    _CONFIGS = [triton.Config({"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 64}, num_warps=4)]
else:  # pragma: no cover - GPU only
    _CONFIGS = [
        triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, num_warps=w, num_stages=s)
        for bm, bn, bk, w, s in [(16, 64, 64, 4, 3), (16, 128, 64, 4, 3), (32, 64, 64, 4, 3),
                                 (64, 64, 64, 4, 3), (64, 128, 64, 8, 3), (128, 128, 64, 8, 3),
                                 (16, 64, 128, 4, 4), (32, 128, 128, 8, 3)]
    ]


@triton.autotune(configs=_CONFIGS, key=["M", "N", "K"])
@triton.jit
def _dual_matmul_kernel(
    x_ptr, q_ptr, s_ptr, z_ptr, up_ptr, down_ptr, t_ptr, b_ptr, y_ptr,
    M, N, K, group_size, tensor_scale,
    stride_xm, stride_xk, stride_qn, stride_qk, stride_sn, stride_sg,
    stride_un, stride_ur, stride_dr, stride_dk, stride_ym, stride_yn,
    HAS_ZEROS: tl.constexpr, HAS_T: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_LR: tl.constexpr,
    R_PAD: tl.constexpr, FP16_DOT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    HALF: tl.constexpr = BLOCK_K // 2
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_j = tl.arange(0, HALF)
    offs_r = tl.arange(0, R_PAD)
    mask_m = offs_m < M
    mask_n = offs_n < N
    n_bytes = (K + 1) // 2
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    lr = tl.zeros((BLOCK_M, R_PAD), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        col_e = k0 + 2 * offs_j
        col_o = col_e + 1
        byte = k0 // 2 + offs_j
        me = col_e < K
        mo = col_o < K
        xe = tl.load(x_ptr + offs_m[:, None] * stride_xm + col_e[None, :] * stride_xk,
                     mask=mask_m[:, None] & me[None, :], other=0.0).to(tl.float32)
        xo = tl.load(x_ptr + offs_m[:, None] * stride_xm + col_o[None, :] * stride_xk,
                     mask=mask_m[:, None] & mo[None, :], other=0.0).to(tl.float32)
        packed = tl.load(q_ptr + offs_n[:, None] * stride_qn + byte[None, :] * stride_qk,
                         mask=mask_n[:, None] & (byte < n_bytes)[None, :], other=0).to(tl.int32)
        lo = packed & 15
        hi = (packed >> 4) & 15
        se = tl.load(s_ptr + offs_n[:, None] * stride_sn + (col_e // group_size)[None, :] * stride_sg,
                     mask=mask_n[:, None] & me[None, :], other=0.0).to(tl.float32)
        so = tl.load(s_ptr + offs_n[:, None] * stride_sn + (col_o // group_size)[None, :] * stride_sg,
                     mask=mask_n[:, None] & mo[None, :], other=0.0).to(tl.float32)
        if HAS_ZEROS:
            ze = tl.load(z_ptr + offs_n[:, None] * stride_sn + (col_e // group_size)[None, :] * stride_sg,
                         mask=mask_n[:, None] & me[None, :], other=0).to(tl.float32)
            zo = tl.load(z_ptr + offs_n[:, None] * stride_sn + (col_o // group_size)[None, :] * stride_sg,
                         mask=mask_n[:, None] & mo[None, :], other=0).to(tl.float32)
            we = (lo.to(tl.float32) - ze) * se
            wo = (hi.to(tl.float32) - zo) * so
        else:
            lo = tl.where(lo >= 8, lo - 16, lo)
            hi = tl.where(hi >= 8, hi - 16, hi)
            we = lo.to(tl.float32) * se
            wo = hi.to(tl.float32) * so
        if HAS_T:
            te = tl.load(t_ptr + col_e, mask=me, other=0.0).to(tl.float32)
            to = tl.load(t_ptr + col_o, mask=mo, other=0.0).to(tl.float32)
            xte = xe * te[None, :]
            xto = xo * to[None, :]
        else:
            xte = xe
            xto = xo
        if FP16_DOT:
            acc += tl.dot(xte.to(tl.float16), tl.trans(we.to(tl.float16)))
            acc += tl.dot(xto.to(tl.float16), tl.trans(wo.to(tl.float16)))
        else:
            acc += tl.dot(xte, tl.trans(we), input_precision="ieee")
            acc += tl.dot(xto, tl.trans(wo), input_precision="ieee")
        if HAS_LR:
            de = tl.load(down_ptr + offs_r[None, :] * stride_dr + col_e[:, None] * stride_dk,
                         mask=me[:, None], other=0.0).to(tl.float32)
            do = tl.load(down_ptr + offs_r[None, :] * stride_dr + col_o[:, None] * stride_dk,
                         mask=mo[:, None], other=0.0).to(tl.float32)
            lr += tl.dot(xe, de, input_precision="ieee")
            lr += tl.dot(xo, do, input_precision="ieee")
    out = acc * tensor_scale
    if HAS_LR:
        u = tl.load(up_ptr + offs_n[None, :] * stride_un + offs_r[:, None] * stride_ur,
                    mask=mask_n[None, :], other=0.0).to(tl.float32)
        out += tl.dot(lr, u, input_precision="ieee")
    if HAS_BIAS:
        out += tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)[None, :]
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn,
             out.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def _next_pow2(v):
    return 1 << max(0, (int(v) - 1).bit_length())


def dual_matmul(x, qweight, scales, zeros, tensor_scale, up, down, t, bias, group_size):
    """Triton twin of the dual-component matmul (torch tensors; same signature as the reference)."""
    M, K = x.shape
    N = qweight.shape[0]
    dev = x.device
    x = x.contiguous()
    r = 0 if up is None else up.shape[1]
    r_pad = max(16, _next_pow2(r)) if r else 16
    if r:
        up_p = torch.zeros((N, r_pad), dtype=torch.float32, device=dev)
        up_p[:, :r] = up.to(torch.float32)
        down_p = torch.zeros((r_pad, K), dtype=torch.float32, device=dev)
        down_p[:r] = down.to(torch.float32)
    else:
        up_p = torch.zeros((1, 1), dtype=torch.float32, device=dev)
        down_p = torch.zeros((1, 1), dtype=torch.float32, device=dev)
    scales = scales.to(torch.float32).contiguous()
    zeros_t = zeros.contiguous() if zeros is not None else scales
    t_t = t.to(torch.float32).contiguous() if t is not None else scales
    b_t = bias.to(torch.float32).contiguous() if bias is not None else scales
    qweight = qweight.contiguous()
    y = torch.empty((M, N), dtype=x.dtype, device=dev)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))  # noqa: E731
    _dual_matmul_kernel[grid](
        x, qweight, scales, zeros_t, up_p, down_p, t_t, b_t, y,
        M, N, K, int(group_size), float(tensor_scale),
        x.stride(0), x.stride(1), qweight.stride(0), qweight.stride(1), scales.stride(0), scales.stride(1),
        up_p.stride(0), up_p.stride(1), down_p.stride(0), down_p.stride(1), y.stride(0), y.stride(1),
        HAS_ZEROS=zeros is not None, HAS_T=t is not None, HAS_BIAS=bias is not None, HAS_LR=r > 0,
        R_PAD=r_pad, FP16_DOT=(x.dtype == torch.float16 and not INTERPRET),
    )
    return y
