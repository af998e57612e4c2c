"""MCP tools/list results -> each dialect's tool declarations; tools/call results -> each
dialect's tool-result item (XL-02, XL-03, XL-15)."""

from __future__ import annotations

import re

import pytest

from inspector.wire.check import check_request
from inspector.wire.dialect import Dialect
from inspector.wire.translate import TranslationError, translate_document
from inspector.wire.violations import Severity

CHAT, RESP, ANT, GEM, MCP = (Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES, Dialect.ANTHROPIC, Dialect.GEMINI,
                             Dialect.MCP)
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
LISTING = {"jsonrpc": "2.0", "id": 2, "result": {"tools": [
    {"name": "admin.tools.list", "title": "List admin tools", "inputSchema": {"type": "object",
                                                                              "additionalProperties": False}},
    {"name": "read_file", "description": "Read a file", "inputSchema": SCHEMA,
     "annotations": {"readOnlyHint": True}},
    {"name": "read_file", "description": "Read a file (second server)", "inputSchema": SCHEMA}]}}
CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "a"}}}
RESULT = {"jsonrpc": "2.0", "id": 7, "result": {"isError": True, "content": [
    {"type": "text", "text": "permission denied"},
    {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}}


@pytest.mark.parametrize("target", [CHAT, RESP, ANT, GEM])
def test_tool_list_becomes_declarations_that_pass_the_checker(target: Dialect) -> None:
    payload, losses = translate_document(LISTING, MCP, target)
    body = {CHAT: {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
            RESP: {"model": "m", "input": "hi"},
            ANT: {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]},
            GEM: {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}}[target]
    errors = [v for v in check_request({**body, **payload}, target) if v.severity is Severity.ERROR]
    assert errors == []
    reported = [(loss.source, loss.kind, loss.rule) for loss in losses]
    assert ("/result/tools/2", "dropped", "XL-03") in reported
    assert ("/result/tools/0/title", "dropped", "") in reported
    assert ("/result/tools/1/annotations", "dropped", "") in reported


def test_tool_list_per_dialect_shape_and_aliases() -> None:
    chat, _ = translate_document(LISTING, MCP, CHAT)
    alias = chat["tools"][0]["function"]["name"]
    assert re.fullmatch(r"admin_tools_list_[0-9a-f]{8}", alias)
    assert chat["tools"] == [
        {"type": "function", "function": {"name": alias, "description": "List admin tools",
                                          # OpenAI refuses an object root without properties (OC-05)
                                          "parameters": {"type": "object", "additionalProperties": False,
                                                         "properties": {}}}},
        {"type": "function", "function": {"name": "read_file", "description": "Read a file", "parameters": SCHEMA}}]
    responses, _ = translate_document(LISTING, MCP, RESP)
    assert responses["tools"][1] == {"type": "function", "name": "read_file", "description": "Read a file",
                                     "parameters": SCHEMA, "strict": False}
    anthropic, _ = translate_document(LISTING, MCP, ANT)
    assert anthropic["tools"][1] == {"name": "read_file", "description": "Read a file", "input_schema": SCHEMA}
    gemini, _ = translate_document(LISTING, MCP, GEM)
    assert gemini["tools"] == [{"functionDeclarations": [
        {"name": "admin.tools.list", "description": "List admin tools"},
        {"name": "read_file", "description": "Read a file",
         "parameters": {"type": "OBJECT", "properties": {"path": {"type": "STRING"}}, "required": ["path"]}}]}]


def test_call_result_becomes_each_dialects_result_item() -> None:
    chat, chat_losses = translate_document([CALL, RESULT], MCP, CHAT)
    call_id = chat["tool_call_id"]
    assert re.fullmatch(r"call_[0-9a-f]{24}", call_id)
    assert chat == {"role": "tool", "tool_call_id": call_id, "content": "Error: permission denied"}
    assert [(loss.source, loss.kind, loss.rule) for loss in chat_losses] == [
        ("/1/result", "synthesised", "XL-04"), ("/1/result/content/1", "dropped", "XL-15"),
        ("/1/result", "converted", "XL-15")]
    responses, _ = translate_document([CALL, RESULT], MCP, RESP)
    assert responses == {"type": "function_call_output", "call_id": call_id, "output": [
        {"type": "input_text", "text": "Error:"}, {"type": "input_text", "text": "permission denied"},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"}]}
    anthropic, _ = translate_document([CALL, RESULT], MCP, ANT)
    assert anthropic == {"type": "tool_result", "tool_use_id": call_id, "is_error": True, "content": [
        {"type": "text", "text": "permission denied"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]}
    gemini, _ = translate_document([CALL, RESULT], MCP, GEM)
    assert gemini == {"functionResponse": {"id": call_id, "name": "read_file",
                                           "response": {"error": "permission denied"},
                                           "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]}}


def test_structured_content_without_text_is_carried_as_json_text() -> None:
    result = {"content": [], "structuredContent": {"rows": 3}}
    payload, losses = translate_document(result, MCP, ANT)
    assert payload["content"] == '{"rows":3}' and "is_error" not in payload
    assert ("/structuredContent", "converted") in [(loss.source, loss.kind) for loss in losses]


def test_gemini_result_needs_the_call_for_its_name() -> None:
    with pytest.raises(TranslationError, match="function name"):
        translate_document(RESULT, MCP, GEM)
