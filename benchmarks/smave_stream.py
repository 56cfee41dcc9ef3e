"""SMAVE streaming: how far ``partial_fit`` over chunks ends from the full fit, by chunk size.

``python -m benchmarks smave_stream [--quick]`` writes ``benchmarks/results/smave_stream.{json,md}``. Data:
``make_sdr_regression(n_samples=4000, n_features=10)`` (a planted 2-D subspace), seeds 0-2. Each seed fits SMAVE on
all rows, then streams the same rows through ``partial_fit`` in chunks of each size; the table gives the
planted-subspace distance of each, and the stream's distance over the full fit's. This is the measurement behind
``MIN_USEFUL_CHUNK``, the chunk size below which ``partial_fit`` warns.
"""

import argparse
import statistics
import warnings

from benchmarks._harness import write_results

CHUNKS = (100, 200, 400, 800, 1600)


def run(seeds, n_samples=4000, n_features=10):
    from sklearn_frontier.datasets import make_sdr_regression
    from sklearn_frontier.sdr import SMAVE, subspace_distance

    per_chunk = {c: [] for c in CHUNKS}
    full_dist = []
    for seed in seeds:
        X, y, B = make_sdr_regression(n_samples=n_samples, n_features=n_features, random_state=seed)[:3]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # small chunks warn by design
            full = subspace_distance(SMAVE(n_components=2, random_state=seed).fit(X, y).components_.T, B)
            full_dist.append(full)
            for c in CHUNKS:
                est = SMAVE(n_components=2, random_state=seed)
                for i in range(0, n_samples, c):
                    est.partial_fit(X[i:i + c], y[i:i + c])
                per_chunk[c].append(subspace_distance(est.components_.T, B) / full)
    rows = [{"method": "SMAVE fit", "chunk": n_samples, "distance_over_full": 1.0,
             "full_distance": statistics.median(full_dist), "seeds": len(seeds)}]
    rows += [{"method": "SMAVE partial_fit", "chunk": c, "distance_over_full": statistics.median(per_chunk[c]),
              "full_distance": statistics.median(full_dist), "seeds": len(seeds)} for c in CHUNKS]
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks smave_stream", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one seed")
    args = parser.parse_args(argv)
    rows = run(range(1 if args.quick else 3))
    notes = ("Medians over seeds of the streamed fit's planted-subspace distance divided by the full fit's (the same "
             "rows, the same seed).")
    print(write_results("smave_stream", rows, notes=notes, quick=args.quick,
                        command="python -m benchmarks smave_stream" + (" --quick" if args.quick else "")))
    return 0
