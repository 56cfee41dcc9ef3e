"""One backfitting MCMC chain over the additive ensemble of tree components."""

import math

import numpy as np

from sklearn_frontier.utils._progress import progress_bar


class ChainData:
    """Vertex-level sufficient statistics of the standardised response."""

    def __init__(self, W, S0, N, SS):
        self.W = np.ascontiguousarray(W, dtype=np.float64)
        self.S0 = np.ascontiguousarray(S0, dtype=np.float64)
        self.N = float(N)
        self.SS = float(SS)


def _moves(family):
    return ["birth", "death", "change", "hyper"] if family.name == "hard" else ["length_scale", "tree"]


def init_chain(ctx, family, data, n_trees, rng, *, tree_prior, sigma2_init, bast_init):
    glob = family.init_global(n_trees)
    if bast_init:
        tree0 = ctx.mst(ctx.lengths)  # BAST's code: Euclidean MST for every tree
        trees, roots = [tree0] * n_trees, [0] * n_trees
    else:
        trees, roots = [], []
        for _ in range(n_trees):
            trees.append(ctx.draw_tree(tree_prior, rng))
            roots.append(int(rng.integers(ctx.n)))
    return {"states": family.init_states(ctx, trees, roots), "glob": glob, "F": np.zeros(ctx.n),
            "sigma2": float(sigma2_init), "t": 0, "rng": rng}


def run_chain(ctx, family, data, chain, n_sweeps, *, n_burnin, thin, noise_prior, fixed_sigma2, tree_prior,
              tree_jitter, tree_update_prob, edge_stride=1, keep_components=True, verbose=0, desc="chain",
              stop=None):
    """Run ``n_sweeps`` more sweeps of ``chain`` (in place); return the kept draws and acceptance counts.

    A kept draw holds the fit (sum of the components) at the vertices, the family's parameters, the noise
    and the log-likelihood; the per-component fields only with ``keep_components`` (what random attachment
    needs). ``stop`` (a ``threading.Event``) ends the run early, at the end of a sweep, once it is set.
    """
    rng = chain["rng"]
    states, glob = chain["states"], chain["glob"]
    nu, lam_s = noise_prior
    acc = {m: [0, 0] for m in _moves(family)}
    kept = {"fit": [], "vertex_values": [], "sigma": [], "log_likelihood": [], "edge_boundary": [],
            "tree_edge": [], "params": []}
    E = ctx.edges.shape[0]
    kept["n_edges"] = E
    bar = progress_bar(total=n_sweeps, desc=desc, verbose=verbose, unit="sweep")
    scratch = {}  # the family's buffers, reused from sweep to sweep (never saved with the chain)
    for _ in range(n_sweeps):
        chain["t"] += 1
        t = chain["t"]
        F = family.sweep(ctx, states, chain["F"], data, chain["sigma2"], glob, rng, tree_prior, tree_jitter,
                         tree_update_prob, acc, scratch)
        chain["F"] = F
        # elementwise sums, not BLAS dot products: a threaded BLAS would spin its idle threads on every sweep
        rss = max(data.SS - 2.0 * float(np.sum(F * data.S0)) + float(np.sum(data.W * F * F)), 0.0)
        if fixed_sigma2 is None:
            chain["sigma2"] = (nu * lam_s + rss) / 2.0 / rng.gamma((data.N + nu) / 2.0)
        sigma2 = chain["sigma2"]
        if t > n_burnin and (t - n_burnin) % thin == 0:
            kept["fit"].append(F.astype(np.float32))
            if keep_components:
                kept["vertex_values"].append(family.values(states).astype(np.float32))
            kept["sigma"].append(math.sqrt(sigma2))
            kept["log_likelihood"].append(-0.5 * data.N * math.log(2 * math.pi * sigma2) - rss / (2 * sigma2))
            kept["params"].append(family.record(states, glob))
            chain["kept"] = chain.get("kept", 0) + 1
            if (chain["kept"] - 1) % edge_stride == 0:
                trees = family.trees(states)
                eb = np.zeros(E)
                te = np.zeros(E)
                for m in range(trees.shape[0]):
                    eb += 1.0 - family.edge_correlation(ctx, states, m)
                    te[trees[m]] += 1.0
                kept["edge_boundary"].append((eb / trees.shape[0]).astype(np.float32))
                kept["tree_edge"].append((te / trees.shape[0]).astype(np.float32))
        bar.update(1)
        if verbose:
            bar.set_postfix(sigma2=f"{sigma2:.3g}")
        if verbose >= 2 and t % 100 == 0:
            rates = {m: (a / b if b else float("nan")) for m, (a, b) in acc.items()}
            print(f"[{desc}] sweep {t}: sigma2={sigma2:.4g} acceptance={rates}")
        if stop is not None and stop.is_set():
            break
    bar.close()
    return kept, acc
