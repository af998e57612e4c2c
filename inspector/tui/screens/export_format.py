"""`x`: which format to export the flow in. The app remembers the last choice and offers it first."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option


def offered() -> list[tuple[str, str]]:
    """(format, what it is for) of the formats that need no optional extra, in the registry's order."""
    from ...formats.registry import FORMATS  # first use only: the app's first frame needs no format

    return [(f.name, f.description) for f in FORMATS if f.write is not None and f.extra is None]


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
        options = OptionList(*[Option(f"{name:<7} {what}", id=name) for name, what in offered()])
        options.border_title = f"Export #{self.flow_id} as"
        options.border_subtitle = "enter to write · esc to cancel"
        yield options

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = [name for name, _ in offered()].index(self.last)
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
