"""numba twins of the planar geometry kernels (see ``_geometry_reference``)."""

import math

import numpy as np
from numba import boolean, float64, njit, types

_F2 = types.Array(float64, 2, "C", readonly=True)


@njit(boolean[::1](_F2, _F2, _F2, _F2, float64), cache=True, nogil=True)
def segments_cross_rings(p, q, seg_a, seg_b, tol):
    n = p.shape[0]
    m = seg_a.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        px, py, qx, qy = p[i, 0], p[i, 1], q[i, 0], q[i, 1]
        dx, dy = qx - px, qy - py
        length = math.sqrt(dx * dx + dy * dy)
        for j in range(m):
            ax, ay, bx, by = seg_a[j, 0], seg_a[j, 1], seg_b[j, 0], seg_b[j, 1]
            if (min(px, qx) > max(ax, bx) or max(px, qx) < min(ax, bx)
                    or min(py, qy) > max(ay, by) or max(py, qy) < min(ay, by)):
                continue
            ex, ey = bx - ax, by - ay
            o1 = dx * (ay - py) - dy * (ax - px)
            o2 = dx * (by - py) - dy * (bx - px)
            o3 = ex * (py - ay) - ey * (px - ax)
            o4 = ex * (qy - ay) - ey * (qx - ax)
            if not (o1 * o2 < 0 and o3 * o4 < 0):
                continue
            t = ((ax - px) * ey - (ay - py) * ex) / (dx * ey - dy * ex)
            if t * length > tol and (1.0 - t) * length > tol:
                out[i] = True
                break
    return out


@njit(boolean[::1](_F2, _F2, _F2), cache=True, nogil=True)
def points_in_rings(points, seg_a, seg_b):
    n = points.shape[0]
    m = seg_a.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        x, y = points[i, 0], points[i, 1]
        inside = False
        for j in range(m):
            ax, ay, bx, by = seg_a[j, 0], seg_a[j, 1], seg_b[j, 0], seg_b[j, 1]
            if (ay > y) != (by > y):
                if x < (bx - ax) * (y - ay) / (by - ay) + ax:
                    inside = not inside
        out[i] = inside
    return out
