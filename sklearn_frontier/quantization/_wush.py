"""WUSH: closed-form blockwise transforms (Hadamard backbone x second-moment part) before RTN block quantization."""

from numbers import Integral, Real

import numpy as np

from sklearn_frontier.utils._compat import Interval, StrOptions, check_is_fitted

from ._base import _BaseWeightQuantizer, build_stored_weight
from ._formats import apply_input_transform


def sylvester_hadamard(n):
    """Normalised Sylvester Hadamard matrix (n a power of 2)."""
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h / np.sqrt(n)


def _damped_cholesky_upper(Hb, damping):
    Hb = Hb.copy()
    mean_diag = float(np.mean(np.diag(Hb)))
    step = damping * (mean_diag if mean_diag > 0 else 1.0)
    for _ in range(100):
        Hb = Hb + step * np.eye(Hb.shape[0])
        try:
            return np.linalg.cholesky(Hb).T, Hb  # upper U with U^T U = H_b
        except np.linalg.LinAlgError:
            continue
    raise ValueError("X_calib's second-moment block is not positive definite even after damping.")


def wush_block_transform(Wb, Hb, kind="wush", damping=1e-2, eigen_damping=1e-2):
    """``(T_b, T_b^-1)`` of one input block (official WUSH ``get_transform``; marginal Hessian block)."""
    m, B = Wb.shape
    had = sylvester_hadamard(B) if (B & (B - 1)) == 0 else np.eye(B)
    if kind == "identity":
        return np.eye(B), np.eye(B)
    if kind == "hadamard":
        return had, had.T
    if Hb is None:
        Hb = np.eye(B)
    U, _ = _damped_cholesky_upper(Hb, damping) if damping > 0 else (np.linalg.cholesky(Hb).T, Hb)
    P, sigma, _ = np.linalg.svd(U @ Wb.T, full_matrices=True)
    s = np.zeros(B)
    s[: sigma.shape[0]] = sigma / np.sqrt(m)
    if not np.any(s > 0):
        return np.eye(B), np.eye(B)
    s = s + eigen_damping * np.mean(s)
    s = np.maximum(s, 1e-8 * s.max())
    left = had if kind == "wush" else np.eye(B)
    T = left @ np.diag(np.sqrt(s)) @ P.T @ np.linalg.inv(U).T
    Tinv = U.T @ P @ np.diag(1.0 / np.sqrt(s)) @ left.T
    return T, Tinv


class WUSHQuantizer(_BaseWeightQuantizer):
    """Blockwise closed-form transforms ``T_b = Had S^(1/2) P^T U_b^-T`` then RTN block quantization (WUSH).

    ``W_hat_b = Q(W_b T_b^-1) T_b``; at inference the activations become ``T_b x_b`` (quantized per token
    in W4A4). The family: "wush", "wus" (no Hadamard), "hadamard" (QuaRot-style blockwise), "identity".

    Read more in the :ref:`User Guide <user_guide_quantization>`.

    Parameters
    ----------
    n_bits : {2, 3, 4, 8}, default=4
        Bit width of the weight codes.
    group_size : int, default=None
        None = 32 (INT) or the FP4 block.
    weight_format : {"int", "mxfp4", "nvfp4"}, default="int"
        Number format of the weight codes.
    symmetric : bool, default=True
        Symmetric (zero-point free) quantization grid when True.
    act_bits : {2, 3, 4, 8} or None, default=None
        Per-token activation fake-quantization of ``T x`` in :meth:`score` (W4A4).
    act_format : {"int", "mxfp4", "nvfp4"} or None, default=None
        Number format of the fake-quantized activations; None follows ``weight_format``.
    block_size : int, default=None
        Transform block (a power of 2 dividing group_size); None = the group size. Clipped to the largest
        power of 2 dividing in_features.
    block_transform : {"wush", "wus", "hadamard", "identity"}, default="wush"
        Kind of the blockwise transform.
    hessian_blocks : {"marginal"}, default="marginal"
        How the blockwise Hessians are estimated.
    damping : float, default=1e-2
        Relative damping of each Hessian block before its Cholesky factor.
    eigen_damping : float, default=1e-2
        ``s += eigen_damping mean(s)``.
    mx_scale_rule : {"ocp", "ceil"}, default="ocp"
        Rounding rule of the shared power-of-two MX scales.

    Attributes
    ----------
    transforms_ : ndarray of shape (n_blocks, block_size_, block_size_)
        Stored (float16) T_b.
    inverse_transforms_ : ndarray of shape (n_blocks, block_size_, block_size_)
        float64 inverses of the stored T_b.
    block_size_ : int
        Size of the transform blocks along the input dimension.
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
        Every stored bit (codes, scales, zero points, tensor scale, block transforms) per weight.
    bits_breakdown_ : dict
        The stored bits by part (codes, scales, zeros, tensor scale, block transforms) and their total.
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
    RTNQuantizer : Round-to-nearest weight quantization.
    TwinQuant : Jointly optimised low-rank branch and residual transform.

    References
    ----------
    Chen et al., "WUSH: near-optimal blockwise transforms for joint weight-activation quantization", 2025,
    https://arxiv.org/abs/2512.00956

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.quantization import WUSHQuantizer
    >>> W = np.random.default_rng(0).standard_normal((16, 64))
    >>> q = WUSHQuantizer().fit(W)
    >>> q.transforms_.shape
    (2, 32, 32)
    """

    _parameter_constraints = {
        **_BaseWeightQuantizer._parameter_constraints,
        "block_size": [Interval(Integral, 1, None, closed="left"), None],
        "block_transform": [StrOptions({"wush", "wus", "hadamard", "identity"})],
        "hessian_blocks": [StrOptions({"marginal"})],
        "damping": [Interval(Real, 0, None, closed="left")],
        "eigen_damping": [Interval(Real, 0, None, closed="left")],
    }
    _default_group = 32

    def __init__(self, n_bits=4, *, group_size=None, weight_format="int", symmetric=True, act_bits=None,
                 act_format=None, block_size=None, block_transform="wush", hessian_blocks="marginal",
                 damping=1e-2, eigen_damping=1e-2, mx_scale_rule="ocp"):
        self.n_bits = n_bits
        self.group_size = group_size
        self.weight_format = weight_format
        self.symmetric = symmetric
        self.act_bits = act_bits
        self.act_format = act_format
        self.block_size = block_size
        self.block_transform = block_transform
        self.hessian_blocks = hessian_blocks
        self.damping = damping
        self.eigen_damping = eigen_damping
        self.mx_scale_rule = mx_scale_rule

    def _transform_kind_fitted(self):
        return "block" if self.block_transform in ("wush", "wus") else "none"

    def _transform_block_fitted(self):
        return self.block_size_

    def _fit_weight(self, W, s_W, fmt, stats):
        m, n = W.shape
        B = self.block_size if self.block_size is not None else fmt.group_size
        if B & (B - 1):
            raise ValueError(f"block_size must be a power of 2, got {B}.")
        if self.block_size is not None and fmt.group_size % B:
            raise ValueError(f"block_size={B} must divide group_size={fmt.group_size}.")
        while n % B:
            B //= 2
        self.block_size_ = B
        H = None if stats is None else stats.gram_
        Wn = W / float(s_W)
        Ts = []
        for b in range(n // B):
            sl = slice(b * B, (b + 1) * B)
            T, _ = wush_block_transform(Wn[:, sl], None if H is None else H[sl, sl], self.block_transform,
                                        self.damping, self.eigen_damping)
            Ts.append(T)
        T16 = np.stack(Ts).astype(np.float16)
        if not np.all(np.isfinite(T16)):
            raise ValueError("a WUSH transform of X overflows float16.")
        self.transforms_ = T16
        self.inverse_transforms_ = np.linalg.inv(T16.astype(np.float64))
        return build_stored_weight(W, s_W, fmt, T=T16, act_bits=self.act_bits, act_format=self.act_format)

    def transform_activations(self, A):
        """Return the activations seen by the quantized residual: each column block times ``T_b^T``.

        Parameters
        ----------
        A : array-like of shape (n_tokens, in_features)
            Input activations.

        Returns
        -------
        A_t : ndarray of shape (n_tokens, in_features)
            The transformed activations (float64).
        """
        check_is_fitted(self)
        A = np.asarray(A, dtype=np.float64)
        if A.ndim != 2 or A.shape[1] != self.n_features_in_:
            raise ValueError(f"A must be 2-D with {self.n_features_in_} features, got shape {A.shape}.")
        return apply_input_transform(A, np.transpose(self.transforms_.astype(np.float64), (0, 2, 1)))
