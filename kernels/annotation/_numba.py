"""numba twins of the annotation kernels."""

import math

import numpy as np
from numba import njit

_LN2 = math.log(2.0)
_HALF_LN_2PI = 0.5 * math.log(2.0 * math.pi)


@njit(cache=True, nogil=True)
def _stirling_delta(z):
    # lgamma(z) - [(z - 1/2) ln z - z + ln(2 pi)/2] for z >= 8: error below 1e-15.
    z2 = 1.0 / (z * z)
    return (1.0 / 12.0 - z2 * (1.0 / 360.0 - z2 * (1.0 / 1260.0 - z2 * (1.0 / 1680.0 - z2 / 1188.0)))) / z


@njit(cache=True, nogil=True)
def _log_prefactor(a, b):
    # log[ x^a (1-x)^b / B(a, b) ] at x = 1/2, accurate when a ~ b are large (no lgamma cancellation).
    if a >= 8.0 and b >= 8.0:
        s = a + b
        return (a * math.log1p((b - a) / (2.0 * a)) + b * math.log1p((a - b) / (2.0 * b))
                + 0.5 * math.log(a * b / s) - _HALF_LN_2PI
                + _stirling_delta(s) - _stirling_delta(a) - _stirling_delta(b))
    return math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) - (a + b) * _LN2


@njit(cache=True, nogil=True)
def _betacf_half(a, b):
    # Modified Lentz continued fraction of I_x(a, b) at x = 1/2 (Numerical Recipes betacf).
    tiny = 1e-300
    eps = 1e-15
    x = 0.5
    qab = a + b
    qap = a + 1.0
    qam = a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if abs(d) < tiny:
        d = tiny
    d = 1.0 / d
    h = d
    for m in range(1, 10001):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        if abs(d) < tiny:
            d = tiny
        c = 1.0 + aa / c
        if abs(c) < tiny:
            c = tiny
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        if abs(d) < tiny:
            d = tiny
        c = 1.0 + aa / c
        if abs(c) < tiny:
            c = tiny
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


@njit(cache=True, nogil=True)
def _binomial_tail_half(A, B):
    # Integer shapes: I_{1/2}(A, B) = 2^-n sum_{j=A}^{n} C(n, j), n = A + B - 1 <= 60, summed exactly
    # in int64, so the result is correctly rounded.
    n = A + B - 1
    total = 0
    c = 1  # C(n, 0)
    for j in range(n + 1):
        if j >= A:
            total += c
        c = c * (n - j) // (j + 1)
    return float(total) / 2.0**n


@njit(cache=True, nogil=True)
def betainc_half_scalar(a, b):
    """``I_{1/2}(a, b)`` for positive a, b."""
    if a == b:
        return 0.5
    if a == math.floor(a) and b == math.floor(b) and a + b <= 61.0:
        return _binomial_tail_half(int(a), int(b))
    if a > b:
        return math.exp(_log_prefactor(a, b)) * _betacf_half(a, b) / a
    return 1.0 - math.exp(_log_prefactor(b, a)) * _betacf_half(b, a) / b


@njit(cache=True, nogil=True)
def _betainc_half_flat(a, b):
    out = np.empty(a.shape[0])
    for t in range(a.shape[0]):
        out[t] = betainc_half_scalar(a[t], b[t])
    return out


def betainc_half(a, b):
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    shape = a.shape
    out = _betainc_half_flat(np.ascontiguousarray(a).ravel(), np.ascontiguousarray(b).ravel())
    return out.reshape(shape)


@njit(cache=True, nogil=True)
def _splitmix64(x):
    out = np.empty(x.shape[0], dtype=np.uint64)
    for t in range(x.shape[0]):
        z = x[t] + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        out[t] = z ^ (z >> np.uint64(31))
    return out


def splitmix64_keys(x):
    x = np.asarray(x, dtype=np.uint64)
    return _splitmix64(np.ascontiguousarray(x).ravel()).reshape(x.shape)


@njit(cache=True, nogil=True)
def _top_two_row(E, i, lam, N):
    K = E.shape[1]
    a = -np.inf
    b = 0.0 if K == 1 else -np.inf
    for k in range(K):
        v = E[i, k] + lam * N[i, k]
        if v > a:
            if K > 1:
                b = a
            a = v
        elif v > b:
            b = v
    return a, b


@njit(cache=True, nogil=True)
def _refresh_rows(C, N, lam, rows, prior_a, prior_b):
    out = np.empty(rows.shape[0])
    for t in range(rows.shape[0]):
        a, b = _top_two_row(C, rows[t], lam, N)
        out[t] = betainc_half_scalar(a + prior_a, b + prior_b)
    return out


def refresh_rows(C, N, lam, rows, prior_a, prior_b):
    rows = np.asarray(rows)
    if N.shape != C.shape or (rows.size and (rows.min() < 0 or rows.max() >= C.shape[0])):
        raise ValueError("refresh_rows: N must match C and rows must index its rows.")
    return _refresh_rows(C, N, float(lam), np.ascontiguousarray(rows, dtype=np.int64), float(prior_a),
                         float(prior_b))


@njit(cache=True, nogil=True)
def _unique_leader(v, tol):
    # (has a unique positive leader, its index)
    K = v.shape[0]
    best = 0
    for k in range(1, K):
        if v[k] > v[best]:
            best = k
    top = v[best]
    if top <= 0:
        return False, 0
    second = -np.inf
    for k in range(K):
        if k != best and v[k] > second:
            second = v[k]
    if K > 1 and top - second <= tol * max(1.0, top):
        return False, 0
    return True, best


@njit(cache=True, nogil=True)
def _tally(tallies, c, h, sign):
    ok_own, own = _unique_leader(c, 1e-12)
    if not ok_own:
        return
    ok_nb, nb = _unique_leader(h, 1e-12)
    if not ok_nb:
        return
    K = c.shape[0]
    tallies[0] += sign
    if own == nb:
        tallies[1] += sign
    tallies[2 + own] += sign
    tallies[2 + K + nb] += sign


@njit(cache=True, nogil=True)
def _apply_labels(C, N, H, tallies, rows, codes, pt_indptr, pt_indices, pt_data, wt_indptr, wt_indices, wt_data,
                  track, separate_h):
    total = 0
    for t in range(rows.shape[0]):
        i = rows[t]
        total += 1 + pt_indptr[i + 1] - pt_indptr[i]
    touched = np.empty(total, dtype=np.int64)
    pos = 0
    Hv = H if separate_h else N
    for t in range(rows.shape[0]):
        i = rows[t]
        k = codes[t]
        start = pt_indptr[i]
        stop = pt_indptr[i + 1]
        touched[pos] = i
        n_aff = 1
        for p in range(start, stop):
            j = pt_indices[p]
            if j != i:
                touched[pos + n_aff] = j
                n_aff += 1
        if track:
            for q in range(pos, pos + n_aff):
                j = touched[q]
                _tally(tallies, C[j], Hv[j], -1.0)
        C[i, k] += 1.0
        for p in range(start, stop):
            N[pt_indices[p], k] += pt_data[p]
        if separate_h:
            for p in range(wt_indptr[i], wt_indptr[i + 1]):
                H[wt_indices[p], k] += wt_data[p]
        if track:
            for q in range(pos, pos + n_aff):
                j = touched[q]
                _tally(tallies, C[j], Hv[j], 1.0)
        pos += n_aff
    return touched[:pos].copy()


def apply_labels(C, N, H, tallies, rows, codes, pt_indptr, pt_indices, pt_data, wt_indptr, wt_indices, wt_data,
                 track, separate_h, inplace=False):
    n, K = C.shape
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    # The jitted loop does not bounds-check: reject inconsistent inputs here.
    if N.shape != (n, K) or (separate_h and H.shape != (n, K)) or tallies.shape != (2 + 2 * K,):
        raise ValueError("apply_labels: C, N (and H when separate_h) must share one (n, K) shape.")
    if rows.shape != codes.shape or (rows.size and (rows.min() < 0 or rows.max() >= n or codes.min() < 0
                                                    or codes.max() >= K)):
        raise ValueError("apply_labels: rows/codes out of range.")
    if pt_indptr.shape[0] != n + 1 or wt_indptr.shape[0] != n + 1:
        raise ValueError("apply_labels: the CSR operators must have n + 1 row pointers.")
    if not inplace:
        C, N, H, tallies = C.copy(), N.copy(), H.copy(), tallies.copy()
    touched = _apply_labels(C, N, H, tallies, np.ascontiguousarray(rows, dtype=np.int64),
                            np.ascontiguousarray(codes, dtype=np.int64), pt_indptr, pt_indices, pt_data,
                            wt_indptr, wt_indices, wt_data, bool(track), bool(separate_h))
    return C, N, H, tallies, touched


@njit(cache=True, nogil=True)
def _homophily_tallies(C, H):
    K = C.shape[1]
    tallies = np.zeros(2 + 2 * K)
    for i in range(C.shape[0]):
        _tally(tallies, C[i], H[i], 1.0)
    return tallies


def homophily_tallies(C, H):
    return _homophily_tallies(np.ascontiguousarray(C, dtype=np.float64), np.ascontiguousarray(H, dtype=np.float64))


# -- selection index (see the reference for the contract) ---------------------------------------------
@njit(cache=True, nogil=True)
def _before(a, b, q, r):
    if q[a] != q[b]:
        return q[a] > q[b]
    if r[a] != r[b]:
        return r[a] > r[b]
    return a < b


@njit(cache=True, nogil=True)
def _sift_up(heap, pos, t, q, r):
    x = heap[t]
    while t > 0:
        p = (t - 1) >> 1
        y = heap[p]
        if not _before(x, y, q, r):
            break
        heap[t] = y
        pos[y] = t
        t = p
    heap[t] = x
    pos[x] = t


@njit(cache=True, nogil=True)
def _sift_down(heap, pos, size, t, q, r):
    x = heap[t]
    while True:
        c = 2 * t + 1
        if c >= size:
            break
        if c + 1 < size and _before(heap[c + 1], heap[c], q, r):
            c += 1
        if not _before(heap[c], x, q, r):
            break
        heap[t] = heap[c]
        pos[heap[c]] = t
        t = c
    heap[t] = x
    pos[x] = t


@njit(cache=True, nogil=True)
def _heap_update(heap, pos, size, q, r, rows, new_q, new_eligible):
    for t in range(rows.shape[0]):
        j = rows[t]
        q[j] = new_q[t]
        slot = pos[j]
        if new_eligible[t]:
            if slot < 0:
                heap[size] = j
                pos[j] = size
                size += 1
                _sift_up(heap, pos, size - 1, q, r)
            else:
                _sift_up(heap, pos, slot, q, r)
                _sift_down(heap, pos, size, pos[j], q, r)
        elif slot >= 0:
            size -= 1
            last = heap[size]
            heap[size] = -1
            pos[j] = -1
            if slot < size:
                heap[slot] = last
                pos[last] = slot
                _sift_up(heap, pos, slot, q, r)
                _sift_down(heap, pos, size, pos[last], q, r)
    return size


def heap_update(heap, pos, size, q, r, rows, new_q, new_eligible, inplace=False):
    n = q.shape[0]
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    new_q = np.ascontiguousarray(new_q, dtype=np.int64)
    new_eligible = np.ascontiguousarray(new_eligible, dtype=np.bool_)
    if heap.shape != (n,) or pos.shape != (n,) or r.shape != (n,) or new_q.shape != rows.shape \
            or new_eligible.shape != rows.shape or (rows.size and (rows.min() < 0 or rows.max() >= n)):
        raise ValueError("heap_update: heap, pos, q, r must have one entry per row; rows must index them.")
    if not inplace:
        heap, pos, q = heap.copy(), pos.copy(), q.copy()
    size = _heap_update(heap, pos, int(size), q, r, rows, new_q, new_eligible)
    return heap, pos, q, int(size)


@njit(cache=True, nogil=True)
def _frontier_push(front, n_front, p, heap, q, r):
    # A small binary heap of heap slots, best row first.
    front[n_front] = p
    t = n_front
    while t > 0:
        par = (t - 1) >> 1
        if not _before(heap[front[t]], heap[front[par]], q, r):
            break
        front[t], front[par] = front[par], front[t]
        t = par
    return n_front + 1


@njit(cache=True, nogil=True)
def _frontier_pop(front, n_front, heap, q, r):
    top = front[0]
    n_front -= 1
    front[0] = front[n_front]
    t = 0
    while True:
        c = 2 * t + 1
        if c >= n_front:
            break
        if c + 1 < n_front and _before(heap[front[c + 1]], heap[front[c]], q, r):
            c += 1
        if not _before(heap[front[c]], heap[front[t]], q, r):
            break
        front[t], front[c] = front[c], front[t]
        t = c
    return top, n_front


@njit(cache=True, nogil=True)
def _select_top(q, r, heap, size, b):
    # Best-first walk of the heap tree: the b best rows in O(b log b), the heap untouched.
    b = min(b, size)
    out = np.empty(b, dtype=np.int64)
    if b == 0:
        return out
    front = np.empty(2 * b + 2, dtype=np.int64)
    n_front = _frontier_push(front, 0, 0, heap, q, r)
    for t in range(b):
        p, n_front = _frontier_pop(front, n_front, heap, q, r)
        out[t] = heap[p]
        for c in (2 * p + 1, 2 * p + 2):
            if c < size:
                n_front = _frontier_push(front, n_front, c, heap, q, r)
    return out


def _heap_or_build(q, r, eligible, heap, pos, size):
    if heap is not None:
        return heap, int(size)
    n = q.shape[0]  # no heap given: build one of the eligible rows, O(n log n)
    rows = np.flatnonzero(eligible).astype(np.int64)
    heap, pos = np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    size = _heap_update(heap, pos, 0, q.copy(), r, rows, q[rows].astype(np.int64), np.ones(rows.size, np.bool_))
    return heap, int(size)


def select_top(q, r, eligible, heap, pos, size, b):
    heap, size = _heap_or_build(q, r, eligible, heap, pos, size)
    return _select_top(q, r, heap, size, int(b))


@njit(cache=True, nogil=True)
def _rank_before(qa, ra, a, qb, rb, b):
    if qa != qb:
        return qa > qb
    if ra != rb:
        return ra > rb
    return a < b


@njit(cache=True, nogil=True)
def _select_diverse(q, r, eligible, heap, size, C, N, pi, px, pd, lam, rho, prior_a, prior_b, b, stop, slot):
    n, K = C.shape
    cap = b * (2 + 2 * (pi[n] // max(n, 1))) + 1  # grown below if hubs need more
    rows_t = np.empty(cap, dtype=np.int64)  # touched rows, by slot
    dC = np.zeros((cap, K))
    dN = np.zeros((cap, K))
    tq = np.zeros(cap, dtype=np.int64)
    tu = np.zeros(cap)
    n_t = 0
    picks = np.empty(b, dtype=np.int64)
    n_p = 0
    front = np.empty(2 * cap + 8, dtype=np.int64)  # grown below if needed
    n_front = 0
    if size > 0:
        n_front = _frontier_push(front, 0, 0, heap, q, r)
    cand = -1
    e = np.empty(K)
    while n_p < b:
        # the best untouched, unpicked row of the heap (walked lazily in rank order)
        while True:
            if cand >= 0 and slot[cand] < 0:
                already = False
                for t in range(n_p):
                    if picks[t] == cand:
                        already = True
                if not already:
                    break
            if n_front == 0:
                cand = -1
                break
            p, n_front = _frontier_pop(front, n_front, heap, q, r)
            cand = heap[p]
            if n_front + 2 > front.shape[0]:
                front2 = np.empty(2 * front.shape[0], dtype=np.int64)
                front2[:n_front] = front[:n_front]
                front = front2
            for c in (2 * p + 1, 2 * p + 2):
                if c < size:
                    n_front = _frontier_push(front, n_front, c, heap, q, r)
        best = cand
        best_q = q[cand] if cand >= 0 else 0
        # the best touched row (new keys)
        for s in range(n_t):
            j = rows_t[s]
            if not eligible[j] or tu[s] < stop:
                continue
            already = False
            for t in range(n_p):
                if picks[t] == j:
                    already = True
            if already:
                continue
            if best < 0 or _rank_before(tq[s], r[j], j, best_q, r[best], best):
                best = j
                best_q = tq[s]
        if best < 0:
            break
        i = best
        picks[n_p] = i
        n_p += 1
        if n_p == b:
            break
        need = n_t + 1 + pi[i + 1] - pi[i]
        if need > cap:
            cap = max(2 * cap, need)
            rows_t2, tq2, tu2 = np.empty(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64), np.zeros(cap)
            dC2, dN2 = np.zeros((cap, K)), np.zeros((cap, K))
            rows_t2[:n_t], tq2[:n_t], tu2[:n_t], dC2[:n_t], dN2[:n_t] = rows_t[:n_t], tq[:n_t], tu[:n_t], \
                dC[:n_t], dN[:n_t]
            rows_t, tq, tu, dC, dN = rows_t2, tq2, tu2, dC2, dN2
        si = slot[i]
        top = -np.inf
        for k in range(K):
            e[k] = (C[i, k] + (dC[si, k] if si >= 0 else 0.0)) + lam * (N[i, k] + (dN[si, k] if si >= 0 else 0.0))
            if e[k] > top:
                top = e[k]
        leader = -1
        best_h = np.uint64(0)
        for k in range(K):
            if e[k] >= top:
                z = r[i] ^ np.uint64(k)
                z = z + np.uint64(0x9E3779B97F4A7C15)
                z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
                z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
                h = z ^ (z >> np.uint64(31))
                if leader < 0 or h > best_h:
                    leader = k
                    best_h = h
        # virtual vote: rho for i's leader, rho * P_ji for each reverse neighbour j
        for p in range(pi[i] - 1, pi[i + 1]):
            j = i if p < pi[i] else px[p]
            if slot[j] < 0:
                slot[j] = n_t
                rows_t[n_t] = j
                n_t += 1
            s = slot[j]
            if p < pi[i]:
                dC[s, leader] += rho
            else:
                dN[s, leader] += rho * pd[p]
        for p in range(pi[i] - 1, pi[i + 1]):
            j = i if p < pi[i] else px[p]
            s = slot[j]
            a = -np.inf
            bb = 0.0 if K == 1 else -np.inf
            for k in range(K):
                v = (C[j, k] + dC[s, k]) + lam * (N[j, k] + dN[s, k])
                if v > a:
                    if K > 1:
                        bb = a
                    a = v
                elif v > bb:
                    bb = v
            u = betainc_half_scalar(a + prior_a, bb + prior_b)
            tu[s] = u
            tq[s] = np.int64(np.rint(u * 1e9))
    for s in range(n_t):
        slot[rows_t[s]] = -1
    return picks[:n_p].copy()


def select_diverse(q, r, eligible, heap, pos, size, C, N, pt_indptr, pt_indices, pt_data, lam, rho, prior_a,
                   prior_b, b, stop, scratch=None):
    n = q.shape[0]
    slot = np.full(n, -1, dtype=np.int64) if scratch is None else scratch  # all -1 again on return
    heap, size = _heap_or_build(q, r, eligible, heap, pos, size)
    return _select_diverse(q, r, np.ascontiguousarray(eligible, dtype=np.bool_), heap, size,
                           np.ascontiguousarray(C, dtype=np.float64), np.ascontiguousarray(N, dtype=np.float64),
                           pt_indptr, pt_indices, pt_data, float(lam), float(rho), float(prior_a), float(prior_b),
                           int(b), float(stop), slot)
