"""Component families: what one additive term of the ensemble is, given its spanning tree.

Every family is a Gaussian field on the rooted tree with precision ``(I - B)^T diag(prec) (I - B)``
(``B[v, pa v] = rho[v]``), sampled exactly by the O(n) tree-precision kernel. ``RoutedField`` is the
PR-BAST component; ``HardPartition`` is BAST's (rho in {0, 1}: piecewise constants on tree pieces).
"""

import math
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator

from sklearn_frontier.utils._compat import Interval

__all__ = ["RoutedField", "HardPartition", "resolve_component"]


def _reflect(z, lo, hi):
    width = hi - lo
    y = (z - lo) % (2.0 * width)
    return lo + (y if y <= width else 2.0 * width - y)


class RoutedField(BaseEstimator):
    """Probabilistically routed tree field (the PR-BAST component).

    On a rooted spanning tree each vertex copies its parent's value with probability
    ``rho = exp(-length / length_scale)`` and otherwise redraws it; the moment-matched field is the
    stationary Gaussian Markov tree ``g(v) | g(pa v) ~ N(rho g(pa v), s2 (1 - rho^2))``, i.e. an exponential
    covariance ``s2 exp(-d_T(u, v) / length_scale)`` in tree-path distance (root-invariant), with
    ``s2 = tau2 / n_trees``. The length scale is log-uniform on ``length_scale_bounds * diameter`` and
    updated by random-walk Metropolis with the field integrated out.

    Parameters
    ----------
    tau2 : float, default=0.5
        Total prior variance of the ensemble on the standardised response.
    length_scale_bounds : tuple of float, default=(0.02, 1e4)
        Bounds of the log-uniform length-scale prior, in units of the domain diameter.
    length_scale_step : float, default=0.3
        Random-walk step on ``log(length_scale)``.
    learn_tau2 : bool, default=False
        Gibbs-update ``tau2`` under an IG(2, 1) prior.

    See Also
    --------
    PRBASTRegressor : The estimator this component drives.

    Examples
    --------
    >>> from sklearn_frontier.spanning_trees import RoutedField
    >>> RoutedField(learn_tau2=True).init_global(n_trees=4)
    {'tau2': 0.5, 'M': 4}
    """

    _parameter_constraints = {
        "tau2": [Interval(Real, 0, None, closed="neither")],
        "length_scale_bounds": [tuple, list],
        "length_scale_step": [Interval(Real, 0, None, closed="left")],
        "learn_tau2": ["boolean"],
    }
    name = "routed"

    def __init__(self, tau2=0.5, length_scale_bounds=(0.02, 1e4), length_scale_step=0.3, learn_tau2=False):
        self.tau2 = tau2
        self.length_scale_bounds = length_scale_bounds
        self.length_scale_step = length_scale_step
        self.learn_tau2 = learn_tau2

    # ---------------------------------------------------------------- engine protocol (private)
    def _validate(self):
        self._validate_params()
        lo, hi = (float(b) for b in self.length_scale_bounds)
        if not (0 < lo <= hi and math.isfinite(hi)):
            raise ValueError(f"length_scale_bounds must satisfy 0 < low <= high < inf, got {self.length_scale_bounds}.")

    def init_global(self, n_trees):
        """Initialise the state shared by all components of a chain.

        Parameters
        ----------
        n_trees : int
            Number of components M.

        Returns
        -------
        glob : dict
            ``tau2`` and ``M``.
        """
        return {"tau2": float(self.tau2), "M": n_trees}

    def init_state(self, ctx, tree, root, rng):
        """Initialise one component on its spanning tree.

        Parameters
        ----------
        ctx : object
            The engine's data context (graph, tree and solver helpers).
        tree : ndarray of int
            Edge indices of the spanning tree.
        root : int
            Root vertex.
        rng : numpy.random.Generator
            Random generator of the chain.

        Returns
        -------
        st : dict
            The rooted tree, its length scale and a zero field.
        """
        lo, hi = (float(b) * ctx.diameter for b in self.length_scale_bounds)
        lam = float(np.clip(0.25 * ctx.diameter, lo, hi))
        order, parent, pedge, plen = ctx.rooted(tree, root)
        return {"tree": tree, "root": int(root), "order": order, "parent": parent, "pedge": pedge, "plen": plen,
                "lam": lam, "g": np.zeros(ctx.n)}

    def _loglik(self, ctx, st, lam, s2, W, S, sigma2, order=None, parent=None, plen=None, root=None):
        order = st["order"] if order is None else order
        parent = st["parent"] if parent is None else parent
        plen = st["plen"] if plen is None else plen
        root = st["root"] if root is None else root
        rho, prec = ctx.routed(plen, float(lam), float(s2), int(root))
        return ctx.eliminate_loglik(order, parent, rho, prec, W, S, sigma2, 0.0, 0.0)

    def sweep_component(self, ctx, st, W, S, sigma2, glob, rng, tree_prior, tree_jitter, tree_update_prob, acc):
        """Update the length scale, the tree and the field of one component (one backfitting step).

        Parameters
        ----------
        ctx : object
            The engine's data context (graph, tree and solver helpers).
        st : dict
            The component's state (from :meth:`init_state`).
        W : ndarray of shape (n,)
            Per-vertex weights (counts) of the data.
        S : ndarray of shape (n,)
            Per-vertex weighted sums of the partial residuals.
        sigma2 : float
            Current noise variance.
        glob : dict
            The shared state (from :meth:`init_global`).
        rng : numpy.random.Generator
            Random generator of the chain.
        tree_prior : str
            Prior of the spanning trees.
        tree_jitter : float
            Log-normal jitter of the edge lengths.
        tree_update_prob : float
            Probability of proposing a new tree.
        acc : dict
            Acceptance counters, updated in place.

        Returns
        -------
        g : ndarray of shape (n,)
            The new field of the component at the vertices.
        """
        s2 = glob["tau2"] / glob["M"]
        lo, hi = (math.log(float(b) * ctx.diameter) for b in self.length_scale_bounds)
        ll = self._loglik(ctx, st, st["lam"], s2, W, S, sigma2)
        # length scale: reflected random walk on log(lambda) (uniform prior there), field collapsed
        if self.length_scale_step > 0 and hi > lo:
            z = math.log(st["lam"]) + self.length_scale_step * rng.standard_normal()
            z = _reflect(z, lo, hi)
            lam_new = math.exp(z)
            ll_new = self._loglik(ctx, st, lam_new, s2, W, S, sigma2)
            accept = math.log(rng.random()) < ll_new - ll
            acc["length_scale"][0] += accept
            acc["length_scale"][1] += 1
            if accept:
                st["lam"], ll = lam_new, ll_new
        else:
            rng.standard_normal()
            rng.random()
        # tree (and root) from the prior: accept with the likelihood ratio
        if rng.random() < tree_update_prob and ctx.n > 2:
            tree = ctx.draw_tree(tree_prior, rng, tree_jitter)
            root = int(rng.integers(ctx.n))
            order, parent, pedge, plen = ctx.rooted(tree, root)
            ll_new = self._loglik(ctx, st, st["lam"], s2, W, S, sigma2, order, parent, plen, root)
            accept = math.log(rng.random()) < ll_new - ll
            acc["tree"][0] += accept
            acc["tree"][1] += 1
            if accept:
                st.update(tree=tree, root=root, order=order, parent=parent, pedge=pedge, plen=plen)
        rho, prec = ctx.routed(st["plen"], float(st["lam"]), float(s2), int(st["root"]))
        g, _, _ = ctx.solve(st["order"], st["parent"], rho, prec, W, S, sigma2, rng.standard_normal(ctx.n))
        st["g"] = g
        return g

    def end_sweep(self, ctx, states, glob, rng):
        """Update the shared state after a sweep (Gibbs step of ``tau2`` when learned).

        Parameters
        ----------
        ctx : object
            The engine's data context (graph, tree and solver helpers).
        states : list of dict
            States of all components.
        glob : dict
            The shared state (from :meth:`init_global`).
        rng : numpy.random.Generator
            Random generator of the chain.

        Returns
        -------
        None
            ``glob`` is updated in place.
        """
        if not self.learn_tau2:
            return
        M = glob["M"]
        quad = 0.0
        for st in states:
            rho, prec = ctx.routed(st["plen"], float(st["lam"]), 1.0, int(st["root"]))
            g, par = st["g"], st["parent"]
            gp = np.where(par >= 0, g[np.maximum(par, 0)], 0.0)
            quad += float(np.sum(prec * (g - rho * gp) ** 2))
        shape = 2.0 + M * ctx.n / 2.0
        rate = 1.0 + 0.5 * M * quad
        glob["tau2"] = rate / rng.gamma(shape)

    def record(self, states, glob):
        """Return the values of a kept draw.

        Parameters
        ----------
        states : list of dict
            States of all components.
        glob : dict
            The shared state (from :meth:`init_global`).

        Returns
        -------
        params : dict
            ``length_scale`` per component and ``tau2``.
        """
        return {"length_scale": np.array([st["lam"] for st in states], dtype=np.float32),
                "tau2": np.float32(glob["tau2"])}

    @staticmethod
    def attach(params, delta, n_trees):
        """Compute ``(a, b)`` of a new leaf at distance ``delta`` per tree.

        Parameters
        ----------
        params : dict
            A recorded draw (from :meth:`record`).
        delta : ndarray of shape (n, K)
            Distances of the new points to their K candidate vertices.
        n_trees : int
            Number of components M.

        Returns
        -------
        a : ndarray of shape (M, n, K)
            Correlation of the leaf with its attachment vertex.
        b : ndarray of shape (M, n, K)
            Conditional variance of the leaf.
        """
        lam = params["length_scale"].astype(np.float64)[:, None, None]
        a = np.exp(-delta[None] / lam)
        s2 = float(params["tau2"]) / n_trees
        return a, s2 * (1.0 - a * a)

    def edge_correlation(self, ctx, st):
        """Prior correlation of the field at the two ends of each graph edge.

        Parameters
        ----------
        ctx : object
            The engine's data context (graph, tree and solver helpers).
        st : dict
            The component's state (from :meth:`init_state`).

        Returns
        -------
        corr : ndarray of shape (n_edges,)
            ``exp(-d_T / length_scale)`` of each edge's tree-path distance.
        """
        d = ctx.paths(st["order"], st["parent"], st["plen"], ctx.edges)
        return np.exp(-d / st["lam"])


class HardPartition:
    """BAST's component: a spanning tree cut into ``k`` pieces, one constant per piece (official code's moves)."""

    name = "hard"

    def __init__(self, k_max=5, lambda_k=4.0, sigma_mu=0.125):
        self.k_max = k_max
        self.lambda_k = lambda_k
        self.sigma_mu = sigma_mu

    def init_global(self, n_trees):
        return {"M": n_trees}

    def init_state(self, ctx, tree, root, rng):
        order, parent, pedge, plen = ctx.rooted(tree, 0)
        return {"tree": tree, "root": 0, "order": order, "parent": parent, "pedge": pedge, "plen": plen,
                "cut": np.zeros(ctx.n, dtype=bool), "k": 1, "labels": np.zeros(ctx.n, dtype=np.int64),
                "g": np.zeros(ctx.n)}

    def _probs(self, k, k_max):
        if k_max == 1:
            return (0.0, 0.0, 0.0, 1.0)
        if k == 1:
            return (0.9, 0.0, 0.0, 0.1)
        if k == k_max:
            return (0.0, 0.6, 0.3, 0.1)
        return (0.3, 0.3, 0.3, 0.1)

    @staticmethod
    def _sum_ell(labels, k, W, S, sigma2, rho_b):
        Wc = np.bincount(labels, weights=W, minlength=k)
        Sc = np.bincount(labels, weights=S, minlength=k)
        return float(np.sum(-0.5 * np.log((Wc + rho_b) / rho_b) + Sc * Sc / (2.0 * sigma2 * (Wc + rho_b))))

    def sweep_component(self, ctx, st, W, S, sigma2, glob, rng, tree_prior, tree_jitter, tree_update_prob, acc):
        n = ctx.n
        k_max = min(self.k_max, n)
        rho_b = sigma2 / self.sigma_mu ** 2
        k = st["k"]
        pb, pd, pc, ph = self._probs(k, k_max)
        u = rng.random()
        labels = st["labels"]
        if u < pb + pd + pc:
            base = self._sum_ell(labels, k, W, S, sigma2, rho_b)
            cut = st["cut"].copy()
            nonroot = st["order"][1:]
            if u < pb:
                move = "birth"
                cand = nonroot[~cut[nonroot]]
                cut[cand[int(rng.integers(cand.shape[0]))]] = True
                k_new = k + 1
                log_prior = (math.log(self.lambda_k) - math.log(k + 1)
                             + math.log(self._probs(k + 1, k_max)[1]) - math.log(pb))
            elif u < pb + pd:
                move = "death"
                cand = nonroot[cut[nonroot]]
                cut[cand[int(rng.integers(cand.shape[0]))]] = False
                k_new = k - 1
                log_prior = (math.log(self._probs(k - 1, k_max)[0]) - math.log(pd)
                             - math.log(self.lambda_k) + math.log(k))
            else:
                move = "change"
                cand = nonroot[cut[nonroot]]
                cut[cand[int(rng.integers(cand.shape[0]))]] = False
                cand = nonroot[~cut[nonroot]]
                cut[cand[int(rng.integers(cand.shape[0]))]] = True
                k_new = k
                log_prior = 0.0
            new_labels = ctx.labels(st["order"], st["parent"], cut)
            log_alpha = log_prior + self._sum_ell(new_labels, k_new, W, S, sigma2, rho_b) - base
            accept = math.log(rng.random()) < log_alpha
            acc[move][0] += accept
            acc[move][1] += 1
            if accept:
                st.update(cut=cut, k=k_new, labels=new_labels)
        else:
            # hyper: redraw the tree given the partition (U(0,1) within pieces, U(10,20) between); no accept step
            w = rng.random(ctx.edges.shape[0])
            between = labels[ctx.edges[:, 0]] != labels[ctx.edges[:, 1]]
            w = np.where(between, 10.0 + 10.0 * w, w)
            tree = ctx.mst(w)
            order, parent, pedge, plen = ctx.rooted(tree, 0)
            cut = np.zeros(n, dtype=bool)
            cut[order[1:]] = labels[order[1:]] != labels[parent[order[1:]]]
            new_labels = ctx.labels(order, parent, cut)
            st.update(tree=tree, order=order, parent=parent, pedge=pedge, plen=plen, cut=cut,
                      k=int(new_labels.max()) + 1, labels=new_labels)
            acc["hyper"][0] += 1
            acc["hyper"][1] += 1
        labels, k = st["labels"], st["k"]
        Wc = np.bincount(labels, weights=W, minlength=k)
        Sc = np.bincount(labels, weights=S, minlength=k)
        v = 1.0 / (Wc / sigma2 + 1.0 / self.sigma_mu ** 2)
        mu = v * Sc / sigma2 + np.sqrt(v) * rng.standard_normal(k)
        g = mu[labels]
        st["g"] = g
        return g

    def end_sweep(self, ctx, states, glob, rng):
        pass

    def record(self, states, glob):
        return {"n_clusters": np.array([st["k"] for st in states], dtype=np.int32)}

    @staticmethod
    def attach(params, delta, n_trees):
        return np.ones((1,) + delta.shape), np.zeros((1,) + delta.shape)

    def edge_correlation(self, ctx, st):
        lab = st["labels"]
        return (lab[ctx.edges[:, 0]] == lab[ctx.edges[:, 1]]).astype(np.float64)


FAMILIES = {"routed": RoutedField}


def resolve_component(component):
    """A fresh (cloned) component instance from ``None``, a family name or an instance."""
    from sklearn.base import clone

    if component is None:
        return RoutedField(learn_tau2=True)
    if isinstance(component, str):
        if component not in FAMILIES:
            raise ValueError(f"unknown component {component!r}; choose from {sorted(FAMILIES)}.")
        return FAMILIES[component]()
    return clone(component)
