"""Issue 9, the flow list at 80×24 and 160×48: a two-row header, columns dropped by priority and
never drawn under the scrollbar, `q`, replay marks and `o`, filter expressions and sorting."""

from __future__ import annotations

import pytest

from inspector.flow import FIXED_REPLAY_NOTE
from inspector.proxy import Forwarder
from inspector.store import Store
from inspector.tui.bridge import EventBridge
from inspector.tui.screens.flows import FlowsScreen
from inspector.tui.widgets.connection import ConnectionBar
from inspector.tui.widgets.flow_list import GUTTER, ColumnHeader, FlowList, layout, row_cells
from inspector.tui.widgets.styles import overlay

from .conftest import make_app, settle
from .flows import NOW, defective_request, save_flow
from .test_live import forwarding, upstream  # noqa: F401 (fixtures)

SIZES = [(80, 24), (160, 48)]


def line(widget, y: int = 0) -> str:
    return widget.render_line(y).text


@pytest.mark.parametrize(("width", "titles"), [
    (39, [("#", 5), ("st", 3), ("issues", 7)]),  # the issues badge is the last to go
    (79, [("#", 5), ("time", 12), ("path", 20), ("model", 16), ("st", 3), ("latency", 7), ("issues", 7)]),
    (119, [("#", 5), ("time", 12), ("path", 24), ("dialect", 9), ("model", 23), ("st", 3),
           ("latency", 7), ("ttfb", 6), ("tools", 5), ("calls", 5), ("issues", 7)]),
    (159, [("#", 5), ("time", 12), ("meth", 6), ("path", 36), ("dialect", 9), ("model", 32), ("st", 3),
           ("latency", 7), ("ttfb", 6), ("tools", 5), ("calls", 5), ("tokens", 11), ("issues", 7)]),
    (199, [("#", 5), ("time", 12), ("meth", 6), ("path", 76), ("dialect", 9), ("model", 32), ("st", 3),
           ("latency", 7), ("ttfb", 6), ("tools", 5), ("calls", 5), ("tokens", 11), ("issues", 7)]),
])
def test_columns_drop_by_priority_and_the_model_gets_room(width: int, titles: list[tuple[str, int]]) -> None:
    columns = layout(width)
    assert [(c.title, w) for _, c, w in columns] == titles
    assert GUTTER + sum(w for _, _, w in columns) + len(columns) - 1 == (width if width > 79 else
                                                                          {39: 20, 79: 79}[width])


@pytest.mark.parametrize("size", SIZES)
async def test_the_list_fits_the_terminal(store: Store, ids: dict[str, int], size: tuple[int, int],
                                          forwarding: tuple[Forwarder, EventBridge]) -> None:
    forwarder, bridge = forwarding
    app = make_app(store, forwarder=forwarder, bridge=bridge, upstream="http://up.example")
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        bar, header, flows = app.query_one(ConnectionBar), app.query_one(ColumnHeader), app.query_one(FlowList)
        assert (bar.region.height, header.region.y, flows.region.y) == (2, 2, 3)
        # The header and the rows lay out the same width, one cell left of the scrollbar.
        assert flows.scrollable_content_region.width == header.content_region.width == size[0] - 1
        titles = line(header).split()
        rows = {row.id: line(flows, index) for index, row in enumerate(store.rows())}
        if size == (80, 24):
            assert titles == ["S", "#", "time", "path", "model", "st", "latency", "issues"]
            assert rows[ids["defective"]] == (
                " 2     3 09:30:02.500 /v1/chat/completions gpt-4o-mini      200   342ms ✖3     ")
            assert rows[ids["failed"]].endswith(" 502   342ms        ")
        else:
            assert titles == ["S", "#", "time", "meth", "path", "dialect", "model", "st", "latency", "ttfb", "tools",
                              "calls", "tokens", "issues"]
            assert rows[ids["defective"]] == (
                " 2     3 09:30:02.500 POST   /v1/chat/completions" + " " * 17 + "chat      gpt-4o-mini" + " " * 22
                + "200   342ms  310ms     1     1        10/5 ✖3     ")
        assert all(len(text) == size[0] - 1 for text in rows.values())


@pytest.mark.parametrize("size", SIZES)
async def test_q_on_the_list_quits_without_asking(store: Store, ids: dict[str, int], size: tuple[int, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


@pytest.mark.parametrize("size", SIZES)
async def test_replays_say_how_they_were_sent_and_o_jumps_between_them(
        store: Store, ids: dict[str, int], size: tuple[int, int]) -> None:
    fixed = save_flow(store, defective_request(), offset=11, replay_of=ids["defective"], notes=[FIXED_REPLAY_NOTE])
    rows = {row.id: row for row in store.rows()}
    assert [row_cells(rows[i], NOW)[3] for i in (ids["replay"], fixed, ids["defective"])] == [
        "↻#3 /v1/chat/completions", "↻F#3 /v1/chat/completions", "/v1/chat/completions"]
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        method = "POST   " if size[0] > 80 else ""
        # The mark leads the path, so a narrow path column cuts the path, never the mark.
        path = "/v1/chat/completions " if size[0] > 80 else "/v1/chat/compl… "
        assert line(flows, 6).startswith(f" 2     7 09:30:11.000 {method}↻F#3 {path}")
        assert line(flows, 5).startswith(f" 2     6 09:30:09.000 {method}↻#3 {path.replace('l… ', 'le… ')}")
        await pilot.press("o")  # from the fixed replay to its origin
        assert flows.current.id == ids["defective"]
        await pilot.press("o")  # from the origin to its newest replay
        assert flows.current.id == fixed
        await pilot.press("g", "o")  # a flow neither replayed nor a replay: the cursor stays
        assert flows.current.id == ids["earlier"]
        assert [n.message for n in app._notifications] == ["#1 is neither a replay nor replayed"]


@pytest.mark.parametrize("size", SIZES)
async def test_filter_expressions_in_the_bar(store: Store, ids: dict[str, int], size: tuple[int, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        flows = app.query_one(FlowList)
        field = app.screen.query_one("#filter")
        await pilot.press("slash", *"~v OC-05 & !~r")
        await settle(app, pilot)
        assert (flows.filter_text, flows.total, flows.current.id) == ("~v OC-05 & !~r", 1, ids["defective"])
        assert field.border_title == "1 of 6 flows match"
        # An expression that does not parse says why and where; the list keeps the last one that did.
        await pilot.press("space", "|", "space", "(")
        await settle(app, pilot)
        assert (flows.filter_text, flows.total, field.border_title, field.has_class("-invalid")) == (
            "~v OC-05 & !~r ", 1, "✖ expected a filter (at 19)", True)
        await pilot.press(*"~e)")
        await settle(app, pilot)
        assert (flows.filter_text, field.border_title, field.has_class("-invalid")) == (
            "~v OC-05 & !~r | (~e)", "2 of 6 flows match", False)
        assert [row.id for row in map(flows.row, range(flows.total))] == [ids["defective"], ids["failed"]]
        await pilot.press("ctrl+a", "ctrl+k", *"#3")
        await settle(app, pilot)
        assert [row.id for row in map(flows.row, range(flows.total))] == [ids["defective"], ids["replay"]]
        await pilot.press("escape")
        await settle(app, pilot)
        assert (flows.filter_text, flows.total, field.has_class("-invalid")) == ("", 6, False)


@pytest.mark.parametrize("size", SIZES)
async def test_S_sorts_by_time_latency_issues_route_and_keeps_the_cursor_on_its_flow(
        store: Store, ids: dict[str, int], size: tuple[int, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        flows, header = app.query_one(FlowList), app.query_one(ColumnHeader)
        await pilot.press("k", "k", "k")  # on the defective flow
        seen = []
        for _ in range(4):
            await pilot.press("S")
            await settle(app, pilot)
            seen.append((flows.order, header.order, [flows.row(i).id for i in range(flows.total)],
                         flows.current.id))
        assert seen == [
            ("latency", "latency", [4, 1, 2, 3, 5, 6], 3),  # the stream (4) is quickest
            ("issues", "issues", [3, 6, 1, 2, 4, 5], 3),  # the worst first
            ("route", "route", [1, 2, 3, 4, 5, 6], 3),  # all on the unnamed route: by time within it
            ("time", "time", [1, 2, 3, 4, 5, 6], 3),
        ]
        assert isinstance(app.screen, FlowsScreen)


@pytest.mark.parametrize(("tokens_in", "tokens_out", "cell"), [
    (None, None, ""), (10, 5, "10/5"), (9999, None, "9999/?"), (None, 12, "?/12"), (12_345, 99_949, "12.3k/99.9k"),
    (99_950, 999_499, "100k/999k"), (999_500, 2_500_000, "1.0M/2.5M"), (123_456_789, 0, "123M/0"),
    (0, 1_234_000_000, "0/1G"), (0, 0, "0/0"),
])
def test_usage_cells_fit_the_tokens_column(tokens_in, tokens_out, cell) -> None:
    from inspector.tui import format as fmt

    assert fmt.usage(tokens_in, tokens_out) == cell


def test_agent_settings_of_a_translate_session_name_only_the_dialect_it_accepts() -> None:
    from inspector.clients import agent_settings

    base = "http://127.0.0.1:8787"
    assert agent_settings(base) == [("OPENAI_BASE_URL=", f"{base}/v1"), ("ANTHROPIC_BASE_URL=", base),
                                    ("GOOGLE_GEMINI_BASE_URL=", base), ("MCP ", f"{base}/mcp")]
    assert agent_settings(base, ("openai-responses",)) == [("OPENAI_BASE_URL=", f"{base}/v1")]
    assert agent_settings(base, ("gemini",)) == [("GOOGLE_GEMINI_BASE_URL=", base)]
    assert agent_settings(base, ("anthropic",)) == [("ANTHROPIC_BASE_URL=", base)]


@pytest.mark.parametrize("size", SIZES)
async def test_each_row_shows_its_session_and_S_N_filters_by_it(store: Store, ids: dict[str, int],
                                                               size: tuple[int, int]) -> None:
    """Issue 22: re-running the demo listed the previous run's flows above the new ones with nothing
    between them. Each row leads with its session's number (what `~S N` takes), the recording
    session's in the accent colour, an earlier one's muted like the rest of its row."""
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        header, flows = app.query_one(ColumnHeader), app.query_one(FlowList)
        assert line(header).startswith(" S     # time")
        sessions = [(row.session_id, line(flows, index)[:8]) for index, row in enumerate(store.rows())]
        assert sessions == [(1, " 1     1"), *[(2, f" 2     {n}") for n in range(2, 7)]]
        older, current = (list(flows.render_line(y))[0] for y in (0, 1))
        # An earlier session's row is muted whole, its number with it.
        assert (older.text[:3], current.text) == (" 1 ", " 2 ")
        assert current.style.color == overlay(flows, "flow-list--current").color
        assert older.style.color == overlay(flows, "flow-list--older").color
        await pilot.press("slash", *"~S 1", "enter")
        await settle(app, pilot)
        assert (flows.filter_text, flows.total, line(flows, 0)[:8]) == ("~S 1", 1, " 1     1")
