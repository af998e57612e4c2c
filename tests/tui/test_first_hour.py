"""Issue 22, reading a flow at 80x24 and 160x48: the chosen finding's message always in view and
the whole finding one key away, `z` and focus on the pane that has content, j/k in the findings,
a footer that never loses `?`, keys typed while a flow opens."""

import pytest
from textual import events
from textual.content import Content
from textual.widgets import Footer, OptionList, Static
from textual.widgets._footer import FooterKey

from inspector.store import Store
from inspector.tui.screens.finding import FindingScreen
from inspector.tui.widgets.flow_list import FlowList
from inspector.tui.widgets.payload import PayloadView
from inspector.tui.widgets.violations import ViolationPanel

from .conftest import make_app, settle
from .test_flow_view import SIZES, open_flow


@pytest.mark.parametrize("size", SIZES)
async def test_the_chosen_findings_message_is_in_view(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        screen = await open_flow(app, pilot, ids["defective"])
        panel = screen.query_one(ViolationPanel)
        options = screen.query_one(OptionList)
        v = panel.items[0].violation
        prompt = options.get_option_at_index(0).prompt
        # Rule, then the message, then the pointer: a short pane cuts the pointer, not the message.
        assert str(prompt).split("\n")[:2] == ["✖ OC-05 request · provider rejects", v.message]
        message_rows = len(Content(v.message).wrap(panel._prompt_width))
        assert options.scrollable_content_region.height >= 1 + message_rows
        assert options.scroll_offset.y == 0


@pytest.mark.parametrize("size", SIZES)
async def test_i_shows_the_chosen_finding_whole(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        screen = await open_flow(app, pilot, ids["defective"])
        items = screen.view.violations
        await pilot.press("n", "i")
        await pilot.pause()
        assert isinstance(app.screen, FindingScreen)
        v = items[1].violation
        whole = str(app.screen.query_one("#finding", Static).content)
        assert whole == (f"✖ OC-05 error  finding 2 of 3 · request · provider rejects\n\n{v.message}\n\n"
                         f"at   {v.pointer}  (request line 12, upstream line 12)\n"
                         f"why  {v.why}\nfix  {v.hint}")
        # Nothing of it is cut: it fits the screen it has, at 80x24 too.
        scroll = app.screen.query_one("#finding-scroll")
        assert scroll.virtual_size.height <= scroll.scrollable_content_region.height
        await pilot.press("n")
        await pilot.pause()
        assert str(app.screen.query_one("#finding", Static).content).startswith(
            "✖ OC-17 error  finding 3 of 3 · request · provider rejects")
        await pilot.press("escape")
        await pilot.pause()
        # Back on the flow, the panes show the finding last read.
        assert app.screen is screen
        assert (screen.query_one(OptionList).highlighted, screen.query_one("#request", PayloadView).viewer.chosen) \
            == (2, 40)


@pytest.mark.parametrize("size", SIZES)
async def test_j_and_k_walk_the_zoomed_findings(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        screen = await open_flow(app, pilot, ids["defective"])
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is screen.query_one(ViolationPanel)
        seen = []
        for key in "jjk":
            await pilot.press(key)
            await pilot.pause()
            seen.append((screen.query_one(OptionList).highlighted,
                         screen.query_one("#request", PayloadView).viewer.chosen))
        assert seen == [(1, 11), (2, 40), (1, 11)]


@pytest.mark.parametrize("size", SIZES)
async def test_a_flow_without_findings_focuses_and_zooms_its_request(store: Store, ids: dict[str, int],
                                                                     size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        screen = await open_flow(app, pilot, ids["clean"])
        request = screen.query_one("#request", PayloadView)
        assert screen.focused is request.viewer
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is request
        await pilot.press("z")
        await pilot.pause()
        # The flow after it has findings: the list has the focus again.
        screen = await open_flow(app, pilot, ids["defective"])
        assert screen.focused is screen.query_one("#violation-list")
        # From the empty violations box of a clean flow, z zooms the request too.
        screen = await open_flow(app, pilot, ids["clean"])
        screen.query_one("#violation-list").focus()
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is screen.query_one("#request", PayloadView)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("focus", ["#request", "#response"])
async def test_the_footer_keeps_help_whole_when_a_payload_has_focus(store: Store, ids: dict[str, int], focus,
                                                                    size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        screen = await open_flow(app, pilot, ids["defective"])
        screen.query_one(focus, PayloadView).viewer.focus()
        await pilot.pause()
        await pilot.pause()
        footer = screen.query_one(Footer)
        palette = footer.query_one(".-command-palette")
        entries = [(key.key_display, key.description, key.region) for key in footer.query(FooterKey)
                   if key is not palette]
        assert all(region.right <= palette.region.x for *_, region in entries), entries
        shown = [(key, description) for key, description, _ in entries]
        # The focused pane's own keys come first, `?` for the rest last.
        assert shown[:2] == [("w", "Wrap"), ("/", "Search")] and shown[-1] == ("?", "Keys")


@pytest.mark.parametrize("size", SIZES)
async def test_keys_typed_while_a_flow_opens_act_in_it(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        # Open the defective flow from the list, then tab past the finding's detail to the request and
        # zoom it, all at once.
        assert app.query_one(FlowList).select_id(ids["defective"])
        for key, character in (("enter", "\r"), ("tab", "\t"), ("tab", "\t"), ("z", "z")):
            event = events.Key(key, character)
            event.set_sender(app)
            app._driver.send_message(event)
        await settle(app, pilot)
        await pilot.pause()
        screen = app.screen
        assert getattr(screen, "flow_id", None) == ids["defective"]
        assert screen.maximized is screen.query_one("#request", PayloadView)
