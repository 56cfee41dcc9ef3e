"""Planar geometry kernels for domain graphs: segment-ring crossings and even-odd point location."""

import numpy as np

from ._dispatch import register_kernel

__all__ = ["segments_cross_rings", "points_in_rings"]


def _ring_segments(rng):
    k = int(rng.integers(3, 12))
    theta = np.sort(rng.uniform(0, 2 * np.pi, k))
    r = rng.uniform(0.5, 1.5, k)
    ring = np.c_[r * np.cos(theta), r * np.sin(theta)]
    return np.ascontiguousarray(ring), np.ascontiguousarray(np.roll(ring, -1, axis=0))


def _cross_inputs(rng):
    a, b = _ring_segments(rng)
    n = int(rng.choice([1, 2, int(rng.integers(3, 70))]))
    return (rng.uniform(-2, 2, (n, 2)), rng.uniform(-2, 2, (n, 2)), a, b, float(rng.choice([0.0, 1e-3, 0.2]))), {}


def _inside_inputs(rng):
    a, b = _ring_segments(rng)
    n = int(rng.choice([1, 2, int(rng.integers(3, 70))]))
    return (rng.uniform(-2, 2, (n, 2)), a, b), {}


_cross = register_kernel("segments_cross_rings",
                         reference="sklearn_frontier.kernels._geometry_reference:segments_cross_rings",
                         numba="sklearn_frontier.kernels._geometry_numba:segments_cross_rings",
                         make_inputs=_cross_inputs)
_inside = register_kernel("points_in_rings", reference="sklearn_frontier.kernels._geometry_reference:points_in_rings",
                          numba="sklearn_frontier.kernels._geometry_numba:points_in_rings", make_inputs=_inside_inputs)


def _f2(a):
    return np.ascontiguousarray(a, dtype=np.float64).reshape(-1, 2)


def segments_cross_rings(p, q, seg_a, seg_b, tol=0.0):
    """Test whether each segment ``p[i]``–``q[i]`` is properly crossed by a ring segment.

    Only crossings farther than ``tol`` from both of the segment's endpoints count.

    Parameters
    ----------
    p, q : array-like of shape (m, 2)
        Endpoints of the query segments.
    seg_a, seg_b : array-like of shape (s, 2)
        Endpoints of the ring segments.
    tol : float, default=0.0
        Crossings within ``tol`` of an endpoint are ignored.

    Returns
    -------
    crossed : ndarray of bool of shape (m,)
        Whether each query segment is crossed.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import segments_cross_rings
    >>> segments_cross_rings([[0, 0]], [[2, 0]], [[1, -1]], [[1, 1]])
    array([ True])
    """
    return _cross(_f2(p), _f2(q), _f2(seg_a), _f2(seg_b), float(tol))


def points_in_rings(points, seg_a, seg_b):
    """Test even-odd membership of each point in the rings made of the segments ``seg_a[j]``–``seg_b[j]``.

    Parameters
    ----------
    points : array-like of shape (m, 2)
        Query points.
    seg_a, seg_b : array-like of shape (s, 2)
        Endpoints of the ring segments.

    Returns
    -------
    inside : ndarray of bool of shape (m,)
        Whether each point lies inside the rings.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import points_in_rings
    >>> sq = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float)
    >>> points_in_rings([[0.5, 0.5], [2, 2]], sq, np.roll(sq, -1, axis=0))
    array([ True, False])
    """
    return _inside(_f2(points), _f2(seg_a), _f2(seg_b))


segments_cross_rings.kernel_spec = _cross.kernel_spec
points_in_rings.kernel_spec = _inside.kernel_spec
