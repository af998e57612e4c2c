"""Properties over tool names and call ids that the target dialect must rewrite (XL-02, XL-04): for
every pair of dialects, what is sent passes the target's checker, calls and results still pair, and
the model's call comes back to the client under the name the client declared."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import examples
from inspector.wire.canned import Call
from inspector.wire.check import check_request
from inspector.wire.dialect import Dialect
from inspector.wire.dialects import home
from inspector.wire.translate import PAIRS as BRIDGED, get_bridge
from inspector.wire.violations import Severity

CHAT, RESP, ANT, GEM = Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES, Dialect.ANTHROPIC, Dialect.GEMINI
BR = Dialect.BEDROCK
PATHS = {CHAT: "/v1/chat/completions", RESP: "/v1/responses", ANT: "/v1/messages",
         GEM: "/v1beta/models/gemini-2.5-flash:generateContent", BR: "/model/amazon.nova-pro-v1%3A0/converse"}
SETTINGS = settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}

# Names MCP servers and aggregators produce: dots, slashes, colons, spaces, non-ASCII, over 64 chars.
NAMES = st.text("abXY09_-.:/ é", min_size=1, max_size=90).filter(lambda n: n[0].isalpha())
IDS = st.text("abXY09_-.:/ é", min_size=1, max_size=90).filter(str.strip)


def _request(dialect: Dialect, names: list[str], call_id: str) -> dict[str, Any]:
    name = names[0]
    if dialect is CHAT:
        return {"model": "m", "tools": [{"type": "function", "function": {"name": n, "parameters": SCHEMA}}
                                        for n in names],
                "messages": [{"role": "user", "content": "go"},
                             {"role": "assistant", "content": None, "tool_calls": [
                                 {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}]},
                             {"role": "tool", "tool_call_id": call_id, "content": "done"},
                             {"role": "user", "content": "again"}]}
    if dialect is RESP:
        return {"model": "m", "tools": [{"type": "function", "name": n, "parameters": SCHEMA} for n in names],
                "input": [{"role": "user", "content": "go"},
                          {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"},
                          {"type": "function_call_output", "call_id": call_id, "output": "done"},
                          {"role": "user", "content": "again"}]}
    if dialect is ANT:
        return {"model": "m", "max_tokens": 256, "tools": [{"name": n, "input_schema": SCHEMA} for n in names],
                "messages": [{"role": "user", "content": "go"},
                             {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": name,
                                                                "input": {}}]},
                             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id,
                                                           "content": "done"}, {"type": "text", "text": "again"}]}]}
    if dialect is BR:
        return {"toolConfig": {"tools": [{"toolSpec": {"name": n, "inputSchema": {"json": SCHEMA}}} for n in names]},
                "messages": [{"role": "user", "content": [{"text": "go"}]},
                             {"role": "assistant", "content": [{"toolUse": {"toolUseId": call_id, "name": name,
                                                                            "input": {}}}]},
                             {"role": "user", "content": [{"toolResult": {"toolUseId": call_id,
                                                                          "content": [{"text": "done"}]}},
                                                          {"text": "again"}]}]}
    return {"tools": [{"functionDeclarations": [{"name": n, "parameters": {
        "type": "OBJECT", "properties": {"q": {"type": "STRING"}}}} for n in names]}],
        "contents": [{"role": "user", "parts": [{"text": "go"}]},
                     {"role": "model", "parts": [{"functionCall": {"id": call_id, "name": name, "args": {}}}]},
                     {"role": "user", "parts": [{"functionResponse": {"id": call_id, "name": name,
                                                                      "response": {"output": "done"}}}]},
                     {"role": "user", "parts": [{"text": "again"}]}]}


def _reply(dialect: Dialect, name: str) -> dict[str, Any]:
    respond = home(dialect).mock_response
    assert respond is not None
    return respond(None, [Call(name, '{"q":"x"}', "call_up_1")])


def _called(dialect: Dialect, payload: dict[str, Any]) -> list[str]:
    if dialect is CHAT:
        return [c["function"]["name"] for c in payload["choices"][0]["message"].get("tool_calls") or []]
    if dialect is RESP:
        return [item["name"] for item in payload["output"] if item.get("type") == "function_call"]
    if dialect is ANT:
        return [block["name"] for block in payload["content"] if block["type"] == "tool_use"]
    if dialect is BR:
        return [block["toolUse"]["name"] for block in payload["output"]["message"]["content"] if "toolUse" in block]
    return [part["functionCall"]["name"] for part in payload["candidates"][0]["content"]["parts"]
            if "functionCall" in part]


PAIRS = list(BRIDGED)  # every request bridge the forwarder offers


@SETTINGS
@given(st.lists(NAMES, min_size=1, max_size=3, unique=True), IDS, st.sampled_from(PAIRS))
def test_names_and_ids_the_target_rejects_are_rewritten_and_reversed(names: list[str], call_id: str,
                                                                     pair: tuple[Dialect, Dialect]) -> None:
    source, target = pair
    bridge = get_bridge(source, target)
    sent = bridge.request(_request(source, names, call_id), PATHS[source])
    errors = [(v.rule, v.pointer, v.message) for v in check_request(sent.payload, target)
              if v.severity is Severity.ERROR]
    assert errors == []
    sent_as = next(alias for alias, original in [*sent.state.aliases.items(), (names[0], names[0])]
                   if original == names[0])
    back = bridge.response(_reply(target, sent_as), sent.state)
    assert _called(source, back.payload) == [names[0]]
