"""MCMC checkpoints of BASTRegressor / PRBASTRegressor: a fit killed by SIGKILL or interrupted by SIGINT resumes
from its last checkpoint to bit-for-bit the uninterrupted result; damaged or foreign checkpoints are refused."""

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_frontier.annotation import RoundRobinAnnotator
from sklearn_frontier.exceptions import StateFileError
from sklearn_frontier.spanning_trees import BASTRegressor, PRBASTRegressor
from sklearn_frontier.spanning_trees._checkpoint import _decode
from sklearn_frontier.utils._atomic_files import atomic_savez, read_state_file

REPO = Path(__file__).resolve().parents[1]
ESTIMATORS = [PRBASTRegressor, BASTRegressor]
PARAMS = {"PRBASTRegressor": dict(n_trees=3, n_iter=60, n_burnin=20, thin=2),
          "BASTRegressor": dict(n_trees=4, n_iter=60, n_burnin=20, thin=2)}
EVERY = 8


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(40, 2))
    return X, np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=40), rng.uniform(size=(10, 2))


def _make(cls, **kw):
    return cls(**{**PARAMS[cls.__name__], "random_state": 0, **kw})


def _outputs(est, Xt):
    mu, sd = est.predict(Xt, return_std=True)
    return np.r_[mu, sd, est.draws_["sigma"].ravel(), est.n_iter_]


def _sweeps(path):
    """Sweep counters in a checkpoint file, or in the one file a fit wrote under the checkpoint name ``path``."""
    path = Path(path)
    if not path.exists():
        (path,) = path.parent.glob(f"{path.stem}.*{path.suffix}")
    arrays = read_state_file(path)
    payload = _decode(json.loads(str(arrays["checkpoint/tree"])),
                      {k[5:]: v for k, v in arrays.items() if k.startswith("data/")})
    return [int(ch["t"]) for ch in payload["chains"]]


# ----------------------------------------------------------------------------- in-process
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_checkpointing_does_not_change_the_fit(cls, tmp_path):
    X, y, Xt = _data()
    plain = _make(cls).fit(X, y)
    ckpt = tmp_path / "c.npz"
    saved = _make(cls, checkpoint=str(ckpt), checkpoint_every=EVERY).fit(X, y)
    np.testing.assert_array_equal(_outputs(plain, Xt), _outputs(saved, Xt))
    for key in plain.draws_:
        np.testing.assert_array_equal(plain.draws_[key], saved.draws_[key])
    assert plain.acceptance_rates_ == saved.acceptance_rates_
    assert _sweeps(saved.checkpoint_path_) == [PARAMS[cls.__name__]["n_iter"]]
    again = _make(cls, checkpoint=ckpt, checkpoint_every=3).fit(X, y)  # complete checkpoint: the same result
    np.testing.assert_array_equal(_outputs(plain, Xt), _outputs(again, Xt))
    assert again.checkpoint_path_ == saved.checkpoint_path_


def test_parallel_chains_checkpoint_to_the_same_fit(tmp_path):
    X, y, Xt = _data(1)
    plain = _make(PRBASTRegressor, n_chains=2).fit(X, y)
    saved = _make(PRBASTRegressor, n_chains=2, n_jobs=2, checkpoint=tmp_path / "c.npz", checkpoint_every=5).fit(X, y)
    np.testing.assert_array_equal(_outputs(plain, Xt), _outputs(saved, Xt))


def test_warm_start_continuation_checkpoints_too(tmp_path):
    X, y, Xt = _data(2)
    plain = _make(PRBASTRegressor).fit(X, y).set_params(warm_start=True, n_iter=20).fit(X, y)
    ckpt = tmp_path / "w.npz"
    est = _make(PRBASTRegressor).fit(X, y).set_params(warm_start=True, n_iter=20, checkpoint=ckpt, checkpoint_every=6)
    np.testing.assert_array_equal(_outputs(plain, Xt), _outputs(est.fit(X, y), Xt))
    assert _sweeps(est.checkpoint_path_) == [80]
    fresh = _make(PRBASTRegressor, n_iter=20, n_burnin=5, checkpoint=ckpt).fit(X, y)  # not the warm continuation
    assert fresh.checkpoint_path_ != est.checkpoint_path_
    Path(fresh.checkpoint_path_).write_bytes(Path(est.checkpoint_path_).read_bytes())  # its file holds another fit
    with pytest.raises(StateFileError, match="differs in .*start"):
        _make(PRBASTRegressor, n_iter=20, n_burnin=5, checkpoint=ckpt).fit(X, y)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_checkpoint_parameters_are_sklearn_parameters(cls, tmp_path):
    est = cls(checkpoint=tmp_path / "c.npz", checkpoint_every=7)
    params = est.get_params()
    assert params["checkpoint"] == tmp_path / "c.npz" and params["checkpoint_every"] == 7
    assert clone(est).get_params()["checkpoint_every"] == 7
    assert cls().get_params()["checkpoint"] is None
    X, y, _ = _data()
    with pytest.raises(ValueError, match="checkpoint_every"):
        cls(checkpoint_every=0).fit(X, y)
    with pytest.raises(ValueError, match="checkpoint"):
        cls(checkpoint=3).fit(X, y)
    with pytest.raises(ValueError, match="does not exist"):  # before any sweep runs
        cls(checkpoint=tmp_path / "no" / "such" / "c.npz").fit(X, y)
    with pytest.raises(ValueError, match="it is a folder"):
        cls(checkpoint=tmp_path).fit(X, y)


# ----------------------------------------------------------------------------- refused checkpoints
@pytest.fixture(scope="module")
def written(tmp_path_factory):
    X, y, _ = _data()
    path = tmp_path_factory.mktemp("ckpt") / "good.npz"
    return Path(_make(PRBASTRegressor, checkpoint=path, checkpoint_every=20).fit(X, y).checkpoint_path_)


def _refit(path):
    """Refit the fixture's fit with ``path``'s bytes as its checkpoint file (the name plus the fit's key)."""
    X, y, _ = _data()
    key = _KEY[0]
    path.rename(path.with_name(f"{path.stem}.{key}{path.suffix}"))
    return _make(PRBASTRegressor, checkpoint=path, checkpoint_every=20).fit(X, y)


_KEY = []


@pytest.fixture(autouse=True)
def _fit_key(written):
    _KEY[:] = [written.name.split(".")[-2]]


def _refused(make, X, y, written, match):
    """A fit whose own checkpoint file holds ``written``'s state (another fit's) is refused, naming what differs."""
    own = make().fit(X, y).checkpoint_path_
    Path(own).write_bytes(written.read_bytes())
    with pytest.raises(StateFileError, match=match):
        make().fit(X, y)


def test_other_data_or_parameters_are_refused_naming_what_differs(written):
    X, y, _ = _data()
    ckpt = written.with_name("other.npz")
    _refused(lambda: _make(PRBASTRegressor, checkpoint=ckpt), X, y + 1.0, written,
             r"other\.\w+\.npz.*consistency.*differs in data \(X, y, sample_weight\)")
    _refused(lambda: PRBASTRegressor(n_trees=4, n_iter=61, n_burnin=20, thin=2, random_state=0, checkpoint=ckpt),
             X, y, written, r"consistency.*parameter n_iter, parameter n_trees")
    _refused(lambda: _make(BASTRegressor, checkpoint=ckpt), X, y, written, r"consistency.*estimator")


def _edited(which, edit):
    """A user's callable ``domain``, ``graph`` or ``metric`` before (edit=False) and after (edit=True) they edit
    its body: the same module and qualified name, another domain graph."""
    def user_function(*args):
        if which == "domain":  # the edit adds a slit barrier
            (P,) = args
            slit = (np.abs(P[:, 0] - 0.5) < 0.02) & (P[:, 1] < 0.7)
            return ~slit if edit else np.ones(P.shape[0], dtype=bool)
        if which == "graph":  # the edit takes more neighbours
            from sklearn.neighbors import kneighbors_graph

            return kneighbors_graph(args[0], 8 if edit else 5)
        a, b = args  # metric: the edit stretches the first axis
        return float(np.hypot((3.0 if edit else 1.0) * (a[0] - b[0]), a[1] - b[1]))

    return {"domain": {"domain": user_function}, "graph": {"graph": user_function},
            "metric": {"graph": "knn", "metric": user_function}}[which]


@pytest.mark.parametrize("which", ["domain", "graph", "metric"])
def test_an_edited_callable_never_resumes_chains_of_the_old_graph(which, tmp_path):
    X, y, Xt = _data(3)
    keep = ~((np.abs(X[:, 0] - 0.5) < 0.02) & (X[:, 1] < 0.7))  # no training point in the slit
    X, y = X[keep], y[keep]
    ckpt = tmp_path / "edited.npz"
    old = _make(PRBASTRegressor, checkpoint=ckpt, checkpoint_every=20, **_edited(which, False)).fit(X, y)
    assert old.get_params()[which] is not _edited(which, True)[which]
    assert _edited(which, True)[which].__qualname__ == old.get_params()[which].__qualname__
    new = _make(PRBASTRegressor, checkpoint=ckpt, checkpoint_every=20, **_edited(which, True)).fit(X, y)
    plain_new = _make(PRBASTRegressor, **_edited(which, True)).fit(X, y)
    assert not np.array_equal(old.graph_.edges, new.graph_.edges)
    # the edited fit samples its own chains on its own graph (it used to resume the old file: the old fit)
    assert new.checkpoint_path_ != old.checkpoint_path_
    np.testing.assert_array_equal(_outputs(new, Xt), _outputs(plain_new, Xt))
    # the same function again finds its file and gives the same fit bit for bit
    again = _make(PRBASTRegressor, checkpoint=ckpt, checkpoint_every=20, **_edited(which, False)).fit(X, y)
    assert again.checkpoint_path_ == old.checkpoint_path_
    np.testing.assert_array_equal(_outputs(again, Xt), _outputs(old, Xt))
    # and a file of the old graph under the edited fit's name is refused, naming the graph
    Path(new.checkpoint_path_).write_bytes(Path(old.checkpoint_path_).read_bytes())
    with pytest.raises(StateFileError, match=r"consistency.*differs in domain graph\."):
        _make(PRBASTRegressor, checkpoint=ckpt, checkpoint_every=20, **_edited(which, True)).fit(X, y)


def test_clones_in_cross_validation_and_grid_search_never_collide(tmp_path):
    """Folds and candidates share the checkpoint parameter: each fit writes its own file and every score is real."""
    from sklearn.model_selection import GridSearchCV, cross_val_score

    X, y, _ = _data()
    ckpt = tmp_path / "cv.npz"
    scores = cross_val_score(_make(PRBASTRegressor, checkpoint=ckpt, checkpoint_every=20), X, y, cv=3,
                             error_score="raise")
    assert np.all(np.isfinite(scores)) and len(list(tmp_path.glob("cv.*.npz"))) == 3
    again = cross_val_score(_make(PRBASTRegressor, checkpoint=ckpt, checkpoint_every=20), X, y, cv=3)
    np.testing.assert_array_equal(scores, again)  # each fold resumes its own complete checkpoint
    GridSearchCV(_make(PRBASTRegressor, checkpoint=ckpt, checkpoint_every=20), {"n_trees": [2, 3]}, cv=2,
                 error_score="raise").fit(X, y)


@pytest.mark.parametrize("damage", ["truncated", "flipped byte", "empty"])
def test_damaged_checkpoints_are_refused_naming_the_file(written, tmp_path, damage):
    raw = written.read_bytes()
    bad = tmp_path / f"{damage.replace(' ', '_')}.npz"
    if damage == "truncated":
        bad.write_bytes(raw[: len(raw) // 2])
    elif damage == "empty":
        bad.write_bytes(b"")
    else:
        i = len(raw) // 3
        bad.write_bytes(raw[:i] + bytes([raw[i] ^ 0x40]) + raw[i + 1:])
    with pytest.raises(StateFileError) as info:
        _refit(bad)
    read = bad.with_name(f"{bad.stem}.{_KEY[0]}.npz")
    assert info.value.path == str(read) and str(read) in str(info.value)
    assert info.value.check in ("zip structure", "checksum")
    assert isinstance(info.value, ValueError)


def test_foreign_and_future_files_are_refused(written, tmp_path):
    ann = tmp_path / "annotator.npz"
    RoundRobinAnnotator(n_neighbors=2, classes=[0, 1]).fit(np.arange(12.0).reshape(6, 2),
                                                           np.full((6, 2), np.nan)).save_state(ann)
    with pytest.raises(StateFileError, match=r"annotator\.\w+\.npz.*tag.*not an MCMC checkpoint"):
        _refit(ann)
    arrays = read_state_file(written)
    arrays["checkpoint/version"] = np.array(99)
    future = tmp_path / "future.npz"
    atomic_savez(future, arrays)
    with pytest.raises(StateFileError, match=r"future\.\w+\.npz.*version.*version 99"):
        _refit(future)
    del arrays["checkpoint/tree"]
    atomic_savez(tmp_path / "partial.npz", {**arrays, "checkpoint/version": np.array(1)})
    with pytest.raises(StateFileError, match="missing member"):
        _refit(tmp_path / "partial.npz")


# ----------------------------------------------------------------------------- killed in a subprocess
_CHILD = textwrap.dedent("""
    import os, signal, sys
    import numpy as np
    import sklearn_frontier.spanning_trees._checkpoint as ck
    import sklearn_frontier.spanning_trees._mcmc as mcmc
    from sklearn_frontier import spanning_trees

    name, ckpt, mode, at = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    params = {params}
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(40, 2))
    y = np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=40)
    Xt = rng.uniform(size=(10, 2))
    save, calls = ck.save_checkpoint, [0]

    def killing_save(*args):
        calls[0] += 1
        if mode == "kill" and calls[0] == at:  # mid-run, after at - 1 checkpoints: this segment is lost
            os.kill(os.getpid(), signal.SIGKILL)
        save(*args)

    class InterruptingBar:  # the sweep loop's progress bar: Ctrl-C during sweep number ``at``
        sweeps = 0

        def __init__(self, *args, **kwargs):
            pass

        def update(self, k):
            InterruptingBar.sweeps += k
            if mode == "int" and InterruptingBar.sweeps == at:
                os.kill(os.getpid(), signal.SIGINT)

        def set_postfix(self, **kwargs):
            pass

        def close(self):
            pass

    ck.save_checkpoint = killing_save
    mcmc.progress_bar = InterruptingBar
    est = getattr(spanning_trees, name)(**params[name], random_state=0, checkpoint=ckpt, checkpoint_every={every})
    try:
        est.fit(X, y)
    except KeyboardInterrupt as exc:
        print("interrupted:", exc, flush=True)
        sys.exit(3)
    mu, sd = est.predict(Xt, return_std=True)
    np.save(ckpt + ".result.npy", np.r_[mu, sd, est.draws_["sigma"].ravel(), est.n_iter_])
""").format(params=repr(PARAMS), every=EVERY)


def _child(tmp_path, *args):
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, str(script), *map(str, args)], env=env, timeout=300,
                          capture_output=True, text=True)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_fit_killed_by_sigkill_resumes_to_the_same_result(cls, tmp_path):
    X, y, Xt = _data()
    full = _outputs(_make(cls).fit(X, y), Xt)
    ckpt = tmp_path / "cut.npz"
    killed = _child(tmp_path, cls.__name__, ckpt, "kill", 4)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not Path(str(ckpt) + ".result.npy").exists()
    assert _sweeps(ckpt) == [3 * EVERY]  # the last good checkpoint, from mid-run
    resumed = _child(tmp_path, cls.__name__, ckpt, "none", 0)
    assert resumed.returncode == 0, resumed.stderr
    np.testing.assert_array_equal(np.load(str(ckpt) + ".result.npy"), full)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_fit_interrupted_by_sigint_saves_at_the_sweep_and_resumes(cls, tmp_path):
    X, y, Xt = _data()
    full = _outputs(_make(cls).fit(X, y), Xt)
    ckpt = tmp_path / "int.npz"
    interrupted = _child(tmp_path, cls.__name__, ckpt, "int", 2 * EVERY + 3)
    assert interrupted.returncode == 3, interrupted.stderr
    assert "the MCMC state is saved in" in interrupted.stdout
    assert _sweeps(ckpt) == [2 * EVERY + 3]  # saved at the sweep SIGINT came in, not at the last segment end
    resumed = _child(tmp_path, cls.__name__, ckpt, "none", 0)
    assert resumed.returncode == 0, resumed.stderr
    np.testing.assert_array_equal(np.load(str(ckpt) + ".result.npy"), full)
