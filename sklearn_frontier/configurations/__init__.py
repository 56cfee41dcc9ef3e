"""MixConfig: configuration-mixed feature augmentation.

:class:`ConfigurationExtractor` finds the partitions of a kNN graph that are optimal over a band of
the modularity resolution (the exact CHAMP envelope of a Louvain resolution scan);
:class:`MixConfigAugmenter` learns per-sample mixing weights over them and appends the mixed
configuration embedding to X for any downstream model; :class:`SemiSupervisedAugmentation` fits it on every
row and a downstream model on the labelled rows (the semi-supervised Pipeline); :func:`make_labelled_scorer` scores
the labelled rows of a partly labelled target in cross-validation.
"""

from sklearn_frontier._registry import register_demo, register_estimator

from ._augmenter import MixConfigAugmenter
from ._extractor import ConfigurationExtractor, plot_resolution_profile
from ._graph import configurations_from_graph
from ._scoring import make_labelled_scorer
from ._semi_supervised import SemiSupervisedAugmentation

__all__ = ["ConfigurationExtractor", "MixConfigAugmenter", "SemiSupervisedAugmentation", "configurations_from_graph",
           "make_labelled_scorer", "plot_resolution_profile"]

register_estimator(ConfigurationExtractor, method="configurations", task="unsupervised_transform",
                   search_grid={"n_neighbors": [5, 10]},
                   fast_params={"n_neighbors": 8, "n_resolutions": 8, "n_restarts": 1})
register_estimator(SemiSupervisedAugmentation, method="configurations", task="classification",
                   search_grid={"augmenter__mixing": ["learned", "uniform"]},
                   fast_params={"augmenter": MixConfigAugmenter(n_neighbors=8, n_resolutions=8, n_restarts=1,
                                                                max_epochs=20, random_state=0)})
register_estimator(MixConfigAugmenter, method="configurations", task="classification",
                   search_grid={"mixing": ["learned", "uniform"]},
                   fast_params={"n_neighbors": 8, "n_resolutions": 8, "n_restarts": 1, "max_epochs": 20})


def _demo(random_state=0):
    """MixConfig (learned) vs raw features, LogisticRegression downstream, 10 % labels."""
    import time

    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_frontier.datasets import make_two_regime_hierarchy

    X, y, _ = make_two_regime_hierarchy(n_per_subblob=30, n_per_coarse=200, random_state=random_state)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, train_size=0.1, stratify=y, random_state=random_state)
    t = time.perf_counter()
    pipe = make_pipeline(MixConfigAugmenter(n_resolutions=16, n_restarts=1, max_epochs=150,
                                                            random_state=random_state),
                         StandardScaler(), LogisticRegression(max_iter=1000)).fit(X_tr, y_tr)
    fit_time = time.perf_counter() - t
    base = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(X_tr, y_tr)
    return [{"estimator": "MixConfigAugmenter+LogisticRegression", "task": "classification (10% labels)",
             "metric": "accuracy", "score": float(pipe.score(X_te, y_te)), "baseline": "LogisticRegression (raw X)",
             "baseline_score": float(base.score(X_te, y_te)), "fit_time": fit_time}]


register_demo("configurations", _demo)
