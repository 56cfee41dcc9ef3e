"""The label store on a PostgreSQL server, for a labelling service whose front-ends run on several machines."""

import hashlib
import re
import threading
import time
from contextlib import contextmanager

from sklearn_frontier.exceptions import StateFileError

from ._store import _SCHEMA, SCHEMA_VERSION, LabelStore, Lease, SQLiteLabelStore, StoredLabel

_EXTRA = "pip install 'sklearn-frontier[annotation-server]'"

# The tables are the SQLite store's, in PostgreSQL's words: 8-byte floats, bytea, no rowid clause.
_PG_SCHEMA = [re.sub(r"\bREAL\b", "DOUBLE PRECISION", s).replace("BLOB", "BYTEA").replace(" WITHOUT ROWID", "")
              for s in _SCHEMA.split(";") if s.strip()]
_TABLES = ("meta", "workers", "labels", "leases", "blobs")
# The layout's version sits in ``meta`` under a key the session never sees (SQLite keeps it in user_version).
_VERSION_KEY = "label_store_schema_version"


def _psycopg():
    try:
        import psycopg
    except ImportError as exc:
        raise ImportError("PostgreSQLLabelStore needs the psycopg driver, an optional dependency: install it with "
                          f"{_EXTRA}.") from exc
    return psycopg


def _redacted(dsn):
    """The connection string without its password, for messages: ``postgresql://user@host:port/dbname``."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        params = conninfo_to_dict(dsn)
    except Exception:  # noqa: BLE001 - the parser's message quotes the string, password included
        raise ValueError("dsn is not a valid PostgreSQL connection string (a URI such as "
                         "'postgresql://user:password@host:5432/dbname' or 'host=... dbname=...').") from None
    host, port = params.get("host", ""), params.get("port")
    where = "" if host.startswith("/") else host
    text = f"postgresql://{params.get('user', '')}@{where}{':' + port if port else ''}/{params.get('dbname', '')}"
    if host.startswith("/"):
        text += f"?host={host}"
    return text, params.get("password")


def _open_store(store):
    """The store ``store`` names: a ``postgresql://`` URI opens :class:`PostgreSQLLabelStore`, a path SQLite."""
    if isinstance(store, str) and store.startswith(("postgresql://", "postgres://")):
        return PostgreSQLLabelStore(store)
    return SQLiteLabelStore(store)


def _scrub(text, password):
    return text.replace(password, "***") if password else text


class PostgreSQLLabelStore(LabelStore):
    """:class:`LabelStore` on a PostgreSQL server, shared by the service's processes on several machines.

    The store a team uses when its labelling front-ends run on more than one machine: every machine's
    :class:`AnnotationSession` points at one database, and the guarantees of :class:`SQLiteLabelStore` hold
    across machines. The tables and their layout version are the SQLite store's. Each transaction runs at
    ``READ COMMITTED`` and a writer first takes a transaction-scoped advisory lock keyed by the store (its
    database and schema), so writers take turns as SQLite's ``BEGIN IMMEDIATE`` makes them, every statement after
    the lock sees everything committed before it, and labels are numbered in commit order. ``synchronous_commit``
    is on for the connection: a label is on the server's disk when :meth:`AnnotationSession.submit` returns.
    Reading transactions take a consistent snapshot and do not wait for writers.

    Leases expire on the database server's clock. The session reads the time from its own machine; the store
    shifts those times by the difference between the server's clock (``clock_timestamp()``, read when the
    transaction takes the lock) and the machine's, so a lease written on one machine and checked on another is
    compared on one clock. Machines' clocks differ (drift, a host without NTP): on their own clocks, a machine
    running behind would write leases that others already see as expired and hand the item out twice.

    A connection that broke while idle (the server restarted, a network blip) is opened again at the start of
    the next transaction, so the next call simply works. A connection lost in the middle of a transaction
    raises :class:`ConnectionError`; the server rolls the transaction back, so nothing of it is written, and
    the call after reconnects. A submit that failed this way can be repeated (a repeated label is a no-op).

    Read more in the :ref:`User Guide <user_guide_annotation>`.

    Parameters
    ----------
    dsn : str
        The connection string, a URI (``"postgresql://user:password@host:5432/dbname"``) or ``"key=value"``
        pairs; see libpq's documentation. The database must exist; the tables are created if absent.
    schema : str, default=None
        The PostgreSQL schema that holds the tables, created if absent, so that one database can hold several
        stores. None uses the connection's current schema (usually ``public``).
    timeout : float, default=60.0
        Seconds a statement may run, waits for the writers' lock included; also the connection timeout.

    Attributes
    ----------
    path : str
        The store's address without the password (``postgresql://user@host:port/dbname``, plus the schema),
        for messages.
    schema : str
        The PostgreSQL schema holding the tables.
    timeout : float
        The ``timeout`` given.

    Raises
    ------
    ImportError
        psycopg is not installed (install the ``annotation-server`` extra).
    ConnectionError
        The server cannot be reached or refuses the login (connection refused, wrong password, no such
        database). The message names the store, never the password.
    StateFileError
        The database holds tables of something else (``check="database"``) or a label store of another layout
        version (``check="version"``). The message names the store.

    See Also
    --------
    SQLiteLabelStore : The embedded default, for one machine.
    LabelStore : The interface.
    AnnotationSession : Selects this store from a ``"postgresql://..."`` URI.

    Notes
    -----
    A team needs one database (``CREATE DATABASE labels``) and a role that may create tables in it; every
    machine's service opens ``AnnotationSession(annotator, X, store="postgresql://...")`` with the same URI, the
    same pool and the same label set (a store remembers both and refuses others). Each session holds one
    connection.

    Examples
    --------
    A session selects this store from its URI, ``AnnotationSession(annotator, X,
    store="postgresql://labeller:password@db.example.org:5432/labels")``; the annotation guide runs that against a
    local server. Without a server, a store says which one it could not reach, and keeps the password to itself:

    >>> from sklearn_frontier.annotation import PostgreSQLLabelStore
    >>> try:
    ...     PostgreSQLLabelStore("postgresql://labeller:s3cret@127.0.0.1:1/labels", timeout=2)
    ... except ConnectionError as exc:
    ...     print(str(exc).partition(" to its server")[0], "s3cret" in str(exc))
    The label store postgresql://labeller@127.0.0.1:1/labels cannot connect False
    """

    def __init__(self, dsn, *, schema=None, timeout=60.0):
        self._psycopg = _psycopg()
        if not isinstance(dsn, str):
            raise TypeError(f"dsn must be a str, got {type(dsn).__name__}.")
        if schema is not None and (not isinstance(schema, str) or not schema):
            raise ValueError(f"schema must be a non-empty str or None, got {schema!r}.")
        if not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0):
            raise ValueError(f"timeout must be a positive number, got {timeout!r}.")
        self._dsn = dsn
        self._address, self._password = _redacted(dsn)
        self.path = self._address
        self.schema = schema
        self.timeout = float(timeout)
        self._lock = threading.RLock()
        self._conn = None
        self._offset = None
        self._closed = False
        # what a transaction's first statement saw: its workers and last seq (None before the tables exist);
        # workers are never removed, so a cache of the list is extended, not reread
        self._counts = None
        self._worker_cache = []
        # writes whose result nobody reads wait here and travel with the next statement or the commit (pipeline)
        self._pending = None
        self._active = False
        try:
            self._connect()
            self._ensure_schema()
        except BaseException:
            self.close()
            raise

    # -- connection --------------------------------------------------------------------------------------
    def _connection_error(self, what, exc):
        detail = _scrub(str(exc).strip(), self._password)
        return ConnectionError(f"The label store {self.path} {what}: {detail}")

    def _connect(self):
        psycopg = self._psycopg
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        try:
            conn = psycopg.connect(self._dsn, autocommit=True, connect_timeout=max(1, round(self.timeout)))
        except psycopg.Error as exc:
            raise self._connection_error("cannot connect to its server", exc) from None
        try:
            conn.execute("SET synchronous_commit TO on")
            conn.execute(f"SET statement_timeout TO {int(self.timeout * 1000)}")
            conn.execute("SET default_transaction_isolation TO 'read committed'")
            if self.schema is None:
                self.schema = conn.execute("SELECT current_schema()").fetchone()[0]
                if self.schema is None:
                    raise StateFileError(self.path, "database", "the connection has no current schema; give "
                                         "schema=... to say where the tables go.")
            else:
                conn.execute(psycopg.sql.SQL("SET search_path TO {}").format(psycopg.sql.Identifier(self.schema)))
            database = conn.execute("SELECT current_database()").fetchone()[0]
        except BaseException:
            conn.close()
            raise
        self.path = f"{self._address} (schema {self.schema})"
        # one 64-bit advisory-lock key per store: its database and schema
        digest = hashlib.sha256(f"sklearn_frontier label store\0{database}\0{self.schema}".encode()).digest()
        self._key = int.from_bytes(digest[:8], "big", signed=True)
        self._conn = conn
        self._pipeline = self._psycopg.Pipeline.is_supported()

    def _ensure_schema(self):
        self._ready = False  # no counts in the first transaction's opening statement: the tables may not exist
        with self.transaction():
            conn = self._conn
            found = [t for t in _TABLES
                     if conn.execute("SELECT to_regclass(%s)", (f'"{self.schema}".{t}',)).fetchone()[0] is not None]
            if not found:
                sql = self._psycopg.sql
                conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema)))
                for statement in _PG_SCHEMA:
                    conn.execute(statement)
                conn.execute("INSERT INTO meta (key, value) VALUES (%s, %s)", (_VERSION_KEY, str(SCHEMA_VERSION)))
            else:
                self._check_layout(found)
        self._ready = True

    def _check_layout(self, found):
        version = self.schema_version() if "meta" in found else 0
        if version == 0 or len(found) < len(_TABLES):
            raise StateFileError(self.path, "database", f"the schema {self.schema!r} holds tables "
                                 f"({', '.join(found)}) of something other than a label store; give another "
                                 "schema= or database.")
        if (version, SCHEMA_VERSION) == (1, 2):  # leases are transient: the new table replaces the old
            self._conn.execute("DROP TABLE leases")
            self._conn.execute(next(s for s in _PG_SCHEMA if "CREATE TABLE leases" in s))
            self._conn.execute("UPDATE meta SET value = %s WHERE key = %s", (str(SCHEMA_VERSION), _VERSION_KEY))
            version = SCHEMA_VERSION
        if version != SCHEMA_VERSION:
            advice = "upgrade sklearn_frontier" if version > SCHEMA_VERSION else "it predates this code"
            raise StateFileError(self.path, "version", f"the label store's layout is version {version}; this "
                                 f"sklearn_frontier reads version {SCHEMA_VERSION} ({advice}).")

    def _execute(self, sql, args=None):
        """Run a statement whose result is needed now, in one round trip with the writes queued before it."""
        pending = self._pending
        try:
            if not pending:
                return self._conn.execute(sql, args, prepare=None)
            self._pending = []
            with self._conn.pipeline():
                for write in pending:
                    self._conn.execute(*write)
                return self._conn.execute(sql, args)
        except self._psycopg.OperationalError as exc:
            if not self._conn.closed and not self._conn.broken:
                raise
            raise self._connection_error("lost its connection to the server in a transaction (rolled back: nothing "
                                         "of it was written; the next call reconnects)", exc) from None

    def _write(self, sql, args):
        """A write whose result nobody reads: queued inside a writing transaction, run now outside one."""
        if self._pending is None:
            self._execute(sql, args)
        else:
            self._pending.append((sql, args))

    def _one(self, sql, args=None):
        row = self._execute(sql, args).fetchone()
        return None if row is None else row[0]

    def _begin(self, write, counts=True):
        if self._closed:
            raise ValueError(f"The label store {self.path} is closed.")
        # one round trip: BEGIN, the writers' lock, then (a statement of its own, so that its snapshot is taken
        # once the lock is held) the clock and how many workers and labels there are, so that lists that did not
        # change are not read again
        seen = ", (SELECT count(*) FROM workers), (SELECT COALESCE(MAX(seq), 0) FROM labels)" if counts else ""
        if write:
            begin = (f"BEGIN; SELECT pg_advisory_xact_lock({int(self._key)}); "
                     f"SELECT extract(epoch FROM clock_timestamp())::float8{seen}")
        else:
            begin = f"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT 0.0{seen}"
        for attempt in range(2):
            if self._conn is None or self._conn.closed or self._conn.broken:
                self._connect()
            try:
                cur = self._conn.execute(begin)
                while cur.nextset():
                    pass  # to the last statement's result
                row = cur.fetchone()
                if write:
                    self._offset = row[0] - time.time()
                if counts:
                    self._counts = [int(row[1]), int(row[2])]
                return
            except self._psycopg.OperationalError as exc:
                if not (self._conn.closed or self._conn.broken) or attempt:
                    self._rollback_quietly()
                    raise self._connection_error("could not start a transaction", exc) from None

    def _rollback_quietly(self):
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            try:
                self._conn.execute("ROLLBACK")
            except self._psycopg.Error:
                self._conn.close()

    @contextmanager
    def transaction(self, write=True):
        with self._lock:
            if self._active:  # a BEGIN inside a transaction would be ignored and its COMMIT end the outer one
                raise RuntimeError(f"The label store {self.path} is already in a transaction; they do not nest.")
            self._offset = self._counts = self._pending = None
            self._begin(write, counts=self._ready)
            self._pending = [] if write and self._pipeline else None
            self._active = True
            try:
                yield self
                self._commit()
            except BaseException:
                self._worker_cache = []  # it may hold a worker of the rolled-back transaction
                self._rollback_quietly()
                raise
            finally:
                self._offset = self._counts = self._pending = None
                self._active = False

    def _commit(self):
        pending, self._pending = self._pending, None
        try:
            if not pending:
                self._conn.execute("COMMIT")
                return
            with self._conn.pipeline():  # the queued writes and the commit: one round trip
                for write in pending:
                    self._conn.execute(*write)
                self._conn.execute("COMMIT")
        except self._psycopg.OperationalError as exc:
            if not (self._conn.closed or self._conn.broken):
                raise
            raise self._connection_error("lost its connection while committing: the transaction may or may not "
                                         "be written; repeating a submit is safe (a repeated label is a no-op)",
                                         exc) from None

    def _clock_offset(self):
        """Server clock minus this machine's clock, measured in this transaction."""
        if self._offset is None:
            self._offset = self._one("SELECT extract(epoch FROM clock_timestamp())::float8") - time.time()
        return self._offset

    # -- the interface -------------------------------------------------------------------------------------
    def schema_version(self):
        with self._lock:
            if self._conn is None or self._conn.closed:
                self._connect()
            if self._one("SELECT to_regclass(%s)", (f'"{self.schema}".meta',)) is None:
                return 0
            value = self._one("SELECT value FROM meta WHERE key = %s", (_VERSION_KEY,))
            return 0 if value is None else int(value)

    def read_meta(self):
        rows = self._execute("SELECT key, value FROM meta WHERE key <> %s", (_VERSION_KEY,)).fetchall()
        return dict(rows)

    def write_meta(self, meta):
        rows = [(str(k), str(v)) for k, v in meta.items()]
        if any(k == _VERSION_KEY for k, _ in rows):
            raise ValueError(f"meta key {_VERSION_KEY!r} is reserved for the store's layout version.")
        for row in rows:
            self._write("INSERT INTO meta (key, value) VALUES (%s, %s) "
                        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", row)

    def workers(self):
        cache = self._worker_cache
        if self._conn is not None and self._conn.info.transaction_status == self._psycopg.pq.TransactionStatus.IDLE:
            # outside a transaction (the session reads the list after a commit): what the last one saw, which
            # covers every label it returned
            if cache:
                return list(cache)
        if self._counts is None or len(cache) < self._counts[0]:
            rows = self._execute("SELECT worker FROM workers WHERE col >= %s ORDER BY col", (len(cache),))
            cache += [w for (w,) in rows.fetchall()]
        return list(cache if self._counts is None else cache[:self._counts[0]])

    def add_worker(self, worker):
        col = int(self._one("INSERT INTO workers (col, worker) SELECT COALESCE(MAX(col) + 1, 0), %s FROM workers "
                            "RETURNING col", (worker,)))
        if self._counts is not None and len(self._worker_cache) == col == self._counts[0]:
            self._worker_cache.append(worker)
            self._counts[0] += 1
        else:
            self._worker_cache, self._counts = [], None
        return col

    def labels_since(self, seq):
        if self._counts is not None and int(seq) >= self._counts[1]:
            return []  # nothing was committed since ``seq``
        rows = self._execute("SELECT item, col, label, seq FROM labels WHERE seq > %s ORDER BY seq", (int(seq),))
        return [StoredLabel(int(i), int(c), lab, int(s)) for i, c, lab, s in rows.fetchall()]

    def get_label(self, item, column):
        return self._one("SELECT label FROM labels WHERE item = %s AND col = %s", (int(item), int(column)))

    def add_label(self, item, column, label, when):
        # under the writers' lock, MAX(seq) + 1 numbers labels in commit order
        if self._counts is not None and self._pending is not None:  # the last seq is known: no round trip
            seq = self._counts[1] + 1
            self._write("INSERT INTO labels (item, col, label, seq, time) VALUES (%s, %s, %s, %s, %s)",
                        (int(item), int(column), label, seq, float(when)))
            return self._note_seq(seq)
        return self._note_seq(self._one("INSERT INTO labels (item, col, label, seq, time) SELECT %s, %s, %s, "
                             "COALESCE(MAX(seq), 0) + 1, %s FROM labels RETURNING seq",
                             (int(item), int(column), label, float(when))))

    def _note_seq(self, seq):
        if self._counts is not None:
            self._counts[1] = max(self._counts[1], int(seq))
        return int(seq)

    def replace_label(self, item, column, label, when):
        return self._note_seq(self._one(
            "UPDATE labels SET label = %s, seq = (SELECT COALESCE(MAX(seq), 0) + 1 FROM labels), time = %s, "
            "n_corrections = n_corrections + 1 WHERE item = %s AND col = %s RETURNING seq",
            (label, float(when), int(item), int(column))))

    def leases(self, now):
        offset = self._clock_offset()
        rows = self._execute("SELECT item, col, expires FROM leases WHERE expires > %s", (float(now) + offset,))
        return [Lease(int(i), int(c), float(e) - offset) for i, c, e in rows.fetchall()]

    def put_lease(self, item, column, expires):
        # the upsert follows the table's key: one lease per worker (layout 1) or per (worker, item) (layout 2)
        self._write("INSERT INTO leases (col, item, expires) VALUES (%s, %s, %s) ON CONFLICT ON CONSTRAINT "
                    "leases_pkey DO UPDATE SET item = EXCLUDED.item, expires = EXCLUDED.expires",
                    (int(column), int(item), float(expires) + self._clock_offset()))

    def drop_lease(self, column, item=None):
        if item is None:
            cur = self._execute("DELETE FROM leases WHERE col = %s", (int(column),))
        else:
            cur = self._execute("DELETE FROM leases WHERE col = %s AND item = %s", (int(column), int(item)))
        return cur.rowcount > 0

    def drop_expired_leases(self, now):
        self._write("DELETE FROM leases WHERE expires <= %s", (float(now) + self._clock_offset(),))

    def get_blob(self, key):
        value = self._one("SELECT value FROM blobs WHERE key = %s", (str(key),))
        return None if value is None else bytes(value)

    def put_blob(self, key, value):
        self._write("INSERT INTO blobs (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE "
                    "SET value = EXCLUDED.value", (str(key), bytes(value)))

    def close(self):
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __repr__(self):
        return f"PostgreSQLLabelStore({self.path!r})"


# The implementation's methods are documented by the interface they implement.
for _name, _method in vars(PostgreSQLLabelStore).items():
    if callable(_method) and not _name.startswith("_") and _method.__doc__ is None:
        _method.__doc__ = getattr(LabelStore, _name).__doc__
