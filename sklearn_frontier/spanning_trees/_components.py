"""Component families: what one additive term of the ensemble is, given its spanning tree.

Every family is a Gaussian field on the rooted tree with precision ``(I - B)^T diag(prec) (I - B)``
(``B[v, pa v] = rho[v]``), sampled exactly by the O(n) tree-precision kernel. ``RoutedField`` is the
PR-BAST component; ``HardPartition`` is BAST's (rho in {0, 1}: piecewise constants on tree pieces).
"""

import math
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator

from sklearn_frontier.kernels.spanning_trees._reference import routed_field_coefficients
from sklearn_frontier.utils._compat import Interval

__all__ = ["RoutedField", "HardPartition", "resolve_component"]


def _positioned(rooted):
    """A rooted tree ``(order, parent, pedge, plen)`` in BFS positions: ``(order, ppos, plen_pos)``, the parent's
    position and the parent-edge length of each position (the sweep's passes then read memory in order)."""
    order, parent, _, plen = rooted
    position = np.empty(order.shape[0], dtype=np.int64)
    position[order] = np.arange(order.shape[0])
    par = parent[order]
    return order, np.where(par >= 0, position[np.maximum(par, 0)], -1), plen[order]


def _by_vertex(order, ppos, plen_pos):
    """``(parent, plen)`` by vertex from a tree in BFS positions."""
    parent = np.full(order.shape[0], -1, dtype=np.int64)
    parent[order[1:]] = order[ppos[1:]]
    plen = np.empty(order.shape[0])
    plen[order] = plen_pos
    return parent, plen


class RoutedField(BaseEstimator):
    """Probabilistically routed tree field (the PR-BAST component).

    On a rooted spanning tree each vertex copies its parent's value with probability
    ``rho = exp(-length / length_scale)`` and otherwise redraws it; the moment-matched field is the
    stationary Gaussian Markov tree ``g(v) | g(pa v) ~ N(rho g(pa v), s2 (1 - rho^2))``, i.e. an exponential
    covariance ``s2 exp(-d_T(u, v) / length_scale)`` in tree-path distance (root-invariant), with
    ``s2 = tau2 / n_trees``. The length scale is log-uniform on ``length_scale_bounds * diameter`` and
    updated by random-walk Metropolis with the field integrated out.

    Read more in the :ref:`User Guide <user_guide_spanning_trees>`.

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

    def init_states(self, ctx, trees, roots):
        """Initialise the components on their spanning trees (stacked arrays, one row per component).

        Parameters
        ----------
        ctx : object
            The engine's data context (graph, tree and solver helpers).
        trees : list of ndarray of int
            Edge indices of each component's spanning tree.
        roots : list of int
            Root vertex of each component.

        Returns
        -------
        states : dict of ndarray
            ``tree``, ``root``, ``order`` (the vertex at each BFS position of the rooted tree), ``ppos`` and
            ``plen_pos`` (parent position and parent-edge length by BFS position), ``lam`` (length
            scales), ``rho`` and ``prec1`` (the field's coefficients at unit scale, by position) and ``g`` (zero
            fields, by vertex), one row per component.
        """
        lo, hi = (float(b) * ctx.diameter for b in self.length_scale_bounds)
        lam = float(np.clip(0.25 * ctx.diameter, lo, hi))
        rooted = [_positioned(ctx.rooted(t, r)) for t, r in zip(trees, roots)]
        coef = [routed_field_coefficients(r[1], r[2], lam) for r in rooted]
        M, n = len(trees), ctx.n
        return {"tree": np.array(trees, dtype=np.int64).reshape(M, max(n - 1, 0)),
                "root": np.array(roots, dtype=np.int64),
                **{key: np.array([r[k] for r in rooted]).reshape(M, n)
                   for k, key in enumerate(("order", "ppos", "plen_pos"))},
                "lam": np.full(M, lam), "g": np.zeros((M, n)),
                "rho": np.array([c[0] for c in coef]).reshape(M, n),
                "prec1": np.array([c[1] for c in coef]).reshape(M, n)}

    def sweep(self, ctx, states, F, data, sigma2, glob, rng, tree_prior, tree_jitter, tree_update_prob, acc,
              scratch=None):
        """One backfitting sweep over all components (one call of the ``routed_sweep`` kernel).

        The random numbers are drawn here, in a fixed order (length-scale steps, tree proposals, field
        noise), and passed to the kernel, so every backend follows the same chain.

        Parameters
        ----------
        ctx : object
            The engine's data context (graph, tree and solver helpers).
        states : dict of ndarray
            The components (from :meth:`init_states`), updated in place.
        F : ndarray of shape (n,)
            Sum of the fields.
        data : object
            ``W`` and ``S0``: weight and weighted response sum of each vertex.
        sigma2 : float
            Current noise variance.
        glob : dict
            The shared state (from :meth:`init_global`), updated in place.
        rng : numpy.random.Generator
            Random generator of the chain.
        tree_prior : str
            Prior (and proposal) of the spanning trees.
        tree_jitter : float
            Log-normal jitter of the edge lengths.
        tree_update_prob : float
            Probability per component of proposing a new tree.
        acc : dict
            Acceptance counters, updated in place.
        scratch : dict, default=None
            Buffers reused from sweep to sweep by one chain (the spare field, coefficient and noise arrays).

        Returns
        -------
        F : ndarray of shape (n,)
            The new sum of the fields.
        """
        M, n = states["g"].shape
        s2 = glob["tau2"] / glob["M"]
        lo, hi = (math.log(float(b) * ctx.diameter) for b in self.length_scale_bounds)
        z_lam, u_lam, u_tree = rng.standard_normal(M), rng.random(M), rng.random(M)
        propose = np.flatnonzero(rng.random(M) < tree_update_prob) if n > 2 else np.zeros(0, dtype=np.int64)
        slot = np.full(M, -1, dtype=np.int64)
        slot[propose] = np.arange(propose.size)
        proposals = []
        for _ in propose:
            tree = ctx.draw_tree(tree_prior, rng, tree_jitter)
            root = int(rng.integers(n))
            proposals.append((tree, root) + _positioned(ctx.rooted(tree, root)))
        scratch = {} if scratch is None else scratch
        if scratch.get("shape") != (M, n):
            scratch.update(shape=(M, n), noise=np.empty((M, n)), spare=[np.empty((M, n)) for _ in range(3)])
        noise = rng.standard_normal(out=scratch["noise"])
        if proposals:
            prop = [np.array([p[k] for p in proposals]) for k in (2, 3, 4)]
        else:
            prop = [states["order"][:1], states["ppos"][:1], states["plen_pos"][:1]]
        G, F, lam, rho, prec1, accepted, counts, quad = ctx.sweep(
            states["order"], states["ppos"], states["plen_pos"], states["lam"], states["rho"], states["prec1"],
            states["g"], F, data.W, data.S0, slot, *prop, z_lam, u_lam, u_tree, noise, float(s2), float(sigma2), lo,
            hi, float(self.length_scale_step), *scratch["spare"])
        scratch["spare"] = [states["g"], states["rho"], states["prec1"]]
        states.update(g=G, lam=lam, rho=rho, prec1=prec1)
        for m in np.flatnonzero(accepted):
            proposal = proposals[slot[m]]
            states["tree"][m], states["root"][m] = proposal[0], proposal[1]
            for k, key in enumerate(("order", "ppos", "plen_pos")):
                states[key][m] = proposal[2 + k]
        acc["length_scale"][0] += int(counts[0])
        acc["length_scale"][1] += int(counts[1])
        acc["tree"][0] += int(counts[2])
        acc["tree"][1] += int(counts[3])
        if self.learn_tau2:
            # Q_m = (M / tau2) Q~_m: tau2 | g ~ IG(2 + M n / 2, 1 + (M / 2) sum_m g_m' Q~_m g_m)
            glob["tau2"] = (1.0 + 0.5 * M * quad) / rng.gamma(2.0 + M * n / 2.0)
        return F

    @staticmethod
    def values(states):
        """The fields of the components, shape (M, n).

        Parameters
        ----------
        states : dict of ndarray
            The components (from :meth:`init_states`).

        Returns
        -------
        values : ndarray of shape (M, n)
            One field per row.
        """
        return states["g"]

    @staticmethod
    def trees(states):
        """The spanning trees of the components (edge ids), shape (M, n - 1).

        Parameters
        ----------
        states : dict of ndarray
            The components (from :meth:`init_states`).

        Returns
        -------
        trees : ndarray of shape (M, n - 1)
            Edge ids of each component's spanning tree.
        """
        return states["tree"]

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
        return {"length_scale": states["lam"].astype(np.float32), "tau2": np.float32(glob["tau2"])}

    @staticmethod
    def attach_variance(params, delta, n_trees):
        """Conditional variance of a new leaf at distance ``delta`` from its attachment vertex, per tree.

        The leaf takes its attachment vertex's value plus ``N(0, s2 (1 - exp(-2 delta / length_scale)))``,
        the routed field's conditional variance across an edge of length ``delta``.

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
        b : ndarray of shape (M, n, K)
            Conditional variance of the leaf.
        """
        lam = params["length_scale"].astype(np.float64)[:, None, None]
        s2 = float(params["tau2"]) / n_trees
        return s2 * -np.expm1(-2.0 * delta[None] / lam)

    def edge_correlation(self, ctx, states, m):
        """Prior correlation of component ``m``'s field at the two ends of each graph edge.

        Parameters
        ----------
        ctx : object
            The engine's data context (graph, tree and solver helpers).
        states : dict of ndarray
            The components (from :meth:`init_states`).
        m : int
            The component.

        Returns
        -------
        corr : ndarray of shape (n_edges,)
            ``exp(-d_T / length_scale)`` of each edge's tree-path distance.
        """
        order = states["order"][m]
        parent, plen = _by_vertex(order, states["ppos"][m], states["plen_pos"][m])
        d = ctx.paths(order, parent, plen, ctx.edges)
        return np.exp(-d / states["lam"][m])


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

    def init_states(self, ctx, trees, roots):
        return [self.init_state(ctx, t, r, None) for t, r in zip(trees, roots)]

    def sweep(self, ctx, states, F, data, sigma2, glob, rng, tree_prior, tree_jitter, tree_update_prob, acc,
              scratch=None):
        W, S0 = data.W, data.S0
        for st in states:
            g_old = st["g"]
            g_new = self.sweep_component(ctx, st, W, S0 - W * (F - g_old), sigma2, glob, rng, tree_prior,
                                         tree_jitter, tree_update_prob, acc)
            F = F + (g_new - g_old)
        return F

    @staticmethod
    def values(states):
        return np.array([st["g"] for st in states])

    @staticmethod
    def trees(states):
        return np.array([st["tree"] for st in states], dtype=np.int64)

    def record(self, states, glob):
        return {"n_clusters": np.array([st["k"] for st in states], dtype=np.int32)}

    @staticmethod
    def attach_variance(params, delta, n_trees):
        return np.zeros((1,) + delta.shape)

    def edge_correlation(self, ctx, states, m):
        lab = states[m]["labels"]
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
