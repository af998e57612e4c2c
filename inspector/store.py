"""The flow store: one SQLite file (WAL), written by a single thread, read from any.

The forwarder hands flows to `submit()` and goes on forwarding; the writer thread analyses the
completed ones (contract checks included) and writes them, so neither SQLite nor the checker ever
sits on the forwarding path. A flow row is written when the request arrives (state `pending`) and
rewritten when the response ends, so a crash loses no finished flow."""

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

import orjson
import platformdirs

from .flow import Chunk, Flow, FlowState, Mode
from .redact import redact_url, redacted

SCHEMA_VERSION = 2

# Above this many body bytes, a flow is analysed in a helper process: checking a multi-megabyte
# conversation holds the GIL for milliseconds, and the forwarder thread needs the GIL to relay.
ANALYSE_APART = 256 * 1024
BATCH_WINDOW = 0.005  # seconds the writer waits after a flow arrives, to write a burst at once

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
# Version 2: flow ids are handed out in blocks through `meta`, so that several processes on one
# store (the TUI, `record`, `replay`) never give two flows the same id.
_SCHEMA_2 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""
_MIGRATIONS = {0: _SCHEMA + _SCHEMA_2, 1: _SCHEMA_2}
ID_BLOCK = 1024  # ids reserved at a time
ID_LOW_WATER = 512  # the writer reserves the next block when fewer are left

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


class Store:
    def __init__(self, path: str | Path | None = None, *, analyse_apart: int = ANALYSE_APART) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.session_id: int | None = None
        self.last_error: str | None = None  # the writer's latest failure, if any
        try:
            _make_private(self.path, own_folder=path is None)
            self._read = self._connect()
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open store {self.path}: {exc}") from exc
        self._read_lock = threading.Lock()
        self._id_lock = threading.Lock()
        try:
            self._migrate(self._read)
            self._ids: deque[int] = deque(self._reserve_now())
            self._refill = True  # off once close() has given the unused ids back
        except (sqlite3.Error, StoreError) as exc:
            self._read.close()
            if isinstance(exc, StoreError):
                raise
            raise StoreError(f"cannot open store {self.path}: {exc}") from exc
        self._queue: queue.SimpleQueue[_Job | tuple[Flow, bool, Callable[[FlowRow], None] | None] | None] = (
            queue.SimpleQueue()
        )
        self._closed = False
        self._pending_rows: set[int] = set()  # written as pending by this store's writer
        self._analyser = _Analyser(analyse_apart)
        self._writer = threading.Thread(target=self._write_loop, name="toolwire-store-writer", daemon=True)
        self._writer.start()

    # -- connections -------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        # WAL + NORMAL: a committed flow survives a crash of the process (not of the OS), and
        # commits cost no fsync on the writer thread.
        conn.execute("PRAGMA synchronous=NORMAL")
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
    def _reserve_ids(conn: sqlite3.Connection, count: int) -> range:
        """Take `count` fresh flow ids; call inside a write transaction."""
        found = conn.execute("SELECT value FROM meta WHERE key = 'next_flow_id'").fetchone()
        (max_id,) = conn.execute("SELECT COALESCE(MAX(id), 0) FROM flows").fetchone()
        start = max(found[0] if found else 1, max_id + 1)
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('next_flow_id', ?)", (start + count,))
        return range(start, start + count)

    def _reserve_now(self) -> range:
        with self._read_lock:
            self._read.execute("BEGIN IMMEDIATE")
            try:
                ids = self._reserve_ids(self._read, ID_BLOCK)
                self._read.execute("COMMIT")
            except sqlite3.Error:
                self._read.execute("ROLLBACK")
                raise
        return ids

    # -- writing -----------------------------------------------------------------------------

    def new_session(self, upstream: str, listen: str, mode: str = "passthrough") -> int:
        def run(conn: sqlite3.Connection) -> int:
            cursor = conn.execute(
                "INSERT INTO sessions (started_at, upstream, listen, mode) VALUES (?, ?, ?, ?)",
                (time.time(), redact_url(upstream), listen, mode),
            )
            return int(cursor.lastrowid or 0)

        self.session_id = int(self._call(run))  # type: ignore[arg-type]
        return self.session_id

    def next_flow_id(self) -> int:
        """A fresh flow id, unique in this store file whichever process asks. Ids come from a
        block reserved ahead by the writer thread, so this costs no I/O in the forwarder."""
        with self._id_lock:
            if not self._ids:  # a burst outran the writer's refill
                self._ids.extend(self._reserve_now())
            return self._ids.popleft()

    def submit(self, flow: Flow, on_saved: Callable[[FlowRow], None] | None = None) -> None:
        """Queue a flow for writing and return at once. A pending flow gets its request row; a
        finished one is analysed and written whole. `on_saved(row)` runs on the writer thread
        once the row is committed; it must be quick and must not call flush() or save()."""
        if self._closed:
            return
        # What to write is decided now: the forwarder goes on filling in the flow after a pending submit.
        self._queue.put((flow, flow.state is not FlowState.PENDING, on_saved))

    def save(self, flow: Flow) -> None:
        """Write a flow (analysing it when finished) and wait until it is committed."""
        self.submit(flow)
        self.flush()

    def flush(self) -> None:
        """Block until everything submitted so far is committed."""
        self._call(lambda conn: None)

    def _call(self, run: Callable[[sqlite3.Connection], object]) -> object:
        if self._closed:
            raise StoreError("store is closed")
        job = _Job(run)
        self._queue.put(job)
        job.done.wait()
        if job.error is not None:
            raise StoreError(str(job.error)) from job.error
        return job.result

    def _write_loop(self) -> None:
        conn = self._connect()
        try:
            while True:
                item = self._queue.get()
                if isinstance(item, tuple):
                    # Let a burst of flows gather: one wake-up and one transaction for many,
                    # instead of a wake-up per flow competing with the forwarder for the GIL.
                    time.sleep(BATCH_WINDOW)
                batch = [item]
                while True:
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                try:
                    stop = self._write_batch(conn, batch)
                except Exception as exc:  # e.g. the file is locked or gone: report, keep serving
                    stop = self._fail_batch(conn, batch, exc)
                if stop:
                    return
        finally:
            conn.close()
            self._analyser.close()

    def _fail_batch(self, conn: sqlite3.Connection, batch: list, exc: Exception) -> bool:
        self.last_error = f"write failed: {exc}"
        print(f"toolwire-inspect: store: {self.last_error}", file=sys.stderr)
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        for item in batch:
            if isinstance(item, _Job) and not item.done.is_set():
                item.error = item.error or exc
                item.done.set()
        return any(item is None for item in batch)

    def _write_batch(self, conn: sqlite3.Connection, batch: list) -> bool:
        """Write a batch in one transaction; True when the batch asked the writer to stop."""
        saved: list[tuple[Callable[[FlowRow], None], FlowRow]] = []
        jobs: list[_Job] = []
        stop = False
        # Secrets go here, on the writer thread: nothing below (analysis included) sees one.
        batch = [(redacted(item[0], request_only=not item[1]), *item[1:]) if isinstance(item, tuple) else item
                 for item in batch]
        # A flow that finished while its pending row was still queued gets only its final row.
        finished = {item[0].id for item in batch if isinstance(item, tuple) and item[1]}
        # Analyse before the transaction: a write lock held through a long check would stall
        # every other process on this store (and this one's id reservations).
        summaries = {id(item): self._analyser.summary(item[0]) for item in batch if isinstance(item, tuple) and item[1]}
        conn.execute("BEGIN")
        for item in batch:
            if item is None:
                stop = True
                continue
            if isinstance(item, _Job):
                try:
                    item.result = item.run(conn)
                except Exception as exc:  # reported to the caller waiting on the job
                    item.error = exc
                jobs.append(item)
                continue
            flow, final, on_saved = item
            if not final and flow.id in finished:
                continue
            try:
                row = self._write_flow(conn, flow, summaries.get(id(item)))
            except Exception as exc:  # a flow that cannot be written must not stop the writer
                self.last_error = f"flow #{flow.id}: {exc}"
                print(f"toolwire-inspect: store: {self.last_error}", file=sys.stderr)
                continue
            if on_saved is not None:
                saved.append((on_saved, row))
        refill = None
        if self._refill and len(self._ids) < ID_LOW_WATER:
            try:
                refill = self._reserve_ids(conn, ID_BLOCK)
            except sqlite3.Error as exc:
                self.last_error = f"cannot reserve flow ids: {exc}"
        try:
            conn.execute("COMMIT")
            if refill is not None:
                with self._id_lock:
                    self._ids.extend(refill)
        except sqlite3.Error as exc:
            self.last_error = f"commit failed: {exc}"
            print(f"toolwire-inspect: store: {self.last_error}", file=sys.stderr)
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        for on_saved, row in saved:
            try:
                on_saved(row)
            except Exception as exc:  # a listener's bug must not stop the writer
                print(f"toolwire-inspect: store listener failed: {exc!r}", file=sys.stderr)
        # Last, so that flush() also waits for the listeners of what it flushed.
        for job in jobs:
            job.done.set()
        return stop

    def _write_flow(self, conn: sqlite3.Connection, flow: Flow, summary: tuple | None) -> FlowRow:
        """Write a pending flow (no summary) or a finished one with its analysis summary."""
        if summary is None:
            # Only the request side: it is complete on arrival, the rest is still being filled in.
            conn.execute(
                f"INSERT OR REPLACE INTO flows ({_FLOW_COLUMNS}) VALUES ({', '.join('?' * 25)})",
                (*self._request_values(flow), None, b"[]", None, b"", 0, b"", None, None,
                 FlowState.PENDING.value, None, flow.replay_of, orjson.dumps(flow.notes)),
            )
            self._pending_rows.add(flow.id)
            return self._row(flow, FlowState.PENDING.value, None, None, ("", "", 0, 0, 0, 0, None))
        response = (
            flow.status, _headers_blob(flow.response_headers), flow.upstream_response_body, flow.response_body,
            int(flow.streamed), pack_chunks(flow.chunks, flow.response_body), flow.ttfb_ms, flow.latency_ms,
            flow.state.value, flow.error, flow.replay_of, orjson.dumps(flow.notes),
        )
        if flow.id in self._pending_rows:
            # The request columns (a 1 MB body, say) are already on disk: write only the rest.
            self._pending_rows.discard(flow.id)
            conn.execute(f"UPDATE flows SET {_COMPLETION_SET} WHERE id = ?", (*response, *summary, flow.id))
        else:
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
        """Return the unused tail of our last block, unless another process reserved after it,
        so that the next launch goes on from the last flow instead of skipping a block."""
        with self._id_lock:
            self._refill = False
            if not self._ids:
                return
            first_unused, end = self._ids[0], self._ids[-1] + 1
            self._ids.clear()
        conn.execute("UPDATE meta SET value = ? WHERE key = 'next_flow_id' AND value = ?", (first_unused, end))

    # -- reading -----------------------------------------------------------------------------

    def get(self, flow_id: int) -> Flow | None:
        with self._read_lock:
            row = self._read.execute(f"SELECT {_FLOW_COLUMNS} FROM flows WHERE id = ?", (flow_id,)).fetchone()
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
        self._call(self._give_back_ids)
        self.flush()
        self._closed = True
        self._queue.put(None)
        self._writer.join()
        with self._read_lock:
            self._read.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
        size = len(flow.request_body) + len(flow.response_body) + len(flow.upstream_request_body or b"")
        if size < self.threshold or self._broken:
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
