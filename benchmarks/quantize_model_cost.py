"""What ``quantize_model`` costs beyond the quantizers: the calibration (statistics) pass vs a plain forward.

``python -m benchmarks quantize_model_cost [--quick]`` on all-MiniLM-L6-v2 (36 linear layers), one thread:

* ``forward``: the fp32 model over the calibration batches (one paragraph a batch, unpadded), no hooks;
* ``quantize_model`` with those batches for RTN (its weights do not depend on the data, but the statistics
  pass scores them on it for the report's ``calib_relative_error``) and for SVD rank 8 (data-aware), wall
  time split into the part spent in the quantizers (the per-layer ``fit_time_s`` of the report) and the rest
  (the statistics pass, module construction);
* ``rtn without data``: the same RTN weights with no calibration batches.

``--compare-with COMMIT`` measures the code of an earlier commit first (``git archive`` of its package, run in a
subprocess) into the same table: the before/after record of a change.

Writes ``benchmarks/results/quantize_model_cost.json`` and ``.md`` (``results/quick/`` with ``--quick``).
"""

import argparse
import copy
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from benchmarks._harness import write_results

ROOT = Path(__file__).resolve().parents[1]


def measure(quick, label):
    """The rows of one run of the code importable as ``sklearn_frontier`` (one torch thread)."""
    import torch

    from benchmarks.quantization import _spread, split_corpus
    from sklearn_frontier.datasets import load_minilm_l6_v2
    from sklearn_frontier.quantization import quantize_model

    torch.set_num_threads(1)
    model, _ = load_minilm_l6_v2()
    calib_texts, _ = split_corpus("headline")
    batches = [model.tokenizer([t]) for t in _spread(calib_texts, 32 if quick else 128)]
    n_tokens = int(sum(b["input_ids"].numel() for b in batches))

    def forward(m, b):
        return m(b["input_ids"], b["attention_mask"])

    for method in ("rtn", "svd"):  # warm-up: compiled kernels loaded, caches filled, before anything is timed
        quantize_model(copy.deepcopy(model), batches[:1], method=method, group_size=128, forward_fn=forward)

    def plain_forward():
        t0 = time.perf_counter()
        with torch.no_grad():
            for b in batches:
                forward(model, b)
        return time.perf_counter() - t0

    fwd = plain_forward()
    rows = []
    for case, method, data, extra in (("rtn with calibration batches", "rtn", batches, {}),
                                      ("rtn without data", "rtn", None, {}),
                                      ("svd r8 with calibration batches", "svd", batches, {"rank": 8})):
        q = copy.deepcopy(model)
        t0 = time.perf_counter()
        report = quantize_model(q, data, method=method, group_size=128, forward_fn=forward, random_state=0,
                                **extra)
        total = time.perf_counter() - t0
        fit = float(sum(r["fit_time_s"] for r in report.layers))
        rows.append({"section": "calibration", "case": case, "code": label, "batches": len(batches) * bool(data),
                     "tokens": n_tokens * bool(data), "total_s": total, "quantizer_s": fit, "other_s": total - fit})
    fwd = min(fwd, plain_forward())  # timed before and after the rest: the less disturbed of the two
    rows.insert(0, {"section": "calibration", "case": "fp32 forward over the batches", "code": label,
                    "batches": len(batches), "tokens": n_tokens, "total_s": fwd, "quantizer_s": 0.0, "other_s": fwd})
    for r in rows:
        r["other_vs_forward"] = r["other_s"] / fwd
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks quantize_model_cost")
    parser.add_argument("--quick", action="store_true", help="fewer calibration batches")
    parser.add_argument("--compare-with", default=None, metavar="COMMIT",
                        help="a git commit of this repository, measured first (its sklearn_frontier/ and kernels/, "
                             "unpacked by `git archive` into a temporary folder, run in a subprocess), same table")
    parser.add_argument("--rows-json", action="store_true", help=argparse.SUPPRESS)  # subprocess mode
    args = parser.parse_args(argv)
    if args.rows_json:
        print("ROWS " + json.dumps(measure(args.quick, "other tree")))
        return 0
    rows = []
    if args.compare_with:
        with tempfile.TemporaryDirectory() as tree:
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.compare_with, "sklearn_frontier",
                                      "kernels"], capture_output=True, check=True).stdout
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(tree, filter="data")
            # the kernels package lives beside the package in a source tree (an editable install maps it)
            os.symlink(os.path.join(tree, "kernels"), os.path.join(tree, "sklearn_frontier", "kernels"))
            # run from the other tree, so its sklearn_frontier comes first on the path; the benchmarks from this one
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([tree, str(ROOT)])}
            cmd = [sys.executable, "-m", "benchmarks", "quantize_model_cost", "--rows-json"] + ["--quick"] * args.quick
            out = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True, check=True).stdout
        other = json.loads(next(line[5:] for line in out.splitlines() if line.startswith("ROWS ")))
        rows += [{**r, "code": f"commit {args.compare_with}"} for r in other]
    rows += measure(args.quick, "this tree")
    notes = ("Warm-up run first (compiled kernels loaded) for every method. One torch thread; wall seconds on a shared "
             "machine. `other_s` = total - sum of the per-layer quantizer times (`fit_time_s`): the statistics pass "
             "plus module construction. `other_vs_forward` divides it by the plain fp32 forward over the same "
             "batches in the same process (the target is about 1). With --compare-with, the other tree's rows come "
             "from a subprocess run of that commit's code just before this one.")
    text = write_results("quantize_model_cost", rows, notes=notes, quick=args.quick,
                         command="python -m benchmarks quantize_model_cost" + " --quick" * args.quick
                         + (f" --compare-with {args.compare_with}" if args.compare_with else ""))
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
