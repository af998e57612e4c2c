"""Any terminal: keys typed in one burst after `/` all reach the field it opens (not the viewer
behind it), the footers fit 80 columns, the flow header names the mode of every flow."""

from __future__ import annotations

import pytest
from textual import events
from textual.keys import _character_to_key
from textual.widgets import Input

from inspector.store import Store
from inspector.tui.widgets.flow_list import FlowList
from inspector.tui.widgets.payload import JsonArea, PayloadView

from .conftest import make_app, settle
from .test_flow_view import SIZES, open_flow


async def burst(app, pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    """`text` as a fast typist or a paste sends it: every key queued before the app handles the
    first (Pilot.press waits for the app to go idle between keys)."""
    for character in text:
        key = events.Key(_character_to_key(character), character)
        key.set_sender(app)
        app._driver.send_message(key)
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
async def test_a_burst_after_slash_lands_in_the_list_filter(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        # j, k, r, x, q are all keys of the list: not one may act.
        await burst(app, pilot, "/jkrxq")
        await settle(app, pilot)
        field = app.screen.query_one("#filter", Input)
        assert (field.value, field.has_focus, flows.filter_text, app.is_running) == ("jkrxq", True, "jkrxq", True)


@pytest.mark.parametrize("size", SIZES)
async def test_a_burst_after_slash_lands_in_the_payload_search(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        screen = await open_flow(app, pilot, ids["defective"])
        pane = screen.query_one("#request", PayloadView)
        pane.query_one(JsonArea).focus()
        await pilot.pause()
        await burst(app, pilot, "/wnzq")  # wrap, next finding, zoom, back: none may act
        box = pane.query_one("#search", Input)
        assert (box.value, box.has_focus, app.screen is screen, screen.maximized) == ("wnzq", True, True, None)
