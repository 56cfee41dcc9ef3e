"""
Recover a planted 2-D central mean subspace with SMAVE, next to OPG and the true projection.
============================================================================================

Model B of the SMAVE spec (n = 2000, p = 20): ``y = u1**2 + 2 sin(pi u2 / 2) + 0.2 eps`` with ``u = B0^T x``.
Each panel plots the data projected on an estimated 2-D subspace, coloured by y, with its distance
``||P_hat - P_0||_F`` to the planted one. Runs in a few seconds and saves a PNG next to this script.
"""

import os
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from sklearn_frontier.datasets import make_sdr_regression  # noqa: E402
from sklearn_frontier.sdr import OPG, SMAVE, subspace_distance  # noqa: E402

X, y, B0 = make_sdr_regression("B", n_samples=2000, n_features=20, noise=0.2, random_state=0)
panels = [("planted B0", X @ B0, 0.0, 0.0)]
for name, est in (("SMAVE", SMAVE(random_state=0)), ("OPG (kNN)", OPG())):
    start = time.perf_counter()
    est.fit(X, y)
    elapsed = time.perf_counter() - start
    # align the estimated basis with B0 (rotation/sign are arbitrary for a subspace) for a comparable picture
    Q = np.linalg.qr(est.directions_.T)[0]
    U, _, Vt = np.linalg.svd(Q.T @ B0)
    panels.append((name, X @ (Q @ U @ Vt), subspace_distance(est.directions_.T, B0), elapsed))
    print(f"{name:10s} distance {panels[-1][2]:.3f}  fit {elapsed:.2f} s")

fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), constrained_layout=True)
for ax, (name, proj, dist, elapsed) in zip(axes, panels):
    sc = ax.scatter(proj[:, 0], proj[:, 1], c=y, s=6, cmap="viridis")
    title = name if name.startswith("planted") else f"{name}: ||P - P0||_F = {dist:.3f} ({elapsed:.1f} s)"
    ax.set(title=title, xlabel="direction 1", ylabel="direction 2")
fig.colorbar(sc, ax=axes, label="y")
fig.suptitle("Model B, n = 2000, p = 20: projections coloured by y")
folder = Path(os.environ.get("SKLEARN_FRONTIER_EXAMPLE_DIR", "."))  # the gallery's or yours, never beside this file
fig.savefig(folder / "plot_sdr_smave.png", dpi=90)
