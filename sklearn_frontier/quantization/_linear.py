"""``TwinQuantLinear`` (packed int4 + scales + float16 low-rank factors, a drop-in ``nn.Linear``);
``quantize_model`` lives in ``_model.py``."""

import os
import threading
from dataclasses import dataclass

import numpy as np
import torch
from sklearn.base import clone

from sklearn_frontier._config import ENV_BACKEND, _check_backend, _get_threadlocal_config, config_context

from . import _cpu_dispatch
from ._codecs import FORMATS
from ._formats import FormatSpec, QuantizedWeight, bits_breakdown, dequantize_weight, fake_quantize_torch
from ._twinquant import TwinQuant

__all__ = ["TwinQuantLinear"]

ACT_QUANT = (None, "int8")


def _np(t):
    return None if t is None else t.detach().cpu().numpy()


@dataclass
class _Prepared:
    """Everything ``forward`` needs, computed once from the buffers (at conversion, after ``load_state_dict``
    and ``.to()``): packed weights for each kernel that can run them, float32 views of the small parts."""

    tensor_scale: float
    scales_f32: torch.Tensor
    zero_points: torch.Tensor | None  # unpacked uint8 (m, n_groups), for Triton
    t: torch.Tensor | None  # float32 input transform of the residual
    down_t: torch.Tensor | None = None  # (n, r) float32
    up_t: torch.Tensor | None = None  # (r, m) float32, tensor scale folded in
    int4_torch: tuple | None = None  # torch's int4 op layout
    lut: tuple | None = None  # (lut, scales, zeros) of the numba LUT kernel
    w4a8: object = None  # the prepared W4A8 kernel, run(x, xr)
    w4a8_decode: tuple | None = None  # (packed, scale_t, zero_t) for the transposed decode of large batches
    int8: list | None = None  # [None] until the int8 path first runs, then [(wq, ch_scale)]
    bias: torch.Tensor | None = None  # float32 (the module's bias may have been cast)
    lock: object = None
    plan: "_Plan" = None  # the plan of the last backend used


@dataclass
class _Plan:
    """How ``forward`` runs under one backend: one runner for every row count (``fixed``), or on CPU the
    candidate ``runners`` (path -> run) among which the measured dispatch picks per bucket of row counts
    (``choice``: (threads, bucket) -> (path, run), filled on first use). A runner takes a float32 contiguous
    (M, in_features) tensor and returns the output, bias included."""

    backend: str
    fixed: tuple | None = None  # (path, run)
    runners: dict | None = None
    layer_key: str = ""
    choice: dict | None = None


class TwinQuantLinear(torch.nn.Module):
    """A linear layer storing ``W_hat = tensor_scale (deq(codes) T + up down)`` (one module for every method).

    Build it with :meth:`from_quantized` (from a fitted quantizer's ``quantize()``) or :meth:`from_linear`.
    The stored weight is packed once for its kernel at conversion time (``from_quantized``, hence
    ``quantize_model``); ``state_dict`` holds only the stored weight (packed codes and zero points, scales,
    factors, transform, bias). ``forward`` computes ``ts (x T) Q^T + (x down^T)(ts up)^T + bias`` (``Q`` the
    decoded residual, ``T`` folded into the activations) and records the path in ``last_path_``:

    On CPU the kernel is chosen by measurement on the machine that runs it, not by a table of CPUs: the first
    time a layer of a given shape and format meets a bucket of row counts (1, 2-8, 9-64, more than 64), each
    candidate path below is timed on a seeded input and the fastest one inside the accuracy contract runs that
    bucket from then on. Decisions are cached per CPU model, thread count, shape and bucket, in memory and in
    ``$XDG_CACHE_HOME/sklearn_frontier/quantization_dispatch.json`` (``~/.cache`` by default), so a machine
    measures each shape once; ``SKLEARN_FRONTIER_QUANT_DISPATCH=off`` uses a fixed choice instead (W4A8, else
    torch's int4 op, at one row; the int8 path, else ``dequantize``, beyond), ``=reset`` measures again.
    ``dispatch_table_`` shows what was measured and chosen. The candidates:

    - ``w4a8`` (INT4, groups a multiple of 32, ``act_quant="int8"``): int8 activations per 32-block, exact
      int32 block sums, the low-rank branch and the bias in the same numba call;
    - ``int8`` (INT formats, ``act_quant="int8"``, where torch has its int8 GEMM): activations rounded to
      int8 per row, the weight re-quantized to int8 per output channel from the 4-bit codes (built on the
      first call and kept: one byte per weight beside the 4-bit codes), int32 sums by ``torch._int_mm``, the
      scales, low-rank branch and bias after;
    - ``torch_int4`` (INT4, groups of 32/64/128/256): torch's int4 op, bf16 activations;
    - ``numba_lut4`` (other groups, MXFP4, NVFP4; up to 8 rows): a 16-entry value-table kernel in float32;
    - ``dequantize`` (every format): the residual decoded once per call into a reused buffer with the tensor
      scale, a diagonal transform and the low-rank factor folded in, then one fp32 GEMM.

    The accuracy contract: a path is eligible when its relative squared output error on the probe input,
    against the exact product with the dequantized weight, is at most four times the error that rounding the
    same activations to int8 per row causes alone. ``dequantize`` and the reference are exact up to float32
    summation; ``torch_int4`` rounds the activations (and its output) to bfloat16; ``w4a8`` rounds each
    32-block of the residual's input to int8 (error at most half a step per entry: the bound the tests
    check); ``int8`` rounds each row of it and the weight per channel. The layer and whole-model costs (per-layer
    output error, MiniLM embedding cosine) are measured by ``python -m benchmarks twinquant_kernel``. Set
    ``act_quant=None`` for float activations everywhere (then only weight-only paths and torch's int4 op run).

    On CUDA: Triton for INT formats, ``reference`` otherwise; INT8 weights or fake-quantized activations
    (``act_bits``): ``reference``. ``backend="reference"`` forces the reference, ``"numba"`` the LUT kernel,
    ``"triton"`` the Triton kernel.

    The kernels are prepared once, at conversion, ``load_state_dict``, ``.to()`` and :meth:`refresh` (call it
    after editing buffers in place). numba kernels run on ``torch.get_num_threads()`` threads for the call
    and give the calling thread its own numba thread count back.

    Read more in the :ref:`User Guide <user_guide_quantization>`.

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
    act_quant : {"int8", None}, default="int8"
        Activation precision of the CPU kernels: "int8" lets the W4A8 and int8 paths run where the format
        allows and the measured dispatch picks them, None keeps float activations (weight-only kernels).

    Attributes
    ----------
    last_path_ : str or None
        The kernel the last ``forward`` ran ("w4a8", "int8", "torch_int4", "numba_lut4", "triton",
        "dequantize" or "reference"); None before the first call.
    dispatch_table_ : list of DispatchRecord
        What the measured CPU dispatch decided for this layer at the current thread count, one record per
        bucket of row counts met so far (path, source, each candidate's time and output error, tolerance,
        preparation cost).

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
                 bias=True, backend=None, act_bits=None, act_format=None, act_quant="int8"):
        super().__init__()
        fmt = fmt or FormatSpec("int", 4, 128)
        self.in_features, self.out_features, self.rank = int(in_features), int(out_features), int(rank)
        self.fmt, self.transform, self.transform_block_size = fmt, transform, int(transform_block_size)
        if act_quant not in ACT_QUANT:
            raise ValueError(f"act_quant must be 'int8' or None, got {act_quant!r}.")
        self.backend, self.act_bits, self.act_format, self.act_quant = backend, act_bits, act_format, act_quant
        m, n = self.out_features, self.in_features
        n_groups = -(-n // fmt.group_size)
        if fmt.n_bits == 4:
            self.register_buffer("qweight", torch.zeros((m, (n + 1) // 2), dtype=torch.uint8))
        else:
            self.register_buffer("qweight", torch.zeros((m, n), dtype=torch.int8))
        sdtype = torch.uint8 if fmt.is_fp else torch.bfloat16  # INT scales: bfloat16, as torch's int4 op takes
        self.register_buffer("scales", torch.zeros((m, n_groups), dtype=sdtype))
        # 4-bit zero points are packed two per byte (as the codes), 8-bit ones one per byte
        zcols = (n_groups + 1) // 2 if fmt.n_bits == 4 else n_groups
        self.register_buffer("zeros", None if fmt.zero_bits == 0 else torch.zeros((m, zcols), dtype=torch.uint8))
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
        self._fast, self.last_path_, self._shape = None, None, (m, n)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_quantized(cls, qw, bias=None, backend=None, act_quant="int8"):
        """Module holding the stored weight ``qw`` (a :class:`QuantizedWeight`) and an optional bias.

        Parameters
        ----------
        qw : QuantizedWeight
            The stored weight.
        bias : torch.Tensor of shape (out_features,), default=None
            Optional bias.
        backend : str, default=None
            Kernel backend for ``forward``.
        act_quant : {"int8", None}, default="int8"
            Activation precision of the CPU kernels (see the class description).

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
                  backend=backend, act_bits=qw.act_bits, act_format=qw.act_format, act_quant=act_quant)
        mod.accounting_transform = qw.metadata.get("transform_kind", kind or "none")
        with torch.no_grad():
            packed = qw.qweight
            mod.qweight.copy_(torch.from_numpy(np.ascontiguousarray(packed)))
            mod.scales.copy_(torch.from_numpy(np.ascontiguousarray(qw.scales)))
            if qw.zero_points is not None:
                zp = np.ascontiguousarray(qw.zero_points)
                if qw.fmt.n_bits == 4:
                    from sklearn_frontier.kernels.quantization import pack_int4

                    zp = pack_int4(zp.astype(np.int8))
                mod.zeros.copy_(torch.from_numpy(zp))
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
        mod._prepare()  # pack once, at conversion time
        return mod

    @classmethod
    def from_linear(cls, linear, quantizer=None, X_calib=None, backend=None, act_quant="int8"):
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
        act_quant : {"int8", None}, default="int8"
            Activation precision of the CPU kernels.

        Returns
        -------
        module : TwinQuantLinear
            The quantized layer.
        """
        est = clone(quantizer) if quantizer is not None else TwinQuant()
        est.fit(linear.weight.detach().to(torch.float32).cpu().numpy(), X_calib=X_calib)
        return cls.from_quantized(est.quantize(), bias=linear.bias, backend=backend, act_quant=act_quant)

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
            shape=(m, n), fmt=self.fmt, codes=codes, scales=_np(self.scales if self.fmt.is_fp else self.scales.float()),
            zero_points=self._zero_points(),
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
    def _load_from_state_dict(self, *args, **kwargs):
        super()._load_from_state_dict(*args, **kwargs)
        self._prepare()  # packed again from the loaded buffers, now rather than in the first call

    _STORED_FLOAT = ("scales", "tensor_scale", "format_scale", "lowrank_up", "lowrank_down", "input_transform")

    def _apply(self, fn, *args, **kwargs):
        # .half() / .to(dtype) must not re-round the stored weight (bf16 scales, fp32 tensor scale, fp16 factors
        # hold its exact value; bits_per_weight_ counts them): they follow the device only, the bias follows all.
        kept = {k: self._buffers[k] for k in self._STORED_FLOAT if self._buffers.get(k) is not None}
        before = (self.qweight.device, None if self.bias is None else self.bias.dtype)
        out = super()._apply(fn, *args, **kwargs)
        device = fn(torch.zeros(1)).device
        for k, v in kept.items():
            self._buffers[k] = v.to(device)
        if (self.qweight.device, None if self.bias is None else self.bias.dtype) != before:
            # a move or a cast of the bias: prepared again now if it was prepared, else at the first call
            self._fast = None if self._fast is None else self._prepare()
        return out

    def _zero_points(self):
        """Unpacked uint8 zero points (m, n_groups), or None."""
        if self.zeros is None:
            return None
        if self.fmt.n_bits != 4:
            return _np(self.zeros)
        from sklearn_frontier.kernels.quantization import unpack_int4

        n_groups = -(-self.in_features // self.fmt.group_size)
        return unpack_int4(_np(self.zeros), n_groups, False).astype(np.uint8)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_fast"] = None  # prepared again after unpickling (holds a lock and derived arrays)
        return state

    def refresh(self):
        """Prepare the packed forms again from the buffers (after editing them in place).

        Returns
        -------
        self : TwinQuantLinear
            The layer.
        """
        self._prepare()
        return self

    def _prepare(self):
        """Pack the stored weight once for the kernels that can run it (W4A8, torch int4, numba LUT, Triton);
        the int8 path's weight is built on its first call (only where the dispatch picks it).

        Nothing here is part of ``state_dict`` (it holds only codes, scales, zeros, factors, transform, bias).
        """
        import sklearn_frontier.kernels.quantization as qk

        fmt, n = self.fmt, self.in_features
        ts = float(self.tensor_scale)
        T = self.input_transform
        zp = self._zero_points()
        fast = _Prepared(tensor_scale=ts, scales_f32=self.scales.float(),
                         zero_points=None if zp is None else torch.from_numpy(zp).to(self.qweight.device),
                         t=None if T is None else T.float().contiguous(), lock=threading.Lock(),
                         bias=None if self.bias is None else self.bias.float())
        if self.rank:
            fast.down_t = self.lowrank_down.float().T.contiguous()  # (n, r)
            fast.up_t = (self.lowrank_up.float() * ts).T.contiguous()  # (r, m): tensor scale folded in
        cpu = self.qweight.device.type == "cpu"
        if fmt.n_bits == 4 and self.act_bits is None and cpu:
            signed = fmt.weight_format == "int" and fmt.symmetric
            codes = qk.unpack_int4(_np(self.qweight), n, signed)
            if fmt.weight_format == "int" and fmt.group_size % 32 == 0:
                packed, scale_t, zero_t = qk.pack_w4a8(codes, _np(fast.scales_f32), zp, fmt.group_size)
                fast.w4a8_decode = (packed, scale_t, zero_t)
                if self.act_quant == "int8":
                    t = fast.t if (fast.t is not None and fast.t.ndim == 1) else None
                    fast.w4a8 = qk.w4a8_prepare(
                        packed, scale_t, zero_t, group_size=fmt.group_size, tensor_scale=ts,
                        t=None if t is None else t.numpy(),
                        down=self.lowrank_down.float().numpy() if self.rank else None,
                        up_t=self.lowrank_up.float().T.numpy() if self.rank else None,
                        bias=None if self.bias is None else self.bias.float().numpy())
            if fmt.weight_format == "int" and self.act_quant == "int8" and qk.int8_matmul_available():
                fast.int8 = [None]
            if qk.torch_int4_fits(fmt.weight_format, fmt.n_bits, fmt.group_size):
                fast.int4_torch = qk.pack_int4_torch(codes, _np(fast.scales_f32), zp, fmt.group_size)
            lut, sc = FORMATS[fmt.weight_format].lut(signed, self.scales, fast.scales_f32, float(self.format_scale))
            fast.lut = (torch.from_numpy(lut), sc.contiguous(), None if zp is None else fast.zero_points.float())
        fast.plan = self._plan(fast, self.backend or _current_backend())
        self._fast = fast
        return fast

    def _layer_key(self):
        fmt = self.fmt
        return (f"{self.out_features}x{self.in_features} r{self.rank} {fmt.weight_format}{fmt.n_bits} "
                f"g{fmt.group_size} {'sym' if fmt.symmetric else 'asym'} t={self.transform} "
                f"act_quant={self.act_quant} bias={self.bias is not None}")

    def _plan(self, fast, backend):
        """How ``forward`` runs under ``backend``: one runner, or on CPU the candidates among which the measured
        dispatch picks per bucket of row counts (see the class doc)."""
        fmt = self.fmt
        device = self.qweight.device
        if self.act_bits is not None or fmt.n_bits != 4 or backend == "reference":
            return _Plan(backend, fixed=("reference", self._run_reference))
        if device.type == "cuda" or backend == "triton":
            from sklearn_frontier.kernels._dispatch import cuda_available, triton_available, triton_interpret

            if (fmt.weight_format == "int" and self.transform != "block" and triton_available()
                    and (cuda_available() or triton_interpret())):
                return _Plan(backend, fixed=("triton", self._triton_runner(fast)))
            return _Plan(backend, fixed=("reference", self._run_reference))
        if backend == "numba":
            return _Plan(backend, fixed=("numba_lut4", self._lut_runner(fast)))
        runners = {}
        if fast.w4a8 is not None:
            runners["w4a8"] = self._w4a8_runner(fast)
        if fast.int8 is not None:
            runners["int8"] = self._int8_runner(fast)
        if fast.int4_torch is not None:
            runners["torch_int4"] = self._int4_runner(fast)
        else:
            runners["numba_lut4"] = self._lut_runner(fast)
        runners["dequantize"] = self._decode_runner(fast)
        return _Plan(backend, runners=runners, layer_key=self._layer_key(), choice={})

    def _choose(self, plan, bucket, threads):
        """The (path, runner) of a bucket: measured once per shape and machine (cached), see ``_cpu_dispatch``."""
        candidates = dict(plan.runners)
        # few-row kernels (one weight pass per few rows) are not timed where they cannot win: it would only cost
        for path, first_bucket_left_out in (("numba_lut4", 2), ("w4a8", 3)):
            if bucket >= first_bucket_left_out and len(candidates) > 1:
                candidates.pop(path, None)
        rec = _cpu_dispatch.decide(plan.layer_key, candidates, plan.runners["dequantize"], self.in_features,
                                   bucket, threads)
        return rec.path, plan.runners[rec.path], rec

    @property
    def dispatch_table_(self):
        """What the measured CPU dispatch decided for this layer so far (at the current thread count).

        Returns
        -------
        records : list of DispatchRecord
            One record per bucket of row counts met so far: the path, each candidate's median time and output
            error on the probe input, the contract's tolerance and what measuring cost.
        """
        fast = self._fast
        plan = None if fast is None else fast.plan
        if plan is None or plan.choice is None:
            return []
        threads = torch.get_num_threads()
        return [plan.choice[k][2] for k in sorted(plan.choice) if k[0] == threads]

    # Runners: float32 C-contiguous (M, in_features) in, float32 (M, out_features) out, bias included.
    def _w4a8_runner(self, fast):
        run_kernel, block, transformed = fast.w4a8, fast.t is not None and fast.t.ndim != 1, self._transformed

        def run(x2):
            xn = x2.numpy()
            xr = transformed(x2, fast).contiguous().numpy() if block else xn
            return torch.from_numpy(run_kernel(xn, xr))

        return run

    def _int8_runner(self, fast):
        """Per-row int8 activations x int8 weight (re-quantized per output channel from the 4-bit codes, built
        on the first call and kept), int32 sums by torch's int8 GEMM; low-rank branch and bias after."""
        from sklearn_frontier.kernels.quantization import int8_matmul

        ts, bias, transformed = fast.tensor_scale, fast.bias, self._transformed
        down = self.lowrank_down.float() if self.rank else None  # up_t (r, m) has the tensor scale folded in

        def run(x2):
            if fast.int8[0] is None:
                wq, ch = self._build_int8()
                fast.int8[0] = (wq, ch * ts)  # the tensor scale folded into the channel scales
            wq, ch = fast.int8[0]
            return int8_matmul(x2, wq, ch, down=down, up_t=fast.up_t, bias=bias, xr=transformed(x2, fast))

        return run

    def _build_int8(self):
        from sklearn_frontier.kernels.quantization import pack_int8_weight, unpack_int4

        fmt = self.fmt
        codes = unpack_int4(_np(self.qweight), self.in_features, fmt.symmetric)
        return pack_int8_weight(codes, _np(self.scales.float()), self._zero_points(), fmt.group_size)

    def _int4_runner(self, fast):
        from sklearn_frontier.kernels.quantization import int4pack_matmul

        packed, g, m, ts, bias = fast.int4_torch, self.fmt.group_size, self.out_features, fast.tensor_scale, fast.bias
        down_t, up_t, transformed = fast.down_t, fast.up_t, self._transformed

        def run(x2):
            y = int4pack_matmul(transformed(x2, fast), *packed, group_size=g, n_out=m)
            if down_t is not None:  # ts * y + (x down^T)(ts up)^T in one BLAS call
                y = torch.addmm(y, x2 @ down_t, up_t, beta=ts)
                return y if bias is None else y.add_(bias)
            return y.mul_(ts) if bias is None else torch.add(bias, y, alpha=ts)

        return run

    def _lut_runner(self, fast):
        from sklearn_frontier.kernels.quantization import lut4_matmul

        qweight, lut, g, ts, bias = self.qweight, fast.lut, self.fmt.group_size, fast.tensor_scale, fast.bias
        down_t, up_t, transformed = fast.down_t, fast.up_t, self._transformed

        def run(x2):
            y = lut4_matmul(transformed(x2, fast), qweight, *lut, group_size=g)
            if down_t is not None:
                y = torch.addmm(y, x2 @ down_t, up_t, beta=ts)
                return y if bias is None else y.add_(bias)
            return y.mul_(ts) if bias is None else torch.add(bias, y, alpha=ts)

        return run

    def _decode_runner(self, fast):
        """Many rows: decode the residual once per call into a reused buffer, then one BLAS GEMM.

        With the weight-stationary codes the buffer is ``ts diag(t) Q^T`` (n, m): the tensor scale and a
        diagonal transform are folded into the decode, so the GEMM takes ``x`` as it is (``x T`` for a block
        transform); the bias enters the GEMM (``addmm``) and the low-rank branch is one thin ``addmm_`` after it.
        """
        n, m, ts, bias, transformed = self.in_features, self.out_features, fast.tensor_scale, fast.bias, \
            self._transformed
        down_t, up_t, block = fast.down_t, fast.up_t, fast.t is not None and fast.t.ndim != 1
        if fast.w4a8_decode is None:  # formats without the weight-stationary codes: the value-table decode
            qweight, lut, g = self.qweight, fast.lut, self.fmt.group_size

            def run_lut(x2):
                from sklearn_frontier.kernels.quantization import lut4_dequantize

                QT = lut4_dequantize(qweight, *lut, group_size=g, n=n).T
                y = transformed(x2, fast) @ QT
                y = torch.addmm(y, x2 @ down_t, up_t, beta=ts) if down_t is not None else y.mul_(ts)
                return y if bias is None else y.add_(bias)

            return run_lut
        from sklearn_frontier.kernels.quantization import w4a8_decode_t

        packed, scale_t, zero_t = fast.w4a8_decode
        g = self.fmt.group_size
        row_scale = np.full(n, ts, dtype=np.float32)
        if fast.t is not None and not block:
            row_scale *= fast.t.numpy()
        lock, state = fast.lock, {"buffer": None}

        def run(x2):
            xr = transformed(x2, fast) if block else x2
            mine = lock.acquire(blocking=False)  # the buffer is reused unless another thread holds it
            try:
                buf = state["buffer"] if mine else None
                if buf is None:
                    buf = np.empty((n, m), dtype=np.float32)
                    if mine:
                        state["buffer"] = buf
                w4a8_decode_t(packed, scale_t, zero_t, group_size=g, n_features=n, out=buf, row_scale=row_scale)
                QT = torch.from_numpy(buf)
                y = torch.mm(xr, QT) if bias is None else torch.addmm(bias, xr, QT)
            finally:
                if mine:
                    lock.release()
            return y if down_t is None else y.addmm_(x2 @ down_t, up_t)

        return run

    def _triton_runner(self, fast):
        def run(x2):
            from sklearn_frontier.kernels.quantization import dual_matmul

            with config_context(backend="triton"):
                return dual_matmul(x2, self.qweight, fast.scales_f32, fast.zero_points, fast.tensor_scale,
                                   fast.up_t.T if self.rank else None, self.lowrank_down if self.rank else None,
                                   self.input_transform, self.bias, group_size=self.fmt.group_size)

        return run

    def _run_reference(self, x2):
        y = x2 @ self.dequantize().to(x2.device).T if self.act_bits is None else self._forward_fake_quantized(x2)
        return y if self.bias is None else y.add_(self.bias)

    def _transformed(self, x, fast):
        t = fast.t
        if t is None:
            return x
        if t.ndim == 1:
            return x * t
        nb, B, _ = t.shape
        return torch.einsum("mbi,bji->mbj", x.reshape(x.shape[0], nb, B), t).reshape(x.shape[0], -1)

    def forward(self, x):
        """Apply the quantized linear map ``x @ W_hat.T + bias``.

        The path that ran is recorded in ``last_path_`` ("w4a8", "int8", "torch_int4", "numba_lut4",
        "triton", "dequantize" or "reference").

        Parameters
        ----------
        x : torch.Tensor of shape (..., in_features)
            Input activations.

        Returns
        -------
        y : torch.Tensor of shape (..., out_features)
            Output, in the dtype of ``x``.
        """
        fast = self._fast
        if fast is None:
            fast = self._prepare()
        plan = fast.plan
        backend = self.backend or _current_backend()
        if backend != plan.backend:  # a config_context around the call: planned again, then kept
            plan = fast.plan = self._plan(fast, backend)
        if x.shape[-1] != self.in_features:
            raise ValueError(f"expected input with last dimension {self.in_features}, got {x.shape[-1]}.")
        flat = x.dim() == 2
        x2 = x if flat else x.reshape(-1, self.in_features)
        if x2.requires_grad:
            x2 = x2.detach()
        if x2.dtype != torch.float32:
            x2 = x2.float()
        if not x2.is_contiguous():
            x2 = x2.contiguous()
        if plan.fixed is not None:
            path, run = plan.fixed
        else:
            key = (torch.get_num_threads(), _cpu_dispatch.bucket_of(x2.shape[0]))
            choice = plan.choice.get(key)
            if choice is None:
                choice = plan.choice[key] = self._choose(plan, key[1], key[0])
            path, run = choice[:2]
            forced = _cpu_dispatch.forced()
            if forced is not None:
                if forced not in plan.runners:
                    raise ValueError(f"path {forced!r} cannot run this layer (it has {sorted(plan.runners)}).")
                path, run = forced, plan.runners[forced]
        y = run(x2)
        self.__dict__["last_path_"] = path  # (plain attribute; skips nn.Module.__setattr__)
        if y.dtype != x.dtype:
            y = y.to(x.dtype)
        return y if flat else y.reshape(*x.shape[:-1], self.out_features)

    def _forward_fake_quantized(self, xf):
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
        y = xq @ torch.from_numpy(deq).T
        if self.rank:
            y = y + (xf @ self.lowrank_down.float().T) @ self.lowrank_up.float().T
        return float(qw.tensor_scale) * y.to(xf.device)

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


def _current_backend():
    """The configured kernel backend (``config_context`` / ``set_config``, or ``SKLEARN_FRONTIER_BACKEND``)."""
    env = os.environ.get(ENV_BACKEND)
    return _check_backend(env) if env else _get_threadlocal_config()["backend"]
