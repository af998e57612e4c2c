"""The violations of one flow: a list to move through, and the explanation of the highlighted one."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...wire.violations import Severity
from ..view import Located

# OptionList lays out every option up front (~0.3 ms each); beyond this the list would stall the
# UI thread, while the panes still mark every finding.
MAX_LISTED = 300
ICONS = {Severity.ERROR: "✖", Severity.WARNING: "▲", Severity.INFO: "●"}


# Theme variables, resolved when rendered, so the list follows the theme.
COLOURS = {Severity.ERROR: "$error", Severity.WARNING: "$warning", Severity.INFO: "$primary"}


def violation_prompt(item: Located) -> Content:
    v = item.violation
    return Content.assemble(
        (f"{ICONS[v.severity]} {v.rule} ", f"bold {COLOURS[v.severity]}"),
        (f"{v.where or 'payload'} {v.pointer or '/'}\n", "$text-muted"),
        v.message,
    )


class ViolationPanel(Vertical):
    DEFAULT_CSS = """
    ViolationPanel { border: round $primary 50%; }
    ViolationPanel:focus-within { border: round $accent; }
    ViolationPanel > OptionList { height: 1fr; border: none; padding: 0; }
    ViolationPanel > #violation-detail { height: auto; max-height: 8; padding: 0 1; color: $text-muted;
        border-top: solid $primary 30%; }
    """

    class Chosen(Message):
        def __init__(self, item: Located) -> None:
            super().__init__()
            self.item = item

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[Located] = []
        self.border_title = "Violations"

    def compose(self) -> ComposeResult:
        yield OptionList(id="violation-list")
        yield Static("", id="violation-detail")

    def show(self, items: list[Located]) -> None:
        self.items = items
        errors = sum(1 for i in items if i.violation.severity is Severity.ERROR)
        warnings = sum(1 for i in items if i.violation.severity is Severity.WARNING)
        self.border_subtitle = f"✖{errors} ▲{warnings}" if items else ""
        options = self.query_one(OptionList)
        options.clear_options()
        if items:
            options.add_options([Option(violation_prompt(item), id=str(n))
                                 for n, item in enumerate(items[:MAX_LISTED])])
            if len(items) > MAX_LISTED:
                options.add_option(Option(f"… {len(items) - MAX_LISTED} more, marked in the panes "
                                          "(x exports them all)", disabled=True))
            options.highlighted = 0
        else:
            options.add_option(Option("no contract violations found", disabled=True))
            self.query_one("#violation-detail", Static).update("")

    def step(self, delta: int) -> None:
        listed = min(len(self.items), MAX_LISTED)
        if not listed:
            return
        options = self.query_one(OptionList)
        current = options.highlighted if options.highlighted is not None else -delta
        options.highlighted = (current + delta) % listed

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if event.option.id is None:
            return
        item = self.items[int(event.option.id)]
        v = item.violation
        parts: list[str | tuple[str, str]] = []
        if v.why:
            parts += [("why  ", "bold"), v.why]
        if v.hint:
            parts += [("\nfix  " if v.why else "fix  ", "bold $success"), v.hint]
        self.query_one("#violation-detail", Static).update(Content.assemble(*parts))
        self.post_message(self.Chosen(item))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(self.Chosen(self.items[int(event.option.id)]))
