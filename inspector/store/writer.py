"""The writer thread: the only one that writes the store file. It takes flows and jobs from a
queue, writes a burst of them in one transaction, appends the chunks of in-flight streams every
PROGRESS_INTERVAL, keeps what it cannot write (file locked, disk full) in a bounded backlog that it
retries, hands out flow ids without ever waiting on the file, and finishes the pending flows of
dead processes. Secrets are scrubbed here, off the forwarding path."""

from __future__ import annotations

import queue
import secrets
import sqlite3
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import TypeVar, cast

from .. import store as tuning  # the package: its tunables are read when used, so setting one there holds
from ..flow import Chunk, Flow, FlowState, chunk_frames, frames
from ..redact import Scan, Scrubber, redacted, scrubber
from ..sockets import Protocol, TurnFlows, protocol
from . import rows, schema
from .analysis_worker import Analyser, body_size, request_summary
from .jobs import JOBS
from .rows import FlowRow, Summary
from .schema import StoreError
from .session_rules import SessionRules, dialects


class _Job:
    """One unit of work for the writer thread."""

    __slots__ = ("run", "done", "result", "error")

    def __init__(self, run: Callable[[sqlite3.Connection], object]) -> None:
        self.run = run
        self.done = threading.Event()
        self.result: object = None
        self.error: BaseException | None = None


class _Backfill:
    """A batch of flows analysed before schema 7, to analyse again (their rule ids, usage and the
    stored analysis the flow screen reads), and of sessions recorded before schema 9, to give their
    session findings (SessionRules.backfill)."""

    __slots__ = ()


SLICE = 32  # held-back flows written per transaction while a writer process catches up (_hold_back)
_BACKFILL_BATCH = 50  # flows per turn: new flows wait at most one batch's analysis


@dataclass(slots=True)
class _Write:
    """A flow to write: its request row (`final` False) or the whole finished flow."""

    flow: Flow
    final: bool
    on_saved: Callable[[FlowRow], None] | None
    summary: Summary | None = None  # analysed once, kept while the write waits to be retried
    clean: Flow | None = None  # the finished flow redacted: what is analysed, stored and shown
    on_turn: TurnSaved | None = None  # a socket's: told of each of its turns' rows
    # Sent again by the client of a writer process that died (writer_process): its row may be on
    # disk already. A pending row's chunks from `resume` on are written again, those before it
    # stay (a socket's frames the client let go of once they were on disk).
    resume: int | None = None
    # A finished socket sent by such a client: the index of its flow.chunks[0] (the frames before
    # it are on disk); None: the writer's own count of the frames taken out of it.
    first_chunk: int | None = None
    scans: list[Scan] = field(default_factory=list)  # a pending row's request bodies as redaction scanned them
    since: float = field(default_factory=time.monotonic)  # when it was submitted (a held-back flow waits BURST_GATHER at most)


TurnSaved = Callable[[Flow, FlowRow], None]


@dataclass(slots=True)
class _Progress:
    """An in-flight flow whose request row is on disk: how much of its stream is on disk too.

    A socket's frames leave its flow once they are on disk (`dropped` of them, from the front of
    flow.chunks): a session that lasts hours holds a PROGRESS_INTERVAL's worth of frames in memory,
    not all of them, and its final write reads them back. Its Responses turns are made as they end
    (`turns`), each written as a row of its own while the socket is still open."""

    flow: Flow
    chunks: int = 0  # the flow's first `chunks` chunks are rows of flow_chunks
    response_started: bool = False  # status and headers written onto the pending row
    dropped: int = 0  # of which taken out of flow.chunks (a socket's): flow.chunks[0] is chunk `dropped`
    turns: TurnFlows | None = None
    on_turn: TurnSaved | None = None
    # Its request bodies as its pending row's redaction scanned them: its progress and its final
    # write redact the same request, and scan it no more (see redact.scrubber).
    scans: list[Scan] = field(default_factory=list)
    _scrub: Scrubber | None = None

    @property
    def scrub(self) -> Scrubber:
        """The flow's secrets, scrubbed from each chunk as it is persisted (the final write scrubs
        the whole body); made when its first chunks are, not for every flow that never streams."""
        if self._scrub is None:
            self._scrub = scrubber(self.flow, scans=self.scans)
        return self._scrub


class _Tick:
    """The writer woke up on its own, to write stream progress or retry the backlog."""

    __slots__ = ()


_TICK = _Tick()
_Item = _Job | _Write | _Backfill | None  # what the queue carries; None ends the thread
_Result = TypeVar("_Result")
_COMPLETION = rows.update("flows", rows.RESPONSE_COLUMNS + rows.SUMMARY_COLUMNS)
_WHOLE_FLOW = rows.insert("flows", rows.FLOW_COLUMNS + rows.SUMMARY_COLUMNS)
_BACKFILLED = rows.update("flows", ("rules", "tokens_in", "tokens_out", "analysis"))
# A summary's SUMMARY_COLUMNS values (astuple would deep-copy each, the stored analysis's bytes too).
_SUMMARY_VALUES = attrgetter(*rows.SUMMARY_COLUMNS)
PENDING_SUMMARY = ("dialect", "model", "tools")  # the summary columns a request alone fills in
_REQUEST_ROW = rows.insert("flows", rows.FLOW_COLUMNS + PENDING_SUMMARY)
_RESPONSE_START = rows.update("flows", ("status", "response_headers", "streamed", "ttfb_ms"))
_CHUNK_ROW = rows.insert("flow_chunks", ("flow_id", "seq", "t", "data"))


def _told(on_turn: TurnSaved | None, turn: Flow) -> Callable[[FlowRow], None] | None:
    """The on_saved of a socket's turn: tells `on_turn` of the turn and its row."""
    return None if on_turn is None else lambda row: on_turn(turn, row)


def _before(chunks: list[Chunk], count: int, size: int = 8192) -> bytes:
    """The last `size` bytes of `chunks[:count]`: where a secret running into the next chunks may
    have begun (Scrubber.stream)."""
    parts, held = [], 0
    while count > 0 and held < size:
        count -= 1
        parts.append(chunks[count].data)
        held += len(chunks[count].data)
    return b"".join(reversed(parts))[-size:]


class Writer:
    pid: int | None = None  # a thread of this process: no process of its own (see WriterProcess.pid)

    def __init__(self, path: Path, *, first_free_id: int, analyse_apart: int, owner_pid: int | None = None,
                 on_disk: Callable[[int, int], None] | None = None, turn_id: Callable[[], int] | None = None,
                 after_listeners: Callable[[], None] | None = None, gather: bool = False) -> None:
        """`owner_pid`: the process whose ids these are (default this one): a writer process keys
        its pool of ids to the forwarder it writes for, which holds them. `on_disk(flow_id, count)`:
        told once the first `count` frames of an open socket are on disk. `turn_id()`: the id of a
        socket's turn as it ends (default next_flow_id): a writer process asks its forwarder, so
        that a turn's id follows the flows begun before it, as the list's time order wants.
        `after_listeners()`: told once the listeners of a transaction's writes have run (a writer
        process sends their acknowledgements in one message). `gather`: hold finished flows back
        while flows keep coming (_hold_back), what a writer process does."""
        self.path = path
        self._gather = gather
        self._after_listeners = after_listeners
        self._on_disk = on_disk
        self._turn_id = self.next_flow_id if turn_id is None else turn_id
        self.last_error: str | None = None  # the latest failure, None once writing works again
        self._id_lock = threading.Lock()
        self._ids: deque[int] = deque()  # reserved in the file for this store
        # Handed out while no reserved id was left (the file locked or full): the writer claims them,
        # or gives the flows new ids, before it writes them.
        self._borrowed: list[int] = []
        self._borrow_next = first_free_id
        # The ids the transaction under way reserves: handed out (in order) before it commits, not
        # borrowed past them, so that a flow begun meanwhile is not numbered after later ones.
        self._reserving: deque[int] = deque()
        self._reserving_taken: list[int] = []  # of which handed out: borrowed, if it rolls back
        self._renumber: dict[int, int] = {}  # borrowed id -> the id its flow is written under
        self._refill = True  # off once stop() gives the unused ids back
        self._pool_key = schema.pool_key(secrets.token_hex(4), owner_pid)
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._pending_rows: set[int] = set()  # written as pending by this writer
        self._live: dict[int, _Progress] = {}  # pending rows whose stream progress the writer persists
        self._backlog: list[_Write] = []  # written in the next transaction that succeeds
        self._held: deque[_Write] = deque()  # finished flows a writer process holds back while flows keep coming
        self._recovered = False  # dead processes' pending flows marked interrupted
        self._analyser = Analyser(analyse_apart)
        self._session_rules = SessionRules(self._warn)
        self._thread = threading.Thread(target=self._write_loop, name="toolwire-store-writer", daemon=True)
        self._thread.start()

    # -- what other threads call -------------------------------------------------------------

    def next_flow_id(self) -> int:
        with self._id_lock:
            if self._ids:
                return self._ids.popleft()
            if self._reserving:
                flow_id = self._reserving.popleft()
                self._reserving_taken.append(flow_id)
                return flow_id
            flow_id = self._borrow_next
            self._borrow_next += 1
            self._borrowed.append(flow_id)
            return flow_id

    def submit(self, flow: Flow, on_saved: Callable[[FlowRow], None] | None,
               on_turn: TurnSaved | None = None, *, resume: int | None = None, first_chunk: int | None = None) -> None:
        # What to write is decided now: the forwarder goes on filling in the flow after a pending submit.
        self._queue.put(_Write(flow, flow.state is not FlowState.PENDING, on_saved, on_turn=on_turn,
                               resume=resume, first_chunk=first_chunk))

    def unwritten(self) -> int:
        return self._queue.qsize() + len(self._held)

    def call(self, run: Callable[[sqlite3.Connection], _Result]) -> _Result:
        """Run `run` in the writer's next transaction and return its result (a StoreError if it fails)."""
        job = _Job(run)
        self._queue.put(job)
        job.done.wait()
        if job.error is not None:
            raise StoreError(str(job.error)) from job.error
        return cast(_Result, job.result)  # the thread stored what `run` returned

    def job(self, name: str, *args: object) -> object:
        """Run the named job of jobs.JOBS with `args` in the writer's next transaction."""
        run = JOBS[name]
        return self.call(lambda conn: run(conn, *args))

    def backfill(self) -> None:
        """Analyse again, a batch per turn of the writer thread, the flows stored before schema 4
        (schema.SCHEMA_4); returns at once."""
        self._queue.put(_Backfill())

    def stop(self) -> None:
        """Give the unused ids back, write what can be written, and end the thread."""
        with self._id_lock:
            self._refill = False  # no top-up now: it would only be given back
        try:
            self.call(self._give_back_ids)
        except StoreError:
            pass  # reported by the writer; the last attempt below reports what is lost
        self._queue.put(None)
        self._thread.join()

    # -- the thread ----------------------------------------------------------------------------

    def _warn(self, problem: str) -> None:
        # Once per kind of failure, not once per retry: a full disk must not flood the terminal.
        if problem != self.last_error:
            print(f"toolwire-inspect: store: {problem}", file=sys.stderr)
        self.last_error = problem

    def _write_loop(self) -> None:
        try:
            conn = schema.connect(self.path, timeout=tuning.WRITE_TIMEOUT)
        except sqlite3.Error as exc:  # the read connection opened a moment ago: only a vanished file
            self._warn(f"cannot open a writer: {exc}; nothing more will be recorded")
            self._fail_forever(exc)
            return
        next_progress = time.monotonic() + tuning.PROGRESS_INTERVAL
        next_retry = 0.0
        catching_up = False  # quiet at the last look, or flows overdue: the held ones go, a slice at a time
        try:
            while True:
                now = time.monotonic()
                due = [next_progress] if self._live else []
                if self._backlog or not self._recovered:
                    due.append(next_retry)
                batch: list[_Item | _Tick]
                if self._held:
                    # Look again after a quiet window (at once while catching up), sooner when stream
                    # progress or a retry is due: what is urgent is not held back with the burst.
                    if not catching_up:
                        time.sleep(max(0.0, min([now + tuning.PROGRESS_INTERVAL, *due]) - now))
                    batch = self._drained([])
                else:
                    item: _Item | _Tick
                    try:
                        item = self._queue.get(timeout=max(0.0, min(due) - now)) if due else self._queue.get()
                    except queue.Empty:
                        if self._recovered and not self._backlog and not self._progress_due():
                            next_progress = time.monotonic() + tuning.PROGRESS_INTERVAL
                            continue
                        item = _TICK
                    if isinstance(item, _Write):
                        # Let a burst of flows gather: one wake-up and one transaction for many,
                        # instead of a wake-up per flow competing with the forwarder for the GIL.
                        time.sleep(tuning.BATCH_WINDOW)
                    batch = self._drained([item])
                if self._gather:
                    batch, catching_up = self._hold_back(batch)
                now = time.monotonic()
                # The last batch writes what the streams still open relayed: a writer process ends so
                # when its forwarder is gone, and the next open marks those flows interrupted.
                progress = now >= next_progress or None in batch
                if progress:
                    next_progress = now + tuning.PROGRESS_INTERVAL
                retry = (self._backlog or not self._recovered) and now >= next_retry
                if (batch or progress or retry) and not self._write_batch(conn, batch, progress):
                    next_retry = time.monotonic() + tuning.RETRY_INTERVAL
                if None in batch:
                    self._give_up_backlog()
                    return
        finally:
            conn.close()
            self._analyser.close()

    def _drained(self, batch: list[_Item | _Tick]) -> list[_Item | _Tick]:
        """`batch` and what else is queued."""
        while True:
            try:
                batch.append(self._queue.get_nowait())
            except queue.Empty:
                return batch

    def _hold_back(self, batch: list[_Item | _Tick]) -> tuple[list[_Item | _Tick], bool]:
        """A writer process's batch: its finished flows held back while flows keep coming, and
        whether to look again at once (the forwarder is quiet: nothing came since the last look;
        or held flows are overdue). Analysis and
        row writes beside a burst, on a small machine, slowed the forwarder by half; so the held
        flows go when it is quiet, SLICE at a time (a burst that resumes waits one slice at most),
        or once they have waited BURST_GATHER, however busy it stays. Request rows, stream progress
        and jobs are never held: a job is about every flow submitted before it, so it takes them
        all with it, and so does the last batch."""
        kept: list[_Item | _Tick] = []
        came = finals = 0
        for item in batch:
            if isinstance(item, _Write):
                came = True
                if item.final:
                    self._held.append(item)
                    finals += 1
                    continue
            kept.append(item)
        if None in kept or self._backlog or any(isinstance(item, _Job) for item in kept):
            # (A store that cannot be written keeps what waits in its bounded backlog, as ever.)
            held, self._held = list(self._held), deque()
            return held + kept, False
        quiet = not came
        overdue = time.monotonic() - tuning.BURST_GATHER
        # While busy, the overdue flows go as many as came at this look (a slice at least): a
        # forwarder that stays busy does not leave the writer further behind, and a backlog a
        # burst left waits for the forwarder to be quiet instead of going beside the next burst.
        most = SLICE if quiet else max(SLICE, finals)
        taken: list[_Item | _Tick] = []
        while self._held and len(taken) < most and (quiet or self._held[0].since <= overdue):
            taken.append(self._held.popleft())
        return taken + kept, quiet

    def _progress_due(self) -> bool:
        return any(len(state.flow.chunks) != state.chunks - state.dropped for state in self._live.values())

    def _fail_forever(self, exc: Exception) -> None:
        """No writer: answer every job with the error until stop() ends the thread."""
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

    def _write_batch(self, conn: sqlite3.Connection, batch: list[_Item | _Tick], progress: bool) -> bool:
        """Write the backlog and a batch in one transaction; False when the store could not be
        written (the flows wait in the backlog for the next attempt)."""
        jobs = [item for item in batch if isinstance(item, _Job)]
        writes = self._backlog + [item for item in batch if isinstance(item, _Write)]
        self._backlog = []
        # Analyse before the transaction: a write lock held through a long check would stall
        # every other process on this store (and this one's id reservations).
        # The redacted copy is analysed: the stored analysis (a stream's reassembled response, the
        # findings' messages) reaches disk too, and its pointers must fall on the bodies shown.
        for write in writes:  # the turns a socket is split into are appended, and analysed in turn
            if write.final and write.summary is None:
                live = self._live.get(write.flow.id)
                if write.flow.websocket:
                    self._whole_socket(conn, write.flow, write.first_chunk if write.first_chunk is not None
                                       else live.dropped if live is not None else 0)
                write.clean = redacted(write.flow, scans=live.scans if live is not None else None)
                write.summary = self._analyser.summary(write.clean)
                if write.flow.websocket:
                    # Made from the redacted socket: nothing the socket scrubbed comes back in a turn.
                    writes.extend(self._socket_turns(write, live))
        try:
            backfill = self._backfill_batch(conn) if any(isinstance(item, _Backfill) for item in batch) else None
        except sqlite3.Error as exc:  # the mark stays: the next open resumes
            self._warn(f"cannot read the flows to analyse again ({exc})")
            backfill = None
        saved: list[tuple[Callable[[FlowRow], None], FlowRow]] = []
        written: list[_Write] = []
        moved: list[tuple[Flow, int]] = []
        claim = progressed = None
        session_parts: dict[int, dict] = {}
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
                    clean = write.clean if write.final and write.clean is not None and \
                        write.clean.id == write.flow.id else redacted(write.flow, request_only=not write.final,
                                                                      scans=None if write.final else write.scans)
                    row = self._write_flow(conn, clean, write.summary if write.final else None, write.resume)
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
            requeued = backfill is not None and self._write_backfill(conn, *backfill)
            if any(isinstance(item, _Backfill) for item in batch) and self._session_rules.backfill(conn) \
                    and not requeued:
                self._queue.put(_Backfill())  # more sessions to give their findings, after what is queued now
            session_parts = self._session_rules.store(conn)
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
            self._session_rules.rolled_back()
            with self._id_lock:  # the ids handed out of a reservation that did not happen are borrowed
                self._borrowed += self._reserving_taken
                self._reserving, self._reserving_taken = deque(), []
            for flow, old in moved:
                flow.id = old
                flow.notes.pop()
            self._warn(f"cannot write ({exc}); flows are kept in memory and retried")
            self._keep(writes)
            for job in jobs:
                job.error = job.error or exc
                job.done.set()
            return False  # a backfill left undone resumes at the next open (its mark is unchanged)
        self._after_commit(claim, moved, written, progressed or [])
        self._session_rules.committed(session_parts)
        if self.last_error is not None and self.last_error.startswith("cannot write"):
            print("toolwire-inspect: store: writing again; the flows kept in memory are stored", file=sys.stderr)
            self.last_error = None
        for on_saved, row in saved:
            try:
                on_saved(row)
            except Exception as exc:  # a listener's bug must not stop the writer
                print(f"toolwire-inspect: store listener failed: {exc!r}", file=sys.stderr)
        if self._after_listeners is not None:
            self._after_listeners()
        # Last, so that flush() also waits for the listeners of what it flushed.
        for job in jobs:
            job.done.set()
        return True

    def _whole_socket(self, conn: sqlite3.Connection, flow: Flow, dropped: int) -> None:
        """Give finished socket `flow` all its frames back, the first `dropped` already on disk
        (scrubbed when written, taken out of it since) before those still in it, and their
        concatenation: what is analysed and stored, and what the listeners told of it read. The
        forwarder is done with it."""
        if dropped:
            try:
                flow.chunks[:0] = [Chunk(t, bytes(data)) for t, data in conn.execute(
                    "SELECT t, data FROM flow_chunks WHERE flow_id = ? AND seq < ? ORDER BY seq",
                    (flow.id, dropped))]
            except sqlite3.Error as exc:  # the file, read back: the flow is kept with what is still in memory
                self._warn(f"flow #{flow.id}: cannot read back its first {dropped} frames ({exc})")
                flow.notes.append(f"its first {dropped} frames were written but could not be read back")
        flow.response_body = b"".join(chunk.data for chunk in flow.chunks)

    def _socket_turns(self, write: _Write, live: _Progress | None) -> list[_Write]:
        """The writes of finished socket `write`'s turns not written yet: those its live progress has
        not made already (all of them for a socket never live), then those it closed on."""
        assert write.clean is not None
        on_turn = write.on_turn
        if live is not None and live.turns is not None:
            turns = live.turns
        elif protocol(write.clean.path) is Protocol.RESPONSES:
            turns = TurnFlows(write.clean, self._turn_id)
        else:
            return []
        made = [turn for frame in frames(write.clean)[turns.splitter.count:] for turn in turns.feed(frame)]
        return [_Write(turn, True, _told(on_turn, turn)) for turn in made + turns.finish()]

    def _keep(self, writes: list[_Write]) -> None:
        """Keep failed writes for the next attempt, within BACKLOG_FLOWS and BACKLOG_BYTES."""
        self._backlog = writes
        size = sum(body_size(write.flow) for write in writes)
        dropped = []
        while self._backlog and (len(self._backlog) > tuning.BACKLOG_FLOWS or size > tuning.BACKLOG_BYTES):
            write = self._backlog.pop(0)
            size -= body_size(write.flow)
            dropped.append(write.flow.id)
        if dropped:
            print(f"toolwire-inspect: store: BACKLOG FULL, dropped {len(dropped)} unwritten flow writes "
                  f"(#{dropped[0]}..#{dropped[-1]}): the store has not been writable for a while",
                  file=sys.stderr)

    def _claim_ids(self, conn: sqlite3.Connection) -> dict[int, int] | None:
        """Inside the write transaction: make the borrowed ids ours, or choose new ids for their
        flows when another process took them meanwhile, and top the pool of reserved ids up
        (`_reserving`: handed out from now, in the pool proper from `_after_commit`). Returns each
        borrowed id's target."""
        with self._id_lock:
            if not self._borrowed and not (self._refill and len(self._ids) < tuning.ID_POOL):
                return None
        if not self._recovered:  # the first transaction takes back the ids of processes that have ended
            schema.forget_ended_pools(conn)
        start = schema.next_free_id(conn, reclaim=not self._recovered)
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
            reserved = range(first, first + (tuning.ID_POOL - len(self._ids) if self._refill else 0))
            self._borrow_next = max(self._borrow_next, reserved.stop)
            self._reserving, self._reserving_taken = deque(reserved), []
        conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                         [("next_flow_id", reserved.stop), (self._pool_key, reserved.stop)])
        return dict(zip(borrowed, targets, strict=True))

    def _renumber_flows(self, writes: list[_Write], claim: dict[int, int] | None) -> list[tuple[Flow, int]]:
        """Give the flows whose borrowed id went to another process their new id (until the
        transaction commits: on failure they get their old one back). Returns (flow, old id)."""
        renumber = dict(self._renumber)  # popped per flow here: a flow's second write has its new id
        if claim is not None:
            renumber.update((old, new) for old, new in claim.items() if old != new)
        moved = []
        for write in writes:
            new = renumber.pop(write.flow.id, None)
            if new is not None:
                moved.append((write.flow, write.flow.id))
                write.flow.id = new
                write.flow.notes.append(f"renumbered from #{moved[-1][1]}: another process took that id "
                                        "while this one could not reach the store")
        return moved

    def _after_commit(self, claim: dict[int, int] | None, moved: list[tuple[Flow, int]],
                      written: list[_Write], progressed: list[tuple[_Progress, int, list[Chunk]]]) -> None:
        if claim is not None:
            with self._id_lock:
                del self._borrowed[: len(claim)]
                self._ids.extend(self._reserving)  # the reserved ids not handed out already
                self._reserving, self._reserving_taken = deque(), []
            self._renumber.update((old, new) for old, new in claim.items() if old != new)
        for _, old in moved:
            self._renumber.pop(old, None)
        for write in written:
            flow_id = write.flow.id
            if write.final:
                self._pending_rows.discard(flow_id)
                self._live.pop(flow_id, None)
            else:
                self._pending_rows.add(flow_id)
                kept = write.resume or 0
                state = self._live[flow_id] = _Progress(write.flow, chunks=kept, dropped=kept, on_turn=write.on_turn,
                                                        scans=write.scans)
                # A resent socket's turns are made when it ends, from all its frames (its turn rows
                # written before were deleted with the resend: see _write_flow).
                if write.flow.websocket and write.resume is None and protocol(write.flow.path) is Protocol.RESPONSES:
                    # The socket's request side, redacted: each turn copies it.
                    state.turns = TurnFlows(redacted(write.flow, request_only=True, scans=state.scans), self._turn_id)
        for state, count, pieces in progressed:
            state.chunks = state.dropped + count
            state.response_started = True
            flow = state.flow
            if flow.websocket:
                # On disk now: out of memory (the forwarder only appends, after these).
                del flow.chunks[:count]
                state.dropped += count
                if self._on_disk is not None:
                    self._on_disk(flow.id, state.dropped)
                if state.turns is not None:
                    for frame in chunk_frames(flow.started_at, pieces):
                        for turn in state.turns.feed(frame):
                            self._queue.put(_Write(turn, True, _told(state.on_turn, turn)))
        self._recovered = True

    def _backfill_batch(self, conn: sqlite3.Connection) -> tuple[int, list[tuple[int, Summary]]] | None:
        """The next batch of old flows below the mark, analysed (outside the transaction)."""
        mark = conn.execute("SELECT value FROM meta WHERE key = 'rules_backfill_below'").fetchone()
        if mark is None:
            return None
        ids = [flow_id for (flow_id,) in conn.execute(
            "SELECT id FROM flows WHERE id < ? AND state != 'pending' ORDER BY id DESC LIMIT ?",
            (mark[0], _BACKFILL_BATCH))]
        analysed = []
        for flow_id in ids:
            try:
                flow = rows.load(conn, flow_id)
                if flow is not None:
                    analysed.append((flow_id, self._analyser.summary(flow)))
            except Exception as exc:  # a row this build cannot read keeps its empty rule ids
                self._warn(f"flow #{flow_id}: cannot analyse it again: {exc}")
        return (min(ids) if ids else 0), analysed

    def _write_backfill(self, conn: sqlite3.Connection, below: int, analysed: list[tuple[int, Summary]]) -> bool:
        """True when a next batch is queued."""
        for flow_id, summary in analysed:
            conn.execute(_BACKFILLED, (summary.rules, summary.tokens_in, summary.tokens_out, summary.analysis, flow_id))
        if below:
            conn.execute("UPDATE meta SET value = ? WHERE key = 'rules_backfill_below'", (below,))
            self._queue.put(_Backfill())  # the next batch, after what is queued now
            return True
        conn.execute("DELETE FROM meta WHERE key = 'rules_backfill_below'")
        return False

    def _write_progress(self, conn: sqlite3.Connection, finished: set[int]
                        ) -> list[tuple[_Progress, int, list[Chunk]]]:
        """Append the chunks relayed since the last time to `flow_chunks`: each chunk is written
        once, so a long stream costs what it relays, not its length at every tick. Each entry:
        the flow's progress, how many of flow.chunks are on disk now, the chunks written as scrubbed."""
        progressed = []
        for flow_id, state in self._live.items():
            flow = state.flow
            chunks = flow.chunks
            count = len(chunks)  # the forwarder only appends: the first `count` are settled
            start = state.chunks - state.dropped  # the first of flow.chunks not on disk yet
            if count == start or flow_id in finished:
                continue
            if not state.response_started:
                # Set by the forwarder before its first chunk is relayed.
                headers = rows.headers_blob(state.scrub.headers(flow.response_headers))
                conn.execute(_RESPONSE_START, (flow.status, headers, int(flow.streamed), flow.ttfb_ms, flow_id))
            fresh = chunks[start:count]
            if flow.websocket:
                written = state.scrub.frames(fresh)
            else:
                before = _before(chunks, start)
                written = [Chunk(chunk.t, piece) for chunk, piece in
                           zip(fresh, state.scrub.stream(before, [chunk.data for chunk in fresh]), strict=True)]
            conn.executemany(_CHUNK_ROW, [(flow_id, seq, chunk.t, chunk.data)
                                          for seq, chunk in enumerate(written, state.chunks)])
            progressed.append((state, count, written))
        return progressed

    def _mark_interrupted(self, conn: sqlite3.Connection) -> None:
        """Finish the pending flows of processes that died mid-flow: state `error`, error text
        `interrupted: ...`, with the chunks they had relayed, analysed like any finished flow.
        Flows of a live process (another recorder on this file) are left alone: they are going on."""
        for session_id, pid, started in conn.execute(
                "SELECT DISTINCT flows.session_id, owner_pid, owner_started FROM flows "
                "LEFT JOIN sessions ON sessions.id = flows.session_id WHERE state = 'pending'").fetchall():
            if pid is not None and schema.process_alive(pid, started):
                continue
            who = f"the recording process (pid {pid})" if pid is not None else "the recording process"
            for (flow_id,) in conn.execute("SELECT id FROM flows WHERE session_id = ? AND state = 'pending'",
                                           (session_id,)).fetchall():
                flow = rows.load(conn, flow_id)
                assert flow is not None  # just listed, in this transaction
                flow.chunks = [Chunk(t, bytes(data)) for t, data in conn.execute(
                    "SELECT t, data FROM flow_chunks WHERE flow_id = ? ORDER BY seq", (flow_id,))]
                flow.response_body = b"".join(chunk.data for chunk in flow.chunks)
                flow.state = FlowState.ERROR
                flow.error = (f"interrupted: {who} ended before the response did; "
                              f"{len(flow.response_body)} bytes relayed by then are kept")
                # Analysed inside the transaction, unlike other flows: this happens once, at open.
                self._write_flow(conn, flow, self._analyser.summary(flow))

    def _write_flow(self, conn: sqlite3.Connection, flow: Flow, summary: Summary | None,
                    resume: int | None = None) -> FlowRow:
        """Write a pending flow (no summary) or a finished one with its analysis summary; `resume`:
        see _Write."""
        if summary is None:
            # Only the request side: it is complete on arrival, the rest is still being filled in.
            pending = rows.as_pending(flow)
            # The model is in the request: the list shows it while the response is on its way.
            known = request_summary(pending)
            values = (*rows.flow_values(pending, rows.FLOW_COLUMNS), *(getattr(known, name) for name in PENDING_SUMMARY))
            conn.execute(_REQUEST_ROW, values)  # OR REPLACE: a resent row replaces the dead writer's
            if resume is not None:  # what the dead writer had of its stream is sent again
                conn.execute("DELETE FROM flow_chunks WHERE flow_id = ? AND seq >= ?", (flow.id, resume))
                conn.execute("DELETE FROM flows WHERE socket_of = ?", (flow.id,))
            return rows.flow_row(pending, known)
        completion = (*rows.flow_values(flow, rows.RESPONSE_COLUMNS), *_SUMMARY_VALUES(summary))
        # The chunks relayed so far are in the flow now.
        conn.execute("DELETE FROM flow_chunks WHERE flow_id = ?", (flow.id,))
        # The request columns (a 1 MB body, say) of a pending row are already on disk: write only the rest.
        if flow.id not in self._pending_rows or conn.execute(_COMPLETION, (*completion, flow.id)).rowcount == 0:
            conn.execute(_WHOLE_FLOW, (*rows.flow_values(flow, rows.REQUEST_COLUMNS), *completion))
        if summary.dialect in dialects():
            self._session_rules.written(flow)
        return rows.flow_row(flow, summary)

    def _give_back_ids(self, conn: sqlite3.Connection) -> None:
        """Return the unused ids at the end of the reserved range, unless another process reserved
        after them, so that the next flow, whoever records it, goes on from the last one."""
        conn.execute("DELETE FROM meta WHERE key = ?", (self._pool_key,))
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
