"""A payload pane: the JSON `TextArea` for bodies up to a size threshold, the line viewer above it.

Violations are highlighted through TextArea's public hook (`get_line` + `stylize`) on the lines the
core's locator computed; the colours come from component classes whose CSS uses theme variables,
so they follow the theme."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import TextArea

from ..view import Pane
from .lines import LineViewer
from .styles import overlay

# Above this many characters the pane uses the plain line viewer: tree-sitter highlighting in
# TextArea cost ~0.5 s for 0.3 MB and ~6 s for 3 MB on this machine kind (STYLE.md), and it runs
# on the UI thread.
TEXTAREA_MAX_CHARS = 150_000


class JsonArea(TextArea):
    COMPONENT_CLASSES = TextArea.COMPONENT_CLASSES | {
        "json-area--error",
        "json-area--warning",
        "json-area--info",
        "json-area--repair",
        "json-area--focus",
    }
    DEFAULT_CSS = """
    JsonArea > .json-area--error { background: $error 25%; }
    JsonArea > .json-area--warning { background: $warning 20%; }
    JsonArea > .json-area--info { background: $primary 15%; }
    JsonArea > .json-area--repair { background: $success 20%; }
    JsonArea > .json-area--focus { background: $primary 70%; text-style: bold; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            "", language="json", read_only=True, show_line_numbers=True, soft_wrap=False, id=id
        )
        self.marks: dict[int, str] = {}
        self.focus_line: int | None = None
        self.cursor_blink = False
        # The cursor-line style is applied after get_line() and would hide a mark's background.
        self.highlight_cursor_line = False

    def show(self, text: str, marks: dict[int, str]) -> None:
        self.marks = marks
        self.focus_line = None
        self.load_text(text)
        self.notify_style_update()

    def go_to(self, line: int) -> None:
        self.focus_line = line
        self.move_cursor((line, 0), center=True)
        self.notify_style_update()

    def get_line(self, line_index: int) -> Text:
        line = super().get_line(line_index)
        kind = self.marks.get(line_index)
        if kind is None and line_index != self.focus_line:
            return line
        # The span starts at the key, not the indentation: the marked node reads at a glance.
        indent = len(line.plain) - len(line.plain.lstrip())
        if kind is not None:
            line.stylize(self._style(f"json-area--{kind}"), indent)
        if line_index == self.focus_line:
            line.stylize(self._style("json-area--focus"), indent)
        return line

    def _style(self, component: str) -> Style:
        return overlay(self, component)


class PayloadView(Vertical):
    """A titled pane holding whichever viewer fits the payload's size."""

    DEFAULT_CSS = """
    PayloadView { border: round $primary 50%; height: 1fr; }
    PayloadView:focus-within { border: round $accent; }
    PayloadView > JsonArea, PayloadView > LineViewer { height: 1fr; border: none; }
    """

    def __init__(self, title: str, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = title
        self.pane: Pane | None = None

    def compose(self) -> ComposeResult:
        # Both tiers exist from the start and one is hidden: swapping widgets on every flow would
        # cost a mount and a full re-layout each time.
        yield JsonArea()
        yield LineViewer()

    def on_mount(self) -> None:
        self.query_one(JsonArea).display = False

    @property
    def viewer(self) -> JsonArea | LineViewer:
        area = self.query_one(JsonArea)
        return area if area.display else self.query_one(LineViewer)

    def show(self, pane: Pane) -> None:
        self.pane = pane
        self.border_subtitle = pane.note
        wants_textarea = pane.located is not None and len(pane.text) <= TEXTAREA_MAX_CHARS
        area, lines = self.query_one(JsonArea), self.query_one(LineViewer)
        area.display, lines.display = wants_textarea, not wants_textarea
        if wants_textarea:
            area.show(pane.text, pane.marks)
            lines.load([])
        else:
            lines.load(pane.text.split("\n") if pane.text else [], pane.marks)
            area.show("", {})

    def go_to(self, line: int) -> None:
        self.viewer.go_to(line)
