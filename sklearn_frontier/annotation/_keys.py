"""The annotators' kernel family and their deterministic tie-break keys."""


import numpy as np

_KEY_SCALE = 1e9


def _kernels():
    from sklearn_frontier.kernels import annotation

    return annotation


def _tie_keys(seed, n):
    k = _kernels()
    base = k.splitmix64_keys(np.array([seed], dtype=np.uint64))[0]
    return k.splitmix64_keys(base ^ np.arange(n, dtype=np.uint64))
