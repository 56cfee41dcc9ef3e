"""The active-annotation loop: query, ask the crowd, record, evaluate; checkpoint or store, and resume."""

import io
import math
import os
import time

import numpy as np

from sklearn_frontier.exceptions import StateFileError
from sklearn_frontier.utils._atomic_files import atomic_savez, read_state_file
from sklearn_frontier.utils._progress import progress_bar
from sklearn_frontier.utils._warnings import warn_user

from ._aggregation import _dawid_skene_codes
from ._persistence import from_state_arrays, journal_append, state_arrays
from ._validation import count_votes, encode_labels

_HISTORY_KEYS = ("n_labels", "label_accuracy", "mean_uncertainty", "max_uncertainty", "expected_errors",
                 "propagation_strength", "wall_time")


def _evaluate(annotator, truth_codes, aggregator, keys):
    codes = annotator.annotations_
    K = annotator.classes_.size
    if truth_codes is None:
        return np.nan
    if callable(aggregator):
        labels = aggregator(annotator.get_annotation_matrix())
        pred = encode_labels(np.asarray(labels), annotator.classes_)
    elif aggregator == "majority":
        C = count_votes(codes, K)
        cand = C >= C.max(axis=1, keepdims=True)
        pred = np.argmax(np.where(cand, keys, -1.0), axis=1)
    else:
        T, _ = _dawid_skene_codes(codes, K, model="full" if aggregator == "dawid_skene" else "one_coin")
        pred = np.argmax(T, axis=1)
    return float(np.mean(pred == truth_codes))


def _aulc(n_labels, accuracy, budget):
    x = np.asarray(n_labels, dtype=float)
    y = np.asarray(accuracy, dtype=float)
    if x.size == 0 or not np.all(np.isfinite(y)):
        return np.nan
    if x[-1] < budget:
        x, y = np.r_[x, budget], np.r_[y, y[-1]]
    span = x[-1] - x[0]
    if span <= 0:
        return float(y[-1])
    return float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2) / span)


def _pack(arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _unpack(blob):
    with np.load(io.BytesIO(blob), allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def _open_store(store):
    from ._store import LabelStore, SQLiteLabelStore

    return (store, False) if isinstance(store, LabelStore) else (SQLiteLabelStore(store), True)


def run_annotation_loop(annotator, X, crowd, budget, *, batch_size=None, initial_pass=True, y_true=None,
                        aggregator="majority", eval_every=None, eval_random_state=0, callback=None,
                        checkpoint=None, checkpoint_every=1, resume=False, store=None, journal=None, verbose=0):
    """Spend a label budget: repeatedly query ``annotator``, ask ``crowd``, record the answers.

    Parameters
    ----------
    annotator : MA3SAnnotator, RoundRobinAnnotator or RandomAnnotator (unfitted or fitted)
        Refit here on an all-missing (n_samples, crowd.n_workers) matrix; if its ``classes`` is
        None it is set to ``crowd.classes_`` (``set_params``).
    X : array-like of shape (n_samples, n_features)
        The pool.
    crowd : object
        Oracle with ``label(i, annotator=None) -> (label, annotator) | None``, ``n_workers``
        and ``classes_`` (e.g. :class:`SimulatedCrowd`).
    budget : int
        Total labels, the initial pass included.
    batch_size : int, default=None
        Labels per query (default ``annotator.batch_size``).
    initial_pass : bool, default=True
        One label per sample before the first query (needs ``budget >= n_samples``).
    y_true : array-like of shape (n_samples,), default=None
        True labels, to record ``label_accuracy``.
    aggregator : {"majority", "one_coin", "dawid_skene"} or callable, default="majority"
        How the loop scores its own matrix (the same for every strategy; majority ties are random
        from ``eval_random_state``).
    eval_every : int, default=None
        Evaluate every this many labels (None: ``max(b, ceil(n/20))``) and at both ends.
    eval_random_state : int, default=0
        Seed of the evaluation's majority-vote ties.
    callback : callable, default=None
        ``callback(annotator, info) -> bool``; True stops the loop.
    checkpoint : path, default=None
        One atomic ``.npz`` (annotator, crowd state, history) every ``checkpoint_every`` batches and
        on KeyboardInterrupt (then re-raised). Labels received after the last checkpoint are asked
        again on resume; ``store`` keeps every one.
    checkpoint_every : int, default=1
        Batches between checkpoints.
    resume : bool, default=False
        Continue from ``checkpoint`` or ``store`` if it holds a run: the result equals the uninterrupted run.
    store : str, path-like or LabelStore, default=None
        A label store (see :class:`AnnotationSession`; a path is an SQLite file) that records every batch in
        one transaction: its labels with the crowd's state, the counters and the history. A run killed at any
        point resumes (``resume=True``) from its last committed batch without asking for any stored label
        again, the annotator refitted on the stored labels. An alternative to ``checkpoint``; the store must
        be new unless ``resume``.
    journal : path, default=None
        Deprecated: use ``store``. Appends every received label (TSV, fsynced) before it is recorded.
    verbose : int, default=0
        1: a progress bar.

    Returns
    -------
    history : dict
        Arrays ``n_labels``, ``label_accuracy``, ``mean_uncertainty``, ``max_uncertainty``,
        ``expected_errors``, ``propagation_strength``, ``wall_time`` (annotator and store calls only), plus
        ``stop_reason``, ``aulc``, ``labels`` and ``annotation_matrix``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.annotation import MA3SAnnotator, SimulatedCrowd, run_annotation_loop
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 1, (20, 2)), rng.normal(6, 1, (20, 2))]
    >>> y = np.r_[np.zeros(20, int), np.ones(20, int)]
    >>> crowd = SimulatedCrowd(y, n_workers=5, accuracy=(0.7, 0.9), random_state=0)
    >>> hist = run_annotation_loop(MA3SAnnotator(n_neighbors=5, random_state=0), X, crowd, 80,
    ...                            batch_size=5, y_true=y)
    >>> int(hist["n_labels"][-1]), hist["stop_reason"]
    (80, 'budget')
    """
    X = np.asarray(X)
    n, m = X.shape[0], int(crowd.n_workers)
    budget = int(budget)
    b = int(batch_size if batch_size is not None else annotator.batch_size)
    _check_loop_args(n, budget, b, initial_pass, y_true, aggregator, store, checkpoint, journal)
    if annotator.classes is None:
        annotator.set_params(classes=np.asarray(crowd.classes_))
    run = _LoopRun(annotator, crowd, budget, b, y_true, aggregator, eval_every, eval_random_state, checkpoint,
                   checkpoint_every, journal, n)
    owned_store = False
    if store is not None:
        store, owned_store = _open_store(store)
        run.resume_from_store(store, X, m, resume)
    if resume and checkpoint is not None and os.path.exists(checkpoint):
        run.resume_from_checkpoint(checkpoint)
    try:
        if run.loop is None:
            run.start(X, m, initial_pass, store)
        run.run(callback, verbose)
    finally:
        if owned_store:
            store.close()
    return run.result()


def _check_loop_args(n, budget, b, initial_pass, y_true, aggregator, store, checkpoint, journal):
    if b < 1:
        raise ValueError(f"batch_size must be >= 1, got {b}.")
    if initial_pass and budget < n:
        raise ValueError(f"budget={budget} is smaller than the initial pass of n_samples={n} labels.")
    if y_true is not None and len(y_true) != n:
        raise ValueError(f"y_true has {len(y_true)} entries but X has {n} rows.")
    if not (callable(aggregator) or aggregator in ("majority", "one_coin", "dawid_skene")):
        raise ValueError(f"Unknown aggregator {aggregator!r}.")
    if store is not None and checkpoint is not None:
        raise ValueError("Pass checkpoint= or store=, not both: the store already keeps the run's state with "
                         "every batch.")
    if journal is not None:
        warn_user("journal= is deprecated and will be removed; pass store= (a label store that keeps every "
                  "label and resumes without asking for it again).", FutureWarning)


def _loop_state(arrays):
    return {"spent": int(arrays["loop/spent"]), "next_eval": int(arrays["loop/next_eval"]),
            "batches": int(arrays["loop/batches"]),
            "history": {k: list(arrays["history/" + k]) for k in _HISTORY_KEYS}}


class _LoopRun:
    """One run of :func:`run_annotation_loop`: its counters, history and where it records them, step by step.

    The steps: resume (from a store or a checkpoint) or start (the initial pass), then :meth:`run` (evaluate,
    stop or checkpoint, query, ask the crowd, record), then :meth:`result`.
    """

    def __init__(self, annotator, crowd, budget, b, y_true, aggregator, eval_every, eval_random_state,
                 checkpoint, checkpoint_every, journal, n):
        self.annotator, self.crowd, self.budget, self.b = annotator, crowd, budget, b
        self.classes = np.asarray(annotator.classes)
        self.truth_codes = None if y_true is None else encode_labels(np.asarray(y_true), self.classes)
        self.aggregator = aggregator
        self.keys = np.random.default_rng(eval_random_state).random((n, self.classes.size))
        self.every = int(eval_every) if eval_every is not None else max(b, math.ceil(n / 20))
        self.checkpoint, self.checkpoint_every, self.journal = checkpoint, checkpoint_every, journal
        self.has_crowd_state = hasattr(crowd, "get_state") and hasattr(crowd, "set_state")
        self.session = None
        self.loop = None
        self.wall = 0.0
        self.stop_reason = None

    def _crowd_state(self):
        return self.crowd.get_state() if self.has_crowd_state else {}

    def _set_crowd_state(self, arrays):
        if self.has_crowd_state:
            self.crowd.set_state({k[len("crowd/"):]: v for k, v in arrays.items() if k.startswith("crowd/")})

    # -- resume or start ----------------------------------------------------------------------------------
    def resume_from_store(self, store, X, m, resume):
        with store.transaction(write=False):
            blob = store.get_blob("loop")
            has_labels = bool(store.read_meta())
        if blob is None and has_labels:
            raise ValueError(f"The label store {store.path} holds labels but no run of run_annotation_loop.")
        if blob is not None and not resume:
            raise ValueError(f"The label store {store.path} already holds a run: pass resume=True to continue it, "
                             "or a new store.")
        if blob is None:
            return
        from ._session import AnnotationSession

        arrays = _unpack(blob)
        self.session = AnnotationSession.__new__(AnnotationSession)
        start = time.perf_counter()
        self.session._open(self.annotator, X, store)
        self.annotator = self.session.annotator
        if self.session.workers != list(range(m)):
            raise ValueError(f"The label store {store.path} has workers {self.session.workers[:5]}..., not the "
                             f"crowd's 0..{m - 1}.")
        self._set_crowd_state(arrays)
        self.loop = _loop_state(arrays)
        self.wall += time.perf_counter() - start

    def resume_from_checkpoint(self, checkpoint):
        arrays = read_state_file(checkpoint)
        self.annotator = from_state_arrays(arrays, prefix="annotator/", source=os.fspath(checkpoint))
        missing = [k for k in ("loop/spent", "loop/next_eval", "loop/batches") if k not in arrays]
        if missing:
            raise StateFileError(os.fspath(checkpoint), "missing member", f"the member {missing[0]!r} is missing.")
        self._set_crowd_state(arrays)
        self.loop = _loop_state(arrays)

    def start(self, X, m, initial_pass, store):
        """The initial pass (one label per sample), then the first fit (in the new store's first transaction)."""
        n = X.shape[0]
        numeric = self.classes.dtype.kind in "iufb"
        Y = np.full((n, m), np.nan if numeric else None, dtype=float if numeric else object)
        spent = 0
        if initial_pass:
            for i in range(n):
                out = self.crowd.label(i)
                if out is not None:
                    Y[i, out[1]] = out[0]
                    spent += 1
            if self.journal is not None:
                r, c = np.nonzero(~_missing(Y))
                journal_append(self.journal, 0, r, c, Y[r, c])
        self.loop = {"spent": spent, "next_eval": spent, "batches": 0, "history": {k: [] for k in _HISTORY_KEYS}}
        start = time.perf_counter()
        if store is None:
            self.annotator.fit(X, Y)
        else:
            from ._session import AnnotationSession

            r, c = np.nonzero(~_missing(Y))
            self.session = AnnotationSession.__new__(AnnotationSession)
            self.session._open(self.annotator, X, store, workers=range(m), initial=zip(r, c, Y[r, c]),
                               blobs={"loop": _pack(_loop_arrays(self.loop, self._crowd_state()))})
        self.wall = time.perf_counter() - start

    # -- the loop ---------------------------------------------------------------------------------------------
    def evaluate(self):
        history, annotator = self.loop["history"], self.annotator
        history["n_labels"].append(self.loop["spent"])
        history["label_accuracy"].append(_evaluate(annotator, self.truth_codes, self.aggregator, self.keys))
        u = annotator.uncertainty_
        history["mean_uncertainty"].append(float(np.mean(u)))
        history["max_uncertainty"].append(float(np.max(u)))
        history["expected_errors"].append(float(np.sum(u)))
        lam = getattr(annotator, "propagation_strength_", 0.0) if hasattr(annotator, "propagated_evidence_") \
            else 0.0
        history["propagation_strength"].append(float(lam))
        history["wall_time"].append(self.wall)

    def save_checkpoint(self, commit):
        arrays = state_arrays(self.annotator, prefix="annotator/")
        arrays.update({"crowd/" + k: v for k, v in commit["crowd"].items()})
        arrays.update({"loop/spent": np.array(commit["spent"]), "loop/next_eval": np.array(commit["next_eval"]),
                       "loop/batches": np.array(commit["batches"])})
        arrays.update({"history/" + k: np.asarray(v, dtype=float) for k, v in commit["history"].items()})
        atomic_savez(self.checkpoint, arrays)

    def ask_crowd(self, picks):
        """The crowd's answers to the picked samples: rows, worker columns and labels (None: no answer)."""
        rows, cols, labels = [], [], []
        for i in picks:
            out = self.crowd.label(int(i))
            if out is not None:
                rows.append(int(i))
                labels.append(out[0])
                cols.append(int(out[1]))
        if not rows:
            return None
        return rows, cols, np.asarray(labels, dtype=object if isinstance(labels[0], str) else None)

    def record(self, rows, cols, labels):
        """Apply a batch: the journal first, then the annotator, or one store transaction with the loop state."""
        loop = self.loop
        if self.journal is not None:
            journal_append(self.journal, loop["spent"], rows, cols, labels)
        start = time.perf_counter()
        if self.session is None:
            self.annotator.update(np.asarray(rows), labels, annotators=np.asarray(cols))
        self.wall += time.perf_counter() - start
        loop["spent"] += len(rows)
        loop["batches"] += 1
        if self.session is not None:  # one transaction: the batch's labels with the state that follows them
            start = time.perf_counter()
            blob = _pack(_loop_arrays(loop, self._crowd_state()))
            self.session._record(rows, cols, labels, blobs={"loop": blob})
            self.wall += time.perf_counter() - start

    def _step(self, callback):
        """One turn of the loop; returns the stop reason, or None to go on."""
        loop, annotator = self.loop, self.annotator
        if loop["spent"] >= loop["next_eval"]:
            self.evaluate()
            loop["next_eval"] = loop["spent"] + self.every
        if callback is not None and callback(annotator, {"n_labels": loop["spent"], "history": loop["history"]}):
            return "callback"
        if loop["spent"] >= self.budget:
            return "budget"
        if self.checkpoint is not None:
            self.commit = {"crowd": self._crowd_state(), "spent": loop["spent"], "next_eval": loop["next_eval"],
                           "batches": loop["batches"], "seen": annotator.n_labels_seen_,
                           "history": {k: list(v) for k, v in loop["history"].items()}}
            if loop["batches"] % max(int(self.checkpoint_every), 1) == 0:
                self.save_checkpoint(self.commit)
        start = time.perf_counter()
        picks = annotator.query(min(self.b, self.budget - loop["spent"]))
        self.wall += time.perf_counter() - start
        if picks.size == 0:
            threshold = getattr(annotator, "stop_threshold", None)
            eligible, _ = annotator._eligible(None, None)
            return "threshold" if threshold is not None and eligible.any() else "exhausted"
        answers = self.ask_crowd(picks)
        if answers is None:
            return "crowd_exhausted"
        self.record(*answers)
        return None

    def run(self, callback, verbose):
        history = self.loop["history"]
        if history["wall_time"]:
            self.wall = history["wall_time"][-1]
        bar = progress_bar(total=self.budget, desc=type(self.annotator).__name__, verbose=verbose, unit="label")
        bar.update(self.loop["spent"])
        last_refresh = 0.0
        self.commit = None
        try:
            while self.stop_reason is None:
                before = self.loop["spent"]
                self.stop_reason = self._step(callback)
                bar.update(self.loop["spent"] - before)
                now = time.perf_counter()
                if verbose and now - last_refresh > 0.5:
                    last_refresh = now
                    acc = history["label_accuracy"][-1] if history["label_accuracy"] else float("nan")
                    bar.set_postfix(acc=f"{acc:.3f}", u=f"{np.mean(self.annotator.uncertainty_):.3f}",
                                    lam=f"{history['propagation_strength'][-1]:.2f}")
        except KeyboardInterrupt:
            self._save_on_interrupt()
            raise
        finally:
            bar.close()

    def _save_on_interrupt(self):
        """A checkpoint of the labels applied so far (the crowd rewound to match), then the interrupt goes on."""
        commit = self.commit
        if self.checkpoint is None or commit is None:
            return
        applied = self.annotator.n_labels_seen_ - commit["seen"]
        if applied == 0:
            if self.has_crowd_state:
                self.crowd.set_state(commit["crowd"])
        else:
            commit = {**commit, "crowd": self._crowd_state(), "spent": commit["spent"] + applied,
                      "batches": commit["batches"] + 1}
        self.save_checkpoint(commit)

    def result(self):
        history, spent = self.loop["history"], self.loop["spent"]
        if not history["n_labels"] or history["n_labels"][-1] != spent:
            self.evaluate()
        out = {k: np.asarray(v, dtype=float) for k, v in history.items()}
        out["n_labels"] = out["n_labels"].astype(np.int64)
        out["stop_reason"] = self.stop_reason
        out["aulc"] = _aulc(out["n_labels"], out["label_accuracy"], self.budget)
        out["labels"] = self.annotator.labels_
        out["annotation_matrix"] = self.annotator.get_annotation_matrix()
        out["annotator"] = self.annotator
        return out


def _loop_arrays(loop, crowd_state):
    """The loop's counters, history and crowd state as the arrays of one blob."""
    arrays = {"loop/spent": np.array(loop["spent"]), "loop/next_eval": np.array(loop["next_eval"]),
              "loop/batches": np.array(loop["batches"])}
    arrays.update({"history/" + k: np.asarray(v, dtype=float) for k, v in loop["history"].items()})
    arrays.update({"crowd/" + k: np.asarray(v) for k, v in crowd_state.items()})
    return arrays


def _missing(Y):
    from ._validation import missing_mask

    return missing_mask(Y)
