"""Anthropic Messages <-> the neutral form: requests, responses and the content-block stream."""

from __future__ import annotations

from typing import Any, Literal

import orjson

from ... import jsonsafe, sse
from ...dialect import Dialect
from ...pointer import join
from ...sse import SSEEvent, SSEParser
from ...translate import events as ev
from ...translate.common import (sent_stop, parse_turns, RUN, Emit, anthropic_error, back_id, back_name, declared_once, hollow, join_text,
                                 json_schema_of, role_turn,
                                 output_kept_whole, plain, refusal_as_text, token_counts)
from ...translate.model import (Builtin, Call, Choice, Identifier, Loss, Message, Opaque, Output, Part, Reasoning, Request,
                                Response, Result, State, StopReason, Tool, TranslationError)
from ...translate.reasoning import ANTHROPIC_MIN_BUDGET, budget_of, effort_of_budget
from .limits import RANGES

_PARAMS = ("model", "messages", "system", "tools", "tool_choice", "max_tokens", "temperature", "top_p",
           "stop_sequences", "stream")
_DEFAULT_MAX_TOKENS = 4096
# The server tool that carries each neutral built-in kind: (tool type, the name a choice forces).
_SERVER_TOOL = {"web_search": ("web_search_20250305", "web_search"),
                "code_interpreter": ("code_execution_20250825", "code_execution")}
_STOP_IN: dict[object, StopReason] = {  # looked up with whatever the response holds
    "end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop", "max_tokens": "length",
    "model_context_window_exceeded": "length", "tool_use": "tool_calls", "refusal": "content_filter"}
_STOP_OUT = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "content_filter": "refusal"}
_CUSTOM_SCHEMA = {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}


# --- requests ------------------------------------------------------------------------------------

def _media(block: dict[str, Any], kind: Literal["image", "file"], src: str) -> Part:
    source = block.get("source") or {}
    stype = source.get("type")
    if stype == "base64":
        return Part(kind, src, mime=str(source.get("media_type", "")), data=str(source.get("data", "")),
                    filename=str(block.get("title") or ""))
    if stype == "url":
        return Part(kind, src, url=str(source.get("url", "")), filename=str(block.get("title") or ""))
    if stype == "file":
        return Part(kind, src, url=str(source.get("file_id", "")), filename=str(block.get("title") or ""))
    if stype == "text":
        return Part("text", src, text=str(source.get("data", "")))
    raise TranslationError(f"a {kind} source of type {stype!r} has no counterpart", join(src, "source"))


def _parse_blocks(content: Any, src: str) -> list[tuple[str, dict[str, Any]]]:
    if isinstance(content, str):
        return [(src, {"type": "text", "text": content})]
    if not isinstance(content, list):
        raise TranslationError("content must be a string or a list of blocks", src)
    return [(join(src, i), block) for i, block in enumerate(content) if isinstance(block, dict)]


def _result_parts(content: Any, src: str) -> list[Part]:
    if content is None:
        return []
    parts: list[Part] = []
    for here, block in _parse_blocks(content, src):
        kind = block.get("type")
        if kind == "text":
            parts.append(Part("text", here, text=str(block.get("text", ""))))
        elif kind == "image":
            parts.append(_media(block, "image", here))
        elif kind == "document":
            parts.append(_media(block, "file", here))
        elif kind == "search_result":
            title = Part("text", here, text=str(block.get("title", "")))
            passages = [Part("text", here, text=str(b.get("text", ""))) for b in block.get("content") or []
                        if isinstance(b, dict)]
            parts.append(Part("text", here, text=join_text([title, *passages])))
        else:
            raise TranslationError(f"tool_result content of type {kind!r} has no counterpart", here)
    return parts


def _parse_output(value: dict[str, Any], key: str, req: Request) -> None:
    """Structured output: `output_config.format`, or the beta's top-level `output_format` (the
    structured-outputs-2025-11-13 header) with the same shape. Only a JSON Schema is taken."""
    fmt, src = (value.get("format"), "/output_config/format") if key == "output_config" else (value, "/output_format")
    if key == "output_config":
        req.leftovers.extend((join("/output_config", k), f"output_config.{k} has no counterpart")
                             for k in value if k != "format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema" and isinstance(fmt.get("schema"), dict):
        req.output = Output("schema", src, fmt["schema"])
    elif fmt is not None:
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        req.leftovers.append((src, f"output format {kind!r} has no counterpart"))


def parse_request(payload: dict[str, Any], path: str) -> tuple[Request, list[Loss]]:
    losses: list[Loss] = []
    req = Request(model=str(payload.get("model") or ""))
    for key, value in payload.items():
        if value is None and key in ("tools", "tool_choice", "system"):
            losses.append(Loss(join("", key), None, "dropped", "null means absent", "XL-10"))
        elif key == "thinking" and isinstance(value, dict) and value.get("type") == "disabled":
            req.reasoning = Reasoning("none", "/thinking")
        elif key == "thinking" and isinstance(value, dict) and value.get("type") == "enabled" \
                and isinstance(value.get("budget_tokens"), int) and not isinstance(value["budget_tokens"], bool):
            budget = value["budget_tokens"]
            req.reasoning = Reasoning(effort_of_budget(budget), "/thinking/budget_tokens", budget=budget)
        elif key == "metadata" and isinstance(value, dict):
            if isinstance(value.get("user_id"), str) and value["user_id"]:
                req.user = Identifier(value["user_id"], "/metadata/user_id")
            req.leftovers.extend((join("/metadata", k), f"metadata.{k} has no counterpart") for k in value
                                 if k != "user_id")
        elif key in ("output_config", "output_format") and isinstance(value, dict):
            _parse_output(value, key, req)
        elif key not in _PARAMS:
            req.leftovers.append((join("", key), f"Anthropic parameter {key!r} has no counterpart"))
    system = payload.get("system")
    if system:
        parts = [Part("text", here, text=str(block.get("text", ""))) for here, block in _parse_blocks(system, "/system")
                 if block.get("type") == "text"]
        req.items.append(Message("system", parts, "/system"))
    parse_turns(payload, req, losses, _parse_user, _parse_assistant)
    _parse_tools(payload.get("tools") or [], req, losses)
    choice = payload.get("tool_choice")
    if isinstance(choice, dict):
        kind = choice.get("type")
        modes: dict[object, Literal["auto", "required", "none"]] = {"auto": "auto", "any": "required", "none": "none"}
        if kind in modes:
            req.choice = Choice(modes[kind], "/tool_choice")
        elif kind == "tool":
            name = str(choice.get("name", ""))
            hosted = next((b for b in req.builtins if isinstance(b.raw, dict) and b.raw.get("name") == name), None)
            req.choice = Choice("hosted", "/tool_choice", hosted.kind) if hosted else Choice("named", "/tool_choice", name)
        if choice.get("disable_parallel_tool_use") is True:
            req.parallel = False
            req.parallel_src = "/tool_choice/disable_parallel_tool_use"
    req.max_tokens = payload.get("max_tokens") if isinstance(payload.get("max_tokens"), int) else None
    req.temperature = payload.get("temperature")
    req.top_p = payload.get("top_p")
    req.stop = [s for s in payload.get("stop_sequences") or [] if isinstance(s, str)]
    req.stop_src = "/stop_sequences"
    req.stream = payload.get("stream") is True
    return req, losses


def _parse_user(content: Any, src: str, items: list[Any], losses: list[Loss]) -> None:
    """Tool results first, then the rest of the turn (XL-07); a reorder is reported."""
    results: list[Result] = []
    parts: list[Part] = []
    for here, block in _parse_blocks(content, join(src, "content")):
        kind = block.get("type")
        if kind == "tool_result":
            if parts and not results:
                losses.append(Loss(here, None, "converted", "tool results placed before the text that preceded them",
                                   "XL-07"))
            call_id = block.get("tool_use_id")
            if not isinstance(call_id, str) or not call_id:
                raise TranslationError("a tool_result needs its tool_use_id", join(here, "tool_use_id"))
            results.append(Result(call_id, None, _result_parts(block.get("content"), join(here, "content")), here,
                                  is_error=block.get("is_error") is True, id_src=join(here, "tool_use_id")))
        elif kind == "text":
            parts.append(Part("text", here, text=str(block.get("text", ""))))
        elif kind == "image":
            parts.append(_media(block, "image", here))
        elif kind == "document":
            parts.append(_media(block, "file", here))
        else:
            raise TranslationError(f"user content block {kind!r} has no counterpart", here)
    items.extend(results)
    if parts:
        items.append(Message("user", parts, src))


def _parse_assistant(content: Any, src: str, items: list[Any]) -> None:
    for here, block in _parse_blocks(content, join(src, "content")):
        kind = block.get("type")
        if kind == "text":
            if block.get("text"):
                items.append(Message("assistant", [Part("text", here, text=str(block["text"]))], here))
        elif kind == "tool_use":
            call_id, name = block.get("id"), block.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str):
                raise TranslationError("a tool_use needs id and name", here)
            arguments = block.get("input")
            if not isinstance(arguments, dict):
                raise TranslationError("tool_use input must be an object", join(here, "input"))
            items.append(Call(call_id, name, arguments, here, name_src=join(here, "name"), id_src=join(here, "id")))
        else:
            items.append(Opaque(Dialect.ANTHROPIC, f"{kind} block", block, here))


def _parse_tools(tools: list[Any], req: Request, losses: list[Loss]) -> None:
    seen: set[str] = set()
    for j, tool in enumerate(tools):
        here = join("/tools", j)
        if not isinstance(tool, dict):
            continue
        kind = str(tool.get("type") or "custom")
        if kind == "custom":
            name = tool.get("name")
            if not declared_once(name, here, seen, losses):
                continue
            schema = json_schema_of(tool["input_schema"], join(here, "input_schema"), losses) \
                if isinstance(tool.get("input_schema"), dict) else {}
            req.tools.append(Tool(name, str(tool.get("description") or ""), schema, here, tool.get("strict"),
                                  name_src=join(here, "name"), schema_src=join(here, "input_schema")))
        elif kind.startswith("web_search_"):
            options = {k: tool[k] for k in ("allowed_domains", "blocked_domains", "max_uses") if tool.get(k)}
            if isinstance(tool.get("user_location"), dict):
                options["user_location"] = {k: v for k, v in tool["user_location"].items() if k != "type"}
            req.builtins.append(Builtin("web_search", options, here, Dialect.ANTHROPIC, tool))
        elif kind.startswith("code_execution_"):
            req.builtins.append(Builtin("code_interpreter", {}, here, Dialect.ANTHROPIC, tool))
        else:
            req.builtins.append(Builtin(kind, {}, here, Dialect.ANTHROPIC, tool))


def _media_block(part: Part) -> dict[str, Any]:
    kind = "image" if part.kind == "image" else "document"
    if part.data:
        mime = part.mime or ("image/png" if kind == "image" else "application/pdf")
        return {"type": kind, "source": {"type": "base64", "media_type": mime, "data": part.data}}
    if part.url.startswith(("http://", "https://")):
        return {"type": kind, "source": {"type": "url", "url": part.url}}
    return {"type": kind, "source": {"type": "file", "file_id": part.url}}


def content_blocks(parts: list[Part]) -> list[dict[str, Any]]:
    """Blocks of text and media; refusals must have been made text (`plain`) first."""
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if part.kind == "text":
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif part.kind in ("image", "file"):
            blocks.append(_media_block(part))
        else:
            raise TranslationError("Anthropic messages cannot carry audio", part.src)
    return blocks


def emit_request(req: Request, emit: Emit) -> dict[str, Any]:
    out: dict[str, Any] = {"model": req.model}
    wrapped = {tool.name for tool in req.tools if _wraps(tool)}
    system: list[Part] = []
    turns: list[tuple[str, list[dict[str, Any]], str]] = []  # (role, blocks, first source pointer)
    merged: list[str] = []  # the source message of each turn's latest item, to report merges
    for item in req.items:
        if isinstance(item, Message) and item.role == "system":
            if turns:
                emit.losses.append(Loss(item.src, "/system", "converted",
                                        "Anthropic has one system prompt; this mid-conversation system message "
                                        "joins it", ""))
            if any(p.kind != "text" for p in item.parts):
                emit.drop(item.src, "the system prompt carries text only; media dropped")
            system.extend(item.parts)
            continue
        role = "assistant" if isinstance(item, Call) or (isinstance(item, (Message, Opaque)) and _assistant(item)) \
            else "user"
        blocks, tgt = role_turn(turns, merged, role, item.src, emit, "Anthropic")
        if isinstance(item, Message):
            blocks.extend(content_blocks(plain(item.parts, emit.losses, emit.target, tgt)))
        elif isinstance(item, Call):
            block: dict[str, Any] = {"type": "tool_use", "id": emit.call_id(item.id or "", item.id_src or item.src, join(tgt, "id")),
                                     "name": emit.name(item.name, item.name_src or item.src, join(tgt, "name")),
                                     "input": item.arguments}
            if item.name in wrapped:
                block["input"] = {"value": item.arguments}
                emit.losses.append(Loss(item.src, join(tgt, "input"), "converted", "the arguments of a tool whose "
                                        "schema is nested under \"value\" are nested the same way", ""))
            blocks.append(block)
        elif isinstance(item, Result):
            result: dict[str, Any] = {"type": "tool_result",
                                      "tool_use_id": emit.call_id(item.call_id or "", item.id_src or item.src, join(tgt, "tool_use_id"))}
            content = content_blocks(item.parts)
            if content and all(b["type"] == "text" for b in content):
                result["content"] = join_text(item.parts)
            elif content:
                result["content"] = content
            if item.is_error:
                result["is_error"] = True
            # Results go before anything else in the turn (AN-09).
            position = sum(1 for b in blocks if b.get("type") == "tool_result")
            if position != len(blocks):
                emit.losses.append(Loss(item.src, tgt, "converted", "tool results placed before the text that "
                                        "preceded them", "XL-07"))
            blocks.insert(position, result)
        elif isinstance(item, Opaque) and emit.opaque(item):
            blocks.append(item.raw)
    messages: list[dict[str, Any]] = []
    for role, blocks, src in turns:
        if not blocks:
            emit.drop(src, "a turn with no content left is rejected by Anthropic (AN-12)")
            continue
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    if join_text(system):
        out["system"] = join_text(system)
    out["messages"] = messages
    tools = emit_tools(req.tools, emit)
    for builtin in req.builtins:
        hosted = _emit_builtin(builtin, emit)
        if hosted is not None:
            tools.append(hosted)
    if tools:
        out["tools"] = tools
    choice = _emit_choice(req, emit, tools)
    if choice is not None:
        out["tool_choice"] = choice
    if req.max_tokens is None:
        emit.losses.append(Loss("", "/max_tokens", "synthesised",
                                f"Anthropic requires max_tokens; {_DEFAULT_MAX_TOKENS} is sent", ""))
    out["max_tokens"] = emit.ranged(req, "max_tokens", "/max_tokens", RANGES) if req.max_tokens is not None \
        else _DEFAULT_MAX_TOKENS
    for key in ("temperature", "top_p"):
        if getattr(req, key) is not None:
            out[key] = emit.ranged(req, key, join("", key), RANGES)
    if req.reasoning is not None:
        _emit_thinking(req, emit, out, messages)
    if req.user is not None:
        out["metadata"] = {"user_id": req.user.value}
    if req.cache_key is not None:
        emit.drop(req.cache_key.src, "Anthropic caches by cache_control breakpoints, not by a key")
    if req.store is not None:  # only Chat and Responses say it, both at /store
        emit.drop("/store", "anthropic has no setting for whether the provider keeps the exchange")
    _emit_output(req.output, emit, out)
    if req.stop:
        out["stop_sequences"] = req.stop
    if req.stream:
        out["stream"] = True
    for pointer, why in req.leftovers:
        emit.drop(pointer, why)
    return out


def _emit_thinking(req: Request, emit: Emit, out: dict[str, Any], messages: list[dict[str, Any]]) -> None:
    """A reasoning effort as `thinking: enabled` with the table's budget (translate/reasoning.py),
    where Anthropic takes it: the budget below max_tokens (AN-16), no forced tool (AN-11), and a
    history whose latest tool-calling turn keeps its signed thinking block (XL-14), which no other
    dialect's history has."""
    reasoning = req.reasoning
    assert reasoning is not None
    if reasoning.effort == "none":
        emit.drop(reasoning.src, "reasoning off is Anthropic's default: Claude does not think unless asked")
        return
    if out.get("tool_choice", {}).get("type") in ("any", "tool"):
        emit.drop(reasoning.src, "Anthropic refuses thinking while a tool is forced (AN-11); the forced tool is kept")
        return
    last = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
    if last is not None and any(b.get("type") == "tool_use" for b in last["content"]) and \
            last["content"][0].get("type") not in ("thinking", "redacted_thinking"):
        emit.drop(reasoning.src, "thinking cannot be switched on mid tool loop: Anthropic wants the calling turn's "
                  "signed thinking block back (XL-14), and this history has none")
        return
    budget = reasoning.budget if reasoning.budget is not None and reasoning.budget > 0 else budget_of(reasoning.effort)
    assert budget is not None  # every effort but none is on the table
    why = "" if reasoning.budget == budget else f"reasoning effort {reasoning.effort!r} is sent as a thinking budget " \
        f"of {budget} tokens (translate/reasoning.py)"
    if budget < ANTHROPIC_MIN_BUDGET:
        why = f"a thinking budget of {budget} tokens is below Anthropic's least, {ANTHROPIC_MIN_BUDGET}; " \
              f"{ANTHROPIC_MIN_BUDGET} is sent"
        budget = ANTHROPIC_MIN_BUDGET
    if budget >= out["max_tokens"]:
        if req.max_tokens is None:
            out["max_tokens"] = budget + _DEFAULT_MAX_TOKENS
            emit.convert("", "/max_tokens", f"max_tokens counts the thinking too: {out['max_tokens']} leaves "
                         f"{_DEFAULT_MAX_TOKENS} for the answer beside a budget of {budget}")
        elif out["max_tokens"] - 1 >= ANTHROPIC_MIN_BUDGET:
            budget = out["max_tokens"] - 1
            why = f"the thinking budget must be below max_tokens ({out['max_tokens']}), which counts it; {budget} " \
                  "is sent"
        else:
            emit.drop(reasoning.src, f"max_tokens {out['max_tokens']} leaves no room for Anthropic's least thinking "
                      f"budget ({ANTHROPIC_MIN_BUDGET}), and max_tokens counts the thinking")
            return
    if why:
        emit.convert(reasoning.src, "/thinking/budget_tokens", why)
    out["thinking"] = {"type": "enabled", "budget_tokens": budget}
    # With thinking on, Anthropic takes temperature 1 only and top_p of at least 0.95.
    if out.get("temperature", 1) != 1:
        emit.drop(req.sources.get("temperature", "/temperature"), "Anthropic takes no temperature but 1 while "
                  "thinking; the model's default is used")
        del out["temperature"]
    if out.get("top_p", 1) < 0.95:
        emit.drop(req.sources.get("top_p", "/top_p"), "Anthropic takes no top_p below 0.95 while thinking")
        del out["top_p"]


def _emit_output(output: Output | None, emit: Emit, out: dict[str, Any]) -> None:
    if output is None:
        return
    if output.kind == "text":
        emit.drop(output.src, "plain text is Anthropic's default; nothing to state")
    elif output.kind == "json":
        # Anthropic constrains an answer only to a JSON Schema, and an open {"type": "object"} is not one
        # it takes (its objects need additionalProperties false): the ask cannot be carried, only reported.
        emit.drop(output.src, "Anthropic constrains answers only to a JSON Schema; 'any JSON object' has no "
                  "counterpart, so the answer is not held to JSON")
    else:
        out["output_config"] = {"format": {"type": "json_schema", "schema": output.schema}}
        output_kept_whole(output, emit)


def _assistant(item: Message | Opaque) -> bool:
    return item.role == "assistant" if isinstance(item, Message) else True


def emit_tools(tools: list[Tool], emit: Emit) -> list[dict[str, Any]]:
    return [_emit_tool(tool, emit, join("/tools", j)) for j, tool in enumerate(tools)]


def _emit_tool(tool: Tool, emit: Emit, tgt: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": emit.name(tool.name, tool.name_src or tool.src, join(tgt, "name"))}
    if tool.description:
        entry["description"] = tool.description
    if tool.custom:
        emit.losses.append(Loss(tool.src, join(tgt, "input_schema"), "converted",
                                "a free-form custom tool becomes a tool with one string parameter \"input\"", ""))
        entry["input_schema"] = _CUSTOM_SCHEMA
    elif not tool.schema:
        entry["input_schema"] = {"type": "object", "properties": {}}
    elif _wraps(tool):
        emit.losses.append(Loss(tool.src, join(tgt, "input_schema"), "synthesised",
                                "Anthropic requires an object input_schema; the schema is nested under \"value\", "
                                "and the model's arguments are taken out of it on the way back", ""))
        entry["input_schema"] = {"type": "object", "properties": {"value": tool.schema}, "required": ["value"]}
        emit.state.wrapped.add(entry["name"])
    else:
        entry["input_schema"] = tool.schema
    if tool.strict:
        entry["strict"] = True
    return entry


def _wraps(tool: Tool) -> bool:
    """Whether the tool's schema (a root that is not an object, e.g. an anyOf) goes under "value"."""
    return not tool.custom and bool(tool.schema) and tool.schema.get("type") != "object"


def _unwrap(state: State, name: str, arguments: Any) -> Any:
    """The arguments the client's tool declared: those of a tool nested under "value" come out of it."""
    if name in state.wrapped and isinstance(arguments, dict) and set(arguments) == {"value"} \
            and isinstance(arguments["value"], dict):
        return arguments["value"]
    return arguments


def _emit_builtin(builtin: Builtin, emit: Emit) -> dict[str, Any] | None:
    if builtin.kind == "web_search":
        tool: dict[str, Any] = {"type": _SERVER_TOOL["web_search"][0], "name": _SERVER_TOOL["web_search"][1]}
        for key, value in builtin.options.items():
            if key in ("allowed_domains", "blocked_domains", "max_uses"):
                tool[key] = value
            elif key == "user_location":
                tool[key] = {"type": "approximate", **value}
            else:
                emit.drop(builtin.pointer(key), f"web search option {key!r} has no Anthropic counterpart", "XL-09")
        return tool
    if builtin.kind == "code_interpreter":
        return {"type": _SERVER_TOOL["code_interpreter"][0], "name": _SERVER_TOOL["code_interpreter"][1]}
    emit.drop(builtin.src, f"built-in tool {builtin.kind!r} has no Anthropic equivalent", "XL-09")
    return None


def _emit_choice(req: Request, emit: Emit, tools: list[dict[str, Any]]) -> dict[str, Any] | None:
    choice = req.choice
    if choice is not None and not tools and choice.mode != "none":
        emit.drop(choice.src, "tool_choice without tools is rejected", "XL-11")
        choice = None
    out: dict[str, Any] | None = None
    if choice is None:
        if req.parallel is False and tools:
            out = {"type": "auto"}
    elif choice.mode == "named":
        out = {"type": "tool", "name": emit.name(choice.name, choice.src, "/tool_choice/name")}
    elif choice.mode == "hosted":
        out = _hosted_choice(choice, emit, tools)
    else:
        out = {"type": {"auto": "auto", "required": "any", "none": "none"}[choice.mode]}
        if choice.allowed is not None:
            out = _allowed_choice(choice, emit, tools, req.tools, out)
    _emit_parallel(req, emit, out)
    return out


def _hosted_choice(choice: Choice, emit: Emit, tools: list[dict[str, Any]]) -> dict[str, Any]:
    server = _SERVER_TOOL.get(choice.name)
    if server is not None and any(tool.get("type") == server[0] for tool in tools):
        return {"type": "tool", "name": server[1]}
    emit.convert(choice.src, "/tool_choice", f"the hosted tool {choice.name!r} is not among the Anthropic tools; "
                 "written as auto", "XL-11")
    return {"type": "auto"}


def _allowed_choice(choice: Choice, emit: Emit, tools: list[dict[str, Any]], declared: list[Tool],
                    out: dict[str, Any]) -> dict[str, Any]:
    """Anthropic has no allowed-tools subset: the tools outside it are taken off the request
    (narrowed, never widened); a subset of one tool under `required` is that tool, named."""
    allowed = {emit.name(name, join(choice.allowed_src, j), "/tools") for j, name in enumerate(choice.allowed or [])}
    for j in reversed(range(len(declared))):  # the declared tools come first, in order
        name = tools[j].get("name")
        if name not in allowed:
            emit.drop(declared[j].src, f"tool {name!r} is outside the allowed_tools subset, which Anthropic cannot "
                      "state; it is not offered", "XL-11")
            del tools[j]
    if choice.mode == "required" and len(allowed) == 1:
        return {"type": "tool", "name": next(iter(allowed))}
    return out


def _emit_parallel(req: Request, emit: Emit, out: dict[str, Any] | None) -> None:
    """Anthropic states parallel calls inside tool_choice, as disable_parallel_tool_use."""
    if req.parallel is None:
        return
    if out is None or out["type"] == "none":
        emit.drop(req.parallel_src, "parallel calls need tools to call", "XL-11")
    elif req.parallel is False:
        out["disable_parallel_tool_use"] = True
        if req.parallel_src != "/tool_choice/disable_parallel_tool_use":
            emit.convert(req.parallel_src, "/tool_choice/disable_parallel_tool_use",
                         "Anthropic states no-parallel-calls inside tool_choice")
    else:
        emit.drop(req.parallel_src, "parallel calls are Anthropic's default; nothing to state")


# --- responses -----------------------------------------------------------------------------------

def parse_response(payload: dict[str, Any], state: State) -> tuple[Response, list[Loss]]:
    losses: list[Loss] = []
    resp = Response(id=str(payload.get("id") or ""), model=str(payload.get("model") or ""))
    if payload.get("type") == "error":
        resp.error = payload.get("error") or {}
        return resp, losses
    _parse_assistant(payload.get("content") or [], "", resp.items)
    for item in resp.items:
        if isinstance(item, Call):
            item.arguments = _unwrap(state, item.name, item.arguments)
    resp.stop = _STOP_IN.get(payload.get("stop_reason"), "stop")
    hollow(resp, losses, "/content")
    if payload.get("stop_reason") == "pause_turn":
        losses.append(Loss("/stop_reason", None, "converted", "pause_turn (a server tool paused) is reported as a "
                           "normal stop", ""))
    resp.input_tokens, resp.output_tokens = token_counts(payload.get("usage"), "input_tokens", "output_tokens")
    return resp, losses


def emit_response(resp: Response, state: State, losses: list[Loss]) -> dict[str, Any]:
    if resp.error is not None:
        return {"type": "error", "error": anthropic_error(resp.error)}
    content: list[dict[str, Any]] = []
    calls = 0
    for item in resp.items:
        here = join("/content", len(content))
        if isinstance(item, Message):
            text = join_text(plain(item.parts, losses, Dialect.ANTHROPIC, here), RUN)
            if text:
                content.append({"type": "text", "text": text})
        elif isinstance(item, Call):
            call_id = back_id(state, item.id, f"{resp.id}:{calls}", losses, item.src, join(here, "id"))
            calls += 1
            content.append({"type": "tool_use", "id": call_id, "name": back_name(state, item.name),
                            "input": item.arguments})
        elif isinstance(item, Opaque):
            losses.append(Loss(item.src, None, "dropped", f"{item.dialect.value} {item.what} cannot cross to Anthropic",
                               "XL-14"))
    stop = _STOP_OUT[sent_stop(resp.stop, calls > 0)]
    return {"id": _message_id(resp.id), "type": "message", "role": "assistant", "model": resp.model or state.model,
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": resp.input_tokens, "output_tokens": resp.output_tokens}}


def _message_id(upstream: str) -> str:
    return upstream if upstream.startswith("msg_") else f"msg_{upstream}" if upstream else "msg_translated"


# --- streams -------------------------------------------------------------------------------------

# The upstream's stream bytes -> the events StreamParser reads: server-sent events.
StreamReader = SSEParser


class StreamParser:
    """Anthropic stream events -> neutral events; calls keyed by content-block index (AN-13)."""

    def __init__(self, state: State) -> None:
        self.state = state
        # Open tool_use blocks: index (as the stream gives it) -> {"args": bool, "input": ...}.
        self.blocks: dict[object, dict[str, Any]] = {}
        self.stop: StopReason = "stop"
        self.usage = [0, 0]
        self.done = False

    def feed(self, event: SSEEvent) -> list[ev.Event]:
        if self.done:
            return []
        data = ev.decode(event)
        if not isinstance(data, dict):
            return data
        kind = data.get("type") or event.event
        if kind == "message_start":
            message = data.get("message") or {}
            self.usage[0] = token_counts(message.get("usage"), "input_tokens")[0]
            return [ev.Start(str(message.get("id") or ""), str(message.get("model") or ""), self.usage[0])]
        if kind == "content_block_start":
            index, block = data.get("index"), data.get("content_block") or {}
            btype = block.get("type")
            if btype == "text":
                return [ev.TextDelta(str(block["text"]))] if block.get("text") else []
            if btype == "tool_use":
                name = str(block.get("name") or "")
                # A wrapped tool's arguments wait for the block's end, to be taken out of "value" whole.
                self.blocks[index] = {"args": False, "input": block.get("input"),
                                      "held": [] if name in self.state.wrapped else None, "name": name}
                return [ev.CallStart(index, str(block.get("id") or ""), name)]
            return [ev.Dropped(f"{btype} block")]
        if kind == "content_block_delta":
            index, delta = data.get("index"), data.get("delta") or {}
            if delta.get("type") == "text_delta" and delta.get("text"):
                return [ev.TextDelta(str(delta["text"]))]
            if delta.get("type") == "input_json_delta" and index in self.blocks and delta.get("partial_json"):
                self.blocks[index]["args"] = True
                if self.blocks[index]["held"] is not None:
                    self.blocks[index]["held"].append(str(delta["partial_json"]))
                    return []
                return [ev.CallArgs(index, str(delta["partial_json"]))]
            return []
        if kind == "content_block_stop":
            index = data.get("index")
            if index not in self.blocks:
                return []
            return self._end(index, self.blocks.pop(index))
        if kind == "message_delta":
            reason = (data.get("delta") or {}).get("stop_reason")
            if reason:
                self.stop = _STOP_IN.get(reason, "stop")
            self.usage[1] = token_counts(data.get("usage"), "output_tokens")[0] or self.usage[1]
            return []
        if kind == "message_stop":
            return self.close()
        if kind == "error":
            self.done = True
            error = data.get("error") or {}
            return [ev.Failure(str(error.get("message", "")), error)]
        return []

    def _end(self, index: Any, block: dict[str, Any]) -> list[ev.Event]:
        out: list[ev.Event] = []
        if block["held"] is not None and block["args"]:
            text = "".join(block["held"])
            try:
                arguments = jsonsafe.loads(text)
            except orjson.JSONDecodeError:
                out.append(ev.CallArgs(index, text))  # cut short: passed on as it came
            else:
                out.append(ev.CallArgs(index, jsonsafe.dumps(_unwrap(self.state, block["name"], arguments)).decode()))
        elif not block["args"] and isinstance(block["input"], dict) and block["input"]:
            arguments = _unwrap(self.state, block["name"], block["input"])
            out.append(ev.CallArgs(index, jsonsafe.dumps(arguments).decode()))
        out.append(ev.CallEnd(index))
        return out

    def close(self) -> list[ev.Event]:
        if self.done:
            return []
        self.done = True
        out: list[ev.Event] = [event for index, block in self.blocks.items() for event in self._end(index, block)]
        self.blocks.clear()
        out.append(ev.Finish(self.stop, self.usage[0], self.usage[1]))
        return out


class StreamEmitter:
    """Neutral events -> Anthropic SSE: one content block per text run and per call, dense indices."""

    def __init__(self, state: State, losses: list[Loss]) -> None:
        self.state = state
        self.losses = losses
        self.id = "msg_translated"
        self.model = state.model
        self.next = 0
        self.text_block: int | None = None
        self.calls: dict[Any, int] = {}
        self.open: set[int] = set()
        self.saw_call = False
        self.refused = False
        self.finished = False

    @staticmethod
    def _event(kind: str, body: dict[str, Any]) -> bytes:
        return sse.encode(jsonsafe.dumps({"type": kind, **body}), kind)

    def emit(self, event: ev.Event) -> bytes:
        if isinstance(event, ev.Start):
            self.id = _message_id(event.id)
            self.model = event.model or self.model
            return self._event("message_start", {"message": {
                "id": self.id, "type": "message", "role": "assistant", "model": self.model, "content": [],
                "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": event.input_tokens, "output_tokens": 0}}})
        if isinstance(event, ev.TextDelta):
            out = b""
            if event.refusal and not self.refused:
                self.refused = True
                self.losses.append(refusal_as_text("/stream", None, Dialect.ANTHROPIC))
            if self.text_block is None:
                self.text_block = self._open()
                out += self._event("content_block_start", {"index": self.text_block,
                                                           "content_block": {"type": "text", "text": ""}})
            return out + self._event("content_block_delta", {"index": self.text_block,
                                                             "delta": {"type": "text_delta", "text": event.text}})
        if isinstance(event, ev.CallStart):
            out = self._close_text()
            index = self.calls[event.key] = self._open()
            self.saw_call = True
            call_id = back_id(self.state, event.id or None, f"{self.id}:{index}", self.losses,
                              join("/stream", event.key), join("/content", index, "id"))
            return out + self._event("content_block_start", {"index": index, "content_block": {
                "type": "tool_use", "id": call_id, "name": back_name(self.state, event.name), "input": {}}})
        if isinstance(event, ev.CallArgs):
            return self._event("content_block_delta", {"index": self.calls[event.key],
                                                       "delta": {"type": "input_json_delta",
                                                                 "partial_json": event.delta}})
        if isinstance(event, ev.CallEnd):
            closed = self.calls.pop(event.key, None)
            return self._stop(closed) if closed is not None else b""
        if isinstance(event, ev.Finish):
            if self.finished:
                return b""
            self.finished = True
            out = self._close_text()
            for index in sorted(self.open):
                out += self._stop(index)
            stop = _STOP_OUT[sent_stop(event.stop, bool(self.saw_call))]
            return (out + self._event("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                                                        "usage": {"input_tokens": event.input_tokens,
                                                                  "output_tokens": event.output_tokens}})
                    + self._event("message_stop", {}))
        if isinstance(event, ev.Dropped):
            self.losses.append(Loss("/stream", None, "dropped", f"{event.what} cannot cross to Anthropic", event.rule))
            return b""
        if isinstance(event, ev.Failure):
            self.finished = True
            return self._event("error", {"error": anthropic_error(event.raw if event.raw is not None else event.message)})
        return b""

    def _open(self) -> int:
        index = self.next
        self.next += 1
        self.open.add(index)
        return index

    def _stop(self, index: int) -> bytes:
        self.open.discard(index)
        return self._event("content_block_stop", {"index": index})

    def _close_text(self) -> bytes:
        if self.text_block is None:
            return b""
        index, self.text_block = self.text_block, None
        return self._stop(index)


def emit_tool_result(item: Result, emit: Emit) -> dict[str, Any]:
    """One tool result as this dialect carries it (what the MCP bridge writes for a tools/call result)."""
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": item.call_id}
    blocks = content_blocks(item.parts)
    if blocks and all(b["type"] == "text" for b in blocks):
        out["content"] = join_text(item.parts)
    elif blocks:
        out["content"] = blocks
    if item.is_error:
        out["is_error"] = True
    return out
