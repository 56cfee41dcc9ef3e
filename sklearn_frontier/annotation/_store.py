"""The label store behind :class:`AnnotationSession`: a small interface and its SQLite implementation."""

import os
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass

from sklearn_frontier.exceptions import StateFileError

try:  # POSIX: writers queue on an advisory lock of a companion file
    import fcntl
except ImportError:  # pragma: no cover - Windows: SQLite's own busy wait alone
    fcntl = None

SCHEMA_VERSION = 2

# Version 1 kept one lease per worker; leases are transient, so an upgrade recreates their table empty.
_UPGRADE_1_TO_2 = """
DROP TABLE leases;
CREATE TABLE leases (
    col INTEGER NOT NULL REFERENCES workers (col), item INTEGER NOT NULL, expires REAL NOT NULL,
    PRIMARY KEY (col, item)
);
"""

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE workers (col INTEGER PRIMARY KEY, worker TEXT NOT NULL UNIQUE);
CREATE TABLE labels (
    item INTEGER NOT NULL, col INTEGER NOT NULL REFERENCES workers (col), label TEXT NOT NULL,
    seq INTEGER NOT NULL UNIQUE, time REAL NOT NULL, n_corrections INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (item, col)
) WITHOUT ROWID;
CREATE TABLE leases (
    col INTEGER NOT NULL REFERENCES workers (col), item INTEGER NOT NULL, expires REAL NOT NULL,
    PRIMARY KEY (col, item)
);
CREATE TABLE blobs (key TEXT PRIMARY KEY, value BLOB NOT NULL);
"""


@dataclass(frozen=True)
class StoredLabel:
    """One worker's current label of one item, as the store holds it."""

    item: int
    column: int  # the worker's column: workers are numbered 0, 1, ... in the order they joined
    label: str  # the label, JSON-encoded
    seq: int  # position in the store's history; a correction moves the label to a new, larger seq


@dataclass(frozen=True)
class Lease:
    """An item handed to a worker, until ``expires`` (seconds since the epoch)."""

    item: int
    column: int
    expires: float


class LabelStore(ABC):
    """Where an :class:`AnnotationSession` keeps its workers, labels and leases: the one source of truth.

    Every method but :meth:`transaction` and :meth:`close` runs inside ``with store.transaction():``, which is one
    database transaction, serialized against every other writer of the same store (threads, processes or
    machines), and durable once the block exits without an exception. The session reads new labels, decides and
    writes within one transaction, so two workers can never be handed the same decision on stale data.

    The SQLite implementation (:class:`SQLiteLabelStore`) is the embedded default. A server database backs the same
    interface for teams on several machines; :class:`PostgreSQLLabelStore` does it with PostgreSQL through
    ``psycopg``:

    - the same four tables (``meta``, ``workers``, ``labels`` keyed by ``(item, col)`` with a unique ``seq``,
      ``leases`` keyed by ``(col, item)``), ``blobs`` as ``bytea``, and the schema version in ``meta``;
    - :meth:`transaction`: ``BEGIN``, then ``SELECT pg_advisory_xact_lock(<key of this store>)``, so that writers
      are serialized as SQLite's ``BEGIN IMMEDIATE`` serializes them; ``COMMIT`` on success, ``ROLLBACK`` on error;
      ``synchronous_commit = on`` keeps every commit durable;
    - :meth:`add_label`'s ``seq`` from ``SELECT COALESCE(MAX(seq), 0) + 1`` under that lock (or a sequence), so
      labels are numbered in commit order and :meth:`labels_since` never skips one;
    - lease times arrive on the calling machine's clock; the store shifts them to the database server's clock
      (measured when the writer takes the lock), so machines whose clocks differ compare leases on one clock.

    Read more in the :ref:`User Guide <user_guide_annotation>`.

    Attributes
    ----------
    path : str or None
        Where the store lives (a file for SQLite), for messages; None if it has no such name.

    See Also
    --------
    SQLiteLabelStore : The embedded implementation.
    PostgreSQLLabelStore : The implementation on a PostgreSQL server.
    AnnotationSession : The object that reads and writes a store.

    Examples
    --------
    >>> from sklearn_frontier.annotation import LabelStore, SQLiteLabelStore
    >>> issubclass(SQLiteLabelStore, LabelStore)
    True
    """

    path = None

    @abstractmethod
    def transaction(self, write=True):
        """One transaction, as a context manager: committed when the block exits, rolled back on an exception.

        Parameters
        ----------
        write : bool, default=True
            Take the writers' lock at the start (every writer of the store waits its turn); False only reads
            (and need not wait for writers).

        Yields
        ------
        store : LabelStore
            The store itself.
        """

    @abstractmethod
    def schema_version(self):
        """The version of the store's layout.

        Returns
        -------
        version : int
            0 for an empty store; this code writes ``SCHEMA_VERSION``.
        """

    @abstractmethod
    def read_meta(self):
        """The session's description.

        Returns
        -------
        meta : dict of str to str
            Empty for a new store.
        """

    @abstractmethod
    def write_meta(self, meta):
        """Record the session's description (a new store).

        Parameters
        ----------
        meta : dict of str to str
            Keys and values.
        """

    @abstractmethod
    def workers(self):
        """The workers, in the order they joined.

        Returns
        -------
        workers : list of str
            Encoded worker ids; a worker's position is its column.
        """

    @abstractmethod
    def add_worker(self, worker):
        """Give a new worker the next column.

        Parameters
        ----------
        worker : str
            The encoded worker id.

        Returns
        -------
        column : int
            The worker's column.
        """

    @abstractmethod
    def labels_since(self, seq):
        """The labels recorded or corrected after ``seq``.

        Parameters
        ----------
        seq : int
            The last ``seq`` already seen (0 for all).

        Returns
        -------
        labels : list of StoredLabel
            In ``seq`` order.
        """

    @abstractmethod
    def get_label(self, item, column):
        """One worker's current label of one item.

        Parameters
        ----------
        item : int
            The item.
        column : int
            The worker's column.

        Returns
        -------
        label : str or None
            The JSON-encoded label, or None.
        """

    @abstractmethod
    def add_label(self, item, column, label, when):
        """Record a new label; the ``(item, column)`` pair must be new.

        Parameters
        ----------
        item : int
            The item.
        column : int
            The worker's column.
        label : str
            The JSON-encoded label.
        when : float
            Seconds since the epoch.

        Returns
        -------
        seq : int
            The label's position in the store's history.
        """

    @abstractmethod
    def replace_label(self, item, column, label, when):
        """Replace an existing label (a correction).

        Parameters
        ----------
        item : int
            The item.
        column : int
            The worker's column.
        label : str
            The JSON-encoded new label.
        when : float
            Seconds since the epoch.

        Returns
        -------
        seq : int
            The label's new position in the store's history.
        """

    @abstractmethod
    def leases(self, now):
        """The live leases.

        Parameters
        ----------
        now : float
            Seconds since the epoch.

        Returns
        -------
        leases : list of Lease
            Every lease that expires after ``now``.
        """

    @abstractmethod
    def put_lease(self, item, column, expires):
        """Lease ``item`` to a worker, or renew the lease if the worker holds it; other leases stay.

        Parameters
        ----------
        item : int
            The item.
        column : int
            The worker's column.
        expires : float
            Seconds since the epoch.
        """

    @abstractmethod
    def drop_lease(self, column, item=None):
        """End a worker's lease or leases.

        Parameters
        ----------
        column : int
            The worker's column.
        item : int, default=None
            End only the lease on this item; None ends all of the worker's leases.

        Returns
        -------
        dropped : bool
            Whether there was such a lease.
        """

    @abstractmethod
    def drop_expired_leases(self, now):
        """Forget the leases that expired.

        Parameters
        ----------
        now : float
            Seconds since the epoch; leases expiring at or before it go.
        """

    @abstractmethod
    def get_blob(self, key):
        """Read the bytes stored by :meth:`put_blob`.

        Parameters
        ----------
        key : str
            The name.

        Returns
        -------
        value : bytes or None
            None if nothing is stored under ``key``.
        """

    @abstractmethod
    def put_blob(self, key, value):
        """Store bytes under a name (the loop keeps its counters and the crowd's state there).

        Parameters
        ----------
        key : str
            The name.
        value : bytes
            The bytes.
        """

    def close(self):
        """Release the connection (the data stays)."""


class SQLiteLabelStore(LabelStore):
    """:class:`LabelStore` in one SQLite file (standard library), shared by threads and processes.

    The database runs in WAL mode with ``synchronous=FULL``, so a transaction is on disk when it commits and
    readers never wait for the writer. Writers take the database lock at the start of their transaction
    (``BEGIN IMMEDIATE``) and wait up to ``timeout`` seconds for it (``busy_timeout``), so concurrent writers queue
    instead of failing with "database is locked". On POSIX systems they first queue on an advisory lock
    (``flock``) of a third companion file, ``-lock``: a waiting writer is woken as soon as the one before it
    commits, where SQLite's busy wait would poll with growing sleeps. Keep the store on a local disk (network
    file systems break SQLite's locking). The layout's version is SQLite's ``user_version``: a store
    written by a newer layout is refused.

    Read more in the :ref:`User Guide <user_guide_annotation>`.

    Parameters
    ----------
    path : str or path-like
        The database file, created if absent. Companion files sit beside it: ``-wal``, ``-shm`` and ``-lock``.
    timeout : float, default=60.0
        Seconds a transaction waits for the database lock.

    Attributes
    ----------
    path : str
        The database file.

    Raises
    ------
    StateFileError
        The file is not a readable SQLite database or fails its integrity check (``check="database"``), or its
        layout is newer than this code reads (``check="version"``). The message names the file.

    See Also
    --------
    LabelStore : The interface.
    PostgreSQLLabelStore : The same on a PostgreSQL server, for a team on several machines.
    AnnotationSession : The object that reads and writes a store.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_frontier.annotation import SQLiteLabelStore
    >>> store = SQLiteLabelStore(os.path.join(tempfile.mkdtemp(), "labels.sqlite"))
    >>> with store.transaction():
    ...     column = store.add_worker("s:alice")
    ...     seq = store.add_label(3, column, "1", when=0.0)
    >>> store.labels_since(0)
    [StoredLabel(item=3, column=0, label='1', seq=1)]
    >>> store.close()
    """

    def __init__(self, path, *, timeout=60.0):
        self.path = os.fspath(path)
        self.timeout = float(timeout)
        self._lock = threading.RLock()
        self._conn = self._queue = None
        try:
            self._connect()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise StateFileError(self.path, "database", f"not a readable SQLite label store ({exc}).") from exc
        except BaseException:
            self.close()
            raise

    def _connect(self):
        existed = os.path.exists(self.path) and os.path.getsize(self.path) > 0
        conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False)
        self._conn = conn
        conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        self._check_version()
        if existed:
            result = conn.execute("PRAGMA quick_check").fetchone()[0]
            if result != "ok":
                raise StateFileError(self.path, "database", f"the SQLite integrity check failed: {result}.")
        for attempt in range(100):  # switching to WAL needs the file to itself for a moment
            try:
                if conn.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower() == "wal":
                    break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 99:
                    raise
            time.sleep(0.01 * (attempt + 1))
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        if fcntl is not None and self.path != ":memory:":
            self._queue = os.open(self.path + "-lock", os.O_RDWR | os.O_CREAT, 0o666)
        if self.schema_version() < SCHEMA_VERSION:
            with self.transaction():
                version = self.schema_version()  # another process may have created it while this one waited
                script = _SCHEMA if version == 0 else _UPGRADE_1_TO_2 if version == 1 else ""
                for statement in script.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _check_version(self):
        version = self.schema_version()
        if version > SCHEMA_VERSION:
            raise StateFileError(self.path, "version", f"the label store's layout is version {version}; this "
                                 f"sklearn_frontier reads versions up to {SCHEMA_VERSION} (upgrade it).")

    def schema_version(self):
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    @contextmanager
    def transaction(self, write=True):
        with self._lock:
            if self._conn is None:
                raise ValueError(f"The label store {self.path} is closed.")
            queued = write and self._queue is not None
            if queued:  # wait in the kernel's queue: woken when the writer before commits, not by polling
                fcntl.flock(self._queue, fcntl.LOCK_EX)
            try:
                self._conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield self
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            finally:
                if queued:
                    fcntl.flock(self._queue, fcntl.LOCK_UN)

    def _one(self, sql, args=()):
        row = self._conn.execute(sql, args).fetchone()
        return None if row is None else row[0]

    def read_meta(self):
        return dict(self._conn.execute("SELECT key, value FROM meta"))

    def write_meta(self, meta):
        self._conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                               [(str(k), str(v)) for k, v in meta.items()])

    def workers(self):
        return [w for (w,) in self._conn.execute("SELECT worker FROM workers ORDER BY col")]

    def add_worker(self, worker):
        col = self._one("SELECT COALESCE(MAX(col) + 1, 0) FROM workers")
        self._conn.execute("INSERT INTO workers (col, worker) VALUES (?, ?)", (col, worker))
        return int(col)

    def labels_since(self, seq):
        rows = self._conn.execute("SELECT item, col, label, seq FROM labels WHERE seq > ? ORDER BY seq", (int(seq),))
        return [StoredLabel(int(i), int(c), lab, int(s)) for i, c, lab, s in rows]

    def get_label(self, item, column):
        return self._one("SELECT label FROM labels WHERE item = ? AND col = ?", (int(item), int(column)))

    def _next_seq(self):
        return int(self._one("SELECT COALESCE(MAX(seq), 0) + 1 FROM labels"))

    def add_label(self, item, column, label, when):
        seq = self._next_seq()
        self._conn.execute("INSERT INTO labels (item, col, label, seq, time) VALUES (?, ?, ?, ?, ?)",
                           (int(item), int(column), label, seq, float(when)))
        return seq

    def replace_label(self, item, column, label, when):
        seq = self._next_seq()
        self._conn.execute("UPDATE labels SET label = ?, seq = ?, time = ?, n_corrections = n_corrections + 1 "
                           "WHERE item = ? AND col = ?", (label, seq, float(when), int(item), int(column)))
        return seq

    def leases(self, now):
        rows = self._conn.execute("SELECT item, col, expires FROM leases WHERE expires > ?", (float(now),))
        return [Lease(int(i), int(c), float(e)) for i, c, e in rows]

    def put_lease(self, item, column, expires):
        self._conn.execute("INSERT OR REPLACE INTO leases (col, item, expires) VALUES (?, ?, ?)",  # (col, item) key
                           (int(column), int(item), float(expires)))

    def drop_lease(self, column, item=None):
        if item is None:
            cur = self._conn.execute("DELETE FROM leases WHERE col = ?", (int(column),))
        else:
            cur = self._conn.execute("DELETE FROM leases WHERE col = ? AND item = ?", (int(column), int(item)))
        return cur.rowcount > 0

    def drop_expired_leases(self, now):
        self._conn.execute("DELETE FROM leases WHERE expires <= ?", (float(now),))

    def get_blob(self, key):
        value = self._one("SELECT value FROM blobs WHERE key = ?", (str(key),))
        return None if value is None else bytes(value)

    def put_blob(self, key, value):
        self._conn.execute("INSERT OR REPLACE INTO blobs (key, value) VALUES (?, ?)", (str(key), bytes(value)))

    def close(self):
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            if self._queue is not None:
                os.close(self._queue)
                self._queue = None

    def __repr__(self):
        return f"SQLiteLabelStore({self.path!r})"


# The implementation's methods are documented by the interface they implement.
for _name, _method in vars(SQLiteLabelStore).items():
    if callable(_method) and not _name.startswith("_") and _method.__doc__ is None:
        _method.__doc__ = getattr(LabelStore, _name).__doc__
