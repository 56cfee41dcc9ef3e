"""What :class:`AnnotationSession` does with worker quality: gold items, declining, vote weights, the posterior."""

import copy
import json
import numbers

import numpy as np

from ._quality import graph_posterior
from ._validation import count_votes

# A worker's vote weight is the log-odds of their label being right, relative to a worker at the prior's mean
# accuracy (who counts as one vote, as every worker did before any evidence); capped so that one near-perfect
# worker cannot settle an item alone.
_MAX_VOTE_WEIGHT = 3.0
_WEIGHT_TOLERANCE = 0.05


def check_quality_params(gold=None, min_worker_accuracy=None, min_worker_labels=20, gold_per_worker=3,
                         weigh_by_quality=True):
    """Validate the session's worker-quality parameters; return them as attributes to set."""
    if gold is not None and not hasattr(gold, "items"):
        try:
            gold = dict(gold)
        except (TypeError, ValueError) as exc:
            raise TypeError("gold must be a dict {item: label} or a list of (item, label) pairs, got "
                            f"{type(gold).__name__}.") from exc
    if min_worker_accuracy is not None and (not isinstance(min_worker_accuracy, numbers.Real)
                                            or isinstance(min_worker_accuracy, bool)
                                            or not 0.0 < min_worker_accuracy < 1.0):
        raise ValueError(f"min_worker_accuracy must be None or a number in (0, 1), got {min_worker_accuracy!r}.")
    for name, value in (("min_worker_labels", min_worker_labels), ("gold_per_worker", gold_per_worker)):
        if not isinstance(value, (numbers.Integral, np.integer)) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}.")
    if not isinstance(weigh_by_quality, (bool, np.bool_)):
        raise ValueError(f"weigh_by_quality must be a bool, got {weigh_by_quality!r}.")
    return {"gold": None if gold is None else dict(gold), "min_worker_accuracy": min_worker_accuracy,
            "min_worker_labels": int(min_worker_labels), "gold_per_worker": int(gold_per_worker),
            "weigh_by_quality": bool(weigh_by_quality)}


def vote_weights(accuracy, confusion_prior):
    """Each worker's vote weight from their estimated accuracy: 0 at chance, 1 at the prior's mean accuracy."""
    K = confusion_prior.shape[0]
    if K < 2:
        return np.ones_like(accuracy)
    q0 = float(np.mean(np.diag(confusion_prior) / confusion_prior.sum(axis=1)))
    q = np.clip(accuracy, 1e-6, 1 - 1e-6)
    ref = np.log(q0 * (K - 1) / (1 - q0))
    return np.clip(np.log(q * (K - 1) / (1 - q)) / ref, 0.0, _MAX_VOTE_WEIGHT)


class _QualityMixin:
    """Worker quality in :class:`AnnotationSession`: the fold, gold items, declining, weights, the posterior."""

    # -- gold items and the fold ---------------------------------------------------------------------------
    def _settle_gold(self):
        """The gold items as {item: class code}; recorded in the store by the first session given them."""
        given = None
        if self.gold is not None:
            given = {}
            for item, label in self.gold.items():
                item = self._check_item(item)
                try:
                    given[item] = self._label_codes[self._encode(label)]
                except ValueError:
                    raise ValueError(f"gold: the label of item {item}, {label!r}, is not one of the classes "
                                     f"{self.classes_.tolist()}.") from None
        stored = self.store.get_blob("gold")
        if stored is not None:
            stored = {int(i): self._label_codes[lab] for i, lab in json.loads(stored.decode("utf-8"))}
            if given is not None and given != stored:
                where = self.store.path or repr(self.store)
                raise ValueError(f"The label store {where} was given other gold items by its first session; "
                                 "open it with gold=None (the stored ones) or the same gold.")
            return stored
        if given:
            pairs = [[i, json.loads(list(self._label_codes)[c])] for i, c in sorted(given.items())]
            self.store.put_blob("gold", json.dumps([[i, json.dumps(lab)] for i, lab in pairs]).encode("utf-8"))
        return given or {}

    def _fold(self, records):
        for r in records:
            self._quality.add(r.item, r.column, self._label_codes[r.label])
        self._dirty = True

    def _gold_for(self, col, held, own):
        """A gold item for a worker still being calibrated (fewest labels first), or None."""
        gold = self._gold_codes
        if not gold or self.gold_per_worker == 0:
            return None
        ann = self.annotator
        items = np.fromiter(gold, np.int64, len(gold))
        done = int(np.count_nonzero(ann.annotations_[items, col] >= 0)) + len(own & gold.keys())
        if done >= min(self.gold_per_worker, len(gold)):
            return None
        free = [i for i in items.tolist() if ann.annotations_[i, col] < 0 and i not in own]
        if not free:
            return None
        return min(free, key=lambda i: (ann.n_labels_[i] + held.get(i, 0), i))

    # -- declining and weighing -------------------------------------------------------------------------------
    def _declined(self, col):
        if self.min_worker_accuracy is None:
            return False
        q = self._quality
        if col >= q.n_per_worker.size or q.n_per_worker[col] < self.min_worker_labels:
            return False
        return bool(q.accuracy(col + 1)[col] < self.min_worker_accuracy)

    def _reweigh(self):
        """Give MA3S's vote counts the workers' current weights, when they moved since they were last set.

        New labels get their worker's weight as they arrive (``_weigh_new_votes``, O(1 + in-degree) each); every
        count is reweighed (O(n)) only when some worker's weight moved by more than ``_WEIGHT_TOLERANCE``.
        """
        if not self.weigh_by_quality or not getattr(self, "_dirty", False):
            return
        ann = self.annotator
        weights = vote_weights(self._quality.accuracy(ann.n_annotators_), self._quality.S)
        old = getattr(ann, "_vote_weights", None)
        if old is None or old.size != weights.size or np.abs(weights - old).max() > _WEIGHT_TOLERANCE:
            ann._set_vote_weights(weights)
        self._dirty = False

    # -- aggregation ----------------------------------------------------------------------------------------------
    def _posterior_labels(self):
        """Dawid–Skene posterior of every item, its graph neighbours' label posteriors as the prior."""
        ann = self.annotator
        model = copy.deepcopy(self._quality)  # refined on a copy: the fold stays the same in every process
        model.converge()
        T = graph_posterior(model, ann.annotations_, ann.graph_)
        out = np.argmax(T, axis=1)
        for item, code in self._gold_codes.items():
            out[item] = code
        return self.classes_[out]

    def _drop_ties(self, labels):
        ann = self.annotator
        C = count_votes(ann.annotations_, self.classes_.size)
        tied = (C == C.max(axis=1, keepdims=True)).sum(axis=1) > 1
        tied &= C.sum(axis=1) > 0
        if not tied.any():
            return labels
        out = ann._missing_array(labels.shape)
        out[~tied] = labels[~tied]
        return out

    # -- public -------------------------------------------------------------------------------------------------
    def worker_quality(self):
        """Each worker's estimated accuracy, from the online Dawid–Skene model (every label stored so far).

        Returns
        -------
        quality : dict
            ``{worker: P(the worker's label is right)}``, under the estimated class frequencies. A worker
            answering at random tends to ``1 / n_classes``; a worker with no labels has the prior's mean.
        """
        with self._lock:
            with self.store.transaction(write=False):
                self._sync()
            acc = self._quality.accuracy(len(self._keys))
            return {w: float(a) for w, a in zip(self.workers, acc)}

    def worker_confusion(self):
        """Each worker's estimated confusion matrix (posterior mean of the online Dawid–Skene model).

        Returns
        -------
        confusion : dict
            ``{worker: ndarray of shape (n_classes, n_classes)}``; row ``k`` is P(label | true class k), in the
            order of ``classes_``.
        """
        with self._lock:
            with self.store.transaction(write=False):
                self._sync()
            conf = self._quality.confusion(len(self._keys))
            return {w: c.copy() for w, c in zip(self.workers, conf)}
