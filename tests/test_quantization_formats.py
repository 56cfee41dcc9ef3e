"""Block formats, packing and bit accounting: hand-computed known answers."""

import numpy as np
import pytest
from sklearn_frontier.kernels.quantization import pack_int4, unpack_int4

from sklearn_frontier.quantization import RTNQuantizer, SVDQuantizer, TwinQuant, WUSHQuantizer
from sklearn_frontier.quantization._formats import (
    FormatSpec,
    bits_per_weight,
    dequantize_groups,
    e2m1_encode,
    e4m3_decode,
    e4m3_encode,
    group_size_for_budget,
    quantize_groups,
    rank_for_budget,
)


def test_int4_spec_example():
    fmt = FormatSpec("int", 4, 4)
    codes, scales, zeros = quantize_groups(np.array([[0.7, -0.35, 0.1, 0.0]]), fmt)
    assert zeros is None
    # INT group scales are bfloat16 (what torch's int4 kernel multiplies by); 0.1 is stored as
    # 0.10009765625, so -0.35 / s = -3.497 rounds to -3 (the design's float16 example gave -4).
    np.testing.assert_array_equal(codes, [[7, -3, 1, 0]])
    assert scales.dtype == np.float32 and scales[0, 0] == np.float32(0.10009765625)


def test_values_on_grid_round_trip_exactly():
    rng = np.random.default_rng(0)
    s = np.float16(0.125)
    q = rng.integers(-7, 8, size=(5, 32))  # AbsMax scale amax/7: the symmetric grid is -7..7
    q[:, 0] = 7  # the group max defines the scale
    W = q * float(s)
    fmt = FormatSpec("int", 4, 32)
    codes, scales, zeros = quantize_groups(W, fmt)
    np.testing.assert_array_equal(dequantize_groups(codes, scales, zeros, fmt), W.astype(np.float32))


def test_e2m1_tie_table_and_saturation():
    vals = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0, -5.0, -0.25])
    mags = np.array([0, .5, 1, 1.5, 2, 3, 4, 6])[e2m1_encode(vals) & 7]
    np.testing.assert_array_equal(mags, [0, 1, 1, 2, 2, 4, 4, 6, 4, 0])
    assert e2m1_encode(np.array([-5.0]))[0] == 8 + 6 and e2m1_encode(np.array([-0.25]))[0] == 0


def test_mxfp4_block_with_amax_5():
    fmt = FormatSpec("mxfp4", 4, 32)
    row = np.zeros((1, 32))
    row[0, :3] = [5.0, 1.0, -2.5]
    codes, scales, _ = quantize_groups(row, fmt)
    assert scales[0, 0] == 127  # X = 2^(floor(log2 5) - 2) = 1
    np.testing.assert_array_equal(dequantize_groups(codes, scales, None, fmt)[0, :3], [4.0, 1.0, -2.0])


def test_nvfp4_scales_by_hand():
    fmt = FormatSpec("nvfp4", 4, 16)
    row = np.zeros((1, 32))
    row[0, 0], row[0, 16] = 6.0, 3.0
    s_t = np.float32(6.0 / (6 * 448))
    codes, scales, _ = quantize_groups(row, fmt, s_t)
    np.testing.assert_array_equal(e4m3_decode(scales), [[448.0, 224.0]])
    np.testing.assert_allclose(dequantize_groups(codes, scales, None, fmt, s_t)[0, [0, 16]], [6.0, 3.0], rtol=1e-6)


def test_e4m3_codec_round_trip_and_rounding():
    grid = e4m3_decode(np.arange(0, 127, dtype=np.uint8))  # every finite non-negative E4M3 value (no NaN)
    np.testing.assert_array_equal(e4m3_decode(e4m3_encode(grid)), grid)
    assert e4m3_decode(e4m3_encode(np.array([1000.0])))[0] == 448.0


def test_pack_unpack_all_nibbles_and_odd_width():
    codes = np.arange(-8, 8, dtype=np.int8)[None, :].repeat(3, axis=0)
    np.testing.assert_array_equal(unpack_int4(pack_int4(codes), 16, True), codes)
    odd = np.random.default_rng(0).integers(0, 16, size=(4, 7)).astype(np.int8)
    packed = pack_int4(odd)
    assert packed.shape == (4, 4)
    np.testing.assert_array_equal(unpack_int4(packed, 7, False), odd)


def test_asymmetric_codes_in_range_and_better_on_shifted_data():
    rng = np.random.default_rng(0)
    W = rng.random((6, 64)) + 2.0
    fmt = FormatSpec("int", 4, 32, symmetric=False)
    codes, scales, zeros = quantize_groups(W, fmt)
    assert codes.min() >= 0 and codes.max() <= 15 and zeros.dtype == np.uint8
    asym = RTNQuantizer(group_size=32, symmetric=False).fit(W)
    sym = RTNQuantizer(group_size=32).fit(W)
    assert asym.reconstruction_error_ < sym.reconstruction_error_


def test_zero_and_single_element_groups_exact_and_ragged_tail():
    fmt = FormatSpec("int", 4, 1)
    W = np.array([[0.0, 3.0, -1.5], [0.0, 0.0, 0.0]])
    codes, scales, zeros = quantize_groups(W, fmt)
    # group scale = bfloat16(|w| / 7): 8 significant bits, so a relative error of at most 2^-9 (2^-8 with margin)
    np.testing.assert_allclose(dequantize_groups(codes, scales, zeros, fmt), W, rtol=2.0**-8)
    assert np.all(dequantize_groups(codes, scales, zeros, fmt)[1] == 0)
    # A ragged last group equals an explicitly zero-padded group.
    rng = np.random.default_rng(1)
    W = rng.standard_normal((4, 40))
    fmt = FormatSpec("int", 4, 32)
    padded = np.hstack([W, np.zeros((4, 24))])
    a = dequantize_groups(*quantize_groups(W, fmt), fmt)
    b = dequantize_groups(*quantize_groups(padded, fmt), fmt)[:, :40]
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("fmt,expected", [
    (FormatSpec("int", 4, 128), 4.125), (FormatSpec("int", 4, 64), 4.25), (FormatSpec("int", 4, 32), 4.5),
    (FormatSpec("int", 4, 16), 5.0), (FormatSpec("int", 4, 128, symmetric=False), 4.15625),
    (FormatSpec("mxfp4", 4, 32), 4.25), (FormatSpec("nvfp4", 4, 16), 4.5)])
def test_bits_per_weight_spec_values(fmt, expected):
    m = n = 4096
    extra = (64 if fmt.weight_format == "nvfp4" else 32) / (m * n)
    assert bits_per_weight(m, n, fmt) == pytest.approx(expected + extra, abs=1e-12)


def test_lowrank_and_transform_accounting():
    g128 = FormatSpec("int", 4, 128)
    base = bits_per_weight(384, 384, g128)
    assert bits_per_weight(384, 384, g128, rank=8) - base == pytest.approx(8 * 768 * 16 / 384**2)  # 0.667
    assert bits_per_weight(1536, 384, g128, rank=8) - bits_per_weight(1536, 384, g128) == pytest.approx(0.41667,
                                                                                                        abs=1e-4)
    assert bits_per_weight(384, 384, g128, transform="diag") - base == pytest.approx(16 / 384)
    assert bits_per_weight(384, 384, g128, transform="block") - base == pytest.approx(512 / 384)
    assert group_size_for_budget(4096, 4096, 4.6) == 32
    r = rank_for_budget(4096, 4096, 4.125 + 0.25 + 1e-5, g128)
    assert r == 32


def test_estimator_bits_match_hand_counts():
    W = np.random.default_rng(0).standard_normal((64, 128))
    m, n = W.shape
    rtn = RTNQuantizer(group_size=32).fit(W)
    assert rtn.bits_per_weight_ * m * n == 4 * m * n + 16 * m * 4 + 32
    svd = SVDQuantizer(rank=4, group_size=32).fit(W)
    assert svd.bits_per_weight_ * m * n == 4 * m * n + 16 * m * 4 + 32 + 4 * (m + n) * 16
    tq = TwinQuant(rank=4, group_size=32, max_iter=2).fit(W)
    assert tq.bits_breakdown_["transform"] == 16 * n
    wush = WUSHQuantizer().fit(W)
    assert wush.bits_breakdown_["transform"] == 16 * n * 32
    assert WUSHQuantizer(block_transform="hadamard").fit(W).bits_breakdown_["transform"] == 0


def test_round_bfloat16_and_weight_magnitude_known_values():
    from sklearn_frontier.quantization._formats import check_weight_magnitude, round_bfloat16

    assert float(round_bfloat16(np.array([0.1]))[0]) == 0.10009765625  # 0.1 to 8 significant bits
    assert check_weight_magnitude(np.full((2, 2), 3.0)) == (3.0, 3.0)
