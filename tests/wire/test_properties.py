"""Properties: the checker is total (arbitrary JSON, mutated payloads, arbitrary bytes never raise),
conversations built by this generator are clean in every dialect, their streams reassemble to the
same calls, and a payload with fixable defects comes back from `fix` without errors."""

from __future__ import annotations

import copy
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import examples
from inspector.wire import check
from inspector.wire.dialect import DIALECT_NAMES
from inspector.wire.fix import fix

from .wire_payloads import (anthropic_request, chat_chunks, chat_request, gemini_request, mcp_list_result,
                            responses_request, sse)

FAST = settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))

KEYS = st.sampled_from([
    "tools", "messages", "role", "content", "tool_calls", "function", "name", "arguments", "type", "id",
    "tool_call_id", "parameters", "properties", "input", "call_id", "output", "contents", "parts", "functionCall",
    "functionResponse", "args", "response", "candidates", "choices", "delta", "index", "result", "method", "params",
    "tool_choice", "input_schema", "tool_use_id", "inputSchema", "functionDeclarations", "strict", "items"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2, 3), st.floats(allow_nan=False), st.text(max_size=8),
                    st.sampled_from(["function", "tool", "assistant", "user", "model", "tool_use", "tool_result",
                                     "OBJECT", "object", "a.b", "{}", '"{}"', "[1]", "tools/call", "function_call"]))
JSON = st.recursive(SCALARS, lambda children: st.one_of(st.lists(children, max_size=4),
                                                        st.dictionaries(KEYS | st.text(max_size=4), children,
                                                                        max_size=5)), max_leaves=30)


@FAST
@given(JSON, st.sampled_from(DIALECT_NAMES))
def test_arbitrary_json_never_raises(payload, dialect):
    check.check_request(payload, dialect)
    check.check_response(payload, dialect)
    check.check_document(payload)
    fix(payload, dialect)
    body = sse(payload if isinstance(payload, list) else [payload])
    check.check_stream(body, dialect)
    check.reassemble(body, dialect)


@FAST
@given(st.binary(max_size=300), st.sampled_from(DIALECT_NAMES))
def test_arbitrary_bytes_never_raise(body, dialect):
    check.check_stream(body, dialect)
    check.reassemble(body, dialect)
    check.check_bytes(body)


BASELINES = [(chat_request, "openai-chat"), (responses_request, "openai-responses"),
             (anthropic_request, "anthropic"), (gemini_request, "gemini"), (mcp_list_result, "mcp")]


def _nodes(document: Any, path: tuple = ()) -> list[tuple]:
    found = [path]
    if isinstance(document, dict):
        for key, value in document.items():
            found += _nodes(value, path + (key,))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found += _nodes(value, path + (index,))
    return found


@FAST
@given(st.sampled_from(range(len(BASELINES))), st.data())
def test_mutated_valid_payloads_never_raise(which, data):
    builder, dialect = BASELINES[which]
    document = builder()
    for _ in range(data.draw(st.integers(1, 4))):
        paths = [p for p in _nodes(document) if p]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        if data.draw(st.booleans()):
            parent[path[-1]] = data.draw(JSON)
        elif isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
    check.check_request(document, dialect)
    check.check_response(document, dialect)
    fix(document, dialect)


# --- a generator of valid conversations, rendered into every dialect -----------------------------------

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True)
PROPERTY_TYPES = st.sampled_from(["string", "integer", "number", "boolean"])
ARG_VALUES = st.one_of(st.text(max_size=10), st.integers(-100, 100), st.booleans())


@st.composite
def conversations(draw):
    names = draw(st.lists(NAMES, min_size=1, max_size=5, unique=True))
    tools = []
    for name in names:
        props = draw(st.dictionaries(NAMES, PROPERTY_TYPES, max_size=3))
        tools.append((name, props))
    turns = []
    counter = 0
    for _ in range(draw(st.integers(1, 4))):
        calls = []
        for _ in range(draw(st.integers(0, 3))):
            name, props = draw(st.sampled_from(tools))
            args = {key: draw(ARG_VALUES) for key in props}
            counter += 1
            calls.append((f"call_{counter}", name, args, draw(st.text(max_size=12))))
        turns.append((draw(st.text(min_size=1, max_size=12)), calls))
    return tools, turns


def _schema(props):
    return {"type": "object", "properties": {k: {"type": t} for k, t in props.items()}}


def chat_of(tools, turns):
    messages = []
    for text, calls in turns:
        messages.append({"role": "user", "content": text})
        if calls:
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": i, "type": "function", "function": {"name": n, "arguments": orjson.dumps(a).decode()}}
                for i, n, a, _ in calls]})
            messages += [{"role": "tool", "tool_call_id": i, "content": r} for i, _, _, r in calls]
        messages.append({"role": "assistant", "content": "ok"})
    return {"model": "m", "tools": [{"type": "function", "function": {"name": n, "parameters": _schema(p)}}
                                    for n, p in tools], "messages": messages}


def responses_of(tools, turns):
    items = []
    for text, calls in turns:
        items.append({"role": "user", "content": text})
        items += [{"type": "function_call", "call_id": i, "name": n, "arguments": orjson.dumps(a).decode()}
                  for i, n, a, _ in calls]
        items += [{"type": "function_call_output", "call_id": i, "output": r} for i, _, _, r in calls]
        items.append({"role": "assistant", "content": "ok"})
    return {"model": "m", "tools": [{"type": "function", "name": n, "parameters": _schema(p), "strict": False}
                                    for n, p in tools], "input": items}


def anthropic_of(tools, turns):
    messages = []
    for text, calls in turns:
        if calls:
            messages.append({"role": "user", "content": text})
            messages.append({"role": "assistant", "content": [
                {"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a, _ in calls]})
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": i, "content": r} for i, _, _, r in calls]
                + [{"type": "text", "text": "go on"}]})
        else:
            messages.append({"role": "user", "content": text})
        messages.append({"role": "assistant", "content": "ok"})
    return {"model": "m", "max_tokens": 10, "messages": messages,
            "tools": [{"name": n, "input_schema": _schema(p)} for n, p in tools]}


def gemini_of(tools, turns):
    contents = []
    for text, calls in turns:
        contents.append({"role": "user", "parts": [{"text": text}]})
        if calls:
            contents.append({"role": "model", "parts": [{"functionCall": {"name": n, "args": a, "id": i}}
                                                        for i, n, a, _ in calls]})
            contents.append({"role": "user", "parts": [
                {"functionResponse": {"name": n, "id": i, "response": {"output": r}}} for i, n, _, r in calls]})
        contents.append({"role": "model", "parts": [{"text": "ok"}]})
    return {"contents": contents, "tools": [{"functionDeclarations": [
        {"name": n, "parameters": {"type": "OBJECT", "properties": {k: {"type": t.upper()} for k, t in p.items()}}}
        for n, p in tools]}]}


RENDERERS = [(chat_of, "openai-chat"), (responses_of, "openai-responses"), (anthropic_of, "anthropic"),
             (gemini_of, "gemini")]


@FAST
@given(conversations())
def test_generated_conversations_are_clean_in_every_dialect(conversation):
    for render, dialect in RENDERERS:
        payload = render(*conversation)
        assert check.check_request(payload, dialect) == [], dialect


@FAST
@given(conversations(), st.integers(1, 7))
def test_generated_chat_streams_are_clean_and_reassemble_to_the_calls(conversation, size):
    calls = [c for _, turn in conversation[1] for c in turn][:4]
    if not calls:
        return
    chunks = []
    for index, (call_id, name, args, _) in enumerate(calls):
        text = orjson.dumps(args).decode()
        chunks.append({"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}})
        chunks += [{"index": index, "function": {"arguments": text[i:i + size]}} for i in range(0, len(text), size)]
    events = [{"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [c]},
                                                              "finish_reason": None}]} for c in chunks]
    events.append({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {},
                                                                   "finish_reason": "tool_calls"}]})
    body = sse(events, done=True)
    assert check.check_stream(body, "openai-chat") == []
    rebuilt = check.reassemble(body, "openai-chat")["choices"][0]["message"]["tool_calls"]
    assert [(c["id"], c["function"]["name"], orjson.loads(c["function"]["arguments"])) for c in rebuilt] == [
        (i, n, a) for i, n, a, _ in calls]


# --- fixable defects come back clean -------------------------------------------------------------------


def _chat_defects(payload, picks):
    tools = payload["tools"]
    messages = payload["messages"]
    calls = [(m, c) for m in messages if m.get("tool_calls") for c in m["tool_calls"]]
    results = [m for m in messages if m["role"] == "tool"]
    if 0 in picks:
        tools[0]["function"]["parameters"]["type"] = "OBJECT"
        for prop in tools[0]["function"]["parameters"]["properties"].values():
            prop["type"] = prop["type"].upper()
            prop["nullable"] = True
    if 1 in picks and results:
        del results[0]["content"]
    if 2 in picks and calls:
        calls[0][1]["function"]["arguments"] = orjson.dumps(calls[0][1]["function"]["arguments"]).decode()
    if 3 in picks and calls:
        calls[-1][1]["function"]["arguments"] = "[1, 2]"
    if 4 in picks:
        tools.append(copy.deepcopy(tools[0]))
    if 5 in picks:
        old = tools[0]["function"]["name"]
        tools[0]["function"]["name"] = f"mcp.{old}"
        for _, call in calls:
            if call["function"]["name"] == old:
                call["function"]["name"] = f"mcp.{old}"
    if 6 in picks:
        messages.append({"role": "assistant", "tool_calls": []})
    if 7 in picks and results:
        messages.remove(results[-1])
    if 8 in picks:
        messages.insert(1, {"role": "tool", "tool_call_id": "nobody", "content": "?"})
    if 9 in picks and calls:
        calls[0][1]["function"]["arguments"] = {"raw": "object"}
    return payload


@FAST
@given(conversations(), st.sets(st.integers(0, 9), min_size=1))
def test_fixed_chat_payloads_have_no_errors(conversation, picks):
    payload = _chat_defects(chat_of(*conversation), picks)
    result = fix(payload, "openai-chat")
    errors = [(v.rule, v.pointer) for v in check.check_request(result.payload, "openai-chat")
              if v.severity.value == "error"]
    assert errors == []
    assert fix(result.payload, "openai-chat").repairs == []


@FAST
@given(conversations(), st.sets(st.integers(0, 3), min_size=1))
def test_fixed_anthropic_payloads_have_no_errors(conversation, picks):
    payload = anthropic_of(*conversation)
    uses = [b for m in payload["messages"] if isinstance(m["content"], list) for b in m["content"]
            if b["type"] == "tool_use"]
    if 0 in picks:
        payload["tools"].append(copy.deepcopy(payload["tools"][0]))
    if 1 in picks and uses:
        uses[0]["input"] = orjson.dumps(uses[0]["input"]).decode()
    if 2 in picks:
        for message in payload["messages"]:
            if isinstance(message["content"], list) and message["content"][-1]["type"] == "text":
                message["content"].insert(0, message["content"].pop())
    if 3 in picks:
        for message in payload["messages"]:
            if message["role"] == "user" and isinstance(message["content"], list):
                message["content"] = [b for b in message["content"] if b["type"] != "tool_result"] or "skip"
                break
    result = fix(payload, "anthropic")
    assert [v for v in check.check_request(result.payload, "anthropic") if v.severity.value == "error"] == []


def test_the_stream_baseline_reassembles_like_the_generator_expects():
    assert check.check_stream(sse(chat_chunks()), "openai-chat") == []


SSE_LINES = st.sampled_from(["data: {\"a\": 1}", "data:{}", "data:  x", "data", "event: ping", ": comment",
                             "id: 7", "", "", "retry: 5", "data: [DONE]", "dataX: no", "data: é", "{}"])


@FAST
@given(st.lists(SSE_LINES, max_size=12), st.booleans(), st.sampled_from(["\n", "\r\n", "\r"]),
       st.lists(st.integers(0, 200), max_size=6))
def test_sse_events_do_not_depend_on_line_ends_or_chunk_boundaries(lines, closed, end, cuts):
    # One parser (sse.py) serves the checker's whole bodies and the bridges' chunks alike.
    from inspector.wire.sse import SSEParser, parse_all

    body = (end.join(lines) + (end * 2 if closed else "")).encode()
    whole = parse_all(body)
    parser, events, start = SSEParser(), [], 0
    for cut in sorted(cuts):
        events += parser.feed(body[start:cut])
        start = max(start, cut)
    assert events + parser.feed(body[start:]) + parser.close() == whole
    assert whole == parse_all(("\n".join(lines) + ("\n\n" if closed else "")).encode())


@FAST
@given(conversations(), st.sets(st.integers(0, 4), min_size=1))
def test_fixed_responses_payloads_have_no_errors(conversation, picks):
    payload = responses_of(*conversation)
    items = payload["input"]
    calls = [i for i in items if i.get("type") == "function_call"]
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    if 0 in picks:
        payload["tools"][0] = {"type": "function", "function": {"name": payload["tools"][0]["name"],
                                                                "parameters": {"type": "OBJECT"}}}
    if 1 in picks and calls:
        calls[0]["arguments"] = orjson.dumps(calls[0]["arguments"]).decode()
    if 2 in picks and outputs:
        items.remove(outputs[0])
    if 3 in picks and outputs:
        outputs[-1]["call_id"] = "nobody"
    if 4 in picks and outputs and any(item is outputs[-1] for item in items):
        position = next(i for i, item in enumerate(items) if item is outputs[-1])
        items[position] = {"role": "tool", "tool_call_id": outputs[-1]["call_id"], "content": "x"}
    result = fix(payload, "openai-responses")
    assert [v for v in check.check_request(result.payload, "openai-responses") if v.severity.value == "error"] == []


@FAST
@given(conversations(), st.sets(st.integers(0, 3), min_size=1))
def test_fixed_gemini_payloads_have_no_errors(conversation, picks):
    payload = gemini_of(*conversation)
    declarations = payload["tools"][0]["functionDeclarations"]
    calls = [p["functionCall"] for c in payload["contents"] for p in c["parts"] if "functionCall" in p]
    responses = [p["functionResponse"] for c in payload["contents"] for p in c["parts"] if "functionResponse" in p]
    if 0 in picks:
        declarations.append(copy.deepcopy(declarations[0]))
    if 1 in picks:
        declarations[0]["parameters"]["$schema"] = "x"
        for prop in declarations[0]["parameters"].get("properties", {}).values():
            prop["type"] = [prop["type"], "null"]
    if 2 in picks and calls:
        calls[0]["args"] = orjson.dumps(calls[0]["args"]).decode()
    if 3 in picks and responses:
        responses[0]["response"] = [responses[0]["response"]]
    result = fix(payload, "gemini")
    assert [v for v in check.check_request(result.payload, "gemini") if v.severity.value == "error"] == []
