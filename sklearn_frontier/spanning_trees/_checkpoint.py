"""Opt-in MCMC checkpoints of the spanning-tree regressors (``checkpoint=`` / ``checkpoint_every=``).

The chains run in segments of ``checkpoint_every`` sweeps; after each segment the chain states (components,
global state, fit, noise variance, sweep counter, the generator's bit state) and every kept draw so far are
written atomically (:func:`~sklearn_frontier.utils._atomic_files.atomic_savez`: temp file, fsync, rename,
SHA-256 of every member). A chain's result depends only on its own generator and sweep count, so running in
segments, or resuming a killed fit from its last checkpoint, gives bit-for-bit the uninterrupted result.
SIGINT during a fit is deferred to the end of the current sweep: the state is then saved and
``KeyboardInterrupt`` raised (a second SIGINT interrupts at once, keeping the last periodic checkpoint).

The file holds no pickle: nested dicts / lists of arrays and plain scalars are stored as a JSON tree whose
arrays are ``.npz`` members. A fingerprint of the data, the parameters and the built domain graph refuses a
checkpoint of another fit.
"""

import hashlib
import json
import os
import signal
import threading

import numpy as np
from sklearn.base import BaseEstimator

from sklearn_frontier.exceptions import StateFileError
from sklearn_frontier.utils._atomic_files import atomic_savez, read_state_file
from sklearn_frontier.utils._parallel import Parallel, delayed

from ._mcmc import run_chain

_TAG = "sklearn_frontier.spanning_trees.mcmc_checkpoint"
_VERSION = 1
# parameters that do not change the draws: a checkpoint written with other values resumes
_FREE_PARAMS = ("checkpoint", "checkpoint_every", "verbose", "n_jobs", "warm_start")


# ------------------------------------------------------------------------------------ pickle-free encoding
def _encode(obj, arrays):
    """A JSON-able tree for ``obj``; arrays (and numpy scalars) go to ``arrays`` as members ``a<i>``."""
    if isinstance(obj, np.ndarray) or isinstance(obj, np.generic):
        key = f"a{len(arrays)}"
        arrays[key] = np.asarray(obj)
        return {"__array__" if isinstance(obj, np.ndarray) else "__scalar__": key}
    if isinstance(obj, np.random.Generator):
        bg = obj.bit_generator
        return {"__rng__": type(bg).__name__, "state": bg.state}
    if isinstance(obj, dict):
        if not all(isinstance(k, str) for k in obj):
            raise TypeError("checkpoint dicts need str keys")
        return {"__dict__": {k: _encode(v, arrays) for k, v in obj.items()}}
    if isinstance(obj, (list, tuple)):
        same = (len(obj) > 1 and all(isinstance(v, np.ndarray) for v in obj)
                and len({(v.shape, v.dtype.str) for v in obj}) == 1)
        if same and isinstance(obj, list):  # the kept draws: one member per list, not one per draw
            key = f"a{len(arrays)}"
            arrays[key] = np.stack(obj)
            return {"__stack__": key}
        if isinstance(obj, list) and _same_records(obj):  # per-draw parameter records: one member per field
            fields = {}
            for k in obj[0]:
                fields[k] = {"key": f"a{len(arrays)}", "scalar": isinstance(obj[0][k], np.generic)}
                arrays[fields[k]["key"]] = np.stack([np.asarray(r[k]) for r in obj])
            return {"__records__": fields}
        return {"__tuple__" if isinstance(obj, tuple) else "__list__": [_encode(v, arrays) for v in obj]}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"cannot checkpoint an object of type {type(obj).__name__}")


def _same_records(obj):
    """A list of >1 dicts with the same str keys, each field an array (or numpy scalar) of one shape and dtype."""
    if len(obj) < 2 or not all(isinstance(r, dict) for r in obj):
        return False
    keys = list(obj[0])
    if not keys or any(list(r) != keys for r in obj) or not all(isinstance(k, str) for k in keys):
        return False
    for k in keys:
        kinds = {(type(r[k]), np.shape(r[k]), np.asarray(r[k]).dtype.str) for r in obj
                 if isinstance(r[k], (np.ndarray, np.generic))}
        if len(kinds) != 1 or not all(isinstance(r[k], (np.ndarray, np.generic)) for r in obj):
            return False
    return True


def _decode(tree, arrays):
    if not isinstance(tree, dict):
        return tree
    if "__array__" in tree:
        return np.array(arrays[tree["__array__"]])
    if "__scalar__" in tree:
        return arrays[tree["__scalar__"]][()]
    if "__stack__" in tree:
        return list(np.array(arrays[tree["__stack__"]]))
    if "__records__" in tree:
        fields = {k: (np.array(arrays[f["key"]]), f["scalar"]) for k, f in tree["__records__"].items()}
        n = len(next(iter(fields.values()))[0])
        return [{k: (a[i][()] if scalar else a[i]) for k, (a, scalar) in fields.items()} for i in range(n)]
    if "__rng__" in tree:
        bg = getattr(np.random, tree["__rng__"])()
        bg.state = tree["state"]
        return np.random.Generator(bg)
    if "__dict__" in tree:
        return {k: _decode(v, arrays) for k, v in tree["__dict__"].items()}
    if "__list__" in tree:
        return [_decode(v, arrays) for v in tree["__list__"]]
    if "__tuple__" in tree:
        return tuple(_decode(v, arrays) for v in tree["__tuple__"])
    raise ValueError(f"unknown node {sorted(tree)}")


# ------------------------------------------------------------------------------------ fingerprint
def _describe(value):
    """A stable text for a parameter value (arrays by digest, callables by name, estimators by parameters)."""
    if isinstance(value, np.ndarray):
        return f"array{value.shape}:{_digest(value)}"
    if isinstance(value, BaseEstimator):
        params = value.get_params(deep=False)
        return f"{type(value).__name__}({', '.join(f'{k}={_describe(params[k])}' for k in sorted(params))})"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_describe(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_describe(value[k])}" for k in sorted(value, key=str)) + "}"
    if hasattr(value, "__geo_interface__"):
        return _describe(value.__geo_interface__)
    if isinstance(value, np.random.RandomState):
        return "RandomState instance"
    if callable(value):
        return f"callable {getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', type(value).__name__)}"
    return repr(value)


def _digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def graph_digest(graph):
    """A digest of the built domain graph: everything of it that the chains see.

    A callable ``domain``, ``graph`` or ``metric`` is described by its qualified name only, which stays the same
    when the user edits the function; the graph it builds is what the draws depend on.
    """
    return f"{graph.kind}:" + _digest(graph.vertices, graph.edges, graph.lengths, graph.repaired,
                                      graph.sample_vertex, np.float64(graph.diameter))


def fingerprint(est, X, y, sample_weight, start_chains, graph):
    """What a checkpoint must match to be resumed: the data, the draw-relevant parameters, the built domain graph,
    the start state."""
    params = est.get_params(deep=False)
    out = {"estimator": type(est).__name__, "data (X, y, sample_weight)": _digest(X, y, sample_weight),
           "domain graph": graph_digest(graph)}
    out.update({f"parameter {k}": _describe(v) for k, v in sorted(params.items()) if k not in _FREE_PARAMS})
    if start_chains is None:
        out["start"] = "a fresh fit"
    else:  # warm_start continuing: the chains it started from
        arrays = {}
        tree = json.dumps(_encode(start_chains, arrays), sort_keys=True)
        out["start"] = "warm start from " + hashlib.sha256(tree.encode() + _digest(
            *[arrays[k] for k in sorted(arrays)]).encode()).hexdigest()
    return out


# ------------------------------------------------------------------------------------ file
def checkpoint_file(path, fp):
    """The file of one fit: ``path`` with a key of the fit's fingerprint before the suffix.

    Clones share the ``checkpoint`` parameter (cross-validation folds, grid-search candidates, refits), so each
    fit writes its own file: ``ck.npz`` becomes ``ck.<key>.npz``, the same key for the same data, parameters and
    start state, so a killed fit finds its file again when it is run again.
    """
    key = hashlib.sha256(json.dumps(fp, sort_keys=True).encode()).hexdigest()[:12]
    root, suffix = os.path.splitext(path)
    return f"{root}.{key}{suffix or '.npz'}"


def save_checkpoint(path, fp, payload):
    arrays = {}
    tree = _encode(payload, arrays)
    members = {f"data/{k}": v for k, v in arrays.items()}
    members.update({"checkpoint/tag": np.array(_TAG), "checkpoint/version": np.array(_VERSION),
                    "checkpoint/fingerprint": np.array(json.dumps(fp, sort_keys=True)),
                    "checkpoint/tree": np.array(json.dumps(tree))})
    atomic_savez(path, members)


def load_checkpoint(path, fp):
    """The payload of a checkpoint written for the fit described by ``fp``; StateFileError otherwise."""
    name = os.fspath(path)
    arrays = read_state_file(name)  # zip structure, checksum, missing members
    if "checkpoint/tag" not in arrays or str(arrays["checkpoint/tag"]) != _TAG:
        what = str(arrays["tag"]) if "tag" in arrays else "no 'checkpoint/tag' member"
        raise StateFileError(name, "tag", f"not an MCMC checkpoint of the spanning-tree regressors ({what}).")
    try:
        version = int(arrays["checkpoint/version"])
    except (KeyError, TypeError, ValueError) as exc:
        raise StateFileError(name, "version", "the checkpoint version is missing or unreadable.") from exc
    if version != _VERSION:
        raise StateFileError(name, "version", f"checkpoint version {version}; this release reads version "
                             f"{_VERSION}. Delete the file to start afresh.")
    try:
        stored = json.loads(str(arrays["checkpoint/fingerprint"]))
        tree = json.loads(str(arrays["checkpoint/tree"]))
    except (KeyError, ValueError) as exc:
        raise StateFileError(name, "missing member", "the checkpoint fingerprint or state tree is missing or "
                             "unreadable.") from exc
    differ = [k for k in sorted(set(fp) | set(stored)) if fp.get(k) != stored.get(k)]
    if differ:
        raise StateFileError(name, "consistency", "the checkpoint was written by another fit: it differs in "
                             f"{', '.join(differ)}. Pass the same data and parameters to resume, or another "
                             "checkpoint path (or delete the file) to start afresh.")
    try:
        payload = _decode(tree, {k[len("data/"):]: v for k, v in arrays.items() if k.startswith("data/")})
        if len(payload["chains"]) != len(payload["kept"]) or len(payload["targets"]) != len(payload["chains"]):
            raise ValueError("chain counts differ")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise StateFileError(name, "consistency", f"the chain state cannot be rebuilt: {exc}") from exc
    return payload


# ------------------------------------------------------------------------------------ SIGINT at a sweep end
class _DeferredInterrupt:
    """Within the block, SIGINT sets ``stop`` (the chains end their sweep); a second SIGINT interrupts at once."""

    def __init__(self):
        self.stop = threading.Event()
        self._previous = None

    def _handler(self, signum, frame):
        if self.stop.is_set():
            raise KeyboardInterrupt
        self.stop.set()

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if previous is signal.default_int_handler:  # only replace Python's own KeyboardInterrupt handler
                self._previous = previous
                signal.signal(signal.SIGINT, self._handler)
        return self.stop

    def __exit__(self, *exc):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
        return False


# ------------------------------------------------------------------------------------ the runs
def _merge(kept, more):
    if kept is None:
        return more
    for k, v in more.items():
        if isinstance(v, list):
            kept[k].extend(v)
    return kept


def run_chains(est, ctx, family, data, chains, n_sweeps, kwargs, fp, predict_seed):
    """Run every chain ``n_sweeps`` more sweeps: ``(results, chains, predict_seed)``.

    Without ``est.checkpoint`` one call per chain; with it, segments of ``est.checkpoint_every`` sweeps, a
    checkpoint after each, resuming first from an existing checkpoint of the same fit.
    """
    def segment(sweeps, stop=None):
        return Parallel(n_jobs=est.n_jobs, prefer="threads")(
            delayed(run_chain)(ctx, family, data, ch, k, verbose=est.verbose, desc=f"chain {i}", stop=stop,
                               **kwargs)
            for i, (ch, k) in enumerate(zip(chains, sweeps)))

    if est.checkpoint is None:
        est.checkpoint_path_ = None
        return segment([n_sweeps] * len(chains)), chains, predict_seed
    given = os.fspath(est.checkpoint)
    folder = os.path.dirname(os.path.abspath(given))
    if os.path.isdir(given) or not os.path.isdir(folder):
        raise ValueError(f"checkpoint={given!r} must be a file path in an existing folder"
                         f"{' (it is a folder)' if os.path.isdir(given) else f'; {folder} does not exist'}.")
    path = checkpoint_file(given, fp)
    est.checkpoint_path_ = path
    every = int(est.checkpoint_every)
    targets = [int(ch["t"]) + int(n_sweeps) for ch in chains]
    kept = [None] * len(chains)
    acc = [None] * len(chains)
    if os.path.exists(path):
        payload = load_checkpoint(path, fp)
        chains, kept, acc = payload["chains"], payload["kept"], payload["acc"]
        targets, predict_seed = [int(t) for t in payload["targets"]], int(payload["predict_seed"])

    def save():
        save_checkpoint(path, fp, {"chains": chains, "kept": kept, "acc": acc, "targets": targets,
                                   "predict_seed": predict_seed})

    with _DeferredInterrupt() as stop:
        while True:
            todo = [max(0, min(every, t - int(ch["t"]))) for ch, t in zip(chains, targets)]
            if kept[0] is not None and not any(todo):
                break
            for c, (more, a) in enumerate(segment(todo, stop)):
                kept[c] = _merge(kept[c], more)
                acc[c] = a if acc[c] is None else {m: [acc[c][m][0] + x, acc[c][m][1] + n]
                                                   for m, (x, n) in a.items()}
            save()
            if stop.is_set():
                raise KeyboardInterrupt(f"interrupted; the MCMC state is saved in {path} (fit again to resume)")
            if not any(todo):
                break
    return list(zip(kept, acc)), chains, predict_seed
