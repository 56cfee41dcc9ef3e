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
    n = X.shape[0]
    m = int(crowd.n_workers)
    budget = int(budget)
    b = int(batch_size if batch_size is not None else annotator.batch_size)
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
    if annotator.classes is None:
        annotator.set_params(classes=np.asarray(crowd.classes_))
    classes = np.asarray(annotator.classes)
    truth_codes = None if y_true is None else encode_labels(np.asarray(y_true), classes)
    keys = np.random.default_rng(eval_random_state).random((n, classes.size))
    every = int(eval_every) if eval_every is not None else max(b, math.ceil(n / 20))
    has_crowd_state = hasattr(crowd, "get_state") and hasattr(crowd, "set_state")

    loop = None
    session = None
    owned_store = False
    if store is not None:
        store, owned_store = _open_store(store)
        with store.transaction(write=False):
            blob = store.get_blob("loop")
            has_labels = bool(store.read_meta())
        if blob is None and has_labels:
            raise ValueError(f"The label store {store.path} holds labels but no run of run_annotation_loop.")
        if blob is not None and not resume:
            raise ValueError(f"The label store {store.path} already holds a run: pass resume=True to continue it, "
                             "or a new store.")
        if blob is not None:
            from ._session import AnnotationSession

            arrays = _unpack(blob)
            session = AnnotationSession.__new__(AnnotationSession)
            start = time.perf_counter()
            session._open(annotator, X, store)
            annotator = session.annotator
            if session.workers != list(range(m)):
                raise ValueError(f"The label store {store.path} has workers {session.workers[:5]}..., not the "
                                 f"crowd's 0..{m - 1}.")
            if has_crowd_state:
                crowd.set_state({k[len("crowd/"):]: v for k, v in arrays.items() if k.startswith("crowd/")})
            loop = {"spent": int(arrays["loop/spent"]), "next_eval": int(arrays["loop/next_eval"]),
                    "batches": int(arrays["loop/batches"]),
                    "history": {k: list(arrays["history/" + k]) for k in _HISTORY_KEYS}}
    if resume and checkpoint is not None and os.path.exists(checkpoint):
        arrays = read_state_file(checkpoint)
        annotator = from_state_arrays(arrays, prefix="annotator/", source=os.fspath(checkpoint))
        missing = [k for k in ("loop/spent", "loop/next_eval", "loop/batches") if k not in arrays]
        if missing:
            raise StateFileError(os.fspath(checkpoint), "missing member", f"the member {missing[0]!r} is missing.")
        if has_crowd_state:
            crowd.set_state({k[len("crowd/"):]: v for k, v in arrays.items() if k.startswith("crowd/")})
        loop = {"spent": int(arrays["loop/spent"]), "next_eval": int(arrays["loop/next_eval"]),
                "batches": int(arrays["loop/batches"]),
                "history": {k: list(arrays["history/" + k]) for k in _HISTORY_KEYS}}
    wall = 0.0
    if loop is None:
        numeric = classes.dtype.kind in "iufb"
        Y = np.full((n, m), np.nan if numeric else None, dtype=float if numeric else object)
        spent = 0
        if initial_pass:
            for i in range(n):
                out = crowd.label(i)
                if out is not None:
                    Y[i, out[1]] = out[0]
                    spent += 1
            if journal is not None:
                r, c = np.nonzero(~_missing(Y))
                journal_append(journal, 0, r, c, Y[r, c])
        loop = {"spent": spent, "next_eval": spent, "batches": 0, "history": {k: [] for k in _HISTORY_KEYS}}
        start = time.perf_counter()
        if store is None:
            annotator.fit(X, Y)
        else:  # the initial pass is the new store's first transaction, so the first fit sees it
            from ._session import AnnotationSession

            r, c = np.nonzero(~_missing(Y))
            session = AnnotationSession.__new__(AnnotationSession)
            session._open(annotator, X, store, workers=range(m), initial=zip(r, c, Y[r, c]),
                          blobs={"loop": _pack(_loop_arrays(loop, crowd.get_state() if has_crowd_state else {}))})
        wall += time.perf_counter() - start
    history = loop["history"]
    if history["wall_time"]:
        wall = history["wall_time"][-1]
    spent, next_eval, batches = loop["spent"], loop["next_eval"], loop["batches"]

    def evaluate():
        history["n_labels"].append(spent)
        history["label_accuracy"].append(_evaluate(annotator, truth_codes, aggregator, keys))
        u = annotator.uncertainty_
        history["mean_uncertainty"].append(float(np.mean(u)))
        history["max_uncertainty"].append(float(np.max(u)))
        history["expected_errors"].append(float(np.sum(u)))
        lam = getattr(annotator, "propagation_strength_", 0.0) if hasattr(annotator, "propagated_evidence_") \
            else 0.0
        history["propagation_strength"].append(float(lam))
        history["wall_time"].append(wall)

    def save(commit):
        arrays = state_arrays(annotator, prefix="annotator/")
        if has_crowd_state:
            arrays.update({"crowd/" + k: v for k, v in commit["crowd"].items()})
        arrays.update({"loop/spent": np.array(commit["spent"]), "loop/next_eval": np.array(commit["next_eval"]),
                       "loop/batches": np.array(commit["batches"])})
        arrays.update({"history/" + k: np.asarray(v, dtype=float) for k, v in commit["history"].items()})
        atomic_savez(checkpoint, arrays)

    bar = progress_bar(total=budget, desc=type(annotator).__name__, verbose=verbose, unit="label")
    bar.update(spent)
    last_refresh = 0.0
    stop_reason = None
    commit = None
    try:
        while True:
            if spent >= next_eval:
                evaluate()
                next_eval = spent + every
            if callback is not None and callback(annotator, {"n_labels": spent, "history": history}):
                stop_reason = "callback"
                break
            if spent >= budget:
                stop_reason = "budget"
                break
            if checkpoint is not None:
                commit = {"crowd": crowd.get_state() if has_crowd_state else {}, "spent": spent,
                          "next_eval": next_eval, "batches": batches, "seen": annotator.n_labels_seen_,
                          "history": {k: list(v) for k, v in history.items()}}
                if batches % max(int(checkpoint_every), 1) == 0:
                    save(commit)
            start = time.perf_counter()
            picks = annotator.query(min(b, budget - spent))
            wall += time.perf_counter() - start
            if picks.size == 0:
                threshold = getattr(annotator, "stop_threshold", None)
                eligible, _ = annotator._eligible(None, None)
                stop_reason = "threshold" if threshold is not None and eligible.any() else "exhausted"
                break
            rows, cols, labels = [], [], []
            for i in picks:
                out = crowd.label(int(i))
                if out is not None:
                    rows.append(int(i))
                    labels.append(out[0])
                    cols.append(int(out[1]))
            if not rows:
                stop_reason = "crowd_exhausted"
                break
            labels = np.asarray(labels, dtype=object if isinstance(labels[0], str) else None)
            if journal is not None:
                journal_append(journal, spent, rows, cols, labels)
            start = time.perf_counter()
            if session is None:
                annotator.update(np.asarray(rows), labels, annotators=np.asarray(cols))
            wall += time.perf_counter() - start
            spent += len(rows)
            batches += 1
            if session is not None:  # one transaction: the batch's labels with the state that follows them
                start = time.perf_counter()
                state = {"spent": spent, "next_eval": next_eval, "batches": batches, "history": history}
                blob = _pack(_loop_arrays(state, crowd.get_state() if has_crowd_state else {}))
                session._record(rows, cols, labels, blobs={"loop": blob})
                wall += time.perf_counter() - start
            bar.update(len(rows))
            now = time.perf_counter()
            if verbose and now - last_refresh > 0.5:
                last_refresh = now
                acc = history["label_accuracy"][-1] if history["label_accuracy"] else float("nan")
                bar.set_postfix(acc=f"{acc:.3f}", u=f"{np.mean(annotator.uncertainty_):.3f}",
                                lam=f"{history['propagation_strength'][-1]:.2f}")
    except KeyboardInterrupt:
        if checkpoint is not None and commit is not None:
            applied = annotator.n_labels_seen_ - commit["seen"]
            if applied == 0:
                if has_crowd_state:
                    crowd.set_state(commit["crowd"])
            else:
                commit = {**commit, "crowd": crowd.get_state() if has_crowd_state else {},
                          "spent": commit["spent"] + applied, "batches": commit["batches"] + 1}
            save(commit)
        raise
    finally:
        bar.close()
        if owned_store:
            store.close()
    if not history["n_labels"] or history["n_labels"][-1] != spent:
        evaluate()
    out = {k: np.asarray(v, dtype=float) for k, v in history.items()}
    out["n_labels"] = out["n_labels"].astype(np.int64)
    out["stop_reason"] = stop_reason
    out["aulc"] = _aulc(out["n_labels"], out["label_accuracy"], budget)
    out["labels"] = annotator.labels_
    out["annotation_matrix"] = annotator.get_annotation_matrix()
    out["annotator"] = annotator
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
