"""Expected failures of scikit-learn's checks, each with its reason (an empty table is the goal).

``{EstimatorClassName: {check_name: reason}}``. Used with ``xfail_strict=True``: a check listed here
that starts passing fails the run, so this table cannot rot.
"""

EXPECTED_FAILED_CHECKS = {
}


def get(estimator):
    """The expected failures of ``estimator`` (the callable form ``parametrize_with_checks`` takes)."""
    return EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})
