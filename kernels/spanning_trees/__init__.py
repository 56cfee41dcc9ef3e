"""Kernels of the spanning-tree family (PR-BAST, BAST): tree Gaussian fields, spanning trees, planar geometry.

* Tree precision: exact O(n) posterior draws and collapsed likelihoods of tree Gaussian fields. The field on a
  rooted tree has precision ``Q = (I - B)^T diag(prec) (I - B)`` with ``B[v, parent v] = rho[v]``; adding Gaussian
  observations keeps the tree structure, so leaves-first elimination has zero fill-in and root-first substitution
  samples it. ``routed_sweep`` runs a whole backfitting sweep of PR-BAST's routed fields in one call.
* Spanning trees: Kruskal MST, BFS rooting, tree partitions and tree path lengths.
* Planar geometry for domain graphs: segment-ring crossings and even-odd point location.
"""

from ._api import (
    kruskal_mst,
    partition_labels,
    points_in_rings,
    random_rooted_tree,
    root_tree,
    routed_sweep,
    segments_cross_rings,
    tree_collapsed_loglik,
    tree_path_lengths,
    tree_precision_solve,
)

__all__ = ["tree_precision_solve", "tree_collapsed_loglik", "routed_sweep", "random_rooted_tree", "kruskal_mst",
           "root_tree", "partition_labels", "tree_path_lengths", "segments_cross_rings", "points_in_rings"]
