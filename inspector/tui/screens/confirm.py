"""A yes-or-no question before what cannot be undone (`d`, delete). Its keys are said as the user's
keymap has them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from .help import key_names, user_keys


class ConfirmScreen(ModalScreen[bool]):
    """Dismissed with True (yes) or False (no, escape)."""

    HELP_TITLE = "A question (the delete prompt)"

    BINDINGS = [
        Binding("y", "dismiss(True)", "Yes", id="confirm.yes", tooltip="Yes: do it"),
        Binding("n,escape,q", "dismiss(False)", "No", id="confirm.no", tooltip="No: leave everything as it is"),
    ]
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 64; height: auto; border: round $warning; background: $surface; padding: 0 1; }
    """

    def __init__(self, title: str, question: str, *, yes: str) -> None:
        """`yes`: what the yes key does, in a word or two ("delete")."""
        super().__init__()
        self.title_text = title
        self.question = question
        self.yes = yes

    def compose(self) -> ComposeResult:
        keymap = user_keys(self)
        yes, no = (key_names(binding, keymap) for binding in self.BINDINGS if isinstance(binding, Binding))
        with Vertical() as box:
            box.border_title = self.title_text
            box.border_subtitle = f"{yes}: {self.yes} · {no}: keep"
            yield Static(self.question, markup=False, id="confirm-question")
