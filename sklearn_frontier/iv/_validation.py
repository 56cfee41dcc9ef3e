"""Validation and linear-algebra helpers shared by the IV estimators (instruments, weights, bases)."""

import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.utils import check_array

from sklearn_frontier.utils._compat import (
    _check_sample_weight,
)

_EPS = np.finfo(np.float64).eps

# ----------------------------------------------------------------------------------------------------------
# validation helpers
# ----------------------------------------------------------------------------------------------------------
def _validate_instruments(Z, n_samples):
    """Validated float64 (n, k) instruments, or None. Every error names Z."""
    if Z is None:
        return None
    if sp.issparse(Z):
        raise TypeError("Sparse instruments Z are not supported; pass a dense array (Z.toarray()).")
    try:
        Z = check_array(Z, dtype=np.float64, ensure_2d=False, allow_nd=True, ensure_min_samples=1,
                        input_name="Z")
    except ValueError as exc:
        raise ValueError(f"Invalid instruments Z: {exc}") from exc
    if Z.ndim == 1:
        Z = Z.reshape(-1, 1)
    if Z.ndim != 2:
        raise ValueError(f"Z must be 1-D or 2-D (n_samples, n_instruments), got Z.ndim={Z.ndim}.")
    if Z.shape[0] != n_samples:
        raise ValueError(f"Z has {Z.shape[0]} samples but X has {n_samples}.")
    if Z.shape[1] == 0:
        raise ValueError("Z has 0 columns; pass at least one instrument or Z=None.")
    if n_samples < Z.shape[1] + 2:
        raise ValueError(f"n_samples={n_samples} is too small for Z with {Z.shape[1]} instruments: "
                         f"IV regression needs n_samples >= n_instruments + 2 = {Z.shape[1] + 2}.")
    return Z


def _weights(sample_weight, X):
    w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight must be finite.")
    if w.sum() <= 0:
        raise ValueError("sample_weight must have a positive sum.")
    return w


def _instrument_basis(Z, w, *, center=True, name="Z", warn_rank=True):
    """Orthonormal basis U_z of diag(√w)(Z − 1 z̄ᵀ), its singular values and z̄ (O(n k²))."""
    sw = np.sqrt(w)
    zbar = (w @ Z) / w.sum() if center else np.zeros(Z.shape[1])
    Zt = sw[:, None] * (Z - zbar)
    U, S, _ = scipy.linalg.svd(Zt, full_matrices=False, check_finite=False, lapack_driver="gesdd")
    if S.size == 0 or S[0] <= 0:
        raise ValueError(f"{name} has no variation (rank 0 after centring); IV regression needs "
                         "instruments that vary across samples.")
    k_z = int(np.sum(S > max(Zt.shape) * _EPS * S[0]))
    if warn_rank and k_z < Z.shape[1]:
        warnings.warn(f"{name} is rank deficient: rank {k_z} < {Z.shape[1]} columns after centring; "
                      f"continuing with {k_z} instrument directions.", UserWarning, stacklevel=3)
    return U[:, :k_z], S[:k_z], zbar


def _fix_signs(W):
    """Deterministic column signs: the largest-magnitude entry of each column is positive."""
    idx = np.argmax(np.abs(W), axis=0)
    signs = np.sign(W[idx, np.arange(W.shape[1])])
    signs[signs == 0] = 1.0
    return W * signs
