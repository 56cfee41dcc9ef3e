"""Riemannian Adam on the Stiefel manifold (Becigneul & Ganea 2019), embedded metric, torch or numpy.

The geometry (tangent projection, QR / Cayley retractions) comes from :mod:`sklearn_frontier.utils._manifolds`.
"""

import math

from sklearn_frontier.utils._manifolds import qr_retraction, retract, stiefel_project

__all__ = ["RiemannianAdam"]


class RiemannianAdam:
    """Adam with a scalar second moment on St(n, r).

    ``g = P_V(egrad)``; ``m <- b1 m + (1 - b1) g``; ``v <- b2 v + (1 - b2) ||g||_F^2``;
    ``xi = -lr P_V(m_hat / (sqrt(v_hat) + eps))``; ``V <- R_V(xi)``; ``m <- P_{V_new}(m)`` (transport by projection).

    Parameters
    ----------
    lr : float
        Step length in the Frobenius norm (``||xi||_F ~ lr``).
    betas : tuple of float, default=(0.9, 0.999)
    eps : float, default=1e-8
    retraction : {"qr", "cayley", "polar"}, default="qr"
    reorthonormalize_every : int, default=50
        With the Cayley retraction, re-orthonormalise V by QR every so many steps (round-off drift).
    """

    def __init__(self, lr, betas=(0.9, 0.999), eps=1e-8, retraction="qr", reorthonormalize_every=50):
        self.lr = float(lr)
        self.betas = betas
        self.eps = float(eps)
        self.retraction = retraction
        self.reorthonormalize_every = int(reorthonormalize_every)
        self.t = 0
        self.m = None
        self.v = 0.0

    def riemannian_gradient(self, V, egrad):
        return stiefel_project(V, egrad)

    def step(self, V, egrad):
        """Return the next point given the Euclidean gradient ``egrad`` at ``V``."""
        b1, b2 = self.betas
        self.t += 1
        g = stiefel_project(V, egrad)
        self.m = (1 - b1) * g if self.m is None else b1 * self.m + (1 - b1) * g
        self.v = b2 * self.v + (1 - b2) * float((g * g).sum())
        m_hat = self.m / (1 - b1**self.t)
        v_hat = self.v / (1 - b2**self.t)
        xi = -self.lr * stiefel_project(V, m_hat / (math.sqrt(v_hat) + self.eps))
        V_new = retract(V, xi, self.retraction)
        if self.retraction == "cayley" and self.t % self.reorthonormalize_every == 0:
            V_new = qr_retraction(V_new)
        self.m = stiefel_project(V_new, self.m)
        return V_new
