"""Domain graph G0: unique locations joined by Delaunay / kNN / chain edges that stay inside the domain."""

import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from sklearn_frontier.utils._graphs import knn_neighbors, repair_connectivity

__all__ = ["DomainGraph", "build_domain_graph", "parse_domain"]


# ----------------------------------------------------------------------------------------------- domain
@dataclass
class Domain:
    """A parsed domain: polygon rings (even-odd rule) or a membership callable."""

    rings: list = None  # list of (k, 2) float arrays, each closed implicitly
    contains: object = None  # callable (m, d) -> bool (m,)

    def scaled(self, scale):
        """The same domain in coordinates divided by ``scale`` (rings scaled, a callable wrapped)."""
        if self.rings is not None:
            return Domain(rings=[np.ascontiguousarray(r / scale) for r in self.rings])
        return Domain(contains=_ScaledContains(self.contains, scale))

    @property
    def segments(self):
        a = np.concatenate([r for r in self.rings])
        b = np.concatenate([np.roll(r, -1, axis=0) for r in self.rings])
        return np.ascontiguousarray(a), np.ascontiguousarray(b)

    def inside(self, P):
        P = np.ascontiguousarray(P, dtype=np.float64)
        if self.rings is not None:
            from sklearn_frontier.kernels import points_in_rings

            return points_in_rings(P, *self.segments)
        out = np.asarray(self.contains(P))
        if out.shape != (P.shape[0],) or not (out.dtype == bool or np.issubdtype(out.dtype, np.integer)):
            raise ValueError(f"domain callable must return a boolean array of shape ({P.shape[0]},), "
                             f"got {out.dtype} {out.shape}.")
        return out.astype(bool)

    def segment_inside(self, p, q, tol):
        """Whether each segment ``p[i]``–``q[i]`` stays inside the domain."""
        p = np.ascontiguousarray(p, dtype=np.float64)
        q = np.ascontiguousarray(q, dtype=np.float64)
        if p.shape[0] == 0:
            return np.zeros(0, dtype=bool)
        if self.rings is not None:
            from sklearn_frontier.kernels import segments_cross_rings

            ok = ~segments_cross_rings(p, q, *self.segments, tol)
            mid = 0.5 * (p + q)
            keep = ok & self.inside(mid)
            # a midpoint within tol of the boundary (an edge along the boundary) counts as inside; the distance
            # is needed only for the few midpoints outside
            check = np.flatnonzero(ok & ~keep)
            keep[check] = _dist_to_segments(mid[check], *self.segments) <= tol
            return keep
        t = (np.arange(16) + 1.0) / 17.0
        pts = p[:, None, :] + t[None, :, None] * (q - p)[:, None, :]
        return self.inside(pts.reshape(-1, p.shape[1])).reshape(p.shape[0], 16).all(axis=1)


class _ScaledContains:
    """``contains(P * scale)``: a membership callable seen from standardised coordinates (picklable)."""

    def __init__(self, contains, scale):
        self.contains = contains
        self.scale = scale

    def __call__(self, P):
        return self.contains(np.asarray(P) * self.scale)


def _dist_to_segments(P, a, b):
    out = np.full(P.shape[0], np.inf)
    ab = b - a
    denom = np.maximum(np.sum(ab * ab, axis=1), 1e-300)
    for s in range(0, P.shape[0], 2048):
        X = P[s:s + 2048, None, :]
        t = np.clip(np.sum((X - a) * ab, axis=2) / denom, 0.0, 1.0)
        closest = a + t[..., None] * ab
        out[s:s + 2048] = np.sqrt(np.min(np.sum((X - closest) ** 2, axis=2), axis=1))
    return out


def _as_ring(ring):
    try:
        ring = np.asarray(ring, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"domain rings must be numeric (k, 2) arrays: {exc}") from None
    if ring.ndim != 2 or ring.shape[1] != 2:
        raise ValueError(f"domain polygon rings must have shape (k, 2), got {ring.shape}.")
    if not np.all(np.isfinite(ring)):
        raise ValueError("domain polygon has non-finite coordinates.")
    if ring.shape[0] >= 2 and np.allclose(ring[0], ring[-1]):
        ring = ring[:-1]
    if ring.shape[0] < 3:
        raise ValueError(f"a domain polygon ring needs at least 3 vertices, got {ring.shape[0]}.")
    x, y = ring[:, 0], ring[:, 1]
    area = 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
    if not area > 0:
        raise ValueError("domain polygon ring has zero area.")
    return np.ascontiguousarray(ring)


def parse_domain(domain, n_features):
    """Turn the ``domain`` parameter into a :class:`Domain` (or None)."""
    if domain is None or isinstance(domain, Domain):
        return domain
    geo = getattr(domain, "__geo_interface__", None)
    if geo is not None:
        if n_features != 2:
            raise ValueError(f"a polygon domain needs 2-D X, got n_features={n_features}.")
        kind, coords = geo.get("type"), geo.get("coordinates")
        polys = [coords] if kind == "Polygon" else list(coords) if kind == "MultiPolygon" else None
        if polys is None:
            raise TypeError(f"domain with __geo_interface__ type {kind!r} is not a (Multi)Polygon.")
        return Domain(rings=[_as_ring(r) for poly in polys for r in poly])
    if callable(domain):
        return Domain(contains=domain)
    if isinstance(domain, (list, tuple, np.ndarray)):
        if n_features != 2:
            raise ValueError(f"a polygon domain needs 2-D X, got n_features={n_features}.")
        try:
            arr = np.asarray(domain, dtype=np.float64)
            rings = [arr] if arr.ndim == 2 else None
        except (ValueError, TypeError):
            rings = None
        if rings is None:
            rings = list(domain)
        return Domain(rings=[_as_ring(r) for r in rings])
    raise TypeError("domain must be None, a (k, 2) polygon, a list of rings, an object with __geo_interface__ "
                    f"or a callable contains(X) -> bool array; got {type(domain).__name__}.")


# ----------------------------------------------------------------------------------------------- graph
@dataclass
class DomainGraph:
    """The domain graph G0 over the unique training locations.

    Built by :func:`build_domain_graph`; the parameters are also its attributes.

    Parameters
    ----------
    vertices : ndarray of shape (n_v, d)
        Unique training locations.
    edges : ndarray of shape (E, 2), int64
        Edges ``(i, j)`` with i < j, sorted.
    lengths : ndarray of shape (E,)
        Edge lengths.
    repaired : ndarray of shape (E,), bool
        Edges added to reconnect the graph.
    sample_vertex : ndarray of shape (n_samples,), int64
        Vertex of each training row.
    diameter : float
        Diameter of the locations.
    kind : {"chain", "delaunay", "knn", "callable", "none"}
        How the edges were built.
    domain : Domain or None, default=None
        The parsed domain.
    tolerance : float, default=0.0
        Absolute tolerance of the boundary tests.
    extra : dict, default={}
        Auxiliary data of the construction.

    See Also
    --------
    build_domain_graph : Build this graph from locations and a domain.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.spanning_trees import build_domain_graph
    >>> G = build_domain_graph(np.array([[0.0], [1.0], [3.0]]))
    >>> G.n_vertices, G.lengths.tolist()
    (3, [1.0, 2.0])
    """

    vertices: np.ndarray
    edges: np.ndarray
    lengths: np.ndarray
    repaired: np.ndarray
    sample_vertex: np.ndarray
    diameter: float
    kind: str
    domain: object = None
    tolerance: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def n_vertices(self):
        return self.vertices.shape[0]


def _delaunay_edges(V):
    from scipy.spatial import Delaunay

    tri = Delaunay(V)
    s = tri.simplices
    e = np.concatenate([s[:, [0, 1]], s[:, [1, 2]], s[:, [0, 2]]])
    return np.unique(np.sort(e, axis=1), axis=0)


def _knn_edges(V, n_neighbors, metric):
    _, idx = knn_neighbors(V, n_neighbors, metric=metric)
    rows = np.repeat(np.arange(V.shape[0]), idx.shape[1])
    e = np.sort(np.c_[rows, idx.ravel()], axis=1)
    e = e[e[:, 0] != e[:, 1]]
    return np.unique(e, axis=0)


def build_domain_graph(X, domain=None, graph="auto", n_neighbors=8, metric="euclidean", domain_tolerance=1e-3):
    """Build the domain graph G0 over the unique rows of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, d)
        Locations (coordinates, never rescaled).
    domain : None, (k, 2) array, list of rings, object with ``__geo_interface__`` or callable
        The domain; edges that leave it are dropped (even-odd rule over rings).
    graph : {"auto", "chain", "delaunay", "knn"} or callable
        ``"auto"``: chain for d = 1, Delaunay for d = 2, kNN otherwise. A callable ``graph(V)`` returns
        a sparse (n_v, n_v) matrix of positive edge lengths. Degenerate geometry falls back: two distinct
        locations are joined by one edge, and collinear 2-D locations (no triangulation exists) get a kNN
        graph, with a ``UserWarning``; the graph is then made connected.
    n_neighbors : int, default=8
        Neighbours of the kNN graph.
    metric : str, default="euclidean"
        Metric of the kNN graph and of the edge lengths.
    domain_tolerance : float, default=1e-3
        Crossings closer than ``domain_tolerance * diameter`` to an edge end are ignored.

    Returns
    -------
    graph : DomainGraph
        The domain graph.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.spanning_trees import build_domain_graph
    >>> G = build_domain_graph(np.array([[0.0], [2.0], [1.0], [1.0]]))
    >>> G.kind, G.edges.tolist()
    ('chain', [[0, 1], [1, 2]])
    """
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    V, inverse = np.unique(X, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.int64)
    n_v = V.shape[0]
    span = V.max(axis=0) - V.min(axis=0)
    diameter = float(np.sqrt(np.sum(span ** 2)))
    if not diameter > 0:
        diameter = 1.0
    tol = domain_tolerance * diameter
    dom = parse_domain(domain, d)
    kind = graph if isinstance(graph, str) else "callable"
    if kind == "auto":
        kind = "chain" if d == 1 else "delaunay" if d == 2 else "knn"
    if n_v == 1:
        edges = np.zeros((0, 2), dtype=np.int64)
        kind = "none"
    elif kind == "callable":
        A = sp.coo_matrix(graph(V))
        if A.shape != (n_v, n_v):
            raise ValueError(f"graph callable must return a ({n_v}, {n_v}) sparse matrix, got {A.shape}.")
        edges = np.unique(np.sort(np.c_[A.row, A.col], axis=1), axis=0).astype(np.int64)
        edges = edges[edges[:, 0] != edges[:, 1]]
    elif kind == "chain":
        if d != 1:
            raise ValueError(f"graph='chain' needs 1-D X, got n_features={d}.")
        o = np.argsort(V[:, 0], kind="mergesort")
        edges = np.sort(np.c_[o[:-1], o[1:]], axis=1)
    elif n_v == 2:
        edges = np.array([[0, 1]], dtype=np.int64)
    elif kind == "delaunay":
        if d != 2:
            raise ValueError(f"graph='delaunay' needs 2-D X, got n_features={d}.")
        from scipy.spatial import QhullError

        try:
            edges = _delaunay_edges(V)
        except (QhullError, ValueError):
            warnings.warn("Delaunay triangulation failed (collinear or degenerate points); using a kNN graph.",
                          UserWarning, stacklevel=3)
            kind = "knn"
            edges = _knn_edges(V, n_neighbors, metric)
    elif kind == "knn":
        edges = _knn_edges(V, n_neighbors, metric)
    else:
        raise ValueError(f"unknown graph {graph!r}.")
    edges = np.ascontiguousarray(edges, dtype=np.int64).reshape(-1, 2)
    if dom is not None and edges.shape[0] and (dom.contains is not None or d == 2):
        keep = dom.segment_inside(V[edges[:, 0]], V[edges[:, 1]], tol)
        edges = edges[keep]
        outside = ~dom.inside(V)
        if dom.rings is not None and outside.any():
            far = _dist_to_segments(V[outside], *dom.segments) > tol
            outside[outside] = far
        if outside.any():
            warnings.warn(f"{int(outside.sum())} training locations lie outside the domain.", UserWarning,
                          stacklevel=3)
    if kind in ("knn",) and metric != "euclidean":
        from sklearn.metrics import pairwise_distances

        lengths = np.array([pairwise_distances(V[[u]], V[[v]], metric=metric)[0, 0] for u, v in edges])
    else:
        lengths = np.sqrt(np.sum((V[edges[:, 0]] - V[edges[:, 1]]) ** 2, axis=1))
    repaired = np.zeros(edges.shape[0], dtype=bool)
    if n_v > 1:
        A = sp.csr_matrix((np.maximum(lengths, 1e-300), (edges[:, 0], edges[:, 1])), shape=(n_v, n_v))
        _, added = repair_connectivity(A, V)
        if added.shape[0]:
            if dom is not None:
                warnings.warn(f"The domain graph was disconnected; {added.shape[0]} repair edges were added "
                              "ignoring the domain.", UserWarning, stacklevel=3)
            edges = np.concatenate([edges, added])
            lengths = np.concatenate([lengths, np.sqrt(np.sum((V[added[:, 0]] - V[added[:, 1]]) ** 2, axis=1))])
            repaired = np.concatenate([repaired, np.ones(added.shape[0], dtype=bool)])
            o = np.lexsort((edges[:, 1], edges[:, 0]))
            edges, lengths, repaired = edges[o], lengths[o], repaired[o]
    lengths = np.maximum(lengths, 1e-12 * diameter)
    return DomainGraph(vertices=V, edges=np.ascontiguousarray(edges, dtype=np.int64),
                       lengths=np.ascontiguousarray(lengths), repaired=repaired, sample_vertex=inverse,
                       diameter=diameter, kind=kind, domain=dom, tolerance=tol)


def visible(graph, U, cand):
    """``visible[i, c]``: the segment from ``U[i]`` to vertex ``cand[i, c]`` stays inside the domain."""
    dom = graph.domain
    if dom is None or (dom.rings is None and dom.contains is None) or cand.size == 0:
        return np.ones(cand.shape, dtype=bool)
    if dom.rings is not None and U.shape[1] != 2:
        return np.ones(cand.shape, dtype=bool)
    k = cand.shape[1]
    P = np.repeat(U, k, axis=0)
    Q = graph.vertices[cand.ravel()]
    return dom.segment_inside(P, Q, graph.tolerance).reshape(cand.shape)

