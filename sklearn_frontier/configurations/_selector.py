"""The energy-aware selector: a small torch module, internal to MixConfigAugmenter (imported lazily).

All parameters are created and initialised from a local ``torch.Generator`` (never the global torch
RNG); dropout masks are drawn from the same generator. Computation is float64.
"""

import contextlib
import math

import numpy as np
import torch
from torch import nn


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


def train_selector(module, Z, S, stats, y, *, task, max_epochs, batch_size, lr, weight_decay, generator,
                   validation_fraction=None, n_iter_no_change=10, val_idx=None, verbose=0):
    """Adam on the task loss (cross-entropy or MSE); returns ``(loss_curve, n_iter)``.

    With ``val_idx`` (rows held out for early stopping) training stops after ``n_iter_no_change``
    epochs without improvement of the validation loss and the best state is restored.
    """
    Zt = torch.as_tensor(Z, dtype=torch.float64)
    St = [torch.as_tensor(s, dtype=torch.float64) for s in S]
    stats_t = torch.as_tensor(stats, dtype=torch.float64)
    yt = torch.as_tensor(y, dtype=torch.int64 if task == "classification" else torch.float64)
    n = Zt.shape[0]
    all_idx = np.arange(n)
    if val_idx is not None and len(val_idx):
        train_idx = np.setdiff1d(all_idx, val_idx)
    else:
        train_idx, val_idx = all_idx, None
    train_t = torch.as_tensor(train_idx)

    def loss_on(idx):
        out, _, _ = module(Zt[idx], [s[idx] for s in St], stats_t)
        if task == "classification":
            return nn.functional.cross_entropy(out, yt[idx])
        return nn.functional.mse_loss(out[:, 0], yt[idx])

    opt = torch.optim.Adam(module.parameters(), lr=lr, weight_decay=weight_decay)
    n_train = train_idx.shape[0]
    bs = n_train if batch_size is None else min(int(batch_size), n_train)
    curve, best, best_state, stall = [], np.inf, None, 0
    epoch = 0
    for epoch in range(1, max_epochs + 1):
        module.train()
        if bs >= n_train:
            batches = [train_t]
        else:
            perm = train_t[torch.randperm(n_train, generator=generator)]
            batches = [perm[i:i + bs] for i in range(0, n_train, bs)]
        total = 0.0
        for b in batches:
            opt.zero_grad()
            loss = loss_on(b)
            loss.backward()
            opt.step()
            total += float(loss.detach()) * b.shape[0]
        curve.append(total / n_train)
        if val_idx is not None:
            module.eval()
            with torch.no_grad():
                v = float(loss_on(torch.as_tensor(val_idx)))
            if v < best - 1e-10:
                best, stall = v, 0
                best_state = {k: t.detach().clone() for k, t in module.state_dict().items()}
            else:
                stall += 1
                if stall >= n_iter_no_change:
                    break
        if verbose and epoch % max(1, max_epochs // 10) == 0:
            print(f"[MixConfig] epoch {epoch}: loss {curve[-1]:.5f}")
    if best_state is not None:
        module.load_state_dict(best_state)
    module.eval()
    return curve, epoch


def state_to_numpy(module):
    return {k: v.detach().cpu().numpy().copy() for k, v in module.state_dict().items()}


def numpy_to_state(module, state):
    module.load_state_dict({k: torch.as_tensor(np.asarray(v)) for k, v in state.items()})
    module.eval()
    return module


__all__ = ["Selector", "train_selector", "single_thread", "state_to_numpy", "numpy_to_state"]
