"""Instrument-regularised autoencoder (IRAE, our reconstruction; ``shared/design/iv.md`` §2.8).

Encoder ``D̃ = (x − μ)W₀ + f_D(x̄)``, ``Ṽ = (x − μ)W_V0 + f_V(x̄)``; decoder
``x̂ = μ + D̃W₀ᵀ + ṼW_V0ᵀ + f_g(D̃, Ṽ)``, with tanh MLPs whose output layers start at zero, so the untrained
network equals the linear representation. Loss: reconstruction, first stage (D̃ predicted linearly from Z),
HSIC(Ṽ, Z), HSIC(Û, Z), HSIC(Û, Ṽ) with Û = D̃ − ÂZ, and a scale term that stops the representation from
collapsing. Trained in float64 with Adam and a local ``torch.Generator`` (deterministic, never the global RNG).
Imported only for ``method="autoencoder"``.
"""

import numpy as np
import torch
from torch import nn

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
        lin = nn.Linear(width, h, dtype=torch.float64)
        bound = 1.0 / np.sqrt(width)
        with torch.no_grad():
            lin.weight.copy_((torch.rand(lin.weight.shape, generator=generator, dtype=torch.float64) * 2 - 1) * bound)
            lin.bias.copy_((torch.rand(lin.bias.shape, generator=generator, dtype=torch.float64) * 2 - 1) * bound)
        layers += [lin, nn.Tanh()]
        width = h
    out = nn.Linear(width, n_out, dtype=torch.float64)
    nn.init.zeros_(out.weight)
    nn.init.zeros_(out.bias)
    layers.append(out)
    return nn.Sequential(*layers)


class IRAEModule(nn.Module):
    """Encoder (D̃, Ṽ), decoder x̂ and the linear first-stage head Â (module level so that it pickles)."""

    def __init__(self, W0, WV0, mu, scale, n_instruments, hidden, generator):
        super().__init__()
        p, r = W0.shape
        q = WV0.shape[1]
        self.register_buffer("mu", torch.as_tensor(mu, dtype=torch.float64))
        self.register_buffer("x_scale", torch.as_tensor(scale, dtype=torch.float64))
        self.W0 = nn.Parameter(torch.as_tensor(W0, dtype=torch.float64).clone())
        self.WV0 = nn.Parameter(torch.as_tensor(WV0, dtype=torch.float64).clone())
        self.f_D = _mlp(p, r, hidden, generator)
        self.f_V = _mlp(p, q, hidden, generator) if q > 0 else None
        self.f_g = _mlp(r + q, p, hidden, generator)
        self.head = nn.Linear(n_instruments, r, dtype=torch.float64)  # set to least squares before training

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


def _weighted_cov(A, w):
    mean = (w[:, None] * A).sum(0) / w.sum()
    Ac = A - mean
    return (w[:, None] * Ac).T @ Ac / w.sum()


def fit_autoencoder(rep, X, Z, w):
    """Train the IRAE on (X, Z) and store ``module_``, ``lambdas_``, ``n_iter_``, ``loss_curve_`` on ``rep``."""
    from sklearn_frontier.kernels.iv import hsic_gaussian
    from sklearn_frontier.utils._random import torch_generator

    lambdas = resolve_lambdas(rep.lambdas)
    if any(int(h) < 1 for h in rep.hidden_layer_sizes):
        raise ValueError(f"hidden_layer_sizes must hold positive integers, got {rep.hidden_layer_sizes!r}.")
    device = torch.device(rep.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={rep.device!r} was requested but CUDA is not available.")
    n, p = X.shape
    r, q, k = rep.n_components_, rep.residual_components_.shape[0], Z.shape[1]
    generator = torch_generator(rep.random_state)
    std = X.std(axis=0)
    std[std == 0] = 1.0
    module = IRAEModule(rep.components_.T, rep.residual_components_.T, rep.mean_, std, k,
                        tuple(int(h) for h in rep.hidden_layer_sizes), generator).to(device)
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
        tr0 = torch.trace(sigma0).clamp_min(1e-12)
        fro0 = (sigma0**2).sum().clamp_min(1e-24)
        x_var = (wt[:, None] * (Xt - module.mu) ** 2).sum() / wt.sum()
        x_var = x_var.clamp_min(1e-12)
    optimizer = torch.optim.Adam(module.parameters(), lr=rep.lr)
    batch = min(rep.batch_size, n)
    losses = []
    module.train()
    for _ in range(rep.max_epochs):
        order = torch.randperm(n, generator=generator).to(device)
        epoch_loss = 0.0
        for start in range(0, n, batch):
            idx = order[start:start + batch]
            xb, zb, wb = Xt[idx], Zt[idx], wt[idx]
            m = idx.shape[0]
            D, V = module.encode(xb)
            xhat = module.decode(D, V)
            wsum = wb.sum().clamp_min(1e-12)
            U = D - module.head(zb)
            terms = {
                "reconstruction": (wb * ((xb - xhat) ** 2).sum(1)).sum() / wsum / x_var,
                "first_stage": (wb * (U**2).sum(1)).sum() / wsum / tr0,
                "scale": ((_weighted_cov(D, wb) - sigma0) ** 2).sum() / fro0 if m > 1 else D.sum() * 0,
            }
            if m >= 8:
                terms["hsic_confounder_instrument"] = hsic_gaussian(U, zb)
                if q > 0:
                    terms["hsic_residual_instrument"] = hsic_gaussian(V, zb)
                    terms["hsic_confounder_residual"] = hsic_gaussian(U, V)
            loss = sum(lambdas[key] * value for key, value in terms.items() if lambdas[key] > 0)
            if not torch.is_tensor(loss):
                continue  # every active weight is zero
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_loss += float(loss.detach()) * m
        losses.append(epoch_loss / n)
    module.eval()
    rep.module_ = module.cpu()
    rep.lambdas_ = lambdas
    rep.n_iter_ = rep.max_epochs
    rep.loss_curve_ = losses


def encode(rep, X):
    """(D̃, Ṽ) as float64 numpy arrays."""
    with torch.no_grad():
        D, V = rep.module_.encode(torch.tensor(np.array(X, dtype=np.float64, order="C")))
    return D.numpy().copy(), V.numpy().copy() if V.ndim == 2 else np.zeros((X.shape[0], 0))


def decode(rep, D, V):
    """Treatments x̂ from coordinates (D̃, Ṽ)."""
    with torch.no_grad():
        out = rep.module_.decode(torch.tensor(np.array(D, dtype=np.float64, order="C")),
                                 torch.tensor(np.array(V, dtype=np.float64, order="C")))
    return out.numpy().copy()
