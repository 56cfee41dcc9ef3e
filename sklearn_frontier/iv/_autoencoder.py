"""Instrument-regularised autoencoder (IRAE, our reconstruction of the method).

Encoder ``D̃ = (x − μ)W₀ + f_D(x̄)``, ``Ṽ = (x − μ)W_V0 + f_V(x̄)``; decoder
``x̂ = μ + D̃W₀ᵀ + ṼW_V0ᵀ + f_g(D̃, Ṽ)``, with tanh MLPs whose output layers start at zero, so the untrained
network equals the linear representation. Loss: reconstruction, first stage (D̃ predicted linearly from Z),
HSIC(Ṽ, Z), HSIC(Û, Z), HSIC(Û, Ṽ) with Û = D̃ − ÂZ, and a scale term that stops the representation from
collapsing. Trained in float64 by :class:`IRAENet`, a :class:`skorch.NeuralNet` whose ``get_loss`` is that
loss; initialisation and batch order come from one local ``torch.Generator`` (never the global RNG). The
estimator keeps the trained weights as a state dict of numpy arrays and rebuilds the module on use.
Imported only for ``method="autoencoder"``.
"""

import copy

import numpy as np
import torch
from torch import nn
from torch.nn.utils import skip_init

from sklearn_frontier.utils._skorch import (
    IndexSplit,
    LeanNet,
    TensorRows,
    check_callbacks,
    check_net_params,
    early_stopping,
    numpy_to_state,
    plain_history,
    resolve_optimizer,
    row_batches,
    state_to_numpy,
)

LOSS_KEYS = ("reconstruction", "first_stage", "hsic_residual_instrument", "hsic_confounder_instrument",
             "hsic_confounder_residual", "scale")


def resolve_lambdas(lambdas):
    out = dict.fromkeys(LOSS_KEYS, 1.0)
    for key, value in (lambdas or {}).items():
        if key not in out:
            raise ValueError(f"Unknown key {key!r} in lambdas; valid keys are {list(LOSS_KEYS)}.")
        if not np.isfinite(value) or value < 0:
            raise ValueError(f"lambdas[{key!r}] must be a finite non-negative number, got {value!r}.")
        out[key] = float(value)
    return out


def _mlp(n_in, n_out, hidden, generator):
    """tanh MLP in float64, hidden layers drawn from ``generator``, output layer zero (starts as 0)."""
    layers, width = [], n_in
    for h in hidden:
        lin = skip_init(nn.Linear, width, h, dtype=torch.float64)  # skip nn.Linear's draw from the global RNG
        bound = 1.0 / np.sqrt(width)
        with torch.no_grad():
            lin.weight.copy_((torch.rand(lin.weight.shape, generator=generator, dtype=torch.float64) * 2 - 1) * bound)
            lin.bias.copy_((torch.rand(lin.bias.shape, generator=generator, dtype=torch.float64) * 2 - 1) * bound)
        layers += [lin, nn.Tanh()]
        width = h
    out = skip_init(nn.Linear, width, n_out, dtype=torch.float64)
    nn.init.zeros_(out.weight)
    nn.init.zeros_(out.bias)
    layers.append(out)
    return nn.Sequential(*layers)


class IRAEModule(nn.Module):
    """Encoder (D̃, Ṽ), decoder x̂ and the linear first-stage head Â."""

    def __init__(self, W0, WV0, mu, scale, n_instruments, hidden, generator):
        super().__init__()
        p, r = W0.shape
        q = WV0.shape[1]
        # Buffers own their memory: a read-only numpy buffer (e.g. unpickled) must never be shared.
        self.register_buffer("mu", torch.as_tensor(mu, dtype=torch.float64).clone())
        self.register_buffer("x_scale", torch.as_tensor(scale, dtype=torch.float64).clone())
        self.W0 = nn.Parameter(torch.as_tensor(W0, dtype=torch.float64).clone())
        self.WV0 = nn.Parameter(torch.as_tensor(WV0, dtype=torch.float64).clone())
        self.f_D = _mlp(p, r, hidden, generator)
        self.f_V = _mlp(p, q, hidden, generator) if q > 0 else None
        self.f_g = _mlp(r + q, p, hidden, generator)
        self.head = skip_init(nn.Linear, n_instruments, r, dtype=torch.float64)  # least squares, set before training

    def encode(self, x):
        xc = x - self.mu
        xs = xc / self.x_scale
        D = xc @ self.W0 + self.f_D(xs)
        V = xc @ self.WV0
        if self.f_V is not None:
            V = V + self.f_V(xs)
        return D, V

    def decode(self, D, V):
        return self.mu + D @ self.W0.T + V @ self.WV0.T + self.f_g(torch.cat([D, V], dim=1))

    def forward(self, x, z):
        """``(D̃, Ṽ, x̂, Û)`` of a batch."""
        D, V = self.encode(x)
        return D, V, self.decode(D, V), D - self.head(z)


def _weighted_cov(A, w):
    mean = (w[:, None] * A).sum(0) / w.sum()
    Ac = A - mean
    return (w[:, None] * Ac).T @ Ac / w.sum()


class IRAENet(LeanNet):
    """skorch net of the IRAE: the weighted IRAE objective in ``get_loss`` (batches hold x, z and weights w).

    ``lambdas`` weigh the terms; ``scales`` holds the warm-start normalisers (x variance, trace and squared
    Frobenius norm of the first-stage covariance, and that covariance ``sigma0``).
    """

    def __init__(self, *args, lambdas, scales, **kwargs):
        super().__init__(*args, **kwargs)
        self.lambdas = lambdas
        self.scales = scales

    def infer(self, x, **fit_params):
        return self.module_(x["x"], x["z"])

    def get_loss(self, y_pred, y_true=None, X=None, training=False):
        from sklearn_frontier.kernels.iv import hsic_gaussian

        D, V, xhat, U = y_pred
        xb, zb, wb = X["x"], X["z"], X["w"]
        s, lam = self.scales, self.lambdas
        m = xb.shape[0]
        wsum = wb.sum().clamp_min(1e-12)
        terms = {
            "reconstruction": (wb * ((xb - xhat) ** 2).sum(1)).sum() / wsum / s["x_var"],
            "first_stage": (wb * (U**2).sum(1)).sum() / wsum / s["tr0"],
            "scale": ((_weighted_cov(D, wb) - s["sigma0"]) ** 2).sum() / s["fro0"] if m > 1 else D.sum() * 0,
        }
        if m >= 8:
            terms["hsic_confounder_instrument"] = hsic_gaussian(U, zb)
            if V.shape[1] > 0:
                terms["hsic_residual_instrument"] = hsic_gaussian(V, zb)
                terms["hsic_confounder_residual"] = hsic_gaussian(U, V)
        loss = D.sum() * 0  # every active weight zero: a zero loss (zero gradients, Adam leaves the weights)
        for key, value in terms.items():
            if lam[key] > 0:
                loss = loss + lam[key] * value
        return loss


def _build_module(rep, generator, scale):
    return IRAEModule(rep.components_.T, rep.residual_components_.T, rep.mean_, scale, rep.n_instruments_,
                      tuple(int(h) for h in rep.hidden_layer_sizes), generator)


def _callbacks(rep):
    """The user's callbacks (copies) and, with a validation split, early stopping on its loss."""
    callbacks = [copy.deepcopy(cb) for cb in check_callbacks(rep.callbacks)]
    if rep.validation_fraction is not None and rep.n_iter_no_change is not None:
        callbacks.append(("early_stopping", early_stopping(rep.n_iter_no_change)))
    return callbacks


def fit_autoencoder(rep, X, Z, w):
    """Train the IRAE on (X, Z); store ``module_state_``, ``history_``, ``lambdas_``, ``n_iter_``, ``loss_curve_``."""
    from sklearn_frontier.utils._random import spawn_seeds

    lambdas = resolve_lambdas(rep.lambdas)
    if any(int(h) < 1 for h in rep.hidden_layer_sizes):
        raise ValueError(f"hidden_layer_sizes must hold positive integers, got {rep.hidden_layer_sizes!r}.")
    device = torch.device(rep.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={rep.device!r} was requested but CUDA is not available.")
    optimizer = resolve_optimizer(rep.optimizer)
    net_params = check_net_params(rep.net_params)
    callbacks = _callbacks(rep)
    n, p = X.shape
    seed, split_seed = spawn_seeds(rep.random_state, 2)
    generator = torch.Generator().manual_seed(int(seed))
    std = X.std(axis=0)
    std[std == 0] = 1.0
    module = _build_module(rep, generator, std).to(device)
    to = lambda a: torch.tensor(np.array(a, dtype=np.float64, order="C"), device=device)  # noqa: E731 (copy: X may be read-only)
    Xt, Zt, wt = to(X), to(Z - rep.z_mean_), to(w)
    with torch.no_grad():
        D0, _ = module.encode(Xt)
        # least-squares first stage on the warm start, D0 ≈ Z Â + c (numpy: torch's CPU lstsq is not
        # bit-reproducible, and Adam amplifies last-bit differences)
        sw = np.sqrt(w)[:, None]
        Zaug = np.column_stack([Z - rep.z_mean_, np.ones(n)]) * sw
        coef = to(np.linalg.lstsq(Zaug, D0.cpu().numpy() * sw, rcond=None)[0])
        module.head.weight.copy_(coef[:-1].T)
        module.head.bias.copy_(coef[-1])
        sigma0 = _weighted_cov(D0, wt)
        x_var = ((wt[:, None] * (Xt - module.mu) ** 2).sum() / wt.sum()).clamp_min(1e-12)
        scales = {"x_var": x_var, "tr0": torch.trace(sigma0).clamp_min(1e-12),
                  "fro0": (sigma0**2).sum().clamp_min(1e-24), "sigma0": sigma0}
    if "train_split" not in net_params:
        split = None
        if rep.validation_fraction is not None:
            n_valid = int(np.ceil(rep.validation_fraction * n))
            if n_valid < 1 or n - n_valid < 2:
                raise ValueError(f"validation_fraction={rep.validation_fraction} leaves no validation row or fewer "
                                 f"than 2 training rows out of {n}.")
            valid = np.random.RandomState(split_seed).permutation(n)[:n_valid]
            split = IndexSplit(np.sort(valid))
        net_params["train_split"] = split
    net_params.setdefault("callbacks__print_log", None)  # silent: skip formatting skorch's epoch table
    batch = min(rep.batch_size, n)
    net = IRAENet(module, criterion=nn.Module, optimizer=optimizer, lr=rep.lr, max_epochs=rep.max_epochs,
                  batch_size=batch, iterator_train=row_batches, iterator_valid=row_batches,
                  iterator_train__shuffle=True, iterator_train__generator=generator,
                  iterator_train__shuffle_single_batch=True, callbacks=callbacks, device=rep.device, verbose=0,
                  lambdas=lambdas, scales=scales, **net_params)
    dataset = TensorRows({"x": Xt, "z": Zt, "w": wt})
    if rep.max_epochs > 0:
        net.fit(dataset, None)
        history = plain_history(net.history)
    else:
        net.initialize()
        history = []
    module.eval()
    rep.module_state_ = state_to_numpy(net.module_)
    rep.history_ = history
    rep.lambdas_ = lambdas
    rep.n_iter_ = len(history)
    rep.loss_curve_ = [row["train_loss"] for row in history]
    if history and "valid_loss" in history[0]:
        rep.validation_loss_curve_ = [row["valid_loss"] for row in history]


def _module(rep):
    # the shapes only: weights and buffers (μ, the x scale) come from the stored state dict
    return numpy_to_state(_build_module(rep, torch.Generator().manual_seed(0), np.ones_like(rep.mean_)),
                          rep.module_state_)


def encode(rep, X):
    """(D̃, Ṽ) as float64 numpy arrays."""
    with torch.no_grad():
        D, V = _module(rep).encode(torch.tensor(np.array(X, dtype=np.float64, order="C")))
    return D.numpy().copy(), V.numpy().copy() if V.ndim == 2 else np.zeros((X.shape[0], 0))


def decode(rep, D, V):
    """Treatments x̂ from coordinates (D̃, Ṽ)."""
    with torch.no_grad():
        out = _module(rep).decode(torch.tensor(np.array(D, dtype=np.float64, order="C")),
                                  torch.tensor(np.array(V, dtype=np.float64, order="C")))
    return out.numpy().copy()
