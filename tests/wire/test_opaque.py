"""Opaque state across flows (XL-14, `wire/opaque.py`): what a model attached to its tool calls comes
back unchanged beside the same calls; each dialect's home reads where its state sits. Shapes from the
providers' docs: Anthropic's extended thinking with tool use (signature, redacted_thinking), Gemini 3's
thought signatures on function calls (the first of parallel calls), Responses reasoning items replayed
statelessly (encrypted_content) or by reference."""

from __future__ import annotations

import copy

from inspector.wire.dialect import Dialect
from inspector.wire.dialects import home
from inspector.wire.opaque import compare


def _across(dialect: Dialect, response: dict, request: dict) -> list[tuple[str, str]]:
    carried = home(dialect).opaque
    assert carried is not None
    return compare(carried(response, True), carried(request, False))


def _anthropic() -> tuple[dict, dict]:
    blocks = [{"type": "thinking", "thinking": "", "signature": "EqQBCkYIARgCIkAsig"},
              {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
              {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Oslo"}}]
    response = {"type": "message", "role": "assistant", "content": blocks, "stop_reason": "tool_use"}
    request = {"model": "claude-opus-4-7", "max_tokens": 2048, "thinking": {"type": "adaptive"}, "messages": [
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": copy.deepcopy(blocks)},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "4 °C"}]}]}
    return response, request


def test_anthropic_thinking_blocks_sent_back_as_they_came_are_no_finding() -> None:
    assert _across(Dialect.ANTHROPIC, *_anthropic()) == []


def test_anthropic_a_rewritten_signature_is_named_at_its_message() -> None:
    response, request = _anthropic()
    request["messages"][1]["content"][0]["signature"] = "EqQBCkYIARgCIkAsig=="  # re-encoded by a relay
    assert _across(Dialect.ANTHROPIC, response, request) == [
        ("/messages/1/content", "the signed thinking block the model sent with call 'toolu_01A' came back changed")]


def test_anthropic_reordered_and_dropped_blocks_on_the_latest_turn() -> None:
    response, request = _anthropic()
    content = request["messages"][1]["content"]
    content[0], content[1] = content[1], content[0]
    assert _across(Dialect.ANTHROPIC, response, request) == [
        ("/messages/1/content", "the signed thinking blocks the model sent with call 'toolu_01A' came back in "
                                "another order")]
    del content[0]
    assert _across(Dialect.ANTHROPIC, response, request) == [
        ("/messages/1/content", "1 of the 2 signed thinking blocks the model sent with call 'toolu_01A' were dropped")]
    del content[0]
    assert _across(Dialect.ANTHROPIC, response, request) == [
        ("/messages/1/content", "the signed thinking block the model sent with call 'toolu_01A' was dropped")]


def test_anthropic_thinking_left_out_of_an_older_turn_is_no_finding() -> None:
    # The API needs the thinking blocks of the latest tool-calling turn only; clients trim older ones.
    response, request = _anthropic()
    request["messages"][1]["content"] = request["messages"][1]["content"][2:]
    request["messages"] += [
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "", "signature": "Eq2"},
                                          {"type": "tool_use", "id": "toolu_01B", "name": "get_weather",
                                           "input": {"city": "Rome"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01B", "content": "18 °C"}]}]
    assert _across(Dialect.ANTHROPIC, response, request) == []


def _gemini() -> tuple[dict, dict]:
    parts = [{"functionCall": {"id": "fc_1", "name": "get_weather", "args": {"city": "Oslo"}},
              "thoughtSignature": "CiQB0e2Kb7sig"},
             {"functionCall": {"id": "fc_2", "name": "get_weather", "args": {"city": "Rome"}}}]  # parallel: no signature
    response = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}
    request = {"contents": [
        {"role": "user", "parts": [{"text": "Weather in Oslo and Rome?"}]},
        {"role": "model", "parts": copy.deepcopy(parts)},
        {"role": "user", "parts": [
            {"functionResponse": {"id": "fc_1", "name": "get_weather", "response": {"temp": 4}}},
            {"functionResponse": {"id": "fc_2", "name": "get_weather", "response": {"temp": 18}}}]}]}
    return response, request


def test_gemini_a_signature_back_on_its_call_and_none_on_the_parallel_one_is_no_finding() -> None:
    assert _across(Dialect.GEMINI, *_gemini()) == []


def test_gemini_a_signature_dropped_or_moved_to_another_call() -> None:
    response, request = _gemini()
    parts = request["contents"][1]["parts"]
    signature = parts[0].pop("thoughtSignature")
    assert _across(Dialect.GEMINI, response, request) == [
        ("/contents/1/parts/0", "the thoughtSignature the model sent with call 'fc_1' was dropped")]
    parts[1]["thoughtSignature"] = signature  # a client that re-sorted the parts
    assert _across(Dialect.GEMINI, response, request) == [
        ("/contents/1/parts/0", "the thoughtSignature the model sent with call 'fc_1' was dropped")]


def test_gemini_calls_without_ids_are_matched_by_name_and_arguments_in_either_spelling() -> None:
    response, request = _gemini()
    for part in response["candidates"][0]["content"]["parts"]:
        del part["functionCall"]["id"]
    snake = [{"function_call": {"name": "get_weather", "args": {"city": "Oslo"}}, "thought_signature": "other"},
             {"function_call": {"name": "get_weather", "args": {"city": "Rome"}}}]
    request["contents"][1]["parts"] = snake
    assert _across(Dialect.GEMINI, response, request) == [
        ("/contents/1/parts/0", "the thoughtSignature the model sent with call "
                                "'get_weather{\"city\":\"Oslo\"}' came back changed")]


def _responses() -> tuple[dict, dict]:
    reasoning = {"type": "reasoning", "id": "rs_68a1", "summary": [], "encrypted_content": "gAAAAABo1sig"}
    call = {"type": "function_call", "id": "fc_68a2", "call_id": "call_Q1", "name": "get_weather",
            "arguments": '{"city":"Oslo"}'}
    response = {"object": "response", "status": "completed", "output": [reasoning, call]}
    request = {"model": "gpt-5", "store": False, "include": ["reasoning.encrypted_content"], "input": [
        {"role": "user", "content": "Weather in Oslo?"}, copy.deepcopy(reasoning), copy.deepcopy(call),
        {"type": "function_call_output", "call_id": "call_Q1", "output": "4 °C"}]}
    return response, request


def test_responses_reasoning_back_whole_or_by_reference_is_no_finding() -> None:
    response, request = _responses()
    assert _across(Dialect.OPENAI_RESPONSES, response, request) == []
    request["input"][1] = {"type": "item_reference", "id": "rs_68a1"}  # stored: the server holds it
    assert _across(Dialect.OPENAI_RESPONSES, response, request) == []


def test_responses_reasoning_dropped_or_rewritten() -> None:
    response, request = _responses()
    request["input"][1]["encrypted_content"] = "gAAAAABo1sig-truncated"
    assert _across(Dialect.OPENAI_RESPONSES, response, request) == [
        ("/input/2", "the reasoning item the model sent with call 'call_Q1' came back changed")]
    del request["input"][1]
    assert _across(Dialect.OPENAI_RESPONSES, response, request) == [
        ("/input/1", "the reasoning item the model sent with call 'call_Q1' was dropped")]
