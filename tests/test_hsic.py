"""HSIC kernel: torch reference vs numpy oracle, invariances, independence, gradients."""

import numpy as np
import pytest
import torch
from sklearn_frontier.kernels.iv import hsic_gaussian, median_bandwidth
from sklearn_frontier.kernels.iv._reference import hsic_gaussian_numpy, median_bandwidth_numpy


def _pair(m, da, db, seed=0, dependent=False):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(m, da))
    b = rng.normal(size=(m, db))
    if dependent:
        b = np.tanh(a[:, :1]) + 0.1 * b
    return a, b


@pytest.mark.parametrize("m,da,db", [(2, 1, 1), (7, 3, 2), (33, 1, 4), (64, 5, 5)])
def test_torch_matches_numpy(m, da, db):
    a, b = _pair(m, da, db, seed=m)
    got = hsic_gaussian(torch.from_numpy(a), torch.from_numpy(b)).item()
    np.testing.assert_allclose(got, hsic_gaussian_numpy(a, b), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(median_bandwidth(torch.from_numpy(a)).item(), median_bandwidth_numpy(a), rtol=1e-12)
    fixed = hsic_gaussian(torch.from_numpy(a), torch.from_numpy(b), 0.7, 1.3).item()
    np.testing.assert_allclose(fixed, hsic_gaussian_numpy(a, b, 0.7, 1.3), rtol=1e-12, atol=1e-15)


def test_permutation_invariant_and_detects_dependence():
    a, b = _pair(200, 2, 1, seed=1)
    perm = np.random.default_rng(0).permutation(200)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    np.testing.assert_allclose(hsic_gaussian(ta[perm], tb[perm]).item(), hsic_gaussian(ta, tb).item(), rtol=1e-10)
    independent = hsic_gaussian(ta, tb).item()
    da, db = _pair(200, 2, 1, seed=1, dependent=True)
    dependent = hsic_gaussian(torch.from_numpy(da), torch.from_numpy(db)).item()
    assert 0 <= independent < 0.01 < dependent
    assert dependent > 10 * independent


def test_gradcheck():
    a, b = _pair(9, 2, 2, seed=3)
    ta = torch.from_numpy(a).requires_grad_(True)
    tb = torch.from_numpy(b).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda x, y: hsic_gaussian(x, y, 1.1, 0.9), (ta, tb))
    # with the default (median) bandwidths the gradient treats the bandwidth as a constant (it is detached)
    auto = hsic_gaussian(ta, tb)
    auto.backward()
    fixed_a = ta.grad.clone()
    ta.grad = None
    hsic_gaussian(ta, tb, median_bandwidth(ta).item(), median_bandwidth(tb).item()).backward()
    torch.testing.assert_close(fixed_a, ta.grad, rtol=1e-12, atol=1e-15)


def test_bad_inputs():
    a = torch.zeros((4, 2), dtype=torch.float64)
    with pytest.raises(ValueError, match="same number of rows"):
        hsic_gaussian(a, torch.zeros((3, 1), dtype=torch.float64))
    with pytest.raises(TypeError, match="torch"):
        hsic_gaussian(np.zeros((4, 2)), np.zeros((4, 2)))
    assert median_bandwidth(a).item() == 1.0  # all distances zero
