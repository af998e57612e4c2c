"""`t` on a flow whose history the parser refuses in places: every turn it can read, each refused
entry in its place with the reason and the pointer, the calls still paired around it."""

from __future__ import annotations

from inspector.store import Store
from inspector.tui.widgets.lines import LineViewer

from .conftest import make_app
from .flows import save_flow
from .test_flow_view import open_flow
from .test_views import at_160, press, region

REQUEST = {"model": "gpt-4o", "tools": [{"type": "function", "function": {"name": "get_weather"}}], "messages": [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
    {"role": "tool", "content": "no id"},
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    "stray text"]}


async def test_t_reads_around_the_entries_the_parser_refuses(store: Store) -> None:
    store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    flow_id = save_flow(store, REQUEST)
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_flow(app, pilot, flow_id)
        screen = await press(app, pilot, "t")
        turns = screen.query_one("#turns", LineViewer)
        assert str(screen.query_one("#conversation-title").content) == (
            "#1 openai-chat · 6 turns · orphans 0 · unanswered 0 · new calls 0 · ✖ 2 unreadable")
        expected = [
            "#0 user  /messages/0",
            "   Weather in Paris?",
            "#1 assistant  /messages/1",
            "   → call get_weather  call_1 → answered in #3",
            "       {}",
            "#2 tool  /messages/2",
            "   ✖ /messages/2/tool_call_id: a tool message needs its tool_call_id",
            "#3 tool  /messages/3",
            "   ← result of get_weather  call_1 ← answers #1",
            "       sunny",
            "#4 unreadable  /messages/4",
            "   ✖ /messages/4: a message must be an object",
            "#5 assistant · response (new turn)  /choices/0",
            "   Sunny, 21 °C.",
        ]
        assert (turns.lines, turns.marks) == (expected, {6: "error", 11: "error", 12: "info"})
        assert region(turns) == (0, 2, 80, 13)  # the title takes two rows at 80 columns
        await at_160(app, pilot)
        assert (turns.lines, region(turns)) == (expected, (0, 1, 106, 46))
