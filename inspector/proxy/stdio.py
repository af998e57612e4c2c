"""MCP over stdio: run a server command, relay the client's stdin and the server's stdout between
them byte for byte, and record the JSON-RPC exchange as flows.

The relay never waits on recording: each direction is one thread that writes what it read before
it looks at it, and recording only parses the complete lines it has seen and queues flows for the
store's writer thread. Requests are paired with their responses by JSON-RPC id, in both directions
(a server may send requests too: sampling, roots, elicitation, ping); notifications are flows
without a response. The server's stderr is the wrapper's own.

Whatever goes wrong ends in a flow, never in a hang: a line that is not JSON, a line over the size
bound, the server exiting with requests unanswered, the client closing stdin while requests are
still open.

What recording holds is bounded whatever the two sides write, so that the wrapper's memory does not
grow with its input: of a line it keeps at most MAX_LINE bytes (the rest is relayed, not kept, and the
flow says the body is truncated); it parses a line only when the line holds at most MAX_VALUES JSON
values (parsing costs memory per value, up to 17 times the bytes of a line of small objects); and it
waits for at most MAX_PENDING open requests, ending the oldest as unanswered when a newer one needs
the room. Nor does what waits for the store's writer: while more than MAX_UNWRITTEN writes wait,
lines are relayed and counted, not recorded, and a flow says how many when recording resumes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from ..flow import Flow, FlowState, Mode
from ..redact import environment_secrets, redact_argv

if TYPE_CHECKING:
    from ..store import Store

# Of a longer line, only this many bytes are recorded (the flow says it is truncated): the bound on
# a body recording keeps.
MAX_LINE = 16 * 1024 * 1024
# A line holding more JSON values than this (counted from its commas and its opening brackets, which
# overcounts the ones inside strings) is recorded without parsing it: about 30 MiB of parsed objects.
MAX_VALUES = 250_000
# Open requests recording waits for; past it, the oldest ends as unanswered. A client that keeps this
# many requests open is not waiting for them.
MAX_PENDING = 4096
# Writes waiting for the store's writer past which recording skips lines (each write holds its flow,
# about 1 KiB for a small message): a side that writes faster than the file is written.
MAX_UNWRITTEN = 10_000
# After the client closes stdin, how long the server has to exit by itself before it is asked to
# (SIGTERM), and then told to (SIGKILL): the MCP stdio transport's own shutdown sequence.
EXIT_GRACE = 2.0
_READ = 65536


@dataclass(frozen=True, slots=True)
class Side:
    name: str  # who wrote the line: "client" or "server"
    other: str


CLIENT = Side("client", "server")
SERVER = Side("server", "client")


STDIO_SCHEME = "stdio://"


def endpoint(name: str) -> str:
    """The upstream a stdio flow records: the server's name (session rules identify servers by it).
    The name stands where a URL's authority does, so its brackets are percent-encoded: every URL
    parser reads one there as an IPv6 host, and raises when it is none."""
    return STDIO_SCHEME + name.replace("[", "%5B").replace("]", "%5D")


def server_secrets(command: Sequence[str], environ: Mapping[str, str]) -> tuple[list[str], tuple[str, ...]]:
    """(the command line fit to show and store, the credentials to scrub from every recorded byte):
    those the command line carries, and those of the environment the server inherits, in case the
    server echoes one (an auth error quoting its token, a connection string in a stack trace).
    The line names the server in its `stdio://` URL: its marker is the URL one, `****`."""
    shown, in_command = redact_argv(command, url=True)
    return shown, tuple(dict.fromkeys((*in_command, *environment_secrets(environ))))


class Recorder:
    """Turns the lines each side wrote into flows. Called from both relay threads."""

    def __init__(self, store: Store, session_id: int, name: str, secrets: tuple[str, ...] = (),
                 clock: Callable[[], float] = time.time, on_saved: Callable[[Flow], None] | None = None) -> None:
        """`on_saved(flow)` runs on the store's writer thread once a finished flow is committed."""
        self.store = store
        self.on_saved = on_saved
        self.session_id = session_id
        self.name = name
        self.secrets = secrets
        self.clock = clock
        self._lock = threading.Lock()
        # Open requests by (side that sent them, id as JSON), oldest first: ids are per side, and 1
        # and "1" differ.
        self._open: OrderedDict[tuple[str, bytes], tuple[Flow, float]] = OrderedDict()
        # The current line of each side: its first MAX_LINE bytes, and its whole length.
        self._buffers = {CLIENT.name: bytearray(), SERVER.name: bytearray()}
        self._lengths = {CLIENT.name: 0, SERVER.name: 0}
        self._skipped = {CLIENT.name: 0, SERVER.name: 0}  # lines not recorded while the store was behind

    # -- lines ------------------------------------------------------------------------------

    def feed(self, side: Side, data: bytes) -> None:
        """Bytes `side` wrote, as they came; complete lines are recorded."""
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            self._collect(side, data[start:end])
            self._end_line(side)
            start = end + 1
        self._collect(side, data[start:])

    def end(self, side: Side) -> None:
        """`side` wrote its last byte: a last line without its newline is recorded too."""
        self._end_line(side)

    def _collect(self, side: Side, piece: bytes) -> None:
        buffer = self._buffers[side.name]
        room = MAX_LINE - len(buffer)
        buffer += piece[:room] if len(piece) > room else piece
        self._lengths[side.name] += len(piece)

    def _end_line(self, side: Side) -> None:
        buffer, length = self._buffers[side.name], self._lengths[side.name]
        line = bytes(buffer)
        buffer.clear()
        self._lengths[side.name] = 0
        if length > MAX_LINE:
            self._record_alone(side, line, f"a line from the {side.name} of {length} bytes, over the recording bound "
                                           f"of {MAX_LINE}: relayed whole, its first {MAX_LINE} bytes recorded "
                                           f"(truncated), not parsed")
        else:
            self.line(side, line)

    def line(self, side: Side, line: bytes) -> None:
        line = line.rstrip(b"\r")
        if not line.strip():
            return
        if self.store.unwritten() > MAX_UNWRITTEN:
            self._skipped[side.name] += 1
            return
        self._report_skipped(side)
        if line.count(b",") + line.count(b"{") + line.count(b"[") > MAX_VALUES:
            self._record_alone(side, line, f"a line from the {side.name} holding more than {MAX_VALUES} JSON values: "
                                           f"relayed whole, recorded without parsing it")
            return
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            self._record_alone(side, line, f"not JSON-RPC: the {side.name} wrote a line that is not JSON ({exc})")
            return
        if isinstance(message, list):  # a batch: its requests and responses pair one by one
            for item in message:
                self._message(side, item, orjson.dumps(item))
        else:
            self._message(side, message, line)

    def _message(self, side: Side, message: Any, raw: bytes) -> None:
        if not isinstance(message, dict):
            self._record_alone(side, raw, f"not JSON-RPC: the {side.name} wrote a JSON value that is not an object")
            return
        has_id = "id" in message and message["id"] is not None
        if isinstance(message.get("method"), str):
            if has_id:
                self._request(side, message["id"], raw)
            else:
                self._record_alone(side, raw, None, note=f"notification from the {side.name} (no response expected)")
            return
        if has_id and ("result" in message or "error" in message):
            self._response(side, message["id"], raw)
            return
        self._record_alone(side, raw, f"not JSON-RPC: a message from the {side.name} with neither a method "
                                      f"nor a result/error and id")

    def _request(self, side: Side, rpc_id: Any, raw: bytes) -> None:
        flow = self._new_flow(raw)
        if side is SERVER:
            flow.notes.append("request from the server to the client")
        key = (side.name, orjson.dumps(rpc_id))
        with self._lock:
            earlier = self._open.pop(key, None)
            self._open[key] = (flow, time.perf_counter())
            evicted = self._open.popitem(last=False)[1] if len(self._open) > MAX_PENDING else None
        if earlier is not None:
            self._finish(earlier, FlowState.ERROR, f"the {side.name} sent another request with the same id "
                                                   f"before this one was answered")
        if evicted is not None:
            self._finish(evicted, FlowState.ERROR, f"no answer seen while {MAX_PENDING} newer requests were open: "
                                                   f"recording stopped waiting for it (the relay goes on)")
        self.store.submit(flow)

    def _response(self, side: Side, rpc_id: Any, raw: bytes) -> None:
        with self._lock:
            opened = self._open.pop((side.other, orjson.dumps(rpc_id)), None)
        if opened is None:
            self._record_alone(side, raw, f"a response from the {side.name} to id {orjson.dumps(rpc_id).decode()}, "
                                          f"which no open request has", response=True)
            return
        opened[0].response_body = raw
        self._finish(opened, FlowState.COMPLETE, None)

    def _report_skipped(self, side: Side) -> None:
        skipped, self._skipped[side.name] = self._skipped[side.name], 0
        if skipped:
            self._record_alone(side, b"", f"recording fell behind the store: {skipped} lines from the {side.name} "
                                          f"were relayed but not recorded")

    def close(self, reason: str) -> None:
        """The exchange is over: every request still open ends in an error saying why."""
        for side in (CLIENT, SERVER):
            self._report_skipped(side)
        with self._lock:
            still_open = list(self._open.values())
            self._open.clear()
        for opened in still_open:
            self._finish(opened, FlowState.ERROR, reason)

    def failed(self, reason: str) -> None:
        """Something that ended the exchange before any line: recorded, so the UI says why."""
        self._record_alone(CLIENT, b"", reason)

    # -- flows ------------------------------------------------------------------------------

    def _new_flow(self, request: bytes) -> Flow:
        return Flow(id=self.store.next_flow_id(), session_id=self.session_id, started_at=self.clock(),
                    method="STDIO", path=f"stdio:{self.name}", request_body=request, mode=Mode.PASSTHROUGH,
                    upstream_url=endpoint(self.name), request_headers=[("content-type", "application/json")],
                    secrets=self.secrets)

    def _finish(self, opened: tuple[Flow, float], state: FlowState, error: str | None) -> None:
        flow, t0 = opened
        flow.latency_ms = flow.ttfb_ms = (time.perf_counter() - t0) * 1000.0
        if flow.response_body:
            flow.response_headers = [("content-type", "application/json")]
        flow.error = error
        flow.state = state  # last: the store treats a non-pending flow as final
        on_saved = self.on_saved
        self.store.submit(flow, None if on_saved is None else lambda _row: on_saved(flow))

    def _record_alone(self, side: Side, raw: bytes, error: str | None, *, note: str | None = None,
                      response: bool = False) -> None:
        """A flow for a line that is not half of a pair: a notification, a stray response, a bad line.
        Its message stands where the flow's request (or, for a stray response, its response) does."""
        flow = self._new_flow(b"" if response else raw)
        if response:
            flow.response_body = raw
        if note:
            flow.notes.append(note)
        self._finish((flow, time.perf_counter()), FlowState.ERROR if error else FlowState.COMPLETE, error)


class StdioRelay:
    """One server command under the wrapper: start it, relay both ways, record, and end cleanly."""

    def __init__(self, command: Sequence[str], recorder: Recorder, *, stdin: int = 0, stdout: int = 1,
                 env: dict[str, str] | None = None) -> None:
        self.command = list(command)
        self.recorder = recorder
        self.stdin = stdin
        self.stdout = stdout
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None
        self._client_closed = threading.Event()
        self._recording_failed = False

    def run(self) -> int:
        """Relay until the server exits; its exit status (or 127/126 when it cannot start)."""
        try:
            self.process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            env=self.env, bufsize=0)
        except OSError as exc:
            self.recorder.failed(f"cannot start the server {self.command[0]!r}: {exc.strerror}")
            raise
        process = self.process
        assert process.stdin is not None and process.stdout is not None
        to_server = threading.Thread(target=self._client_to_server, args=(process.stdin.fileno(),),
                                     name="stdio-client", daemon=True)
        to_server.start()
        self._server_to_client(process.stdout.fileno())
        # The server closed its stdout: it exited, or is about to.
        status = self._wait_for_exit()
        if self._client_closed.is_set():
            reason = f"the client closed stdin and the server exited (status {status}) before answering"
        else:
            reason = f"the server exited (status {status}) before answering"
        self.recorder.close(reason)
        return status

    def _client_to_server(self, server_stdin: int) -> None:
        side = CLIENT
        try:
            while data := _read(self.stdin):
                self._record(side, data)
                if not _write_all(server_stdin, data):
                    break  # the server is gone; its stdout's end reports it
            else:
                self._guarded(lambda: self.recorder.end(side))
        finally:
            self._client_closed.set()
            try:
                os.close(server_stdin)  # the server reads EOF: MCP's way of asking it to stop
            except OSError:
                pass
            self._stop_after_grace()

    def _server_to_client(self, server_stdout: int) -> None:
        client_gone = False
        while data := _read(server_stdout):
            self._record(SERVER, data)
            if not client_gone and not _write_all(self.stdout, data):
                client_gone = True  # nobody reads us any more: keep recording until the server ends
                self._client_closed.set()
                self._terminate()
        self._guarded(lambda: self.recorder.end(SERVER))

    def _record(self, side: Side, data: bytes) -> None:
        # Before the bytes go on: once the other side has them it may answer at once, and its
        # answer must find the request already open. Parsing and queueing never wait on anything.
        self._guarded(lambda: self.recorder.feed(side, data))

    def _guarded(self, recording: Callable[[], None]) -> None:
        try:
            recording()
        except Exception as exc:
            if not self._recording_failed:
                self._recording_failed = True
                print(f"toolwire-inspect: recording stopped, relaying goes on: {exc!r}", file=sys.stderr)

    def _stop_after_grace(self) -> None:
        process = self.process
        assert process is not None
        try:
            process.wait(EXIT_GRACE)
        except subprocess.TimeoutExpired:
            self._terminate()

    def _terminate(self) -> None:
        process = self.process
        assert process is not None
        if process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(EXIT_GRACE)
        except subprocess.TimeoutExpired:
            process.kill()

    def _wait_for_exit(self) -> int:
        process = self.process
        assert process is not None
        try:
            status = process.wait(EXIT_GRACE)
        except subprocess.TimeoutExpired:
            # It closed stdout but lives on: it can answer nothing more.
            self._terminate()
            status = process.wait()
        return status if status >= 0 else 128 - status


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, _READ)
    except OSError:
        return b""


def _write_all(fd: int, data: bytes) -> bool:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError:  # EPIPE: the reader is gone
        return False
    return True
