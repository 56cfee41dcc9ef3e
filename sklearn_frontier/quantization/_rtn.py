"""Round-to-nearest (RTN) group quantization: the data-free baseline."""

from ._base import _BaseWeightQuantizer, build_stored_weight


class RTNQuantizer(_BaseWeightQuantizer):
    """Round-to-nearest block quantization of a weight matrix (INT sym/asym, MXFP4, NVFP4).

    Read more in the :ref:`User Guide <user_guide_quantization>`.

    Parameters
    ----------
    n_bits : {2, 3, 4, 8}, default=4
        Bits per code (4 for the FP4 formats).
    group_size : int, default=None
        Columns per scale group; None = format default (INT 128, MXFP4 32, NVFP4 16). An explicit value
        must divide in_features.
    weight_format : {"int", "mxfp4", "nvfp4"}, default="int"
        Number format of the weight codes.
    symmetric : bool, default=True
        Symmetric AbsMax INT (False: min/max with a zero point).
    act_bits : {2, 3, 4, 8} or None, default=None
        Fake-quantize activations per token in :meth:`score` (W4A4 evaluation).
    act_format : {"int", "mxfp4", "nvfp4"} or None, default=None
        Number format of the fake-quantized activations; None follows ``weight_format``.
    mx_scale_rule : {"ocp", "ceil"}, default="ocp"
        E8M0 scale of MXFP4: OCP ``2^(floor(log2 amax) - 2)`` or ``2^ceil(log2(amax / 6))`` (no clipping).

    Attributes
    ----------
    codes_ : ndarray of shape (out_features, in_features), int8
        Integer codes of the (transformed) residual: signed for symmetric INT, unsigned with ``zero_points_``
        for asymmetric INT, E2M1 code indices for MXFP4/NVFP4.
    scales_ : ndarray of shape (out_features, n_groups)
        Group scales as stored: bfloat16 values (held in float32) for INT, E8M0/E4M3 bits for MXFP4/NVFP4.
    zero_points_ : ndarray of shape (out_features, n_groups), uint8, or None
        Per-group zero points of asymmetric INT codes; None when symmetric.
    tensor_scale_ : float32
        RMS of the weight; scales are stored relative to it.
    group_size_ : int
        Entries per scale group along each row (the format default resolved).
    bits_per_weight_ : float
        Every stored bit (codes, scales, zero points, tensor scale) per weight.
    bits_breakdown_ : dict
        The stored bits by part (codes, scales, zeros, tensor scale) and their total.
    reconstruction_error_ : float
        Relative output error on the calibration data (relative Frobenius error without data).
    fit_time_ : float
        Wall seconds of ``fit``.
    n_features_in_ : int
        Number of input features of the weight (its columns, the layer's in_features).
    feature_names_in_ : ndarray of shape (n_features_in_,) of str
        Column names of ``X`` when it has string column names (e.g. a DataFrame).

    See Also
    --------
    SVDQuantizer : Quantization with a low-rank float16 branch (SVDQuant).
    TwinQuant : Jointly optimised low-rank branch and residual transform.
    WUSHQuantizer : Blockwise-transformed joint weight-activation quantization.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.quantization import RTNQuantizer
    >>> W = np.random.default_rng(0).standard_normal((8, 64))
    >>> q = RTNQuantizer(group_size=32).fit(W)
    >>> q.bits_per_weight_
    4.5625
    >>> q.transform(W).shape
    (8, 64)
    """

    def __init__(self, n_bits=4, *, group_size=None, weight_format="int", symmetric=True, act_bits=None,
                 act_format=None, mx_scale_rule="ocp"):
        self.n_bits = n_bits
        self.group_size = group_size
        self.weight_format = weight_format
        self.symmetric = symmetric
        self.act_bits = act_bits
        self.act_format = act_format
        self.mx_scale_rule = mx_scale_rule

    def _fit_weight(self, W, s_W, fmt, stats):
        return build_stored_weight(W, s_W, fmt, act_bits=self.act_bits, act_format=self.act_format)
