"""Readers for the files of the all-MiniLM-L6-v2 package: the weights (safetensors) and the WordPiece tokenizer.

Each reader has two implementations that give identical results on the bundled corpus: the well-kept packages
``safetensors`` and ``tokenizers`` (the ``[datasets]`` extra, ``pip install "sklearn-frontier[datasets]"``;
neither pulls ``transformers``, whose ``kernels`` dependency would shadow our ``kernels/`` folder), used when
installed, and small hand-written fallbacks (a numpy safetensors reader, a pure-Python WordPiece tokenizer) used
otherwise or on request (``readers="builtin"``).
"""

import importlib
import json
import struct
import unicodedata
from pathlib import Path

import numpy as np

__all__ = ["BertWordPieceTokenizer"]

_READERS = ("auto", "package", "builtin")
_EXTRA = 'pip install "sklearn-frontier[datasets]"'


def _use_package(readers, module):
    """Whether to read with the package ``module``: ``readers`` is "auto", "package" or "builtin"."""
    if readers not in _READERS:
        raise ValueError(f"readers must be one of {_READERS}, got {readers!r}")
    if readers == "builtin":
        return False
    try:
        importlib.import_module(module)
    except ImportError as exc:
        if readers == "package":
            raise ImportError(f"readers='package' needs the '{module}' package; install it with `{_EXTRA}`") from exc
        return False
    return True


# ----------------------------------------------------------------------------------------------- weights
# bfloat16 is read as int16 bits and viewed as torch.bfloat16, as ``safetensors.torch`` returns it
_ST_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32,
              "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_, "BF16": np.int16}


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
        if info["dtype"] not in _ST_DTYPES:
            raise ValueError(f"tensor {name!r} has dtype {info['dtype']!r}, which this reader does not handle; "
                             f"install safetensors (`{_EXTRA}`)")
        dtype = np.dtype(_ST_DTYPES[info["dtype"]])
        start, stop = info["data_offsets"]
        arr = np.frombuffer(raw, dtype=dtype, count=(stop - start) // dtype.itemsize, offset=base + start)
        t = torch.from_numpy(arr.reshape(info["shape"]).copy())
        out[name] = t.view(torch.bfloat16) if info["dtype"] == "BF16" else t
    return out


def load_safetensors(path, readers="auto"):
    """``{name: torch.Tensor}`` of a ``.safetensors`` file, read by ``safetensors`` or the built-in reader."""
    if _use_package(readers, "safetensors"):
        from safetensors.torch import load_file

        return load_file(str(path))
    return _read_safetensors(path)


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
    This is the pure-Python implementation; :func:`load_minilm_l6_v2` returns a subclass backed by the
    ``tokenizers`` package when it is installed (same ids on the bundled corpus, faster: see
    ``benchmarks/results/minilm_readers.md``).

    Parameters
    ----------
    vocab : list of str
        The vocabulary; a token's id is its index.
    max_length : int, default=256
        Maximum sequence length including ``[CLS]`` and ``[SEP]`` (all-MiniLM-L6-v2 uses 256).

    Attributes
    ----------
    backend : str
        ``"python"`` here, ``"tokenizers"`` for the package-backed subclass.

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

    backend = "python"

    def __init__(self, vocab, max_length=256):
        self.vocab = list(vocab)
        self.token_to_id = {t: i for i, t in enumerate(self.vocab)}
        if int(max_length) < 2:
            raise ValueError(f"max_length must be >= 2 (room for [CLS] and [SEP]), got {max_length}")
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


class _PackageWordPieceTokenizer(BertWordPieceTokenizer):
    """:class:`BertWordPieceTokenizer` with its work done by the Rust ``tokenizers`` package.

    The pipeline is the same: ``BertNormalizer`` (clean text, isolate CJK, lower-case, strip accents),
    ``BertPreTokenizer`` (whitespace and punctuation), ``WordPiece`` over the same vocabulary (``##``, words
    over 100 characters -> ``[UNK]``), ``[CLS] ... [SEP]``, truncation to ``max_length``, right padding with
    ``[PAD]``. No added tokens are registered, so a literal ``"[CLS]"`` in the text is split like any word, as
    in the parent. The two differ only where Python's ``unicodedata`` and the package's Unicode tables
    disagree: unassigned code points (dropped by the parent as category ``Cn``, kept, hence ``[UNK]``, by the
    package), marks newer than the package's tables, and a word-final capital sigma (``str.lower`` gives
    final ``ς``, the package ``σ``).
    """

    backend = "tokenizers"

    def __init__(self, vocab, max_length=256):
        super().__init__(vocab, max_length)
        from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
        from tokenizers.models import WordPiece

        words = Tokenizer(WordPiece(self.token_to_id, unk_token="[UNK]", continuing_subword_prefix="##",
                                    max_input_chars_per_word=100))
        words.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                                      strip_accents=None, lowercase=True)
        words.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        sequences = Tokenizer.from_str(words.to_str())
        sequences.post_processor = processors.BertProcessing(("[SEP]", self.sep_id), ("[CLS]", self.cls_id))
        sequences.enable_truncation(self.max_length)
        sequences.enable_padding(pad_id=self.pad_id, pad_token="[PAD]")  # to the longest of each batch
        self._words, self._sequences = words, sequences  # the first untruncated, for ``tokenize``

    def tokenize(self, text):
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return self._words.encode(text, add_special_tokens=False).tokens

    def encode(self, text):
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return self._sequences.encode(text).ids

    def __call__(self, texts):
        import torch

        texts = [texts] if isinstance(texts, str) else list(texts)
        bad = next((t for t in texts if not isinstance(t, str)), None)
        if bad is not None:
            raise TypeError(f"text must be a str, got {type(bad).__name__}")
        if not texts:
            return {"input_ids": torch.zeros((0, 2), dtype=torch.long),
                    "attention_mask": torch.zeros((0, 2), dtype=torch.long)}
        batch = getattr(self._sequences, "encode_batch_fast", self._sequences.encode_batch)(texts)
        return {"input_ids": torch.tensor([e.ids for e in batch], dtype=torch.long),
                "attention_mask": torch.tensor([e.attention_mask for e in batch], dtype=torch.long)}


def wordpiece_tokenizer(vocab_path, max_length=256, readers="auto"):
    """The WordPiece tokenizer of ``vocab_path``: backed by ``tokenizers`` if installed (``readers="auto"``)."""
    cls = _PackageWordPieceTokenizer if _use_package(readers, "tokenizers") else BertWordPieceTokenizer
    return cls.from_vocab_file(vocab_path, max_length=max_length)
