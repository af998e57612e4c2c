"""Providers that speak an existing dialect on paths of their own, through the real forwarder: Claude on
Vertex AI (the official `AnthropicVertex`), Azure OpenAI (the official `AzureOpenAI`) and Gemini Code
Assist (Gemini CLI signed in with a Google account, whose envelope is taken from gemini-cli's
packages/core/src/code_assist/converter.ts and server.ts). Each is recorded with the right dialect,
the provider's profile, the model its path names, and the findings its rules give, pointing into the
recorded bodies."""

from __future__ import annotations

import anthropic
from anthropic._constants import ANTHROPIC_API_VERSION  # what AnthropicVertex puts in the body
import httpx
import openai
import orjson

from inspector.analysis import analyse
from inspector.mock import MockUpstream, json_response, sse_response
from inspector.proxy import Forwarder
from inspector.proxy.options import Options
from inspector.store import Store
from inspector.wire import conversation, profiles
from inspector.wire.canned import Call
from inspector.wire.dialect import Dialect
from inspector.wire.dialects.anthropic.mock import anthropic_message, anthropic_stream
from inspector.wire.dialects.gemini.mock import gemini_response, gemini_stream
from inspector.wire.dialects.openai_chat.mock import chat_completion, chat_stream
from inspector.wire.locate import source
from inspector.wire.summary import response_usage

from .conftest import Completed

TOKEN = "ya29.e2e-vertex-token-3f1a"
AZURE_KEY = "azure-e2e-key-0c4d2b"
TOOLS = [{"name": "get_weather", "description": "Weather by city",
          "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
VERTEX_PATH = "/v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-6"


def profile_of(flow, dialect: Dialect) -> str:
    return profiles.for_upstream(flow.upstream_url, dialect).name


def findings(flow) -> list[tuple[str, str, str]]:
    return [(v.rule, v.severity.value, v.pointer) for v in analyse(flow).violations]


def test_anthropic_vertex_tool_loop_and_stream(passthrough):
    mock, store, forwarder, completed = passthrough
    call = Call("get_weather", '{"city": "Paris"}', "toolu_vrtx_01")
    mock.push(json_response(anthropic_message("Checking.", [call])),
              sse_response(anthropic_stream("Sunny in Paris.", [])))
    client = anthropic.AnthropicVertex(region="us-east5", project_id="proj-1", access_token=TOKEN,
                                       base_url=f"{forwarder.base_url}/v1", max_retries=0)
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.messages.create(model="claude-sonnet-4-6", max_tokens=256, messages=messages, tools=TOOLS)
    assert [(b.type, getattr(b, "id", None)) for b in first.content] == [("text", None), ("tool_use", "toolu_vrtx_01")]
    messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_vrtx_01", "content": "sunny"}]}]
    # A relay forwarding the flags it would send Anthropic: effort is not one Vertex takes (AN-19).
    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=256, messages=messages, tools=TOOLS,
                                extra_headers={"anthropic-beta": "interleaved-thinking-2025-05-14,effort-2025-11-24"}
                                ) as stream:
        final = stream.get_final_message()
    assert final.content[0].text == "Sunny in Paris."
    client.close()

    rows = completed.wait(2)
    assert [(r.path, r.dialect, r.model, r.status, r.streamed, r.tools, r.tool_calls) for r in rows] == [
        (f"{VERTEX_PATH}:rawPredict", "anthropic", "claude-sonnet-4-6", 200, False, 1, 1),
        (f"{VERTEX_PATH}:streamRawPredict", "anthropic", "claude-sonnet-4-6", 200, True, 1, 0)]
    flows = [store.get(r.id) for r in rows]
    assert [profile_of(f, Dialect.ANTHROPIC) for f in flows] == ["vertex-anthropic", "vertex-anthropic"]
    # Vertex's variant: no model in the body (the path's), anthropic_version in it, the token as Bearer.
    sent = [orjson.loads(received.body) for received in mock.received]
    assert [("model" in body, body["anthropic_version"]) for body in sent] == [
        (False, ANTHROPIC_API_VERSION), (False, ANTHROPIC_API_VERSION)]
    assert all(("authorization", f"Bearer {TOKEN}") in [(n.lower(), v) for n, v in r.headers] for r in mock.received)
    assert findings(flows[0]) == []
    assert findings(flows[1]) == [("AN-19", "warning", "")]
    (finding,) = analyse(flows[1]).violations
    assert finding.message == "anthropic-beta effort-2025-11-24 is not a beta flag vertex-anthropic takes"
    store.flush()
    assert TOKEN.encode() not in store.path.read_bytes()


def test_azure_openai_deployment_chat_with_tools(passthrough):
    mock, store, forwarder, completed = passthrough
    long_id = "call_" + "x" * 40  # Azure enforces 40 characters (OC-16 is an error under its profile)
    mock.push(json_response(chat_completion(None, [Call("get_weather", '{"city": "Oslo"}', "call_1")])),
              json_response(chat_completion("Cold in Oslo.", [])))
    client = openai.AzureOpenAI(api_key=AZURE_KEY, api_version="2024-10-21", azure_endpoint=forwarder.base_url,
                                max_retries=0)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    messages = [{"role": "user", "content": "Weather in Oslo?"}]
    first = client.chat.completions.create(model="gpt4o-prod", messages=messages, tools=tools)
    assert first.choices[0].message.tool_calls[0].function.name == "get_weather"
    messages += [{"role": "assistant", "content": None, "tool_calls": [
                     {"id": long_id, "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}]},
                 {"role": "tool", "tool_call_id": long_id, "content": "cold"}]
    second = client.chat.completions.create(model="gpt4o-prod", messages=messages, tools=tools)
    assert second.choices[0].message.content == "Cold in Oslo."
    client.close()

    rows = completed.wait(2)
    path = "/openai/deployments/gpt4o-prod/chat/completions"
    assert [(r.path, r.dialect, r.model, r.status, r.tools, r.tool_calls) for r in rows] == [
        (path, "openai-chat", "gpt4o-prod", 200, 1, 1), (path, "openai-chat", "gpt4o-prod", 200, 1, 0)]
    flows = [store.get(r.id) for r in rows]
    assert [f.query for f in flows] == ["api-version=2024-10-21", "api-version=2024-10-21"]
    assert [profile_of(f, Dialect.OPENAI_CHAT) for f in flows] == ["azure-openai", "azure-openai"]
    assert all(("api-key", AZURE_KEY) in [(n.lower(), v) for n, v in r.headers] for r in mock.received)
    assert findings(flows[0]) == []
    assert findings(flows[1]) == [("OC-16", "error", "/messages/1/tool_calls/0/id")]
    store.flush()
    assert AZURE_KEY.encode() not in store.path.read_bytes()


# gemini-cli's CAGenerateContentRequest: {model, project, user_prompt_id, request, enabled_credit_types?}
def code_assist_request(contents: list) -> dict:
    return {"model": "gemini-2.5-pro", "project": "cloud-project-7", "user_prompt_id": "prompt-id-1a2b",
            "request": {"contents": contents, "session_id": "session-9",
                        "tools": [{"functionDeclarations": [{"name": "read_file", "description": "Read a file",
                                                             "parameters": {"type": "object", "properties": {
                                                                 "path": {"type": "string"}}}}]}]}}


def test_code_assist_envelope_recorded_checked_and_reassembled(passthrough):
    mock, store, forwarder, completed = passthrough
    call = Call("read_file", '{"path": "README.md"}', "")
    # CaGenerateContentResponse: the answer under `response`, and each SSE chunk one of those.
    mock.push(json_response({"response": gemini_response(None, [call], "gemini-2.5-pro"), "traceId": "trace-1"}),
              sse_response([{"response": event, "traceId": "trace-2"}
                            for event in gemini_stream("The README says hello.", [], "gemini-2.5-pro")]))
    first_turn = [{"role": "user", "parts": [{"text": "What is in README.md?"}]}]
    # The second turn answers the call with a functionResponse of another name (GM-10).
    second_turn = [*first_turn, {"role": "model", "parts": [{"functionCall": {"name": "read_file",
                                                                                 "args": {"path": "README.md"}}}]},
                   {"role": "user", "parts": [{"functionResponse": {"name": "write_file", "response": {"ok": True}}}]}]
    headers = {"authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=forwarder.base_url, headers=headers) as client:
        one = client.post("/v1internal:generateContent", content=orjson.dumps(code_assist_request(first_turn)))
        two = client.post("/v1internal:streamGenerateContent", params={"alt": "sse"},
                          content=orjson.dumps(code_assist_request(second_turn), option=orjson.OPT_INDENT_2))
    assert one.json()["response"]["candidates"][0]["content"]["parts"][0]["functionCall"]["name"] == "read_file"
    assert two.text.count("data: ") == 4

    rows = completed.wait(2)
    assert [(r.path, r.dialect, r.model, r.status, r.streamed, r.tools, r.tool_calls) for r in rows] == [
        ("/v1internal:generateContent", "gemini", "gemini-2.5-pro", 200, False, 1, 1),
        ("/v1internal:streamGenerateContent", "gemini", "gemini-2.5-pro", 200, True, 1, 0)]
    flows = [store.get(r.id) for r in rows]
    assert [profile_of(f, Dialect.GEMINI) for f in flows] == ["code-assist", "code-assist"]
    assert findings(flows[0]) == []
    assert [response_usage(analyse(f).response, Dialect.GEMINI) for f in flows] == [(10, 5), (10, 5)]
    # The conversation view reads the turns inside the envelope and points at them in the recorded bodies.
    first = analyse(flows[0])
    turns = conversation.build(Dialect.GEMINI, first.request, first.response, path=flows[0].path).turns
    assert [(t.role, t.new, [(e.kind, e.pointer) for e in t.entries]) for t in turns] == [
        ("user", False, [("message", "/request/contents/0")]),
        ("assistant", True, [("call", "/response/candidates/0/content/parts/0")])]
    second = analyse(flows[1])
    assert [(v.rule, v.pointer) for v in second.violations] == [
        ("GM-10", "/request/contents/2")]
    # The pointer lands on the recorded body's line that opens the turn, inside the envelope.
    line, _ = source(flows[1].request_body).position_of(second.violations[0].pointer)
    lines = flows[1].request_body.decode().splitlines()
    assert (lines[line - 1], lines[line]) == ("      {", '        "role": "user",')
    assert second.response["candidates"][0]["content"]["parts"] == [{"text": "The README says hello."}]


def test_code_assist_translated_to_chat_and_answered_inside_its_envelope(tmp_path):
    """Gemini CLI's Code Assist traffic sent to a Chat upstream (translate gemini:openai-chat): the request
    inside the envelope is translated, and the answer, JSON and each streamed chunk, comes back under
    `response` where the client reads it."""
    mock = MockUpstream().start()
    store = Store(tmp_path / "flows.sqlite3")
    completed = Completed()
    forwarder = Forwarder(Options(mock.base_url, port=0, translate="gemini:openai-chat"), store=store,
                          on_event=completed)
    forwarder.start()
    try:
        mock.push(json_response(chat_completion(None, [Call("read_file", '{"path": "README.md"}', "call_1")])),
                  sse_response(chat_stream("The README says hello.", [])))
        turns = [{"role": "user", "parts": [{"text": "What is in README.md?"}]}]
        with httpx.Client(base_url=forwarder.base_url) as client:
            one = client.post("/v1internal:generateContent", content=orjson.dumps(code_assist_request(turns)))
            two = client.post("/v1internal:streamGenerateContent", params={"alt": "sse"},
                              content=orjson.dumps(code_assist_request(turns)))
        rows = completed.wait(2)
        flows = [store.get(r.id) for r in rows]
    finally:
        forwarder.stop()
        store.close()
        mock.stop()
    assert [(path, orjson.loads(body)["model"], orjson.loads(body)["messages"]) for path, body in
            ((r.path, r.body) for r in mock.received)] == [
        ("/v1/chat/completions", "gemini-2.5-pro", [{"role": "user", "content": "What is in README.md?"}])] * 2
    assert one.json()["response"]["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"id": "call_1", "name": "read_file", "args": {"path": "README.md"}}}]
    chunks = [orjson.loads(line[len("data: "):]) for line in two.text.splitlines() if line.startswith("data: ")]
    assert chunks and all(set(chunk) == {"response"} for chunk in chunks)
    assert "".join(part.get("text", "") for chunk in chunks
                   for part in chunk["response"]["candidates"][0]["content"]["parts"]) == "The README says hello."
    assert [(r.dialect, r.model, r.status, r.state, r.tools, r.tool_calls) for r in rows] == [
        ("gemini", "gemini-2.5-pro", 200, "complete", 1, 1), ("gemini", "gemini-2.5-pro", 200, "complete", 1, 0)]
    analysis = analyse(flows[0])
    assert [(loss.source, loss.kind) for loss in analysis.request_losses] == [("/request/session_id", "dropped")]
    assert [(v.rule, v.pointer) for v in analysis.violations] == []
