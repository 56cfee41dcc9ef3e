"""A pickle-free file for quantized models: every tensor in safetensors, each quantized layer's format as JSON."""

import dataclasses
import json

from ._embedding import QuantizedEmbedding
from ._formats import FormatSpec
from ._linear import TwinQuantLinear

__all__ = ["save_quantized", "load_quantized"]

_FORMAT = "sklearn_frontier.quantized_model/1"


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
    name, shapes and number format, so that
    :func:`load_quantized` rebuilds the layers on an unquantized copy of the architecture.

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
    save_file(tensors, path, metadata={"format": _FORMAT, "layers": json.dumps(layers),
                                       "embeddings": json.dumps(tables)})
    return path


def load_quantized(model, path):
    """Load a file written by :func:`save_quantized` into ``model`` (the unquantized architecture), in place.

    Each layer listed in the file replaces the module of that name by a :class:`TwinQuantLinear` (or a
    :class:`QuantizedEmbedding`) of the stored shapes and format; then every tensor is loaded (strictly: missing
    or unexpected keys raise).

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
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata() or {}
        if meta.get("format") != _FORMAT:
            raise ValueError(f"{path} was not written by save_quantized (metadata format {meta.get('format')!r}).")
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    modules = dict(model.named_modules())
    for name, rec in json.loads(meta["layers"]).items():
        if name not in modules:
            raise ValueError(f"the model has no module named {name!r}, which {path} quantized.")
        new = TwinQuantLinear(rec["in_features"], rec["out_features"], rank=rec["rank"], fmt=FormatSpec(**rec["fmt"]),
                              transform=rec["transform"], transform_block_size=rec["transform_block_size"],
                              bias=rec["bias"], act_bits=rec["act_bits"], act_format=rec["act_format"],
                              act_quant=rec["act_quant"])
        new.accounting_transform = rec["accounting_transform"]
        parent, _, child = name.rpartition(".")
        setattr(modules[parent] if parent else model, child, new)
    for name, rec in json.loads(meta.get("embeddings", "{}")).items():
        if name not in modules:
            raise ValueError(f"the model has no module named {name!r}, which {path} quantized.")
        parent, _, child = name.rpartition(".")
        setattr(modules[parent] if parent else model, child, QuantizedEmbedding(**rec))
    model.load_state_dict(tensors, strict=True)
    return model
