"""skorch plumbing shared by the suite's torch estimators (imported lazily, only when a network is trained).

The estimators stay plain scikit-learn estimators: they build a :class:`skorch.NeuralNet` subclass inside
``fit`` from their own parameters, train it, and keep only plain results (a state dict of arrays, the
history as a list of dicts). Batches come from :func:`row_batches`, a ``DataLoader`` over whole index
batches of in-memory tensors (no per-row collation) whose shuffling uses a local ``torch.Generator``;
the loader's own generator is seeded too, so no code path touches the global torch RNG.
"""

import numbers

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, Sampler, Subset

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


def _as_is(batch):
    return batch


def row_batches(dataset, batch_size=None, shuffle=False, generator=None, shuffle_single_batch=False):
    """A ``DataLoader`` of whole batches (skorch's ``iterator_train``/``iterator_valid`` factory).

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
    loader : torch.utils.data.DataLoader
        Yields ``(X_batch, y_batch)`` pairs.
    """
    n = len(dataset)
    batch_size = n if batch_size in (None, -1) else max(1, min(int(batch_size), n))
    if shuffle and generator is None:
        raise ValueError("row_batches needs a local torch.Generator to shuffle (the global RNG is never used).")
    sampler = _BatchSampler(n, batch_size, shuffle, generator, shuffle_single_batch)
    # batch_size=None: the sampler already yields batches; the loader's generator seeds only its own
    # bookkeeping draw (it would otherwise take it from the global RNG)
    return DataLoader(dataset, sampler=sampler, batch_size=None, collate_fn=_as_is,
                      generator=torch.Generator().manual_seed(0))


class IndexSplit:
    """skorch ``train_split``: fixed validation row positions (the rest trains)."""

    def __init__(self, valid_index):
        self.valid_index = np.asarray(valid_index, dtype=np.int64)

    def __call__(self, dataset, y=None, **fit_params):
        n = len(dataset)
        train = np.setdiff1d(np.arange(n), self.valid_index)
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
    from skorch.callbacks import EarlyStopping

    return EarlyStopping(monitor="valid_loss", patience=int(patience), threshold=1e-10, threshold_mode="abs",
                         load_best=True)


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


__all__ = ["RowBatch", "TensorRows", "row_batches", "IndexSplit", "resolve_optimizer", "check_net_params", "check_callbacks",
           "early_stopping", "plain_history", "state_to_numpy", "numpy_to_state", "OPTIMIZERS"]
