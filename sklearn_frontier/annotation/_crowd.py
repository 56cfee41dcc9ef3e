"""A simulated crowd of noisy workers with known answers (the oracle of the annotation loop)."""

import numbers

import numpy as np

from ._validation import encode_labels


class SimulatedCrowd:
    """Workers answering label requests for a pool with known true labels.

    Read more in the :ref:`User Guide <user_guide_annotation>`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    n_workers : int, default=20
        Number of workers (annotator columns).
    model : {"uniform", "heterogeneous", "difficulty", "spammer", "confusion"}, default="heterogeneous"
        "uniform": every worker is right with probability ``accuracy`` (a float). "heterogeneous":
        worker accuracies ``a_j ~ U(lo, hi)`` for ``accuracy=(lo, hi)``, or an explicit array.
        "difficulty": ``p_ij = 1/2 + (a_j - 1/2)(1 - diff_i)^gamma`` with ``diff_i`` from a
        cross-validated logistic regression on ``X``. "spammer": heterogeneous workers of which
        ``round(spammer_fraction * n_workers)`` answer uniformly at random (or always
        ``classes_[0]``). "confusion": per-worker K x K confusion matrices with diagonal
        ``~ U(confusion_diagonal)``, the rest split by Dirichlet(1) (or explicit, shape (m, K, K)).
    accuracy : float, tuple (lo, hi) or array of shape (n_workers,), default=(0.55, 0.85)
        Worker accuracy (see ``model``).
    X : array-like of shape (n_samples, n_features), default=None
        Features for the "difficulty" model.
    difficulty_exponent : float, default=1.0
        ``gamma``.
    spammer_fraction : float, default=0.2
        Fraction of spammers under "spammer".
    spammer_type : {"uniform", "constant"}, default="uniform"
        Spammers answer uniformly at random, or always ``classes_[0]``.
    confusion_diagonal : tuple or array, default=(0.55, 0.9)
        Interval of the confusion diagonals, or explicit matrices, under "confusion".
    classes : array-like, default=None
        Label set (default ``np.unique(y_true)``).
    missing_label : scalar, default=np.nan
        Used by :meth:`annotation_matrix`.
    random_state : int or None, default=None
        One ``default_rng`` draws the workers first, then serves every request.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The label set: ``classes`` if given, else the sorted true labels.
    codes_ : ndarray of shape (n_samples,)
        The true labels as integer codes into ``classes_``.
    accuracy_ : ndarray of shape (n_workers,)
        Probability of a correct answer (the diagonal mean under "confusion").
    confusion_ : ndarray of shape (n_workers, n_classes, n_classes) or None
        Each worker's confusion matrix (row: true class, column: answer) under "confusion", else None.
    is_spammer_ : ndarray of bool, shape (n_workers,)
        Which workers are spammers (all False except under "spammer").
    difficulty_ : ndarray of shape (n_samples,) or None
        Per-sample difficulty in [0, 1] under "difficulty", else None.
    used_ : ndarray of bool, shape (n_samples, n_workers)
        Which worker already labelled which sample (no worker labels one sample twice).

    See Also
    --------
    run_annotation_loop : Drive an annotator with this crowd as the oracle.

    Examples
    --------
    >>> from sklearn_frontier.annotation import SimulatedCrowd
    >>> crowd = SimulatedCrowd([0, 1, 1, 0], n_workers=3, model="uniform", accuracy=1.0, random_state=0)
    >>> crowd.label(2)[0]
    np.int64(1)
    """

    def __init__(self, y_true, n_workers=20, *, model="heterogeneous", accuracy=(0.55, 0.85), X=None,
                 difficulty_exponent=1.0, spammer_fraction=0.2, spammer_type="uniform",
                 confusion_diagonal=(0.55, 0.9), classes=None, missing_label=np.nan, random_state=None):
        y_true = np.asarray(y_true)
        if y_true.ndim != 1 or y_true.size == 0:
            raise ValueError("y_true must be a non-empty 1-D array.")
        if not isinstance(n_workers, numbers.Integral) or n_workers < 1:
            raise ValueError(f"n_workers must be a positive integer, got {n_workers!r}.")
        if model not in ("uniform", "heterogeneous", "difficulty", "spammer", "confusion"):
            raise ValueError(f"Unknown crowd model {model!r}.")
        if spammer_type not in ("uniform", "constant"):
            raise ValueError(f"spammer_type must be 'uniform' or 'constant', got {spammer_type!r}.")
        self.classes_ = np.unique(y_true) if classes is None else np.asarray(classes)
        self.y_true = y_true
        self.codes_ = encode_labels(y_true, self.classes_)
        self.n_workers = int(n_workers)
        self.model = model
        self.missing_label = missing_label
        self._rng = np.random.default_rng(random_state)
        rng, m, K = self._rng, self.n_workers, self.classes_.size
        self.confusion_ = None
        self.is_spammer_ = np.zeros(m, dtype=bool)
        self.difficulty_ = None
        self.spammer_type = spammer_type
        if model == "confusion":
            diag = np.asarray(confusion_diagonal, dtype=float)
            if diag.ndim == 3:
                if diag.shape != (m, K, K) or np.any(diag < 0) or not np.allclose(diag.sum(axis=2), 1):
                    raise ValueError(f"An explicit confusion must have shape {(m, K, K)} with rows summing to 1.")
                self.confusion_ = diag.copy()
            else:
                lo, hi = _interval(diag)
                conf = np.zeros((m, K, K))
                for j in range(m):
                    d = rng.uniform(lo, hi, K)
                    for k in range(K):
                        rest = rng.dirichlet(np.ones(K - 1)) * (1 - d[k]) if K > 1 else np.zeros(0)
                        conf[j, k] = np.insert(rest, k, d[k]) if K > 1 else [1.0]
                self.confusion_ = conf
            self.accuracy_ = np.array([np.mean(np.diag(c)) for c in self.confusion_])
        else:
            acc = np.asarray(accuracy, dtype=float)
            if model == "uniform":
                if acc.ndim != 0:
                    raise ValueError("model='uniform' needs a float accuracy.")
                self.accuracy_ = np.full(m, float(acc))
            elif acc.ndim == 1 and acc.size == m and m != 2:
                self.accuracy_ = acc.copy()
            else:
                lo, hi = _interval(acc)
                self.accuracy_ = rng.uniform(lo, hi, m)
            if np.any(self.accuracy_ < 0) or np.any(self.accuracy_ > 1):
                raise ValueError("accuracies must lie in [0, 1].")
            if model == "spammer":
                if not 0 <= spammer_fraction <= 1:
                    raise ValueError("spammer_fraction must lie in [0, 1].")
                n_spam = int(round(spammer_fraction * m))
                self.is_spammer_[rng.choice(m, size=n_spam, replace=False)] = True
            if model == "difficulty":
                if X is None:
                    raise ValueError("model='difficulty' needs X.")
                self.difficulty_ = _difficulty(np.asarray(X, dtype=float), self.codes_)
                self.difficulty_exponent = float(difficulty_exponent)
        self.used_ = np.zeros((y_true.size, m), dtype=bool)
        self._matrix = np.full((y_true.size, m), -1, dtype=np.int64)
        self._free = {}  # sample -> its free workers, ascending (a cache of ~used_, built on first request)

    def _p_correct(self, i, j):
        p = self.accuracy_[j]
        if self.difficulty_ is not None:
            p = 0.5 + (p - 0.5) * (1.0 - self.difficulty_[i]) ** self.difficulty_exponent
        return p

    def label(self, i, annotator=None):
        """One label of sample ``i`` by a free worker (random) or by ``annotator``.

        Parameters
        ----------
        i : int
            Sample index.
        annotator : int, default=None
            Worker to ask; None picks a free worker at random.

        Returns
        -------
        answer : tuple or None
            ``(label, annotator)``, or None when every worker has labelled ``i`` (or ``annotator`` has).
        """
        i = int(i)
        if not 0 <= i < self.y_true.size:
            raise ValueError(f"sample index {i} out of range.")
        rng = self._rng
        free = self._free.get(i)
        if free is None:
            free = self._free[i] = np.flatnonzero(~self.used_[i]).tolist()
        if annotator is None:
            if not free:
                return None
            j = free.pop(int(rng.integers(len(free))))
        else:
            j = int(annotator)
            if not 0 <= j < self.n_workers:
                raise ValueError(f"annotator {j} out of range.")
            if self.used_[i, j]:
                return None
            free.remove(j)
        K, y = self.classes_.size, int(self.codes_[i])
        if self.confusion_ is not None:
            code = int(np.searchsorted(np.cumsum(self.confusion_[j, y]), rng.random(), side="right"))
            code = min(code, K - 1)
        elif self.is_spammer_[j]:
            code = int(rng.integers(K)) if self.spammer_type == "uniform" else 0
        elif rng.random() < self._p_correct(i, j) or K == 1:
            code = y
        else:
            w = int(rng.integers(K - 1))
            code = w + (w >= y)
        self.used_[i, j] = True
        self._matrix[i, j] = code
        return self.classes_[code], j

    def label_many(self, indices, annotators=None):
        """Label several samples.

        Parameters
        ----------
        indices : array-like of int, shape (k,)
            Samples to label.
        annotators : array-like of int, shape (k,), default=None
            Worker of each request; None picks free workers at random.

        Returns
        -------
        labels : ndarray
            Labels of the answered requests.
        annotators : ndarray of int64
            Worker of each answered request.
        answered_mask : ndarray of bool, shape (k,)
            Which requests were answered.
        """
        indices = np.asarray(indices, dtype=np.int64)
        labels, workers, ok = [], [], np.zeros(indices.size, dtype=bool)
        for t, i in enumerate(indices):
            out = self.label(i, None if annotators is None else annotators[t])
            if out is not None:
                labels.append(out[0])
                workers.append(out[1])
                ok[t] = True
        return np.asarray(labels), np.asarray(workers, dtype=np.int64), ok

    def annotation_matrix(self):
        """Return every label given so far, ``missing_label`` elsewhere.

        Returns
        -------
        Y : ndarray of shape (n_samples, n_workers)
            The annotation matrix of the labels given so far.
        """
        numeric = self.classes_.dtype.kind in "iufb"
        Y = np.full(self._matrix.shape, self.missing_label, dtype=float if numeric else object)
        mask = self._matrix >= 0
        Y[mask] = self.classes_[self._matrix[mask]]
        return Y

    def get_state(self):
        """Return the mutable state as plain arrays (RNG state as JSON text), for checkpoints.

        Returns
        -------
        state : dict
            Arrays ``"used"``, ``"matrix"`` and ``"rng"``.
        """
        import json

        return {"used": self.used_.copy(), "matrix": self._matrix.copy(),
                "rng": np.array(json.dumps(self._rng.bit_generator.state))}

    def set_state(self, state):
        """Restore :meth:`get_state`'s output.

        Parameters
        ----------
        state : dict
            A dict returned by :meth:`get_state`.

        Returns
        -------
        self : SimulatedCrowd
            The restored crowd.
        """
        import json

        self.used_ = np.array(state["used"], dtype=bool)
        self._matrix = np.array(state["matrix"], dtype=np.int64)
        self._free = {}
        self._rng.bit_generator.state = json.loads(str(state["rng"]))
        return self


def _interval(values):
    values = np.asarray(values, dtype=float)
    if values.shape != (2,):
        raise ValueError(f"Expected an interval (lo, hi), got {values!r}.")
    lo, hi = values
    if lo > hi:
        raise ValueError(f"Interval lower bound {lo} exceeds upper bound {hi}.")
    if lo < 0 or hi > 1:
        raise ValueError("Interval bounds must lie in [0, 1].")
    return lo, hi


def _difficulty(X, codes):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    K = int(codes.max()) + 1
    if K < 2:
        return np.zeros(codes.size)
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=1000))
    n_splits = int(min(5, np.bincount(codes).min())) if np.bincount(codes).min() >= 2 else 2
    proba = cross_val_predict(model, X, codes, cv=StratifiedKFold(n_splits), method="predict_proba")
    top = np.sort(proba, axis=1)
    return 1.0 - (top[:, -1] - top[:, -2])
