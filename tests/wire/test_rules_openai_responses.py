"""OpenAI Responses rules (OR-* in docs/rules.md)."""

from __future__ import annotations

import pytest

from inspector.wire import check

from .rule_cases import assert_case, deleting, doing, makers, same, setting
from .wire_payloads import named_sse, responses_events, responses_request, responses_response, sse

RESP = "openai-responses"

req, resp, stream = makers(RESP, responses_request, responses_response, responses_events)


def _insert(index, item):
    def mutate(doc):
        doc["input"].insert(index, item)
        return doc
    return mutate


def _append(item):
    def mutate(doc):
        doc["input"].append(item)
        return doc
    return mutate


CASES = [
    req("file_search without vector stores", setting(["tools", 1], {"type": "file_search"}), "OR-01",
        "/tools/1/vector_store_ids", "error", setting(["tools", 1], {"type": "file_search", "vector_store_ids": ["v"]})),
    req("unknown tool type", setting(["tools", 1], {"type": "browser"}), "OR-01", "/tools/1/type", "error",
        setting(["tools", 1], {"type": "web_search_preview"})),
    req("nested Chat tool shape", setting(["tools", 0], {"type": "function", "function": {"name": "get_weather"}}),
        "OR-02", "/tools/0/function", "error", setting(["tools", 0], {"type": "function", "name": "get_weather"}),
        also=(("XL-11", "/tool_choice/name", "error"),)),
    # A bare object root: "object schema missing properties" from OpenAI (everruns#984), the empty map accepted.
    req("bare object parameters", setting(["tools", 0, "parameters"], {"type": "object"}), "OR-02",
        "/tools/0/parameters", "error", setting(["tools", 0, "parameters"], {"type": "object", "properties": {}})),
    req("dotted tool name", doing(setting(["tools", 0, "name"], "get.weather"), deleting(["tool_choice"])), "OR-03",
        "/tools/0/name", "error", doing(setting(["tools", 0, "name"], "get-weather"), deleting(["tool_choice"]))),
    req("built-in degraded into an empty-name function", doing(
        setting(["tools", 1], {"type": "function", "name": "", "description": "", "parameters": None}),
        deleting(["tool_choice"])), "XL-09", "/tools/1/name", "error", doing(
        setting(["tools", 1], {"type": "function", "name": "web_search", "description": "", "parameters": None}),
        deleting(["tool_choice"]))),
    req("nested Chat tool_choice", setting(["tool_choice"], {"type": "function", "function": {"name": "get_weather"}}),
        "OR-04", "/tool_choice/function", "error", same),
    req("unknown tool_choice type", setting(["tool_choice"], {"type": "browser"}), "OR-04", "/tool_choice/type",
        "error", setting(["tool_choice"], {"type": "web_search_preview"})),
    req("role tool in input", setting(["input", 2], {"role": "tool", "tool_call_id": "call_1", "content": "4°C"}),
        "OR-05", "/input/2/role", "error", _insert(0, {"role": "developer", "content": "Be terse."}),
        also=(("OR-08", "/input/1/call_id", "error"),)),
    req("arguments as an object", setting(["input", 1, "arguments"], {"city": "Oslo"}), "OR-06", "/input/1/arguments",
        "error", same),
    req("msg_ id on a function_call", setting(["input", 1, "id"], "msg_1"), "OR-06", "/input/1/id", "error",
        deleting(["input", 1, "id"])),
    req("function_call without call_id", deleting(["input", 1, "call_id"]), "OR-06", "/input/1/call_id", "error",
        same,
        also=(("OR-08", "/input/2/call_id", "error"),)),
    req("output missing", deleting(["input", 2, "output"]), "OR-07", "/input/2/output", "error",
        setting(["input", 2, "output"], [{"type": "input_image", "image_url": "data:,"}])),
    req("output part not an input part", setting(["input", 2, "output"], [{"type": "image_url"}]), "OR-07",
        "/input/2/output/0", "error", setting(["input", 2, "output"], [{"type": "input_text", "text": "4°C"}])),
    req("call_id over 64", doing(setting(["input", 1, "call_id"], "c" * 65), setting(["input", 2, "call_id"], "c" * 65)),
        "OR-07", "/input/2/call_id", "error",
        doing(setting(["input", 1, "call_id"], "c" * 64), setting(["input", 2, "call_id"], "c" * 64)),
        also=(("OR-08", "/input/1/call_id", "error"),)),
    req("call without output", deleting(["input", 2]), "OR-08", "/input/1/call_id", "error", same),
    req("orphan output", _append({"type": "function_call_output", "call_id": "call_x", "output": "?"}), "OR-08",
        "/input/5/call_id", "error",
        doing(_append({"type": "function_call_output", "call_id": "call_x", "output": "?"}),
              setting(["previous_response_id"], "resp_0"))),
    # History kept server-side (conversation) or a client-executed tool_search_call can own the call.
    req("orphan output beside a conversation", _append({"type": "function_call_output", "call_id": "call_x",
                                                        "output": "?"}),
        "OR-08", "/input/5/call_id", "error",
        doing(_append({"type": "function_call_output", "call_id": "call_x", "output": "?"}),
              setting(["conversation"], "conv_1"))),
    req("orphan output after a tool search", _append({"type": "function_call_output", "call_id": "call_x",
                                                      "output": "?"}),
        "OR-08", "/input/5/call_id", "error",
        doing(_append({"type": "tool_search_call", "call_id": "call_x", "execution": "client", "arguments": {}}),
              _append({"type": "function_call_output", "call_id": "call_x", "output": "?"}))),
    req("text item between call and output", _insert(2, {"role": "assistant", "content": "Let me check."}), "OR-08",
        "/input/3/call_id", "error", same),
    req("previous_response_id", setting(["previous_response_id"], "resp_0"), "OR-11", "/previous_response_id", "info",
        setting(["previous_response_id"], None)),
    req("conversation", setting(["conversation"], {"id": "conv_1"}), "OR-11", "/conversation", "info",
        setting(["conversation"], None)),
    req("upper-case schema type", setting(["tools", 0, "parameters", "properties", "city", "type"], "STRING"), "XL-01",
        "/tools/0/parameters/properties/city/type", "error", same),
    req("duplicate tool names", setting(["tools", 1], {"type": "function", "name": "get_weather", "strict": False,
                                                       "parameters": None}),
        "XL-03", "/tools/1/name", "error", same),
    req("call_id reused", doing(_append({"type": "function_call", "call_id": "call_1", "name": "get_weather",
                                         "arguments": "{}"}),
                                _append({"type": "function_call_output", "call_id": "call_1", "output": "x"})),
        "XL-04", "/input/5/call_id", "error", same),
    req("double-encoded arguments", setting(["input", 1, "arguments"], '"{\\"city\\":\\"Oslo\\"}"'), "XL-08",
        "/input/1/arguments", "warning", setting(["input", 1, "arguments"], '{ "city": "Oslo" }')),
    req("tools null", doing(setting(["tools"], None), deleting(["tool_choice"])), "XL-10", "/tools", "info",
        deleting(["tool_choice"])),
    # Empty tools: accepted as none (the OpenAI Agents SDK sends it on every call of an agent without
    # tools); an error once tool_choice needs a tool.
    req("tools empty, tool_choice required", doing(setting(["tools"], []), setting(["tool_choice"], "required"),
                                                   deleting(["input", 1]), deleting(["input", 1])),
        "XL-10", "/tools", "error", setting(["tool_choice"], "required")),
    req("tools empty", doing(setting(["tools"], []), deleting(["tool_choice"]), deleting(["input", 1]),
                             deleting(["input", 1])), "XL-10", "/tools", "info",
        doing(deleting(["tools"]), deleting(["tool_choice"]), deleting(["input", 1]), deleting(["input", 1]))),
    req("tool_choice names no tool", setting(["tool_choice", "name"], "nope"), "XL-11", "/tool_choice/name", "error",
        doing(setting(["tools", 0, "name"], "nope"), setting(["tool_choice", "name"], "nope"),
              setting(["input", 1, "name"], "nope"))),
    resp("response function_call without a name", deleting(["output", 0, "name"]), "OR-12", "/output/0/name", "error",
         setting(["output", 0, "name"], "search_docs")),
    req("strict schema not strict-compliant", setting(["tools", 0, "strict"], True), "XL-13",
        "/tools/0/parameters/additionalProperties", "error",
        doing(setting(["tools", 0, "strict"], True), setting(["tools", 0, "parameters", "additionalProperties"], False))),
    stream("deltas keyed by call_id", setting([2, "item_id"], "call_2"), "OR-10", "/2/item_id", "error",
           deleting([2, "output_index"])),
    stream("delta for an item never added", setting([3, "item_id"], "fc_9"), "OR-10", "/3/item_id", "error", same,
        also=(("OR-10", "/4/arguments", "error"),)),
    stream("done arguments differ from deltas", setting([4, "arguments"], '{"city":"Roma"}'), "OR-10",
           "/4/arguments", "error", same,
        also=(("OR-10", "/5/item/arguments", "error"), ("OR-10", "/6/response/output/0/arguments", "error"),)),
    stream("final item differs from deltas", setting([5, "item", "arguments"], '{"city":"Roma"}'), "OR-10",
           "/5/item/arguments", "error", same,
        also=(("OR-10", "/6/response/output/0/arguments", "error"),)),
    stream("sequence_number goes back", setting([3, "sequence_number"], 1), "OR-10", "/3/sequence_number", "warning",
           same),
    stream("streamed arguments not an object", doing(setting([2, "delta"], "[1,"), setting([3, "delta"], "2]"),
                                                     setting([4, "arguments"], "[1,2]"),
                                                     setting([5, "item", "arguments"], "[1,2]"),
                                                     setting([6, "response", "output", 0, "arguments"], "[1,2]")),
           "XL-08", "/4/arguments", "warning", same),
    # Value ranges from the dialect's home (dialects/openai_responses/limits.py); the spec layer says
    # the same and yields to the hand-written rule at the same place (issue 8).
    req("max_output_tokens below 16", setting(["max_output_tokens"], 8), "OR-19", "/max_output_tokens", "error",
        setting(["max_output_tokens"], 16)),
    req("max_output_tokens below 16 on a compatible server", setting(["max_output_tokens"], 10), "OR-19",
        "/max_output_tokens", "error", setting(["max_output_tokens"], 16), profile="openai-compatible"),
    req("top_p above 1", setting(["top_p"], 1.5), "OR-19", "/top_p", "error", setting(["top_p"], 1)),
    # The spec layer: OpenAI's published schema beneath the hand-written rules (issue 8).
    req("input_image with a null image_url and no file", setting(["input", 0, "content"], [
        {"type": "input_image", "detail": "auto", "image_url": 5}]), "OR-13", "/input/0/content/0/image_url", "error",
        setting(["input", 0, "content"], [{"type": "input_image", "detail": "auto", "image_url": "https://x/a.png"}])),
    req("response_format moved to text.format", setting(["response_format"], {"type": "json_object"}), "OR-14",
        "/response_format", "error", setting(["text"], {"format": {"type": "json_object"}})),
    # Shapes the API rejects beyond the schema (issue 8): parts a role does not take, file data it cannot read.
    req("input_text in an assistant message", setting(["input", 3, "content"], [
        {"type": "input_text", "text": "It is 4°C."}]), "OR-18", "/input/3/content/0", "error",
        setting(["input", 3, "content"], [{"type": "output_text", "text": "It is 4°C."}])),
    req("input_image in an assistant message", setting(["input", 3], {"type": "message", "role": "assistant", "content": [
        {"type": "input_image", "image_url": "https://example.com/a.png"}]}), "OR-18", "/input/3/content/0", "error",
        setting(["input", 3], {"type": "message", "role": "assistant", "content": [
            {"type": "refusal", "refusal": "I cannot show that."}]})),
    req("audio as an input_file", setting(["input", 4, "content"], [
        {"type": "input_text", "text": "Thanks"}, {"type": "input_file", "filename": "a.mp3",
                                                   "file_data": "data:audio/mpeg;base64,SUQz"}]),
        "OR-16", "/input/4/content/1/file_data", "error",
        setting(["input", 4, "content"], [{"type": "input_text", "text": "Thanks"}, {
            "type": "input_file", "filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"}])),
    req("video as an input_file in a tool output", setting(["input", 2, "output"], [
        {"type": "input_file", "filename": "a.mp4", "file_data": "data:video/mp4;base64,AAAA"}]),
        "OR-16", "/input/2/output/0/file_data", "error",
        setting(["input", 2, "output"], [{"type": "input_file", "filename": "a.txt",
                                          "file_data": "data:text/plain;base64,NMKwQw=="}])),
    req("reasoning followed by a message that is not its output", _insert(3, {
        "type": "reasoning", "id": "rs_1", "summary": []}), "OR-17", "/input/3", "error",
        doing(_insert(3, {"type": "reasoning", "id": "rs_1", "summary": []}), setting(["input", 4], {
            "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "It is 4°C.", "annotations": []}]}))),
    req("reasoning before an id-less message, on a server that mints its own ids", _insert(3, {
        "type": "reasoning", "id": "rs_1", "summary": []}), "OR-17", "/input/3", "error",
        _insert(3, {"type": "reasoning", "id": "rs_1", "summary": []}), near_profile="openai-compatible"),
    req("strict text format not strict-compliant", setting(["text"], {"format": {
        "type": "json_schema", "name": "weather", "strict": True, "schema": {
            "type": "object", "properties": {"city": {"type": "string"}}, "additionalProperties": False}}}),
        "XL-13", "/text/format/schema/required", "error",
        setting(["text"], {"format": {"type": "json_schema", "name": "weather", "strict": False, "schema": {
            "type": "object", "properties": {"city": {"type": "string"}}, "additionalProperties": False}}})),
    req("file_data as bare base64", setting(["input", 4, "content"], [
        {"type": "input_file", "filename": "a.pdf", "file_data": "JVBERi0xLjQK"}]),
        "OR-16", "/input/4/content/0/file_data", "error",
        setting(["input", 4, "content"], [{"type": "input_file", "filename": "a.pdf",
                                           "file_data": "data:application/pdf;base64,JVBERi0xLjQK"}])),
    # JSON mode (issue 18): the word counts in instructions or any input part, in any case.
    req("json_object text format without the word json", setting(["text"], {"format": {"type": "json_object"}}),
        "OR-20", "/text/format/type", "error", doing(setting(["text"], {"format": {"type": "json_object"}}),
                                                     setting(["instructions"], "Reply as Json."))),
    req("json_object with the word in an input part", doing(setting(["text"], {"format": {"type": "json_object"}}),
                                                             setting(["input", 0, "content"], [
                                                                 {"type": "input_text", "text": "Weather in Oslo?"}])),
        "OR-20", "/text/format/type", "error", doing(setting(["text"], {"format": {"type": "json_object"}}),
                                                     setting(["input", 0, "content"], [
                                                         {"type": "input_text", "text": "Weather as JSON?"}]))),
    # The earlier turns are stored server-side, where the word may be: not judged.
    req("json_object over server-side history", setting(["text"], {"format": {"type": "json_object"}}), "OR-20",
        "/text/format/type", "error", doing(setting(["text"], {"format": {"type": "json_object"}}),
                                            setting(["previous_response_id"], "resp_0"))),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rule(case):
    assert_case(case)


def test_valid_baselines_have_no_violations():
    assert check.check_request(responses_request(), RESP) == []
    assert check.check_response(responses_response(), RESP) == []
    assert check.check_stream(named_sse(responses_events()), RESP) == []


def test_reassembled_stream_is_the_completed_response():
    assert check.reassemble(sse(responses_events()), RESP) == responses_events()[-1]["response"]


def test_reassembly_without_completion_builds_the_output_from_done_items():
    events = responses_events()[:-1]
    assert check.reassemble(sse(events), RESP) == {"object": "response", "status": "incomplete",
                                                   "output": [events[-1]["item"]]}
