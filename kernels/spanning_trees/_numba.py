"""numba twins of the spanning-tree family's kernels (see ``_reference``)."""

import math

import numpy as np
from numba import boolean, float64, int64, njit, types

_F1 = types.Array(float64, 1, "C", readonly=True)
_F2 = types.Array(float64, 2, "C", readonly=True)
_I1 = types.Array(int64, 1, "C", readonly=True)
_I2 = types.Array(int64, 2, "C", readonly=True)
_B1 = types.Array(boolean, 1, "C", readonly=True)


# --- tree-precision kernels

@njit(types.Tuple((float64[::1], float64[::1], float64, float64))(_I1, _I1, _F1, _F1, _F1, _F1, float64),
      cache=True, nogil=True)
def tree_eliminate(order, parent, rho, prec, obs_weight, obs_sum, sigma2):
    n = order.shape[0]
    e = np.empty(n)
    h = np.empty(n)
    for i in range(n):
        e[i] = obs_weight[i] / sigma2
        h[i] = obs_sum[i] / sigma2
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


@njit(float64[::1](_I1, _I1, _F1, _F1, _F1, _F1, _F1), cache=True, nogil=True)
def tree_back_substitute(order, parent, rho, prec, d, h_tilde, noise):
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


@njit(types.Tuple((float64[::1], float64, float64))(_I1, _I1, _F1, _F1, _F1, _F1, float64, _F1),
      cache=True, nogil=True)
def tree_precision_solve(order, parent, rho, prec, obs_weight, obs_sum, sigma2, noise):
    d, h, ldr, quad = tree_eliminate(order, parent, rho, prec, obs_weight, obs_sum, sigma2)
    return tree_back_substitute(order, parent, rho, prec, d, h, noise), ldr, quad


@njit(float64(_I1, _I1, _F1, _F1, _F1, _F1, float64, float64, float64), cache=True, nogil=True)
def tree_collapsed_loglik(order, parent, rho, prec, obs_weight, obs_sum, sigma2, sum_sq, n_obs):
    d, h, ldr, quad = tree_eliminate(order, parent, rho, prec, obs_weight, obs_sum, sigma2)
    return -0.5 * ldr + 0.5 * quad - sum_sq / (2.0 * sigma2) - 0.5 * n_obs * math.log(2.0 * math.pi * sigma2)


@njit(types.Tuple((float64[::1], float64[::1]))(_F1, float64, float64, int64), cache=True, nogil=True)
def routed_coefficients(parent_length, length_scale, s2, root):
    n = parent_length.shape[0]
    rho = np.empty(n)
    prec = np.empty(n)
    for i in range(n):
        x = parent_length[i] / length_scale
        rho[i] = math.exp(-x)
        den = s2 * -math.expm1(-2.0 * x)
        prec[i] = 1.0 / den if den > 0 else math.inf
    rho[root] = 0.0
    prec[root] = 1.0 / s2
    return rho, prec


@njit(cache=True, nogil=True)
def _stable_argsort(keys):
    """The stable ascending order of ``keys`` (== ``np.argsort(keys, kind="stable")``) in expected O(n).

    Counting sort into n buckets of equal key width, then a stable insertion sort within each bucket;
    crowded buckets (ties, heavy tails) fall back to a merge sort, so the worst case stays O(n log n).
    """
    n = keys.shape[0]
    out = np.empty(n, dtype=np.int64)
    if n == 0:
        return out
    lo = keys[0]
    hi = keys[0]
    for i in range(n):
        x = keys[i]
        if x < lo:
            lo = x
        if x > hi:
            hi = x
    if not (hi > lo) or not math.isfinite(hi - lo):
        return np.argsort(keys, kind="mergesort")
    scale = (n - 1) / (hi - lo)
    bucket = np.empty(n, dtype=np.int64)
    start = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        b = int((keys[i] - lo) * scale)
        if b > n - 1:
            b = n - 1
        bucket[i] = b
        start[b + 1] += 1
    for b in range(n):
        start[b + 1] += start[b]
    fill = start[:-1].copy()
    for i in range(n):
        b = bucket[i]
        out[fill[b]] = i
        fill[b] += 1
    for b in range(n):
        a, z = start[b], start[b + 1]
        if z - a <= 1:
            continue
        if z - a > 32:
            seg = out[a:z].copy()
            sub = np.argsort(keys[seg], kind="mergesort")
            for k in range(z - a):
                out[a + k] = seg[sub[k]]
            continue
        for k in range(a + 1, z):
            idx = out[k]
            x = keys[idx]
            j = k - 1
            while j >= a and keys[out[j]] > x:
                out[j + 1] = out[j]
                j -= 1
            out[j + 1] = idx
    return out


# --- spanning-tree kernels

@njit(int64[::1](int64, _I2, _F1), cache=True, nogil=True)
def kruskal_mst(n, edges, weights):
    order = _stable_argsort(weights)
    parent = np.arange(n)
    rank = np.zeros(n, dtype=np.int64)
    out = np.empty(max(n - 1, 0), dtype=np.int64)
    m = 0
    for idx in range(order.shape[0]):
        if m == n - 1:
            break
        e = order[idx]
        a = edges[e, 0]
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        b = edges[e, 1]
        while parent[b] != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        if a == b:
            continue
        if rank[a] < rank[b]:
            a, b = b, a
        parent[b] = a
        if rank[a] == rank[b]:
            rank[a] += 1
        out[m] = e
        m += 1
    return out[:m].copy()


@njit(types.Tuple((int64[::1], int64[::1], int64[::1]))(int64, _I2, _I1, int64), cache=True, nogil=True)
def root_tree(n, edges, tree_edges, root):
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
        u = edges[e, 0]
        v = edges[e, 1]
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
    head = 0
    tail = 1
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


@njit(int64[::1](_I1, _I1, _B1), cache=True, nogil=True)
def partition_labels(order, parent, cut):
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


@njit(float64[::1](_I1, _I1, _F1, _I2), cache=True, nogil=True)
def tree_path_lengths(order, parent, parent_length, pairs):
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
        a = pairs[k, 0]
        b = pairs[k, 1]
        if depth[a] < depth[b]:
            t = a
            a = b
            b = t
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

@njit(boolean[::1](_F2, _F2, _F2, _F2, float64), cache=True, nogil=True)
def segments_cross_rings(p, q, seg_a, seg_b, tol):
    n = p.shape[0]
    m = seg_a.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        px, py, qx, qy = p[i, 0], p[i, 1], q[i, 0], q[i, 1]
        dx, dy = qx - px, qy - py
        length = math.sqrt(dx * dx + dy * dy)
        for j in range(m):
            ax, ay, bx, by = seg_a[j, 0], seg_a[j, 1], seg_b[j, 0], seg_b[j, 1]
            if (min(px, qx) > max(ax, bx) or max(px, qx) < min(ax, bx)
                    or min(py, qy) > max(ay, by) or max(py, qy) < min(ay, by)):
                continue
            ex, ey = bx - ax, by - ay
            o1 = dx * (ay - py) - dy * (ax - px)
            o2 = dx * (by - py) - dy * (bx - px)
            o3 = ex * (py - ay) - ey * (px - ax)
            o4 = ex * (qy - ay) - ey * (qx - ax)
            if not (o1 * o2 < 0 and o3 * o4 < 0):
                continue
            t = ((ax - px) * ey - (ay - py) * ex) / (dx * ey - dy * ex)
            if t * length > tol and (1.0 - t) * length > tol:
                out[i] = True
                break
    return out


@njit(boolean[::1](_F2, _F2, _F2), cache=True, nogil=True)
def points_in_rings(points, seg_a, seg_b):
    n = points.shape[0]
    m = seg_a.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        x, y = points[i, 0], points[i, 1]
        inside = False
        for j in range(m):
            ax, ay, bx, by = seg_a[j, 0], seg_a[j, 1], seg_b[j, 0], seg_b[j, 1]
            if (ay > y) != (by > y):
                if x < (bx - ax) * (y - ay) / (by - ay) + ax:
                    inside = not inside
        out[i] = inside
    return out


# --- whole routed-field sweeps (the PR-BAST sampler's inner loop)

@njit(cache=True, nogil=True, inline="always")
def _reflect(z, lo, hi):
    width = hi - lo
    y = (z - lo) % (2.0 * width)
    return lo + (y if y <= width else 2.0 * width - y)


@njit(cache=True, nogil=True)
def _routed_coefficients(ppos, plen, lam, rho, prec1):
    """``rho = exp(-l / lam)`` and the unit-scale precision ``1 / ((1 - rho)(1 + rho))`` from one ``expm1``."""
    n = ppos.shape[0]
    for k in range(n):
        if ppos[k] < 0:
            rho[k] = 0.0
            prec1[k] = 1.0
        else:
            em = math.expm1(-plen[k] / lam)
            r = 1.0 + em
            omr2 = -em * (1.0 + r)
            rho[k] = r
            prec1[k] = 1.0 / omr2 if omr2 > 0 else math.inf


@njit(cache=True, nogil=True)
def _gather(order, W, S0, F, Gm, w, s):
    """Weights and partial-residual sums in BFS positions: ``s = S0 - W (F - g_m)`` at ``order``."""
    for k in range(order.shape[0]):
        v = order[k]
        w[k] = W[v]
        s[k] = S0[v] - W[v] * (F[v] - Gm[v])


@njit(cache=True, nogil=True)
def _routed_eliminate(ppos, rho, prec1, inv_s2, w, s, sigma2, e, d, h):
    """Leaves-first elimination of the routed field (precision ``prec1 / s2``) in BFS positions; fills the
    pivots ``d`` and the eliminated right-hand side ``h`` and returns the collapsed log-likelihood up to terms
    that depend on neither the tree nor the length scale. ``log|P| - log|Q| = sum log(d / prec)`` is
    accumulated as a product, one ``log`` per block of factors (each factor is at least 1)."""
    n = ppos.shape[0]
    inv_sigma2 = 1.0 / sigma2
    for k in range(n):
        e[k] = w[k] * inv_sigma2
        h[k] = s[k] * inv_sigma2
    ldr = 0.0
    prod = 1.0
    quad = 0.0
    for k in range(n - 1, -1, -1):
        lv = prec1[k] * inv_s2
        if math.isinf(lv):
            d[k] = math.inf
            t = 1.0
        else:
            dk = lv + e[k]
            d[k] = dk
            inv = 1.0 / dk
            prod *= dk / lv
            if prod > 1e200:
                ldr += math.log(prod)
                prod = 1.0
            quad += h[k] * h[k] * inv
            t = lv * inv
        p = ppos[k]
        if p >= 0:
            r = rho[k]
            e[p] += r * r * t * e[k]
            h[p] += r * t * h[k]
    ldr += math.log(prod)
    return -0.5 * ldr + 0.5 * quad


@njit(cache=True, nogil=True)
def routed_sweep(order, ppos, plen, lam, rho, prec1, G, F, W, S0, prop_slot, prop_order, prop_ppos, prop_plen,
                 z_lam, u_lam, u_tree, noise, s2, sigma2, log_lo, log_hi, step, out_G=None, out_rho=None,
                 out_prec1=None):
    M, n = G.shape
    # a sampler passes the previous sweep's spare arrays: no fresh (M, n) allocation per sweep
    if out_G is None:
        G_new = np.empty((M, n))
    else:
        G_new = out_G
    if out_rho is None:
        rho_new = np.empty((M, n))
    else:
        rho_new = out_rho
    if out_prec1 is None:
        prec1_new = np.empty((M, n))
    else:
        prec1_new = out_prec1
    F_new = F.copy()
    lam_new = lam.copy()
    accepted = np.zeros(M, dtype=np.bool_)
    counts = np.zeros(4, dtype=np.int64)
    ws = np.empty((2, 2, n))  # (w, s) in the positions of the current tree and of a proposed one
    e = np.empty(n)
    dh = np.empty((2, 2, n))  # (d, h) of the current state and of a proposal
    prop_rho = np.empty(n)
    prop_prec1 = np.empty(n)
    g = np.empty(n)
    inv_s2 = 1.0 / s2
    quad_total = 0.0
    for m in range(M):
        o, pp = order[m], ppos[m]
        _gather(o, W, S0, F_new, G[m], ws[0, 0], ws[0, 1])
        cur_rho, cur_prec1 = rho[m], prec1[m]
        cur = 0
        changed = False
        ll = _routed_eliminate(pp, cur_rho, cur_prec1, inv_s2, ws[0, 0], ws[0, 1], sigma2, e, dh[0, 0], dh[0, 1])
        if step > 0 and log_hi > log_lo:
            lam_prop = math.exp(_reflect(math.log(lam_new[m]) + step * z_lam[m], log_lo, log_hi))
            _routed_coefficients(pp, plen[m], lam_prop, prop_rho, prop_prec1)
            ll_prop = _routed_eliminate(pp, prop_rho, prop_prec1, inv_s2, ws[0, 0], ws[0, 1], sigma2, e, dh[1, 0],
                                        dh[1, 1])
            counts[1] += 1
            if math.log(u_lam[m]) < ll_prop - ll:
                counts[0] += 1
                lam_new[m] = lam_prop
                ll = ll_prop
                cur = 1
                rho_new[m, :] = prop_rho
                prec1_new[m, :] = prop_prec1
                cur_rho, cur_prec1 = rho_new[m], prec1_new[m]
                changed = True
        j = prop_slot[m]
        if j >= 0:
            _gather(prop_order[j], W, S0, F_new, G[m], ws[1, 0], ws[1, 1])
            _routed_coefficients(prop_ppos[j], prop_plen[j], lam_new[m], prop_rho, prop_prec1)
            ll_prop = _routed_eliminate(prop_ppos[j], prop_rho, prop_prec1, inv_s2, ws[1, 0], ws[1, 1], sigma2, e,
                                        dh[1 - cur, 0], dh[1 - cur, 1])
            counts[3] += 1
            if math.log(u_tree[m]) < ll_prop - ll:
                counts[2] += 1
                accepted[m] = True
                cur = 1 - cur
                o, pp = prop_order[j], prop_ppos[j]
                rho_new[m, :] = prop_rho
                prec1_new[m, :] = prop_prec1
                cur_rho, cur_prec1 = rho_new[m], prec1_new[m]
                changed = True
        if not changed:
            rho_new[m, :] = cur_rho
            prec1_new[m, :] = cur_prec1
        d, h = dh[cur, 0], dh[cur, 1]
        q = 0.0
        for k in range(n):
            p = pp[k]
            p1 = cur_prec1[k]
            if math.isinf(p1):
                g[k] = cur_rho[k] * g[p]
                continue
            lv = p1 * inv_s2
            mean = h[k]
            if p >= 0:
                mean += cur_rho[k] * lv * g[p]
            g[k] = mean / d[k] + noise[m, k] / math.sqrt(d[k])
            r = g[k] - (cur_rho[k] * g[p] if p >= 0 else 0.0)
            q += p1 * r * r
        quad_total += q
        for k in range(n):
            v = o[k]
            F_new[v] += g[k] - G[m, v]
            G_new[m, v] = g[k]
    return G_new, F_new, lam_new, rho_new, prec1_new, accepted, counts, quad_total


