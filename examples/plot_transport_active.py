"""
Choose measurement times of a bifurcating population with LOT active experimentation
======================================================================================

A population drifts slowly and splits into two branches around an unknown time (here t = 0.62). Snapshots are
destructive (fresh particles each time) and the budget is 8 snapshots, both ends first. The LOT Gaussian-process
surrogate learns a time warp by marginal likelihood, so its integrated-variance acquisition moves measurements
toward the split; the uniform grid spends them evenly. Top: the true path (particles' second coordinate over
time) with the times each strategy chose. Middle: the true W2 speed and the surrogate's posterior standard
deviation after the last snapshot. Bottom: the W2^2 error of each surrogate over time. Saves a PNG beside this
script.
"""

import os
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from sklearn_frontier.datasets import make_measure_path  # noqa: E402
from sklearn_frontier.transport import run_experiment, wasserstein2_squared  # noqa: E402

warnings.simplefilter("ignore")
path = make_measure_path("bifurcation", t_split=0.62, width=0.08)
grid = np.linspace(0.01, 0.99, 50)
truth = [path(t, 512, random_state=10 ** 6 + i) for i, t in enumerate(grid)]
runs = {}
for label, strategy in (("integrated variance", "integrated_variance"), ("uniform grid", "uniform")):
    exp, err, seconds = run_experiment(path, strategy, 8, seed=0, n_eval_points=512)
    pred, std = exp.predict(grid, return_std=True)
    runs[label] = (exp, wasserstein2_squared(pred, truth), std)
    print(f"{label:20s} mean W2^2 {err:.4f}  ({seconds:.1f} s)  times {np.round(np.sort(exp.times_), 2)}  "
          f"warp alpha {exp.path_.warp_alpha_}")

fig, axes = plt.subplots(3, 1, figsize=(8, 8.5), sharex=True, constrained_layout=True)
ts = np.repeat(np.linspace(0, 1, 120), 60)
ys = np.concatenate([path(t, 60, random_state=i)[:, 1] for i, t in enumerate(np.linspace(0, 1, 120))])
axes[0].scatter(ts, ys, s=1, c="0.7", rasterized=True)
for (label, (exp, _, _)), color, level in zip(runs.items(), ("tab:red", "tab:blue"), (2.4, -2.4)):
    axes[0].scatter(exp.times_, np.full(len(exp.times_), level), marker="v" if level > 0 else "^", s=60,
                    color=color, label=f"{label} times")
    for t in exp.times_:
        axes[0].axvline(t, color=color, alpha=0.25, lw=1)
axes[0].set(ylabel="particle y", title="true path and chosen measurement times (budget 8)")
axes[0].legend(loc="center left", fontsize=8)
speed = [path.speed(t) for t in grid]
axes[1].plot(grid, np.array(speed) / max(speed), color="k", label="true W2 speed (scaled)")
for (label, (_, _, std)), color in zip(runs.items(), ("tab:red", "tab:blue")):
    axes[1].plot(grid, std / std.max(), color=color, label=f"posterior std, {label} (scaled)")
axes[1].legend(fontsize=8)
for (label, (_, err, _)), color in zip(runs.items(), ("tab:red", "tab:blue")):
    axes[2].plot(grid, err, color=color, label=f"{label}: mean {err.mean():.3f}")
axes[2].set(xlabel="time", ylabel="W2^2 to the truth")
axes[2].legend(fontsize=8)
folder = Path(os.environ.get("SKLEARN_FRONTIER_EXAMPLE_DIR", "."))  # the gallery's or yours, never beside this file
fig.savefig(folder / "plot_transport_active.png", dpi=90)
