"""The chain fast path without a dense inverse: S_ε = f_ε(L_0) matrix-free with its exact diagonal.

diag(S_ε) = β_1 deg − (γ_0²/β_1)(1 − ε diag F), F = (β_1 L_0 + εI)⁻¹, is all the "diag" normalisation needs; diag F
comes from a sparse Cholesky and the Takahashi recurrence (kernel ``selinv_diag``) in a minimum-degree order, and
products F V from one sparse LU of the same matrix. Cost: the factor's fill instead of n³.
"""

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, splu


class ChainFactor:
    """One factorisation of G = β_1 L_0 + εI: ``solve`` (F V) and the exact ``diag_inverse`` (diag F)."""

    def __init__(self, L0, beta1, eps):
        from sklearn_frontier.kernels import selinv_diag

        L0 = sp.csc_matrix(L0, dtype=np.float64)
        n = L0.shape[0]
        G = (beta1 * L0 + eps * sp.eye(n, format="csc")).tocsc()
        self.lu = splu(G, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
        order = np.argsort(self.lu.perm_c)  # the minimum-degree elimination order
        self.diag_inverse = np.empty(n)
        self.diag_inverse[order] = selinv_diag(G[order][:, order])

    def solve(self, V):
        return self.lu.solve(np.asarray(V, dtype=np.float64))


class ChainSelinvOperator(LinearOperator):
    """S_ε = β_1 L_0 − (γ_0²/β_1)(I − εF) of a chain complex, matrix-free, with ``diagonal_`` exact.

    Parameters
    ----------
    L0 : sparse matrix of shape (n, n)
        Graph Laplacian B_1B_1ᵀ.
    beta1, gamma0, eps : float
        Weights and regularisation of S_ε.
    factor : ChainFactor
        The factorisation of β_1 L_0 + εI.
    """

    def __init__(self, L0, beta1, gamma0, eps, factor):
        self.L0 = sp.csr_matrix(L0, dtype=np.float64)
        self.beta1, self.gamma0, self.eps = float(beta1), float(gamma0), float(eps)
        self.factor = factor
        self.c = self.gamma0 ** 2 / self.beta1
        self.diagonal_ = self.beta1 * self.L0.diagonal() - self.c * (1.0 - self.eps * factor.diag_inverse)
        super().__init__(dtype=np.dtype(np.float64), shape=self.L0.shape)

    def _matmat(self, V):
        V = np.asarray(V, dtype=np.float64)
        if V.ndim == 1:
            V = V[:, None]
        out = self.beta1 * (self.L0 @ V)
        if self.c:
            out -= self.c * (V - self.eps * self.factor.solve(V))
        return out

    def _matvec(self, v):
        return self._matmat(np.asarray(v).reshape(-1, 1)).ravel()

    def _rmatvec(self, v):
        return self._matvec(v)

    def _adjoint(self):
        return self

    def to_dense(self):
        """Form the dense S_ε (n × n).

        Returns
        -------
        S : ndarray of shape (n, n)
            The symmetrised dense operator.
        """
        S = self._matmat(np.eye(self.shape[0]))
        return (S + S.T) / 2
