"""``quantize_model(checkpoint=...)``: per-layer atomic checkpoints, resume after SIGKILL, damaged files refused."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn_frontier.quantization import _model, quantize_model  # noqa: E402  (torch checked first)

N_LAYERS = 6


def make_net(seed=0):
    torch.manual_seed(seed)
    layers = []
    for _ in range(N_LAYERS):
        layers += [torch.nn.Linear(64, 64), torch.nn.GELU()]
    return torch.nn.Sequential(*layers)


def calibration(seed=1):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(32, 64, generator=gen) for _ in range(2)]


SETTINGS = {"method": "twinquant", "rank": 4, "group_size": 32, "random_state": 0,
            "quantizer_params": {"max_iter": 8}}


def _comparable(record):
    return {k: v for k, v in record.items() if k not in ("fit_time_s", "from_checkpoint")}


def _assert_same_model(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    for key in sa:
        assert sa[key].dtype == sb[key].dtype, key
        assert torch.equal(sa[key], sb[key]), key


CHILD = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {tests!r})
    import test_quantization_checkpoint as t
    from sklearn_frontier.quantization import _model, quantize_model

    original = _model._quantize_layer

    def slow(W, stats, settings):  # same result, slower: leaves time to kill the process between layers
        out = original(W, stats, settings)
        time.sleep(0.4)
        return out

    _model._quantize_layer = slow
    quantize_model(t.make_net(), t.calibration(), checkpoint={folder!r}, **t.SETTINGS)
    print("finished", flush=True)
""")


def test_sigkill_then_resume_gives_the_uninterrupted_model(tmp_path, monkeypatch):
    folder = tmp_path / "ckpt"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(tests=os.path.dirname(__file__),
                                                                 folder=str(folder))],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and child.poll() is None:
        if folder.is_dir() and len(list(folder.glob("layer-*.npz"))) >= 2:
            break
        time.sleep(0.02)
    assert child.poll() is None, child.communicate()
    child.send_signal(signal.SIGKILL)
    child.wait()
    n_done = len(list(folder.glob("layer-*.npz")))
    assert 2 <= n_done < N_LAYERS

    calls = []
    original = _model._quantize_layer
    monkeypatch.setattr(_model, "_quantize_layer", lambda *a: calls.append(1) or original(*a))
    resumed = make_net()
    report = quantize_model(resumed, calibration(), checkpoint=folder, **SETTINGS)
    assert len(calls) == N_LAYERS - n_done  # the layers already on disk are not quantized again
    assert [r["from_checkpoint"] for r in report.layers] == [True] * n_done + [False] * (N_LAYERS - n_done)

    monkeypatch.setattr(_model, "_quantize_layer", original)
    reference = make_net()
    ref_report = quantize_model(reference, calibration(), **SETTINGS)
    _assert_same_model(resumed, reference)
    assert [_comparable(r) for r in report.layers] == [_comparable(r) for r in ref_report.layers]
    x = calibration(seed=7)[0]
    with torch.no_grad():
        assert torch.equal(resumed(x), reference(x))

    # a complete checkpoint: the rerun quantizes nothing (and needs no calibration pass)
    calls.clear()
    monkeypatch.setattr(_model, "_quantize_layer", lambda *a: calls.append(1) or original(*a))
    again = make_net()
    quantize_model(again, None, checkpoint=folder, **SETTINGS)
    assert calls == []
    _assert_same_model(again, reference)


def test_checkpoint_files_are_written_per_layer(tmp_path):
    report = quantize_model(make_net(), calibration(), method="rtn", group_size=32, checkpoint=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"layer-{i:05d}.npz" for i in range(N_LAYERS)]
    assert not any(r["from_checkpoint"] for r in report.layers)
    again = quantize_model(make_net(), calibration(), method="rtn", group_size=32, checkpoint=tmp_path)
    assert all(r["from_checkpoint"] for r in again.layers)


@pytest.mark.parametrize("damage", ["truncate", "flip", "foreign"])
def test_corrupted_checkpoint_is_refused_naming_the_file(tmp_path, damage):
    quantize_model(make_net(), calibration(), method="rtn", group_size=32, checkpoint=tmp_path)
    path = tmp_path / "layer-00002.npz"
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        path.write_bytes(bytes(data[: len(data) // 2]))
    elif damage == "flip":
        data[len(data) // 3] ^= 0xFF
        path.write_bytes(bytes(data))
    else:
        with open(path, "wb") as fh:
            np.save(fh, np.zeros(3))
    with pytest.raises(ValueError, match="layer-00002.npz"):
        quantize_model(make_net(), calibration(), method="rtn", group_size=32, checkpoint=tmp_path)


def test_checkpoint_of_other_arguments_is_refused(tmp_path):
    quantize_model(make_net(), calibration(), method="rtn", group_size=32, checkpoint=tmp_path)
    with pytest.raises(ValueError, match="layer-00000.npz.*other arguments"):
        quantize_model(make_net(), calibration(), method="rtn", group_size=16, checkpoint=tmp_path)
    with pytest.raises(ValueError, match="other arguments or other weights"):
        quantize_model(make_net(seed=5), calibration(), method="rtn", group_size=32, checkpoint=tmp_path)


def test_bad_checkpoint_argument_is_a_clear_error(tmp_path):
    with pytest.raises(TypeError, match="checkpoint must be a folder path"):
        quantize_model(make_net(), None, method="rtn", group_size=32, checkpoint=3)
    file = tmp_path / "not_a_folder"
    file.write_text("x")
    with pytest.raises(ValueError, match="checkpoint must be a folder"):
        quantize_model(make_net(), None, method="rtn", group_size=32, checkpoint=file)
