"""Anthropic Messages rules (AN-* in docs/rules.md)."""

from __future__ import annotations

import pytest

from inspector.wire import check, profiles
from inspector.wire.dialect import Dialect
from inspector.wire.fix import fix

from .rule_cases import assert_case, deleting, doing, makers, same, setting
from .wire_payloads import anthropic_events, anthropic_request, anthropic_response, named_sse

ANT = "anthropic"

req, resp, stream = makers(ANT, anthropic_request, anthropic_response, anthropic_events)


def _append(message):
    def mutate(doc):
        doc["messages"].append(message)
        return doc
    return mutate


def _split(index, position):
    """Message `index` cut in two consecutive messages of its role before content block `position`."""
    def mutate(doc):
        message = doc["messages"][index]
        doc["messages"].insert(index + 1, {"role": message["role"], "content": message["content"][position:]})
        message["content"] = message["content"][:position]
        return doc
    return mutate


def _thinking(budget, max_tokens=2048):
    """Fixed-budget thinking with room for an answer beside it (max_tokens counts both)."""
    return doing(setting(["thinking"], {"type": "enabled", "budget_tokens": budget}),
                 setting(["max_tokens"], max_tokens))


def _thinking_kept(doc):
    """The tool_use turn keeps its thinking block, as it must while thinking is on (XL-14)."""
    doc["messages"][1]["content"].insert(0, {"type": "thinking", "thinking": "…", "signature": "c2ln"})
    return doc


FINE_GRAINED = "fine-grained-tool-streaming-2025-05-14"
FILES_API = "files-api-2025-04-14"


def _beta(*features):
    """Anthropic's endpoint for a request sent with `anthropic-beta: <features>` (the SDK's betas=[...])."""
    return profiles.with_headers(profiles.get(None, Dialect.ANTHROPIC), [("anthropic-beta", ",".join(features))])


# Anthropic's MCP connector: servers beside the tools, and a toolset naming one of them.
_MCP_TOOLSET = doing(setting(["mcp_servers"], [{"type": "url", "url": "https://mcp.example/mcp", "name": "docs"}]),
                     setting(["tools", 1], {"type": "mcp_toolset", "mcp_server_name": "docs"}))


def _both_ids(value):
    return doing(setting(["messages", 1, "content", 1, "id"], value),
                 setting(["messages", 2, "content", 0, "tool_use_id"], value))


_SERVER_USE = {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search", "input": {"query": "x"}}
_MCP_USE = {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "ask_question", "server_name": "deepwiki",
            "input": {"question": "What is it?"}}
_CLIENT_USE = {"type": "tool_use", "id": "toolu_7", "name": "get_weather", "input": {"city": "Oslo"}}
_CLIENT_RESULT = {"type": "tool_result", "tool_use_id": "toolu_7", "content": "4°C"}


def _breakpoints(count):
    """`count` cache_control breakpoints: the tool, a system block, then the messages' blocks."""
    def mutate(doc):
        mark = {"type": "ephemeral"}
        doc["system"] = [{"type": "text", "text": "Be brief.", "cache_control": mark}]
        doc["tools"][0]["cache_control"] = mark
        blocks = [doc["messages"][1]["content"][0], doc["messages"][2]["content"][0],
                  doc["messages"][2]["content"][2]]
        for block in blocks[:count - 2]:
            block["cache_control"] = mark
        return doc
    return mutate


CASES = [
    # Issue 18: at most four breakpoints, enforced by Anthropic since August 2026; relays add their
    # own (VicBilibily/GCMP#83).
    req("five cache_control breakpoints", _breakpoints(5), "AN-18", "/messages/2/content/2/cache_control", "error",
        _breakpoints(4)),
    req("custom tool without input_schema", deleting(["tools", 0, "input_schema"]), "AN-01", "/tools/0/input_schema",
        "error", same),
    req("input_schema not an object schema", setting(["tools", 0, "input_schema", "type"], "array"), "AN-01",
        "/tools/0/input_schema/type", "error", same),
    req("unknown tool type", setting(["tools", 1], {"type": "browser", "name": "b"}), "AN-01", "/tools/1/type",
        "error", setting(["tools", 1], {"type": "bash_20250124", "name": "bash"})),
    req("dotted tool name", setting(["tools", 0, "name"], "get.weather"), "AN-02", "/tools/0/name", "error",
        setting(["tools", 0, "name"], "get-weather")),
    req("name over 128", setting(["tools", 0, "name"], "n" * 129), "AN-02", "/tools/0/name", "error",
        setting(["tools", 0, "name"], "n" * 64)),
    req("name over 64 is portable no more", setting(["tools", 0, "name"], "n" * 65), "AN-02", "/tools/0/name",
        "warning", setting(["tools", 0, "name"], "n" * 64)),
    req("slash name in history", setting(["messages", 1, "content", 1, "name"], "mcp/get"), "AN-02",
        "/messages/1/content/1/name", "error", same),
    req("duplicate tool names", setting(["tools", 1], {"name": "get_weather", "input_schema": {"type": "object"}}),
        "AN-03", "/tools/1/name", "error", setting(["tools", 1], {"name": "get_time",
                                                                  "input_schema": {"type": "object"}})),
    req("server tool with the wrong name", setting(["tools", 1, "name"], "search"), "AN-04", "/tools/1/name", "error",
        same),
    req("allowed and blocked domains", doing(setting(["tools", 1, "allowed_domains"], ["a.org"]),
                                             setting(["tools", 1, "blocked_domains"], ["b.org"])),
        "AN-04", "/tools/1/blocked_domains", "error", setting(["tools", 1, "allowed_domains"], ["a.org"])),
    req("client tool_result for a server tool", doing(
        setting(["messages", 1, "content", 0], {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                                                "input": {"query": "x"}}),
        lambda doc: doc["messages"][2]["content"].insert(0, {"type": "tool_result", "tool_use_id": "srvtoolu_1",
                                                             "content": "x"}) or doc),
        "AN-04", "/messages/2/content/0/tool_use_id", "error", same,
        also=(("AN-04", "/messages/1/content/0/id", "error"),)),
    # Issue 18: a server tool use whose result is not in its own assistant message (a relay or a hook
    # that splits the turn); the result right after it is the near miss, and the last assistant
    # message, sent back to be continued after pause_turn, may still wait for its result.
    req("server tool use without its result", setting(["messages", 1, "content", 0], {
        "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}), "AN-04",
        "/messages/1/content/0/id", "error", lambda doc: doc["messages"][1]["content"].__setitem__(slice(0, 1), [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}]) or doc),
    req("server tool use answered by nothing before the next message", doing(
        _append({"role": "assistant", "content": [_SERVER_USE]}), _append({"role": "user", "content": "Go on"})),
        "AN-04", "/messages/3/content/0/id", "error", _append({"role": "assistant", "content": [_SERVER_USE]})),
    # A server call still in flight: the turns after it are only the results of the client tools
    # called beside it (accepted: pydantic-ai's test_in_flight_mcp_call_history_is_accepted); any
    # other content after it and Anthropic refuses the history.
    req("server tool use in flight, then a question", doing(
        _append({"role": "assistant", "content": [_MCP_USE, _CLIENT_USE]}),
        _append({"role": "user", "content": [_CLIENT_RESULT, {"type": "text", "text": "And now?"}]})),
        "AN-04", "/messages/3/content/0/id", "error", doing(
        _append({"role": "assistant", "content": [_MCP_USE, _CLIENT_USE]}),
        _append({"role": "user", "content": [_CLIENT_RESULT]}))),
    req("input as a JSON string", setting(["messages", 1, "content", 1, "input"], '{"city":"Oslo"}'), "AN-05",
        "/messages/1/content/1/input", "error", same),
    req("OpenAI-style id", _both_ids("functions.get_weather:0"), "AN-05", "/messages/1/content/1/id", "error",
        _both_ids("functions_get_weather_0")),
    req("tool_use id reused by a later turn", doing(
        _append({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                                   "input": {"city": "Oslo"}}]}),
        _append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "5°C"}]})),
        "AN-05", "/messages/3/content/0/id", "warning", doing(
        _append({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_3", "name": "get_weather",
                                                   "input": {"city": "Oslo"}}]}),
        _append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_3", "content": "5°C"}]}))),
    req("duplicate tool_use ids", doing(setting(["messages", 1, "content", 2, "id"], "toolu_1"),
                                        setting(["messages", 2, "content", 1, "tool_use_id"], "toolu_1")),
        "AN-05", "/messages/1/content/2/id", "error", same,
        also=(("AN-08", "/messages/2/content/1/tool_use_id", "error"),)),
    req("tool_result content block not allowed", setting(["messages", 2, "content", 0, "content"],
                                                         [{"type": "image_url"}]), "AN-06",
        "/messages/2/content/0/content/0", "error",
        setting(["messages", 2, "content", 0, "content"], [{"type": "image", "source": {
            "type": "base64", "media_type": "image/png", "data": "AA=="}}])),
    req("is_error not a boolean", setting(["messages", 2, "content", 0, "is_error"], "yes"), "AN-06",
        "/messages/2/content/0/is_error", "error", setting(["messages", 2, "content", 0, "is_error"], True)),
    # Consecutive messages of one role are one turn (the API merges them before pairing).
    req("tool_use without tool_result", deleting(["messages", 2, "content", 1]), "AN-07", "/messages/1/content/2/id",
        "error", _split(2, 1)),
    req("tool_use at the end of the conversation", deleting(["messages", 2]), "AN-07", "/messages/1/content/1/id",
        "error", same,
        also=(("AN-07", "/messages/1/content/2/id", "error"),)),
    req("orphan tool_result", setting(["messages", 2, "content", 1, "tool_use_id"], "toolu_x"), "AN-08",
        "/messages/2/content/1/tool_use_id", "error", _split(1, 2),
        also=(("AN-07", "/messages/1/content/2/id", "error"),)),
    req("text before tool_result", lambda doc: doc["messages"][2]["content"].insert(
        0, doc["messages"][2]["content"].pop()) or doc, "AN-09", "/messages/2/content/0", "error", _split(2, 2)),
    req("OpenAI string tool_choice", setting(["tool_choice"], "required"), "AN-10", "/tool_choice", "error",
        setting(["tool_choice"], {"type": "any"})),
    req("tool_choice names no tool", setting(["tool_choice"], {"type": "tool", "name": "nope"}), "AN-10",
        "/tool_choice/name", "error", setting(["tool_choice"], {"type": "tool", "name": "get_weather"})),
    req("tool_choice without tools", doing(deleting(["tools"]), setting(["messages"], [
        {"role": "user", "content": "x"}])), "AN-10", "/tool_choice", "error",
        doing(deleting(["tools"]), deleting(["tool_choice"]), setting(["messages"], [{"role": "user", "content": "x"}]))),
    req("forced tool with thinking", doing(_thinking(1024),
                                           setting(["tool_choice"], {"type": "any"})),
        "AN-11", "/tool_choice/type", "error",
        doing(setting(["thinking"], {"type": "adaptive"}), setting(["tool_choice"], {"type": "any"})),
        also=(("XL-14", "/messages/1/content/0", "error"),)),
    req("empty user message", setting(["messages", 0, "content"], ""), "AN-12", "/messages/0/content", "error",
        _append({"role": "assistant", "content": []})),
    # Only a system prompt, mapped to `system` by a gateway: the near miss keeps one user message.
    req("no messages", doing(deleting(["tools"]), deleting(["tool_choice"]), setting(["messages"], [])),
        "AN-12", "/messages", "error",
        doing(deleting(["tools"]), deleting(["tool_choice"]), setting(["messages"], [{"role": "user", "content": "x"}]))),
    req("upper-case input_schema type", setting(["tools", 0, "input_schema", "properties", "city", "type"], "STRING"),
        "XL-01", "/tools/0/input_schema/properties/city/type", "error", same),
    req("thinking block dropped before tool_use", _thinking(1024),
        "XL-14", "/messages/1/content/0", "error",
        doing(_thinking(1024),
              lambda doc: doc["messages"][1]["content"].insert(0, {"type": "thinking", "thinking": "…",
                                                                   "signature": "c2ln"}) or doc)),
    req("tool_choice null", setting(["tool_choice"], None), "XL-10", "/tool_choice", "info", same),
    # Value ranges from the dialect's home (dialects/anthropic/limits.py), issue 8.
    req("OpenAI's temperature scale", setting(["temperature"], 1.5), "AN-17", "/temperature", "error",
        setting(["temperature"], 1)),
    # -1 is the API's legacy "unset" (rules/tolerance.py): the near miss; -2 is out of range.
    req("negative top_k", setting(["top_k"], -2), "AN-17", "/top_k", "error", setting(["top_k"], -1)),
    req("max_tokens of zero", setting(["max_tokens"], 0), "AN-17", "/max_tokens", "error",
        setting(["max_tokens"], 1)),
    req("thinking budget below 1024", doing(_thinking(1023), _thinking_kept), "AN-17", "/thinking/budget_tokens",
        "error", doing(_thinking(1024), _thinking_kept)),
    req("max_tokens not above the thinking budget", doing(_thinking(2048, max_tokens=2048), _thinking_kept),
        "AN-16", "/max_tokens", "error", doing(_thinking(2048, max_tokens=2049), _thinking_kept)),
    req("max_tokens below the thinking budget, budget also too small", doing(_thinking(1000, max_tokens=500),
                                                                            _thinking_kept),
        "AN-16", "/max_tokens", "error", doing(_thinking(1024, max_tokens=1025), _thinking_kept),
        also=(("AN-17", "/thinking/budget_tokens", "error"),)),
    # Interleaved thinking (a beta header) makes the budget the whole turn's, across its thinking blocks:
    # the documented exception, the same bytes accepted (the header's case is near_profile's).
    req("budget above max_tokens without interleaved thinking", doing(_thinking(4096, max_tokens=2048),
                                                                      _thinking_kept),
        "AN-16", "/max_tokens", "error", doing(_thinking(4096, max_tokens=2048), _thinking_kept),
        near_profile=_beta("context-1m-2025-08-07", "interleaved-thinking-2025-05-14")),
    req("MCP toolset without the MCP connector's beta", _MCP_TOOLSET, "AN-01", "/tools/1/type", "error",
        _MCP_TOOLSET, near_profile=_beta("mcp-client-2025-11-20")),
    resp("stop_reason end_turn with tool_use", setting(["stop_reason"], "end_turn"), "AN-13", "/stop_reason",
         "warning", same),
    resp("stop_reason tool_use without tool_use", doing(deleting(["content", 1])), "AN-13", "/stop_reason", "warning",
         doing(deleting(["content", 1]), setting(["stop_reason"], "end_turn"))),
    resp("response input not an object", setting(["content", 1, "input"], "{}"), "AN-05", "/content/1/input", "error",
         same),
    stream("delta for a block never started", setting([3, "index"], 5), "AN-13", "/3/index", "error", same,
        also=(("AN-13", "/7", "error"),)),
    stream("partial_json routed to the wrong block", doing(setting([4, "index"], 0)), "AN-13", "/7", "error", same,
        also=(("AN-13", "/8", "error"),)),
    # The documented mid-stream error event ends the stream: open blocks and no stop_reason are its verdict.
    stream("block never stopped", lambda events: events[:8], "AN-13", "/2", "error",
           lambda events: events[:8] + [{"type": "error", "error": {"type": "overloaded_error",
                                                                    "message": "Overloaded"}}],
           also=(("AN-13", "", "warning"),)),
    stream("text_delta into a tool_use block", setting([3, "delta"], {"type": "text_delta", "text": "x"}), "AN-13",
           "/3/delta/type", "error", same,
        also=(("AN-13", "/7", "error"),)),
    stream("block started twice", setting([2, "index"], 0), "AN-13", "/2/index", "error", same,
        also=(("AN-13", "/4/index", "error"), ("AN-13", "/5/index", "error"), ("AN-13", "/8/index", "error"),)),
    stream("stop_reason end_turn after tool_use", setting([9, "delta", "stop_reason"], "end_turn"), "AN-13",
           "/9/delta/stop_reason", "warning", same),
    # Without fine-grained tool streaming Anthropic buffers and validates each tool input before it streams
    # it: a joined input that is not JSON was mangled on the way (an error). With the beta it streams
    # unvalidated and documents invalid or cut input (a warning, below); valid input is fine either way.
    stream("joined input cut short", setting([6, "delta", "partial_json"], '"Os'), "AN-13", "/7", "error",
           same),
    stream("joined input cut short under fine-grained tool streaming", setting([6, "delta", "partial_json"], '"Os'),
           "AN-13", "/7", "warning", same, _beta(FINE_GRAINED)),
    stream("streamed tool_use id invalid", setting([1, "content_block", "id"], "functions.get_weather:0"), "AN-05",
           "/1/content_block/id", "error", same),
    # The spec layer: the Anthropic SDK's request types beneath the hand-written rules (issue 8).
    req("max_tokens as a string", setting(["max_tokens"], "100"), "AN-14", "/max_tokens", "error",
        setting(["max_tokens"], 4096)),
    req("file block in a user message", setting(["messages", 0, "content"], [
        {"type": "file", "file": {"file_id": "file_1"}}]), "AN-14", "/messages/0/content/0", "error",
        setting(["messages", 0, "content"], [{"type": "document", "source": {"type": "file", "file_id": "file_1"}}]),
        near_profile=_beta(FILES_API)),
    # Issue 18: a Files API source without the beta that defines it, in a message and in a tool result.
    req("document source of type file without the Files API beta", setting(["messages", 0, "content"], [
        {"type": "document", "source": {"type": "file", "file_id": "file_1"}}]), "AN-14",
        "/messages/0/content/0/source/type", "error",
        setting(["messages", 0, "content"], [{"type": "document", "source": {"type": "file", "file_id": "file_1"}}]),
        near_profile=_beta(FILES_API)),
    req("image source of type file in a tool result", setting(["messages", 2, "content", 0, "content"], [
        {"type": "image", "source": {"type": "file", "file_id": "file_2"}}]), "AN-14",
        "/messages/2/content/0/content/0/source/type", "error",
        setting(["messages", 2, "content", 0, "content"], [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}])),
    req("image source url null", setting(["messages", 0, "content"], [
        {"type": "image", "source": {"type": "url", "url": None}}]), "AN-14", "/messages/0/content/0/source/url",
        "error", setting(["messages", 0, "content"], [{"type": "image", "source": {"type": "url",
                                                                                  "url": "https://x/a.png"}}])),
    req("metadata.user_id as a number", setting(["metadata"], {"user_id": 5}), "AN-14", "/metadata/user_id",
        "error", setting(["metadata"], {"user_id": "u-5"})),
    req("system as a list of strings", setting(["system"], ["Be brief."]), "AN-14", "/system/0", "error",
        setting(["system"], [{"type": "text", "text": "Be brief."}])),
    # Issue 18: a container in OpenAI's code_interpreter shape, and the beta's output_format in OpenAI's
    # response_format shape (the API still reads the retired field: rules/tolerance.py).
    req("container in OpenAI's shape", setting(["container"], {"type": "auto"}), "AN-14", "/container/type",
        "error", setting(["container"], {"id": "container_011CPR5CNjB747bTd36fQLFk"})),
    req("container with skills and an OpenAI field", setting(["container"], {
        "skills": [{"type": "anthropic", "skill_id": "pptx", "version": "latest"}], "file_ids": ["file_1"]}),
        "AN-14", "/container/file_ids", "error", setting(["container"], {
            "skills": [{"type": "anthropic", "skill_id": "pptx", "version": "latest"}]})),
    req("output_format in OpenAI's shape", setting(["output_format"], {
        "type": "json_schema", "json_schema": {"name": "weather", "schema": {"type": "object"}}}), "AN-14",
        "/output_format", "error", setting(["output_format"], {"type": "json_schema", "schema": {"type": "object"}})),
    # Beta flags in the body (Bedrock's InvokeModel carries them as anthropic_beta): effort is one Vertex
    # refuses ("Unexpected value(s) `effort-2025-11-24` for the `anthropic-beta` header", claude-code#34802);
    # interleaved thinking is one it takes (claude-code#1229, enabled on Vertex for Claude 4): the near miss.
    req("a beta flag Vertex does not take", setting(["anthropic_beta"], ["effort-2025-11-24"]), "AN-19",
        "/anthropic_beta/0", "warning", setting(["anthropic_beta"], ["interleaved-thinking-2025-05-14"]),
        profile="vertex-anthropic"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rule(case):
    assert_case(case)


def test_valid_baselines_have_no_violations():
    assert check.check_request(anthropic_request(), ANT) == []
    assert check.check_response(anthropic_response(), ANT) == []
    assert check.check_stream(named_sse(anthropic_events()), ANT) == []


def test_reassembly_joins_partial_json_per_block_index():
    message = check.reassemble(named_sse(anthropic_events()), ANT)
    assert [(b["id"], b["input"]) for b in message["content"]] == [("toolu_a", {"city": "Oslo"}),
                                                                    ("toolu_b", {"city": "Rome"})]
    assert (message["stop_reason"], message["usage"]) == ("tool_use", {"input_tokens": 1, "output_tokens": 9})


def test_mcp_connector_calls_and_results_in_the_assistant_message_are_paired():
    payload = anthropic_request()
    payload["messages"][1]["content"][0:1] = [
        {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "lookup", "server_name": "docs", "input": {}},
        {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "content": [{"type": "text", "text": "x"}]}]
    assert check.check_request(payload, ANT) == []
    payload["messages"][1]["content"][1]["tool_use_id"] = "mcptoolu_2"
    assert [(v.rule, v.pointer) for v in check.check_request(payload, ANT)] == [
        ("AN-04", "/messages/1/content/1/tool_use_id"), ("AN-04", "/messages/1/content/0/id")]


def test_a_stream_ended_by_the_documented_error_event_is_not_a_broken_stream():
    """`event: error` mid-stream (overloaded_error) ends the message: open blocks and the missing
    stop_reason are the provider's verdict. What arrived before it is still reassembled and checked."""
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    body = named_sse(anthropic_events()[:6] + [overloaded])
    assert check.check_stream(body, ANT) == []
    message = check.reassemble(body, ANT)
    assert [(b["id"], b["input"]) for b in message["content"]] == [("toolu_a", '{"city":'), ("toolu_b", {"city": "Rome"})]
    # The same events without the error event are a stream cut short.
    assert sorted((v.rule, v.pointer, v.severity.value) for v in check.check_stream(
        named_sse(anthropic_events()[:6]), ANT)) == [("AN-13", "", "warning"), ("AN-13", "/1", "error"),
                                                     ("AN-13", "/1", "error"), ("AN-13", "/2", "error")]


def test_fine_grained_tool_streaming_says_why_the_input_is_not_json():
    """The beta's documented behaviour, not a broken stream: the finding says so, and what the client
    can do with the input it cannot run."""
    events = anthropic_events()
    events[6]["delta"]["partial_json"] = '"Os'
    events[9]["delta"]["stop_reason"] = "max_tokens"
    [finding] = check.check_stream(named_sse(events), ANT, _beta("context-1m-2025-08-07", FINE_GRAINED))
    assert (finding.rule, finding.pointer, finding.severity.value, finding.effect.value) == (
        "AN-13", "/7", "warning", "breaks client")
    assert finding.message == ("joined partial_json of block toolu_a is not JSON (e.g. Python literal syntax or "
                               "truncated text): '{\"city\":\"Os'")
    assert finding.why == (
        "With fine-grained tool streaming (anthropic-beta: fine-grained-tool-streaming-2025-05-14) Anthropic "
        "streams tool input without buffering or validating it, and documents that the joined input may be "
        "invalid or partial JSON, above all when the turn stops at max_tokens: the client cannot run this call "
        "as it is.")
    assert finding.hint == ("Answer the call with an is_error tool_result that quotes the input inside a JSON "
                            "object, or retry the turn with a larger max_tokens.")



def test_fix_drops_the_earliest_breakpoints_beyond_four():
    payload = _breakpoints(5)(anthropic_request())
    fixed = fix(payload, ANT)
    assert [(n.rule, n.pointer, n.action) for n in fixed.repairs if n.rule == "AN-18"] == [
        ("AN-18", "/tools/0/cache_control", "removed")]
    assert "cache_control" not in fixed.payload["tools"][0]
    assert [v for v in check.check_request(fixed.payload, ANT) if v.rule == "AN-18"] == []


def test_beta_flags_from_the_header_are_judged_by_the_provider_that_gets_them():
    """AN-19 names each flag of the anthropic-beta header that the endpoint does not take; Anthropic's
    own endpoint takes them all, and a flag Vertex takes is no finding there."""
    header = [("anthropic-beta", "interleaved-thinking-2025-05-14, effort-2025-11-24,prompt-caching-scope-2026-01-05")]
    vertex = profiles.with_headers(profiles.get("vertex-anthropic", Dialect.ANTHROPIC), header)
    assert [(v.rule, v.severity.value, v.pointer, v.message) for v in check.check_request(anthropic_request(), ANT,
                                                                                          vertex)] == [
        ("AN-19", "warning", "", "anthropic-beta effort-2025-11-24 is not a beta flag vertex-anthropic takes"),
        ("AN-19", "warning", "", "anthropic-beta prompt-caching-scope-2026-01-05 is not a beta flag vertex-anthropic "
                                 "takes")]
    assert check.check_request(anthropic_request(), ANT, profiles.with_headers(profiles.get(None, Dialect.ANTHROPIC),
                                                                               header)) == []
    taken = [("anthropic-beta", "interleaved-thinking-2025-05-14,context-1m-2025-08-07")]
    assert check.check_request(anthropic_request(), ANT, profiles.with_headers(
        profiles.get("vertex-anthropic", Dialect.ANTHROPIC), taken)) == []
