"""numpy references for the spanning-tree family's kernels (the oracles).

Tree precision:

A Gaussian field on a rooted tree: ``g(root) ~ N(0, 1/prec[root])`` and
``g(v) | g(parent v) ~ N(rho[v] g(parent v), 1/prec[v])`` (``prec[v] = inf``: hard link). Its precision
``Q = (I - B)^T diag(prec) (I - B)`` has non-zeros only on the diagonal and on tree edges, so with
Gaussian observations the posterior precision ``P = Q + diag(obs_weight) / sigma2`` is eliminated leaves
first with zero fill-in.
"""

import math

import numpy as np

# --- tree-precision kernels

def tree_eliminate(order, parent, rho, prec, obs_weight, obs_sum, sigma2):
    """Leaves-first elimination of ``P = Q + diag(W)/sigma2`` with ``h = S/sigma2``.

    Returns ``(d, h_tilde, log_det_ratio, quad)``: the pivots, the eliminated right-hand side,
    ``log|P| - log|Q|`` and ``h^T P^{-1} h``. The excess ``e_v`` (observation precision carried up from
    the eliminated subtree) is accumulated instead of subtracting ``o^2/d``, which stays exact when
    ``prec`` is huge and makes ``prec = inf`` (a hard link) exact.
    """
    n = order.shape[0]
    e = np.array(obs_weight, dtype=np.float64) / sigma2
    h = np.array(obs_sum, dtype=np.float64) / sigma2
    d = np.empty(n)
    ldr = 0.0
    quad = 0.0
    for k in range(n - 1, -1, -1):
        v = order[k]
        lam = prec[v]
        if math.isinf(lam):
            d[v] = math.inf
            t = 1.0
        else:
            d[v] = lam + e[v]
            ldr += math.log1p(e[v] / lam)
            quad += h[v] * h[v] / d[v]
            t = lam / d[v]
        p = parent[v]
        if p >= 0:
            e[p] += rho[v] * rho[v] * t * e[v]
            h[p] += rho[v] * t * h[v]
    return d, h, ldr, quad


def tree_back_substitute(order, parent, rho, prec, d, h_tilde, noise):
    """Root-first pass: ``noise = 0`` gives ``P^{-1} h``, ``noise ~ N(0, I)`` an exact draw from N(P^-1 h, P^-1)."""
    n = order.shape[0]
    g = np.empty(n)
    for k in range(n):
        v = order[k]
        p = parent[v]
        lam = prec[v]
        if math.isinf(lam):
            g[v] = rho[v] * g[p]
            continue
        m = h_tilde[v]
        if p >= 0:
            m += rho[v] * lam * g[p]
        g[v] = m / d[v] + noise[v] / math.sqrt(d[v])
    return g


def tree_precision_solve(order, parent, rho, prec, obs_weight, obs_sum, sigma2, noise):
    """Posterior mean (``noise`` all zero) or exact draw, plus ``log|P| - log|Q|`` and ``h^T P^{-1} h``.

    Parameters
    ----------
    order : ndarray of shape (n,), int64
        BFS order from the root (``order[0]`` is the root).
    parent : ndarray of shape (n,), int64
        Parent of each vertex, -1 at the root.
    rho : ndarray of shape (n,), float64
        Routing coefficient of each vertex on its parent (ignored at the root).
    prec : ndarray of shape (n,), float64
        Conditional precision (``inf`` = hard link; finite at the root).
    obs_weight, obs_sum : ndarray of shape (n,), float64
        Per-vertex observation weight ``W_v`` and weighted sum ``S_v``.
    sigma2 : float
        Noise variance.
    noise : ndarray of shape (n,), float64
        Standard normal draws (zeros for the posterior mean).

    Returns
    -------
    values : ndarray of shape (n,)
    log_det_ratio : float
    quad : float
    """
    d, h, ldr, quad = tree_eliminate(order, parent, rho, prec, obs_weight, obs_sum, sigma2)
    return tree_back_substitute(order, parent, rho, prec, d, h, noise), ldr, quad


def tree_collapsed_loglik(order, parent, rho, prec, obs_weight, obs_sum, sigma2, sum_sq, n_obs):
    """Exact log marginal likelihood of the observations with the tree field integrated out.

    ``-0.5 ldr + 0.5 quad - sum_sq/(2 sigma2) - (n_obs/2) log(2 pi sigma2)``.
    """
    _, _, ldr, quad = tree_eliminate(order, parent, rho, prec, obs_weight, obs_sum, sigma2)
    return -0.5 * ldr + 0.5 * quad - sum_sq / (2.0 * sigma2) - 0.5 * n_obs * math.log(2.0 * math.pi * sigma2)


def routed_coefficients(parent_length, length_scale, s2, root):
    """``(rho, prec)`` of the routed field: ``rho = exp(-l/lam)``, ``prec = 1/(s2 (1 - rho^2))``; root N(0, s2)."""
    x = parent_length / length_scale
    rho = np.exp(-x)
    with np.errstate(divide="ignore"):
        prec = 1.0 / (s2 * -np.expm1(-2.0 * x))
    rho[root] = 0.0
    prec[root] = 1.0 / s2
    return rho, prec


# --- spanning-tree kernels

def kruskal_mst(n, edges, weights):
    """Edge ids of a minimum spanning forest (Kruskal; stable order on ties; union by rank, path halving)."""
    order = np.argsort(weights, kind="mergesort")
    parent = list(range(n))
    rank = [0] * n

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    out = []
    for e in order:
        if len(out) == n - 1:
            break
        a, b = find(int(edges[e, 0])), find(int(edges[e, 1]))
        if a == b:
            continue
        if rank[a] < rank[b]:
            a, b = b, a
        parent[b] = a
        if rank[a] == rank[b]:
            rank[a] += 1
        out.append(int(e))
    return np.asarray(out, dtype=np.int64)


def root_tree(n, edges, tree_edges, root):
    """BFS ``(order, parent, parent_edge)`` of the tree ``edges[tree_edges]`` rooted at ``root``."""
    m = tree_edges.shape[0]
    deg = np.zeros(n + 1, dtype=np.int64)
    for k in range(m):
        e = tree_edges[k]
        deg[edges[e, 0] + 1] += 1
        deg[edges[e, 1] + 1] += 1
    start = np.cumsum(deg)
    fill = start[:-1].copy()
    nbr = np.empty(2 * m, dtype=np.int64)
    nbr_edge = np.empty(2 * m, dtype=np.int64)
    for k in range(m):
        e = tree_edges[k]
        u, v = edges[e, 0], edges[e, 1]
        nbr[fill[u]] = v
        nbr_edge[fill[u]] = e
        fill[u] += 1
        nbr[fill[v]] = u
        nbr_edge[fill[v]] = e
        fill[v] += 1
    parent = np.full(n, -2, dtype=np.int64)
    parent_edge = np.full(n, -1, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    parent[root] = -1
    order[0] = root
    head, tail = 0, 1
    while head < tail:
        u = order[head]
        head += 1
        for j in range(start[u], start[u + 1]):
            v = nbr[j]
            if parent[v] == -2:
                parent[v] = u
                parent_edge[v] = nbr_edge[j]
                order[tail] = v
                tail += 1
    if tail != n:
        raise ValueError("tree_edges do not span the vertices.")
    return order, parent, parent_edge


def partition_labels(order, parent, cut):
    """Piece labels of a rooted tree with the parent edges of ``cut`` vertices removed (BFS encounter order)."""
    n = order.shape[0]
    labels = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(n):
        v = order[i]
        if parent[v] < 0 or cut[v]:
            labels[v] = k
            k += 1
        else:
            labels[v] = labels[parent[v]]
    return labels


def tree_path_lengths(order, parent, parent_length, pairs):
    """Length of the tree path between each pair of vertices (binary-lifting LCA, O((n + P) log n))."""
    n = order.shape[0]
    depth = np.zeros(n, dtype=np.int64)
    dist = np.zeros(n)
    for i in range(1, n):
        v = order[i]
        depth[v] = depth[parent[v]] + 1
        dist[v] = dist[parent[v]] + parent_length[v]
    levels = 1
    while (1 << levels) < n:
        levels += 1
    up = np.empty((levels, n), dtype=np.int64)
    for v in range(n):
        up[0, v] = parent[v] if parent[v] >= 0 else v
    for j in range(1, levels):
        for v in range(n):
            up[j, v] = up[j - 1, up[j - 1, v]]
    out = np.empty(pairs.shape[0])
    for k in range(pairs.shape[0]):
        a, b = pairs[k, 0], pairs[k, 1]
        if depth[a] < depth[b]:
            a, b = b, a
        diff = depth[a] - depth[b]
        j = 0
        while diff > 0:
            if diff & 1:
                a = up[j, a]
            diff >>= 1
            j += 1
        if a != b:
            for j in range(levels - 1, -1, -1):
                if up[j, a] != up[j, b]:
                    a = up[j, a]
                    b = up[j, b]
            a = up[0, a]
        out[k] = dist[pairs[k, 0]] + dist[pairs[k, 1]] - 2.0 * dist[a]
    return out


# --- planar geometry kernels

def segments_cross_rings(p, q, seg_a, seg_b, tol):
    """For each segment ``p[i] -> q[i]``: does a ring segment ``seg_a[j] -> seg_b[j]`` properly cross it
    farther than ``tol`` from both of its endpoints?"""
    n = p.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    if n == 0 or seg_a.shape[0] == 0:
        return out
    chunk = max(1, 200_000 // seg_a.shape[0])
    ax, ay, bx, by = seg_a[:, 0], seg_a[:, 1], seg_b[:, 0], seg_b[:, 1]
    sxmin, sxmax = np.minimum(ax, bx), np.maximum(ax, bx)
    symin, symax = np.minimum(ay, by), np.maximum(ay, by)
    for s in range(0, n, chunk):
        px, py = p[s:s + chunk, 0:1], p[s:s + chunk, 1:2]
        qx, qy = q[s:s + chunk, 0:1], q[s:s + chunk, 1:2]
        box = ((np.minimum(px, qx) <= sxmax) & (np.maximum(px, qx) >= sxmin)
               & (np.minimum(py, qy) <= symax) & (np.maximum(py, qy) >= symin))
        dx, dy = qx - px, qy - py
        ex, ey = bx - ax, by - ay
        o1 = dx * (ay - py) - dy * (ax - px)
        o2 = dx * (by - py) - dy * (bx - px)
        o3 = ex * (py - ay) - ey * (px - ax)
        o4 = ex * (qy - ay) - ey * (qx - ax)
        proper = box & (o1 * o2 < 0) & (o3 * o4 < 0)
        denom = dx * ey - dy * ex
        with np.errstate(divide="ignore", invalid="ignore"):
            t = ((ax - px) * ey - (ay - py) * ex) / denom
        length = np.sqrt(dx * dx + dy * dy)
        far = (t * length > tol) & ((1.0 - t) * length > tol)
        out[s:s + chunk] = np.any(proper & far, axis=1)
    return out


def points_in_rings(points, seg_a, seg_b):
    """Even-odd rule: is each point inside the union of rings given by their segments?"""
    n = points.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    if n == 0 or seg_a.shape[0] == 0:
        return out
    chunk = max(1, 200_000 // seg_a.shape[0])
    ax, ay, bx, by = seg_a[:, 0], seg_a[:, 1], seg_b[:, 0], seg_b[:, 1]
    for s in range(0, n, chunk):
        x, y = points[s:s + chunk, 0:1], points[s:s + chunk, 1:2]
        straddle = (ay > y) != (by > y)
        with np.errstate(divide="ignore", invalid="ignore"):
            xc = (bx - ax) * (y - ay) / (by - ay) + ax
        out[s:s + chunk] = (np.sum(straddle & (x < xc), axis=1) % 2) == 1
    return out


# --- whole routed-field sweeps

def _reflect(z, lo, hi):
    width = hi - lo
    y = (z - lo) % (2.0 * width)
    return lo + (y if y <= width else 2.0 * width - y)


def routed_field_coefficients(parent, parent_length, length_scale):
    """``(rho, prec1)`` of the routed field at unit scale from one ``expm1`` per vertex: ``rho = exp(-l/lam)``,
    ``prec1 = 1 / ((1 - rho)(1 + rho))`` (``inf`` where ``rho = 1``); the root (parent -1) has rho 0, prec1 1.
    The field's conditional precisions are ``prec1 / s2``."""
    em = np.expm1(-np.asarray(parent_length, dtype=np.float64) / length_scale)
    rho = 1.0 + em
    omr2 = -em * (1.0 + rho)
    with np.errstate(divide="ignore"):
        prec1 = np.where(omr2 > 0, 1.0 / np.where(omr2 > 0, omr2, 1.0), np.inf)
    root = np.asarray(parent) < 0
    rho[root] = 0.0
    prec1[root] = 1.0
    return rho, prec1


def routed_sweep(order, ppos, plen, lam, rho, prec1, G, F, W, S0, prop_slot, prop_order, prop_ppos, prop_plen,
                 z_lam, u_lam, u_tree, noise, s2, sigma2, log_lo, log_hi, step, out_G=None, out_rho=None,
                 out_prec1=None):
    """One backfitting sweep over the ``M`` routed components.

    Component ``m``'s rooted tree is given in BFS positions: ``order[m]`` (position -> vertex, root first),
    ``ppos[m]`` (position of the parent, -1 at the root) and ``plen[m]`` (parent-edge length), and ``rho``,
    ``prec1`` (M, n) hold its coefficients at its current length scale (:func:`routed_field_coefficients`),
    also by position; ``G`` (M, n) and ``F`` are the fields and their sum by vertex, ``noise`` (M, n) is
    indexed by position. Per component: partial residual sums, then a reflected random-walk Metropolis step
    on ``log(lam)`` and, where ``prop_slot >= 0``, an independence step to the proposed rooted tree, both
    with the field integrated out (exact collapsed likelihood), then an exact draw of the field. Returns
    ``(G_new, F_new, lam_new, rho_new, prec1_new, accepted, counts, quad)``: the new fields and their sum,
    length scales and coefficients, which tree proposals were accepted, ``(length-scale accepted, proposed,
    tree accepted, proposed)`` and ``sum_m g_m^T Q_m g_m`` at unit prior scale (the ``tau2`` statistic).
    ``out_G``, ``out_rho``, ``out_prec1`` (M, n), when given, receive the new arrays (no allocation).
    """
    M, n = G.shape
    G_new = np.empty((M, n)) if out_G is None else out_G
    rho_new = np.empty((M, n)) if out_rho is None else out_rho
    prec1_new = np.empty((M, n)) if out_prec1 is None else out_prec1
    F_new = np.array(F, dtype=np.float64)
    lam_new = np.array(lam, dtype=np.float64)
    accepted = np.zeros(M, dtype=bool)
    counts = np.zeros(4, dtype=np.int64)
    quad_total = 0.0
    inv_s2 = 1.0 / s2
    positions = np.arange(n)

    def loglik(o, pp, r, p1, m):
        # positions are a valid labelling: every parent precedes its children
        w, s = W[o], S0[o] - W[o] * (F_new[o] - G[m][o])
        d, h, ldr, quad = tree_eliminate(positions, pp, r, p1 * inv_s2, w, s, sigma2)
        return -0.5 * ldr + 0.5 * quad, (r, p1, d, h)

    for m in range(M):
        o, pp = order[m], ppos[m]
        ll, state = loglik(o, pp, rho[m], prec1[m], m)
        if step > 0 and log_hi > log_lo:
            lam_prop = math.exp(_reflect(math.log(lam_new[m]) + step * z_lam[m], log_lo, log_hi))
            ll_prop, state_prop = loglik(o, pp, *routed_field_coefficients(pp, plen[m], lam_prop), m)
            counts[1] += 1
            if math.log(u_lam[m]) < ll_prop - ll:
                counts[0] += 1
                lam_new[m], ll, state = lam_prop, ll_prop, state_prop
        j = prop_slot[m]
        if j >= 0:
            coef = routed_field_coefficients(prop_ppos[j], prop_plen[j], lam_new[m])
            ll_prop, state_prop = loglik(prop_order[j], prop_ppos[j], *coef, m)
            counts[3] += 1
            if math.log(u_tree[m]) < ll_prop - ll:
                counts[2] += 1
                accepted[m] = True
                state = state_prop
                o, pp = prop_order[j], prop_ppos[j]
        r, p1, d, h = state
        rho_new[m], prec1_new[m] = r, p1
        g = tree_back_substitute(positions, pp, r, p1 * inv_s2, d, h, noise[m])
        gp = np.where(pp >= 0, r * g[np.maximum(pp, 0)], 0.0)
        finite = ~np.isinf(p1)
        quad_total += float(np.sum(p1[finite] * (g[finite] - gp[finite]) ** 2))
        G_new[m, o] = g
        F_new[o] += g - G[m][o]
    return G_new, F_new, lam_new, rho_new, prec1_new, accepted, counts, quad_total
