"""The property-based input matrix: awkward but plausible inputs a new user passes, and what each estimator does.

Every estimator × case must either fit with finite output (``"fits"``) or raise a clear ``ValueError`` /
``TypeError`` from validation code (sklearn_frontier's or scikit-learn's, never from numpy / scipy / torch /
numba internals). :func:`run_case` classifies one pair; ``test_properties.py`` checks the fixed matrix and
hypothesis-drawn variants of it; ``python -m estimator_checks.properties`` writes the table of outcomes into
``docs/reliability.rst`` (a test fails when that page is out of date).
"""

import inspect
import os
import sys
import traceback
import warnings
from pathlib import Path

import numpy as np

from estimator_checks.data import make_task_data

# name -> what it is (the docs table's legend)
CASES = {
    "one_feature": "a single feature column",
    "two_rows": "two training rows",
    "few_rows": "five rows (fewer than the neighbour / component counts)",
    "duplicate_rows": "every row three times",
    "constant_column": "one constant feature",
    "constant_X": "every value of X equal",
    "magnitude_1e-150": "X scaled by 1e-150",
    "magnitude_1e150": "X scaled by 1e150",
    "float32": "X as float32",
    "int": "X as int64",
    "list": "X as a list of lists",
    "pandas": "X as a pandas DataFrame",
    "nan_in_y": "a NaN target (annotation: an infinite label)",
    "inf_in_y": "an infinite target",
    "nan_in_side_input": "NaN in the side input (the first of Z, X_calib, sample_weight; cells: a fractional index)",
    "inf_in_side_input": "inf in the side input (the first of Z, X_calib, sample_weight; cells: an index out of range)",
}
SUPERVISED = ("regression", "classification", "supervised_transform", "annotation")
SIDE_INPUTS = ("Z", "cells", "X_calib", "sample_weight")  # the first one ``fit`` takes is the one spoiled
N_SAMPLES = 30
# a clear error is raised by a ``raise`` statement in these packages; anything else (numpy / scipy / torch / numba
# failing inside, even when called from our code) is a crash
CLEAR_ERROR_MODULES = ("sklearn_frontier", "sklearn", "estimator_checks")


def side_input(entry):
    """The side input ``fit`` takes beyond ``X`` / ``y`` (the first of :data:`SIDE_INPUTS`), or None."""
    params = inspect.signature(entry.estimator.fit).parameters
    return next((name for name in SIDE_INPUTS if name in params), None)


def applicable(entry, case):
    """Whether ``case`` means something for ``entry`` (targets need a supervised task, side inputs a side input)."""
    if case in ("nan_in_y", "inf_in_y"):
        return entry.task in SUPERVISED
    if case in ("nan_in_side_input", "inf_in_side_input"):
        return side_input(entry) is not None
    return True


def _side_value(name, X, case, rng):
    n, d = X.shape
    bad = np.nan if case == "nan_in_side_input" else np.inf
    if name == "sample_weight":
        w = np.ones(n)
        w[1] = bad
        return w
    if name == "Z":
        Z = X[:, :2] + 0.1 * rng.standard_normal((n, 2))
        Z[1, 0] = bad
        return Z
    if name == "X_calib":
        A = rng.standard_normal((16, d))
        A[1, 0] = bad
        return A
    if name == "cells":
        return [[0, 1, 2.5]] if case == "nan_in_side_input" else [[0, 1, n + 5]]
    raise AssertionError(name)


def make_case(entry, case, seed=0, magnitude=None):
    """``(X, y, fit_kwargs)`` for one case; ``seed`` and ``magnitude`` are what hypothesis varies."""
    X, y = make_task_data(entry.task, n_samples=N_SAMPLES, random_state=seed)
    rng = np.random.default_rng(seed)
    kwargs = {}
    if case == "one_feature":
        X = X[:, :1].copy()
    elif case == "two_rows":
        X, y = X[:2], None if y is None else y[:2]
    elif case == "few_rows":
        X, y = X[:5], None if y is None else y[:5]
    elif case == "duplicate_rows":
        X, y = np.repeat(X[:10], 3, axis=0), None if y is None else np.repeat(y[:10], 3, axis=0)
    elif case == "constant_column":
        X = X.copy()
        X[:, 1] = 3.0
    elif case == "constant_X":
        X = np.full_like(X, 2.0)
    elif case.startswith("magnitude_"):
        X = X * (magnitude if magnitude is not None else float(case.split("_", 1)[1]))
    elif case == "float32":
        X = X.astype(np.float32)
    elif case == "int":
        X = np.round(3 * X).astype(np.int64)
    elif case == "list":
        X = X.tolist()
    elif case == "pandas":
        import pandas as pd

        X = pd.DataFrame(X, columns=[f"c{i}" for i in range(X.shape[1])])
    elif case in ("nan_in_y", "inf_in_y"):
        y = np.array(y, dtype=float)
        y.flat[1] = np.inf if (case == "inf_in_y" or entry.task == "annotation") else np.nan
    elif case in ("nan_in_side_input", "inf_in_side_input"):
        name = side_input(entry)
        kwargs[name] = _side_value(name, np.asarray(X, dtype=float), case, rng)
    return X, y, kwargs


def _output(est, X):
    for method in ("predict", "transform"):
        if hasattr(est, method):
            return np.asarray(getattr(est, method)(X), dtype=float)
    return np.asarray(est.labels_, dtype=float)


def _innermost(exc):
    frames = traceback.extract_tb(exc.__traceback__)
    return frames[-1] if frames else None


_REPO = Path(__file__).resolve().parents[1].as_posix() + "/"


def _module_of(frame):
    path = Path(frame.filename).resolve().as_posix()
    if path.startswith(_REPO):  # this checkout, wherever it is cloned (kernels/ installs as sklearn_frontier.kernels)
        path = path[len(_REPO):]
        if path.startswith("kernels/"):
            path = "sklearn_frontier/" + path
    for marker in ("/site-packages/", "/lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return path.removesuffix(".py").replace("/", ".")


def _raised_in(exc):
    frame = _innermost(exc)
    return "?" if frame is None else f"{_module_of(frame)}:{frame.lineno}"


def _is_clear(exc):
    """A ValueError/TypeError with a message, raised by a ``raise`` statement of validation code."""
    if not isinstance(exc, (ValueError, TypeError)) or not str(exc):
        return False
    frame = _innermost(exc)
    if frame is None or not _module_of(frame).startswith(CLEAR_ERROR_MODULES):
        return False
    return (frame.line or "").lstrip().startswith("raise")


def run_case(entry, case, seed=0, magnitude=None):
    """Fit ``entry`` on ``case``: ``(outcome, detail)``.

    ``outcome`` is ``"fits"`` (finite output), ``"ValueError"`` / ``"TypeError"`` (a clear error; ``detail``
    is its message), ``"non-finite"`` or ``"crash"`` (``detail`` says where).
    """
    X, y, kwargs = make_case(entry, case, seed=seed, magnitude=magnitude)
    params = entry.estimator().get_params()
    est = entry.instance(**({"random_state": 0} if "random_state" in params else {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            est.fit(X, **kwargs) if y is None else est.fit(X, y, **kwargs)
            out = _output(est, X)
        except Exception as exc:  # noqa: BLE001 - the classification is the point
            if _is_clear(exc):
                return type(exc).__name__, str(exc)
            return "crash", f"{type(exc).__name__} in {_raised_in(exc)}: {str(exc)[:160]}"
    if not np.all(np.isfinite(out)):
        return "non-finite", f"{int(np.sum(~np.isfinite(out)))} of {out.size} outputs are not finite"
    return "fits", ""


# ------------------------------------------------------------------------------------------- docs table
DOC_PATH = Path(__file__).resolve().parents[1] / "docs" / "reliability.rst"
_SYMBOL = {"fits": "fits", "ValueError": "ValueError", "TypeError": "TypeError", "non-finite": "**NON-FINITE**",
           "crash": "**CRASH**"}

_HEADER = """\
Reliability: what each estimator does with awkward input
========================================================

.. This page is generated by ``python -m estimator_checks.properties``; ``estimator_checks/test_properties.py``
   fails when it is out of date. Do not edit by hand.

Every registered estimator is fitted on {n_samples}-row task data (``estimator_checks/data.py``) changed in one
way at a time. Each cell says what happened: **fits** (the fit succeeded and ``predict`` / ``transform`` /
``labels_`` are finite), **ValueError** or **TypeError** (a clear error raised by validation code, named in
the message list below), or a failure (**CRASH**: an exception from inside numpy / scipy / torch / numba, or
**NON-FINITE**: output with NaN or inf) — a failure is a bug, listed as an expected failure with its reason in
``estimator_checks/test_properties.py`` until it is fixed. A dash means the case does not apply (no target,
or no side input). The property test (hypothesis) also draws other seeds and magnitudes for each case.

Other guarantees, each with its test:

- a failed ``update`` / ``partial_fit`` leaves every attribute, caches included, unchanged
  (``estimator_checks/test_updates.py``);
- ``predict`` / ``transform`` of one fitted estimator from 8 threads at once equals sequential calls
  (``estimator_checks/test_concurrency.py``);
- annotator state files (``save_state``) that are truncated, corrupted, foreign or of another version raise
  :class:`sklearn_frontier.exceptions.StateFileError` (a ``ValueError``) naming the file and the failed check;
  writes are atomic (temp file, fsync, rename), so a writer killed by ``SIGKILL`` leaves the last good state;
  :func:`sklearn_frontier.annotation.run_annotation_loop` killed by ``SIGKILL`` resumes from its last
  checkpoint to the same result as an uninterrupted run (``tests/test_reliability_state.py``). ``BASTRegressor`` /
  ``PRBASTRegressor`` with ``checkpoint=path`` write their MCMC state atomically every ``checkpoint_every``
  sweeps and at a ``SIGINT``; killed by ``SIGKILL`` or interrupted by ``SIGINT`` and fitted again, they resume
  to bit for bit the uninterrupted fit, and refuse a damaged or foreign checkpoint naming the file
  (``tests/test_checkpoints.py``; see :doc:`checkpoints`). ``quantize_model(..., checkpoint=folder)`` writes each
  quantized layer atomically as it is done; a rerun with the same arguments loads those layers and quantizes
  the rest, ending with the same model bit for bit as an uninterrupted run after a ``SIGKILL``; a damaged
  layer file, or one written for other arguments or weights, raises a ``ValueError`` naming it
  (``tests/test_quantization_checkpoint.py``).

Cases
-----

{legend}

Outcomes
--------

{table}

Messages
--------

{messages}
"""


def compute_table(entries):
    """``{(estimator name, case): (outcome, detail)}`` for every applicable pair."""
    return {(e.name, case): run_case(e, case) for e in entries for case in CASES if applicable(e, case)}


def render(entries, table):
    legend = "\n".join(f"- ``{name}``: {text}" for name, text in CASES.items())
    cols = list(CASES)
    head = ["estimator"] + [f"``{c}``" for c in cols]
    rows = []
    for e in entries:
        rows.append([e.name] + [(_SYMBOL[table[(e.name, c)][0]] if (e.name, c) in table else "—") for c in cols])
    rst = [".. list-table::", "   :header-rows: 1", "   :stub-columns: 1", ""]
    for row in [head] + rows:
        rst.append("   * - " + row[0])
        rst.extend(f"     - {cell}" for cell in row[1:])
    messages = []
    for e in entries:
        lines = [f"- ``{c}``: {table[(e.name, c)][0]}: {_one_line(table[(e.name, c)][1])}" for c in cols
                 if (e.name, c) in table and table[(e.name, c)][0] != "fits"]
        if lines:
            messages.append(f"**{e.name}**\n\n" + "\n".join(lines))
    return _HEADER.format(n_samples=N_SAMPLES, legend=legend, table="\n".join(rst),
                          messages="\n\n".join(messages) + "\n")


def _one_line(text):
    text = " ".join(str(text).split())
    text = text.replace("`", "'").replace("*", "\\*").replace("|", "\\|")
    return text if len(text) <= 200 else text[:197] + "..."


def main(argv=None):
    from estimator_checks.instances import all_entries

    argv = sys.argv[1:] if argv is None else argv
    entries = all_entries()
    text = render(entries, compute_table(entries))
    path = Path(argv[0]) if argv else DOC_PATH
    path.write_text(text, encoding="utf-8")
    print(f"wrote {os.fspath(path)}")


if __name__ == "__main__":
    main()
