"""Expected failures of scikit-learn's checks, each with its reason (an empty table is the goal).

``{EstimatorClassName: {check_name: reason}}``. Used with ``xfail_strict=True``: a check listed here
that starts passing fails the run, so this table cannot rot.
"""

EXPECTED_FAILED_CHECKS = {
    # CEO (topology): a transductive graph filter — the rows of X are the fitted vertices of the graph.
    "CEOSmoother": {
        "check_methods_subset_invariance": "transductive graph filter: rows of X are the fitted vertices, a "
                                           "subset of rows is not a valid input",
        "check_methods_sample_order_invariance": "transductive graph filter: reordering rows reorders the "
                                                 "vertices but transform keeps the fitted vertex order",
        "check_fit_idempotent": "transductive graph filter: the check transforms rows other than the fitted "
                                "vertices, which raises",
    },
    # MixConfig (configurations): -1 marks an unlabelled row, scikit-learn's semi-supervised convention.
    "SemiSupervisedAugmentation": {
        "check_classifiers_classes": "the check uses -1 as a class label; -1 marks unlabelled rows here (as in "
                                     "SelfTrainingClassifier), leaving one labelled class",
    },
    # LOT active experimentation (transport): times may be given as a vector, as the API specifies.
    "WassersteinPathRegressor": {"check_fit1d": "fit(times, clouds) accepts times as a 1-D vector (N,) by design"},
    "LOTActiveExperimenter": {"check_fit1d": "fit(times, clouds) accepts times as a 1-D vector (N,) by design"},
}


def get(estimator):
    """The expected failures of ``estimator`` (the callable form ``parametrize_with_checks`` takes)."""
    return EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})
