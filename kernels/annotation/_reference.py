"""numpy/scipy references of the annotation kernels (the oracles)."""

import numpy as np
from scipy.special import betainc

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def betainc_half(a, b):
    """Evaluate the regularized incomplete beta ``I_{1/2}(a, b)`` elementwise.

    Parameters
    ----------
    a, b : array-like of float
        Positive Beta parameters (broadcast together).

    Returns
    -------
    ndarray of float64
        ``I_{1/2}(a, b)`` from scipy, exactly ``0.5`` where ``a == b``.

    Examples
    --------
    >>> from sklearn_frontier.kernels import betainc_half
    >>> betainc_half([2.0, 1.0], [2.0, 3.0]).tolist()
    [0.5, 0.875]
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.where(a == b, 0.5, betainc(a, b, 0.5))


def splitmix64_keys(x):
    """Hash each uint64 with the SplitMix64 finalizer (Vigna): ``mix(x + golden)``, wrapping arithmetic.

    Parameters
    ----------
    x : array-like of uint64
        Keys to hash (seeded tie-breaking keys of the annotators).

    Returns
    -------
    ndarray of uint64
        The mixed keys, one per input.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import splitmix64_keys
    >>> keys = splitmix64_keys(np.arange(3, dtype=np.uint64))
    >>> keys.dtype, len(set(keys.tolist()))
    (dtype('uint64'), 3)
    """
    z = np.asarray(x, dtype=np.uint64) + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _top_two(E):
    K = E.shape[1]
    if K == 1:
        return E[:, 0].copy(), np.zeros(E.shape[0])
    part = np.partition(E, K - 2, axis=1)
    return part[:, K - 1].copy(), part[:, K - 2].copy()


def refresh_rows(C, N, lam, rows, prior_a, prior_b):
    """Compute the margin-Beta uncertainty ``I_{1/2}(a + prior_a, b + prior_b)`` of some rows.

    ``a`` and ``b`` are the largest and second-largest entries of each row of ``e = C + lam * N``
    (``b = 0`` if K = 1).

    Parameters
    ----------
    C : ndarray of shape (n, K)
        Label counts per row and class.
    N : ndarray of shape (n, K)
        Propagated (neighbour) counts.
    lam : float
        Propagation strength.
    rows : ndarray of int64
        Rows to refresh.
    prior_a, prior_b : float
        Beta prior pseudo-counts.

    Returns
    -------
    ndarray of float64 of shape (len(rows),)
        Uncertainty of each row, 0.5 for a tie.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import refresh_rows
    >>> C = np.array([[3.0, 0.0], [1.0, 1.0]])
    >>> refresh_rows(C, np.zeros_like(C), 0.0, np.array([0, 1]), 1.0, 1.0).round(4).tolist()
    [0.0625, 0.5]
    """
    E = C[rows] + lam * N[rows]
    a, b = _top_two(E)
    return betainc_half(a + prior_a, b + prior_b)


def _contribution(c, h, tol=1e-12):
    """``(in_R, own leader, neighbour leader)`` of one row for the homophily tallies."""
    K = c.shape[0]
    if K == 1:
        return (c[0] > 0 and h[0] > 0), 0, 0
    own = int(np.argmax(c))
    srt = np.sort(c)
    if srt[-1] <= 0 or srt[-1] - srt[-2] <= tol * max(1.0, srt[-1]):
        return False, 0, 0
    nb = int(np.argmax(h))
    srt = np.sort(h)
    if srt[-1] <= 0 or srt[-1] - srt[-2] <= tol * max(1.0, srt[-1]):
        return False, 0, 0
    return True, own, nb


def _tally(tallies, c, h, sign):
    inside, own, nb = _contribution(c, h)
    if inside:
        K = c.shape[0]
        tallies[0] += sign
        tallies[1] += sign * (own == nb)
        tallies[2 + own] += sign
        tallies[2 + K + nb] += sign


def apply_labels(C, N, H, tallies, rows, codes, pt_indptr, pt_indices, pt_data, wt_indptr, wt_indices, wt_data,
                 track, separate_h, inplace=False):
    """Record labels ``(rows[t], codes[t])`` in order: counts, propagated counts and homophily tallies.

    ``C += e_ik``; ``N[j, k] += P[j, i]`` for ``j`` in row ``i`` of ``P^T`` (CSR ``pt_*``); if
    ``separate_h``, the one-hop ``H[j, k] += W[j, i]`` (CSR of ``W^T``, ``wt_*``), else ``H`` is ``N``.
    With ``track``, ``tallies = [r, A, h_own (K), h_nb (K)]`` are kept exact on every affected row.

    Parameters
    ----------
    C, N, H : ndarray of shape (n, K)
        Label counts, propagated counts and one-hop counts.
    tallies : ndarray of shape (2 + 2 K,)
        Homophily tallies ``[r, A, h_own (K), h_nb (K)]``.
    rows, codes : ndarray of int64
        Row and class code of each new label, in order.
    pt_indptr, pt_indices, pt_data : ndarray
        CSR of ``P^T`` (reverse propagation neighbours).
    wt_indptr, wt_indices, wt_data : ndarray
        CSR of ``W^T`` (reverse one-hop neighbours).
    track : bool
        Keep the tallies exact.
    separate_h : bool
        Whether ``H`` is kept apart from ``N``.
    inplace : bool, default=False
        Update the arrays in place instead of copies.

    Returns
    -------
    C, N, H, tallies : ndarray
        The updated arrays (copies unless ``inplace``).
    touched : ndarray of int64
        The affected rows (``i`` then its reverse neighbours), per label.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import apply_labels
    >>> C = np.zeros((2, 2)); empty = np.zeros(0, dtype=np.int64)
    >>> ptr = np.zeros(3, dtype=np.int64)
    >>> out = apply_labels(C, C.copy(), C.copy(), np.zeros(6), np.array([1]), np.array([0]),
    ...                    ptr, empty, np.zeros(0), ptr, empty, np.zeros(0), False, False)
    >>> out[0].tolist(), out[4].tolist()
    ([[0.0, 0.0], [1.0, 0.0]], [1])
    """
    if not inplace:
        C, N, H, tallies = C.copy(), N.copy(), H.copy(), tallies.copy()
    Hv = H if separate_h else N
    touched = []
    for t in range(rows.shape[0]):
        i, k = int(rows[t]), int(codes[t])
        start, stop = pt_indptr[i], pt_indptr[i + 1]
        affected = [i] + [int(j) for j in pt_indices[start:stop] if j != i]
        if track:
            for j in affected:
                _tally(tallies, C[j], Hv[j], -1.0)
        C[i, k] += 1.0
        for p in range(start, stop):
            N[pt_indices[p], k] += pt_data[p]
        if separate_h:
            for p in range(wt_indptr[i], wt_indptr[i + 1]):
                H[wt_indices[p], k] += wt_data[p]
        if track:
            for j in affected:
                _tally(tallies, C[j], Hv[j], 1.0)
        touched.extend(affected)
    return C, N, H, tallies, np.asarray(touched, dtype=np.int64)


def homophily_tallies(C, H):
    """Compute the homophily tallies ``[r, A, h_own (K), h_nb (K)]`` over every row in one batch.

    The oracle of the tallies that :func:`apply_labels` keeps online.

    Parameters
    ----------
    C : ndarray of shape (n, K)
        Label counts.
    H : ndarray of shape (n, K)
        Neighbour counts.

    Returns
    -------
    ndarray of shape (2 + 2 K,)
        Rows with a strict leader in both, agreements, own-leader and neighbour-leader histograms.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import homophily_tallies
    >>> homophily_tallies(np.array([[2.0, 0.0]]), np.array([[1.0, 0.0]])).tolist()
    [1.0, 1.0, 1.0, 0.0, 1.0, 0.0]
    """
    K = C.shape[1]
    tallies = np.zeros(2 + 2 * K)
    for i in range(C.shape[0]):
        _tally(tallies, C[i], H[i], 1.0)
    return tallies


# -- selection index: an indexed binary max-heap over the eligible rows ---------------------------------
# Rank order: key q descending, then tie key r descending, then row index ascending (a total order).
def _before(a, b, q, r):
    if q[a] != q[b]:
        return q[a] > q[b]
    if r[a] != r[b]:
        return r[a] > r[b]
    return a < b


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


def heap_update(heap, pos, size, q, r, rows, new_q, new_eligible, inplace=False):
    """Set the keys of ``rows`` and their membership in an indexed max-heap of the eligible rows.

    The heap holds the eligible rows in rank order (``q`` desc, ``r`` desc, index asc): ``heap[:size]``
    are rows, ``pos[row]`` is a row's slot or -1. Each row costs O(log n). Start from
    ``heap = pos = -1``, ``size = 0`` to build one.

    Parameters
    ----------
    heap, pos : ndarray of int64, shape (n,)
        The heap and its inverse (-1 = not in the heap).
    size : int
        Rows in the heap.
    q : ndarray of int64, shape (n,)
        Selection keys (``rint(score * 1e9)``).
    r : ndarray of uint64, shape (n,)
        Distinct tie keys.
    rows : ndarray of int64
        Rows whose key or eligibility changed (repeats allowed: the last entry wins).
    new_q : ndarray of int64
        Their new keys.
    new_eligible : ndarray of bool
        Their new eligibility.
    inplace : bool, default=False
        Update ``heap``, ``pos`` and ``q`` in place (else on copies).

    Returns
    -------
    heap, pos, q : ndarray
        The updated arrays.
    size : int
        The new heap size.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import heap_update
    >>> n = 4
    >>> q = np.zeros(n, dtype=np.int64)
    >>> r = np.arange(n, dtype=np.uint64)
    >>> heap, pos, q, size = heap_update(np.full(n, -1), np.full(n, -1), 0, q, r, np.arange(n),
    ...                                  np.array([5, 9, 1, 7]), np.array([True, True, True, False]))
    >>> int(heap[0]), size
    (1, 3)
    """
    if not inplace:
        heap, pos, q = heap.copy(), pos.copy(), q.copy()
    size = int(size)
    for t in range(len(rows)):
        j = int(rows[t])
        q[j] = new_q[t]
        slot = int(pos[j])
        if new_eligible[t]:
            if slot < 0:
                heap[size] = j
                pos[j] = size
                size += 1
                _sift_up(heap, pos, size - 1, q, r)
            else:
                _sift_up(heap, pos, slot, q, r)
                _sift_down(heap, pos, size, int(pos[j]), q, r)
        elif slot >= 0:
            size -= 1
            last = int(heap[size])
            heap[size] = -1
            pos[j] = -1
            if slot < size:
                heap[slot] = last
                pos[last] = slot
                _sift_up(heap, pos, slot, q, r)
                _sift_down(heap, pos, size, int(pos[last]), q, r)
    return heap, pos, q, size


def select_top(q, r, eligible, heap, pos, size, b):
    """The first ``b`` eligible rows in rank order (``q`` desc, ``r`` desc, index asc).

    The reference ranks ``eligible`` directly in O(n) (threshold on q, then the boundary group on
    r); the fast twin reads the same answer off the heap (``heap``, ``pos``, ``size``, holding
    exactly the eligible rows) in O(b log b).

    Parameters
    ----------
    q : ndarray of int64, shape (n,)
        Selection keys.
    r : ndarray of uint64, shape (n,)
        Distinct tie keys.
    eligible : ndarray of bool, shape (n,)
        Choosable rows.
    heap, pos : ndarray of int64, shape (n,) or None
        The heap of the eligible rows (see :func:`heap_update`); None: the fast twin builds one.
    size : int
        Its size.
    b : int
        How many rows.

    Returns
    -------
    ndarray of int64
        At most ``b`` rows, best first.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import select_top
    >>> q = np.array([3, 9, 9, 1])
    >>> r = np.array([0, 1, 2, 3], dtype=np.uint64)
    >>> select_top(q, r, np.ones(4, bool), None, None, 0, 3).tolist()
    [2, 1, 0]
    """
    cand = np.flatnonzero(eligible)
    if cand.size > b:
        qc = q[cand]
        qb = np.partition(qc, cand.size - b)[cand.size - b]
        above = cand[qc > qb]
        group = cand[qc == qb]
        need = b - above.size
        if group.size > need:
            group = group[np.argpartition(~r[group], need - 1)[:need]]
        cand = np.concatenate([above, group])
    order = np.lexsort((cand, ~r[cand], -q[cand]))
    return cand[order[:b]].astype(np.int64)


def select_diverse(q, r, eligible, heap, pos, size, C, N, pt_indptr, pt_indices, pt_data, lam, rho, prior_a,
                   prior_b, b, stop, scratch=None):
    """Greedy batch with virtual votes ("kriging believer") over the ranking of :func:`select_top`.

    After each pick ``i`` a virtual vote of weight ``rho`` for ``i``'s leader (ties by
    ``splitmix64(r_i ^ k)``) is added to ``C_i`` and ``rho * P_ji`` to ``N_j`` of each reverse
    neighbour ``j`` (CSR of ``P^T``); the touched rows are re-scored and the next pick is the best
    row under the new keys. Touched rows stay choosable only if eligible and their new uncertainty is
    ``>= stop``. A pick changes only itself and its reverse neighbours, so after t picks the best
    untouched row lies in the first ``t (2 + max in-degree)`` of the initial ranking: only those are
    ranked. Nothing is written to the inputs.

    Parameters
    ----------
    q : ndarray of int64, shape (n,)
        Selection keys (``rint(u * 1e9)`` of the current uncertainties).
    r : ndarray of uint64, shape (n,)
        Distinct tie keys.
    eligible : ndarray of bool, shape (n,)
        Choosable rows.
    heap, pos : ndarray of int64, shape (n,) or None
        The heap of the eligible rows (see :func:`heap_update`); None: the fast twin builds one.
    size : int
        Its size.
    C, N : ndarray of shape (n, K)
        Own and propagated evidence.
    pt_indptr, pt_indices, pt_data : ndarray
        CSR of the transposed propagation operator.
    lam, rho, prior_a, prior_b : float
        Strength, virtual-vote weight, Beta prior.
    b : int
        Batch size.
    stop : float
        Stopping threshold (-1: none).
    scratch : ndarray of int64, shape (n,), default=None
        Work space of the fast twin (all -1, restored on return); the reference ignores it.

    Returns
    -------
    ndarray of int64
        At most ``b`` distinct rows, in pick order.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from sklearn_frontier.kernels import select_diverse
    >>> P = sp.csr_matrix(np.array([[0, 1.0, 0], [1.0, 0, 0], [0, 0, 0]]))  # rows 0, 1 are neighbours
    >>> q = np.full(3, 500_000_000)
    >>> r = np.array([3, 2, 1], dtype=np.uint64)
    >>> C, N = np.zeros((3, 2)), np.zeros((3, 2))
    >>> select_diverse(q, r, np.ones(3, bool), None, None, 0, C, N, P.indptr, P.indices, P.data,
    ...                1.0, 1.0, 1.0, 1.0, 2, -1.0).tolist()  # 0 first, then not its neighbour 1
    [0, 2]
    """
    picks, _ = select_diverse_with_utilities(q, r, eligible, C, N, pt_indptr, pt_indices, pt_data, lam, rho,
                                             prior_a, prior_b, b, stop)
    return picks


def select_diverse_with_utilities(q, r, eligible, C, N, pt_indptr, pt_indices, pt_data, lam, rho, prior_a, prior_b,
                                  b, stop, scores=None, refresh=refresh_rows):
    """The loop of :func:`select_diverse`; with ``scores``, also the utility row each pick was made from.

    The row is ``scores`` where eligible, the virtually re-scored uncertainty on the touched rows and NaN on
    the rows already picked (``MA3SAnnotator.query(return_utilities=True)``). ``refresh`` re-scores the
    touched rows (the dispatched ``refresh_rows`` of the caller's backend). Returns ``(picks, utilities)``,
    ``utilities`` None without ``scores``.
    """
    import heapq

    n = q.size
    pi, px, pd = pt_indptr, pt_indices, pt_data
    max_indeg = int(np.max(np.diff(pi))) if pi.size > 1 else 0
    ranking = select_top(q, r, eligible, None, None, 0, b * (2 + max_indeg))
    # virtual votes live in scratch deltas (calloc: only the touched pages are paid for)
    dC, dN = np.zeros(C.shape), np.zeros(N.shape)
    is_touched = np.zeros(n, dtype=bool)
    current = {}  # touched row -> (q, u, version)
    order = []  # (-q, -r, row, version): the best touched row on top
    picked = set()
    picks, utilities = [], []
    ptr = 0
    while len(picks) < b:
        while ptr < ranking.size and (is_touched[ranking[ptr]] or int(ranking[ptr]) in picked):
            ptr += 1
        best, best_key = None, None
        if ptr < ranking.size:
            best = int(ranking[ptr])
            best_key = (-int(q[best]), -int(r[best]), best)
        while order:
            neg_q, neg_r, j, version = order[0]
            if current[j][2] != version or j in picked or not eligible[j] or current[j][1] < stop:
                heapq.heappop(order)
                continue
            if best_key is None or (neg_q, neg_r, j) < best_key:
                best, best_key = j, (neg_q, neg_r, j)
            break
        if best is None:
            break
        i = best
        if scores is not None:
            row = np.where(eligible, scores, np.nan)
            for j, (_, uj, _) in current.items():
                if eligible[j]:
                    row[j] = uj
            row[list(picked)] = np.nan
            utilities.append(row)
        picks.append(i)
        picked.add(i)
        if len(picks) == b:
            break
        e_i = (C[i] + dC[i]) + lam * (N[i] + dN[i])
        top = np.flatnonzero(e_i >= e_i.max())
        if top.size > 1:
            h = splitmix64_keys(r[i] ^ top.astype(np.uint64))
            top = top[h >= h.max()]
        leader = int(top[0])
        dC[i, leader] += rho
        nbrs = px[pi[i]:pi[i + 1]]
        dN[nbrs, leader] += rho * pd[pi[i]:pi[i + 1]]  # CSR row indices are distinct
        rows = np.unique(np.r_[i, nbrs])
        u = refresh(np.ascontiguousarray(C[rows] + dC[rows]), np.ascontiguousarray(N[rows] + dN[rows]),
                    lam, np.arange(rows.size), prior_a, prior_b)
        qs = np.rint(u * 1e9).astype(np.int64)
        is_touched[rows] = True
        for j, qj, uj in zip(rows.tolist(), qs.tolist(), u.tolist()):
            version = current[j][2] + 1 if j in current else 0
            current[j] = (qj, uj, version)
            heapq.heappush(order, (-qj, -int(r[j]), j, version))
    picks = np.asarray(picks, dtype=np.int64)
    if scores is None:
        return picks, None
    return picks, np.asarray(utilities).reshape(picks.size, eligible.size)
