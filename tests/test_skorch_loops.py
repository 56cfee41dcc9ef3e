"""The skorch training loops of the IV autoencoder and the MixConfig selector.

history_ contents, net_params/callbacks/optimizer validation, early stopping with best-weights restore,
LR schedules, optimizer choice, validation splits, determinism, skops round trips of the trained
weights, clone/get_params, and bit-equality with the hand-written loops the nets replaced
(``benchmarks/skorch_overhead.py`` keeps those as the baseline).
"""

import copy

import numpy as np
import pytest
import torch
from sklearn.base import clone
from skorch.callbacks import EarlyStopping, LRScheduler
from skorch.dataset import ValidSplit
from torch.optim.lr_scheduler import StepLR

from sklearn_frontier.configurations import MixConfigAugmenter
from sklearn_frontier.datasets import make_iv_many_treatments, make_two_regime_hierarchy
from sklearn_frontier.iv import InstrumentGuidedRepresentation
from sklearn_frontier.utils._skorch import (
    IndexSplit,
    TensorRows,
    check_net_params,
    row_batches,
)


@pytest.fixture(scope="module")
def iv_data():
    X, _, Z, _ = make_iv_many_treatments(300, 8, 2, random_state=0)
    return X, Z


@pytest.fixture(scope="module")
def semi_data():
    X, y, _ = make_two_regime_hierarchy(n_per_subblob=20, n_per_coarse=120, random_state=0)
    labelled = np.random.RandomState(0).permutation(y.shape[0])[:60]
    y_semi = np.full_like(y, -1)
    y_semi[labelled] = y[labelled]
    return X, y_semi


def _ae(**params):
    return InstrumentGuidedRepresentation(method="autoencoder", **{"max_epochs": 6, "hidden_layer_sizes": (8,),
                                                                   "batch_size": 64, "random_state": 0, **params})


def _mix(**params):
    return MixConfigAugmenter(**{"n_resolutions": 12, "n_restarts": 1, "max_epochs": 20, "random_state": 0,
                                 **params})


def _same_state(a, b):
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


# ---------------------------------------------------------------------------------------------- history_
def test_autoencoder_history_records_epochs_and_losses(iv_data):
    X, Z = iv_data
    rep = _ae(validation_fraction=0.2, n_iter_no_change=None).fit(X, Z=Z)
    h = rep.history_
    assert [row["epoch"] for row in h] == list(range(1, 7)) and rep.n_iter_ == 6
    for row in h:
        assert {"train_loss", "valid_loss", "train_loss_best", "valid_loss_best", "dur", "train_batch_count",
                "valid_batch_count"} <= set(row)
        assert np.isfinite(row["train_loss"]) and np.isfinite(row["valid_loss"]) and row["dur"] >= 0
        assert row["train_batch_count"] == 4 and row["valid_batch_count"] == 1  # 240 rows in 64s, 60 in one
        assert all(isinstance(v, (int, float, bool)) for v in row.values())
    assert rep.loss_curve_ == [row["train_loss"] for row in h]
    assert rep.validation_loss_curve_ == [row["valid_loss"] for row in h]
    for key in ("train_loss", "valid_loss"):  # *_best marks a new running minimum
        values = [row[key] for row in h]
        assert [row[key + "_best"] for row in h] == [v < min(values[:i], default=np.inf)
                                                   for i, v in enumerate(values)]
    assert h[-1]["train_loss"] < h[0]["train_loss"]


def test_autoencoder_history_without_validation_has_no_valid_loss(iv_data):
    X, Z = iv_data
    rep = _ae(max_epochs=2).fit(X, Z=Z)
    assert len(rep.history_) == 2 and "valid_loss" not in rep.history_[0]
    assert not hasattr(rep, "validation_loss_curve_")
    assert _ae(max_epochs=0).fit(X, Z=Z).history_ == []


def test_selector_history_and_validation_split(semi_data):
    X, y_semi = semi_data
    aug = _mix(validation_fraction=0.25, n_iter_no_change=None).fit(X, y_semi)
    assert [row["epoch"] for row in aug.history_] == list(range(1, 21)) and aug.n_iter_ == 20
    assert all({"train_loss", "valid_loss", "dur"} <= set(row) for row in aug.history_)
    assert aug.loss_curve_ == [row["train_loss"] for row in aug.history_]
    plain = _mix().fit(X, y_semi)
    assert "valid_loss" not in plain.history_[0]
    # the held-out rows do not train: the weights differ from the fit on every labelled row
    assert not _same_state(aug.module_state_, plain.module_state_)


# ------------------------------------------------------------------------------ parameter validation
@pytest.mark.parametrize("bad, error, match", [
    ({"nope": 1}, ValueError, "Unknown key 'nope' in net_params"),
    ({"module": torch.nn.Linear}, ValueError, r"net_params\['module'\]"),
    ({"criterion": torch.nn.MSELoss}, ValueError, r"net_params\['criterion'\]"),
    ({"lr": 0.1}, ValueError, r"net_params\['lr'\]"),
    ({"max_epochs": 3}, ValueError, r"net_params\['max_epochs'\]"),
    ({"callbacks": []}, ValueError, r"net_params\['callbacks'\]"),
    ({1: 2}, TypeError, "net_params keys must be strings"),
    ({"train_split": 0.2}, TypeError, r"net_params\['train_split'\] must be None or a callable"),
])
def test_bad_net_params_name_the_parameter(iv_data, semi_data, bad, error, match):
    X, Z = iv_data
    with pytest.raises(error, match=match):
        _ae(net_params=bad).fit(X, Z=Z)
    Xs, ys = semi_data
    with pytest.raises(error, match=match):
        _mix(net_params=bad).fit(Xs, ys)


def test_bad_callbacks_and_optimizer_name_the_parameter(iv_data, semi_data):
    X, Z = iv_data
    Xs, ys = semi_data
    for make, args in ((_ae, (X,)), (_mix, (Xs, ys))):
        kw = {"Z": Z} if make is _ae else {}
        with pytest.raises(TypeError, match="callbacks must hold skorch.callbacks.Callback"):
            make(callbacks=[object()]).fit(*args, **kw)
        with pytest.raises(TypeError, match="optimizer must be one of"):
            make(optimizer=dict).fit(*args, **kw)
        with pytest.raises(ValueError, match="optimizer"):
            make(optimizer="adagrad-ish").fit(*args, **kw)


def test_check_net_params_accepts_prefixed_keys():
    out = check_net_params({"optimizer__momentum": 0.9, "iterator_train__shuffle": False,
                            "callbacks__print_log": None, "train_split": None})
    assert out == {"optimizer__momentum": 0.9, "iterator_train__shuffle": False, "callbacks__print_log": None,
                   "train_split": None}
    assert check_net_params(None) == {}


# ------------------------------------------------------------------------------------------- callbacks
def test_autoencoder_early_stopping_stops_and_restores_best_epoch(iv_data):
    X, Z = iv_data
    patience = 2
    common = {"lr": 0.05, "validation_fraction": 0.3}
    stopped = _ae(max_epochs=200, n_iter_no_change=patience, **common).fit(X, Z=Z)
    valid = np.array(stopped.validation_loss_curve_)
    best = int(np.argmin(valid)) + 1
    assert stopped.n_iter_ < 200, "early stopping never fired"
    assert stopped.n_iter_ == best + patience
    # the restored weights are those after the best epoch: a run of exactly that many epochs on the same
    # split (no early stopping) ends with bit-identical weights
    ref = _ae(max_epochs=best, n_iter_no_change=None, **common).fit(X, Z=Z)
    assert _same_state(stopped.module_state_, ref.module_state_)
    last = _ae(max_epochs=stopped.n_iter_, n_iter_no_change=None, **common).fit(X, Z=Z)
    assert not _same_state(stopped.module_state_, last.module_state_)


def test_selector_early_stopping_restores_best_epoch(semi_data):
    X, y_semi = semi_data
    stopped = _mix(max_epochs=300, lr=0.05, validation_fraction=0.3, n_iter_no_change=3).fit(X, y_semi)
    valid = np.array([row["valid_loss"] for row in stopped.history_])
    best = int(np.argmin(valid)) + 1
    assert stopped.n_iter_ < 300 and stopped.n_iter_ == best + 3
    ref = _mix(max_epochs=best, lr=0.05, validation_fraction=0.3, n_iter_no_change=None).fit(X, y_semi)
    assert _same_state(stopped.module_state_, ref.module_state_)


def test_user_early_stopping_callback_and_its_copy(iv_data):
    X, Z = iv_data
    cb = EarlyStopping(monitor="train_loss", patience=1, threshold=10.0, threshold_mode="rel")
    rep = _ae(max_epochs=50, callbacks=[cb]).fit(X, Z=Z)
    assert rep.n_iter_ == 2  # no epoch improves by 1000 %: stops after patience=1 miss
    assert cb.misses_ == 0 and cb.dynamic_threshold_ is None, "fit must train a copy of the user's callback"


def test_lr_scheduler_changes_the_learning_rate(iv_data, semi_data):
    X, Z = iv_data
    sched = LRScheduler(policy=StepLR, step_size=1, gamma=0.5)
    rep = _ae(lr=0.01, callbacks=[sched]).fit(X, Z=Z)
    lrs = [row["event_lr"] for row in rep.history_]
    np.testing.assert_allclose(lrs, 0.01 * 0.5 ** np.arange(6), rtol=1e-12)
    assert not _same_state(rep.module_state_, _ae(lr=0.01).fit(X, Z=Z).module_state_)
    Xs, ys = semi_data
    aug = _mix(lr=0.02, callbacks=[("lr", LRScheduler(policy=StepLR, step_size=5, gamma=0.1))]).fit(Xs, ys)
    lrs = [row["event_lr"] for row in aug.history_]
    np.testing.assert_allclose(lrs, 0.02 * 0.1 ** (np.arange(20) // 5), rtol=1e-12)


# ------------------------------------------------------------------------------------------- optimizer
def test_optimizer_choice_and_options(iv_data, semi_data):
    X, Z = iv_data
    adam = _ae().fit(X, Z=Z).module_state_
    sgd = _ae(optimizer="sgd", lr=1e-2).fit(X, Z=Z).module_state_
    assert not _same_state(adam, sgd)
    assert _same_state(sgd, _ae(optimizer=torch.optim.SGD, lr=1e-2).fit(X, Z=Z).module_state_)
    momentum = _ae(optimizer="sgd", lr=1e-2, net_params={"optimizer__momentum": 0.9}).fit(X, Z=Z).module_state_
    assert not _same_state(sgd, momentum)
    Xs, ys = semi_data
    a = _mix(optimizer="adamw").fit(Xs, ys).module_state_
    b = _mix(optimizer=torch.optim.AdamW).fit(Xs, ys).module_state_
    assert _same_state(a, b) and not _same_state(a, _mix().fit(Xs, ys).module_state_)


def test_train_split_from_net_params_overrides_validation_fraction(iv_data):
    X, Z = iv_data
    rep = _ae(max_epochs=2, validation_fraction=0.5, n_iter_no_change=None,
              net_params={"train_split": ValidSplit(5)}).fit(X, Z=Z)
    # ValidSplit(5) holds out 60 of 300 rows: one validation batch, 240 training rows in 4 batches of 64
    assert rep.history_[0]["train_batch_count"] == 4 and "valid_loss" in rep.history_[0]


# ----------------------------------------------------------------------------------------- determinism
def test_same_random_state_gives_bit_identical_weights(iv_data, semi_data):
    X, Z = iv_data
    for params in ({}, {"validation_fraction": 0.2}):
        a, b = _ae(**params).fit(X, Z=Z), _ae(**params).fit(X, Z=Z)
        assert _same_state(a.module_state_, b.module_state_)
        assert not _same_state(a.module_state_, _ae(random_state=1, **params).fit(X, Z=Z).module_state_)
    Xs, ys = semi_data
    a, b = _mix(dropout=0.2, batch_size=16).fit(Xs, ys), _mix(dropout=0.2, batch_size=16).fit(Xs, ys)
    assert _same_state(a.module_state_, b.module_state_)


def test_training_does_not_touch_the_global_torch_rng(iv_data, semi_data):
    X, Z = iv_data
    Xs, ys = semi_data
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    _ae(validation_fraction=0.2).fit(X, Z=Z)
    assert torch.equal(before, torch.random.get_rng_state())
    _mix(validation_fraction=0.2, dropout=0.1, batch_size=16).fit(Xs, ys)
    assert torch.equal(before, torch.random.get_rng_state())


# ----------------------------------------------------------------------------------------- persistence
def test_skops_round_trip_of_trained_weights(iv_data, semi_data, tmp_path):
    skops_io = pytest.importorskip("skops.io")
    from sklearn_frontier import persistence

    X, Z = iv_data
    Xs, ys = semi_data
    for name, est, data in (("ae", _ae().fit(X, Z=Z), X), ("mix", _mix().fit(Xs, ys), Xs)):
        assert all(isinstance(v, np.ndarray) for v in est.module_state_.values())
        assert not any(isinstance(v, torch.nn.Module) for v in vars(est).values())
        path = tmp_path / f"{name}.skops"
        persistence.dump(est, path)
        untrusted = skops_io.get_untrusted_types(file=path)
        assert not [t for t in untrusted if "torch" in t or "skorch" in t], untrusted
        restored = persistence.load(path)
        assert _same_state(restored.module_state_, est.module_state_)
        np.testing.assert_array_equal(restored.transform(data), est.transform(data))
        assert restored.history_ == est.history_


# ------------------------------------------------------------------------------------ clone/get_params
def test_clone_and_get_params_keep_skorch_controls(iv_data):
    X, Z = iv_data
    cbs = [LRScheduler(policy=StepLR, step_size=2, gamma=0.5)]
    est = _ae(callbacks=cbs, net_params={"optimizer__weight_decay": 1e-3}, optimizer="adamw",
              validation_fraction=0.2)
    params = est.get_params()
    assert params["callbacks"] is cbs and params["net_params"] == {"optimizer__weight_decay": 1e-3}
    twin = clone(est)
    assert twin.get_params()["optimizer"] == "adamw" and twin.get_params()["validation_fraction"] == 0.2
    assert twin.callbacks is not cbs and type(twin.callbacks[0]) is LRScheduler
    assert _same_state(twin.fit(X, Z=Z).module_state_, est.fit(X, Z=Z).module_state_)
    aug = _mix(callbacks=[EarlyStopping(patience=2)], net_params={"optimizer__amsgrad": True})
    assert clone(aug).get_params()["net_params"] == {"optimizer__amsgrad": True}


# ------------------------------------------------------------------------------------ loaders, splits
def test_row_batches_cover_rows_and_subsets_materialise():
    data = TensorRows({"x": torch.arange(10.0)[:, None]}, torch.arange(10))
    gen = torch.Generator().manual_seed(0)
    batches = list(row_batches(data, batch_size=4, shuffle=True, generator=gen))
    assert [len(b[0]) for b in batches] == [4, 4, 2]
    assert sorted(torch.cat([b[1] for b in batches]).tolist()) == list(range(10))
    train, valid = IndexSplit([7, 2])(data)
    assert valid.y.tolist() == [7, 2] and train.y.tolist() == [0, 1, 3, 4, 5, 6, 8, 9]
    nested = torch.utils.data.Subset(torch.utils.data.Subset(data, [9, 8, 7, 6]), [3, 0])
    (xb, yb), = list(row_batches(nested))
    assert yb.tolist() == [6, 9] and xb["x"][:, 0].tolist() == [6.0, 9.0]
    with pytest.raises(ValueError, match="torch.Generator"):
        row_batches(data, shuffle=True)
    with pytest.raises(TypeError, match="TensorRows"):
        row_batches(torch.utils.data.TensorDataset(torch.zeros(3)))


# --------------------------------------------------------------------- equality with the former loops
def test_selector_net_equals_the_former_hand_written_loop(semi_data):
    baseline = pytest.importorskip("benchmarks.skorch_overhead")
    from sklearn_frontier.configurations import _selector

    X, y_semi = semi_data
    captured = {}
    real = _selector.fit_selector

    def capture(module, *args, **kwargs):
        captured.update(module=copy.deepcopy(module), args=args, kwargs=kwargs,
                        state=kwargs["generator"].get_state())
        return real(module, *args, **kwargs)

    _selector.fit_selector = capture
    try:
        fitted = _mix(validation_fraction=0.3, n_iter_no_change=3, max_epochs=60, lr=0.05, batch_size=16,
                      dropout=0.1).fit(X, y_semi)
    finally:
        _selector.fit_selector = real
    module = captured["module"]
    gen = torch.Generator()
    gen.set_state(captured["state"])
    module._gen = gen
    kw = captured["kwargs"]
    with _selector.single_thread():
        curve, n_iter = baseline.baseline_train_selector(
            module, *captured["args"], task=kw["task"], max_epochs=kw["max_epochs"], batch_size=kw["batch_size"],
            lr=kw["lr"], weight_decay=kw["weight_decay"], generator=gen, n_iter_no_change=3,
            val_idx=kw["train_split"].valid_index)
    assert n_iter == fitted.n_iter_
    np.testing.assert_allclose(curve, fitted.loss_curve_, rtol=1e-12)
    assert _same_state({k: v.numpy() for k, v in module.state_dict().items()}, fitted.module_state_)


def test_autoencoder_net_equals_the_former_hand_written_loop():
    baseline = pytest.importorskip("benchmarks.skorch_overhead")
    (row,) = baseline.autoencoder_rows(repeats=1, max_epochs=3)  # captures a real fit, reruns both loops
    assert row["bit_identical"] and row["epochs"] == 3
