"""Collapsed effective operators (CEO) on higher-order complexes: builders, operators and estimators.

"Collapsed Effective Operators for Higher-order Structures" (Krahn, Bastian, Garg, Schuller, Birdal; ICML 2026):
the graded Laplacian of a complex is collapsed onto its vertices by a regularised Schur complement S_ε, whose
eigenpairs drive spectral clustering, heat-kernel features and smoothing.
"""

from sklearn_frontier._registry import register_demo, register_estimator

from ._baselines import HypergraphSpectralClustering
from ._clustering import CEOSpectralClustering
from ._collapsed import CollapsedLaplacian
from ._complexes import clique_complex, hypergraph_complex
from ._operators import CollapsedOperator, collapsed_operator, coupling_bounds, graded_laplacian
from ._smoother import CEOSmoother
from ._spectral import heat_kernel_signature

__all__ = [
    "clique_complex",
    "hypergraph_complex",
    "coupling_bounds",
    "graded_laplacian",
    "collapsed_operator",
    "CollapsedOperator",
    "heat_kernel_signature",
    "CollapsedLaplacian",
    "CEOSpectralClustering",
    "CEOSmoother",
    "HypergraphSpectralClustering",
]

register_estimator(CollapsedLaplacian, method="topology", task="unsupervised_transform",
                   search_grid={"coupling": [0.0, 0.5]}, fast_params={"n_neighbors": 5})
register_estimator(CEOSpectralClustering, method="topology", task="clustering",
                   search_grid={"coupling": [0.0, 0.5]},
                   fast_params={"n_clusters": 3, "n_neighbors": 5, "n_init": 2})
register_estimator(CEOSmoother, method="topology", task="unsupervised_transform",
                   search_grid={"tau": [0.5, 1.0]}, fast_params={"n_neighbors": 5})
register_estimator(HypergraphSpectralClustering, method="topology", task="clustering",
                   search_grid={"laplacian": ["graph", "zhou"]},
                   fast_params={"n_clusters": 3, "n_neighbors": 5, "n_init": 2}, baseline=True)


def _demo(random_state):
    """CEO vs the graph Laplacian on a hypergraph SBM (ARI), inside a Pipeline."""
    import time

    from sklearn.cluster import SpectralClustering
    from sklearn.metrics import adjusted_rand_score
    from sklearn.pipeline import Pipeline

    from sklearn_frontier.datasets import make_hypergraph_sbm

    A, cells, y = make_hypergraph_sbm(random_state=random_state)
    start = time.perf_counter()
    pipe = Pipeline([("ceo", CEOSpectralClustering(3, affinity="precomputed", random_state=random_state))])
    pipe.fit(A, ceo__cells=cells)
    fit_time = time.perf_counter() - start
    score = adjusted_rand_score(y, pipe.named_steps["ceo"].labels_)
    base = SpectralClustering(3, affinity="precomputed", random_state=random_state).fit(A.toarray())
    return [{"estimator": "CEOSpectralClustering", "task": "clustering (hypergraph SBM)", "metric": "ARI",
             "score": float(score), "baseline": "SpectralClustering (graph only)",
             "baseline_score": float(adjusted_rand_score(y, base.labels_)), "fit_time": fit_time}]


register_demo("topology", _demo)
