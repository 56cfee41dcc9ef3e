"""A pickle-free file for quantized models: every tensor in safetensors, each quantized layer's format as JSON,
and a SHA-256 of every tensor so that a damaged file is refused rather than loaded."""

import dataclasses
import hashlib
import json

import torch

from sklearn_frontier.utils._warnings import warn_user

from ._embedding import QuantizedEmbedding
from ._formats import FormatSpec
from ._linear import TwinQuantLinear

__all__ = ["save_quantized", "load_quantized"]

_FORMAT = "sklearn_frontier.quantized_model/2"
_FORMAT_V1 = "sklearn_frontier.quantized_model/1"  # written before checksums: loaded with a warning


def _tensor_digest(t):
    """SHA-256 of a tensor's dtype, shape and bytes (any dtype, bfloat16 included)."""
    t = t.detach().cpu().contiguous()
    h = hashlib.sha256(f"{t.dtype}\0{tuple(t.shape)}\0".encode())
    h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def _layer_record(mod):
    return {"in_features": mod.in_features, "out_features": mod.out_features, "rank": mod.rank,
            "fmt": dataclasses.asdict(mod.fmt), "transform": mod.transform,
            "transform_block_size": mod.transform_block_size, "bias": mod.bias is not None,
            "act_bits": mod.act_bits, "act_format": mod.act_format, "act_quant": mod.act_quant,
            "accounting_transform": getattr(mod, "accounting_transform", mod.transform or "none")}


def save_quantized(model, path):
    """Write a model holding :class:`TwinQuantLinear` layers to ``path`` (safetensors, no pickle).

    The file holds the model's whole ``state_dict`` (packed codes, scales, zero points, factors, transforms and
    every other parameter) and, as metadata, each quantized layer's (and :class:`QuantizedEmbedding` table's)
    name, shapes and number format, so that :func:`load_quantized` rebuilds the layers on an unquantized copy of
    the architecture, and a SHA-256 of every tensor, which :func:`load_quantized` verifies.

    Parameters
    ----------
    model : torch.nn.Module
        The quantized model (e.g. after :func:`quantize_model`).
    path : str or path-like
        Destination file (conventionally ``*.safetensors``).

    Returns
    -------
    path : str
        The written file.

    See Also
    --------
    load_quantized : Read it back.

    Examples
    --------
    >>> import os, tempfile, torch
    >>> from sklearn_frontier.quantization import load_quantized, quantize_model, save_quantized
    >>> net = torch.nn.Sequential(torch.nn.Linear(64, 8))
    >>> _ = quantize_model(net, method="rtn", group_size=32)
    >>> path = save_quantized(net, os.path.join(tempfile.mkdtemp(), "net.safetensors"))
    >>> fresh = load_quantized(torch.nn.Sequential(torch.nn.Linear(64, 8)), path)
    >>> bool(torch.equal(fresh(torch.ones(1, 64)), net(torch.ones(1, 64))))
    True
    """
    from safetensors.torch import save_file

    layers = {name: _layer_record(m) for name, m in model.named_modules() if isinstance(m, TwinQuantLinear)}
    tables = {name: {"num_embeddings": m.num_embeddings, "embedding_dim": m.embedding_dim, "n_bits": m.n_bits,
                     "group_size": m.group_size, "padding_idx": m.padding_idx}
              for name, m in model.named_modules() if isinstance(m, QuantizedEmbedding)}
    # safetensors refuses tensors sharing memory (tied weights, views): write each as its own copy
    tensors = {k: v.detach().cpu().contiguous().clone() for k, v in model.state_dict().items()}
    path = str(path)
    checksums = {k: _tensor_digest(v) for k, v in tensors.items()}
    save_file(tensors, path, metadata={"format": _FORMAT, "layers": json.dumps(layers),
                                       "embeddings": json.dumps(tables), "sha256": json.dumps(checksums)})
    return path


def load_quantized(model, path):
    """Load a file written by :func:`save_quantized` into ``model`` (the unquantized architecture), in place.

    Each layer listed in the file replaces the module of that name by a :class:`TwinQuantLinear` (or a
    :class:`QuantizedEmbedding`) of the stored shapes and format; then every tensor is loaded (strictly: missing
    or unexpected keys raise). Nothing is loaded wrong without a word: every tensor's SHA-256 is checked
    against the one written with it (a flipped byte or a truncated file is an error naming the file and the
    tensor), the skeleton's module at each quantized name must be a linear layer (embedding table) of the
    stored widths (else an error naming the layer and both shapes), and every read error names the file.
    Files written before checksums existed load with a warning.

    Parameters
    ----------
    model : torch.nn.Module
        A skeleton of the model, e.g. the fp32 model freshly built; modified in place.
    path : str or path-like
        The file.

    Returns
    -------
    model : torch.nn.Module
        The quantized model.

    Raises
    ------
    ValueError
        The file is not a ``save_quantized`` file, is damaged (checksum, truncation, unreadable header) or does
        not fit the skeleton (a missing module, other widths); the message names the file and the layer.

    See Also
    --------
    save_quantized : Write the file.

    Examples
    --------
    >>> import os, tempfile, torch
    >>> from sklearn_frontier.quantization import load_quantized, quantize_model, save_quantized
    >>> net = torch.nn.Sequential(torch.nn.Linear(64, 8))
    >>> _ = quantize_model(net, method="rtn", group_size=32)
    >>> path = save_quantized(net, os.path.join(tempfile.mkdtemp(), "net.safetensors"))
    >>> type(load_quantized(torch.nn.Sequential(torch.nn.Linear(64, 8)), path)[0]).__name__
    'TwinQuantLinear'
    """
    tensors, meta = _read(path)
    modules = dict(model.named_modules())
    layers = json.loads(meta["layers"])
    tables = json.loads(meta.get("embeddings", "{}"))
    for name, rec in layers.items():
        _check_skeleton(modules, name, path, (rec["out_features"], rec["in_features"]), "weight")
    for name, rec in tables.items():
        _check_skeleton(modules, name, path, (rec["num_embeddings"], rec["embedding_dim"]), "table")
    for name, rec in layers.items():
        new = TwinQuantLinear(rec["in_features"], rec["out_features"], rank=rec["rank"], fmt=FormatSpec(**rec["fmt"]),
                              transform=rec["transform"], transform_block_size=rec["transform_block_size"],
                              bias=rec["bias"], act_bits=rec["act_bits"], act_format=rec["act_format"],
                              act_quant=rec["act_quant"])
        new.accounting_transform = rec["accounting_transform"]
        parent, _, child = name.rpartition(".")
        setattr(modules[parent] if parent else model, child, new)
    for name, rec in tables.items():
        parent, _, child = name.rpartition(".")
        setattr(modules[parent] if parent else model, child, QuantizedEmbedding(**rec))
    try:
        model.load_state_dict(tensors, strict=True)
    except RuntimeError as exc:  # missing/unexpected keys or other shapes of the unquantized parameters
        raise ValueError(f"{path} does not fit this model: {exc}") from exc
    return model


def _read(path):
    """Every tensor and the metadata of ``path``, checksums verified; any failure names the file."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
            if meta.get("format") not in (_FORMAT, _FORMAT_V1):
                raise ValueError(f"{path} was not written by save_quantized (metadata format "
                                 f"{meta.get('format')!r}).")
            tensors = {k: f.get_tensor(k) for k in f.keys()}
    except (SafetensorError, OSError, RuntimeError) as exc:
        raise ValueError(f"cannot read {path} as a save_quantized file: {exc}") from exc
    if meta["format"] == _FORMAT_V1:
        warn_user(f"{path} was written without checksums (an older save_quantized): its tensors are not "
                  "verified. Save it again to add them.")
        return tensors, meta
    try:
        expected = json.loads(meta["sha256"])
    except (KeyError, ValueError) as exc:
        raise ValueError(f"{path} is damaged: its checksum record is missing or unreadable.") from exc
    if set(expected) != set(tensors):
        raise ValueError(f"{path} is damaged: its tensors {sorted(set(tensors) ^ set(expected))} do not match its "
                         "checksum record.")
    bad = [k for k, t in tensors.items() if _tensor_digest(t) != expected[k]]
    if bad:
        raise ValueError(f"{path} is damaged: the SHA-256 of tensor(s) {bad[:5]} differs from the one written "
                         "with it (a changed or truncated file).")
    return tensors, meta


def _check_skeleton(modules, name, path, stored, kind):
    """The skeleton's module ``name`` exists and has the stored (out, in) widths (or table shape)."""
    if name not in modules:
        raise ValueError(f"the model has no module named {name!r}, which {path} quantized.")
    mod = modules[name]
    if kind == "weight":
        have = (getattr(mod, "out_features", None), getattr(mod, "in_features", None))
        what = "weight (out_features, in_features)"
    else:
        have = (getattr(mod, "num_embeddings", None), getattr(mod, "embedding_dim", None))
        what = "table (num_embeddings, embedding_dim)"
    if tuple(have) != tuple(stored):
        raise ValueError(f"layer {name!r}: {path} stores a {what} of shape {tuple(stored)}, but the model's "
                         f"{type(mod).__name__} has shape {tuple(have)}.")
