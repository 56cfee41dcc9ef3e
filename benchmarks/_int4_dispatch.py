"""Measure the CPU paths of ``TwinQuantLinear.forward`` per row count M: the source of its dispatch rule.

``python -m benchmarks._int4_dispatch [--quick]`` prints, per layer shape, rank and M, the CPU time (one
thread, ``time.thread_time``, median of repeats) of fp32 ``F.linear`` and of each path the module can run:
``torch_int4`` (torch's CPU int4 op, bf16 activations), ``numba_lut4`` (the numba LUT kernel),
``dequantize`` (dequantize the weight per call, then fp32 GEMM). ``CPU_MAX_ROWS`` in
``sklearn_frontier/quantization/_linear.py`` holds the crossing points of these rows. The full run writes its table
to ``benchmarks/results/int4_dispatch.md`` (the measurement behind the rule; ``--quick`` only prints).

The column "auto" is what ``TwinQuantLinear`` picks with the rule above.
"""

import argparse
import pathlib
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

from sklearn_frontier.quantization import SVDQuantizer, TwinQuantLinear, _linear


def _cpu_ms(fn, repeats):
    fn()
    out = []
    for _ in range(repeats):
        t0 = time.thread_time()
        fn()
        out.append(time.thread_time() - t0)
    return 1e3 * statistics.median(out)


def _layer(m, n, rank, seed=0):
    W = (np.random.default_rng(seed).standard_normal((m, n)) / np.sqrt(n)).astype(np.float32)
    qw = SVDQuantizer(rank=rank, group_size=128, n_refinements=0, random_state=0).fit(W).quantize()
    return torch.from_numpy(W), TwinQuantLinear.from_quantized(qw, bias=torch.zeros(m))


def run(shapes, rows, ranks, repeats):
    torch.set_num_threads(1)
    lines = ["| layer | rank | M | fp32 ms | torch_int4 | numba_lut4 | dequantize | auto (path) | best |",
             "|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines))
    saved = dict(_linear.CPU_MAX_ROWS)
    try:
        for m, n in shapes:
            for rank in ranks:
                W, mod = _layer(m, n, rank)
                for M in rows:
                    x = torch.randn(M, n)
                    t32 = _cpu_ms(lambda: F.linear(x, W), repeats)
                    times = {}
                    with torch.no_grad():
                        _linear.CPU_MAX_ROWS["torch_int4"] = (1 << 30, 1 << 30)
                        mod.backend = None
                        times["torch_int4"] = _cpu_ms(lambda: mod(x), repeats)
                        mod.backend = "numba"
                        times["numba_lut4"] = _cpu_ms(lambda: mod(x), max(1, repeats // 4)) if M <= 64 else float("nan")
                        mod.backend = None
                        _linear.CPU_MAX_ROWS["torch_int4"] = (0, 0)
                        times["dequantize"] = _cpu_ms(lambda: mod(x), repeats)
                    with torch.no_grad():
                        _linear.CPU_MAX_ROWS.update(saved)
                        times["auto"] = _cpu_ms(lambda: mod(x), repeats)
                        auto = mod.last_path_
                    best = min((v, k) for k, v in times.items() if v == v and k != "auto")[1]
                    cells = " | ".join(f"{t32 / v:.2f}x" if v == v else "-" for v in times.values())
                    lines.append(f"| {m}x{n} | {rank} | {M} | {t32:.3f} | {cells} ({auto}) | {best} |")
                    print(lines[-1], flush=True)
    finally:
        _linear.CPU_MAX_ROWS.update(saved)
        mod.backend = None
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    shapes = [(1536, 384), (384, 1536)] if args.quick else [(4096, 4096), (1536, 384), (384, 1536)]
    rows = [1, 64, 256] if args.quick else [1, 4, 8, 16, 32, 64, 128, 256]
    head = "cells: fp32 F.linear time / path time (one thread, CPU time); higher is faster"
    print(head)
    lines = run(shapes, rows, [0, 8], repeats=5 if args.quick else 9)
    if not args.quick:
        out = pathlib.Path(__file__).resolve().parent / "results" / "int4_dispatch.md"
        out.write_text("# int4_dispatch\n\nReproduce: `OMP_NUM_THREADS=1 python -m benchmarks._int4_dispatch`"
                       f" (torch {torch.__version__})\n\n{head}\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
