"""Worker quality learned online: Dawid–Skene with a Dirichlet prior, updated by incremental EM as labels arrive.

The model is a fold over a label log taken in ``seq`` order: ``add(item, column, code)`` once per stored label.
Every step is a deterministic function of the labels folded so far, so two processes that fold the same log hold
the same model, bit for bit, whatever batches they read it in.

Per label (Neal & Hinton's incremental EM): the labelled item's posterior is recomputed from the current
parameters and its old contribution to the sufficient statistics is swapped for the new one, then the next
``sweep`` labelled items in index order get the same step (so every item's posterior keeps pace with the
workers' confusion matrices). When the number of labels has grown by a quarter since the last time, ten EM
iterations run on all labels from the current posteriors (a geometric schedule: amortized O(1) per label). The
fixed points are those of batch Dawid–Skene under the same prior (``_dawid_skene_codes`` with
``confusion_prior``).
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ._aggregation import _dawid_skene_codes

_REFRESH_ITERATIONS = 10


def default_confusion_prior(n_classes, diagonal=3.0, off_diagonal=1.0):
    """Dirichlet pseudo-counts of a confusion row: a worker is believed better than chance until shown otherwise.

    ``diagonal`` on the right class and ``off_diagonal`` shared among the wrong ones: a prior mean accuracy of
    3/4 whatever the number of classes, worth four labels.
    """
    K = int(n_classes)
    S = np.full((K, K), float(off_diagonal) / max(K - 1, 1))
    np.fill_diagonal(S, float(diagonal))
    return S


class OnlineDawidSkene:
    """Per-worker confusion matrices and per-item posteriors, kept current one label at a time.

    Parameters
    ----------
    n_items : int
        Items in the pool.
    n_classes : int
        Classes.
    confusion_prior : ndarray of shape (n_classes, n_classes), default=None
        Additive pseudo-counts of every worker's confusion rows (default: :func:`default_confusion_prior`).
    class_prior : float, default=1.0
        Additive pseudo-count of each class in the class prior.
    gold : dict of int to int, default=None
        Items whose true class code is known: their posterior is that class, so every label they receive
        calibrates the worker directly.
    sweep : int, default=4
        Other labelled items revisited after each label.
    growth : float, default=1.25
        Full EM runs when the label count reaches ``growth`` times its value at the last full run.
    """

    def __init__(self, n_items, n_classes, *, confusion_prior=None, class_prior=1.0, gold=None, graph=None,
                 sweep=4, growth=1.25):
        K = int(n_classes)
        # With a graph, an item's prior is the class frequencies plus its labelled neighbours' posteriors: labels
        # collected adaptively (contested items asked again, settled ones not) would otherwise make every worker
        # look worse than they are, since plain Dawid–Skene sees the contested items and not why the settled
        # ones were settled.
        self.graph = None if graph is None else graph.tocsr()
        self.K = K
        self.S = default_confusion_prior(K) if confusion_prior is None else np.asarray(confusion_prior, float)
        self.s = float(class_prior)
        self.gold = dict(gold or {})
        self.sweep = int(sweep)
        self.growth = float(growth)
        self.T = np.full((int(n_items), K), 1.0 / K)
        self.N = np.zeros((0, K, K))  # N[j, k, l] = sum of T[i, k] over the items j labelled l
        self.class_counts = np.zeros(K)  # sum of T (with a graph: of L) over labelled items
        self.item_labels = {}  # item -> {column: code}
        self.n_labels = 0
        self.n_per_worker = np.zeros(0, dtype=np.int64)
        self._next_full = 8
        self._cursor = 0
        self._labelled = []  # labelled items in the order they were first labelled (the sweep's cycle)
        self._is_labelled = np.zeros(int(n_items))
        # each item's labels alone (flat class prior): what its neighbours see, so that no posterior feeds back
        # into the prior it came from
        self.L = np.full((int(n_items), K), 1.0 / K)

    # -- the fold ------------------------------------------------------------------------------------
    def _grow(self, column):
        m = self.N.shape[0]
        if column >= m:
            new = max(column + 1, 2 * m, 8)
            N = np.zeros((new, self.K, self.K))
            N[:m] = self.N
            counts = np.zeros(new, dtype=np.int64)
            counts[:m] = self.n_per_worker
            self.N, self.n_per_worker = N, counts

    def add(self, item, column, code):
        """Fold one stored label (a new one, or a correction of ``(item, column)``)."""
        item, column, code = int(item), int(column), int(code)
        self._grow(column)
        labels = self.item_labels.get(item)
        if labels is None:
            labels = self.item_labels[item] = {}
            self._labelled.append(item)
            self._is_labelled[item] = 1.0
        if labels.get(column) == code:
            return
        self._remove(item)
        if column not in labels:
            self.n_labels += 1
            self.n_per_worker[column] += 1
        labels[column] = code
        self._estep_item(item)
        self._add(item)
        for _ in range(min(self.sweep, len(self._labelled) - 1)):
            self._cursor = (self._cursor + 1) % len(self._labelled)
            other = self._labelled[self._cursor]
            if other != item:
                self._remove(other)
                self._estep_item(other)
                self._add(other)
        if self.n_labels >= self._next_full:
            # a bounded number of EM iterations, so that no submit waits for a full fit; each is an ascent and
            # the next refresh carries on from here
            self.converge(max_iter=_REFRESH_ITERATIONS)
            self._next_full = max(self._next_full + 1, int(np.ceil(self.growth * self.n_labels)))

    def _remove(self, item):
        labels = self.item_labels.get(item)
        if not labels:
            return
        t = self.T[item]
        for col, code in labels.items():
            self.N[col, :, code] -= t
        self.class_counts -= self._class_share(item)

    def _add(self, item):
        t = self.T[item]
        for col, code in self.item_labels[item].items():
            self.N[col, :, code] += t
        self.class_counts += self._class_share(item)

    def _class_share(self, item):
        # With a graph, the class frequencies come from each item's labels alone: estimated from the posteriors,
        # which the frequencies themselves shape, they can run away to one class when items have a label each.
        return self.T[item] if self.graph is None else self.L[item]

    def _log_prior(self):
        return np.log((np.maximum(self.class_counts, 0.0) + self.s) / (len(self.item_labels) + self.K * self.s))

    def _log_prior_of(self, item):
        if self.graph is None:
            return self._log_prior()
        g = self.graph
        lo, hi = g.indptr[item], g.indptr[item + 1]
        nb = g.indices[lo:hi]
        p = np.exp(self._log_prior()) + (g.data[lo:hi] * self._is_labelled[nb]) @ self.L[nb]
        return np.log(p / p.sum())

    def _log_conf(self, columns):
        N = np.maximum(self.N[columns], 0.0) + self.S
        return np.log(N / N.sum(axis=2, keepdims=True))

    def _estep_item(self, item):
        if item in self.gold:
            t = np.zeros(self.K)
            t[self.gold[item]] = 1.0
            self.T[item] = self.L[item] = t
            return
        labels = self.item_labels[item]
        cols = np.fromiter(labels.keys(), np.int64, len(labels))
        codes = np.fromiter(labels.values(), np.int64, len(labels))
        num = np.maximum(self.N[cols, :, codes], 0.0) + self.S[:, codes].T  # (r, K): P(label | class), unnormalized
        den = np.maximum(self.N[cols].sum(axis=2), 0.0) + self.S.sum(axis=1)
        ll = (np.log(num) - np.log(den)).sum(axis=0)
        e = np.exp(ll - ll.max())
        self.L[item] = e / e.sum()
        logt = self._log_prior_of(item) + ll
        e = np.exp(logt - logt.max())
        self.T[item] = e / e.sum()

    def converge(self, max_iter=100, tol=1e-6):
        """Run EM to convergence on every label folded so far, from the current posteriors."""
        if not self.item_labels:
            return
        if self.graph is not None:
            self._converge_with_graph(max_iter, tol)
            return
        codes = self.annotation_codes()
        init = self.T.copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # a partial refresh is still an EM ascent
            T, _ = _dawid_skene_codes(codes, self.K, max_iter=max_iter, tol=tol, smoothing=self.s,
                                      confusion_prior=self.S, init=self._pin_gold(init), gold=self.gold)
        self.T = T
        self._recount()

    def _label_arrays(self):
        rows, cols, labs = [], [], []
        for item, labels in self.item_labels.items():
            for col, code in labels.items():
                rows.append(item)
                cols.append(col)
                labs.append(code)
        return (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), np.array(labs, dtype=np.int64))

    def _converge_with_graph(self, max_iter, tol):
        """EM whose E-step takes each item's prior from its labelled neighbours' label posteriors (a fixed point).

        Only labelled items take part (an unlabelled neighbour adds nothing to a prior), so a run costs
        O(labels + their graph rows), whatever the pool's size.
        """
        K, m = self.K, self.N.shape[0]
        rows, cols, labs = self._label_arrays()
        items = np.unique(rows)
        local = np.searchsorted(items, rows)  # compact row of each label
        n_l = items.size
        G = self.graph[items][:, items]
        gold = {int(np.searchsorted(items, i)): c for i, c in self.gold.items() if i in self.item_labels}
        T = _pin(self.T[items].copy(), gold)
        for _ in range(max_iter):
            N = np.empty((m, K, K))
            for k in range(K):
                N[:, k, :] = np.bincount(cols * K + labs, weights=T[local, k], minlength=m * K).reshape(m, K)
            log_conf = np.log((N + self.S) / (N.sum(axis=2, keepdims=True) + self.S.sum(axis=1)[:, None]))
            contrib = log_conf[cols, :, labs]
            loglik = np.stack([np.bincount(local, weights=contrib[:, k], minlength=n_l) for k in range(K)], axis=1)
            L = _pin(_softmax(loglik), gold)
            pi = (L.sum(axis=0) + self.s) / (n_l + K * self.s)
            prior = pi[None, :] + np.asarray(G @ L)
            new = _pin(_softmax(np.log(prior / prior.sum(axis=1, keepdims=True)) + loglik), gold)
            shift = float(np.abs(new - T).max())
            T = new
            if shift < tol:
                break
        self.T[items] = T
        self.L[items] = L
        self._recount()

    def _pin_gold(self, T):
        for item, code in self.gold.items():
            T[item] = 0.0
            T[item, code] = 1.0
        return T

    def _recount(self):
        """Sufficient statistics from the posteriors, exactly (no drift from the incremental swaps)."""
        rows, cols, labs = self._label_arrays()
        m, K = self.N.shape[0], self.K
        for k in range(K):
            self.N[:, k, :] = np.bincount(cols * K + labs, weights=self.T[rows, k], minlength=m * K).reshape(m, K)
        items = np.unique(rows)
        self.class_counts = (self.T if self.graph is None else self.L)[items].sum(axis=0)

    def annotation_codes(self):
        """The folded labels as an (n_items, n_workers) code matrix, -1 for missing."""
        codes = np.full((self.T.shape[0], self.N.shape[0]), -1, dtype=np.int64)
        for item, labels in self.item_labels.items():
            for col, code in labels.items():
                codes[item, col] = code
        return codes

    # -- what the session reads ------------------------------------------------------------------------
    def class_prior(self):
        """The estimated class frequencies."""
        return np.exp(self._log_prior())

    def confusion(self, n_workers):
        """Posterior-mean confusion matrices of the first ``n_workers`` columns, rows = true class."""
        self._grow(max(int(n_workers) - 1, 0))
        N = np.maximum(self.N[:n_workers], 0.0) + self.S
        return N / N.sum(axis=2, keepdims=True)

    def accuracy(self, n_workers):
        """P(a worker's label is right) under the estimated class frequencies, per column."""
        conf = self.confusion(n_workers)
        return np.einsum("k,jkk->j", self.class_prior(), conf)

    def log_likelihood(self):
        """(n_items, n_classes): sum over an item's labels of log P(label | true class)."""
        out = np.zeros(self.T.shape)
        if not self.item_labels:
            return out
        log_conf = self._log_conf(np.arange(self.N.shape[0]))
        for item, labels in self.item_labels.items():
            for col, code in labels.items():
                out[item] += log_conf[col, :, code]
        return out


_GRAPH_HOPS = 3


def _pin(T, gold):
    for row, code in gold.items():
        T[row] = 0.0
        T[row, code] = 1.0
    return T


def _softmax(logits):
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def graph_posterior(model, codes, graph):
    """Every item's class posterior: its labels weighed by ``model``'s confusion matrices, its graph neighbours'
    labels as the prior (so the graph decides where the labels are few or come from near-random workers).

    A labelled neighbour votes with the posterior of its own labels alone (weight 1); an unlabelled one with its
    graph posterior of the previous hop (weight 1/2), over a few hops; the class frequencies weigh as much as one
    fully labelled graph row. Gold items keep their class.
    """
    n, K = codes.shape[0], model.K
    rows, cols = np.nonzero(codes >= 0)
    log_conf = np.log(model.confusion(codes.shape[1]))
    contrib = log_conf[cols, :, codes[rows, cols]]
    loglik = np.stack([np.bincount(rows, weights=contrib[:, k], minlength=n) for k in range(K)], axis=1)
    labelled = (np.bincount(rows, minlength=n) > 0)[:, None]
    own = model._pin_gold(_softmax(loglik)) * labelled
    pi = model.class_prior()[None, :]
    T = np.zeros((n, K))
    for _ in range(_GRAPH_HOPS):
        prior = pi + np.asarray(graph @ (own + 0.5 * T * ~labelled))
        T = _softmax(np.log(prior / prior.sum(axis=1, keepdims=True)) + loglik)
    return model._pin_gold(T)


def fit_offline(codes, n_classes, gold=None, graph=None):
    """The online model of a whole label matrix at once (batch EM under the same prior), for offline use."""
    model = OnlineDawidSkene(codes.shape[0], n_classes, gold=gold, graph=graph)
    rows, cols = np.nonzero(codes >= 0)
    model._grow(codes.shape[1] - 1)
    for i, j in zip(rows.tolist(), cols.tolist()):
        model.item_labels.setdefault(i, {})[j] = int(codes[i, j])
        model.n_per_worker[j] += 1
    model.n_labels = int(rows.size)
    model._is_labelled[np.unique(rows)] = 1.0
    C = np.zeros((codes.shape[0], n_classes))
    np.add.at(C, (rows, codes[rows, cols]), 1.0)
    labelled = C.sum(axis=1) > 0
    model.T = np.where(labelled[:, None], C / np.maximum(C.sum(axis=1, keepdims=True), 1), 1.0 / n_classes)
    model.converge()
    return model
