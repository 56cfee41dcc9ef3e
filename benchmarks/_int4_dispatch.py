"""Measure the CPU paths of ``TwinQuantLinear.forward`` per row count M: the source of its dispatch rule.

``python -m benchmarks._int4_dispatch [--quick]`` prints, per layer shape, rank and M, the CPU time (one
thread, ``time.thread_time``, median of repeats) of fp32 ``F.linear`` and of each path the module can run:
``w4a8`` (the numba int8-activation kernel), ``torch_int4`` (torch's CPU int4 op, bf16 activations),
``numba_lut4`` (the numba LUT kernel), ``dequantize`` (decode the residual per call into a reused buffer, then
one fp32 GEMM). Weights stay hot in cache here (one layer), so these rows isolate compute and Python overhead.
``CPU_MAX_ROWS`` in ``sklearn_frontier/quantization/_linear.py`` holds the crossing points of these rows. The full
run writes its table to ``benchmarks/results/int4_dispatch.md`` (the measurement behind the rule; ``--quick``
only prints).

The columns "auto" are what ``TwinQuantLinear`` picks with the rule above, for ``act_quant="int8"`` and None.
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
    return torch.from_numpy(W), {aq: TwinQuantLinear.from_quantized(qw, bias=torch.zeros(m), act_quant=aq)
                                 for aq in ("int8", None)}


PATHS = ("w4a8", "torch_int4", "numba_lut4", "dequantize")


def _forced(path):
    """CPU_MAX_ROWS that make ``path`` run at every M (the dequantize path: every packed kernel off)."""
    big, off = (1 << 30, 1 << 30), (0, 0)
    return {k: (big if k == path else off) for k in _linear.CPU_MAX_ROWS}


def run(shapes, rows, ranks, repeats):
    torch.set_num_threads(1)
    lines = ["| layer | rank | M | fp32 ms | " + " | ".join(PATHS) + " | auto int8 (path) | auto None (path) | best |",
             "|---|---|---|---|" + "---|" * (len(PATHS) + 3)]
    print("\n".join(lines))
    saved = dict(_linear.CPU_MAX_ROWS)
    try:
        for m, n in shapes:
            for rank in ranks:
                W, mods = _layer(m, n, rank)
                for M in rows:
                    x = torch.randn(M, n)
                    t32 = _cpu_ms(lambda: F.linear(x, W), repeats)
                    times = {}
                    with torch.no_grad():
                        for path in PATHS:
                            mod = mods["int8" if path == "w4a8" else None]
                            _linear.CPU_MAX_ROWS.update(_forced(path))
                            if path == "numba_lut4":
                                mod.backend = "numba"
                            mod.refresh()
                            reps = max(1, repeats // 4) if path == "numba_lut4" else repeats
                            times[path] = _cpu_ms(lambda mod=mod: mod(x), reps) if M <= 64 or path != "numba_lut4" \
                                else float("nan")
                            mod.backend = None
                        _linear.CPU_MAX_ROWS.update(saved)
                        auto = {}
                        for aq, mod in mods.items():
                            mod.refresh()
                            auto[aq] = (_cpu_ms(lambda mod=mod: mod(x), repeats), mod.last_path_)
                    best = min((v, k) for k, v in times.items() if v == v)[1]
                    cells = " | ".join(f"{t32 / v:.2f}x" if v == v else "-" for v in times.values())
                    autos = " | ".join(f"{t32 / auto[aq][0]:.2f}x ({auto[aq][1]})" for aq in ("int8", None))
                    lines.append(f"| {m}x{n} | {rank} | {M} | {t32:.3f} | {cells} | {autos} | {best} |")
                    print(lines[-1], flush=True)
    finally:
        _linear.CPU_MAX_ROWS.update(saved)
    return lines


def _cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "CPU")
    except OSError:
        import platform

        return platform.processor() or "CPU"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    shapes = [(1536, 384), (384, 1536)] if args.quick else [(4096, 4096), (1536, 384), (384, 1536), (384, 384)]
    rows = [1, 64, 256] if args.quick else [1, 2, 4, 8, 16, 32, 64, 128, 256, 1024]
    head = "cells: fp32 F.linear time / path time (one thread, CPU time); higher is faster"
    print(head)
    lines = run(shapes, rows, [8] if args.quick else [0, 8], repeats=5 if args.quick else 9)
    if not args.quick:
        out = pathlib.Path(__file__).resolve().parent / "results" / "int4_dispatch.md"
        kind = _linear._cpu_kind()
        section = (f"## {kind} rule: {_cpu_model()} (torch capability "
                   f"{torch.backends.cpu.get_cpu_capability()}, torch {torch.__version__})\n\n{head}\n\n"
                   + "\n".join(lines) + "\n")
        # one section per kind of CPU: a run replaces its own kind's table and keeps the others
        old = out.read_text(encoding="utf-8").split("\n## ")[1:] if out.exists() else []
        kept = ["## " + part.rstrip("\n") + "\n" for part in old if not part.startswith(f"{kind} rule")]
        out.write_text("# int4_dispatch\n\nReproduce: `OMP_NUM_THREADS=1 python -m benchmarks._int4_dispatch` (a "
                       "section per kind of CPU; `CPU_RULES` in `sklearn_frontier/quantization/_linear.py` is read "
                       "from them)\n\n" + "\n".join([section, *kept]), encoding="utf-8")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
