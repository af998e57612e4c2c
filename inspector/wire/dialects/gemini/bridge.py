"""Gemini generateContent <-> the neutral form: requests (model and streaming live in the path),
responses and the `alt=sse` stream of partial responses."""

from __future__ import annotations

import re
from typing import Any

from ... import jsonsafe, sse
from ...dialect import Dialect, is_stream_path
from .fields import normalise
from .schema import Change, needs_json_schema, to_genai, to_json_schema
from ...pointer import join
from ...sse import SSEEvent, SSEParser
from ...translate import events as ev
from ...translate.common import (RUN, Emit, back_id, back_name, declared_once, dumps, google_error, hollow, join_text, message_of,
                                 output_kept_whole, plain, refusal_as_text, token_counts)
from ...translate.model import (Builtin, Call, Choice, Loss, Message, Opaque, Output, Part, Reasoning, Request, Response,
                                Result, State, StopReason, Tool, TranslationError)
from ...translate.reasoning import DYNAMIC, budget_of, effort_of_budget
from .limits import RANGES
from ...translate.arguments import decode_arguments

_MODEL_IN_PATH = re.compile(r"/models/([^/:]+):")
_PARAMS = ("contents", "systemInstruction", "tools", "toolConfig", "generationConfig")
_GEN_PARAMS = ("temperature", "topP", "maxOutputTokens", "stopSequences")
_OUTPUT_PARAMS = ("responseMimeType", "responseJsonSchema", "responseSchema")
_MIME = "/generationConfig/responseMimeType"
_BUILTIN_IN = {"googleSearch": "web_search", "googleSearchRetrieval": "web_search", "codeExecution": "code_interpreter",
               "urlContext": "url_context"}
_BUILTIN_OUT = {"web_search": "googleSearch", "code_interpreter": "codeExecution", "url_context": "urlContext"}
_FINISH_IN: dict[object, StopReason] = {  # looked up with whatever the response holds
    "STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter", "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter", "PROHIBITED_CONTENT": "content_filter", "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter"}
_FINISH_OUT = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}


def model_of(path: str) -> str:
    match = _MODEL_IN_PATH.search(path)
    return match.group(1) if match else ""


# --- requests ------------------------------------------------------------------------------------

def _media(part: dict[str, Any], src: str) -> Part:
    if "inlineData" in part:
        blob = part["inlineData"] or {}
        mime = str(blob.get("mimeType", ""))
        return Part(_kind(mime), src, mime=mime, data=str(blob.get("data", "")))
    blob = part.get("fileData") or {}
    mime = str(blob.get("mimeType", ""))
    return Part(_kind(mime), src, mime=mime, url=str(blob.get("fileUri", "")))


def _kind(mime: str) -> Any:
    return "image" if mime.startswith("image/") else "audio" if mime.startswith("audio/") else "file"


def _response_parts(response: Any, src: str, losses: list[Loss]) -> tuple[list[Part], bool]:
    """A functionResponse.response object as result content, and whether it reports an error."""
    if isinstance(response, dict) and set(response) == {"output"}:
        output = response["output"]
        return [Part("text", join(src, "output"), text=output if isinstance(output, str) else dumps(output))], False
    if isinstance(response, dict) and set(response) == {"error"}:
        error = response["error"]
        return [Part("text", join(src, "error"), text=error if isinstance(error, str) else dumps(error))], True
    losses.append(Loss(src, None, "converted", "a structured function response is carried as its JSON text", "XL-15"))
    return [Part("text", src, text=dumps(response))], False


def parse_request(payload: dict[str, Any], path: str) -> tuple[Request, list[Loss]]:
    """Reads the camelCase form of `payload` (GM-16); the bridge writes pointers back in the client's
    spelling."""
    payload = normalise(payload)
    losses: list[Loss] = []
    req = Request(model=model_of(path) or str(payload.get("model") or ""))
    req.stream = is_stream_path(path)
    for key in payload:
        if key not in _PARAMS and key != "model":
            req.leftovers.append((join("", key), f"Gemini field {key!r} has no counterpart"))
    system = payload.get("systemInstruction")
    if isinstance(system, dict):
        key = "/systemInstruction"
        parts = [Part("text", join(key, "parts", i), text=str(p.get("text", "")))
                 for i, p in enumerate(system.get("parts") or []) if isinstance(p, dict) and "text" in p]
        req.items.append(Message("system", parts, key))
    contents = payload.get("contents")
    if not isinstance(contents, list):
        raise TranslationError("contents must be a list", "/contents")
    for i, content in enumerate(contents):
        src = join("/contents", i)
        if not isinstance(content, dict):
            raise TranslationError("a content must be an object", src)
        role = content.get("role", "user")
        parts = content.get("parts") or []
        if not isinstance(parts, list):  # one part object was made a list by normalise; text is walked as characters
            raise TranslationError("parts must be a list", join(src, "parts"))
        if role == "model":
            _parse_model_turn(parts, join(src, "parts"), req.items, losses)
        elif role in ("user", "function"):
            _parse_user_turn(parts, join(src, "parts"), src, req.items, losses)
        else:
            raise TranslationError(f"unknown content role {role!r}", join(src, "role"))
    _parse_tools(payload.get("tools") or [], req, losses)
    config = (payload.get("toolConfig") or {}).get("functionCallingConfig") or {}
    mode, names = str(config.get("mode", "")).upper(), config.get("allowedFunctionNames") or []
    if mode == "AUTO":
        req.choice = Choice("auto", "/toolConfig/functionCallingConfig")
    elif mode == "NONE":
        req.choice = Choice("none", "/toolConfig/functionCallingConfig")
    elif mode == "ANY" and len(names) == 1:
        req.choice = Choice("named", "/toolConfig/functionCallingConfig", str(names[0]))
    elif mode == "ANY":
        req.choice = Choice("required", "/toolConfig/functionCallingConfig", allowed=[str(n) for n in names] or None,
                            allowed_src="/toolConfig/functionCallingConfig/allowedFunctionNames")
    elif mode == "VALIDATED":
        req.choice = Choice("auto", "/toolConfig/functionCallingConfig", allowed=[str(n) for n in names] or None,
                            allowed_src="/toolConfig/functionCallingConfig/allowedFunctionNames")
        losses.append(Loss("/toolConfig/functionCallingConfig/mode", None, "converted",
                           "VALIDATED has no counterpart; written as auto", "XL-11"))
    generation = payload.get("generationConfig") or {}
    for key in generation:
        if key == "responseModalities" and _text_only(generation[key]):
            # pydantic-ai states it on every request; no target answers a tool loop in anything else.
            req.leftovers.append(("/generationConfig/responseModalities",
                                  "only text is asked for, the target's default; nothing to state"))
        elif key == "thinkingConfig" and isinstance(generation[key], dict):
            _parse_thinking(generation[key], req)
        elif key not in _GEN_PARAMS and key not in _OUTPUT_PARAMS:
            req.leftovers.append((join("/generationConfig", key), f"generationConfig.{key} has no counterpart"))
    _parse_output(generation, req, losses)
    req.temperature = generation.get("temperature")
    req.top_p = generation.get("topP")
    req.sources.update(max_tokens="/generationConfig/maxOutputTokens", temperature="/generationConfig/temperature",
                       top_p="/generationConfig/topP")
    req.max_tokens = generation.get("maxOutputTokens") if isinstance(generation.get("maxOutputTokens"), int) else None
    req.stop = [s for s in generation.get("stopSequences") or [] if isinstance(s, str)]
    req.stop_src = "/generationConfig/stopSequences"
    return req, losses


_THINKING = "/generationConfig/thinkingConfig"
# Gemini 3's thinking levels; Pro takes only low and high (translate/reasoning.py has the table).
_LEVELS = ("minimal", "low", "medium", "high")
_PRO_LEVEL = {"minimal": "low", "low": "low", "medium": "high", "high": "high", "xhigh": "high"}
_FLASH_LEVEL = {"minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": "high"}
# thinkingBudget bounds of each Gemini 2.5 family (first match wins): (least, most, whether 0 turns it off).
_BUDGETS = ((re.compile(r"gemini-2\.5-flash-lite"), 512, 24576, True), (re.compile(r"gemini-2\.5-flash"), 1, 24576, True),
            (re.compile(r"gemini-2\.5-pro"), 128, 32768, False))


def _parse_thinking(config: dict[str, Any], req: Request) -> None:
    for key in config:
        if key not in ("thinkingBudget", "thinkingLevel"):
            req.leftovers.append((join(_THINKING, key), f"thinkingConfig.{key} has no counterpart"))
    budget, level = config.get("thinkingBudget"), config.get("thinkingLevel")
    if isinstance(level, str) and level.lower() in _LEVELS:
        req.reasoning = Reasoning(level.lower(), join(_THINKING, "thinkingLevel"), level=True)
    elif isinstance(budget, int) and not isinstance(budget, bool):
        req.reasoning = Reasoning(effort_of_budget(budget), join(_THINKING, "thinkingBudget"), budget=budget)
    elif "thinkingLevel" in config or "thinkingBudget" in config:
        req.leftovers.append((_THINKING, "a thinkingConfig with neither a known level nor a whole budget has no "
                              "counterpart"))


def _emit_thinking(req: Request, emit: Emit, generation: dict[str, Any]) -> None:
    """An effort or budget as thinkingConfig: a thinkingLevel on Gemini 3, a thinkingBudget on 2.5
    within the model's bounds (translate/reasoning.py). Neither can be off on every model."""
    reasoning = req.reasoning
    assert reasoning is not None
    tgt = join("/generationConfig/thinkingConfig")
    if req.model.startswith("gemini-3"):
        table = _PRO_LEVEL if "pro" in req.model else _FLASH_LEVEL
        effort = reasoning.effort if reasoning.effort != "none" else "minimal"
        level = table[effort]
        if level != reasoning.effort:
            emit.convert(reasoning.src, join(tgt, "thinkingLevel"), f"reasoning effort {reasoning.effort!r} is sent as "
                         f"the thinking level {level!r}, the nearest {req.model!r} takes"
                         + (" (Gemini 3 cannot stop thinking)" if reasoning.effort == "none" else ""))
        generation["thinkingConfig"] = {"thinkingLevel": level}
        return
    stated = reasoning.budget if reasoning.budget is not None else budget_of(reasoning.effort)
    budget = stated if stated is not None else 0
    bounds = next(((low, high, off) for pattern, low, high, off in _BUDGETS if pattern.match(req.model)), None)
    if bounds is not None:
        low, high, off = bounds
        if not (budget == DYNAMIC or (budget == 0 and off)):
            budget = min(max(budget, low), high)
    if reasoning.budget is None or budget != reasoning.budget:
        emit.convert(reasoning.src, join(tgt, "thinkingBudget"),
                     f"reasoning effort {reasoning.effort!r} is sent as a thinking budget of {budget} tokens"
                     + (f", the nearest {req.model!r} takes" if stated is not None and budget != stated else "")
                     + " (translate/reasoning.py)")
    generation["thinkingConfig"] = {"thinkingBudget": budget}


def _text_only(modalities: Any) -> bool:
    return isinstance(modalities, list) and [str(m).upper() for m in modalities] == ["TEXT"]


def _parse_model_turn(parts: list[Any], src: str, items: list[Any], losses: list[Loss]) -> None:
    for j, part in enumerate(parts):
        here = join(src, j)
        if not isinstance(part, dict):
            continue
        if "functionCall" in part:
            call = part["functionCall"] or {}
            name = call.get("name")
            if not isinstance(name, str) or not name:
                raise TranslationError("a functionCall needs a name", join(here, "functionCall", "name"))
            arguments, raw = decode_arguments(call.get("args"), join(here, "functionCall", "args"), losses)
            opaque = {"thoughtSignature": part["thoughtSignature"]} if "thoughtSignature" in part else {}
            items.append(Call(call.get("id") or None, name, arguments, here, raw, opaque=opaque,
                              name_src=join(here, "functionCall", "name"), id_src=join(here, "functionCall", "id")))
        elif part.get("thought") is True:
            items.append(Opaque(Dialect.GEMINI, "thought part", part, here))
        elif "text" in part:
            if part["text"]:
                items.append(Message("assistant", [Part("text", here, text=str(part["text"]))], here))
            if "thoughtSignature" in part:
                # Gemini 3 signs text parts too; the text crosses, the signature cannot.
                items.append(Opaque(Dialect.GEMINI, "thought signature", {"thoughtSignature": part["thoughtSignature"]},
                                    join(here, "thoughtSignature")))
        else:
            items.append(Opaque(Dialect.GEMINI, f"{next(iter(part), 'empty')} part", part, here))


def _parse_user_turn(parts: list[Any], src: str, turn: str, items: list[Any], losses: list[Loss]) -> None:
    """functionResponse parts first, then the rest of the turn as a user message (XL-07)."""
    results: list[Result] = []
    rest: list[Part] = []
    for j, part in enumerate(parts):
        here = join(src, j)
        if not isinstance(part, dict):
            continue
        if "functionResponse" in part:
            if rest and not results:
                losses.append(Loss(here, None, "converted", "function responses placed before the text that "
                                   "preceded them", "XL-07"))
            response = part["functionResponse"] or {}
            name = response.get("name")
            if not isinstance(name, str) or not name:
                raise TranslationError("a functionResponse needs a name", join(here, "functionResponse", "name"))
            content, is_error = _response_parts(response.get("response"), join(here, "functionResponse", "response"),
                                                losses)
            for k, extra in enumerate(response.get("parts") or []):
                if isinstance(extra, dict) and ("inlineData" in extra or "fileData" in extra):
                    content.append(_media(extra, join(here, "functionResponse", "parts", k)))
            results.append(Result(response.get("id") or None, name, content, here, is_error=is_error,
                                  name_src=join(here, "functionResponse", "name"),
                                  id_src=join(here, "functionResponse", "id")))
        elif "text" in part:
            rest.append(Part("text", here, text=str(part["text"])))
        elif "inlineData" in part or "fileData" in part:
            rest.append(_media(part, here))
        else:
            raise TranslationError(f"user part {next(iter(part), 'empty')!r} has no counterpart", here)
    items.extend(results)
    if rest:
        items.append(Message("user", rest, turn))


def _parse_tools(tools: list[Any], req: Request, losses: list[Loss]) -> None:
    seen: set[str] = set()
    for j, tool in enumerate(tools):
        here = join("/tools", j)
        if not isinstance(tool, dict):
            continue
        for key, value in tool.items():
            if key == "functionDeclarations":
                for k, decl in enumerate(value or []):
                    _parse_declaration(decl, join(here, key, k), req, seen, losses)
            elif key in _BUILTIN_IN:
                req.builtins.append(Builtin(_BUILTIN_IN[key], {}, join(here, key), Dialect.GEMINI, {key: value}))
            else:
                req.builtins.append(Builtin(key, {}, join(here, key), Dialect.GEMINI, {key: value}))


def _parse_declaration(decl: Any, src: str, req: Request, seen: set[str], losses: list[Loss]) -> None:
    name = decl.get("name") if isinstance(decl, dict) else None
    if not declared_once(name, src, seen, losses, "function declaration"):
        return
    if isinstance(decl.get("parametersJsonSchema"), dict):
        schema = decl["parametersJsonSchema"]
    elif isinstance(decl.get("parameters"), dict):
        changes: list[Change] = []
        schema = to_json_schema(decl["parameters"], join(src, "parameters"), "", changes, root=True)
        losses.extend(_losses(changes, targets=False))
    else:
        schema = {}
    for key in ("response", "responseJsonSchema"):
        if key in decl:
            losses.append(Loss(join(src, key), None, "dropped", "a declared response schema has no counterpart", ""))
    req.tools.append(Tool(name, str(decl.get("description") or ""), schema, src, name_src=join(src, "name")))


def _parse_output(generation: dict[str, Any], req: Request, losses: list[Loss]) -> None:
    """Structured output: responseMimeType, with a JSON Schema (responseJsonSchema) or a genai Schema
    (responseSchema, converted by the one converter)."""
    mime = generation.get("responseMimeType")
    src = _MIME if mime is not None else None
    if mime not in (None, "application/json", "text/plain"):
        # text/x.enum answers with the bare value, not JSON: a JSON Schema elsewhere would quote it.
        req.leftovers.append((_MIME, f"responseMimeType {mime!r} has no counterpart"))
        req.leftovers.extend((join("/generationConfig", key), f"generationConfig.{key} serves {mime!r}, which has "
                              "no counterpart") for key in ("responseJsonSchema", "responseSchema") if key in generation)
    elif isinstance(generation.get("responseJsonSchema"), dict):
        here = "/generationConfig/responseJsonSchema"
        req.output = Output("schema", src or here, generation["responseJsonSchema"], pointers={"schema": here})
        if "responseSchema" in generation:
            req.leftovers.append(("/generationConfig/responseSchema", "responseSchema beside responseJsonSchema: "
                                  "only one is read, and Gemini rejects the pair"))
    elif isinstance(generation.get("responseSchema"), dict):
        here = "/generationConfig/responseSchema"
        changes: list[Change] = []
        schema = to_json_schema(generation["responseSchema"], here, "", changes)
        losses.extend(_losses(changes, targets=False))
        req.output = Output("schema", src or here, schema, pointers={"schema": here})
    elif mime == "application/json":
        req.output = Output("json", _MIME)
    elif mime == "text/plain":
        req.output = Output("text", _MIME)


def _emit_output(output: Output | None, emit: Emit, generation: dict[str, Any]) -> None:
    """Written as responseJsonSchema, which takes the JSON Schema as it is: no Schema-subset rewrite
    (GM-17) stands between the client's schema and the model."""
    if output is None:
        return
    generation["responseMimeType"] = "text/plain" if output.kind == "text" else "application/json"
    if output.kind == "schema":
        generation["responseJsonSchema"] = output.schema
        output_kept_whole(output, emit)


def _inline(part: Part) -> dict[str, Any]:
    if part.data:
        return {"inlineData": {"mimeType": part.mime or "application/octet-stream", "data": part.data}}
    return {"fileData": {"mimeType": part.mime or "application/octet-stream", "fileUri": part.url}}


def _user_parts(parts: list[Part]) -> list[dict[str, Any]]:
    return [{"text": p.text} if p.kind == "text" else _inline(p) for p in parts if p.kind != "text" or p.text]


def emit_request(req: Request, emit: Emit) -> dict[str, Any]:
    out: dict[str, Any] = {}
    system: list[Part] = []
    contents: list[dict[str, Any]] = []
    kinds: list[str] = []  # "model" | "results" | "user", one per content: results never share a turn with text
    sources: list[str] = []  # where each content's first item came from
    latest: list[str] = []  # the source message of each content's latest item, to report merges

    def turn(kind: str, src: str) -> list[dict[str, Any]]:
        if not kinds or kinds[-1] != kind:
            kinds.append(kind)
            sources.append(src)
            latest.append(message_of(src))
            contents.append({"role": "model" if kind == "model" else "user", "parts": []})
        elif message_of(src) != latest[-1]:
            latest[-1] = message_of(src)
            emit.convert(src, join("/contents", len(contents) - 1), "this message joins the Gemini turn before it "
                         "(function responses share one turn; so do consecutive turns of one role)")
        parts: list[dict[str, Any]] = contents[-1]["parts"]
        return parts

    pending_media: list[Part] = []
    for item in req.items:
        if isinstance(item, Message) and item.role == "system":
            if contents:
                emit.losses.append(Loss(item.src, "/systemInstruction", "converted",
                                        "Gemini has one system instruction; this mid-conversation system message "
                                        "joins it", ""))
            system.extend(item.parts)
            continue
        if not isinstance(item, Result) and pending_media:
            turn("user", pending_media[0].src).extend(_user_parts(pending_media))
            pending_media = []
        if isinstance(item, Message):
            kind = "model" if item.role == "assistant" else "user"
            parts = turn(kind, item.src)
            texts = plain(item.parts, emit.losses, emit.target)
            parts.extend({"text": p.text} for p in texts if p.kind == "text" and p.text) if kind == "model" \
                else parts.extend(_user_parts(texts))
            if kind == "model" and any(p.kind != "text" for p in item.parts):
                emit.drop(item.src, "model turns carry text only; media dropped")
        elif isinstance(item, Call):
            parts = turn("model", item.src)
            tgt = join("/contents", len(contents) - 1, "parts", len(parts), "functionCall")
            call: dict[str, Any] = {"id": emit.call_id(item.id or "", item.id_src or item.src, join(tgt, "id")),
                                    "name": emit.name(item.name, item.name_src or item.src, join(tgt, "name")), "args": item.arguments}
            part: dict[str, Any] = {"functionCall": call}
            if "thoughtSignature" in item.opaque:
                part["thoughtSignature"] = item.opaque["thoughtSignature"]
            parts.append(part)
        elif isinstance(item, Result):
            parts = turn("results", item.src)
            tgt = join("/contents", len(contents) - 1, "parts", len(parts), "functionResponse")
            if not item.name:
                raise TranslationError("a tool result whose call is not in the history cannot name its function "
                                       "for Gemini", item.src)
            media = [p for p in item.parts if p.kind != "text"]
            if media:
                emit.losses.append(Loss(item.src, None, "converted", "media in a tool result follow the function "
                                        "responses in their own user turn", "XL-15"))
                pending_media.extend(media)
            parts.append({"functionResponse": function_response(item, emit, tgt)})
        elif isinstance(item, Opaque) and emit.opaque(item):
            turn("model", item.src).append(item.raw)
    if pending_media:
        turn("user", pending_media[0].src).extend(_user_parts(pending_media))
    for src, content in zip(sources, contents, strict=True):
        if not content["parts"]:
            emit.drop(src, "a turn with no content left is rejected by Gemini")
    if join_text(system):
        out["systemInstruction"] = {"parts": [{"text": join_text(system)}]}
    out["contents"] = [content for content in contents if content["parts"]]
    tools = emit_tools(req.tools, emit)
    declarations = bool(tools)
    for builtin in req.builtins:
        if builtin.kind in _BUILTIN_OUT:
            for key in builtin.options:
                emit.drop(builtin.pointer(key), f"built-in option {key!r} has no Gemini counterpart", "XL-09")
            tools.append({_BUILTIN_OUT[builtin.kind]: {}})
        else:
            emit.drop(builtin.src, f"built-in tool {builtin.kind!r} has no Gemini equivalent", "XL-09")
    if tools:
        out["tools"] = tools
    if req.choice is not None and req.choice.mode == "hosted":
        emit.drop(req.choice.src, f"Gemini cannot force the hosted tool {req.choice.name!r}", "XL-11")
    elif req.choice is not None:
        if declarations:
            out["toolConfig"] = {"functionCallingConfig": _calling_config(req.choice, emit, tools, req.tools)}
        else:
            emit.drop(req.choice.src, "a function calling config without declarations is rejected (GM-13)", "XL-11")
    if req.parallel is not None:
        emit.drop(req.parallel_src, "Gemini cannot forbid parallel calls" if req.parallel is False
                  else "parallel calls are Gemini's default; nothing to state", "XL-11")
    for ident in (req.user, req.cache_key):
        if ident is not None:
            emit.drop(ident.src, "Gemini's generateContent takes no end-user identifier nor prompt cache key")
    if req.store is not None:  # only Chat and Responses say it, both at /store
        emit.drop("/store", "gemini has no setting for whether the provider keeps the exchange")
    generation: dict[str, Any] = {}
    if req.reasoning is not None:
        _emit_thinking(req, emit, generation)
    for key, name in (("temperature", "temperature"), ("top_p", "topP"), ("max_tokens", "maxOutputTokens")):
        if getattr(req, key) is not None:
            generation[name] = emit.ranged(req, key, join("/generationConfig", name), RANGES)
    if req.stop:
        generation["stopSequences"] = req.stop
    _emit_output(req.output, emit, generation)
    if generation:
        out["generationConfig"] = generation
    for pointer, why in req.leftovers:
        emit.drop(pointer, why)
    return out


def _calling_config(choice: Choice, emit: Emit, tools: list[dict[str, Any]], declared: list[Tool]) -> dict[str, Any]:
    """functionCallingConfig. An allowed-tools subset is allowedFunctionNames under ANY; under
    AUTO, which takes no names, the declarations outside it are taken off (narrowed, never
    widened)."""
    mode = {"auto": "AUTO", "none": "NONE", "required": "ANY", "named": "ANY"}[choice.mode]
    config: dict[str, Any] = {"mode": mode}
    here = "/toolConfig/functionCallingConfig/allowedFunctionNames"
    if choice.mode == "named":
        config["allowedFunctionNames"] = [emit.name(choice.name, choice.src, join(here, 0))]
    elif choice.allowed is not None:
        allowed = [emit.name(name, join(choice.allowed_src, j), join(here, j)) for j, name in enumerate(choice.allowed)]
        if mode == "ANY":
            config["allowedFunctionNames"] = allowed
        elif mode == "AUTO":
            declarations = tools[0]["functionDeclarations"]
            for j in reversed(range(len(declarations))):
                if declarations[j]["name"] not in allowed:
                    emit.drop(declared[j].src, f"function {declarations[j]['name']!r} is outside the allowed_tools "
                              "subset, which Gemini states only under ANY; it is not declared", "XL-11")
                    del declarations[j]
    return config


def function_response(item: Result, emit: Emit, tgt: str) -> dict[str, Any]:
    """A tool result as a functionResponse (id, name, response; media are the caller's). A result
    given as a JSON object (MCP structuredContent) is the response object itself, which is what
    Gemini reads a function's answer as; text goes under "output" (or "error")."""
    assert item.name is not None  # the callers refuse a result that cannot name its function
    response: dict[str, Any]
    if item.structured is not None:
        response = item.structured if isinstance(item.structured, dict) and not item.is_error else \
            {"error" if item.is_error else "output": item.structured}
        if join_text(item.parts):
            emit.losses.append(Loss(item.src, join(tgt, "response"), "converted", "the structured result is the "
                                    "response object; its text rendering is not sent beside it", "XL-15"))
    else:
        response = {"error" if item.is_error else "output": join_text(item.parts)}
    return {"id": emit.call_id(item.call_id or "", item.id_src or item.src, join(tgt, "id")),
            "name": emit.name(item.name, item.name_src or item.src, join(tgt, "name")), "response": response}


def emit_tools(tools: list[Tool], emit: Emit) -> list[dict[str, Any]]:
    declarations = [_emit_declaration(tool, emit, join("/tools/0/functionDeclarations", j))
                    for j, tool in enumerate(tools)]
    return [{"functionDeclarations": declarations}] if declarations else []


def _emit_declaration(tool: Tool, emit: Emit, tgt: str) -> dict[str, Any]:
    decl: dict[str, Any] = {"name": emit.name(tool.name, tool.name_src or tool.src, join(tgt, "name"))}
    if tool.description:
        decl["description"] = tool.description
    if tool.custom:
        emit.losses.append(Loss(tool.src, join(tgt, "parameters"), "converted",
                                "a free-form custom tool becomes a function with one string parameter \"input\"", ""))
        decl["parameters"] = {"type": "OBJECT", "properties": {"input": {"type": "STRING"}}, "required": ["input"]}
    elif needs_json_schema(tool.schema):
        emit.losses.append(Loss(tool.src, join(tgt, "parametersJsonSchema"), "converted",
                                "the schema uses $ref/$defs, which Gemini's Schema cannot carry; sent as "
                                "parametersJsonSchema", "XL-01"))
        decl["parametersJsonSchema"] = tool.schema
    elif tool.schema:
        changes: list[Change] = []
        parameters = to_genai(tool.schema, tool.schema_src or join(tool.src, "parameters"), join(tgt, "parameters"),
                              changes, root=True)
        if parameters.get("type") != "OBJECT":
            emit.losses.append(Loss(tool.src, join(tgt, "parametersJsonSchema"), "converted",
                                    "the parameters root is not an object (nor an object union), which Gemini's "
                                    "Schema refuses (GM-06); sent as parametersJsonSchema", "XL-01"))
            decl["parametersJsonSchema"] = tool.schema
        elif parameters.get("properties"):
            emit.losses.extend(_losses(changes))
            decl["parameters"] = parameters
        # An OBJECT without properties is rejected by Gemini; a function without parameters is the same thing.
    if tool.output_schema is not None:
        decl["responseJsonSchema"] = tool.output_schema
    return decl


def _losses(changes: list[Change], *, targets: bool = True) -> list[Loss]:
    """Schema changes as losses: Gemini's subset rules keep their id, the rest are schema dialect
    conversions (XL-01)."""
    return [Loss(c.source, c.target if targets else None, c.kind, c.why, c.rule or "XL-01") for c in changes]


# --- responses -----------------------------------------------------------------------------------

def _parse_candidate(payload: dict[str, Any], items: list[Any]) -> str | None:
    """Append the first candidate's parts as items; return its finishReason."""
    candidates = payload.get("candidates") or []
    if not candidates or not isinstance(candidates[0], dict):
        return None
    candidate = candidates[0]
    parts = (candidate.get("content") or {}).get("parts") or []
    _parse_model_turn(parts, "/candidates/0/content/parts", items, [])
    return candidate.get("finishReason")


def parse_response(payload: dict[str, Any], state: State) -> tuple[Response, list[Loss]]:
    payload = normalise(payload)
    losses: list[Loss] = []
    resp = Response(id=str(payload.get("responseId") or ""), model=str(payload.get("modelVersion") or ""))
    if "error" in payload and not payload.get("candidates"):
        resp.error = payload["error"]
        return resp, losses
    if len(payload.get("candidates") or []) > 1:
        losses.append(Loss("/candidates/1", None, "dropped", "only the first candidate is translated", ""))
    reason = _parse_candidate(payload, resp.items)
    hollow(resp, losses, "/candidates/0/content" if payload.get("candidates") else "/candidates")
    for item in resp.items:
        if isinstance(item, Call) and item.opaque:
            losses.append(Loss(join(item.src, "thoughtSignature"), None, "dropped",
                               "a thought signature cannot cross to the client's dialect", "XL-14"))
    blocked = (payload.get("promptFeedback") or {}).get("blockReason")
    has_calls = any(isinstance(i, Call) for i in resp.items)
    resp.stop = "content_filter" if blocked else "tool_calls" if has_calls else _FINISH_IN.get(reason or "STOP", "stop")
    resp.input_tokens, resp.output_tokens = token_counts(payload.get("usageMetadata"), "promptTokenCount",
                                                         "candidatesTokenCount")
    return resp, losses


def emit_response(resp: Response, state: State, losses: list[Loss]) -> dict[str, Any]:
    if resp.error is not None:
        return {"error": google_error(resp.error)}
    answer = _answer(resp, state, losses)
    # Code Assist's client reads the answer under its envelope's key (an error travels as Google's).
    return {state.envelope: answer} if state.envelope else answer


def _answer(resp: Response, state: State, losses: list[Loss]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    calls = 0
    for item in resp.items:
        here = join("/candidates/0/content/parts", len(parts))
        if isinstance(item, Message):
            text = join_text(plain(item.parts, losses, Dialect.GEMINI, here), RUN)
            if text:
                parts.append({"text": text})
        elif isinstance(item, Call):
            call_id = back_id(state, item.id, f"{resp.id}:{calls}", losses, item.src, join(here, "functionCall", "id"))
            calls += 1
            parts.append({"functionCall": {"id": call_id, "name": back_name(state, item.name), "args": item.arguments}})
        elif isinstance(item, Opaque):
            losses.append(Loss(item.src, None, "dropped", f"{item.dialect.value} {item.what} cannot cross to Gemini",
                               "XL-14"))
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": _FINISH_OUT[resp.stop],
                            "index": 0}],
            "usageMetadata": _usage(resp.input_tokens, resp.output_tokens),
            "modelVersion": resp.model or state.model, "responseId": resp.id}


def _usage(prompt: int, output: int) -> dict[str, int]:
    return {"promptTokenCount": prompt, "candidatesTokenCount": output, "totalTokenCount": prompt + output}


# --- streams -------------------------------------------------------------------------------------

# The upstream's stream bytes -> the events StreamParser reads: server-sent events (a translated
# request asks for them: alt=sse).
StreamReader = SSEParser


class StreamParser:
    """Gemini partial responses -> neutral events. Each functionCall arrives whole (GM-15), so it
    becomes start + arguments + end at once, keyed by its position in the stream."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.started = False
        self.calls = 0
        self.reason: str | None = None
        self.usage = (0, 0)
        self.done = False

    def feed(self, event: SSEEvent) -> list[ev.Event]:
        if self.done:
            return []
        chunk = ev.decode(event, "chunk")
        if not isinstance(chunk, dict):
            return chunk
        chunk = normalise(chunk)
        if "error" in chunk and not chunk.get("candidates"):
            self.done = True
            return [ev.Failure(str((chunk["error"] or {}).get("message", "")), chunk["error"])]
        out: list[ev.Event] = []
        if not self.started:
            self.started = True
            out.append(ev.Start(str(chunk.get("responseId") or ""), str(chunk.get("modelVersion") or "")))
        usage = chunk.get("usageMetadata")
        if isinstance(usage, dict):
            self.usage = token_counts(usage, "promptTokenCount", "candidatesTokenCount")
        items: list[Any] = []
        self.reason = _parse_candidate(chunk, items) or self.reason
        for item in items:
            if isinstance(item, Message):
                out.append(ev.TextDelta(join_text(item.parts, RUN)))
            elif isinstance(item, Call):
                key = self.calls
                self.calls += 1
                if item.opaque:
                    out.append(ev.Dropped("a thought signature"))
                out += [ev.CallStart(key, item.id or "", item.name), ev.CallArgs(key, dumps(item.arguments)),
                        ev.CallEnd(key)]
            elif isinstance(item, Opaque):
                out.append(ev.Dropped(item.what))
        return out

    def close(self) -> list[ev.Event]:
        if self.done:
            return []
        self.done = True
        stop: StopReason = "tool_calls" if self.calls else _FINISH_IN.get(self.reason or "STOP", "stop")
        return [ev.Finish(stop, *self.usage)]


class StreamEmitter:
    """Neutral events -> Gemini `alt=sse` chunks. A call is written whole when it ends: Gemini
    carries arguments as an object, so only that one call's fragments wait."""

    def __init__(self, state: State, losses: list[Loss]) -> None:
        self.state = state
        self.losses = losses
        self.id = ""
        self.model = state.model
        self.calls: dict[Any, tuple[str, str, list[str]]] = {}
        self.count = 0
        self.opened = False  # the JSON array's "[" is out
        self.refused = False
        self.finished = False

    def _chunk(self, parts: list[dict[str, Any]], finish: str | None = None,
               usage: dict[str, int] | None = None) -> bytes:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        body: dict[str, Any] = {"candidates": [candidate], "modelVersion": self.model, "responseId": self.id}
        if usage:
            body["usageMetadata"] = usage
        return self._frame(body)

    def _frame(self, body: dict[str, Any]) -> bytes:
        """One chunk as SSE, or as the next element of the JSON array a client without
        alt=sse reads; the array is closed by `close`. Inside the client's envelope, if it has one."""
        if self.state.envelope and "error" not in body:
            body = {self.state.envelope: body}
        if not self.state.json_array_stream:
            return sse.encode(jsonsafe.dumps(body), end=b"\r\n")
        lead = b"[" if not self.opened else b",\r\n"
        self.opened = True
        return lead + jsonsafe.dumps(body)

    def emit(self, event: ev.Event) -> bytes:
        if isinstance(event, ev.Start):
            self.id = event.id
            self.model = event.model or self.model
            return b""
        if isinstance(event, ev.TextDelta):
            if event.refusal and not self.refused:
                self.refused = True
                self.losses.append(refusal_as_text("/stream", None, Dialect.GEMINI))
            return self._chunk([{"text": event.text}])
        if isinstance(event, ev.CallStart):
            self.calls[event.key] = (event.id, event.name, [])
            return b""
        if isinstance(event, ev.CallArgs):
            self.calls[event.key][2].append(event.delta)
            return b""
        if isinstance(event, ev.CallEnd):
            return self._call(event.key)
        if isinstance(event, ev.Finish):
            if self.finished:
                return b""
            self.finished = True
            out = b"".join(self._call(key) for key in list(self.calls))
            stop = _FINISH_OUT[event.stop]
            return out + self._chunk([], stop, _usage(event.input_tokens, event.output_tokens)) + self._end()
        if isinstance(event, ev.Dropped):
            self.losses.append(Loss("/stream", None, "dropped", f"{event.what} cannot cross to Gemini", event.rule))
            return b""
        if isinstance(event, ev.Failure):
            self.finished = True
            error = google_error(event.raw if event.raw is not None else event.message)
            return self._frame({"error": error}) + self._end()
        return b""

    def _end(self) -> bytes:
        if not self.state.json_array_stream:
            return b""
        return b"]" if self.opened else b"[]"

    def _call(self, key: Any) -> bytes:
        if key not in self.calls:
            return b""
        call_id, name, pieces = self.calls.pop(key)
        here = join("/stream/functionCall", self.count)
        arguments, _ = decode_arguments("".join(pieces), join(here, "args"), self.losses)
        call_id = back_id(self.state, call_id or None, f"{self.id}:{self.count}", self.losses, here, join(here, "id"))
        self.count += 1
        return self._chunk([{"functionCall": {"id": call_id, "name": back_name(self.state, name), "args": arguments}}])


def emit_tool_result(item: Result, emit: Emit) -> dict[str, Any]:
    """One tool result as this dialect carries it (what the MCP bridge writes for a tools/call result)."""
    if not item.name:
        raise TranslationError("a Gemini functionResponse needs the function name; pass the tools/call request "
                               "together with its result", item.src)
    out = function_response(item, emit, "/functionResponse")
    media = [p for p in item.parts if p.kind != "text"]
    if media:
        emit.losses.append(Loss(item.src, "/functionResponse/parts", "converted",
                                "media go in functionResponse.parts, which some Gemini models do not support", "XL-15"))
        out["parts"] = [{"inlineData": {"mimeType": p.mime, "data": p.data}} if p.data
                        else {"fileData": {"mimeType": p.mime, "fileUri": p.url}} for p in media]
    return {"functionResponse": out}
