"""Reference HSIC with Gaussian kernels: a differentiable torch version and a numpy oracle.

HSIC_b(a, b) = tr(K H L H) / (m - 1)², K_ij = exp(-‖a_i - a_j‖² / (2 σ_a²)), H = I - 11ᵀ/m (biased
estimator, Gretton et al. 2005). Bandwidths default to the median pairwise distance (detached).
Cost O(m² (d_a + d_b)) time and O(m²) memory. torch is imported inside the functions.
"""

import numpy as np


def _median_distance_numpy(a):
    m = a.shape[0]
    sq = np.sum(a**2, axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * a @ a.T, 0.0)
    iu = np.triu_indices(m, 1)
    if iu[0].size == 0:
        return 1.0
    med = float(np.median(np.sqrt(d2[iu])))
    return med if med > 0 else 1.0


def median_bandwidth_numpy(a):
    """Median pairwise Euclidean distance of the rows of ``a`` (1.0 when it is 0 or m < 2)."""
    return _median_distance_numpy(np.asarray(a, dtype=np.float64))


def _gram_numpy(a, bandwidth):
    sq = np.sum(a**2, axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * a @ a.T, 0.0)
    return np.exp(-d2 / (2 * bandwidth**2))


def hsic_gaussian_numpy(a, b, bandwidth_a=None, bandwidth_b=None):
    """numpy oracle of :func:`hsic_gaussian` (float64)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    m = a.shape[0]
    sa = median_bandwidth_numpy(a) if bandwidth_a is None else float(bandwidth_a)
    sb = median_bandwidth_numpy(b) if bandwidth_b is None else float(bandwidth_b)
    K, L = _gram_numpy(a, sa), _gram_numpy(b, sb)
    H = np.eye(m) - 1.0 / m
    return float(np.trace(K @ H @ L @ H) / (m - 1) ** 2)


def median_bandwidth(a):
    """Median pairwise Euclidean distance of the rows of a torch tensor (detached; 1.0 if 0)."""
    import torch

    with torch.no_grad():
        m = a.shape[0]
        if m < 2:
            return torch.ones((), dtype=a.dtype, device=a.device)
        d = torch.pdist(a)  # the m(m-1)/2 pairwise distances (upper triangle)
        c = d.numel()
        # numpy's median: the midpoint of the two middle values when the count is even
        lo = torch.kthvalue(d, (c + 1) // 2).values
        hi = torch.kthvalue(d, c // 2 + 1).values
        med = 0.5 * (lo + hi)
        return torch.where(med > 0, med, torch.ones_like(med))


def _gram(a, bandwidth):
    import torch

    sq = (a * a).sum(dim=1)
    d2 = (sq[:, None] + sq[None, :] - 2 * a @ a.T).clamp_min(0)
    return torch.exp(-d2 / (2 * bandwidth**2))


def hsic_gaussian(a, b, bandwidth_a=None, bandwidth_b=None):
    """Biased Gaussian-kernel HSIC of two torch tensors with m rows (differentiable in a and b)."""
    import torch

    m = a.shape[0]
    sa = median_bandwidth(a) if bandwidth_a is None else torch.as_tensor(bandwidth_a, dtype=a.dtype)
    sb = median_bandwidth(b) if bandwidth_b is None else torch.as_tensor(bandwidth_b, dtype=b.dtype)
    K, L = _gram(a, sa), _gram(b, sb)
    Kc = K - K.mean(dim=0, keepdim=True) - K.mean(dim=1, keepdim=True) + K.mean()
    return (Kc * L).sum() / (m - 1) ** 2


def demean(A, codes, w, tol, maxiter):
    """Weighted alternating projections: each column of A minus its projection on the fixed effects.

    ``codes`` (n, n_fe) holds the level 0..G_f-1 of every row in each fixed effect, ``w`` (n,) the weights. One
    sweep subtracts, fixed effect after fixed effect, the weighted mean of each level; sweeps repeat until the
    largest mean subtracted in a sweep is at most ``tol`` times the column's largest absolute value (one sweep is
    exact for a single fixed effect). Returns the demeaned copy, the largest number of sweeps any column took,
    and whether every column converged within ``maxiter`` sweeps. Cost O(n · n_fe) per sweep and column.
    """
    A = np.array(A, dtype=np.float64, order="F", copy=True)
    codes = np.asarray(codes)
    w = np.asarray(w, dtype=np.float64)
    n_fe = codes.shape[1]
    sizes = [int(codes[:, f].max()) + 1 if codes.shape[0] else 0 for f in range(n_fe)]
    inv = []
    for f in range(n_fe):
        wsum = np.bincount(codes[:, f], weights=w, minlength=sizes[f])
        inv.append(np.divide(1.0, wsum, out=np.zeros_like(wsum), where=wsum > 0))
    most, converged = 0, True
    for j in range(A.shape[1]):
        x = A[:, j]
        scale = float(np.max(np.abs(x))) if x.size else 0.0
        sweeps = 0
        done = n_fe == 0 or scale == 0.0
        while not done and sweeps < maxiter:
            delta = 0.0
            for f in range(n_fe):
                means = np.bincount(codes[:, f], weights=w * x, minlength=sizes[f]) * inv[f]
                delta = max(delta, float(np.max(np.abs(means))))
                x -= means[codes[:, f]]
            sweeps += 1
            done = n_fe == 1 or delta <= tol * scale
        converged = converged and done
        most = max(most, sweeps)
    return np.ascontiguousarray(A), most, converged
