"""Annotator state files: damaged, foreign or unsupported files are refused with an error naming the file and
the failed check; a writer killed mid-write leaves the last good state; a killed annotation loop resumes."""

import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from sklearn_frontier.annotation import (
    MA3SAnnotator,
    RandomAnnotator,
    RoundRobinAnnotator,
    load_annotator,
)
from sklearn_frontier.exceptions import StateFileError
from sklearn_frontier.utils._atomic_files import atomic_savez, read_state_file

ANNOTATORS = [MA3SAnnotator, RoundRobinAnnotator, RandomAnnotator]
REPO = Path(__file__).resolve().parents[1]


def _fitted(cls, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(24, 2))
    Y = np.full((24, 3), np.nan)
    Y[:, 0] = rng.integers(0, 2, 24)
    est = cls(n_neighbors=3, random_state=0).fit(X, Y)
    est.update(est.query(4), [0, 1, 1, 0])
    return est


def _saved(tmp_path, cls):
    est = _fitted(cls)
    path = tmp_path / f"{cls.__name__}.npz"
    est.save_state(path)
    return est, path


def _same_state(a, b):
    for key in ("annotations_", "counts_", "uncertainty_", "log_", "X_pool_"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key))
    assert a.n_labels_seen_ == b.n_labels_seen_


def _member_data_offset(path, member):
    """Byte offset of a member's data inside the (stored, uncompressed) zip archive."""
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(member)
    raw = path.read_bytes()
    name_len, extra_len = np.frombuffer(raw[info.header_offset + 26:info.header_offset + 30], dtype="<u2")
    return info.header_offset + 30 + int(name_len) + int(extra_len), info.file_size


def _refused(path, cls, check):
    with pytest.raises(StateFileError) as info:
        cls.load_state(path)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.check == check, str(err)
    assert str(path) in str(err) and f"{check} check failed" in str(err)
    return err


@pytest.mark.parametrize("cls", ANNOTATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("keep", [0, 3, 100, "half", -22, -1])
def test_truncated_state_file_is_refused(tmp_path, cls, keep):
    # used to raise zipfile.BadZipFile
    _, path = _saved(tmp_path, cls)
    raw = path.read_bytes()
    n = len(raw) // 2 if keep == "half" else keep % len(raw) if keep < 0 else keep
    path.write_bytes(raw[:n])
    with pytest.raises(StateFileError, match=str(path.name)) as info:
        cls.load_state(path)
    assert info.value.check in ("zip structure", "checksum")
    assert not isinstance(info.value.__cause__, KeyError)


@pytest.mark.parametrize("cls", ANNOTATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("member", ["counts", "codes", "X_pool", "params", "state_sha256"])
def test_flipped_byte_in_a_member_fails_the_checksum(tmp_path, cls, member):
    # used to raise zipfile.BadZipFile ("Bad CRC-32")
    _, path = _saved(tmp_path, cls)
    start, size = _member_data_offset(path, member + ".npy")
    raw = bytearray(path.read_bytes())
    raw[start + size - 1] ^= 0x01  # the last data byte (past the .npy header)
    path.write_bytes(bytes(raw))
    _refused(path, cls, "checksum")


@pytest.mark.parametrize("cls", ANNOTATORS, ids=lambda c: c.__name__)
def test_any_flipped_byte_is_refused_or_harmless(tmp_path, cls):
    est, path = _saved(tmp_path, cls)
    raw = path.read_bytes()
    positions = np.random.default_rng(0).choice(len(raw), size=60, replace=False)
    outcomes = {"refused": 0, "harmless": 0}
    for pos in positions:
        bad = bytearray(raw)
        bad[pos] ^= 0x10
        path.write_bytes(bytes(bad))
        try:
            loaded = cls.load_state(path)
        except StateFileError as exc:
            assert str(path) in str(exc)
            outcomes["refused"] += 1
            continue
        _same_state(est, loaded)  # a flip in zip metadata (timestamps) leaves every member intact
        outcomes["harmless"] += 1
    assert outcomes["refused"] > 40, outcomes


def _rewrite_without(path, member):
    with zipfile.ZipFile(path) as zf:
        items = [(i, zf.read(i)) for i in zf.infolist() if i.filename != member]
    with zipfile.ZipFile(path, "w") as zf:
        for info, data in items:
            zf.writestr(info, data)


@pytest.mark.parametrize("cls", ANNOTATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("member", ["counts", "tag", "log", "state_sha256"])
def test_missing_member_is_named(tmp_path, cls, member):
    # used to raise KeyError: 'counts'
    _, path = _saved(tmp_path, cls)
    _rewrite_without(path, member + ".npy")
    err = _refused(path, cls, "missing member")
    assert repr(member) in str(err)


def test_member_removed_with_a_recomputed_checksum_is_still_named(tmp_path):
    est, path = _saved(tmp_path, MA3SAnnotator)
    arrays = read_state_file(path)
    del arrays["counts"]
    atomic_savez(path, arrays)  # a consistent file that simply lacks the member
    err = _refused(path, MA3SAnnotator, "missing member")
    assert "'counts'" in str(err)


@pytest.mark.parametrize("kind", ["text", "npy", "other_npz", "empty", "directory_zip"])
def test_foreign_file_is_refused(tmp_path, kind):
    path = tmp_path / "foreign.npz"
    if kind == "text":
        path.write_text("id,label\n1,0\n")
    elif kind == "npy":
        np.save(tmp_path / "a.npy", np.arange(5))
        path.write_bytes((tmp_path / "a.npy").read_bytes())
    elif kind == "other_npz":
        np.savez(path, weights=np.ones(3))
    elif kind == "empty":
        path.write_bytes(b"")
    else:
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("readme.txt", "hello")
    with pytest.raises(StateFileError, match="foreign.npz") as info:
        load_annotator(path)
    assert info.value.check in ("zip structure", "missing member")


def test_consistent_file_with_another_tag_or_version_is_refused(tmp_path):
    _, path = _saved(tmp_path, RoundRobinAnnotator)
    arrays = read_state_file(path)
    atomic_savez(path, {**arrays, "version": np.array(99)})
    err = _refused(path, RoundRobinAnnotator, "version")
    assert "version 99" in str(err)
    atomic_savez(path, {**arrays, "tag": np.array("someone.else")})
    _refused(path, RoundRobinAnnotator, "tag")
    atomic_savez(path, {**arrays, "counts": arrays["counts"][:-1]})
    _refused(path, RoundRobinAnnotator, "consistency")


def test_missing_file_stays_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_annotator(tmp_path / "nope.npz")


def test_state_error_pickles():
    import pickle

    err = pickle.loads(pickle.dumps(StateFileError("f.npz", "checksum", "bad")))
    assert (err.path, err.check, str(err)) == ("f.npz", "checksum",
                                               "f.npz: invalid state file (checksum check failed): bad")


# ----------------------------------------------------------------------------- SIGKILL mid-write
_WRITER = textwrap.dedent("""
    import sys
    import numpy as np
    from sklearn_frontier.annotation import RoundRobinAnnotator

    path = sys.argv[1]
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 40))  # a 2 MB state: each write takes a while
    est = RoundRobinAnnotator(n_neighbors=2, classes=[0, 1], random_state=0).fit(X, np.full((5000, 2), np.nan))
    for i in range(10 ** 6):
        est.update([i], [i % 2], annotators=[0])
        est.save_state(path)
        print(est.n_labels_seen_, flush=True)
""")


def _writing(folder):
    for p in folder.iterdir():
        try:
            if p.name.startswith(".tmp-") and p.stat().st_size > 0:
                return True
        except FileNotFoundError:  # renamed into place between the listing and the stat
            pass
    return False


def test_writer_killed_mid_write_leaves_the_last_good_state(tmp_path):
    path = tmp_path / "state.npz"
    script = tmp_path / "writer.py"
    script.write_text(_WRITER)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, str(script), str(path)], stdout=subprocess.PIPE, env=env, text=True)
    try:
        first = int(proc.stdout.readline())  # one complete save
        assert first == 1
        deadline = time.monotonic() + 120
        while not _writing(tmp_path):
            assert time.monotonic() < deadline, "the writer never started a second write"
        proc.send_signal(signal.SIGKILL)  # while a temp file is being written
        proc.wait(timeout=60)
        done = [first] + [int(line) for line in proc.stdout.read().split()]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    loaded = load_annotator(path)  # never a torn file
    assert loaded.n_labels_seen_ in (done[-1], done[-1] + 1)  # the last reported save, or one after it
    assert loaded.annotations_[: loaded.n_labels_seen_, 0].tolist() == [i % 2 for i in range(loaded.n_labels_seen_)]
    for leftover in (p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")):
        try:  # a half-written temp file is itself refused, never loaded as a state
            arrays = read_state_file(leftover)
        except StateFileError:
            continue
        assert int(arrays["n_labels_seen"]) == loaded.n_labels_seen_ + 1  # complete, killed before the rename


# ----------------------------------------------------------------------------- SIGKILL of the loop
_LOOP = textwrap.dedent("""
    import os, sys
    import numpy as np
    from sklearn_frontier.annotation import MA3SAnnotator, SimulatedCrowd, run_annotation_loop

    ckpt, kill_at = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 60)
    X = rng.normal(size=(60, 2)) + 3 * y[:, None]

    def die(annotator, info):  # SIGKILL itself: no handler, no final checkpoint
        if kill_at >= 0 and info["n_labels"] >= kill_at:
            os.kill(os.getpid(), 9)
        return False

    hist = run_annotation_loop(MA3SAnnotator(n_neighbors=5, random_state=0), X,
                               SimulatedCrowd(y, n_workers=5, random_state=1), 200, batch_size=6, y_true=y,
                               eval_every=12, checkpoint=ckpt, checkpoint_every=2, resume=True, callback=die)
    np.save(ckpt + ".result.npy", np.r_[hist["n_labels"], hist["label_accuracy"],
                                        hist["annotation_matrix"].ravel()])
""")


def test_annotation_loop_killed_by_sigkill_resumes_to_the_same_result(tmp_path, monkeypatch):
    script = tmp_path / "loop.py"
    script.write_text(_LOOP)
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def run(ckpt, kill_at):
        return subprocess.run([sys.executable, str(script), str(ckpt), str(kill_at)], env=env, timeout=300)

    monkeypatch.setattr(sys, "argv", ["loop.py", str(tmp_path / "full.npz"), "-1"])
    exec(compile(_LOOP, "loop.py", "exec"), {"__name__": "__main__"})  # the uninterrupted run, in-process
    killed = run(tmp_path / "cut.npz", 130)
    assert killed.returncode == -signal.SIGKILL
    assert not (tmp_path / "cut.npz.result.npy").exists()
    spent_at_kill = int(read_state_file(tmp_path / "cut.npz")["loop/spent"])
    assert 60 < spent_at_kill <= 130  # resumes from a checkpoint taken mid-loop, not from the start
    assert run(tmp_path / "cut.npz", -1).returncode == 0
    full = np.load(tmp_path / "full.npz.result.npy")
    resumed = np.load(tmp_path / "cut.npz.result.npy")
    np.testing.assert_array_equal(np.nan_to_num(full, nan=-1), np.nan_to_num(resumed, nan=-1))


# ----------------------------------------------------------------------------- SIGINT of the loop
_LOOP_SIGINT = textwrap.dedent("""
    import os, signal, sys
    import numpy as np
    from sklearn_frontier.annotation import MA3SAnnotator, SimulatedCrowd, run_annotation_loop

    ckpt, int_at = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 60)
    X = rng.normal(size=(60, 2)) + 3 * y[:, None]

    class InterruptedCrowd(SimulatedCrowd):  # a real SIGINT in the middle of a batch of crowd answers
        calls = 0

        def label(self, i, annotator=None):
            InterruptedCrowd.calls += 1
            if InterruptedCrowd.calls == int_at:
                os.kill(os.getpid(), signal.SIGINT)
            return super().label(i, annotator)

    try:
        hist = run_annotation_loop(MA3SAnnotator(n_neighbors=5, random_state=0), X,
                                   InterruptedCrowd(y, n_workers=5, random_state=1), 200, batch_size=6, y_true=y,
                                   eval_every=12, checkpoint=ckpt, checkpoint_every=4, resume=True)
    except KeyboardInterrupt:
        sys.exit(3)
    np.save(ckpt + ".result.npy", np.r_[hist["n_labels"], hist["label_accuracy"],
                                        hist["annotation_matrix"].ravel()])
""")


def test_annotation_loop_interrupted_by_sigint_mid_batch_resumes_to_the_same_result(tmp_path, monkeypatch):
    script = tmp_path / "loop.py"
    script.write_text(_LOOP_SIGINT)
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def run(ckpt, int_at):
        return subprocess.run([sys.executable, str(script), str(ckpt), str(int_at)], env=env, timeout=300)

    monkeypatch.setattr(sys, "argv", ["loop.py", str(tmp_path / "full.npz"), "-1"])
    exec(compile(_LOOP_SIGINT, "loop.py", "exec"), {"__name__": "__main__"})  # the uninterrupted run, in-process
    interrupted = run(tmp_path / "cut.npz", 60 + 6 * 11 + 3)  # the 3rd answer of the 12th batch
    assert interrupted.returncode == 3
    assert not (tmp_path / "cut.npz.result.npy").exists()
    # saved at the interruption (the batch's drawn answers undone), not at the last periodic checkpoint (batch 8)
    assert int(read_state_file(tmp_path / "cut.npz")["loop/spent"]) == 60 + 6 * 11
    assert run(tmp_path / "cut.npz", -1).returncode == 0
    full = np.load(tmp_path / "full.npz.result.npy")
    resumed = np.load(tmp_path / "cut.npz.result.npy")
    np.testing.assert_array_equal(np.nan_to_num(full, nan=-1), np.nan_to_num(resumed, nan=-1))
