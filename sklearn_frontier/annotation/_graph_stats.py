"""Graph statistics of the annotation pool: homophily of the labels over the kNN graph, CSR parts."""


import numpy as np
import scipy.sparse as sp


def _homophily_stats(tallies, K):
    r, A = tallies[0], tallies[1]
    if r < 10:
        return (np.nan, np.nan, np.nan)
    h_own, h_nb = tallies[2:2 + K], tallies[2 + K:2 + 2 * K]
    chance = float(np.dot(h_own, h_nb) / (r * r))
    if chance <= 0 or chance >= 1:
        return (float(A / r), chance, np.nan)
    z = (A / r - chance) / np.sqrt(chance * (1 - chance) / r)
    return (float(A / r), chance, float(z))


def _csr_parts(M):
    M = sp.csr_matrix(M)
    M.sort_indices()
    return (np.ascontiguousarray(M.indptr, dtype=np.int64), np.ascontiguousarray(M.indices, dtype=np.int64),
            np.ascontiguousarray(M.data, dtype=np.float64))
