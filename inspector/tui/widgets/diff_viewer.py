"""The structural diff on the line viewer: added, removed and changed rows coloured from theme
variables, the loss report's and the repairs' notes (warnings) under their rows, `n`/`N` from one
change to the next."""

from __future__ import annotations

from textual.binding import Binding

from .lines import LineViewer

NOTE = "warning"  # how compare.py marks a note's line


class DiffViewer(LineViewer):
    COMPONENT_CLASSES = {"line-viewer--added", "line-viewer--removed", "line-viewer--changed"}
    DEFAULT_CSS = """
    DiffViewer > .line-viewer--added { background: $success 25%; }
    DiffViewer > .line-viewer--removed { background: $error 25%; }
    DiffViewer > .line-viewer--changed { background: $primary 25%; }
    """
    BINDINGS = [
        Binding("n", "change(1)", "Next change", id="diff.next-change", tooltip="Go to the next change or note"),
        Binding("N", "change(-1)", "Prev change", show=False, id="diff.previous-change",
                tooltip="Go to the previous change or note"),
    ]

    def stops(self) -> list[int]:
        """The first line of each run of changed lines: a subtree added whole is one stop, not forty,
        and a note (a warning) belongs to the change above it."""
        found = []
        for line in sorted(self.marks):
            if self.marks[line] == NOTE:
                continue
            previous = line - 1
            while self.marks.get(previous) == NOTE:
                previous -= 1
            if self.marks.get(previous) != self.marks[line]:
                found.append(line)
        return found

    def action_change(self, delta: int) -> None:
        stops = self.stops()
        ahead = [line for line in stops if (line > self.cursor if delta > 0 else line < self.cursor)]
        if ahead:
            self.go_to(ahead[0] if delta > 0 else ahead[-1])
