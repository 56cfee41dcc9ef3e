"""Tree-precision kernels: exact O(n) posterior draws and collapsed likelihoods of tree Gaussian fields.

Used by the spanning-tree regressors (PR-BAST, BAST). The field on a rooted tree has precision
``Q = (I - B)^T diag(prec) (I - B)`` with ``B[v, parent v] = rho[v]``; adding Gaussian observations keeps
the tree structure, so leaves-first elimination has zero fill-in and root-first substitution samples it.
"""

import numpy as np

from ._dispatch import register_kernel

__all__ = ["tree_precision_solve", "tree_collapsed_loglik", "random_rooted_tree"]


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
    >>> from sklearn_frontier.kernels.tree_precision import random_rooted_tree
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


def _make_inputs(rng, with_noise=True, loglik=False):
    n = int(rng.choice([1, 2, 3, int(rng.integers(4, 80))]))
    order, parent = random_rooted_tree(n, rng, kind=str(rng.choice(["recursive", "path", "star"])))
    rho = rng.uniform(0.0, 1.0, n)
    rho[rng.random(n) < 0.15] = 0.0
    rho[rng.random(n) < 0.15] = 1.0
    prec = rng.uniform(0.2, 5.0, n) * np.where(rng.random(n) < 0.2, 1e8, 1.0)
    links = rng.random(n) < 0.15
    links[order[0]] = False
    prec[links] = np.inf
    w = rng.integers(0, 4, n).astype(np.float64) * (rng.random(n) < 0.75)
    s = w * rng.normal(size=n)
    sigma2 = float(rng.uniform(0.05, 2.0))
    if loglik:
        return (order, parent, rho, prec, w, s, sigma2, float(np.sum(w * rng.uniform(1, 3, n)) + 1.0),
                float(w.sum())), {}
    noise = rng.normal(size=n) if with_noise and rng.random() < 0.5 else np.zeros(n)
    return (order, parent, rho, prec, w, s, sigma2, noise), {}


_solve = register_kernel(
    "tree_precision_solve",
    reference="sklearn_frontier.kernels._tree_precision_reference:tree_precision_solve",
    numba="sklearn_frontier.kernels._tree_precision_numba:tree_precision_solve",
    make_inputs=_make_inputs,
    rtol=1e-11,
    atol=1e-12,
)
_loglik = register_kernel(
    "tree_collapsed_loglik",
    reference="sklearn_frontier.kernels._tree_precision_reference:tree_collapsed_loglik",
    numba="sklearn_frontier.kernels._tree_precision_numba:tree_collapsed_loglik",
    make_inputs=lambda rng: _make_inputs(rng, loglik=True),
    rtol=1e-11,
    atol=1e-12,
)


def _routed_inputs(rng):
    n = int(rng.choice([1, 2, int(rng.integers(3, 60))]))
    plen = rng.uniform(0, 2, n) * (rng.random(n) < 0.9)
    return (plen, float(10 ** rng.uniform(-2, 3)), float(rng.uniform(0.01, 2)), int(rng.integers(n))), {}


_routed = register_kernel(
    "routed_coefficients",
    reference="sklearn_frontier.kernels._tree_precision_reference:routed_coefficients",
    numba="sklearn_frontier.kernels._tree_precision_numba:routed_coefficients",
    make_inputs=_routed_inputs,
    rtol=1e-13,
    atol=0.0,
)


def _check_tree_args(order, parent, rho, prec, obs_weight, obs_sum, sigma2):
    order = np.ascontiguousarray(order, dtype=np.int64)
    parent = np.ascontiguousarray(parent, dtype=np.int64)
    rho, prec, obs_weight, obs_sum = (np.ascontiguousarray(a, dtype=np.float64) for a in (rho, prec, obs_weight, obs_sum))
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
tree_collapsed_loglik.kernel_spec = _loglik.kernel_spec
