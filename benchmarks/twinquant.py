"""TwinQuant vs RTN / SVD+RTN / iterative SVD / smoothed SVD / WUSH over every layer of a generated model.

``python -m benchmarks twinquant [--quick]``. The model is a stack of transformer-like blocks (q, k, v, o
projections of width d, an FFN up (ffn x d) and down (d x ffn) projection, residual adds, GELU) whose weights
come from :func:`make_outlier_weights` (heavy tails, outlier input channels, planted low rank) and whose input
tokens come from :func:`make_outlier_activations`; each layer's calibration and held-out activations are the
FP32 model's own inputs to that layer. Nothing is downloaded (MiniLM is not used: see the notes).

Metrics per layer: held-out relative output error ``||X_test (W_hat - W)^T||^2 / ||X_test W^T||^2``; per method:
mean / median / max over layers, wins vs each baseline, bits per weight (parameter-weighted), quantization
time, and the end-to-end output cosine of the quantized model vs FP32 on held-out tokens.
"""

import argparse
import copy
import time

import numpy as np

from benchmarks._harness import headline_pair, write_results


def build_model(d, ffn, n_blocks, seed):
    import torch

    from sklearn_frontier.datasets import make_outlier_weights

    class Block(torch.nn.Module):
        def __init__(self, i):
            super().__init__()
            self.q, self.k, self.v, self.o = (torch.nn.Linear(d, d) for _ in range(4))
            self.up, self.down = torch.nn.Linear(d, ffn), torch.nn.Linear(ffn, d)
            for j, lin in enumerate((self.q, self.k, self.v, self.o, self.up, self.down)):
                W, _ = make_outlier_weights(lin.out_features, lin.in_features, random_state=seed + 10 * i + j)
                W = W / np.linalg.norm(W, 2)
                with torch.no_grad():
                    lin.weight.copy_(torch.from_numpy(W).float())
                    lin.bias.zero_()

        def forward(self, x):
            # a token-mixing-free "attention" (q*k gate on v) keeps every projection on the data path
            a = self.o(torch.tanh(self.q(x)) * torch.tanh(self.k(x)) * self.v(x))
            h = x + a
            return h + self.down(torch.nn.functional.gelu(self.up(h)))

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = torch.nn.ModuleList(Block(i) for i in range(n_blocks))

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return x

    return Net().eval()


def layer_grams(model, X):
    import torch

    from sklearn_frontier.quantization import CalibrationStats

    stats, hooks = {}, []
    for name, mod in model.named_modules():
        if isinstance(mod, torch.nn.Linear):
            stats[name] = CalibrationStats(mod.in_features, max_samples=0)
            def hook(m, inp, out, name=name):
                stats[name].update(inp[0].double().numpy())

            hooks.append(mod.register_forward_hook(hook))
    with torch.no_grad():
        model(torch.from_numpy(X).float())
    for h in hooks:
        h.remove()
    return stats


def methods(rank, quick):
    from sklearn_frontier.quantization import RTNQuantizer, SVDQuantizer, TwinQuant

    tq_iter = 150
    return {
        "RTN g128": RTNQuantizer(group_size=128),
        "RTN g32": RTNQuantizer(group_size=32),
        "RTN g16": RTNQuantizer(group_size=16),
        f"SVD r{rank}": SVDQuantizer(rank=rank, random_state=0),
        f"iterSVD(8) r{rank}": SVDQuantizer(rank=rank, n_refinements=8, random_state=0),
        f"smoothSVD r{rank}": SVDQuantizer(rank=rank, smooth=True, random_state=0),
        f"TwinQuant-none r{rank}": TwinQuant(rank=rank, residual_transform="none", max_iter=tq_iter, random_state=0),
        f"TwinQuant-none-pnormgrad r{rank}": TwinQuant(rank=rank, residual_transform="none", max_iter=tq_iter,
                                                       scale_gradient="pnorm", random_state=0),
        f"TwinQuant-pnormgrad r{rank}": TwinQuant(rank=rank, max_iter=tq_iter, scale_gradient="pnorm",
                                                  random_state=0),
        f"TwinQuant-identityinit r{rank}": TwinQuant(rank=rank, max_iter=tq_iter, transform_init="identity",
                                                     random_state=0),
        f"TwinQuant r{rank}": TwinQuant(rank=rank, max_iter=tq_iter, random_state=0),
    }


def main(argv=None):
    import torch

    from sklearn_frontier.datasets import make_outlier_activations
    from sklearn_frontier.quantization import WUSHQuantizer, quantize_model

    parser = argparse.ArgumentParser(prog="python -m benchmarks twinquant")
    parser.add_argument("--quick", action="store_true", help="2 blocks of width 256 (12 layers)")
    args = parser.parse_args(argv)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    d, ffn, n_blocks, rank = (256, 768, 2, 8) if args.quick else (384, 1536, 6, 8)
    n_tokens = 1024 if args.quick else 2048
    model = build_model(d, ffn, n_blocks, seed=0)
    X, info = make_outlier_activations(n_tokens, d, random_state=1)
    X = X / np.sqrt(np.mean(X**2))
    X_test = info["sample"](n_tokens, 2) / np.sqrt(np.mean(info["sample"](n_tokens, 2) ** 2))
    calib = [torch.from_numpy(b).float() for b in np.array_split(X, 4)]
    test_stats = layer_grams(model, X_test)
    with torch.no_grad():
        # end-to-end: the blocks' total update out - x (the residual stream alone would hide every error)
        ref_out = model(torch.from_numpy(X_test).float()).numpy() - X_test

    per_layer, summary = {}, []
    candidates = {**methods(rank, args.quick),
                  "WUSH-identity W4A4": WUSHQuantizer(block_transform="identity", act_bits=4),
                  "WUSH-hadamard W4A4": WUSHQuantizer(block_transform="hadamard", act_bits=4),
                  "WUSH-wus W4A4": WUSHQuantizer(block_transform="wus", act_bits=4),
                  "WUSH W4A4": WUSHQuantizer(act_bits=4)}
    for label, est in candidates.items():
        m = copy.deepcopy(model)
        start = time.perf_counter()
        report = quantize_model(m, calib, method=est, random_state=0)
        elapsed = time.perf_counter() - start
        errs = []
        mods = dict(m.named_modules())
        orig = dict(model.named_modules())
        for row in report.layers:
            W = orig[row["name"]].weight.detach().double().numpy()
            H = test_stats[row["name"]].gram_
            if label.endswith("W4A4"):
                # W4A4: held-out error with activation fake-quantization (fresh tokens through the layer input)
                mod = mods[row["name"]]
                Xl = _layer_inputs(model, row["name"], X_test)
                with torch.no_grad():
                    y = mod(torch.from_numpy(Xl).float()).double().numpy() - mod.bias.double().numpy()
                ref = Xl @ W.T
                errs.append(float(np.sum((y - ref) ** 2) / np.sum(ref**2)))
            else:
                E = W - mods[row["name"]].dequantize().double().numpy()
                errs.append(float(np.sum((E @ H) * E) / np.sum((W @ H) * W)))
        with torch.no_grad():
            out = m(torch.from_numpy(X_test).float()).numpy() - X_test
        cos = np.sum(out * ref_out, 1) / (np.linalg.norm(out, axis=1) * np.linalg.norm(ref_out, axis=1))
        per_layer[label] = np.array(errs)
        summary.append({"method": label, "mean_rel_err": float(np.mean(errs)), "median_rel_err": float(np.median(errs)),
                        "max_rel_err": float(np.max(errs)), "bits_per_weight": report.mean_bits_per_weight,
                        "one_minus_mean_cos": float(1 - cos.mean()), "min_cos": float(cos.min()),
                        "quant_time_s": elapsed, "n_layers": len(errs)})
        print(f"{label:34s} mean {np.mean(errs):.4g} bpw {report.mean_bits_per_weight:.4f} "
              f"1-cos {1 - cos.mean():.3g} time {elapsed:.1f}s", flush=True)
    tq = per_layer[f"TwinQuant r{rank}"]
    tqn = per_layer[f"TwinQuant-none r{rank}"]
    for row in summary:
        base = per_layer[row["method"]]
        row["tq_mean_ratio"] = float(np.mean(tq) / np.mean(base))
        row["tq_wins"] = f"{int(np.sum(tq < base))}/{len(base)}"
        row["tq_none_mean_ratio"] = float(np.mean(tqn) / np.mean(base))
        row["tq_none_wins"] = f"{int(np.sum(tqn < base))}/{len(base)}"
    notes = (f"Generated model: {n_blocks} blocks, d={d}, ffn={ffn} ({len(tq)} linear layers), weights from "
             f"make_outlier_weights (normalised to spectral norm 1), tokens from make_outlier_activations "
             f"({n_tokens} calibration, {n_tokens} held-out); cosines compare the model's total update "
             f"(output - input) with FP32's on held-out tokens. INT4 symmetric, group 128, rank {rank}, W4A16 unless "
             "marked W4A4 (INT4 g32 both sides). tq_mean_ratio = mean error of TwinQuant (diag T) / this row's; "
             "tq_wins = layers where TwinQuant is lower. Threads: torch "
             f"{torch.get_num_threads()}.")
    cols = ["method", "bits_per_weight", "mean_rel_err", "median_rel_err", "max_rel_err", "one_minus_mean_cos",
            "min_cos", "quant_time_s", "tq_mean_ratio", "tq_wins", "tq_none_mean_ratio", "tq_none_wins"]
    name = "twinquant"
    text = write_results(name, summary, command="python -m benchmarks twinquant" + (" --quick" if args.quick else ""),
                         notes=notes, columns=cols,
                         headline=headline_pair(summary, key="method", ours=["TwinQuant r8", "TwinQuant*"],
                                                not_baselines=["* W4A4"], metric="mean_rel_err",
                                                cost="quant_time_s", wins="tq_wins", context=["bits_per_weight"]))
    print(text)
    return 0


def _layer_inputs(model, name, X):
    import torch

    mod = dict(model.named_modules())[name]
    store = {}
    def hook(m, inp, out):
        store["x"] = inp[0].double().numpy()

    h = mod.register_forward_hook(hook)
    with torch.no_grad():
        model(torch.from_numpy(X).float())
    h.remove()
    return store["x"]


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
