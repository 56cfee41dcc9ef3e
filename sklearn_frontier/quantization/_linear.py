"""``TwinQuantLinear`` (packed int4 + scales + float16 low-rank factors, a drop-in ``nn.Linear``) and
``quantize_model`` (replace every matching ``nn.Linear`` of a torch model after one calibration pass)."""

import fnmatch
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch
from sklearn.base import clone

from sklearn_frontier._config import config_context, get_config
from sklearn_frontier.utils._parallel import Parallel, delayed
from sklearn_frontier.utils._progress import progress_bar

from ._calibration import CalibrationStats
from ._formats import FormatSpec, QuantizedWeight, bits_breakdown, dequantize_weight, fake_quantize_torch
from ._rtn import RTNQuantizer
from ._svd import SVDQuantizer
from ._twinquant import TwinQuant
from ._wush import WUSHQuantizer

__all__ = ["TwinQuantLinear", "quantize_model", "QuantizationReport"]


def _np(t):
    return None if t is None else t.detach().cpu().numpy()


class TwinQuantLinear(torch.nn.Module):
    """A linear layer storing ``W_hat = up down + tensor_scale deq(codes) T`` (one module for every method).

    Build it with :meth:`from_quantized` (from a fitted quantizer's ``quantize()``) or :meth:`from_linear`.
    ``forward`` runs the fused dual-component kernel (:func:`sklearn_frontier.kernels.quantization.dual_matmul`)
    for int4 weights with no or diagonal input transform, else ``x @ dequantize().T``.

    Parameters
    ----------
    in_features, out_features : int
        Input and output widths of the layer.
    rank : int, default=0
        Rank of the float16 low-rank branch.
    fmt : FormatSpec, default=None
        Weight format (INT4, group 128 when None).
    transform : {None, "diag", "block"}, default=None
        Kind of the stored input transform of the residual.
    transform_block_size : int, default=32
        Block size of a "block" transform.
    bias : bool, default=True
        Whether the layer has a bias.
    backend : str or None, default=None
        Kernel backend for ``forward`` (None: the global ``sklearn_frontier`` config).
    act_bits, act_format : optional
        Per-token fake quantization of the residual branch's input (torch path).

    See Also
    --------
    quantize_model : Replace every ``nn.Linear`` of a model by this layer.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from sklearn_frontier.quantization import SVDQuantizer
    >>> W = np.random.default_rng(0).standard_normal((8, 32)).astype(np.float32)
    >>> layer = TwinQuantLinear.from_quantized(SVDQuantizer(rank=2, group_size=16).fit(W).quantize())
    >>> layer(torch.ones(3, 32)).shape
    torch.Size([3, 8])
    """

    def __init__(self, in_features, out_features, *, rank=0, fmt=None, transform=None, transform_block_size=32,
                 bias=True, backend=None, act_bits=None, act_format=None):
        super().__init__()
        fmt = fmt or FormatSpec("int", 4, 128)
        self.in_features, self.out_features, self.rank = int(in_features), int(out_features), int(rank)
        self.fmt, self.transform, self.transform_block_size = fmt, transform, int(transform_block_size)
        self.backend, self.act_bits, self.act_format = backend, act_bits, act_format
        m, n = self.out_features, self.in_features
        n_groups = -(-n // fmt.group_size)
        if fmt.n_bits == 4:
            self.register_buffer("qweight", torch.zeros((m, (n + 1) // 2), dtype=torch.uint8))
        else:
            self.register_buffer("qweight", torch.zeros((m, n), dtype=torch.int8))
        sdtype = torch.uint8 if fmt.is_fp else torch.float16
        self.register_buffer("scales", torch.zeros((m, n_groups), dtype=sdtype))
        self.register_buffer("zeros", None if fmt.zero_bits == 0 else torch.zeros((m, n_groups), dtype=torch.uint8))
        self.register_buffer("tensor_scale", torch.ones((), dtype=torch.float32))
        self.register_buffer("format_scale", torch.ones((), dtype=torch.float32))
        self.register_buffer("lowrank_up", torch.zeros((m, rank), dtype=torch.float16))
        self.register_buffer("lowrank_down", torch.zeros((rank, n), dtype=torch.float16))
        if transform == "diag":
            self.register_buffer("input_transform", torch.ones(n, dtype=torch.float16))
        elif transform == "block":
            B = self.transform_block_size
            self.register_buffer("input_transform", torch.eye(B, dtype=torch.float16).repeat(n // B, 1, 1))
        else:
            self.register_buffer("input_transform", None)
        self.register_buffer("bias", torch.zeros(m, dtype=torch.float32) if bias else None)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_quantized(cls, qw, bias=None, backend=None):
        """Module holding the stored weight ``qw`` (a :class:`QuantizedWeight`) and an optional bias.

        Parameters
        ----------
        qw : QuantizedWeight
            The stored weight.
        bias : torch.Tensor of shape (out_features,), default=None
            Optional bias.
        backend : str, default=None
            Kernel backend for ``forward``.

        Returns
        -------
        module : TwinQuantLinear
            The layer holding ``qw``.
        """
        m, n = qw.shape
        if qw.fmt.n_bits not in (4, 8):
            raise ValueError(f"TwinQuantLinear needs n_bits in {{4, 8}} (packed storage), got n_bits={qw.fmt.n_bits}.")
        T = qw.input_transform
        kind = None if T is None else ("diag" if np.ndim(T) == 1 else "block")
        mod = cls(n, m, rank=qw.rank, fmt=qw.fmt, transform=kind,
                  transform_block_size=T.shape[-1] if kind == "block" else 32, bias=bias is not None,
                  backend=backend, act_bits=qw.act_bits, act_format=qw.act_format)
        mod.accounting_transform = qw.metadata.get("transform_kind", kind or "none")
        with torch.no_grad():
            packed = qw.qweight
            mod.qweight.copy_(torch.from_numpy(np.ascontiguousarray(packed)))
            mod.scales.copy_(torch.from_numpy(np.ascontiguousarray(qw.scales)))
            if qw.zero_points is not None:
                mod.zeros.copy_(torch.from_numpy(np.ascontiguousarray(qw.zero_points)))
            mod.tensor_scale.fill_(float(qw.tensor_scale))
            mod.format_scale.fill_(float(qw.format_scale))
            if qw.rank:
                mod.lowrank_up.copy_(torch.from_numpy(np.ascontiguousarray(qw.lowrank_up)))
                mod.lowrank_down.copy_(torch.from_numpy(np.ascontiguousarray(qw.lowrank_down)))
            if T is not None:
                mod.input_transform.copy_(torch.from_numpy(np.ascontiguousarray(T)))
            if bias is not None:
                b = bias.detach() if hasattr(bias, "detach") else torch.as_tensor(np.asarray(bias))
                mod.bias.copy_(b.to(torch.float32).reshape(-1))
        return mod

    @classmethod
    def from_linear(cls, linear, quantizer=None, X_calib=None, backend=None):
        """Quantize an ``nn.Linear`` with ``quantizer`` (default :class:`TwinQuant`) and return the module.

        Parameters
        ----------
        linear : torch.nn.Linear
            The layer to quantize.
        quantizer : estimator, default=None
            An unfitted weight quantizer; None uses :class:`TwinQuant`.
        X_calib : array-like of shape (n_tokens, in_features) or CalibrationStats, default=None
            Calibration activations of the layer's input.
        backend : str, default=None
            Kernel backend for ``forward``.

        Returns
        -------
        module : TwinQuantLinear
            The quantized layer.
        """
        est = clone(quantizer) if quantizer is not None else TwinQuant()
        est.fit(linear.weight.detach().to(torch.float32).cpu().numpy(), X_calib=X_calib)
        return cls.from_quantized(est.quantize(), bias=linear.bias, backend=backend)

    # ------------------------------------------------------------------ stored value
    def to_quantized(self):
        """The :class:`QuantizedWeight` held by the buffers.

        Returns
        -------
        qw : QuantizedWeight
            The stored weight.
        """
        from sklearn_frontier.kernels.quantization import unpack_int4

        m, n = self.out_features, self.in_features
        q = _np(self.qweight)
        if self.fmt.n_bits == 4:
            signed = self.fmt.weight_format == "int" and self.fmt.symmetric
            codes = unpack_int4(q, n, signed)
        else:
            codes = q.astype(np.int8)
        return QuantizedWeight(
            shape=(m, n), fmt=self.fmt, codes=codes, scales=_np(self.scales), zero_points=_np(self.zeros),
            tensor_scale=np.float32(self.tensor_scale.item()), format_scale=np.float32(self.format_scale.item()),
            lowrank_up=_np(self.lowrank_up) if self.rank else None,
            lowrank_down=_np(self.lowrank_down) if self.rank else None,
            input_transform=_np(self.input_transform), act_bits=self.act_bits, act_format=self.act_format)

    def dequantize(self):
        """Float32 (out_features, in_features) weight, bitwise equal to the estimator's ``transform``.

        Returns
        -------
        W_hat : torch.Tensor of shape (out_features, in_features)
            The dequantized weight.
        """
        return torch.from_numpy(dequantize_weight(self.to_quantized()))

    def memory_bits(self):
        """Stored bits of the weight (bias excluded), equal to ``bits_per_weight_ * m * n``.

        Returns
        -------
        bits : int
            The number of stored bits.
        """
        return bits_breakdown(self.out_features, self.in_features, self.fmt, rank=self.rank,
                              transform=getattr(self, "accounting_transform", self.transform or "none"),
                              transform_block_size=self.transform_block_size)["total"]

    # ------------------------------------------------------------------ forward
    def _kernel_ok(self):
        return (self.fmt.n_bits == 4 and self.fmt.weight_format == "int" and self.transform != "block"
                and self.act_bits is None)

    def forward(self, x):
        """Apply the quantized linear map ``x @ W_hat.T + bias``.

        Parameters
        ----------
        x : torch.Tensor of shape (..., in_features)
            Input activations.

        Returns
        -------
        y : torch.Tensor of shape (..., out_features)
            Output, in the dtype of ``x``.
        """
        if x.shape[-1] != self.in_features:
            raise ValueError(f"expected input with last dimension {self.in_features}, got {x.shape[-1]}.")
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features)
        if self._kernel_ok():
            from sklearn_frontier.kernels._dispatch import _REGISTRY, _resolve_backend
            from sklearn_frontier.kernels.quantization import dual_matmul

            backend = self.backend or get_config()["backend"]
            resolved = _resolve_backend(_REGISTRY["dual_matmul"], backend)
            if resolved == "numba" and x2.shape[0] > 8 and self.backend is None:
                resolved = "reference"  # GEMM-bound: torch's matmul on the dequantized weight is faster on CPU
            xin = x2 if x2.dtype in (torch.float32, torch.float16) else x2.to(torch.float32)
            with config_context(backend=resolved):
                y = dual_matmul(xin, self.qweight, self.scales, self.zeros, float(self.tensor_scale),
                                self.lowrank_up if self.rank else None, self.lowrank_down if self.rank else None,
                                self.input_transform, self.bias, group_size=self.fmt.group_size)
            return y.to(x.dtype).reshape(*lead, self.out_features)
        xf = x2.to(torch.float32)
        if self.act_bits is None:
            y = xf @ self.dequantize().to(xf.device).T
        else:
            qw = self.to_quantized()
            from ._formats import apply_input_transform, dequantize_groups, resolve_format

            T = qw.input_transform
            xt = xf.cpu().numpy().astype(np.float64)
            if T is not None:
                xt = apply_input_transform(xt, T.astype(np.float64) if np.ndim(T) == 1
                                           else np.transpose(T.astype(np.float64), (0, 2, 1)))
            afmt = resolve_format(self.act_format or "int", self.act_bits, None, True, self.in_features,
                                  default_group=self.fmt.group_size)
            xq = fake_quantize_torch(torch.from_numpy(xt), afmt).to(torch.float32)
            deq = dequantize_groups(qw.codes, qw.scales, qw.zero_points, qw.fmt, qw.format_scale)
            y = float(qw.tensor_scale) * (xq @ torch.from_numpy(deq).T)
            if self.rank:
                y = y + (xf @ self.lowrank_down.float().T) @ self.lowrank_up.float().T
        if self.bias is not None:
            y = y + self.bias
        return y.to(x.dtype).reshape(*lead, self.out_features)

    def extra_repr(self):
        """Describe the layer's settings in its ``repr``.

        Returns
        -------
        text : str
            The settings, comma-separated.
        """
        return (f"in_features={self.in_features}, out_features={self.out_features}, rank={self.rank}, "
                f"format={self.fmt.weight_format}{self.fmt.n_bits}, group_size={self.fmt.group_size}, "
                f"transform={self.transform}, bias={self.bias is not None}")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)


# ---------------------------------------------------------------------------------------------- model
@dataclass
class QuantizationReport:
    """Per-layer results of :func:`quantize_model`.

    Parameters
    ----------
    model : torch.nn.Module
        The quantized model.
    layers : list of dict, default=[]
        One record per quantized layer (name, shape, method, bits per weight, errors, fit time).
    total_time_s : float, default=0.0
        Wall time of the whole quantization.

    See Also
    --------
    quantize_model : Produce this report.

    Examples
    --------
    >>> import torch
    >>> from sklearn_frontier.quantization import quantize_model
    >>> net = torch.nn.Sequential(torch.nn.Linear(32, 16))
    >>> report = quantize_model(net, method="rtn", group_size=16)
    >>> len(report.layers)
    1
    """

    model: object
    layers: list = field(default_factory=list)
    total_time_s: float = 0.0

    @property
    def total_bits(self):
        return int(sum(r["bits_per_weight"] * r["shape"][0] * r["shape"][1] for r in self.layers))

    @property
    def mean_bits_per_weight(self):
        n = sum(r["shape"][0] * r["shape"][1] for r in self.layers)
        return self.total_bits / n if n else float("nan")

    def to_frame(self):
        """Return the per-layer records as a table.

        Returns
        -------
        frame : pandas.DataFrame
            One row per layer (the bits breakdown left out).
        """
        import pandas as pd

        return pd.DataFrame([{k: v for k, v in r.items() if k != "bits_breakdown"} for r in self.layers])

    def __str__(self):
        cols = ["name", "shape", "method", "bits_per_weight", "calib_relative_error", "weight_relative_error",
                "fit_time_s"]
        lines = [" | ".join(cols)]
        for r in self.layers:
            lines.append(" | ".join(f"{r[c]:.4g}" if isinstance(r[c], float) else str(r[c]) for c in cols))
        lines.append(f"mean bits/weight {self.mean_bits_per_weight:.4g}, total time {self.total_time_s:.3g} s")
        return "\n".join(lines)


def _make_quantizer(method, n_bits, group_size, rank, weight_format, act_bits, quantizer_params, random_state):
    params = dict(quantizer_params or {})
    if not isinstance(method, str):
        return clone(method).set_params(**params) if params else clone(method)
    common = dict(n_bits=n_bits, group_size=group_size, weight_format=weight_format, act_bits=act_bits)
    if method == "twinquant":
        return TwinQuant(rank=rank, random_state=random_state, **common, **params)
    if method == "svd":
        return SVDQuantizer(rank=rank, random_state=random_state, **common, **params)
    if method == "rtn":
        return RTNQuantizer(**common, **params)
    if method == "wush":
        return WUSHQuantizer(**common, **params)
    raise ValueError(f"method must be 'twinquant', 'svd', 'rtn', 'wush' or an estimator, got {method!r}.")


def _feed(module, batch, forward_fn):
    if forward_fn is not None:
        return forward_fn(module, batch)
    if isinstance(batch, tuple):
        return module(*batch)
    if isinstance(batch, dict):
        return module(**batch)
    return module(batch)


def _quantize_layer(W, stats, settings):
    """Fit one layer's quantizer (a joblib task: plain arrays in, fitted quantizer and its outputs back)."""
    t0 = time.perf_counter()
    est = _make_quantizer(*settings)
    est.fit(W, X_calib=stats)
    return est, est.quantize(), est.transform(W).astype(np.float64), time.perf_counter() - t0


def quantize_model(module, calibration_inputs=None, method="twinquant", *, n_bits=4, group_size=None, rank=8,
                   weight_format="int", act_bits=None, include=None, exclude=None, quantizer_params=None,
                   forward_fn=None, max_calibration_tokens=4096, backend=None, n_jobs=None, random_state=None,
                   verbose=0):
    """Replace every matching ``nn.Linear`` of ``module`` by a :class:`TwinQuantLinear`, in place.

    One calibration pass of the FP model over ``calibration_inputs`` (an iterable of batches, fed as
    ``module(*b)`` for tuples, ``module(**b)`` for dicts, ``module(b)`` otherwise, or ``forward_fn(module, b)``)
    accumulates each layer's input statistics; each layer is then quantized in the output metric
    (weight metric without data).

    Parameters
    ----------
    module : torch.nn.Module
        The model, modified in place.
    calibration_inputs : iterable or None
        Batches of model inputs for the calibration pass; None quantizes in the weight metric.
    method : {"twinquant", "svd", "rtn", "wush"} or estimator, default="twinquant"
        The quantization method, or an unfitted quantizer used as a template.
    n_bits, group_size, rank, weight_format, act_bits : quantizer settings
        Passed to the quantizer's constructor.
    include, exclude : list of str or None
        Fnmatch patterns on qualified module names.
    quantizer_params : dict or None
        Extra constructor arguments of the quantizer.
    forward_fn : callable or None
        ``forward_fn(module, batch)`` runs one calibration batch; None feeds it directly.
    max_calibration_tokens : int, default=4096
        Token reservoir kept per layer (for W4A4); the Gram uses every token.
    backend : str or None
        Kernel backend stored on the new modules.
    n_jobs : int, default=None
        Layers quantized in parallel through :class:`sklearn.utils.parallel.Parallel` (so
        ``joblib.parallel_config(backend="dask")`` spreads them over a cluster); the result does not
        depend on it.
    random_state : int or None
        Seed of the quantizers and of the token reservoirs.
    verbose : int, default=0
        Progress bar over layers when > 0.

    Returns
    -------
    report : QuantizationReport
        Per-layer results.

    Examples
    --------
    >>> import torch
    >>> from sklearn_frontier.quantization import quantize_model
    >>> net = torch.nn.Sequential(torch.nn.Linear(32, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    >>> report = quantize_model(net, [torch.randn(8, 32)], method="rtn", group_size=16)
    >>> [row["name"] for row in report.layers]
    ['0', '2']
    """
    start = time.perf_counter()
    if not isinstance(method, str) and not hasattr(method, "fit"):
        raise ValueError(f"method must be a string or an estimator, got {method!r}.")
    if isinstance(method, str) and method not in ("twinquant", "svd", "rtn", "wush"):
        raise ValueError(f"method must be 'twinquant', 'svd', 'rtn', 'wush' or an estimator, got {method!r}.")
    targets, seen = [], set()
    for name, sub in module.named_modules():
        if not isinstance(sub, torch.nn.Linear) or isinstance(sub, TwinQuantLinear) or id(sub) in seen:
            continue
        if include is not None and not any(fnmatch.fnmatch(name, p) for p in include):
            continue
        if exclude is not None and any(fnmatch.fnmatch(name, p) for p in exclude):
            continue
        seen.add(id(sub))
        targets.append((name, sub))
    report = QuantizationReport(model=module)
    if not targets:
        warnings.warn("quantize_model found no matching nn.Linear to quantize.", UserWarning, stacklevel=2)
        return report
    stats = {}
    if calibration_inputs is not None:
        hooks = []
        for name, sub in targets:
            stats[name] = CalibrationStats(sub.in_features, max_samples=max_calibration_tokens, random_state=0)

            def hook(mod, inputs, output, name=name):
                x = inputs[0].detach().reshape(-1, mod.in_features).to(torch.float64).cpu().numpy()
                stats[name].update(x)

            hooks.append(sub.register_forward_hook(hook))
        try:
            with torch.no_grad():
                for i, batch in enumerate(calibration_inputs):
                    try:
                        _feed(module, batch, forward_fn)
                    except Exception as exc:
                        raise type(exc)(f"calibration forward failed on batch {i}: {exc}") from exc
        finally:
            for h in hooks:
                h.remove()
    parents = dict(module.named_modules())
    settings = (method, n_bits, group_size, rank, weight_format, act_bits, quantizer_params, random_state)
    jobs = []
    for name, sub in targets:
        st = stats.get(name)
        jobs.append((name, sub.weight.detach().to(torch.float32).cpu().numpy(),
                     st if st is not None and st.n_samples_ > 0 else None))
    fitted = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(_quantize_layer)(W, st, settings) for _, W, st in jobs)
    bar = progress_bar(zip(targets, jobs, fitted), total=len(jobs), desc="quantize_model", verbose=verbose,
                       unit="layer")
    for (name, sub), (_, W, st), (est, packed, W_hat, fit_time) in bar:
        bar.set_postfix(layer=name)
        new = TwinQuantLinear.from_quantized(packed, bias=sub.bias, backend=backend)
        new.to(sub.weight.device)
        parent_name, _, child = name.rpartition(".")
        setattr(parents[parent_name] if parent_name else module, child, new)
        W64 = W.astype(np.float64)
        wrel = float(np.sum((W64 - W_hat) ** 2) / max(np.sum(W64**2), 1e-300))
        report.layers.append({
            "name": name, "shape": tuple(W.shape), "method": type(est).__name__,
            "bits_per_weight": float(est.bits_per_weight_), "bits_breakdown": dict(est.bits_breakdown_),
            "calib_relative_error": float(est.reconstruction_error_) if st is not None else float("nan"),
            "weight_relative_error": wrel, "fit_time_s": fit_time,
            "rank": int(getattr(est, "rank_", 0)), "group_size": int(est.group_size_),
        })
    bar.close()
    report.total_time_s = time.perf_counter() - start
    return report
