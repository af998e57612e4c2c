"""The store's writer in a process of its own (`Store(..., writer_process=True)`): what `record`, the
TUI's forwarder process and `mcp-stdio` use, so that analysis, redaction by value and row writes
never hold the forwarder's GIL.

The forwarder's process keeps only `WriterProcess`: `submit()` is a deque append, and one sender
thread pickles what was submitted and writes it to a socketpair: a finished flow whole; an open
one's request row once it has been open for PENDING_AFTER, then the chunks its stream relayed since
the last time (every PROGRESS_INTERVAL / 2, so that they are on disk within 100 ms). While a flow
is open, what is submitted goes with the next of those ticks: a submit wakes the sender only while
nothing is open (no tick is coming), an id taken only when fewer than IDS_SHORT are left. Under load
that is one wake-up per tick instead of one per burst of a few flows. The writer
process (`main`, run as `python -m inspector.store.writer_process`) runs the same `Writer` the
in-process store runs: the flows it is sent are its own copies, which the
progress messages fill in as the forwarder's flows are filled in. The hand-off is kernel memory,
never a file: a flow's secrets reach the writer in memory, as they reach the writer thread, and are
scrubbed there before anything is written.

Flow ids are streamed ahead: the writer process hands the client ids from its pool (keyed to the
forwarder's pid, which holds them), so next_flow_id() never waits; a burst that outruns them gets
provisional ids, which the writer process renumbers when it takes the flow.

The writer process may die (killed, out of memory): the client starts another and sends it again
what was not committed: the finished flows not acknowledged, the request rows of the flows still
open and what their streams relayed (a socket's frames from where the client let go of them).
Writes are idempotent (rows are written OR REPLACE, a resent stream's chunks replace the dead
writer's), so none is lost and none is doubled. While no writer process runs, the finished flows
kept are bounded like the writer's backlog (BACKLOG_FLOWS).

The writer process holds finished flows back while flows keep coming (each up to store.BURST_GATHER)
and analyses and writes them when the forwarder is quiet: its work beside a burst slowed the
forwarder. Request rows and stream progress are written as they come (Writer._hold_back)."""

from __future__ import annotations

import gc
import itertools
import os
import pickle
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from contextlib import closing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import store as tuning
from ..flow import Flow, FlowState, chunk_pairs, paired_chunks
from . import schema
from .rows import FlowRow, as_pending
from .schema import StoreError

_LENGTH = struct.Struct(">I")
# Ids the client keeps in hand, and how few it may hold before it asks for more.
IDS_AHEAD = 32
IDS_LOW = 24
IDS_SHORT = 8  # ... and how few before it asks between two ticks (see WriterProcess._ticking)
# Ids given out while none was in hand: the writer process replaces them when it takes the flow.
PROVISIONAL = 1 << 48
RENUMBERED = "renumbered from a provisional id: the forwarder had no id in hand when the flow began"
RESTART_PAUSE = 1.0  # seconds between two starts of a writer process that keeps dying
TURN_ID_WAIT = 1.0  # seconds the writer process waits for the forwarder to give a socket's turn an id
# How long a flow is open before its request row is sent: most end sooner and are sent once,
# finished (half the pickling, one row write instead of two); one still open is on disk within
# about PROGRESS_INTERVAL, with what it relayed.
PENDING_AFTER = tuning.PROGRESS_INTERVAL / 2

TurnSaved = Callable[[Flow, FlowRow], None]


# Messages pickled into one frame at most. pickle holds the GIL for the whole list and the socket's
# write lets it go: a burst of 200 finished streams pickled at once held the forwarder's loop thread
# off for 10 ms, a frame of these holds it for well under one.
FRAME_MESSAGES = 16


def _send(sock: socket.socket, messages: list[tuple[Any, ...]]) -> None:
    """Send `messages` in frames of FRAME_MESSAGES: each its length, then the pickled list."""
    for start in range(0, len(messages), FRAME_MESSAGES):
        data = pickle.dumps(messages[start:start + FRAME_MESSAGES], protocol=5)
        sock.sendall(_LENGTH.pack(len(data)) + data)


def _messages(sock: socket.socket) -> Iterator[tuple[Any, ...]]:
    """The messages read from `sock` until it closes. Pickle, because both ends are this program
    on a socketpair it made: no other process can write to it."""
    stream = sock.makefile("rb")
    while True:
        head = stream.read(_LENGTH.size)
        if len(head) < _LENGTH.size:
            return
        (size,) = _LENGTH.unpack(head)
        data = stream.read(size)
        if len(data) < size:
            return
        yield from pickle.loads(data)


# -- the writer process ------------------------------------------------------------------------

def main(argv: list[str]) -> int:
    """`python -m inspector.store.writer_process PATH FD OWNER_PID ANALYSE_APART FLOOR`."""
    from .writer import Writer

    path, fd, owner, apart, floor = Path(argv[0]), int(argv[1]), int(argv[2]), int(argv[3]), int(argv[4])
    # Ctrl-C at the terminal is for the forwarder, which ends this process when it has closed.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sock = socket.socket(fileno=fd)
    out = threading.Lock()

    def send_many(messages: list[tuple[Any, ...]]) -> None:
        with out:
            try:
                _send(sock, messages)
            except OSError:
                pass  # the forwarder is gone: what it sent is written all the same

    def send(message: tuple[Any, ...]) -> None:
        send_many([message])

    try:
        with closing(schema.connect(path, timeout=tuning.WRITE_TIMEOUT)) as conn:
            first = max(schema.next_free_id(conn, reclaim=True), floor)
    except Exception:  # locked or full: the writer's first transaction says why, and ids are borrowed
        first = floor
    asked: dict[int, tuple[threading.Event, list[int]]] = {}  # turn ids asked of the forwarder
    tokens = itertools.count()

    def turn_id() -> int:
        """The forwarder's next id (the writer thread waits for it), or our own when none comes."""
        token, came = next(tokens), threading.Event()
        answer: list[int] = []
        asked[token] = (came, answer)
        send(("turn_id", token))
        came.wait(TURN_ID_WAIT)
        asked.pop(token, None)
        return answer[0] if answer and answer[0] < PROVISIONAL else writer.next_flow_id()

    acks: list[tuple[Any, ...]] = []  # the writer thread's: a transaction's, sent in one message

    def send_acks() -> None:
        if acks:
            batch = acks[:]
            acks.clear()
            send_many(batch)

    writer = Writer(path, first_free_id=first, analyse_apart=apart, owner_pid=owner,
                    on_disk=lambda flow_id, count: send(("on_disk", flow_id, count)), turn_id=turn_id,
                    after_listeners=send_acks, gather=True)
    writer.backfill()
    try:
        # The first transaction reserves the pool of ids: those asked for next come from it, in order.
        writer.job("flush")
    except StoreError:
        pass  # locked or full: reported by the writer, and ids are borrowed until it gets through
    copies: dict[int, Flow] = {}  # the open flows, which progress messages fill in
    renumbered: dict[int, int] = {}  # provisional id -> the id its flow is written under
    reported = threading.Event()

    def report_errors() -> None:  # the client's last_error follows the writer's
        last: str | None = None
        while not reported.wait(0.2):
            if writer.last_error != last:
                last = writer.last_error
                send(("last_error", last))

    threading.Thread(target=report_errors, name="toolwire-writer-errors", daemon=True).start()

    def run_job(job_id: int, name: str, args: tuple[Any, ...]) -> None:
        try:
            send(("job", job_id, writer.job(name, *args), None))
        except StoreError as exc:
            send(("job", job_id, None, str(exc)))

    # What is alive now lives as long as the process: out of the collector's generations, so that a full
    # collection under load walks only what the requests made.
    gc.freeze()
    for message in _messages(sock):
        kind = message[0]
        if kind == "submit":
            _, seq, flow, resume, first_chunk, turns = message
            if flow.id >= PROVISIONAL:
                old = flow.id
                if old not in renumbered:
                    renumbered[old] = writer.next_flow_id()
                flow.id = renumbered[old]
                flow.notes.append(RENUMBERED)
                send(("renumbered", old, flow.id))
            if flow.state is FlowState.PENDING:
                copies[flow.id] = flow
            else:
                copies.pop(flow.id, None)
                if renumbered:  # nearly always empty: not rebuilt for every flow
                    renumbered = {old: new for old, new in renumbered.items() if new != flow.id}
            writer.submit(flow, None if flow.state is FlowState.PENDING else _acknowledge(acks, seq),
                          _tell_turns(send, flow.id) if turns else None, resume=resume, first_chunk=first_chunk)
        elif kind == "progress":
            _, flow_id, head, chunks = message
            copy = copies.get(renumbered.get(flow_id, flow_id))
            if copy is not None:
                if head is not None:
                    copy.status, copy.response_headers, copy.streamed, copy.ttfb_ms = head
                copy.chunks += paired_chunks(chunks)
        elif kind == "ids":
            send(("ids", [writer.next_flow_id() for _ in range(message[1])]))
        elif kind == "turn_id":
            waiting = asked.get(message[1])
            if waiting is not None:
                waiting[1].append(message[2])
                waiting[0].set()
        elif kind == "job":
            threading.Thread(target=run_job, args=message[1:], name="toolwire-writer-job", daemon=True).start()
        elif kind == "stop":
            break
    # Stopped, or the forwarder is gone (killed): write what was sent, then end.
    writer.stop()
    reported.set()
    send(("last_error", writer.last_error))
    send(("stopped",))
    sock.close()
    return 0


def _acknowledge(acks: list[tuple[Any, ...]], seq: int) -> Callable[[FlowRow], None]:
    """The on_saved of write `seq`: its acknowledgement, sent with the transaction's others."""
    return lambda row: acks.append(("saved", seq, row))


def _tell_turns(send: Callable[[tuple[Any, ...]], None], socket_id: int) -> TurnSaved:
    return lambda turn, row: send(("turn", socket_id, turn, row))


# -- the client, in the forwarder's process ----------------------------------------------------

@dataclass(slots=True)
class _Open:
    """A flow still open: whether its request row was sent, and how much of its stream."""

    flow: Flow
    since: float  # monotonic time it was taken from the inbox
    requested: bool = False  # its request row sent
    sent: int = 0  # chunks sent, counted from the stream's first (those taken out included)
    base: int = 0  # chunks taken out of flow.chunks once on disk (a socket's): flow.chunks[0] is chunk `base`
    head: bool = False  # its status and headers sent


@dataclass(slots=True)
class _Final:
    """A finished flow sent and not acknowledged yet: sent again to a new writer process."""

    flow: Flow
    on_saved: Callable[[FlowRow], None] | None
    first_chunk: int | None  # a socket's: the index of its flow.chunks[0]


@dataclass(slots=True)
class _Job:
    name: str
    args: tuple[Any, ...]
    done: threading.Event = field(default_factory=threading.Event)
    result: object = None
    error: str | None = None


_Submitted = tuple[Flow, bool, Callable[[FlowRow], None] | None, "TurnSaved | None"]


class WriterProcess:
    """`Writer`'s interface (next_flow_id, submit, job, unwritten, backfill, stop, last_error) for a
    writer in a process of its own. The forwarder's threads never take a lock here: submit() and
    next_flow_id() are deque operations and an Event set; the sender and reader threads share the
    rest under `_lock`."""

    def __init__(self, path: Path, *, analyse_apart: int) -> None:
        self.path = path
        self.last_error: str | None = None
        self._apart = analyse_apart
        self._wake = threading.Event()  # something to send
        self._inbox: deque[_Submitted] = deque()
        self._ids: deque[int] = deque()
        self._provisional = itertools.count(PROVISIONAL)
        self._lock = threading.Lock()
        self._highest = 0  # the highest id ever handed in: a new writer process hands out ids above it
        self._open: dict[int, _Open] = {}
        self._finals: dict[int, _Final] = {}  # by sequence number
        self._seq = itertools.count(1)
        self._turns: dict[int, TurnSaved] = {}  # socket id -> told of its turns
        self._jobs: dict[int, _Job] = {}  # not answered yet
        self._unsent: deque[int] = deque()  # jobs to send
        self._answers: deque[tuple[Any, ...]] = deque()  # to the writer process's questions
        self._job_ids = itertools.count(1)
        self._stopping = False
        self._sock: socket.socket | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._started_at: float | None = None
        self._starts_while_stopping = 0
        self._reader: threading.Thread | None = None
        self._stopped = False  # the writer process said it ended as asked
        # The sender waits for its next tick, not for a wake-up: what is submitted meanwhile goes with it.
        self._ticking = False
        self._sender = threading.Thread(target=self._send_loop, name="toolwire-store-sender", daemon=True)
        self._sender.start()

    # -- what other threads call -----------------------------------------------------------

    def next_flow_id(self) -> int:
        try:
            flow_id = self._ids.popleft()
        except IndexError:
            flow_id = next(self._provisional)
        left = len(self._ids)
        if left < IDS_LOW and (left < IDS_SHORT or not self._ticking) and not self._wake.is_set():
            self._wake.set()
        return flow_id

    def submit(self, flow: Flow, on_saved: Callable[[FlowRow], None] | None, on_turn: TurnSaved | None = None) -> None:
        # Pickled by the sender thread: a pending flow's request side (the forwarder goes on filling
        # in the rest), a finished flow whole (the forwarder is done with it).
        self._inbox.append((flow, flow.state is not FlowState.PENDING, on_saved, on_turn))
        if not self._ticking and not self._wake.is_set():  # a burst sets it once: Event.set takes a lock each time
            self._wake.set()

    def unwritten(self) -> int:
        # No lock: asked of every line mcp-stdio relays, and two lengths read under the GIL are enough.
        return len(self._inbox) + len(self._finals)

    def job(self, name: str, *args: object) -> object:
        job = _Job(name, args)
        with self._lock:
            job_id = next(self._job_ids)
            self._jobs[job_id] = job
            self._unsent.append(job_id)
        self._wake.set()
        job.done.wait()
        if job.error is not None:
            raise StoreError(job.error)
        return job.result

    @property
    def pid(self) -> int | None:
        """The writer process's pid, None while none runs."""
        with self._lock:
            return None if self._proc is None else self._proc.pid

    def backfill(self) -> None:
        """Nothing: each writer process backfills as it starts."""

    def stop(self) -> None:
        """Write everything submitted, then end the writer process and the threads."""
        self._stopping = True
        self._wake.set()
        self._sender.join()

    # -- the sender thread -----------------------------------------------------------------

    def _send_loop(self) -> None:
        next_progress = time.monotonic()
        while True:
            sock = self._connected()
            if sock is None:
                if self._stopping and self._give_up():
                    return
                self._bound()
                self._wake.wait(RESTART_PAUSE)
                self._wake.clear()
                continue
            timeout = max(0.0, next_progress - time.monotonic()) if self._open else None
            self._ticking = timeout is not None
            # What came while no writer process ran is waiting already: its wake-up was taken above.
            waiting = self._inbox or self._unsent or self._answers
            if not self._stopping and not waiting and self._wake.wait(timeout):
                # Let a burst gather: one wake-up and one write for many flows.
                time.sleep(tuning.BATCH_WINDOW)
            self._wake.clear()
            stopping = self._stopping
            with self._lock:  # the jobs first: the flows submitted before them are in the inbox by now
                want = IDS_AHEAD - len(self._ids) if len(self._ids) < IDS_LOW else 0
                jobs = [("job", job_id, self._jobs[job_id].name, self._jobs[job_id].args) for job_id in self._unsent]
                self._unsent.clear()
            messages: list[tuple[Any, ...]] = [("ids", want)] if want else []
            while self._answers:
                messages.append(self._answers.popleft())
            messages += self._submitted()
            if time.monotonic() >= next_progress or stopping or jobs:
                next_progress = time.monotonic() + tuning.PROGRESS_INTERVAL / 2
                # A job (flush, above all) is about everything submitted before it: every open flow's
                # request row, due or not, goes ahead of it.
                messages += self._progress(stopping or bool(jobs))
            messages += jobs
            if stopping:
                messages.append(("stop",))
            try:
                if messages:
                    _send(sock, messages)
            except OSError:
                self._lost(sock)
                continue
            if stopping and self._ended():
                return

    def _submitted(self) -> list[tuple[Any, ...]]:
        taken: list[_Submitted] = []
        while self._inbox:
            taken.append(self._inbox.popleft())
        finished = {id(flow) for flow, final, _, _ in taken if final}
        messages: list[tuple[Any, ...]] = []
        now = time.monotonic()
        with self._lock:
            for flow, final, on_saved, on_turn in taken:
                if on_turn is not None:
                    self._turns[flow.id] = on_turn
                if not final:
                    if id(flow) not in finished:  # finished already: its final write is all it needs
                        self._open[flow.id] = _Open(flow, now)  # its request row goes with _progress
                    continue
                opened = self._open.pop(flow.id, None)
                first = opened.base if opened is not None and flow.websocket else None
                seq = next(self._seq)
                self._finals[seq] = _Final(flow, on_saved, first)
                messages.append(("submit", seq, flow, None, first, on_turn is not None))
        return messages

    def _progress(self, everything: bool) -> list[tuple[Any, ...]]:
        """The request rows of the flows open for PENDING_AFTER (all of them when `everything`), and
        what the open flows relayed since the last time."""
        messages: list[tuple[Any, ...]] = []
        due = time.monotonic() - PENDING_AFTER
        with self._lock:
            for flow_id, opened in self._open.items():
                flow = opened.flow
                if not opened.requested:
                    if opened.since > due and not everything:
                        continue
                    opened.requested = True
                    messages.append(("submit", 0, as_pending(flow), None, None, flow_id in self._turns))
                chunks = flow.chunks
                count = len(chunks)  # the forwarder only appends: these are settled
                start = opened.sent - opened.base
                if count > start:
                    head = None if opened.head else (flow.status, list(flow.response_headers), flow.streamed, flow.ttfb_ms)
                    messages.append(("progress", flow_id, head, chunk_pairs(chunks[start:count])))
                    opened.sent, opened.head = opened.base + count, True
        return messages

    def _bound(self) -> None:
        """While no writer process runs: at most BACKLOG_FLOWS finished flows kept, the oldest
        dropped first (while one runs, what waits for it is bounded as the writer's queue is)."""
        with self._lock:
            over = len(self._finals) + sum(final for _, final, _, _ in self._inbox) - tuning.BACKLOG_FLOWS
            dropped = [self._finals.pop(seq).flow.id for seq in list(self._finals)[:max(0, over)]]
        while over > len(dropped) and self._inbox:
            flow, final, _, _ = self._inbox.popleft()
            if final:
                dropped.append(flow.id)
        if dropped:
            print(f"toolwire-inspect: store: BACKLOG FULL, dropped {len(dropped)} unwritten flows "
                  f"(#{dropped[0]}..#{dropped[-1]}): the writer process has been down for a while", file=sys.stderr)

    # -- the writer process's life ---------------------------------------------------------

    def _connected(self) -> socket.socket | None:
        """The socket to the writer process, started (again) when there is none; None while a
        dead one is being reaped or the last start was less than RESTART_PAUSE ago."""
        with self._lock:
            if self._sock is not None:
                return self._sock
            if self._proc is not None:
                return None  # its reader thread reaps it, then wakes this thread
            if self._started_at is not None and time.monotonic() - self._started_at < RESTART_PAUSE:
                return None
            if self._stopping:
                self._starts_while_stopping += 1
            self._started_at = time.monotonic()
            ours, theirs = socket.socketpair()
            try:
                # A session of its own: Ctrl-C at the terminal is the forwarder's, which ends it.
                self._proc = subprocess.Popen(
                    [sys.executable, "-m", "inspector.store.writer_process", str(self.path), str(theirs.fileno()),
                     str(os.getpid()), str(self._apart), str(self._highest + 1)],
                    pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, start_new_session=True)
            except OSError as exc:
                ours.close()
                self._problem(f"cannot start the writer process ({exc}); flows are kept in memory and retried")
                return None
            finally:
                theirs.close()
            self._sock = ours
            self._reader = threading.Thread(target=self._read_loop, args=(ours, self._proc),
                                            name="toolwire-store-reader", daemon=True)
            self._reader.start()
            # What the last one did not commit (for the first one: nothing).
            for opened in self._open.values():
                opened.sent, opened.head = opened.base, False
            again: list[tuple[Any, ...]] = [("submit", 0, as_pending(opened.flow), opened.base, None, flow_id in self._turns)
                                            for flow_id, opened in self._open.items() if opened.requested]
            again += [("submit", seq, final.flow, None, final.first_chunk, final.flow.id in self._turns)
                      for seq, final in self._finals.items()]
            self._unsent = deque(self._jobs)  # the jobs not answered, in order
        try:
            _send(ours, [("ids", IDS_AHEAD), *again])
        except OSError:
            self._lost(ours)
            return None
        return ours

    def _give_up(self) -> bool:
        """Stopping with no writer process: after a few starts, what is left is lost, and said so."""
        with self._lock:
            if self._proc is not None or self._starts_while_stopping < 3:
                return False
            lost = [final.flow.id for final in self._finals.values()]
            jobs, self._jobs = list(self._jobs.values()), {}
        if lost:
            print(f"toolwire-inspect: store: closed with {len(lost)} flows never stored "
                  f"(#{lost[0]}..#{lost[-1]}): {self.last_error}", file=sys.stderr)
        for job in jobs:
            job.error = self.last_error or "the writer process is not running"
            job.done.set()
        return True

    def _lost(self, sock: socket.socket) -> None:
        with self._lock:
            if self._sock is sock:
                self._sock = None
        sock.close()

    def _problem(self, problem: str) -> None:
        if problem != self.last_error:
            print(f"toolwire-inspect: store: {problem}", file=sys.stderr)
        self.last_error = problem

    def _ended(self) -> bool:
        """Wait for the writer process to end; True when it ended as asked (it has said so, and
        reported what it could not write), False when it died first (the loop starts another)."""
        with self._lock:
            reader = self._reader
        if reader is not None:
            reader.join()
        return self._stopped

    # -- the reader thread -----------------------------------------------------------------

    def _read_loop(self, sock: socket.socket, proc: subprocess.Popen[bytes]) -> None:
        stopped = False
        try:
            for message in _messages(sock):
                try:
                    stopped = self._receive(message) or stopped
                except Exception as exc:  # a bug here must not leave the writer process unreplaced
                    print(f"toolwire-inspect: store: a message from the writer process failed: {exc!r}",
                          file=sys.stderr)
        except (OSError, pickle.UnpicklingError, EOFError):
            pass  # the writer process died: as at the end of its messages
        proc.wait()
        with self._lock:
            self._proc = None
            self._stopped = stopped
            if self._sock is sock:
                self._sock = None
            if not stopped:
                self._problem(f"the writer process ended (exit {proc.returncode}); starting another")
        sock.close()
        self._wake.set()

    def _receive(self, message: tuple[Any, ...]) -> bool:
        """Take one message from the writer process; True for its last."""
        kind = message[0]
        if kind == "saved":
            _, seq, row = message
            with self._lock:
                final = self._finals.pop(seq, None)
                self._highest = max(self._highest, row.id)
                if final is not None:
                    self._turns.pop(final.flow.id, None)
            if final is not None and final.on_saved is not None:
                self._tell(final.on_saved, row)
        elif kind == "ids":
            with self._lock:
                self._highest = max(self._highest, *message[1])
            self._ids.extend(message[1])
        elif kind == "turn":
            _, socket_id, turn, row = message
            with self._lock:
                on_turn = self._turns.get(socket_id)
                self._highest = max(self._highest, row.id)
            if on_turn is not None:
                self._tell(on_turn, turn, row)
        elif kind == "turn_id":  # answered by the sender, soon: only it writes to the socket
            self._answers.append(("turn_id", message[1], self.next_flow_id()))
            self._wake.set()
        elif kind == "on_disk":
            _, flow_id, count = message
            with self._lock:
                opened = self._open.get(flow_id)
                if opened is not None and count > opened.base:
                    # On disk: out of the forwarder's memory (it only appends, after these).
                    del opened.flow.chunks[: count - opened.base]
                    opened.base = count
        elif kind == "renumbered":
            _, old, new = message
            with self._lock:
                self._highest = max(self._highest, new)
                opened = self._open.pop(old, None)
                if opened is not None:  # its final write goes under its new id, with the note
                    opened.flow.id = new
                    opened.flow.notes.append(RENUMBERED)
                    self._open[new] = opened
                if old in self._turns:
                    self._turns[new] = self._turns.pop(old)
        elif kind == "job":
            _, job_id, result, error = message
            with self._lock:
                job = self._jobs.pop(job_id, None)
            if job is not None:
                job.result, job.error = result, error
                job.done.set()
        elif kind == "last_error":
            if message[1] is None and self.last_error is not None and self.last_error.startswith("the writer process"):
                print("toolwire-inspect: store: writing again; the flows kept in memory are stored", file=sys.stderr)
            self.last_error = message[1]
        return kind == "stopped"

    @staticmethod
    def _tell(listener: Callable[..., None], *args: object) -> None:
        try:
            listener(*args)
        except Exception as exc:  # a listener's bug must not stop the reader
            print(f"toolwire-inspect: store listener failed: {exc!r}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
