"""The violations of one flow: a list to move through, and the explanation of the highlighted one.

Every finding reads in full at any width: its pointer is folded at `/` boundaries to the list's
width (pointers have no spaces, so the list's own word wrap would cut them anywhere), the message,
why and fix wrap on words. The message comes right under the rule: where the pane is short (80x24)
the list shows the top of the chosen finding, so what is cut is the pointer, never the message, and
`i` (FindingScreen) shows the whole finding."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...textsafe import shown
from ...wire.violations import Effect, Severity, Violation
from ..format import fold
from ..view import Located

# OptionList lays out every option as it is added (~0.3 ms each): a screenful goes in at once, the
# rest a chunk per frame, so a flow with hundreds of findings paints and answers keys meanwhile.
# Beyond MAX_LISTED the panes still mark every finding.
MAX_LISTED = 300
FIRST_LISTED = 30
LISTED_PER_FRAME = 50
ICONS = {Severity.ERROR: "✖", Severity.WARNING: "▲", Severity.INFO: "●"}


# Theme variables, resolved when rendered, so the list follows the theme.
COLOURS = {Severity.ERROR: "$error", Severity.WARNING: "$warning", Severity.INFO: "$primary"}


def violation_prompt(item: Located, width: int) -> Content:
    v = item.violation
    pointer = shown(v.pointer) or "/"
    # The pointer starts on its own line so every fold of it lines up under the first.
    folded = "\n".join(pointer[start:end] for start, end in fold(pointer, max(8, width)))
    return Content.assemble(
        (f"{ICONS[v.severity]} {v.rule} ", f"bold {COLOURS[v.severity]}"),
        (f"{v.where or 'payload'} · ", "$text-muted"),
        (effect_text(v), "italic"),
        "\n",
        shown(v.message),
        (f"\n{folded}", "$text-muted"),
    )


def effect_text(v: Violation) -> str:
    return f"provider {v.effect.value}" if v.effect is not Effect.BREAKS_CLIENT else v.effect.value


def explanation(v: Violation) -> Content:
    """The why and the fix of a finding (the pane's detail, and the whole finding's end)."""
    parts: list[str | tuple[str, str]] = []
    if v.why:
        parts += [("why  ", "bold"), shown(v.why, lines=True)]
    if v.hint:
        parts += [("\nfix  " if v.why else "fix  ", "bold $success"), shown(v.hint, lines=True)]
    return Content.assemble(*parts)


class FindingList(OptionList):
    """The findings: j/k walk them as they walk every other list of the app."""

    HELP_SECTION = "Violations list (the flow view starts there)"

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="findings.down", tooltip="Next finding in the list"),
        Binding("k", "cursor_up", "Up", show=False, id="findings.up", tooltip="Previous finding in the list"),
    ]


class ViolationPanel(Vertical):
    ALLOW_MAXIMIZE = True  # z: the findings take the whole screen
    DEFAULT_CSS = """
    ViolationPanel { border: round $primary 50%; }
    ViolationPanel:focus-within { border: round $accent; }
    ViolationPanel > OptionList { height: 1fr; border: none; padding: 0; }
    ViolationPanel.empty > #violation-detail { display: none; }
    ViolationPanel > #violation-detail { height: auto; max-height: 60%; padding: 0 1; color: $text-muted;
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
        self._prompt_width = 0  # the width the listed pointers were folded to
        self._listing = 0  # bumped by every new listing: a chunk of an older one is dropped

    def compose(self) -> ComposeResult:
        yield FindingList(id="violation-list")
        # Scrolls when why and fix outgrow its share of the pane (z gives it the whole screen).
        with VerticalScroll(id="violation-detail"):
            yield Static("", id="violation-explanation")

    def on_resize(self) -> None:
        if self.items and self._list_width() != self._prompt_width:
            self._list_options()

    def show(self, items: list[Located]) -> None:
        self.items = items
        errors = sum(1 for i in items if i.violation.severity is Severity.ERROR)
        warnings = sum(1 for i in items if i.violation.severity is Severity.WARNING)
        self.border_subtitle = f"✖{errors} ▲{warnings}" if items else ""
        self.set_class(not items, "empty")
        options = self.query_one(OptionList)
        if items:
            self._list_options()
            options.highlighted = 0
        else:
            self._listing += 1
            options.clear_options()
            options.add_option(Option("no contract violations found", disabled=True))
            self.query_one("#violation-explanation", Static).update("")

    def pending(self, note: str = "checking…") -> None:
        """Nothing known yet: the flow is being checked (the screen is reused from flow to flow)."""
        self.items = []
        self._listing += 1
        self.border_subtitle = ""
        self.set_class(True, "empty")
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_option(Option(note, disabled=True))
        self.query_one("#violation-explanation", Static).update("")

    def _list_width(self) -> int:
        # The list's scrollbar takes 2 columns as soon as the findings outgrow it; fold for that.
        return self.query_one(OptionList).scrollable_content_region.width - 2

    def _list_options(self) -> None:
        options = self.query_one(OptionList)
        highlighted = options.highlighted
        self._prompt_width = self._list_width()
        self._listing += 1
        options.clear_options()
        self._list_more(self._listing, 0, FIRST_LISTED, highlighted)

    def _list_more(self, listing: int, start: int, count: int, highlighted: int | None = None) -> None:
        """Add the next `count` findings; `highlighted` goes back on once its option is in."""
        if listing != self._listing:
            return
        end = min(start + count, len(self.items), MAX_LISTED)
        options = self.query_one(OptionList)
        options.add_options([Option(violation_prompt(self.items[n], self._prompt_width), id=str(n))
                             for n in range(start, end)])
        if highlighted is not None and highlighted < end:
            with options.prevent(OptionList.OptionHighlighted):
                options.highlighted = highlighted
            highlighted = None
        if end < min(len(self.items), MAX_LISTED):
            self.call_after_refresh(self._list_more, listing, end, LISTED_PER_FRAME, highlighted)
        elif len(self.items) > MAX_LISTED:
            options.add_option(Option(f"… {len(self.items) - MAX_LISTED} more, marked in the panes "
                                      "(x exports them all)", disabled=True))

    @property
    def highlighted(self) -> int | None:
        """The index in `items` of the finding the list highlights."""
        option = self.query_one(OptionList).highlighted_option
        return None if option is None or option.id is None else int(option.id)

    def step(self, delta: int) -> int:
        """Highlight the finding `delta` away (wrapping); its index."""
        options = self.query_one(OptionList)
        listed = min(len(self.items), MAX_LISTED, options.option_count)
        if not listed:
            return 0
        current = options.highlighted if options.highlighted is not None else -delta
        options.highlighted = (current + delta) % listed
        return options.highlighted

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if event.option.id is None:
            return
        item = self.items[int(event.option.id)]
        self.query_one("#violation-explanation", Static).update(explanation(item.violation))
        self.post_message(self.Chosen(item))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(self.Chosen(self.items[int(event.option.id)]))
