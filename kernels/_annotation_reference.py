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
