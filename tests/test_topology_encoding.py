"""CEOPositionalEncoding: canonical signs and bases, determinism, relation to Laplacian eigenvectors."""

import numpy as np
import pytest
import scipy.linalg as la
from scipy.stats import special_ortho_group

from sklearn_frontier.datasets import make_hypergraph_sbm
from sklearn_frontier.topology import CEOPositionalEncoding, CollapsedLaplacian
from sklearn_frontier.topology._encoding import canonical_eigenbasis


def _cycle(n):
    A = np.diag(np.ones(n - 1), 1)
    A[0, -1] = 1
    return A + A.T


def test_canonical_basis_does_not_depend_on_the_solver_basis():
    # the cycle's Laplacian has 2-dimensional eigenspaces: any rotation inside them gives the same output
    L = np.diag(_cycle(12).sum(1)) - _cycle(12)
    mu, V = la.eigh(L)
    mu, V = mu[1:7], V[:, 1:7]
    ref = canonical_eigenbasis(mu, V)
    rng = np.random.default_rng(0)
    for _ in range(5):
        W = V.copy()
        for s in range(0, 6, 2):  # random rotation and reflection within each degenerate pair
            Q = special_ortho_group.rvs(2, random_state=rng) * rng.choice([-1, 1], size=2)
            W[:, s:s + 2] = V[:, s:s + 2] @ Q
        np.testing.assert_allclose(canonical_eigenbasis(mu, W), ref, atol=1e-10)
    np.testing.assert_allclose(ref.T @ ref, np.eye(6), atol=1e-12)  # still orthonormal
    np.testing.assert_allclose(L @ ref, ref * mu, atol=1e-10)  # still eigenvectors
    # canonical sign: each column's largest-|value| entry (lowest row on ties, up to 1e-8) is positive
    for col in ref.T:
        top = np.flatnonzero(np.abs(col) >= np.abs(col).max() * (1 - 1e-8))[0]
        assert col[top] > 0


def test_simple_spectrum_is_only_sign_fixed():
    rng = np.random.default_rng(1)
    M = rng.standard_normal((8, 8))
    mu, V = la.eigh(M + M.T)
    out = canonical_eigenbasis(mu, -V)
    np.testing.assert_allclose(np.abs(out), np.abs(V), atol=1e-12)
    np.testing.assert_allclose(out, canonical_eigenbasis(mu, V), atol=1e-12)


def test_encoding_matches_collapsed_laplacian_up_to_canonicalisation_and_is_deterministic():
    A, cells, _ = make_hypergraph_sbm(random_state=0)
    kw = dict(affinity="precomputed", random_state=0)
    pe = CEOPositionalEncoding(n_components=4, **kw).fit(A, cells=cells)
    cl = CollapsedLaplacian(n_components=4, **kw).fit(A, cells=cells)
    assert pe.embedding_.shape == (120, 4)
    # same subspace (D-orthonormal columns), generic spectrum here: columns agree up to sign
    np.testing.assert_allclose(np.abs(pe.embedding_), np.abs(cl.embedding_), atol=1e-8)
    again = CEOPositionalEncoding(n_components=4, **kw).fit_transform(A, cells=cells)
    np.testing.assert_array_equal(again, pe.embedding_)
    rows = np.argmax(np.abs(pe.embedding_), axis=0)
    assert np.all(pe.embedding_[rows, np.arange(4)] > 0)


def test_coupling_zero_gives_graph_laplacian_eigenvectors():
    A = _cycle(10) + np.diag(np.ones(8), 2) + np.diag(np.ones(8), -2)  # circulant: degenerate eigenspaces
    pe = CEOPositionalEncoding(n_components=4, affinity="precomputed", coupling=0.0).fit(A)
    d = A.sum(1)
    Lsym = np.eye(10) - A / np.sqrt(np.outer(d, d))
    mu, V = la.eigh(Lsym)
    ref = canonical_eigenbasis(mu[1:5], V[:, 1:5]) / np.sqrt(d)[:, None]
    from sklearn_frontier.topology._encoding import _tolerant_signs

    np.testing.assert_allclose(pe.embedding_, _tolerant_signs(ref), atol=1e-8)


def test_too_many_components_is_a_clear_error():
    with pytest.raises(ValueError, match="n_components"):
        CEOPositionalEncoding(n_components=10, affinity="precomputed").fit(_cycle(8))
