"""Twin-test inputs and tolerances of the sdr kernels, keyed by kernel name."""

import numpy as np

from kernel_inputs import TwinCase


def _sizes(rng):
    d = int(rng.choice([1, 2, 3]))
    p = int(rng.choice([1, 7, 30]))
    m = int(rng.choice([1, 16, 17, 64]))
    k = int(rng.choice([d + 2, 30, 200]))
    return d, p, m, k


def _make_local_inputs(rng, with_weights=False):
    d, _, m, k = _sizes(rng)
    n = max(k, 40)
    P = rng.normal(size=(n, d))
    y = rng.normal(size=n)
    anchors = rng.choice(n, size=min(m, n), replace=False)
    nbr = np.stack([np.concatenate([[a], rng.choice(np.delete(np.arange(n), a), k - 1, replace=False)])
                    for a in anchors]).astype(np.int64)
    C = P[anchors].copy()
    if with_weights:
        w = 0.5 + rng.random(nbr.shape)  # bounded weights: k = d + 2 fits stay well conditioned
        return (P, y, C, nbr, w / w.sum(axis=1, keepdims=True), float(rng.choice([0.0, 1e-8, 1e-3]))), {}
    if rng.random() < 0.3:  # one anchor whose neighbours all coincide with its centre: the fit must fail cleanly
        j = int(rng.integers(nbr.shape[0]))
        nbr[j] = nbr[j, 0]
    kernel = int(rng.integers(0, 3))
    bandwidth = float(rng.choice([0.0, 0.0, 0.7]))
    return (P, y, C, nbr, kernel, bandwidth, float(rng.choice([0.0, 1e-8, 1e-3]))), {}


def _make_grad_inputs(rng):
    d, p, m, k = _sizes(rng)
    n = max(k, 40)
    X = rng.normal(size=(n, p))
    nbr = rng.integers(0, n, size=(m, k)).astype(np.int64)
    w = rng.random((m, k))
    w /= w.sum(axis=1, keepdims=True)
    return (X, X[nbr[:, 0]].copy(), nbr, w, rng.normal(size=(m, k)), rng.normal(size=(m, d + 1))), {}


def _make_rmave_inputs(rng):
    d, p, m, k = _sizes(rng)
    n = max(k, 40)
    X = rng.normal(size=(n, p))
    nbr = rng.integers(0, n, size=(m, k)).astype(np.int64)
    w = rng.random((m, k))
    w[:, -1] = 0.0
    w /= w.sum(axis=1, keepdims=True)
    return (X, rng.normal(size=n), X[nbr[:, 0]].copy(), nbr, w, rng.normal(size=(m, d + 1))), {}


def _make_cv_inputs(rng):
    d = int(rng.choice([1, 2, 3]))
    n = int(rng.choice([3, 17, 60]))
    R = int(rng.choice([1, 5]))
    Zp = rng.normal(size=(n, d))
    n_tr = max(1, (2 * n) // 3)
    perms = np.stack([rng.permutation(n) for _ in range(R)]).astype(np.int64)
    return (Zp, rng.normal(size=n), perms[:, :n_tr].copy(), perms[:, n_tr:].copy(),
            float(rng.choice([0.0, 0.3]))), {}


def _make_weighted_local_inputs(rng):
    return _make_local_inputs(rng, with_weights=True)


CASES = {
    "sdr_local_wls": TwinCase(make_inputs=_make_local_inputs, rtol=1e-9, atol=1e-11),
    "sdr_local_wls_weighted": TwinCase(make_inputs=_make_weighted_local_inputs, rtol=1e-9, atol=1e-11),
    "sdr_grad": TwinCase(make_inputs=_make_grad_inputs, rtol=1e-10, atol=1e-12),
    "sdr_rmave_normal_eqs": TwinCase(make_inputs=_make_rmave_inputs, rtol=1e-10, atol=1e-12),
    "sdr_nw_cv_mae": TwinCase(make_inputs=_make_cv_inputs, rtol=1e-11, atol=1e-13),
}
