"""The flow list: what it shows on launch, how the keys move it, and the text filter."""

from inspector.store import Store
from inspector.tui.screens.flow import FlowScreen
from inspector.tui.screens.flows import FlowsScreen
from inspector.tui.widgets.flow_list import FlowList, row_cells

from .conftest import make_app, settle
from .flows import NOW, T0, clean_request, save_flow


async def test_launch_shows_stored_flows_with_cursor_on_newest(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        flows = app.query_one(FlowList)
        assert (flows.total, flows.cursor, flows.current.id) == (6, 5, ids["replay"])
        assert app.focused is flows
        assert isinstance(app.screen, FlowsScreen)
        await pilot.pause()


async def test_row_cells_carry_every_column(store: Store, ids: dict[str, int]) -> None:
    rows = {row.id: row for row in store.rows()}
    assert row_cells(rows[ids["defective"]], NOW) == [
        "3", "09:30:02.500", "POST", "/v1/chat/completions", "chat", "gpt-4o-mini", "200", "342ms", "310ms",
        "1", "1", "10/5", "✖3"]
    assert row_cells(rows[ids["streamed"]], NOW)[6:] == ["200", "210ms", "120ms", "1", "0", "", ""]
    assert row_cells(rows[ids["failed"]], NOW)[6] == "502"
    assert row_cells(rows[ids["replay"]], NOW)[3] == "↻#3 /v1/chat/completions"
    # A flow from another day shows its date instead of milliseconds.
    assert row_cells(rows[ids["earlier"]], NOW + 86400)[1] == "12-01 09:20"


async def test_navigation_keys(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        flows = app.query_one(FlowList)
        await pilot.press("k", "k")
        assert flows.cursor == 3
        await pilot.press("up")
        assert flows.cursor == 2
        await pilot.press("g")
        assert (flows.cursor, flows.current.id) == (0, ids["earlier"])
        await pilot.press("j", "down")
        assert flows.cursor == 2
        await pilot.press("G")
        assert flows.cursor == 5
        await pilot.press("j")  # past the end stays on the newest
        assert flows.cursor == 5


async def test_enter_opens_the_flow_under_the_cursor(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    seen: list = []
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await pilot.press("k", "k", "k", "enter")
        await pilot.pause()
        assert isinstance(app.screen, FlowScreen)
        assert app.screen.flow_id == ids["defective"]
        # The hook sees a message once per node it bubbles through: count distinct messages.
        opened = {id(m): m for m in seen if isinstance(m, FlowList.Opened)}.values()
        assert [m.flow_id for m in opened] == [ids["defective"]]
        await pilot.press("escape")
        assert isinstance(app.screen, FlowsScreen)


async def test_slash_filters_by_text_and_escape_clears(store: Store, ids: dict[str, int]) -> None:
    save_flow(store, {"input": "hi", "model": "o4-mini"}, path="/v1/responses", offset=20,
              response={"object": "response", "output": []})
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        flows = app.query_one(FlowList)
        await pilot.press("slash")
        await pilot.press(*"responses")
        await settle(app, pilot)
        assert (flows.filter_text, flows.total, flows.current.path) == ("responses", 1, "/v1/responses")
        assert app.screen.query_one("#filter").border_title == "1 of 7 flows match"
        await pilot.press("enter")
        assert app.focused is flows
        await pilot.press("escape")
        await settle(app, pilot)
        assert (flows.filter_text, flows.total) == ("", 7)


async def test_current_session_is_marked(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        flows = app.query_one(FlowList)
        await pilot.pause()
        first, second = flows.render_line(0).text, flows.render_line(1).text
        assert first.startswith(" 1     1 ")  # each row leads with its session
        assert second.startswith(" 2     2 ")


async def test_only_the_visible_window_is_read(store: Store) -> None:
    """The list never loads the whole store: 3000 flows, one page read for the first screen."""
    store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    body = clean_request()
    for n in range(3000):
        save_flow_fast(store, body, n)
    store.flush()
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        flows = app.query_one(FlowList)
        assert (flows.total, flows.cursor, flows.loaded_rows) == (3000, 2999, 3000 - 2944)
        await pilot.press("g")
        await pilot.pause()
        assert flows.loaded_rows == 3000 - 2944 + 128


def save_flow_fast(store: Store, body: dict, n: int) -> None:
    """Submit without waiting: 3000 commits one by one would dominate the test."""
    import orjson

    from inspector.flow import Flow, FlowState

    flow = Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=T0 + n, method="POST",
                path="/v1/chat/completions", request_body=orjson.dumps(body), status=200,
                state=FlowState.COMPLETE, latency_ms=1.0)
    store.submit(flow)


async def test_an_empty_store_says_what_to_do(store: Store) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        flows = app.query_one(FlowList)
        assert flows.render_line(1).text.strip() == (
            "No flows yet: point your agent at the base URL above and its requests appear here.")


async def test_a_filter_that_matches_nothing_says_so(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("slash", *"zzz")
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        assert (flows.total, flows.render_line(1).text.strip()) == (
            0, "No flow matches “zzz” (esc clears the filter).")
