"""The key bar at the bottom of each screen."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class SteadyFooter(Footer):
    """Textual's Footer (8.2.8) rebuilds its keys, a mount and a restyle of each, at every bindings
    update: about fifteen times while a flow opens (each focus change and tab switch sends one),
    half the UI thread's work for the open. This one rebuilds at most once per refresh, and only
    when the keys it shows changed."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._rebuild_pending = False
        self._shown: tuple[tuple[str, str, bool, str], ...] | None = None

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen or self._rebuild_pending:
            return
        self._rebuild_pending = True
        self.call_after_refresh(self._rebuild)

    async def _rebuild(self) -> None:
        self._rebuild_pending = False
        shown = tuple((binding.key, binding.description, enabled, tooltip)
                      for _, binding, enabled, tooltip in self.screen.active_bindings.values() if binding.show)
        if shown != self._shown:
            self._shown = shown
            await self.recompose()
