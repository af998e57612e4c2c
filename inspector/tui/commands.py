"""Command palette (ctrl+p): jump to any flow by id, path, model or dialect."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from . import format as fmt

if TYPE_CHECKING:
    from ..store import FlowRow
    from .app import InspectorApp

# The palette lists the newest flows; older ones are one filter (`/`) away.
RECENT = 200


def describe(row: FlowRow) -> str:
    dialect = fmt.DIALECT_SHORT.get(row.dialect, row.dialect or "-")
    badge = fmt.badge(row.errors, row.warnings)
    return f"#{row.id} {row.method} {row.path} {dialect} {row.model or '-'} {fmt.status(row.status, row.state)}" + (
        f" {badge}" if badge else "")


class FlowCommands(Provider):
    @property
    def inspector(self) -> InspectorApp:
        return self.app  # type: ignore[return-value]

    def _recent(self) -> list[FlowRow]:
        store = self.inspector.store
        return store.rows(limit=RECENT, offset=max(0, store.count() - RECENT))[::-1]

    async def discover(self) -> Hits:
        for row in self._recent()[:20]:
            yield DiscoveryHit(f"Open {describe(row)}", partial(self.inspector.open_flow, row.id),
                               help="Open this flow")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for row in self._recent():
            text = f"Open {describe(row)}"
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), partial(self.inspector.open_flow, row.id),
                          help="Open this flow")
