"""W4A8 CPU kernel vs fp32 ``F.linear``, raw kernel and through ``TwinQuantLinear``; ratios measured in one run.

``python -m benchmarks.w4a8 [--threads 1 2]`` writes ``benchmarks/results/w4a8.md``.

* kernel rows: ``w4a8_matmul`` on symmetric INT4 g128 codes (rank 0), weights cycled over 4 layers so they come
  from memory as inside a model, calls interleaved with fp32 ``F.linear`` on the same shapes, median of 7.
* module rows: ``TwinQuantLinear`` (SVD rank 8, g128, bias) with ``act_quant="int8"`` and ``None`` vs an fp32
  ``nn.Linear``, median of 30 interleaved calls (the Python around the kernel included).
"""

import argparse
import pathlib
import statistics
import time

import numpy as np
import torch
from sklearn_frontier.kernels.quantization import pack_w4a8
from sklearn_frontier.kernels.quantization._numba import placeholders, w4a8_entry

from sklearn_frontier.quantization import SVDQuantizer, TwinQuantLinear


def kernel_row(N, K, M, rng, layers=4, g=128):
    mats = []
    for _ in range(layers):
        codes = rng.integers(-8, 8, size=(N, K)).astype(np.int8)
        p = pack_w4a8(codes, (rng.random((N, K // g)) + 0.1).astype(np.float32), None, g)
        mats.append((p, torch.randn(N, K)))
    x = rng.standard_normal((M, K)).astype(np.float32)
    xt = torch.from_numpy(x)
    t0, z0, d0, u0, b0 = placeholders(K, N)
    fn = w4a8_entry(mats[0][0][0].size, M, torch.get_num_threads())

    def q():
        for (p, s, _), _w in mats:
            fn(x, x, t0, False, p, s, z0, False, g, np.float32(1.0), d0, u0, b0, False)

    def f():
        for _, w in mats:
            torch.nn.functional.linear(xt, w)

    q(), f()
    tq, tf = [], []
    for _ in range(7):
        a = time.perf_counter()
        q()
        tq.append((time.perf_counter() - a) / layers)
        a = time.perf_counter()
        f()
        tf.append((time.perf_counter() - a) / layers)
    return statistics.median(tf) * 1e3, statistics.median(tq) * 1e3


def module_row(m, n, M):
    W = np.random.default_rng(0).standard_normal((m, n)).astype(np.float32)
    qw = SVDQuantizer(rank=8, group_size=128).fit(W).quantize()
    mods = {a: TwinQuantLinear.from_quantized(qw, bias=torch.zeros(m), act_quant=a) for a in ("int8", None)}
    lin = torch.nn.Linear(n, m)
    x = torch.randn(M, n)
    fns = {"fp32": lambda: lin(x), "int8": lambda: mods["int8"](x), "none": lambda: mods[None](x)}
    res = {k: [] for k in fns}
    with torch.no_grad():
        for fn in fns.values():
            fn()
        for _ in range(30):
            for k, fn in fns.items():
                a = time.perf_counter()
                fn()
                res[k].append(time.perf_counter() - a)
    med = {k: statistics.median(v) * 1e3 for k, v in res.items()}
    return med, mods["int8"].last_path_, mods[None].last_path_


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1])
    args = parser.parse_args(argv)
    lines = ["# w4a8", "", f"Reproduce: `python -m benchmarks.w4a8 --threads {' '.join(map(str, args.threads))}` "
             f"(torch {torch.__version__}; shared, noisy 2-core machine: ratios are same-run medians)", "",
             "## kernel (rank 0, weights cycled over 4 layers)", "",
             "| threads | layer (N x K) | M | fp32 ms | w4a8 ms | speedup |", "|---|---|---|---|---|---|"]
    rng = np.random.default_rng(0)
    for th in args.threads:
        torch.set_num_threads(th)
        for N, K, M in [(4096, 4096, 1), (4096, 4096, 4), (4096, 4096, 64), (1536, 384, 1), (384, 1536, 1),
                        (1536, 384, 128), (384, 1536, 256)]:
            f, q = kernel_row(N, K, M, rng)
            lines.append(f"| {th} | {N}x{K} | {M} | {f:.3f} | {q:.3f} | {f / q:.2f}x |")
            print(lines[-1], flush=True)
    lines += ["", "## module (TwinQuantLinear, SVD rank 8, g128, bias; Python overhead included)", "",
              "| threads | layer | M | fp32 ms | act_quant=int8 (path) | act_quant=None (path) |",
              "|---|---|---|---|---|---|"]
    for th in args.threads:
        torch.set_num_threads(th)
        for (m, n) in [(1536, 384), (384, 1536), (384, 384)]:
            for M in (1, 12, 64, 190):
                med, p8, pn = module_row(m, n, M)
                lines.append(f"| {th} | {m}x{n} | {M} | {med['fp32']:.3f} | {med['fp32'] / med['int8']:.2f}x ({p8}) "
                             f"| {med['fp32'] / med['none']:.2f}x ({pn}) |")
                print(lines[-1], flush=True)
    out = pathlib.Path(__file__).resolve().parent / "results" / "w4a8.md"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
