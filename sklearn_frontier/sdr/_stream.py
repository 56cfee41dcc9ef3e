"""Streaming state of SMAVE's ``partial_fit``: running moments and a bounded uniform reservoir of rows."""

import numpy as np

from sklearn_frontier.utils._manifolds import qr_retraction


class RunningMoments:
    """Column means and (ddof 0) variances of everything seen so far, merged chunk by chunk (Chan et al.)."""

    def __init__(self, p):
        self.count = 0
        self.mean = np.zeros(p)
        self.m2 = np.zeros(p)

    def update(self, A):
        A = np.asarray(A, dtype=np.float64).reshape(A.shape[0], -1)
        nb = A.shape[0]
        if nb == 0:
            return self
        mb = A.mean(axis=0)
        m2b = ((A - mb) ** 2).sum(axis=0)
        n = self.count + nb
        delta = mb - self.mean
        self.mean = self.mean + delta * (nb / n)
        self.m2 = self.m2 + m2b + delta * delta * (self.count * nb / n)
        self.count = n
        return self

    @property
    def std(self):
        return np.sqrt(np.maximum(self.m2 / max(self.count, 1), 0.0))


class Reservoir:
    """A uniform sample of at most ``size`` rows of ``(X, y)`` from a stream (Vitter's algorithm R, vectorised).

    After ``count`` rows have been offered, every one of them is in the sample with probability
    ``min(1, size / count)``; memory is ``size (p + 1)`` floats whatever the stream's length.
    """

    def __init__(self, size, p):
        self.size = size
        self.X = np.empty((0, p))
        self.y = np.empty(0)
        self.count = 0

    def add(self, X, y, rng):
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        free = self.size - self.X.shape[0]
        if free > 0:
            take = min(free, X.shape[0])
            self.X = np.vstack([self.X, X[:take]])
            self.y = np.concatenate([self.y, y[:take]])
            self.count += take
            X, y = X[take:], y[take:]
        if X.shape[0] == 0:
            return self
        seen = self.count + np.arange(1, X.shape[0] + 1)  # stream position of each new row (1-based)
        slot = np.floor(rng.random_sample(X.shape[0]) * seen).astype(np.int64)
        keep = np.flatnonzero(slot < self.size)
        # later rows overwrite earlier ones in the same slot, as the sequential algorithm would: keep the last
        _, last = np.unique(slot[keep][::-1], return_index=True)
        keep = keep[::-1][last]
        self.X[slot[keep]] = X[keep]
        self.y[slot[keep]] = y[keep]
        self.count += X.shape[0]
        return self


def rescale_basis(B, old_scale, new_scale):
    """The Z-space basis for new column scales that spans the same original-unit directions as ``B``.

    ``Z B`` with ``Z = (X - mu) / s`` projects on ``diag(1 / s) B``; the same directions under ``s'`` are
    ``diag(s' / s) B``, re-orthonormalised.
    """
    return qr_retraction((new_scale / old_scale)[:, None] * B)
