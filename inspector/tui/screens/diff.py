"""A structural diff, full screen: the original request against what went upstream (`d`) or against
the fixed request (`F`), or a response against its replay's (`v`). The notes (loss report, repairs)
sit under the rows they explain and, beside the diff, as a list; below 100 columns the list goes
under the diff and `z` gives either pane the whole screen."""

from __future__ import annotations

from collections.abc import Callable

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widgets import Footer, Static
from textual.worker import Worker, WorkerState

from ...flow import ReplayKind
from ...textsafe import shown
from ..compare import DiffView
from ..widgets.diff_viewer import DiffViewer
from ..widgets.lines import LineViewer
from .reading import ReadingScreen


class DiffScreen(ReadingScreen):
    HELP_TITLE = "Diff"
    BINDINGS = [
        Binding("escape,q", "back", "Back", id="diff.back", tooltip="Back to the flow"),
        Binding("z", "zoom", "Zoom", id="diff.zoom", tooltip="Give the focused pane the whole screen (toggle)"),
        Binding("R", "replay_fixed", "Replay fixed", id="diff.replay-fixed",
                tooltip="Replay the fixed request (the list marks it ↻F#N); on the fixed diff only"),
    ]

    class Prepared(Message):
        def __init__(self, view: DiffView | None) -> None:
            super().__init__()
            self.view = view

    def __init__(self, prepare: Callable[[], DiffView | None], *, title: str, absent: str,
                 fixed_of: int | None = None) -> None:
        """`prepare` runs in a thread worker; `absent`: what the screen says when it returns None.
        `fixed_of`: the flow whose fixed request this diff shows (R replays it from here)."""
        super().__init__()
        self.fixed_of = fixed_of
        self.prepare = prepare
        self.title_text = title
        self.absent = absent
        self.view: DiffView | None = None

    def compose(self) -> ComposeResult:
        yield Static(Content(f"{self.title_text} · computing…"), id="diff-title", classes="title")
        with Horizontal(classes="panes"):
            # Wrapped: a note or a long string read whole at 80 columns (w: one row per line).
            yield DiffViewer(id="diff", classes="main", wrap=True)
            yield LineViewer(id="notes", classes="side", wrap=True)
        yield Footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.fixed_of is not None if action == "replay_fixed" else True

    def action_replay_fixed(self) -> None:
        if self.fixed_of is not None:
            self.app.replay_flow(self.fixed_of, ReplayKind.FIXED)  # type: ignore[attr-defined]

    def on_mount(self) -> None:
        self.query_one("#diff", DiffViewer).border_title = "Diff"
        self.query_one("#notes", LineViewer).border_title = "Notes"
        self.query_one("#diff", DiffViewer).focus()
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="diff-view", description="compute the diff")
    def load(self) -> None:
        """Diffing two megabyte documents is never done on the UI thread."""
        self.post_message(self.Prepared(self.prepare()))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            self.notify(f"{event.worker.description} failed: {event.worker.error!r}", severity="error", markup=False)
            self.query_one("#diff-title", Static).update(Content(f"{self.title_text} · could not be computed"))

    def on_diff_screen_prepared(self, message: Prepared) -> None:
        self.view = view = message.view
        viewer, notes = self.query_one("#diff", DiffViewer), self.query_one("#notes", LineViewer)
        if view is None:
            self.query_one("#diff-title", Static).update(Content(f"{self.title_text} · {self.absent}"))
            viewer.load([self.absent])
            notes.load([])
            return
        self.query_one("#diff-title", Static).update(Content(shown(view.title)))
        viewer.border_subtitle = Content(shown(view.summary))
        viewer.load(view.lines.lines, view.lines.marks)
        # A replay's changes have no report: the diff gets the whole screen.
        notes.display = view.notes is not None
        notes.load(view.notes.lines if view.notes is not None else [])
        stops = viewer.stops()
        if stops:  # the first change is what the user came for; centred once the viewer has its size
            self.call_after_refresh(viewer.go_to, stops[0])
