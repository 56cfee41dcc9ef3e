"""Instrument-regularised autoencoder (IRAE): warm start, determinism, pickling, effect accuracy, checks."""

import pickle

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_frontier.datasets import make_iv_many_treatments
from sklearn_frontier.iv import InstrumentGuidedIVRegressor, InstrumentGuidedRepresentation
from sklearn_frontier.iv import representation_effect_error as m1_linear


def _ae(**params):
    return InstrumentGuidedRepresentation(method="autoencoder", **{"max_epochs": 3, "hidden_layer_sizes": (8,),
                                                                   "random_state": 0, **params})


@pytest.fixture(scope="module")
def data():
    return make_iv_many_treatments(600, 16, 3, random_state=0)


def test_untrained_network_is_the_linear_representation(data):
    X, _, Z, _ = data
    lin = InstrumentGuidedRepresentation(n_residual_components=4, random_state=0).fit(X, Z=Z)
    ae = _ae(max_epochs=0, n_residual_components=4).fit(X, Z=Z)
    np.testing.assert_allclose(ae.transform(X), lin.transform(X), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ae.transform_residual(X), lin.transform_residual(X), rtol=0, atol=1e-12)
    D, V = lin.transform(X), lin.transform_residual(X)
    np.testing.assert_allclose(ae.inverse_transform(D, V), lin.inverse_transform(D, V), atol=1e-12)
    assert ae.residual_components_.shape == (4, 16) and ae.lambdas_["scale"] == 1.0


def test_seeded_refits_are_bit_identical_and_pickle(data):
    X, _, Z, _ = data
    a, b = _ae().fit(X, Z=Z), _ae().fit(X, Z=Z)
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    assert not np.array_equal(a.transform(X), _ae(random_state=1).fit(X, Z=Z).transform(X))
    restored = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(restored.transform(X), a.transform(X))
    assert len(a.loss_curve_) == 3 and a.n_iter_ == 3


def _decoded_effect_error(reg, X, truth, eps=1e-3):
    """M1 for a non-linear representation: b against the true gain of each decoded unit D-shift."""
    rep = reg.representation_
    D, V = rep._encode(X)
    base = rep._decode(D, V)
    tau = np.array([np.mean((rep._decode(D + eps * e, V) - base) @ truth["coef"]) / eps
                    for e in np.eye(reg.n_components_)])
    return np.linalg.norm(reg.representation_coef_ - tau) / np.linalg.norm(truth["identified_coef"])


def test_effect_error_close_to_linear_on_g1():
    X, y, Z, truth = make_iv_many_treatments(1500, 20, 3, angle=50, random_state=3)
    linear = InstrumentGuidedIVRegressor().fit(X, y, Z=Z)
    ae = InstrumentGuidedIVRegressor(representation=_ae(max_epochs=15, hidden_layer_sizes=(16,), batch_size=256))
    ae.fit(X, y, Z=Z)
    assert ae.representation_.loss_curve_[-1] < ae.representation_.loss_curve_[0]  # it trains
    err_ae, err_lin = _decoded_effect_error(ae, X, truth), m1_linear(linear, truth)
    np.testing.assert_allclose(_decoded_effect_error(linear, X, truth), err_lin, rtol=1e-6)
    assert err_ae <= 2 * err_lin, (err_ae, err_lin)
    rec = ae.recommend_intervention()
    assert rec.shift.shape == (3,) and rec.effect > 0
    assert ae.decode_intervention(X[:4], rec.shift).shape == (4, 20)
    with pytest.raises(ValueError, match="space"):
        ae.intervention_effect(np.ones(20))
    assert not hasattr(ae, "coef_")


def test_bad_autoencoder_params(data):
    X, _, Z, _ = data
    with pytest.raises(ValueError, match="lambdas"):
        _ae(lambdas={"nope": 1.0}).fit(X, Z=Z)
    with pytest.raises(ValueError, match="lambdas"):
        _ae(lambdas={"scale": -1.0}).fit(X, Z=Z)
    import torch

    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device"):
            _ae(device="cuda").fit(X, Z=Z)


AE_XFAILS = {
    "check_sample_weight_equivalence_on_dense_data":
        "minibatch SGD: repeated rows change the batches, so weights are not exactly repeated rows",
}


_N_COMPONENTS_REASON = ("the check sets n_components=1 on a regressor whose representation is an instance: "
                        "a documented ValueError (set n_components on the representation instead)")
REGRESSOR_XFAILS = {**AE_XFAILS, **dict.fromkeys(
    ["check_dont_overwrite_parameters", "check_methods_sample_order_invariance", "check_methods_subset_invariance",
     "check_fit2d_1feature", "check_fit2d_predict1d"], _N_COMPONENTS_REASON)}


@parametrize_with_checks([_ae(), InstrumentGuidedIVRegressor(representation=_ae())],
                         expected_failed_checks=lambda est: REGRESSOR_XFAILS
                         if isinstance(est, InstrumentGuidedIVRegressor) else AE_XFAILS)
def test_autoencoder_passes_sklearn_checks(estimator, check):
    check(estimator)
