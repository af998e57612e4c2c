"""A WebSocket flow's frames (enter on a socket row): one line per frame (number, direction, time
since the upgrade, size, event type, then the text it streams, the call it belongs to, or its audio
as bytes and seconds), and the frame under the cursor raw beside it (below under 100 columns), its
audio payloads replaced by their size. A finding of the socket (Realtime, Gemini Live) marks the
frame it points into. Everything recorded is shown through textsafe."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import orjson
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widgets import Footer, Static
from textual.worker import Worker, WorkerState

from ...flow import Flow
from ...wire.pointer import split
from ...sockets import describe, protocol
from ...textsafe import shown, shown_lines
from ...wire.frames import Described, Direction, Frame
from ...wire.violations import Violation
from .. import format as fmt
from ..view import MARK_ORDER
from ..widgets.lines import LineViewer
from .reading import ReadingScreen

if TYPE_CHECKING:
    from ..app import InspectorApp

ARROWS = {Direction.CLIENT: "→", Direction.SERVER: "←"}  # client to server, server to client
DETAIL_ROOM = 200  # characters of a delta on its line; the raw pane has the rest
RAW_PREVIEW = 64  # bytes of a binary frame shown in hex


def size(count: int) -> str:
    return f"{count} B" if count < 1024 else f"{count / 1024:.1f} KB" if count < 1024 * 1024 else \
        f"{count / 1024 / 1024:.1f} MB"


def detail(described: Described) -> str:
    """What a frame carries besides its type: its audio, else the text it streams, and its call."""
    parts = []
    if described.audio_bytes is not None:
        seconds = "" if described.audio_seconds is None else f" {described.audio_seconds:.2f}s"
        parts.append(f"audio {size(described.audio_bytes)}{seconds}")
    elif described.delta is not None:
        text = described.delta[:DETAIL_ROOM] + ("…" if len(described.delta) > DETAIL_ROOM else "")
        parts.append(orjson.dumps(text).decode())
    if described.call_id is not None:
        parts.append(f"call {described.call_id}")
    return "  ".join(parts)


def frame_line(number: int, frame: Frame, described: Described, started: float) -> str:
    kind = described.kind or ("binary" if not frame.text else "not JSON")
    line = f"{number:>4} {ARROWS[frame.direction]} +{frame.at - started:8.3f}s {size(len(frame.payload)):>8}  {kind}"
    more = detail(described)
    return shown(f"{line}  {more}" if more else line)


def raw_lines(frame: Frame, described: Described) -> list[str]:
    if described.shown is not None:
        return shown_lines(orjson.dumps(described.shown, option=orjson.OPT_INDENT_2).decode())
    if not frame.text:
        head = frame.payload[:RAW_PREVIEW].hex(" ")
        return [f"binary frame, {size(len(frame.payload))}", head + (" …" if len(frame.payload) > RAW_PREVIEW else "")]
    return shown_lines(frame.payload.decode("utf-8", "replace"))


@dataclass(slots=True)
class FramesView:
    """What the screen shows, prepared off the UI thread."""

    title: str
    lines: list[str]
    raw: list[list[str]]  # per frame
    marks: dict[int, str] = field(default_factory=dict)  # frame -> the most severe finding on it
    findings: dict[int, list[Violation]] = field(default_factory=dict)


def prepare_frames(flow: Flow, frames: list[Frame], violations: list[Violation]) -> FramesView:
    described = describe(flow, frames)
    started = flow.started_at
    marks: dict[int, str] = {}
    findings: dict[int, list[Violation]] = {}
    for violation in violations:
        tokens = split(violation.pointer)
        if tokens and tokens[0].isdigit() and int(tokens[0]) < len(frames):
            number = int(tokens[0])
            findings.setdefault(number, []).append(violation)
            severity = violation.severity.value
            if number not in marks or MARK_ORDER.index(severity) < MARK_ORDER.index(marks[number]):
                marks[number] = severity
    kind = protocol(flow.path)
    errors = sum(1 for v in violations if v.severity.value == "error")
    warnings = sum(1 for v in violations if v.severity.value == "warning")
    badge = f"  {fmt.badge(errors, warnings)}" if errors or warnings else ""
    title = (f"#{flow.id} WebSocket {flow.path}  {kind.value if kind else 'unknown protocol'}  "
             f"{fmt.counted(len(frames), 'frame')}{badge}")
    return FramesView(shown(title), [frame_line(n, f, d, started) for n, (f, d) in enumerate(zip(frames, described,
                                                                                               strict=True))],
                      [raw_lines(f, d) for f, d in zip(frames, described, strict=True)], marks, findings)


class FramesScreen(ReadingScreen):
    HELP_TITLE = "Frames"
    BINDINGS = [
        Binding("escape,q", "back", "Back", id="frames.back", tooltip="Back to the flow list"),
        Binding("z", "zoom", "Zoom", id="frames.zoom", tooltip="Give the focused pane the whole screen (toggle)"),
    ]

    class Prepared(Message):
        def __init__(self, view: FramesView | None) -> None:
            super().__init__()
            self.view = view

    def __init__(self, flow_id: int) -> None:
        super().__init__()
        self.flow_id = flow_id
        self.view: FramesView | None = None

    @property
    def inspector(self) -> InspectorApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Static(Content(f"#{self.flow_id} frames · reading…"), id="frames-title", classes="title")
        with Horizontal(classes="panes"):
            yield LineViewer(id="frames", classes="main")
            yield LineViewer(id="frame-raw", classes="side", wrap=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#frames", LineViewer).border_title = "Frames"
        self.query_one("#frame-raw", LineViewer).border_title = "Raw"
        frames = self.query_one("#frames", LineViewer)
        frames.focus()
        self.watch(frames, "cursor", self._show_raw, init=False)
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="frames", description="read the frames")
    def load(self) -> None:
        store = self.inspector.store
        flow = store.get(self.flow_id)
        if flow is None or not flow.websocket:
            self.post_message(self.Prepared(None))
            return
        self.post_message(self.Prepared(prepare_frames(flow, store.frames(self.flow_id),
                                                       store.analysis(flow).violations)))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            self.inspector.release_keys()
            self.notify(f"{event.worker.description} failed: {event.worker.error!r}", severity="error", markup=False)

    def on_frames_screen_prepared(self, message: Prepared) -> None:
        # The keys typed after the enter that opened the socket were held for this screen (app.on_event).
        self.inspector.release_keys()
        title = self.query_one("#frames-title", Static)
        if message.view is None:
            title.update(Content(f"#{self.flow_id} is no WebSocket flow in the store"))
            return
        self.view = view = message.view
        title.update(Content(view.title))
        self.query_one("#frames", LineViewer).load(view.lines, view.marks)
        self._show_raw(0)

    def _show_raw(self, number: int) -> None:
        view = self.view
        raw = self.query_one("#frame-raw", LineViewer)
        if view is None or not view.raw:
            raw.load([])
            return
        found = [shown(f"{v.rule} {v.severity.value} {v.pointer}: {v.message}") for v in view.findings.get(number, [])]
        raw.load([*found, *([""] if found else []), *view.raw[number]])
        raw.border_title = f"Frame {number}"
