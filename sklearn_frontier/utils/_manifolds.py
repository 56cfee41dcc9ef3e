"""Stiefel-manifold geometry, written once and shared by SMAVE and TwinQuant.

Points are (n, r) matrices with orthonormal columns. Every function accepts numpy arrays or torch
tensors and returns the same kind (torch is only touched when given a tensor).
"""

import numpy as np


def _is_torch(a):
    return type(a).__module__.startswith("torch")


def _sym(a):
    return 0.5 * (a + a.T if not _is_torch(a) else a + a.transpose(-1, -2))


def stiefel_project(point, vector):
    """Project an ambient ``vector`` onto the tangent space at ``point``: ``Z - V sym(V^T Z)``."""
    return vector - point @ _sym(point.T @ vector)


def qr_retraction(point, tangent=None):
    """``qf(V + xi)``: the Q factor of a reduced QR with column signs making ``diag(R) >= 0``.

    sgn(0) is taken as +1 (pymanopt's convention). With ``tangent=None`` this orthonormalises ``point``.
    """
    a = point if tangent is None else point + tangent
    if _is_torch(a):
        import torch

        q, r = torch.linalg.qr(a, mode="reduced")
        signs = torch.where(torch.diagonal(r) < 0, -1.0, 1.0).to(q.dtype)
        return q * signs
    q, r = np.linalg.qr(a, mode="reduced")
    signs = np.where(np.diag(r) < 0, -1.0, 1.0)
    return q * signs


def polar_retraction(point, tangent=None):
    """``U V^T`` of the thin SVD of ``V + xi`` (the closest orthonormal matrix)."""
    a = point if tangent is None else point + tangent
    if _is_torch(a):
        import torch

        u, _, vh = torch.linalg.svd(a, full_matrices=False)
        return u @ vh
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    return u @ vh


def cayley_retraction(point, tangent):
    """Cayley retraction (Wen & Yin 2013) in its low-rank form, O(n r^2 + r^3).

    ``P = xi - V (V^T xi) / 2``, ``U = [P, V]``, ``Z = [V, -P]``,
    ``R_V(xi) = V + U (I_2r - Z^T U / 2)^{-1} Z^T V``.
    """
    r = point.shape[1]
    proj = tangent - 0.5 * point @ (point.T @ tangent)
    if _is_torch(point):
        import torch

        u = torch.cat([proj, point], dim=1)
        z = torch.cat([point, -proj], dim=1)
        eye = torch.eye(2 * r, dtype=point.dtype, device=point.device)
        return point + u @ torch.linalg.solve(eye - 0.5 * z.T @ u, z.T @ point)
    u = np.hstack([proj, point])
    z = np.hstack([point, -proj])
    return point + u @ np.linalg.solve(np.eye(2 * r) - 0.5 * z.T @ u, z.T @ point)


RETRACTIONS = {"qr": qr_retraction, "polar": polar_retraction, "cayley": cayley_retraction}


def retract(point, tangent, method="qr"):
    """Apply the retraction named ``method`` ("qr", "polar" or "cayley")."""
    try:
        return RETRACTIONS[method](point, tangent)
    except KeyError:
        raise ValueError(f"retraction must be one of {sorted(RETRACTIONS)}, got {method!r}.") from None


def canonical_signs(basis):
    """Flip columns of a numpy ``basis`` so that each column's largest-|value| entry is positive.

    Ties in |value| go to the lowest row index, so the result is deterministic.
    """
    basis = np.asarray(basis)
    rows = np.argmax(np.abs(basis), axis=0)  # argmax returns the first maximum: lowest index on ties
    signs = np.sign(basis[rows, np.arange(basis.shape[1])])
    signs[signs == 0] = 1.0
    return basis * signs


def projection_distance(a, b, metric="frobenius"):
    """Distance between the column spans of two (p, d) orthonormal numpy bases.

    ``"frobenius"``: ``||P_a - P_b||_F``; ``"spectral"``: ``||P_a - P_b||_2``; ``"trace"``: ``tr(P_a P_b) / d``
    (a similarity in [0, 1], 1 for equal spans).
    """
    a = qr_retraction(np.asarray(a, dtype=float))
    b = qr_retraction(np.asarray(b, dtype=float))
    if metric == "trace":
        return float(np.sum((a.T @ b) ** 2) / a.shape[1])
    diff = a @ a.T - b @ b.T
    if metric == "frobenius":
        return float(np.linalg.norm(diff, "fro"))
    if metric == "spectral":
        return float(np.linalg.norm(diff, 2))
    raise ValueError(f"metric must be 'frobenius', 'spectral' or 'trace', got {metric!r}.")
