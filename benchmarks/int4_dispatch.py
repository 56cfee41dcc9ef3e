"""Every CPU path of ``TwinQuantLinear`` per row count M, beside fp32 and what the measured dispatch picks.

``python -m benchmarks int4_dispatch [--quick]`` (one thread). Per layer shape (out × in), stored weight (RTN
g128 rank 0; rank 8 + residual g128, TwinQuant's stored format, fitted by SVD to keep the run short: the kernels
and their speed depend on the format, not on how the factors were fitted) and M, the wall time of fp32
``F.linear``, of the module with every candidate path forced (``w4a8``: numba, int8 activations per 32-block;
``int8``: per-row int8 activations, per-channel int8 weights, ``torch._int_mm``; ``torch_int4``: torch's int4 op,
bf16 activations; ``dequantize``: decode + one fp32 GEMM), of the module as dispatched (``auto``: the measured
choice, its decisions forgotten at the start of the run so that they are measured here) and of torch's raw
int4 operator on RTN codes (the baseline). Calls interleaved, medians of repeats (``ms_per_seed`` holds every
repeat, ``ms_sd`` their sd); weights stay hot in cache (one layer: this isolates compute and per-call cost;
``twinquant_kernel`` cycles copies larger than the cache). ``rel_err``: relative squared output error against
the exact product with the dequantized weight. ``prepare_ms``: what measuring the layer's dispatch decisions
cost. Writes ``benchmarks/results/int4_dispatch.{json,md}`` (``results/quick/`` with ``--quick``).
"""

import argparse
import os
import statistics
import time

from benchmarks._harness import write_results

PATHS = ("w4a8", "int8", "torch_int4", "dequantize")
COLUMNS = ["case", "M", "weights", "method", "path", "ms", "ms_sd", "speedup_vs_fp32", "rel_err", "prepare_ms",
           "target"]


def _target(N, K, M):
    if (N, K) == (4096, 4096):
        return {1: ">= 2.5x", 16: ">= 1.5x", 64: ">= 1.3x", 496: ">= 1.0x"}.get(M, "")
    return {1: ">= 1.5x", 64: ">= 1.3x", 496: ">= 1.0x"}.get(M, "")


def _interleaved(fns, budget_s, min_repeats=5, max_repeats=30):
    for fn in fns.values():
        fn()
    out = {k: [] for k in fns}
    start = time.perf_counter()
    for i in range(max_repeats):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            out[k].append(1e3 * (time.perf_counter() - t0))
        if i + 1 >= min_repeats and time.perf_counter() - start > budget_s:
            break
    return out


def _layers(N, K):
    import torch

    from benchmarks.twinquant_kernel import TorchInt4Floor
    from sklearn_frontier.quantization import RTNQuantizer, SVDQuantizer, TwinQuantLinear

    torch.manual_seed(N * 7 + K)
    lin = torch.nn.Linear(K, N)
    W = lin.weight.detach().numpy()
    mods = {"RTN g128": TwinQuantLinear.from_quantized(RTNQuantizer(group_size=128).fit(W).quantize(),
                                                       bias=lin.bias),
            "rank 8 + g128": TwinQuantLinear.from_quantized(
                SVDQuantizer(rank=8, group_size=128, random_state=0).fit(W).quantize(), bias=lin.bias)}
    return lin, mods, TorchInt4Floor(lin)


def run(shapes, rows, budget_s):
    import torch
    import torch.nn.functional as F

    from sklearn_frontier.quantization import _cpu_dispatch

    torch.set_num_threads(1)
    out = []
    for N, K in shapes:
        lin, mods, floor = _layers(N, K)
        out.append(_int8_copy_row(N, K, mods["RTN g128"]))
        for M in rows:
            x = torch.randn(M, K, generator=torch.Generator().manual_seed(M))
            fns = {("fp32", "F.linear"): lambda x=x: F.linear(x, lin.weight, lin.bias),
                   ("RTN g128", "torch int4 op (raw)"): lambda x=x: floor(x)}
            exact = {}
            for wname, mod in mods.items():
                with torch.no_grad():
                    exact[wname] = x.double() @ mod.dequantize().double().T + lin.bias.detach().double()
                for path in PATHS:
                    if path in mod._fast.plan.runners:
                        fns[(wname, path)] = lambda mod=mod, path=path, x=x: _forced(mod, path, x)
                fns[(wname, "auto")] = lambda mod=mod, x=x: mod(x)
            with torch.no_grad():
                times = _interleaved(fns, budget_s)
                outs = {k: fn() for k, fn in fns.items()}
                auto_paths = {}
                for w, m in mods.items():  # the path the dispatch picks for M rows
                    m(x)
                    auto_paths[w] = m.last_path_
            base = statistics.median(times[("fp32", "F.linear")])
            for (wname, method), per in times.items():
                ms = statistics.median(per)
                row = {"case": f"{N}x{K}", "M": M, "weights": wname, "method": method, "ms": ms,
                       "ms_sd": statistics.stdev(per), "ms_per_seed": per, "speedup_vs_fp32": base / ms}
                if wname in mods:
                    ref = exact[wname]
                    y = outs[(wname, method)].double()
                    row["rel_err"] = float(((y - ref) ** 2).sum() / (ref**2).sum())
                    row["path"] = auto_paths[wname] if method == "auto" else method
                    if method == "auto":
                        table = mods[wname].dispatch_table_
                        row["prepare_ms"] = sum(r.prepare_ms for r in table if r.source == "measured"
                                                and r.bucket == _cpu_dispatch.BUCKETS[_cpu_dispatch.bucket_of(M)][0])
                        row["target"] = _target(N, K, M)
                out.append(row)
            print(f"{N}x{K} M={M}: " + ", ".join(f"{w}/{m} {base / statistics.median(v):.2f}x"
                                                for (w, m), v in times.items()), flush=True)
    return out


def _int8_copy_row(N, K, mod):
    """Keep the int8 weight or rebuild it per call? Its build time (unpack + decode + re-quantize) and bytes."""
    per = []
    for _ in range(3):
        t0 = time.perf_counter()
        wq, _ = mod._build_int8()
        per.append(1e3 * (time.perf_counter() - t0))
    four = sum(t.numel() * t.element_size() for t in mod.state_dict().values())
    return {"case": f"{N}x{K}", "M": "-", "weights": "RTN g128", "method": "int8 weight build (per call if rebuilt)",
            "ms": statistics.median(per), "ms_sd": statistics.stdev(per), "ms_per_seed": per,
            "path": f"int8 copy {wq.numel()} B beside a 4-bit state of {four} B"}


def _forced(mod, path, x):
    from sklearn_frontier.quantization import _cpu_dispatch

    with _cpu_dispatch.force_path(path):
        return mod(x)


def main(argv=None):
    import torch

    from sklearn_frontier.quantization import _cpu_dispatch

    parser = argparse.ArgumentParser(prog="python -m benchmarks int4_dispatch")
    parser.add_argument("--quick", action="store_true", help="two shapes, three row counts, shorter timings")
    args = parser.parse_args(argv)
    os.environ.setdefault(_cpu_dispatch.ENV, "reset")  # decisions measured in this run, on this machine
    started = time.perf_counter()
    shapes = [(1536, 384), (384, 1536)] if args.quick else [(4096, 4096), (1536, 384), (384, 1536)]
    rows = [1, 16, 64] if args.quick else [1, 2, 8, 16, 64, 128, 496]
    result = run(shapes, rows, budget_s=0.3 if args.quick else 1.0)
    for r in result:
        if r.get("target"):
            r["met"] = r["speedup_vs_fp32"] >= float(r["target"].split()[1].rstrip("x"))
    met = [r for r in result if "met" in r]
    notes = (f"CPU: {_cpu_dispatch.cpu_model()} (torch SIMD level {torch.backends.cpu.get_cpu_capability()}, "
             f"torch {torch.__version__}), one torch thread. The machine is shared with other busy sessions (2 "
             "cores): candidates interleaved, medians of repeats, ratios within one run. `auto` = the module as "
             "dispatched (decisions measured in this run: `prepare_ms` is the probing time of the decision for "
             f"that row count). Targets met by `auto`: {sum(r['met'] for r in met)} of {len(met)}. "
             f"Total wall time {time.perf_counter() - started:.0f} s.")
    text = write_results("int4_dispatch", result, command="python -m benchmarks int4_dispatch"
                         + (" --quick" if args.quick else ""), notes=notes, columns=COLUMNS + ["met"])
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
