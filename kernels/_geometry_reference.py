"""numpy references for the planar geometry kernels (the oracles)."""

import numpy as np


def segments_cross_rings(p, q, seg_a, seg_b, tol):
    """For each segment ``p[i] -> q[i]``: does a ring segment ``seg_a[j] -> seg_b[j]`` properly cross it
    farther than ``tol`` from both of its endpoints?"""
    n = p.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    if n == 0 or seg_a.shape[0] == 0:
        return out
    chunk = max(1, 200_000 // seg_a.shape[0])
    ax, ay, bx, by = seg_a[:, 0], seg_a[:, 1], seg_b[:, 0], seg_b[:, 1]
    sxmin, sxmax = np.minimum(ax, bx), np.maximum(ax, bx)
    symin, symax = np.minimum(ay, by), np.maximum(ay, by)
    for s in range(0, n, chunk):
        px, py = p[s:s + chunk, 0:1], p[s:s + chunk, 1:2]
        qx, qy = q[s:s + chunk, 0:1], q[s:s + chunk, 1:2]
        box = ((np.minimum(px, qx) <= sxmax) & (np.maximum(px, qx) >= sxmin)
               & (np.minimum(py, qy) <= symax) & (np.maximum(py, qy) >= symin))
        dx, dy = qx - px, qy - py
        ex, ey = bx - ax, by - ay
        o1 = dx * (ay - py) - dy * (ax - px)
        o2 = dx * (by - py) - dy * (bx - px)
        o3 = ex * (py - ay) - ey * (px - ax)
        o4 = ex * (qy - ay) - ey * (qx - ax)
        proper = box & (o1 * o2 < 0) & (o3 * o4 < 0)
        denom = dx * ey - dy * ex
        with np.errstate(divide="ignore", invalid="ignore"):
            t = ((ax - px) * ey - (ay - py) * ex) / denom
        length = np.sqrt(dx * dx + dy * dy)
        far = (t * length > tol) & ((1.0 - t) * length > tol)
        out[s:s + chunk] = np.any(proper & far, axis=1)
    return out


def points_in_rings(points, seg_a, seg_b):
    """Even-odd rule: is each point inside the union of rings given by their segments?"""
    n = points.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    if n == 0 or seg_a.shape[0] == 0:
        return out
    chunk = max(1, 200_000 // seg_a.shape[0])
    ax, ay, bx, by = seg_a[:, 0], seg_a[:, 1], seg_b[:, 0], seg_b[:, 1]
    for s in range(0, n, chunk):
        x, y = points[s:s + chunk, 0:1], points[s:s + chunk, 1:2]
        straddle = (ay > y) != (by > y)
        with np.errstate(divide="ignore", invalid="ignore"):
            xc = (bx - ax) * (y - ay) / (by - ay) + ax
        out[s:s + chunk] = (np.sum(straddle & (x < xc), axis=1) % 2) == 1
    return out
