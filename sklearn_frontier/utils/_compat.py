"""The one place that imports scikit-learn's private APIs (they may change without deprecation)."""

from sklearn.base import _fit_context
from sklearn.cluster._spectral import cluster_qr, discretize
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    InvalidParameterError,
    Options,
    RealNotInt,
    StrOptions,
    validate_params,
)
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

__all__ = [
    "_fit_context",
    "cluster_qr",
    "discretize",
    "HasMethods",
    "Hidden",
    "Interval",
    "InvalidParameterError",
    "Options",
    "RealNotInt",
    "StrOptions",
    "validate_params",
    "_check_sample_weight",
    "check_is_fitted",
    "validate_data",
]
