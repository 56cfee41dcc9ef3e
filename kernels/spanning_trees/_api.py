"""Public wrappers and registrations of the spanning_trees kernels (the package re-exports them)."""

import numpy as np

from .._dispatch import register_kernel

__all__ = ["tree_precision_solve", "tree_collapsed_loglik", "routed_sweep", "random_rooted_tree", "kruskal_mst",
           "root_tree", "partition_labels", "tree_path_lengths", "segments_cross_rings", "points_in_rings"]


# --- Tree-precision kernels: exact O(n) posterior draws and collapsed likelihoods of tree Gaussian fields.

def random_rooted_tree(n, rng, kind="recursive"):
    """Draw a random rooted tree on ``n`` shuffled labels.

    Parameters
    ----------
    n : int
        Number of vertices.
    rng : numpy.random.Generator
        Random generator.
    kind : {"recursive", "path", "star"}, default="recursive"
        Shape of the tree before the labels are shuffled.

    Returns
    -------
    order : ndarray of shape (n,)
        Vertices with every parent before its children; ``order[0]`` is the root.
    parent : ndarray of shape (n,)
        Parent of each vertex (-1 at the root).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels.spanning_trees import random_rooted_tree
    >>> order, parent = random_rooted_tree(4, np.random.default_rng(0), kind="star")
    >>> int((parent == -1).sum()), order.shape
    (1, (4,))
    """
    if kind == "recursive":
        par = np.array([-1] + [int(rng.integers(0, v)) for v in range(1, n)], dtype=np.int64)
    elif kind == "path":
        par = np.arange(-1, n - 1, dtype=np.int64)
    elif kind == "star":
        par = np.zeros(n, dtype=np.int64)
        par[0] = -1
    else:
        raise ValueError(f"unknown tree kind {kind!r}")
    perm = rng.permutation(n)  # label of internal vertex i is perm[i]
    parent = np.full(n, -1, dtype=np.int64)
    parent[perm[1:]] = perm[par[1:]]
    order = np.ascontiguousarray(perm, dtype=np.int64)  # parents precede children: a valid elimination order
    return order, parent


_solve = register_kernel(
    "tree_precision_solve",
    reference="sklearn_frontier.kernels.spanning_trees._reference:tree_precision_solve",
    numba="sklearn_frontier.kernels.spanning_trees._numba:tree_precision_solve")
_loglik = register_kernel(
    "tree_collapsed_loglik",
    reference="sklearn_frontier.kernels.spanning_trees._reference:tree_collapsed_loglik",
    numba="sklearn_frontier.kernels.spanning_trees._numba:tree_collapsed_loglik")


_routed = register_kernel(
    "routed_coefficients",
    reference="sklearn_frontier.kernels.spanning_trees._reference:routed_coefficients",
    numba="sklearn_frontier.kernels.spanning_trees._numba:routed_coefficients")


def _check_tree_args(order, parent, rho, prec, obs_weight, obs_sum, sigma2):
    order = np.ascontiguousarray(order, dtype=np.int64)
    parent = np.ascontiguousarray(parent, dtype=np.int64)
    rho, prec, obs_weight, obs_sum = (np.ascontiguousarray(a, dtype=np.float64)
                                      for a in (rho, prec, obs_weight, obs_sum))
    n = order.shape[0]
    if order.ndim != 1 or any(a.shape != (n,) for a in (parent, rho, prec, obs_weight, obs_sum)):
        raise ValueError("order, parent, rho, prec, obs_weight and obs_sum must be 1-D of one length.")
    if n == 0:
        raise ValueError("The tree must have at least one vertex.")
    if not np.array_equal(np.sort(order), np.arange(n)):
        raise ValueError("order must be a permutation of range(n).")
    if parent[order[0]] != -1 or np.sum(parent == -1) != 1:
        raise ValueError("order[0] must be the only root (parent -1).")
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    child = order[1:]
    if np.any(parent[child] < 0) or np.any(parent[child] >= n) or np.any(position[parent[child]] >= position[child]):
        raise ValueError("order must list every parent before its children.")
    if np.any(np.isnan(prec)) or np.any(prec <= 0) or not np.isfinite(prec[order[0]]):
        raise ValueError("prec must be positive (inf = hard link) and finite at the root.")
    if np.any(obs_weight < 0) or not (np.all(np.isfinite(rho)) and np.all(np.isfinite(obs_sum))):
        raise ValueError("obs_weight must be non-negative; rho and obs_sum finite.")
    sigma2 = float(sigma2)
    if not sigma2 > 0:
        raise ValueError(f"sigma2 must be positive, got {sigma2}.")
    return order, parent, rho, prec, obs_weight, obs_sum, sigma2


def tree_precision_solve(order, parent, rho, prec, obs_weight, obs_sum, sigma2, noise=None):
    """Posterior mean or exact posterior draw of a tree Gaussian field, in O(n).

    The prior is ``g(root) ~ N(0, 1/prec[root])``, ``g(v) | g(pa v) ~ N(rho[v] g(pa v), 1/prec[v])``
    (``prec[v] = inf`` links ``g(v) = rho[v] g(pa v)``); the data add ``diag(obs_weight)/sigma2`` to the
    precision and ``obs_sum/sigma2`` to the right-hand side.

    Parameters
    ----------
    order : array-like of shape (n,)
        Vertices with every parent before its children; ``order[0]`` is the root.
    parent : array-like of shape (n,)
        Parent of each vertex (-1 at the root).
    rho, prec : array-like of shape (n,)
        Routing coefficients and conditional precisions.
    obs_weight, obs_sum : array-like of shape (n,)
        Observation weight and weighted sum at each vertex.
    sigma2 : float
        Noise variance.
    noise : array-like of shape (n,), default=None
        Standard normal draws; ``None`` returns the posterior mean ``P^{-1} h``.

    Returns
    -------
    values : ndarray of shape (n,)
        Posterior mean or posterior draw.
    log_det_ratio : float
        ``log|P| - log|Q|``.
    quad : float
        ``h^T P^{-1} h``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import tree_precision_solve
    >>> g, ldr, quad = tree_precision_solve([0, 1], [-1, 0], [0.0, 0.5], [1.0, 2.0], [1.0, 0.0], [2.0, 0.0], 1.0)
    >>> g.round(3)
    array([1. , 0.5])
    """
    args = _check_tree_args(order, parent, rho, prec, obs_weight, obs_sum, sigma2)
    n = args[0].shape[0]
    noise = np.zeros(n) if noise is None else np.ascontiguousarray(noise, dtype=np.float64)
    if noise.shape != (n,):
        raise ValueError(f"noise must have shape ({n},), got {noise.shape}.")
    values, ldr, quad = _solve(*args, noise)
    return values, float(ldr), float(quad)


def tree_collapsed_loglik(order, parent, rho, prec, obs_weight, obs_sum, sigma2, sum_sq, n_obs):
    """Exact log marginal likelihood of the data with the tree field integrated out, in O(n).

    ``-0.5 (log|P| - log|Q|) + 0.5 h^T P^{-1} h - sum_sq / (2 sigma2) - (n_obs / 2) log(2 pi sigma2)``,
    where ``sum_sq`` is the weighted sum of squared observations and ``n_obs`` the total weight.

    Parameters
    ----------
    order : array-like of shape (n,)
        Vertices with every parent before its children; ``order[0]`` is the root.
    parent : array-like of shape (n,)
        Parent of each vertex (-1 at the root).
    rho, prec : array-like of shape (n,)
        Routing coefficients and conditional precisions.
    obs_weight, obs_sum : array-like of shape (n,)
        Observation weight and weighted sum at each vertex.
    sigma2 : float
        Noise variance.
    sum_sq : float
        Weighted sum of squared observations.
    n_obs : float
        Total observation weight.

    Returns
    -------
    loglik : float
        The log marginal likelihood.

    Examples
    --------
    >>> from sklearn_frontier.kernels import tree_collapsed_loglik
    >>> round(tree_collapsed_loglik([0], [-1], [0.0], [1.0], [1.0], [0.0], 1.0, 0.0, 1.0), 6)  # N(0; 0, 2)
    -1.265512
    """
    args = _check_tree_args(order, parent, rho, prec, obs_weight, obs_sum, sigma2)
    return float(_loglik(*args, float(sum_sq), float(n_obs)))


tree_precision_solve.kernel_spec = _solve.kernel_spec


_sweep = register_kernel(
    "routed_sweep",
    reference="sklearn_frontier.kernels.spanning_trees._reference:routed_sweep",
    numba="sklearn_frontier.kernels.spanning_trees._numba:routed_sweep")


def routed_sweep(order, ppos, plen, lam, G, F, W, S0, prop_slot, prop_order, prop_ppos, prop_plen, z_lam, u_lam,
                 u_tree, noise, s2, sigma2, log_lo, log_hi, step, rho=None, prec1=None):
    """One backfitting sweep over ``M`` routed tree fields (the PR-BAST sampler's inner loop), in O(M n).

    Component ``m`` is the routed field on a rooted tree given in BFS positions: ``order[m]`` maps positions
    to vertices (root first), ``ppos[m]`` gives each position's parent position (-1 at the root) and
    ``plen[m]`` its parent-edge length; with length scale ``lam[m]``: ``rho = exp(-l / lam)``, conditional
    variance ``s2 (1 - rho^2)``, root N(0, s2). Working by position keeps the passes over a tree contiguous
    in memory. For each component in turn: the partial-residual sums ``S0 - W (F - G[m])``; a reflected
    random-walk Metropolis step on ``log(lam)`` within ``[log_lo, log_hi]`` (step ``step * z_lam[m]``,
    accepted iff ``log(u_lam[m])`` is below the log-likelihood ratio); where ``prop_slot[m] >= 0``, an
    independence Metropolis step to the rooted tree in that row of the ``prop_*`` arrays (accepted iff
    ``log(u_tree[m])`` is below the ratio: the proposal is the tree prior); both ratios use the exact collapsed
    likelihood (field integrated out). Then the exact posterior draw of the field from ``noise[m]``, and ``F``
    is updated. Every random number is an input, so the backends follow the same chain.

    Parameters
    ----------
    order, ppos : ndarray of shape (M, n), int64
        Vertex at each BFS position (root first) and the position of its parent (-1 at the root).
    plen : ndarray of shape (M, n)
        Parent-edge length at each position (ignored at the root).
    lam : ndarray of shape (M,)
        Length scales.
    G : ndarray of shape (M, n)
        Current fields, by vertex.
    F : ndarray of shape (n,)
        Their sum.
    W, S0 : ndarray of shape (n,)
        Observation weight and weighted sum of the standardised response at each vertex.
    prop_slot : ndarray of shape (M,), int64
        Row of the proposed tree of each component in the ``prop_*`` arrays, or -1 (no tree proposal).
    prop_order, prop_ppos : ndarray of shape (P, n), int64
        The proposed rooted trees, in BFS positions as ``order`` and ``ppos``.
    prop_plen : ndarray of shape (P, n)
        Their parent-edge lengths by position.
    z_lam, u_lam, u_tree : ndarray of shape (M,)
        Standard normal and uniform draws of the two Metropolis steps.
    noise : ndarray of shape (M, n)
        Standard normal draws of the fields (by position).
    s2, sigma2 : float
        Prior variance per component and noise variance.
    log_lo, log_hi, step : float
        Bounds of ``log(lam)`` and random-walk step (``step = 0`` or equal bounds: no length-scale step).
    rho, prec1 : ndarray of shape (M, n), default=None
        Each component's coefficients at its tree and length scale, by position: ``rho = exp(-l / lam)`` and
        the unit-scale precision ``1 / (1 - rho^2)`` (root: 0 and 1); computed when None. A sampler keeps
        them from the previous sweep (``rho_new``, ``prec1_new``), so only proposals cost an exponential per
        vertex.

    Returns
    -------
    G_new : ndarray of shape (M, n)
        The new fields, by vertex.
    F_new : ndarray of shape (n,)
        Their sum.
    lam_new : ndarray of shape (M,)
        The new length scales.
    rho_new, prec1_new : ndarray of shape (M, n)
        The coefficients at the new trees and length scales, by position.
    accepted : ndarray of shape (M,), bool
        Which tree proposals were accepted.
    counts : ndarray of shape (4,), int64
        Length-scale steps accepted and made, tree proposals accepted and made.
    quad : float
        ``sum_m g_m^T Q_m g_m`` with ``s2 = 1`` (the statistic of a ``tau2`` Gibbs step).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels.spanning_trees import routed_sweep
    >>> order, ppos, plen = np.array([[0, 1]]), np.array([[-1, 0]]), np.array([[0.0, 0.5]])
    >>> G = np.zeros((1, 2))
    >>> out = routed_sweep(order, ppos, plen, np.array([1.0]), G, np.zeros(2), np.ones(2), np.array([1.0, 1.0]),
    ...                    np.array([-1]), order, ppos, plen, np.zeros(1), np.ones(1), np.ones(1),
    ...                    np.zeros((1, 2)), 1.0, 0.1, 0.0, 0.0, 0.0)
    >>> out[0].round(3)  # no noise: the posterior mean, pulled towards the data
    array([[0.941, 0.941]])
    """
    i64 = lambda a: np.ascontiguousarray(a, dtype=np.int64)  # noqa: E731
    f64 = lambda a: np.ascontiguousarray(a, dtype=np.float64)  # noqa: E731
    order, ppos, prop_order, prop_ppos = (np.atleast_2d(i64(a)) for a in (order, ppos, prop_order, prop_ppos))
    plen, G, prop_plen, noise = (np.atleast_2d(f64(a)) for a in (plen, G, prop_plen, noise))
    M, n = G.shape
    if order.shape != (M, n) or ppos.shape != (M, n) or plen.shape != (M, n) or noise.shape != (M, n):
        raise ValueError("order, ppos, plen, G and noise must all have shape (M, n).")
    if prop_order.shape[1:] != (n,) or prop_ppos.shape != prop_order.shape or prop_plen.shape != prop_order.shape:
        raise ValueError("prop_order, prop_ppos and prop_plen must have shape (P, n).")
    if np.any(ppos >= np.arange(n)) or np.any(prop_ppos >= np.arange(n)) or np.any(ppos[:, 1:] < 0):
        raise ValueError("ppos must give each position a parent before it (-1 only at position 0).")
    prop_slot = i64(prop_slot)
    if prop_slot.shape != (M,) or np.any(prop_slot >= prop_order.shape[0]):
        raise ValueError("prop_slot must have shape (M,) with entries below the number of proposals.")
    if not (float(s2) > 0 and float(sigma2) > 0):
        raise ValueError("s2 and sigma2 must be positive.")
    lam = f64(lam)
    if rho is None or prec1 is None:
        from ._reference import routed_field_coefficients

        coef = [routed_field_coefficients(ppos[m], plen[m], lam[m]) for m in range(M)]
        rho, prec1 = (np.array([c[k] for c in coef]).reshape(M, n) for k in (0, 1))
    rho, prec1 = f64(rho), f64(prec1)
    if rho.shape != (M, n) or prec1.shape != (M, n):
        raise ValueError("rho and prec1 must have shape (M, n).")
    return _sweep(order, ppos, plen, lam, rho, prec1, G, f64(F), f64(W), f64(S0), prop_slot, prop_order,
                  prop_ppos, prop_plen, f64(z_lam), f64(u_lam), f64(u_tree), noise, float(s2), float(sigma2),
                  float(log_lo), float(log_hi), float(step))


routed_sweep.kernel_spec = _sweep.kernel_spec
tree_collapsed_loglik.kernel_spec = _loglik.kernel_spec


# --- Spanning-tree kernels: Kruskal MST, BFS rooting, tree partitions and tree path lengths (PR-BAST, BAST).


_kruskal = register_kernel("kruskal_mst", reference="sklearn_frontier.kernels.spanning_trees._reference:kruskal_mst",
                           numba="sklearn_frontier.kernels.spanning_trees._numba:kruskal_mst")
_root = register_kernel("root_tree", reference="sklearn_frontier.kernels.spanning_trees._reference:root_tree",
                        numba="sklearn_frontier.kernels.spanning_trees._numba:root_tree")
_labels = register_kernel("partition_labels",
                          reference="sklearn_frontier.kernels.spanning_trees._reference:partition_labels",
                          numba="sklearn_frontier.kernels.spanning_trees._numba:partition_labels")
_paths = register_kernel("tree_path_lengths",
                         reference="sklearn_frontier.kernels.spanning_trees._reference:tree_path_lengths",
                         numba="sklearn_frontier.kernels.spanning_trees._numba:tree_path_lengths")


def kruskal_mst(n, edges, weights):
    """Edge ids of a minimum spanning forest of the graph ``edges`` (E, 2) under ``weights`` (Kruskal).

    Ties are broken by edge id (stable sort), so every backend returns the same tree.

    Parameters
    ----------
    n : int
        Number of vertices.
    edges : array-like of shape (E, 2)
        Edge endpoints, in ``range(n)``.
    weights : array-like of shape (E,)
        Edge weights.

    Returns
    -------
    tree_edges : ndarray of int64
        Ids of the edges of the minimum spanning forest.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import kruskal_mst
    >>> kruskal_mst(3, np.array([[0, 1], [1, 2], [0, 2]]), np.array([1.0, 2.0, 0.5]))
    array([2, 0])
    """
    edges = np.ascontiguousarray(edges, dtype=np.int64).reshape(-1, 2)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    if weights.shape != (edges.shape[0],):
        raise ValueError("weights must have one entry per edge.")
    if edges.size and (edges.min() < 0 or edges.max() >= n):
        raise ValueError("edge endpoints must lie in range(n).")
    return _kruskal(int(n), edges, weights)


def root_tree(n, edges, tree_edges, root):
    """Root the spanning tree ``edges[tree_edges]`` at ``root`` by BFS.

    Parameters
    ----------
    n : int
        Number of vertices.
    edges : array-like of shape (E, 2)
        Edge endpoints of the graph.
    tree_edges : array-like of shape (n - 1,)
        Ids of the spanning tree's edges.
    root : int
        The root vertex.

    Returns
    -------
    order : ndarray of shape (n,)
        Vertices in BFS order.
    parent : ndarray of shape (n,)
        Parent of each vertex (-1 at the root).
    parent_edge : ndarray of shape (n,)
        Edge id joining each vertex to its parent (-1 at the root).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import root_tree
    >>> order, parent, parent_edge = root_tree(3, np.array([[0, 1], [1, 2], [0, 2]]), np.array([2, 0]), 0)
    >>> parent
    array([-1,  0,  0])
    """
    edges = np.ascontiguousarray(edges, dtype=np.int64).reshape(-1, 2)
    tree_edges = np.ascontiguousarray(tree_edges, dtype=np.int64)
    if tree_edges.shape != (int(n) - 1,) or not 0 <= int(root) < int(n):
        raise ValueError("a spanning tree has n - 1 edges and a root in range(n).")
    return _root(int(n), edges, tree_edges, int(root))


def partition_labels(order, parent, cut):
    """Label the pieces left when the parent edges of the vertices flagged in ``cut`` are removed.

    Parameters
    ----------
    order : array-like of shape (n,)
        Vertices in BFS order from the root.
    parent : array-like of shape (n,)
        Parent of each vertex (-1 at the root).
    cut : array-like of bool of shape (n,)
        Vertices whose parent edge is removed.

    Returns
    -------
    labels : ndarray of shape (n,)
        Piece label of each vertex.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import partition_labels
    >>> partition_labels(np.array([0, 2, 1]), np.array([-1, 0, 0]), np.array([False, True, False]))
    array([0, 1, 0])
    """
    return _labels(np.ascontiguousarray(order, dtype=np.int64), np.ascontiguousarray(parent, dtype=np.int64),
                   np.ascontiguousarray(cut, dtype=np.bool_))


def tree_path_lengths(order, parent, parent_length, pairs):
    """Compute the tree path length between the two vertices of each row of ``pairs``.

    Parameters
    ----------
    order : array-like of shape (n,)
        Vertices in BFS order from the root.
    parent : array-like of shape (n,)
        Parent of each vertex (-1 at the root).
    parent_length : array-like of shape (n,)
        Length of the edge from each vertex to its parent.
    pairs : array-like of shape (P, 2)
        Vertex pairs.

    Returns
    -------
    lengths : ndarray of shape (P,)
        Path length of each pair.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import tree_path_lengths
    >>> tree_path_lengths(np.array([0, 2, 1]), np.array([-1, 0, 0]), np.array([0.0, 1.0, 2.0]), np.array([[1, 2]]))
    array([3.])
    """
    return _paths(np.ascontiguousarray(order, dtype=np.int64), np.ascontiguousarray(parent, dtype=np.int64),
                  np.ascontiguousarray(parent_length, dtype=np.float64),
                  np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2))


for _f, _k in ((kruskal_mst, _kruskal), (root_tree, _root), (partition_labels, _labels), (tree_path_lengths, _paths)):
    _f.kernel_spec = _k.kernel_spec


# --- Planar geometry kernels for domain graphs: segment-ring crossings and even-odd point location.


_cross = register_kernel("segments_cross_rings",
                         reference="sklearn_frontier.kernels.spanning_trees._reference:segments_cross_rings",
                         numba="sklearn_frontier.kernels.spanning_trees._numba:segments_cross_rings")
_inside = register_kernel("points_in_rings",
                          reference="sklearn_frontier.kernels.spanning_trees._reference:points_in_rings",
                          numba="sklearn_frontier.kernels.spanning_trees._numba:points_in_rings")


def _as_points(a):
    return np.ascontiguousarray(a, dtype=np.float64).reshape(-1, 2)


def segments_cross_rings(p, q, seg_a, seg_b, tol=0.0):
    """Test whether each segment ``p[i]``–``q[i]`` is properly crossed by a ring segment.

    Only crossings farther than ``tol`` from both of the segment's endpoints count.

    Parameters
    ----------
    p, q : array-like of shape (m, 2)
        Endpoints of the query segments.
    seg_a, seg_b : array-like of shape (s, 2)
        Endpoints of the ring segments.
    tol : float, default=0.0
        Crossings within ``tol`` of an endpoint are ignored.

    Returns
    -------
    crossed : ndarray of bool of shape (m,)
        Whether each query segment is crossed.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import segments_cross_rings
    >>> segments_cross_rings([[0, 0]], [[2, 0]], [[1, -1]], [[1, 1]])
    array([ True])
    """
    return _cross(_as_points(p), _as_points(q), _as_points(seg_a), _as_points(seg_b), float(tol))


def points_in_rings(points, seg_a, seg_b):
    """Test even-odd membership of each point in the rings made of the segments ``seg_a[j]``–``seg_b[j]``.

    Parameters
    ----------
    points : array-like of shape (m, 2)
        Query points.
    seg_a, seg_b : array-like of shape (s, 2)
        Endpoints of the ring segments.

    Returns
    -------
    inside : ndarray of bool of shape (m,)
        Whether each point lies inside the rings.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import points_in_rings
    >>> sq = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float)
    >>> points_in_rings([[0.5, 0.5], [2, 2]], sq, np.roll(sq, -1, axis=0))
    array([ True, False])
    """
    return _inside(_as_points(points), _as_points(seg_a), _as_points(seg_b))


segments_cross_rings.kernel_spec = _cross.kernel_spec
points_in_rings.kernel_spec = _inside.kernel_spec
