"""Kernels of MixConfig (configuration extraction): kNN, graph, energies, votes, Louvain, envelope.

Every kernel has a numpy / pure-Python reference (the oracle) and a numba twin; there is no Triton
twin (the sizes are far below launch cost), so ``backend="triton"`` falls back to numba.
``upper_envelope`` (the exact CHAMP envelope of a few dozen lines) is plain numpy.
"""

from ._api import (
    cluster_entropy,
    knn_bruteforce,
    knn_vote,
    louvain,
    partition_energy,
    self_tuning_csr,
    upper_envelope,
)

__all__ = ["knn_bruteforce", "self_tuning_csr", "partition_energy", "knn_vote", "cluster_entropy", "louvain",
           "upper_envelope"]
