"""Twin-test inputs and tolerances of the iv kernels, keyed by kernel name."""


from kernel_inputs import TwinCase


def _make_hsic_inputs(rng):
    import torch

    m = int(rng.integers(2, 40))
    a = torch.from_numpy(rng.normal(size=(m, int(rng.integers(1, 5)))))
    b = torch.from_numpy(rng.normal(size=(m, int(rng.integers(1, 5)))))
    return (a, b), {}


def _make_demean_inputs(rng):
    import numpy as np

    n, n_fe = int(rng.integers(1, 200)), int(rng.integers(1, 4))
    codes = np.column_stack([rng.integers(0, int(rng.integers(1, 30)), n) for _ in range(n_fe)])
    A = rng.normal(size=(n, int(rng.integers(1, 4))))
    w = rng.random(n) * (rng.random(n) > 0.1)
    return (A, codes, w), {"tol": 1e-12, "maxiter": 5000}


CASES = {
    "hsic_gaussian": TwinCase(make_inputs=_make_hsic_inputs, rtol=1e-12, atol=1e-14),
    "demean": TwinCase(make_inputs=_make_demean_inputs, rtol=1e-9, atol=1e-9),
}
