"""The forwarder in a process of its own, for the TUI: rendering a 2 MB payload holds the UI
process's GIL for long stretches, and a forwarder sharing that GIL relays late (p99 9 → 15 ms
measured). The child owns the forwarder and the store's writer; the UI reads the store through a
read-only connection and hears what happened over the child's stdin/stdout.

Protocol: one JSON object per line in each direction (orjson never writes a raw newline), each a
typed frame below (`encode` / `decode`), its class named by its "kind".

    parent → child   the launch's Options (proxy/options.py), once, first (over a pipe, not argv,
                     since the upstream URL may carry credentials); then Replay (an edited
                     request's body in base64), Delete (flows, by id) and Stop. End of file means the parent is gone:
                     the child stops, so no orphan keeps the port (SIGKILL of the parent included).
    child → parent   Ready (what the header shows) or Failed; then Flows (ids started and
                     completed), Changed (ids were dropped: read the store again), Refused, Tunnelled, StoreHealth,
                     Replayed (the new flow's id, or the reason there is none) and Deleted.

The forwarder's side never waits on the pipe: its events only append an id to a bounded list,
and one sender thread writes what accumulated. When the UI reads slowly the lists overflow into a
single Changed (the store is the truth). Replay runs in the child: the credentials a client sent
live only in the forwarder's memory and the replay marker is signed with a key only the forwarder's
process knows; neither crosses the pipe."""

from __future__ import annotations

import base64
import gc
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

import orjson

from .flow import Mode, ReplayKind
from .proxy.options import Options, OtlpOptions, ProxyOptions
from .session import RouteShown

if TYPE_CHECKING:
    from .store.deletion import Deletion
    from .proxy import FlowEvent, Forwarder
    from .proxy.routes import Router

MAX_PENDING_IDS = 4096  # ids waiting for the UI before they give way to one "changed"
WATCH_INTERVAL = 0.5  # seconds between looks at the refusal count and the store's health
# Seconds flow ids gather before they are written: one frame and one wake-up for a burst (the UI
# takes them every 150 ms), not a write for each request's start and end.
GATHER = 0.05
START_TIMEOUT = 30.0  # seconds for the child to open the store and listen
STOP_TIMEOUT = 3.0  # seconds the parent waits for a clean stop before killing the child
STDERR_LINES = 20  # the child's last stderr lines, kept to say why it died


# -- the frames ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ready:
    client_url: str
    base_url: str
    upstream: str
    upstream_shown: str
    mode: str
    translate: str | None
    token: str | None
    session_id: int | None
    ignored: tuple[str, ...] = ()  # a config file found and not applied (proxy/routes.RouteTable.ignored)
    routes: tuple[RouteShown, ...] = ()  # when it serves several

    def __post_init__(self) -> None:
        object.__setattr__(self, "ignored", tuple(self.ignored))
        object.__setattr__(self, "routes", tuple(r if isinstance(r, RouteShown) else RouteShown(**r)
                                                 for r in self.routes))


@dataclass(frozen=True, slots=True)
class Failed:
    message: str
    browse: bool = False  # only the default routes failed to listen (another instance has the port)


@dataclass(frozen=True, slots=True)
class Flows:
    started: list[int]
    completed: list[int]


@dataclass(frozen=True, slots=True)
class Changed:
    """Ids were dropped: read the store again."""


@dataclass(frozen=True, slots=True)
class Refused:
    count: int
    last: str | None


@dataclass(frozen=True, slots=True)
class Tunnelled:
    """CONNECT tunnels relayed untouched and unrecorded (proxy/connect.py): how many, and
    (host:port, tunnels) per target, the most first."""

    count: int
    hosts: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "hosts", tuple((host, count) for host, count in self.hosts))


@dataclass(frozen=True, slots=True)
class StoreHealth:
    problem: str | None


@dataclass(frozen=True, slots=True)
class Otlp:
    """The live OpenTelemetry export's counts, when they changed."""

    exported: int
    failed: int
    dropped: int


@dataclass(frozen=True, slots=True)
class Replayed:
    request: int
    flow: int | None = None
    reason: str | None = None  # why there is no new flow


@dataclass(frozen=True, slots=True)
class Deleted:
    """What a Delete did (store/deletion.Deletion), or why it did nothing."""

    request: int
    deleted: tuple[int, ...] = ()
    in_progress: tuple[int, ...] = ()
    missing: tuple[int, ...] = ()
    reason: str | None = None  # the store could not be written

    def __post_init__(self) -> None:
        for name in ("deleted", "in_progress", "missing"):
            object.__setattr__(self, name, tuple(getattr(self, name)))


@dataclass(frozen=True, slots=True)
class Stopped:
    """Made by the parent, not sent: the child is gone."""

    reason: str


@dataclass(frozen=True, slots=True)
class Replay:
    request: int
    flow: int
    replay_kind: str  # a ReplayKind's value ("kind" names the frame)
    body: str | None = None  # base64 of an edited request's body


@dataclass(frozen=True, slots=True)
class Delete:
    """Delete these stored flows: the child owns the store's writer (the UI reads it read-only)."""

    request: int
    flows: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "flows", tuple(self.flows))


@dataclass(frozen=True, slots=True)
class Stop:
    pass


Frame = (Ready | Failed | Flows | Changed | Refused | Tunnelled | StoreHealth | Otlp | Replayed | Deleted | Stopped
         | Replay | Delete | Stop)
# The answer a request to the child waits for (ForwarderProcess._ask).
A = TypeVar("A", Replayed, Deleted)
_KINDS: dict[str, type[Any]] = {kind.__name__.lower(): kind for kind in (
    Ready, Failed, Flows, Changed, Refused, Tunnelled, StoreHealth, Otlp, Replayed, Deleted, Stopped, Replay, Delete,
    Stop)}


class FrameError(ValueError):
    """A line that is not a frame of this protocol."""


def encode(frame: Frame) -> bytes:
    # No frame has a field named "kind": it would overwrite the frame's own.
    return orjson.dumps({"kind": type(frame).__name__.lower(), **asdict(frame)}) + b"\n"


def decode(line: bytes) -> Frame:
    try:
        data = orjson.loads(line)
        return _KINDS[data.pop("kind")](**data)
    except (orjson.JSONDecodeError, AttributeError, KeyError, TypeError) as exc:
        raise FrameError(f"not a frame: {exc}") from None


# -- the child ----------------------------------------------------------------------------------


class Outbox:
    """What the child tells the parent, written by one thread of its own."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self.forwarder: Forwarder | Router | None = None  # set once built: it reports to flow_event
        self.live: Any = None  # the live OTLP export (otlp/live.LiveExport), when there is one
        self._otlp: Otlp | None = None  # the counts last sent
        self._changed = threading.Condition()
        self._started: list[int] = []
        self._completed: list[int] = []
        self._overflow = False
        self._frames: deque[Frame] = deque()
        self._closed = False
        self._refused = 0
        self._tunnelled = 0
        self._problem: str | None = None
        self._thread = threading.Thread(target=self._run, name="toolwire-child-outbox", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def flow_event(self, event: FlowEvent) -> None:
        """The forwarder's `on_event` (its thread, or the store writer's): an append, and a wake-up
        for the first id only (the writer gathers the rest)."""
        with self._changed:
            if self._overflow:
                return
            first = not self._started and not self._completed
            (self._started if event.kind == "started" else self._completed).append(event.flow.id)
            if len(self._started) + len(self._completed) > MAX_PENDING_IDS:
                self._started, self._completed, self._overflow = [], [], True
            if first:
                self._changed.notify()

    def send(self, frame: Frame) -> None:
        with self._changed:
            self._frames.append(frame)
            self._changed.notify()

    def close(self, timeout: float = 1.0) -> None:
        """Write what is pending, then stop the thread."""
        with self._changed:
            self._closed = True
            self._changed.notify()
        self._thread.join(timeout)

    def _take(self) -> list[Frame]:
        frames = list(self._frames)
        self._frames.clear()
        if self._overflow:
            frames.append(Changed())
        elif self._started or self._completed:
            frames.append(Flows(self._started, self._completed))
        self._started, self._completed, self._overflow = [], [], False
        return frames

    def _watch(self) -> list[Frame]:
        """The refusal and tunnel counts, the store's health and the OTLP export's counts, when
        they changed: read here, not on the loop."""
        frames: list[Frame] = []
        if self.forwarder is None:  # still being built
            return frames
        access = self.forwarder.access
        if access.refused != self._refused:
            self._refused = access.refused
            frames.append(Refused(access.refused, access.last_refusal))
        connect = self.forwarder.connect
        if connect is not None and connect.tunnelled != self._tunnelled:
            self._tunnelled = connect.tunnelled
            frames.append(Tunnelled(connect.tunnelled, connect.tunnelled_hosts()))
        problem = self.forwarder.store.last_error
        if problem != self._problem:
            self._problem = problem
            frames.append(StoreHealth(problem))
        if self.live is not None:
            c = self.live.counts
            counts = Otlp(c.exported, c.failed, c.dropped)
            if counts != self._otlp:
                self._otlp = counts
                frames.append(counts)
        return frames

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(
                    lambda: self._closed or self._frames or self._overflow or self._started or self._completed,
                    WATCH_INTERVAL)
                if self._started or self._completed:  # a frame or the close cuts the gathering short
                    self._changed.wait_for(lambda: self._closed or self._frames, GATHER)
                frames, closed = self._take(), self._closed
            frames += self._watch()
            try:
                if frames:
                    self._stream.write(b"".join(map(encode, frames)))
                    self._stream.flush()
            except (OSError, ValueError):
                return  # the parent is gone; the end of stdin stops the child
            if closed:
                return


def serve(commands: IO[bytes], events: IO[bytes]) -> int:
    """The child's life: read the config, start, answer commands until told to stop or the
    parent goes away, then stop the forwarder (recording what is in flight) and the store."""
    # Here, not at the top: the UI process imports this module for ForwarderProcess alone, and
    # the forwarder's imports (aiohttp, uvicorn) would only slow its first frame.
    from .cli.common import route_table
    from .proxy import ForwarderError
    from .proxy import routes as routing
    from .proxy.server import ListenError
    from .replay import ReplayError, replay_stored
    from .store import Store, StoreError

    line = commands.readline()
    if not line:
        return 0  # the parent went away before saying what to run
    options = Options.from_json(orjson.loads(line))
    try:
        store = Store(options.store, writer_process=True)
    except StoreError as exc:
        events.write(encode(Failed(str(exc))))
        events.flush()
        return 2
    try:
        forwarder = None
        try:
            table = route_table(options)
            outbox = Outbox(events)
            live = outbox.live = _live_export(options.otlp, store)

            def on_event(event: FlowEvent) -> None:
                outbox.flow_event(event)
                if live is not None and event.kind == "completed":
                    live.flow_saved(event.flow)

            forwarder = routing.open_forwarder(table, options, store=store, on_event=on_event)
            outbox.forwarder = forwarder
            forwarder.start()
        except (ForwarderError, StoreError, ValueError) as exc:  # ValueError: the OTLP export cannot be made
            # The default routes nobody asked for, on a port another instance holds: the UI browses.
            browse = isinstance(exc.__cause__, ListenError) and getattr(forwarder, "source", None) == "defaults"
            events.write(encode(Failed(str(exc), browse)))
            events.flush()
            return 2
        # A session of routes has no one upstream nor mode; it lists its routes instead.
        if isinstance(forwarder, routing.Router):
            upstream, mode = forwarder.upstream_shown, Mode.PASSTHROUGH.value
            routes = tuple(RouteShown(route.route or "", route.client_url, route.upstream, route.translate,
                                      forwarder.source_of(route.route)) for route in forwarder.all)
        else:
            upstream, mode, routes = forwarder.upstream, forwarder.mode.value, ()
        events.write(encode(Ready(forwarder.client_url, forwarder.base_url, upstream, forwarder.upstream_shown, mode,
                                  forwarder.translate, forwarder.access.token, store.session_id, table.ignored,
                                  routes)))
        events.flush()
        outbox.start()
        # What is alive now lives as long as the process: out of the collector's generations, so that a full
        # collection under load walks only what the requests made.
        gc.freeze()

        def replay(command: Replay) -> None:
            try:
                outbox.send(Replayed(command.request, replay_stored(
                    store, forwarder, command.flow, kind=ReplayKind(command.replay_kind),
                    body=None if command.body is None else base64.b64decode(command.body),
                    key_hosts=options.key_hosts)))
            except ReplayError as exc:
                outbox.send(Replayed(command.request, reason=str(exc)))
            except Exception as exc:  # a bug must still answer: the UI is waiting for this reply
                outbox.send(Replayed(command.request, reason=f"replay failed: {exc!r}"))

        def delete(command: Delete) -> None:
            try:
                done = store.delete(command.flows)
            except StoreError as exc:
                outbox.send(Deleted(command.request, reason=str(exc)))
                return
            except Exception as exc:  # a bug must still answer: the UI is waiting for this reply
                outbox.send(Deleted(command.request, reason=f"delete failed: {exc!r}"))
                return
            outbox.send(Deleted(command.request, done.deleted, done.in_progress, done.missing))

        try:
            for line in commands:
                command = decode(line)
                if isinstance(command, Stop):
                    break
                if isinstance(command, Replay):
                    threading.Thread(target=replay, args=(command,), name="toolwire-child-replay",
                                     daemon=True).start()
                elif isinstance(command, Delete):  # off this loop: the writer may be waiting on a lock
                    threading.Thread(target=delete, args=(command,), name="toolwire-child-delete",
                                     daemon=True).start()
        finally:
            # Nobody reads this process's output any more (or soon will not: a parent killed outright
            # closed its pipes). A warning printed while stopping must not fail the stop with a
            # BrokenPipeError and leave the flows in flight unrecorded.
            quiet = os.open(os.devnull, os.O_WRONLY)
            os.dup2(quiet, 2)
            os.close(quiet)
            forwarder.stop()
            if live is not None:
                live.close_after(store)
            outbox.close()
    finally:
        store.close()
    return 0


def _live_export(otlp: OtlpOptions | None, store: Any) -> Any:
    """The LiveExport the config asks for, or None; a ValueError saying why it cannot be made."""
    if not otlp:
        return None
    from .otlp import OtelMissing, require

    try:
        require()
    except OtelMissing as exc:
        raise ValueError(str(exc)) from exc
    from .otlp.live import start_live

    return start_live(otlp.endpoint or None, content=otlp.content, openinference=otlp.openinference, store=store)


def main() -> None:
    # stdout is the event channel: nothing else may write there. Its descriptor moves to one that
    # no process started from here inherits (the store's analysis worker would otherwise hold the
    # pipe open, and the parent would not see this process end), and fd 1 becomes stderr.
    events = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    # A SIGTERM ends the command loop like a stop, so in-flight flows are still recorded.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        code = serve(sys.stdin.buffer, events)
    except KeyboardInterrupt:
        code = 130
    # The forwarder and the store are closed: the interpreter's own teardown (collecting every
    # module) would only keep the parent's quit waiting.
    sys.stderr.flush()
    os._exit(code)


# -- the parent ---------------------------------------------------------------------------------


class ChildFailed(Exception):
    """The forwarder's process could not start; the message says why, as the forwarder's would.
    `browse`: only the default routes failed to listen (another instance has the port)."""

    def __init__(self, message: str, browse: bool = False) -> None:
        super().__init__(message)
        self.browse = browse


@dataclass(slots=True)
class RemoteAccess:
    """What the header reads of the child's access policy, kept current by its frames."""

    token: str | None
    refused: int = 0
    last_refusal: str | None = None


@dataclass(slots=True)
class ForwarderProcess:
    """A forwarder running in a child process, seen from the parent (a session.Session).
    Construct with `start()`."""

    upstream: str
    upstream_shown: str
    client_url: str
    base_url: str
    mode: Mode
    translate: str | None
    access: RemoteAccess
    session_id: int | None
    all: tuple[RouteShown, ...] = ()  # the routes, when it serves several (proxy/routes.py)
    # A config file found and not applied (proxy/routes.RouteTable.ignored): the UI says so.
    ignored: tuple[str, ...] = ()
    # Proxy mode's options as launched: the header tells a user who gave them what to set.
    proxy: ProxyOptions = ProxyOptions()
    store_problem: str | None = None
    # CONNECT tunnels relayed unrecorded: how many, and (host:port, tunnels) the most first.
    tunnelled: tuple[int, tuple[tuple[str, int], ...]] = (0, ())
    # The live OTLP export's counts (exported, failed, dropped) as the child last sent them.
    otlp: Otlp | None = None
    # "exit status N: last stderr line" once the child is gone; None while it runs.
    stopped: str | None = None
    _process: subprocess.Popen[bytes] | None = None
    _on_frame: Callable[[Frame], None] | None = None
    _write_lock: threading.Lock = field(default_factory=threading.Lock)
    _replies: dict[int, Replayed | Deleted] = field(default_factory=dict)
    _replied: threading.Condition = field(default_factory=threading.Condition)
    _requests: int = 0
    _stderr: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_LINES))
    _stopping: bool = False

    @classmethod
    def launch(cls, options: Options) -> ForwarderProcess:
        """Launch the child serving `options` (sent once, first, over its stdin) and return at
        once; `wait_ready()` before using it. Without an upstream and routes, the child serves the
        default routes."""
        process = subprocess.Popen(
            [sys.executable, "-m", "inspector.child"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # Its own session: the terminal's ^C and ^Z reach the UI, which stops the child in order.
            start_new_session=True)
        assert process.stdin is not None
        if options.store is not None:  # the child's working directory is this one, but say it whole
            options = replace(options, store=str(Path(options.store).resolve()))
        try:
            process.stdin.write(orjson.dumps(options.to_json()) + b"\n")
            process.stdin.flush()
        except OSError:
            pass  # it died already: wait_ready() says why
        return cls(upstream=options.upstream or "", upstream_shown="", client_url="", base_url="",
                   mode=Mode.PASSTHROUGH, translate=options.translate, access=RemoteAccess(None), session_id=None,
                   proxy=options.proxy, _process=process)

    @classmethod
    def start(cls, options: Options, *, timeout: float = START_TIMEOUT) -> ForwarderProcess:
        """`launch()` and `wait_ready()`."""
        child = cls.launch(options)
        child.wait_ready(timeout)
        return child

    def wait_ready(self, timeout: float = START_TIMEOUT) -> None:
        """Wait until the child listens and learn what it listens on; a ChildFailed says why it
        could not (the forwarder's own message: a bad upstream, a port in use, ...)."""
        process = self._process
        assert process is not None and process.stdout is not None
        first = _read_line(process.stdout, timeout)
        try:
            frame: Frame | None = decode(first) if first else None
        except FrameError:
            frame = None
        if not isinstance(frame, Ready):
            browse = False
            if isinstance(frame, Failed):
                message, browse = frame.message, frame.browse
            else:
                message = f"the forwarder process did not start ({_explain(process, timeout)})"
            self._stopping = True
            _end(process)
            raise ChildFailed(message, browse)
        self.upstream, self.upstream_shown = frame.upstream, frame.upstream_shown
        self.client_url, self.base_url = frame.client_url, frame.base_url
        self.mode, self.translate = Mode(frame.mode), frame.translate
        self.access, self.session_id = RemoteAccess(frame.token), frame.session_id
        self.all, self.ignored = frame.routes, frame.ignored
        threading.Thread(target=self._read_stderr, name="toolwire-child-stderr", daemon=True).start()
        threading.Thread(target=self._read_events, name="toolwire-child-events", daemon=True).start()

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    def listen(self, on_frame: Callable[[Frame], None] | None) -> None:
        """Hand every later frame (Flows, Changed, Stopped) to `on_frame`, on the reader thread."""
        self._on_frame = on_frame

    def replay(self, flow_id: int, *, kind: ReplayKind = ReplayKind.AS_RECORDED, body: bytes | None = None,
               timeout: float = 600.0) -> int:
        """Ask the child to replay a stored flow (`body`: the edited request, for EDITED); the new
        flow's id, or a ReplayError."""
        from .replay import ReplayError

        reply = self._ask(lambda request: Replay(request, flow_id, kind.value,
                                                 None if body is None else base64.b64encode(body).decode()),
                          Replayed, timeout, ReplayError, "", "the replay ended")
        if reply.flow is None:
            raise ReplayError(reply.reason or "replay failed")
        return reply.flow

    def delete(self, flow_ids: Collection[int], *, timeout: float = 60.0) -> Deletion:
        """Ask the child, which owns the store's writer, to delete stored flows (Store.delete); what
        it did, or a StoreError."""
        from .store import StoreError
        from .store.deletion import Deletion

        reply = self._ask(lambda request: Delete(request, tuple(flow_ids)), Deleted, timeout, StoreError,
                          ": nothing deleted", "deleting")
        if reply.reason is not None:
            raise StoreError(reply.reason)
        return Deletion(reply.deleted, reply.in_progress, reply.missing)

    def _ask(self, frame: Callable[[int], Frame], answer: type[A], timeout: float, error: type[Exception],
             unsent: str, before: str) -> A:
        """Send the child the request `frame` makes of a new request number and wait for its answer
        of type `answer`; `error` says why there is none (not running, too slow, stopped `before`)."""
        with self._replied:
            self._requests += 1
            request = self._requests
        if not self._send(frame(request)):
            raise error(f"the forwarder is not running ({self.stopped}){unsent}")
        reply = self._reply(request, timeout)
        if reply is None:
            raise error(f"no answer from the forwarder within {timeout:.0f} s")
        if not isinstance(reply, answer):
            raise error(f"the forwarder stopped before {before} ({self.stopped})")
        return reply

    def _reply(self, request: int, timeout: float) -> Replayed | Deleted | Stopped | None:
        """The child's answer to `request`; Stopped if it ended first, None if none came in time."""
        with self._replied:
            if not self._replied.wait_for(lambda: request in self._replies or self.stopped is not None, timeout):
                return None
            reply = self._replies.pop(request, None)
        return Stopped(self.stopped or "") if reply is None else reply

    def request_stop(self) -> None:
        """Ask the child to stop, without waiting."""
        if not self._stopping:
            self._stopping = True
            self._send(Stop())

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Ask the child to stop and wait for it (killed after `timeout`)."""
        self.request_stop()
        assert self._process is not None
        _end(self._process, timeout)

    def _send(self, command: Frame) -> bool:
        assert self._process is not None and self._process.stdin is not None
        with self._write_lock:
            try:
                self._process.stdin.write(encode(command))
                self._process.stdin.flush()
            except (OSError, ValueError):
                return False
        return True

    def _read_events(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        for line in self._process.stdout:
            try:
                frame = decode(line)
            except FrameError:
                continue  # not a frame of ours (the child's own output goes to stderr): nothing to act on
            if isinstance(frame, Refused):
                self.access.refused, self.access.last_refusal = frame.count, frame.last
            elif isinstance(frame, Tunnelled):
                self.tunnelled = (frame.count, frame.hosts)
            elif isinstance(frame, StoreHealth):
                self.store_problem = frame.problem
            elif isinstance(frame, Otlp):
                self.otlp = frame
            elif isinstance(frame, (Replayed, Deleted)):
                with self._replied:
                    self._replies[frame.request] = frame
                    self._replied.notify_all()
            elif self._on_frame is not None:
                self._on_frame(frame)
        # The end of stdout: the child is gone (or going). Its stderr says why.
        status = self._process.wait()
        last = self._stderr[-1] if self._stderr else ""
        with self._replied:
            self.stopped = f"exit status {status}" + (f": {last}" if last else "")
            self._replied.notify_all()
        if self._on_frame is not None and not self._stopping:
            self._on_frame(Stopped(self.stopped))

    def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        # Kept, not printed: under the TUI nobody reads the terminal's stderr.
        for line in self._process.stderr:
            self._stderr.append(line.decode("utf-8", "replace").rstrip())


def _read_line(stream: IO[bytes], timeout: float) -> bytes:
    """One line from a pipe, or b"" when none came within `timeout` (or the pipe closed)."""
    deadline = time.monotonic() + timeout
    data = b""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        while not data.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                return b""
            chunk = os.read(stream.fileno(), 1)  # byte by byte: the rest stays for the reader thread
            if not chunk:
                return b""
            data += chunk
    return data


def _explain(process: subprocess.Popen[bytes], timeout: float) -> str:
    if process.poll() is None:
        return f"no answer within {timeout:.0f} s"
    assert process.stderr is not None
    last = process.stderr.read().decode("utf-8", "replace").strip().splitlines()
    return f"exit status {process.returncode}" + (f": {last[-1]}" if last else "")


def _end(process: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT) -> None:
    assert process.stdin is not None
    try:
        process.stdin.close()  # the end of its stdin: stop
    except OSError:
        pass
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


if __name__ == "__main__":
    main()

