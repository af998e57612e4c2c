"""Round trips A -> B -> A over generated tool-calling conversations (hypothesis): tools, calls,
arguments, results and text survive, and every intermediate payload passes our checker."""

from __future__ import annotations

import string
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import examples
from inspector.wire.check import check_request
from inspector.wire.dialect import Dialect
from inspector.wire.translate import get_bridge
from inspector.wire.violations import Severity

CHAT, RESP, ANT, GEM = Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES, Dialect.ANTHROPIC, Dialect.GEMINI
PATHS = {CHAT: "/v1/chat/completions", RESP: "/v1/responses", ANT: "/v1/messages",
         GEM: "/v1beta/models/gemini-2.5-flash:generateContent"}

# Names every dialect accepts as they are, so the round trip needs no alias map.
names = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,15}", fullmatch=True)
texts = st.text(alphabet=string.ascii_letters + string.digits + " .,!?é漢", min_size=1, max_size=30).filter(str.strip)
scalars = st.one_of(st.integers(-1000, 1000), st.booleans(), texts, st.lists(texts, max_size=3))
arguments = st.dictionaries(names, scalars, max_size=4)
property_schema = st.sampled_from([{"type": "string"}, {"type": "integer"}, {"type": "boolean"},
                                   {"type": "array", "items": {"type": "string"}},
                                   {"type": "string", "description": "a field"}])


@st.composite
def conversations(draw: st.DrawFn) -> dict[str, Any]:
    tool_names = draw(st.lists(names, min_size=1, max_size=4, unique=True))
    tools = []
    for name in tool_names:
        props = draw(st.dictionaries(names, property_schema, min_size=1, max_size=3))
        required = draw(st.lists(st.sampled_from(sorted(props)), unique=True))
        schema: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            schema["required"] = required
        tools.append({"type": "function", "function": {"name": name, "description": draw(texts), "parameters": schema}})
    messages: list[dict[str, Any]] = [{"role": "system", "content": draw(texts)}, {"role": "user", "content": draw(texts)}]
    counter = 0
    for _ in range(draw(st.integers(0, 3))):
        calls = []
        for _ in range(draw(st.integers(1, 3))):
            counter += 1
            calls.append({"id": f"call_{counter}{draw(st.from_regex(r'[A-Za-z0-9]{0,8}', fullmatch=True))}",
                          "type": "function", "function": {"name": draw(st.sampled_from(tool_names)),
                                                           "arguments": orjson.dumps(draw(arguments)).decode()}})
        messages.append({"role": "assistant", "content": draw(st.one_of(st.none(), texts)), "tool_calls": calls})
        messages.extend({"role": "tool", "tool_call_id": c["id"], "content": draw(texts)} for c in calls)
        messages.append({"role": "user", "content": draw(texts)})
    return {"model": "m", "messages": messages, "tools": tools}


def facts(chat: dict[str, Any]) -> dict[str, Any]:
    """What must survive a round trip, read from a Chat request."""
    calls, results, said = [], [], []
    for message in chat["messages"]:
        if message.get("content"):
            said.append((message["role"], message["content"]))
        for call in message.get("tool_calls") or []:
            calls.append((call["id"], call["function"]["name"], orjson.loads(call["function"]["arguments"])))
        if message["role"] == "tool":
            results.append((message["tool_call_id"], message["content"]))
    tools = [(t["function"]["name"], t["function"]["description"], t["function"]["parameters"]) for t in chat["tools"]]
    return {"tools": tools, "calls": calls, "results": results, "text": said}


def no_errors(payload: dict[str, Any], dialect: Dialect) -> None:
    errors = [(v.rule, v.pointer, v.message) for v in check_request(payload, dialect) if v.severity is Severity.ERROR]
    assert errors == []


SETTINGS = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(conversations(), st.sampled_from([RESP, ANT, GEM]))
def test_chat_to_other_and_back_keeps_everything(chat: dict[str, Any], other: Dialect) -> None:
    no_errors(chat, CHAT)
    there = get_bridge(CHAT, other).request(chat, PATHS[CHAT])
    no_errors(there.payload, other)
    back = get_bridge(other, CHAT).request(there.payload, there.path)
    no_errors(back.payload, CHAT)
    assert facts(back.payload) == facts(chat)


@SETTINGS
@given(conversations(), st.sampled_from([RESP, ANT, GEM]))
def test_other_to_chat_and_back_is_the_same_payload(chat: dict[str, Any], other: Dialect) -> None:
    original = get_bridge(CHAT, other).request(chat, PATHS[CHAT])
    via_chat = get_bridge(other, CHAT).request(original.payload, original.path)
    again = get_bridge(CHAT, other).request(via_chat.payload, via_chat.path)
    assert again.payload == original.payload
    assert again.path == original.path
