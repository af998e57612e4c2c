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
    HelpScreen > VerticalScroll { width: 80; max-height: 90%; height: auto; border: round $accent;
        background: $surface; padding: 0 1; }
    """

    def __init__(self, sections: list[tuple[str, list[tuple[str, str]]]]) -> None:
        """`sections`: (title, [(keys, what they do)]), usually from `binding_rows`."""
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        parts: list[str | tuple[str, str]] = []
        width = max(len(keys) for _, rows in self.sections for keys, _ in rows) + 2
        for title, rows in self.sections:
            parts.append((f"{title}\n", "bold $accent"))
            for keys, text in rows:
                parts += [(f"  {keys:<{width}}", "bold"), f"{text}\n"]
            parts.append("\n")
        with VerticalScroll() as scroll:
            scroll.border_title = "Keys"
            scroll.border_subtitle = "esc to close"
            yield Static(Content.assemble(*parts).rstrip(), id="help-text")
