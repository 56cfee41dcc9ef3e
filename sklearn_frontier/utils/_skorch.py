"""skorch plumbing shared by the suite's torch estimators (imported lazily, only when a network is trained).

The estimators stay plain scikit-learn estimators: they build a :class:`skorch.NeuralNet` subclass inside
``fit`` from their own parameters, train it, and keep only plain results (a state dict of arrays, the
history as a list of dicts). Batches come from :func:`row_batches`, a light loader over whole index
batches of in-memory tensors (no per-row collation, no ``DataLoader`` iterator per epoch) whose shuffling
uses a local ``torch.Generator``, so no code path touches the global torch RNG. :class:`LeanNet` records
the epoch losses in its own epoch loop instead of skorch's two ``PassthroughScoring`` callbacks, which
cost more per epoch than the forward pass of the suite's small networks (same history keys).
"""

import numbers

import numpy as np
import torch
from skorch import NeuralNet
from skorch.callbacks import EarlyStopping, EpochTimer, PrintLog
from skorch.dataset import get_len
from torch.utils.data import Dataset, Sampler, Subset

OPTIMIZERS = {"adam": "Adam", "adamw": "AdamW", "sgd": "SGD", "rmsprop": "RMSprop", "lbfgs": "LBFGS"}
# skorch parameters an estimator sets itself from its own parameters (so net_params must not hold them)
_OWNED = ("module", "criterion", "optimizer", "lr", "max_epochs", "batch_size", "callbacks", "device",
          "iterator_train", "iterator_valid", "dataset", "warm_start", "verbose", "compile")
_PREFIXES = ("optimizer__", "iterator_train__", "iterator_valid__", "callbacks__", "criterion__")
_KEYS = ("train_split",)


class RowBatch:
    """Named tensors of one batch: ``batch["x"]``; ``len(batch)`` is its row count.

    Not a dict on purpose: skorch walks dicts tensor by tensor to count rows, which costs more than the
    forward pass of a small network; nets built on it override ``infer`` to unpack the tensors.
    """

    __slots__ = ("tensors", "n")

    def __init__(self, tensors):
        self.tensors = tensors
        self.n = next(iter(tensors.values())).shape[0]

    def __getitem__(self, key):
        return self.tensors[key]

    def __len__(self):
        return self.n


class TensorRows(Dataset):
    """Named float tensors (and an optional target) indexed by whole batches of row positions (a :class:`RowBatch`)."""

    def __init__(self, X, y=None):
        self.X = X
        self.y = y
        self.n = next(iter(X.values())).shape[0]

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        if not isinstance(index, slice):
            index = torch.as_tensor(index)
        return RowBatch({key: value[index] for key, value in self.X.items()}), \
            None if self.y is None else self.y[index]

    def rows(self, index):
        """A new :class:`TensorRows` of the rows at ``index`` (copied once, so batches index it directly)."""
        index = torch.as_tensor(np.asarray(index, dtype=np.int64))
        return TensorRows({key: value[index] for key, value in self.X.items()},
                          None if self.y is None else self.y[index])


class _BatchSampler(Sampler):
    """Batches of row positions; a fresh permutation from ``generator`` per epoch when shuffling."""

    def __init__(self, n, batch_size, shuffle, generator, shuffle_single_batch):
        self.n, self.batch_size = n, batch_size
        self.shuffle = shuffle and (shuffle_single_batch or batch_size < n)
        self.generator = generator

    def __len__(self):
        return -(-self.n // self.batch_size)

    def __iter__(self):
        if not self.shuffle:  # row ranges: plain views of the stored tensors, no copy
            for start in range(0, self.n, self.batch_size):
                yield slice(start, start + self.batch_size)
            return
        order = torch.randperm(self.n, generator=self.generator)
        for start in range(0, self.n, self.batch_size):
            yield order[start:start + self.batch_size].tolist()


class RowLoader:
    """Iterable of ``dataset[batch_index]`` over a :class:`_BatchSampler` (what skorch iterates each epoch)."""

    def __init__(self, dataset, sampler):
        self.dataset, self.sampler = dataset, sampler

    def __len__(self):
        return len(self.sampler)

    def __iter__(self):
        dataset = self.dataset
        for index in self.sampler:
            yield dataset[index]


def _as_rows(dataset):
    """A :class:`TensorRows` of ``dataset`` (a Subset chain over one is materialised once)."""
    index = None
    while isinstance(dataset, Subset):
        sub = np.asarray(dataset.indices, dtype=np.int64)
        index = sub if index is None else sub[index]
        dataset = dataset.dataset
    if not isinstance(dataset, TensorRows):
        raise TypeError(f"row_batches needs a TensorRows dataset (or a Subset of one), got {type(dataset).__name__}.")
    # index views of one dataset become a dataset of their own rows: X[sub][order] == X[sub[order]]
    return dataset if index is None else dataset.rows(index)


def row_batches(dataset, batch_size=None, shuffle=False, generator=None, shuffle_single_batch=False):
    """A loader of whole batches (skorch's ``iterator_train``/``iterator_valid`` factory).

    Parameters
    ----------
    dataset : TensorRows or torch.utils.data.Subset of one
        The rows.
    batch_size : int or None, default=None
        Rows per batch (None or -1: all rows in one batch).
    shuffle : bool, default=False
        Draw a new row order each epoch from ``generator``.
    generator : torch.Generator, default=None
        Local generator of the row orders (required when shuffling).
    shuffle_single_batch : bool, default=False
        Also permute the rows when they fit in one batch.

    Returns
    -------
    loader : RowLoader
        Iterable yielding ``(X_batch, y_batch)`` pairs, a fresh row order each pass when shuffling.
    """
    dataset = _as_rows(dataset)
    n = len(dataset)
    batch_size = n if batch_size in (None, -1) else max(1, min(int(batch_size), n))
    if shuffle and generator is None:
        raise ValueError("row_batches needs a local torch.Generator to shuffle (the global RNG is never used).")
    return RowLoader(dataset, _BatchSampler(n, batch_size, shuffle, generator, shuffle_single_batch))


class LeanNet(NeuralNet):
    """``NeuralNet`` recording ``train_loss``/``valid_loss`` (and ``*_best``) in its epoch loop.

    skorch's default ``PassthroughScoring`` callbacks read the batch records back from the history and
    average them with numpy every epoch; on a network whose epoch takes a few milliseconds that is a
    measurable share (``benchmarks/skorch_overhead.py``). The values are the same row-weighted epoch
    means, the history keys the same, the batch records kept; callbacks are notified as usual.
    """

    def get_default_callbacks(self):
        return [("epoch_timer", EpochTimer()), ("print_log", PrintLog())]

    def initialize_history(self):
        super().initialize_history()
        self._best_loss = {}
        return self

    def run_single_epoch(self, iterator, training, prefix, step_fn, **fit_params):
        if iterator is None:
            return
        history, notify = self.history, self.notify
        key, size_key = prefix + "_loss", prefix + "_batch_size"
        batch_count, total, rows = 0, 0.0, 0
        for batch in iterator:
            notify("on_batch_begin", batch=batch, training=training)
            step = step_fn(batch, **fit_params)
            loss = step["loss"].item()
            Xi = batch[0] if isinstance(batch, (tuple, list)) else batch
            size = len(Xi) if isinstance(Xi, RowBatch) else get_len(Xi)
            history.record_batch(key, loss)
            history.record_batch(size_key, size)
            notify("on_batch_end", batch=batch, training=training, **step)
            batch_count += 1
            total += loss * size
            rows += size
        history.record(prefix + "_batch_count", batch_count)
        if rows:
            value = total / rows
            best = self._best_loss.get(key, np.inf)
            history.record(key, value)
            history.record(key + "_best", bool(value < best))
            if value < best:
                self._best_loss[key] = value


class IndexSplit:
    """skorch ``train_split``: fixed validation row positions (the rest trains)."""

    def __init__(self, valid_index):
        self.valid_index = np.asarray(valid_index, dtype=np.int64)

    def __call__(self, dataset, y=None, **fit_params):
        n = len(dataset)
        train = np.setdiff1d(np.arange(n), self.valid_index)
        if isinstance(dataset, TensorRows):
            return dataset.rows(train), dataset.rows(self.valid_index)
        return Subset(dataset, train.tolist()), Subset(dataset, self.valid_index.tolist())


def resolve_optimizer(optimizer, name="optimizer"):
    """``torch.optim`` class from a name in :data:`OPTIMIZERS` or a ``torch.optim.Optimizer`` subclass."""
    if isinstance(optimizer, str):
        return getattr(torch.optim, OPTIMIZERS[optimizer])
    if isinstance(optimizer, type) and issubclass(optimizer, torch.optim.Optimizer):
        return optimizer
    raise TypeError(f"{name} must be one of {sorted(OPTIMIZERS)} or a torch.optim.Optimizer subclass, got "
                    f"{optimizer!r}.")


def check_net_params(net_params, name="net_params"):
    """Validate the skorch pass-through dict (prefixed keys and ``train_split``); returns a new dict."""
    out = dict(net_params or {})
    for key in out:
        if not isinstance(key, str):
            raise TypeError(f"{name} keys must be strings, got {key!r}.")
        if key in _OWNED:
            raise ValueError(f"{name}[{key!r}] is set from the estimator's own parameter; set it there instead.")
        if key not in _KEYS and not key.startswith(_PREFIXES):
            raise ValueError(f"Unknown key {key!r} in {name}; valid keys are {list(_KEYS)} and keys starting with "
                             f"{list(_PREFIXES)}.")
    split = out.get("train_split")
    if split is not None and not callable(split):
        raise TypeError(f"{name}['train_split'] must be None or a callable (dataset, y) -> (train, valid), got "
                        f"{split!r}.")
    return out


def check_callbacks(callbacks, name="callbacks"):
    """A list of skorch callbacks (instances or classes, optionally ``(name, callback)`` pairs)."""
    from skorch.callbacks import Callback

    if callbacks is None:
        return []
    if not isinstance(callbacks, (list, tuple)):
        raise TypeError(f"{name} must be None or a list of skorch callbacks, got {type(callbacks).__name__}.")
    for item in callbacks:
        cb = item[1] if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) else item
        ok = isinstance(cb, Callback) or (isinstance(cb, type) and issubclass(cb, Callback))
        if not ok:
            raise TypeError(f"{name} must hold skorch.callbacks.Callback instances, got {cb!r}.")
    return list(callbacks)


def early_stopping(patience):
    """skorch ``EarlyStopping`` on ``valid_loss`` with an absolute 1e-10 threshold, restoring the best state."""
    return _ClonedBestEarlyStopping(monitor="valid_loss", patience=int(patience), threshold=1e-10,
                                    threshold_mode="abs", load_best=True)


class _ClonedBestEarlyStopping(EarlyStopping):
    """``EarlyStopping`` that snapshots the best state with ``Tensor.clone`` (not ``copy.deepcopy``).

    skorch deep-copies the state dict at each improvement; for the selector that was a third of an
    early-stopped fit (``benchmarks/skorch_overhead.py``). Same stopping rule, same restored weights.
    """

    def on_epoch_end(self, net, **kwargs):
        best_epoch, load_best = self.best_epoch_, self.load_best
        self.load_best = False
        try:
            super().on_epoch_end(net, **kwargs)
        finally:
            self.load_best = load_best
            if load_best and self.best_epoch_ != best_epoch:
                self.best_model_weights_ = {k: v.detach().clone() for k, v in net.module_.state_dict().items()}


def plain_history(history):
    """skorch ``History`` as a list of per-epoch dicts of plain floats/ints/bools (no batches)."""
    out = []
    for row in history:
        entry = {}
        for key, value in row.items():
            if key == "batches":
                continue
            if isinstance(value, (bool, np.bool_)):
                entry[key] = bool(value)
            elif isinstance(value, numbers.Integral):
                entry[key] = int(value)
            elif isinstance(value, numbers.Real):
                entry[key] = float(value)
        out.append(entry)
    return out


def state_to_numpy(module):
    """``state_dict`` as numpy arrays (copies, CPU)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in module.state_dict().items()}


def numpy_to_state(module, state):
    """Load a numpy state dict into ``module`` and put it in eval mode."""
    module.load_state_dict({k: torch.as_tensor(np.asarray(v)) for k, v in state.items()})
    module.eval()
    return module


__all__ = ["RowBatch", "TensorRows", "RowLoader", "row_batches", "LeanNet", "IndexSplit", "resolve_optimizer",
           "check_net_params", "check_callbacks", "early_stopping", "plain_history", "state_to_numpy", "numpy_to_state",
           "OPTIMIZERS"]
