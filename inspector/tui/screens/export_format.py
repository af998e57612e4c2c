"""`x`: which format to export the flow in. The app remembers the last choice and offers it first."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

# (format, what it is for), in the order offered.
FORMATS = [
    ("json", "fixture: the turn as recorded and its fixed form"),
    ("pytest", "a regression test file for your project"),
    ("vcr", "a vcrpy / pytest-recording cassette"),
    ("har", "HAR 1.2 for devtools and mitmproxy"),
]


class ExportFormatScreen(ModalScreen[str | None]):
    """Dismissed with the chosen format, or None (escape)."""

    BINDINGS = [Binding("escape,q", "dismiss(None)", "Cancel", id="export.cancel", tooltip="Export nothing")]
    DEFAULT_CSS = """
    ExportFormatScreen { align: center middle; }
    ExportFormatScreen > OptionList { width: 64; height: auto; border: round $accent; background: $surface; }
    """

    def __init__(self, flow_id: int, last: str) -> None:
        super().__init__()
        self.flow_id = flow_id
        self.last = last

    def compose(self) -> ComposeResult:
        options = OptionList(*[Option(f"{name:<7} {what}", id=name) for name, what in FORMATS])
        options.border_title = f"Export #{self.flow_id} as"
        options.border_subtitle = "enter to write · esc to cancel"
        yield options

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = [name for name, _ in FORMATS].index(self.last)
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
