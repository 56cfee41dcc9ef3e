"""Prediction at new locations: each query is a new leaf of every tree, attached to a visible nearby vertex."""

import warnings

import numpy as np
from scipy.spatial import cKDTree

from ._domain import visible


def attachment_candidates(graph, U, method="triangle", n_neighbors=5):
    """``(cand, valid, delta, bary)`` arrays (n, K): candidate vertices (-1 padding), distances and barycentric
    weights (NaN rows where the query was not located in a visible triangle)."""
    V = graph.vertices
    n_v = V.shape[0]
    n = U.shape[0]
    kd = cKDTree(V)
    k0 = min(n_neighbors, n_v)
    # at least 3 columns: the barycentric weights of a triangle fill the first three
    cand = np.full((n, max(k0, 3)), -1, dtype=np.int64)
    ok = np.zeros(n, dtype=bool)
    d0, i0 = kd.query(U, k=1)
    exact = d0 <= 1e-12 * graph.diameter
    cand[exact, 0] = i0[exact]
    ok |= exact
    bary = np.full((n, 3), np.nan)
    bary[exact] = [1.0, 0.0, 0.0]
    if method == "triangle" and graph.kind == "delaunay" and n_v >= 3:
        from scipy.spatial import Delaunay, QhullError

        try:
            tri = Delaunay(V)
        except (QhullError, ValueError):
            tri = None
        if tri is not None:
            todo = np.flatnonzero(~ok)
            simplex = tri.find_simplex(U[todo])
            inside = simplex >= 0
            rows = todo[inside]
            c = tri.simplices[simplex[inside]]
            vis = visible(graph, U[rows], c)
            has = vis.any(axis=1)
            cc = np.where(vis, c, -1)
            cand[rows[has], :3] = cc[has]
            ok[rows[has]] = True
            T = tri.transform[simplex[inside]]
            lam2 = np.einsum("nij,nj->ni", T[:, :2], U[rows] - T[:, 2])
            lam3 = np.c_[lam2, 1.0 - lam2.sum(axis=1)]
            lam3 = np.clip(np.where(vis, lam3, 0.0), 0.0, None)
            tot = lam3.sum(axis=1, keepdims=True)
            good = has & (tot[:, 0] > 0)
            bary[rows[good]] = lam3[good] / tot[good]
    n_last_resort = 0
    for k in (k0, min(4 * k0, n_v)):
        todo = np.flatnonzero(~ok)
        if todo.size == 0:
            break
        _, idx = kd.query(U[todo], k=k)
        idx = np.asarray(idx).reshape(todo.size, k)
        vis = visible(graph, U[todo], idx)
        has = vis.any(axis=1)
        if k > cand.shape[1]:
            cand = np.concatenate([cand, np.full((n, k - cand.shape[1]), -1, dtype=np.int64)], axis=1)
        cc = np.where(vis, idx, -1)
        cand[todo[has], :k] = cc[has]
        ok[todo[has]] = True
    todo = np.flatnonzero(~ok)
    if todo.size:
        n_last_resort = todo.size
        cand[todo, 0] = i0[todo]
    if n_last_resort and graph.domain is not None:
        warnings.warn(f"{n_last_resort} query points have no visible training vertex (outside the domain?); "
                      "they attach to their nearest vertex.", UserWarning, stacklevel=4)
    # compact columns (barycentric weights follow their vertices)
    order = np.argsort(cand < 0, axis=1, kind="stable")
    cand = np.take_along_axis(cand, order, axis=1)
    bfull = np.zeros(cand.shape)
    bfull[:, :3] = np.nan_to_num(bary, nan=0.0)
    bfull = np.take_along_axis(bfull, order, axis=1)
    has_bary = ~np.isnan(bary[:, 0])
    width = max(int((cand >= 0).sum(axis=1).max()), 1)
    cand = np.ascontiguousarray(cand[:, :width])
    valid = cand >= 0
    delta = np.where(valid, np.sqrt(np.sum((U[:, None, :] - V[np.maximum(cand, 0)]) ** 2, axis=2)), 0.0)
    bary = np.where(has_bary[:, None], bfull[:, :width], np.nan)
    return cand, valid, delta, bary


def attachment_weights(valid, delta, weighting, bary=None):
    if weighting == "barycentric":
        w = attachment_weights(valid, delta, "distance")
        if bary is not None:
            rows = ~np.isnan(bary[:, 0])
            w[rows] = bary[rows]
        return w
    if weighting == "distance":
        with np.errstate(divide="ignore"):
            w = np.where(valid, 1.0 / np.maximum(delta, 1e-300), 0.0)
        zero = valid & (delta <= 0)
        w = np.where(zero.any(axis=1, keepdims=True), zero.astype(float), w)
    else:
        w = valid.astype(np.float64)
    return w / w.sum(axis=1, keepdims=True)
