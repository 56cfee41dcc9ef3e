"""Fast instances of every registered estimator, for the check suites."""

from sklearn_frontier import all_estimators


def all_entries():
    """Every registry entry, sorted by name."""
    return all_estimators()


def all_instances():
    """One fast instance per registered estimator."""
    return [entry.instance() for entry in all_entries()]
