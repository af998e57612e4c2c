"""Shapes that providers accepted in recorded traffic (tests/bench/real_traffic.py) and the checker
had flagged as errors: each is judged by the profile of the host that accepted it, and the same
payload still trips where the contract holds (the near miss runs the other way)."""

from __future__ import annotations

from urllib.parse import urlsplit

from inspector.wire import check, profiles
from inspector.wire.dialect import Dialect, from_path
from inspector.wire.summary import request_facts

from .rule_cases import found
from .wire_payloads import named_sse, sse

CHAT = "openai-chat"


def _mistral_request() -> dict:
    """Mistral's own chat API as its SDK speaks it: tool type left out (it defaults to function),
    'any' for required, content chunks on assistant turns (empty, or thinking beside text), an empty
    tool_calls list on a turn without calls."""
    return {
        "model": "mistral-large-latest",
        "messages": [
            {"role": "user", "content": "Which file is newest?"},
            {"role": "assistant", "content": [], "prefix": False, "tool_calls": [
                {"id": "Qm3kT8aLz", "type": "function", "index": 0,
                 "function": {"name": "list_files", "arguments": "{\"dir\": \"/srv\"}"}}]},
            {"role": "tool", "tool_call_id": "Qm3kT8aLz", "name": "list_files", "content": "a.txt b.txt"},
            {"role": "assistant", "prefix": False, "tool_calls": [], "content": [
                {"type": "thinking", "thinking": [{"type": "text", "text": "b.txt was written last."}]},
                {"type": "text", "text": "b.txt"}]},
            {"role": "user", "content": "Open it."},
        ],
        "tools": [{"function": {"name": "list_files", "description": "",
                                "parameters": {"type": "object", "properties": {"dir": {"type": "string"}},
                                               "required": ["dir"], "additionalProperties": False}}}],
        "tool_choice": "any",
    }


def test_mistral_accepts_its_own_chat_shapes():
    profile = profiles.for_upstream("https://api.mistral.ai/v1", Dialect.OPENAI_CHAT)
    assert profile.name == "mistral"
    assert check.check_request(_mistral_request(), CHAT, profile) == []


def test_the_same_mistral_shapes_are_errors_for_openai():
    assert found(check.check_request(_mistral_request(), CHAT)) == {
        ("OC-01", "/tools/0/type", "error"),
        ("OC-08", "/tool_choice", "error"),
        ("OC-12", "/messages/1/content", "error"),
        ("OC-12", "/messages/3/content/0", "error"),
        ("OC-13", "/messages/3/tool_calls", "error"),
    }


def test_mistral_still_rejects_what_it_does_not_know():
    payload = _mistral_request()
    payload["tools"][0]["type"] = "retrieval"
    payload["tool_choice"] = "always"
    payload["messages"][3]["content"][0] = {"type": "image_url", "image_url": "data:,"}
    assert found(check.check_request(payload, CHAT, "mistral")) == {
        ("OC-01", "/tools/0/type", "error"),
        ("OC-08", "/tool_choice", "error"),
        ("OC-12", "/messages/3/content/0", "error"),
    }


def test_mistral_takes_tool_choice_auto_without_tools_as_its_sdk_sends_it():
    payload = {"model": "mistral-small-latest", "messages": [{"role": "user", "content": "Hi"}], "tool_choice": "auto",
               "stream": True}
    assert found(check.check_request(payload, CHAT, "mistral")) == set()
    # Near misses: OpenAI's endpoint, and a choice that does need a tool, still say it.
    assert found(check.check_request(payload, CHAT)) == {("OC-11", "/tool_choice", "warning")}
    assert found(check.check_request({**payload, "tool_choice": "any"}, CHAT, "mistral")) == {
        ("OC-11", "/tool_choice", "warning")}


def test_mistral_response_tool_calls_leave_out_the_type():
    response = {"id": "5d0c", "object": "chat.completion", "model": "mistral-large-latest", "created": 1766496000,
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": "", "tool_calls": [
                        {"id": "Qm3kT8aLz", "index": 0, "function": {"name": "list_files", "arguments": "{}"}}]}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
    assert check.check_response(response, CHAT, "mistral") == []
    assert found(check.check_response(response, CHAT)) == {
        ("OC-14", "/choices/0/message/tool_calls/0/type", "error")}


def _openrouter_request(model: str) -> dict:
    """OpenRouter: its own server tools beside functions, a strict function whose schema OpenAI's
    Structured Outputs would refuse, and a replayed 50-character call id (a Responses-style id)."""
    call_id = "tool_get_forecast_" + "k" * 32
    return {
        "model": model,
        "messages": [
            {"role": "user", "content": "Weather in Lyon, then search the news."},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": "get_forecast", "arguments": "{\"city\": \"Lyon\"}"}}]},
            {"role": "tool", "tool_call_id": call_id, "content": "sunny"},
        ],
        "tools": [
            {"type": "function", "function": {
                "name": "get_forecast", "strict": True,
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                               "required": ["city"]}}},
            {"type": "openrouter:web_search", "parameters": {"max_results": 3}},
        ],
    }


def test_openrouter_judges_openai_limits_by_the_model_it_routes_to():
    assert found(check.check_request(_openrouter_request("google/gemini-2.5-flash"), CHAT, "openrouter")) == {
        ("OC-06", "/tools/0/function/parameters/additionalProperties", "warning"),
        ("OC-07", "/tools/0/function/strict", "info"),
        ("OC-16", "/messages/1/tool_calls/0/id", "warning"),
    }
    assert found(check.check_request(_openrouter_request("openai/gpt-4.1-mini"), CHAT, "openrouter")) == {
        ("OC-06", "/tools/0/function/parameters/additionalProperties", "error"),
        ("OC-07", "/tools/0/function/strict", "info"),
        ("OC-16", "/messages/1/tool_calls/0/id", "error"),
    }


def test_openrouter_server_tools_are_openrouters_only():
    assert found(check.check_request(_openrouter_request("openai/gpt-4.1-mini"), CHAT)) == {
        ("OC-01", "/tools/1/type", "error"),
        ("OC-06", "/tools/0/function/parameters/additionalProperties", "error"),
        ("OC-07", "/tools/0/function/strict", "info"),
        ("OC-16", "/messages/1/tool_calls/0/id", "warning"),
    }
    payload = _openrouter_request("openai/gpt-4.1-mini")
    payload["tools"][1]["type"] = "web_search"
    assert ("OC-01", "/tools/1/type", "error") in found(check.check_request(payload, CHAT, "openrouter"))


def test_openrouter_response_ids_follow_the_model_too():
    response = {"id": "gen-1766", "object": "chat.completion", "model": "google/gemini-2.5-flash",
                "created": 1766000000,
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": "", "tool_calls": [
                        {"id": "tool_get_forecast_" + "k" * 32, "type": "function",
                         "function": {"name": "get_forecast", "arguments": "{\"city\": \"Lyon\"}"}}]}}]}
    assert found(check.check_response(response, CHAT, "openrouter")) == {
        ("OC-16", "/choices/0/message/tool_calls/0/id", "warning")}
    response["model"] = "openai/gpt-4.1-mini"
    assert found(check.check_response(response, CHAT, "openrouter")) == {
        ("OC-16", "/choices/0/message/tool_calls/0/id", "error")}


def _anthropic_empty_input_stream(partial: str) -> bytes:
    """Anthropic streams a tool without arguments as one input_json_delta with partial_json "" (the
    SDK keeps the block's input {} when nothing was joined): here a server tool and a client tool."""
    events = [
        {"type": "message_start", "message": {"id": "msg_01", "type": "message", "role": "assistant",
                                              "model": "claude-sonnet-4-5", "content": [], "stop_reason": None,
                                              "usage": {"input_tokens": 12, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "server_tool_use", "id": "srvtoolu_01", "name": "advisor", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": ""}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {
            "type": "tool_use", "id": "toolu_01", "name": "list_files", "input": {}}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": partial}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 20}},
        {"type": "message_stop"},
    ]
    return named_sse(events)


def test_an_empty_partial_json_stream_is_an_empty_input():
    violations, message = check.check_and_reassemble(_anthropic_empty_input_stream(""), "anthropic")
    assert violations == []
    assert [block["input"] for block in message["content"]] == [{}, {}]


def test_a_truncated_partial_json_stream_still_trips():
    assert found(check.check_stream(_anthropic_empty_input_stream("{\"dir\":"), "anthropic")) == {
        ("AN-13", "/7", "error")}


def test_an_empty_tool_calls_list_in_a_response_is_read_as_no_calls():
    """Hugging Face's router answers a turn without calls with tool_calls []: clients read no calls;
    only replaying the message as it is would be refused (OC-13 on the request)."""
    response = {"id": "chatcmpl-9e1", "object": "chat.completion", "model": "Qwen/Qwen3-235B-A22B",
                "created": 1752000000,
                "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None, "message": {
                    "role": "assistant", "content": "Paris.", "tool_calls": []}}]}
    assert found(check.check_response(response, CHAT)) == {("OC-13", "/choices/0/message/tool_calls", "warning")}


def _deepseek_response() -> dict:
    return {"id": "a3c0e4f1-77d2-4a55-9d0e-0b1c2d3e4f50", "object": "response", "status": "completed",
            "model": "deepseek-chat", "output": [
                {"type": "function_call", "id": "5b2f9e1c-0d4a-4c8e-a3f7-6e1d2c3b4a59", "status": "completed",
                 "call_id": "call_00_Zt9wQ2", "name": "get_temperature", "arguments": "{\"city\": \"Tokyo\"}"}]}


def test_deepseek_mints_its_own_item_ids():
    profile = profiles.for_upstream("https://api.deepseek.com", Dialect.OPENAI_RESPONSES)
    assert found(check.check_response(_deepseek_response(), "openai-responses", profile)) == {
        ("OR-06", "/output/0/id", "warning")}
    assert found(check.check_response(_deepseek_response(), "openai-responses")) == {
        ("OR-06", "/output/0/id", "error")}


def test_openai_message_sub_collections_are_not_anthropic():
    """OpenAI's Assistants threads and stored chat completions have /messages sub-collections;
    recorded Assistants traffic was read as Anthropic requests."""
    assert [from_path(path) for path in (
        "/v1/threads/thread_7W4a2FW5/messages", "/v1/threads/thread_7W4a2FW5/messages?order=desc",
        "/v1/chat/completions/chatcmpl-9e1/messages", "/v1/messages", "/v1/messages?beta=true",
        "/anthropic/v1/messages", "/api/v1/messages",
    )] == [None, None, None, Dialect.ANTHROPIC, Dialect.ANTHROPIC, Dialect.ANTHROPIC, Dialect.ANTHROPIC]


def _mistral_stream() -> bytes:
    """Mistral's chat stream with a call, as openinference's mistralai cassettes recorded it: the call
    comes whole in one delta, without an index."""
    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {"id": "9f1c", "object": "chat.completion.chunk", "created": 1, "model": "mistral-small-latest",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}
    return sse([chunk({"role": "assistant", "content": ""}),
                chunk({"content": None, "tool_calls": [
                    {"id": "Xr4pQ81aZ", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}},
                    {"id": "Yb2mW07cK", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]},
                      "tool_calls")], done=True)


def test_mistral_sends_each_streamed_call_whole_without_an_index():
    mistral = profiles.for_upstream("https://api.mistral.ai/v1", Dialect.OPENAI_CHAT)
    result = check.check_stream(_mistral_stream(), CHAT, mistral)
    assert found(result) == {("OC-21", "/1/choices/0/delta/tool_calls/0/index", "warning"),
                             ("OC-21", "/1/choices/0/delta/tool_calls/1/index", "warning")}
    # The same bytes from a server that claims OpenAI's stream: the calls cannot be placed.
    assert found(check.check_stream(_mistral_stream(), CHAT)) == {
        ("OC-21", "/1/choices/0/delta/tool_calls/0/index", "error"),
        ("OC-21", "/1/choices/0/delta/tool_calls/1/index", "error"),
        ("OC-22", "/1/choices/0/finish_reason", "warning")}


def _azure_stream() -> bytes:
    """Azure OpenAI's chat stream with a call: a first chunk holding only the prompt filter's verdict,
    a content-filter chunk after the finish, then usage (Azure's documented stream)."""
    def chunk(choice: dict) -> dict:
        return {"id": "chatcmpl-A1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
                "choices": [{"index": 0, "logprobs": None, **choice}]}
    verdict = {"hate": {"filtered": False, "severity": "safe"}, "violence": {"filtered": False, "severity": "safe"}}
    return sse([
        {"id": "", "object": "", "created": 0, "model": "", "choices": [],
         "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": verdict}]},
        chunk({"delta": {"role": "assistant", "content": None, "tool_calls": [
            {"index": 0, "id": "call_q7", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]},
            "finish_reason": None, "content_filter_results": {}}),
        chunk({"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\":\"Oslo\"}"}}]},
               "finish_reason": None, "content_filter_results": {}}),
        chunk({"delta": {}, "finish_reason": "tool_calls", "content_filter_results": {}}),
        chunk({"delta": {}, "finish_reason": None, "content_filter_results": verdict,
               "content_filter_offsets": {"check_offset": 0, "start_offset": 0, "end_offset": 24}}),
        {"id": "chatcmpl-A1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o", "choices": [],
         "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}},
    ], done=True)


def test_azure_filter_chunks_neither_break_reassembly_nor_count_as_findings():
    azure = profiles.for_upstream("https://myres.openai.azure.com/openai/deployments/d", Dialect.OPENAI_CHAT)
    assert found(check.check_stream(_azure_stream(), CHAT, azure)) == set()
    assert check.reassemble(_azure_stream(), CHAT)["choices"][0]["message"]["tool_calls"] == [
        {"id": "call_q7", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}]
    # An empty chunk without the filter's verdict is still noted.
    bare = _azure_stream().replace(b',"prompt_filter_results"', b',"other"', 1)
    assert found(check.check_stream(bare, CHAT, azure)) == {("OC-23", "/0/choices", "info")}


def _azure_profile(url: str, body: dict) -> profiles.Profile:
    """The profile the recorder picks for `body` sent to `url`, the model read as the recorder reads it."""
    model, _ = request_facts(body, Dialect.OPENAI_CHAT, urlsplit(url).path)
    return profiles.with_model(profiles.for_upstream(url, Dialect.OPENAI_CHAT), model)


_NO_MODEL = {"messages": [{"role": "user", "content": "What is the weather in Paris?"}],
             "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
                 "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
             "tool_choice": "auto", "stream": False}


def test_an_azure_deployment_takes_its_model_from_the_path():
    # crewAI's native Azure client, answered 200 on a deployment path with no `model` in the body.
    url = "https://myres.openai.azure.com/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-06-01"
    assert found(check.check_request(_NO_MODEL, CHAT, _azure_profile(url, _NO_MODEL))) == set()


def test_a_body_without_model_is_refused_where_no_deployment_names_one():
    missing = {("OC-28", "", "error")}
    for url in ("https://myres.openai.azure.com/openai/v1/chat/completions",  # the v1 path names no model
                "https://api.openai.com/v1/chat/completions"):
        assert found(check.check_request(_NO_MODEL, CHAT, _azure_profile(url, _NO_MODEL))) == missing, url
    # On the deployment path a model the body does give is still judged as the body's.
    url = "https://myres.openai.azure.com/openai/deployments/gpt-4o-mini/chat/completions"
    wrong = {**_NO_MODEL, "model": 4}
    assert found(check.check_request(wrong, CHAT, _azure_profile(url, wrong))) == {("OC-28", "/model", "error")}


def _gemini_turns() -> dict:
    """A tool loop of two steps, Gemini's signature on the first call turn only (as gemini-2.5-flash answered)."""
    def call(city: str, signed: bool) -> dict:
        part = {"functionCall": {"name": "get_weather", "args": {"city": city}}}
        return {"role": "model", "parts": [{**part, "thoughtSignature": "Cvg="} if signed else part]}

    def answer(city: str) -> dict:
        return {"role": "user", "parts": [{"functionResponse": {"name": "get_weather",
                                                                "response": {"report": f"Sunny in {city}"}}}]}

    return {"contents": [{"role": "user", "parts": [{"text": "Weather in New York and London?"}]},
                         call("New York", True), answer("New York"), call("London", False), answer("London")],
            "tools": [{"functionDeclarations": [{"name": "get_weather", "parameters": {
                "type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]}}]}]}


def test_gemini_2_takes_a_call_turn_without_its_signature():
    base = profiles.for_upstream("https://generativelanguage.googleapis.com", Dialect.GEMINI)
    unsigned = {("GM-08", "/contents/3/parts/0", "info")}
    assert found(check.check_request(_gemini_turns(), "gemini", profiles.with_model(base, "gemini-2.5-flash"))) == unsigned
    # Near misses: Gemini 3, and a model not known, are warned of the dropped signature.
    for model in ("gemini-3-pro-preview", ""):
        assert found(check.check_request(_gemini_turns(), "gemini", profiles.with_model(base, model))) == {
            ("GM-08", "/contents/3/parts/0", "warning")}, model
