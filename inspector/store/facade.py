"""`Store`: the one object callers hold. It opens the file (see schema), reads it on any thread,
and hands everything that writes to its writer thread (see writer)."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .. import filters
from .. import store as tuning  # the package: its tunables are read when used, so setting one there holds
from ..flow import Chunk, Flow, FlowState, frames
from ..redact import redact_text, redact_url
from . import rows, schema
from .rows import FlowRow, SessionRow
from .deletion import Deletion
from .schema import StoreError, process_started

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..wire.frames import Frame
    from ..wire.violations import Violation
    from .writer import Writer
    from .writer_process import WriterProcess

# How the list can be sorted; each order ends on id, so that equal rows keep their time order.
# The end of the list holds the newest and the slowest (where the cursor follows); "issues" starts
# with the worst: the most errors, then the most warnings (negated, not DESC: index_of compares the
# keys as one ascending row value). A flow still pending (no latency yet) sorts as the quickest;
# "route" groups a routed session's flows by the route they came through (the unnamed route first).
ORDERS = {
    "time": ("id",),
    "latency": ("COALESCE(latency_ms, -1)", "id"),
    "issues": ("-errors", "-warnings", "id"),
    "route": ("route", "id"),
}
_SESSIONS = f"SELECT {', '.join(rows.SESSION_COLUMNS)} FROM sessions"


class Store:
    def __init__(self, path: str | Path | None = None, *, analyse_apart: int | None = None,
                 read_only: bool = False, live: bool = False, writer_process: bool = False) -> None:
        """Open (creating or migrating) the store at `path`. `analyse_apart`: body bytes from which a
        flow is analysed in the worker process (default ANALYSE_APART). `read_only`: open the file as
        it is and never write to it (no migration, no WAL switch, no ids); a file that is not a flow
        store is refused with a StoreError. `live` (read-only): a writer opens it next and this one
        follows what it writes (schema.open_read_only). `writer_process`: the writer runs in a
        process of its own (writer_process), not in a thread of this one: what a forwarder uses."""
        self.path = Path(path) if path is not None else schema.default_path()
        self.read_only = read_only
        self.session_id: int | None = None
        self._read_lock = threading.Lock()
        self._schema_4: bool | None = None  # whether the flows table has schema 4's columns
        self._columns: set[str] = set()  # the flows table's columns, once _where has read them
        self._session_columns_: set[str] | None = None  # the sessions table's, once read
        self._closed = False
        self._writer: Writer | WriterProcess | None = None
        if read_only:
            self._read = schema.open_read_only(self.path, live=live)
            return
        try:
            schema.make_private(self.path, own_folder=path is None)
            self._read = schema.connect(self.path, timeout=30)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open store {self.path}: {exc}") from exc
        try:
            schema.migrate(self._read, self.path)
            first_free_id = schema.next_free_id(self._read, reclaim=True)
        except (sqlite3.Error, StoreError) as exc:
            self._read.close()
            if isinstance(exc, StoreError):
                raise
            raise StoreError(f"cannot open store {self.path}: {exc}") from exc
        # Imported by a writable store only: the writer's analysis (the checker, the socket readers)
        # would double the imports of a process that only reads (the TUI's, before its first frame).
        apart = tuning.ANALYSE_APART if analyse_apart is None else analyse_apart
        if writer_process:
            from .writer_process import WriterProcess

            self._writer = WriterProcess(self.path, analyse_apart=apart)
        else:
            from .writer import Writer

            self._writer = Writer(self.path, first_free_id=first_free_id, analyse_apart=apart)
            self._writer.backfill()
        try:
            # The first transaction reserves this store's pool of ids (and closes the flows of dead
            # processes). If the file is locked or full it fails after WRITE_TIMEOUT, reported,
            # and the store opens anyway: ids are borrowed until the writer gets through.
            self.flush()
        except StoreError:
            pass

    @property
    def writer_pid(self) -> int | None:
        """The pid of the writer process (Store(writer_process=True)) while it runs, else None."""
        return None if self._writer is None else self._writer.pid

    @property
    def last_error(self) -> str | None:
        """The writer's latest failure, None once writing works again (and on a read-only store)."""
        return None if self._writer is None else self._writer.last_error

    # -- writing -----------------------------------------------------------------------------

    def new_session(self, upstream: str, listen: str, mode: str = "passthrough") -> int:
        pid = os.getpid()  # the owner: while it runs, its pending flows are going on
        try:
            found = self._job("new_session", time.time(), redact_text(redact_url(upstream), url=True),
                              listen, mode, pid, process_started(pid))
            assert isinstance(found, int)
            self.session_id = found
        except StoreError as exc:
            raise StoreError(f"cannot start a session in {self.path}: {exc}") from exc
        return self.session_id

    def live_sessions(self) -> list[tuple[int, str, str, str]]:
        """(id, listen, upstream, mode) of the sessions other running processes (a TUI, `record`)
        own, newest first."""
        with self._read_lock:
            found = self._read.execute("SELECT id, owner_pid, owner_started, listen, upstream, mode FROM sessions "
                                       "WHERE owner_pid IS NOT NULL AND owner_pid != ? ORDER BY id DESC",
                                       (os.getpid(),)).fetchall()
        return [(int(session_id), listen, upstream, mode) for session_id, pid, started, listen, upstream, mode in found
                if schema.process_alive(pid, started)]

    def join_live_session(self) -> int | None:
        """Record into the newest session another running process (a TUI, `record`) owns, so that
        what this process records shows up there and session rules see both; None if none runs."""
        live = self.live_sessions()
        if live:
            self.session_id = live[0][0]
            return self.session_id
        return None

    def next_flow_id(self) -> int:
        """A fresh flow id, unique in this store file whichever process asks. It never waits on the
        file: ids come from a pool the writer thread keeps reserved ahead, and when a burst (or a
        locked, full file) has used the pool up, the next ids are borrowed past its end for the
        writer to claim, or replace, before it writes their flows."""
        return self._writable().next_flow_id()

    def submit(self, flow: Flow, on_saved: Callable[[FlowRow], None] | None = None,
               on_turn: Callable[[Flow, FlowRow], None] | None = None) -> None:
        """Queue a flow for writing and return at once. A pending flow gets its request row; a
        finished one is analysed and written whole. `on_saved(row)` runs on the writer thread
        once the row is committed; it must be quick and must not call flush() or save(). A
        Responses socket's turns are rows of their own, each written as it ends (while the socket
        is open), `on_turn(turn, row)` told of each like on_saved. A socket's frames leave
        `flow.chunks` as they reach the disk."""
        writer = self._writable()
        if self._closed:
            return
        writer.submit(flow, on_saved, on_turn)

    def delete(self, flow_ids: Collection[int]) -> Deletion:
        """Delete these flows (on the writer thread, in one transaction) with everything that is
        theirs: their chunks and, for a WebSocket session, the turns made of its frames. What
        points at them stops pointing (a replay's origin, a turn's socket or the turn it continues
        become NULL: the ids are not theirs any more), and the session findings of their sessions
        are computed again without them. A flow still in progress is kept (its forwarder writes it
        again when it ends); so is an id the store does not have. A StoreError if it cannot be done."""
        found = self._job("delete", tuple(flow_ids))
        assert isinstance(found, Deletion)
        return found

    def unwritten(self) -> int:
        """Writes submitted and not yet taken up by the writer thread: how far a producer is ahead
        of the file (each one holds its flow in memory)."""
        return self._writable().unwritten()

    def save(self, flow: Flow) -> None:
        """Write a flow (analysing it when finished) and wait until it is committed."""
        self.submit(flow)
        self.flush()

    def flush(self) -> None:
        """Block until everything submitted so far is committed (a StoreError if it cannot be)."""
        self._job("flush")

    def _writable(self) -> Writer | WriterProcess:
        if self._writer is None:
            raise StoreError(f"store {self.path} is open read-only")
        return self._writer

    def _job(self, name: str, *args: object) -> object:
        """Run jobs.JOBS[name] in the writer's next transaction (a StoreError if it fails)."""
        writer = self._writable()
        if self._closed:
            raise StoreError("store is closed")
        return writer.job(name, *args)

    # -- reading -----------------------------------------------------------------------------

    def get(self, flow_id: int) -> Flow | None:
        self._where("")  # learns which columns the file has
        with self._read_lock:
            return rows.load(self._read, flow_id, present=self._columns)

    def frames(self, flow_id: int) -> list[Frame]:
        """The data frames of WebSocket flow `flow_id`, both ways, in the order they passed (what the
        socket modules of inspector/wire/dialects read): each with its direction, time since the
        epoch, opcode (text or binary) and payload, secrets scrubbed. [] for a flow that is not a
        socket or is not in the store. While the socket is open (a pending flow, possibly another
        process's), the frames persisted so far: at most PROGRESS_INTERVAL behind the relay.
        Close codes and reasons are in the flow's notes; past the flow's body limit frames are
        counted there, not kept."""
        flow = self.get(flow_id)
        if flow is None or not flow.websocket:
            return []
        if flow.state is FlowState.PENDING:
            with self._read_lock:
                flow.chunks = [Chunk(t, bytes(data)) for t, data in self._read.execute(
                    "SELECT t, data FROM flow_chunks WHERE flow_id = ? ORDER BY seq", (flow_id,))]
        return frames(flow)

    def analysis(self, flow: Flow) -> Analysis:
        """`flow`'s analysis as the writer stored it (its bodies parsed, nothing checked again);
        analysed here only when the store has none for it yet (see analysis.from_stored)."""
        from ..analysis import from_stored  # the checker is heavy; only readers of findings need it

        self._where("")  # learns which columns the file has
        stored = None
        if "analysis" in self._columns:
            with self._read_lock:
                found = self._read.execute("SELECT analysis FROM flows WHERE id = ? AND state != 'pending'",
                                           (flow.id,)).fetchone()
            stored = None if found is None or found[0] is None else bytes(found[0])
        return from_stored(flow, stored)

    def session_findings(self, session_id: int, *,
                         get: Callable[[int], Flow | None] | None = None) -> dict[int, list[Violation]]:
        """The session rules' findings of one session, by flow id, as the writer stored them; computed
        here (its MCP flows read through `get`, default `self.get`) for a session recorded before
        schema 9 or whose stored findings this build cannot read."""
        from ..analysis import findings_from_stored, session_findings
        from .session_rules import dialects

        stored = None
        if "findings" in self._session_columns():
            with self._read_lock:
                found = self._read.execute("SELECT findings FROM sessions WHERE id = ?", (session_id,)).fetchone()
            stored = findings_from_stored(None if found is None or found[0] is None else bytes(found[0]))
        if stored is not None:
            return stored
        read = self.get if get is None else get
        return session_findings(flow for flow in map(read, self.flow_ids(session_id, dialects=dialects()))
                                if flow is not None)

    def _session_columns(self) -> set[str]:
        if self._session_columns_ is None:
            with self._read_lock:
                self._session_columns_ = {r[1] for r in self._read.execute("PRAGMA table_info(sessions)")}
        return self._session_columns_

    def rows(self, *, text: str = "", limit: int | None = None, offset: int = 0, order: str = "time",
             marked: Collection[int] | None = None) -> list[FlowRow]:
        """Flow rows, oldest first (newest last) or in another of ORDERS, optionally filtered by a
        filter expression (see inspector.filters; a FilterError if it does not parse). `marked`:
        the ids `~marked` matches (the TUI's marks)."""
        where, params = self._where(text, marked)
        columns = rows.list_columns(self._columns)
        sql = f"SELECT {columns} FROM flows{where} ORDER BY {', '.join(self._order(order))} LIMIT ? OFFSET ?"
        with self._read_lock:
            found = self._read.execute(sql, (*params, -1 if limit is None else limit, offset)).fetchall()
        return [rows.listed_row(values) for values in found]

    def flow_ids(self, session_id: int, *, dialects: Sequence[str]) -> list[int]:
        """Ids of one session's flows of these dialects, oldest first (what session rules read)."""
        marks = ", ".join("?" * len(dialects))
        with self._read_lock:
            found = self._read.execute(f"SELECT id FROM flows WHERE session_id = ? AND dialect IN ({marks}) ORDER BY id",
                                       (session_id, *dialects)).fetchall()
        return [r[0] for r in found]

    def data_version(self) -> int | None:
        """A number that changes whenever another connection commits to the file (this store's writer,
        another process: `mcp-stdio`, a second `record`); None when a reader holds the connection
        now, so that a caller polling it never waits."""
        if not self._read_lock.acquire(blocking=False):
            return None
        try:
            return int(self._read.execute("PRAGMA data_version").fetchone()[0])
        finally:
            self._read_lock.release()

    def count(self, *, text: str = "", marked: Collection[int] | None = None) -> int:
        where, params = self._where(text, marked)
        with self._read_lock:
            (n,) = self._read.execute(f"SELECT COUNT(*) FROM flows{where}", params).fetchone()
        return int(n)

    def index_of(self, flow_id: int, *, text: str = "", order: str = "time",
                 marked: Collection[int] | None = None) -> int | None:
        """Where flow `flow_id` is in `rows(text=text, order=order)`, None if the filter leaves it out."""
        where, params = self._where(text, marked)
        keys = ", ".join(self._order(order))
        with self._read_lock:
            if self._read.execute(f"SELECT 1 FROM flows{where}{' AND' if where else ' WHERE'} id = ?",
                                  (*params, flow_id)).fetchone() is None:
                return None
            (n,) = self._read.execute(
                f"SELECT COUNT(*) FROM flows{where}{' AND' if where else ' WHERE'} "
                f"({keys}) < (SELECT {keys} FROM flows WHERE id = ?)", (*params, flow_id)).fetchone()
        return int(n)

    def _order(self, order: str) -> tuple[str, ...]:
        """ORDERS[order] for this file: one opened read-only from before schema 6 has no routes."""
        return ORDERS["time"] if order == "route" and "route" not in self._columns else ORDERS[order]

    def _where(self, text: str, marked: Collection[int] | None = None) -> tuple[str, list[object]]:
        if self._schema_4 is None:
            # A store opened read-only may predate schema 4 (no rules, no usage columns).
            with self._read_lock:
                self._columns = {r[1] for r in self._read.execute("PRAGMA table_info(flows)")}
            self._schema_4 = "rules" in self._columns
        condition, params = filters.compile_filter(text, rules=self._schema_4, route="route" in self._columns,
                                                   sockets="socket_of" in self._columns, marked=marked)
        return (f" WHERE ({condition})" if condition else ""), params

    def session_usage(self, session_id: int) -> tuple[int | None, int | None]:
        """(tokens in, tokens out) summed over the session's flows whose responses report them."""
        self._where("")  # learns whether the file has schema 4's usage columns
        if not self._schema_4:
            return None, None
        with self._read_lock:
            found = self._read.execute("SELECT SUM(tokens_in), SUM(tokens_out) FROM flows WHERE session_id = ?",
                                       (session_id,)).fetchone()
        return found[0], found[1]

    def sessions(self) -> list[SessionRow]:
        with self._read_lock:
            found = self._read.execute(f"{_SESSIONS} ORDER BY id").fetchall()
        return [SessionRow(*r) for r in found]

    def latest_session_with_flows(self) -> int | None:
        with self._read_lock:
            found = self._read.execute("SELECT MAX(session_id) FROM flows").fetchone()
        return found[0]

    def session(self, session_id: int) -> SessionRow | None:
        with self._read_lock:
            r = self._read.execute(f"{_SESSIONS} WHERE id = ?", (session_id,)).fetchone()
        return None if r is None else SessionRow(*r)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True  # what is submitted from now on is not written
        if self._writer is not None:
            self._writer.stop()
        with self._read_lock:
            self._read.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


