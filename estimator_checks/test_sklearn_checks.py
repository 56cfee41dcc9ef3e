"""scikit-learn's own check suite over every registered estimator."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from estimator_checks import xfails
from estimator_checks.instances import all_instances


@parametrize_with_checks(all_instances(), expected_failed_checks=xfails.get, xfail_strict=True)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
