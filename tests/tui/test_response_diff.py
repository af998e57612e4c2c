"""`D` in the flow view: what the upstream itself answered against what the client got, for a flow
recorded through a real forwarder in translate mode (JSON and stream) and in repair mode, with the
bridge's response losses (or the restored tool names) on their lines."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import orjson
import pytest

from inspector.flow import Flow
from inspector.mock import Canned, MockUpstream, json_response, sse_response
from inspector.proxy import Forwarder
from inspector.store import Store
from inspector.tui.screens.diff import DiffScreen
from inspector.tui.screens.flow import FlowScreen
from inspector.tui.widgets.diff_viewer import DiffViewer
from inspector.tui.widgets.lines import LineViewer
from inspector.wire.canned import Call
from inspector.wire.dialect import Dialect
from inspector.wire.dialects.anthropic.mock import anthropic_message, anthropic_stream
from inspector.wire.dialects.openai_chat.mock import chat_completion
from inspector.wire.fix import fix
from inspector.proxy.options import Options

from .conftest import make_app
from .flows import clean_request
from .test_flow_view import open_flow
from .test_views import at_160, press, region

WEATHER = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Weather in Paris?"}]}
THINKING = {"type": "thinking", "thinking": "Paris, then.", "signature": "sig"}


@pytest.fixture
def upstream() -> Iterator[MockUpstream]:
    with MockUpstream() as mock:
        yield mock


def record(store: Store, upstream: MockUpstream, body: dict, answer: Canned, **mode: object) -> Flow:
    """One request through a real forwarder (translate=... or repair=True) to the scripted upstream."""
    upstream.push(answer)
    forwarder = Forwarder(Options(upstream.base_url, port=0, **mode), store=store)
    forwarder.start()
    try:
        assert httpx.post(f"{forwarder.base_url}/v1/chat/completions", json=body).status_code == 200
    finally:
        forwarder.stop()
    flow = store.get(1)  # the forwarder's writer is drained by stop()
    assert flow is not None
    return flow


async def test_D_diffs_the_upstreams_answer_against_what_the_client_got(store: Store, upstream: MockUpstream) -> None:
    answer = anthropic_message("Sunny.")
    answer["content"].insert(0, THINKING)
    flow = record(store, upstream, WEATHER, json_response(answer), translate="openai-chat:anthropic")
    created = orjson.loads(flow.response_body)["created"]  # the bridge stamps the time of the request
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_flow(app, pilot, flow.id)
        screen = await press(app, pilot, "D")
        assert isinstance(screen, DiffScreen)
        diff, notes = screen.query_one("#diff", DiffViewer), screen.query_one("#notes", LineViewer)
        assert str(screen.query_one("#diff-title").content) == (
            "#1 upstream answer → client got · translated openai-chat → anthropic")
        assert diff.border_subtitle == "+6 −7 ~0 · 1 note"
        # Anthropic's message on the left, the Chat completion the client got on the right; the
        # thinking block the bridge dropped carries its loss.
        assert diff.lines == [
            "  {",
            '    "id": "msg_mock"',
            '-   "type": "message"',
            '-   "role": "assistant"',
            '    "model": "claude-sonnet-4-6"',
            '-   "content": [',
            "-     [0] {",
            "        ▲ dropped: anthropic thinking block cannot cross to Chat [XL-14]",
            '-       "type": "thinking"',
            '-       "thinking": "Paris, then."',
            '-       "signature": "sig"',
            "-     }",
            "-     [1] {",
            '-       "type": "text"',
            '-       "text": "Sunny."',
            "-     }",
            "-   ]",
            '-   "stop_reason": "end_turn"',
            '-   "stop_sequence": null',
            '    "usage": {',
            '-     "input_tokens": 10',
            '-     "output_tokens": 5',
            '+     "prompt_tokens": 10',
            '+     "completion_tokens": 5',
            '+     "total_tokens": 15',
            "    }",
            '+   "object": "chat.completion"',
            f'+   "created": {created}',
            '+   "choices": [',
            "+     [0] {",
            '+       "index": 0',
            '+       "message": {',
            '+         "role": "assistant"',
            '+         "content": "Sunny."',
            "+       }",
            '+       "finish_reason": "stop"',
            '+       "logprobs": null',
            "+     }",
            "+   ]",
            "  }",
        ]
        assert diff.marks == {7: "warning", **{line: "removed" for line in (2, 3, *range(5, 7), *range(8, 19), 20, 21)},
                              **{line: "added" for line in (*range(22, 25), *range(26, 39))}}
        assert notes.lines == ["/content/0", "  dropped: anthropic thinking block cannot cross to Chat [XL-14]"]
        assert diff.cursor == 2  # on the first change
        assert [region(diff), region(notes)] == [(0, 1, 80, 14), (0, 15, 80, 8)]
        await at_160(app, pilot)
        assert [region(diff), region(notes)] == [(0, 1, 106, 46), (106, 1, 54, 46)]
        assert isinstance(await press(app, pilot, "escape"), FlowScreen)


async def test_D_on_a_translated_stream_compares_both_reassembled(store: Store, upstream: MockUpstream) -> None:
    events = anthropic_stream("Sunny.", [Call("get_weather", '{"city": "Paris"}', "toolu_1")], pieces=2)
    thinking = [("content_block_start", {"type": "content_block_start", "index": 2,
                                         "content_block": {"type": "thinking", "thinking": ""}}),
                ("content_block_delta", {"type": "content_block_delta", "index": 2,
                                         "delta": {"type": "thinking_delta", "thinking": "Paris."}}),
                ("content_block_stop", {"type": "content_block_stop", "index": 2})]
    events[-2:-2] = thinking
    flow = record(store, upstream, {**WEATHER, "stream": True}, sse_response(events),
                  translate="openai-chat:anthropic")
    app = make_app(store)
    async with app.run_test(size=(160, 48)) as pilot:
        await open_flow(app, pilot, flow.id)
        screen = await press(app, pilot, "D")
        diff, notes = screen.query_one("#diff", DiffViewer), screen.query_one("#notes", LineViewer)
        assert str(screen.query_one("#diff-title").content) == (
            "#1 upstream answer → client got · translated openai-chat → anthropic · both streams reassembled")
        assert diff.border_subtitle == "+3 −6 ~0 · 1 note"
        created = orjson.loads(flow.response_body.split(b"\n")[0].removeprefix(b"data: "))["created"]
        removed = ['"type": "message"', '"role": "assistant"', None, '"content": [', "  [0] {", '    "type": "text"',
                   '    "text": "Sunny."', "  }", "  [1] {", '    "type": "tool_use"', '    "id": "toolu_1"',
                   '    "name": "get_weather"', '    "input": {', '      "city": "Paris"', "    }", "  }", "  [2] {",
                   '    "type": "thinking"', '    "thinking": "Paris."', "  }", "]", '"stop_reason": "tool_use"',
                   '"stop_sequence": null', '"usage": {', '  "input_tokens": 10', '  "output_tokens": 5', "}"]
        added = ['"object": "chat.completion"', f'"created": {created}', '"choices": [', "  [0] {", '    "index": 0',
                 '    "message": {', '      "role": "assistant"', '      "content": "Sunny."', '      "tool_calls": [',
                 "        [0] {", '          "id": "toolu_1"', '          "type": "function"',
                 '          "function": {',
                 '            "name": "get_weather"', '            "arguments": "{\\"city\\":\\"Paris\\"}"',
                 "          }", "        }", "      ]", "    }", '    "finish_reason": "tool_calls"', "  }", "]"]
        # A stream's losses have no place inside the reassembled answer: they sit on its first row.
        assert diff.lines == [
            "  {", "    ▲ dropped: thinking block cannot cross to Chat [XL-14]", '    "id": "msg_mock"',
            *('    "model": "claude-sonnet-4-6"' if line is None else f"-   {line}" for line in removed),
            *(f"+   {line}" for line in added), "  }"]
        assert diff.marks == {1: "warning", **{line: "removed" for line in (3, 4, *range(6, 30))},
                              **{line: "added" for line in range(30, 52)}}
        assert notes.lines == ["/stream", "  dropped: thinking block cannot cross to Chat [XL-14]"]
        assert [region(diff), region(notes)] == [(0, 1, 106, 46), (106, 1, 54, 46)]


async def test_D_in_repair_mode_marks_each_tool_name_given_back(store: Store, upstream: MockUpstream) -> None:
    """OpenAI refuses a space in a tool name: repair mode sends an alias up and restores the client's
    name in the answer. The diff shows each restored name with its note."""
    request = {**clean_request(), "tools": [{"type": "function", "function": {
        "name": "get weather", "parameters": {"type": "object", "properties": {}}}}]}
    (alias, name), = fix(request, Dialect.OPENAI_CHAT).aliases.items()
    assert name == "get weather"
    flow = record(store, upstream, request, json_response(chat_completion(None, [Call(alias)])), repair=True)
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_flow(app, pilot, flow.id)
        screen = await press(app, pilot, "D")
        diff, notes = screen.query_one("#diff", DiffViewer), screen.query_one("#notes", LineViewer)
        assert str(screen.query_one("#diff-title").content) == (
            "#1 upstream answer → client got · tool names restored on the way back")
        assert diff.border_subtitle == "+0 −0 ~1 · 1 note"
        restored = f"restored: the client declared 'get weather', sent upstream as {alias!r}"
        assert diff.lines == [
            "  {", '    "id": "chatcmpl-mock"', '    "object": "chat.completion"', '    "created": 1700000000',
            '    "model": "gpt-4o-mini"', '    "choices": [', "      [0] {", '        "index": 0',
            '        "message": {', '          "role": "assistant"', '          "content": null',
            '          "tool_calls": [', "            [0] {",
            '              "id": "call_1"', '              "type": "function"', '              "function": {',
            f'~               "name": "{alias}" → "get weather"', f"                  ▲ {restored}",
            '                "arguments": "{}"', "              }", "            }", "          ]", "        }",
            '        "logprobs": null', '        "finish_reason": "tool_calls"', "      }", "    ]",
            '    "usage": {… 3 keys}', "  }"]
        assert diff.marks == {16: "changed", 17: "warning"}
        assert notes.lines == ["/choices/0/message/tool_calls/0/function/name", f"  {restored}"]
        assert diff.cursor == 16


async def test_D_says_when_the_client_got_the_upstreams_own_answer(store: Store, upstream: MockUpstream) -> None:
    flow = record(store, upstream, clean_request(), json_response(chat_completion("Hi.")))
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_flow(app, pilot, flow.id)
        screen = await press(app, pilot, "D")
        nothing = "the client got the upstream's own answer: there is nothing to compare"
        assert str(screen.query_one("#diff-title").content) == f"#1 upstream answer → client · {nothing}"
        assert screen.query_one("#diff", DiffViewer).lines == [nothing]
