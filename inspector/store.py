"""The flow store: one SQLite file (WAL), written by a single thread, read from any.

The forwarder hands flows to `submit()` and goes on forwarding; the writer thread analyses the
completed ones (contract checks included) and writes them, so neither SQLite nor the checker ever
sits on the forwarding path. A flow row is written when the request arrives (state `pending`) and
rewritten when the response ends, so a crash loses no finished flow; meanwhile the chunks relayed so
far are appended to `flow_chunks` every PROGRESS_INTERVAL, and the next store opened on the file
marks the pending flows of a dead process `interrupted:` with those bytes.

Recording never stops forwarding: flow ids come from memory, and flows the writer cannot write
(disk full, file locked) wait in a bounded backlog and are retried, with a warning on stderr and
in `last_error`. Commands that only read open the file read-only and change nothing in it."""

from __future__ import annotations

import os
import pickle
import queue
import sqlite3
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import orjson
import platformdirs

from .flow import Chunk, Flow, FlowState, Mode
from .redact import Scrubber, redact_url, redacted, scrubber

SCHEMA_VERSION = 3

# Above this many body bytes, a flow is analysed in a helper process: checking a multi-megabyte
# conversation holds the GIL for milliseconds, and the forwarder thread needs the GIL to relay.
ANALYSE_APART = 256 * 1024
BATCH_WINDOW = 0.005  # seconds the writer waits after a flow arrives, to write a burst at once
# Bytes relayed this long ago are on disk (`flow_chunks`), so a killed process loses at most this much
# of a stream; half the 100 ms promised, to leave room for the commit itself.
PROGRESS_INTERVAL = 0.05
RETRY_INTERVAL = 0.5  # seconds between attempts while the store cannot be written
WRITE_TIMEOUT = 2.0  # seconds the writer waits for another process's lock before trying again later
# Flows kept in memory while the store cannot be written; past either bound the oldest are dropped.
BACKLOG_FLOWS = 10_000
BACKLOG_BYTES = 256 * 1024 * 1024

_SCHEMA = """
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    started_at REAL NOT NULL,
    upstream TEXT NOT NULL,
    listen TEXT NOT NULL,
    mode TEXT NOT NULL
);
CREATE TABLE flows (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL,
    started_at REAL NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    query TEXT NOT NULL,
    request_headers BLOB NOT NULL,
    request_body BLOB NOT NULL,
    mode TEXT NOT NULL,
    translate TEXT,
    upstream_url TEXT NOT NULL,
    upstream_request_headers BLOB NOT NULL,
    upstream_request_body BLOB,
    status INTEGER,
    response_headers BLOB NOT NULL,
    upstream_response_body BLOB,
    response_body BLOB NOT NULL,
    streamed INTEGER NOT NULL,
    chunks BLOB NOT NULL,
    ttfb_ms REAL,
    latency_ms REAL,
    state TEXT NOT NULL,
    error TEXT,
    replay_of INTEGER,
    notes BLOB NOT NULL,
    dialect TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    tools INTEGER NOT NULL DEFAULT 0,
    tool_calls INTEGER NOT NULL DEFAULT 0,
    errors INTEGER NOT NULL DEFAULT 0,
    warnings INTEGER NOT NULL DEFAULT 0,
    parse_error TEXT
);
CREATE INDEX flows_session ON flows (session_id);
"""
# Version 2: flow ids are reserved through `meta`, so that several processes on one store (the
# TUI, `record`, `replay`) never give two flows the same id.
_SCHEMA_2 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""
# Version 3: the owner of each session (to tell a dead process's pending flows from a live one's),
# the chunks of in-flight streams, appended as they are relayed and folded into the flow at its end,
# and an index of the pending flows, which every open looks for.
_SCHEMA_3 = """
ALTER TABLE sessions ADD COLUMN owner_pid INTEGER;
ALTER TABLE sessions ADD COLUMN owner_started TEXT;
CREATE TABLE flow_chunks (
    flow_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    t REAL NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (flow_id, seq)
) WITHOUT ROWID;
CREATE INDEX flows_pending ON flows (session_id) WHERE state = 'pending';
"""
_MIGRATIONS = {0: _SCHEMA + _SCHEMA_2 + _SCHEMA_3, 1: _SCHEMA_2 + _SCHEMA_3, 2: _SCHEMA_3}
READABLE_VERSIONS = (1, 2, 3)  # what a read-only open can list and show without migrating
# Ids each store keeps reserved ahead, topped up by every write transaction. Few, so that two
# processes recording on one store leave each other gaps of at most this many ids; a burst that
# outruns them borrows ids (see next_flow_id) rather than wait for the file.
ID_POOL = 8

_FLOW_COLUMNS = (
    "id, session_id, started_at, method, path, query, request_headers, request_body, mode, translate, "
    "upstream_url, upstream_request_headers, upstream_request_body, status, response_headers, "
    "upstream_response_body, response_body, streamed, chunks, ttfb_ms, latency_ms, state, error, "
    "replay_of, notes"
)
_SUMMARY_COLUMNS = "dialect, model, tools, tool_calls, errors, warnings, parse_error"
_COMPLETION_SET = ", ".join(
    f"{name} = ?" for name in (
        "status", "response_headers", "upstream_response_body", "response_body", "streamed", "chunks", "ttfb_ms",
        "latency_ms", "state", "error", "replay_of", "notes", "dialect", "model", "tools", "tool_calls", "errors",
        "warnings", "parse_error",
    )
)
_ROW_COLUMNS = (
    "id, session_id, started_at, method, path, dialect, model, status, state, latency_ms, ttfb_ms, "
    "tools, tool_calls, errors, warnings, replay_of, streamed, mode, COALESCE(error, parse_error)"
)
# What the list filter matches against: the columns a user sees in the list.
_TEXT_FILTER = (
    "(method || ' ' || path || ' ' || dialect || ' ' || model || ' ' || state || ' ' || "
    "COALESCE(status, '') || ' ' || COALESCE(error, '') || ' ' || COALESCE(parse_error, '') || ' #' || id) "
    "LIKE ? ESCAPE '\\'"
)


@dataclass(slots=True)
class FlowRow:
    id: int
    session_id: int
    started_at: float
    method: str
    path: str
    dialect: str  # "" when unknown
    model: str
    status: int | None
    state: str
    latency_ms: float | None
    ttfb_ms: float | None
    tools: int
    tool_calls: int
    errors: int
    warnings: int
    replay_of: int | None
    streamed: bool
    mode: str
    error: str | None  # the transport error, else the body's parse error


@dataclass(slots=True)
class SessionRow:
    id: int
    started_at: float
    upstream: str
    listen: str
    mode: str


def default_path() -> Path:
    return Path(platformdirs.user_data_dir("toolwire-inspect")) / "flows.sqlite3"


class StoreError(Exception):
    """The store file cannot be opened or has a schema this version does not know."""


def _make_private(path: Path, *, own_folder: bool) -> None:
    """Create the store file readable by its owner only, before SQLite opens it: SQLite gives the
    -wal and -shm files it creates later the main file's mode. A store left readable by an older
    version is tightened too. A new folder is private; so is the default one (ours) even if it exists."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if own_folder:
        os.chmod(path.parent, 0o700)
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    for suffix in ("", "-wal", "-shm"):
        try:
            if os.stat(f"{path}{suffix}").st_mode & 0o077:
                os.chmod(f"{path}{suffix}", 0o600)
        except FileNotFoundError:
            pass  # no -wal or -shm while nobody has the store open


# Chunk index: when the chunks are exactly the response body cut in pieces (always, as the
# forwarder records them), only (time, length) pairs are kept and the bytes come from the body.
_CHUNKS_INDEX = b"I"
_CHUNKS_DATA = b"D"


def pack_chunks(chunks: list[Chunk], body: bytes) -> bytes:
    if not chunks:
        return b""
    count = len(chunks)
    lengths = [len(c.data) for c in chunks]
    if sum(lengths) == len(body):
        return _CHUNKS_INDEX + struct.pack(f"<I{count}d{count}I", count, *(c.t for c in chunks), *lengths)
    parts = [_CHUNKS_DATA]
    for chunk in chunks:
        parts.append(struct.pack("<dI", chunk.t, len(chunk.data)))
        parts.append(chunk.data)
    return b"".join(parts)


def unpack_chunks(blob: bytes, body: bytes) -> list[Chunk]:
    if not blob:
        return []
    if blob[:1] == _CHUNKS_INDEX:
        (count,) = struct.unpack_from("<I", blob, 1)
        values = struct.unpack_from(f"<{count}d{count}I", blob, 5)
        chunks, offset = [], 0
        for t, length in zip(values[:count], values[count:]):
            chunks.append(Chunk(t, body[offset : offset + length]))
            offset += length
        return chunks
    chunks, offset = [], 1
    while offset < len(blob):
        t, length = struct.unpack_from("<dI", blob, offset)
        offset += 12
        chunks.append(Chunk(t, blob[offset : offset + length]))
        offset += length
    return chunks


def _headers_blob(headers: list[tuple[str, str]]) -> bytes:
    return orjson.dumps(headers)


def _headers_from(blob: bytes) -> list[tuple[str, str]]:
    return [(k, v) for k, v in orjson.loads(blob)]


class _Job:
    """One unit of work for the writer thread."""

    __slots__ = ("run", "done", "result", "error")

    def __init__(self, run: Callable[[sqlite3.Connection], object]) -> None:
        self.run = run
        self.done = threading.Event()
        self.result: object = None
        self.error: BaseException | None = None


@dataclass(slots=True)
class _Write:
    """A flow to write: its request row (`final` False) or the whole finished flow."""

    flow: Flow
    final: bool
    on_saved: Callable[[FlowRow], None] | None
    summary: tuple | None = None  # analysed once, kept while the write waits to be retried


@dataclass(slots=True)
class _Progress:
    """An in-flight flow whose request row is on disk: how much of its stream is on disk too."""

    flow: Flow
    # The flow's secrets, scrubbed from each chunk as it is persisted (the final write scrubs the whole body).
    scrub: Scrubber
    chunks: int = 0  # flow.chunks[:chunks] are rows of flow_chunks
    response_started: bool = False  # status and headers written onto the pending row


_TICK = object()  # the writer woke up on its own, to write stream progress or retry the backlog


def _process_started(pid: int) -> str | None:
    """When process `pid` started, as the kernel tells it (None: no such process, or no way to ask).
    With the pid it names one process for good: a reused pid has a different start time."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return fields[19].decode()  # starttime, field 22 of proc(5); [0] here is field 3
    except (OSError, IndexError):
        return None


def _process_alive(pid: int, started: str | None) -> bool:
    if started is not None and Path("/proc/self/stat").exists():
        return _process_started(pid) == started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


class Store:
    def __init__(self, path: str | Path | None = None, *, analyse_apart: int = ANALYSE_APART,
                 read_only: bool = False) -> None:
        """Open (creating or migrating) the store at `path`. `read_only`: open the file as it is and
        never write to it (no migration, no WAL switch, no ids); a file that is not a flow store is
        refused with a StoreError."""
        self.path = Path(path) if path is not None else default_path()
        self.read_only = read_only
        self.session_id: int | None = None
        self.last_error: str | None = None  # the writer's latest failure, None once writing works again
        self._read_lock = threading.Lock()
        self._closed = False
        if read_only:
            self._read = self._open_read_only()
            return
        try:
            _make_private(self.path, own_folder=path is None)
            self._read = self._connect(timeout=30)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open store {self.path}: {exc}") from exc
        self._id_lock = threading.Lock()
        self._ids: deque[int] = deque()  # reserved in the file for this store
        # Handed out while no reserved id was left (the file locked or full): the writer claims them,
        # or gives the flows new ids, before it writes them.
        self._borrowed: list[int] = []
        self._borrow_next = 1
        self._renumber: dict[int, int] = {}  # borrowed id -> the id its flow is written under
        self._refill = True  # off once close() has given the unused ids back
        try:
            self._migrate(self._read)
            self._borrow_next = self._next_free_id(self._read)
        except (sqlite3.Error, StoreError) as exc:
            self._read.close()
            if isinstance(exc, StoreError):
                raise
            raise StoreError(f"cannot open store {self.path}: {exc}") from exc
        self._queue: queue.SimpleQueue[_Job | _Write | None] = queue.SimpleQueue()
        self._pending_rows: set[int] = set()  # written as pending by this store's writer
        self._live: dict[int, _Progress] = {}  # pending rows whose stream progress the writer persists
        self._backlog: list[_Write] = []  # written in the next transaction that succeeds
        self._recovered = False  # dead processes' pending flows marked interrupted
        self._analyser = _Analyser(analyse_apart)
        self._writer = threading.Thread(target=self._write_loop, name="toolwire-store-writer", daemon=True)
        self._writer.start()
        try:
            # The first transaction reserves this store's pool of ids (and closes the flows of dead
            # processes). If the file is locked or full it fails after WRITE_TIMEOUT, reported,
            # and the store opens anyway: ids are borrowed until the writer gets through.
            self.flush()
        except StoreError:
            pass

    # -- connections -------------------------------------------------------------------------

    def _connect(self, timeout: float) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=timeout)
        conn.execute("PRAGMA journal_mode=WAL")
        # WAL + NORMAL: a committed flow survives a crash of the process (not of the OS), and
        # commits cost no fsync on the writer thread.
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def _open_read_only(self) -> sqlite3.Connection:
        if not self.path.is_file():
            raise StoreError(f"no flow store at {self.path}")
        # A WAL file opened read-only gets its -wal and -shm created (and left behind). With neither
        # there, no process has the file open, and reading it as immutable creates nothing.
        quiet = not any(Path(f"{self.path}{suffix}").exists() for suffix in ("-wal", "-shm"))
        uri = f"file:{quote(str(self.path.resolve()))}?mode=ro{'&immutable=1' if quiet else ''}"
        try:
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None, timeout=30)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store {self.path}: {exc}") from exc
        try:
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as exc:  # not SQLite at all, or unreadable
            conn.close()
            raise StoreError(f"{self.path} is not a toolwire-inspect flow store: {exc}") from exc
        if version not in READABLE_VERSIONS or not {"flows", "sessions"} <= tables:
            conn.close()
            if version > SCHEMA_VERSION:
                raise StoreError(f"{self.path} has schema version {version}; this build knows {SCHEMA_VERSION}")
            raise StoreError(f"{self.path} is not a toolwire-inspect flow store")
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version == SCHEMA_VERSION:
            return
        if version not in _MIGRATIONS:
            raise StoreError(f"{self.path} has schema version {version}; this build knows {SCHEMA_VERSION}")
        conn.execute("BEGIN IMMEDIATE")
        try:
            (version,) = conn.execute("PRAGMA user_version").fetchone()  # another process may have won
            if version in _MIGRATIONS:
                for statement in _MIGRATIONS[version].split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except sqlite3.Error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @staticmethod
    def _next_free_id(conn: sqlite3.Connection) -> int:
        found = conn.execute("SELECT value FROM meta WHERE key = 'next_flow_id'").fetchone()
        (max_id,) = conn.execute("SELECT COALESCE(MAX(id), 0) FROM flows").fetchone()
        return max(found[0] if found else 1, max_id + 1)

    # -- writing -----------------------------------------------------------------------------

    def new_session(self, upstream: str, listen: str, mode: str = "passthrough") -> int:
        pid = os.getpid()
        started = _process_started(pid)

        def run(conn: sqlite3.Connection) -> int:
            cursor = conn.execute(
                "INSERT INTO sessions (started_at, upstream, listen, mode, owner_pid, owner_started) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (time.time(), redact_url(upstream), listen, mode, pid, started),
            )
            return int(cursor.lastrowid or 0)

        try:
            self.session_id = int(self._call(run))  # type: ignore[arg-type]
        except StoreError as exc:
            raise StoreError(f"cannot start a session in {self.path}: {exc}") from exc
        return self.session_id

    def next_flow_id(self) -> int:
        """A fresh flow id, unique in this store file whichever process asks. It never waits on the
        file: ids come from a pool the writer thread keeps reserved ahead, and when a burst (or a
        locked, full file) has used the pool up, the next ids are borrowed past its end for the
        writer to claim, or replace, before it writes their flows."""
        self._refuse_if_read_only()
        with self._id_lock:
            if self._ids:
                return self._ids.popleft()
            flow_id = self._borrow_next
            self._borrow_next += 1
            self._borrowed.append(flow_id)
            return flow_id

    def submit(self, flow: Flow, on_saved: Callable[[FlowRow], None] | None = None) -> None:
        """Queue a flow for writing and return at once. A pending flow gets its request row; a
        finished one is analysed and written whole. `on_saved(row)` runs on the writer thread
        once the row is committed; it must be quick and must not call flush() or save()."""
        self._refuse_if_read_only()
        if self._closed:
            return
        # What to write is decided now: the forwarder goes on filling in the flow after a pending submit.
        self._queue.put(_Write(flow, flow.state is not FlowState.PENDING, on_saved))

    def save(self, flow: Flow) -> None:
        """Write a flow (analysing it when finished) and wait until it is committed."""
        self.submit(flow)
        self.flush()

    def flush(self) -> None:
        """Block until everything submitted so far is committed (a StoreError if it cannot be)."""
        self._call(lambda conn: None)

    def _refuse_if_read_only(self) -> None:
        if self.read_only:
            raise StoreError(f"store {self.path} is open read-only")

    def _call(self, run: Callable[[sqlite3.Connection], object]) -> object:
        self._refuse_if_read_only()
        if self._closed:
            raise StoreError("store is closed")
        job = _Job(run)
        self._queue.put(job)
        job.done.wait()
        if job.error is not None:
            raise StoreError(str(job.error)) from job.error
        return job.result

    def _warn(self, problem: str) -> None:
        # Once per kind of failure, not once per retry: a full disk must not flood the terminal.
        if problem != self.last_error:
            print(f"toolwire-inspect: store: {problem}", file=sys.stderr)
        self.last_error = problem

    def _write_loop(self) -> None:
        try:
            conn = self._connect(timeout=WRITE_TIMEOUT)
        except sqlite3.Error as exc:  # the read connection opened a moment ago: only a vanished file
            self._warn(f"cannot open a writer: {exc}; nothing more will be recorded")
            self._fail_forever(exc)
            return
        next_progress = time.monotonic() + PROGRESS_INTERVAL
        next_retry = 0.0
        try:
            while True:
                now = time.monotonic()
                due = [next_progress] if self._live else []
                if self._backlog or not self._recovered:
                    due.append(next_retry)
                try:
                    item = self._queue.get(timeout=max(0.0, min(due) - now)) if due else self._queue.get()
                except queue.Empty:
                    if self._recovered and not self._backlog and not self._progress_due():
                        next_progress = time.monotonic() + PROGRESS_INTERVAL
                        continue
                    item = _TICK
                if isinstance(item, _Write):
                    # Let a burst of flows gather: one wake-up and one transaction for many,
                    # instead of a wake-up per flow competing with the forwarder for the GIL.
                    time.sleep(BATCH_WINDOW)
                batch = [item]
                while True:
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                progress = time.monotonic() >= next_progress
                if progress:
                    next_progress = time.monotonic() + PROGRESS_INTERVAL
                if not self._write_batch(conn, batch, progress):
                    next_retry = time.monotonic() + RETRY_INTERVAL
                if None in batch:
                    self._give_up_backlog()
                    return
        finally:
            conn.close()
            self._analyser.close()

    def _progress_due(self) -> bool:
        return any(len(state.flow.chunks) != state.chunks for state in self._live.values())

    def _fail_forever(self, exc: Exception) -> None:
        """No writer: answer every job with the error until close() stops the thread."""
        while True:
            item = self._queue.get()
            if item is None:
                return
            if isinstance(item, _Job):
                item.error = exc
                item.done.set()

    def _give_up_backlog(self) -> None:
        if self._backlog:
            lost = ", ".join(f"#{write.flow.id}" for write in self._backlog if write.final)
            print(f"toolwire-inspect: store: closed with {len(self._backlog)} writes never stored "
                  f"(finished flows {lost or 'none'}): {self.last_error}", file=sys.stderr)
            self._backlog.clear()

    def _write_batch(self, conn: sqlite3.Connection, batch: list, progress: bool) -> bool:
        """Write the backlog and a batch in one transaction; False when the store could not be
        written (the flows wait in the backlog for the next attempt)."""
        jobs = [item for item in batch if isinstance(item, _Job)]
        writes = self._backlog + [item for item in batch if isinstance(item, _Write)]
        self._backlog = []
        # Analyse before the transaction: a write lock held through a long check would stall
        # every other process on this store (and this one's id reservations).
        for write in writes:
            if write.final and write.summary is None:
                write.summary = self._analyser.summary(write.flow)
        saved: list[tuple[Callable[[FlowRow], None], FlowRow]] = []
        written: list[_Write] = []
        moved: list[tuple[Flow, int]] = []
        claim = progressed = None
        try:
            # IMMEDIATE: the transaction reads (ids, pending flows) before it writes, and a deferred one
            # would fail at once, without waiting, when another process wrote in between.
            conn.execute("BEGIN IMMEDIATE")
            if not self._recovered:
                self._mark_interrupted(conn)
            claim = self._claim_ids(conn)
            moved = self._renumber_flows(writes, claim)
            # A flow that finished while its pending row was still queued gets only its final row.
            finished = {write.flow.id for write in writes if write.final}
            for write in writes:
                if not write.final and write.flow.id in finished:
                    continue
                try:
                    # Secrets go here, on the writer thread, into a copy: the flow itself may be live still
                    # (its stream progress is read below) and keeps its id for a renumbering.
                    clean = redacted(write.flow, request_only=not write.final)
                    row = self._write_flow(conn, clean, write.summary if write.final else None)
                except sqlite3.OperationalError:
                    raise  # the file, not the flow: the whole transaction is retried
                except Exception as exc:  # a flow that cannot be written must not stop the writer
                    self._warn(f"flow #{write.flow.id}: {exc}")
                    continue
                written.append(write)
                if write.on_saved is not None:
                    saved.append((write.on_saved, row))
            if progress:
                progressed = self._write_progress(conn, finished)
            for job in jobs:
                try:
                    job.result = job.run(conn)
                except sqlite3.OperationalError:
                    raise
                except Exception as exc:  # reported to the caller waiting on the job
                    job.error = exc
            conn.execute("COMMIT")
        except sqlite3.Error as exc:  # locked, full, read-only, I/O: keep everything for the next try
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            for flow, old in moved:
                flow.id = old
                flow.notes.pop()
            self._warn(f"cannot write ({exc}); flows are kept in memory and retried")
            self._keep(writes)
            for job in jobs:
                job.error = job.error or exc
                job.done.set()
            return False
        self._after_commit(claim, moved, written, progressed or [])
        if self.last_error is not None and self.last_error.startswith("cannot write"):
            print("toolwire-inspect: store: writing again; the flows kept in memory are stored", file=sys.stderr)
            self.last_error = None
        for on_saved, row in saved:
            try:
                on_saved(row)
            except Exception as exc:  # a listener's bug must not stop the writer
                print(f"toolwire-inspect: store listener failed: {exc!r}", file=sys.stderr)
        # Last, so that flush() also waits for the listeners of what it flushed.
        for job in jobs:
            job.done.set()
        return True

    def _keep(self, writes: list[_Write]) -> None:
        """Keep failed writes for the next attempt, within BACKLOG_FLOWS and BACKLOG_BYTES."""
        self._backlog = writes
        size = sum(_size(write.flow) for write in writes)
        dropped = []
        while self._backlog and (len(self._backlog) > BACKLOG_FLOWS or size > BACKLOG_BYTES):
            write = self._backlog.pop(0)
            size -= _size(write.flow)
            dropped.append(write.flow.id)
        if dropped:
            print(f"toolwire-inspect: store: BACKLOG FULL, dropped {len(dropped)} unwritten flow writes "
                  f"(#{dropped[0]}..#{dropped[-1]}): the store has not been writable for a while",
                  file=sys.stderr)

    def _claim_ids(self, conn: sqlite3.Connection) -> tuple[dict[int, int], range] | None:
        """Inside the write transaction: make the borrowed ids ours, or choose new ids for their
        flows when another process took them meanwhile, and top the pool of reserved ids up.
        The ids become usable in `_after_commit`."""
        with self._id_lock:
            if not self._borrowed and not (self._refill and len(self._ids) < ID_POOL):
                return None
        start = self._next_free_id(conn)
        with self._id_lock:
            borrowed = list(self._borrowed)
            if borrowed == list(range(start, start + len(borrowed))):
                targets, first = borrowed, start + len(borrowed)
            else:
                # New ids above any id this store ever handed out, so that an id given to a moved
                # flow is never one a flow still holds.
                first = max(start, self._borrow_next)
                targets = list(range(first, first + len(borrowed)))
                first += len(borrowed)
            reserved = range(first, first + (ID_POOL - len(self._ids) if self._refill else 0))
            self._borrow_next = max(self._borrow_next, reserved.stop)
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('next_flow_id', ?)", (reserved.stop,))
        return dict(zip(borrowed, targets)), reserved

    def _renumber_flows(self, writes: list[_Write], claim: tuple[dict[int, int], range] | None) -> list[tuple[Flow, int]]:
        """Give the flows whose borrowed id went to another process their new id (until the
        transaction commits: on failure they get their old one back). Returns (flow, old id)."""
        renumber = dict(self._renumber)  # popped per flow here: a flow's second write has its new id
        if claim is not None:
            renumber.update((old, new) for old, new in claim[0].items() if old != new)
        moved = []
        for write in writes:
            new = renumber.pop(write.flow.id, None)
            if new is not None:
                moved.append((write.flow, write.flow.id))
                write.flow.id = new
                write.flow.notes.append(f"renumbered from #{moved[-1][1]}: another process took that id "
                                        "while this one could not reach the store")
        return moved

    def _after_commit(self, claim: tuple[dict[int, int], range] | None, moved: list[tuple[Flow, int]],
                      written: list[_Write], progressed: list[tuple[_Progress, int]]) -> None:
        if claim is not None:
            ids, reserved = claim
            with self._id_lock:
                del self._borrowed[: len(ids)]
                self._ids.extend(reserved)
            self._renumber.update((old, new) for old, new in ids.items() if old != new)
        for _, old in moved:
            self._renumber.pop(old, None)
        for write in written:
            flow_id = write.flow.id
            if write.final:
                self._pending_rows.discard(flow_id)
                self._live.pop(flow_id, None)
            else:
                self._pending_rows.add(flow_id)
                self._live[flow_id] = _Progress(write.flow, scrubber(write.flow))
        for state, count in progressed:
            state.chunks = count
            state.response_started = True
        self._recovered = True

    def _write_progress(self, conn: sqlite3.Connection, finished: set[int]) -> list[tuple[_Progress, int]]:
        """Append the chunks relayed since the last time to `flow_chunks`: each chunk is written
        once, so a long stream costs what it relays, not its length at every tick."""
        progressed = []
        for flow_id, state in self._live.items():
            flow = state.flow
            chunks = flow.chunks
            count = len(chunks)  # the forwarder only appends: the first `count` are settled
            if count == state.chunks or flow_id in finished:
                continue
            if not state.response_started:
                # Set by the forwarder before its first chunk is relayed.
                conn.execute("UPDATE flows SET status = ?, response_headers = ?, streamed = ?, ttfb_ms = ? "
                             "WHERE id = ?", (flow.status, _headers_blob(state.scrub.headers(flow.response_headers)),
                                              int(flow.streamed), flow.ttfb_ms, flow_id))
            conn.executemany("INSERT OR REPLACE INTO flow_chunks (flow_id, seq, t, data) VALUES (?, ?, ?, ?)",
                             [(flow_id, seq, chunk.t, state.scrub.fragment(chunk.data))
                              for seq, chunk in enumerate(chunks[state.chunks : count], state.chunks)])
            progressed.append((state, count))
        return progressed

    def _mark_interrupted(self, conn: sqlite3.Connection) -> None:
        """Finish the pending flows of processes that died mid-flow: state `error`, error text
        `interrupted: ...`, with the chunks they had relayed, analysed like any finished flow.
        Flows of a live process (another recorder on this file) are left alone: they are going on."""
        for session_id, pid, started in conn.execute(
                "SELECT DISTINCT flows.session_id, owner_pid, owner_started FROM flows "
                "LEFT JOIN sessions ON sessions.id = flows.session_id WHERE state = 'pending'").fetchall():
            if pid is not None and _process_alive(pid, started):
                continue
            who = f"the recording process (pid {pid})" if pid is not None else "the recording process"
            for (flow_id,) in conn.execute("SELECT id FROM flows WHERE session_id = ? AND state = 'pending'",
                                           (session_id,)).fetchall():
                flow = _load(conn, flow_id)
                assert flow is not None  # just listed, in this transaction
                flow.chunks = [Chunk(t, bytes(data)) for t, data in conn.execute(
                    "SELECT t, data FROM flow_chunks WHERE flow_id = ? ORDER BY seq", (flow_id,))]
                flow.response_body = b"".join(chunk.data for chunk in flow.chunks)
                flow.state = FlowState.ERROR
                flow.error = (f"interrupted: {who} ended before the response did; "
                              f"{len(flow.response_body)} bytes relayed by then are kept")
                # Analysed inside the transaction, unlike other flows: this happens once, at open.
                self._write_flow(conn, flow, self._analyser.summary(flow))

    def _write_flow(self, conn: sqlite3.Connection, flow: Flow, summary: tuple | None) -> FlowRow:
        """Write a pending flow (no summary) or a finished one with its analysis summary."""
        if summary is None:
            # Only the request side: it is complete on arrival, the rest is still being filled in.
            conn.execute(
                f"INSERT OR REPLACE INTO flows ({_FLOW_COLUMNS}) VALUES ({', '.join('?' * 25)})",
                (*self._request_values(flow), None, b"[]", None, b"", 0, b"", None, None,
                 FlowState.PENDING.value, None, flow.replay_of, orjson.dumps(flow.notes)),
            )
            return self._row(flow, FlowState.PENDING.value, None, None, ("", "", 0, 0, 0, 0, None))
        response = (
            flow.status, _headers_blob(flow.response_headers), flow.upstream_response_body, flow.response_body,
            int(flow.streamed), pack_chunks(flow.chunks, flow.response_body), flow.ttfb_ms, flow.latency_ms,
            flow.state.value, flow.error, flow.replay_of, orjson.dumps(flow.notes),
        )
        # The chunks relayed so far are in the flow now.
        conn.execute("DELETE FROM flow_chunks WHERE flow_id = ?", (flow.id,))
        # The request columns (a 1 MB body, say) of a pending row are already on disk: write only the rest.
        if flow.id not in self._pending_rows or conn.execute(
                f"UPDATE flows SET {_COMPLETION_SET} WHERE id = ?", (*response, *summary, flow.id)).rowcount == 0:
            conn.execute(
                f"INSERT OR REPLACE INTO flows ({_FLOW_COLUMNS}, {_SUMMARY_COLUMNS}) VALUES ({', '.join('?' * 32)})",
                (*self._request_values(flow), *response, *summary),
            )
        return self._row(flow, flow.state.value, flow.error, flow.status, summary)

    @staticmethod
    def _request_values(flow: Flow) -> tuple:
        return (
            flow.id, flow.session_id, flow.started_at, flow.method, flow.path, flow.query,
            _headers_blob(flow.request_headers), flow.request_body, _mode(flow.mode), flow.translate,
            flow.upstream_url, _headers_blob(flow.upstream_request_headers),
            flow.upstream_request_body,
        )

    @staticmethod
    def _row(flow: Flow, state: str, error: str | None, status: int | None, summary: tuple) -> FlowRow:
        dialect, model, tools, tool_calls, errors, warnings, parse_error = summary
        pending = state == FlowState.PENDING.value
        return FlowRow(
            flow.id, flow.session_id, flow.started_at, flow.method, flow.path, dialect, model, status, state,
            None if pending else flow.latency_ms, None if pending else flow.ttfb_ms, tools, tool_calls, errors,
            warnings, flow.replay_of, flow.streamed and not pending, _mode(flow.mode), error or parse_error,
        )

    def _give_back_ids(self, conn: sqlite3.Connection) -> None:
        """Return the unused ids at the end of the reserved range, unless another process reserved
        after them, so that the next flow, whoever records it, goes on from the last one."""
        with self._id_lock:
            if not self._ids:
                return
            end = first_unused = self._ids[-1] + 1
            for flow_id in reversed(self._ids):  # the pool may span several top-ups: only the last run
                if flow_id != first_unused - 1:
                    break
                first_unused = flow_id
            self._ids.clear()
        conn.execute("UPDATE meta SET value = ? WHERE key = 'next_flow_id' AND value = ?", (first_unused, end))

    # -- reading -----------------------------------------------------------------------------

    def get(self, flow_id: int) -> Flow | None:
        with self._read_lock:
            return _load(self._read, flow_id)

    def rows(self, *, text: str = "", limit: int | None = None, offset: int = 0) -> list[FlowRow]:
        """Flow rows, oldest first (newest last), optionally filtered by text."""
        where, params = _text_where(text)
        sql = f"SELECT {_ROW_COLUMNS} FROM flows{where} ORDER BY id LIMIT ? OFFSET ?"
        with self._read_lock:
            found = self._read.execute(sql, (*params, -1 if limit is None else limit, offset)).fetchall()
        return [
            FlowRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13],
                    r[14], r[15], bool(r[16]), r[17], r[18])
            for r in found
        ]

    def flow_ids(self, session_id: int, *, dialect: str) -> list[int]:
        """Ids of one session's flows of one dialect, oldest first (what session rules read)."""
        with self._read_lock:
            found = self._read.execute("SELECT id FROM flows WHERE session_id = ? AND dialect = ? ORDER BY id",
                                       (session_id, dialect)).fetchall()
        return [r[0] for r in found]

    def count(self, *, text: str = "") -> int:
        where, params = _text_where(text)
        with self._read_lock:
            (n,) = self._read.execute(f"SELECT COUNT(*) FROM flows{where}", params).fetchone()
        return int(n)

    def sessions(self) -> list[SessionRow]:
        with self._read_lock:
            found = self._read.execute(
                "SELECT id, started_at, upstream, listen, mode FROM sessions ORDER BY id"
            ).fetchall()
        return [SessionRow(*r) for r in found]

    def session(self, session_id: int) -> SessionRow | None:
        with self._read_lock:
            r = self._read.execute(
                "SELECT id, started_at, upstream, listen, mode FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        return None if r is None else SessionRow(*r)

    def close(self) -> None:
        if self._closed:
            return
        if not self.read_only:
            with self._id_lock:
                self._refill = False  # no top-up now: it would only be given back
            try:
                self._call(self._give_back_ids)
            except StoreError:
                pass  # reported by the writer; the last attempt below reports what is lost
            self._closed = True
            self._queue.put(None)
            self._writer.join()
        self._closed = True
        with self._read_lock:
            self._read.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _size(flow: Flow) -> int:
    return len(flow.request_body) + len(flow.response_body) + len(flow.upstream_request_body or b"")


def _load(conn: sqlite3.Connection, flow_id: int) -> Flow | None:
    row = conn.execute(f"SELECT {_FLOW_COLUMNS} FROM flows WHERE id = ?", (flow_id,)).fetchone()
    if row is None:
        return None
    (fid, session_id, started_at, method, path, query, req_headers, req_body, mode, translate,
     upstream_url, up_headers, up_body, status, resp_headers, up_resp_body, resp_body, streamed,
     chunks, ttfb_ms, latency_ms, state, error, replay_of, notes) = row
    return Flow(
        id=fid, session_id=session_id, started_at=started_at, method=method, path=path, query=query,
        request_headers=_headers_from(req_headers), request_body=bytes(req_body), mode=Mode(mode),
        upstream_url=upstream_url, upstream_request_body=None if up_body is None else bytes(up_body),
        upstream_request_headers=_headers_from(up_headers), status=status,
        response_headers=_headers_from(resp_headers),
        upstream_response_body=None if up_resp_body is None else bytes(up_resp_body),
        response_body=bytes(resp_body), streamed=bool(streamed),
        chunks=unpack_chunks(bytes(chunks), bytes(resp_body)), ttfb_ms=ttfb_ms, latency_ms=latency_ms,
        state=FlowState(state), error=error, replay_of=replay_of, translate=translate,
        notes=list(orjson.loads(notes)),
    )


def _mode(mode: Mode | str) -> str:
    return mode.value if isinstance(mode, Mode) else str(mode)


def _text_where(text: str) -> tuple[str, tuple[str, ...]]:
    if not text:
        return "", ()
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f" WHERE {_TEXT_FILTER}", (f"%{escaped}%",)


class _Analyser:
    """The writer thread's access to `analyse()`: in the thread for ordinary flows, in one helper
    process (`python -m inspector.store`, started on first need) for big ones, and in the thread
    again if that process fails. The helper reads flows on stdin, so it ends with its parent."""

    def __init__(self, threshold: int = ANALYSE_APART) -> None:
        self.threshold = threshold
        self._helper: subprocess.Popen | None = None
        self._broken = False

    def summary(self, flow: Flow) -> tuple[str, str, int, int, int, int, str | None]:
        if _size(flow) < self.threshold or self._broken:
            return _summary(flow)
        try:
            if self._helper is None:
                # -P: import this very package, never a same-named one in the working directory.
                # stderr to nowhere: under the TUI the terminal is the screen; a failure shows
                # here as EOF, and the parent reports it.
                self._helper = subprocess.Popen(
                    [sys.executable, "-P", "-m", "inspector.store"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
            _send(self._helper.stdin, flow)
            return _receive(self._helper.stdout)
        except (OSError, EOFError, pickle.PickleError, struct.error) as exc:
            print(f"toolwire-inspect: analysis helper failed ({exc!r}); analysing in-process", file=sys.stderr)
            self._broken = True
            self.close()
            return _summary(flow)

    def close(self) -> None:
        if self._helper is not None:
            helper, self._helper = self._helper, None
            try:
                helper.stdin.close()
            except OSError:
                pass  # it is gone already
            helper.wait()


def _send(stream, value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream) -> object:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("analysis helper closed its output")
    (size,) = struct.unpack("<Q", head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("analysis helper closed its output")
    return pickle.loads(data)


def _serve_analysis() -> None:
    """The helper process: one summary for each flow read from stdin, until stdin closes."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    # Checking may wait; forwarding may not: on a busy machine the scheduler serves this last.
    os.nice(10)
    while True:
        try:
            flow = _receive(stdin)
        except EOFError:
            return
        _send(stdout, _summary(flow))


def _summary(flow: Flow) -> tuple[str, str, int, int, int, int, str | None]:
    from .analysis import analyse  # the checker is heavy; only the writer thread needs it

    try:
        analysis = analyse(flow)
    except Exception as exc:  # analysis is total by contract; a bug there must not lose the flow
        return "", "", 0, 0, 0, 0, f"analysis failed: {exc!r}"
    dialect = analysis.dialect.value if analysis.dialect is not None else ""
    return (dialect, analysis.model, analysis.tools, analysis.tool_calls, analysis.errors, analysis.warnings,
            analysis.parse_error)


if __name__ == "__main__":
    _serve_analysis()
