"""A payload pane: the line viewer, colouring pretty-printed JSON as it draws it, with the violations'
lines marked (the core's locator computed them) in colours from component classes whose CSS uses
theme variables, so they follow the theme.

One viewer for every size: a tree-sitter TextArea cost ~130 ms per 50 KB at load (two wrap passes
and a highlight map over the whole document, on the UI thread) where the line viewer costs what the
screen shows.

A pane wraps long lines on `w` and searches its payload on `/`: incremental while typing, enter keeps
the term and `n`/`N` then walk the matches, esc leaves the search."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input

from ...textsafe import shown

from ..view import Pane
from .lines import LineViewer


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
    PayloadView > LineViewer { height: 1fr; border: none; }
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
        yield LineViewer()
        yield SearchBox(placeholder="search this payload", id="search", compact=True)

    def on_mount(self) -> None:
        self.query_one("#search", Input).display = False

    @property
    def viewer(self) -> LineViewer:
        return self.query_one(LineViewer)

    @property
    def searching(self) -> bool:
        return self.has_class("searching")

    def show(self, pane: Pane) -> None:
        self.pane = pane
        self._end_search()
        self.viewer.load(pane.lines(), pane.marks, json=pane.located is not None)

    def clear(self) -> None:
        """Nothing shown (the flow screen is reused: the last flow's payload must not linger)."""
        self.pane = None
        self._end_search()
        self.viewer.load([])

    def go_to(self, line: int) -> None:
        """Show a finding's line: centred, and marked as the chosen one."""
        self.viewer.chosen = line
        self.viewer.go_to(line)

    @property
    def top_line(self) -> int:
        return self.viewer.top_line

    def scroll_to_line(self, line: int) -> None:
        self.viewer.scroll_to_line(line)

    @property
    def wrapped(self) -> bool:
        return self.viewer.wrap

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
        # The lines as drawn (escapes shown), so a match's column is where the reader sees it.
        self.matches = find_all(self.viewer.lines, self.term)
        # Incremental: the first match at or after where the reader is, as `less` does.
        start = self.viewer.cursor
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
        self.viewer.match = None
        box = self.query_one("#search", Input)
        box.value, box.display = "", False
        # A note quotes the flow (its error, say): shown safe, and never read as markup.
        self.border_subtitle = Content(shown(self.pane.note)) if self.pane is not None else ""

    def _show_match(self) -> None:
        if not self.term:
            self.border_subtitle = "type to search · enter: keep · esc: leave"
            return
        if self.match < 0:
            self.border_subtitle = Content(f"no match for {shown(repr(self.term))}")
            return
        line, column = self.matches[self.match]
        self.viewer.match = (line, column, len(self.term))
        self.viewer.go_to(line, column)
        self.border_subtitle = Content(f"{shown(repr(self.term))}: match {self.match + 1} of {len(self.matches)} "
                                       "· n/N · esc")


def find_all(lines: list[str], term: str) -> list[tuple[int, int]]:
    """(line, column) of every case-insensitive occurrence of `term`, in document order."""
    if not term:
        return []
    found: list[tuple[int, int]] = []
    needle = term.lower()
    for number, line in enumerate(lines):
        haystack = line.lower()
        column = haystack.find(needle)
        while column != -1:
            found.append((number, column))
            column = haystack.find(needle, column + 1)
    return found
