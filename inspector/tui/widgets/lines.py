"""A plain line viewer on the line API: cost is proportional to the lines on screen, whatever the
document size (toolong's idiom). Used above the TextArea size tier and for raw stream chunks."""

from __future__ import annotations

from rich.segment import Segment
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


class LineViewer(ScrollView, can_focus=True):
    COMPONENT_CLASSES = {
        "line-viewer--gutter",
        "line-viewer--error",
        "line-viewer--warning",
        "line-viewer--info",
        "line-viewer--repair",
        "line-viewer--cursor",
    }
    DEFAULT_CSS = """
    LineViewer { background: $surface; }
    LineViewer > .line-viewer--gutter { color: $text-muted; }
    LineViewer > .line-viewer--error { background: $error 25%; }
    LineViewer > .line-viewer--warning { background: $warning 20%; }
    LineViewer > .line-viewer--info { background: $primary 15%; }
    LineViewer > .line-viewer--repair { background: $success 20%; }
    LineViewer > .line-viewer--cursor { background: $accent 40%; text-style: bold; }
    """
    BINDINGS = [
        Binding("j,down", "move(1)", "Down", show=False, id="viewer.down", tooltip="Next line"),
        Binding("k,up", "move(-1)", "Up", show=False, id="viewer.up", tooltip="Previous line"),
        Binding("g,home", "jump(0)", "Top", show=False, id="viewer.top", tooltip="First line"),
        Binding("G,end", "jump(-1)", "Bottom", show=False, id="viewer.bottom", tooltip="Last line"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="viewer.page-down", tooltip="One page down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="viewer.page-up", tooltip="One page up"),
    ]

    cursor: reactive[int] = reactive(0, always_update=True)

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.lines: list[str] = []
        self.marks: dict[int, str] = {}  # line -> mark kind (a severity name or "repair")
        self._width = 0

    def load(self, lines: list[str], marks: dict[int, str] | None = None) -> None:
        self.lines = lines
        self.marks = marks or {}
        # Width scanned once per load, not per frame; a 1M-line document costs one pass here.
        self._width = max((len(line) for line in lines), default=0) + self._gutter_width() + 1
        self.virtual_size = Size(self._width, len(lines))
        self.cursor = 0
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def _gutter_width(self) -> int:
        return len(str(len(self.lines))) + 1

    def go_to(self, line: int) -> None:
        """Put the cursor on `line` and centre it."""
        if not self.lines:
            return
        line = max(0, min(line, len(self.lines) - 1))
        self.cursor = line
        self.scroll_to(y=max(0, line - self.scrollable_content_region.height // 2), animate=False)
        self.refresh()

    def action_move(self, delta: int) -> None:
        self._move_to(self.cursor + delta)

    def action_jump(self, where: int) -> None:
        self._move_to(len(self.lines) - 1 if where < 0 else 0)

    def action_page(self, direction: int) -> None:
        self._move_to(self.cursor + direction * max(1, self.scrollable_content_region.height - 1))

    def _move_to(self, line: int) -> None:
        if not self.lines:
            return
        self.cursor = max(0, min(line, len(self.lines) - 1))
        top = int(self.scroll_y)
        height = self.scrollable_content_region.height
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if index >= len(self.lines):
            return Strip.blank(width, base)
        gutter_width = self._gutter_width()
        style = base
        kind = self.marks.get(index)
        if kind is not None:
            style = base + self.get_component_rich_style(f"line-viewer--{kind}")
        if index == self.cursor and self.has_focus:
            style = style + self.get_component_rich_style("line-viewer--cursor")
        gutter_style = base + self.get_component_rich_style("line-viewer--gutter")
        segments = [
            Segment(f"{index + 1:>{gutter_width - 1}} ", gutter_style),
            Segment(self.lines[index].expandtabs(4), style),
        ]
        strip = Strip(segments).crop_extend(scroll_x, scroll_x + width, style if kind else base)
        return strip.simplify()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        self._move_to(int(self.scroll_y) + event.y)

