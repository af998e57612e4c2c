"""`y`, `Y`, `x`: which folder the file goes to. Offered: the folder chosen last in this run, else
the user's exports directory (files.exports_dir), never the current directory. The file keeps the
name the product gives it and is only ever a new file there (files.write_new: never over a file,
never through a link of that name)."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Input


class SaveToScreen(ModalScreen[Path | None]):
    """Dismissed with the folder to write into, or None (esc)."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="save.cancel", tooltip="Write nothing")]
    DEFAULT_CSS = """
    SaveToScreen { align: center middle; }
    SaveToScreen > Input { width: 72; border: round $accent; background: $surface; }
    """

    def __init__(self, what: str, folder: Path) -> None:
        """`what`: the file, as the title names it ("#3 curl"); `folder`: the one offered."""
        super().__init__()
        self.what = what
        self.folder = folder

    def compose(self) -> ComposeResult:
        field = Input(str(self.folder), id="save-folder")
        field.border_title = f"Write {self.what} into the folder"
        field.border_subtitle = "enter to write · esc to cancel"
        yield field

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        typed = event.value.strip()
        self.dismiss(Path(typed).expanduser() if typed else self.folder)
