"""The HTML page as a recording format: written only, from the store (the page itself is
inspector.html: each flow's views beside its replays and its session's findings). Imported there
only when a page is written: the views and the checker they run are heavy, and the registry (so
`check` and `open`) must import light."""

from __future__ import annotations

from collections.abc import Sequence

from .base import Exported, WriteOptions


def write(turns: Sequence[Exported], options: WriteOptions) -> bytes:
    from ..html import render

    if options.store is None:
        raise ValueError("an HTML page is written from the store its flows were recorded in (WriteOptions.store)")
    ids = [turn.flow_id for turn in turns]
    title = options.title or (f"flow #{ids[0]}" if len(ids) == 1 else f"{len(ids)} flows")
    return render(options.store, ids, title=title)
