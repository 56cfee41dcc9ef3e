"""Active annotation for repeated crowdsourced labelling: MA3S and its baselines.

:class:`MA3SAnnotator` chooses which pool sample gets its next crowd label from a margin-Beta
uncertainty propagated over a kNN graph (no model in the loop). Beside it, with the same API:
:class:`RoundRobinAnnotator` (fewest labels first), :class:`RandomAnnotator` and label uncertainty
(``MA3SAnnotator(propagation="none")``); plus :class:`SimulatedCrowd`, :func:`run_annotation_loop`,
majority-vote and Dawid–Skene aggregation, long-format conversion and pickle-free persistence.
:class:`AnnotationSession` serves a live crowd: leases, workers who come and go, corrections, and every label
in a durable store (:class:`SQLiteLabelStore`, :class:`PostgreSQLLabelStore` for a team on several machines,
or any :class:`LabelStore`).
"""

from sklearn_frontier._registry import register_demo, register_estimator

from ._aggregation import dawid_skene, majority_vote
from ._baselines import RandomAnnotator, RoundRobinAnnotator
from ._crowd import SimulatedCrowd
from ._formats import to_annotation_matrix, to_long_format
from ._loop import run_annotation_loop
from ._ma3s import MA3SAnnotator
from ._persistence import load_annotator, replay_journal
from ._session import AnnotationSession
from ._store import LabelStore, SQLiteLabelStore
from ._store_postgres import PostgreSQLLabelStore

__all__ = [
    "AnnotationSession",
    "LabelStore",
    "SQLiteLabelStore",
    "PostgreSQLLabelStore",
    "MA3SAnnotator",
    "RoundRobinAnnotator",
    "RandomAnnotator",
    "SimulatedCrowd",
    "run_annotation_loop",
    "majority_vote",
    "dawid_skene",
    "to_annotation_matrix",
    "to_long_format",
    "load_annotator",
    "replay_journal",
]

_FAST = {"n_neighbors": 5}
register_estimator(MA3SAnnotator, method="annotation", task="annotation", search_grid={"n_neighbors": [3, 5]},
                   fast_params=_FAST)
register_estimator(RoundRobinAnnotator, method="annotation", task="annotation",
                   search_grid={"n_neighbors": [3, 5]}, fast_params=_FAST, baseline=True)
register_estimator(RandomAnnotator, method="annotation", task="annotation", search_grid={"n_neighbors": [3, 5]},
                   fast_params=_FAST, baseline=True)


def _demo(random_state):
    """MA3S vs round robin on breast_cancer with a simulated heterogeneous crowd, 2n labels, batch 10."""
    import time

    from sklearn.datasets import load_breast_cancer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    rows, scores = [], {}
    for name, est in (("MA3SAnnotator", MA3SAnnotator(random_state=random_state)),
                      ("RoundRobinAnnotator", RoundRobinAnnotator(random_state=random_state))):
        crowd = SimulatedCrowd(y, n_workers=20, random_state=random_state)
        pipe_X = make_pipeline(StandardScaler()).fit_transform(X)
        start = time.perf_counter()
        hist = run_annotation_loop(est, pipe_X, crowd, 2 * len(y), batch_size=10, y_true=y)
        scores[name] = (float(hist["label_accuracy"][-1]), time.perf_counter() - start)
    rows.append({"estimator": "MA3SAnnotator", "task": "annotation", "metric": "label accuracy @2n",
                 "score": scores["MA3SAnnotator"][0], "baseline": "RoundRobinAnnotator",
                 "baseline_score": scores["RoundRobinAnnotator"][0], "fit_time": scores["MA3SAnnotator"][1]})
    return rows


register_demo("annotation", _demo)
