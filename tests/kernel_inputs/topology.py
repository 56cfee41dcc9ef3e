"""Twin-test inputs and tolerances of the topology kernels, keyed by kernel name."""

import numpy as np
import scipy.sparse as sp

from kernel_inputs import TwinCase


def _random_upper_csr(rng):
    n = int(rng.choice([0, 1, 2, 5, 17, 40, 300]))
    p = float(rng.choice([0.0, 0.05, 0.3, 0.8]))
    if n == 0:
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    A = sp.triu(sp.random(n, n, density=p, random_state=rng, format="csr"), k=1).tocsr()
    A.sort_indices()
    return A.indptr.astype(np.int64), A.indices.astype(np.int64)


def _make_count_inputs(rng):
    indptr, indices = _random_upper_csr(rng)
    return (indptr, indices, int(rng.integers(0, 4))), {}


def _make_enumerate_inputs(rng):
    from sklearn_frontier.kernels.topology._reference import clique_count as ref_count

    indptr, indices = _random_upper_csr(rng)
    k = int(rng.integers(0, 4))
    return (indptr, indices, k, int(ref_count(indptr, indices, k))), {}


def _make_face_inputs(rng):
    from sklearn_frontier.kernels.topology._reference import clique_count as ref_count
    from sklearn_frontier.kernels.topology._reference import clique_enumerate as ref_enum

    indptr, indices = _random_upper_csr(rng)
    k = int(rng.integers(1, 4))
    cells = ref_enum(indptr, indices, k, int(ref_count(indptr, indices, k)))
    faces = ref_enum(indptr, indices, k - 1, int(ref_count(indptr, indices, k - 1)))
    if faces.shape[0] > 1 and rng.random() < 0.5:  # drop some faces: those cells get -1
        faces = faces[np.sort(rng.choice(faces.shape[0], faces.shape[0] // 2, replace=False))]
    return (np.ascontiguousarray(cells), np.ascontiguousarray(faces)), {}


def _make_pcg_inputs(rng):
    N = int(rng.choice([1, 2, 9, 50, 130]))
    r = int(rng.choice([1, 7, 64]))
    B = sp.random(N, max(1, N // 2 + 1), density=0.3, random_state=rng, format="csr")
    C = (B @ B.T).tocsr()
    C.sort_indices()
    shift = float(rng.choice([1e-3, 1.0]))
    diag = C.diagonal() + shift
    rhs = rng.standard_normal((N, r))
    if r > 1:
        rhs[:, 0] = 0.0  # a zero column stays zero
    return (C.indptr.astype(np.int64), C.indices.astype(np.int64), C.data.astype(np.float64), 1.0 / diag,
            shift, rhs, 1e-12, 10 * N + 50), {}


def _compare_pcg(expected, actual):
    Ze, ie, ce = expected
    Za, ia, ca = actual
    assert Za.shape == Ze.shape and Za.dtype == Ze.dtype
    scale = np.maximum(np.abs(Ze).max(axis=0), 1e-300)
    np.testing.assert_allclose(Za / scale, Ze / scale, rtol=0, atol=1e-8)
    assert np.array_equal(ca, ce)
    assert ia.dtype == ie.dtype and np.all(np.abs(ia - ie) <= np.maximum(3, 0.1 * ie))


def _make_selinv_inputs(rng):
    n = int(rng.choice([1, 2, 9, 40, 150]))
    B = sp.random(n, n, density=float(rng.choice([0.02, 0.1, 0.4])), random_state=rng, format="csr")
    A = (B @ B.T + float(rng.choice([1e-3, 1.0])) * sp.eye(n)).tocsr()
    A.sort_indices()
    return (A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data.astype(np.float64)), {}


def _compare_selinv(expected, actual):
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-8, atol=0)


def _compare_count(expected, actual):
    assert int(actual) == int(expected), f"{actual} != {expected}"


CASES = {
    "clique_count": TwinCase(make_inputs=_make_count_inputs, compare=_compare_count),
    "clique_enumerate": TwinCase(make_inputs=_make_enumerate_inputs),
    "face_index": TwinCase(make_inputs=_make_face_inputs),
    "pcg_jacobi_batched": TwinCase(make_inputs=_make_pcg_inputs, compare=_compare_pcg),
    "selinv_diag": TwinCase(make_inputs=_make_selinv_inputs, compare=_compare_selinv),
}
