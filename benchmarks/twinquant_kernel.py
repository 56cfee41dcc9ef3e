"""Dual-component matmul timings: fused kernel vs FP16/FP32 ``F.linear`` and vs the unfused torch path.

``python -m benchmarks twinquant_kernel [--quick]``

* GPU (``torch.cuda.is_available()``; run with ``TRITON_INTERPRET`` unset or 0): the Triton kernel vs
  ``F.linear`` with FP16 weights and vs the unfused torch reference (dequantize + matmul + two low-rank
  matmuls), ``triton.testing.do_bench`` medians, M in {1, 16, 128, 1024, 4096}, (N, K) in {(4096, 4096),
  (11008, 4096), (4096, 11008), (1536, 384)}, r in {0, 32}, group 128. A small-shape correctness check
  against the reference runs first.
* CPU: the numba twin vs an FP32 ``nn.Linear`` (``F.linear``) at M in {1, 8}; ratios reported.
Writes ``benchmarks/results/twinquant_kernel[_quick].json`` and ``.md``.
"""

import argparse
import os
import statistics
import time


from benchmarks._harness import write_results


def _inputs(M, N, K, r, g, device, dtype, seed=0):
    import torch

    from sklearn_frontier.kernels.quantization import pack_int4

    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(M, K, generator=gen).to(dtype)
    codes = torch.randint(-8, 8, (N, K), generator=gen, dtype=torch.int8)
    qweight = torch.from_numpy(pack_int4(codes.numpy()))
    scales = (torch.rand(N, -(-K // g), generator=gen) * 0.02 + 0.001).to(torch.float16)
    up = (torch.randn(N, r, generator=gen) * 0.01).to(torch.float16) if r else None
    down = torch.randn(r, K, generator=gen).to(torch.float16) if r else None
    to = lambda t: None if t is None else t.to(device)  # noqa: E731
    return (to(x), to(qweight), to(scales), None, 1.0, to(up), to(down), None, None, g)


def _time_cpu(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run_gpu(quick):  # pragma: no cover - needs CUDA
    import torch
    import triton

    from sklearn_frontier.kernels.quantization._reference import dequantize_int4_torch
    from sklearn_frontier.kernels.quantization._reference import dual_matmul as ref
    from sklearn_frontier.kernels.quantization._triton import dual_matmul as fused

    rows = []
    # correctness first, small shapes
    for M, N, K, r in [(1, 64, 128, 8), (33, 96, 256, 16), (128, 256, 512, 32)]:
        args = _inputs(M, N, K, r, 64 if K % 64 == 0 else 32, "cuda", torch.float16)
        y, y0 = fused(*args), ref(*args)
        err = float((y.float() - y0.float()).abs().max() / y0.float().abs().max())
        rows.append({"case": f"check M{M} N{N} K{K} r{r}", "backend": "triton", "max_rel_err": err})
    Ms = [1, 16, 128] if quick else [1, 16, 128, 1024, 4096]
    shapes = [(4096, 4096), (1536, 384)] if quick else [(4096, 4096), (11008, 4096), (4096, 11008), (1536, 384)]
    for (N, K) in shapes:
        for M in Ms:
            for r in (0, 32):
                args = _inputs(M, N, K, r, 128, "cuda", torch.float16)
                x, q, s, z, ts, up, down, t, b, g = args
                w16 = (dequantize_int4_torch(q, s, z, g, K)).to(torch.float16)
                if r:
                    w16 = (w16.float() + up.float() @ down.float()).to(torch.float16)
                t_fused = triton.testing.do_bench(lambda: fused(*args))
                t_fp16 = triton.testing.do_bench(lambda: torch.nn.functional.linear(x, w16))
                t_unfused = triton.testing.do_bench(lambda: ref(*args))
                flops = 2 * M * N * K
                rows.append({"case": f"M{M} N{N} K{K} r{r}", "backend": "triton",
                             "fused_ms": t_fused, "fp16_linear_ms": t_fp16, "unfused_torch_ms": t_unfused,
                             "speedup_vs_fp16": t_fp16 / t_fused, "speedup_vs_unfused": t_unfused / t_fused,
                             "fused_tflops": flops / t_fused / 1e9})
    return rows


def run_cpu(quick):
    import torch

    from sklearn_frontier.kernels.quantization._numba import dual_matmul as numba_dual
    from sklearn_frontier.kernels.quantization._reference import dequantize_int4_torch

    rows = []
    shapes = [(1024, 1024), (1536, 384)] if quick else [(4096, 4096), (1536, 384), (1024, 1024)]
    for (N, K) in shapes:
        for M in (1, 8):
            for r in (0, 32):
                args = _inputs(M, N, K, r, 128, "cpu", torch.float32)
                x, q, s, z, ts, up, down, t, b, g = args
                w = dequantize_int4_torch(q, s, z, g, K)
                if r:
                    w = w + up.float() @ down.float()
                t_numba = _time_cpu(lambda: numba_dual(*args), 5 if quick else 20)
                t_linear = _time_cpu(lambda: torch.nn.functional.linear(x, w), 5 if quick else 20)
                rows.append({"case": f"M{M} N{N} K{K} r{r}", "backend": "numba", "numba_ms": 1e3 * t_numba,
                             "fp32_linear_ms": 1e3 * t_linear, "speedup_vs_fp32": t_linear / t_numba})
    return rows


def main(argv=None):
    import torch

    parser = argparse.ArgumentParser(prog="python -m benchmarks twinquant_kernel")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    rows = run_cpu(args.quick)
    gpu = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET", "0") in ("", "0")
    if gpu:  # pragma: no cover
        rows += run_gpu(args.quick)
    notes = ("CPU rows: numba twin (packed int4, fp32 accumulation) vs F.linear on a dense fp32 weight, torch "
             f"threads {torch.get_num_threads()}. " + ("GPU rows measured." if gpu else
             "No CUDA device in this run: GPU rows (fused Triton vs FP16 F.linear and vs unfused) not measured."))
    cols = sorted({k for r in rows for k in r}, key=lambda c: (c not in ("case", "backend"), c))
    name = "twinquant_kernel_quick" if args.quick else "twinquant_kernel"
    print(write_results(name, rows, command="python -m benchmarks twinquant_kernel" + (" --quick" if args.quick
                                                                                       else ""),
                        notes=notes, columns=cols))
    return 0
