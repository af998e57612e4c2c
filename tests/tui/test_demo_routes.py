"""The demo shows a translated and a repaired turn too (issue 22): the scripted agent recorded
through the demo's own forwarder (its translate and repair routes) into a real store, then read in
the real app: `d` on the translated turn compares what the client sent with what went upstream,
`D` the upstream's Anthropic answer with the Chat completion the client got, `d` on the repaired
turn the genai schema with the JSON Schema that went up."""

from __future__ import annotations

from inspector.child import ForwarderProcess
from inspector.cli.demo import demo_app
from inspector.demo import demo_forwarder, demo_options, demo_upstream, run_agent
from inspector.store import Store
from inspector.tui.bridge import EventBridge
from inspector.tui.screens.diff import DiffScreen
from inspector.tui.widgets.connection import ConnectionBar
from inspector.tui.widgets.diff_viewer import DiffViewer

from .conftest import make_app
from .test_flow_view import open_flow
from .test_views import at_160, press

TRANSLATED, REPAIRED = 10, 11


def record_demo(store: Store) -> None:
    with demo_upstream(interval=0.0) as upstream, demo_forwarder(upstream.base_url, store) as forwarder:
        assert run_agent(forwarder.client_url)[-2:] == [200, 200]
    store.flush()


async def diff_of(app, pilot, flow_id: int, key: str) -> tuple[str, str, list[str]]:
    await open_flow(app, pilot, flow_id)
    screen = await press(app, pilot, key)
    assert isinstance(screen, DiffScreen)
    diff = screen.query_one("#diff", DiffViewer)
    title = str(screen.query_one("#diff-title").content)
    await press(app, pilot, "escape")
    await press(app, pilot, "escape")
    return title, str(diff.border_subtitle), diff.lines


async def test_the_demo_s_translated_and_repaired_turns_each_have_something_to_compare(store: Store) -> None:
    record_demo(store)
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in ("80x24", "160x48"):
            title, summary, lines = await diff_of(app, pilot, TRANSLATED, "d")
            assert (title, summary) == ("#10 original → sent upstream · translated openai-chat → anthropic",
                                        "+6 −6 ~0 · 2 notes")
            # The losses on their lines: what Anthropic cannot carry, and where the rest went.
            assert lines[:7] == ["  {", '    "model": "claude-sonnet-4-5"', '    "max_tokens": 512', '-   "seed": 7',
                                 "      ▲ dropped: Chat parameter 'seed' has no counterpart",
                                 '-   "parallel_tool_calls": false', '    "messages": [']
            assert lines[-8:] == ["    ]", '+   "system": "You are a helpful travel agent."', '+   "tool_choice": {',
                                  '+     "type": "auto"', '+     "disable_parallel_tool_use": true',
                                  "        ▲ converted: Anthropic states no-parallel-calls inside tool_choice",
                                  "+   }", "  }"]
            title, summary, lines = await diff_of(app, pilot, TRANSLATED, "D")
            assert (title, summary) == ("#10 upstream answer → client got · translated openai-chat → anthropic",
                                        "+6 −7 ~0")
            # Anthropic's tool_use, as the upstream answered, became the Chat tool call the client got.
            assert lines[10:14] == ['-     [1] {', '-       "type": "tool_use"', '-       "id": "toolu_demo_2"',
                                    '-       "name": "get_weather"']
            assert lines[36:44] == ['+         "content": "Let me check."', '+         "tool_calls": [', '+           [0] {',
                                    '+             "id": "toolu_demo_2"', '+             "type": "function"',
                                    '+             "function": {', '+               "name": "get_weather"',
                                    '+               "arguments": "{\\"city\\":\\"Kyoto\\",\\"unit\\":\\"c\\"}"']
            title, summary, lines = await diff_of(app, pilot, REPAIRED, "d")
            assert (title, summary) == ("#11 original → sent upstream · repaired on the way", "+1 −3 ~2 · 5 notes")
            assert lines[10:16] == [
                '~           "type": "OBJECT" → "object"',
                "              ▲ converted: genai type 'OBJECT' written as JSON Schema 'object' [OC-05]",
                '            "properties": {', '              "url": {', '~               "type": "STRING" → "string"',
                "                  ▲ converted: genai type 'STRING' written as JSON Schema 'string' [OC-05]"]
            await at_160(app, pilot)


async def test_the_demo_s_header_says_routes_and_names_the_translate_and_repair_routes(tmp_path) -> None:
    """`toolwire-inspect demo`'s app on its real forwarder process: the header's mode is the routes',
    not "passthrough" (the unnamed route's alone), and each route is listed with its clients' URL."""
    with demo_upstream(interval=0.0) as upstream:
        child = ForwarderProcess.start(demo_options(upstream.base_url, store=str(tmp_path / "demo.sqlite3")))
        try:
            with Store(tmp_path / "demo.sqlite3", read_only=True) as store:
                app = demo_app(store, child, EventBridge(), upstream.base_url)
                async with app.run_test(size=(160, 48)) as pilot:
                    await pilot.pause()
                    bar = app.query_one(ConnectionBar)
                    bar.expanded = True
                    await pilot.pause()
                    base = child.base_url
                    assert str(bar.render()).split("\n") == [
                        f"toolwire-inspect routes  listening {base} → {upstream.base_url} (built-in demo)",
                        f"(unnamed) OPENAI_BASE_URL={base}/v1  (unnamed) ANTHROPIC_BASE_URL={base}",
                        f"(unnamed) GOOGLE_GEMINI_BASE_URL={base}  (unnamed) MCP {base}/mcp  "
                        f"claude OPENAI_BASE_URL={base}/r/claude/v1",
                        f"fixer OPENAI_BASE_URL={base}/r/fixer/v1  fixer ANTHROPIC_BASE_URL={base}/r/fixer",
                        f"fixer GOOGLE_GEMINI_BASE_URL={base}/r/fixer  fixer MCP {base}/r/fixer/mcp  "
                        "(unnamed) from --upstream  claude from --route",
                        f"fixer from --route  store {tmp_path / 'demo.sqlite3'}"]
        finally:
            child.stop()
