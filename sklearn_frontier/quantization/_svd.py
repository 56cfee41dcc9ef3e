"""SVD low-rank branch + RTN residual (SVDQuant's pieces: plain, iterative, activation-aware, smoothed)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.extmath import randomized_svd

from sklearn_frontier.utils._compat import Interval, Options, StrOptions
from sklearn_frontier.utils._warnings import warn_user

from ._base import _BaseWeightQuantizer, build_stored_weight, lowrank_factors
from ._codecs import FORMATS
from ._formats import dequantize_weight


def damped_gram(gram, damping):
    if gram is None:
        return None
    n = gram.shape[0]
    mean_diag = float(np.mean(np.diag(gram))) if n else 0.0
    return gram + damping * (mean_diag if mean_diag > 0 else 1.0) * np.eye(n)


def top_right_singular(A, r, solver="auto", random_state=None):
    """Top-``r`` right singular vectors (n, r) of A, deterministic signs."""
    if r == 0:
        return np.zeros((A.shape[1], 0))
    if solver == "randomized" or (solver == "auto" and min(A.shape) > 1024):
        _, _, vt = randomized_svd(A, r, n_oversamples=10, n_iter=4, random_state=check_random_state(random_state))
    else:
        _, _, vt = np.linalg.svd(A, full_matrices=False)
        vt = vt[:r]
    V = vt.T
    rows = np.argmax(np.abs(V), axis=0)
    signs = np.sign(V[rows, np.arange(r)])
    signs[signs == 0] = 1
    return V * signs


def svd_init(Wn, r, H=None, activation_aware=False, solver="auto", random_state=None):
    """``(B, V)`` with ``B V^T`` the best rank-r approximation of Wn (in the H metric if activation-aware)."""
    if r == 0:
        return np.zeros((Wn.shape[0], 0)), np.zeros((Wn.shape[1], 0))
    if activation_aware and H is not None:
        C = np.linalg.cholesky(H)
        Vc = top_right_singular(Wn @ C, r, solver, random_state)
        L = (Wn @ C) @ Vc @ Vc.T @ np.linalg.inv(C)
        V, _ = np.linalg.qr(L.T)
        V = V[:, :r]
        return L @ V, V
    V = top_right_singular(Wn, r, solver, random_state)
    return Wn @ V, V


def clip_rank(rank, m, n):
    """``rank`` clipped to ``min(m, n) - 1`` (a full-rank branch would store the weight twice), with a warning."""
    clipped = max(0, min(int(rank), min(m, n) - 1))
    if clipped != int(rank):
        warn_user(f"rank={rank} is more than a ({m}, {n}) weight allows: using rank {clipped} = min(m, n) - 1.")
    return clipped


class _LowRankMixin:
    _has_lowrank = True

    def _quantize_new_rows(self, W_rows):
        # Coefficients of unseen rows on the fitted down factor, in the fitted metric: c = w H D^T (D H D^T)^-1.
        up = None
        down = self.lowrank_down_
        if down is not None and down.shape[0]:
            D = down.astype(np.float64)
            H = self._metric if self._metric is not None else np.eye(D.shape[1])
            coef = np.linalg.solve(D @ H @ D.T, D @ H @ W_rows.T).T
            up = (coef / float(self.tensor_scale_)).astype(np.float16)  # stored relative to the tensor scale
            if not np.all(np.isfinite(up)):
                raise ValueError("the low-rank coefficients of a row of X overflow float16.")
        else:
            down = None
        fs = self._format_scale if FORMATS[self._fmt.weight_format].second_scale else None
        return build_stored_weight(W_rows, self.tensor_scale_, self._fmt, up, down, self._input_transform, fs)

    def _finish_lowrank(self, qw, B, V, G, metric):
        self.rank_ = 0 if qw.lowrank_up is None else int(qw.lowrank_up.shape[1])
        self.components_ = np.ascontiguousarray(V.T)
        self.balance_ = G
        self._metric = metric
        if qw.lowrank_up is None:
            qw.lowrank_up = np.zeros((qw.shape[0], 0), np.float16)
            qw.lowrank_down = np.zeros((0, qw.shape[1]), np.float16)
        return qw


def objective(W, W_hat, H):
    E = W - W_hat
    if H is None:
        return float(np.sum(E * E) / max(np.sum(W * W), 1e-300))
    return float(np.sum((E @ H) * E) / max(np.sum((W @ H) * W), 1e-300))


class SVDQuantizer(_LowRankMixin, _BaseWeightQuantizer):
    """Rank-r SVD branch in float16 plus an RTN-quantized residual (SVDQuant's decomposition).

    Read more in the :ref:`User Guide <user_guide_quantization>`.

    Parameters
    ----------
    n_bits : {2, 3, 4, 8}, default=4
        Bit width of the weight codes.
    group_size : int, default=None
        None = format default (INT 128).
    rank : int, default=8
        Rank of the low-rank branch, clipped to ``min(m, n) - 1``.
    weight_format : {"int", "mxfp4", "nvfp4"}, default="int"
        Number format of the weight codes.
    symmetric : bool, default=True
        Symmetric (zero-point free) quantization grid when True.
    act_bits : {2, 3, 4, 8} or None, default=None
        Activation fake-quantization bit width in :meth:`score`; None keeps activations in float.
    act_format : {"int", "mxfp4", "nvfp4"} or None, default=None
        Number format of the fake-quantized activations; None follows ``weight_format``.
    lowrank_bits : {16}, default=16
        Storage precision of the factors.
    n_refinements : int, default=0
        Iterative SVD (deepcompressor / brevitas): ``L_{k+1} = [W - Q(W - L_k)]_r``, keeping the best.
    activation_aware : bool, default=False
        Best rank-r branch in the calibration metric H (needs X_calib).
    smooth : bool, default=False
        SVDQuant smoothing ``lambda_j = max|x_j|^a / max|W_:j|^(1-a)`` (stored as a diagonal input transform).
    smooth_alpha : float, default=0.5
        Migration strength ``a`` of the smoothing.
    svd_solver : {"auto", "full", "randomized"}, default="auto"
        Solver of the truncated SVD.
    damping : float, default=1e-2
        Relative damping of H in the objective used to choose among refinements.
    random_state : int, RandomState instance or None, default=None
        Seed of the randomized SVD and of the calibration subsampling.
    mx_scale_rule : {"ocp", "ceil"}, default="ocp"
        Rounding rule of the shared power-of-two MX scales.

    Attributes
    ----------
    rank_ : int
        Rank of the low-rank branch actually used (``rank`` clipped to ``min(m, n) - 1``).
    components_ : ndarray of shape (rank_, in_features)
        ``V^T``, the subspace of the low-rank branch.
    lowrank_up_ : ndarray of shape (out_features, rank_), float16
        Left factor of the low-rank branch, tensor scale and balancing folded in, in storage precision.
    lowrank_down_ : ndarray of shape (rank_, in_features), float16
        Right factor of the low-rank branch, in storage precision.
    balance_ : ndarray of shape (rank_,)
        Per-component balancing factors ``g_k`` between the two stored factors.
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
        Every stored bit (codes, scales, zero points, tensor scale, low-rank factors) per weight.
    bits_breakdown_ : dict
        The stored bits by part (codes, scales, zeros, tensor scale, low-rank factors) and their total.
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
    Li et al., "SVDQuant: Absorbing outliers by low-rank components for 4-bit diffusion models", 2024,
    https://arxiv.org/abs/2411.05007

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.quantization import SVDQuantizer
    >>> W = np.random.default_rng(0).standard_normal((16, 64))
    >>> q = SVDQuantizer(rank=2, group_size=32).fit(W)
    >>> q.rank_, q.lowrank_up_.shape
    (2, (16, 2))
    """

    _parameter_constraints = {
        **_BaseWeightQuantizer._parameter_constraints,
        "rank": [Interval(Integral, 0, None, closed="left")],
        "lowrank_bits": [Options(Integral, {16})],
        "n_refinements": [Interval(Integral, 0, None, closed="left")],
        "activation_aware": ["boolean"],
        "smooth": ["boolean"],
        "smooth_alpha": [Interval(Real, 0, 1, closed="both")],
        "svd_solver": [StrOptions({"auto", "full", "randomized"})],
        "damping": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_bits=4, *, group_size=None, rank=8, weight_format="int", symmetric=True, act_bits=None,
                 act_format=None, lowrank_bits=16, n_refinements=0, activation_aware=False, smooth=False,
                 smooth_alpha=0.5, svd_solver="auto", damping=1e-2, random_state=None, mx_scale_rule="ocp"):
        self.n_bits = n_bits
        self.group_size = group_size
        self.rank = rank
        self.weight_format = weight_format
        self.symmetric = symmetric
        self.act_bits = act_bits
        self.act_format = act_format
        self.lowrank_bits = lowrank_bits
        self.n_refinements = n_refinements
        self.activation_aware = activation_aware
        self.smooth = smooth
        self.smooth_alpha = smooth_alpha
        self.svd_solver = svd_solver
        self.damping = damping
        self.random_state = random_state
        self.mx_scale_rule = mx_scale_rule

    def _transform_kind_fitted(self):
        return "diag" if self.smooth else "none"

    def _smoothing(self, W, stats):
        a = self.smooth_alpha
        if stats is not None:
            xmax = stats.max_abs_ if stats.max_abs_.any() else np.sqrt(np.diag(stats.gram_))
        else:
            xmax = np.ones(W.shape[1])
        wmax = np.abs(W).max(axis=0)
        lam = np.maximum(xmax, 1e-5) ** a / np.maximum(wmax, 1e-5) ** (1 - a)
        lam = np.maximum(lam, 1e-5)
        lam = lam / np.exp(np.mean(np.log(lam)))  # geometric mean 1: keeps fp16 T well inside range
        return lam

    def _fit_weight(self, W, s_W, fmt, stats):
        m, n = W.shape
        r = clip_rank(self.rank, m, n)
        H = None if stats is None else damped_gram(stats.gram_, self.damping)
        Wn = W / float(s_W)
        T = None
        if self.smooth:
            lam = self._smoothing(W, stats)
            T = (1.0 / lam).astype(np.float16)
            lam = 1.0 / T.astype(np.float64)
            Ws = Wn * lam[None, :]
            Bs, Vs = svd_init(Ws, r, None, False, self.svd_solver, self.random_state)
            B, V = Bs, Vs / lam[:, None]
        else:
            B, V = svd_init(Wn, r, H, self.activation_aware, self.svd_solver, self.random_state)

        def build(B, V):
            if r == 0:
                return build_stored_weight(W, s_W, fmt, None, None, T), np.ones(0)
            up, down, G = lowrank_factors(B, V, s_W)
            return build_stored_weight(W, s_W, fmt, up, down, T), G

        qw, G = build(B, V)
        best = (objective(W, dequantize_weight(qw).astype(np.float64), H), qw, G, B, V)
        for _ in range(self.n_refinements if r else 0):
            deq = dequantize_weight(qw).astype(np.float64) / float(qw.tensor_scale) - (
                0.0 if qw.lowrank_up is None else qw.lowrank_up.astype(np.float64) @ qw.lowrank_down.astype(np.float64))
            target = Wn - deq
            if self.smooth:
                Bs, Vs = svd_init(target * lam[None, :], r, None, False, self.svd_solver, self.random_state)
                B, V = Bs, Vs / lam[:, None]
            else:
                B, V = svd_init(target, r, H, self.activation_aware, self.svd_solver, self.random_state)
            qw, G = build(B, V)
            J = objective(W, dequantize_weight(qw).astype(np.float64), H)
            if J < best[0]:
                best = (J, qw, G, B, V)
        _, qw, G, B, V = best
        return self._finish_lowrank(qw, B, V, G, H)
