"""Official SDKs -> the real forwarder in translate mode -> a fake upstream of another dialect.

Each fake upstream lives here: a small aiohttp server on an ephemeral loopback port that answers
with two parallel calls to the first tool it was given (under the name it received, so aliases
must be reversed on the way back), as JSON or as a stream. The SDKs parse every response."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import anthropic
import openai
import orjson
import pytest
from aiohttp import web
from google import genai
from google.genai import types

from inspector.proxy import FlowEvent, Forwarder
from inspector.store import Store
from inspector.wire.check import check_request
from inspector.wire.dialect import Dialect
from inspector.wire.violations import Severity
from inspector.proxy.options import Options

Handler = Callable[[dict[str, Any]], tuple[str, Any]]  # payload -> ("json", body) | ("sse", [event bytes])


class FakeUpstream:
    """An aiohttp server in its own thread; `received` holds (path, parsed body) of each request."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.requests: list[web.Request] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.base_url = ""

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        payload = orjson.loads(await request.read())
        self.received.append((request.path, payload))
        self.requests.append(request)
        kind, body = self.handler(payload)
        if kind in ("json", "error"):
            return web.Response(body=orjson.dumps(body), content_type="application/json",
                                status=400 if kind == "error" else 200)
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        for event in body:
            await response.write(event)
        await response.write_eof()
        return response

    async def _start(self) -> web.AppRunner:
        app = web.Application()
        app.router.add_route("POST", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}"
        return runner

    def __enter__(self) -> FakeUpstream:
        self._thread.start()
        self._runner = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


class Completed:
    """Flows completed by the forwarder and committed by the store."""

    def __init__(self) -> None:
        self.rows: list[Any] = []
        self._changed = threading.Condition()

    def __call__(self, event: FlowEvent) -> None:
        if event.kind == "completed":
            with self._changed:
                self.rows.append(event.row)
                self._changed.notify_all()

    def wait(self, count: int) -> list[Any]:
        with self._changed:
            assert self._changed.wait_for(lambda: len(self.rows) >= count, 10), f"{len(self.rows)} of {count} flows"
            return list(self.rows)


class Rig:
    def __init__(self, upstream: FakeUpstream, store: Store, translate: str) -> None:
        self.upstream = upstream
        self.store = store
        self.completed = Completed()
        self.forwarder = Forwarder(Options(upstream.base_url, port=0, translate=translate), store=store, on_event=self.completed)
        self.forwarder.start()

    def flows(self, count: int) -> list[Any]:
        return [self.store.get(row.id) for row in self.completed.wait(count)]


@pytest.fixture
def rig(tmp_path, request):
    translate, handler = request.param
    store = Store(tmp_path / "flows.sqlite3")
    with FakeUpstream(handler) as upstream:
        rig = Rig(upstream, store, translate)
        yield rig
        rig.forwarder.stop()
    store.close()


def _sse(events: list[dict[str, Any]], named: bool = False, done: bool = False) -> list[bytes]:
    out = [(b"event: " + e["type"].encode() + b"\n" if named else b"") + b"data: " + orjson.dumps(e) + b"\n\n"
           for e in events]
    return out + ([b"data: [DONE]\n\n"] if done else [])


# --- fake Chat Completions upstream --------------------------------------------------------------

def chat_upstream(payload: dict[str, Any]) -> tuple[str, Any]:
    name = payload["tools"][0]["function"]["name"]
    calls = [("call_p1", '{"city":"Paris"}'), ("call_p2", '{"city":"Oslo"}')]
    if not payload.get("stream"):
        return "json", {"id": "chatcmpl-e2e", "object": "chat.completion", "created": 1, "model": payload["model"],
                        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                            "role": "assistant", "content": "Looking both up.",
                            "tool_calls": [{"id": i, "type": "function", "function": {"name": name, "arguments": a}}
                                           for i, a in calls]}}],
                        "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1, "model": payload["model"],
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events = [chunk({"role": "assistant", "content": ""}), chunk({"content": "Looking "}), chunk({"content": "both up."})]
    for index, (call_id, _) in enumerate(calls):
        events.append(chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                             "function": {"name": name, "arguments": ""}}]}))
    for index, (_, arguments) in enumerate(calls):  # parallel calls interleave their arguments
        events.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[:8]}}]}))
    for index, (_, arguments) in enumerate(calls):
        events.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[8:]}}]}))
    events.append(chunk({}, "tool_calls"))
    events.append({"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1, "model": payload["model"],
                   "choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}})
    return "sse", _sse(events, done=True)


# --- fake Responses upstream ---------------------------------------------------------------------

def responses_upstream(payload: dict[str, Any]) -> tuple[str, Any]:
    functions = [t["name"] for t in payload.get("tools", []) if t["type"] == "function"]
    name = functions[0] if functions else "web_lookup"
    message = {"type": "message", "id": "msg_e2e", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": "Looking both up.", "annotations": []}]}
    calls = [{"type": "function_call", "id": f"fc_{i}", "call_id": f"call_r{i}", "name": name, "arguments": a,
              "status": "completed"} for i, a in enumerate(['{"city":"Paris"}', '{"city":"Oslo"}'])]
    response = {"id": "resp_e2e", "object": "response", "created_at": 1, "model": payload["model"],
                "status": "completed", "output": [message, *calls],
                "usage": {"input_tokens": 20, "output_tokens": 9, "total_tokens": 29}}
    if not payload.get("stream"):
        return "json", response
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**response, "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**message, "content": []}},
        {"type": "response.output_text.delta", "item_id": "msg_e2e", "output_index": 0, "content_index": 0,
         "delta": "Looking both up."},
        {"type": "response.output_item.done", "output_index": 0, "item": message}]
    for i, call in enumerate(calls):
        events.append({"type": "response.output_item.added", "output_index": i + 1, "item": {**call, "arguments": ""}})
    for i, call in enumerate(calls):
        events.append({"type": "response.function_call_arguments.delta", "item_id": call["id"], "output_index": i + 1,
                       "delta": call["arguments"]})
    for i, call in enumerate(calls):
        events.append({"type": "response.output_item.done", "output_index": i + 1, "item": call})
    events.append({"type": "response.completed", "response": response})
    return "sse", _sse([{**e, "sequence_number": n} for n, e in enumerate(events)], named=True)


WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def _no_errors(payload: dict[str, Any], dialect: Dialect) -> None:
    assert [(v.rule, v.pointer) for v in check_request(payload, dialect) if v.severity is Severity.ERROR] == []


# --- openai SDK (Chat) -> Responses upstream -----------------------------------------------------

@pytest.mark.parametrize("rig", [("openai-chat:openai-responses", responses_upstream)], indirect=True)
def test_openai_chat_client_through_a_responses_upstream(rig: Rig) -> None:
    client = openai.OpenAI(base_url=f"{rig.forwarder.base_url}/v1", api_key="sk-test-translate", max_retries=0)
    tools = [{"type": "function", "function": {"name": "weather.get", "description": "Weather by city",
                                               "parameters": WEATHER_SCHEMA}}]
    messages = [{"role": "user", "content": "Weather in Paris and Oslo?"}]
    answer = client.chat.completions.create(model="gpt-4.1", messages=messages, tools=tools)
    calls = answer.choices[0].message.tool_calls
    assert answer.choices[0].message.content == "Looking both up."
    assert [(c.id, c.function.name, c.function.arguments) for c in calls] == [
        ("call_r0", "weather.get", '{"city":"Paris"}'), ("call_r1", "weather.get", '{"city":"Oslo"}')]
    assert answer.choices[0].finish_reason == "tool_calls"

    stream = client.chat.completions.create(model="gpt-4.1", messages=messages, tools=tools, stream=True,
                                            stream_options={"include_usage": True})
    text, streamed, usage = "", {}, None
    for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for delta in choice.delta.tool_calls or []:
                entry = streamed.setdefault(delta.index, {"id": delta.id, "name": delta.function.name, "args": ""})
                assert (delta.id is not None) is (entry["args"] == "" and entry["id"] == delta.id)
                entry["args"] += delta.function.arguments or ""
    assert text == "Looking both up."
    assert streamed == {0: {"id": "call_r0", "name": "weather.get", "args": '{"city":"Paris"}'},
                        1: {"id": "call_r1", "name": "weather.get", "args": '{"city":"Oslo"}'}}
    assert (usage.prompt_tokens, usage.completion_tokens) == (20, 9)

    # The history the client replays next turn uses the original name; the upstream sees the alias.
    history = [*messages, answer.choices[0].message.model_dump(exclude_none=True),
               *({"role": "tool", "tool_call_id": c.id, "content": "sunny"} for c in calls)]
    client.chat.completions.create(model="gpt-4.1", messages=history, tools=tools)
    client.close()

    paths = [path for path, _ in rig.upstream.received]
    assert paths == ["/v1/responses"] * 3
    sent = rig.upstream.received[2][1]
    alias = sent["tools"][0]["name"]
    assert alias != "weather.get" and [i["name"] for i in sent["input"] if i.get("type") == "function_call"] == [alias] * 2
    for _, payload in rig.upstream.received:
        _no_errors(payload, Dialect.OPENAI_RESPONSES)
    flows = rig.flows(3)
    assert orjson.loads(flows[0].request_body)["tools"][0]["function"]["name"] == "weather.get"
    assert orjson.loads(flows[0].upstream_request_body)["tools"][0]["name"] == alias
    assert any("[XL-02]" in note and "aliased /tools/0/function/name" in note for note in flows[0].notes)


# --- anthropic SDK -> Chat upstream --------------------------------------------------------------

@pytest.mark.parametrize("rig", [("anthropic:openai-chat", chat_upstream)], indirect=True)
def test_anthropic_client_through_a_chat_upstream(rig: Rig) -> None:
    client = anthropic.Anthropic(base_url=rig.forwarder.base_url, api_key="sk-ant-test-translate", max_retries=0)
    tools = [{"name": "get_weather", "description": "Weather by city", "input_schema": WEATHER_SCHEMA}]
    messages = [{"role": "user", "content": "Weather in Paris and Oslo?"}]
    message = client.messages.create(model="claude-sonnet-4-6", max_tokens=256, messages=messages, tools=tools)
    assert message.stop_reason == "tool_use"
    assert [(b.type, getattr(b, "text", None)) for b in message.content][:1] == [("text", "Looking both up.")]
    assert [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"] == [
        ("call_p1", "get_weather", {"city": "Paris"}), ("call_p2", "get_weather", {"city": "Oslo"})]
    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=256, messages=messages, tools=tools) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "tool_use"
    assert final.content[0].type == "text" and final.content[0].text == "Looking both up."
    assert [(b.id, b.name, b.input) for b in final.content if b.type == "tool_use"] == [
        ("call_p1", "get_weather", {"city": "Paris"}), ("call_p2", "get_weather", {"city": "Oslo"})]
    assert (final.usage.input_tokens, final.usage.output_tokens) == (20, 9)
    # Next turn: results (one failed) beside text, in Anthropic order; the Chat upstream gets tool messages first.
    follow = [*messages, {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in message.content]},
              {"role": "user", "content": [
                  {"type": "tool_result", "tool_use_id": "call_p1", "content": "sunny"},
                  {"type": "tool_result", "tool_use_id": "call_p2", "content": "no station", "is_error": True},
                  {"type": "text", "text": "Summarise."}]}]
    client.messages.create(model="claude-sonnet-4-6", max_tokens=256, messages=follow, tools=tools)
    client.close()
    assert [path for path, _ in rig.upstream.received] == ["/v1/chat/completions"] * 3
    sent = rig.upstream.received[2][1]
    assert sent["messages"][2:] == [{"role": "tool", "tool_call_id": "call_p1", "content": "sunny"},
                                    {"role": "tool", "tool_call_id": "call_p2", "content": "Error: no station"},
                                    {"role": "user", "content": "Summarise."}]
    for _, payload in rig.upstream.received:
        _no_errors(payload, Dialect.OPENAI_CHAT)
    flows = rig.flows(3)
    assert flows[1].streamed and b"content_block_start" in flows[1].response_body
    assert any("[XL-15]" in note for note in flows[2].notes)


# --- google-genai SDK -> Chat upstream (the seed runtime's situation) ----------------------------

@pytest.mark.parametrize("rig", [("gemini:openai-chat", chat_upstream)], indirect=True)
def test_genai_client_through_a_chat_upstream(rig: Rig) -> None:
    client = genai.Client(api_key="gm-test-translate", http_options=types.HttpOptions(base_url=rig.forwarder.base_url))
    declaration = types.FunctionDeclaration(
        name="get_weather", description="Weather by city",
        parameters=types.Schema(type=types.Type.OBJECT, required=["city"], properties={
            "city": types.Schema(type=types.Type.STRING),
            "unit": types.Schema(type=types.Type.STRING, enum=["C", "F"], nullable=True)}))
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declaration])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    answer = client.models.generate_content(model="gemini-2.5-flash", contents="Weather in Paris and Oslo?",
                                            config=config)
    assert answer.text == "Looking both up."
    assert [(c.id, c.name, c.args) for c in answer.function_calls] == [
        ("call_p1", "get_weather", {"city": "Paris"}), ("call_p2", "get_weather", {"city": "Oslo"})]
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="Weather in Paris and Oslo?",
                                                        config=config))
    assert "".join(c.text or "" for c in chunks if c.candidates and c.candidates[0].content
                   and c.candidates[0].content.parts and c.candidates[0].content.parts[0].text) == "Looking both up."
    streamed = [(f.id, f.name, f.args) for c in chunks for f in (c.function_calls or [])]
    assert streamed == [("call_p1", "get_weather", {"city": "Paris"}), ("call_p2", "get_weather", {"city": "Oslo"})]
    history = [types.Content(role="user", parts=[types.Part(text="Weather in Paris and Oslo?")]),
               answer.candidates[0].content,
               types.Content(role="user", parts=[
                   types.Part(function_response=types.FunctionResponse(id=c.id, name=c.name, response={"output": "ok"}))
                   for c in answer.function_calls] + [types.Part(text="In Celsius.")])]
    client.models.generate_content(model="gemini-2.5-flash", contents=history, config=config)
    client.close()
    paths = [path for path, _ in rig.upstream.received]
    assert paths == ["/v1/chat/completions"] * 3
    first = rig.upstream.received[0][1]
    assert first["model"] == "gemini-2.5-flash"
    assert first["tools"][0]["function"]["parameters"] == {
        "type": "object", "required": ["city"],
        "properties": {"city": {"type": "string"}, "unit": {"type": ["string", "null"], "enum": ["C", "F"]}}}
    assert rig.upstream.received[1][1]["stream"] is True
    follow = rig.upstream.received[2][1]["messages"]
    assert [m["role"] for m in follow] == ["user", "assistant", "tool", "tool", "user"]
    assert follow[4] == {"role": "user", "content": "In Celsius."}
    for _, payload in rig.upstream.received:
        _no_errors(payload, Dialect.OPENAI_CHAT)
    flows = rig.flows(3)
    assert any("[XL-01]" in note for note in flows[0].notes)


# --- seed scenarios end to end -------------------------------------------------------------------

@pytest.mark.parametrize("rig", [("openai-chat:openai-responses", responses_upstream)], indirect=True)
def test_seed_legacy_functions_reach_a_responses_upstream(rig: Rig) -> None:
    client = openai.OpenAI(base_url=f"{rig.forwarder.base_url}/v1", api_key="sk-test-translate", max_retries=0)
    answer = client.chat.completions.create(
        model="gpt-4.1", functions=[{"name": "get_weather", "parameters": WEATHER_SCHEMA}], function_call="auto",
        messages=[{"role": "user", "content": "Paris?"},
                  {"role": "assistant", "content": None, "function_call": {"name": "get_weather",
                                                                           "arguments": '{"city":"Paris"}'}},
                  {"role": "function", "name": "get_weather", "content": "sunny"}])
    assert [c.function.name for c in answer.choices[0].message.tool_calls] == ["get_weather", "get_weather"]
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model="gpt-4.1", messages=[{"role": "function", "name": "get_weather", "content": "sunny"}])
    assert "orphan result" in str(refused.value)
    client.close()
    sent = rig.upstream.received[0][1]
    assert [i.get("type", "message") for i in sent["input"]] == ["message", "function_call", "function_call_output"]
    assert sent["input"][1]["call_id"] == sent["input"][2]["call_id"]
    original, translation = rig.flows(1)[0].request_body, rig.flows(1)[0].upstream_request_body
    assert b'"role":"function"' in original and b'"function_call_output"' in translation
    assert any("[XL-05]" in note for note in rig.flows(1)[0].notes)


@pytest.mark.parametrize("rig", [("anthropic:openai-responses", responses_upstream)], indirect=True)
def test_seed_builtin_tools_reach_a_responses_upstream(rig: Rig) -> None:
    client = anthropic.Anthropic(base_url=rig.forwarder.base_url, api_key="sk-ant-test-translate", max_retries=0)
    message = client.messages.create(
        model="claude-sonnet-4-6", max_tokens=128, messages=[{"role": "user", "content": "news in Lyon?"}],
        tools=[{"type": "web_search_20250305", "name": "web_search", "allowed_domains": ["example.com"]},
               {"type": "bash_20250124", "name": "bash"}])
    assert message.content[0].text == "Looking both up."
    client.close()
    sent = rig.upstream.received[0][1]
    assert sent["tools"] == [{"type": "web_search", "filters": {"allowed_domains": ["example.com"]}}]
    flow = rig.flows(1)[0]
    assert any(note.startswith("dropped /tools/1:") and "[XL-09]" in note for note in flow.notes)


# --- openai SDK (Responses) -> Chat upstream: the SDK's own stream accumulator checks the events ---

@pytest.mark.parametrize("rig", [("openai-responses:openai-chat", chat_upstream)], indirect=True)
def test_openai_responses_client_through_a_chat_upstream(rig: Rig) -> None:
    client = openai.OpenAI(base_url=f"{rig.forwarder.base_url}/v1", api_key="sk-test-translate", max_retries=0)
    tools = [{"type": "function", "name": "get_weather", "description": "Weather by city",
              "parameters": WEATHER_SCHEMA, "strict": False}]
    response = client.responses.create(model="gpt-4.1", input="Weather in Paris and Oslo?", tools=tools)
    assert response.output_text == "Looking both up."
    assert [(i.call_id, i.name, i.arguments) for i in response.output if i.type == "function_call"] == [
        ("call_p1", "get_weather", '{"city":"Paris"}'), ("call_p2", "get_weather", '{"city":"Oslo"}')]
    with client.responses.stream(model="gpt-4.1", input="Weather in Paris and Oslo?", tools=tools) as stream:
        deltas: dict[str, str] = {}
        for event in stream:
            if event.type == "response.function_call_arguments.delta":
                deltas[event.item_id] = deltas.get(event.item_id, "") + event.delta
        final = stream.get_final_response()
    assert list(deltas.values()) == ['{"city":"Paris"}', '{"city":"Oslo"}']
    assert final.output_text == "Looking both up."
    assert [(i.call_id, i.name, i.arguments) for i in final.output if i.type == "function_call"] == [
        ("call_p1", "get_weather", '{"city":"Paris"}'), ("call_p2", "get_weather", '{"city":"Oslo"}')]
    assert (final.usage.input_tokens, final.usage.output_tokens) == (20, 9)
    client.close()
    for _, payload in rig.upstream.received:
        _no_errors(payload, Dialect.OPENAI_CHAT)
    assert rig.upstream.received[1][1]["stream_options"] == {"include_usage": True}


# --- what crosses besides the body: the credential and the query ----------------------------------

@pytest.mark.parametrize("rig", [("gemini:openai-chat", chat_upstream)], indirect=True)
def test_the_genai_key_reaches_a_chat_upstream_as_a_bearer_token_and_alt_stays_behind(rig: Rig) -> None:
    client = genai.Client(api_key="gm-test-translate", http_options=types.HttpOptions(base_url=rig.forwarder.base_url))
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[types.FunctionDeclaration(
        name="get_weather", parameters=types.Schema(type=types.Type.OBJECT, properties={
            "city": types.Schema(type=types.Type.STRING)}))])])
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi", config=config))
    assert [f.name for c in chunks for f in (c.function_calls or [])] == ["get_weather", "get_weather"]
    client.close()
    sent = rig.upstream.requests[0]
    assert sent.headers["authorization"] == "Bearer gm-test-translate"
    assert "x-goog-api-key" not in sent.headers and sent.query_string == ""


def failing_chat_upstream(payload: dict[str, Any]) -> tuple[str, Any]:
    if payload["messages"][-1]["content"] == "fail":
        return "error", {"error": {"message": "Invalid 'messages[0].content'", "type": "invalid_request_error",
                                   "code": "invalid_value"}}
    return chat_upstream(payload)


@pytest.mark.parametrize("rig", [("gemini:openai-chat", failing_chat_upstream)], indirect=True)
def test_an_upstream_error_reaches_the_client_in_its_own_dialect(rig: Rig) -> None:
    client = genai.Client(api_key="gm-test-translate", http_options=types.HttpOptions(base_url=rig.forwarder.base_url))
    with pytest.raises(genai.errors.ClientError) as failed:
        client.models.generate_content(model="gemini-2.5-flash", contents="fail")
    client.close()
    assert (failed.value.code, failed.value.status) == (400, "INVALID_ARGUMENT")
    assert failed.value.message == "Invalid 'messages[0].content'"
    flow = rig.flows(1)[0]
    assert orjson.loads(flow.upstream_response_body)["error"]["type"] == "invalid_request_error"
