"""The live flow list: a line-API view over a window of the store, never a widget per row.

Only the rows on screen are read (in pages of `PAGE` rows, `Store.rows(limit=, offset=)`), so the
first render costs the same at 10 rows or 100k (docs/style.md, idiom 5: DataTable needs ~1.3 s at 10k).

Columns are laid out for 80 columns first (see `layout`): when the width runs short the column with
the lowest `keep` goes first. What tells a failing turn from a good one stays longest: the issues
badge goes last, then the id (to open or filter by), the status, the path, the latency, the model.
The method (POST nearly always), the counts and tokens, the ttfb, the dialect (the path says it)
and the time go first; the flow view shows them all. Room beyond the minimum goes to the path up to PATH_ROOM,
then to the model up to MODEL_ROOM, then to the path again."""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol
from collections.abc import Callable, Collection

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, work
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget
from textual.worker import get_current_worker

from ...textsafe import shown
from .. import format as fmt
from .styles import overlay

if TYPE_CHECKING:
    from ...store import FlowRow

PAGE = 128
MAX_PAGES = 16
# How the list can be sorted, in the order `S` steps through them (the store's ORDERS), with the
# column whose title shows it.
ORDERS = ("time", "latency", "issues", "route")
ORDER_COLUMN = {"time": "#", "latency": "latency", "issues": "issues", "route": "path"}


@dataclass(frozen=True, slots=True)
class Column:
    title: str
    width: int  # the least it gets (path and model grow beyond it)
    keep: int  # the higher, the later it is dropped when the width runs short
    right: bool = False


COLUMNS = [
    Column("#", 5, keep=10, right=True),
    Column("time", 12, keep=4),
    Column("meth", 6, keep=0),
    Column("path", 20, keep=8),  # "/v1/chat/completions" whole
    Column("dialect", 9, keep=3),
    Column("model", 16, keep=5),
    Column("st", 3, keep=9, right=True),
    Column("latency", 7, keep=7, right=True),
    Column("ttfb", 6, keep=2, right=True),
    Column("tools", 5, keep=1, right=True),
    Column("calls", 5, keep=1, right=True),
    Column("tokens", 11, keep=1, right=True),  # in/out as the response reports them
    Column("issues", 7, keep=11),
]
# Each row leads with its session's number (what `~S N` takes), the recording session's in the
# accent colour: a column, not a separator row, since it survives sorting and filtering (a row
# between sessions means nothing sorted by latency), and at 80 columns it costs no other column.
SESSION_WIDTH = 2
GUTTER = SESSION_WIDTH + 1  # the session and a space, where a marked row shows MARK
MARK = "●"  # mitmproxy's mark
PATH_ROOM = 24
MODEL_ROOM = 32


def layout(total: int) -> list[tuple[int, Column, int]]:
    """(index into COLUMNS, column, width) of the columns that fit in `total` cells, in order."""
    shown = list(range(len(COLUMNS)))

    def used() -> int:
        return GUTTER + sum(COLUMNS[i].width for i in shown) + len(shown) - 1

    while len(shown) > 1 and used() > total:
        shown.remove(min(shown, key=lambda i: (COLUMNS[i].keep, -i)))
    widths = {i: COLUMNS[i].width for i in shown}
    spare = max(0, total - used())
    for title, room in (("path", PATH_ROOM), ("model", MODEL_ROOM), ("path", None)):
        index = next((i for i in shown if COLUMNS[i].title == title), None)
        if index is None:
            continue
        grow = spare if room is None else min(spare, max(0, room - widths[index]))
        widths[index] += grow
        spare -= grow
    return [(i, COLUMNS[i], widths[i]) for i in shown]


class RowSource(Protocol):
    session_id: int | None

    def rows(self, *, text: str = "", limit: int | None = None, offset: int = 0,
             order: str = "time", marked: Collection[int] | None = None) -> list[FlowRow]: ...

    def count(self, *, text: str = "", marked: Collection[int] | None = None) -> int: ...

    def index_of(self, flow_id: int, *, text: str = "", order: str = "time",
                 marked: Collection[int] | None = None) -> int | None: ...

    def session_usage(self, session_id: int) -> tuple[int | None, int | None]: ...


def replay_mark(row: FlowRow) -> str:
    """`↻#3` a replay of flow 3 as recorded (r), `↻F#3` one sent with the safe repairs (R), `↻E#3`
    one the user edited (e); `⇉` a stream whose events all arrived at once (buffered on the way);
    `⇅` a WebSocket session, `⇅#7` a turn of socket 7."""
    buffered = "⇉ " if row.buffered else ""
    if row.websocket:
        buffered += "⇅ "  # a WebSocket session: enter shows its frames
    elif row.socket_of is not None:
        buffered += f"⇅#{row.socket_of} "  # a turn of socket N
    if row.replay_of is None:
        return buffered
    kind = "F" if row.replay_fixed else "E" if row.replay_edited else ""
    return f"{buffered}↻{kind}#{row.replay_of} "


def row_cells(row: FlowRow, now: float) -> list[str]:
    return [
        str(row.id),
        fmt.clock_time(row.started_at, now),
        shown(row.method),
        # `openai:/v1/…` on a named route
        replay_mark(row) + shown((f"{row.route}:" if row.route else "") + row.path),
        shown(fmt.DIALECT_SHORT.get(row.dialect, row.dialect or "-")),
        shown(row.model or "-"),
        fmt.status(row.status, row.state),
        fmt.duration(row.latency_ms),
        fmt.duration(row.ttfb_ms) if row.streamed or row.ttfb_ms is not None else "-",
        str(row.tools),
        str(row.tool_calls),
        fmt.usage(row.tokens_in, row.tokens_out),
        fmt.badge(row.errors, row.warnings),
    ]


class ColumnHeader(Widget):
    # The list always keeps a one-cell scrollbar (see FlowList); the header leaves the same cell so
    # both lay out the same width and nothing is drawn over the last column.
    DEFAULT_CSS = """
    ColumnHeader { height: 1; color: $text-muted; text-style: bold; background: $panel; padding-right: 1; }
    """
    COMPONENT_CLASSES = {"column-header--sorted"}
    DEFAULT_CSS += "ColumnHeader > .column-header--sorted { color: $accent; text-style: bold underline; }"

    order: reactive[str] = reactive("time")

    def render(self) -> Text:
        text = Text(fmt.fit("S", SESSION_WIDTH, right=True) + " ", no_wrap=True, overflow="crop")
        sorted_style = self.get_component_rich_style("column-header--sorted", partial=True)
        sorted_by = ORDER_COLUMN[self.order] if self.order != "time" else None
        for number, (_, column, width) in enumerate(layout(self.content_region.width)):
            if number:
                text.append(" ")
            text.append(fmt.fit(column.title, width, column.right),
                        sorted_style if column.title == sorted_by else "")
        return text


class FlowList(ScrollView, can_focus=True):
    COMPONENT_CLASSES = {
        "flow-list--cursor",
        "flow-list--older",
        "flow-list--current",
        "flow-list--failed",
        "flow-list--pending",
        "flow-list--errors",
        "flow-list--warnings",
        "flow-list--replay",
        "flow-list--marked",
    }
    DEFAULT_CSS = """
    FlowList { height: 1fr; background: $surface; overflow-x: hidden; overflow-y: scroll;
        scrollbar-size-vertical: 1; }
    FlowList > .flow-list--cursor { background: $accent 30%; }
    FlowList:focus > .flow-list--cursor { background: $accent 55%; text-style: bold; }
    FlowList > .flow-list--older { color: $text-muted; }
    FlowList > .flow-list--current { color: $accent; }
    FlowList > .flow-list--failed { color: $error; text-style: bold; }
    FlowList > .flow-list--pending { color: $text-muted; }
    FlowList > .flow-list--errors { color: $error; text-style: bold; }
    FlowList > .flow-list--warnings { color: $warning; }
    FlowList > .flow-list--replay { color: $secondary; }
    FlowList > .flow-list--marked { color: $warning; text-style: bold; }
    """
    BINDINGS = [
        Binding("enter", "open", "Open", id="flows.open", tooltip="Open the flow under the cursor"),
        Binding("j,down", "move(1)", "Down", show=False, id="flows.down", tooltip="Next flow"),
        Binding("k,up", "move(-1)", "Up", show=False, id="flows.up", tooltip="Previous flow"),
        Binding("g,home", "first", "First", show=False, id="flows.first", tooltip="First flow"),
        Binding("G,end", "last", "Last", show=False, id="flows.last", tooltip="Last (newest) flow"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="flows.page-down", tooltip="One page down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="flows.page-up", tooltip="One page up"),
        Binding("S", "sort", "Sort", id="flows.sort",
                tooltip="Sort by time, latency, issues, route in turn (the newest and slowest last, the worst first)"),
        Binding("o", "origin", "Origin/replays", show=False, id="flows.origin",
                tooltip="On a replay: go to its origin; on a replayed flow: go to its newest replay"),
        # mitmproxy's keys: m marks, M shows the marked alone, U unmarks all (d deletes: FlowsScreen).
        Binding("m", "mark", "Mark", show=False, id="flows.mark",
                tooltip="Mark or unmark the selected flow (● before its id; for d, ~marked and M)"),
        Binding("M", "marked_only", "Marked only", show=False, id="flows.marked-only",
                tooltip="Show only the marked flows, or every flow again (with the filter, if one is set)"),
        Binding("U", "unmark_all", "Unmark all", show=False, id="flows.unmark-all", tooltip="Unmark every flow"),
    ]

    cursor: reactive[int] = reactive(0, init=False)
    filter_text: reactive[str] = reactive("", init=False)
    marked_only: reactive[bool] = reactive(False, init=False)
    order: reactive[str] = reactive("time", init=False)

    class Opened(Message):
        def __init__(self, flow_id: int) -> None:
            super().__init__()
            self.flow_id = flow_id

    class Reloaded(Message):
        """The window was re-read; `total` flows match the filter; `usage`: the session's tokens
        (in, out), None without a recording session."""

        def __init__(self, total: int, usage: tuple[int | None, int | None] | None = None) -> None:
            super().__init__()
            self.total = total
            self.usage = usage

    class Sorted(Message):
        def __init__(self, order: str) -> None:
            super().__init__()
            self.order = order

    class WindowRead(Message):
        def __init__(self, text: str, order: str, total: int, follow: bool, page_no: int,
                     page: list[FlowRow], reveal: int | None = None, revealed: int | None = None,
                     usage: tuple[int | None, int | None] | None = None) -> None:
            super().__init__()
            self.text, self.order, self.total, self.follow = text, order, total, follow
            self.page_no, self.page = page_no, page
            self.usage = usage  # summed over the session's flows: a scan of a long session, read here too
            # The flow asked to be put under the cursor, and its index (None: not in the list).
            self.reveal, self.revealed = reveal, revealed

    def __init__(self, source: RowSource, *, clock: Callable[[], float] = time.time, id: str | None = None) -> None:
        super().__init__(id=id)
        self.source = source
        self.clock = clock
        self.total = 0
        self._pages: OrderedDict[int, list[FlowRow]] = OrderedDict()
        # Until the first resize the widget cannot scroll to the cursor; drawing before that
        # would read the store's first page for a frame nobody sees.
        self._placed = False
        self._reveal: int | None = None
        self._reveal_missing: str | None = None  # said when the flow to reveal is not in the list
        # The flows marked (m), by id: this TUI's only, as long as it runs (a selection, like the cursor;
        # the store stays read-only to this process), what `~marked`, M and d read.
        self.marks: set[int] = set()

    def on_mount(self) -> None:
        # The first window is read in place: one count and one page (~20 ms at 100k flows
        # unfiltered), so the first frame already shows the newest flows.
        self._apply(self._read("", self.order, True, 0))

    # -- data window -------------------------------------------------------------------------

    def reload(self, *, follow: bool | None = None) -> None:
        """Re-read the count and the cursor's page. The cursor follows the newest flow when it
        was already on the last row (a tail, like toolong's), else it stays on its index.

        The reads run in a thread: a filtered count over a large store takes a good fraction of
        a second, which would stall typing in the filter field. The newest reload wins."""
        at_end = self.total == 0 or self.cursor >= self.total - 1
        # The marks as they are now, read in the thread while the UI thread may mark on.
        self._read_window(self.query_text, self.order, at_end if follow is None else follow, self.cursor,
                          self._reveal, frozenset(self.marks))

    def reveal(self, flow_id: int, *, missing: str | None = None) -> None:
        """Put the cursor on this flow once a reload has it (a flow that was just recorded may
        not be committed yet; the reload its completion triggers will have it). `missing`: say
        this, and stop looking, if the list as filtered does not hold it."""
        self._reveal, self._reveal_missing = flow_id, missing
        self.reload()

    def _read(self, text: str, order: str, follow: bool, cursor: int, reveal: int | None = None,
              marks: frozenset[int] = frozenset()) -> WindowRead:
        total = self.source.count(text=text, marked=marks)
        # Where the flow to reveal is: a count over the filtered list (~50 ms at 10k flows with a
        # text filter), so here in the reading thread, never on the UI thread.
        revealed = self.source.index_of(reveal, text=text, order=order, marked=marks) if reveal is not None else None
        if revealed is not None and revealed < total:
            index = revealed
        else:
            index = total - 1 if follow else min(cursor, total - 1)
        page_no = max(0, index) // PAGE
        page = self.source.rows(text=text, limit=PAGE, offset=page_no * PAGE, order=order, marked=marks) if total else []
        session_id = self.source.session_id
        usage = None if session_id is None else self.source.session_usage(session_id)
        return self.WindowRead(text, order, total, follow, page_no, page, reveal, revealed, usage)

    @work(thread=True, exclusive=True, exit_on_error=False, group="flow-list-window",
          description="read the flow list window")
    def _read_window(self, text: str, order: str, follow: bool, cursor: int, reveal: int | None,
                     marks: frozenset[int]) -> None:
        window = self._read(text, order, follow, cursor, reveal, marks)
        if not get_current_worker().is_cancelled:
            self.post_message(window)

    def on_flow_list_window_read(self, message: WindowRead) -> None:
        message.stop()
        if (message.text, message.order) == (self.query_text, self.order):  # else a newer reload is on its way
            self._apply(message)

    def _apply(self, window: WindowRead) -> None:
        self.total = window.total
        self._pages = OrderedDict({window.page_no: window.page} if window.total else {})
        self.virtual_size = Size(self.scrollable_content_region.width, self.total)
        if window.follow and self.total:
            self._set_cursor(self.total - 1)
        else:
            self._set_cursor(min(self.cursor, max(0, self.total - 1)))
        if window.reveal is not None and window.reveal == self._reveal:
            if window.revealed is not None and window.revealed < self.total:
                self._set_cursor(window.revealed)
                self._reveal = self._reveal_missing = None
            elif self._reveal_missing is not None:
                self.notify(self._reveal_missing, severity="warning", markup=False)
                self._reveal = self._reveal_missing = None
        self.refresh()
        self.post_message(self.Reloaded(self.total, window.usage))

    def row(self, index: int) -> FlowRow | None:
        if not 0 <= index < self.total:
            return None
        page_no, slot = divmod(index, PAGE)
        page = self._pages.get(page_no)
        if page is None:
            page = self.source.rows(text=self.query_text, limit=PAGE, offset=page_no * PAGE, order=self.order,
                                    marked=self.marks)
            self._pages[page_no] = page
            if len(self._pages) > MAX_PAGES:
                self._pages.popitem(last=False)
        else:
            self._pages.move_to_end(page_no)
        return page[slot] if slot < len(page) else None

    @property
    def loaded_rows(self) -> int:
        """Rows currently held in memory (the window), for tests and the curious."""
        return sum(len(page) for page in self._pages.values())

    @property
    def current(self) -> FlowRow | None:
        return self.row(self.cursor)

    def select_id(self, flow_id: int) -> bool:
        """Move the cursor to the flow with this id if the list (filtered, sorted) holds it."""
        index = self.source.index_of(flow_id, text=self.query_text, order=self.order, marked=self.marks)
        if index is None or index >= self.total:
            return False
        self._set_cursor(index)
        return True

    @property
    def query_text(self) -> str:
        """The filter the list reads the store with: the filter bar's, and only the marked under M."""
        if not self.marked_only:
            return self.filter_text
        return f"~marked & ({self.filter_text})" if self.filter_text.strip() else "~marked"

    def empty_hint(self) -> str:
        from ..screens.help import keys_for  # the hints name the user's keys, not ours

        if self.marked_only:
            return (f"No marked flow here ({keys_for(self, 'flows.mark')} marks the flow under the cursor; "
                    f"{keys_for(self, 'flows.marked-only')} shows every flow).")
        if self.filter_text:
            return f"No flow matches “{self.filter_text}” ({keys_for(self, 'flows.clear-filter')} clears the filter)."
        return "No flows yet: point your agent at the base URL above and its requests appear here."

    def watch_filter_text(self) -> None:
        self.reload(follow=True)

    def watch_marked_only(self) -> None:
        self._pages.clear()
        self.reload(follow=True)

    def watch_order(self) -> None:
        self.post_message(self.Sorted(self.order))
        # The flow under the cursor stays under it, wherever the new order puts it.
        row = self.current
        self._pages.clear()
        if row is not None:
            self._reveal, self._reveal_missing = row.id, None
        self.reload(follow=row is None)

    # -- cursor ------------------------------------------------------------------------------

    def _set_cursor(self, index: int) -> None:
        self.cursor = max(0, min(index, self.total - 1)) if self.total else 0
        top = int(self.scroll_y)
        height = max(1, self.scrollable_content_region.height)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)
        self.refresh()

    def action_move(self, delta: int) -> None:
        self._set_cursor(self.cursor + delta)

    def action_first(self) -> None:
        self._set_cursor(0)

    def action_last(self) -> None:
        self._set_cursor(self.total - 1)

    def action_page(self, direction: int) -> None:
        self._set_cursor(self.cursor + direction * max(1, self.scrollable_content_region.height - 1))

    def action_sort(self) -> None:
        self.order = ORDERS[(ORDERS.index(self.order) + 1) % len(ORDERS)]

    def action_origin(self) -> None:
        row = self.current
        if row is None:
            return
        if row.replay_of is not None:
            target, what = row.replay_of, f"#{row.replay_of}, the origin of #{row.id},"
        else:
            replays = [r.id for r in self.source.rows(text=f"#{row.id}") if r.id != row.id]
            if not replays:
                self.notify(f"#{row.id} is neither a replay nor replayed", severity="warning")
                return
            target, what = replays[-1], f"#{replays[-1]}, the newest replay of #{row.id},"
        from ..screens.help import keys_for

        self.reveal(target, missing=f"{what} is not in the list as filtered ({keys_for(self, 'flows.clear-filter')} "
                                    "clears the filter)")

    def action_mark(self) -> None:
        row = self.current
        if row is None:
            return
        self.marks ^= {row.id}
        self._marks_changed()

    def action_marked_only(self) -> None:
        self.marked_only = not self.marked_only

    def action_unmark_all(self) -> None:
        self.marks.clear()
        self._marks_changed()

    def unmark(self, flow_ids: Collection[int]) -> None:
        """Forget the marks of flows that are gone (deleted)."""
        self.marks.difference_update(flow_ids)
        self._marks_changed()

    def _marks_changed(self) -> None:
        self.refresh()
        if "~marked" in self.query_text:  # the rows the list holds are what the marks were
            self._pages.clear()
            self.reload()

    def action_open(self) -> None:
        row = self.current
        if row is not None:
            self.post_message(self.Opened(row.id))

    def on_click(self, event: events.Click) -> None:
        index = int(self.scroll_y) + event.y
        if index < self.total:
            self._set_cursor(index)
            if event.chain >= 2:
                self.action_open()

    def on_resize(self) -> None:
        self.virtual_size = Size(self.scrollable_content_region.width, self.total)
        self._placed = True
        self._set_cursor(self.cursor)

    # -- rendering ---------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index = int(self.scroll_y) + y
        base = self.rich_style
        row = self.row(index) if self._placed else None
        if row is None:
            if self.total == 0 and y == 1 and self._placed:
                return Strip([Segment(f"  {self.empty_hint()}", base + self._overlay("flow-list--pending"))]
                             ).crop_extend(0, width, base)
            return Strip.blank(width, base)
        style_of = self._overlay
        current_session = row.session_id == self.source.session_id
        line_style = base if current_session else base + style_of("flow-list--older")
        if index == self.cursor:
            line_style += style_of("flow-list--cursor")
        cells = row_cells(row, self.clock())
        columns = layout(width)
        session = fmt.fit(str(row.session_id), SESSION_WIDTH, right=True)
        session_style = line_style + style_of("flow-list--current") if current_session else line_style
        if row.id in self.marks:
            segments = [Segment(session, session_style), Segment(MARK, line_style + style_of("flow-list--marked"))]
        else:
            segments = [Segment(session + " ", session_style)]
        for number, (index, column, cell_width) in enumerate(columns):
            cell = cells[index]
            style = line_style + self._cell_style(column.title, row)
            mark = replay_mark(row) if column.title == "path" else ""
            if column.title == "issues" and row.errors and row.warnings:
                # Two colours: the error count must not make the warnings look like errors.
                errors = f"✖{row.errors}"
                segments.append(Segment(errors, line_style + style_of("flow-list--errors")))
                segments.append(Segment(fmt.fit(cell[len(errors):], cell_width - len(errors)),
                                        line_style + style_of("flow-list--warnings")))
            elif mark and cell_width > len(mark):
                # "replay of #N" leads the path so truncation never hides it.
                segments.append(Segment(mark, line_style + style_of("flow-list--replay")))
                segments.append(Segment(fmt.fit(cell[len(mark):], cell_width - len(mark)), style))
            else:
                segments.append(Segment(fmt.fit(cell, cell_width, column.right), style))
            if number < len(columns) - 1:
                segments.append(Segment(" ", line_style))
        return Strip(segments).crop_extend(0, width, line_style).simplify()

    def _overlay(self, component: str) -> Style:
        return overlay(self, component)

    def _cell_style(self, title: str, row: FlowRow) -> Style:
        style_of = self._overlay
        if title == "st":
            if row.state == "error" or (row.status or 0) >= 400:
                return style_of("flow-list--failed")
            if row.state == "pending":
                return style_of("flow-list--pending")
        elif title == "issues":
            if row.errors:
                return style_of("flow-list--errors")
            if row.warnings:
                return style_of("flow-list--warnings")
        return Style()
