"""Row-wise quantized embedding tables: codes, rounding bound, gathered decode, model workflow, save/load."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn_frontier.quantization import (  # noqa: E402
    QuantizedEmbedding,
    TwinQuantLinear,
    load_quantized,
    quantize_model,
    save_quantized,
)


class _TinyEncoder(torch.nn.Module):
    def __init__(self, vocab=50, d=64):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, d)
        self.proj = torch.nn.Linear(d, 64)

    def forward(self, ids):
        return self.proj(self.tokens(ids)).mean(dim=1)


@pytest.mark.parametrize("n_bits", [4, 8])
@pytest.mark.parametrize("group_size", [None, 16])
def test_codes_round_to_nearest_within_half_a_step(n_bits, group_size):
    torch.manual_seed(0)
    table = torch.nn.Embedding(40, 37)  # odd width: a ragged last group and a half-filled last byte
    q = QuantizedEmbedding.from_embedding(table, n_bits=n_bits, group_size=group_size)
    W = table.weight.detach().double()
    W_hat = q.dequantize().double()
    g = 37 if group_size is None else group_size
    step = q.scales.double().repeat_interleave(g, dim=1)[:, :37]
    # round-to-nearest with the stored (float16) scale: |w - q s| <= s / 2, and the scale covers the group's max
    # up to the float16 rounding of the scale itself (a relative 2^-11), hence the small slack
    qmax = 127 if n_bits == 8 else 7
    assert bool(((W - W_hat).abs() <= step / 2 + W.abs() * 2.0**-10 + 1e-12).all())
    assert bool((W_hat.abs() <= step * qmax + 1e-12).all())
    ids = torch.tensor([[0, 5, 39], [7, 7, 1]])
    np.testing.assert_array_equal(q(ids).numpy(), q.dequantize()[ids].numpy())  # gathered decode == table rows
    assert q.memory_bits() == 40 * (37 * n_bits + 16 * q.n_groups)


def test_quantize_model_replaces_tables_after_the_calibration_pass_and_round_trips(tmp_path):
    torch.manual_seed(0)
    net = _TinyEncoder()
    ids = torch.randint(0, 50, (4, 6))
    with torch.no_grad():
        ref = net(ids)
    report = quantize_model(net, [ids], method="rtn", group_size=32, embedding_bits=8)
    assert isinstance(net.tokens, QuantizedEmbedding) and isinstance(net.proj, TwinQuantLinear)
    assert [r["method"] for r in report.layers] == ["RTNQuantizer", "QuantizedEmbedding"]
    assert report.layers[1]["weight_relative_error"] < 1e-3
    with torch.no_grad():
        out = net(ids)
    assert float(((out - ref) ** 2).sum() / (ref**2).sum()) < 1e-2
    path = save_quantized(net, tmp_path / "net.safetensors")
    fresh = load_quantized(_TinyEncoder(), path)
    assert isinstance(fresh.tokens, QuantizedEmbedding)
    with torch.no_grad():
        np.testing.assert_array_equal(fresh(ids).numpy(), out.numpy())
    assert set(net.tokens.state_dict()) == {"codes", "scales"}


def test_tables_alone_and_bad_settings():
    net = torch.nn.Sequential(torch.nn.Embedding(10, 8))
    report = quantize_model(net, embedding_bits=4)
    assert isinstance(net[0], QuantizedEmbedding) and len(report.layers) == 1
    with pytest.raises(ValueError, match="embedding_bits"):
        quantize_model(torch.nn.Sequential(torch.nn.Embedding(10, 8)), embedding_bits=3)
    with pytest.raises(ValueError, match="n_bits"):
        QuantizedEmbedding(10, 8, n_bits=2)
    with pytest.raises(ValueError, match="group_size"):
        QuantizedEmbedding(10, 8, group_size=0)
    # tables are left in float unless asked for
    net = _TinyEncoder()
    quantize_model(net, method="rtn", group_size=32)
    assert isinstance(net.tokens, torch.nn.Embedding)
