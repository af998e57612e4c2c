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
from textual.widgets import Footer, Static
from textual.worker import Worker, WorkerState

from ...textsafe import shown
from ..compare import ConversationView, prepare_conversation
from ..view import FlowView
from ..widgets.lines import LineViewer
from .reading import ReadingScreen


class ConversationScreen(ReadingScreen):
    HELP_TITLE = "Conversation"
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
        yield Static(Content(f"#{self.flow.flow.id} conversation · reading…"), id="conversation-title",
                     classes="title")
        with Horizontal(classes="panes"):
            yield LineViewer(id="turns", classes="main", wrap=True)
            yield LineViewer(id="tools", classes="side", wrap=True)
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
        self.query_one("#conversation-title", Static).update(Content(shown(view.title)))
        self.query_one("#turns", LineViewer).load(view.turns.lines, view.turns.marks)
        self.query_one("#tools", LineViewer).load(view.tools.lines, view.tools.marks)
