"""`i` in the flow view: the chosen finding whole, on a screen of its own. At 80x24 the violations
pane has five rows; a finding's message, pointer, why and fix take three times that. `n`/`N` walk
the findings here too (the flow view's panes follow), esc goes back to them."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from ...textsafe import shown
from ..view import Located
from ..widgets.footer import SteadyFooter
from ..widgets.violations import COLOURS, ICONS, effect_text, explanation
from .reading import ReadingScreen


def finding_text(item: Located, number: int, total: int) -> Content:
    v = item.violation
    where = ", ".join(f"{pane} line {line + 1}" for pane, line in item.lines.items()) or "no payload line"
    return Content.assemble(
        (f"{ICONS[v.severity]} {v.rule} {v.severity.value}", f"bold {COLOURS[v.severity]}"),
        (f"  finding {number} of {total} · {v.where or 'payload'} · {effect_text(v)}\n\n", "$text-muted"),
        shown(v.message), "\n\n",
        ("at   ", "bold"), shown(v.pointer) or "/", (f"  ({where})\n", "$text-muted"),
        explanation(v),
    )


class FindingScreen(ReadingScreen):
    HELP_TITLE = "Finding"
    BINDINGS = [
        Binding("escape,q,i", "back", "Back", id="finding.back", tooltip="Back to the flow"),
        Binding("n", "step(1)", "Next issue", id="finding.next", tooltip="The next finding"),
        Binding("N", "step(-1)", "Prev issue", id="finding.previous", tooltip="The previous finding"),
    ]
    DEFAULT_CSS = """
    FindingScreen > VerticalScroll { padding: 0 1; border: round $accent; }
    """

    def __init__(self, items: list[Located], index: int, step: Callable[[int], int]) -> None:
        """`step(delta)` moves the flow view's chosen finding and returns its index."""
        super().__init__()
        self.items, self.index, self._step = items, index, step

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="finding-scroll", can_focus=True):
            yield Static(id="finding")
        yield SteadyFooter(compact=True)

    def on_mount(self) -> None:
        self._show()
        self.query_one("#finding-scroll").focus()

    def _show(self) -> None:
        self.query_one("#finding-scroll").border_title = "Finding"
        self.query_one("#finding", Static).update(finding_text(self.items[self.index], self.index + 1, len(self.items)))

    def action_step(self, delta: int) -> None:
        self.index = self._step(delta)
        self._show()
