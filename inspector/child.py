"""The forwarder in a process of its own, for the TUI: rendering a 2 MB payload holds the UI
process's GIL for long stretches, and a forwarder sharing that GIL relays late (p99 9 → 15 ms
measured). The child owns the forwarder and the store's writer; the UI reads the store through a
read-only connection and hears what happened over the child's stdin/stdout.

Protocol: one JSON object per line in each direction (orjson never writes a raw newline).

    parent → child   the config (first line; over a pipe, not argv, since the upstream URL may
                     carry credentials), then {"op": "replay", "request": N, "flow": ID,
                     "kind": "as recorded"|"fixed"|"edited", "body": BASE64|null} (an edited
                     request's body) and {"op": "stop"}. End of file means the parent is gone:
                     the child stops, so no orphan keeps the port (SIGKILL of the parent included).
    child → parent   {"kind": "ready", ...what the header shows...} or {"kind": "failed",
                     "message": ...}; then {"kind": "flows", "started": [...], "completed": [...]},
                     {"kind": "changed"} (ids were dropped: read the store again),
                     {"kind": "refused", "count": N, "last": ...}, {"kind": "store", "problem": ...},
                     {"kind": "otlp", "exported": N, "failed": N, "dropped": N} (the live export's counts),
                     {"kind": "replayed", "request": N, "flow": ID} or {..., "reason": ...}.

The forwarder's side never waits on the pipe: its events only append an id to a bounded list,
and one sender thread writes what accumulated. When the UI reads slowly the lists overflow into a
single "changed" (the store is the truth). Replay runs in the child: the credentials a client sent
live only in the forwarder's memory and the replay marker is signed with a key only the forwarder's
process knows; neither crosses the pipe."""

from __future__ import annotations

import base64
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import orjson

from .flow import Mode, ReplayKind

if TYPE_CHECKING:
    from .proxy import FlowEvent, Forwarder
    from .proxy.routes import Router

MAX_PENDING_IDS = 4096  # ids waiting for the UI before they give way to one "changed"
WATCH_INTERVAL = 0.5  # seconds between looks at the refusal count and the store's health
START_TIMEOUT = 30.0  # seconds for the child to open the store and listen
STOP_TIMEOUT = 3.0  # seconds the parent waits for a clean stop before killing the child
STDERR_LINES = 20  # the child's last stderr lines, kept to say why it died


def encode(frame: dict[str, Any]) -> bytes:
    # Paths in the config (a CA file, a store) travel as their text; orjson writes tuples as lists.
    return orjson.dumps(frame, default=str) + b"\n"


# -- the child ----------------------------------------------------------------------------------


class Outbox:
    """What the child tells the parent, written by one thread of its own."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self.forwarder: Forwarder | Router | None = None  # set once built: it reports to flow_event
        self.live: Any = None  # the live OTLP export (otlp/live.LiveExport), when there is one
        self._otlp: tuple[int, int, int] | None = None
        self._changed = threading.Condition()
        self._started: list[int] = []
        self._completed: list[int] = []
        self._overflow = False
        self._frames: deque[dict[str, Any]] = deque()
        self._closed = False
        self._refused = 0
        self._problem: str | None = None
        self._thread = threading.Thread(target=self._run, name="toolwire-child-outbox", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def flow_event(self, event: FlowEvent) -> None:
        """The forwarder's `on_event` (its thread, or the store writer's): an append, nothing more."""
        with self._changed:
            if not self._overflow:
                (self._started if event.kind == "started" else self._completed).append(event.flow.id)
                if len(self._started) + len(self._completed) > MAX_PENDING_IDS:
                    self._started, self._completed, self._overflow = [], [], True
            self._changed.notify()

    def send(self, frame: dict[str, Any]) -> None:
        with self._changed:
            self._frames.append(frame)
            self._changed.notify()

    def close(self, timeout: float = 1.0) -> None:
        """Write what is pending, then stop the thread."""
        with self._changed:
            self._closed = True
            self._changed.notify()
        self._thread.join(timeout)

    def _take(self) -> list[dict[str, Any]]:
        frames = list(self._frames)
        self._frames.clear()
        if self._overflow:
            frames.append({"kind": "changed"})
        elif self._started or self._completed:
            frames.append({"kind": "flows", "started": self._started, "completed": self._completed})
        self._started, self._completed, self._overflow = [], [], False
        return frames

    def _watch(self) -> list[dict[str, Any]]:
        """The refusal count, the store's health and the OTLP export's counts, when they changed:
        read here, not on the loop."""
        frames = []
        access = self.forwarder.access
        if access.refused != self._refused:
            self._refused = access.refused
            frames.append({"kind": "refused", "count": access.refused, "last": access.last_refusal})
        problem = self.forwarder.store.last_error
        if problem != self._problem:
            self._problem = problem
            frames.append({"kind": "store", "problem": problem})
        if self.live is not None:
            c = self.live.counts
            if (c.exported, c.failed, c.dropped) != self._otlp:
                self._otlp = (c.exported, c.failed, c.dropped)
                frames.append({"kind": "otlp", "exported": c.exported, "failed": c.failed, "dropped": c.dropped})
        return frames

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(
                    lambda: self._closed or self._frames or self._overflow or self._started or self._completed,
                    WATCH_INTERVAL)
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
    from .proxy import ForwarderError
    from .proxy import routes as routing
    from .proxy.server import ListenError
    from .replay import ReplayError, replay_stored
    from .store import Store, StoreError

    line = commands.readline()
    if not line:
        return 0  # the parent went away before saying what to run
    config = orjson.loads(line)
    try:
        store = Store(config["store"])
    except StoreError as exc:
        events.write(encode({"kind": "failed", "message": str(exc)}))
        events.flush()
        return 2
    try:
        forwarder = None
        try:
            flags = config.get("routes", {})
            table = routing.resolve(upstream=config["upstream"], routes=flags.get("route", []),
                                    route_modes=flags.get("route_mode", []), config=flags.get("config"),
                                    translate=config["translate"], repair=config["repair"])
            outbox = Outbox(events)
            live = outbox.live = _live_export(config.get("otlp"), store)

            def on_event(event: FlowEvent) -> None:
                outbox.flow_event(event)
                if live is not None and event.kind == "completed":
                    live.flow_saved(event.flow)

            forwarder = routing.open_forwarder(
                table, store=store, host=config["host"], port=config["port"], on_event=on_event,
                translate=config["translate"], repair=config["repair"], allow_remote=config["allow_remote"],
                allow_hosts=config["allow_hosts"], allow_origins=config["allow_origins"], proxy=config.get("proxy"),
                **config.get("limits", {}))
            outbox.forwarder = forwarder
            forwarder.start()
        except (ForwarderError, StoreError, ValueError) as exc:  # ValueError: the OTLP export cannot be made
            # The default routes nobody asked for, on a port another instance holds: the UI browses.
            browse = isinstance(exc.__cause__, ListenError) and getattr(forwarder, "source", None) == "defaults"
            events.write(encode({"kind": "failed", "message": str(exc), "browse": browse}))
            events.flush()
            return 2
        routed = isinstance(forwarder, routing.Router)
        events.write(encode({"kind": "ready", "client_url": forwarder.client_url, "base_url": forwarder.base_url,
                             "upstream": forwarder.upstream_shown if routed else forwarder.upstream,
                             "upstream_shown": forwarder.upstream_shown,
                             "mode": Mode.PASSTHROUGH.value if routed else forwarder.mode.value,
                             "translate": forwarder.translate, "token": forwarder.access.token,
                             "session_id": store.session_id, "ignored": list(table.ignored),
                             "routes": [{"route": route.route, "client_url": route.client_url,
                                         "upstream": route.upstream, "translate": route.translate,
                                         "source": forwarder.source_of(route.route)}
                                        for route in forwarder.all] if routed else []}))
        events.flush()
        outbox.start()

        def replay(request: int, flow_id: int, kind: str, body: str | None) -> None:
            try:
                outbox.send({"kind": "replayed", "request": request,
                             "flow": replay_stored(store, forwarder, flow_id, kind=ReplayKind(kind),
                                                   body=None if body is None else base64.b64decode(body),
                                                   key_hosts=config.get("key_hosts", ()))})
            except ReplayError as exc:
                outbox.send({"kind": "replayed", "request": request, "reason": str(exc)})
            except Exception as exc:  # a bug must still answer: the UI is waiting for this reply
                outbox.send({"kind": "replayed", "request": request, "reason": f"replay failed: {exc!r}"})

        try:
            for line in commands:
                command = orjson.loads(line)
                if command["op"] == "stop":
                    break
                if command["op"] == "replay":
                    threading.Thread(target=replay, args=(command["request"], command["flow"], command["kind"],
                                                          command["body"]),
                                     name="toolwire-child-replay", daemon=True).start()
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


def _live_export(otlp: dict[str, Any] | None, store: Any) -> Any:
    """The LiveExport the config asks for, or None; a ValueError saying why it cannot be made."""
    if not otlp:
        return None
    from .otlp import OtelMissing, require

    try:
        require()
    except OtelMissing as exc:
        raise ValueError(str(exc)) from exc
    from .otlp.live import open_live

    return open_live(otlp.get("endpoint") or None, content=bool(otlp.get("content")),
                     openinference=bool(otlp.get("openinference")), store=store)


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


@dataclass(frozen=True, slots=True)
class RouteShown:
    """One route of a child serving several (what the header lists for it)."""

    route: str
    client_url: str
    upstream: str
    translate: str | None
    source: str = "--upstream"  # what set it (proxy/routes.py's Route.source)


@dataclass(slots=True)
class RemoteAccess:
    """What the header reads of the child's access policy, kept current by its frames."""

    token: str | None
    refused: int = 0
    last_refusal: str | None = None


@dataclass(slots=True)
class ForwarderProcess:
    """A forwarder running in a child process, seen from the parent. Construct with `start()`."""

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
    # Proxy mode's options as launched (intercept, allow_connect, upstream_ca): the header tells
    # a user who gave them what to set.
    proxy: dict[str, Any] = field(default_factory=dict)
    store_problem: str | None = None
    # The live OTLP export's counts (exported, failed, dropped) as the child last sent them.
    otlp: dict[str, int] | None = None
    # "exit status N: last stderr line" once the child is gone; None while it runs.
    stopped: str | None = None
    _process: subprocess.Popen[bytes] | None = None
    _on_frame: Callable[[dict[str, Any]], None] | None = None
    _write_lock: threading.Lock = field(default_factory=threading.Lock)
    _replies: dict[int, dict[str, Any]] = field(default_factory=dict)
    _replied: threading.Condition = field(default_factory=threading.Condition)
    _requests: int = 0
    _stderr: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_LINES))
    _stopping: bool = False

    @classmethod
    def launch(cls, upstream: str | None, *, store: str | Path | None, host: str = "127.0.0.1", port: int = 0,
               translate: str | None = None, repair: bool = False, allow_remote: bool = False,
               allow_hosts: Iterable[str] = (), allow_origins: Iterable[str] = (),
               proxy: dict[str, Any] | None = None, routes: dict[str, Any] | None = None,
               limits: dict[str, float | int] | None = None, key_hosts: Iterable[str] = (),
               otlp: dict[str, Any] | None = None) -> ForwarderProcess:
        """Launch the child (`store` None: the default store) and return at once; `wait_ready()`
        before using it. `proxy`: proxy mode's Forwarder keywords (intercept, allow_connect,
        upstream_ca); `routes`: the route flags (route, route_mode, config: see proxy/routes.resolve);
        `limits`: the forwarder's timeout and max_body where the command line gives them;
        `key_hosts`: where a replay may send the environment's key besides its provider's host;
        `otlp`: the live OpenTelemetry export (endpoint, content, openinference: see otlp/live.open_live), off
        when None.
        Without `upstream` and routes, the child serves the default routes."""
        process = subprocess.Popen(
            [sys.executable, "-m", "inspector.child"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # Its own session: the terminal's ^C and ^Z reach the UI, which stops the child in order.
            start_new_session=True)
        assert process.stdin is not None
        config = {"store": None if store is None else str(Path(store).resolve()), "upstream": upstream,
                  "host": host, "port": port, "translate": translate, "repair": repair,
                  "allow_remote": allow_remote, "allow_hosts": list(allow_hosts),
                  "allow_origins": list(allow_origins), "proxy": proxy or {}, "routes": routes or {},
                  "limits": limits or {}, "key_hosts": list(key_hosts), "otlp": otlp}
        try:
            process.stdin.write(encode(config))
            process.stdin.flush()
        except OSError:
            pass  # it died already: wait_ready() says why
        return cls(upstream=upstream or "", upstream_shown="", client_url="", base_url="", mode=Mode.PASSTHROUGH,
                   translate=translate, access=RemoteAccess(None), session_id=None, proxy=dict(proxy or {}),
                   _process=process)

    @classmethod
    def start(cls, upstream: str, *, timeout: float = START_TIMEOUT, **options: Any) -> ForwarderProcess:
        """`launch()` and `wait_ready()`."""
        child = cls.launch(upstream, **options)
        child.wait_ready(timeout)
        return child

    def wait_ready(self, timeout: float = START_TIMEOUT) -> None:
        """Wait until the child listens and learn what it listens on; a ChildFailed says why it
        could not (the forwarder's own message: a bad upstream, a port in use, ...)."""
        process = self._process
        assert process is not None and process.stdout is not None
        first = _read_line(process.stdout, timeout)
        frame = orjson.loads(first) if first else None
        if frame is None or frame.get("kind") != "ready":
            browse = False
            if frame is not None and frame.get("kind") == "failed":
                message, browse = frame["message"], frame.get("browse", False)
            else:
                message = f"the forwarder process did not start ({_explain(process, timeout)})"
            self._stopping = True
            _end(process)
            raise ChildFailed(message, browse)
        self.upstream, self.upstream_shown = frame["upstream"], frame["upstream_shown"]
        self.client_url, self.base_url = frame["client_url"], frame["base_url"]
        self.mode, self.translate = Mode(frame["mode"]), frame["translate"]
        self.access, self.session_id = RemoteAccess(frame["token"]), frame["session_id"]
        self.all = tuple(RouteShown(**route) for route in frame["routes"])
        self.ignored = tuple(frame["ignored"])
        threading.Thread(target=self._read_stderr, name="toolwire-child-stderr", daemon=True).start()
        threading.Thread(target=self._read_events, name="toolwire-child-events", daemon=True).start()

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    def listen(self, on_frame: Callable[[dict[str, Any]], None] | None) -> None:
        """Hand every later frame (flows, changed, stopped) to `on_frame`, on the reader thread."""
        self._on_frame = on_frame

    def replay(self, flow_id: int, *, kind: ReplayKind = ReplayKind.AS_RECORDED, body: bytes | None = None,
               timeout: float = 600.0) -> int:
        """Ask the child to replay a stored flow (`body`: the edited request, for EDITED); the new
        flow's id, or a ReplayError."""
        from .replay import ReplayError

        with self._replied:
            self._requests += 1
            request = self._requests
        if not self._send({"op": "replay", "request": request, "flow": flow_id, "kind": kind.value,
                           "body": None if body is None else base64.b64encode(body).decode()}):
            raise ReplayError(f"the forwarder is not running ({self.stopped})")
        with self._replied:
            if not self._replied.wait_for(lambda: request in self._replies or self.stopped is not None, timeout):
                raise ReplayError(f"no answer from the forwarder within {timeout:.0f} s")
            reply = self._replies.pop(request, None)
        if reply is None:
            raise ReplayError(f"the forwarder stopped before the replay ended ({self.stopped})")
        if "reason" in reply:
            raise ReplayError(reply["reason"])
        return int(reply["flow"])

    def request_stop(self) -> None:
        """Ask the child to stop, without waiting."""
        if not self._stopping:
            self._stopping = True
            self._send({"op": "stop"})

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Ask the child to stop and wait for it (killed after `timeout`)."""
        self.request_stop()
        assert self._process is not None
        _end(self._process, timeout)

    def _send(self, command: dict[str, Any]) -> bool:
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
                frame = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue  # not a frame of ours (the child's own output goes to stderr): nothing to act on
            kind = frame["kind"]
            if kind == "refused":
                self.access.refused, self.access.last_refusal = frame["count"], frame["last"]
            elif kind == "store":
                self.store_problem = frame["problem"]
            elif kind == "otlp":
                self.otlp = {key: frame[key] for key in ("exported", "failed", "dropped")}
            elif kind == "replayed":
                with self._replied:
                    self._replies[frame["request"]] = frame
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
            self._on_frame({"kind": "stopped", "reason": self.stopped})

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

