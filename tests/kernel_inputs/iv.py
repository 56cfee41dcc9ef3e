"""Twin-test inputs and tolerances of the iv kernels, keyed by kernel name."""


from kernel_inputs import TwinCase


def _make_hsic_inputs(rng):
    import torch

    m = int(rng.integers(2, 40))
    a = torch.from_numpy(rng.normal(size=(m, int(rng.integers(1, 5)))))
    b = torch.from_numpy(rng.normal(size=(m, int(rng.integers(1, 5)))))
    return (a, b), {}


CASES = {
    "hsic_gaussian": TwinCase(make_inputs=_make_hsic_inputs, rtol=1e-12, atol=1e-14),
}
