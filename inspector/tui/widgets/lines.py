"""A line viewer on the line API: cost is proportional to the lines on screen, whatever the
document size (toolong's idiom). It shows every payload, raw stream chunks, headers and diffs.

Pretty-printed JSON (`load(..., json=True)`) is coloured line by line as it is drawn: the pretty
printer puts one member per line and escapes newlines inside strings, so a line is a whole run of
tokens and its colours need nothing from the lines around it. That is what lets a 2 MB payload show
in the time a 2 KB one does, where a tree-sitter document pays for every line at load.

Wrapping (`wrap`) folds each line into rows on word and `/` boundaries; the rows are computed once
per load or width change, so it is meant for the short documents (chunks, repairs) and offered as a
toggle on the big ones."""

from __future__ import annotations

import re

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.color import Color
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..format import fold


# A string (a key when a colon follows), a number, or a literal: what a pretty JSON line is made of.
JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"(\s*:)?|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null')


def json_tokens(line: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each token of one pretty-printed JSON line; kind is key, string,
    number or literal. Punctuation and indentation are left out (drawn in the line's own style)."""
    found = []
    for match in JSON_TOKEN.finditer(line):
        first = line[match.start()]
        if first == '"':
            key = match.group(1) is not None
            found.append((match.start(), match.start(1) if key else match.end(), "key" if key else "string"))
        else:
            found.append((match.start(), match.end(), "literal" if first in "tfn" else "number"))
    return found


# A token's colour, from the theme's variables: component classes would do the same, but each one
# is restyled with its widget on every screen switch, and the flow screen has six viewers.
TOKEN_COLOURS = {"key": "text-primary", "string": "text-success", "number": "text-warning", "literal": "text-secondary"}


class ViewerScrolled(Message):
    """A payload viewer's top line may have changed (the flow view keeps the other pane aligned)."""

    def __init__(self, viewer: ScrollView) -> None:
        super().__init__()
        self.viewer = viewer


class LineViewer(ScrollView, can_focus=True):
    COMPONENT_CLASSES = {
        "line-viewer--gutter",
        "line-viewer--error",
        "line-viewer--warning",
        "line-viewer--info",
        "line-viewer--repair",
        "line-viewer--cursor",
        "line-viewer--match",
        "line-viewer--chosen",
    }
    DEFAULT_CSS = """
    LineViewer { background: $surface; }
    LineViewer > .line-viewer--gutter { color: $text-muted; }
    LineViewer > .line-viewer--error { background: $error 25%; }
    LineViewer > .line-viewer--warning { background: $warning 20%; }
    LineViewer > .line-viewer--info { background: $primary 15%; }
    LineViewer > .line-viewer--repair { background: $success 20%; }
    LineViewer > .line-viewer--cursor { background: $accent 40%; text-style: bold; }
    LineViewer > .line-viewer--chosen { background: $primary 70%; text-style: bold; }
    LineViewer > .line-viewer--match { background: $warning 60%; text-style: bold; }
    """
    HELP_SECTION = "Text pane: chunks, headers, repairs, big payloads (tab to it)"
    BINDINGS = [
        Binding("j,down", "move(1)", "Down", show=False, id="viewer.down", tooltip="Next line"),
        Binding("k,up", "move(-1)", "Up", show=False, id="viewer.up", tooltip="Previous line"),
        Binding("g,home", "jump(0)", "Top", show=False, id="viewer.top", tooltip="First line"),
        Binding("G,end", "jump(-1)", "Bottom", show=False, id="viewer.bottom", tooltip="Last line"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="viewer.page-down", tooltip="One page down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="viewer.page-up", tooltip="One page up"),
        Binding("h,left", "sideways(-1)", "Left", show=False, id="viewer.left",
                tooltip="Scroll left half a screen (unwrapped)"),
        Binding("l,right", "sideways(1)", "Right", show=False, id="viewer.right",
                tooltip="Scroll right half a screen (unwrapped)"),
        Binding("w", "wrap", "Wrap", id="viewer.wrap", tooltip="Wrap long lines (toggle)"),
    ]

    cursor: reactive[int] = reactive(0, always_update=True)

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None,
                 wrap: bool = False) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.lines: list[str] = []
        self.marks: dict[int, str] = {}  # line -> mark kind (a severity name or "repair")
        self._width = 0
        self.wrap = wrap
        # Wrapped: one (line, start, end) per screen row, and the first row of each line.
        self._rows: list[tuple[int, int, int]] = []
        self._first_row: list[int] = []
        self._rows_width = -1
        self._cursor_row = 0  # wrapped: the row the cursor is on (j/k move by row, not by line)
        self.json = False  # colour the lines as pretty-printed JSON
        self.match: tuple[int, int, int] | None = None  # (line, column, length) of a search match
        self.chosen: int | None = None  # the chosen finding's line: marked whether focused or not
        self._tokens: tuple[int, list[tuple[int, int, str]]] = (-1, [])  # the last line tokenised
        self._styles: dict[str, Style] = {}  # component styles, until the next style update

    def load(self, lines: list[str], marks: dict[int, str] | None = None, *, json: bool = False) -> None:
        """`lines` come shown safe (textsafe.shown, in the worker that made them): a 2 MB payload's
        lines are drawn as they are, with no pass over them here."""
        self.lines = lines
        self.marks = marks or {}
        self.json = json
        self.match = None
        self.chosen = None
        self._tokens = (-1, [])
        # Width scanned once per load, not per frame; a 1M-line document costs one pass here.
        self._width = max((len(line) for line in lines), default=0) + self._gutter_width() + 1
        self._rows_width = -1
        self._size_virtually()
        self.cursor = self._cursor_row = 0
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def action_wrap(self) -> None:
        self.set_wrap(not self.wrap)

    def set_wrap(self, wrap: bool) -> None:
        line = self._row_line(int(self.scroll_y))
        self.wrap = wrap
        self._rows_width = -1
        self._size_virtually()
        self._cursor_row = self._row_of(self.cursor)
        self.scroll_to(0, self._row_of(line), animate=False)
        self.refresh()

    def _size_virtually(self) -> None:
        if not self.wrap:
            self.virtual_size = Size(self._width, len(self.lines))
            return
        # Folded for the width left once the vertical scrollbar is drawn, whether it is drawn yet or
        # not: rows folded to the whole width lost their last cells under it when it appeared.
        width = self.content_region.width
        text_width = max(1, width - self._gutter_width())
        if text_width != self._rows_width:
            self._fold(text_width)
            if len(self._rows) > self.content_region.height and self.styles.overflow_y != "hidden":
                self._fold(max(1, text_width - self.styles.scrollbar_size_vertical))
        self.virtual_size = Size(width - self.styles.scrollbar_size_vertical if len(self._rows) > self.content_region.height
                                 else width, len(self._rows))

    def _fold(self, text_width: int) -> None:
        self._rows_width = text_width
        self._rows, self._first_row = [], []
        for index, line in enumerate(self.lines):
            self._first_row.append(len(self._rows))
            self._rows += [(index, start, end) for start, end in fold(line, text_width)]

    def on_resize(self) -> None:
        if self.wrap:
            self._size_virtually()

    @property
    def top_line(self) -> int:
        return self._row_line(int(self.scroll_y)) if self.lines else 0

    def scroll_to_line(self, line: int) -> None:
        self.scroll_to(y=self._row_of(max(0, min(line, len(self.lines) - 1))), animate=False)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.post_message(ViewerScrolled(self))

    def _row_of(self, line: int) -> int:
        return self._first_row[line] if self.wrap and line < len(self._first_row) else line

    def _row_line(self, row: int) -> int:
        if self.wrap:
            return self._rows[row][0] if row < len(self._rows) else len(self.lines) - 1
        return row

    def _gutter_width(self) -> int:
        return len(str(len(self.lines))) + 1

    def go_to(self, line: int, column: int = 0) -> None:
        """Put the cursor on `line` and centre it, with `column` in view: the row holding it when
        wrapped, else scrolled sideways to it (a search match a megabyte into a one-line payload)."""
        if not self.lines:
            return
        line = max(0, min(line, len(self.lines) - 1))
        self.cursor = line
        row = self._row_of(line)
        if self.wrap:
            while row + 1 < len(self._rows) and self._rows[row + 1][0] == line and self._rows[row + 1][1] <= column:
                row += 1
            self._cursor_row = row
        else:
            width = self.scrollable_content_region.width
            x = self._gutter_width() + column
            if not self.scroll_x <= x < self.scroll_x + width - self._gutter_width():
                self.scroll_to(x=max(0, x - width // 3), animate=False)
        self.scroll_to(y=max(0, row - self.scrollable_content_region.height // 2), animate=False)
        self.refresh()

    def action_move(self, delta: int) -> None:
        if self.wrap and self._rows:
            # By row: the middle of a wrapped megabyte line is reachable, a row at a time.
            self._move_to_row(max(0, min(self._cursor_row + delta, len(self._rows) - 1)))
            return
        self._move_to(self.cursor + delta)

    def action_sideways(self, direction: int) -> None:
        if not self.wrap:
            self.scroll_to(x=max(0, self.scroll_x + direction * max(1, self.scrollable_content_region.width // 2)),
                           animate=False)

    def action_jump(self, where: int) -> None:
        self._move_to(len(self.lines) - 1 if where < 0 else 0)

    def action_page(self, direction: int) -> None:
        self._move_to(self.cursor + direction * max(1, self.scrollable_content_region.height - 1))

    def _move_to(self, line: int) -> None:
        if not self.lines:
            return
        self._move_to_row(self._row_of(max(0, min(line, len(self.lines) - 1))))

    def _move_to_row(self, row: int) -> None:
        self.cursor = self._row_line(row)
        self._cursor_row = row
        top = int(self.scroll_y)
        height = self.scrollable_content_region.height
        if row < top:
            self.scroll_to(y=row, animate=False)
        elif row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False)
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = {}

    def _style(self, component: str) -> Style:
        style = self._styles.get(component)
        if style is None:
            style = self._styles[component] = self.get_component_rich_style(f"line-viewer--{component}")
        return style

    def _token_style(self, kind: str) -> Style:
        style = self._styles.get(kind)
        if style is None:
            variable = self.app.get_css_variables().get(TOKEN_COLOURS[kind])
            style = self._styles[kind] = Style(color=Color.parse(variable).rich_color) if variable else Style()
        return style

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        row = scroll_y + y
        if row >= (len(self._rows) if self.wrap else len(self.lines)):
            return Strip.blank(width, base)
        index, start, end = self._rows[row] if self.wrap else (row, 0, None)
        gutter_width = self._gutter_width()
        style = base
        kind = self.marks.get(index)
        if kind is not None:
            style = base + self._style(kind)
        if index == self.chosen:
            style = style + self._style("chosen")
        # Wrapped, the cursor is a row (j/k move by row): only that row of its line is lit.
        if index == self.cursor and self.has_focus and (not self.wrap or row == self._cursor_row):
            style = style + self._style("cursor")
        # A wrapped line numbers its first row only: the blank gutter says "continued".
        number = f"{index + 1:>{gutter_width - 1}} " if start == 0 else " " * gutter_width
        line = self.lines[index]
        stop = len(line) if end is None else end
        segments = [Segment(number, base + self._style("gutter"))]
        segments += [Segment(line[left:right], style + extra) for left, right, extra in self._spans(index, start, stop)]
        strip = Strip(segments).crop_extend(scroll_x, scroll_x + width, style if kind is not None or index == self.chosen else base)
        return strip.simplify()

    def _spans(self, index: int, start: int, stop: int) -> list[tuple[int, int, Style]]:
        """The row's text [start, stop) cut where its colour changes: JSON tokens, the search match."""
        coloured: list[tuple[int, int, Style]] = []
        if self.json:
            if self._tokens[0] != index:
                self._tokens = (index, json_tokens(self.lines[index]))
            coloured = [(left, right, self._token_style(kind)) for left, right, kind in self._tokens[1]]
        if self.match is not None and self.match[0] == index:
            _, column, length = self.match
            # The match is drawn over the tokens it crosses; their parts outside it keep their colour.
            coloured = [piece for left, right, style in coloured
                        for piece in ((left, min(right, column), style), (max(left, column + length), right, style))
                        if piece[0] < piece[1]]
            coloured.append((column, column + length, self._style("match")))
            coloured.sort(key=lambda span: span[0])
        spans, at = [], start
        for left, right, extra in coloured:
            left, right = max(left, at), min(right, stop)
            if left >= right:
                continue
            if left > at:
                spans.append((at, left, Style()))
            spans.append((left, right, extra))
            at = right
        if at < stop or not spans:
            spans.append((at, stop, Style()))
        return spans

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        self._move_to(self._row_line(int(self.scroll_y) + event.y))

