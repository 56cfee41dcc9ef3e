"""Atomic, checksummed ``.npz`` state files: written whole or not at all, and verified when read.

Every family that persists fitted state (annotators, PR-BAST checkpoints, quantized-layer checkpoints) writes
through :func:`atomic_savez` and reads through :func:`read_state_file`, so a file cut short by a killed writer or
damaged on disk is refused with a :class:`~sklearn_frontier.exceptions.StateFileError` naming it.
"""

import hashlib
import json
import os
import tempfile
import zipfile

import numpy as np

from sklearn_frontier.exceptions import StateFileError

_CHECKSUM_KEY = "state_sha256"


def _state_digest(arrays):
    """SHA-256 over every member's name, dtype, shape and bytes, in sorted order."""
    h = hashlib.sha256()
    for key in sorted(arrays):
        if key == _CHECKSUM_KEY:
            continue
        a = np.ascontiguousarray(arrays[key])
        h.update(f"{key}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _checksum_member(arrays):
    members = sorted(k for k in arrays if k != _CHECKSUM_KEY)
    return np.array(json.dumps({"members": members, "sha256": _state_digest(arrays)}))


def atomic_savez(path, arrays):
    """``np.savez`` to a temp file in the same folder, fsync, ``os.replace``, fsync the folder.

    A ``state_sha256`` member (the member list and a SHA-256 of all of them) is added, checked by
    :func:`read_state_file`. A writer killed at any point leaves the previous file intact (and at most a
    ``.tmp-*.npz`` file beside it).
    """
    path = os.fspath(path)
    arrays = {**arrays, _CHECKSUM_KEY: _checksum_member(arrays)}
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:  # pragma: no cover - some filesystems refuse directory fsync
        pass


def _is_legacy(arrays):
    """Files whose ``version`` members are all 1 predate the checksum member (annotator state format 1)."""
    versions = [v for k, v in arrays.items() if k == "version" or k.endswith("/version")]
    try:
        return bool(versions) and all(int(v) == 1 for v in versions)
    except (TypeError, ValueError):
        return False


def read_state_file(path):
    """Every member of a state ``.npz`` written by :func:`atomic_savez`, after checking it.

    Parameters
    ----------
    path : str or path-like
        The file.

    Returns
    -------
    arrays : dict of str to ndarray
        The members, without ``state_sha256``.

    Raises
    ------
    StateFileError
        A ``ValueError`` naming the file and the failed check: ``"zip structure"`` (truncated, not a zip
        archive, a foreign ``.npy``), ``"checksum"`` (a member's zip CRC or the state SHA-256 differ),
        ``"missing member"``. Missing or unreadable files raise the usual ``OSError``.
    """
    name = os.fspath(path)
    with open(name, "rb") as fh:
        magic = fh.read(4)
    if magic != b"PK\x03\x04":
        what = "an empty file" if not magic else "a .npy array" if magic == b"\x93NUM" else "not a zip archive"
        raise StateFileError(name, "zip structure", f"{what}, not a state file written by save_state.")
    arrays = {}
    try:
        with np.load(name, allow_pickle=False) as data:
            for key in data.files:
                arrays[key] = data[key]
    except zipfile.BadZipFile as exc:
        check = "checksum" if "CRC" in str(exc) else "zip structure"
        raise StateFileError(name, check, f"{exc} (truncated or corrupted file).") from exc
    except (FileNotFoundError, PermissionError):
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged header fails in many ways (sizes, compression id, ...)
        raise StateFileError(name, "zip structure",
                             f"a member cannot be read: {type(exc).__name__}: {exc}") from exc
    if _CHECKSUM_KEY not in arrays:
        if _is_legacy(arrays):
            return arrays
        raise StateFileError(name, "missing member", f"the member {_CHECKSUM_KEY!r} is missing (not a state "
                             "file written by sklearn_frontier, or a damaged one).")
    try:
        record = json.loads(str(arrays.pop(_CHECKSUM_KEY)))
        members, digest = list(record["members"]), str(record["sha256"])
    except (ValueError, KeyError, TypeError) as exc:
        raise StateFileError(name, "checksum", f"the {_CHECKSUM_KEY!r} member is unreadable.") from exc
    missing = sorted(set(members) - set(arrays))
    if missing:
        raise StateFileError(name, "missing member", f"the member{'s' if len(missing) > 1 else ''} "
                             f"{', '.join(map(repr, missing))} {'are' if len(missing) > 1 else 'is'} missing.")
    extra = sorted(set(arrays) - set(members))
    if extra:
        raise StateFileError(name, "checksum", f"unexpected members {extra} (the member list differs).")
    if _state_digest(arrays) != digest:
        raise StateFileError(name, "checksum", "the SHA-256 of the members does not match the stored one.")
    return arrays
