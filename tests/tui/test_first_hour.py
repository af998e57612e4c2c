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
from inspector.tui.widgets.lines import LineViewer
from inspector.tui.widgets.payload import PayloadView
from inspector.tui.widgets.violations import ViolationPanel

from .conftest import make_app, settle, workers_done
from .flows import save_flow
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
        # The held keys go in once the flow is drawn: a few turns of the app's loop after it is ready.
        for _ in range(20):
            if getattr(app.screen, "maximized", None) is not None:
                break
            await pilot.pause()
        screen = app.screen
        assert getattr(screen, "flow_id", None) == ids["defective"]
        assert screen.maximized is screen.query_one("#request", PayloadView)


def save_huge_line(store: Store) -> int:
    """A 2 MB request whose one message is a single line: the needle sits a megabyte in."""
    store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    content = "x" * 1_000_000 + " NEEDLE " + "y" * 1_000_000
    return save_flow(store, {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}]})


def drawn(viewer: LineViewer) -> list[str]:
    return [viewer.render_line(y).text for y in range(viewer.scrollable_content_region.height)]


@pytest.mark.parametrize("size", SIZES)
async def test_search_shows_its_hit_inside_a_megabyte_line(store: Store, size) -> None:
    flow_id = save_huge_line(store)
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        screen = await open_flow(app, pilot, flow_id)
        pane = screen.query_one("#request", PayloadView)
        viewer = pane.viewer
        viewer.focus()
        await pilot.press("slash", *"needle", "enter")
        await pilot.pause()
        line, column = pane.matches[0]
        assert (len(pane.matches), viewer.lines[line][column:column + 6]) == (1, "NEEDLE")
        # Unwrapped: scrolled sideways so the hit is on screen, on the cursor's row.
        row = drawn(viewer)[line - int(viewer.scroll_y)]
        assert "NEEDLE" in row and viewer.scroll_x > 990_000
        # h/l scroll sideways by half a screen.
        x = viewer.scroll_x
        await pilot.press("l")
        assert viewer.scroll_x == x + viewer.scrollable_content_region.width // 2
        await pilot.press("h", "h")
        assert viewer.scroll_x == x - viewer.scrollable_content_region.width // 2
        # Wrapped: the row holding the hit is centred, and j/k move a row at a time inside the line.
        await pilot.press("w", "n")
        await pilot.pause()
        rows = drawn(viewer)
        at = next(n for n, text in enumerate(rows) if "NEEDLE" in text)
        assert abs(at - viewer.scrollable_content_region.height // 2) <= 1
        top = viewer.scroll_y
        for _ in range(viewer.scrollable_content_region.height):
            await pilot.press("j")
        assert (viewer.cursor, viewer.scroll_y) == (line, top + at + 1)


@pytest.mark.parametrize("size", [(80, 24), (120, 36), (160, 48)])
async def test_wrapped_rows_stop_short_of_the_scrollbar(size) -> None:
    from textual.app import App

    class One(App[None]):
        def compose(self):
            yield LineViewer(wrap=True)

    text = " ".join(f"alias_{n}_tail" for n in range(1000))
    app = One()
    async with app.run_test(size=size) as pilot:
        viewer = app.query_one(LineViewer)
        viewer.load([text, "short"])
        await pilot.pause()
        assert viewer.show_vertical_scrollbar
        width = viewer.scrollable_content_region.width
        rows = [viewer.render_line(y).text for y in range(viewer.scrollable_content_region.height)]
        # Every row fits the width left beside the scrollbar, so every character is on screen.
        assert all(len(row) <= width for row in rows)
        texts = [text[start:end] for index, start, end in viewer._rows if index == 0]
        # (A row may end on the blank it broke at: a trailing blank is no character lost.)
        assert "".join(texts) == text and max(len(t.rstrip()) for t in texts) <= width - viewer._gutter_width()


@pytest.mark.parametrize("size", SIZES)
async def test_one_repair_reads_as_english(store: Store, size) -> None:
    from inspector.tui.screens.diff import DiffScreen
    from inspector.tui.widgets.diff_viewer import DiffViewer

    from .flows import WEATHER, defective_request

    store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    flow_id = save_flow(store, {**defective_request(), "tools": [WEATHER]})  # OC-17 alone: one repair
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await open_flow(app, pilot, flow_id)
        await pilot.press("F")
        await workers_done(app)
        await pilot.pause()
        assert isinstance(app.screen, DiffScreen)
        assert app.screen.query_one("#diff", DiffViewer).border_subtitle == "+1 −0 ~0 · 1 note · 1 repair · 0 errors left"


def test_counted_says_one_thing_and_several() -> None:
    from inspector.tui.format import counted

    assert [counted(n, "note") for n in (0, 1, 2)] == ["0 notes", "1 note", "2 notes"]
    assert counted(1, "match", "matches") == "1 match" and counted(3, "match", "matches") == "3 matches"


@pytest.mark.parametrize("size", SIZES)
async def test_a_flow_in_progress_shows_its_model(store: Store, ids: dict[str, int], size) -> None:
    import orjson

    from inspector.flow import Flow
    from inspector.tui.widgets.flow_list import row_cells

    from .flows import T0, clean_request

    flow = Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=T0 + 30, method="POST",
                path="/v1/chat/completions", request_body=orjson.dumps(clean_request("gpt-4.1-nano")))
    store.save(flow)  # pending: the response has not come
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        row = flows.current
        assert (row.id, row.state, row.dialect, row.model, row.tools) == (flow.id, "pending", "openai-chat",
                                                                           "gpt-4.1-nano", 1)
        assert "gpt-4.1-nano" in row_cells(row, flows.clock())
