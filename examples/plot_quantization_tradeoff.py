"""
Rate-distortion of 4-bit weight quantizers
==========================================

Relative output error against bits per weight (every stored bit counted) for RTN at several group
sizes, SVD+RTN, smoothed SVD (SVDQuant), WUSH and TwinQuant on generated layers with outlier input
channels and a planted low-rank part (:func:`~sklearn_frontier.datasets.make_outlier_weights`), with
held-out activations (:func:`~sklearn_frontier.datasets.make_outlier_activations`). Lower-left is better.
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from sklearn_frontier.datasets import make_outlier_activations, make_outlier_weights  # noqa: E402
from sklearn_frontier.quantization import RTNQuantizer, SVDQuantizer, TwinQuant, WUSHQuantizer  # noqa: E402


def curves(n_layers=1, m=128, n=256, max_iter=60, ranks=(2, 4, 8)):
    families = {
        "RTN": [RTNQuantizer(group_size=g) for g in (128, 64, 32, 16)],
        "SVD+RTN": [SVDQuantizer(rank=r) for r in ranks],
        "smoothed SVD": [SVDQuantizer(rank=r, smooth=True) for r in ranks],
        # blockwise Hadamard (no stored transform bits) and WUSH (16 n B bits of block transforms)
        "WUSH family (W4A16, g32)": [WUSHQuantizer(block_transform="hadamard"), WUSHQuantizer()],
        "TwinQuant": [TwinQuant(rank=r, max_iter=max_iter, random_state=0) for r in ranks],
    }
    out = {k: np.zeros((len(v), 2)) for k, v in families.items()}
    for layer in range(n_layers):
        W, _ = make_outlier_weights(m, n, random_state=layer)
        X, info = make_outlier_activations(4 * n, n, random_state=100 + layer)
        X_test = info["sample"](4 * n, 200 + layer)
        for name, ests in families.items():
            for i, est in enumerate(ests):
                est.fit(W, X_calib=X)
                out[name][i] += [est.bits_per_weight_ / n_layers, -est.score(W, X_calib=X_test) / n_layers]
    return out


def main(n_layers=1, max_iter=60, path=None):
    res = curves(n_layers=n_layers, max_iter=max_iter)
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, pts in res.items():
        ax.plot(pts[:, 0], pts[:, 1], marker="o", label=name)
    ax.set_xlabel("bits per weight (all stored bits)")
    ax.set_ylabel("relative output error (held-out tokens)")
    ax.set_yscale("log")
    ax.set_title(f"INT4 weights, {n_layers} generated layer(s) 128x256")
    ax.legend()
    fig.tight_layout()
    path = Path(path) if path else Path(__file__).with_suffix(".png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return res


if __name__ == "__main__":
    main(n_layers=int(sys.argv[1]) if len(sys.argv) > 1 else 1)
