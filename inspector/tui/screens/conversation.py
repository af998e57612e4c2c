"""A flow's conversation (`t` in the flow view): the request's history as turns with each tool call
paired to its result, orphans and unanswered calls marked where they are, the response's new turn
last, and beside it the tools offered against the tools called. Below 100 columns the tools go
under the turns; `z` gives either pane the whole screen."""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import Worker, WorkerState

from ..compare import ConversationView, prepare_conversation
from ..view import FlowView
from ..widgets.lines import LineViewer


class ConversationScreen(Screen[None]):
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    DEFAULT_CSS = """
    ConversationScreen #conversation-title { height: auto; max-height: 3; padding: 0 1; background: $panel; }
    ConversationScreen #conversation-body { height: 1fr; }
    ConversationScreen #turns { width: 2fr; }
    ConversationScreen #tools { width: 1fr; }
    ConversationScreen LineViewer { border: round $primary 50%; }
    ConversationScreen LineViewer:focus { border: round $accent; }
    ConversationScreen.-narrow #conversation-body { layout: vertical; }
    ConversationScreen.-narrow #turns { width: 1fr; height: 1fr; }
    ConversationScreen.-narrow #tools { width: 1fr; height: 8; }
    """
    BINDINGS = [
        Binding("escape,q", "back", "Back", id="conversation.back", tooltip="Back to the flow"),
        Binding("z", "zoom", "Zoom", id="conversation.zoom",
                tooltip="Give the focused pane the whole screen (toggle)"),
    ]

    class Prepared(Message):
        def __init__(self, view: ConversationView) -> None:
            super().__init__()
            self.view = view

    def __init__(self, flow: FlowView) -> None:
        super().__init__()
        self.flow = flow
        self.view: ConversationView | None = None

    def compose(self) -> ComposeResult:
        yield Static(Content(f"#{self.flow.flow.id} conversation · reading…"), id="conversation-title")
        with Horizontal(id="conversation-body"):
            yield LineViewer(id="turns", wrap=True)
            yield LineViewer(id="tools", wrap=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#turns", LineViewer).border_title = "Turns"
        self.query_one("#tools", LineViewer).border_title = "Tools"
        self.query_one("#turns", LineViewer).focus()
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="conversation", description="read the turns")
    def load(self) -> None:
        """A 200-turn history parsed and paired: never on the UI thread."""
        self.post_message(self.Prepared(prepare_conversation(self.flow)))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            self.notify(f"{event.worker.description} failed: {event.worker.error!r}", severity="error", markup=False)

    def on_conversation_screen_prepared(self, message: Prepared) -> None:
        self.view = view = message.view
        self.query_one("#conversation-title", Static).update(Content(view.title))
        self.query_one("#turns", LineViewer).load(view.turns.lines, view.turns.marks)
        self.query_one("#tools", LineViewer).load(view.tools.lines, view.tools.marks)

    def action_back(self) -> None:
        self.dismiss()

    def action_zoom(self) -> None:
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None:
            self.maximize(self.focused)
