"""The key bar at the bottom of each screen."""

from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from ..keymap import keys_of

HELP_ID = "app.help"  # `?` (or the user's key for it): every key the footer has no room for; never left out


def entry_width(key: FooterKey) -> int:
    """Cells a compact footer entry takes: key, space, description, and its right margin."""
    return cell_len(key.key_display) + (1 + cell_len(key.description) if key.description else 0) + 1


class SteadyFooter(Footer):
    """Textual's Footer (8.2.8) rebuilds its keys, a mount and a restyle of each, at every bindings
    update: about fifteen times while a flow opens (each focus change and tab switch sends one),
    half the UI thread's work for the open. This one rebuilds at most once per refresh, and only
    when the keys it shows (or the width they share) changed.

    It also never overflows: the keys the width cannot hold whole are left out from the end, `?`
    (which lists them all) kept, so the last entry is never cut in the middle ("? Ke")."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._rebuild_pending = False
        self._shown: tuple[object, ...] | None = None

    def compose(self) -> ComposeResult:
        keys = list(super().compose())
        palette = [key for key in keys if isinstance(key, FooterKey) and key.has_class("-command-palette")]
        entries = [key for key in keys if key not in palette]
        # The palette's entry docks right behind a one-cell border.
        room = (self.size.width or self.app.size.width) - sum(entry_width(key) for key in palette)
        help_keys = keys_of(self.screen, HELP_ID)
        while entries and sum(entry_width(key) for key in entries if isinstance(key, FooterKey)) > room:
            dropped = next((key for key in reversed(entries)
                            if not isinstance(key, FooterKey) or key.key not in help_keys), None)
            if dropped is None:
                break
            entries.remove(dropped)
        yield from entries
        yield from palette

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen or self._rebuild_pending:
            return
        self._rebuild_pending = True
        self.call_after_refresh(self._rebuild)

    def on_resize(self) -> None:
        if self._bindings_ready and self.is_attached:
            self.bindings_changed(self.screen)

    async def _rebuild(self) -> None:
        self._rebuild_pending = False
        if not self.is_attached:  # its screen went away (popped) before the refresh came
            return
        shown = (self.size.width, *((binding.key, binding.description, enabled, tooltip)
                                    for _, binding, enabled, tooltip in self.screen.active_bindings.values()
                                    if binding.show))
        if shown != self._shown:
            self._shown = shown
            await self.recompose()
