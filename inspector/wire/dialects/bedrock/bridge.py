"""Bedrock Converse <-> the neutral form: requests (the model and the stream are in the path),
ConverseResponse, and the ConverseStream events (which arrive in the event-stream framing: the
stream parser takes them as `stream.FRAMING` reads them, the emitter writes its frames)."""

from __future__ import annotations

from typing import Any

import orjson

from ... import jsonsafe
from ...dialect import Dialect
from ...pointer import join
from ...translate import events as ev
from ...translate.common import (sent_stop, parse_turns, RUN, Emit, back_id, back_name, declared_once, dumps, hollow, join_text, json_schema_of,
                                 role_turn, plain, refusal_as_text, token_counts)
from ...translate.model import (Call, Choice, Loss, Message, Opaque, Output, Part, Request, Response, Result, State,
                                StopReason, Tool, TranslationError)
from .limits import RANGES
from .shape import model_of, stream_path
from .stream import EventReader, Unreadable, encode_event

_PARAMS = ("messages", "system", "inferenceConfig", "toolConfig", "modelId", "outputConfig")
_INFERENCE = {"maxTokens": "max_tokens", "temperature": "temperature", "topP": "top_p"}
_STOP_IN: dict[object, StopReason] = {
    "end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length",
    "model_context_window_exceeded": "length", "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter"}
_STOP_OUT = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "content_filter": "content_filtered"}
_IMAGE_FORMATS = ("png", "jpeg", "gif", "webp")
# Converse's DocumentFormat values and the media type of each (botocore's bedrock-runtime model lists
# the formats; the types are IANA's): a document's format both ways.
_DOCUMENT_TYPES = {
    "pdf": "application/pdf", "csv": "text/csv", "doc": "application/msword",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xls": "application/vnd.ms-excel", "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "html": "text/html", "txt": "text/plain", "md": "text/markdown",
}
_DOCUMENT_FORMATS = {mime: fmt for fmt, mime in _DOCUMENT_TYPES.items()}


# --- requests ------------------------------------------------------------------------------------

def _blocks(content: Any, src: str) -> list[tuple[str, str, Any]]:
    """(pointer, member, value) of each one-member content block."""
    if not isinstance(content, list):
        raise TranslationError("content must be a list of blocks", src)
    out = []
    for position, block in enumerate(content):
        here = join(src, position)
        if not isinstance(block, dict) or len(block) != 1:
            raise TranslationError("a content block holds exactly one member", here)
        kind, value = next(iter(block.items()))
        out.append((here, kind, value))
    return out


def _media(kind: str, value: Any, here: str) -> Part:
    value = value if isinstance(value, dict) else {}
    data = (value.get("source") or {}).get("bytes")
    if not isinstance(data, str):
        raise TranslationError(f"a {kind} block without inline bytes (an S3 location) has no counterpart", here)
    fmt = str(value.get("format") or "")
    if kind == "image":
        return Part("image", here, data=data, mime=f"image/{fmt}")
    return Part("file", here, data=data, mime=_DOCUMENT_TYPES.get(fmt, f"application/{fmt}"),
                filename=str(value.get("name") or ""))


def _result_parts(content: Any, src: str, losses: list[Loss]) -> list[Part]:
    parts = []
    for here, kind, value in _blocks(content, src):
        if kind == "text":
            parts.append(Part("text", here, text=str(value)))
        elif kind == "json":
            losses.append(Loss(here, None, "converted", "a json tool result is carried as its JSON text", "XL-15"))
            parts.append(Part("text", here, text=dumps(value)))
        elif kind in ("image", "document"):
            parts.append(_media(kind, value, here))
        else:
            raise TranslationError(f"toolResult content of type {kind!r} has no counterpart", here)
    return parts


def parse_request(payload: dict[str, Any], path: str) -> tuple[Request, list[Loss]]:
    losses: list[Loss] = []
    req = Request(model=model_of(path) or str(payload.get("modelId") or ""), stream=stream_path(path))
    for key in payload:
        if key not in _PARAMS:
            req.leftovers.append((join("", key), f"Converse field {key!r} has no counterpart"))
    system = payload.get("system")
    if isinstance(system, list):
        parts = []
        for here, kind, value in _blocks(system, "/system"):
            if kind == "text":
                parts.append(Part("text", here, text=str(value)))
            else:
                req.leftovers.append((here, f"a system {kind} block has no counterpart"))
        if parts:
            req.items.append(Message("system", parts, "/system"))
    parse_turns(payload, req, losses, _parse_user, _parse_assistant)
    config = payload.get("inferenceConfig")
    if isinstance(config, dict):
        for key, value in config.items():
            if key in _INFERENCE:
                setattr(req, _INFERENCE[key], value if isinstance(value, (int, float)) and
                        not isinstance(value, bool) else None)
                req.sources[_INFERENCE[key]] = join("/inferenceConfig", key)
            elif key == "stopSequences":
                req.stop = [s for s in value or [] if isinstance(s, str)]
                req.stop_src = "/inferenceConfig/stopSequences"
            else:
                req.leftovers.append((join("/inferenceConfig", key), f"inferenceConfig.{key} has no counterpart"))
    tools = payload.get("toolConfig")
    if isinstance(tools, dict):
        _parse_tools(tools, req, losses)
    output = payload.get("outputConfig")
    if isinstance(output, dict):
        _parse_output(output, req)
    return req, losses


def _parse_output(config: dict[str, Any], req: Request) -> None:
    """outputConfig.textFormat: a JSON Schema, sent as its JSON text (OutputFormat, JsonSchemaDefinition)."""
    req.leftovers.extend((join("/outputConfig", key), f"outputConfig.{key} has no counterpart")
                         for key in config if key != "textFormat")
    fmt = config.get("textFormat")
    if fmt is None:
        return
    src = "/outputConfig/textFormat"
    definition = ((fmt.get("structure") or {}).get("jsonSchema") or {}) if isinstance(fmt, dict) else {}
    text = definition.get("schema") if isinstance(definition, dict) else None
    try:
        schema = jsonsafe.loads(text) if isinstance(text, str) else None
    except orjson.JSONDecodeError:
        schema = None
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema" or not isinstance(schema, dict):
        req.leftovers.append((src, "an outputConfig.textFormat that is not a JSON Schema (as JSON text) has no "
                                   "counterpart"))
        return
    at = join(src, "structure", "jsonSchema")
    req.output = Output("schema", src, schema, str(definition.get("name") or ""),
                        str(definition.get("description") or ""),
                        pointers={"name": join(at, "name"), "description": join(at, "description"),
                                  "schema": join(at, "schema")})


def _parse_user(content: Any, src: str, items: list[Any], losses: list[Loss]) -> None:
    """Tool results first, then the rest of the turn (XL-07); a reorder is reported."""
    results: list[Result] = []
    parts: list[Part] = []
    for here, kind, value in _blocks(content, join(src, "content")):
        if kind == "toolResult":
            value = value if isinstance(value, dict) else {}
            if parts and not results:
                losses.append(Loss(here, None, "converted", "tool results placed before the text that preceded them",
                                   "XL-07"))
            call_id = value.get("toolUseId")
            if not isinstance(call_id, str) or not call_id:
                raise TranslationError("a toolResult needs its toolUseId", join(here, "toolResult", "toolUseId"))
            results.append(Result(call_id, None, _result_parts(value.get("content") or [],
                                                               join(here, "toolResult", "content"), losses),
                                  here, is_error=value.get("status") == "error",
                                  id_src=join(here, "toolResult", "toolUseId")))
        elif kind == "text":
            parts.append(Part("text", here, text=str(value)))
        elif kind in ("image", "document"):
            parts.append(_media(kind, value, here))
        elif kind == "cachePoint":
            losses.append(Loss(here, None, "dropped", "a cachePoint has no counterpart", ""))
        else:
            raise TranslationError(f"user content block {kind!r} has no counterpart", here)
    items.extend(results)
    if parts:
        items.append(Message("user", parts, src))


def _parse_assistant(content: Any, src: str, items: list[Any]) -> None:
    for here, kind, value in _blocks(content, join(src, "content")):
        if kind == "text":
            if value:
                items.append(Message("assistant", [Part("text", here, text=str(value))], here))
        elif kind == "toolUse":
            value = value if isinstance(value, dict) else {}
            call_id, name, arguments = value.get("toolUseId"), value.get("name"), value.get("input")
            if not isinstance(call_id, str) or not isinstance(name, str):
                raise TranslationError("a toolUse needs toolUseId and name", join(here, "toolUse"))
            if not isinstance(arguments, dict):
                raise TranslationError("toolUse input must be an object", join(here, "toolUse", "input"))
            items.append(Call(call_id, name, arguments, here, name_src=join(here, "toolUse", "name"),
                              id_src=join(here, "toolUse", "toolUseId")))
        else:
            items.append(Opaque(Dialect.BEDROCK, f"{kind} block", {kind: value}, here))


def _parse_tools(config: dict[str, Any], req: Request, losses: list[Loss]) -> None:
    seen: set[str] = set()
    for j, tool in enumerate(config.get("tools") or []):
        here = join("/toolConfig/tools", j)
        spec = tool.get("toolSpec") if isinstance(tool, dict) else None
        if not isinstance(spec, dict):
            req.leftovers.append((here, "a Converse tool other than toolSpec (systemTool, cachePoint) has no "
                                        "counterpart"))
            continue
        name = spec.get("name")
        if not declared_once(name, join(here, "toolSpec"), seen, losses):
            continue
        schema = (spec.get("inputSchema") or {}).get("json")
        schema_src = join(here, "toolSpec", "inputSchema", "json")
        req.tools.append(Tool(name, str(spec.get("description") or ""),
                              json_schema_of(schema, schema_src, losses) if isinstance(schema, dict) else {},
                              join(here, "toolSpec"), spec.get("strict"), name_src=join(here, "toolSpec", "name"),
                              schema_src=schema_src))
    choice = config.get("toolChoice")
    if isinstance(choice, dict) and len(choice) == 1:
        kind, value = next(iter(choice.items()))
        src = "/toolConfig/toolChoice"
        if kind == "auto":
            req.choice = Choice("auto", src)
        elif kind == "any":
            req.choice = Choice("required", src)
        elif kind == "tool" and isinstance(value, dict) and isinstance(value.get("name"), str):
            req.choice = Choice("named", src, value["name"])


def _media_block(part: Part, emit: Emit, tgt: str) -> dict[str, Any] | None:
    mime = part.mime.split(";", 1)[0].strip().lower()
    fmt = mime.split("/", 1)[-1]
    if part.kind == "image" and part.data and fmt in _IMAGE_FORMATS:
        return {"image": {"format": fmt, "source": {"bytes": part.data}}}
    if part.kind == "file" and part.data and (not mime or mime in _DOCUMENT_FORMATS):
        return {"document": {"format": _DOCUMENT_FORMATS.get(mime, "pdf"), "name": part.filename or "document",
                             "source": {"bytes": part.data}}}
    emit.drop(part.src, f"{'an' if part.kind == 'image' else 'a'} {part.kind} part given by URL or in a format Converse does not read has no counterpart")
    return None


def content_blocks(parts: list[Part], emit: Emit, tgt: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in plain(parts, emit.losses, emit.target, tgt):
        if part.kind == "text":
            if part.text:
                out.append({"text": part.text})
        else:
            block = _media_block(part, emit, tgt)
            if block is not None:
                out.append(block)
    return out


def emit_request(req: Request, emit: Emit) -> dict[str, Any]:
    out: dict[str, Any] = {}
    system: list[Part] = []
    turns: list[tuple[str, list[dict[str, Any]], str]] = []
    merged: list[str] = []
    for item in req.items:
        if isinstance(item, Message) and item.role == "system":
            if any(p.kind != "text" for p in item.parts):
                emit.drop(item.src, "the system prompt carries text only; media dropped")
            system.extend(item.parts)
            continue
        role = "assistant" if isinstance(item, Call) or (isinstance(item, Message) and item.role == "assistant") \
            or isinstance(item, Opaque) else "user"
        blocks, tgt = role_turn(turns, merged, role, item.src, emit, "Converse")
        if isinstance(item, Message):
            blocks.extend(content_blocks(item.parts, emit, tgt))
        elif isinstance(item, Call):
            blocks.append({"toolUse": {
                "toolUseId": emit.call_id(item.id or "", item.id_src or item.src, join(tgt, "toolUse", "toolUseId")),
                "name": emit.name(item.name, item.name_src or item.src, join(tgt, "toolUse", "name")),
                "input": item.arguments}})
        elif isinstance(item, Result):
            blocks.insert(sum(1 for b in blocks if "toolResult" in b), emit_tool_result(item, emit, tgt))
        elif isinstance(item, Opaque) and emit.opaque(item):
            blocks.append(item.raw)
    messages: list[dict[str, Any]] = []
    for role, blocks, src in turns:
        if not blocks:
            emit.drop(src, "a message with no content left is rejected by Converse (BR-09)")
        elif messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    out["messages"] = messages
    if join_text(system):
        out["system"] = [{"text": join_text(system)}]
    inference: dict[str, Any] = {}
    for key, field in _INFERENCE.items():
        if getattr(req, field) is not None:
            inference[key] = emit.ranged(req, field, join("/inferenceConfig", key), RANGES)
    if req.stop:
        inference["stopSequences"] = req.stop
    if inference:
        out["inferenceConfig"] = inference
    tools = emit_tools(req.tools, emit)
    for builtin in req.builtins:
        emit.drop(builtin.src, f"the built-in tool {builtin.kind!r} has no Converse counterpart", "XL-09")
    choice = _emit_choice(req, emit, tools)
    if tools:
        out["toolConfig"] = {"tools": tools, **({"toolChoice": choice} if choice is not None else {})}
    elif any("toolUse" in b or "toolResult" in b for m in messages for b in m["content"]):
        # BR-07: Converse refuses tool blocks without a toolConfig; the history's tools are declared
        # with the schemas nothing stated.
        names = sorted({b["toolUse"]["name"] for m in messages for b in m["content"] if "toolUse" in b})
        out["toolConfig"] = {"tools": [{"toolSpec": {"name": n, "inputSchema": {"json": {"type": "object"}}}}
                                       for n in names]}
        emit.losses.append(Loss("", "/toolConfig", "synthesised", "Converse needs a toolConfig when the history holds "
                                "tool blocks; the tools the history calls are declared with open schemas", "BR-07"))
    if req.reasoning is not None:
        emit.drop(req.reasoning.src, "Converse states reasoning per model (additionalModelRequestFields); not sent")
    _emit_output(req.output, emit, out)
    for identifier in (req.user, req.cache_key):
        if identifier is not None:
            emit.drop(identifier.src, "Converse has no field for this identifier")
    if req.store is not None:  # only Chat and Responses say it, both at /store
        emit.drop("/store", "bedrock has no setting for whether the provider keeps the exchange")
    if req.parallel is not None:
        emit.drop(req.parallel_src, "Converse has no parallel tool calls setting")
    for pointer, why in req.leftovers:
        emit.drop(pointer, why)
    return out


def _emit_output(output: Output | None, emit: Emit, out: dict[str, Any]) -> None:
    if output is None:
        return
    if output.kind == "text":
        emit.drop(output.src, "plain text is Converse's default; nothing to state")
    elif output.kind == "json":
        emit.drop(output.src, "Converse constrains answers only to a JSON Schema; 'any JSON object' has no "
                  "counterpart, so the answer is not held to JSON")
    else:
        definition: dict[str, Any] = {"schema": dumps(output.schema)}
        if output.name:
            definition["name"] = output.name
        if output.description:
            definition["description"] = output.description
        out["outputConfig"] = {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": definition}}}
        if output.strict is False:
            emit.convert(output.pointer("strict"), None, "Converse always holds the answer to the schema; strict "
                         "false cannot be stated")


def emit_tools(tools: list[Tool], emit: Emit) -> list[dict[str, Any]]:
    out = []
    for j, tool in enumerate(tools):
        tgt = join("/toolConfig/tools", j, "toolSpec")
        spec: dict[str, Any] = {"name": emit.name(tool.name, tool.name_src or tool.src, join(tgt, "name"))}
        if tool.description:
            spec["description"] = tool.description
        schema = tool.schema or {"type": "object", "properties": {}}
        if tool.custom:
            emit.convert(tool.src, join(tgt, "inputSchema"), "a free-form custom tool becomes a tool with one string "
                         "parameter \"input\"")
            schema = {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}
        spec["inputSchema"] = {"json": schema}
        out.append({"toolSpec": spec})
    return out


def _emit_choice(req: Request, emit: Emit, tools: list[dict[str, Any]]) -> dict[str, Any] | None:
    choice = req.choice
    if choice is None:
        return None
    if not tools and choice.mode != "none":
        emit.drop(choice.src, "toolChoice without tools is rejected", "XL-11")
        return None
    if choice.mode == "named":
        if choice.name not in {tool.name for tool in req.tools}:
            emit.drop(choice.src, f"the choice names {choice.name!r}, which the request does not declare; Converse "
                      "rejects a toolChoice naming no tool of toolConfig (BR-08)", "XL-11")
            return None
        return {"tool": {"name": emit.name(choice.name, choice.src, "/toolConfig/toolChoice/tool/name")}}
    if choice.mode == "required":
        return {"any": {}}
    if choice.mode == "none":
        emit.convert(choice.src, "/toolConfig", "Converse has no toolChoice none; the tools are still declared and "
                     "the model may call them", "BR-08")
        return None
    if choice.mode == "hosted":
        emit.convert(choice.src, "/toolConfig/toolChoice", "a hosted tool choice has no Converse counterpart; "
                     "written as auto", "XL-11")
    if choice.allowed is not None:
        emit.drop(choice.allowed_src, "Converse cannot narrow the tools a choice allows", "XL-11")
    return {"auto": {}}


def emit_tool_result(item: Result, emit: Emit, tgt: str = "") -> dict[str, Any]:
    """One tool result as Converse carries it (what the MCP bridge writes for a tools/call result)."""
    content = content_blocks(item.parts, emit, tgt) or [{"text": ""}]
    result: dict[str, Any] = {"toolUseId": emit.call_id(item.call_id or "", item.id_src or item.src,
                                                        join(tgt, "toolResult", "toolUseId")), "content": content}
    if item.is_error:
        result["status"] = "error"
    return {"toolResult": result}


# --- responses -----------------------------------------------------------------------------------

def parse_response(payload: dict[str, Any], state: State) -> tuple[Response, list[Loss]]:
    losses: list[Loss] = []
    resp = Response(model=state.model)
    if "output" not in payload and "message" in payload:  # an error body ({"message": …})
        resp.error = {"type": "bedrock_error", "message": str(payload.get("message") or "")}
        return resp, losses
    message = (payload.get("output") or {}).get("message") or {}
    _parse_assistant(message.get("content") or [], "/output/message", resp.items)
    resp.stop = _STOP_IN.get(payload.get("stopReason"), "stop")
    hollow(resp, losses, "/output/message/content")
    resp.input_tokens, resp.output_tokens = token_counts(payload.get("usage"), "inputTokens", "outputTokens")
    return resp, losses


def emit_response(resp: Response, state: State, losses: list[Loss]) -> dict[str, Any]:
    if resp.error is not None:
        return {"message": _error_message(resp.error)}
    content: list[dict[str, Any]] = []
    calls = 0
    for item in resp.items:
        here = join("/output/message/content", len(content))
        if isinstance(item, Message):
            text = join_text(plain(item.parts, losses, Dialect.BEDROCK, here), RUN)
            if text:
                content.append({"text": text})
        elif isinstance(item, Call):
            call_id = back_id(state, item.id, f"{resp.id}:{calls}", losses, item.src, join(here, "toolUse", "toolUseId"))
            calls += 1
            content.append({"toolUse": {"toolUseId": call_id, "name": back_name(state, item.name),
                                        "input": item.arguments}})
        elif isinstance(item, Opaque):
            losses.append(Loss(item.src, None, "dropped", f"{item.dialect.value} {item.what} cannot cross to Bedrock",
                               "XL-14"))
    stop = _STOP_OUT[sent_stop(resp.stop, calls > 0)]
    return {"output": {"message": {"role": "assistant", "content": content}}, "stopReason": stop,
            "usage": _usage(resp.input_tokens, resp.output_tokens), "metrics": {"latencyMs": 0}}


def _usage(prompt: int, output: int) -> dict[str, int]:
    return {"inputTokens": prompt, "outputTokens": output, "totalTokens": prompt + output}


def _error_message(error: Any) -> str:
    if isinstance(error, dict):
        inner = error["error"] if isinstance(error.get("error"), dict) else error
        return str(inner.get("message") or dumps(error))
    return str(error)


# --- streams -------------------------------------------------------------------------------------

# The upstream's stream bytes -> the events StreamParser reads: frames, as boto3 reads them.
StreamReader = EventReader


class StreamParser:
    """ConverseStream events (as stream.EventReader reads them) -> neutral events; calls keyed by
    contentBlockIndex (BR-10)."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.calls: set[Any] = set()
        self.stop: StopReason = "stop"
        self.usage = [0, 0]
        self.stopped = False
        self.done = False

    def feed(self, event: Any) -> list[ev.Event]:
        if isinstance(event, Unreadable) and not self.done:
            self.done = True
            return [ev.Failure(event.why)]
        if self.done or not isinstance(event, dict) or len(event) != 1:
            return [] if self.done or isinstance(event, dict) else [ev.Failure(f"upstream sent an event that is not "
                                                                               f"JSON: {str(event)[:80]!r}")]
        kind, body = next(iter(event.items()))
        body = body if isinstance(body, dict) else {}
        index = body.get("contentBlockIndex")
        if kind == "messageStart":
            return [ev.Start("", self.state.model)]
        if kind == "contentBlockStart":
            use = (body.get("start") or {}).get("toolUse")
            if isinstance(use, dict):
                self.calls.add(index)
                return [ev.CallStart(index, str(use.get("toolUseId") or ""), str(use.get("name") or ""))]
            return []
        if kind == "contentBlockDelta":
            delta = body.get("delta") or {}
            if isinstance(delta.get("text"), str) and delta["text"]:
                return [ev.TextDelta(delta["text"])]
            fragment = (delta.get("toolUse") or {}).get("input") if isinstance(delta.get("toolUse"), dict) else None
            if isinstance(fragment, str) and fragment and index in self.calls:
                return [ev.CallArgs(index, fragment)]
            if "reasoningContent" in delta:
                return [ev.Dropped("reasoningContent delta")]
            return []
        if kind == "contentBlockStop":
            if index in self.calls:
                self.calls.discard(index)
                return [ev.CallEnd(index)]
            return []
        if kind == "messageStop":
            self.stop = _STOP_IN.get(body.get("stopReason"), "stop")
            self.stopped = True
            return []
        if kind == "metadata":
            self.usage = list(token_counts(body.get("usage"), "inputTokens", "outputTokens"))
            return self.close()
        if kind.endswith("Exception"):
            self.done = True
            return [ev.Failure(str(body.get("message") or kind), {"type": kind, "message": body.get("message")})]
        return []

    def close(self) -> list[ev.Event]:
        if self.done:
            return []
        self.done = True
        out: list[ev.Event] = [ev.CallEnd(index) for index in sorted(self.calls, key=str)]
        self.calls.clear()
        return [*out, ev.Finish(self.stop, self.usage[0], self.usage[1])]


class StreamEmitter:
    """Neutral events -> ConverseStream frames: one content block per text run and per call."""

    def __init__(self, state: State, losses: list[Loss]) -> None:
        self.state = state
        self.losses = losses
        self.next = 0
        self.text_block: int | None = None
        self.calls: dict[Any, int] = {}
        self.id = ""  # the upstream answer's id: with the call's ordinal, what an id minted for it is made of
        self.called = 0
        self.refused = False
        self.finished = False

    def emit(self, event: ev.Event) -> bytes:
        if isinstance(event, ev.Start):
            self.id = event.id
            return encode_event({"messageStart": {"role": "assistant"}})
        if isinstance(event, ev.TextDelta):
            if event.refusal and not self.refused:
                self.refused = True
                self.losses.append(refusal_as_text("/stream", None, Dialect.BEDROCK))
            if self.text_block is None:
                self.text_block = self._open()
            return encode_event({"contentBlockDelta": {"delta": {"text": event.text},
                                                       "contentBlockIndex": self.text_block}})
        if isinstance(event, ev.CallStart):
            out = self._close_text()
            index = self.calls[event.key] = self._open()
            # Minted as the JSON answer's would be (`emit_response`): a stream and a JSON answer agree.
            call_id = back_id(self.state, event.id or None, f"{self.id}:{self.called}", self.losses,
                              join("/stream", event.key), join("/stream", index, "toolUseId"))
            self.called += 1
            return out + encode_event({"contentBlockStart": {"start": {"toolUse": {
                "toolUseId": call_id, "name": back_name(self.state, event.name)}}, "contentBlockIndex": index}})
        if isinstance(event, ev.CallArgs):
            if event.key not in self.calls:
                return b""
            return encode_event({"contentBlockDelta": {"delta": {"toolUse": {"input": event.delta}},
                                                       "contentBlockIndex": self.calls[event.key]}})
        if isinstance(event, ev.CallEnd):
            closed = self.calls.pop(event.key, None)
            return b"" if closed is None else encode_event({"contentBlockStop": {"contentBlockIndex": closed}})
        if isinstance(event, ev.Finish):
            if self.finished:
                return b""
            self.finished = True
            out = self._close_text() + b"".join(encode_event({"contentBlockStop": {"contentBlockIndex": index}})
                                                for index in sorted(self.calls.values()))
            self.calls.clear()
            stop = _STOP_OUT[sent_stop(event.stop, bool(self.called))]
            return (out + encode_event({"messageStop": {"stopReason": stop}})
                    + encode_event({"metadata": {"usage": _usage(event.input_tokens, event.output_tokens),
                                                 "metrics": {"latencyMs": 0}}}))
        if isinstance(event, ev.Dropped):
            self.losses.append(Loss("/stream", None, "dropped", f"{event.what} cannot cross to Bedrock", event.rule))
            return b""
        if isinstance(event, ev.Failure):
            self.finished = True
            return encode_event({"modelStreamErrorException": {"message": event.message}})
        return b""

    def _open(self) -> int:
        index = self.next
        self.next += 1
        return index

    def _close_text(self) -> bytes:
        if self.text_block is None:
            return b""
        index, self.text_block = self.text_block, None
        return encode_event({"contentBlockStop": {"contentBlockIndex": index}})

