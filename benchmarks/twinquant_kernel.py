"""Quantized inference on CPU: ``TwinQuantLinear`` (as ``quantize_model`` builds it) vs fp32 ``F.linear``, per layer
and end to end on all-MiniLM-L6-v2.

``python -m benchmarks twinquant_kernel [--quick]`` (run it with ``TRITON_INTERPRET`` unset).

* Layer rows, on 1 and 2 torch threads (``torch.set_num_threads``): (out × in) 4096 × 4096 at M = 1 and 64,
  1536 × 384 and 384 × 1536 at M = 1 and 256, rank 0 and rank 8. Each layer is an ``nn.Linear`` (seeded init)
  quantized through the public API, ``quantize_model(layer, None, method="twinquant", rank=r)`` (default
  format, weight metric, ``max_iter=5`` and a randomized SVD: the stored format, hence the kernel and its speed,
  does not depend on the fit's quality or data, and a data-aware 4096 × 4096 fit takes minutes here), and timed as
  the module users get: the
  ``last_path_`` column records which kernel its forward dispatched to. Same-run anchors: torch's raw int4 op
  (``aten._weight_int4pack_mm_for_cpu``) on round-to-nearest symmetric INT4 g128 codes of the same weight, casts
  to/from bfloat16 included (the floor to match), and HQQ's ``HQQLinear`` (CPU, its pytorch backend, g128) when the
  ``hqq`` package imports. ``rel_err``: ``||y - y_fp32||² / ||y_fp32||²`` on the timed input. Times are medians of
  interleaved calls (wall ms; ``cpu_ms`` = process CPU time per call, all threads).
* End to end: all 36 linear layers of all-MiniLM-L6-v2 quantized by ``quantize_model`` (TwinQuant rank 8, defaults),
  calibration on paragraphs of the bundled corpus (the calibration modules of ``benchmarks/quantization.py``, one
  paragraph per batch so no padding enters the statistics); ``model.encode`` latency for 16 held-out paragraphs and
  for one short text, vs the fp32 model; linear-layer ``state_dict`` bytes; cosine of the embeddings vs fp32 on
  held-out paragraphs. The quantized layers are cached as ``quantize_model`` checkpoints under
  ``~/.cache/sklearn_frontier/benchmarks/`` (``SKLEARN_FRONTIER_BENCH_CACHE``; keyed by a hash of the quantizer
  sources), so reruns skip the ~100 s fit.
* GPU rows (Triton fused kernel vs fp16 ``nn.Linear``) are filled only when CUDA is present.

Writes ``benchmarks/results/twinquant_kernel.json`` and ``.md`` (``results/quick/`` with ``--quick``).
"""

import argparse
import hashlib
import os
import statistics
import time
from pathlib import Path

import numpy as np

from benchmarks._harness import headline_pair, results_dir, write_results

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("SKLEARN_FRONTIER_BENCH_CACHE")
             or Path.home() / ".cache" / "sklearn_frontier" / "benchmarks")  # outside the repository
LAYERS_FULL = [((4096, 4096), (1, 16, 64, 496)), ((1536, 384), (1, 64, 496)), ((384, 1536), (1, 64, 496))]
LAYERS_QUICK = [((4096, 4096), (1, 64)), ((1536, 384), (1, 64, 496))]
RTN_LABEL = "TwinQuantLinear RTN g128 act_quant=int8"
TORCH_INT4 = "torch int4 op, bf16 activations (RTN g128)"
TQ_FAST = {"max_iter": 5, "svd_solver": "randomized"}
E2E_LABEL = "TwinQuant r8 (all 36 layers)"
DEFAULT_ACT_QUANT = "int8"  # TwinQuantLinear's default, for the headline row


def _source_key():
    """Hash of the code a stored quantized weight depends on (quantizers, formats, calibration, packing)."""
    h = hashlib.sha256()
    files = sorted((ROOT / "sklearn_frontier" / "quantization").glob("*.py"))
    files += sorted((ROOT / "kernels" / "quantization").glob("_reference.py"))
    for f in files:
        if f.name not in ("_linear.py", "_cpu_dispatch.py", "_persist.py"):  # forward, dispatch, file I/O: not
            # what is stored
            h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()[:12]


def _quantize(module, calibration, checkpoint=None, **kwargs):
    """``quantize_model`` with a checkpoint folder as cache; a stale or damaged cache is rebuilt."""
    import shutil

    from sklearn_frontier.quantization import quantize_model

    if checkpoint is not None:
        prefix = checkpoint.name.rsplit("_", 1)[0]
        for stale in CACHE.glob(prefix + "_*"):  # caches of older quantizer sources
            if stale.is_dir() and stale != checkpoint:
                shutil.rmtree(stale, ignore_errors=True)
        try:
            return quantize_model(module, calibration, checkpoint=checkpoint, **kwargs)
        except (ValueError, TypeError, KeyError):
            shutil.rmtree(checkpoint, ignore_errors=True)
    return quantize_model(module, calibration, checkpoint=checkpoint, **kwargs)


def _interleaved(fns, min_repeats=3, max_repeats=25, budget_s=1.5, per_repeat=None):
    """Median wall and CPU ms per call of each function, calls interleaved so that load hits all alike
    (``per_repeat``, a dict, receives every repeat's wall ms)."""
    for fn in fns.values():
        fn()  # warm-up (JIT compilation, packing caches)
    wall = {k: [] for k in fns}
    cpu = {k: [] for k in fns}
    start = time.perf_counter()
    for i in range(max_repeats):
        for k, fn in fns.items():
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            cpu[k].append(time.process_time() - c0)
            wall[k].append(time.perf_counter() - w0)
        if i + 1 >= min_repeats and time.perf_counter() - start > budget_s:
            break
    if per_repeat is not None:
        per_repeat.update({k: [1e3 * t for t in v] for k, v in wall.items()})
    return ({k: 1e3 * statistics.median(v) for k, v in wall.items()},
            {k: 1e3 * statistics.median(v) for k, v in cpu.items()}, len(wall[next(iter(fns))]))


# ------------------------------------------------------------------------------------------------ anchors
class TorchInt4Floor:
    """torch's raw CPU int4 op on RTN weights: symmetric INT4, per-group (g) absmax scale in bfloat16."""

    def __init__(self, linear, group_size=128):
        import torch

        W = linear.weight.detach().to(torch.float32)
        N, K = W.shape
        Wg = W.reshape(N, K // group_size, group_size)
        s = (Wg.abs().amax(dim=2) / 7.0).clamp_min(1e-12).to(torch.bfloat16)
        codes = torch.clamp(torch.round(Wg / s.float()[..., None]), -8, 7).to(torch.int32).reshape(N, K)
        self.packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(codes + 8, 1)
        self.scale_zeros = torch.stack([s.T.contiguous(), torch.zeros_like(s.T)], dim=-1).contiguous()
        self.bias = None if linear.bias is None else linear.bias.detach()
        self.group_size = group_size

    def __call__(self, x):
        import torch

        y = torch.ops.aten._weight_int4pack_mm_for_cpu(x.to(torch.bfloat16), self.packed, self.group_size,
                                                       self.scale_zeros).to(torch.float32)
        return y if self.bias is None else y + self.bias


def _hqq_layer(linear, group_size=128):
    """HQQ's ``HQQLinear`` (CPU, pytorch backend) or the reason it is not available."""
    try:
        from hqq.core.quantize import BaseQuantizeConfig, HQQLinear
    except Exception as exc:  # noqa: BLE001 - optional, benchmark-only package
        return None, f"hqq not importable ({type(exc).__name__})"
    import copy

    import torch

    layer = HQQLinear(copy.deepcopy(linear), BaseQuantizeConfig(nbits=4, group_size=group_size),
                      compute_dtype=torch.float32, device="cpu")
    return layer, f"HQQLinear backend {layer.backend}"


def _torchao_status():
    try:
        import torchao
        from torchao.quantization import Int4WeightOnlyConfig, quantize_
    except Exception as exc:  # noqa: BLE001
        return f"torchao not importable ({type(exc).__name__})"
    import torch

    reasons = []
    for fmt in ("plain", "tile_packed_to_4d", "plain_int32", "opaque"):
        try:
            m = torch.nn.Sequential(torch.nn.Linear(256, 64)).to(torch.bfloat16)
            quantize_(m, Int4WeightOnlyConfig(group_size=128, int4_packing_format=fmt))
            m(torch.randn(1, 256, dtype=torch.bfloat16))
            return f"ok:{fmt}"
        except Exception as exc:  # noqa: BLE001
            reasons.append(f"{fmt}: {type(exc).__name__}: {str(exc)[:60]}")
    return f"torchao {torchao.__version__} int4 weight-only has no CPU path here (" + "; ".join(reasons) + ")"


# ------------------------------------------------------------------------------------------------ layer rows
def _rel_err(y, ref):
    return float(((y.double() - ref.double()) ** 2).sum() / (ref.double() ** 2).sum())


#: fp32 bytes the cycled copies of a layer hold together at least: more than any CPU's last-level cache, so that
#: fp32 weights come from memory on every call, as in a model larger than the cache
CYCLE_BYTES = 64 << 20


def _copies(N, K):
    return max(4, -(-CYCLE_BYTES // (4 * N * K)))


def _cycled(modules, x):
    """One call over all copies: the time per layer is the time of this call divided by len(modules)."""
    def run():
        for mod in modules:
            y = mod(x)
        return y

    return run


def _four_bit_bytes(mod):
    return int(sum(t.numel() * t.element_size() for t in mod.state_dict().values()))


def layer_rows(quick, threads_list):
    import copy

    import torch

    rows = []
    key = _source_key()
    for (N, K), Ms in (LAYERS_QUICK if quick else LAYERS_FULL):
        torch.manual_seed(N * 7 + K)
        linear = torch.nn.Linear(K, N)
        L = _copies(N, K)
        fp32 = [copy.deepcopy(linear) for _ in range(L)]  # distinct memory, same values
        quantized = {}
        for label, method in ((_label(8, "int8"), "twinquant"), (RTN_LABEL, "rtn")):
            q = torch.nn.Sequential(torch.nn.Linear(K, N))
            q[0].load_state_dict(linear.state_dict())
            kw = {"rank": 8, "quantizer_params": TQ_FAST} if method == "twinquant" else {"group_size": 128}
            report = _quantize(q, None, checkpoint=CACHE / f"layer_{N}x{K}_{method}_{key}", method=method,
                               random_state=0, act_quant="int8", **kw)
            quantized[label] = ([copy.deepcopy(q[0]) for _ in range(L)], report.layers[0])
        floor = [TorchInt4Floor(lin) for lin in fp32]
        hqq, hqq_note = _hqq_layer(linear)
        bytes4 = _four_bit_bytes(quantized[RTN_LABEL][0][0])
        for threads in threads_list:
            torch.set_num_threads(threads)
            for M in Ms:
                x = torch.randn(M, K, generator=torch.Generator().manual_seed(M))
                fns = {"fp32 F.linear": _cycled(fp32, x)}
                for label, (mods, _) in quantized.items():
                    fns[label] = _cycled(mods, x)
                fns[TORCH_INT4] = _cycled(floor, x)
                if hqq is not None and M == 1:
                    fns["HQQ g128 (HQQLinear, one copy)"] = lambda h=hqq, x=x: h(x)
                with torch.no_grad():
                    reps = {}
                    wall, cpu, n_rep = _interleaved(fns, budget_s=0.5 if quick else 1.5, per_repeat=reps)
                    ref = fp32[-1](x)
                    outs = {k: (fns[k]() if not k.startswith("HQQ") else hqq(x)) for k in fns}
                wall = {k: v / (1 if k.startswith("HQQ") else L) for k, v in wall.items()}
                cpu = {k: v / (1 if k.startswith("HQQ") else L) for k, v in cpu.items()}
                base = wall["fp32 F.linear"]
                for label in fns:
                    row = {"section": "layer", "case": f"{N}x{K} M={M}", "threads": threads, "method": label,
                           "ms": wall[label], "cpu_ms": cpu[label], "speedup_vs_fp32": base / wall[label],
                           "cpu_speedup_vs_fp32": cpu["fp32 F.linear"] / cpu[label],
                           "latency_vs_fp32": wall[label] / base, "rel_err": _rel_err(outs[label], ref),
                           "repeats": n_rep, "copies": 1 if label.startswith("HQQ") else L}
                    per = [v / (1 if label.startswith("HQQ") else L) for v in reps[label]]
                    row.update(ms_per_seed=per, ms_sd=statistics.stdev(per) if len(per) > 1 else float("nan"))
                    if label.startswith("TwinQuantLinear"):
                        mods, rec = quantized[label]
                        row.update(path=mods[-1].last_path_, bits_per_weight=rec["bits_per_weight"])
                        row["target"] = _layer_target(N, K, M)
                        table = mods[-1].dispatch_table_
                        row["prepare_ms"] = sum(r.prepare_ms for r in table if r.source == "measured")
                    elif label.startswith("HQQ"):
                        row["path"] = hqq_note
                    elif label.startswith("torch int4"):
                        row["path"] = "aten._weight_int4pack_mm_for_cpu"
                    else:
                        row["path"] = "F.linear fp32"
                    rows.append(row)
                if M == 1:  # what streaming the 4-bit bytes at the fp32 GEMV's bytes/s would take
                    bw = 4 * N * K / (base * 1e-3)
                    ms = bytes4 / bw * 1e3
                    rows.append({"section": "layer", "case": f"{N}x{K} M={M}", "threads": threads,
                                 "method": "bytes bound (4-bit bytes at the fp32 GEMV's bytes/s)", "ms": ms,
                                 "speedup_vs_fp32": base / ms, "latency_vs_fp32": ms / base,
                                 "path": f"{bytes4} B at {bw / 1e9:.3g} GB/s"})
                print(f"{N}x{K} M={M} threads={threads} ({L} copies): " + ", ".join(
                    f"{k} {v:.3g} ms" for k, v in wall.items()), flush=True)
    return rows


def _per_call_us(fns, calls=200, rounds=9):
    """Best-of-rounds microseconds per call of each function, in this thread's CPU time (``time.thread_time``:
    one-threaded calls, and time spent waiting for a shared core is not counted); rounds interleaved."""
    for fn in fns.values():
        fn()
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for k, fn in fns.items():
            t0 = time.thread_time()
            for _ in range(calls):
                fn()
            best[k] = min(best[k], (time.thread_time() - t0) / calls * 1e6)
    return best


def overhead_rows(quick):
    """Per-call overhead of the module at one row, weights hot (one layer): the module's call against the bare
    kernel it runs on the same prepared arrays, and fp32 ``nn.Linear`` against bare ``F.linear``."""
    import torch
    import torch.nn.functional as F
    from sklearn_frontier.kernels.quantization import int4pack_matmul

    from sklearn_frontier.quantization import SVDQuantizer, TwinQuantLinear

    torch.set_num_threads(1)
    rows = []
    for N, K in ((1536, 384),) if quick else ((1536, 384), (384, 1536), (384, 384)):
        torch.manual_seed(0)
        lin = torch.nn.Linear(K, N)
        x = torch.randn(1, K)
        xn = x.numpy()
        qw = SVDQuantizer(rank=8, group_size=128, random_state=0).fit(lin.weight.detach().numpy()).quantize()
        mods = {aq: TwinQuantLinear.from_quantized(qw, bias=lin.bias, act_quant=aq) for aq in ("int8", None)}
        w4a8, int4 = mods["int8"]._fast, mods[None]._fast
        fns = {"fp32 nn.Linear": lambda: lin(x), "fp32 F.linear (bare)": lambda: F.linear(x, lin.weight, lin.bias),
               "TwinQuantLinear act_quant=int8": lambda: mods["int8"](x),
               "W4A8 kernel (bare: one numba call, low-rank and bias included)":
                   lambda: w4a8.w4a8(xn, xn),
               "TwinQuantLinear act_quant=None": lambda: mods[None](x),
               "torch int4 op (bare, residual only)":
                   lambda: int4pack_matmul(x, *int4.int4_torch, group_size=128, n_out=N)}
        with torch.no_grad():
            us = _per_call_us(fns, calls=50 if quick else 200, rounds=5 if quick else 9)
        pairs = {"fp32 nn.Linear": "fp32 F.linear (bare)",
                 "TwinQuantLinear act_quant=int8": "W4A8 kernel (bare: one numba call, low-rank and bias included)",
                 "TwinQuantLinear act_quant=None": "torch int4 op (bare, residual only)"}
        for label, t in us.items():
            row = {"section": "overhead", "case": f"{N}x{K} M=1, hot", "threads": 1, "method": label, "us": t}
            if label in pairs:
                row["overhead_us"] = t - us[pairs[label]]
                row["path"] = mods["int8" if "int8" in label else None].last_path_ if "Twin" in label else "F.linear"
            rows.append(row)
        print(f"overhead {N}x{K}: " + ", ".join(f"{k} {v:.1f} us" for k, v in us.items()), flush=True)
    return rows


def _label(rank, act_quant):
    return f"TwinQuantLinear r{rank} act_quant={act_quant}"


def _layer_target(N, K, M):
    if (N, K) == (4096, 4096):
        return {1: ">= 2.5x faster", 16: ">= 1.5x faster", 64: ">= 1.3x faster"}.get(M, ">= 1.0x (parity)")
    return {1: ">= 1.5x faster", 64: ">= 1.3x faster"}.get(M, ">= 1.0x (parity)")


def _met(row):
    target, s = row.get("target", ""), row.get("speedup_vs_fp32")
    if s is None:  # not measured (GPU rows without a device)
        return None
    if target.startswith(">= "):
        return s >= float(target.split()[1].rstrip("x"))
    if target.startswith("latency <= "):
        return row["latency_vs_fp32"] <= float(target.split()[2].rstrip("x"))
    return None


# ------------------------------------------------------------------------------------------------ end to end
def _state_bytes(modules):
    return int(sum(t.numel() * t.element_size() for m in modules for t in m.state_dict().values()))


def minilm_rows(quick, threads_list):
    import copy

    import torch

    from benchmarks.quantization import _spread, split_corpus
    from sklearn_frontier.datasets import load_minilm_l6_v2
    from sklearn_frontier.quantization import TwinQuantLinear, quantize_model

    model, _ = load_minilm_l6_v2()
    names = [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    calib_texts, test_texts = split_corpus("headline")
    calibration = [model.tokenizer([t]) for t in _spread(calib_texts, 48)]  # one text a batch: no padding

    def forward(m, batch):
        return m(batch["input_ids"], batch["attention_mask"])

    torch.set_num_threads(max(threads_list))
    variants, info = {}, {}
    for act_quant in ("int8", None):  # the same stored weights (one checkpoint), two activation precisions
        q = copy.deepcopy(model)
        t0, c0 = time.perf_counter(), time.process_time()
        report = _quantize(q, calibration, checkpoint=CACHE / f"minilm_tq_r8_{_source_key()}", method="twinquant",
                           rank=8, forward_fn=forward, random_state=0, n_jobs=2, act_quant=act_quant)
        if not info:
            info = {"quantize_wall_s": time.perf_counter() - t0, "quantize_cpu_s": time.process_time() - c0,
                    "from_cache": sum(bool(r.get("from_checkpoint")) for r in report.layers)}
        variants[act_quant] = (q, report)
    qmods = [m for m in variants[None][0].modules() if isinstance(m, TwinQuantLinear)]
    fmods = [dict(model.named_modules())[n] for n in names]
    fp_bytes, q_bytes = _state_bytes(fmods), _state_bytes(qmods)
    fp_w = sum(m.weight.numel() * 4 for m in fmods)
    q_w = q_bytes - sum(m.bias.numel() * m.bias.element_size() for m in qmods if m.bias is not None)
    emb_texts = _spread(test_texts, 32 if quick else 128)
    cos = {}
    with torch.no_grad():
        ref = model.encode(emb_texts)
        for act_quant, (q, _) in variants.items():
            cos[act_quant] = np.sum(ref * q.encode(emb_texts), axis=1)
        # each path's accuracy alone, every layer forced onto it at every row count: int8 activations (W4A8),
        # bf16 activations (torch's int4 op) and the exact weight-only product (decode + fp32 GEMM)
        for forced, act_quant in (("w4a8", "int8"), ("int8", "int8"), ("torch_int4", None), ("dequantize", None)):
            cos["forced " + forced] = np.sum(ref * _encode_forced(variants[act_quant][0], forced, emb_texts), axis=1)
        # the baseline: torch's own int4 operator on round-to-nearest weights (g128, bf16 activations)
        rtn = copy.deepcopy(model)
        quantize_model(rtn, method="rtn", group_size=128, act_quant=None)
        cos["rtn torch_int4"] = np.sum(ref * _encode_forced(rtn, "torch_int4", emb_texts), axis=1)
        prepare = _prepare_cost(variants["int8"][0], texts=_spread(test_texts, 16))
    texts16 = _spread(test_texts, 16)
    short = ["How do I open a file?"]
    rows = []
    for threads in threads_list:
        torch.set_num_threads(threads)
        for case, texts, target in (("encode 16 texts", texts16, "latency <= 0.85x"),
                                    ("encode 1 short text", short, "latency <= 0.75x")):
            fns = {"fp32": lambda t=texts: model.encode(t)}
            for act_quant, (q, _) in variants.items():
                fns[act_quant] = lambda t=texts, q=q: q.encode(t)
            fns["rtn"] = lambda t=texts: _forced_call(rtn, "torch_int4", t)
            reps = {}
            with torch.no_grad():
                wall, cpu, n_rep = _interleaved(fns, min_repeats=5, max_repeats=25 if len(texts) == 1 else 15,
                                                budget_s=2 if quick else 6, per_repeat=reps)
            for key in fns:
                if key == "rtn":
                    rows.append({"section": "minilm", "case": case, "threads": threads, "method": TORCH_INT4_E2E,
                                 "ms": wall[key], "cpu_ms": cpu[key], "speedup_vs_fp32": wall["fp32"] / wall[key],
                                 "latency_vs_fp32": wall[key] / wall["fp32"], "repeats": n_rep,
                                 "ms_per_seed": reps[key], "ms_sd": statistics.stdev(reps[key]),
                                 "cosine_vs_fp32": float(cos["rtn torch_int4"].mean()),
                                 "path": "torch_int4 (forced, every layer)"})
                    continue
                ours = key != "fp32"
                row = {"section": "minilm", "case": case, "threads": threads,
                       "ms_per_seed": reps[key], "ms_sd": statistics.stdev(reps[key]),
                       "method": f"{E2E_LABEL}, act_quant={key}" if ours else "fp32 nn.Linear", "ms": wall[key],
                       "cpu_ms": cpu[key], "speedup_vs_fp32": wall["fp32"] / wall[key],
                       "cpu_speedup_vs_fp32": cpu["fp32"] / cpu[key],
                       "latency_vs_fp32": wall[key] / wall["fp32"], "repeats": n_rep,
                       "linear_MB": (q_bytes if ours else fp_bytes) / 1e6,
                       "bytes_vs_fp32": q_bytes / fp_bytes if ours else 1.0,
                       "weight_bytes_vs_fp32": q_w / fp_w if ours else 1.0,
                       "cosine_vs_fp32": float(cos[key].mean()) if ours else 1.0,
                       "cosine_min": float(cos[key].min()) if ours else 1.0,
                       "bits_per_weight": variants[key][1].mean_bits_per_weight if ours else 32.0,
                       "path": "F.linear fp32"}
                if ours:
                    layers = [m for m in variants[key][0].modules() if isinstance(m, TwinQuantLinear)]
                    row["path"] = ",".join(sorted({str(m.last_path_) for m in layers}))
                    row["target"] = target
                rows.append(row)
            print(f"MiniLM {case} threads={threads}: " + ", ".join(f"{k} {v:.4g} ms" for k, v in wall.items()),
                  flush=True)
    rows += _model_size_rows(model, variants[DEFAULT_ACT_QUANT][0], fp_bytes, q_bytes, emb_texts, ref)
    info.update(layers=len(qmods), fp32_bytes=fp_bytes, quant_bytes=q_bytes, quant_weight_bytes=q_w,
                fp32_weight_bytes=fp_w, cosine={str(k): float(v.mean()) for k, v in cos.items()},
                n_cosine_texts=len(emb_texts), prepare=prepare)
    return rows, info


TORCH_INT4_E2E = "RTN g128 (all 36 layers), torch int4 op, bf16 activations"


def _forced_call(q, path, texts):
    from sklearn_frontier.quantization import _cpu_dispatch

    with _cpu_dispatch.force_path(path):
        return q.encode(texts)


def _prepare_cost(q, texts):
    """What the measured dispatch costs a fresh process: decisions forgotten (memory and file), one encode of one
    text and one of ``texts``; returns the wall seconds of both calls beside the same calls once decided, the
    number of decisions measured, and the int8 weight bytes built beside the 4-bit state."""
    import torch

    from sklearn_frontier.quantization import TwinQuantLinear, _cpu_dispatch

    layers = [m for m in q.modules() if isinstance(m, TwinQuantLinear)]
    saved = os.environ.get(_cpu_dispatch.ENV)
    os.environ[_cpu_dispatch.ENV] = "reset"
    try:
        _cpu_dispatch.clear_memo()
        for m in layers:
            m.refresh()
        t0 = time.perf_counter()
        with torch.no_grad():
            q.encode(texts[:1]), q.encode(texts)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        with torch.no_grad():
            q.encode(texts[:1]), q.encode(texts)
        warm = time.perf_counter() - t0
    finally:
        if saved is None:
            os.environ.pop(_cpu_dispatch.ENV, None)
        else:
            os.environ[_cpu_dispatch.ENV] = saved
    records = {id(r): r for m in layers for r in m.dispatch_table_ if r.source == "measured"}
    int8_bytes = sum(m._fast.int8[0][0].numel() for m in layers if m._fast.int8 and m._fast.int8[0] is not None)
    chosen = sorted({f"{r.bucket}:{r.path}" for r in records.values()})
    return {"cold_s": cold, "warm_s": warm, "measured": len(records),
            "measure_ms": sum(r.prepare_ms for r in records.values()), "int8_weight_bytes": int8_bytes,
            "chosen": chosen}


def _model_size_rows(model, quantized, fp_linear, q_linear, texts, ref):
    """Whole-model bytes (state_dict) beside linear-layer bytes, with the embedding tables left in fp32 or stored
    as row-wise 8-bit / 4-bit (group 32) codes, and the embedding cosine vs fp32 of each."""
    import copy

    import torch

    from sklearn_frontier.quantization import quantize_model

    whole = _state_bytes([model])
    rows = [{"section": "model_size", "case": "all-MiniLM-L6-v2", "method": "fp32", "whole_model_MB": whole / 1e6,
             "whole_vs_fp32": 1.0, "linear_MB": fp_linear / 1e6, "cosine_vs_fp32": 1.0}]
    for label, bits, group in (("linear layers quantized, embedding tables fp32", None, None),
                               ("+ embedding tables row-wise int8", 8, None),
                               ("+ embedding tables int4, groups of 32", 4, 32)):
        q = quantized
        if bits is not None:
            q = copy.deepcopy(quantized)
            quantize_model(q, embedding_bits=bits, embedding_group_size=group)
        with torch.no_grad():
            cos = np.sum(ref * q.encode(texts), axis=1)
        size = _state_bytes([q])
        rows.append({"section": "model_size", "case": "all-MiniLM-L6-v2", "method": f"{E2E_LABEL}: {label}",
                     "whole_model_MB": size / 1e6, "whole_vs_fp32": size / whole, "linear_MB": q_linear / 1e6,
                     "cosine_vs_fp32": float(cos.mean()), "cosine_min": float(cos.min())})
    return rows


def _encode_forced(q, path, texts):
    """``q.encode(texts)`` with every TwinQuantLinear on ``path`` at every row count."""
    from sklearn_frontier.quantization import TwinQuantLinear, _cpu_dispatch

    layers = [m for m in q.modules() if isinstance(m, TwinQuantLinear)]
    with _cpu_dispatch.force_path(path):
        out = q.encode(texts)
    assert {m.last_path_ for m in layers} == {path}, {m.last_path_ for m in layers}
    return out


def gpu_rows(quick):
    import torch

    if not (torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET", "0") in ("", "0")):
        return [{"section": "gpu", "case": f"{N}x{K} M=1", "method": "Triton fused vs fp16 nn.Linear",
                 "target": ">= 1.5x faster", "path": "not measured: no device"}
                for N, K in ((4096, 4096), (1536, 384))]
    return _gpu_measured(quick)  # pragma: no cover - needs CUDA


def _gpu_measured(quick):  # pragma: no cover - needs CUDA
    import torch
    import triton

    from sklearn_frontier.quantization import quantize_model

    rows = []
    for N, K in ((4096, 4096), (1536, 384)):
        lin = torch.nn.Linear(K, N)
        q = torch.nn.Sequential(torch.nn.Linear(K, N))
        q[0].load_state_dict(lin.state_dict())
        quantize_model(q, [torch.randn(64, K)], method="twinquant", rank=8, quantizer_params=TQ_FAST, random_state=0)
        q = q.cuda()
        lin16 = lin.half().cuda()
        for M in (1, 16) if quick else (1, 16, 128):
            x = torch.randn(M, K, device="cuda", dtype=torch.float16)
            t_q = triton.testing.do_bench(lambda q=q, x=x: q(x))
            t_16 = triton.testing.do_bench(lambda m=lin16, x=x: m(x))
            rows.append({"section": "gpu", "case": f"{N}x{K} M={M}", "method": "Triton fused vs fp16 nn.Linear",
                         "ms": t_q, "fp16_ms": t_16, "speedup_vs_fp32": t_16 / t_q, "path": q[0].last_path_,
                         "target": ">= 1.5x faster" if M == 1 else "report"})
    return rows


# ------------------------------------------------------------------------------------------------ main
COLUMNS = ["section", "case", "threads", "method", "path", "ms", "ms_sd", "prepare_ms", "cpu_ms", "speedup_vs_fp32",
           "cpu_speedup_vs_fp32",
           "latency_vs_fp32", "us", "overhead_us", "rel_err", "bits_per_weight", "whole_model_MB", "whole_vs_fp32",
           "linear_MB", "bytes_vs_fp32",
           "cosine_vs_fp32", "target", "met"]


def targets_table(rows, e2e_info):
    lines = ["## Targets (ratios within this run)", "", "| case | threads | method | measured | target | met |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("target") and r.get("met") is not None:
            value = (f"{r['latency_vs_fp32']:.3g}x fp32 latency" if r["target"].startswith("latency")
                     else f"fp32 time / its time = {r['speedup_vs_fp32']:.3g}")
            lines.append(f"| {r['case']} | {r['threads']} | {r['method']} ({r['path']}) | {value} | {r['target']} | "
                         f"{'yes' if r['met'] else 'no'} |")
    if e2e_info:
        ratio = e2e_info["quant_weight_bytes"] / e2e_info["fp32_weight_bytes"]
        lines.append(f"| MiniLM linear-weight bytes (36 layers, biases excluded) | - | {E2E_LABEL} | {ratio:.4g}x fp32 "
                     f"(with biases {e2e_info['quant_bytes'] / e2e_info['fp32_bytes']:.4g}x) | <= 0.16x | "
                     f"{'yes' if ratio <= 0.16 else 'no'} |")
        c = e2e_info["cosine"]
        gap = c["forced dequantize"] - c["forced w4a8"]
        lines.append(f"| MiniLM embedding cosine vs fp32, every layer on the int8 path | - | {E2E_LABEL} | "
                     f"{c['forced int8']:.4f} | >= 0.97 | {'yes' if c['forced int8'] >= 0.97 else 'no'} |")
        lines.append(f"| MiniLM embedding cosine vs fp32 ({e2e_info['n_cosine_texts']} held-out paragraphs), every "
                     f"layer on one path at every M | - | {E2E_LABEL} | W4A8 (int8 activations) "
                     f"{c['forced w4a8']:.4f}, torch int4 (bf16 activations) {c['forced torch_int4']:.4f}, "
                     f"weight-only exact {c['forced dequantize']:.4f}: W4A8 gap {gap:.4f} | W4A8 within 0.003 of "
                     f"weight-only | {'yes' if gap <= 0.003 else 'no'} |")
        lines.append(f"| MiniLM embedding cosine vs fp32, as dispatched | - | {E2E_LABEL} | act_quant=int8 "
                     f"{c['int8']:.4f}, act_quant=None {c['None']:.4f} | report | - |")
    return "\n".join(lines)


def main(argv=None):
    import torch

    parser = argparse.ArgumentParser(prog="python -m benchmarks twinquant_kernel")
    parser.add_argument("--quick", action="store_true", help="fewer shapes, one thread count, shorter timings")
    parser.add_argument("--no-minilm", action="store_true", help="skip the end-to-end MiniLM case")
    args = parser.parse_args(argv)
    threads_list = (1,)  # the targets are one-thread ratios
    os.environ.setdefault("SKLEARN_FRONTIER_QUANT_DISPATCH", "reset")  # decisions measured in this run, here
    started = time.perf_counter()
    rows = layer_rows(args.quick, threads_list)
    rows += overhead_rows(args.quick)
    e2e_info, e2e_note = None, ""
    if not args.no_minilm:
        try:
            e2e_rows, e2e_info = minilm_rows(args.quick, threads_list)
            rows += e2e_rows
        except ImportError as exc:
            e2e_note = f"MiniLM case skipped: {exc}"
    rows += gpu_rows(args.quick)
    for r in rows:
        if r.get("target"):
            r["met"] = _met(r)
    torchao = _torchao_status()
    notes = [(f"torch {torch.__version__}, CPU, torch threads as in the `threads` column; wall on a shared machine "
              "(other processes running): compare ratios within a row group, not absolute times."),
             (f"Layer rows: TwinQuant via quantize_model (no calibration data, default format, {TQ_FAST}); "
              "`path` = the module's `last_path_` after the timed calls. Each timed call runs `copies` copies of the "
              f"layer in turn (distinct memory, together >= {CYCLE_BYTES >> 20} MiB of fp32 weights, so fp32 "
              "weights come from memory as in a model larger than the cache; the 4-bit copies of MiniLM-sized "
              "layers fit in cache, which is the point of 4 bits); times are per layer. Anchors: torch int4 op on "
              "RTN g128 codes with bf16 activations (casts included); the bytes bound = the layer's 4-bit "
              "state_dict bytes streamed at the bytes/s the fp32 GEMV reached in the same run; "
              + ("HQQ rows: hqq package, HQQLinear on CPU." if any("HQQ" in str(r.get("method")) for r in rows)
                 else "HQQ: not installed, no rows.") + f" torchao: {torchao}."),
             "GPU rows: " + ("measured." if any(r["section"] == "gpu" and "ms" in r for r in rows)
                             else "not measured: no CUDA device in this run.")]
    if e2e_info:
        notes.append(f"MiniLM: {e2e_info['layers']} layers quantized (TwinQuant rank 8, defaults, random_state=0), "
                     f"{e2e_info['from_cache']} loaded from the checkpoint cache; quantize_model took "
                     f"{e2e_info['quantize_wall_s']:.1f} s wall / {e2e_info['quantize_cpu_s']:.1f} s CPU in this run. "
                     f"linear_MB = state_dict bytes of the 36 layers (biases included): fp32 "
                     f"{e2e_info['fp32_bytes']} B, quantized {e2e_info['quant_bytes']} B. Both act_quant rows hold "
                     "the same stored weights; `path` lists the kernels the layers ran in the last call.")
    if e2e_info:
        pc = e2e_info["prepare"]
        notes.append(f"Dispatch preparation (MiniLM, decisions forgotten, one encode of 1 text then of 16): "
                     f"{pc['cold_s']:.2f} s against {pc['warm_s']:.2f} s once decided; {pc['measured']} decisions "
                     f"measured in {pc['measure_ms']:.0f} ms of probing; chosen (bucket:path) {pc['chosen']}; "
                     f"int8 weight copies built: {pc['int8_weight_bytes']} B (kept beside the 4-bit state of "
                     f"{e2e_info['quant_bytes']} B). Layer rows: `prepare_ms` = probing time of the layer's "
                     "decisions in this run.")
    notes.append(f"CPU: {_cpu_model()}. The machine is shared with other busy sessions (2 cores): candidates are "
                 "interleaved, times are medians of repeats (`ms_per_seed` holds every repeat, `ms_sd` their sd), "
                 "and ratios compare rows of the same run.")
    if e2e_note:
        notes.append(e2e_note)
    notes.append(f"Total benchmark wall time {time.perf_counter() - started:.0f} s.")
    head = None
    if e2e_info:
        head = headline_pair(rows, key="method", ours=[f"{E2E_LABEL}, act_quant={DEFAULT_ACT_QUANT}"], metric="ms",
                             baselines=["fp32 nn.Linear", TORCH_INT4_E2E], cost="linear_MB",
                             context=["cosine_vs_fp32", "latency_vs_fp32"], section="minilm",
                             case="encode 1 short text", threads=1)
    name = "twinquant_kernel"
    text = write_results(name, rows, command="python -m benchmarks twinquant_kernel" + (" --quick" * args.quick),
                         notes="\n\n".join(notes), columns=COLUMNS, headline=head)
    table = targets_table(rows, e2e_info)
    md = results_dir(args.quick) / f"{name}.md"
    md.write_text(md.read_text() + "\n" + table + "\n")
    print(text + "\n" + table)
    return 0


def _cpu_model():
    from sklearn_frontier.quantization._cpu_dispatch import cpu_model

    return cpu_model()
