"""kNN graph, resolution scan, exact (CHAMP) envelope and configuration selection."""

import warnings

import numpy as np
import scipy.sparse as sp

from sklearn_frontier.exceptions import ConfigurationFallbackWarning
from sklearn_frontier.utils._progress import progress_bar
from sklearn_frontier.utils._random import spawn_seeds

MAX_LEVELS = 32
N_ITERATIONS = 8
LEIDEN_ITERATIONS = 2  # leidenalg default; -1 (until stable) took minutes per scan at n = 2000


def knn_lists(Z, Q, k, *, exclude_self, metric="euclidean"):
    """``(idx, dist)`` of the ``k`` nearest rows of ``Z`` for each row of ``Q`` (ties: smaller index)."""
    from sklearn_frontier.kernels import knn_bruteforce

    if metric == "euclidean":
        return knn_bruteforce(Z, Q, k, exclude_self=exclude_self)
    if exclude_self:
        from sklearn_frontier.utils._graphs import knn_neighbors

        dist, idx = knn_neighbors(Z, k, metric=metric)
    else:
        from sklearn.neighbors import NearestNeighbors

        dist, idx = NearestNeighbors(n_neighbors=k, metric=metric, algorithm="brute").fit(Z).kneighbors(Q)
    return np.ascontiguousarray(idx, dtype=np.int64), np.ascontiguousarray(dist, dtype=np.float64)


def knn_graph(Z, n_neighbors, *, metric="euclidean", weighting="self_tuning", connect_components=False):
    """Symmetric kNN affinity ``W = max(W, W.T)`` on the rows of ``Z``.

    Self-tuning weights ``exp(-d_ij**2 / (sigma_i sigma_j))`` (``sigma_i`` = distance to the k-th
    neighbour, floored at 1e-12) come from the shared kernel ``local_scaling_weights``.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n, n)
    """
    from sklearn_frontier.kernels import local_scaling_weights, self_tuning_csr

    n = Z.shape[0]
    k = int(min(n_neighbors, n - 1))
    idx, dist = knn_lists(Z, Z, k, exclude_self=True, metric=metric)
    sigma = np.maximum(dist[:, -1], 1e-12)
    if weighting == "self_tuning":
        w = local_scaling_weights(dist, idx, sigma)
    else:
        w = np.ones_like(dist)
    indptr, indices, data = self_tuning_csr(idx, w, n)
    W = sp.csr_matrix((data, indices, indptr), shape=(n, n))
    if connect_components:
        from sklearn_frontier.utils._graphs import repair_connectivity

        _, added = repair_connectivity(W, Z)
        if added.shape[0]:
            u, v = added[:, 0], added[:, 1]
            length = np.sqrt(((Z[u] - Z[v]) ** 2).sum(axis=1))
            if weighting == "self_tuning":
                wt = np.exp(-(length**2) / (sigma[u] * sigma[v]))
                wt = np.maximum(wt, np.finfo(float).tiny)
            else:
                wt = np.ones(u.shape[0])
            W = (W + sp.csr_matrix((np.r_[wt, wt], (np.r_[u, v], np.r_[v, u])), shape=(n, n))).tocsr()
            W.sort_indices()
    return W


def _csr_parts(W):
    W = sp.csr_matrix(W, dtype=np.float64)
    W.sort_indices()
    return (np.ascontiguousarray(W.indptr, dtype=np.int64), np.ascontiguousarray(W.indices, dtype=np.int64),
            np.ascontiguousarray(W.data, dtype=np.float64))


def null_strength(W, objective):
    """Null-model degrees: the vertex strengths (modularity) or a constant (CPM, ``b = sum (n_c/n)**2``)."""
    s = np.asarray(W.sum(axis=1), dtype=np.float64).ravel()
    if objective == "cpm":
        n = s.shape[0]
        return np.full(n, s.sum() / n)
    return np.ascontiguousarray(s)


def canonical(labels):
    """Relabel 0..K-1 by first occurrence."""
    labels = np.asarray(labels)
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.shape[0], dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
    return rank[inv.ravel()].astype(np.int64)


def resolution_scan(W, *, objective="modularity", resolution_range=(0.01, 30.0), n_resolutions=48,
                    n_restarts=2, random_state=None, n_jobs=None, engine="native", verbose=0):
    """Louvain partitions at ``n_resolutions`` log-spaced resolutions, ``n_restarts`` seeds each.

    The runs go through :class:`sklearn.utils.parallel.Parallel` (threads: the numba kernel
    releases the GIL). Seeds are drawn from ``random_state`` before the parallel loop, so the
    result does not depend on ``n_jobs``. ``verbose > 0`` shows a progress bar over the runs.

    Returns
    -------
    gammas : ndarray of shape (n_resolutions,)
    runs : list of ndarray
        ``n_resolutions * n_restarts`` canonical label vectors, grid-major.
    """
    from sklearn_frontier.kernels._dispatch import get_implementation
    from sklearn_frontier.utils._parallel import Parallel, delayed

    indptr, indices, data = _csr_parts(W)
    strength = null_strength(W, objective)
    gammas = np.geomspace(resolution_range[0], resolution_range[1], n_resolutions)
    seeds = spawn_seeds(random_state, n_resolutions * n_restarts)
    if engine == "leidenalg":
        louvain = _leidenalg_runner(W, objective)
    else:
        _, louvain = get_implementation("louvain")  # resolved here: worker threads do not see config_context
    tasks = [(float(g), int(seeds[r * n_restarts + t])) for r, g in enumerate(gammas) for t in range(n_restarts)]
    runs = Parallel(n_jobs=n_jobs, prefer="threads", return_as="generator")(
        delayed(louvain)(indptr, indices, data, strength, g, s, MAX_LEVELS, N_ITERATIONS) for g, s in tasks
    )
    bar = progress_bar(runs, total=len(tasks), desc="resolution scan", verbose=verbose, unit="run")
    return gammas, [canonical(r) for r in bar]


def deduplicate(runs):
    """Unique partitions (exact label equality after canonicalisation), in order of first appearance.

    Returns
    -------
    candidates : list of ndarray
    run_to_candidate : ndarray of shape (len(runs),), int64
    """
    seen = {}
    candidates = []
    mapping = np.empty(len(runs), dtype=np.int64)
    for r, labels in enumerate(runs):
        key = np.ascontiguousarray(labels, dtype=np.int32).tobytes()
        if key not in seen:
            seen[key] = len(candidates)
            candidates.append(labels)
        mapping[r] = seen[key]
    return candidates, mapping


def energies(W, candidates, objective):
    """``(a, b)`` arrays of every candidate (kernel K3)."""
    from sklearn_frontier.kernels import partition_energy

    indptr, indices, data = _csr_parts(W)
    strength = null_strength(W, objective)
    ab = np.array([partition_energy(indptr, indices, data, strength, c, int(c.max()) + 1) for c in candidates])
    return ab[:, 0], ab[:, 1]


def select_configurations(candidates, a, b, resolution_range, *, max_configurations=8, min_log_width=0.1,
                          max_cluster_frac=0.5):
    """Envelope pieces that pass the filters, ordered by number of clusters.

    Returns
    -------
    chosen : list of int
        Candidate indices.
    intervals : ndarray of shape (M, 2)
    envelope : dict
        ``winners`` (E,), ``intervals`` (E, 2) of the whole envelope, and ``kept`` (E,), the
        position of each piece among the chosen configurations or -1.
    """
    from sklearn_frontier.kernels import upper_envelope

    g_lo, g_hi = resolution_range
    winners, iv = upper_envelope(a, b, g_lo, g_hi)
    n = candidates[0].shape[0]
    K = np.array([int(candidates[w].max()) + 1 for w in winners])
    width = np.log(iv[:, 1] / iv[:, 0])
    ok = (K >= 2) & (K <= max_cluster_frac * n) & (width >= min_log_width)
    pieces = np.flatnonzero(ok)
    pieces = pieces[np.lexsort((pieces, -width[pieces]))][:max_configurations]  # widest first
    pieces = pieces[np.lexsort((iv[pieces, 0], K[pieces]))]  # K ascending, then gamma_lo
    kept = -np.ones(winners.shape[0], dtype=np.int64)
    kept[pieces] = np.arange(pieces.shape[0])
    envelope = {"winners": winners, "intervals": iv, "n_clusters": K, "kept": kept}
    return [int(winners[p]) for p in pieces], iv[pieces], envelope


def configurations_from_graph(W, *, objective="modularity", resolution_range=(0.01, 30.0), n_resolutions=48,
                              n_restarts=2, max_configurations=8, min_log_width=0.1, max_cluster_frac=0.5,
                              random_state=None, n_jobs=None, return_details=False, engine="native", verbose=0):
    """Compute the configurations (envelope partitions stable over a resolution band) of an affinity ``W``.

    The extractor's core: Louvain resolution scan, deduplication, energies
    ``Q_P(gamma) = a_P - gamma b_P``, exact upper envelope, filters ``2 <= K <= max_cluster_frac * n``
    and ``ln(gamma_hi / gamma_lo) >= min_log_width``, the ``max_configurations`` widest kept and
    ordered by number of clusters. When nothing passes, one fallback configuration (the partition
    at gamma = 1 if it has >= 2 clusters, else the trivial one) is returned with a
    :class:`~sklearn_frontier.exceptions.ConfigurationFallbackWarning`.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric non-negative affinity without self loops.
    objective : {"modularity", "cpm"}, default="modularity"
        Null model of the repulsion ``b`` (strengths, or constant Potts).
    resolution_range : tuple of float, default=(0.01, 30.0)
        ``(gamma_min, gamma_max)`` of the resolution scan.
    n_resolutions : int, default=48
        Log-spaced resolutions scanned.
    n_restarts : int, default=2
        Louvain seeds per resolution.
    max_configurations : int, default=8
        Maximum number of configurations kept (the widest bands).
    min_log_width : float, default=0.1
        Minimum ``ln(gamma_hi / gamma_lo)`` of a configuration's band.
    max_cluster_frac : float, default=0.5
        Maximum number of clusters of a configuration, as a fraction of n.
    random_state : int, RandomState or None, default=None
        Seed of the Louvain runs.
    n_jobs : int, default=None
        Parallel Louvain runs (threads).
    return_details : bool, default=False
        Also return a dict with the scan (grid, candidates, energies, envelope).
    engine : {"native", "leidenalg"}, default="native"
        The project's Louvain kernel, or leidenalg (optional, GPL).
    verbose : int, default=0
        A progress bar over the resolution scan when > 0.

    Returns
    -------
    labels : list of ndarray of shape (n,), int64
        Labels of the vertices, one array per configuration.
    resolutions : ndarray of shape (M, 2)
        ``[gamma_lo, gamma_hi]`` band of each configuration.
    stability : ndarray of shape (M, 4)
        ``[entropy, a, b, log width]`` per configuration.
    details : dict
        Only with ``return_details=True``.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_frontier.configurations import configurations_from_graph
    >>> A = np.kron(np.eye(2), np.ones((6, 6))) - np.eye(12)
    >>> A[5, 6] = A[6, 5] = 1
    >>> labels, res, stab = configurations_from_graph(sp.csr_matrix(A), random_state=0)
    >>> labels[0].tolist()
    [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]
    """
    from sklearn_frontier.kernels import cluster_entropy

    W = sp.csr_matrix(W, dtype=np.float64)
    gammas, runs = resolution_scan(W, objective=objective, resolution_range=resolution_range,
                                   n_resolutions=n_resolutions, n_restarts=n_restarts, random_state=random_state,
                                   n_jobs=n_jobs, engine=engine, verbose=verbose)
    candidates, mapping = deduplicate(runs)
    a, b = energies(W, candidates, objective)
    chosen, intervals, envelope = select_configurations(
        candidates, a, b, resolution_range, max_configurations=max_configurations, min_log_width=min_log_width,
        max_cluster_frac=max_cluster_frac)
    fallback = not chosen
    if fallback:
        labels, intervals, ab = _fallback(W, objective, candidates, a, b, gammas, mapping, n_restarts)
        configs = [labels]
        widths = np.zeros(1)
        a_sel, b_sel = np.array([ab[0]]), np.array([ab[1]])
    else:
        configs = [candidates[c] for c in chosen]
        widths = np.log(intervals[:, 1] / intervals[:, 0])
        a_sel, b_sel = a[chosen], b[chosen]
    H = np.array([cluster_entropy(c, int(c.max()) + 1) for c in configs])
    stability = np.column_stack([H, a_sel, b_sel, widths])
    if not return_details:
        return configs, intervals, stability
    # the envelope winner at each grid resolution (and the configuration it is, or -1)
    Q = a[None, :] - gammas[:, None] * b[None, :]
    grid_winner = np.argmax(Q, axis=1)
    cand_to_config = -np.ones(len(candidates), dtype=np.int64)
    if not fallback:
        cand_to_config[chosen] = np.arange(len(chosen))
    details = {
        "gamma": gammas, "run_candidate": mapping, "a": a, "b": b,
        "n_clusters_candidates": np.array([int(c.max()) + 1 for c in candidates]),
        "winner": cand_to_config[grid_winner], "winner_candidate": grid_winner,
        "winner_n_clusters": np.array([int(candidates[w].max()) + 1 for w in grid_winner]),
        "quality": Q[np.arange(gammas.shape[0]), grid_winner], "envelope": envelope, "fallback": fallback,
        "n_candidates": len(candidates),
    }
    return configs, intervals, stability, details


def _fallback(W, objective, candidates, a, b, gammas, mapping, n_restarts):
    from sklearn_frontier.kernels import louvain, partition_energy

    warnings.warn("No configuration passed the filters (too few samples or no cluster structure); using one "
                  "fallback configuration (the partition at resolution 1 if it has >= 2 clusters, else the "
                  "trivial one).", ConfigurationFallbackWarning, stacklevel=4)
    n = W.shape[0]
    indptr, indices, data = _csr_parts(W)
    strength = null_strength(W, objective)
    labels = np.zeros(n, dtype=np.int64)
    if strength.sum() > 0:
        cand = canonical(louvain(indptr, indices, data, strength, 1.0, seed=0, max_levels=MAX_LEVELS,
                                 n_iterations=N_ITERATIONS))
        if cand.max() + 1 >= 2:
            labels = cand
    if strength.sum() > 0:
        ab = partition_energy(indptr, indices, data, strength, labels, int(labels.max()) + 1)
    else:
        ab = (0.0, 1.0)
    return labels, np.array([[1.0, 1.0]]), ab


def _leidenalg_runner(W, objective):
    """A ``louvain``-shaped callable running leidenalg (optional extra ``leiden``)."""
    try:
        import igraph as ig
        import leidenalg as la
    except ImportError as exc:
        raise ImportError("engine='leidenalg' needs the optional packages igraph and leidenalg (GPL): "
                          'pip install ".[leiden]" (or pip install igraph leidenalg).') from exc
    U = sp.triu(W, k=1).tocoo()
    graph = ig.Graph(n=W.shape[0], edges=list(zip(U.row.tolist(), U.col.tolist())))
    graph.es["weight"] = U.data.tolist()
    n, total = W.shape[0], float(W.sum())

    def run(indptr, indices, data, strength, gamma, seed, max_levels, n_iterations):
        if objective == "cpm":  # ours: a - gamma sum (n_c/n)^2 with a = in/2m  <=>  CPM at gamma * 2m / n^2
            part = la.find_partition(graph, la.CPMVertexPartition, weights="weight", seed=seed,
                                     n_iterations=LEIDEN_ITERATIONS, resolution_parameter=gamma * total / n**2)
        else:
            part = la.find_partition(graph, la.RBConfigurationVertexPartition, weights="weight",
                                     n_iterations=LEIDEN_ITERATIONS, seed=seed, resolution_parameter=gamma)
        return np.asarray(part.membership, dtype=np.int64)

    return run
