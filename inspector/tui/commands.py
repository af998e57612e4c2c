"""Command palette (ctrl+p): jump to any flow by id, path, model or dialect; run any action of the
screen in use (read from its bindings, as the help is) and the common filters."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher

from ..textsafe import shown

from . import format as fmt

if TYPE_CHECKING:
    from ..store import FlowRow
    from .app import InspectorApp

# The palette lists the newest flows; older ones are one filter (`/`) away.
RECENT = 200
# Filters worth one pick: (what the list shows, the expression).
FILTERS = [
    ("flows that failed (transport error or status ≥ 400)", "~e"),
    ("flows with error findings", "~v error"),
    ("flows with warnings", "~v warning"),
    ("replays", "~r"),
]


def describe(row: FlowRow) -> str:
    """The flow as the palette lists it, recorded text shown safe."""
    dialect = fmt.DIALECT_SHORT.get(row.dialect, row.dialect or "-")
    badge = fmt.badge(row.errors, row.warnings)
    return shown(f"#{row.id} {row.method} {row.path} {dialect} {row.model or '-'} {fmt.status(row.status, row.state)}"
                 + (f" {badge}" if badge else ""))


def highlight(matcher: Matcher, text: str) -> Content:
    """`text` with the query's matches marked, as plain text: `Matcher.highlight` (and a prompt given
    as a string) reads it as markup, which a flow's path or model is not."""
    content = Content(text)
    _, offsets = matcher.fuzzy_search.match(matcher.query, text)
    for offset in offsets:
        if not text[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


class FlowCommands(Provider):
    @property
    def inspector(self) -> InspectorApp:
        return self.app  # type: ignore[return-value]

    def _recent(self) -> list[FlowRow]:
        store = self.inspector.store
        return store.rows(limit=RECENT, offset=max(0, store.count() - RECENT))[::-1]

    async def discover(self) -> Hits:
        for row in self._recent()[:20]:
            yield DiscoveryHit(Content(f"Open {describe(row)}"), partial(self.inspector.open_flow, row.id),
                               help="Open this flow")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for row in self._recent():
            text = f"Open {describe(row)}"
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, highlight(matcher, text), partial(self.inspector.open_flow, row.id),
                          help="Open this flow")


class ScreenCommands(Provider):
    """Every action of the screen the palette was opened on, from the binding table the help and
    the footer read (so a key and its command can never part), and the list's common filters.
    An action is listed by its footer name ("Replay fixed"), its sentence and key the help line
    below it; a query finds the names first, then the sentences."""

    # A hit on the help line only ranks below every hit on a name.
    HELP_WEIGHT = 0.5

    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        from .screens.flows import FlowsScreen  # the screens import this module's siblings
        from .screens.help import binding_table, key_names, user_keys

        screen = self.screen
        commands: list[tuple[str, Callable[[], object], str]] = []
        for _, node, bindings in binding_table(screen):
            for binding in bindings:
                key = key_names(binding, user_keys(screen)).split(", ")[0]
                commands.append((binding.description,
                                 partial(self.app.call_later, node.run_action, binding.action),
                                 f"{binding.tooltip} · {key}" if binding.tooltip else key))
        if isinstance(screen, FlowsScreen):
            for what, expression in FILTERS:
                commands.append((f"Filter: {what}", partial(screen.set_filter, expression), expression))
        return commands

    async def discover(self) -> Hits:
        for text, run, help_text in self._commands():
            yield DiscoveryHit(Content(text), run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, run, help_text in self._commands():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, highlight(matcher, text), run, help=help_text)
            elif (score := matcher.match(help_text) * self.HELP_WEIGHT) > 0:
                yield Hit(score, Content(text), run, text=text, help=help_text)
