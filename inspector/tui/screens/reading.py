"""What the screens that read one flow share: below 100 columns their panes stack (`-narrow`), `z`
gives the focused pane the whole screen, and esc goes back. The conversation and diff screens are
also laid out alike: a title over a main pane and a side pane (classes `title`, `panes`, `main`,
`side`). Each screen keeps its own BINDINGS: the help and the palette read a class's own."""

from __future__ import annotations

from textual.screen import Screen


class ReadingScreen(Screen[None]):
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    DEFAULT_CSS = """
    ReadingScreen > .title { height: auto; max-height: 3; padding: 0 1; background: $panel; }
    ReadingScreen > .panes { height: 1fr; }
    ReadingScreen > .panes > .main { width: 2fr; }
    ReadingScreen > .panes > .side { width: 1fr; }
    ReadingScreen > .panes > LineViewer { border: round $primary 50%; }
    ReadingScreen > .panes > LineViewer:focus { border: round $accent; }
    ReadingScreen.-narrow > .panes { layout: vertical; }
    ReadingScreen.-narrow > .panes > .main { width: 1fr; height: 1fr; }
    ReadingScreen.-narrow > .panes > .side { width: 1fr; height: 8; }
    """

    def action_back(self) -> None:
        self.dismiss()

    def action_zoom(self) -> None:
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None:
            self.maximize(self.focused)
