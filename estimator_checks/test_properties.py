"""The property-based input matrix (see ``properties.py``): every registered estimator × awkward input either
fits with finite output or raises a clear ValueError/TypeError; the docs table says which, and stays true."""

import difflib

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from estimator_checks.instances import all_entries
from estimator_checks.properties import CASES, DOC_PATH, applicable, compute_table, render, run_case

ENTRIES = all_entries()
IDS = [e.name for e in ENTRIES]
OK = ("fits", "ValueError", "TypeError")

# (estimator, case) -> reason. Strict: a listed pair that starts passing fails the run (remove it then).
EXPECTED_FAILURES = {}


@pytest.fixture(scope="module")
def table():
    return compute_table(ENTRIES)


def test_every_estimator_and_case_fits_or_raises_a_clear_error(table):
    bad = {k: v for k, v in table.items() if v[0] not in OK and k not in EXPECTED_FAILURES}
    assert bad == {}, "\n".join(f"{e} × {c}: {o}: {d}" for (e, c), (o, d) in sorted(bad.items()))
    fixed = sorted(k for k in EXPECTED_FAILURES if k in table and table[k][0] in OK)
    assert fixed == [], f"fixed, remove from EXPECTED_FAILURES: {fixed}"


def test_docs_table_is_up_to_date(table):
    expected = render(ENTRIES, table)
    current = DOC_PATH.read_text(encoding="utf-8") if DOC_PATH.exists() else ""
    diff = "".join(difflib.unified_diff(current.splitlines(True), expected.splitlines(True), "docs", "now", n=0))
    assert current == expected, ("docs/reliability.rst is out of date; regenerate it with "
                                 "`python -m estimator_checks.properties`:\n" + diff[:3000])


def test_docs_page_is_in_the_toctree():
    index = (DOC_PATH.parent / "index.rst").read_text(encoding="utf-8")
    assert "\n   reliability\n" in index


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
@settings(max_examples=3, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_drawn_variants_fit_or_raise_a_clear_error(entry, data):
    case = data.draw(st.sampled_from([c for c in CASES if applicable(entry, c)]), label="case")
    seed = data.draw(st.integers(1, 10_000), label="seed")
    magnitude = None
    if case == "magnitude_1e-150":
        magnitude = 10.0 ** data.draw(st.integers(-250, -30), label="log10 magnitude")
    elif case == "magnitude_1e150":
        magnitude = 10.0 ** data.draw(st.integers(30, 250), label="log10 magnitude")
    assume((entry.name, case) not in EXPECTED_FAILURES)
    outcome, detail = run_case(entry, case, seed=seed, magnitude=magnitude)
    assert outcome in OK, f"{entry.name} × {case} (seed={seed}, magnitude={magnitude}): {outcome}: {detail}"
