"""OpenAI Chat Completions <-> the neutral form: requests (incl. the legacy `functions` surface),
responses and `chat.completion.chunk` streams."""

from __future__ import annotations

from typing import Any, Literal

from ... import jsonsafe, sse
from ...dialect import Dialect
from ...pointer import join
from ...sse import SSEEvent, SSEParser
from ...translate import events as ev
from ...translate.common import (sent_stop, BLOCKS, RUN, Emit, assistant_turns, back_id, back_name, data_url, declared_once, flagged_text,
                     hollow, join_text, json_schema_of, openai_error, openai_format, openai_identifiers, openai_output, openai_reasoning, openai_strict,
                                 read_openai_identifiers,
                                 split_data_url, token_counts)
from ...translate.model import (Builtin, Call, Choice, Loss, Message, Opaque, Part, Reasoning, Request, Response, Result,
                    State, StopReason, Tool, TranslationError)
from .limits import RANGES
from .shape import NO_ARGUMENTS, with_root_properties
from ...translate.arguments import decode_arguments, encode_arguments

_PARAMS = ("model", "messages", "tools", "functions", "tool_choice", "function_call", "parallel_tool_calls",
           "stream", "stream_options", "max_tokens", "max_completion_tokens", "temperature", "top_p", "stop",
           "web_search_options", "store", "reasoning_effort", "response_format", "user", "safety_identifier",
           "prompt_cache_key")
_NULLABLE = ("tools", "functions", "tool_choice", "function_call", "reasoning_effort", "response_format")


# --- requests ------------------------------------------------------------------------------------

def parse_content(content: Any, src: str, losses: list[Loss]) -> list[Part]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Part("text", src, text=content)]
    if not isinstance(content, list):
        raise TranslationError("content must be a string or a list of parts", src)
    parts: list[Part] = []
    for i, part in enumerate(content):
        here = join(src, i)
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("text", "input_text"):
            parts.append(Part("text", here, text=str(part.get("text", ""))))
        elif kind == "refusal":
            parts.append(Part("refusal", here, text=str(part.get("refusal", ""))))
        elif kind == "image_url":
            image = part.get("image_url")
            url = str(image.get("url", "")) if isinstance(image, dict) else str(image or "")
            inline = split_data_url(url)
            parts.append(Part("image", here, mime=inline[0], data=inline[1]) if inline else Part("image", here, url=url))
        elif kind == "input_audio":
            audio = part.get("input_audio") or {}
            parts.append(Part("audio", here, data=str(audio.get("data", "")), mime=f"audio/{audio.get('format', 'wav')}"))
        elif kind == "file":
            file = part.get("file") or {}
            inline = split_data_url(str(file.get("file_data", "")))
            if inline:
                parts.append(Part("file", here, mime=inline[0], data=inline[1], filename=str(file.get("filename", ""))))
            else:
                parts.append(Part("file", here, url=str(file.get("file_id", "")), filename=str(file.get("filename", ""))))
        else:
            raise TranslationError(f"unknown content part type {kind!r}", here)
    return parts


def parse_request(payload: dict[str, Any], path: str) -> tuple[Request, list[Loss]]:
    losses: list[Loss] = []
    req = Request(model=str(payload.get("model") or ""))
    for key, value in payload.items():
        if value is None and key in _NULLABLE:
            losses.append(Loss(join("", key), None, "dropped", "null means absent", "XL-10"))
        elif key not in _PARAMS:
            req.leftovers.append((join("", key), f"Chat parameter {key!r} has no counterpart"))
    messages = payload.get("messages")
    if not isinstance(messages, list):
        raise TranslationError("messages must be a list", "/messages")
    for i, message in enumerate(messages):
        _parse_message(message, join("/messages", i), req, losses)
    _parse_tools(payload, req, losses)
    _parse_choice(payload, req, losses)
    if isinstance(payload.get("parallel_tool_calls"), bool):
        req.parallel = payload["parallel_tool_calls"]
    req.stream = payload.get("stream") is True
    req.store = payload["store"] if isinstance(payload.get("store"), bool) else None
    limit_key = "max_completion_tokens" if "max_completion_tokens" in payload else "max_tokens"
    limit = payload.get(limit_key)
    req.max_tokens = limit if isinstance(limit, int) else None
    req.sources["max_tokens"] = join("", limit_key)
    if isinstance(payload.get("reasoning_effort"), str):
        req.reasoning = Reasoning(payload["reasoning_effort"], "/reasoning_effort")
    if payload.get("response_format") is not None:
        openai_output(payload["response_format"], "/response_format", req, nested=True)
    read_openai_identifiers(payload, req, ("user", "safety_identifier"))
    if isinstance(payload.get("user"), str) and isinstance(payload.get("safety_identifier"), str):
        losses.append(Loss("/safety_identifier", None, "dropped", "user is given and carries the end user; the "
                           "safety_identifier beside it is not carried", ""))
    req.temperature = payload.get("temperature")
    req.top_p = payload.get("top_p")
    stop = payload.get("stop")
    req.stop = [stop] if isinstance(stop, str) else [s for s in stop or [] if isinstance(s, str)]
    return req, losses


def _parse_message(message: Any, src: str, req: Request, losses: list[Loss]) -> None:
    if not isinstance(message, dict):
        raise TranslationError("a message must be an object", src)
    role = message.get("role")
    content_src = join(src, "content")
    if role in ("system", "developer"):
        req.items.append(Message("system", parse_content(message.get("content"), content_src, losses), src))
    elif role == "user":
        req.items.append(Message("user", parse_content(message.get("content"), content_src, losses), src))
    elif role == "assistant":
        parts = parse_content(message.get("content"), content_src, losses)
        if message.get("refusal"):
            parts.append(Part("refusal", join(src, "refusal"), text=str(message["refusal"])))
        if any(p.text or p.kind not in ("text", "refusal") for p in parts):
            req.items.append(Message("assistant", parts, src))
        tool_calls = message.get("tool_calls")
        if tool_calls is None and "tool_calls" in message:
            losses.append(Loss(join(src, "tool_calls"), None, "dropped", "null means absent", "XL-10"))
        elif tool_calls is not None and not isinstance(tool_calls, list):
            # Else a string or an object is walked as its characters or keys, and blamed on the first.
            raise TranslationError("tool_calls must be a list", join(src, "tool_calls"))
        for j, call in enumerate(tool_calls or []):
            req.items.append(_parse_call(call, join(src, "tool_calls", j), losses))
        legacy = message.get("function_call")
        if isinstance(legacy, dict):
            here = join(src, "function_call")
            arguments, raw = decode_arguments(legacy.get("arguments"), join(here, "arguments"), losses)
            req.items.append(Call(None, str(legacy.get("name", "")), arguments, here, raw, name_src=join(here, "name")))
        elif "function_call" in message and legacy is None:
            losses.append(Loss(join(src, "function_call"), None, "dropped", "null means absent", "XL-10"))
        for key in ("reasoning_content", "audio"):
            if message.get(key):
                losses.append(Loss(join(src, key), None, "dropped", f"assistant {key} has no counterpart", "XL-14"))
    elif role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise TranslationError("a tool message needs its tool_call_id", join(src, "tool_call_id"))
        req.items.append(Result(call_id, None, parse_content(message.get("content"), content_src, losses), src,
                                id_src=join(src, "tool_call_id")))
    elif role == "function":
        name = message.get("name")
        if not isinstance(name, str) or not name:
            raise TranslationError("a legacy function message needs its name to find its call", join(src, "name"))
        req.items.append(Result(None, name, parse_content(message.get("content"), content_src, losses), src,
                                name_src=join(src, "name")))
    else:
        raise TranslationError(f"unknown message role {role!r}", join(src, "role"))


def _parse_call(call: Any, src: str, losses: list[Loss]) -> Call:
    if not isinstance(call, dict):
        raise TranslationError("a tool call must be an object", src)
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise TranslationError("a tool call needs an id", join(src, "id"))
    if call.get("type") == "custom":
        custom = call.get("custom") or {}
        return Call(call_id, str(custom.get("name", "")), {"input": custom.get("input", "")}, src, custom=True,
                    name_src=join(src, "custom", "name"), id_src=join(src, "id"))
    function = call.get("function") or {}
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise TranslationError("a tool call needs a function name", join(src, "function", "name"))
    arguments, raw = decode_arguments(function.get("arguments"), join(src, "function", "arguments"), losses)
    return Call(call_id, name, arguments, src, raw, name_src=join(src, "function", "name"), id_src=join(src, "id"))


def _parse_tools(payload: dict[str, Any], req: Request, losses: list[Loss]) -> None:
    seen: set[str] = set()
    for j, tool in enumerate(payload.get("tools") or []):
        here = join("/tools", j)
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind == "function" and isinstance(tool.get("function"), dict):
            fn = tool["function"]
            name = fn.get("name")
            if not declared_once(name, here, seen, losses, "function tool"):
                continue
            schema = json_schema_of(fn["parameters"], join(here, "function", "parameters"), losses) \
                if isinstance(fn.get("parameters"), dict) else {}
            req.tools.append(Tool(name, str(fn.get("description") or ""), schema, here, fn.get("strict"),
                                  name_src=join(here, "function", "name"), schema_src=join(here, "function", "parameters")))
        elif kind == "custom" and isinstance(tool.get("custom"), dict):
            custom = tool["custom"]
            name = str(custom.get("name") or "")
            if name and name not in seen:
                seen.add(name)
                req.tools.append(Tool(name, str(custom.get("description") or ""), {}, here, custom=True,
                                      name_src=join(here, "custom", "name")))
        else:
            req.builtins.append(Builtin(str(kind), {}, here, Dialect.OPENAI_CHAT, tool))
    for j, fn in enumerate(payload.get("functions") or []):
        here = join("/functions", j)
        name = fn.get("name") if isinstance(fn, dict) else None
        if not isinstance(name, str) or not name:
            losses.append(Loss(here, None, "dropped", "a legacy function without a name cannot be declared", "XL-09"))
            continue
        if name in seen:
            losses.append(Loss(here, None, "dropped",
                               f"{name!r} is declared in both tools and functions; the tools entry is kept", "XL-03"))
            continue
        seen.add(name)
        schema = json_schema_of(fn["parameters"], join(here, "parameters"), losses) \
            if isinstance(fn.get("parameters"), dict) else {}
        req.tools.append(Tool(name, str(fn.get("description") or ""), schema, here, name_src=join(here, "name")))
    options = payload.get("web_search_options")
    if isinstance(options, dict):
        neutral = {k: v for k, v in options.items() if k != "user_location"}
        location = options.get("user_location")
        if isinstance(location, dict):
            neutral["user_location"] = dict(location.get("approximate") or {})
        req.builtins.append(Builtin("web_search", neutral, "/web_search_options", Dialect.OPENAI_CHAT))


def _parse_choice(payload: dict[str, Any], req: Request, losses: list[Loss]) -> None:
    choice = payload.get("tool_choice")
    legacy = payload.get("function_call")
    if choice is not None and legacy is not None:
        losses.append(Loss("/function_call", None, "dropped", "tool_choice is given; the legacy selector is ignored",
                           "XL-11"))
    if choice is None and legacy is not None:
        if legacy in ("none", "auto"):
            req.choice = Choice(legacy, "/function_call")
        elif isinstance(legacy, dict) and isinstance(legacy.get("name"), str):
            req.choice = Choice("named", "/function_call", legacy["name"])
        return
    if choice in ("none", "auto", "required"):
        req.choice = Choice(choice, "/tool_choice")
    elif isinstance(choice, dict):
        kind = choice.get("type")
        if kind == "function":
            req.choice = Choice("named", "/tool_choice", str((choice.get("function") or {}).get("name", "")))
        elif kind == "custom":
            req.choice = Choice("named", "/tool_choice", str((choice.get("custom") or {}).get("name", "")))
        elif kind == "allowed_tools":
            allowed = choice.get("allowed_tools") or {}
            mode: Literal["required", "auto"] = "required" if allowed.get("mode") == "required" else "auto"
            names = []
            for j, entry in enumerate(allowed.get("tools") or []):
                named = (entry.get("function") or entry.get("custom") or {}) if isinstance(entry, dict) else {}
                if isinstance(named.get("name"), str) and named["name"]:
                    names.append(named["name"])
                else:
                    losses.append(Loss(join("/tool_choice/allowed_tools/tools", j), None, "dropped",
                                       "an allowed_tools entry without a name allows nothing", "XL-11"))
            req.choice = Choice(mode, "/tool_choice", allowed=names, allowed_src="/tool_choice/allowed_tools/tools")


def emit_content(parts: list[Part]) -> str | list[dict[str, Any]]:
    if all(p.kind == "text" for p in parts):
        return join_text(parts)
    out: list[dict[str, Any]] = []
    for p in parts:
        if p.kind == "text":
            out.append({"type": "text", "text": p.text})
        elif p.kind == "image":
            out.append({"type": "image_url", "image_url": {"url": data_url(p)}})
        elif p.kind == "audio" and p.data:
            out.append({"type": "input_audio", "input_audio": {"data": p.data, "format": p.mime.split("/")[-1] or "wav"}})
        elif p.kind == "file":
            file: dict[str, Any] = {"file_data": data_url(p)} if p.data else {"file_id": p.url}
            if p.filename:
                file["filename"] = p.filename
            out.append({"type": "file", "file": file})
        else:
            raise TranslationError(f"{p.kind} by URL has no Chat content part", p.src)
    return out


def emit_request(req: Request, emit: Emit) -> dict[str, Any]:
    out: dict[str, Any] = {"model": req.model}
    messages: list[dict[str, Any]] = []
    for role, group in assistant_turns(req.items):
        if role == "system":
            for message in group:
                if any(p.kind != "text" for p in message.parts):
                    emit.drop(message.src, "system messages carry text only; media dropped")
                messages.append({"role": "system", "content": join_text(message.parts)})
        elif role == "assistant":
            _emit_assistant(group, emit, messages)
        else:
            _emit_user_turn(group, emit, messages)
    out["messages"] = messages
    tools = emit_tools(req.tools, emit)
    for builtin in req.builtins:
        if builtin.kind == "web_search":
            options: dict[str, Any] = {}
            for key, value in builtin.options.items():
                if key == "search_context_size":
                    options[key] = value
                elif key == "user_location":
                    options[key] = {"type": "approximate", "approximate": value}
                else:
                    emit.drop(builtin.pointer(key), f"web search option {key!r} has no Chat counterpart", "XL-09")
            out["web_search_options"] = options
        else:
            emit.drop(builtin.src, f"built-in tool {builtin.kind!r} has no Chat Completions equivalent", "XL-09")
    if tools:
        out["tools"] = tools
    if req.choice is not None:
        out["tool_choice"] = _emit_choice(req.choice, emit, tools)
        if out["tool_choice"] is None:
            del out["tool_choice"]
    if req.parallel is not None:
        if tools:
            out["parallel_tool_calls"] = req.parallel
            if req.parallel_src != "/parallel_tool_calls":
                emit.convert(req.parallel_src, "/parallel_tool_calls", "Chat states parallel calls at the top level")
        else:
            emit.drop(req.parallel_src, "parallel_tool_calls without function tools is rejected", "XL-11")
    for key, name in (("max_tokens", "max_tokens"), ("temperature", "temperature"), ("top_p", "top_p")):
        if getattr(req, key) is not None:
            out[name] = emit.ranged(req, key, join("", name), RANGES)
    effort = openai_reasoning(req, emit, "/reasoning_effort")
    if effort is not None:
        out["reasoning_effort"] = effort
    if req.output is not None:
        out["response_format"] = openai_format(req.output, emit, "/response_format", nested=True)
    openai_identifiers(req, emit, out, "user")
    if req.stop:
        out["stop"] = req.stop
    if req.store is not None:
        out["store"] = req.store
    if req.stream:
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}
        emit.losses.append(Loss("", "/stream_options", "synthesised",
                                "usage is requested so the translated stream can report token counts", ""))
    for pointer, why in req.leftovers:
        emit.drop(pointer, why)
    return out


def _emit_assistant(group: list[Any], emit: Emit, messages: list[dict[str, Any]]) -> None:
    tgt = join("/messages", len(messages))
    parts: list[Part] = []
    calls: list[dict[str, Any]] = []
    for item in group:
        if isinstance(item, Message):
            if any(p.kind not in ("text", "refusal") for p in item.parts):
                emit.drop(item.src, "assistant messages carry text only in Chat; media dropped")
            parts.extend(item.parts)
        elif isinstance(item, Call):
            here = join(tgt, "tool_calls", len(calls))
            call_id = emit.call_id(item.id or "", item.id_src or item.src, join(here, "id"))
            name = emit.name(item.name, item.name_src or item.src, join(here, "function", "name"))
            if item.custom:
                calls.append({"id": call_id, "type": "custom",
                              "custom": {"name": name, "input": str(item.arguments.get("input", ""))}})
            else:
                calls.append({"id": call_id, "type": "function",
                              "function": {"name": name, "arguments": encode_arguments(item.arguments,
                                                                                       item.raw_arguments)}})
        elif isinstance(item, Opaque):
            emit.opaque(item)
    message = _assistant_message(parts, BLOCKS)
    if calls:
        message["tool_calls"] = calls
    if message["content"] is not None or calls or "refusal" in message:
        messages.append(message)


def _assistant_message(parts: list[Part], separator: str) -> dict[str, Any]:
    """An assistant message's text as `content` (None when there is none) and its refusal in
    `refusal`, where Chat clients look for it."""
    message: dict[str, Any] = {"role": "assistant", "content": join_text(parts, separator) or None}
    refusal = join_text(parts, separator, "refusal")
    if refusal:
        message["refusal"] = refusal
    return message


def _emit_user_turn(group: list[Any], emit: Emit, messages: list[dict[str, Any]]) -> None:
    """Tool messages first, then anything a tool message cannot carry, then the user's own
    messages (XL-07: text is moved, never dropped)."""
    results = [item for item in group if isinstance(item, Result)]
    others = [item for item in group if not isinstance(item, Result)]
    first_result = next((i for i, item in enumerate(group) if isinstance(item, Result)), len(group))
    if any(not isinstance(item, Result) for item in group[:first_result]) and results:
        emit.losses.append(Loss(group[0].src, join("/messages", len(messages)), "converted",
                                "user text placed after the tool results it preceded", "XL-07"))
    media: list[Part] = []
    for result in results:
        tgt = join("/messages", len(messages))
        call_id = emit.call_id(result.call_id or "", result.id_src or result.src, join(tgt, "tool_call_id"))
        extra = [p for p in result.parts if p.kind != "text"]
        if extra:
            emit.losses.append(Loss(result.src, None, "converted",
                                    "Chat tool messages carry text only; the media follow in a user message", "XL-15"))
            media.extend(extra)
        messages.append({"role": "tool", "tool_call_id": call_id, "content": flagged_text(result, emit, join(tgt, "content"))})
    if media:
        messages.append({"role": "user", "content": emit_content(media)})
    for item in others:
        if isinstance(item, Message):
            messages.append({"role": "user", "content": emit_content(item.parts)})
        elif isinstance(item, Opaque):
            emit.opaque(item)


def emit_tools(tools: list[Tool], emit: Emit) -> list[dict[str, Any]]:
    return [_emit_tool(tool, emit, join("/tools", j)) for j, tool in enumerate(tools)]


def _emit_tool(tool: Tool, emit: Emit, tgt: str) -> dict[str, Any]:
    name = emit.name(tool.name, tool.name_src or tool.src, join(tgt, "function", "name"))
    if tool.custom:
        custom: dict[str, Any] = {"name": name}
        if tool.description:
            custom["description"] = tool.description
        return {"type": "custom", "custom": custom}
    function: dict[str, Any] = {"name": name}
    if tool.description:
        function["description"] = tool.description
    function["parameters"] = with_root_properties(tool.schema) if tool.schema else dict(NO_ARGUMENTS)
    strict = openai_strict(tool.strict, function["parameters"], join(tool.src, "strict"), join(tgt, "function", "strict"),
                           emit)
    if strict is not None:
        function["strict"] = strict
    return {"type": "function", "function": function}


def _emit_choice(choice: Choice, emit: Emit, tools: list[dict[str, Any]]) -> Any:
    if choice.mode == "hosted":
        # Chat forces no hosted tool: web_search_options make a search model search anyway.
        if not tools:
            emit.drop(choice.src, f"forcing the hosted tool {choice.name!r} has no Chat counterpart", "XL-11")
            return None
        emit.convert(choice.src, "/tool_choice", f"forcing the hosted tool {choice.name!r} has no Chat counterpart; "
                     "written as auto so no function call is forced in its place", "XL-11")
        return "auto"
    if not tools and choice.mode != "none":
        emit.drop(choice.src, "tool_choice without function tools is rejected", "XL-11")
        return None
    if choice.mode == "named":
        return {"type": "function", "function": {"name": emit.name(choice.name, choice.src, "/tool_choice/function/name")}}
    if choice.allowed is not None:
        kinds = {tool["custom" if tool["type"] == "custom" else "function"]["name"]: tool["type"] for tool in tools}
        allowed = []
        for j, name in enumerate(choice.allowed):
            alias = emit.name(name, join(choice.allowed_src, j), join("/tool_choice/allowed_tools/tools", j))
            kind = kinds.get(alias, "function")
            allowed.append({"type": kind, kind: {"name": alias}})
        return {"type": "allowed_tools", "allowed_tools": {"mode": choice.mode, "tools": allowed}}
    return choice.mode


# --- responses -----------------------------------------------------------------------------------

_FINISH: dict[object, StopReason] = {  # looked up with whatever the response holds
    "stop": "stop", "length": "length", "tool_calls": "tool_calls", "function_call": "tool_calls",
    "content_filter": "content_filter"}


def parse_response(payload: dict[str, Any], state: State) -> tuple[Response, list[Loss]]:
    losses: list[Loss] = []
    resp = Response(id=str(payload.get("id") or ""), model=str(payload.get("model") or ""),
                    created=int(payload.get("created") or 0))
    if "error" in payload and not payload.get("choices"):
        resp.error = payload["error"]
        return resp, losses
    choices = payload.get("choices") or []
    if len(choices) > 1:
        losses.append(Loss("/choices/1", None, "dropped", "only the first choice is translated", ""))
    if choices:
        choice = choices[0]
        message = choice.get("message") or {}
        parts = parse_content(message.get("content"), "/choices/0/message/content", losses)
        if message.get("refusal"):
            parts.append(Part("refusal", "/choices/0/message/refusal", text=str(message["refusal"])))
        if any(p.text for p in parts):
            resp.items.append(Message("assistant", parts, "/choices/0/message"))
        for j, call in enumerate(message.get("tool_calls") or []):
            here = join("/choices/0/message/tool_calls", j)
            function = call.get("function") or {}
            arguments, raw = decode_arguments(function.get("arguments"), join(here, "function", "arguments"), losses)
            resp.items.append(Call(call.get("id"), str(function.get("name", "")), arguments, here, raw,
                                   id_src=join(here, "id")))
        legacy = message.get("function_call")
        if isinstance(legacy, dict):
            here = "/choices/0/message/function_call"
            arguments, raw = decode_arguments(legacy.get("arguments"), join(here, "arguments"), losses)
            resp.items.append(Call(None, str(legacy.get("name", "")), arguments, here, raw))
        resp.stop = _FINISH.get(choice.get("finish_reason"), "stop")
    hollow(resp, losses, "/choices/0/message" if choices else "/choices")
    resp.input_tokens, resp.output_tokens = token_counts(payload.get("usage"), "prompt_tokens", "completion_tokens")
    return resp, losses


def emit_response(resp: Response, state: State, losses: list[Loss]) -> dict[str, Any]:
    if resp.error is not None:
        return {"error": openai_error(resp.error)}
    parts: list[Part] = []
    calls: list[dict[str, Any]] = []
    for item in resp.items:
        if isinstance(item, Message):
            parts.extend(item.parts)
        elif isinstance(item, Call):
            here = join("/choices/0/message/tool_calls", len(calls))
            call_id = back_id(state, item.id, f"{resp.id}:{len(calls)}", losses, item.src, join(here, "id"))
            calls.append({"id": call_id, "type": "function",
                          "function": {"name": back_name(state, item.name),
                                       "arguments": encode_arguments(item.arguments, item.raw_arguments)}})
        elif isinstance(item, Opaque):
            losses.append(Loss(item.src, None, "dropped", f"{item.dialect.value} {item.what} cannot cross to Chat",
                               "XL-14"))
    message = _assistant_message(parts, RUN)
    if calls:
        message["tool_calls"] = calls
    stop = sent_stop(resp.stop, bool(calls))
    return {"id": resp.id or "chatcmpl-translated", "object": "chat.completion", "created": resp.created or state.created,
            "model": resp.model or state.model,
            "choices": [{"index": 0, "message": message, "finish_reason": stop, "logprobs": None}],
            "usage": {"prompt_tokens": resp.input_tokens, "completion_tokens": resp.output_tokens,
                      "total_tokens": resp.input_tokens + resp.output_tokens}}


# --- streams -------------------------------------------------------------------------------------

# The upstream's stream bytes -> the events StreamParser reads: server-sent events.
StreamReader = SSEParser


class StreamParser:
    """`chat.completion.chunk` events -> neutral events. Calls are keyed by their `index`; a call
    is announced once both its id and name are known (some servers send the name late)."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.started = False
        self.pending: dict[Any, dict[str, Any]] = {}
        self.open: set[Any] = set()
        self.sent: dict[Any, list[str]] = {}  # open call -> [its id, argument fragments so far]
        self.finish: StopReason | None = None
        self.usage = (0, 0)
        self.done = False
        self.dropped_choices = False

    def feed(self, event: SSEEvent) -> list[ev.Event]:
        if self.done:
            return []
        if event.data.strip() == "[DONE]":
            return self.close()
        chunk = ev.decode(event, "chunk")
        if not isinstance(chunk, dict):
            return chunk
        if "error" in chunk and not chunk.get("choices"):
            return [ev.Failure(str(openai_error(chunk["error"])["message"]), chunk["error"])]
        out: list[ev.Event] = []
        if not self.started:
            self.started = True
            out.append(ev.Start(str(chunk.get("id") or ""), str(chunk.get("model") or "")))
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = token_counts(usage, "prompt_tokens", "completion_tokens")
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                if not self.dropped_choices:
                    self.dropped_choices = True
                    out.append(ev.Dropped("choices after the first", ""))
                continue
            delta = choice.get("delta") or {}
            for key in ("content", "refusal"):
                if isinstance(delta.get(key), str) and delta[key]:
                    out.append(ev.TextDelta(delta[key], key == "refusal"))
            if delta.get("reasoning_content"):
                out.append(ev.Dropped("reasoning_content"))
            for position, call in enumerate(delta.get("tool_calls") or []):
                key = call.get("index", position)
                function = call.get("function") or {}
                self._call(key, call.get("id"), function.get("name"), function.get("arguments"), out)
            legacy = delta.get("function_call")
            if isinstance(legacy, dict):
                self._call("function_call", None, legacy.get("name"), legacy.get("arguments"), out)
            if choice.get("finish_reason"):
                self.finish = _FINISH.get(choice["finish_reason"], "stop")
        return out

    def _call(self, key: Any, call_id: Any, name: Any, arguments: Any, out: list[ev.Event]) -> None:
        if key in self.open:
            if not isinstance(arguments, str) or not arguments:
                return
            sent = self.sent[key]
            if call_id and call_id == sent[0] and arguments == "".join(sent[1:]):
                # Some gateways close with a "summary" delta repeating the whole call; relaying it
                # would double the arguments on the client (XL-12).
                out.append(ev.Dropped(f"a summary delta repeating call {call_id!r}", "XL-12"))
                return
            sent.append(arguments)
            out.append(ev.CallArgs(key, arguments))
            return
        pending = self.pending.setdefault(key, {"id": "", "name": "", "args": []})
        if isinstance(call_id, str) and call_id:
            pending["id"] = call_id
        if isinstance(name, str) and name:
            pending["name"] = name
        if isinstance(arguments, str) and arguments:
            pending["args"].append(arguments)
        if pending["name"]:
            self._announce(key, out)

    def _announce(self, key: Any, out: list[ev.Event]) -> None:
        pending = self.pending.pop(key)
        self.open.add(key)
        self.sent[key] = [pending["id"], *pending["args"]]
        out.append(ev.CallStart(key, pending["id"], pending["name"]))
        if pending["args"]:
            out.append(ev.CallArgs(key, "".join(pending["args"])))

    def close(self) -> list[ev.Event]:
        if self.done:
            return []
        self.done = True
        out: list[ev.Event] = []
        for key in list(self.pending):
            self._announce(key, out)
        out.extend(ev.CallEnd(key) for key in sorted(self.open, key=str))
        out.append(ev.Finish(self.finish or "stop", *self.usage))
        return out


class StreamEmitter:
    """Neutral events -> `chat.completion.chunk` SSE: `id`, `type` and `name` on the first delta of
    each call only, dense stable indices, one finish chunk, no summary chunk (XL-12)."""

    def __init__(self, state: State, losses: list[Loss]) -> None:
        self.state = state
        self.losses = losses
        self.id = "chatcmpl-translated"
        self.model = state.model
        self.created = state.created
        self.index: dict[Any, int] = {}
        self.finished = False

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}
        return sse.encode(jsonsafe.dumps(body))

    def emit(self, event: ev.Event) -> bytes:
        if isinstance(event, ev.Start):
            self.id = event.id or self.id
            self.model = event.model or self.model
            return self._chunk({"role": "assistant", "content": ""})
        if isinstance(event, ev.TextDelta):
            return self._chunk({"refusal" if event.refusal else "content": event.text})
        if isinstance(event, ev.CallStart):
            index = self.index[event.key] = len(self.index)
            here = join("/stream/tool_calls", index)
            call_id = back_id(self.state, event.id or None, f"{self.id}:{index}", self.losses, here, here)
            return self._chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                                "function": {"name": back_name(self.state, event.name),
                                                             "arguments": ""}}]})
        if isinstance(event, ev.CallArgs):
            return self._chunk({"tool_calls": [{"index": self.index[event.key],
                                                "function": {"arguments": event.delta}}]})
        if isinstance(event, ev.Finish):
            if self.finished:
                return b""
            self.finished = True
            stop = sent_stop(event.stop, bool(self.index))
            out = self._chunk({}, stop)
            if self.state.stream_usage:
                usage = {"prompt_tokens": event.input_tokens, "completion_tokens": event.output_tokens,
                         "total_tokens": event.input_tokens + event.output_tokens}
                out += sse.encode(jsonsafe.dumps({"id": self.id, "object": "chat.completion.chunk",
                                                  "created": self.created, "model": self.model, "choices": [],
                                                  "usage": usage}))
            return out + sse.encode(b"[DONE]")
        if isinstance(event, ev.Dropped):
            self.losses.append(Loss("/stream", None, "dropped", f"{event.what} cannot cross to Chat", event.rule))
            return b""
        if isinstance(event, ev.Failure):
            self.finished = True
            error = openai_error(event.raw if event.raw is not None else event.message)
            return sse.encode(jsonsafe.dumps({"error": error}))
        return b""


def emit_tool_result(item: Result, emit: Emit) -> dict[str, Any]:
    """One tool result as this dialect carries it (what the MCP bridge writes for a tools/call result)."""
    for part in item.parts:
        if part.kind != "text":
            emit.drop(part.src, f"a Chat tool message carries text only; the {part.kind} is dropped", "XL-15")
    return {"role": "tool", "tool_call_id": item.call_id, "content": flagged_text(item, emit, "/content")}
