"""Builders of the CEO family: clique and hypergraph complexes."""

from itertools import combinations

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_frontier.topology import clique_complex, hypergraph_complex


def _random_graph(n, p, seed):
    rng = np.random.default_rng(seed)
    A = np.triu(rng.random((n, n)) < p, 1)
    return (A | A.T).astype(float)


def test_k3_boundaries_known():
    B1, B2 = clique_complex(np.ones((3, 3)))
    np.testing.assert_array_equal(B1.toarray(), [[-1, -1, 0], [1, 0, -1], [0, 1, 1]])
    np.testing.assert_array_equal(B2.toarray().ravel(), [1, -1, 1])
    assert all(sp.isspmatrix_csr(B) and B.dtype == np.float64 for B in (B1, B2))


def test_k4_counts_chain_and_betti():
    Bs, cells = clique_complex(np.ones((4, 4)), max_rank=3, return_cells=True)
    assert [4] + [B.shape[1] for B in Bs] == [4, 6, 4, 1]
    for k in range(len(Bs) - 1):
        assert np.abs((Bs[k] @ Bs[k + 1]).toarray()).max() == 0
    # Betti numbers from ranks of the boundaries: (1, 0, 0, 0)
    ranks = [0] + [np.linalg.matrix_rank(B.toarray()) for B in Bs] + [0]
    sizes = [4, 6, 4, 1]
    betti = [sizes[k] - ranks[k] - ranks[k + 1] for k in range(4)]
    assert betti == [1, 0, 0, 0]
    assert cells[3].tolist() == [[0, 1, 2, 3]]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clique_counts_match_brute_force(seed):
    A = _random_graph(14, 0.5, seed)
    Bs, cells = clique_complex(A, max_rank=3, return_cells=True)
    for k in (2, 3):
        brute = [c for c in combinations(range(14), k + 1) if all(A[i, j] for i, j in combinations(c, 2))]
        assert [tuple(r) for r in cells[k].tolist()] == brute  # same cells, lexicographic order
    assert cells[2].shape[0] == int(round(np.trace(A @ A @ A) / 6))


def test_signs_unsigned_and_mixed():
    A = _random_graph(10, 0.6, 3)
    signed = clique_complex(A, 2, signed=True)
    unsigned = clique_complex(A, 2, signed=False)
    mixed = clique_complex(A, 2, signed="mixed")
    for Bs in (unsigned, mixed):
        np.testing.assert_array_equal(abs(Bs[0]).toarray(), abs(signed[0]).toarray())
        np.testing.assert_array_equal(Bs[1].toarray(), abs(signed[1]).toarray())
    np.testing.assert_array_equal(mixed[0].toarray(), signed[0].toarray())
    assert unsigned[0].min() == 0


def test_no_triangles_and_empty_graph():
    path = np.diag(np.ones(4), 1)
    B1, B2 = clique_complex(path + path.T)
    assert B1.shape == (5, 4) and B2.shape == (4, 0)
    B1, B2, B3 = clique_complex(np.zeros((3, 3)), max_rank=3)
    assert B1.shape == (3, 0) and B2.shape == (0, 0) and B3.shape == (0, 0)


def test_clique_complex_bad_input():
    with pytest.raises(ValueError, match="asymmetric"):
        clique_complex(np.triu(np.ones((4, 4)), 1))
    with pytest.raises(ValueError, match="rank 2 has 20 cells"):
        clique_complex(np.ones((6, 6)), max_cells=15)
    with pytest.raises(ValueError, match="square"):
        clique_complex(np.ones((3, 4)))
    with pytest.raises(ValueError, match="max_rank"):
        clique_complex(np.ones((3, 3)), max_rank=0)


def test_hypergraph_complex_single_cell():
    (B1, B2), cells = hypergraph_complex(np.zeros((4, 4)), [[0, 1, 2, 3]], return_cells=True)
    assert B1.shape == (4, 6)
    np.testing.assert_array_equal(B2.toarray().ravel(), np.ones(6))
    assert cells[1].tolist() == [list(p) for p in combinations(range(4), 2)]


def test_hypergraph_duplicates_collapse_and_order():
    A = np.zeros((6, 6))
    A[0, 5] = A[5, 0] = 1
    (B1, B2), cells = hypergraph_complex(A, [[3, 2, 1, 1], [1, 2, 3], [0, 1, 2, 4]], return_cells=True)
    assert cells[2] == [(0, 1, 2, 4), (1, 2, 3)]
    assert B2.shape[1] == 2
    assert (0, 5) in [tuple(e) for e in cells[1].tolist()]
    np.testing.assert_array_equal(np.asarray(B2.sum(axis=0)).ravel(), [6, 3])


@pytest.mark.parametrize("bad", [[0, 1], [0, 0, 1], [0, 1, 7], [0, 1, 2.5], [0, 1, np.nan], [-1, 0, 1]])
def test_hypergraph_bad_cells_named(bad):
    with pytest.raises(ValueError, match="cell 1"):
        hypergraph_complex(np.zeros((5, 5)), [[0, 1, 2], bad])
