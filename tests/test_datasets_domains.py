"""The constrained-domain generators: points inside their polygon, reproducible, and barriers that the domain graph
respects (the spiral band's gaps between turns follow no coordinate axis)."""

import numpy as np
import pytest
from sklearn_frontier.kernels import points_in_rings

from sklearn_frontier.datasets import make_spiral_band
from sklearn_frontier.spanning_trees import build_domain_graph


def _inside(X, boundary):
    return points_in_rings(X, boundary, np.roll(boundary, -1, axis=0))


def test_spiral_band_points_lie_in_the_returned_polygon_and_are_reproducible():
    X, y, f, boundary = make_spiral_band(400, random_state=3)
    assert X.shape == (400, 2) and y.shape == f.shape == (400,)
    assert np.all(np.isfinite(f))
    assert _inside(X, boundary).mean() > 0.99  # the polygon is a chord approximation of the curved band
    X2, y2, f2, boundary2 = make_spiral_band(400, random_state=3)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_array_equal(boundary, boundary2)
    assert not np.array_equal(X, make_spiral_band(400, random_state=4)[0])


def test_spiral_band_noise_is_the_requested_scale():
    _, y, f, _ = make_spiral_band(4000, noise=0.2, random_state=0)
    assert np.std(y - f) == pytest.approx(0.2, rel=0.05)
    _, y0, f0, _ = make_spiral_band(50, noise=0.0, random_state=0)
    np.testing.assert_array_equal(y0, f0)


def test_spiral_band_truth_is_the_documented_function_of_the_winding_angle():
    # the test recomputes each point's nearest turn from its coordinates: r = b theta on the centre line
    spacing, half_width = 0.5, 0.2
    X, y, f, boundary = make_spiral_band(3000, noise=0.0, spacing=spacing, half_width=half_width, random_state=1)
    b = spacing / (2 * np.pi)
    r = np.hypot(X[:, 0], X[:, 1])
    phi = np.mod(np.arctan2(X[:, 1], X[:, 0]), 2 * np.pi)
    theta = phi + 2 * np.pi * np.round((r / b - phi) / (2 * np.pi))
    offset = r - b * theta
    # no point in the gaps, none past the ends (theta from pi over two turns)
    assert np.all(np.abs(offset) <= half_width + 1e-12)
    assert theta.min() >= np.pi and theta.max() <= 5 * np.pi
    np.testing.assert_allclose(f, theta / 2 + 0.5 * np.sin(3 * theta) + 2 * offset, rtol=0, atol=1e-12)
    # one turn further out at the same polar angle and offset, the truth is higher by exactly pi: a jump of pi
    # across every gap, whose width is spacing - 2 half_width
    assert set(np.round(np.diff(np.unique(np.round(theta - phi, 9))) / np.pi, 6)) == {2.0}


def test_spiral_band_domain_graph_never_crosses_the_gap_but_the_plain_triangulation_does():
    X, _, f, boundary = make_spiral_band(800, noise=0.0, random_state=2)
    for domain, crosses in ((boundary, False), (None, True)):
        g = build_domain_graph(X, domain=domain)  # Delaunay: without the domain its triangles bridge the gaps
        fv = np.empty(g.vertices.shape[0])
        fv[g.sample_vertex] = f
        jump = np.abs(fv[g.edges[:, 0]] - fv[g.edges[:, 1]]).max()
        # an edge across the gap joins points whose truth differs by about pi; within the band edges are short
        assert (jump > 2.0) == crosses


@pytest.mark.parametrize("kwargs, match", [({"half_width": 0.3}, "half_width"), ({"half_width": 0.0}, "half_width"),
                                           ({"turns": 0}, "turns")])
def test_spiral_band_rejects_bad_geometry(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_spiral_band(10, **kwargs)
