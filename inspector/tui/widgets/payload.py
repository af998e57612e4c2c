"""A payload pane: the JSON `TextArea` for bodies up to a size threshold, the line viewer above it.

Violations are highlighted through TextArea's public hook (`get_line` + `stylize`) on the lines the
core's locator computed; the colours come from component classes whose CSS uses theme variables,
so they follow the theme.

A pane wraps long lines on `w` and searches its payload on `/`: incremental while typing, enter keeps
the term and `n`/`N` then walk the matches, esc leaves the search."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.geometry import Offset
from textual.widgets import Input, TextArea
from textual.widgets.text_area import Selection

from ..view import Pane
from .lines import LineViewer, ViewerScrolled
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

    HELP_SECTION = "Payload pane (tab to it)"
    BINDINGS = [Binding("w", "wrap", "Wrap", id="viewer.wrap", tooltip="Wrap long lines (toggle)")]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            "", language="json", read_only=True, show_line_numbers=True, soft_wrap=False, id=id
        )
        # Matching the bracket under the cursor scans the document in Python from the cursor: on
        # the first line of a payload that is the whole of it, on the UI thread, at every load.
        self.match_cursor_bracket = False
        self.marks: dict[int, str] = {}
        self.focus_line: int | None = None
        self.cursor_blink = False
        # The cursor-line style is applied after get_line() and would hide a mark's background.
        self.highlight_cursor_line = False

    def find_matching_bracket(self, bracket: str, search_from: tuple[int, int]) -> tuple[int, int] | None:
        # Textual 8.2.8 looks for the match at every cursor move even with matching off.
        return None

    def show(self, text: str, marks: dict[int, str]) -> None:
        self.marks = marks
        self.focus_line = None
        self.load_text(text)
        self.notify_style_update()

    def go_to(self, line: int) -> None:
        self.focus_line = line
        self.move_cursor((line, 0), center=True)
        self.notify_style_update()

    def action_wrap(self) -> None:
        line = self.top_line
        self.soft_wrap = not self.soft_wrap
        self.call_after_refresh(self.scroll_to_line, line)

    @property
    def top_line(self) -> int:
        return self.wrapped_document.offset_to_location(Offset(0, int(self.scroll_y)))[0]

    def scroll_to_line(self, line: int) -> None:
        line = max(0, min(line, self.document.line_count - 1))
        self.scroll_to(y=self.wrapped_document.location_to_offset((line, 0)).y, animate=False)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.post_message(ViewerScrolled(self))

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


class SearchBox(Input):
    """Enter keeps the term and hands the keys back to the pane at once (focus() is deferred, and an
    `n` typed right after enter would land in the box instead of going to the next match)."""

    async def action_submit(self) -> None:
        pane = self.parent
        if isinstance(pane, PayloadView):
            self.screen.set_focus(pane.viewer)


class PayloadView(Vertical):
    """A titled pane holding whichever viewer fits the payload's size."""

    ALLOW_MAXIMIZE = True  # z: the pane takes the whole screen
    DEFAULT_CSS = """
    PayloadView { border: round $primary 50%; height: 1fr; }
    PayloadView:focus-within { border: round $accent; }
    PayloadView > JsonArea, PayloadView > LineViewer { height: 1fr; border: none; }
    PayloadView > #search { height: 1; border: none; padding: 0 1; background: $boost; }
    """
    HELP_SECTION = "Payload pane (tab to it)"
    BINDINGS = [
        # Priority: the app runs it as soon as it reads the key, before it hands the keys typed
        # after it to the focused widget, so a burst (`/term` typed fast or pasted) lands in the box.
        Binding("slash", "search", "Search", id="payload.search", tooltip="Search this payload", priority=True),
        Binding("n", "search_step(1)", "Next match", show=False, id="payload.next-match",
                tooltip="Next match of the search"),
        Binding("N", "search_step(-1)", "Prev match", show=False, id="payload.previous-match",
                tooltip="Previous match of the search"),
        Binding("escape", "end_search", "End search", show=False, id="payload.end-search",
                tooltip="Leave the search"),
    ]

    def __init__(self, title: str, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = title
        self.pane: Pane | None = None
        self.matches: list[tuple[int, int]] = []  # (line, column) of each match, in document order
        self.match = -1  # the current one, -1 when none
        self.term = ""

    def compose(self) -> ComposeResult:
        # Both tiers exist from the start and one is hidden: swapping widgets on every flow would
        # cost a mount and a full re-layout each time.
        yield JsonArea()
        yield LineViewer()
        yield SearchBox(placeholder="search this payload", id="search", compact=True)

    def on_mount(self) -> None:
        self.query_one(JsonArea).display = False
        self.query_one("#search", Input).display = False

    @property
    def viewer(self) -> JsonArea | LineViewer:
        area = self.query_one(JsonArea)
        return area if area.display else self.query_one(LineViewer)

    @property
    def searching(self) -> bool:
        return self.has_class("searching")

    def show(self, pane: Pane) -> None:
        self.pane = pane
        self._end_search()
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

    @property
    def top_line(self) -> int:
        return self.viewer.top_line

    def scroll_to_line(self, line: int) -> None:
        self.viewer.scroll_to_line(line)

    @property
    def wrapped(self) -> bool:
        viewer = self.viewer
        return viewer.soft_wrap if isinstance(viewer, JsonArea) else viewer.wrap

    def action_search(self) -> None:
        self.add_class("searching")
        box = self.query_one("#search", Input)
        # Shown and focused at once (a class would apply with the next style update, focus() is
        # deferred) so the term typed after `/` lands in the box sooner.
        box.display = True
        self.screen.set_focus(box)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Outside a search, n/N and esc belong to the screen (next violation, back).
        if action in ("search_step", "end_search"):
            return self.searching
        if action == "search":  # a `/` typed in the box is part of the term
            return not self.query_one("#search", Input).has_focus
        return True

    @on(Input.Changed, "#search")
    def _search_as_typed(self, event: Input.Changed) -> None:
        event.stop()
        if not self.searching:  # the box cleared on leaving the search
            return
        self.term = event.value
        text = self.pane.text if self.pane is not None else ""
        self.matches = find_all(text, self.term)
        # Incremental: the first match at or after where the reader is, as `less` does.
        start = self.viewer.cursor_location[0] if isinstance(self.viewer, JsonArea) else self.viewer.cursor
        self.match = next((n for n, (line, _) in enumerate(self.matches) if line >= start), 0 if self.matches else -1)
        self._show_match()

    def action_search_step(self, delta: int) -> None:
        if self.matches:
            self.match = (self.match + delta) % len(self.matches)
        self._show_match()

    def action_end_search(self) -> None:
        self._end_search()
        self.screen.set_focus(self.viewer)

    def _end_search(self) -> None:
        self.remove_class("searching")
        self.matches, self.match, self.term = [], -1, ""
        box = self.query_one("#search", Input)
        box.value, box.display = "", False
        self.border_subtitle = self.pane.note if self.pane is not None else ""

    def _show_match(self) -> None:
        if not self.term:
            self.border_subtitle = "type to search · enter: keep · esc: leave"
            return
        if self.match < 0:
            self.border_subtitle = f"no match for {self.term!r}"
            return
        line, column = self.matches[self.match]
        viewer = self.viewer
        viewer.go_to(line)
        if isinstance(viewer, JsonArea):
            viewer.selection = Selection((line, column), (line, column + len(self.term)))
        self.border_subtitle = f"{self.term!r}: match {self.match + 1} of {len(self.matches)} · n/N · esc"


def find_all(text: str, term: str) -> list[tuple[int, int]]:
    """(line, column) of every case-insensitive occurrence of `term`, in document order."""
    if not term:
        return []
    found: list[tuple[int, int]] = []
    needle = term.lower()
    for number, line in enumerate(text.split("\n")):
        haystack = line.lower()
        column = haystack.find(needle)
        while column != -1:
            found.append((number, column))
            column = haystack.find(needle, column + 1)
    return found
