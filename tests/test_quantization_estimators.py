"""Known answers for RTN / SVD / TwinQuant / WUSH: identities, planted structure, orderings, bad input."""

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV

from sklearn_frontier.datasets import make_outlier_activations, make_outlier_weights
from sklearn_frontier.quantization import (
    CalibrationStats,
    RTNQuantizer,
    SVDQuantizer,
    TwinQuant,
    WUSHQuantizer,
)
from sklearn_frontier.utils._compat import InvalidParameterError


@pytest.fixture(scope="module")
def outlier_layer():
    W, _ = make_outlier_weights(128, 256, random_state=0)
    X, info = make_outlier_activations(1024, 256, random_state=1)
    return W, X, info["sample"](1024, 2)


def test_twinquant_rank0_no_transform_is_rtn():
    W = np.random.default_rng(0).standard_normal((32, 64))
    a = TwinQuant(rank=0, residual_transform="none", group_size=32, max_iter=5).fit_transform(W)
    b = RTNQuantizer(group_size=32).fit_transform(W)
    np.testing.assert_array_equal(a, b)


def test_twinquant_without_iterations_is_svd(outlier_layer):
    W, X, _ = outlier_layer
    a = TwinQuant(rank=8, residual_transform="none", max_iter=0).fit(W, X_calib=X)
    b = SVDQuantizer(rank=8).fit(W, X_calib=X)
    np.testing.assert_array_equal(a.transform(W), b.transform(W))
    assert a.bits_per_weight_ == b.bits_per_weight_


def test_quantizer_off_reconstructs_exactly():
    import torch

    from sklearn_frontier.quantization._formats import FormatSpec
    from sklearn_frontier.quantization._twinquant import twinquant_loss

    rng = np.random.default_rng(0)
    W = torch.tensor(rng.standard_normal((12, 32)))
    V = torch.linalg.qr(torch.tensor(rng.standard_normal((32, 3))))[0]
    B, tau = torch.tensor(rng.standard_normal((12, 3))), torch.tensor(rng.standard_normal(32))
    J = twinquant_loss(W, V, B, tau, None, float((W * W).sum()), FormatSpec("int", 4, 16), quantize=False)
    assert float(J) < 1e-24


def test_planted_low_rank_reproduced_to_fp16_precision():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((40, 4)) @ rng.standard_normal((4, 64))
    for est in (SVDQuantizer(rank=4, group_size=32), TwinQuant(rank=4, group_size=32, max_iter=10,
                                                             random_state=0)):
        est.fit(W)
        assert est.reconstruction_error_ < 1e-6, type(est).__name__  # fp16 factors: ~(2^-11)^2 relative


def test_scale_equivariance_is_exact(outlier_layer):
    W, X, _ = outlier_layer
    for est in (RTNQuantizer(), SVDQuantizer(rank=4), TwinQuant(rank=4, max_iter=5, random_state=0)):
        a = est.fit(W, X_calib=X).transform(W)
        b = est.fit(4 * W, X_calib=X).transform(4 * W)
        np.testing.assert_array_equal(4 * a, b)


def test_seeded_and_rowwise(outlier_layer):
    W, X, _ = outlier_layer
    a = TwinQuant(rank=4, max_iter=10, random_state=3).fit(W, X_calib=X)
    b = TwinQuant(rank=4, max_iter=10, random_state=3).fit(W, X_calib=X)
    np.testing.assert_array_equal(a.transform(W), b.transform(W))
    idx = np.array([5, 0, 77, 5])
    np.testing.assert_array_equal(a.transform(W[idx]), a.transform(W)[idx])
    # unseen rows are projected on the fitted subspace and quantized with the fitted transform
    new = W[:3] * (1 + 1e-3)
    err = np.sum((a.transform(new) - new) ** 2) / np.sum(new**2)
    assert err < 0.05


def test_best_iterate_never_worse_than_init(outlier_layer):
    W, X, _ = outlier_layer
    for lr in (1e-2, 10.0):  # a huge step diverges; the stored result still falls back to the init
        est = TwinQuant(rank=8, max_iter=15, learning_rate=lr, subspace_learning_rate=lr / 10,
                        random_state=0).fit(W, X_calib=X)
        assert est.reconstruction_error_ <= est.init_error_
        assert est.n_iter_ >= 1 and len(est.loss_curve_) == est.n_iter_ + 1


def test_orderings_on_outlier_layer(outlier_layer):
    W, X, X_test = outlier_layer
    test_err = lambda est: -est.score(W, X_calib=X_test)  # noqa: E731
    rtn = RTNQuantizer().fit(W, X_calib=X)
    rtn16 = RTNQuantizer(group_size=16).fit(W, X_calib=X)
    svd = SVDQuantizer(rank=8).fit(W, X_calib=X)
    it_svd = SVDQuantizer(rank=8, n_refinements=4).fit(W, X_calib=X)
    smooth = SVDQuantizer(rank=8, smooth=True).fit(W, X_calib=X)
    tq_none = TwinQuant(rank=8, residual_transform="none", max_iter=150, random_state=0).fit(W, X_calib=X)
    tq = TwinQuant(rank=8, max_iter=40, random_state=0).fit(W, X_calib=X)
    # same (r, g): RTN > SVD >= iterative SVD > TwinQuant, on calibration and on fresh tokens
    for err in (lambda e: e.reconstruction_error_, test_err):
        assert err(rtn) > err(svd) >= err(it_svd) > err(tq)
    # exactly equal bits: TwinQuant(none) vs SVD, TwinQuant(diag T) vs smoothed SVD (diag T too)
    assert tq_none.bits_per_weight_ == svd.bits_per_weight_ and test_err(tq_none) < test_err(svd)
    assert tq.bits_per_weight_ == smooth.bits_per_weight_ and test_err(tq) < test_err(smooth)
    # exactly equal bits with RTN at group 16 (5.0 bpw): rank 4 (the planted rank) + diag T at group 128
    tq4 = TwinQuant(rank=4, max_iter=40, random_state=0).fit(W, X_calib=X)
    smooth4 = SVDQuantizer(rank=4, smooth=True).fit(W, X_calib=X)
    assert tq4.bits_per_weight_ == rtn16.bits_per_weight_ == smooth4.bits_per_weight_
    assert test_err(rtn16) > test_err(smooth4) > test_err(tq4)


def test_output_objective_beats_weight_objective(outlier_layer):
    W, X, X_test = outlier_layer
    out = TwinQuant(rank=8, max_iter=30, random_state=0).fit(W, X_calib=X)
    wgt = TwinQuant(rank=8, max_iter=30, objective="weight", random_state=0).fit(W, X_calib=X)
    assert out.objective_ == "output" and wgt.objective_ == "weight"
    assert -out.score(W, X_calib=X_test) < -wgt.score(W, X_calib=X_test)


def test_calibration_stats_equal_activations(outlier_layer):
    W, X, _ = outlier_layer
    stats = CalibrationStats(X.shape[1])
    for chunk in np.array_split(X, 3):
        stats.update(chunk)
    np.testing.assert_allclose(stats.gram_, X.T @ X / len(X), rtol=1e-12, atol=1e-15)
    a = SVDQuantizer(rank=4, activation_aware=True).fit(W, X_calib=X)
    b = SVDQuantizer(rank=4, activation_aware=True).fit(W, X_calib=stats)
    np.testing.assert_allclose(a.transform(W), b.transform(W), rtol=1e-3, atol=1e-4)


def test_grid_search_over_rank_with_calibration_stats(outlier_layer):
    W, X, _ = outlier_layer
    stats = CalibrationStats.from_activations(X)
    search = GridSearchCV(SVDQuantizer(), {"rank": [0, 8]}, cv=3).fit(W, X_calib=stats)
    assert search.best_params_ == {"rank": 8}


def test_float16_and_torch_inputs():
    import torch

    W = np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32)
    ref = RTNQuantizer(group_size=16).fit_transform(W)
    np.testing.assert_array_equal(RTNQuantizer(group_size=16).fit_transform(torch.from_numpy(W)), ref)
    out16 = RTNQuantizer(group_size=16).fit_transform(W.astype(np.float16))
    assert out16.dtype == np.float32
    outbf = RTNQuantizer(group_size=16).fit_transform(torch.from_numpy(W).to(torch.bfloat16))
    assert outbf.shape == W.shape


@pytest.mark.parametrize("kwargs,X_calib,match", [
    ({"group_size": 24}, None, "group_size"),
    ({"weight_format": "mxfp4", "n_bits": 4, "group_size": 16}, None, "group_size"),
    ({"weight_format": "nvfp4", "symmetric": False}, None, "symmetric"),
    ({}, np.ones((5, 3)), "X_calib"),
    ({}, np.ones(64), "X_calib"),
    ({}, np.full((5, 64), np.nan), "X_calib"),
    ({"act_bits": 4}, None, "act_bits"),
])
def test_bad_input_names_the_argument(kwargs, X_calib, match):
    W = np.random.default_rng(0).standard_normal((8, 64))
    with pytest.raises(ValueError, match=match):
        RTNQuantizer(**kwargs).fit(W, X_calib=X_calib)


def test_bad_parameters_and_weights():
    W = np.random.default_rng(0).standard_normal((8, 64))
    with pytest.raises(InvalidParameterError):
        TwinQuant(rank=-1).fit(W)
    with pytest.raises(InvalidParameterError):
        TwinQuant(retraction="exp").fit(W)
    with pytest.raises(ValueError, match="n_bits"):
        RTNQuantizer(n_bits=5).fit(W)
    with pytest.raises(ValueError):
        RTNQuantizer().fit(W[0])
    bad = W.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError):
        SVDQuantizer().fit(bad)


def test_formats_through_estimators(outlier_layer):
    W, X, _ = outlier_layer
    for fmt in ("mxfp4", "nvfp4"):
        rtn = RTNQuantizer(weight_format=fmt).fit(W, X_calib=X)
        tq = TwinQuant(weight_format=fmt, rank=8, max_iter=20, random_state=0).fit(W, X_calib=X)
        assert tq.reconstruction_error_ < rtn.reconstruction_error_


# ------------------------------------------------------------------------------------------------ WUSH
def test_wush_second_moment_identities():
    from sklearn_frontier.quantization._wush import sylvester_hadamard, wush_block_transform

    rng = np.random.default_rng(0)
    m, B = 20, 8
    Wb = rng.standard_normal((m, B))
    A = rng.standard_normal((200, B)) * np.arange(1, B + 1)
    H = A.T @ A / 200
    T, Tinv = wush_block_transform(Wb, H, "wush", damping=0.0, eigen_damping=0.0)
    np.testing.assert_allclose(Tinv, np.linalg.inv(T), atol=1e-10)
    act = T @ H @ T.T
    wgt = Tinv.T @ Wb.T @ Wb @ Tinv / m
    np.testing.assert_allclose(act, wgt, atol=1e-8)
    had = sylvester_hadamard(B)
    s = np.linalg.eigvalsh(had.T @ act @ had)
    np.testing.assert_allclose(np.sort(s), np.sort(np.linalg.svd(np.linalg.cholesky(H).T @ Wb.T,
                                                                compute_uv=False) / np.sqrt(m)), rtol=1e-8)
    x = rng.standard_normal(B)
    np.testing.assert_allclose((Wb @ Tinv) @ (T @ x), Wb @ x, atol=1e-10)


def test_wush_edge_cases_finite():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((4, 64))  # m < B
    W[:, 32:] = 0.0  # an all-zero block
    est = WUSHQuantizer().fit(W, X_calib=rng.standard_normal((100, 64)))
    assert np.all(np.isfinite(est.transform(W)))
    np.testing.assert_array_equal(est.transforms_[1], np.eye(32, dtype=np.float16))


def test_wush_w4a4_ordering(outlier_layer):
    W, X, X_test = outlier_layer
    errs = {}
    for kind in ("identity", "hadamard", "wush"):
        est = WUSHQuantizer(block_transform=kind, act_bits=4).fit(W, X_calib=X)
        errs[kind] = -est.score(W, X_calib=X_test)
    assert errs["identity"] > errs["hadamard"] > errs["wush"]


@pytest.mark.parametrize("Quantizer", [TwinQuant, WUSHQuantizer, SVDQuantizer, RTNQuantizer])
def test_calibration_passed_by_position_is_refused(Quantizer):
    """``fit(W, X)`` puts the activations in the y slot: refused loudly, not quantized without them."""
    rng = np.random.default_rng(0)
    W, X = rng.standard_normal((16, 32)), rng.standard_normal((64, 32))
    with pytest.raises(TypeError, match="X_calib"):
        Quantizer().fit(W, X)
    Quantizer().fit(W, X_calib=X)
    Quantizer().fit(W, np.zeros(16))  # a 1-D y (scikit-learn's checks pass one) stays ignored


def test_clipped_rank_and_costly_small_layers_warn():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((10, 64))
    with pytest.warns(UserWarning, match="rank=100.*using rank 9") as record:
        SVDQuantizer(rank=100).fit(W)
    assert record[0].filename == __file__
    with pytest.warns(UserWarning, match="bits per weight"):
        TwinQuant(rank=8, max_iter=2).fit(W)  # an 8-rank fp16 branch on a 10-row weight
