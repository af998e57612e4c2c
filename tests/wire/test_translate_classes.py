"""Defect classes of issue 8 in the bridges, each with cases of our own: text blocks run together,
refusals, hosted and allowed-tools choices, parameter ranges, reasoning off, error kinds, answers
that cannot be delivered whole, and loss-report completeness (walked over every golden)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from inspector.wire.check import check_request, check_response, check_stream, reassemble
from inspector.wire.dialect import Dialect
from inspector.wire.translate import PAIRS, TranslationError, get_bridge
from inspector.wire.violations import Severity

from . import translate_cases as cases
from .wire_payloads import named_sse

CHAT, RESP, ANT, GEM = Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES, Dialect.ANTHROPIC, Dialect.GEMINI
BR = Dialect.BEDROCK
PATH = {CHAT: "/v1/chat/completions", RESP: "/v1/responses", ANT: "/v1/messages",
        GEM: "/v1beta/models/gemini-2.5-flash:generateContent", BR: "/model/amazon.nova-pro-v1%3A0/converse"}
GOLDEN = Path(__file__).parent / "golden"


def send(source: Dialect, target: Dialect, body: dict):
    sent = get_bridge(source, target).request(body, PATH[source])
    errors = [v for v in check_request(sent.payload, target) if v.severity is Severity.ERROR]
    assert errors == [], "the translated request must pass our own checker"
    return sent


def back(source: Dialect, target: Dialect, request: dict, upstream: dict):
    sent = get_bridge(source, target).request(request, PATH[source])
    return get_bridge(source, target).response(upstream, sent.state)


def notes(translation) -> list[tuple[str, str | None, str, str]]:
    return [(loss.source, loss.target, loss.kind, loss.rule) for loss in translation.losses]


def ant(**extra) -> dict:
    return {"model": "gpt-5", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}], **extra}


def chat(**extra) -> dict:
    return {"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}], **extra}


def fn(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}


def ant_tool(name: str) -> dict:
    return {"name": name, "input_schema": {"type": "object", "properties": {}}}


# --- text blocks are joined apart, never run together --------------------------------------------

SYSTEM = [{"type": "text", "text": "You are Claude Code."}, {"type": "text", "text": "Prefer terse answers."}]
TWO_PARAGRAPHS = "You are Claude Code.\n\nPrefer terse answers."


def test_anthropic_system_blocks_stay_two_paragraphs_on_chat_and_responses() -> None:
    sent = send(ANT, CHAT, ant(system=SYSTEM))
    assert sent.payload["messages"][0] == {"role": "system", "content": TWO_PARAGRAPHS}
    assert notes(sent) == []
    sent = send(ANT, RESP, ant(system=SYSTEM))
    assert sent.payload["instructions"] == TWO_PARAGRAPHS
    assert notes(sent) == [("", "/store", "synthesised", "")]


def test_one_block_system_is_unchanged_near_miss() -> None:
    sent = send(ANT, CHAT, ant(system=[{"type": "text", "text": "You are Claude Code."}, {"type": "text", "text": ""}]))
    assert sent.payload["messages"][0] == {"role": "system", "content": "You are Claude Code."}


def test_tool_result_text_parts_stay_apart_on_every_target() -> None:
    history = [{"role": "user", "content": "hi"},
               {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [
                   {"type": "text", "text": "line one"}, {"type": "text", "text": "line two"}]}]}]
    sent = send(ANT, CHAT, ant(messages=history, tools=[ant_tool("f")]))
    assert sent.payload["messages"][-1] == {"role": "tool", "tool_call_id": "toolu_1", "content": "line one\n\nline two"}
    sent = send(ANT, RESP, ant(messages=history, tools=[ant_tool("f")]))
    assert sent.payload["input"][-1] == {"type": "function_call_output", "call_id": "toolu_1",
                                         "output": "line one\n\nline two"}
    tool_parts = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": tool_parts}]
    sent = send(CHAT, GEM, chat(messages=messages, tools=[fn("f")]))
    assert sent.payload["contents"][-1]["parts"][0]["functionResponse"]["response"] == {"output": "a\n\nb"}
    sent = send(CHAT, ANT, chat(messages=messages, tools=[fn("f")]))
    assert sent.payload["messages"][-1]["content"][0]["content"] == "a\n\nb"


def test_system_parts_of_a_gemini_request_stay_apart() -> None:
    body = {"systemInstruction": {"parts": [{"text": "One."}, {"text": "Two."}]},
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    sent = send(GEM, CHAT, body)
    assert sent.payload["messages"][0] == {"role": "system", "content": "One.\n\nTwo."}


def test_the_models_answer_is_one_run_of_text_near_miss() -> None:
    """Anthropic cuts an answer into blocks around citations: a Chat client reads one run, as the
    stream of the same answer gives it."""
    upstream = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",
                "content": [{"type": "text", "text": "The grass is "}, {"type": "text", "text": "green"},
                            {"type": "text", "text": "."}], "usage": {"input_tokens": 1, "output_tokens": 2}}
    result = back(CHAT, ANT, chat(), upstream)
    assert result.payload["choices"][0]["message"] == {"role": "assistant", "content": "The grass is green."}
    assert notes(result) == []


# --- refusals travel in the refusal field --------------------------------------------------------

RESP_REFUSAL = {"id": "resp_1", "object": "response", "status": "completed", "model": "m", "output": [
    {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [
        {"type": "output_text", "text": "Sorry.", "annotations": []},
        {"type": "refusal", "refusal": "I can't help with that."}]}],
    "usage": {"input_tokens": 1, "output_tokens": 2}}


def test_a_responses_refusal_reaches_a_chat_client_as_refusal() -> None:
    result = back(CHAT, RESP, chat(), RESP_REFUSAL)
    assert result.payload["choices"][0]["message"] == {"role": "assistant", "content": "Sorry.",
                                                       "refusal": "I can't help with that."}
    assert notes(result) == []
    assert [v for v in check_response(result.payload, CHAT) if v.severity is Severity.ERROR] == []


def test_a_chat_refusal_reaches_a_responses_client_as_a_refusal_part() -> None:
    upstream = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m", "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": None,
                                                          "refusal": "I can't help with that."}}]}
    result = back(RESP, CHAT, {"model": "m", "input": "hi"}, upstream)
    assert result.payload["output"][0]["content"] == [{"type": "refusal", "refusal": "I can't help with that."}]
    assert notes(result) == []


def test_a_refusal_in_chat_history_crosses_to_responses_and_anthropic() -> None:
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "refusal": "I can't help with that."},
                {"role": "user", "content": "ok"}]
    sent = send(CHAT, RESP, chat(messages=messages))
    assert sent.payload["input"][1] == {"role": "assistant",
                                        "content": [{"type": "refusal", "refusal": "I can't help with that."}]}
    sent = send(CHAT, ANT, chat(messages=messages))
    assert sent.payload["messages"][1] == {"role": "assistant",
                                           "content": [{"type": "text", "text": "I can't help with that."}]}
    assert notes(sent) == [("/messages/1/refusal", "/messages/1/content/0", "converted", ""),
                           ("", "/max_tokens", "synthesised", "")]


def test_a_streamed_refusal_reaches_a_chat_client_as_refusal_deltas() -> None:
    stream = cases.sse({"type": "response.created", "response": {"id": "resp_1", "model": "m"}},
                       {"type": "response.refusal.delta", "output_index": 0, "content_index": 0, "delta": "No."},
                       {"type": "response.completed", "response": {"status": "completed", "output": []}}, named=True)
    sent = get_bridge(CHAT, RESP).request(chat(stream=True), PATH[CHAT])
    out, _ = cases.run_stream(get_bridge(CHAT, RESP).stream(sent.state), stream, 7)
    deltas = [e["choices"][0]["delta"] for e in cases.events(out) if isinstance(e, dict) and e["choices"]]
    assert deltas == [{"role": "assistant", "content": ""}, {"refusal": "No."}, {}]


# --- hosted tools forced by tool_choice ----------------------------------------------------------

HOSTED = {"tools": [ant_tool("f"), {"type": "web_search_20250305", "name": "web_search"}],
          "tool_choice": {"type": "tool", "name": "web_search"}}


def test_forcing_anthropic_web_search_forces_the_responses_hosted_tool() -> None:
    sent = send(ANT, RESP, ant(**HOSTED))
    assert sent.payload["tool_choice"] == {"type": "web_search_preview"}
    assert notes(sent) == [("", "/store", "synthesised", "")]


def test_forcing_anthropic_web_search_relaxes_to_auto_on_chat() -> None:
    sent = send(ANT, CHAT, ant(**HOSTED))
    assert sent.payload["tool_choice"] == "auto"
    assert notes(sent) == [("/tool_choice", "/tool_choice", "converted", "XL-11")]
    only_hosted = ant(tools=HOSTED["tools"][1:], tool_choice=HOSTED["tool_choice"])
    sent = send(ANT, CHAT, only_hosted)
    assert "tool_choice" not in sent.payload
    assert notes(sent) == [("/tool_choice", None, "dropped", "XL-11")]


def test_forcing_a_function_named_like_nothing_hosted_stays_named_near_miss() -> None:
    sent = send(ANT, RESP, ant(tools=HOSTED["tools"], tool_choice={"type": "tool", "name": "f"}))
    assert sent.payload["tool_choice"] == {"type": "function", "name": "f"}


def test_a_responses_hosted_choice_reaches_chat_as_auto() -> None:
    body = {"model": "m", "input": "hi", "tools": [{"type": "function", "name": "f", "parameters": {}},
                                                   {"type": "web_search"}], "tool_choice": {"type": "web_search"}}
    sent = send(RESP, CHAT, body)
    assert sent.payload["tool_choice"] == "auto"
    assert notes(sent) == [("/tool_choice", "/tool_choice", "converted", "XL-11")]


# --- allowed_tools -------------------------------------------------------------------------------

ALLOWED = {"tools": [fn("a"), fn("b"), fn("c")],
           "tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [
               {"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {"name": "b"}}]}}}


def test_allowed_tools_map_both_ways_between_chat_and_responses() -> None:
    sent = send(CHAT, RESP, chat(**ALLOWED))
    assert sent.payload["tool_choice"] == {"type": "allowed_tools", "mode": "required", "tools": [
        {"type": "function", "name": "a"}, {"type": "function", "name": "b"}]}
    assert notes(sent) == [("", "/store", "synthesised", "")]
    body = {"model": "m", "input": "hi", "tools": [{"type": "function", "name": n, "parameters": {}} for n in "abc"],
            "tool_choice": sent.payload["tool_choice"] | {"mode": "auto"}}
    sent = send(RESP, CHAT, body)
    assert sent.payload["tool_choice"] == {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [
        {"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {"name": "b"}}]}}
    assert notes(sent) == []


def test_allowed_tools_narrow_anthropic_tools_never_widen() -> None:
    sent = send(CHAT, ANT, chat(**ALLOWED))
    assert [t["name"] for t in sent.payload["tools"]] == ["a", "b"]
    assert sent.payload["tool_choice"] == {"type": "any"}
    assert notes(sent) == [("/tools/2", None, "dropped", "XL-11"), ("", "/max_tokens", "synthesised", "")]
    one = chat(tools=ALLOWED["tools"], tool_choice={"type": "allowed_tools", "allowed_tools": {
        "mode": "required", "tools": [{"type": "function", "function": {"name": "c"}}]}})
    sent = send(CHAT, ANT, one)
    assert sent.payload["tool_choice"] == {"type": "tool", "name": "c"}
    assert [t["name"] for t in sent.payload["tools"]] == ["c"]


def test_allowed_tools_become_gemini_allowed_function_names_under_any() -> None:
    sent = send(CHAT, GEM, chat(**ALLOWED))
    assert sent.payload["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["a", "b"]}}
    assert notes(sent) == []
    auto = chat(tools=ALLOWED["tools"], tool_choice={"type": "allowed_tools", "allowed_tools": {
        "mode": "auto", "tools": ALLOWED["tool_choice"]["allowed_tools"]["tools"]}})
    sent = send(CHAT, GEM, auto)
    assert [d["name"] for d in sent.payload["tools"][0]["functionDeclarations"]] == ["a", "b"]
    assert sent.payload["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
    assert notes(sent) == [("/tools/2", None, "dropped", "XL-11")]


def test_gemini_allowed_function_names_reach_chat_as_allowed_tools() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "tools": [{"functionDeclarations": [{"name": n} for n in "abc"]}],
            "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["a", "c"]}}}
    sent = send(GEM, CHAT, body)
    assert sent.payload["tool_choice"] == {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [
        {"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {"name": "c"}}]}}
    assert notes(sent) == []


# --- parameter ranges ----------------------------------------------------------------------------

@pytest.mark.parametrize(("source", "target", "body", "field", "sent_as", "where"), [
    (ANT, RESP, ant(max_tokens=10), "max_output_tokens", 16, ("/max_tokens", "/max_output_tokens")),
    (CHAT, ANT, chat(temperature=1.5), "temperature", 1.0, ("/temperature", "/temperature")),
    (CHAT, RESP, chat(top_p=1.5), "top_p", 1.0, ("/top_p", "/top_p")),
    (CHAT, RESP, chat(max_completion_tokens=3), "max_output_tokens", 16,
     ("/max_completion_tokens", "/max_output_tokens")),
    (GEM, CHAT, {"contents": [{"parts": [{"text": "hi"}]}], "generationConfig": {"temperature": 2.5}},
     "temperature", 2.0, ("/generationConfig/temperature", "/temperature")),
])
def test_a_value_outside_the_targets_range_is_moved_to_its_bound(source, target, body, field, sent_as, where) -> None:
    sent = send(source, target, body)
    assert sent.payload[field] == sent_as
    assert [n for n in notes(sent) if n[2] == "converted"] == [(*where, "converted", "")]


@pytest.mark.parametrize(("source", "target", "body", "field", "value"), [
    (ANT, RESP, ant(max_tokens=16), "max_output_tokens", 16),
    (CHAT, ANT, chat(temperature=1.0), "temperature", 1.0),
    (CHAT, RESP, chat(temperature=2), "temperature", 2),
])
def test_a_value_on_the_bound_passes_unchanged_near_miss(source, target, body, field, value) -> None:
    sent = send(source, target, body)
    assert sent.payload[field] == value
    assert [n for n in notes(sent) if n[2] == "converted"] == []


# --- reasoning off, and reasoning effort --------------------------------------------------------

@pytest.mark.parametrize(("model", "effort"), [("gpt-5", "minimal"), ("gpt-5.1", "none"), ("o3", "low")])
def test_thinking_disabled_states_the_lowest_effort_on_openai_reasoning_models(model: str, effort: str) -> None:
    sent = send(ANT, RESP, ant(model=model, thinking={"type": "disabled"}))
    assert sent.payload["reasoning"] == {"effort": effort}
    assert notes(sent) == [("/thinking", "/reasoning/effort", "converted", ""), ("", "/store", "synthesised", "")]
    sent = send(ANT, CHAT, ant(model=model, thinking={"type": "disabled"}))
    assert sent.payload["reasoning_effort"] == effort
    assert notes(sent) == [("/thinking", "/reasoning_effort", "converted", "")]


def test_thinking_disabled_on_a_model_that_does_not_reason_is_reported_not_sent() -> None:
    sent = send(ANT, CHAT, ant(model="gpt-4o", thinking={"type": "disabled"}))
    assert "reasoning_effort" not in sent.payload
    assert notes(sent) == [("/thinking", None, "dropped", "")]


@pytest.mark.parametrize(("budget", "effort", "rounded"), [
    (1024, "low", True), (2048, "low", False), (2049, "medium", True), (8192, "medium", False),
    (8193, "high", True), (24576, "high", False), (60000, "high", True)])
def test_a_thinking_budget_is_the_effort_of_the_table_and_the_rounding_is_reported(budget, effort, rounded) -> None:
    for target, field in ((RESP, "/reasoning/effort"), (CHAT, "/reasoning_effort")):
        sent = send(ANT, target, ant(model="o3", max_tokens=64000,
                                     thinking={"type": "enabled", "budget_tokens": budget}))
        assert (sent.payload.get("reasoning") or {}).get("effort", sent.payload.get("reasoning_effort")) == effort
        expected = [("/thinking/budget_tokens", field, "converted", "")] if rounded else []
        assert [n for n in notes(sent) if n[0].startswith("/thinking")] == expected


def test_reasoning_effort_maps_between_chat_and_responses() -> None:
    sent = send(CHAT, RESP, chat(reasoning_effort="low"))
    assert sent.payload["reasoning"] == {"effort": "low"}
    assert notes(sent) == [("", "/store", "synthesised", "")]
    sent = send(RESP, CHAT, {"model": "gpt-5", "input": "hi", "reasoning": {"effort": "high", "summary": "auto"}})
    assert sent.payload["reasoning_effort"] == "high"
    assert notes(sent) == [("/reasoning/summary", None, "dropped", "")]
    sent = send(CHAT, ANT, chat(reasoning_effort="none"))
    assert "thinking" not in sent.payload
    assert notes(sent) == [("", "/max_tokens", "synthesised", ""), ("/reasoning_effort", None, "dropped", "")]


@pytest.mark.parametrize(("effort", "budget"), [("minimal", 1024), ("low", 2048), ("medium", 8192),
                                                ("high", 24576), ("xhigh", 32768)])
def test_an_effort_is_the_thinking_budget_of_the_table(effort: str, budget: int) -> None:
    sent = send(CHAT, ANT, chat(reasoning_effort=effort, max_tokens=40000))
    assert sent.payload["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert notes(sent) == [("/reasoning_effort", "/thinking/budget_tokens", "converted", "")]
    back = send(ANT, CHAT, {**sent.payload, "model": "o3"})
    assert back.payload["reasoning_effort"] == {"minimal": "low", "xhigh": "high"}.get(effort, effort)


def test_thinking_fits_the_answer_budget_and_the_forced_tool_near_miss() -> None:
    sent = send(CHAT, ANT, chat(reasoning_effort="high"))  # no max_tokens: room is made beside the budget
    assert (sent.payload["thinking"], sent.payload["max_tokens"]) == ({"type": "enabled", "budget_tokens": 24576},
                                                                      24576 + 4096)
    sent = send(CHAT, ANT, chat(reasoning_effort="high", max_tokens=3000))  # the client's cap holds both
    assert sent.payload["thinking"] == {"type": "enabled", "budget_tokens": 2999}
    sent = send(CHAT, ANT, chat(reasoning_effort="high", max_tokens=1000))
    assert "thinking" not in sent.payload
    assert ("/reasoning_effort", None, "dropped", "") in notes(sent)


# --- error kinds --------------------------------------------------------------------------------

@pytest.mark.parametrize(("openai", "anthropic"), [
    ({"type": "invalid_request_error", "code": "context_length_exceeded"}, "invalid_request_error"),
    ({"type": "invalid_request_error", "code": "invalid_api_key"}, "authentication_error"),
    ({"type": "invalid_request_error", "code": "model_not_found"}, "not_found_error"),
    ({"type": "tokens", "code": "rate_limit_exceeded"}, "rate_limit_error"),
    ({"type": "requests", "code": "rate_limit_exceeded"}, "rate_limit_error"),
    ({"type": "insufficient_quota", "code": "insufficient_quota"}, "rate_limit_error"),
    ({"type": "server_error", "code": None}, "api_error"),
    ({"type": "something_new"}, "api_error"),
])
def test_openai_errors_reach_an_anthropic_client_as_their_kind(openai: dict, anthropic: str) -> None:
    for target in (CHAT, RESP):
        result = back(ANT, target, ant(), {"error": {"message": "m", **openai}})
        assert result.payload == {"type": "error", "error": {"type": anthropic, "message": "m"}}


ROWS = [("invalid_request_error", "invalid_request_error", None, 400, "INVALID_ARGUMENT"),
        ("authentication_error", "invalid_request_error", "invalid_api_key", 401, "UNAUTHENTICATED"),
        ("permission_error", "invalid_request_error", "permission_denied", 403, "PERMISSION_DENIED"),
        ("not_found_error", "invalid_request_error", "not_found", 404, "NOT_FOUND"),
        ("request_too_large", "invalid_request_error", "request_too_large", 400, "INVALID_ARGUMENT"),
        ("rate_limit_error", "requests", "rate_limit_exceeded", 429, "RESOURCE_EXHAUSTED"),
        ("api_error", "server_error", None, 500, "INTERNAL"),
        ("overloaded_error", "server_error", "overloaded", 503, "UNAVAILABLE")]


@pytest.mark.parametrize(("anthropic", "kind", "code", "google_code", "google_status"), ROWS)
def test_every_error_kind_maps_across_the_table(anthropic, kind, code, google_code, google_status) -> None:
    result = back(CHAT, ANT, chat(), {"type": "error", "error": {"type": anthropic, "message": "m"}})
    assert result.payload == {"error": {"message": "m", "type": kind, "param": None, "code": code}}
    google = {"error": {"code": google_code, "message": "m", "status": google_status}}
    result = back(GEM, CHAT, {"contents": [{"parts": [{"text": "hi"}]}]}, {"error": {"message": "m", "type": kind,
                                                                                   "code": code}})
    if anthropic != "request_too_large":  # Google has no status of its own for it: 400 INVALID_ARGUMENT
        assert result.payload == google


# --- answers that cannot be delivered whole ------------------------------------------------------

def test_a_nameless_call_makes_a_responses_answer_failed_not_completed() -> None:
    upstream = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m", "choices": [
        {"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "", "arguments": "{}"}}]}}]}
    result = back(RESP, CHAT, {"model": "m", "input": "hi"}, upstream)
    assert (result.payload["status"], result.payload["output"]) == ("failed", [])
    assert result.payload["error"] == {"code": "server_error",
                                       "message": "the upstream model produced a tool call without a name"}
    assert notes(result) == [("/choices/0/message/tool_calls/0", None, "dropped", "")]
    result = back(ANT, CHAT, ant(), upstream)
    assert (result.payload["content"], result.payload["stop_reason"]) == ([], "end_turn")
    assert notes(result) == [("/choices/0/message/tool_calls/0", None, "dropped", "")]


def test_a_named_call_completes_near_miss() -> None:
    result = back(RESP, CHAT, {"model": "m", "input": "hi"}, cases.CHAT_RESPONSE)
    assert result.payload["status"] == "completed"


@pytest.mark.parametrize("source", [ANT, RESP, GEM])
def test_empty_choices_and_empty_messages_do_not_crash_and_are_reported(source: Dialect) -> None:
    request = {ANT: ant(), RESP: {"model": "m", "input": "hi"}, GEM: {"contents": [{"parts": [{"text": "hi"}]}]}}
    target = CHAT
    empty = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m", "choices": []}
    result = back(source, target, request[source], empty)
    assert notes(result) == [("/choices", None, "synthesised", "")]
    assert [v for v in check_response(result.payload, source) if v.severity is Severity.ERROR] == []
    hollow = empty | {"choices": [{"index": 0, "finish_reason": "stop",
                                   "message": {"role": "assistant", "content": None}}]}
    result = back(source, target, request[source], hollow)
    assert notes(result) == [("/choices/0/message", None, "synthesised", "")]


# --- loss-report completeness over the goldens ---------------------------------------------------

# Where each top-level field of a source lands in each target: the first name carries a scalar
# value as it is; every name listed may be produced from it. "path" = the upstream path (Gemini
# takes the model and streaming there). A field with no place in the target, or whose scalar value
# changed, must be named in the report; so must every target field that no source field produced.
TURNS = {CHAT: ("messages",), RESP: ("input", "instructions"), ANT: ("messages", "system"),
         GEM: ("contents", "systemInstruction"), BR: ("messages", "system")}
SAMPLING = {CHAT: ("max_tokens", "temperature", "top_p", "stop", "response_format"),
            RESP: ("max_output_tokens", "temperature", "top_p", "text"),
            ANT: ("max_tokens", "temperature", "top_p", "stop_sequences"), BR: ("inferenceConfig",)}
PLACE = {
    "model": {CHAT: ("model",), RESP: ("model",), ANT: ("model",), GEM: ("path",), BR: ("path",)},
    "stream": {CHAT: ("stream", "stream_options"), RESP: ("stream",), ANT: ("stream",), GEM: ("path",), BR: ("path",)},
    "temperature": {CHAT: ("temperature",), RESP: ("temperature",), ANT: ("temperature",), GEM: ("generationConfig",),
                    BR: ("inferenceConfig",)},
    "top_p": {CHAT: ("top_p",), RESP: ("top_p",), ANT: ("top_p",), GEM: ("generationConfig",), BR: ("inferenceConfig",)},
    "max_tokens": {CHAT: ("max_tokens",), RESP: ("max_output_tokens",), ANT: ("max_tokens",),
                   GEM: ("generationConfig",), BR: ("inferenceConfig",)},
    "max_output_tokens": {CHAT: ("max_tokens",), ANT: ("max_tokens",), GEM: ("generationConfig",),
                          BR: ("inferenceConfig",)},
    "parallel_tool_calls": {CHAT: ("parallel_tool_calls",), RESP: ("parallel_tool_calls",), ANT: ("tool_choice",)},
    "stop": {ANT: ("stop_sequences",), GEM: ("generationConfig",), BR: ("inferenceConfig",)},
    "stop_sequences": {CHAT: ("stop",), GEM: ("generationConfig",), BR: ("inferenceConfig",)},
    "store": {CHAT: ("store",), RESP: ("store",)},
    "messages": TURNS, "input": TURNS, "contents": TURNS,
    "system": TURNS, "instructions": TURNS, "systemInstruction": TURNS,
    "tools": {CHAT: ("tools", "web_search_options"), RESP: ("tools",), ANT: ("tools",), GEM: ("tools",),
              BR: ("toolConfig",)},
    "web_search_options": {RESP: ("tools",), ANT: ("tools",), GEM: ("tools",)},
    "tool_choice": {CHAT: ("tool_choice",), RESP: ("tool_choice",), ANT: ("tool_choice",), GEM: ("toolConfig",),
                    BR: ("toolConfig",)},
    # Gemini's toolConfig holds the choice; Bedrock's the tools and the choice.
    "toolConfig": {CHAT: ("tool_choice", "tools"), RESP: ("tool_choice", "tools"), ANT: ("tool_choice", "tools"),
                   GEM: ("toolConfig", "tools"), BR: ("toolConfig",)},
    "generationConfig": SAMPLING,
    "inferenceConfig": {**SAMPLING, GEM: ("generationConfig",)},
    "reasoning_effort": {RESP: ("reasoning",)},
    "reasoning": {CHAT: ("reasoning_effort",)},
    "response_format": {RESP: ("text",), ANT: ("output_config",), GEM: ("generationConfig",)},
    "text": {CHAT: ("response_format",)},
    "output_config": {CHAT: ("response_format",), RESP: ("text",)},
}


@pytest.mark.parametrize(("source", "target"), PAIRS, ids=[f"{s.value}:{t.value}" for s, t in PAIRS])
def test_every_top_level_difference_of_a_golden_is_named_in_its_report(source: Dialect, target: Dialect) -> None:
    golden = orjson.loads((GOLDEN / f"{source.value}__{target.value}.json").read_bytes())
    before = orjson.loads((GOLDEN / "inputs" / f"{source.value}.request.json").read_bytes())
    if source is GEM:  # a Gemini request carries its model and streaming in the path
        before = {"model": "gemini-2.5-flash", "stream": True, **before}
    if source is BR:  # so does a Converse request
        before = {"model": "anthropic.claude-sonnet-4-5-20250929-v1:0", "stream": True, **before}
    after, losses = golden["request"]["output"], golden["request"]["losses"]
    after_with_path = {**after, "path": golden["request"]["translated_path"]}

    def named(pointer: str, side: str) -> bool:
        return any(loss[side] is not None and (loss[side] == pointer or loss[side].startswith(pointer + "/"))
                   for loss in losses)

    unreported = []
    produced: set[str] = set()
    for key, value in before.items():
        places = PLACE.get(key, {}).get(target, ())
        produced.update(places)
        landed = [place for place in places if place in after_with_path]
        if not landed:
            if not named(f"/{key}", "source"):
                unreported.append(f"/{key} has no place in the output")
        elif landed[0] != "path" and not isinstance(after[landed[0]], (dict, list)) \
                and not isinstance(value, (dict, list)) and after[landed[0]] != value \
                and not named(f"/{key}", "source"):
            unreported.append(f"/{key} changed from {value!r} to {after[landed[0]]!r}")
    for key in after:
        if key not in produced and not named(f"/{key}", "target"):
            unreported.append(f"/{key} appears from nowhere")
    assert unreported == [], unreported


# --- the same classes in streams -----------------------------------------------------------------

def chat_chunks(*deltas: dict, finish: str = "stop") -> bytes:
    chunks = [{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas]
    chunks.append({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                   "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return cases.sse(*chunks, done=True)


def relay(source: Dialect, target: Dialect, request: dict, stream: bytes):
    sent = get_bridge(source, target).request(request, PATH[source])
    translator = get_bridge(source, target).stream(sent.state)
    out, _ = cases.run_stream(translator, stream, 11)
    assert [v for v in check_stream(out, source) if v.severity is Severity.ERROR] == []
    return cases.events(out), translator


def test_a_streamed_refusal_is_its_own_part_for_a_responses_client() -> None:
    events, translator = relay(RESP, CHAT, {"model": "m", "input": "hi", "stream": True},
                               chat_chunks({"content": "Sorry. "}, {"refusal": "I can't"}, {"refusal": " help."}))
    done = [e for e in events if e["type"] in ("response.output_text.done", "response.refusal.done")]
    assert done == [
        {"type": "response.output_text.done", "sequence_number": 5, "item_id": done[0]["item_id"], "output_index": 0,
         "content_index": 0, "text": "Sorry. ", "logprobs": []},
        {"type": "response.refusal.done", "sequence_number": 10, "item_id": done[0]["item_id"], "output_index": 0,
         "content_index": 1, "refusal": "I can't help."}]
    item = next(e["item"] for e in events if e["type"] == "response.output_item.done")
    assert item["content"] == [{"type": "output_text", "text": "Sorry. ", "annotations": [], "logprobs": []},
                               {"type": "refusal", "refusal": "I can't help."}]
    assert notes(translator) == []


def test_a_streamed_refusal_reaches_an_anthropic_client_as_text_reported_once() -> None:
    events, translator = relay(ANT, CHAT, ant(stream=True), chat_chunks({"refusal": "I can't"}, {"refusal": " help."}))
    texts = [e["delta"]["text"] for e in events if e["type"] == "content_block_delta"]
    assert texts == ["I can't", " help."]
    assert notes(translator) == [("/stream", None, "converted", "")]


NAMELESS_STREAM = chat_chunks({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                               "function": {"arguments": "{}"}}]}, finish="tool_calls")


def test_a_streamed_nameless_call_makes_the_responses_stream_fail() -> None:
    events, translator = relay(RESP, CHAT, {"model": "m", "input": "hi", "stream": True}, NAMELESS_STREAM)
    assert [e["type"] for e in events] == ["response.created", "response.in_progress", "response.failed"]
    assert events[-1]["response"]["error"] == {"code": "server_error",
                                               "message": "the upstream model produced a tool call without a name"}
    assert notes(translator) == [("/stream", None, "dropped", "")]


def test_a_streamed_nameless_call_never_reaches_an_anthropic_client() -> None:
    events, translator = relay(ANT, CHAT, ant(stream=True), NAMELESS_STREAM)
    assert [e["type"] for e in events] == ["message_start", "message_delta", "message_stop"]
    assert events[1]["delta"]["stop_reason"] == "end_turn"
    assert notes(translator) == [("/stream", None, "dropped", "")]


# --- merged turns are reported -------------------------------------------------------------------

def tool_turn(*ids: str) -> list[dict]:
    calls = [{"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids]
    return [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": calls},
            *({"role": "tool", "tool_call_id": i, "content": "ok"} for i in ids)]


@pytest.mark.parametrize(("target", "merged_into"), [(ANT, "/messages/2"), (GEM, "/contents/2")])
def test_tool_messages_merged_into_one_turn_are_reported(target: Dialect, merged_into: str) -> None:
    sent = send(CHAT, target, chat(messages=tool_turn("call_1", "call_2"), tools=[fn("f")]))
    assert [n for n in notes(sent) if n[2] == "converted"] == [("/messages/3", merged_into, "converted", "")]


@pytest.mark.parametrize("target", [ANT, GEM])
def test_one_tool_message_is_no_merge_near_miss(target: Dialect) -> None:
    sent = send(CHAT, target, chat(messages=tool_turn("call_1"), tools=[fn("f")]))
    assert [n for n in notes(sent) if n[2] == "converted"] == []


@pytest.mark.parametrize(("target", "upstream", "pointer"), [
    (ANT, {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
           "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 0}}, "/content"),
    (RESP, {"id": "resp_1", "object": "response", "status": "completed", "model": "m",
            "output": [{"type": "reasoning", "id": "rs_1", "summary": []}]}, "/output"),
    (GEM, {"candidates": [], "promptFeedback": {"blockReason": "SAFETY"}}, "/candidates"),
    (GEM, {"candidates": [{"content": {"role": "model", "parts": []}, "finishReason": "STOP"}]},
     "/candidates/0/content"),
])
def test_a_hollow_answer_from_any_upstream_is_reported(target: Dialect, upstream: dict, pointer: str) -> None:
    result = back(CHAT, target, chat(), upstream)
    assert result.payload["choices"][0]["message"] == {"role": "assistant", "content": None}
    assert [n for n in notes(result) if n[2] == "synthesised"] == [(pointer, None, "synthesised", "")]


def test_a_hosted_entry_of_a_responses_allowed_subset_is_reported() -> None:
    body = {"model": "m", "input": "hi", "tools": [{"type": "function", "name": "f", "parameters": {}},
                                                   {"type": "web_search"}],
            "tool_choice": {"type": "allowed_tools", "mode": "auto",
                            "tools": [{"type": "function", "name": "f"}, {"type": "web_search"}]}}
    sent = send(RESP, CHAT, body)
    assert sent.payload["tool_choice"] == {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [
        {"type": "function", "function": {"name": "f"}}]}}
    assert notes(sent) == [("/tool_choice/tools/1", None, "dropped", "XL-11")]


def test_null_reasoning_means_absent() -> None:
    sent = send(CHAT, RESP, chat(reasoning_effort=None))
    assert "reasoning" not in sent.payload
    assert notes(sent) == [("/reasoning_effort", None, "dropped", "XL-10"), ("", "/store", "synthesised", "")]


def test_a_search_result_keeps_its_title_and_passages_apart() -> None:
    history = [{"role": "user", "content": "hi"},
               {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [
                   {"type": "search_result", "title": "Doc", "source": "https://example.com", "content": [
                       {"type": "text", "text": "First."}, {"type": "text", "text": "Second."}]}]}]}]
    sent = send(ANT, CHAT, ant(messages=history, tools=[ant_tool("f")]))
    assert sent.payload["messages"][-1]["content"] == "Doc\n\nFirst.\n\nSecond."


def test_gemini_validated_names_stay_a_subset_on_chat() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "tools": [{"functionDeclarations": [{"name": n} for n in "abc"]}],
            "toolConfig": {"functionCallingConfig": {"mode": "VALIDATED", "allowedFunctionNames": ["b"]}}}
    sent = send(GEM, CHAT, body)
    assert sent.payload["tool_choice"] == {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [
        {"type": "function", "function": {"name": "b"}}]}}
    assert notes(sent) == [("/toolConfig/functionCallingConfig/mode", None, "converted", "XL-11")]


def test_a_chat_allowed_entry_without_a_name_is_reported() -> None:
    body = chat(tools=[fn("a")], tool_choice={"type": "allowed_tools", "allowed_tools": {
        "mode": "auto", "tools": [{"type": "function", "function": {"name": "a"}}, {"type": "function"}]}})
    sent = send(CHAT, RESP, body)
    assert sent.payload["tool_choice"] == {"type": "allowed_tools", "mode": "auto",
                                           "tools": [{"type": "function", "name": "a"}]}
    assert notes(sent) == [("/tool_choice/allowed_tools/tools/1", None, "dropped", "XL-11"),
                           ("", "/store", "synthesised", "")]


def test_a_refusal_in_responses_history_reaches_chat_as_the_refusal_field() -> None:
    body = {"model": "m", "input": [
        {"role": "user", "content": "hi"},
        {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "Sorry.", "annotations": []},
            {"type": "refusal", "refusal": "I can't help with that."}]},
        {"role": "user", "content": "ok"}]}
    sent = send(RESP, CHAT, body)
    assert sent.payload["messages"][1] == {"role": "assistant", "content": "Sorry.",
                                           "refusal": "I can't help with that."}
    assert notes(sent) == []


# --- a Gemini setting that restates the target's default is no loss ------------------------------

def _modalities(spelling: str, modalities: list[str]) -> list[tuple[str, str | None, str, str, str]]:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], spelling: {"response_modalities"
            if spelling == "generation_config" else "responseModalities": modalities}}
    sent = send(GEM, CHAT, body)
    assert sent.payload == {"model": "gemini-2.5-flash", "messages": [{"role": "user", "content": "hi"}]}
    return [(loss.source, loss.target, loss.kind, loss.rule, loss.why) for loss in sent.losses]


@pytest.mark.parametrize("spelling", ["generationConfig", "generation_config"])
@pytest.mark.parametrize("modalities", [["TEXT"], ["text"]])
def test_text_only_response_modalities_are_reported_as_the_default(spelling: str, modalities: list[str]) -> None:
    # pydantic-ai sends responseModalities ["TEXT"] with every request: text is what Chat answers with.
    pointer = "/generation_config/response_modalities" if spelling == "generation_config" \
        else "/generationConfig/responseModalities"
    assert _modalities(spelling, modalities) == [
        (pointer, None, "dropped", "", "only text is asked for, the target's default; nothing to state")]


def test_image_response_modality_still_has_no_counterpart_near_miss() -> None:
    assert _modalities("generationConfig", ["TEXT", "IMAGE"]) == [
        ("/generationConfig/responseModalities", None, "dropped", "",
         "generationConfig.responseModalities has no counterpart")]


# --- Gemini takes one message where a list is declared --------------------------------------------

def test_gemini_single_messages_for_lists_are_read_as_lists() -> None:
    # Recorded: generativelanguage.googleapis.com accepted `tools` as one {functionDeclarations} object.
    body = {"contents": {"role": "user", "parts": {"text": "Weather in Oslo?"}},
            "tools": {"functionDeclarations": {"name": "weather.get", "parameters": {
                "type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]}}}}
    sent = send(GEM, CHAT, body)
    assert sent.payload["messages"] == [{"role": "user", "content": "Weather in Oslo?"}]
    assert [t["function"]["parameters"] for t in sent.payload["tools"]] == [
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}]
    assert [(s, k, r) for s, _, k, r in notes(sent) if k == "aliased"] == [
        ("/tools/functionDeclarations/name", "aliased", "XL-02")]


def test_gemini_lists_stay_lists_near_miss() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "tools": [{"functionDeclarations": [{"name": "weather.get"}]}]}
    assert [(s, k) for s, _, k, _ in notes(send(GEM, CHAT, body)) if k == "aliased"] == [
        ("/tools/0/functionDeclarations/0/name", "aliased")]


# ---- a list field of another type is refused where it is, not read as its characters or keys -------

def test_gemini_parts_that_are_text_are_refused_not_dropped_unreported() -> None:
    """`parts: "hi"` was walked character by character and each skipped: the turn vanished from the
    translation with nothing in the loss report."""
    with pytest.raises(TranslationError) as refused:
        get_bridge(Dialect.GEMINI, Dialect.OPENAI_CHAT).request(
            {"contents": [{"role": "user", "parts": "hi"}]}, "/v1beta/models/gemini-2.5-flash:generateContent")
    assert str(refused.value) == "/contents/0/parts: parts must be a list"


def test_gemini_parts_as_one_part_object_are_read_near_miss() -> None:
    """One part where a list is declared is what Gemini's own parser takes (GM-16's normalise)."""
    sent = get_bridge(Dialect.GEMINI, Dialect.OPENAI_CHAT).request(
        {"contents": [{"role": "user", "parts": {"text": "hi"}}]}, "/v1beta/models/gemini-2.5-flash:generateContent")
    assert sent.payload["messages"] == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("calls", [{"id": "call_1", "type": "function", "function": {"name": "f"}}, "call_1", 5])
def test_chat_tool_calls_that_are_not_a_list_are_refused_where_they_are(calls: object) -> None:
    with pytest.raises(TranslationError) as refused:
        get_bridge(Dialect.OPENAI_CHAT, Dialect.ANTHROPIC).request(
            {"model": "gpt-4o", "messages": [{"role": "assistant", "tool_calls": calls}]}, "/v1/chat/completions")
    assert str(refused.value) == "/messages/0/tool_calls: tool_calls must be a list"


# --- token counts the upstream wrote wrongly cost the counts, never the answer ----------------------

def _answer(dialect: Dialect, stream: bool):
    from inspector.wire.dialects.anthropic.mock import anthropic_message, anthropic_stream
    from inspector.wire.dialects.bedrock.mock import converse_response, converse_stream
    from inspector.wire.dialects.gemini.mock import gemini_response, gemini_stream
    from inspector.wire.dialects.openai_chat.mock import chat_completion, chat_stream
    from inspector.wire.dialects.openai_responses.mock import responses_result, responses_stream

    made = {CHAT: (chat_completion, chat_stream), RESP: (responses_result, responses_stream),
            ANT: (anthropic_message, anthropic_stream), GEM: (gemini_response, gemini_stream),
            BR: (converse_response, converse_stream)}[dialect]
    return made[1 if stream else 0]("It is sunny.")


USAGE_KEY = {CHAT: "usage", RESP: "usage", ANT: "usage", GEM: "usageMetadata", BR: "usage"}
BAD_USAGE = ["lots", [1, 2], 7, {"prompt_tokens": "x", "completion_tokens": [1], "input_tokens": "x",
                                 "output_tokens": {"n": 1}, "promptTokenCount": "x", "candidatesTokenCount": "1e9",
                                 "inputTokens": "x", "outputTokens": [1]}]


def _spoil(node, key: str, bad):
    """Every `key` member of the answer (the body's, or each event's and its nested message's) set to `bad`."""
    if isinstance(node, dict):
        return {k: (bad if k == key else _spoil(v, key, bad)) for k, v in node.items()}
    if isinstance(node, tuple):
        return (node[0], _spoil(node[1], key, bad))
    return node


@pytest.mark.parametrize("bad", BAD_USAGE, ids=["text", "list", "number", "members-of-wrong-types"])
@pytest.mark.parametrize(("source", "target"), PAIRS, ids=[f"{s.value}->{t.value}" for s, t in PAIRS])
def test_usage_of_the_wrong_type_costs_the_counts_not_the_answer(source, target, bad) -> None:
    import re

    from inspector.wire.dialects import home
    from inspector.wire.streams import parse_events

    request = {ANT: ant(), GEM: {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
               RESP: {"model": "gpt-5", "input": "hi"}, BR: {"messages": [{"role": "user", "content": [{"text": "hi"}]}]},
               }.get(source, chat())
    bridge = get_bridge(source, target)
    sent = bridge.request(request, PATH[source])
    answer = bridge.response(_spoil(_answer(target, False), USAGE_KEY[target], bad), sent.state).payload
    assert "It is sunny." in orjson.dumps(answer).decode()

    def relayed(answer: list) -> list[str]:
        """The client's stream, token counts and timestamps zeroed."""
        streamed = bridge.request(request, PATH[BR] + "-stream") if source is BR else \
            bridge.request({**request, "stream": True}, PATH[source])
        relay = bridge.stream(streamed.state)
        out = b"".join(relay.feed(chunk) for chunk in home(target).framing.encode(answer))
        events = parse_events(out + relay.close(), source)
        return [re.sub(r'"(\w*(?:tokens|Tokens|TokenCount|created\w*))":\d+', r'"\1":0', orjson.dumps(e).decode())
                for e in events]

    # The same stream as with counts written right, but for the counts.
    assert relayed(_spoil(_answer(target, True), USAGE_KEY[target], bad)) == relayed(_answer(target, True))


# --- a field with no counterpart is named, whatever the target -----------------------------------

STATELESS = [(s, t) for s, t in PAIRS if s in (CHAT, RESP) and t not in (CHAT, RESP)]


@pytest.mark.parametrize("store", [True, False])
@pytest.mark.parametrize(("source", "target"), STATELESS, ids=[f"{s.value}:{t.value}" for s, t in STATELESS])
def test_store_is_named_in_the_report_where_the_target_keeps_nothing(source, target, store) -> None:
    """Chat -> Anthropic and Chat -> Gemini dropped `store` with nothing in the loss report."""
    request = chat(store=store) if source is CHAT else {"model": "gpt-5", "input": "hi", "store": store}
    sent = get_bridge(source, target).request(request, PATH[source])
    assert [loss.to_dict() for loss in sent.losses if loss.source == "/store"] == [
        {"source": "/store", "target": None, "kind": "dropped",
         "why": f"{target.value} has no setting for whether the provider keeps the exchange", "rule": ""}]


# --- XL-13: a strict tool Anthropic takes and OpenAI would refuse --------------------------------
# Mirascope's test_call_with_strict_tool_and_optional_properties (anthropic-beta structured outputs):
# Anthropic answered 200 with an optional property under strict:true; OpenAI refuses that schema.
_LOOSE = {"type": "object", "properties": {"location": {"type": "string"}, "unit": {"type": "string"}},
          "required": ["location"], "additionalProperties": False}
_TIGHT = {**_LOOSE, "required": ["location", "unit"]}


def _strict_tool_request(schema: dict) -> dict:
    return {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [{"role": "user", "content": "Weather?"}],
            "tools": [{"name": "get_weather", "input_schema": schema, "strict": True}]}


@pytest.mark.parametrize("target,where", [(Dialect.OPENAI_CHAT, "/tools/0/function/strict"),
                                          (Dialect.OPENAI_RESPONSES, "/tools/0/strict")])
def test_a_strict_tool_openai_would_refuse_is_sent_loose_and_said_so(target: Dialect, where: str) -> None:
    sent = get_bridge(Dialect.ANTHROPIC, target).request(_strict_tool_request(_LOOSE), "/v1/messages")
    tool = sent.payload["tools"][0]
    assert (tool["function"] if target is Dialect.OPENAI_CHAT else tool)["strict"] is False
    assert [(x.source, x.target, x.kind, x.rule, x.why) for x in sent.losses if x.rule == "XL-13"] == [
        ("/tools/0/strict", where, "converted", "XL-13",
         f"strict:true sent as strict:false: {target.value} refuses it on this schema (strict:true needs every "
         "property in required; missing unit); the model may stray from the schema")]
    assert [v.rule for v in check_request(sent.payload, target) if v.severity is Severity.ERROR] == []


@pytest.mark.parametrize("target", [Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES])
def test_a_strict_tool_openai_takes_stays_strict_near_miss(target: Dialect) -> None:
    sent = get_bridge(Dialect.ANTHROPIC, target).request(_strict_tool_request(_TIGHT), "/v1/messages")
    tool = sent.payload["tools"][0]
    assert (tool["function"] if target is Dialect.OPENAI_CHAT else tool)["strict"] is True
    assert [x for x in sent.losses if x.rule == "XL-13"] == []


# --- a document's format reaches Converse as one of its DocumentFormat values ------------------------
# pydantic/logfire's test_google_genai cassettes send a text/plain inline part; "plain" is no format.
@pytest.mark.parametrize("mime,fmt", [("text/plain", "txt"), ("text/markdown", "md"), ("text/csv", "csv"),
                                      ("application/pdf", "pdf"), ("text/html; charset=utf-8", "html"),
                                      ("application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                                       "docx")])
def test_a_gemini_document_reaches_bedrock_in_its_format(mime: str, fmt: str) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "Summarise."},
                                                    {"inlineData": {"mimeType": mime, "data": "aGVsbG8="}}]}]}
    sent = get_bridge(Dialect.GEMINI, Dialect.BEDROCK).request(body, "/v1beta/models/gemini-2.5-flash:generateContent")
    (block,) = [b for b in sent.payload["messages"][0]["content"] if "document" in b]
    assert block["document"]["format"] == fmt
    assert check_request(sent.payload, Dialect.BEDROCK) == []


def test_a_document_in_a_format_converse_does_not_read_is_dropped_and_said_so() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "Unpack."},
                                                    {"inlineData": {"mimeType": "application/zip", "data": "UEs="}}]}]}
    sent = get_bridge(Dialect.GEMINI, Dialect.BEDROCK).request(body, "/v1beta/models/gemini-2.5-flash:generateContent")
    assert sent.payload["messages"][0]["content"] == [{"text": "Unpack."}]
    assert [(x.source, x.kind) for x in sent.losses if x.source.startswith("/contents")] == [
        ("/contents/0/parts/1", "dropped")]


def test_a_converse_document_reaches_anthropic_with_its_media_type() -> None:
    body = {"messages": [{"role": "user", "content": [
        {"text": "Summarise."}, {"document": {"format": "txt", "name": "notes", "source": {"bytes": "aGVsbG8="}}}]}]}
    sent = get_bridge(Dialect.BEDROCK, Dialect.ANTHROPIC).request(body, "/model/anthropic.claude-3-haiku/converse")
    (block,) = [b for b in sent.payload["messages"][0]["content"] if b["type"] == "document"]
    assert block["source"]["media_type"] == "text/plain"


# --- an answer cut at its token limit mid-call says so on every side ---------------------------------
# Mirascope's refusal/openai_responses/handles-refusal-for-stream: a forced call cut by max_output_tokens,
# status incomplete; sent on as tool_use/tool_calls, the client would take the cut call for a whole one.
def _responses_answer(status: str) -> dict:
    return {"id": "resp_1", "object": "response", "status": status, "model": "gpt-5-mini",
            "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
            "output": [{"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "get_weather",
                        "arguments": '{"city": "Par', "status": status}],
            "usage": {"input_tokens": 9, "output_tokens": 16, "total_tokens": 25}}


def _responses_stream(status: str) -> bytes:
    item = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": ""}
    return named_sse([
        {"type": "response.created", "response": {"id": "resp_1", "model": "gpt-5-mini", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": '{"city": "Par'},
        {"type": "response.output_item.done", "output_index": 0, "item": {**item, "arguments": '{"city": "Par',
                                                                              "status": status}},
        {"type": f"response.{'incomplete' if status == 'incomplete' else 'completed'}",
         "response": _responses_answer(status)}])


_CUT = {Dialect.OPENAI_CHAT: ("length", "tool_calls"), Dialect.ANTHROPIC: ("max_tokens", "tool_use"),
        Dialect.BEDROCK: ("max_tokens", "tool_use")}


def _stop_of(answer: dict, dialect: Dialect):
    if dialect is Dialect.OPENAI_CHAT:
        return answer["choices"][0]["finish_reason"]
    return answer["stop_reason"] if dialect is Dialect.ANTHROPIC else answer["stopReason"]


@pytest.mark.parametrize("client", list(_CUT), ids=lambda d: d.value)
@pytest.mark.parametrize("status", ["incomplete", "completed"])
def test_an_answer_cut_mid_call_is_sent_as_cut_and_a_whole_one_as_a_call(client: Dialect, status: str) -> None:
    cut, called = _CUT[client]
    expected = cut if status == "incomplete" else called
    bridge = get_bridge(client, Dialect.OPENAI_RESPONSES)
    sent = bridge.request(_minimal_request(client), _client_path(client))
    answer = bridge.response(_responses_answer(status), sent.state).payload
    assert _stop_of(answer, client) == expected
    relay = bridge.stream(sent.state)
    streamed = relay.feed(_responses_stream(status)) + relay.close()
    assert _stop_of(reassemble(streamed, client), client) == expected


def _minimal_request(client: Dialect) -> dict:
    ask = "Weather in Paris?"
    if client is Dialect.OPENAI_CHAT:
        return {"model": "gpt-5-mini", "messages": [{"role": "user", "content": ask}]}
    if client is Dialect.ANTHROPIC:
        return {"model": "gpt-5-mini", "max_tokens": 16, "messages": [{"role": "user", "content": ask}]}
    return {"messages": [{"role": "user", "content": [{"text": ask}]}]}


def _client_path(client: Dialect) -> str:
    return {Dialect.OPENAI_CHAT: "/v1/chat/completions", Dialect.ANTHROPIC: "/v1/messages",
            Dialect.BEDROCK: "/model/gpt-5-mini/converse"}[client]
