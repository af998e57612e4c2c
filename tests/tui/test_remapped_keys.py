"""Issue 22: the user's keymap holds wherever the app looks at a key itself, not only where Textual
dispatches it: the keys held while a flow opens (the key that opens it, the keys that never wait)
and the footer's `?`, which is never the entry left out. At 80×24 and 160×48."""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from inspector.store import Store
from inspector.tui.widgets.flow_list import FlowList
from inspector.tui.widgets.payload import PayloadView

from .conftest import make_app, settle
from .test_flow_view import SIZES, open_flow


def send_at_once(app, keys: list[tuple[str, str | None]]) -> None:
    """Keys as a fast typist sends them: all queued before the app handles the first."""
    for key, character in keys:
        event = events.Key(key, character)
        event.set_sender(app)
        app._driver.send_message(event)


@pytest.mark.parametrize("size", SIZES)
async def test_keys_typed_after_a_remapped_open_key_wait_for_the_flow(store: Store, ids: dict[str, int], size) -> None:
    # `l` opens (as in a pager), and enter no longer does.
    app = make_app(store, keys=({"flows.open": "l"}, []))
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        assert app.query_one(FlowList).select_id(ids["defective"])
        # enter is no key of the list's now: nothing would be held after it.
        assert (app._opens_a_flow("enter"), app._opens_a_flow("l")) == (False, True)
        send_at_once(app, [("l", "l"), ("tab", "\t"), ("tab", "\t"), ("z", "z")])
        await settle(app, pilot)
        for _ in range(20):  # the held keys go in a few loop turns after the flow is drawn
            if getattr(app.screen, "maximized", None) is not None:
                break
            await pilot.pause()
        screen = app.screen
        assert (getattr(screen, "flow_id", None), screen.maximized) == (ids["defective"],
                                                                        screen.query_one("#request", PayloadView))


@pytest.mark.parametrize("size", SIZES)
async def test_a_remapped_quit_key_is_never_held(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store, keys=({"app.quit": "ctrl+x"}, []))
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        assert app._unheld_keys == {"ctrl+x"}


@pytest.mark.parametrize("size", SIZES)
async def test_the_footer_keeps_a_remapped_help_key(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store, keys=({"app.help": "f1"}, []))
    async with app.run_test(size=size) as pilot:
        screen = await open_flow(app, pilot, ids["defective"])
        screen.query_one("#request", PayloadView).viewer.focus()
        await pilot.pause()
        await pilot.pause()
        footer = screen.query_one(Footer)
        entries = [(key.key_display, key.description) for key in footer.query(FooterKey)
                   if not key.has_class("-command-palette")]
        # However few fit, the key that lists the rest is the last one shown.
        assert entries[-1] == ("f1", "Keys")


@pytest.mark.parametrize("size", SIZES)
async def test_the_lists_hints_name_the_remapped_keys(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store, keys=({"flows.mark": "space", "flows.marked-only": "V", "flows.clear-filter": "ctrl+l"}, []))
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        await pilot.press("V")
        await settle(app, pilot)
        assert flows.empty_hint() == "No marked flow here (space marks the flow under the cursor; V shows every flow)."
        assert flows.empty_hint().startswith(flows.render_line(1).text.strip())  # as much as the width holds
        await pilot.press("V")
        await settle(app, pilot)
        flows.filter_text = "nothing-matches-this"
        await settle(app, pilot)
        assert flows.empty_hint() == "No flow matches “nothing-matches-this” (ctrl+l clears the filter)."
