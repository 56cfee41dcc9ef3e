"""The energy-aware selector: a small torch module, internal to MixConfigAugmenter (imported lazily).

All parameters are created and initialised from a local ``torch.Generator`` (never the global torch
RNG); dropout masks and the batch order are drawn from the same generator. Computation is float64.
Training runs on :class:`SelectorNet`, a :class:`skorch.NeuralNet` with the task loss in ``get_loss``.
"""

import contextlib
import math

import torch
from torch import nn

from sklearn_frontier.utils._skorch import (
    LeanNet,
    TensorRows,
    numpy_to_state,
    resolve_optimizer,
    row_batches,
    state_to_numpy,
)


@contextlib.contextmanager
def single_thread():
    """Run torch with one intra-op thread (restored afterwards): deterministic and fast on tiny nets."""
    before = torch.get_num_threads()
    try:
        if before != 1:
            torch.set_num_threads(1)
        yield
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


def _linear(gen, n_in, n_out):
    bound = 1.0 / math.sqrt(max(n_in, 1))
    w = torch.empty(n_out, n_in, dtype=torch.float64).uniform_(-bound, bound, generator=gen)
    b = torch.empty(n_out, dtype=torch.float64).uniform_(-bound, bound, generator=gen)
    return nn.Parameter(w), nn.Parameter(b)


class Selector(nn.Module):
    """``z(x) = sum_i w_i(x) S_i(x) E_i`` with ``w = softmax(MLP_score([h(x); c_i; e_i]) / tau)``.

    ``mode`` is "learned", "uniform" or "single" (then ``single_index`` is the one-hot position).
    ``use_context``/``use_stats``/``use_embedding`` switch the score's inputs off (ablations).
    """

    def __init__(self, n_features, n_clusters, n_stats, n_out, *, embed_dim=16, context_dim=32, hidden_dim=32,
                 temperature=1.0, dropout=0.0, mode="learned", single_index=0, generator=None,
                 use_context=True, use_stats=True, use_embedding=True):
        super().__init__()
        gen = generator
        self.mode, self.temperature, self.dropout = mode, float(temperature), float(dropout)
        self.single_index = int(single_index)
        self.use_context, self.use_stats, self.use_embedding = use_context, use_stats, use_embedding
        self.n_configurations = len(n_clusters)
        self.embeddings = nn.ParameterList([
            nn.Parameter(torch.empty(int(K), embed_dim, dtype=torch.float64).normal_(0.0, 0.1, generator=gen))
            for K in n_clusters])
        self.enc1_w, self.enc1_b = _linear(gen, n_features, hidden_dim)
        self.enc2_w, self.enc2_b = _linear(gen, hidden_dim, context_dim)
        self.sc1_w, self.sc1_b = _linear(gen, context_dim + embed_dim + n_stats, hidden_dim)
        self.sc2_w, self.sc2_b = _linear(gen, hidden_dim, 1)
        self.head_w, self.head_b = _linear(gen, embed_dim, n_out)
        self._gen = gen

    def _drop(self, h):
        if not self.training or self.dropout <= 0:
            return h
        keep = (torch.rand(h.shape, generator=self._gen, dtype=h.dtype) >= self.dropout).to(h.dtype)
        return h * keep / (1.0 - self.dropout)

    def cluster_embeddings(self, S):
        """``c_i = S_i E_i`` stacked: (n, M, d)."""
        return torch.stack([s @ e for s, e in zip(S, self.embeddings)], dim=1)

    def weights(self, Z, c, stats):
        n, M = c.shape[0], c.shape[1]
        if self.mode == "uniform":
            return torch.full((n, M), 1.0 / M, dtype=torch.float64)
        if self.mode == "single":
            w = torch.zeros((n, M), dtype=torch.float64)
            w[:, self.single_index] = 1.0
            return w
        h = torch.relu(nn.functional.linear(Z, self.enc1_w, self.enc1_b))
        h = nn.functional.linear(self._drop(h), self.enc2_w, self.enc2_b)
        if not self.use_context:
            h = torch.zeros_like(h)
        cc = c if self.use_embedding else torch.zeros_like(c)
        st = stats if self.use_stats else torch.zeros_like(stats)
        x = torch.cat([h[:, None, :].expand(n, M, h.shape[1]), cc, st[None, :, :].expand(n, M, st.shape[1])],
                      dim=2)
        s = torch.relu(nn.functional.linear(x, self.sc1_w, self.sc1_b))
        s = nn.functional.linear(self._drop(s), self.sc2_w, self.sc2_b)[..., 0]
        return torch.softmax(s / self.temperature, dim=1)

    def forward(self, Z, S, stats):
        c = self.cluster_embeddings(S)
        w = self.weights(Z, c, stats)
        z = (w[:, :, None] * c).sum(dim=1)
        out = nn.functional.linear(z, self.head_w, self.head_b)
        return out, w, z


class SelectorNet(LeanNet):
    """skorch net of the selector: batches are :class:`RowBatch` objects ``Z, S0..S{M-1}``; the loss is the task loss.

    ``stats`` (the configurations' scaled statistics) is shared by every row, so it rides on the net,
    not in the batches.
    """

    def __init__(self, *args, stats, task, **kwargs):
        super().__init__(*args, **kwargs)
        self.stats = stats
        self.task = task

    def infer(self, x, **fit_params):
        S = [x[f"S{i}"] for i in range(len(x.tensors) - 1)]
        return self.module_(x["Z"], S, self.stats)[0]

    def get_loss(self, y_pred, y_true, X=None, training=False):
        if self.task == "classification":
            return nn.functional.cross_entropy(y_pred, y_true)
        return nn.functional.mse_loss(y_pred[:, 0], y_true)


def fit_selector(module, Z, S, stats, y, *, task, max_epochs, batch_size, lr, weight_decay, generator,
                 optimizer="adam", callbacks=(), train_split=None, net_params=None, verbose=0):
    """Train ``module`` with a :class:`SelectorNet`; returns the skorch net (its ``history`` is the record).

    ``train_split`` is a skorch split callable (e.g. :class:`~sklearn_frontier.utils._skorch.IndexSplit`
    of the held-out rows) or None; early stopping and other behaviour come with ``callbacks``.
    ``batch_size=None`` trains on the full batch (no shuffling, as a single batch needs none).
    """
    data = {"Z": torch.as_tensor(Z, dtype=torch.float64)}
    data.update({f"S{i}": torch.as_tensor(s, dtype=torch.float64) for i, s in enumerate(S)})
    yt = torch.as_tensor(y, dtype=torch.int64 if task == "classification" else torch.float64)
    params = dict(net_params or {})
    params.setdefault("train_split", train_split)
    if not verbose:
        params.setdefault("callbacks__print_log", None)  # nothing to print: skip formatting the table
    net = SelectorNet(module, criterion=nn.Module, optimizer=resolve_optimizer(optimizer), lr=lr,
                      optimizer__weight_decay=weight_decay, max_epochs=max_epochs,
                      batch_size=-1 if batch_size is None else int(batch_size), iterator_train=row_batches,
                      iterator_valid=row_batches, iterator_train__shuffle=True, iterator_train__generator=generator,
                      iterator_valid__batch_size=-1, callbacks=list(callbacks), device="cpu", verbose=int(verbose),
                      stats=torch.as_tensor(stats, dtype=torch.float64), task=task, **params)
    net.fit(TensorRows(data, yt), None)
    module.eval()
    return net


__all__ = ["Selector", "SelectorNet", "fit_selector", "single_thread", "state_to_numpy", "numpy_to_state"]
