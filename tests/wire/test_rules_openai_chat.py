"""OpenAI Chat Completions rules (OC-* in docs/rules.md): each trips on one defect and stays quiet on the
nearest valid payload."""

from __future__ import annotations

import pytest

from inspector.wire import check, profiles
from inspector.wire.dialect import Dialect

from .rule_cases import assert_case, deleting, doing, found, makers, same, setting
from .wire_payloads import chat_chunks, chat_request, chat_response, sse

CHAT = "openai-chat"

req, resp, stream = makers(CHAT, chat_request, chat_response, chat_chunks)


def _tools(count):
    return setting(["tools"], [{"type": "function", "function": {"name": f"t{i}"}} for i in range(count)])


def _strict(parallel):
    def mutate(doc):
        fn = doc["tools"][0]["function"]
        fn["strict"] = True
        fn["parameters"]["additionalProperties"] = False
        fn["parameters"]["required"] = ["city", "days"]
        if parallel is not None:
            doc["parallel_tool_calls"] = parallel
        return doc
    return mutate


def _append(message):
    def mutate(doc):
        doc["messages"].append(message)
        return doc
    return mutate


def _call(position=0):
    return ["messages", 2, "tool_calls", position]


_FILTERED = {"message": "The response was filtered due to the prompt triggering Azure Content management policy.",
             "type": None, "param": "prompt", "code": "content_filter", "status": 400}

LEGACY = doing(
    setting(["functions"], [{"name": "lookup", "parameters": {"type": "object", "properties": {}}}]),
    _append({"role": "assistant", "content": None, "function_call": {"name": "lookup", "arguments": "{}"}}),
)

CASES = [
    req("built-in tool in Chat", setting(["tools", 1], {"type": "web_search"}), "OC-01", "/tools/1/type", "error",
        setting(["tools", 1], {"type": "custom", "custom": {"name": "fmt"}})),
    req("built-in degraded into an empty-name function", setting(["tools", 1], {"type": "function", "function": {
        "name": "", "parameters": None}}), "XL-09", "/tools/1/function/name", "error",
        setting(["tools", 1], {"type": "function", "function": {"name": "web_search", "parameters": None}}),
        # OpenAI reads the null as absent: the spec layer notes it (OC-28 info), as OC-09 does.
        also=(("OC-28", "/tools/1/function/parameters", "info"),)),
    req("function tool without definition", setting(["tools", 1], {"type": "function"}), "OC-01",
        "/tools/1/function", "error", same),
    req("dotted tool name", setting(["tools", 0, "function", "name"], "get.weather"), "OC-02",
        "/tools/0/function/name", "error", setting(["tools", 0, "function", "name"], "get_weather-2")),
    req("name over 64 characters", setting(["tools", 0, "function", "name"], "a" * 65), "OC-02",
        "/tools/0/function/name", "error", setting(["tools", 0, "function", "name"], "a" * 64)),
    req("slash name in history", setting(_call() + ["function", "name"], "mcp/x/get"), "OC-02",
        "/messages/2/tool_calls/0/function/name", "error", setting(_call() + ["function", "name"], "mcp_x_get")),
    # api.openai.com accepts long descriptions since 2025-12; Azure still enforces 1024.
    req("description over 1024 on Azure", setting(["tools", 0, "function", "description"], "d" * 1025), "OC-03",
        "/tools/0/function/description", "error", setting(["tools", 0, "function", "description"], "d" * 1024),
        profile="azure-openai"),
    req("description over 1024 on api.openai.com", setting(["tools", 0, "function", "description"], "d" * 15664),
        "OC-03", "/tools/0/function/description", "info",
        setting(["tools", 0, "function", "description"], "d" * 1024)),
    req("129 tools", doing(_tools(129), deleting(["tool_choice"])), "OC-04", "/tools", "error",
        doing(_tools(128), deleting(["tool_choice"]))),
    req("upper-case type in parameters", setting(["tools", 0, "function", "parameters", "properties", "city", "type"],
                                                 "BOOLEAN"), "OC-05",
        "/tools/0/function/parameters/properties/city/type", "error",
        setting(["tools", 0, "function", "parameters", "properties", "city", "type"], "boolean")),
    req("parameters root not an object", setting(["tools", 0, "function", "parameters", "type"], "array"), "OC-05",
        "/tools/0/function/parameters/type", "error", setting(["tools", 0, "function", "parameters", "type"], "object")),
    req("strict without additionalProperties:false",
        setting(["tools", 0, "function", "strict"], True), "OC-06",
        "/tools/0/function/parameters/additionalProperties", "error", _strict(False),
        also=(("OC-06", "/tools/0/function/parameters/required", "error"), ("OC-07", "/tools/0/function/strict", "info"),)),
    req("strict with optional property", doing(_strict(False), setting(
        ["tools", 0, "function", "parameters", "required"], ["city"])), "OC-06",
        "/tools/0/function/parameters/required", "error", _strict(False)),
    # A tool without arguments under strict (issue 18): OpenAI reads absent parameters as a bare object,
    # and a bare object has no additionalProperties:false; the empty closed object is accepted.
    req("strict without parameters", doing(deleting(["tools", 1, "function", "parameters"]),
                                           setting(["tools", 1, "function", "strict"], True),
                                           setting(["parallel_tool_calls"], False)), "OC-06",
        "/tools/1/function/parameters", "error",
        doing(setting(["tools", 1, "function", "parameters"], {"type": "object", "properties": {}, "required": [],
                                                                "additionalProperties": False}),
              setting(["tools", 1, "function", "strict"], True), setting(["parallel_tool_calls"], False))),
    # A function without arguments declared as a bare object (MCP servers list `{"type": "object"}`):
    # OpenAI answers 400 "In context=(), object schema missing properties" (spring-ai#4776,
    # kubernetes-mcp-server#340, forgecode#1359); the empty map is accepted, and so is a nested
    # free-form object. Servers that only speak the dialect take the bare root.
    req("bare object parameters", setting(["tools", 0, "function", "parameters"], {"type": "object"}), "OC-05",
        "/tools/0/function/parameters", "error",
        setting(["tools", 0, "function", "parameters"], {"type": "object", "properties": {}})),
    req("bare object parameters near a nested free-form object",
        setting(["tools", 0, "function", "parameters"], {"type": "object", "additionalProperties": True}), "OC-05",
        "/tools/0/function/parameters", "error",
        setting(["tools", 0, "function", "parameters"], {"type": "object", "properties": {"filter": {"type": "object"}}})),
    req("bare object parameters off OpenAI", setting(["tools", 0, "function", "parameters"], {"type": "object"}),
        "OC-05", "/tools/0/function/parameters", "error", same, near_profile="openai-compatible"),
    req("strict with a bare object", doing(setting(["tools", 1, "function", "parameters"], {"type": "object"}),
                                           setting(["tools", 1, "function", "strict"], True),
                                           setting(["parallel_tool_calls"], False)), "OC-06",
        "/tools/1/function/parameters/additionalProperties", "error",
        doing(setting(["tools", 1, "function", "parameters"], {"type": "object", "properties": {},
                                                                "additionalProperties": False}),
              setting(["tools", 1, "function", "strict"], True), setting(["parallel_tool_calls"], False)),
        also=(("OC-06", "/tools/1/function/parameters/properties", "error"),)),
    req("strict with a closed object without properties", doing(
        setting(["tools", 1, "function", "parameters"], {"type": "object", "additionalProperties": False}),
        setting(["tools", 1, "function", "strict"], True), setting(["parallel_tool_calls"], False)), "OC-06",
        "/tools/1/function/parameters/properties", "error",
        doing(setting(["tools", 1, "function", "parameters"], {"type": "object", "additionalProperties": False}),
              setting(["tools", 1, "function", "strict"], False), setting(["parallel_tool_calls"], False))),
    # Present in ~8 % of accepted requests (SDKs set strict by default): a note, not a warning.
    req("strict with parallel calls", _strict(None), "OC-07", "/tools/0/function/strict", "info", _strict(False)),
    req("strict with parallel calls on", _strict(True), "OC-07", "/parallel_tool_calls", "info", _strict(False)),
    req("flat Responses tool_choice", setting(["tool_choice"], {"type": "function", "name": "get_weather"}),
        "OC-08", "/tool_choice", "error",
        setting(["tool_choice"], {"type": "function", "function": {"name": "get_weather"}})),
    req("tool_choice string unknown", setting(["tool_choice"], "any"), "OC-08", "/tool_choice", "error",
        setting(["tool_choice"], "required")),
    req("tools null", doing(setting(["tools"], None), deleting(["tool_choice"])), "OC-09", "/tools", "info",
        deleting(["tool_choice"])),
    req("functions empty", setting(["functions"], []), "OC-09", "/functions", "error", same),
    req("tool_choice null", setting(["tool_choice"], None), "OC-09", "/tool_choice", "info", deleting(["tool_choice"])),
    req("function_call null", setting(["function_call"], None), "OC-09", "/function_call", "info", same),
    req("parallel_tool_calls not boolean", setting(["parallel_tool_calls"], "yes"), "OC-10", "/parallel_tool_calls",
        "error", setting(["parallel_tool_calls"], True)),
    req("tool_choice names no tool", setting(["tool_choice"], {"type": "function", "function": {"name": "nope"}}),
        "OC-11", "/tool_choice", "warning",
        setting(["tool_choice"], {"type": "function", "function": {"name": "search_docs"}})),
    req("tool_choice without tools (compat)", doing(deleting(["tools"]), setting(["tool_choice"], "required"),
                                                    setting(["messages"], [{"role": "user", "content": "x"}])),
        "OC-11", "/tool_choice", "error",
        doing(deleting(["tools"]), setting(["tool_choice"], "none"), setting(["messages"], [{"role": "user",
                                                                                             "content": "x"}])),
        profile="openai-compatible"),
    req("assistant tool_calls without content key (compat)", deleting(["messages", 2, "content"]), "OC-12",
        "/messages/2/content", "warning", same, profile="openai-compatible"),
    req("assistant content empty array", setting(["messages", 2, "content"], []), "OC-12", "/messages/2/content",
        "error", setting(["messages", 2, "content"], [{"type": "text", "text": "Checking."}])),
    req("assistant content image part", setting(["messages", 5, "content"], [{"type": "image_url"}]), "OC-12",
        "/messages/5/content/0", "error", setting(["messages", 5, "content"], [{"type": "refusal", "refusal": "no"}])),
    req("tool_calls empty", setting(["messages", 5, "tool_calls"], []), "OC-13", "/messages/5/tool_calls", "error",
        setting(["messages", 5, "tool_calls"], None)),
    req("arguments as an object", setting(_call() + ["function", "arguments"], {"city": "Oslo"}), "OC-14",
        "/messages/2/tool_calls/0/function/arguments", "error",
        setting(_call() + ["function", "arguments"], '{"city": "Oslo"}')),
    req("tool call without id", deleting(_call() + ["id"]), "OC-14", "/messages/2/tool_calls/0/id", "error", same,
        also=(("OC-18", "/messages/3/tool_call_id", "error"),)),
    req("tool call type not function", setting(_call() + ["type"], "tool"), "OC-14", "/messages/2/tool_calls/0/type",
        "error", same),
    req("double-encoded arguments", setting(_call() + ["function", "arguments"], '"{\\"city\\":\\"Oslo\\"}"'),
        "OC-15", "/messages/2/tool_calls/0/function/arguments", "warning",
        setting(_call() + ["function", "arguments"], '{"city":"Oslo"}')),
    req("double-encoded arguments (strict compatible)",
        setting(_call() + ["function", "arguments"], '"{\\"city\\":\\"Oslo\\"}"'), "OC-15",
        "/messages/2/tool_calls/0/function/arguments", "error", same, profile="openai-compatible"),
    req("array arguments", setting(_call() + ["function", "arguments"], '[{"city":"Oslo"}]'), "OC-15",
        "/messages/2/tool_calls/0/function/arguments", "warning", setting(_call() + ["function", "arguments"], "{}")),
    req("scalar arguments", setting(_call() + ["function", "arguments"], '"Oslo"'), "OC-15",
        "/messages/2/tool_calls/0/function/arguments", "warning", same),
    req("concatenated arguments", setting(_call() + ["function", "arguments"], '{"a":1}{"a":1}'), "OC-15",
        "/messages/2/tool_calls/0/function/arguments", "warning", same),
    req("Python literal arguments", setting(_call() + ["function", "arguments"], "{'city': 'Oslo'}"), "OC-15",
        "/messages/2/tool_calls/0/function/arguments", "warning", same),
    req("41-character id on Azure", doing(setting(_call() + ["id"], "c" * 41),
                                          setting(["messages", 3, "tool_call_id"], "c" * 41)),
        "OC-16", "/messages/2/tool_calls/0/id", "error",
        doing(setting(_call() + ["id"], "c" * 40), setting(["messages", 3, "tool_call_id"], "c" * 40)),
        profile="azure-openai"),
    req("51-character fc_ id on api.openai.com", doing(setting(_call() + ["id"], "fc_" + "x" * 48),
                                                       setting(["messages", 3, "tool_call_id"], "fc_" + "x" * 48)),
        "OC-16", "/messages/2/tool_calls/0/id", "warning", same),
    req("tool message without content", deleting(["messages", 3, "content"]), "OC-17", "/messages/3/content", "error",
        setting(["messages", 3, "content"], "")),
    req("tool message with an image part", setting(["messages", 3, "content"], [
        {"type": "image_url", "image_url": {"url": "data:,"}}]), "OC-17", "/messages/3/content/0", "error",
        setting(["messages", 3, "content"], [{"type": "text", "text": "4°C"}])),
    # A server that only speaks the dialect (Ollama, ruby_llm's ollama_qwen3 cassettes) takes the image:
    # a warning there, the same bytes an error for OpenAI's own endpoint.
    req("tool message with an image part, to a local server", setting(["messages", 3, "content"], [
        {"type": "image_url", "image_url": {"url": "data:,"}}]), "OC-17", "/messages/3/content/0", "warning",
        setting(["messages", 3, "content"], [{"type": "text", "text": "4°C"}]),
        profile=profiles.for_upstream("http://localhost:11434/v1", Dialect.OPENAI_CHAT)),
    req("tool message without tool_call_id", deleting(["messages", 3, "tool_call_id"]), "OC-17",
        "/messages/3/tool_call_id", "error", same,
        also=(("OC-19", "/messages/2/tool_calls/0/id", "error"),)),
    req("orphan tool message", _append({"role": "tool", "tool_call_id": "call_x", "content": "?"}), "OC-18",
        "/messages/7/tool_call_id", "error", doing(_append({"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_x", "type": "function", "function": {"name": "search_docs", "arguments": "{}"}}]}),
            _append({"role": "tool", "tool_call_id": "call_x", "content": "?"}))),
    req("tool message after another message", doing(
        setting(["messages", 4], {"role": "user", "content": "wait"}),
        _append({"role": "tool", "tool_call_id": "call_2", "content": "18°C"})), "OC-18", "/messages/7/tool_call_id",
        "error", same,
        also=(("OC-19", "/messages/2/tool_calls/1/id", "error"),)),
    req("unanswered call", deleting(["messages", 4]), "OC-19", "/messages/2/tool_calls/1/id", "error",
        lambda doc: doc["messages"].insert(3, doc["messages"].pop(4)) or doc),
    req("unanswered call at the end", _append({"role": "assistant", "tool_calls": [
        {"id": "call_9", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}),
        "OC-19", "/messages/7/tool_calls/0/id", "error", same,
        also=(("OC-12", "/messages/7/content", "info"),)),
    req("legacy function message without name", doing(LEGACY, _append({"role": "function", "content": "ok"})),
        "OC-20", "/messages/8/name", "error",
        doing(LEGACY, _append({"role": "function", "name": "lookup", "content": "ok"}))),
    req("legacy function message content as parts", doing(LEGACY, _append({
        "role": "function", "name": "lookup", "content": [{"type": "text", "text": "ok"}]})),
        "OC-27", "/messages/8/content", "error",
        doing(LEGACY, _append({"role": "function", "name": "lookup", "content": None}))),
    req("legacy function_call choice invalid", setting(["function_call"], "required"), "OC-20", "/function_call",
        "error", setting(["function_call"], "auto")),
    req("duplicate tool names", setting(["tools", 1, "function", "name"], "get_weather"), "XL-03",
        "/tools/1/function/name", "error", same),
    req("tools and functions share a name", setting(["functions"], [{"name": "search_docs"}]), "XL-03",
        "/functions/0/name", "error", setting(["functions"], [{"name": "lookup"}])),
    req("call id reused across turns", doing(_append({"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}),
        _append({"role": "tool", "tool_call_id": "call_1", "content": "x"})), "XL-04", "/messages/7/tool_calls/0/id",
        "error", doing(_append({"role": "assistant", "tool_calls": [
            {"id": "call_3", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}),
            _append({"role": "tool", "tool_call_id": "call_3", "content": "x"})),
        also=(("OC-12", "/messages/7/content", "info"),)),
    req("orphan legacy function message", _append({"role": "function", "name": "lookup", "content": "x"}), "XL-05",
        "/messages/7/name", "warning", doing(LEGACY, _append({"role": "function", "name": "lookup",
                                                                "content": "x"}))),
    req("tool_calls null", setting(["messages", 5, "tool_calls"], None), "XL-10", "/messages/5/tool_calls", "info",
        same),
    # Alone, a response cannot tell a forced call (OpenAI answers "stop" by design) from a broken server:
    # a note; beside the request it is judged (tests/wire/test_rules_exchange.py).
    resp("finish_reason stop with tool calls", setting(["choices", 0, "finish_reason"], "stop"), "OC-22",
         "/choices/0/finish_reason", "info", same),
    resp("finish_reason tool_calls without calls", doing(deleting(["choices", 0, "message", "tool_calls"]),
                                                         setting(["choices", 0, "message", "content"], "hi")),
         "OC-22", "/choices/0/finish_reason", "warning",
         doing(deleting(["choices", 0, "message", "tool_calls"]), setting(["choices", 0, "message", "content"], "hi"),
               setting(["choices", 0, "finish_reason"], "stop"))),
    resp("response arguments as object", setting(["choices", 0, "message", "tool_calls", 0, "function",
                                                  "arguments"], {"city": "Oslo"}), "OC-14",
         "/choices/0/message/tool_calls/0/function/arguments", "error", same),
    resp("response tool_calls empty", setting(["choices", 0, "message", "tool_calls"], []), "OC-13",
         "/choices/0/message/tool_calls", "warning", same,
        also=(("OC-22", "/choices/0/finish_reason", "warning"), ("OC-25", "/choices/0/message", "error"),)),
    resp("no choices", setting(["choices"], []), "OC-24", "/choices", "error",
         setting(["choices", 0, "message"], {"role": "assistant", "content": ""})),
    # Azure's prompt filter, as traceloop/openllmetry's test_azure cassettes hold it under a 200; OpenRouter too.
    resp("an error body under a success status", doing(deleting(["choices"]), setting(["error"], _FILTERED)),
         "OC-24", "/error", "error", setting(["error"], _FILTERED)),
    resp("assistant message with neither content nor calls", deleting(["choices", 0, "message", "tool_calls"]),
         "OC-25", "/choices/0/message", "error",
         doing(deleting(["choices", 0, "message", "tool_calls"]),
               setting(["choices", 0, "message", "refusal"], "I can't help with that.")),
         also=(("OC-22", "/choices/0/finish_reason", "warning"),)),
    resp("empty message is not explained by a filter", doing(deleting(["choices", 0, "message", "tool_calls"]),
                                                            setting(["choices", 0, "finish_reason"], "stop")),
         "OC-25", "/choices/0/message", "error",
         doing(deleting(["choices", 0, "message", "tool_calls"]), setting(["choices", 0, "finish_reason"],
                                                                          "content_filter"))),
    resp("response tool call without a name", deleting(["choices", 0, "message", "tool_calls", 0, "function", "name"]),
         "OC-26", "/choices/0/message/tool_calls/0/function/name", "error",
         setting(["choices", 0, "message", "tool_calls", 0, "function", "name"], "search_docs")),
    resp("response legacy function_call without a name", setting(["choices", 0], {
        "index": 0, "finish_reason": "function_call",
        "message": {"role": "assistant", "content": None, "function_call": {"arguments": "{}"}}}),
         "OC-26", "/choices/0/message/function_call/name", "error", setting(["choices", 0], {
             "index": 0, "finish_reason": "function_call",
             "message": {"role": "assistant", "content": None, "function_call": {"name": "lookup", "arguments": "{}"}}})),
    stream("delta without index", deleting([3, "choices", 0, "delta", "tool_calls", 0, "index"]), "OC-21",
           "/3/choices/0/delta/tool_calls/0/index", "error", same,
        also=(("OC-15", "/5/choices/0/delta/tool_calls/0/function/arguments", "warning"),)),
    stream("first delta without id", deleting([1, "choices", 0, "delta", "tool_calls", 0, "id"]), "OC-21",
           "/1/choices/0/delta/tool_calls/0/id", "error",
           setting([3, "choices", 0, "delta", "tool_calls", 0, "type"], "function")),
    stream("first delta without name", deleting([2, "choices", 0, "delta", "tool_calls", 0, "function", "name"]),
           "OC-21", "/2/choices/0/delta/tool_calls/0/function/name", "error", same),
    stream("id repeated on a later delta", setting([3, "choices", 0, "delta", "tool_calls", 0, "id"], "call_a"),
           "OC-21", "/3/choices/0/delta/tool_calls/0/id", "error", same),
    stream("name repeated on a later delta", setting([3, "choices", 0, "delta", "tool_calls", 0, "function", "name"],
                                                     "get_weather"),
           "OC-21", "/3/choices/0/delta/tool_calls/0/function/name", "error", same),
    stream("index -1", setting([4, "choices", 0, "delta", "tool_calls", 0, "index"], -1), "XL-12",
           "/4/choices/0/delta/tool_calls/0/index", "error",
           lambda events: events.insert(5, events.pop(4)) or events),
    stream("duplicate summary chunk", lambda events: events[:-1] + [
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "function": {
            "arguments": '{"city":"Rome"}'}}]}, "finish_reason": None}]}] + events[-1:],
           "XL-12", "/6/choices/0/delta/tool_calls/0/function/arguments", "error", same,
        also=(("OC-15", "/6/choices/0/delta/tool_calls/0/function/arguments", "warning"),)),
    stream("stream ends with stop despite calls", setting([6, "choices", 0, "finish_reason"], "stop"), "OC-22",
           "/6/choices/0/finish_reason", "info", same),
    stream("usage chunk without usage", lambda events: events + [{"choices": []}], "OC-23", "/7/choices", "info",
           lambda events: events + [{"choices": [], "usage": {"total_tokens": 3}}]),
    # Value ranges from the dialect's home (dialects/openai_chat/limits.py); the spec layer says the
    # same on api.openai.com and yields to the hand-written rule at the same place (issue 8).
    req("temperature above 2", setting(["temperature"], 2.5), "OC-30", "/temperature", "error",
        setting(["temperature"], 2)),
    req("max_completion_tokens of zero", setting(["max_completion_tokens"], 0), "OC-30", "/max_completion_tokens",
        "error", setting(["max_completion_tokens"], 1)),
    req("temperature above 2 on a compatible server", setting(["temperature"], 2.5), "OC-30", "/temperature",
        "error", same, profile="openai-compatible", near_profile="mistral"),
    # The spec layer: OpenAI's published schema beneath the hand-written rules (issue 8).
    req("top_logprobs above the published maximum", doing(setting(["logprobs"], True), setting(["top_logprobs"], 21)),
        "OC-28", "/top_logprobs", "error", doing(setting(["logprobs"], True), setting(["top_logprobs"], 20))),
    req("n below the published minimum", setting(["n"], 0), "OC-28", "/n", "error", setting(["n"], 1)),
    req("image_url.url null", setting(["messages", 1, "content"], [{"type": "image_url", "image_url": {"url": None}}]),
        "OC-28", "/messages/1/content/0/image_url/url", "error",
        setting(["messages", 1, "content"], [{"type": "image_url", "image_url": {"url": "https://x/a.png"}}])),
    req("image part in a system message", setting(["messages", 0], {"role": "system", "content": [
        {"type": "image_url", "image_url": {"url": "https://x/a.png"}}]}), "OC-28", "/messages/0/content/0", "error",
        setting(["messages", 0], {"role": "system", "content": [{"type": "text", "text": "Be brief."}]})),
    req("response_format of an unknown type", setting(["response_format"], {"type": "json"}), "OC-28",
        "/response_format", "error", setting(["response_format"], {"type": "json_object"})),
    req("unknown top-level field", setting(["max_output_tokens"], 100), "OC-29", "/max_output_tokens", "error",
        setting(["max_completion_tokens"], 100)),
    # Inline files (issue 18): Chat's file part takes file_data; `data` is Anthropic's and Gemini's name.
    req("file part with data instead of file_data", setting(["messages", 1, "content"], [
        {"type": "text", "text": "Summarise"},
        {"type": "file", "file": {"filename": "a.pdf", "data": "data:application/pdf;base64,JVBERi0="}}]), "OC-29",
        "/messages/1/content/1/file/data", "error", setting(["messages", 1, "content"], [
            {"type": "text", "text": "Summarise"},
            {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0="}}])),
    req("unknown field on a compatible server", setting(["top_k"], 40), "OC-29", "/top_k", "error",
        setting(["top_k"], 40), near_profile="openai-compatible"),
    # Structured output (issue 8): a strict response format is held to the strict subset like a strict tool.
    req("strict response format not strict-compliant", setting(["response_format"], {
        "type": "json_schema", "json_schema": {"name": "weather", "strict": True, "schema": {
            "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}),
        "OC-06", "/response_format/json_schema/schema/additionalProperties", "error",
        setting(["response_format"], {"type": "json_schema", "json_schema": {"name": "weather", "strict": True, "schema": {
            "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
            "additionalProperties": False}}})),
    # JSON mode (issue 18): OpenAI refuses json_object unless some message asks for JSON; the word
    # counts in any case, in a system message or in a content part's text.
    req("json_object without the word json", setting(["response_format"], {"type": "json_object"}), "OC-31",
        "/response_format/type", "error", doing(setting(["response_format"], {"type": "json_object"}),
                                                setting(["messages", 0], {"role": "system", "content": [
                                                    {"type": "text", "text": "Answer in JSON."}]}))),
    req("json_object on a compatible server", setting(["response_format"], {"type": "json_object"}), "OC-31",
        "/response_format/type", "error", setting(["response_format"], {"type": "json_object"}),
        near_profile="openai-compatible"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rule(case):
    assert_case(case)


def test_valid_baselines_have_no_violations():
    assert check.check_request(chat_request(), CHAT) == []
    assert check.check_response(chat_response(), CHAT) == []
    assert check.check_stream(sse(chat_chunks(), done=True), CHAT) == []


def test_every_violation_carries_why_and_hint():
    payload = chat_request()
    payload["tools"][0]["function"]["parameters"]["type"] = "OBJECT"
    (violation,) = check.check_request(payload, CHAT)
    assert violation.rule == "OC-05"
    assert violation.why.startswith("parameters must be a JSON Schema object")
    assert violation.hint.startswith("Convert the genai Schema")


def test_an_error_body_under_a_success_status_says_what_the_error_was():
    response = {"error": _FILTERED}
    assert [(v.rule, v.pointer, v.message) for v in check.check_response(response, CHAT)] == [
        ("OC-24", "/error", "the response has no choices but an error under a success status: 'The response was "
                            "filtered due to the prompt triggering Azure Content management policy.'")]
    assert [(v.rule, v.pointer, v.message) for v in check.check_response({"error": "overloaded"}, CHAT)] == [
        ("OC-24", "/error", "the response has no choices but an error under a success status: 'overloaded'")]


def test_stream_violations_are_marked_as_stream():
    events = chat_chunks()
    del events[1]["choices"][0]["delta"]["tool_calls"][0]["id"]
    assert {v.where for v in check.check_stream(sse(events), CHAT)} == {"stream"}


def test_reassembled_stream_matches_the_non_streamed_shape():
    response = check.reassemble(sse(chat_chunks(), done=True), CHAT)
    assert response["choices"][0]["finish_reason"] == "tool_calls"
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in response["choices"][0]["message"]["tool_calls"]] == [
        ("call_a", "get_weather", '{"city":"Oslo"}'), ("call_b", "get_weather", '{"city":"Rome"}')]


def test_a_dotted_name_is_accepted_by_the_azure_profile_only():
    payload = chat_request()
    payload["tools"][0]["function"]["name"] = "get.weather"
    assert ("OC-02", "/tools/0/function/name", "error") in found(check.check_request(payload, CHAT))
    assert "OC-02" not in {v.rule for v in check.check_request(payload, CHAT, "azure-openai")}


def test_check_and_reassemble_is_one_pass_over_both():
    events = chat_chunks()
    events[6]["choices"][0]["finish_reason"] = "stop"
    body = sse(events, done=True)
    violations, response = check.check_and_reassemble(body, CHAT)
    assert (violations, response) == (check.check_stream(body, CHAT), check.reassemble(body, CHAT))
    assert [v.rule for v in violations] == ["OC-22"]
