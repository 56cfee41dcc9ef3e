"""TwinQuant: a learned float16 low-rank subspace plus a 4-bit residual, optimised for the post-quantization error.

Parametrisation (ours; the paper's method section is not public):
``W_hat = s_W [ (B G)(G^-1 V^T) + Q((W~ - B V^T) T^-1) T ]`` with V on the Stiefel manifold St(n, r),
B free, T = diag(exp(tau)) and G the closed-form diagonal balance. The objective is the relative output
error ``tr(E H E^T) / tr(W H W^T)`` through straight-through rounding; V moves by Riemannian Adam
(QR or Cayley retraction), B and tau by Adam. The returned state is the best *stored* candidate among the
initialisation and the best training iterate, so the result is never worse than the initialisation.
"""

import math
import time
from numbers import Integral, Real

import numpy as np

from sklearn_frontier.utils._compat import Interval, Options, StrOptions
from sklearn_frontier.utils._progress import progress_bar

from ._base import _BaseWeightQuantizer, build_stored_weight, lowrank_factors
from ._formats import dequantize_weight, fake_quantize_torch
from ._riemannian import RiemannianAdam
from ._svd import _LowRankMixin, clip_rank, damped_gram, objective, svd_init


class _Adam:
    """Plain Adam on a torch tensor (in place)."""

    def __init__(self, lr, betas=(0.9, 0.999), eps=1e-8):
        self.lr, self.betas, self.eps, self.t = lr, betas, eps, 0
        self.m = self.v = None

    def step(self, p, g):
        b1, b2 = self.betas
        self.t += 1
        if self.m is None:
            self.m = (1 - b1) * g
            self.v = (1 - b2) * g * g
        else:
            self.m = b1 * self.m + (1 - b1) * g
            self.v = b2 * self.v + (1 - b2) * g * g
        m_hat = self.m / (1 - b1**self.t)
        v_hat = self.v / (1 - b2**self.t)
        return p - self.lr * m_hat / (v_hat.sqrt() + self.eps)


def twinquant_loss(Wt, V, B, tau, C, den, fmt, scale_gradient=True, quantize=True):
    """Relative output error of the TwinQuant parametrisation (torch, differentiable through the STE)."""
    import torch

    L = B @ V.T
    R = Wt - L
    if tau is not None:
        R = R * torch.exp(-tau)[None, :]
    Rq = fake_quantize_torch(R, fmt, scale_gradient=scale_gradient) if quantize else R
    if tau is not None:
        Rq = Rq * torch.exp(tau)[None, :]
    E = Wt - L - Rq
    EC = E if C is None else E @ C
    return (EC * EC).sum() / den


def optimise_twinquant(Wn, H, V0, B0, fmt, *, tau0=None, residual_transform="diag", max_iter=150, learning_rate=3e-2,
                       subspace_learning_rate=3e-3, retraction="qr", n_iter_no_change=50, scale_gradient=True,
                       dtype="float32", verbose=0, desc="TwinQuant"):
    """Run the joint optimisation; returns ``(V, B, tau, loss_curve, n_iter, best_iter)`` of the best iterate."""
    import torch

    tdtype = getattr(torch, dtype)
    Wt = torch.as_tensor(Wn, dtype=tdtype)
    C = None if H is None else torch.as_tensor(np.linalg.cholesky(H), dtype=tdtype)
    WC = Wt if C is None else Wt @ C
    den = float((WC * WC).sum()) or 1.0
    n, r = V0.shape
    V = torch.as_tensor(V0, dtype=tdtype).clone()
    B = torch.as_tensor(B0, dtype=tdtype).clone()
    tau = None
    if residual_transform == "diag":
        tau = torch.zeros(n, dtype=tdtype) if tau0 is None else torch.as_tensor(tau0, dtype=tdtype).clone()
    radam = RiemannianAdam(subspace_learning_rate * math.sqrt(max(n * r, 1)), retraction=retraction)
    adam_b, adam_tau = _Adam(learning_rate), _Adam(learning_rate)
    best_J, best, best_iter, no_gain = math.inf, None, 0, 0
    curve = []
    n_iter = 0
    bar = progress_bar(total=max_iter, desc=desc, verbose=verbose)
    for it in range(max_iter + 1):
        params = [p for p in (V, B, tau) if p is not None]
        for p in params:
            p.requires_grad_(True)
        J = twinquant_loss(Wt, V, B, tau, C, den, fmt, scale_gradient)
        Jv = float(J.detach())
        curve.append(Jv)
        if Jv < best_J:
            no_gain = 0 if Jv < best_J * (1 - 1e-4) else no_gain + 1
            best_J, best_iter = Jv, it
            best = (V.detach().clone(), B.detach().clone(), None if tau is None else tau.detach().clone())
        else:
            no_gain += 1
        if it == max_iter or no_gain >= n_iter_no_change or not math.isfinite(Jv):
            break
        grads = torch.autograd.grad(J, params)
        with torch.no_grad():
            gV, gB = grads[0], grads[1]
            if r:
                V = radam.step(V.detach(), gV)
                B = adam_b.step(B.detach(), gB)
            else:
                V, B = V.detach(), B.detach()
            if tau is not None:
                tau = adam_tau.step(tau.detach(), grads[2]).clamp(-8.0, 8.0)
        n_iter += 1
        bar.update(1)
        bar.set_postfix(J=f"{Jv:.4g}")
    bar.close()
    V, B, tau = best
    to_np = lambda t: None if t is None else t.detach().to(torch.float64).numpy()  # noqa: E731
    return to_np(V), to_np(B), to_np(tau), curve, n_iter, best_iter


class TwinQuant(_LowRankMixin, _BaseWeightQuantizer):
    """Learned low-rank (float16) + 4-bit residual weight quantization, optimised for the output error.

    Read more in the :ref:`User Guide <user_guide_quantization>`.

    Parameters
    ----------
    n_bits : {2, 3, 4, 8}, default=4
        Bit width of the weight codes.
    group_size : int, default=None
        None = format default (INT 128).
    rank : int, default=8
        Rank of the float16 branch, clipped to ``min(m, n) - 1``.
    weight_format : {"int", "mxfp4", "nvfp4"}, default="int"
        Number format of the weight codes.
    symmetric : bool, default=True
        Symmetric (zero-point free) quantization grid when True.
    act_bits : {2, 3, 4, 8} or None, default=None
        Activation fake-quantization in :meth:`score` only (the optimiser uses the W4A16 objective).
    act_format : {"int", "mxfp4", "nvfp4"} or None, default=None
        Number format of the fake-quantized activations; None follows ``weight_format``.
    residual_transform : {"diag", "none"}, default="diag"
        ``T = diag(exp(tau))`` on the residual's input side (16 bits per input feature), or none.
    transform_init : {"auto", "identity"}, default="auto"
        Initial diagonal T: "auto" also tries SVDQuant's smoothing ``T = diag(1/lambda)`` (with the SVD of
        ``W diag(lambda)``) and starts from whichever stored candidate has the lower objective; "identity": T = I.
    lowrank_bits : {16}, default=16
        Storage precision of the low-rank factors.
    lowrank_balance : {"diag", "none"}, default="diag"
        Closed-form diagonal balance of the two float16 factors.
    init : {"svd", "activation_aware", "iterative_svd"}, default="svd"
        Initialisation of the low-rank branch.
    objective : {"auto", "output", "weight"}, default="auto"
        "auto": output error when X_calib is given, else weight error.
    max_iter : int, default=150
        Maximum number of optimisation steps.
    learning_rate : float, default=3e-2
        Adam step of B and tau (3e-2 / 3e-3 beat 1e-2 / 1e-3 on 35 of 36 MiniLM layers: the quantization
        benchmark's ablation).
    subspace_learning_rate : float, default=3e-3
        Per-entry RMS step of V (the Frobenius step is this times sqrt(n r)).
    retraction : {"qr", "cayley"}, default="qr"
        Retraction that keeps the subspace V orthonormal.
    n_iter_no_change : int, default=50
        Stop after so many steps without a relative 1e-4 gain.
    damping : float, default=1e-2
        ``H + damping mean(diag H) I`` in the optimiser (reported errors are undamped).
    scale_gradient : bool or "pnorm", default=True
        Let gradients flow through the AbsMax group scales (with straight-through rounding this is the only
        signal reaching the subspace). "pnorm": the forward value is the exact AbsMax but the gradient is that
        of the smooth ``||r_g||_16`` (reaches every near-maximal entry, not only the argmax); False detaches.
    compute_dtype : {"float32", "float64"}, default="float32"
        Floating-point precision of the optimiser.
    svd_solver : {"auto", "full", "randomized"}, default="auto"
        Solver of the truncated SVD.
    random_state : int, RandomState instance or None, default=None
        Seed of the randomized SVD and of the calibration subsampling.
    verbose : int, default=0
        Progress bar when > 0.
    mx_scale_rule : {"ocp", "ceil"}, default="ocp"
        Rounding rule of the shared power-of-two MX scales.

    Attributes
    ----------
    rank_ : int
        Rank of the low-rank branch actually used (``rank`` clipped to ``min(m, n) - 1``).
    components_ : ndarray of shape (rank_, in_features)
        ``V^T`` of the learned subspace.
    lowrank_up_ : ndarray of shape (out_features, rank_), float16
        Left factor of the low-rank branch, tensor scale and balancing folded in, in storage precision.
    lowrank_down_ : ndarray of shape (rank_, in_features), float16
        Right factor of the low-rank branch, in storage precision.
    input_transform_ : ndarray of shape (in_features,) or (n_blocks, block, block), or None
        The stored residual transform T (float16): diagonal, block-diagonal, or None.
    balance_ : ndarray of shape (rank_,)
        Per-component balancing factors ``g_k`` between the two stored factors.
    loss_curve_ : list of float
        Training objective at each evaluated iterate (iterate 0 = initialisation).
    n_iter_ : int
        Optimisation steps run.
    best_iter_ : int
        Iterate whose parameters are stored (0 = the initialisation won).
    init_error_ : float
        Undamped objective of the stored initialisation.
    objective_ : str
        "output" or "weight".
    optimisation_time_ : float
        Wall seconds spent in the optimisation loop (part of ``fit_time_``).
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
        Every stored bit (codes, scales, zero points, tensor scale, low-rank factors, transform) per weight.
    bits_breakdown_ : dict
        The stored bits by part (codes, scales, zeros, tensor scale, low-rank factors, transform) and their total.
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
    RTNQuantizer : Round-to-nearest weight quantization.
    WUSHQuantizer : Blockwise-transformed joint weight-activation quantization.

    References
    ----------
    Wang et al., "TwinQuant", ICML 2026, https://arxiv.org/abs/2606.01556 (abstract only; this
    parametrisation and optimiser are ours).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.quantization import TwinQuant
    >>> W = np.random.default_rng(0).standard_normal((16, 64))
    >>> q = TwinQuant(rank=2, group_size=32, max_iter=5, random_state=0).fit(W)
    >>> q.reconstruction_error_ <= q.init_error_
    True
    """

    _parameter_constraints = {
        **_BaseWeightQuantizer._parameter_constraints,
        "rank": [Interval(Integral, 0, None, closed="left")],
        "residual_transform": [StrOptions({"diag", "none"})],
        "transform_init": [StrOptions({"auto", "identity"})],
        "lowrank_bits": [Options(Integral, {16})],
        "lowrank_balance": [StrOptions({"diag", "none"})],
        "init": [StrOptions({"svd", "activation_aware", "iterative_svd"})],
        "objective": [StrOptions({"auto", "output", "weight"})],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "subspace_learning_rate": [Interval(Real, 0, None, closed="neither")],
        "retraction": [StrOptions({"qr", "cayley"})],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "damping": [Interval(Real, 0, None, closed="left")],
        "scale_gradient": ["boolean", StrOptions({"pnorm"})],
        "compute_dtype": [StrOptions({"float32", "float64"})],
        "svd_solver": [StrOptions({"auto", "full", "randomized"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, n_bits=4, *, group_size=None, rank=8, weight_format="int", symmetric=True, act_bits=None,
                 act_format=None, residual_transform="diag", transform_init="auto", lowrank_bits=16,
                 lowrank_balance="diag", init="svd", objective="auto", max_iter=150, learning_rate=3e-2,
                 subspace_learning_rate=3e-3, retraction="qr",
                 n_iter_no_change=50, damping=1e-2, scale_gradient=True, compute_dtype="float32",
                 svd_solver="auto", random_state=None, verbose=0, mx_scale_rule="ocp"):
        self.n_bits = n_bits
        self.group_size = group_size
        self.rank = rank
        self.weight_format = weight_format
        self.symmetric = symmetric
        self.act_bits = act_bits
        self.act_format = act_format
        self.residual_transform = residual_transform
        self.transform_init = transform_init
        self.lowrank_bits = lowrank_bits
        self.lowrank_balance = lowrank_balance
        self.init = init
        self.objective = objective
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.subspace_learning_rate = subspace_learning_rate
        self.retraction = retraction
        self.n_iter_no_change = n_iter_no_change
        self.damping = damping
        self.scale_gradient = scale_gradient
        self.compute_dtype = compute_dtype
        self.svd_solver = svd_solver
        self.random_state = random_state
        self.verbose = verbose
        self.mx_scale_rule = mx_scale_rule

    def _transform_kind_fitted(self):
        return self.residual_transform

    def _init_factors(self, W, Wn, s_W, fmt, r, H):
        if self.init == "iterative_svd":
            from ._svd import SVDQuantizer

            est = SVDQuantizer(self.n_bits, group_size=fmt.group_size, rank=r, weight_format=self.weight_format,
                               symmetric=self.symmetric, n_refinements=8, svd_solver=self.svd_solver,
                               damping=self.damping, random_state=self.random_state,
                               mx_scale_rule=self.mx_scale_rule)
            est._fit_weight(W, s_W, fmt, None if H is None else _GramOnly(H))
            V = est.components_.T
            if r:
                L = est.lowrank_up_.astype(np.float64) @ est.lowrank_down_.astype(np.float64)  # in W / s_W units
                V, _ = np.linalg.qr(L.T)
                V = V[:, :r]
                return L @ V, V
            return np.zeros((W.shape[0], 0)), V
        return svd_init(Wn, r, H, self.init == "activation_aware", self.svd_solver, self.random_state)

    def _smooth_init(self, W, Wn, stats, r):
        from ._svd import top_right_singular

        wmax = np.abs(W).max(axis=0)
        if stats is not None:
            xmax = stats.max_abs_ if stats.max_abs_.any() else np.sqrt(np.diag(stats.gram_))
        else:
            xmax = np.ones(W.shape[1])
        lam = np.maximum(np.maximum(xmax, 1e-5) ** 0.5 / np.maximum(wmax, 1e-5) ** 0.5, 1e-5)
        lam = lam / np.exp(np.mean(np.log(lam)))
        T16 = (1.0 / lam).astype(np.float16)
        tau = np.log(T16.astype(np.float64))
        lam = 1.0 / T16.astype(np.float64)
        if r == 0:
            return np.zeros((W.shape[0], 0)), np.zeros((W.shape[1], 0)), tau
        Vs = top_right_singular(Wn * lam[None, :], r, self.svd_solver, self.random_state)
        Bs = (Wn * lam[None, :]) @ Vs
        Q, R = np.linalg.qr(Vs / lam[:, None])  # L = Bs (Vs/lam)^T = (Bs R^T) Q^T with Q orthonormal
        return Bs @ R.T, Q, tau

    def _build(self, W, s_W, fmt, B, V, tau):
        T = None if tau is None else np.exp(tau).astype(np.float16)
        if V.shape[1] == 0:
            return build_stored_weight(W, s_W, fmt, None, None, T), np.ones(0)
        up, down, G = lowrank_factors(B, V, s_W, self.lowrank_balance)
        return build_stored_weight(W, s_W, fmt, up, down, T), G

    def _fit_weight(self, W, s_W, fmt, stats):
        m, n = W.shape
        r = clip_rank(self.rank, m, n)
        use_output = stats is not None and self.objective != "weight"
        if self.objective == "output" and stats is None:
            raise ValueError("objective='output' needs X_calib.")
        gram = stats.gram_ if use_output else None
        H = damped_gram(gram, self.damping) if use_output else None
        Wn = W / float(s_W)
        B0, V0 = self._init_factors(W, Wn, s_W, fmt, r, H)
        tau0 = np.zeros(n) if self.residual_transform == "diag" else None
        qw0, G0 = self._build(W, s_W, fmt, B0, V0, tau0)
        J0 = objective(W, dequantize_weight(qw0).astype(np.float64), gram)
        if self.residual_transform == "diag" and self.transform_init == "auto":
            # Second initial candidate: SVDQuant smoothing as T = diag(1/lambda), SVD of W diag(lambda).
            B1, V1, tau1 = self._smooth_init(W, Wn, stats, r)
            qw1, G1 = self._build(W, s_W, fmt, B1, V1, tau1)
            J1 = objective(W, dequantize_weight(qw1).astype(np.float64), gram)
            if J1 < J0:
                B0, V0, tau0, qw0, G0, J0 = B1, V1, tau1, qw1, G1, J1
        start = time.perf_counter()
        V, B, tau, curve, n_iter, best_iter = optimise_twinquant(
            Wn, H, V0, B0, fmt, tau0=tau0, residual_transform=self.residual_transform, max_iter=self.max_iter,
            learning_rate=self.learning_rate, subspace_learning_rate=self.subspace_learning_rate,
            retraction=self.retraction, n_iter_no_change=self.n_iter_no_change,
            scale_gradient=self.scale_gradient, dtype=self.compute_dtype, verbose=self.verbose)
        self.optimisation_time_ = time.perf_counter() - start
        # Candidates judged on the exact stored reconstruction (undamped objective): never worse than init.
        chosen = (J0, qw0, G0, V0, 0)
        if best_iter > 0:
            qw1, G1 = self._build(W, s_W, fmt, B, V, tau)
            J1 = objective(W, dequantize_weight(qw1).astype(np.float64), gram)
            if J1 < J0:
                chosen = (J1, qw1, G1, V, best_iter)
        _, qw, G, V, self.best_iter_ = chosen
        self.init_error_ = J0
        self.loss_curve_ = curve
        self.n_iter_ = n_iter
        self.objective_ = "output" if use_output else "weight"
        self.input_transform_ = qw.input_transform
        return self._finish_lowrank(qw, None, V, G, H)


class _GramOnly:
    def __init__(self, H):
        self.gram_ = H
        self.max_abs_ = np.zeros(H.shape[0])
