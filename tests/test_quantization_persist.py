"""``save_quantized`` / ``load_quantized``: a damaged or foreign file, or a skeleton of other widths, is an error
naming the file or the layer; never a model that loads wrong."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from sklearn_frontier.quantization import load_quantized, quantize_model, save_quantized  # noqa: E402


def _net(out=512):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(256, out), torch.nn.GELU(), torch.nn.Linear(out, 16))


@pytest.fixture
def saved(tmp_path):
    net = _net()
    quantize_model(net, method="rtn", group_size=32)
    return net, save_quantized(net, tmp_path / "net.safetensors")


def test_round_trip_is_exact(saved):
    net, path = saved
    fresh = load_quantized(_net(), path)
    x = torch.randn(3, 256)
    assert torch.equal(fresh(x), net(x))


def _data_offset(path):
    raw = open(path, "rb").read()
    return 8 + int.from_bytes(raw[:8], "little"), raw


def test_flipped_byte_in_tensor_data_is_refused(saved):
    _, path = saved
    start, raw = _data_offset(path)
    data = bytearray(raw)
    pos = start + (len(raw) - start) // 2
    data[pos:pos + 8] = bytes(b ^ 0x5A for b in data[pos:pos + 8])
    open(path, "wb").write(bytes(data))
    with pytest.raises(ValueError, match="net.safetensors is damaged.*SHA-256"):
        load_quantized(_net(), path)


def test_truncated_file_names_the_file(saved):
    _, path = saved
    raw = open(path, "rb").read()
    open(path, "wb").write(raw[: len(raw) - 100])
    with pytest.raises(ValueError, match="net.safetensors"):
        load_quantized(_net(), path)


def test_truncated_header_names_the_file(saved):
    _, path = saved
    raw = open(path, "rb").read()
    open(path, "wb").write(raw[:40])
    with pytest.raises(ValueError, match="cannot read .*net.safetensors"):
        load_quantized(_net(), path)


def test_foreign_file_names_the_file(tmp_path):
    from safetensors.torch import save_file

    path = tmp_path / "other.safetensors"
    save_file({"w": torch.ones(2)}, str(path))
    with pytest.raises(ValueError, match="other.safetensors was not written by save_quantized"):
        load_quantized(_net(), path)
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"not a safetensors file at all")
    with pytest.raises(ValueError, match="junk.safetensors"):
        load_quantized(_net(), junk)


def test_skeleton_of_other_widths_names_layer_and_shapes(saved):
    _, path = saved
    with pytest.raises(ValueError, match=r"layer '0'.*\(512, 256\).*\(384, 256\)"):
        load_quantized(_net(out=384), path)


def test_missing_module_names_it(saved):
    _, path = saved
    with pytest.raises(ValueError, match="no module named '2'"):
        load_quantized(torch.nn.Sequential(torch.nn.Linear(256, 512)), path)


def test_checksum_record_is_per_tensor(saved):
    from safetensors import safe_open

    _, path = saved
    with safe_open(str(path), framework="pt") as f:
        meta, keys = f.metadata(), set(f.keys())
    record = json.loads(meta["sha256"])
    assert set(record) == keys and all(len(v) == 64 for v in record.values())


def test_file_without_checksums_loads_with_a_warning(saved, tmp_path):
    from safetensors import safe_open
    from safetensors.torch import save_file

    net, path = saved
    with safe_open(str(path), framework="pt") as f:
        meta = dict(f.metadata())
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    meta.pop("sha256")
    meta["format"] = "sklearn_frontier.quantized_model/1"
    old = tmp_path / "old.safetensors"
    save_file(tensors, str(old), metadata=meta)
    with pytest.warns(UserWarning, match="old.safetensors was written without checksums"):
        fresh = load_quantized(_net(), old)
    x = torch.randn(2, 256)
    np.testing.assert_array_equal(fresh(x).numpy(), net(x).numpy())
