"""Any terminal: keys typed in one burst after `/` all reach the field it opens (not the viewer
behind it), the footers fit 80 columns, the flow header names the mode of every flow."""

from __future__ import annotations

import pytest
from textual import events
from textual.keys import _character_to_key
from textual.geometry import Region
from textual.widgets import Footer, Input, Static
from textual.widgets._footer import FooterKey

from inspector.flow import EDITED_REPLAY_NOTE
from inspector.wire.dialects.openai_chat.mock import chat_stream
from inspector.store import Store
from inspector.tui.widgets.flow_list import FlowList
from inspector.tui.widgets.payload import PayloadView

from .conftest import make_app, settle
from .flows import defective_request, save_flow, sse
from .test_flow_view import SIZES, open_flow


async def burst(app, pilot, text: str) -> None:
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
        pane.viewer.focus()
        await pilot.pause()
        await burst(app, pilot, "/wnzq")  # wrap, next finding, zoom, back: none may act
        box = pane.query_one("#search", Input)
        assert (box.value, box.has_focus, app.screen is screen, screen.maximized) == ("wnzq", True, True, None)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("where", ["list", "flow", "editor"])
async def test_every_footer_entry_is_whole_and_help_is_one_of_them(store: Store, ids: dict[str, int], where,
                                                                   size) -> None:
    """What the footer offers is readable whole at 80 columns, and `?` (every other key) is there:
    in the editor the keys are text, so `?` gives way to the two keys that leave it."""
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        if where != "list":
            await open_flow(app, pilot, ids["defective"])
        if where == "editor":
            await pilot.press("e")
            await settle(app, pilot)
        footer = app.screen.query_one(Footer)
        # The palette's key, where offered, is drawn over the right end.
        palette = footer.query(".-command-palette")
        end = palette.first().region.x if palette else footer.region.right
        entries = [(key.key_display, key.description, key.region) for key in footer.query(FooterKey)
                   if key not in palette]
        assert entries and all(region.right <= end for *_, region in entries), entries
        shown = [(key, description) for key, description, _ in entries]
        expected = {"list": ("?", "Keys"), "flow": ("?", "Keys"), "editor": ("esc", "Cancel")}[where]
        assert expected in shown


@pytest.mark.parametrize("size", SIZES)
async def test_the_flow_header_shows_the_mode_of_every_flow(store: Store, ids: dict[str, int], size) -> None:
    # The longest title there is: a long path, a long model, findings, a replay mark, a stream.
    long_path = "/v1beta/models/gemini-2.5-flash-preview-05-20:streamGenerateContent"
    ids["long"] = save_flow(store, {**defective_request(), "model": "gpt-4.1-mini-2025-04-14-long-name"},
                            path=long_path, replay_of=ids["defective"], notes=[EDITED_REPLAY_NOTE],
                            stream=sse(chat_stream("It is sunny in Paris.", pieces=3)))
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        for flow_id in sorted(ids.values()):
            screen = await open_flow(app, pilot, flow_id)
            title = screen.query_one("#flow-title", Static)
            drawn = " ".join(strip.text for strip in title.render_lines(Region(0, 0, *title.size)))
            assert "passthrough" in drawn, (flow_id, drawn)
            await pilot.press("escape")
            await pilot.pause()
