"""MCP `tools/list` and `tools/call` results -> each dialect's tool declarations and tool-result item."""

from __future__ import annotations

from typing import Any

from ...dialect import Dialect
from ...naming import NAME_RULES, IdMap, NameMap, mint_id
from ...pointer import join
from ..anthropic import bridge as anthropic
from ..gemini import bridge as gemini
from ..openai_chat import bridge as chat
from ..openai_responses import bridge as responses
from ...translate.common import Emit, declared_once, dumps, flagged_text, join_text
from ...translate.model import Loss, Part, Result, State, Tool, TranslationError

_EMIT_TOOLS = {Dialect.OPENAI_CHAT: chat.emit_tools, Dialect.OPENAI_RESPONSES: responses.emit_tools,
               Dialect.ANTHROPIC: anthropic.emit_tools, Dialect.GEMINI: gemini.emit_tools}
_TOOL_EXTRAS = ("title", "annotations", "outputSchema", "icons", "execution", "_meta")


def _unwrap(document: Any) -> tuple[Any, str, dict[str, Any] | None]:
    """(result, pointer of the result, the tools/call request when the document pairs one)."""
    request = None
    if isinstance(document, list):
        request = next((d for d in document if isinstance(d, dict) and d.get("method") == "tools/call"), None)
        response = next((d for d in document if isinstance(d, dict) and "result" in d), None)
        if response is None:
            raise TranslationError("no JSON-RPC result in the document", "")
        index = document.index(response)
        return response["result"], join("", index, "result"), request
    if isinstance(document, dict) and "result" in document and "jsonrpc" in document:
        return document["result"], "/result", None
    return document, "", None


def kind_of(document: Any) -> str:
    """"tools" for a tools/list result, "result" for a tools/call result."""
    result, _, _ = _unwrap(document)
    if isinstance(result, dict) and isinstance(result.get("tools"), list):
        return "tools"
    if isinstance(result, dict) and isinstance(result.get("content"), list):
        return "result"
    raise TranslationError("not an MCP tools/list or tools/call result", "")


def _emit(target: Dialect, names: set[str]) -> Emit:
    state = State(Dialect.MCP, target)
    reserved = {n for n in names if NAME_RULES[target].ok(n)}
    return Emit(state, NameMap(NAME_RULES[target], reserved), IdMap(target, set(), ""), [])


def tools(document: Any, target: Dialect) -> tuple[dict[str, Any], list[Loss]]:
    result, base, _ = _unwrap(document)
    declared: list[Tool] = []
    losses: list[Loss] = []
    seen: set[str] = set()
    for i, tool in enumerate(result.get("tools") or []):
        here = join(base, "tools", i)
        name = tool.get("name") if isinstance(tool, dict) else None
        if not declared_once(name, here, seen, losses, verb="listed"):
            continue
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict):
            raise TranslationError("inputSchema must be an object (MCP-02)", join(here, "inputSchema"))
        # Gemini declares what a function answers (responseJsonSchema); no other dialect does.
        output_schema = tool.get("outputSchema") if target is Dialect.GEMINI else None
        for key in _TOOL_EXTRAS:
            if key in tool and not (key == "outputSchema" and isinstance(output_schema, dict)):
                losses.append(Loss(join(here, key), None, "dropped", f"MCP tool {key} has no counterpart", ""))
        description = tool.get("description") or tool.get("title") or ""
        declared.append(Tool(name, str(description), schema, here, name_src=join(here, "name"),
                             schema_src=join(here, "inputSchema"),
                             output_schema=output_schema if isinstance(output_schema, dict) else None))
    emit = _emit(target, seen)
    out = _EMIT_TOOLS[target](declared, emit)
    return {"tools": out}, losses + emit.losses


def _content(result: dict[str, Any], base: str, losses: list[Loss], target: Dialect) -> list[Part]:
    parts: list[Part] = []
    for i, block in enumerate(result.get("content") or []):
        here = join(base, "content", i)
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            parts.append(Part("text", here, text=str(block.get("text", ""))))
        elif kind in ("image", "audio"):
            parts.append(Part(kind, here, mime=str(block.get("mimeType", "")), data=str(block.get("data", ""))))
        elif kind == "resource_link":
            parts.append(Part("file", here, url=str(block.get("uri", "")), mime=str(block.get("mimeType", "")),
                              filename=str(block.get("name", ""))))
        elif kind == "resource":
            resource = block.get("resource") or {}
            if "text" in resource:
                parts.append(Part("text", here, text=str(resource["text"])))
            else:
                parts.append(Part("file", here, mime=str(resource.get("mimeType", "")),
                                  data=str(resource.get("blob", "")), filename=str(resource.get("uri", ""))))
        else:
            raise TranslationError(f"MCP content block {kind!r} has no counterpart", here)
    structured = result.get("structuredContent")
    if structured is not None and target is not Dialect.GEMINI:  # Gemini takes the object (functionResponse)
        if parts:
            losses.append(Loss(join(base, "structuredContent"), None, "dropped",
                               "structuredContent is dropped; the text content carries the result (MCP-06)", "XL-15"))
        else:
            parts.append(Part("text", join(base, "structuredContent"), text=dumps(structured)))
            losses.append(Loss(join(base, "structuredContent"), None, "converted",
                               "structuredContent is carried as its JSON text", "XL-15"))
    return parts


def result_item(document: Any, target: Dialect) -> tuple[dict[str, Any], list[Loss]]:
    result, base, request = _unwrap(document)
    losses: list[Loss] = []
    parts = _content(result, base, losses, target)
    params = (request or {}).get("params") or {}
    name = params.get("name") if isinstance(params.get("name"), str) else None
    rpc_id = (request or {}).get("id", "")
    call_id = mint_id(f"mcp:{rpc_id}:{name}")
    losses.append(Loss(base, None, "synthesised", f"an MCP result carries no tool-call id; {call_id!r} stands in for "
                       "the id of the call it answers", "XL-04"))
    item = Result(call_id, name, parts, base, is_error=result.get("isError") is True,
                  structured=result.get("structuredContent"))
    emit = _emit(target, {name} if name else set())
    out = _RESULT[target](item, emit)
    return out, losses + emit.losses


def _chat_result(item: Result, emit: Emit) -> dict[str, Any]:
    for part in item.parts:
        if part.kind != "text":
            emit.drop(part.src, f"a Chat tool message carries text only; the {part.kind} is dropped", "XL-15")
    return {"role": "tool", "tool_call_id": item.call_id, "content": flagged_text(item, emit, "/content")}


def _responses_result(item: Result, emit: Emit) -> dict[str, Any]:
    if all(p.kind == "text" for p in item.parts):
        output: Any = flagged_text(item, emit, "/output")
    else:
        output = responses.emit_parts(item.parts, "user")
        if item.is_error:
            output.insert(0, {"type": "input_text", "text": "Error:"})
            emit.losses.append(Loss(item.src, "/output/0", "converted", "Responses has no error flag on tool "
                                    "outputs; written as a leading 'Error:' text part", "XL-15"))
    return {"type": "function_call_output", "call_id": item.call_id, "output": output}


def _anthropic_result(item: Result, emit: Emit) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": item.call_id}
    blocks = anthropic.content_blocks(item.parts)
    if blocks and all(b["type"] == "text" for b in blocks):
        out["content"] = join_text(item.parts)
    elif blocks:
        out["content"] = blocks
    if item.is_error:
        out["is_error"] = True
    return out


def _gemini_result(item: Result, emit: Emit) -> dict[str, Any]:
    if not item.name:
        raise TranslationError("a Gemini functionResponse needs the function name; pass the tools/call request "
                               "together with its result", item.src)
    out = gemini.function_response(item, emit, "/functionResponse")
    media = [p for p in item.parts if p.kind != "text"]
    if media:
        emit.losses.append(Loss(item.src, "/functionResponse/parts", "converted",
                                "media go in functionResponse.parts, which some Gemini models do not support", "XL-15"))
        out["parts"] = [{"inlineData": {"mimeType": p.mime, "data": p.data}} if p.data
                        else {"fileData": {"mimeType": p.mime, "fileUri": p.url}} for p in media]
    return {"functionResponse": out}


_RESULT = {Dialect.OPENAI_CHAT: _chat_result, Dialect.OPENAI_RESPONSES: _responses_result,
           Dialect.ANTHROPIC: _anthropic_result, Dialect.GEMINI: _gemini_result}
