"""skops persistence of every registered estimator: bit-identical round trips, only project types untrusted.

Each registered estimator is fitted once on its task's tiny data and dumped with skops (module fixture);
the tests then check that the dump holds no type from outside the project that skops distrusts, that
``trusted_types()`` lists exactly the project types the dumps report, and that the loaded estimator
predicts exactly what the original did.
"""

import io
import pickle

import numpy as np
import pytest

skops_io = pytest.importorskip("skops.io")

from estimator_checks.data import make_task_data  # noqa: E402
from estimator_checks.instances import all_entries  # noqa: E402
from sklearn_frontier import persistence  # noqa: E402

ENTRIES = all_entries()
IDS = [e.name for e in ENTRIES]
OUTPUT_METHODS = ("predict", "predict_proba", "predict_log_proba", "decision_function", "transform", "score_samples")


def _fitted(entry):
    X, y = make_task_data(entry.task)
    params = entry.estimator().get_params()
    est = entry.instance(random_state=0) if "random_state" in params else entry.instance()
    est = est.fit(X) if y is None else est.fit(X, y)
    return est, X


def _outputs(est, X):
    """Every output of a fitted estimator on X (and ``labels_`` for clusterers), by name."""
    out = {}
    for method in OUTPUT_METHODS:
        if hasattr(est, method):
            out[method] = np.asarray(getattr(est, method)(X))
    if hasattr(est, "labels_"):
        out["labels_"] = np.asarray(est.labels_)
    return out


@pytest.fixture(scope="module")
def dumps():
    """name -> (fitted estimator, X, skops bytes, untrusted types), or the exception that stopped it."""
    result = {}
    for entry in ENTRIES:
        try:
            est, X = _fitted(entry)
            data = skops_io.dumps(est)
            result[entry.name] = (est, X, data, skops_io.get_untrusted_types(data=data))
        except Exception as exc:  # reported by the parametrized test of that estimator
            result[entry.name] = exc
    return result


def _get(dumps, entry):
    value = dumps[entry.name]
    if isinstance(value, Exception):
        pytest.fail(f"{entry.name}: fit or skops dump failed: {type(value).__name__}: {value}")
    return value


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_dump_holds_only_trusted_project_types(dumps, entry):
    _, _, _, untrusted = _get(dumps, entry)
    outside = [t for t in untrusted if not t.startswith(persistence.PROJECT_PREFIX)
               and t not in persistence.THIRD_PARTY_TYPES]
    assert outside == [], f"{entry.name} stores types from outside the project that skops distrusts: {outside}"
    assert set(untrusted) <= set(persistence.trusted_types()), (
        f"{entry.name} stores project types missing from trusted_types(): "
        f"{sorted(set(untrusted) - set(persistence.trusted_types()))}")


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_skops_round_trip_is_bit_identical(dumps, entry, tmp_path):
    est, X, data, untrusted = _get(dumps, entry)
    path = tmp_path / f"{entry.name}.skops"
    path.write_bytes(data)
    expected = _outputs(est, X)
    assert expected, f"{entry.name} has no output to compare"
    # skops's documented path: trust what get_untrusted_types reports (which types those may be is the
    # previous test's concern; the Pipeline test below loads through persistence.load, trusting only ours).
    for restored in (skops_io.load(path, trusted=skops_io.get_untrusted_types(file=path)),):
        assert type(restored) is type(est)
        got = _outputs(restored, X)
        assert got.keys() == expected.keys()
        for name, value in expected.items():
            np.testing.assert_array_equal(got[name], value, err_msg=f"{entry.name}.{name} changed")
            assert got[name].dtype == value.dtype


def test_trusted_types_are_exactly_what_dumps_report(dumps):
    reported, failed = set(), set()
    for entry in ENTRIES:
        value = dumps[entry.name]
        if isinstance(value, Exception):
            failed.add(persistence.type_name(entry.estimator))
        else:
            reported.update(t for t in value[3] if t.startswith(persistence.PROJECT_PREFIX))
    project = {t for t in persistence.trusted_types() if t.startswith(persistence.PROJECT_PREFIX)}
    assert project - failed == reported - failed


def test_trusted_types_name_project_types_only_and_are_sorted():
    names = persistence.trusted_types()
    assert names == sorted(set(names))
    assert all(n.startswith(persistence.PROJECT_PREFIX) or n in persistence.THIRD_PARTY_TYPES for n in names)
    assert {persistence.type_name(e.estimator) for e in ENTRIES} <= set(names)


class _Foreign:
    """A type from outside the project (this test module): loading it must need explicit trust."""

    def __init__(self, value=1):
        self.value = value


def test_load_refuses_types_from_outside_the_project():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    buffer = io.BytesIO()
    persistence.dump(make_pipeline(FunctionTransformer(kw_args={"obj": _Foreign()})), buffer)
    buffer.seek(0)
    with pytest.raises(skops_io.exceptions.UntrustedTypesFoundException, match="_Foreign"):
        persistence.load(buffer)
    buffer.seek(0)
    restored = persistence.load(buffer, trusted=[persistence.type_name(_Foreign)])
    assert restored.steps[0][1].kw_args["obj"].value == 1


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_helpers_round_trip_a_pipeline(entry):
    """What users persist: a fitted Pipeline (skops trusts sklearn's steps) around a suite estimator."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = make_task_data(entry.task)
    pipe = make_pipeline(StandardScaler(), entry.instance())
    pipe = pipe.fit(X) if y is None else pipe.fit(X, y)
    buffer = io.BytesIO()
    persistence.dump(pipe, buffer)
    buffer.seek(0)
    restored = persistence.load(buffer)  # trusts nothing beyond trusted_types()
    for method in ("predict", "transform"):
        if hasattr(pipe, method):
            expected = getattr(pipe, method)(X)
            np.testing.assert_array_equal(getattr(restored, method)(X), expected, err_msg=entry.name)
            # plain pickle stays supported beside skops
            np.testing.assert_array_equal(getattr(pickle.loads(pickle.dumps(restored)), method)(X), expected,
                                          err_msg=entry.name)
