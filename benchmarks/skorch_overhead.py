"""skorch overhead: the suite's skorch training loops against the hand-written loops they replaced.

``python -m benchmarks skorch_overhead [--quick]``

Each case captures the exact training call of a real ``fit`` (the MixConfig selector on the MixConfig
benchmark's datasets and label fractions; the IV autoencoder on the IV benchmark's G1 design), then
trains the same initial module on the same data twice: with the skorch loop the estimator uses now
(``fit_selector`` / ``fit_autoencoder``) and with the BASELINE, a faithful copy of the hand-written loop
the estimator used before skorch (``train_selector`` of ``configurations/_selector.py`` and the loop of
``iv/_autoencoder.py`` at commit 4783424). Rows report CPU seconds (``time.process_time``, best of
``repeats``, single torch thread), the ratio skorch / baseline (target <= 1.2) and whether the trained
weights are bit-identical.
"""

import argparse
import copy

import numpy as np

from benchmarks._harness import write_results
from benchmarks._timing import timed


# ---------------------------------------------------------------------------------------------------- BASELINE
# A faithful copy of the hand-written selector loop that skorch replaced (train_selector at 4783424); kept here
# only as the timing and equality baseline.
def baseline_train_selector(module, Z, S, stats, y, *, task, max_epochs, batch_size, lr, weight_decay, generator,
                            n_iter_no_change=10, val_idx=None):
    import torch
    from torch import nn

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
    if best_state is not None:
        module.load_state_dict(best_state)
    module.eval()
    return curve, epoch


# A faithful copy of the hand-written IRAE loop that skorch replaced (fit_autoencoder at 4783424, from the
# optimiser on; the warm start before it is unchanged and shared). BASELINE only.
def baseline_train_autoencoder(module, Xt, Zt, wt, scales, lambdas, *, lr, max_epochs, batch_size, generator):
    import torch
    from sklearn_frontier.kernels.iv import hsic_gaussian

    from sklearn_frontier.iv._autoencoder import _weighted_cov

    x_var, tr0, fro0, sigma0 = scales["x_var"], scales["tr0"], scales["fro0"], scales["sigma0"]
    n = Xt.shape[0]
    q = module.WV0.shape[1]
    optimizer = torch.optim.Adam(module.parameters(), lr=lr)
    batch = min(batch_size, n)
    losses = []
    module.train()
    for _ in range(max_epochs):
        order = torch.randperm(n, generator=generator)
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
    return losses


# ------------------------------------------------------------------------------------------------------ cases
def _same_state(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(bool((sa[k] == sb[k]).all()) for k in sa)


def _interleaved_best_cpu(baseline, candidate, repeats):
    """Best CPU seconds of each over ``repeats`` alternating runs (a loaded machine slows both alike)."""
    best, out = [np.inf, np.inf], [None, None]
    for _ in range(repeats):
        for i, func in enumerate((baseline, candidate)):
            t = timed(func)
            out[i], best[i] = t.result, min(best[i], t.cpu_s)
    return best[0], out[0], best[1], out[1]


def _selector_row(name, frac, repeats, validation_fraction):
    """One selector case: capture the real fit's training call, then time both loops on it."""
    import torch
    from sklearn.model_selection import train_test_split

    from benchmarks.mixconfig import _load
    from sklearn_frontier.configurations import MixConfigAugmenter, _selector
    from sklearn_frontier.utils._skorch import IndexSplit

    X, y = _load(name)
    task = "regression" if name in ("diabetes", "two_regime_regression") else "classification"
    # the MixConfig benchmark's split of seed 0
    lab, _ = train_test_split(np.arange(y.shape[0]), train_size=frac,
                              stratify=y if task == "classification" else None, random_state=0)
    y_semi = np.full(y.shape[0], -1, dtype=np.int64) if task == "classification" else np.full(y.shape[0], np.nan)
    y_semi[lab] = y[lab]
    captured = {}
    real = _selector.fit_selector

    def capture(module, *args, **kwargs):
        captured.update(module=copy.deepcopy(module), args=args, kwargs=dict(kwargs),
                        gen_state=kwargs["generator"].get_state())
        return real(module, *args, **kwargs)

    _selector.fit_selector = capture
    try:
        MixConfigAugmenter(random_state=0, validation_fraction=validation_fraction).fit(X, y_semi)
    finally:
        _selector.fit_selector = real
    Z, S, stats, target = captured["args"]
    kw = captured["kwargs"]
    split = kw["train_split"]
    val_idx = None if split is None else split.valid_index

    def run_skorch():
        module = copy.deepcopy(captured["module"])
        gen = torch.Generator()
        gen.set_state(captured["gen_state"])
        module._gen = gen
        call = dict(kw, generator=gen, callbacks=[copy.deepcopy(cb) for cb in kw["callbacks"]])
        if split is not None:
            call["train_split"] = IndexSplit(val_idx)
        with _selector.single_thread():
            net = real(module, Z, S, stats, target, **call)
        return module, len(net.history)

    def run_baseline():
        module = copy.deepcopy(captured["module"])
        gen = torch.Generator()
        gen.set_state(captured["gen_state"])
        module._gen = gen
        with _selector.single_thread():
            _, n_iter = baseline_train_selector(
                module, Z, S, stats, target, task=kw["task"], max_epochs=kw["max_epochs"],
                batch_size=kw["batch_size"], lr=kw["lr"], weight_decay=kw["weight_decay"], generator=gen,
                val_idx=val_idx)
        return module, n_iter

    run_skorch(), run_baseline()  # warm-up (imports, allocator)
    t_base, (m_base, it_base), t_sk, (m_sk, it_sk) = _interleaved_best_cpu(run_baseline, run_skorch, repeats)
    case = f"{name} label_frac={frac}" + ("" if validation_fraction is None
                                          else f" validation_fraction={validation_fraction}")
    return {"model": "selector", "case": case, "n_train": int(len(target) - (0 if val_idx is None else len(val_idx))),
            "epochs": it_sk, "baseline_cpu_s": t_base, "skorch_cpu_s": t_sk, "ratio": t_sk / t_base,
            "ms_per_epoch_overhead": 1e3 * (t_sk - t_base) / max(it_sk, 1),
            "bit_identical": bool(_same_state(m_base, m_sk) and it_base == it_sk)}


def selector_rows(cells, repeats, validation_fraction=None):
    """Rows of the selector cases ``(dataset, label_frac)``."""
    return [_selector_row(name, frac, repeats, validation_fraction) for name, frac in cells]


def autoencoder_rows(repeats, max_epochs):
    """The autoencoder case: the G1 design's training call captured from a real fit, both loops timed."""
    import torch

    from sklearn_frontier.datasets import make_iv_many_treatments
    from sklearn_frontier.iv import InstrumentGuidedRepresentation, _autoencoder

    X, _, Z, _ = make_iv_many_treatments(1500, 20, 3, angle=50, random_state=3)
    captured = {}
    real_cls = _autoencoder.IRAENet

    class Capturing(real_cls):
        def fit(self, X, y=None, **fit_params):
            captured.update(module=copy.deepcopy(self.module), scales=self.scales, lambdas=self.lambdas,
                            dataset=X, gen_state=self.iterator_train__generator.get_state(), lr=self.lr,
                            batch_size=self.batch_size, params=self.get_params(deep=False))
            return super().fit(X, y, **fit_params)

    _autoencoder.IRAENet = Capturing
    try:
        rep = InstrumentGuidedRepresentation(method="autoencoder", max_epochs=max_epochs, random_state=0)
        rep.fit(X, Z=Z)
    finally:
        _autoencoder.IRAENet = real_cls
    data = captured["dataset"].X
    state_sk = rep.module_state_

    def run_skorch():
        gen = torch.Generator()
        gen.set_state(captured["gen_state"])
        params = dict(captured["params"], module=copy.deepcopy(captured["module"]), iterator_train__generator=gen)
        net = real_cls(**params)
        net.fit(captured["dataset"], None)
        return net.module_

    def run_baseline():
        module = copy.deepcopy(captured["module"])
        gen = torch.Generator()
        gen.set_state(captured["gen_state"])
        baseline_train_autoencoder(module, data["x"], data["z"], data["w"], captured["scales"], captured["lambdas"],
                                   lr=captured["lr"], max_epochs=max_epochs, batch_size=captured["batch_size"],
                                   generator=gen)
        return module

    run_skorch(), run_baseline()  # warm-up
    t_base, m_base, t_sk, m_sk = _interleaved_best_cpu(run_baseline, run_skorch, repeats)
    same = _same_state(m_base, m_sk) and all(np.array_equal(v, m_sk.state_dict()[k].numpy())
                                             for k, v in state_sk.items())
    return [{"model": "autoencoder", "case": f"G1 n=1500 p=20 k=3 batch={captured['batch_size']}",
             "n_train": 1500, "epochs": max_epochs, "baseline_cpu_s": t_base, "skorch_cpu_s": t_sk,
             "ratio": t_sk / t_base, "ms_per_epoch_overhead": 1e3 * (t_sk - t_base) / max_epochs,
             "bit_identical": bool(same)}]


CELLS = (("iris", 0.1), ("wine", 0.1), ("breast_cancer", 0.1), ("digits", 0.05), ("two_regime", 0.1),
         ("two_regime_regression", 0.1), ("diabetes", 0.1))


def main(argv=None):
    import torch

    parser = argparse.ArgumentParser(prog="python -m benchmarks skorch_overhead")
    parser.add_argument("--quick", action="store_true", help="fewer cells, 3 repeats")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    repeats = 3 if args.quick else 5
    cells = CELLS[:2] + CELLS[5:6] if args.quick else CELLS
    rows = selector_rows(cells, repeats)
    rows += selector_rows(cells[:1], repeats, validation_fraction=0.25)
    rows += autoencoder_rows(repeats, 10 if args.quick else 30)
    ratios = [r["ratio"] for r in rows]
    rows.append({"model": "all", "case": "max ratio", "ratio": max(ratios)})
    command = "python -m benchmarks skorch_overhead" + (" --quick" if args.quick else "")
    notes = ("CPU seconds (best of repeats, one torch thread); baseline = the hand-written loops that skorch "
             "replaced, embedded in benchmarks/skorch_overhead.py; target ratio <= 1.2.")
    print(write_results("skorch_overhead", rows, command=command, notes=notes,
                        columns=["model", "case", "n_train", "epochs", "baseline_cpu_s", "skorch_cpu_s", "ratio",
                                 "ms_per_epoch_overhead", "bit_identical"], headline=len(rows) - 1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
