"""The flow view: side-by-side request, response tabs, violations that move the panes."""

import pytest
from textual.widgets import OptionList, Static, TabbedContent

from inspector.store import Store
from inspector.tui.screens.flow import FlowScreen
from inspector.tui.widgets.lines import LineViewer
from inspector.tui.widgets.payload import PayloadView
from inspector.tui.widgets.violations import ViolationPanel

from .conftest import make_app, workers_done

SIZES = [(80, 24), (160, 48)]  # issue 9: a laptop terminal first, and a big one


async def open_flow(app, pilot, flow_id: int) -> FlowScreen:
    app.open_flow(flow_id)
    await pilot.pause()
    await workers_done(app)
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, FlowScreen) and screen.view is not None
    return screen


async def test_violations_are_listed_and_marked_on_both_panes(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_flow(app, pilot, ids["defective"])
        panel = screen.query_one(ViolationPanel)
        # Document order: the lines the findings land on, top to bottom (8, 11, 40).
        assert [(i.violation.rule, i.violation.pointer, i.lines) for i in panel.items] == [
            ("OC-05", "/tools/0/function/parameters/type", {"request": 8, "upstream": 8}),
            ("OC-05", "/tools/0/function/parameters/properties/url/type", {"request": 11, "upstream": 11}),
            ("OC-17", "/messages/2/content", {"request": 40, "upstream": 40}),
        ]
        assert panel.border_subtitle == "✖3 ▲0"
        left = screen.query_one("#request", PayloadView)
        right = screen.query_one("#upstream", PayloadView)
        assert left.viewer.marks == {8: "error", 11: "error", 40: "error"}
        # Passthrough: one pane says so; the identical copy is neither shown nor loaded.
        assert (left.border_title, right.display, right.pane) == ("Request · sent upstream unchanged", False, None)
        assert left.viewer.lines[8] == '          "type": "OBJECT",'
        title = str(screen.query_one("#flow-title", Static).content)
        assert title == ("#3 POST /v1/chat/completions  openai-chat · passthrough  gpt-4o-mini  200  ✖3  latency 342ms"
                         "  ttfb 310ms")


@pytest.mark.parametrize("size", SIZES)
async def test_n_and_N_walk_the_findings_in_document_order(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        screen = await open_flow(app, pilot, ids["defective"])
        left = screen.query_one("#request", PayloadView).viewer
        await pilot.pause()
        assert left.chosen == 8  # the first finding is highlighted on open
        seen = []
        for _ in range(3):
            await pilot.press("n")
            await pilot.pause()
            seen.append((screen.query_one(OptionList).highlighted, left.chosen, left.cursor))
        assert seen == [(1, 11, 11), (2, 40, 40), (0, 8, 8)]
        await pilot.press("N")
        await pilot.pause()
        assert (screen.query_one(OptionList).highlighted, left.chosen) == (2, 40)
        assert left.scroll_offset.y > 0


async def test_s_shows_raw_chunks_with_arrival_times(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_flow(app, pilot, ids["streamed"])
        tabs = screen.query_one(TabbedContent)
        assert tabs.active == "tab-response"
        assert str(tabs.get_tab("tab-chunks").label) == "Stream chunks (6)"
        response = screen.query_one("#response", PayloadView)
        assert response.border_subtitle == "reassembled from 6 chunks (s: raw chunks)"
        assert '"content": "It is sunny in Paris."' in "\n".join(response.viewer.lines)
        await pilot.press("s")
        assert tabs.active == "tab-chunks"
        chunks = screen.query_one("#chunks", LineViewer)
        assert len(chunks.lines) == 6
        assert chunks.lines[1].startswith("    +135.0 ms     Δ15.0 ms     ")
        assert chunks.lines[5] == "    +195.0 ms     Δ15.0 ms      14 B  ▸ [DONE] │ data: [DONE]\\n\\n"
        await pilot.press("s")
        assert tabs.active == "tab-response"


async def test_headers_tab_shows_redacted_headers_only(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_flow(app, pilot, ids["clean"])
        await pilot.press("H")
        assert screen.query_one(TabbedContent).active == "tab-headers"
        assert screen.query_one("#headers", LineViewer).lines[:3] == [
            "POST /v1/chat/completions", "content-type: application/json", "authorization: [redacted]"]


async def test_a_failed_flow_says_why(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_flow(app, pilot, ids["failed"])
        assert screen.query_one("#response", PayloadView).border_subtitle == "error: upstream unreachable"
        assert screen.query_one(ViolationPanel).items == []
        assert screen.query_one(OptionList).get_option_at_index(0).prompt == "no contract violations found"


async def test_escape_returns_to_the_list(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        await open_flow(app, pilot, ids["clean"])
        await pilot.press("escape")
        assert not isinstance(app.screen, FlowScreen)


async def test_a_payload_is_shown_from_the_lines_its_worker_split(store: Store) -> None:
    """Every size goes to the line viewer, coloured as JSON, from the lines prepare() split off the
    UI thread: showing a pane makes no pass over its text."""
    from .flows import clean_request, save_flow

    store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    request = clean_request()
    request["messages"] += [{"role": "user", "content": "x" * 1000} for _ in range(150)]
    flow_id = save_flow(store, request)
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_flow(app, pilot, flow_id)
        viewer = screen.query_one("#request", PayloadView).viewer
        assert viewer.lines is screen.view.request.split
        assert (len(viewer.lines), viewer.json) == (29 + 150 * 4, True)  # the clean request, then 4 lines per message


async def test_a_body_that_is_not_json_is_shown_as_received(store: Store) -> None:
    from inspector.flow import Flow, FlowState

    from .flows import T0

    store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    flow = Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=T0, method="POST",
                path="/v1/chat/completions", request_body=b'{"model": "gpt-4o", "messages": [',
                status=400, response_body=b"Bad Request", state=FlowState.COMPLETE)
    store.save(flow)
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_flow(app, pilot, flow.id)
        request = screen.query_one("#request", PayloadView)
        assert (request.border_subtitle, request.viewer.lines) == (
            "not JSON: shown as received", ['{"model": "gpt-4o", "messages": ['])
        response = screen.query_one("#response", PayloadView)
        assert (response.border_subtitle, response.viewer.lines) == ("not JSON: shown as received", ["Bad Request"])
        title = str(screen.query_one("#flow-title", Static).content)
        assert title.startswith(
            "#1 POST /v1/chat/completions  openai-chat · passthrough  400  latency …  request not valid JSON: ")


async def test_a_flood_of_violations_is_listed_up_to_a_cap_and_marked_in_full(store: Store) -> None:
    from inspector.tui.widgets.violations import MAX_LISTED

    from .flows import save_flow

    store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    # 100 tools (under OpenAI's 128 limit), each with 4 upper-case schema types: 400 OC-05 errors.
    schema = {"type": "OBJECT", "properties": {k: {"type": "STRING"} for k in ("a", "b", "c")}}
    tools = [{"type": "function", "function": {"name": f"tool_{n}", "parameters": schema}} for n in range(100)]
    flow_id = save_flow(store, {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}],
                                "tools": tools})
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_flow(app, pilot, flow_id)
        panel = screen.query_one(ViolationPanel)
        options = screen.query_one(OptionList)
        # The list fills a chunk per frame: as many frames as that takes, however busy the machine.
        await until(pilot, lambda: options.option_count == MAX_LISTED + 1, "the list to fill")
        assert (len(panel.items), options.option_count) == (400, MAX_LISTED + 1)
        assert str(options.get_option_at_index(MAX_LISTED).prompt) == (
            "… 100 more, marked in the panes (x exports them all)")
        assert len(screen.query_one("#request", PayloadView).viewer.marks) == 400


async def test_a_document_nested_a_thousand_deep_is_laid_out(store: Store) -> None:
    from inspector.flow import Flow, FlowState

    from .flows import T0

    store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    body = b'{"model": "x", "messages": ' + b"[" * 1000 + b"]" * 1000 + b"}"
    flow = Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=T0, method="POST",
                path="/v1/chat/completions", request_body=body, status=200, response_body=b"{}",
                state=FlowState.COMPLETE)
    store.save(flow)
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_flow(app, pilot, flow.id)
        request = screen.query_one("#request", PayloadView)
        assert (request.border_subtitle, request.pane.text.splitlines()[1001]) == ("", "  " * 1000 + "[]")



async def test_session_rules_show_on_the_flow_whose_response_holds_them(store: Store) -> None:
    """Seed 003: one MCP endpoint registered twice (plain and session-scoped) serves every tool
    twice; the second tools/list flow says so, and which entry to keep."""
    import orjson

    from inspector.flow import Flow, FlowState

    from .flows import T0

    store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    listing = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "remember", "inputSchema": {"type": "object", "properties": {}}}]}}
    ids = []
    for query in ("", "session=tok"):
        flow = Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=T0, method="POST",
                    path="/balda/mcp", query=query, upstream_url="http://127.0.0.1:9/balda/mcp" + (f"?{query}" if query else ""),
                    request_body=b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}', status=200,
                    response_headers=[("content-type", "application/json")], response_body=orjson.dumps(listing),
                    state=FlowState.COMPLETE)
        store.save(flow)
        ids.append(flow.id)
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        first = await open_flow(app, pilot, ids[0])
        assert [i.violation.rule for i in first.query_one(ViolationPanel).items if i.violation.where == "session"] == []
        await pilot.press("escape")
        second = await open_flow(app, pilot, ids[1])
        session = [i for i in second.query_one(ViolationPanel).items if i.violation.where == "session"]
        assert [(i.violation.rule, i.violation.pointer, i.lines) for i in session] == [
            ("XL-03", "/result/tools/0/name", {"response": 6})]
        assert session[0].violation.hint == ("Dedupe MCP servers by host+path and keep the session-scoped entry "
                                             "(http://127.0.0.1:9/balda/mcp?session=tok).")


def test_the_upstream_pane_says_what_repair_mode_did() -> None:
    from inspector.flow import Flow, FlowState, Mode
    from inspector.tui.view import NOTHING_TO_REPAIR_NOTE, prepare

    body = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'
    untouched = Flow(id=1, session_id=1, started_at=0.0, method="POST", path="/v1/chat/completions",
                     request_body=body, mode=Mode.REPAIR, state=FlowState.COMPLETE)
    assert prepare(untouched).upstream.note == NOTHING_TO_REPAIR_NOTE
    # What went upstream differs from the original: a repair mode that changed nothing sends it as is.
    sent = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": []}'
    repaired = Flow(id=2, session_id=1, started_at=0.0, method="POST", path="/v1/chat/completions",
                    request_body=body, upstream_request_body=sent, mode=Mode.REPAIR, state=FlowState.COMPLETE,
                    notes=["repaired OC-17 (added) at /messages/2/content: …"])
    assert prepare(repaired).upstream.note == "repaired on the way (1 repair, H: the list)"


# ---- one flow screen, reused from flow to flow ----------------------------------------------------

async def test_the_flow_screen_is_built_once_and_shows_nothing_of_the_last_flow(store: Store, ids: dict[str, int]) -> None:
    from inspector.tui.view import prepare

    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        first = await open_flow(app, pilot, ids["defective"])
        await pilot.press("z")
        assert first.maximized is not None
        await pilot.press("escape", "escape")  # unzoom, back to the list
        second = await open_flow(app, pilot, ids["clean"])
        assert second is first and second.maximized is None
        assert [i.violation.rule for i in second.query_one(ViolationPanel).items] == []
        # The answer for a flow left while it loaded arrives late: it is dropped, not shown.
        second.post_message(FlowScreen.Prepared(prepare(store.get(ids["defective"]))))
        await pilot.pause()
        assert (second.flow_id, second.view.flow.id) == (ids["clean"], ids["clean"])
        assert str(second.query_one("#flow-title", Static).content).startswith(f"#{ids['clean']} ")
        assert second.query_one("#request", PayloadView).viewer.lines is second.view.request.split


async def test_a_flow_opened_from_a_screen_above_the_flow_screen_replaces_it(store: Store, ids: dict[str, int]) -> None:
    from inspector.tui.screens.diff import DiffScreen

    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_flow(app, pilot, ids["defective"])
        await pilot.press("F")
        await pilot.pause()
        assert isinstance(app.screen, DiffScreen)
        again = await open_flow(app, pilot, ids["clean"])  # as the command palette does
        assert again is screen and [type(s).__name__ for s in app.screen_stack] == ["FlowsScreen", "FlowScreen"]
        assert screen.view.flow.id == ids["clean"]


async def test_the_reused_flow_screen_follows_a_resize_made_while_it_was_away(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_flow(app, pilot, ids["defective"])
        assert (screen.has_class("-wide"), screen.has_class("-narrow")) == (True, False)
        await pilot.press("escape")
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        screen = await open_flow(app, pilot, ids["defective"])
        assert (screen.has_class("-wide"), screen.has_class("-narrow"), screen.size) == (False, True, (80, 24))


async def until(pilot, condition, what: str) -> None:
    """Poll the app with a deadline (the flow screen's show-anyway timer runs on the app's clock)."""
    import time as clock

    deadline = clock.monotonic() + 5
    while not condition():
        assert clock.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause()


async def test_a_reopened_flow_screen_shows_the_flow_ready_not_a_loading_frame(store: Store, ids: dict[str, int]) -> None:
    """Once built, the screen comes up when its flow is read and checked: its first frame is whole."""
    from textual import events

    resumed: list[tuple[int, bool]] = []  # (flow id, view ready) each time the flow screen comes up

    def hook(message: object) -> None:
        # The list is put away as the flow screen is pushed over it.
        if isinstance(message, events.ScreenSuspend) and isinstance(app.screen_stack[-1], FlowScreen):
            resumed.append((app.screen.flow_id, app.screen.view is not None))

    app = make_app(store)
    async with app.run_test(size=(120, 36), message_hook=hook) as pilot:
        await open_flow(app, pilot, ids["defective"])
        await pilot.press("escape")
        await open_flow(app, pilot, ids["clean"])
        await pilot.press("escape")
        await open_flow(app, pilot, ids["streamed"])
    # The first open builds the screen and shows it at once, loading.
    assert resumed == [(ids["defective"], False), (ids["clean"], True), (ids["streamed"], True)]


async def test_a_flow_missing_from_the_store_still_gets_its_screen_saying_so(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        await open_flow(app, pilot, ids["clean"])
        await pilot.press("escape")
        app.open_flow(9999)
        await until(pilot, lambda: isinstance(app.screen, FlowScreen), "the flow screen")
        screen = app.screen
        await until(pilot, lambda: "store" in str(screen.query_one("#flow-title", Static).content), "the title")
        assert (str(screen.query_one("#flow-title", Static).content), screen.view) == ("#9999 is not in the store", None)
        assert [str(o.prompt) for o in screen.query_one(OptionList).options] == ["nothing to check"]
        assert screen.query_one("#request", PayloadView).viewer.lines == []


async def test_a_long_findings_list_fills_in_by_frames_and_keeps_its_place_when_re_listed() -> None:
    """Hundreds of findings go in a screenful at once and the rest a chunk per frame; a re-listing (the
    panel resized) puts the highlight back where it was, even past the first screenful."""
    from textual.app import App

    from inspector.tui.view import Located
    from inspector.tui.widgets.violations import FIRST_LISTED
    from inspector.wire.violations import Severity, Violation

    items = [Located(Violation("OC-05", Severity.ERROR, f"/tools/{n}/function/parameters/type", "upper-case type"),
                     {"request": n}) for n in range(120)]

    class One(App[None]):
        def compose(self):
            yield ViolationPanel()

    app = One()
    async with app.run_test(size=(60, 30)) as pilot:
        panel = app.query_one(ViolationPanel)
        options = panel.query_one(OptionList)
        panel.show(items)
        assert options.option_count == FIRST_LISTED
        while options.option_count < len(items):
            await pilot.pause()
        assert [option.id for option in options.options] == [str(n) for n in range(120)]
        options.highlighted = 70
        await pilot.resize_terminal(50, 30)  # folds the pointers anew: the list is re-listed
        while options.option_count < len(items):
            await pilot.pause()
        assert (options.highlighted, options.option_count) == (70, 120)
