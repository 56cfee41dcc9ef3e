"""Calibration statistics of a layer's input activations: Gram matrix, max |x| and a token reservoir."""

import numpy as np

__all__ = ["CalibrationStats", "check_calibration"]


class CalibrationStats:
    """Streaming second moment ``H = X^T X / N`` of activations (n_tokens, n_features), plus token samples.

    Parameters
    ----------
    n_features : int
        Width of the activations (the layer's in_features).
    max_samples : int, default=4096
        Size of the uniform token reservoir kept for W4A4 objectives (0 keeps only the Gram).
    random_state : int, RandomState instance or None, default=None
        Seeds the reservoir.

    Attributes
    ----------
    gram_ : ndarray of shape (n_features, n_features)
        ``X^T X / N`` in float64.
    n_samples_ : int
        Tokens seen.
    max_abs_ : ndarray of shape (n_features,)
        Largest |x| per feature.
    samples_ : ndarray of shape (<= max_samples, n_features)
        Reservoir sample of tokens (float64).

    See Also
    --------
    check_calibration : Validate activations or statistics passed as ``X_calib``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.quantization import CalibrationStats
    >>> stats = CalibrationStats.from_activations(np.eye(2))
    >>> stats.gram_
    array([[0.5, 0. ],
           [0. , 0.5]])
    """

    def __init__(self, n_features, max_samples=4096, random_state=None):
        self.n_features = int(n_features)
        self.max_samples = int(max_samples)
        self.random_state = random_state
        self._sum = np.zeros((self.n_features, self.n_features))
        self.n_samples_ = 0
        self.max_abs_ = np.zeros(self.n_features)
        self.samples_ = np.zeros((0, self.n_features))
        self._rng = np.random.default_rng(random_state if isinstance(random_state, (int, np.integer)) else None)

    @property
    def gram_(self):
        return self._sum / max(self.n_samples_, 1)

    def update(self, X, validate=True):
        """Add a batch of tokens (n_tokens, n_features).

        Parameters
        ----------
        X : array-like of shape (n_tokens, n_features)
            A batch of activations.
        validate : bool, default=True
            Check shape and finiteness (callers passing a model's own float64 activations skip it).

        Returns
        -------
        self : CalibrationStats
            The updated statistics.
        """
        if validate:
            X = check_calibration(X, self.n_features)
        self._sum += X.T @ X  # BLAS-bound: the reference body of the accumulate_gram kernel
        self.max_abs_ = np.maximum(self.max_abs_, np.abs(X).max(axis=0))
        if self.max_samples > 0:
            kept = self.samples_.shape[0]
            room = self.max_samples - kept
            take = X[:room]
            rest = X[room:]
            samples = np.vstack([self.samples_, take]) if take.size else self.samples_
            if rest.shape[0]:
                # reservoir sampling (Algorithm R), vectorised: token number s (1-based) draws j in [0, s) and
                # replaces slot j when j < max_samples; later tokens overwrite earlier ones, as in the loop
                seen = self.n_samples_ + take.shape[0] + np.arange(1, rest.shape[0] + 1)
                j = (self._rng.random(rest.shape[0]) * seen).astype(np.int64)
                hit = np.flatnonzero(j < self.max_samples)
                samples[j[hit]] = rest[hit]  # numpy assigns repeated indices in order: the last one stays
            self.samples_ = samples
        self.n_samples_ += X.shape[0]
        return self

    @classmethod
    def from_activations(cls, X, max_samples=4096, random_state=None):
        """Statistics of one activation matrix.

        Parameters
        ----------
        X : array-like of shape (n_tokens, n_features)
            The activations.
        max_samples : int, default=4096
            Size of the token reservoir.
        random_state : int, RandomState instance or None, default=None
            Seeds the reservoir.

        Returns
        -------
        stats : CalibrationStats
            The statistics of ``X``.
        """
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X_calib must be 2-D (n_tokens, n_features), got shape {X.shape}.")
        return cls(X.shape[1], max_samples=max_samples, random_state=random_state).update(X)

    def __repr__(self):
        return f"CalibrationStats(n_features={self.n_features}, n_samples_={self.n_samples_})"


def _to_numpy(X):
    if hasattr(X, "detach"):
        X = X.detach().cpu()
        if str(X.dtype) in ("torch.bfloat16", "torch.float16"):
            X = X.float()
        X = X.numpy()
    return X


def check_calibration(X_calib, n_features):
    """Validate activations or stats: float64 activations or the CalibrationStats (a ValueError names X_calib)."""
    if isinstance(X_calib, CalibrationStats):
        if X_calib.n_features != n_features:
            raise ValueError(f"X_calib has {X_calib.n_features} features, but the weight has {n_features} "
                             "in_features.")
        if X_calib.n_samples_ == 0:
            raise ValueError("X_calib (CalibrationStats) holds no tokens.")
        return X_calib
    X = np.asarray(_to_numpy(X_calib))
    if X.dtype == object or np.iscomplexobj(X):
        raise ValueError("X_calib must be a real numeric array.")
    X = X.astype(np.float64)
    if X.ndim != 2:
        raise ValueError(f"X_calib must be 2-D (n_tokens, n_features), got shape {X.shape}.")
    if X.shape[0] == 0:
        raise ValueError("X_calib is empty (0 tokens).")
    if X.shape[1] != n_features:
        raise ValueError(f"X_calib has {X.shape[1]} features, but the weight has {n_features} in_features.")
    if not np.all(np.isfinite(X)):
        raise ValueError("X_calib contains NaN or infinity.")
    return X
