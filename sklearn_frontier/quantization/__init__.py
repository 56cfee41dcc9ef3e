"""Weight quantization: TwinQuant (learned low-rank + 4-bit residual), WUSH, SVD+RTN and RTN baselines.

All quantizers are scikit-learn transformers over a weight matrix ``W`` (out_features x in_features):
``fit(W, X_calib=...)`` learns how to store it, ``transform(W)`` returns the dequantized weight,
``score`` the negative relative output error, ``quantize()`` the stored :class:`QuantizedWeight`, which
``TwinQuantLinear.from_quantized`` packs into a module.
"""

from sklearn_frontier._registry import register_demo, register_estimator

from ._calibration import CalibrationStats
from ._formats import (
    FormatSpec,
    QuantizedWeight,
    bits_breakdown,
    bits_per_weight,
    dequantize_weight,
    group_size_for_budget,
    rank_for_budget,
)
from ._rtn import RTNQuantizer
from ._svd import SVDQuantizer
from ._twinquant import TwinQuant
from ._wush import WUSHQuantizer


def __dir__():
    return sorted(set(globals()) | set(__all__))


def __getattr__(name):  # torch-based module parts load lazily
    if name == "TwinQuantLinear":
        from . import _linear

        return getattr(_linear, name)
    if name in ("quantize_model", "QuantizationReport"):
        from . import _model

        return getattr(_model, name)
    if name == "QuantizedEmbedding":
        from . import _embedding

        return getattr(_embedding, name)
    if name in ("save_quantized", "load_quantized"):
        from . import _persist

        return getattr(_persist, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "TwinQuant",
    "RTNQuantizer",
    "SVDQuantizer",
    "WUSHQuantizer",
    "CalibrationStats",
    "QuantizedWeight",
    "TwinQuantLinear",
    "QuantizedEmbedding",
    "quantize_model",
    "QuantizationReport",
    "save_quantized",
    "load_quantized",
    "FormatSpec",
    "dequantize_weight",
    "bits_per_weight",
    "bits_breakdown",
    "group_size_for_budget",
    "rank_for_budget",
]

register_estimator(TwinQuant, method="quantization", task="unsupervised_transform", search_grid={"rank": [1, 2]},
                   fast_params={"max_iter": 3, "n_iter_no_change": 2, "random_state": 0})
register_estimator(SVDQuantizer, method="quantization", task="unsupervised_transform",
                   search_grid={"rank": [1, 2]}, baseline=True)
register_estimator(RTNQuantizer, method="quantization", task="unsupervised_transform",
                   search_grid={"group_size": [2, 4]}, baseline=True)
register_estimator(WUSHQuantizer, method="quantization", task="unsupervised_transform",
                   search_grid={"group_size": [2, 4]}, baseline=True)


def _demo(random_state):
    """Every quantizer of the suite (TwinQuant, WUSH, RTN) vs SVD+RTN on one synthetic outlier layer (output error
    at ~equal bits)."""
    import time

    from sklearn.pipeline import make_pipeline

    from sklearn_frontier.datasets._quantization import make_outlier_activations, make_outlier_weights

    W, _ = make_outlier_weights(128, 256, random_state=random_state)
    X, info = make_outlier_activations(1024, 256, random_state=random_state)
    X_test = info["sample"](1024, 12345)
    rows = []
    base = SVDQuantizer(rank=8, group_size=128, random_state=random_state).fit(W, X_calib=X)
    base_score = base.score(W, X_calib=X_test)
    for est in (TwinQuant(rank=8, group_size=128, residual_transform="none", max_iter=60,
                          random_state=random_state), WUSHQuantizer(group_size=32, block_size=8),
                RTNQuantizer(group_size=16)):
        start = time.perf_counter()
        pipe = make_pipeline(est).fit(W, **{f"{type(est).__name__.lower()}__X_calib": X})
        rows.append({"estimator": f"{type(est).__name__} ({est.bits_per_weight_:.3f} bpw)",
                     "task": "weight quantization", "metric": "-rel. output error (test tokens)",
                     "score": float(pipe[-1].score(W, X_calib=X_test)),
                     "baseline": f"SVDQuantizer ({base.bits_per_weight_:.3f} bpw)",
                     "baseline_score": float(base_score), "fit_time": time.perf_counter() - start})
    return rows


def _demo_minilm(random_state):
    """All 36 linear layers of all-MiniLM-L6-v2 quantized (TwinQuant rank 8, a short data-free fit): encode
    latency of one short text and of 16 texts vs fp32, with size and cosine."""
    from ._model import minilm_demo

    return minilm_demo(random_state)


register_demo("quantization", _demo)
register_demo("quantization_minilm", _demo_minilm)
