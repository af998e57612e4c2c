"""`?`: every key, read from the bindings themselves so the help can never drift from them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static


def _key_names(binding: Binding) -> str:
    names = {"slash": "/", "question_mark": "?", "escape": "esc", "pagedown": "pgdn", "pageup": "pgup"}
    return ", ".join(binding.key_display or names.get(k.strip(), k.strip()) for k in binding.key.split(","))


def binding_rows(bindings: list[BindingType]) -> list[tuple[str, str]]:
    rows = []
    for binding in bindings:
        if isinstance(binding, Binding):
            rows.append((_key_names(binding), binding.tooltip or binding.description))
    return rows


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", id="help.close", tooltip="Close the help")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 72; max-height: 90%; height: auto; border: round $accent;
        background: $surface; padding: 0 1; }
    """

    def __init__(self, sections: list[tuple[str, list[BindingType]]], extra: list[tuple[str, str]] = ()) -> None:
        super().__init__()
        self.sections = sections
        self.extra = list(extra)  # keys Textual itself provides (no Binding of ours to read)

    def compose(self) -> ComposeResult:
        parts: list[str | tuple[str, str]] = []
        for title, bindings in self.sections:
            parts.append((f"{title}\n", "bold $accent"))
            for keys, text in binding_rows(bindings):
                parts += [(f"  {keys:<14}", "bold"), f"{text}\n"]
            parts.append("\n")
        for keys, text in self.extra:
            parts += [(f"  {keys:<14}", "bold"), f"{text}\n"]
        with VerticalScroll() as scroll:
            scroll.border_title = "Keys"
            scroll.border_subtitle = "esc to close"
            yield Static(Content.assemble(*parts).rstrip(), id="help-text")
