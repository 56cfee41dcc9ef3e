"""Measure the CPU paths of ``TwinQuantLinear.forward`` per row count M: the source of its dispatch rule.

``python -m benchmarks._int4_dispatch [--quick]`` prints, per layer shape, rank and M, the CPU time (one
thread, ``time.thread_time``, median of repeats) of fp32 ``F.linear`` and of each path the module can run:
``torch_int4`` (torch's CPU int4 op, bf16 activations), ``numba_lut4`` (the numba LUT kernel),
``dequantize`` (dequantize the weight per call, then fp32 GEMM). ``TORCH_INT4_MAX_ROWS`` and
``LUT4_MAX_ROWS`` in ``sklearn_frontier/quantization/_linear.py`` are the crossing points of these rows.

Measured on the development machine (2-core AVX2 CPU without AVX512-BF16, shared with other jobs; torch 2.13
CPU; INT4 group 128; fp32 time / path time, rank 0 and rank 8 alike within noise):

* 4096 x 4096: torch_int4 1.3x at M = 1, 3.0x at M = 4, 2.0x at M = 8, 1.1x at M = 32, 0.9x at M = 64,
  0.70x at M = 128 (dequantize 0.60x), 0.61x at M = 256 (dequantize 0.73-0.79x): crossing near M = 192.
* 1536 x 384 and 384 x 1536: torch_int4 0.4-0.55x at M = 1 (the op alone takes ~100 us where fp32 takes
  ~70 us), 1.0-1.1x at M = 4, ~0.5x at M = 64 (dequantize 0.44-0.53x), dequantize ahead from M = 128
  (0.62-0.73x vs 0.48-0.64x): crossing near M = 64.
* numba_lut4 (formats torch's op does not take): 0.03-0.09x at M = 1, ahead of dequantize (0.06x) only at
  M = 1 on 4096 x 4096; dequantize is as fast or faster everywhere else.

The column "auto" is what ``TwinQuantLinear`` picks with the rule above.
"""

import argparse
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

from sklearn_frontier.quantization import SVDQuantizer, TwinQuantLinear
from sklearn_frontier.quantization import _linear


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
    print("cells: fp32 F.linear time / path time (one thread, CPU time); higher is faster")
    run(shapes, rows, [0, 8], repeats=5 if args.quick else 9)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
