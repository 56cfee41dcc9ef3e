"""Data generators with known answers (planted subspaces, causal effects, clusters, posteriors).

Each method family keeps its generators in a private module here; public names are re-exported.
"""

import importlib

_EXPORTS = {
    # "_sdr": ["make_sdr_regression"], ...: each method family adds its module and names.
    "_sdr": ["make_sdr_regression"],
    "_configurations": ["make_two_regime_hierarchy"],
    "_iv": ["make_iv_many_treatments", "make_iv_digits"],
    "_topology": ["make_hypergraph_sbm", "load_digits_hypergraph"],
    "_quantization": ["make_outlier_weights", "make_outlier_activations"],
    "_minilm": ["load_minilm_l6_v2", "load_stdlib_docstrings", "BertWordPieceTokenizer"],
    "_transport": ["make_measure_path"],
    "_spanning_trees": ["make_horseshoe", "horseshoe_boundary", "horseshoe_function", "make_rotated_u",
                        "rotated_u_boundary", "make_slit_annulus", "make_spiral_band"],
}
_LAZY = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_LAZY)


def __getattr__(name):
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__():
    return sorted(set(globals()) | set(__all__))
