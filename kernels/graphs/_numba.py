"""numba twins of the graph kernels: local-scaling weights, and the approximate kNN graph (the same forest and
NN-descent rounds as the reference, on bounded max-heaps).

A row's heap holds its ``k`` best ``(squared distance, index)`` pairs so far, the largest at the root; a push that
is not smaller than the root, or whose index is already there, changes nothing. That keeps exactly the ``k``
smallest distinct pairs pushed, in any order, which is how the reference defines a round. A flag marks the entries
that arrived in the current round: they are the next round's "new" neighbours.
"""

import numpy as np
from numba import float64, int64, njit, types

_F2 = types.Array(float64, 2, "C", readonly=True)
_I2 = types.Array(int64, 2, "C", readonly=True)
_F1 = types.Array(float64, 1, "C", readonly=True)


@njit(float64[:, ::1](_F2, _I2, _F1), cache=True, nogil=True)
def local_scaling_weights(dist, idx, sigma):
    n, k = dist.shape
    w = np.empty((n, k))
    for i in range(n):
        for j in range(k):
            d = dist[i, j]
            w[i, j] = np.exp(-(d * d) / (sigma[i] * sigma[idx[i, j]]))
    return w


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def _mix64(z):
    z = z + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
def _sq_dist(X, p, q):
    s = 0.0
    for j in range(X.shape[1]):
        t = X[p, j] - X[q, j]
        s += t * t
    return s


@njit(cache=True, nogil=True)
def _greater(d1, i1, d2, i2):
    return d1 > d2 or (d1 == d2 and i1 > i2)


@njit(cache=True, nogil=True)
def _push(hd, hi, hf, p, q, d):
    k = hd.shape[1]
    if not _greater(hd[p, 0], hi[p, 0], d, q):
        return 0
    for s in range(k):
        if hi[p, s] == q:
            return 0
    # replace the root and sift down
    pos = 0
    while True:
        left = 2 * pos + 1
        if left >= k:
            break
        right = left + 1
        child = left
        if right < k and _greater(hd[p, right], hi[p, right], hd[p, left], hi[p, left]):
            child = right
        if not _greater(hd[p, child], hi[p, child], d, q):
            break
        hd[p, pos], hi[p, pos], hf[p, pos] = hd[p, child], hi[p, child], hf[p, child]
        pos = child
    hd[p, pos], hi[p, pos], hf[p, pos] = d, q, 1
    return 1


@njit(cache=True, nogil=True)
def _forest(X, hd, hi, hf, seed, n_trees, leaf_size):
    n = X.shape[0]
    rows = np.empty(n, dtype=np.int64)
    buf = np.empty(n, dtype=np.int64)
    starts = np.empty(n + 1, dtype=np.int64)
    ends = np.empty(n + 1, dtype=np.int64)
    keys = np.empty(n + 1, dtype=np.uint64)
    base = _mix64(np.uint64(seed))
    for t in range(n_trees):
        for i in range(n):
            rows[i] = i
        top = 0
        starts[0], ends[0], keys[0] = 0, n, _mix64(base ^ np.uint64(t + 1))
        top = 1
        while top > 0:
            top -= 1
            lo, hi_, key = starts[top], ends[top], keys[top]
            m = hi_ - lo
            if m <= leaf_size:
                for x in range(lo, hi_):
                    for y in range(x + 1, hi_):
                        p, q = rows[x], rows[y]
                        d = _sq_dist(X, p, q)
                        _push(hd, hi, hf, p, q, d)
                        _push(hd, hi, hf, q, p, d)
                continue
            h1 = _mix64(key)
            h2 = _mix64(h1)
            pa = np.int64(h1 % np.uint64(m))
            pb = np.int64(h2 % np.uint64(m - 1))
            if pb >= pa:
                pb += 1
            a, b = rows[lo + pa], rows[lo + pb]
            n_left = 0
            for x in range(lo, hi_):  # stable partition: the left side first, through buf
                p = rows[x]
                da, db = _sq_dist(X, p, a), _sq_dist(X, p, b)
                if da < db or (da == db and (_mix64(key ^ np.uint64(p)) & np.uint64(1)) == np.uint64(0)):
                    buf[lo + n_left] = p
                    n_left += 1
            if n_left == 0 or n_left == m:
                mid = lo + m // 2
            else:
                r = lo + n_left
                for x in range(lo, hi_):
                    p = rows[x]
                    da, db = _sq_dist(X, p, a), _sq_dist(X, p, b)
                    if not (da < db or (da == db and (_mix64(key ^ np.uint64(p)) & np.uint64(1)) == np.uint64(0))):
                        buf[r] = p
                        r += 1
                for x in range(lo, hi_):
                    rows[x] = buf[x]
                mid = lo + n_left
            # the reference pops the right child first: push left, then right
            starts[top], ends[top], keys[top] = lo, mid, _mix64(key ^ np.uint64(1))
            top += 1
            starts[top], ends[top], keys[top] = mid, hi_, _mix64(key ^ np.uint64(2))
            top += 1


@njit(cache=True, nogil=True)
def _round(X, hd, hi, hf):
    n, k = hd.shape
    newf = np.empty((n, k), dtype=np.int64)
    oldf = np.empty((n, k), dtype=np.int64)
    n_newf = np.zeros(n, dtype=np.int64)
    n_oldf = np.zeros(n, dtype=np.int64)
    for p in range(n):
        for s in range(k):
            q = hi[p, s]
            if q < 0:
                continue
            if hf[p, s]:
                newf[p, n_newf[p]] = q
                n_newf[p] += 1
            else:
                oldf[p, n_oldf[p]] = q
                n_oldf[p] += 1
            hf[p, s] = 0
    newr = np.empty((n, k), dtype=np.int64)
    oldr = np.empty((n, k), dtype=np.int64)
    n_newr = np.zeros(n, dtype=np.int64)
    n_oldr = np.zeros(n, dtype=np.int64)
    for u in range(n):
        for s in range(n_newf[u]):
            v = newf[u, s]
            if n_newr[v] < k:
                newr[v, n_newr[v]] = u
                n_newr[v] += 1
        for s in range(n_oldf[u]):
            v = oldf[u, s]
            if n_oldr[v] < k:
                oldr[v, n_oldr[v]] = u
                n_oldr[v] += 1
    new = np.empty(2 * k, dtype=np.int64)
    old = np.empty(2 * k, dtype=np.int64)
    for v in range(n):
        n_new = 0
        for s in range(n_newf[v] + n_newr[v]):
            q = newf[v, s] if s < n_newf[v] else newr[v, s - n_newf[v]]
            seen = False
            for t in range(n_new):
                if new[t] == q:
                    seen = True
                    break
            if not seen:
                new[n_new] = q
                n_new += 1
        n_old = 0
        for s in range(n_oldf[v] + n_oldr[v]):
            q = oldf[v, s] if s < n_oldf[v] else oldr[v, s - n_oldf[v]]
            seen = False
            for t in range(n_new):
                if new[t] == q:
                    seen = True
                    break
            if not seen:
                for t in range(n_old):
                    if old[t] == q:
                        seen = True
                        break
            if not seen:
                old[n_old] = q
                n_old += 1
        for x in range(n_new):
            a = new[x]
            for y in range(x + 1, n_new):
                b = new[y]
                d = _sq_dist(X, a, b)
                _push(hd, hi, hf, a, b, d)
                _push(hd, hi, hf, b, a, d)
            for y in range(n_old):
                b = old[y]
                if b != a:
                    d = _sq_dist(X, a, b)
                    _push(hd, hi, hf, a, b, d)
                    _push(hd, hi, hf, b, a, d)
    changed = 0
    for p in range(n):
        for s in range(k):
            changed += hf[p, s]
    return changed


@njit(cache=True, nogil=True)
def _nn_descent(X, k, seed, n_trees, leaf_size, max_iter, delta):
    n = X.shape[0]
    hd = np.full((n, k), np.inf)
    hi = np.full((n, k), -1, dtype=np.int64)
    hf = np.zeros((n, k), dtype=np.uint8)
    _forest(X, hd, hi, hf, seed, n_trees, leaf_size)
    for p in range(n):  # every first entry is new
        for s in range(k):
            hf[p, s] = 1 if hi[p, s] >= 0 else 0
    rounds = 0
    for _ in range(max_iter):
        rounds += 1
        if _round(X, hd, hi, hf) <= delta * n * k:
            break
    dist = np.empty((n, k))
    idx = np.empty((n, k), dtype=np.int64)
    for p in range(n):  # insertion sort by (distance, index)
        for s in range(k):
            dist[p, s], idx[p, s] = hd[p, s], hi[p, s]
        for s in range(1, k):
            d, q = dist[p, s], idx[p, s]
            t = s - 1
            while t >= 0 and _greater(dist[p, t], idx[p, t], d, q):
                dist[p, t + 1], idx[p, t + 1] = dist[p, t], idx[p, t]
                t -= 1
            dist[p, t + 1], idx[p, t + 1] = d, q
        for s in range(k):
            dist[p, s] = np.sqrt(dist[p, s])
    return dist, idx, rounds


def nn_descent(X, n_neighbors, seed, n_trees, leaf_size, max_iter, delta):
    X = np.ascontiguousarray(X, dtype=np.float64)
    return _nn_descent(X, int(n_neighbors), np.uint64(int(seed)), int(n_trees), int(leaf_size), int(max_iter),
                       float(delta))
