"""
PR-BAST and BAST on the mgcv horseshoe: truth, fits, a Euclidean GP, and the interval width.
============================================================================================

A Euclidean smoother leaks across the gap between the two arms (where the truth jumps from about
+3 to -3); the spanning-tree ensembles live on a domain graph whose edges never cross it.
"""

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.gaussian_process import GaussianProcessRegressor  # noqa: E402
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel  # noqa: E402

from sklearn_frontier.datasets import (  # noqa: E402
    horseshoe_boundary,
    horseshoe_function,  # noqa: E402
    make_horseshoe,
)
from sklearn_frontier.spanning_trees import BASTRegressor, PRBASTRegressor  # noqa: E402


def main(n_train=300, n_iter=250, n_trees=15, grid_shape=(140, 60), out=None):
    boundary = horseshoe_boundary()
    X, y, _ = make_horseshoe(n_train, noise=0.3, random_state=0)
    gx, gy = np.meshgrid(np.linspace(-1, 3.6, grid_shape[0]), np.linspace(-1, 1, grid_shape[1]))
    grid = np.c_[gx.ravel(), gy.ravel()]
    truth = horseshoe_function(grid)
    inside = np.isfinite(truth)
    Xg = grid[inside]

    models = {
        "PR-BAST": PRBASTRegressor(n_trees=n_trees, domain=boundary, n_iter=n_iter, n_burnin=n_iter // 3,
                                   random_state=0),
        "BAST": BASTRegressor(n_trees=n_trees, domain=boundary, n_iter=n_iter, n_burnin=n_iter // 3,
                              random_state=0),
        "GP (Euclidean)": GaussianProcessRegressor(ConstantKernel() * Matern(nu=2.5) + WhiteKernel(),
                                                   normalize_y=True, random_state=0),
    }
    maps = {"truth": truth[inside]}
    for name, est in models.items():
        est.fit(X, y)
        maps[name] = est.predict(Xg)
        print(f"{name:15s} RMSE vs truth on the grid: {np.sqrt(np.mean((maps[name] - truth[inside]) ** 2)):.3f}")
    lo, hi = models["PR-BAST"].predict_interval(Xg, kind="credible").T
    maps["PR-BAST 95% credible width"] = hi - lo

    fig, axes = plt.subplots(len(maps), 1, figsize=(7, 2.0 * len(maps)), sharex=True)
    for ax, (name, values) in zip(axes, maps.items()):
        img = np.full(grid.shape[0], np.nan)
        img[inside] = values
        cmap = "viridis" if "width" in name else "RdBu_r"
        lim = None if "width" in name else (-4.2, 4.2)
        m = ax.pcolormesh(gx, gy, img.reshape(gx.shape), cmap=cmap, shading="auto",
                          vmin=None if lim is None else lim[0], vmax=None if lim is None else lim[1])
        ax.plot(*np.r_[boundary, boundary[:1]].T, "k-", lw=0.8)
        ax.set_title(name, fontsize=9)
        ax.set_aspect("equal")
        fig.colorbar(m, ax=ax, shrink=0.8)
    axes[0].plot(*X.T, "k.", ms=1.5)
    fig.tight_layout()
    folder = Path(os.environ.get("SKLEARN_FRONTIER_EXAMPLE_DIR", "."))  # the gallery's or yours, never beside this file
    out = folder / "plot_spanning_trees_horseshoe.png" if out is None else Path(out)
    fig.savefig(out, dpi=110)  # left open: the gallery's scraper takes its thumbnail from the open figures
    return out


if __name__ == "__main__":
    main()
