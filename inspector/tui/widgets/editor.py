"""`e`: edit a recorded request and send it again. The in-app editor is a TextArea that checks the
JSON before sending and says where it is wrong; `E` opens the same text in $VISUAL / $EDITOR
(the app suspends) and comes back here only when the result does not parse."""

from __future__ import annotations

import json

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Footer, Static, TextArea

from ...analysis import BodyTooLarge, decode_body, parse_json
from ...flow import Flow
from ...textsafe import shown


def request_body(flow: Flow) -> bytes:
    """The client's request body, content-encoding undone."""
    try:
        return decode_body(flow.request_body, flow.request_headers)
    except BodyTooLarge:
        return flow.request_body


def editable_request(flow: Flow) -> tuple[str, bool]:
    """(the text to edit, whether it is JSON): the client's request decoded, JSON indented so a
    field is a line to change. A body that is not text is offered as its UTF-8 reading."""
    body = request_body(flow)
    document, problem = parse_json(body)
    if problem is None:
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n", True
    return body.decode("utf-8", "replace"), False


def json_problem(text: str) -> tuple[str, tuple[int, int]] | None:
    """None when `text` is JSON, else (what is wrong, (line, column) from 0)."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return f"not valid JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}", (exc.lineno - 1, exc.colno - 1)
    except RecursionError:
        return "not valid JSON: nested too deep to read", (0, 0)
    return None


class EditorScreen(ModalScreen[bytes | None]):
    """Dismissed with the body to send, or None when the user gave up."""

    HELP_TITLE = "Edit request"
    BINDINGS = [
        Binding("ctrl+s", "send", "Send", id="edit.send", priority=True,
                tooltip="Send the edited request upstream (a new flow, marked ↻E#N)"),
        # Priority: the TextArea would take esc to let go of the focus (its tab key indents).
        Binding("escape", "cancel", "Cancel", id="edit.cancel", priority=True,
                tooltip="Close the editor without sending (with unsent edits: asks first)"),
        # ? is text here, and a modal screen hides the app's own keys.
        Binding("f1", "app.help", "Keys", id="edit.help", tooltip="Show every key of the editor"),
    ]
    DEFAULT_CSS = """
    EditorScreen { background: $background 60%; }
    EditorScreen #edit-area { height: 1fr; border: round $accent; }
    EditorScreen #edit-problem { height: auto; color: $error; padding: 0 1; display: none; }
    EditorScreen.-invalid #edit-problem { display: block; }
    EditorScreen.-asking #edit-problem { display: block; color: $warning; }
    """

    def __init__(self, flow_id: int, text: str, *, is_json: bool, check: bool = False) -> None:
        """`check`: say at once what is wrong with `text` ($EDITOR came back with JSON that does not parse)."""
        super().__init__()
        self.flow_id = flow_id
        self.text = text
        self.is_json = is_json
        self.check = check

    def compose(self) -> ComposeResult:
        area = TextArea(self.text, language="json" if self.is_json else None, show_line_numbers=True,
                        soft_wrap=False, tab_behavior="indent", id="edit-area")
        area.border_title = f"Edit #{self.flow_id}"
        area.border_subtitle = "ctrl+s send · esc cancel"
        yield area
        yield Static("", id="edit-problem", markup=False)
        yield Footer(compact=True)  # 80 columns hold every key it shows (tests/tui/test_any_terminal.py)

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()
        found = json_problem(self.text) if self.check and self.is_json else None
        if found is not None:
            self._show_problem(*found)

    def _show_problem(self, problem: str, where: tuple[int, int]) -> None:
        self.add_class("-invalid")
        self.query_one("#edit-problem", Static).update(f"✖ {shown(problem)} (not sent)")
        self.query_one(TextArea).cursor_location = where

    def action_send(self) -> None:
        text = self.query_one(TextArea).text
        found = json_problem(text) if self.is_json else None
        if found is not None:
            self._show_problem(*found)
            return
        self.dismiss(text.encode("utf-8"))

    def action_cancel(self) -> None:
        """Unsent edits are thrown away only at a second esc: the first says so."""
        if self.query_one(TextArea).text == self.text or self.has_class("-asking"):
            self.dismiss(None)
            return
        self.remove_class("-invalid")
        self.add_class("-asking")
        self.query_one("#edit-problem", Static).update("Unsent edits: esc again throws them away, ctrl+s sends them")

    def on_text_area_changed(self) -> None:
        self.remove_class("-asking")  # typing on withdraws the question
