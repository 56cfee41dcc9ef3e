"""AnnotationSession: the service-side object a labelling tool calls, backed by a durable label store."""

import hashlib
import json
import numbers
import threading
import time
import warnings

import numpy as np
from sklearn.exceptions import DataConversionWarning
from sklearn.utils import check_array, check_random_state

from ._persistence import _label_json
from ._quality import OnlineDawidSkene
from ._session_quality import _QualityMixin, check_quality_params
from ._store import LabelStore, StoredLabel
from ._store_postgres import _open_store
from ._validation import check_classes, encode_labels, missing_mask


def _worker_key(worker):
    """A worker id as the text the store keeps; str, int and tuples of them keep their type."""
    if isinstance(worker, str):
        return "s:" + worker
    if isinstance(worker, (numbers.Integral, np.integer)) and not isinstance(worker, (bool, np.bool_)):
        return "i:" + str(int(worker))
    if isinstance(worker, tuple):
        return "t:" + json.dumps([_worker_key(w) for w in worker])
    raise TypeError(f"worker must be a str, an int or a tuple of them, got {worker!r} of type "
                    f"{type(worker).__name__}.")


def _worker_id(key):
    kind, _, rest = key.partition(":")
    if kind == "s":
        return rest
    if kind == "i":
        return int(rest)
    return tuple(_worker_id(k) for k in json.loads(rest))


def _pool_digest(X):
    return hashlib.sha256(np.ascontiguousarray(X, dtype=np.float64).tobytes()).hexdigest()


class AnnotationSession(_QualityMixin):
    """Hand out items to a live crowd, record their labels durably, and keep the annotator up to date.

    The service-side object that a labelling tool calls: a worker asks :meth:`next_item`, labels the item, and
    the tool calls :meth:`submit`. Items are leased: an item out on lease is not handed to another worker while
    unleased useful items remain, and never to a worker who already labelled it. Every accepted label is on disk
    when :meth:`submit` returns; a new session on the same store, in any process, rebuilds the annotator from
    the stored labels and carries on: no label is lost and none is asked again.

    Read more in the :ref:`User Guide <user_guide_annotation>`.

    Parameters
    ----------
    annotator : MA3SAnnotator, RoundRobinAnnotator or RandomAnnotator
        The selection strategy, fitted here on ``X`` and the stored labels (refitted if it was fitted). Its
        ``classes`` must be set: a live crowd's label set is declared up front.
    X : array-like of shape (n_items, n_features)
        The pool. A store remembers its pool: reopening it with other items raises ValueError.
    store : str, path-like or LabelStore, default="labels.sqlite"
        A path opens (or creates) a :class:`SQLiteLabelStore`; a ``"postgresql://user:password@host/dbname"``
        URI a :class:`PostgreSQLLabelStore` (a team on several machines); any :class:`LabelStore` is used as
        given.
    gold : dict {item: label} or list of (item, label) pairs, default=None
        Items whose answer is known. Each worker is given up to ``gold_per_worker`` of them first, and their
        answers calibrate the worker's estimated quality directly; the crowd is not otherwise asked about them,
        and ``labels("dawid_skene")`` returns their known label. The first session given gold records it in the
        store; later sessions may pass ``gold=None`` (the stored ones) or the same gold (other gold raises
        ValueError). Labels outside the classes raise ValueError.
    min_worker_accuracy : float in (0, 1), default=None
        Decline a worker whose estimated accuracy (:meth:`worker_quality`) is below this, once they gave
        ``min_worker_labels`` labels: :meth:`next_item` returns None (and :meth:`next_items` an empty list), so
        the worker costs nothing more. A later estimate above the bar lets them back in. None never declines.
    min_worker_labels : int, default=20
        Labels a worker gives before ``min_worker_accuracy`` can decline them.
    gold_per_worker : int, default=3
        Gold items each worker answers before ordinary items (fewer if fewer gold items exist).
    weigh_by_quality : bool, default=True
        Let the selection weigh each label by its worker's estimated reliability: a label counts as the
        log-odds of the worker being right, relative to a worker at the prior's mean accuracy (3/4), so that a
        random clicker's label counts for nothing and the item stays open. The plain vote
        (``labels("majority")``) counts every label once either way.

    Attributes
    ----------
    annotator : estimator
        The annotator, fitted on the pool and kept in step with the store.
    store : LabelStore
        The label store.
    workers : list
        The worker ids the store knows, in the order they joined (the annotator's annotation-matrix columns).
    classes_ : ndarray of shape (n_classes,)
        The label set (the annotator's ``classes``), which the store records.
    gold : dict or None
        The ``gold`` given.
    min_worker_accuracy : float or None
        The ``min_worker_accuracy`` given.
    min_worker_labels : int
        The ``min_worker_labels`` given.
    gold_per_worker : int
        The ``gold_per_worker`` given.
    weigh_by_quality : bool
        The ``weigh_by_quality`` given.

    See Also
    --------
    run_annotation_loop : The same store driven by a simulated (or scripted) crowd.
    SQLiteLabelStore : The default store.

    Notes
    -----
    **Leases.** :meth:`next_item` keeps one lease per worker: asking again before :meth:`submit` or
    :meth:`release` returns the same item, with its lease renewed. :meth:`next_items` leases several distinct
    items to one worker at once (held ones first). Leases end at submit or release, or expire after
    ``lease_seconds``. An item already leased is handed to a second worker only when no unleased item is
    eligible for that worker (then the one with the fewest leases; with ``max_labels_per_sample`` leases count
    as labels to come). A label is accepted with or without a live lease: a late answer still counts.

    **Worker quality.** The session keeps a Dawid–Skene model of the crowd: a confusion matrix per worker with
    a Dirichlet prior (a worker is believed right 3/4 of the time, worth four labels, until shown otherwise),
    and the posterior class of every labelled item. It is updated after every label by an incremental EM step
    (the item's posterior, then four other items', swapped into the sufficient statistics), plus ten EM
    iterations over all labels each time their number has grown by a quarter, so a submit costs O(labels of
    the item) plus an amortized O(1). It is a fold over the store's labels in ``seq`` order: replayed when a session
    opens a store and caught up on every call, so every session on one store holds the same model, and it
    survives a reopen as the labels do (a correction is folded where it was made; a session opened later
    sees only the corrected label). :meth:`worker_quality` and :meth:`worker_confusion` read it.

    **Consistency.** Every call is one store transaction that first applies the labels other sessions
    committed since this one last looked, so several sessions (threads with their own session, processes,
    machines on a server database) see one history. One session may also be shared by threads; its calls are
    serialized. Open a session per process (a session does not survive ``fork``).

    **Exact resume.** Labels are the state: reopening fits the annotator on the stored labels, with the tie
    seed drawn when the store was created, so every process ranks alike. Scores equal those of the
    uninterrupted run up to floating-point rounding, except that ``propagation_strength="auto"`` re-estimates
    its strength from all labels at once.

    Examples
    --------
    A labelling service with threads standing in for people:

    >>> import os, tempfile, threading
    >>> import numpy as np
    >>> from sklearn_frontier.annotation import AnnotationSession, MA3SAnnotator
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 1, (30, 2)), rng.normal(5, 1, (30, 2))]
    >>> truth = np.r_[np.zeros(30, int), np.ones(30, int)]
    >>> path = os.path.join(tempfile.mkdtemp(), "labels.sqlite")
    >>> session = AnnotationSession(MA3SAnnotator(n_neighbors=5, classes=[0, 1], random_state=0), X, store=path)
    >>> def person(name, n_labels):
    ...     for _ in range(n_labels):
    ...         item = session.next_item(name, lease_seconds=60)
    ...         if item is None:
    ...             break
    ...         session.submit(item, name, int(truth[item]))  # the person's answer
    >>> people = [threading.Thread(target=person, args=(f"worker-{k}", 20)) for k in range(4)]
    >>> for p in people:
    ...     p.start()
    >>> for p in people:
    ...     p.join()
    >>> labels = session.labels()
    >>> int(np.sum(~np.isnan(labels))), bool(np.all(labels[~np.isnan(labels)] == truth[~np.isnan(labels)]))
    (60, True)
    >>> session.close()
    >>> again = AnnotationSession(MA3SAnnotator(n_neighbors=5, classes=[0, 1]), X, store=path)  # reopen
    >>> len(again.workers), int(again.annotator.n_labels_.sum())
    (4, 80)
    >>> again.close()
    """

    def __init__(self, annotator, X, store="labels.sqlite", *, gold=None, min_worker_accuracy=None,
                 min_worker_labels=20, gold_per_worker=3, weigh_by_quality=True):
        self._open(annotator, X, store, quality=dict(
            gold=gold, min_worker_accuracy=min_worker_accuracy, min_worker_labels=min_worker_labels,
            gold_per_worker=gold_per_worker, weigh_by_quality=weigh_by_quality))

    # -- opening -----------------------------------------------------------------------------------
    def _open(self, annotator, X, store, *, workers=(), initial=None, blobs=None, quality=None):
        """Open or create the store, then fit ``annotator`` on its labels.

        ``workers``, ``initial`` (a list of ``(item, worker, label)``) and ``blobs`` go into a new store in the
        transaction that creates it (the loop's initial pass), so the first fit already sees them. ``quality``
        holds the worker-quality parameters (defaults when None: the loop's sessions).
        """
        for key, value in check_quality_params(**(quality or {})).items():
            setattr(self, key, value)
        self._lock = threading.RLock()
        self.annotator = annotator
        self.store = store if isinstance(store, LabelStore) else _open_store(store)
        try:
            self._setup(X, workers, initial, blobs)
        except BaseException:
            if not isinstance(store, LabelStore):
                self.store.close()
            raise

    def _setup(self, X, workers, initial, blobs):
        annotator = self.annotator
        if getattr(annotator, "classes", None) is None:
            raise ValueError("AnnotationSession needs the label set up front: set classes=[...] on the annotator "
                             f"(got {type(annotator).__name__}(classes=None)).")
        X = check_array(X, dtype=np.float64, input_name="X")
        if X.shape[0] < 2:
            raise ValueError(f"AnnotationSession needs at least 2 items, got X of shape {X.shape}.")
        self._X = X
        self.classes_ = check_classes(annotator.classes, annotator.missing_label)
        self._label_codes = {_label_json(c): k for k, c in enumerate(self.classes_)}
        meta = {"n_items": str(X.shape[0]), "n_features": str(X.shape[1]), "pool_sha256": _pool_digest(X),
                "classes": json.dumps([json.loads(_label_json(c)) for c in self.classes_])}
        where = self.store.path or repr(self.store)
        with self.store.transaction():
            stored = self.store.read_meta()
            if not stored:
                # the seed the annotator's own fit would draw, so a session ranks like a plain annotator
                state = annotator.random_state if isinstance(annotator.random_state, numbers.Integral) else None
                seed = int(check_random_state(state).randint(0, np.iinfo(np.int32).max))
                self.store.write_meta({**meta, "random_seed": str(seed), "created": repr(time.time()),
                                       "annotator": type(annotator).__name__})
                columns = {}
                for worker in workers:
                    key = _worker_key(worker)
                    columns[key] = self.store.add_worker(key)
                now = time.time()
                for item, worker, label in initial or ():
                    self.store.add_label(int(item), columns[_worker_key(worker)], self._encode(label), now)
                for key, value in (blobs or {}).items():
                    self.store.put_blob(key, value)
                stored = self.store.read_meta()
            for key in ("n_items", "n_features", "pool_sha256", "classes"):
                if stored.get(key) != meta[key]:
                    what = "label set" if key == "classes" else "pool X"
                    raise ValueError(f"The label store {where} was created for another {what} ({key}: stored "
                                     f"{stored.get(key)!r}, given {meta[key]!r}).")
            keys = self.store.workers()
            records = self.store.labels_since(0)
            self._gold_codes = self._settle_gold()
        self._seed = int(stored["random_seed"])
        self._keys = keys
        self._columns = {key: col for col, key in enumerate(keys)}
        self._fit(records)

    def _fit(self, records):
        n, m = self._X.shape[0], len(self._keys)
        numeric = self.classes_.dtype.kind in "iufb"
        Y = np.full((n, m), np.nan if numeric else None, dtype=float if numeric else object)
        for r in records:
            Y[r.item, r.column] = self.classes_[self._label_codes[r.label]]
        with warnings.catch_warnings():  # one worker is one column of a matrix, not a column-vector y
            warnings.simplefilter("ignore", DataConversionWarning)
            self.annotator.fit(self._X, Y)
        if self.annotator.random_seed_ != self._seed:
            self.annotator._reseed(self._seed)
        self._seq = max((r.seq for r in records), default=0)
        self._quality = OnlineDawidSkene(n, self.classes_.size, gold=self._gold_codes, graph=self.annotator.graph_)
        self._fold(records)

    # -- keeping in step with the store ------------------------------------------------------------------
    def _sync(self, records=None):
        """Apply the workers and labels committed since the last look (``records``, or read them now)."""
        keys = self.store.workers()
        if len(keys) > len(self._keys):
            for key in keys[len(self._keys):]:
                self._columns[key] = len(self._keys)
                self._keys.append(key)
        if len(self._keys) > self.annotator.n_annotators_:
            self.annotator._add_annotators(len(self._keys) - self.annotator.n_annotators_)
        if records is None:
            records = self.store.labels_since(self._seq)
        if not records:
            return
        self._fold(records)
        codes = self.annotator.annotations_
        new, fixes = {}, {}
        for r in records:
            code = self._label_codes[r.label]
            if codes[r.item, r.column] < 0:
                new[r.item, r.column] = code
            elif codes[r.item, r.column] != code:
                fixes[r.item, r.column] = code
        if new:
            cells = np.array(list(new), dtype=np.int64)
            new_codes = np.fromiter(new.values(), np.int64)
            self.annotator.update(cells[:, 0], self.classes_[new_codes], annotators=cells[:, 1])
            self.annotator._weigh_new_votes(cells[:, 0], cells[:, 1], new_codes)
        if fixes:
            cells = np.array(list(fixes), dtype=np.int64)
            self.annotator._replace_labels(cells[:, 0], cells[:, 1], np.fromiter(fixes.values(), np.int64))
        self._seq = max(self._seq, records[-1].seq)

    def _column(self, worker, create):
        key = _worker_key(worker)
        col = self._columns.get(key)
        if col is None:
            self._sync()  # another session may have added it
            col = self._columns.get(key)
        if col is None and create:
            self.store.add_worker(key)
            self._sync([])
        return self._columns.get(key)

    def _check_item(self, item):
        if not isinstance(item, (numbers.Integral, np.integer)) or isinstance(item, (bool, np.bool_)):
            raise TypeError(f"item must be an integer index, got {item!r}.")
        if not 0 <= int(item) < self._X.shape[0]:
            raise ValueError(f"item={int(item)} is out of range [0, {self._X.shape[0]}).")
        return int(item)

    def _encode(self, label):
        if np.ndim(label) != 0 or missing_mask(np.array([label], dtype=object), self.annotator.missing_label)[0]:
            raise ValueError(f"label must be one of the classes {self.classes_.tolist()}, got {label!r}.")
        value = self.classes_[encode_labels(np.array([label], dtype=object), self.classes_)[0]]
        return _label_json(value)

    # -- the service calls --------------------------------------------------------------------------------
    def next_item(self, worker, lease_seconds=600):
        """The item ``worker`` should label now, leased to them; None when nothing is left for them.

        A worker who asks again before :meth:`submit` (or :meth:`release`) gets the item they hold, with its
        lease renewed: one call, one lease. Use :meth:`next_items` to hand out several at once.

        Parameters
        ----------
        worker : str, int or tuple
            The worker's id; a new id joins the crowd.
        lease_seconds : float, default=600
            How long the item stays reserved for this worker.

        Returns
        -------
        item : int or None
            Index of the item in ``X``; None also when the worker is declined (``min_worker_accuracy``).
        """
        items = self._lease(worker, 1, lease_seconds)
        return items[0] if items else None

    def next_items(self, worker, n, lease_seconds=600):
        """Lease up to ``n`` distinct items to ``worker`` at once (a labelling interface that preloads).

        The items the worker already holds come first (their leases renewed), then new ones in the order
        :meth:`next_item` would hand them out; none of them is out to another worker while unleased useful items
        remain.

        Parameters
        ----------
        worker : str, int or tuple
            The worker's id; a new id joins the crowd.
        n : int
            How many items at most (at least 1).
        lease_seconds : float, default=600
            How long the items stay reserved for this worker.

        Returns
        -------
        items : list of int
            Distinct item indices, at most ``n``; fewer when fewer are left for this worker, empty when the
            worker is declined.
        """
        if not isinstance(n, (numbers.Integral, np.integer)) or isinstance(n, (bool, np.bool_)) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}.")
        return self._lease(worker, int(n), lease_seconds)

    def _lease(self, worker, n, lease_seconds):
        if not isinstance(lease_seconds, numbers.Real) or isinstance(lease_seconds, bool) or not lease_seconds > 0:
            raise ValueError(f"lease_seconds must be a positive number, got {lease_seconds!r}.")
        with self._lock, self.store.transaction():
            now = time.time()
            col = self._column(worker, create=True)
            self._sync()
            if self._declined(col):
                self.store.drop_lease(col)
                return []
            self.store.drop_expired_leases(now)
            leases = self.store.leases(now)
            mine = sorted((lease.expires, lease.item) for lease in leases if lease.column == col)
            items = [item for _, item in mine][:n]
            if len(items) < n:
                self._reweigh()
                held = {}
                for lease in leases:
                    held[lease.item] = held.get(lease.item, 0) + 1
                own = set(items)
                for _ in range(n - len(items)):
                    item = self._choose(col, held, own)
                    if item is None:
                        break
                    items.append(item)
                    own.add(item)
            for item in items:
                self.store.put_lease(item, col, now + float(lease_seconds))
        return items

    def _choose(self, col, held, own):
        """The best item for column ``col`` outside ``own``: unleased if any is eligible, else the least-leased."""
        gold = self._gold_for(col, held, own)
        if gold is not None:
            return gold
        ann = self.annotator
        cap = ann.max_labels_per_sample
        b = 16
        while True:
            ranked = ann._ranked(b)
            best, fewest = None, None
            for i in ranked.tolist():
                if ann.annotations_[i, col] >= 0 or i in self._gold_codes or i in own:
                    continue
                h = held.get(i, 0)
                if h == 0:
                    return i
                if cap is not None and ann.n_labels_[i] + h >= cap:
                    continue
                if fewest is None or h < fewest:
                    best, fewest = i, h
            if ranked.size < b:
                return best
            b *= 4

    def submit(self, item, worker, label):
        """Record ``worker``'s label of ``item``, end their lease on it and update the annotator.

        The label is on disk when this returns. Submitting the same label again is a no-op (a retry); another
        label for the same item and worker raises (use :meth:`correct`).

        Parameters
        ----------
        item : int
            Index of the item in ``X``.
        worker : str, int or tuple
            The worker's id; a new id joins the crowd.
        label : object
            One of the annotator's ``classes``.

        Returns
        -------
        self : AnnotationSession
            The session.
        """
        item = self._check_item(item)
        label = self._encode(label)
        with self._lock:
            with self.store.transaction():
                col = self._column(worker, create=True)
                records = self.store.labels_since(self._seq)
                stored = self.store.get_label(item, col)
                if stored is not None and stored != label:
                    raise ValueError(f"worker {worker!r} already labelled item {item} as {json.loads(stored)!r}; "
                                     "use correct() to replace the label.")
                if stored is None:
                    seq = self.store.add_label(item, col, label, time.time())
                    records.append(StoredLabel(item, col, label, seq))
                self.store.drop_lease(col, item)
            self._sync(records)
        return self

    def _record(self, items, workers, labels, blobs=None):
        """One transaction: new labels of ``(item, worker)`` pairs and ``blobs``; then one annotator update.

        The loop's batch: recorded together with the state that follows it, and applied to the annotator in one
        ``update`` call, as a loop without a store applies it.
        """
        encoded = [self._encode(label) for label in labels]
        with self._lock:
            with self.store.transaction():
                records = self.store.labels_since(self._seq)
                now = time.time()
                for item, worker, label in zip(items, workers, encoded):
                    col = self._column(worker, create=True)
                    seq = self.store.add_label(self._check_item(item), col, label, now)
                    records.append(StoredLabel(int(item), col, label, seq))
                for key, value in (blobs or {}).items():
                    self.store.put_blob(key, value)
            self._sync(records)

    def release(self, item, worker):
        """Give back ``worker``'s lease on ``item`` (the item returns to the pool).

        Parameters
        ----------
        item : int
            Index of the item in ``X``.
        worker : str, int or tuple
            The worker's id.

        Returns
        -------
        released : bool
            Whether the worker held that lease.
        """
        item = self._check_item(item)
        with self._lock, self.store.transaction():
            col = self._column(worker, create=False)
            return col is not None and self.store.drop_lease(col, item)

    def correct(self, item, worker, label):
        """Replace ``worker``'s label of ``item`` by ``label`` (durable when this returns).

        Parameters
        ----------
        item : int
            Index of the item in ``X``.
        worker : str, int or tuple
            The worker whose label is corrected.
        label : object
            The right label, one of ``classes``.

        Returns
        -------
        self : AnnotationSession
            The session.
        """
        item = self._check_item(item)
        label = self._encode(label)
        with self._lock:
            with self.store.transaction():
                col = self._column(worker, create=False)
                stored = None if col is None else self.store.get_label(item, col)
                if stored is None:
                    raise ValueError(f"worker {worker!r} has not labelled item {item}: nothing to correct "
                                     "(use submit()).")
                if stored != label:
                    self.store.replace_label(item, col, label, time.time())
                records = self.store.labels_since(self._seq)
            self._sync(records)
        return self

    def labels(self, method=None, *, ties="break"):
        """The aggregated label of every item, from every label stored so far.

        Parameters
        ----------
        method : str, default=None
            The annotator's ``aggregation`` by default.

            - "majority": the plain vote of the labels received (every worker counts alike), missing (NaN) where
              nobody labelled. A tie goes to a seeded hash key, the same in every process (see ``ties``).
            - "dawid_skene": the posterior of the session's online worker-quality model, each item's labels
              weighed by the confusion matrices of the workers who gave them, with its graph neighbours'
              posteriors as the prior: where the evidence is thin (no label, or labels from near-random
              workers) the neighbours decide. Gold items get their known label.
            - "one_coin", and with MA3S "propagated" and "majority_propagated": the annotator's
              :meth:`~MA3SAnnotator.aggregate`.
        ties : {"break", "missing"}, default="break"
            For "majority": "break" settles a tied vote by the seeded hash key; "missing" returns NaN (or the
            annotator's ``missing_label``) for tied items, so that they can be sent out again or reviewed.

        Returns
        -------
        labels : ndarray of shape (n_items,)
            Aggregated labels.
        """
        if ties not in ("break", "missing"):
            raise ValueError(f"ties must be 'break' or 'missing', got {ties!r}.")
        with self._lock:
            with self.store.transaction(write=False):
                self._sync()
            method = self.annotator.aggregation if method is None else method
            if method == "dawid_skene":
                return self._posterior_labels()
            labels = self.annotator.aggregate(method)
            if method == "majority" and ties == "missing":
                labels = self._drop_ties(labels)
            return labels

    @property
    def workers(self):
        with self._lock:
            return [_worker_id(key) for key in self._keys]

    def close(self):
        """Close the store (the labels stay on disk)."""
        with self._lock:
            self.store.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"AnnotationSession({type(self.annotator).__name__}, n_items={self._X.shape[0]}, store={self.store!r})"
