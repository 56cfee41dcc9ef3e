"""sklearn_frontier: scikit-learn compatible estimators for seven new machine-learning methods.

Public names are imported lazily (PEP 562), so ``import sklearn_frontier`` stays cheap: torch,
numba and POT load only when an estimator that needs them is used.
"""

import importlib

from ._config import config_context, get_config, set_config
from ._registry import all_estimators

__version__ = "0.1.0"

# name -> module that defines it. Each method family owns one block.
_LAZY = {}
_EXPORTS = {
    # sufficient dimension reduction (SMAVE)
    "sklearn_frontier.sdr": ["SMAVE", "OPG", "RMAVE", "MAVEDimensionCV", "SMAVERegressor", "subspace_distance"],
    # spanning-tree regression (PR-BAST, BAST)
    "sklearn_frontier.spanning_trees": ["PRBASTRegressor", "BASTRegressor"],
    # configuration mixing (MixConfig)
    "sklearn_frontier.configurations": ["ConfigurationExtractor", "MixConfigAugmenter", "configurations_from_graph",
                                        "plot_resolution_profile"],
    # instrumental-variable regression
    "sklearn_frontier.iv": ["InstrumentGuidedRepresentation", "InstrumentGuidedIVRegressor", "TwoStageLeastSquares",
                            "PCATwoStageLeastSquares", "make_pca_2sls", "projected_mse", "make_iv_scorer"],
    # collapsed effective operators (CEO)
    "sklearn_frontier.topology": ["CollapsedLaplacian", "CEOSpectralClustering", "CEOSmoother", "CEOPositionalEncoding",
                                  "HypergraphSpectralClustering"],
    # active annotation (MA3S)
    "sklearn_frontier.annotation": ["MA3SAnnotator", "RoundRobinAnnotator", "RandomAnnotator", "SimulatedCrowd",
                                    "run_annotation_loop", "majority_vote", "dawid_skene", "to_annotation_matrix",
                                    "to_long_format", "load_annotator", "replay_journal"],
    # weight quantization (TwinQuant, WUSH)
    "sklearn_frontier.quantization": ["TwinQuant", "RTNQuantizer", "SVDQuantizer", "WUSHQuantizer",
                                      "CalibrationStats", "TwinQuantLinear", "quantize_model"],
    # LOT active experimentation (DisplacementInterpolator, a 1-D-time anchor, stays in sklearn_frontier.transport)
    "sklearn_frontier.transport": ["LOTEmbedding", "WassersteinPathRegressor", "LOTActiveExperimenter"],
    # shared data generators
    "sklearn_frontier.datasets": ["make_sdr_regression", "make_hypergraph_sbm", "make_horseshoe", "horseshoe_boundary", "make_rotated_u", "make_two_regime_hierarchy", "make_outlier_weights", "make_outlier_activations", "load_minilm_l6_v2", "load_stdlib_docstrings", "make_measure_path"],
    "sklearn_frontier.exceptions": ["WeakInstrumentWarning", "UnidentifiedInterventionWarning", "IVScoreWarning", "ConfigurationFallbackWarning"],
}
for _module, _names in _EXPORTS.items():
    for _name in _names:
        _LAZY[_name] = _module

__all__ = ["config_context", "get_config", "set_config", "all_estimators", "__version__", *_LAZY]


def __getattr__(name):
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
