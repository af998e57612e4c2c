"""OpenAI Responses <-> the neutral form: requests, responses and the typed event stream."""

from __future__ import annotations

from typing import Any

from ... import jsonsafe, sse
from ...dialect import Dialect
from ...naming import digest
from ...pointer import join
from ...sse import SSEEvent, SSEParser
from ...translate import events as ev
from ...translate.common import (RUN, Emit, back_id, back_name, data_url, declared_once, flagged_text, hollow, join_text,
                                 json_schema_of,
                     openai_error, openai_format, openai_identifiers, openai_output, openai_reasoning, openai_strict,
                                 read_openai_identifiers, split_data_url, token_counts)
from ...translate.model import (Builtin, Call, Choice, Loss, Message, Opaque, Part, Reasoning, Request, Response, Result,
                    State, StopReason, Tool, TranslationError)
from ..openai_chat.shape import NO_ARGUMENTS, with_root_properties
from .limits import RANGES
from ...translate.arguments import decode_arguments, encode_arguments

_PARAMS = ("model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls", "stream",
           "max_output_tokens", "temperature", "top_p", "store", "reasoning", "text", "user", "safety_identifier",
           "prompt_cache_key")
_NULLABLE = ("tools", "tool_choice", "instructions", "previous_response_id", "conversation", "reasoning", "text")
_BUILTIN_KIND = {"web_search": "web_search", "web_search_preview": "web_search",
                 "web_search_2025_08_26": "web_search", "web_search_preview_2025_03_11": "web_search",
                 "code_interpreter": "code_interpreter"}
# The hosted-tool choice that forces each neutral built-in kind.
_HOSTED_CHOICE = {"web_search": "web_search_preview", "code_interpreter": "code_interpreter"}


# --- requests ------------------------------------------------------------------------------------

def _parse_parts(content: Any, src: str) -> list[Part]:
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
        if kind in ("input_text", "output_text", "text", "summary_text"):
            parts.append(Part("text", here, text=str(part.get("text", ""))))
        elif kind == "refusal":
            parts.append(Part("refusal", here, text=str(part.get("refusal", ""))))
        elif kind == "input_image":
            url = str(part.get("image_url") or "")
            inline = split_data_url(url)
            if inline:
                parts.append(Part("image", here, mime=inline[0], data=inline[1]))
            elif url:
                parts.append(Part("image", here, url=url))
            else:
                parts.append(Part("image", here, url=str(part.get("file_id", ""))))
        elif kind == "input_file":
            inline = split_data_url(str(part.get("file_data") or ""))
            name = str(part.get("filename") or "")
            if inline:
                parts.append(Part("file", here, mime=inline[0], data=inline[1], filename=name))
            else:
                parts.append(Part("file", here, url=str(part.get("file_url") or part.get("file_id") or ""), filename=name))
        elif kind == "input_audio":
            audio = part.get("input_audio") or {}
            parts.append(Part("audio", here, data=str(audio.get("data", "")), mime=f"audio/{audio.get('format', 'wav')}"))
        else:
            raise TranslationError(f"unknown content part type {kind!r}", here)
    return parts


def parse_request(payload: dict[str, Any], path: str) -> tuple[Request, list[Loss]]:
    losses: list[Loss] = []
    req = Request(model=str(payload.get("model") or ""))
    for key, value in payload.items():
        if value is None and key in _NULLABLE:
            losses.append(Loss(join("", key), None, "dropped", "null means absent", "XL-10"))
        elif key in ("previous_response_id", "conversation"):
            raise TranslationError(f"{key} points at history held by the Responses server; the target cannot see it",
                                   join("", key))
        elif key not in _PARAMS:
            req.leftovers.append((join("", key), f"Responses parameter {key!r} has no counterpart"))
    if isinstance(payload.get("instructions"), str) and payload["instructions"]:
        req.items.append(Message("system", [Part("text", "/instructions", text=payload["instructions"])], "/instructions"))
    items = payload.get("input")
    if isinstance(items, str):
        req.items.append(Message("user", [Part("text", "/input", text=items)], "/input"))
    elif isinstance(items, list):
        for i, item in enumerate(items):
            _parse_item(item, join("/input", i), req.items, losses, req.namespaced)
    elif items is not None:
        raise TranslationError("input must be a string or a list of items", "/input")
    _parse_tools(payload.get("tools") or [], req, losses)
    choice = payload.get("tool_choice")
    if choice in ("none", "auto", "required"):
        req.choice = Choice(choice, "/tool_choice")
    elif isinstance(choice, dict):
        if choice.get("type") in ("function", "custom") and isinstance(choice.get("name"), str):
            req.choice = Choice("named", "/tool_choice", choice["name"])
        elif choice.get("type") == "allowed_tools":
            names = []
            for j, entry in enumerate(choice.get("tools") or []):
                if isinstance(entry, dict) and isinstance(entry.get("name"), str) and entry["name"]:
                    names.append(entry["name"])
                else:
                    losses.append(Loss(join("/tool_choice/tools", j), None, "dropped", "a hosted tool in an "
                                       "allowed_tools subset has no counterpart; it is left out of the subset", "XL-11"))
            req.choice = Choice("required" if choice.get("mode") == "required" else "auto", "/tool_choice",
                                allowed=names, allowed_src="/tool_choice/tools")
        elif _BUILTIN_KIND.get(str(choice.get("type"))) in _HOSTED_CHOICE:
            req.choice = Choice("hosted", "/tool_choice", _BUILTIN_KIND[str(choice["type"])])
        else:
            req.choice = Choice("auto", "/tool_choice")
            losses.append(Loss("/tool_choice", None, "converted",
                               f"forcing the hosted tool {choice.get('type')!r} has no counterpart; written as auto",
                               "XL-11"))
    if isinstance(payload.get("parallel_tool_calls"), bool):
        req.parallel = payload["parallel_tool_calls"]
    req.stream = payload.get("stream") is True
    req.store = payload["store"] if isinstance(payload.get("store"), bool) else None
    req.max_tokens = payload.get("max_output_tokens") if isinstance(payload.get("max_output_tokens"), int) else None
    req.sources["max_tokens"] = "/max_output_tokens"
    reasoning = payload.get("reasoning")
    if isinstance(reasoning, dict):
        if isinstance(reasoning.get("effort"), str):
            req.reasoning = Reasoning(reasoning["effort"], "/reasoning/effort")
        req.leftovers.extend((join("/reasoning", key), f"reasoning.{key} has no counterpart")
                             for key in reasoning if key != "effort")
    text = payload.get("text")
    if isinstance(text, dict):
        if text.get("format") is not None:
            openai_output(text["format"], "/text/format", req, nested=False)
        req.leftovers.extend((join("/text", key), f"text.{key} has no counterpart") for key in text if key != "format")
    req.temperature = payload.get("temperature")
    req.top_p = payload.get("top_p")
    read_openai_identifiers(payload, req, ("safety_identifier", "user"))
    if isinstance(payload.get("user"), str) and isinstance(payload.get("safety_identifier"), str):
        losses.append(Loss("/user", None, "dropped", "safety_identifier is given and carries the end user; the "
                           "deprecated user beside it is not carried", ""))
    return req, losses


def _parse_item(item: Any, src: str, items: list[Any], losses: list[Loss],
                namespaced: dict[str, tuple[str, str]]) -> None:
    if not isinstance(item, dict):
        raise TranslationError("an input item must be an object", src)
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        role = item.get("role")
        parts = _parse_parts(item.get("content"), join(src, "content"))
        if role in ("system", "developer"):
            items.append(Message("system", parts, src))
        elif role in ("user", "assistant"):
            items.append(Message(role, parts, src))
        else:
            raise TranslationError(f"unknown message role {role!r}", join(src, "role"))
    elif kind == "function_call":
        arguments, raw = decode_arguments(item.get("arguments"), join(src, "arguments"), losses)
        items.append(Call(_need(item, "call_id", src), _called(item, src, namespaced), arguments, src, raw,
                          name_src=join(src, "name"), id_src=join(src, "call_id")))
    elif kind == "custom_tool_call":
        items.append(Call(_need(item, "call_id", src), _called(item, src, namespaced), {"input": item.get("input", "")},
                          src, custom=True, name_src=join(src, "name"), id_src=join(src, "call_id")))
    elif kind in ("function_call_output", "custom_tool_call_output"):
        items.append(Result(_need(item, "call_id", src), None, _parse_parts(item.get("output"), join(src, "output")),
                            src, custom=kind == "custom_tool_call_output", id_src=join(src, "call_id")))
    elif kind == "item_reference":
        raise TranslationError("an item_reference points at an item stored by the Responses server", src)
    else:
        items.append(Opaque(Dialect.OPENAI_RESPONSES, f"{kind} item", item, src))


def _called(item: dict[str, Any], src: str, namespaced: dict[str, tuple[str, str]]) -> str:
    """The name a call in the history goes by: a namespaced call's flattened name."""
    name = _need(item, "name", src)
    namespace = item.get("namespace")
    if isinstance(namespace, str) and namespace:
        namespaced[_flat(namespace, name)] = (namespace, name)
        return _flat(namespace, name)
    return name


def _need(item: dict[str, Any], key: str, src: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value:
        raise TranslationError(f"{item.get('type')} needs {key}", join(src, key))
    return value


# A namespace's tools cross as plain functions named <namespace>__<name>, always qualified: the
# name then means the same tool on every turn, whichever namespaces a later request adds (a bare
# name, unique today, would change meaning the day another namespace brings the same one). `__` is
# what every target's name pattern takes, and the convention MCP clients use for server tools
# (mcp__server__tool); a name too long for the target is aliased like any other (XL-02).
NAMESPACE_SEPARATOR = "__"


def _flat(namespace: str, name: str) -> str:
    return f"{namespace}{NAMESPACE_SEPARATOR}{name}"


def _parse_tools(tools: list[Any], req: Request, losses: list[Loss]) -> None:
    seen: set[str] = set()
    for j, tool in enumerate(tools):
        here = join("/tools", j)
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind in ("function", "custom"):
            _parse_function(tool, here, "", req, seen, losses)
        elif kind == "namespace":
            _parse_namespace(tool, here, req, seen, losses)
        elif kind in _BUILTIN_KIND:
            options: dict[str, Any] = {}
            if "search_context_size" in tool:
                options["search_context_size"] = tool["search_context_size"]
            if isinstance(tool.get("user_location"), dict):
                options["user_location"] = {k: v for k, v in tool["user_location"].items() if k != "type"}
            domains = (tool.get("filters") or {}).get("allowed_domains") if isinstance(tool.get("filters"), dict) else None
            if domains:
                options["allowed_domains"] = domains
            req.builtins.append(Builtin(_BUILTIN_KIND[kind], options, here, Dialect.OPENAI_RESPONSES, tool,
                                        {"allowed_domains": join(here, "filters", "allowed_domains")}))
        else:
            req.builtins.append(Builtin(str(kind), {}, here, Dialect.OPENAI_RESPONSES, tool))


def _parse_function(tool: dict[str, Any], here: str, namespace: str, req: Request, seen: set[str],
                    losses: list[Loss]) -> None:
    kind = tool.get("type")
    name = tool.get("name")
    if namespace and isinstance(name, str) and name:
        req.namespaced[_flat(namespace, name)] = (namespace, name)
        name = _flat(namespace, name)
    if not declared_once(name, here, seen, losses, f"{kind} tool"):
        return
    schema = json_schema_of(tool["parameters"], join(here, "parameters"), losses) \
        if isinstance(tool.get("parameters"), dict) else {}
    req.tools.append(Tool(name, str(tool.get("description") or ""), schema, here, tool.get("strict"),
                          custom=kind == "custom", name_src=join(here, "name")))


def _parse_namespace(tool: dict[str, Any], here: str, req: Request, seen: set[str], losses: list[Loss]) -> None:
    namespace = tool.get("name")
    members = tool.get("tools")
    if not isinstance(namespace, str) or not namespace or not isinstance(members, list):
        losses.append(Loss(here, None, "dropped", "a namespace without a name or a tools list declares nothing",
                           "XL-09"))
        return
    for k, member in enumerate(members):
        there = join(here, "tools", k)
        if isinstance(member, dict) and member.get("type") in ("function", "custom"):
            _parse_function(member, there, namespace, req, seen, losses)
            losses.append(Loss(there, None, "converted", f"a tool of the namespace {namespace!r} crosses as the "
                               f"function {_flat(namespace, str(member.get('name')))!r}; its calls come back "
                               "under the namespace", ""))
        else:
            losses.append(Loss(there, None, "dropped", "a namespace holds only function and custom tools", "XL-09"))
    if tool.get("description"):
        losses.append(Loss(join(here, "description"), None, "dropped", "a namespace's own description has no "
                           "counterpart; each function keeps its own", ""))


def emit_parts(parts: list[Part], role: str) -> str | list[dict[str, Any]]:
    if all(p.kind == "text" for p in parts):
        return join_text(parts)
    out: list[dict[str, Any]] = []
    for p in parts:
        if p.kind == "text":
            out.append({"type": "output_text" if role == "assistant" else "input_text", "text": p.text})
        elif p.kind == "refusal":
            out.append({"type": "refusal", "refusal": p.text})
        elif p.kind == "image":
            out.append({"type": "input_image", "image_url": data_url(p), "detail": "auto"})
        elif p.kind == "file":
            file: dict[str, Any] = {"type": "input_file"}
            if p.data:
                file["file_data"] = data_url(p)
            elif p.url.startswith(("http://", "https://")):
                file["file_url"] = p.url
            else:
                file["file_id"] = p.url
            if p.filename:
                file["filename"] = p.filename
            out.append(file)
        else:
            raise TranslationError("audio has no Responses input part", p.src)
    return out


def emit_request(req: Request, emit: Emit) -> dict[str, Any]:
    out: dict[str, Any] = {"model": req.model}
    items: list[dict[str, Any]] = []
    instructions: list[Part] = []
    leading = 0  # the system messages before the first other item: they become the instructions
    for index, item in enumerate(req.items):
        if isinstance(item, Message) and item.role == "system" and not items and leading == index:
            leading += 1
            instructions.extend(item.parts)
            continue
        tgt = join("/input", len(items))
        if isinstance(item, Message):
            role = "developer" if item.role == "system" else item.role
            items.append({"role": role, "content": emit_parts(item.parts, item.role)})
        elif isinstance(item, Call):
            call_id = emit.call_id(item.id or "", item.id_src or item.src, join(tgt, "call_id"))
            name = emit.name(item.name, item.name_src or item.src, join(tgt, "name"))
            if item.custom:
                items.append({"type": "custom_tool_call", "call_id": call_id, "name": name,
                              "input": str(item.arguments.get("input", ""))})
            else:
                items.append({"type": "function_call", "call_id": call_id, "name": name,
                              "arguments": encode_arguments(item.arguments, item.raw_arguments)})
        elif isinstance(item, Result):
            call_id = emit.call_id(item.call_id or "", item.id_src or item.src, join(tgt, "call_id"))
            if all(p.kind == "text" for p in item.parts):
                output: Any = flagged_text(item, emit, join(tgt, "output"))
            else:
                output = emit_parts(item.parts, "user")
                if item.is_error:
                    output.insert(0, {"type": "input_text", "text": "Error:"})
                    emit.losses.append(Loss(item.src, join(tgt, "output"), "converted",
                                            "Responses has no error flag on tool outputs; written as a leading "
                                            "'Error:' text part", "XL-15"))
            items.append({"type": "custom_tool_call_output" if item.custom else "function_call_output",
                          "call_id": call_id, "output": output})
        elif isinstance(item, Opaque) and emit.opaque(item):
            items.append(item.raw)
    if join_text(instructions):
        out["instructions"] = join_text(instructions)
    out["input"] = items
    tools = emit_tools(req.tools, emit)
    for builtin in req.builtins:
        hosted = _emit_builtin(builtin, emit)
        if hosted is not None:
            tools.append(hosted)
    if tools:
        out["tools"] = tools
    choice = _emit_choice(req.choice, emit, tools) if req.choice is not None else None
    if choice is not None:
        out["tool_choice"] = choice
    if req.parallel is not None:
        out["parallel_tool_calls"] = req.parallel
        if req.parallel_src != "/parallel_tool_calls":
            emit.convert(req.parallel_src, "/parallel_tool_calls", "Responses states parallel calls at the top level")
    for key, name in (("max_tokens", "max_output_tokens"), ("temperature", "temperature"), ("top_p", "top_p")):
        if getattr(req, key) is not None:
            out[name] = emit.ranged(req, key, join("", name), RANGES)
    effort = openai_reasoning(req, emit, "/reasoning/effort")
    if effort is not None:
        out["reasoning"] = {"effort": effort}
    if req.output is not None:
        out["text"] = {"format": openai_format(req.output, emit, "/text/format", nested=False)}
    openai_identifiers(req, emit, out, "safety_identifier")
    if req.stop:
        emit.drop(req.stop_src, "the Responses API has no stop sequences")
    if req.store is None:
        # Responses keeps every response server-side unless told not to; no other dialect does.
        emit.losses.append(Loss("", "/store", "synthesised", "the Responses API stores responses by default; "
                                "store is false as the client's own dialect implies", ""))
    out["store"] = bool(req.store)
    if req.stream:
        out["stream"] = True
    for pointer, why in req.leftovers:
        emit.drop(pointer, why)
    return out


def _emit_choice(choice: Choice, emit: Emit, tools: list[dict[str, Any]]) -> Any:
    if choice.mode == "named":
        return {"type": "function", "name": emit.name(choice.name, choice.src, "/tool_choice/name")}
    if choice.mode == "hosted":
        if choice.name in _HOSTED_CHOICE and any(_BUILTIN_KIND.get(t["type"]) == choice.name for t in tools):
            return {"type": _HOSTED_CHOICE[choice.name]}
        emit.drop(choice.src, f"the hosted tool {choice.name!r} is not among the Responses tools; nothing to force",
                  "XL-11")
        return None
    if not tools and choice.mode != "none":
        emit.drop(choice.src, "tool_choice without tools is rejected", "XL-11")
        return None
    if choice.allowed is not None:
        kinds = {t["name"]: t["type"] for t in tools if "name" in t}
        allowed = [{"type": kinds.get(alias, "function"), "name": alias}
                   for alias in (emit.name(name, join(choice.allowed_src, j), join("/tool_choice/tools", j))
                                 for j, name in enumerate(choice.allowed))]
        return {"type": "allowed_tools", "mode": choice.mode, "tools": allowed}
    return choice.mode


def emit_tools(tools: list[Tool], emit: Emit) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for tool in tools:
        tgt = join("/tools", len(out))
        entry: dict[str, Any] = {"type": "custom" if tool.custom else "function",
                                 "name": emit.name(tool.name, tool.name_src or tool.src, join(tgt, "name"))}
        if tool.description:
            entry["description"] = tool.description
        if not tool.custom:
            entry["parameters"] = with_root_properties(tool.schema) if tool.schema else dict(NO_ARGUMENTS)
            entry["strict"] = bool(openai_strict(tool.strict, entry["parameters"], join(tool.src, "strict"),
                                                 join(tgt, "strict"), emit))
        out.append(entry)
    return out


def _emit_builtin(builtin: Builtin, emit: Emit) -> dict[str, Any] | None:
    if builtin.kind == "web_search":
        tool: dict[str, Any] = {"type": "web_search"}
        for key, value in builtin.options.items():
            if key == "search_context_size":
                tool[key] = value
            elif key == "user_location":
                tool[key] = {"type": "approximate", **value}
            elif key == "allowed_domains":
                tool["filters"] = {"allowed_domains": value}
            else:
                emit.drop(builtin.pointer(key), f"web search option {key!r} has no Responses counterpart", "XL-09")
        return tool
    if builtin.kind == "code_interpreter":
        return {"type": "code_interpreter", "container": {"type": "auto"}}
    emit.drop(builtin.src, f"built-in tool {builtin.kind!r} has no Responses equivalent", "XL-09")
    return None


# --- responses -----------------------------------------------------------------------------------

def parse_response(payload: dict[str, Any], state: State) -> tuple[Response, list[Loss]]:
    losses: list[Loss] = []
    resp = Response(id=str(payload.get("id") or ""), model=str(payload.get("model") or ""),
                    created=int(payload.get("created_at") or 0))
    if payload.get("error") and not payload.get("output"):
        resp.error = payload["error"]
        return resp, losses
    for i, item in enumerate(payload.get("output") or []):
        here = join("/output", i)
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "message":
            parts = _parse_parts(item.get("content"), join(here, "content"))
            resp.items.append(Message("assistant", parts, here))
        elif kind == "function_call":
            arguments, raw = decode_arguments(item.get("arguments"), join(here, "arguments"), losses)
            resp.items.append(Call(item.get("call_id"), str(item.get("name", "")), arguments, here, raw))
        elif kind == "custom_tool_call":
            resp.items.append(Call(item.get("call_id"), str(item.get("name", "")), {"input": item.get("input", "")},
                                   here, custom=True))
        else:
            resp.items.append(Opaque(Dialect.OPENAI_RESPONSES, f"{kind} item", item, here))
    hollow(resp, losses, "/output")
    resp.stop = _stop(payload, any(isinstance(i, Call) for i in resp.items))
    resp.input_tokens, resp.output_tokens = token_counts(payload.get("usage"), "input_tokens", "output_tokens")
    return resp, losses


def _stop(payload: dict[str, Any], has_calls: bool) -> StopReason:
    if payload.get("status") == "incomplete":
        reason = (payload.get("incomplete_details") or {}).get("reason")
        return "content_filter" if reason == "content_filter" else "length"
    return "tool_calls" if has_calls else "stop"


def _item_id(prefix: str, *basis: Any) -> str:
    return prefix + digest(repr(basis))[:32]


def emit_response(resp: Response, state: State, losses: list[Loss]) -> dict[str, Any]:
    if resp.error is not None:
        return {"error": openai_error(resp.error)}
    output: list[dict[str, Any]] = []
    calls = 0
    for item in resp.items:
        here = join("/output", len(output))
        if isinstance(item, Message):
            message = _message_item(_item_id("msg_", resp.id, len(output)), join_text(item.parts, RUN))
            refusal = join_text(item.parts, RUN, "refusal")
            if refusal:  # the refusal is its own part; an empty text part does not precede it
                message["content"] = [p for p in message["content"] if p["text"]] + [_part("refusal", refusal)]
            output.append(message)
        elif isinstance(item, Call):
            call_id = back_id(state, item.id, f"{resp.id}:{calls}", losses, item.src, join(here, "call_id"))
            calls += 1
            output.append({"type": "function_call", "id": _item_id("fc_", resp.id, len(output)), "call_id": call_id,
                           **_named(state, item.name),
                           "arguments": encode_arguments(item.arguments, item.raw_arguments), "status": "completed"})
        elif isinstance(item, Opaque):
            losses.append(Loss(item.src, None, "dropped", f"{item.dialect.value} {item.what} cannot cross to Responses",
                               "XL-14"))
    out = _response_object(_response_id(resp.id), resp.model or state.model, resp.created or state.created, output,
                           resp.stop, resp.input_tokens, resp.output_tokens)
    return _failed(out, resp.failed) if resp.failed else out


def _named(state: State, name: str) -> dict[str, str]:
    """The name fields of a call the client declared: a namespaced tool's call names its namespace."""
    name = back_name(state, name)
    if name in state.namespaced:
        namespace, inner = state.namespaced[name]
        return {"namespace": namespace, "name": inner}
    return {"name": name}


def _failed(response: dict[str, Any], why: str) -> dict[str, Any]:
    """A response that lost part of the model's answer on the way is failed, never `completed`."""
    return {**response, "status": "failed", "error": {"code": "server_error", "message": why},
            "incomplete_details": None}


def _response_id(upstream: str) -> str:
    return upstream if upstream.startswith("resp_") else _item_id("resp_", upstream)


def _message_item(item_id: str, text: str, status: str = "completed") -> dict[str, Any]:
    return {"type": "message", "id": item_id, "status": status, "role": "assistant",
            "content": [_part("output_text", text)]}


def _part(kind: str, text: str) -> dict[str, Any]:
    if kind == "refusal":
        return {"type": "refusal", "refusal": text}
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _response_object(response_id: str, model: str, created: int, output: list[dict[str, Any]], stop: StopReason,
                     input_tokens: int, output_tokens: int, status: str | None = None) -> dict[str, Any]:
    incomplete = stop in ("length", "content_filter")
    return {"id": response_id, "object": "response", "created_at": created,
            "status": status or ("incomplete" if incomplete else "completed"), "model": model, "output": output,
            "error": None,
            "incomplete_details": ({"reason": "max_output_tokens" if stop == "length" else "content_filter"}
                                   if incomplete else None),
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                      "total_tokens": input_tokens + output_tokens,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}


# --- streams -------------------------------------------------------------------------------------

# The upstream's stream bytes -> the events StreamParser reads: server-sent events.
StreamReader = SSEParser


class StreamParser:
    """Responses events -> neutral events, keyed by `output_index` (OR-10: never by call_id)."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.open: dict[int, bool] = {}  # output_index -> whether argument deltas were seen
        self.done = False

    def feed(self, event: SSEEvent) -> list[ev.Event]:
        if self.done:
            return []
        data = ev.decode(event)
        if not isinstance(data, dict):
            return data
        kind = data.get("type") or event.event
        if kind == "response.created":
            response = data.get("response") or {}
            return [ev.Start(str(response.get("id") or ""), str(response.get("model") or ""))]
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            return [ev.TextDelta(str(data["delta"]), kind == "response.refusal.delta")] if data.get("delta") else []
        if kind == "response.output_item.added":
            return self._added(data.get("output_index"), data.get("item") or {})
        if kind in ("response.function_call_arguments.delta", "response.custom_tool_call_input.delta"):
            index = data.get("output_index")
            if index in self.open and data.get("delta"):
                self.open[index] = True
                return [ev.CallArgs(index, str(data["delta"]))]
            return []
        if kind == "response.output_item.done":
            return self._item_done(data.get("output_index"), data.get("item") or {})
        if kind in ("response.completed", "response.incomplete"):
            response = data.get("response") or {}
            has_calls = any(isinstance(i, dict) and i.get("type") in ("function_call", "custom_tool_call")
                            for i in response.get("output") or [])
            self.done = True
            tokens_in, tokens_out = token_counts(response.get("usage"), "input_tokens", "output_tokens")
            return [ev.Finish(_stop(response, has_calls), tokens_in, tokens_out)]
        if kind in ("response.failed", "error"):
            self.done = True
            error = (data.get("response") or {}).get("error") if kind == "response.failed" else data
            error = error or {"message": "the upstream response failed"}
            return [ev.Failure(str(error.get("message", "")), error)]
        return []

    def _added(self, index: Any, item: dict[str, Any]) -> list[ev.Event]:
        kind = item.get("type")
        if kind in ("function_call", "custom_tool_call"):
            self.open[index] = False
            out: list[ev.Event] = [ev.CallStart(index, str(item.get("call_id") or ""), str(item.get("name") or ""))]
            initial = item.get("arguments") if kind == "function_call" else item.get("input")
            if isinstance(initial, str) and initial:
                self.open[index] = True
                out.append(ev.CallArgs(index, initial))
            return out
        if kind in (None, "message"):
            return []
        return [ev.Dropped(f"{kind} item")]

    def _item_done(self, index: Any, item: dict[str, Any]) -> list[ev.Event]:
        kind = item.get("type")
        if kind not in ("function_call", "custom_tool_call"):
            return []
        out: list[ev.Event] = []
        if index not in self.open:
            out.extend(self._added(index, {**item, "arguments": "", "input": ""}))
        if not self.open.get(index):
            full = item.get("arguments") if kind == "function_call" else item.get("input")
            if isinstance(full, str) and full:
                out.append(ev.CallArgs(index, full))
        self.open.pop(index, None)
        out.append(ev.CallEnd(index))
        return out

    def close(self) -> list[ev.Event]:
        if self.done:
            return []
        self.done = True
        out: list[ev.Event] = [ev.CallEnd(index) for index in self.open]
        out.append(ev.Finish("tool_calls" if self.open else "stop"))
        return out


class StreamEmitter:
    """Neutral events -> Responses SSE events, with sequence numbers and complete items at the end."""

    def __init__(self, state: State, losses: list[Loss]) -> None:
        self.state = state
        self.losses = losses
        self.id = "resp_translated"
        self.model = state.model
        self.created = state.created
        self.seq = 0
        self.output: list[dict[str, Any]] = []
        # The open message: its output_index and its content parts so far, each (type, pieces).
        self.message: tuple[int, list[tuple[str, list[str]]]] | None = None
        self.calls: dict[Any, tuple[int, list[str]]] = {}
        self.finished = False

    def _event(self, kind: str, **fields: Any) -> bytes:
        body = {"type": kind, "sequence_number": self.seq, **fields}
        self.seq += 1
        return sse.encode(jsonsafe.dumps(body), kind)

    def _snapshot(self, status: str, stop: StopReason = "stop", usage: tuple[int, int] = (0, 0)) -> dict[str, Any]:
        return _response_object(self.id, self.model, self.created, list(self.output), stop, *usage, status=status)

    def emit(self, event: ev.Event) -> bytes:
        if isinstance(event, ev.Start):
            self.id = _response_id(event.id)
            self.model = event.model or self.model
            return (self._event("response.created", response=self._snapshot("in_progress"))
                    + self._event("response.in_progress", response=self._snapshot("in_progress")))
        if isinstance(event, ev.TextDelta):
            return self._text(event)
        if isinstance(event, ev.CallStart):
            out = self._close_message()
            index = len(self.output)
            call_id = back_id(self.state, event.id or None, f"{self.id}:{len(self.calls)}", self.losses,
                              join("/stream", event.key), join("/output", index, "call_id"))
            item = {"type": "function_call", "id": _item_id("fc_", self.id, index), "call_id": call_id,
                    **_named(self.state, event.name), "arguments": "", "status": "in_progress"}
            self.output.append(item)
            self.calls[event.key] = (index, [])
            return out + self._event("response.output_item.added", output_index=index, item=item)
        if isinstance(event, ev.CallArgs):
            index, pieces = self.calls[event.key]
            pieces.append(event.delta)
            return self._event("response.function_call_arguments.delta", item_id=self.output[index]["id"],
                               output_index=index, delta=event.delta)
        if isinstance(event, ev.CallEnd):
            return self._close_call(event.key)
        if isinstance(event, ev.Finish):
            if self.finished:
                return b""
            self.finished = True
            out = self._close_message()
            for key in list(self.calls):
                out += self._close_call(key)
            stop: StopReason = event.stop
            snapshot = self._snapshot("", stop, (event.input_tokens, event.output_tokens))
            if event.failed:
                return out + self._event("response.failed", response=_failed(snapshot, event.failed))
            kind = "response.incomplete" if snapshot["status"] == "incomplete" else "response.completed"
            return out + self._event(kind, response=snapshot)
        if isinstance(event, ev.Dropped):
            self.losses.append(Loss("/stream", None, "dropped", f"{event.what} cannot cross to Responses", event.rule))
            return b""
        if isinstance(event, ev.Failure):
            self.finished = True
            error = openai_error(event.raw if event.raw is not None else event.message)
            return self._event("error", code=error.get("code"), message=error["message"], param=None)
        return b""

    def _text(self, event: ev.TextDelta) -> bytes:
        """A text or refusal delta: into the open message's last part when of its kind, else
        into a new part (a refusal is its own part, as the Responses API sends it)."""
        out = b""
        if self.message is None:
            index = len(self.output)
            self.output.append(_message_item(_item_id("msg_", self.id, index), "", "in_progress"))
            self.output[index]["content"] = []
            self.message = (index, [])
            out += self._event("response.output_item.added", output_index=index, item=self.output[index])
        index, parts = self.message
        item_id = self.output[index]["id"]
        kind = "refusal" if event.refusal else "output_text"
        if not parts or parts[-1][0] != kind:
            if parts:
                out += self._close_part(index, len(parts) - 1, *parts[-1])
            parts.append((kind, []))
            out += self._event("response.content_part.added", item_id=item_id, output_index=index,
                               content_index=len(parts) - 1, part=_part(kind, ""))
        parts[-1][1].append(event.text)
        if event.refusal:
            return out + self._event("response.refusal.delta", item_id=item_id, output_index=index,
                                     content_index=len(parts) - 1, delta=event.text)
        return out + self._event("response.output_text.delta", item_id=item_id, output_index=index,
                                 content_index=len(parts) - 1, delta=event.text, logprobs=[])

    def _close_part(self, index: int, position: int, kind: str, pieces: list[str]) -> bytes:
        item_id = self.output[index]["id"]
        part = _part(kind, "".join(pieces))
        done = (self._event("response.refusal.done", item_id=item_id, output_index=index, content_index=position,
                            refusal=part["refusal"]) if kind == "refusal"
                else self._event("response.output_text.done", item_id=item_id, output_index=index,
                                 content_index=position, text=part["text"], logprobs=[]))
        return done + self._event("response.content_part.done", item_id=item_id, output_index=index,
                                  content_index=position, part=part)

    def _close_message(self) -> bytes:
        if self.message is None:
            return b""
        index, parts = self.message
        out = self._close_part(index, len(parts) - 1, *parts[-1])
        self.message = None
        item = _message_item(self.output[index]["id"], "")
        item["content"] = [_part(kind, "".join(pieces)) for kind, pieces in parts]
        self.output[index] = item
        return out + self._event("response.output_item.done", output_index=index, item=item)

    def _close_call(self, key: Any) -> bytes:
        if key not in self.calls:
            return b""
        index, pieces = self.calls.pop(key)
        item = self.output[index]
        item["arguments"] = "".join(pieces)
        item["status"] = "completed"
        return (self._event("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                            name=item["name"], arguments=item["arguments"])
                + self._event("response.output_item.done", output_index=index, item=item))


def emit_tool_result(item: Result, emit: Emit) -> dict[str, Any]:
    """One tool result as this dialect carries it (what the MCP bridge writes for a tools/call result)."""
    if all(p.kind == "text" for p in item.parts):
        output: Any = flagged_text(item, emit, "/output")
    else:
        output = emit_parts(item.parts, "user")
        if item.is_error:
            output.insert(0, {"type": "input_text", "text": "Error:"})
            emit.losses.append(Loss(item.src, "/output/0", "converted", "Responses has no error flag on tool "
                                    "outputs; written as a leading 'Error:' text part", "XL-15"))
    return {"type": "function_call_output", "call_id": item.call_id, "output": output}
