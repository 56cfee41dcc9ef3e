"""The measured CPU dispatch of TwinQuantLinear: decisions cached per CPU, shape and thread count; a corrupt
cache is ignored with a warning; a path outside the accuracy contract is never picked; off/reset switches."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn_frontier.quantization import RTNQuantizer, TwinQuantLinear, _cpu_dispatch, quantize_model  # noqa: E402


@pytest.fixture(autouse=True)
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(_cpu_dispatch.ENV, raising=False)
    _cpu_dispatch.clear_memo()
    yield tmp_path / "cache"
    _cpu_dispatch.clear_memo()


def _layer(m=48, n=64, act_quant="int8"):
    W = np.random.default_rng(0).standard_normal((m, n)).astype(np.float32)
    return TwinQuantLinear.from_quantized(RTNQuantizer(group_size=32).fit(W).quantize(), bias=torch.zeros(m),
                                          act_quant=act_quant)


def _stored(cache_home):
    return json.loads((cache_home / "sklearn_frontier" / "quantization_dispatch.json").read_text())


def test_decisions_are_cached_per_cpu_shape_and_threads(cache_home, monkeypatch):
    monkeypatch.setattr(_cpu_dispatch, "cpu_model", lambda: "CPU A")
    mod = _layer()
    with torch.no_grad():
        mod(torch.randn(3, 64))
    (rec,) = mod.dispatch_table_
    assert rec.source == "measured" and rec.bucket == "2-8" and mod.last_path_ == rec.path
    keys = list(_stored(cache_home))
    assert len(keys) == 1 and "CPU A" in keys[0] and "48x64" in keys[0] and "threads=" in keys[0]
    # a fresh process (memory forgotten) on the same CPU reads the file
    _cpu_dispatch.clear_memo()
    fresh = _layer()
    with torch.no_grad():
        fresh(torch.randn(5, 64))
    assert fresh.dispatch_table_[0].source == "cache" and fresh.last_path_ == rec.path
    # another CPU, another shape, another thread count: each measured and stored under its own key
    monkeypatch.setattr(_cpu_dispatch, "cpu_model", lambda: "CPU B")
    other = _layer()
    with torch.no_grad():
        other(torch.randn(3, 64))
    assert other.dispatch_table_[0].source == "measured"
    wide = _layer(m=32, n=96)
    with torch.no_grad():
        wide(torch.randn(3, 96))
    threads = torch.get_num_threads()
    torch.set_num_threads(threads + 1)
    try:
        with torch.no_grad():
            wide(torch.randn(3, 96))
        assert wide.dispatch_table_[0].source == "measured"
    finally:
        torch.set_num_threads(threads)
    keys = list(_stored(cache_home))
    assert len(keys) == 4 and sum("CPU B" in k for k in keys) == 3
    assert {f"threads={threads}", f"threads={threads + 1}"} <= {p for k in keys for p in k.split(" | ")}


def test_corrupt_cache_file_is_ignored_with_a_warning(cache_home):
    path = cache_home / "sklearn_frontier" / "quantization_dispatch.json"
    path.parent.mkdir(parents=True)
    path.write_text("{ not json")
    mod = _layer()
    with pytest.warns(UserWarning, match="ignoring the quantized-kernel dispatch cache"), torch.no_grad():
        mod(torch.randn(1, 64))
    assert mod.dispatch_table_[0].source == "measured"
    assert len(_stored(cache_home)) == 1  # rewritten, readable again


def test_a_fast_path_outside_the_accuracy_contract_is_never_picked(monkeypatch):
    monkeypatch.setenv(_cpu_dispatch.ENV, "reset")  # measured here, whatever another test stored
    mod = _layer()
    with torch.no_grad():
        mod(torch.randn(1, 64))  # prepared
    plan = mod._fast.plan
    wrong = torch.zeros(1)

    def fast_but_wrong(x2):
        return wrong.expand(x2.shape[0], 48) + 1.0

    plan.runners["torch_int4"] = fast_but_wrong
    plan.choice.clear()
    _cpu_dispatch.clear_memo()
    for M in (1, 5, 30, 100):
        with torch.no_grad():
            mod(torch.randn(M, 64))
        assert mod.last_path_ != "torch_int4"
    for rec in mod.dispatch_table_:
        assert "torch_int4" in rec.excluded and rec.rel_err["torch_int4"] > rec.tolerance
        assert all(rec.rel_err[p] <= rec.tolerance for p in rec.times_ms if p not in rec.excluded)


def test_decide_picks_the_fastest_inside_the_contract():
    def exact(x):
        return x @ torch.ones(8, 4)

    def slow_exact(x):
        import time

        time.sleep(0.002)
        return exact(x)

    def quick_noise(x):
        return exact(x) + 1e3

    rec = _cpu_dispatch.decide("toy", {"dequantize": slow_exact, "bad": quick_noise, "good": exact}, exact, 8, 1, 1)
    assert rec.path == "good" and rec.excluded == ("bad",) and rec.prepare_ms > 0


def test_off_uses_the_fixed_fallback_and_writes_nothing(cache_home, monkeypatch):
    monkeypatch.setenv(_cpu_dispatch.ENV, "off")
    mod = _layer()
    with torch.no_grad():
        mod(torch.randn(1, 64))
        first = mod.last_path_
        mod(torch.randn(40, 64))
    assert [r.source for r in mod.dispatch_table_] == ["fallback", "fallback"]
    assert first == "w4a8" and mod.last_path_ in ("int8", "dequantize")
    assert not (cache_home / "sklearn_frontier").exists()


def test_reset_measures_again(cache_home, monkeypatch):
    mod = _layer()
    with torch.no_grad():
        mod(torch.randn(1, 64))
    _cpu_dispatch.clear_memo()
    monkeypatch.setenv(_cpu_dispatch.ENV, "reset")
    again = _layer()
    with torch.no_grad():
        again(torch.randn(1, 64))
    assert again.dispatch_table_[0].source == "measured"


def test_quantize_model_workflow_dispatch_is_inspectable():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 32))
    x = torch.randn(20, 64)
    ref = net(x).detach()
    quantize_model(net, [torch.randn(32, 64)], method="rtn", group_size=32)
    with torch.no_grad():
        y = net(x)
    for layer in (net[0], net[2]):
        (rec,) = layer.dispatch_table_
        assert rec.bucket == "9-64" and layer.last_path_ == rec.path
        assert set(rec.times_ms) >= {"dequantize"} and all(v > 0 for v in rec.times_ms.values())
    assert float(((y - ref) ** 2).sum() / (ref**2).sum()) < 0.05


def test_forcing_a_path_the_layer_cannot_run_is_an_error():
    mod = _layer(act_quant=None)
    with _cpu_dispatch.force_path("w4a8"), pytest.raises(ValueError, match="cannot run this layer"):
        mod(torch.randn(1, 64))
