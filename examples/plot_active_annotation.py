"""
Active annotation: label accuracy vs labels spent, for every strategy, on a simulated crowd.
============================================================================================

A pool (breast cancer, 569 samples) is labelled by a heterogeneous simulated crowd (20 workers with
accuracies in [0.55, 0.85]). After one label per sample, each strategy spends the rest of a 4n budget
in batches of 10: round robin (fewest labels first), random, label uncertainty (LU, own votes only),
MA3S with uncertainty smoothing and MA3S with evidence propagation (fixed and "auto" strength).
Every strategy is scored with the same aggregator (majority vote, random ties).
"""

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_breast_cancer  # noqa: E402

from sklearn_frontier.annotation import (  # noqa: E402
    MA3SAnnotator,
    RandomAnnotator,
    RoundRobinAnnotator,
    SimulatedCrowd,
    run_annotation_loop,
)

QUICK = os.environ.get("SKLEARN_FRONTIER_EXAMPLE_QUICK") == "1"
X, y = load_breast_cancer(return_X_y=True)
n = len(y)
seeds = [0] if QUICK else [0, 1, 2]
strategies = {
    "round robin": lambda s: RoundRobinAnnotator(random_state=s),
    "random": lambda s: RandomAnnotator(random_state=s),
    "LU (propagation='none')": lambda s: MA3SAnnotator(propagation="none", random_state=s),
    "MA3S-U (propagation='uncertainty')": lambda s: MA3SAnnotator(propagation="uncertainty", random_state=s),
    "MA3S (evidence, lambda=1)": lambda s: MA3SAnnotator(random_state=s),
    "MA3S (evidence, auto)": lambda s: MA3SAnnotator(propagation_strength="auto", random_state=s),
}

fig, ax = plt.subplots(figsize=(7, 4.5))
for name, make in strategies.items():
    curves = []
    for seed in seeds:
        crowd = SimulatedCrowd(y, n_workers=20, accuracy=(0.55, 0.85), random_state=seed)
        hist = run_annotation_loop(make(seed), X, crowd, 4 * n, batch_size=10, y_true=y, eval_every=n // 4)
        curves.append(hist["label_accuracy"])
    spent = hist["n_labels"] / n
    mean = np.mean(curves, axis=0)
    ax.plot(spent, mean, marker="o", ms=3, label=f"{name}: {mean[-1]:.3f}")
    print(f"{name:38s} accuracy at 2n/3n/4n: "
          + " ".join(f"{np.interp(b * n, hist['n_labels'], mean):.3f}" for b in (2, 3, 4)))
ax.set_xlabel("labels spent / n")
ax.set_ylabel("label accuracy (majority vote)")
ax.set_title(f"Active annotation on breast cancer, heterogeneous crowd ({len(seeds)} seeds)")
ax.legend(fontsize=8, loc="lower right")
ax.grid(alpha=0.3)
fig.tight_layout()
folder = Path(os.environ.get("SKLEARN_FRONTIER_EXAMPLE_DIR", "."))  # the gallery's or yours, never beside this file
fig.savefig(folder / "plot_active_annotation.png", dpi=110)
