"""analyse() is total: whatever crossed the wire, it returns facts, never raises."""

import gzip

import orjson

from inspector.analysis import analyse
from inspector.flow import Flow
from inspector.wire.dialect import Dialect


def _flow(path: str, body: bytes, **kw) -> Flow:
    return Flow(id=1, session_id=1, started_at=0.0, method="POST", path=path, request_body=body, **kw)


def test_chat_request_facts():
    body = orjson.dumps({"model": "gpt-test", "tools": [{"type": "function", "function": {"name": "a"}}] * 2})
    result = analyse(_flow("/v1/chat/completions", body))
    assert (result.dialect, result.model, result.tools, result.parse_error) == (
        Dialect.OPENAI_CHAT, "gpt-test", 2, None)


def test_non_json_request_is_a_parse_error_not_an_exception():
    result = analyse(_flow("/v1/chat/completions", b"{\"model\": \"x\""))
    assert result.request is None
    assert result.parse_error.startswith("request not valid JSON: ")


def test_gzip_request_is_decoded_for_analysis():
    body = gzip.compress(b'{"model": "gz"}')
    result = analyse(_flow("/v1/messages", body, request_headers=[("content-encoding", "gzip")]))
    assert (result.dialect, result.model) == (Dialect.ANTHROPIC, "gz")


def test_gemini_model_comes_from_the_path():
    result = analyse(_flow("/v1beta/models/gemini-2.5-flash:generateContent", b'{"contents": []}'))
    assert (result.dialect, result.model) == (Dialect.GEMINI, "gemini-2.5-flash")


def test_response_tool_calls_are_counted():
    response = orjson.dumps({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}}]}}]})
    result = analyse(_flow("/v1/chat/completions", b'{"model":"m"}', status=200, response_body=response,
                           response_headers=[("content-type", "application/json")]))
    assert result.tool_calls == 2


# --- each side judged by its own dialect and profile ---------------------------------------------

def _anthropic_thinking_request(tool_name: str = "get_weather") -> dict:
    """A Claude Code-style turn replayed through `--translate anthropic:openai-chat`: the assistant turn
    came from the forwarder's translated response, which had no thinking block to give."""
    return {"model": "claude-sonnet-4-5", "max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024},
            "tools": [{"name": tool_name, "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
            "messages": [
                {"role": "user", "content": "Weather in Oslo?"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": tool_name,
                                                   "input": {"city": "Oslo"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "4°C"}]}]}


def _translated(request: dict, response: dict) -> Flow:
    from inspector.flow import Mode
    from inspector.wire.translate import get_bridge

    sent = get_bridge("anthropic", "openai-chat").request(request, "/v1/messages")
    return _flow("/v1/messages", orjson.dumps(request), mode=Mode.TRANSLATE, translate="anthropic:openai-chat",
                 upstream_url="https://api.openai.com/v1/chat/completions",
                 upstream_request_body=orjson.dumps(sent.payload), status=200, response_body=orjson.dumps(response),
                 response_headers=[("content-type", "application/json")])


ANTHROPIC_ANSWER = {"id": "msg_1", "type": "message", "role": "assistant", "model": "gpt-4o",
                    "content": [{"type": "text", "text": "4°C in Oslo."}], "stop_reason": "end_turn",
                    "usage": {"input_tokens": 1, "output_tokens": 1}}


def test_translated_client_request_is_not_held_to_anthropics_opaque_state_rules():
    result = analyse(_translated(_anthropic_thinking_request(), ANTHROPIC_ANSWER))
    assert [(v.rule, v.where, v.pointer, v.severity.value) for v in result.violations] == []


def test_the_same_request_sent_to_anthropic_is_an_xl14_error():
    body = orjson.dumps(_anthropic_thinking_request())
    result = analyse(_flow("/v1/messages", body, upstream_url="https://api.anthropic.com/v1/messages"))
    assert [(v.rule, v.where, v.pointer, v.severity.value) for v in result.violations] == [
        ("XL-14", "request", "/messages/1/content/0", "error")]


def test_a_name_the_bridge_aliased_is_marked_repaired_and_the_restored_response_name_passes():
    answer = {**ANTHROPIC_ANSWER, "content": [{"type": "tool_use", "id": "toolu_2", "name": "get.weather",
                                               "input": {"city": "Rome"}}], "stop_reason": "tool_use"}
    result = analyse(_translated(_anthropic_thinking_request("get.weather"), answer))
    assert [(v.rule, v.where, v.pointer, v.severity.value, v.message.split(":")[0]) for v in result.violations] == [
        ("AN-02", "request", "/tools/0/name", "info", "repaired on the way"),
        ("AN-02", "request", "/messages/1/content/0/name", "info", "repaired on the way")]
    assert result.errors == 0


def test_gemini_model_from_the_path_decides_model_dependent_rules():
    body = orjson.dumps({"tools": [{"googleSearch": {}}], "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
                         "contents": [{"role": "user", "parts": [{"text": "news?"}]}]})
    verdicts = {model: [(v.rule, v.severity.value) for v in analyse(_flow(
        f"/v1beta/models/{model}:generateContent", body)).violations] for model in ("gemini-2.5-flash", "gemini-3-pro")}
    assert verdicts == {"gemini-2.5-flash": [("GM-13", "error")], "gemini-3-pro": [("GM-13", "warning")]}
