"""The views that explain a failing turn (issue 9): the conversation (`t`), the structural diff of
what went upstream (`d`) or of the fixed request (`F`), and a response against its replay's (`v`),
each at 80×24 (stacked, `z` zooms a pane) and 160×48 (side by side), computed in thread workers."""

from __future__ import annotations

import orjson

from inspector.flow import Mode
from inspector.store import Store
from inspector.tui.compare import prepare_conversation, prepare_upstream_diff
from inspector.tui.screens.conversation import ConversationScreen
from inspector.tui.screens.diff import DiffScreen
from inspector.tui.screens.flow import FlowScreen
from inspector.tui.widgets.diff_viewer import DiffViewer
from inspector.tui.view import prepare
from inspector.tui.widgets.lines import LineViewer
from inspector.wire.fix import fix
from inspector.wire.translate import get_bridge

from .conftest import make_app, workers_done
from .flows import save_flow
from .test_flow_view import open_flow

CHAT_HISTORY = {"model": "gpt-4o", "parallel_tool_calls": False, "tools": [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}], "messages": [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]}


def save_translated(store: Store) -> int:
    """A Chat client's turn translated to Anthropic by the real bridge, recorded as the forwarder does."""
    sent = get_bridge("openai-chat", "anthropic").request(CHAT_HISTORY, "/v1/chat/completions")
    flow_id = save_flow(store, CHAT_HISTORY, offset=12)
    flow = store.get(flow_id)
    assert flow is not None
    flow.mode, flow.translate = Mode.TRANSLATE, "openai-chat:anthropic"
    flow.upstream_request_body = orjson.dumps(sent.payload)
    flow.upstream_request_headers = flow.request_headers
    flow.notes = [str(loss) for loss in sent.losses]
    store.save(flow)
    return flow_id


async def press(app, pilot, key: str):
    await pilot.press(key)
    await pilot.pause()
    await workers_done(app)
    await pilot.pause()
    return app.screen


def region(widget) -> tuple[int, int, int, int]:
    return widget.region.x, widget.region.y, widget.region.width, widget.region.height


async def at_160(app, pilot) -> None:
    """The same screen, the terminal grown from 80×24 (one app per test keeps the suite fast)."""
    await pilot.resize_terminal(160, 48)
    await pilot.pause()


# ---- conversation -------------------------------------------------------------------------------

async def test_t_reads_the_turns_with_each_call_paired(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_flow(app, pilot, ids["defective"])
        screen = await press(app, pilot, "t")
        assert isinstance(screen, ConversationScreen)
        assert str(screen.query_one("#conversation-title").content) == (
            "#3 openai-chat · 4 turns · orphans 0 · unanswered 0 · new calls 1")
        turns, tools = screen.query_one("#turns", LineViewer), screen.query_one("#tools", LineViewer)
        assert turns.lines == [
            "#0 user  /messages/0",
            "   Summarise example.com",
            "#1 assistant  /messages/1",
            "   → call scrape_webpage  call_1 → answered in #2",
            '       {"url": "https://example.com"}',
            "#2 tool  /messages/2",
            "   ← result of scrape_webpage  call_1 ← answers #1",
            "       (empty)",
            "#3 assistant · response (new turn)  /choices/0",
            "   → call scrape_webpage  call_1 · new: the client runs it next",
            '       {"url": "x"}',
        ]
        assert turns.marks == {8: "info"}
        assert tools.lines == [
            "tools: 1 offered · 1 called · 0 never called · 0 not offered · 0 duplicated · 0 aliased",
            "scrape_webpage  offered · called ×2"]
        # Stacked at 80 columns: the turns above, the tools under them; side by side at 160.
        assert [region(turns), region(tools)] == [(0, 1, 80, 14), (0, 15, 80, 8)]
        await at_160(app, pilot)
        assert [region(turns), region(tools)] == [(0, 1, 106, 46), (106, 1, 54, 46)]
        assert turns.has_focus
        await press(app, pilot, "z")
        assert screen.maximized is turns
        await press(app, pilot, "z")
        assert screen.maximized is None
        assert isinstance(await press(app, pilot, "escape"), FlowScreen)


async def test_the_conversation_marks_orphans_unanswered_calls_and_undeclared_tools(store: Store) -> None:
    store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    request = {"model": "gpt-4o", "tools": CHAT_HISTORY["tools"], "messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
            {"id": "call_2", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_9", "content": "stray"}]}
    flow_id = save_flow(store, request)
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_flow(app, pilot, flow_id)
        screen = await press(app, pilot, "t")
        turns, tools = screen.query_one("#turns", LineViewer), screen.query_one("#tools", LineViewer)
        assert turns.lines[2:9] == [
            "#1 assistant  /messages/1",
            "   → call get_weather  call_1 ✖ unanswered: no result follows",
            "       {}",
            "   → call lookup  call_2 ✖ unanswered: no result follows ✖ not offered in tools",
            "       {}",
            "#2 tool  /messages/2",
            "   ← result  call_9 ✖ orphan: answers no earlier call",
        ]
        assert {line: turns.marks[line] for line in (3, 5, 8)} == {3: "error", 5: "error", 8: "error"}
        assert tools.lines[1:] == ["get_weather  offered · called ×1", "lookup       ✖ not offered · called ×1"]
        assert tools.marks == {2: "error"}


# ---- diffs --------------------------------------------------------------------------------------

async def test_F_shows_the_fixed_request_as_a_diff_with_each_repair_on_its_line(
        store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_flow(app, pilot, ids["defective"])
        screen = await press(app, pilot, "F")
        assert isinstance(screen, DiffScreen)
        diff, notes = screen.query_one("#diff", DiffViewer), screen.query_one("#notes", LineViewer)
        assert str(screen.query_one("#diff-title").content) == "#3 original → fixed (R replays it)"
        assert diff.border_subtitle == "+1 −0 ~2 · 3 notes · 3 repairs · 0 errors left"
        assert diff.lines[7:14] == [
            '          "parameters": {',
            '~           "type": "OBJECT" → "object"',
            "              ▲ converted: genai type 'OBJECT' written as JSON Schema 'object' [OC-05]",
            '            "properties": {',
            '              "url": {',
            '~               "type": "STRING" → "string"',
            "                  ▲ converted: genai type 'STRING' written as JSON Schema 'string' [OC-05]",
        ]
        assert diff.lines[21:28] == [
            '    "messages": [',
            "      [0–1] … 2 unchanged items",
            "      [2] {",
            '        "role": "tool"',
            '        "tool_call_id": "call_1"',
            '+       "content": ""',
            '          ▲ set: missing tool content set to "" [OC-17]',
        ]
        assert diff.marks == {8: "changed", 9: "warning", 12: "changed", 13: "warning", 26: "added", 27: "warning"}
        assert notes.lines == [
            "/tools/0/function/parameters/type",
            "  converted: genai type 'OBJECT' written as JSON Schema 'object' [OC-05]",
            "/tools/0/function/parameters/properties/url/type",
            "  converted: genai type 'STRING' written as JSON Schema 'string' [OC-05]",
            "/messages/2/content",
            '  set: missing tool content set to "" [OC-17]',
        ]
        assert [region(diff), region(notes)] == [(0, 1, 80, 14), (0, 15, 80, 8)]
        await at_160(app, pilot)
        assert [region(diff), region(notes)] == [(0, 1, 106, 46), (106, 1, 54, 46)]
        # The cursor starts on the first change; n walks the changes, a note with the row it explains.
        assert diff.cursor == 8
        for expected in (12, 26, 26):
            await press(app, pilot, "n")
            assert diff.cursor == expected
        await press(app, pilot, "N")
        assert diff.cursor == 12
        assert isinstance(await press(app, pilot, "escape"), FlowScreen)


async def test_d_diffs_what_went_upstream_with_the_loss_report_on_its_lines(store: Store) -> None:
    store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    flow_id = save_translated(store)
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_flow(app, pilot, flow_id)
        screen = await press(app, pilot, "d")
        diff = screen.query_one("#diff", DiffViewer)
        assert str(screen.query_one("#diff-title").content) == (
            f"#{flow_id} original → sent upstream · translated openai-chat → anthropic")
        # Each loss sits under the row of the place it landed: the no-parallel flag inside
        # tool_choice, the max_tokens Anthropic requires.
        assert diff.lines[-8:] == [
            '+   "tool_choice": {',
            '+     "type": "auto"',
            '+     "disable_parallel_tool_use": true',
            "        ▲ converted: Anthropic states no-parallel-calls inside tool_choice",
            "+   }",
            '+   "max_tokens": 4096',
            "      ▲ synthesised: Anthropic requires max_tokens; 4096 is sent",
            "  }",
        ]
        assert screen.query_one("#notes", LineViewer).lines == [
            "/parallel_tool_calls → /tool_choice/disable_parallel_tool_use",
            "  converted: Anthropic states no-parallel-calls inside tool_choice",
            "/ → /max_tokens",
            "  synthesised: Anthropic requires max_tokens; 4096 is sent",
        ]
        # The history is aligned message to message, not shifted by the system prompt leaving it.
        start = diff.lines.index('    "messages": [')
        assert diff.lines[start + 1:start + 6] == [
            "-     [0] {", '-       "role": "system"', '-       "content": "Be brief."', "-     }", "      [0] {"]


async def test_d_and_v_say_why_there_is_nothing_to_compare(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_flow(app, pilot, ids["clean"])
        screen = await press(app, pilot, "d")
        assert str(screen.query_one("#diff-title").content) == (
            "#2 original → upstream · sent upstream unchanged: there is nothing to compare")
        assert screen.query_one("#diff", DiffViewer).lines == ["sent upstream unchanged: there is nothing to compare"]
        await press(app, pilot, "escape")
        screen = await press(app, pilot, "v")
        assert screen.query_one("#diff", DiffViewer).lines == ["neither a replay nor replayed: r or R replays it"]


# ---- replay comparison --------------------------------------------------------------------------

async def test_v_compares_the_responses_of_a_flow_and_its_replay_from_either_end(
        store: Store, ids: dict[str, int]) -> None:
    """One key from either end: the origin's response on the left, the replay's on the right."""
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        for start in ("defective", "replay"):
            await open_flow(app, pilot, ids[start])
            screen = await press(app, pilot, "v")
            diff = screen.query_one("#diff", DiffViewer)
            assert str(screen.query_one("#diff-title").content) == "response of #3 (200) → replay #6 (200)"
            assert diff.border_subtitle == "+0 −1 ~2"
            assert diff.lines[9:12] == [
                '          "role": "assistant"',
                '~         "content": null → "Sunny, 21 °C."',
                '-         "tool_calls": [',
            ]
            assert diff.lines[20:24] == ["-         ]", "        }", '        "logprobs": null',
                                         '~       "finish_reason": "tool_calls" → "stop"']
            # Nothing reports on a replay's changes: the diff gets the whole screen.
            assert screen.query_one("#notes", LineViewer).display is False
            assert region(diff) == (0, 1, 80, 22)
            await press(app, pilot, "escape")
            await press(app, pilot, "escape")
        await at_160(app, pilot)
        await open_flow(app, pilot, ids["replay"])
        screen = await press(app, pilot, "v")
        assert region(screen.query_one("#diff", DiffViewer)) == (0, 1, 160, 46)


# ---- the prepared data, without a terminal --------------------------------------------------------

def test_a_repaired_flow_diffs_with_the_repairs_the_forwarder_made(store: Store, ids: dict[str, int]) -> None:
    """Repair mode: the fixer's repairs (recomputed like the translation's losses) on their lines."""
    flow = store.get(ids["defective"])
    assert flow is not None
    repaired = fix(orjson.loads(flow.request_body), "openai-chat")
    flow.mode, flow.upstream_request_body = Mode.REPAIR, orjson.dumps(repaired.payload)
    flow.notes = [f"repaired {r.rule} ({r.action}) at {r.pointer}: {r.detail}" for r in repaired.repairs]
    view = prepare_upstream_diff(prepare(flow))
    assert view is not None and view.notes is not None
    assert (view.title, view.summary) == ("#3 original → sent upstream · repaired on the way", "+1 −0 ~2 · 3 notes")
    assert view.notes.lines == [
        "/tools/0/function/parameters/type",
        "  converted: genai type 'OBJECT' written as JSON Schema 'object' [OC-05]",
        "/tools/0/function/parameters/properties/url/type",
        "  converted: genai type 'STRING' written as JSON Schema 'string' [OC-05]",
        "/messages/2/content",
        '  set: missing tool content set to "" [OC-17]',
    ]
    assert [line for line in view.lines.lines if "▲" in line] == [
        "              ▲ converted: genai type 'OBJECT' written as JSON Schema 'object' [OC-05]",
        "                  ▲ converted: genai type 'STRING' written as JSON Schema 'string' [OC-05]",
        '          ▲ set: missing tool content set to "" [OC-17]',
    ]


def test_a_streamed_answer_is_the_new_turn_reassembled(store: Store, ids: dict[str, int]) -> None:
    flow = store.get(ids["streamed"])
    assert flow is not None
    view = prepare_conversation(prepare(flow))
    assert view.turns.lines == ["#0 user  /messages/0", "   Weather in Paris?",
                                "#1 assistant · response (new turn)  /choices/0", "   It is sunny in Paris."]
    assert view.tools.lines[1:] == ["get_weather  offered · never called"]
