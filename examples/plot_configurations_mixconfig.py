"""
MixConfig: configurations over the resolution axis and per-sample mixing weights.
=================================================================================

Two-regime data (``make_two_regime_hierarchy``): in one region the label is a fine sub-blob
property, elsewhere a coarse group property. The extractor finds the partitions that are optimal
over a band of the modularity resolution (left: bands over gamma); the learned selector mixes them
per row (right: the weighted mean number of clusters of each row's mixture, on a 2-D PCA projection).
10 % of the rows are labelled; all rows shape the configurations (semi-supervised fit).

What the output shows: the mixtures do not split by regime here (the printed mean number of clusters
is about the same in both regimes, slightly higher in the coarse one), so the selector has not learned
the regimes; the gain in accuracy of a logistic regression on ``[X, z]`` over raw X comes from the
configuration features themselves, which every mixture carries.
"""

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from sklearn_frontier.configurations import MixConfigAugmenter, plot_resolution_profile  # noqa: E402
from sklearn_frontier.datasets import make_two_regime_hierarchy  # noqa: E402

X, y, regime = make_two_regime_hierarchy(n_per_subblob=30, n_per_coarse=200, random_state=0)
train, test = train_test_split(np.arange(y.shape[0]), train_size=0.1, stratify=y, random_state=0)
y_semi = np.full_like(y, -1)
y_semi[train] = y[train]

aug = MixConfigAugmenter(n_resolutions=24, max_epochs=150, random_state=0).fit(X, y_semi)
w = aug.mixing_weights(X)
K = aug.extractor_.n_clusters_
mean_K = w @ K

scores = {}
for name, feats in {"raw X": X, "MixConfig [X, z]": aug.transform(X)}.items():
    clf = LogisticRegression(max_iter=2000).fit(feats[train], y[train])
    scores[name] = clf.score(feats[test], y[test])

fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
plot_resolution_profile(aug.extractor_, ax=axes[0])
P = PCA(n_components=2, random_state=0).fit_transform(X)
sc = axes[1].scatter(P[:, 0], P[:, 1], c=mean_K, s=6, cmap="viridis", norm=matplotlib.colors.LogNorm())
fig.colorbar(sc, ax=axes[1], label="weighted mean K of the mixture")
axes[1].set_title("per-sample mixing: " + ", ".join(f"{k} acc {v:.3f}" for k, v in scores.items()), fontsize=9)
axes[1].set_xlabel("PC 1")
axes[1].set_ylabel("PC 2")
fig.tight_layout()
folder = Path(os.environ.get("SKLEARN_FRONTIER_EXAMPLE_DIR", "."))  # the gallery's or yours, never beside this file
out = folder / "plot_configurations_mixconfig.png"
fig.savefig(out, dpi=110)
print(f"mean K: fine regime {mean_K[regime == 0].mean():.1f}, coarse regime {mean_K[regime == 1].mean():.1f}; "
      f"{scores}; saved {out}")
