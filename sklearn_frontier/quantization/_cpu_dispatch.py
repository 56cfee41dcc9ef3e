"""Which CPU kernel runs a quantized layer, measured on the machine that runs it.

No table of CPUs: for each bucket of row counts (1, 2-8, 9-64, more than 64) the candidate paths of a layer are
timed on a seeded input of a representative row count, the first time a layer of that shape meets that bucket,
with the core's caches overwritten before each timed call (as other layers overwrite them inside a model);
the fastest path whose output stays within the accuracy contract is kept. Decisions are cached in memory and in
a JSON file in the user cache directory (``$XDG_CACHE_HOME/sklearn_frontier/quantization_dispatch.json``, else
``~/.cache/...``), keyed by CPU model, torch's SIMD level, torch thread count, layer shape and format and the
bucket, so a machine measures each shape once.

The accuracy contract: a path's relative output error (squared, against the exact product with the dequantized
weight, on the probe input) must not exceed ``CONTRACT_FACTOR`` times the error that rounding the same
activations to int8 per row alone causes. Weight-only paths, bfloat16 activations, the 32-block W4A8 kernel and
the per-row int8 path (whose re-rounded weight adds an error of the same size) fall inside it; a path that
returns something else is never picked.

``SKLEARN_FRONTIER_QUANT_DISPATCH``: ``off`` skips timing and the cache file and uses the fixed fallback
(``FALLBACK``); ``reset`` ignores (and then overwrites) the stored decisions. A cache file that cannot be read
is ignored with a warning. The fallback also applies when timing fails.
"""

import json
import os
import platform
import statistics
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from sklearn_frontier.utils._warnings import warn_user

ENV = "SKLEARN_FRONTIER_QUANT_DISPATCH"
#: name, upper row count of each bucket and the row count its probe runs at (about the geometric middle)
BUCKETS = (("1", 1, 1), ("2-8", 8, 4), ("9-64", 64, 24), (">64", float("inf"), 256))
CONTRACT_FACTOR = 4.0
#: paths tried, in order, when nothing can be timed: per bucket index 0 (one row) and the others
FALLBACK = (("w4a8", "torch_int4", "numba_lut4", "dequantize"), ("int8", "dequantize"))
_MEMO = {}
_FORCED = [None]


def bucket_of(M):
    """Index of the bucket of ``M`` rows."""
    return 0 if M <= 1 else 1 if M <= 8 else 2 if M <= 64 else 3


@dataclass(frozen=True)
class DispatchRecord:
    """How one bucket of row counts was decided for one layer shape.

    ``path`` runs the bucket; ``source`` is "measured", "cache" or "fallback"; ``times_ms`` and ``rel_err`` hold
    each candidate's median time and relative squared output error on the probe input (``rows`` rows);
    ``tolerance`` is the contract's bound on ``rel_err``; ``excluded`` lists candidates outside it; ``prepare_ms``
    is what measuring cost.
    """

    bucket: str
    rows: int
    path: str
    source: str
    times_ms: dict = field(default_factory=dict)
    rel_err: dict = field(default_factory=dict)
    tolerance: float = float("nan")
    excluded: tuple = ()
    prepare_ms: float = 0.0


def cache_file():
    """The decisions file (``$XDG_CACHE_HOME`` aware)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "sklearn_frontier" / "quantization_dispatch.json"


def cpu_model():
    """The CPU's model name (``/proc/cpuinfo``; ``platform.processor()`` elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def machine_key():
    try:
        simd = torch.backends.cpu.get_cpu_capability()
    except (AttributeError, RuntimeError):
        simd = "unknown"
    return f"{cpu_model()} | {simd} | torch {torch.__version__}"


def decision_key(layer_key, threads, bucket):
    return f"{machine_key()} | threads={threads} | {layer_key} | M {BUCKETS[bucket][0]}"


@contextmanager
def force_path(path):
    """Run every CPU layer on ``path`` (its runner must exist for the layer) inside the block; None: measured."""
    saved = _FORCED[0]
    _FORCED[0] = path
    try:
        yield
    finally:
        _FORCED[0] = saved


def forced():
    return _FORCED[0]


def clear_memo():
    """Forget the decisions held in memory (the file stays)."""
    _MEMO.clear()


def _mode():
    return os.environ.get(ENV, "").strip().lower()


def _read_file():
    path = cache_file()
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not all(isinstance(v, dict) and "path" in v for v in data.values()):
            raise ValueError("not a table of decisions")
        return data
    except (OSError, ValueError) as exc:
        warn_user(f"ignoring the quantized-kernel dispatch cache {path}: it cannot be read ({exc}); the kernels "
                  "are measured again and the file rewritten.")
        return {}


def _write_file(key, record):
    path = cache_file()
    try:
        data = _read_file() if _mode() != "reset" or path in _RESET_DONE else {}
        _RESET_DONE.add(path)
        data[key] = asdict(record)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # a read-only home: decisions stay in memory
        pass


_RESET_DONE = set()


def fallback(candidates, bucket):
    order = FALLBACK[0] if bucket == 0 else FALLBACK[1]
    path = next((p for p in order if p in candidates), next(iter(candidates)))
    return DispatchRecord(BUCKETS[bucket][0], BUCKETS[bucket][2], path, "fallback")


def decide(layer_key, candidates, reference, n_in, bucket, threads):
    """The :class:`DispatchRecord` of ``bucket`` for a layer: from memory, the cache file, or measured.

    ``candidates`` maps path names to runners (float32 (M, n_in) tensor -> output); ``reference`` is the exact
    runner (decode + fp32 GEMM) the contract compares against.
    """
    if _mode() in ("off", "0", "false", "no"):
        return fallback(candidates, bucket)
    key = decision_key(layer_key, threads, bucket)
    rec = _MEMO.get(key)
    if rec is not None and rec.path in candidates:
        return rec
    if _mode() != "reset":
        stored = _read_file().get(key)
        if stored is not None and stored.get("path") in candidates:
            try:
                rec = DispatchRecord(**{**stored, "source": "cache", "excluded": tuple(stored.get("excluded", ()))})
            except TypeError:
                rec = None
            if rec is not None:
                _MEMO[key] = rec
                return rec
    try:
        rec = measure(candidates, reference, n_in, bucket)
    except Exception as exc:  # noqa: BLE001 - any failure of a candidate: the fixed choice, said once
        warn_user(f"timing the quantized-layer kernels failed ({type(exc).__name__}: {exc}); using the fixed "
                  "fallback choice.")
        rec = fallback(candidates, bucket)
    _MEMO[key] = rec
    if rec.source == "measured":
        _write_file(key, rec)
    return rec


#: bytes written between timed calls: more than a core's private caches, so that each candidate reads its
#: weights (and writes its buffers) as it does inside a model, where other layers ran since its last call,
#: rather than from the caches a probe that calls one layer again and again keeps warm for it
EVICT_BYTES = 16 << 20
_EVICT = []


def _evict():
    if not _EVICT:
        _EVICT.append(torch.empty(EVICT_BYTES // 4, dtype=torch.float32))
    _EVICT[0].fill_(1.0)


def _rel(y, ref):
    den = float((ref.double() ** 2).sum())
    return float(((y.double() - ref.double()) ** 2).sum()) / max(den, 1e-300)


def measure(candidates, reference, n_in, bucket, repeats=5, budget_s=0.5):
    """Time every candidate on a seeded probe input and pick the fastest inside the accuracy contract."""
    start = time.perf_counter()
    # one thread: this thread's CPU time, which other processes on a shared machine do not inflate
    clock = time.thread_time if torch.get_num_threads() <= 1 else time.perf_counter
    name, _, rows = BUCKETS[bucket]
    x = torch.randn(rows, n_in, generator=torch.Generator().manual_seed(rows * 7919 + n_in))
    with torch.no_grad():
        ref = reference(x)
        s = x.abs().amax(dim=1, keepdim=True).clamp_min(1e-30) / 127.0  # per-row int8 rounding alone
        act_err = _rel(reference(torch.round(x / s).clamp_(-127, 127) * s), ref)
        tolerance = max(CONTRACT_FACTOR * act_err, 1e-10)
        rel, first = {}, {}
        for path, run in candidates.items():
            run(x)  # builds, compiles, caches
            _evict()
            t0 = clock()
            y = run(x)
            first[path] = clock() - t0
            rel[path] = _rel(y, ref)
        inside = [p for p in candidates if rel[p] <= tolerance]
        best_first = min(first[p] for p in inside)
        timed = [p for p in inside if first[p] <= 4 * best_first]  # far slower on the first call: cannot win
        times = {p: [first[p]] for p in timed}
        t_loop = time.perf_counter()
        for i in range(repeats):
            for p in timed:
                _evict()
                t0 = clock()
                candidates[p](x)
                times[p].append(clock() - t0)
            if i >= 1 and time.perf_counter() - t_loop > budget_s:
                break
    med = {p: 1e3 * statistics.median(v) for p, v in times.items()}
    for p in candidates:
        med.setdefault(p, 1e3 * first[p])
    path = min(timed, key=lambda p: med[p])
    return DispatchRecord(name, rows, path, "measured", med, rel, tolerance,
                          tuple(p for p in candidates if p not in inside), 1e3 * (time.perf_counter() - start))
