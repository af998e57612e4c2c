"""OTLP/JSON trace files: spans written as the protobuf JSON mapping of an ExportTraceServiceRequest
(what the Collector's file exporter and `otlp push` carry, byte for byte the same message), and such
files read back, each GenAI LLM span as a Flow. Needs the `[otel]` extra: `otlp` is the format's
entry in the registry and imports this module only once the extra is known to be there.

The OTLP/JSON rules that differ from plain protobuf JSON are kept: trace and span ids are hex, not
base64, and enums are integers. A file of several requests, one per line (the Collector's file
exporter), is read too, and so is what Arize Phoenix serves as OTLP JSON
(`GET /v1/projects/{project}/spans/otlpv1`: `{"data": [span, ...], "next_cursor": ...}`, its spans
in protobuf's own field names, ids in hex, without their resource).

Reading: a span holds what an instrumentation chose to keep, never the bytes. The request and
response bodies are rebuilt from its `gen_ai.input.messages` / `gen_ai.output.messages` (or the
older `gen_ai.content.prompt` / `gen_ai.content.completion` events), and every flow says so in its
notes: no headers, no raw bytes, no stream chunks, and no status unless the span recorded one."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan

from ..flow import Flow, FlowState

_ID_KEYS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")


def document(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    message = encode_spans(spans)
    data: dict[str, Any] = json_format.MessageToDict(message, use_integers_for_enums=True)
    _ids(data, lambda raw: base64.b64decode(raw).hex())
    return data


def dumps(spans: Sequence[ReadableSpan]) -> bytes:
    return (json.dumps(document(spans), indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _ids(data: Any, convert: Any) -> None:
    """Rewrite every trace/span id in place (hex <-> protobuf JSON's base64)."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key in _ID_KEYS and isinstance(value, str):
                data[key] = convert(value)
            else:
                _ids(value, convert)
    elif isinstance(data, list):
        for value in data:
            _ids(value, convert)


class OtlpError(ValueError):
    """Not an OTLP/JSON trace file this version can read; the message says why."""


def parse(data: bytes, source: str) -> list[ExportTraceServiceRequest]:
    """The requests of an OTLP/JSON file: one document, or one per line."""
    try:
        documents = [json.loads(data)]
    except (ValueError, UnicodeDecodeError):
        try:
            documents = [json.loads(line) for line in data.splitlines() if line.strip()]
        except (ValueError, UnicodeDecodeError) as exc:
            raise OtlpError(f"{source}: not OTLP/JSON: {exc}") from None
    found = []
    for number, item in enumerate(documents, 1):
        if isinstance(item, dict) and "resourceSpans" not in item and isinstance(item.get("data"), list):
            item = {"resourceSpans": [{"scopeSpans": [{"spans": item["data"]}]}]}  # Phoenix's span search
        if not isinstance(item, dict) or not isinstance(item.get("resourceSpans"), list):
            raise OtlpError(f"{source}: document {number} has no resourceSpans list")

        def to_base64(text: str, number: int = number) -> str:
            try:
                return base64.b64encode(bytes.fromhex(text)).decode("ascii")
            except ValueError:
                raise OtlpError(f"{source}: document {number}: id {text[:40]!r} is not hex") from None

        _ids(item, to_base64)
        try:
            found.append(json_format.ParseDict(item, ExportTraceServiceRequest(), ignore_unknown_fields=True))
        except (json_format.ParseError, DecodeError, TypeError, ValueError) as exc:
            raise OtlpError(f"{source}: document {number} is not an OTLP trace request: {exc}") from None
    return found


def value(any_value: Any) -> Any:
    """An OTLP AnyValue as a Python value."""
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: value(kv.value) for kv in any_value.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(any_value.bytes_value).decode("ascii")
    return getattr(any_value, kind)


def attributes(pairs: Any) -> dict[str, Any]:
    return {kv.key: value(kv.value) for kv in pairs}


LLM_OPERATIONS = ("chat", "generate_content", "text_completion")
_AS_SENT = ("read from an OTLP span: the bodies are its toolwire.request.body and toolwire.response.body (decoded); "
            "the span recorded no headers and no stream chunk times")
_SAID = ("read from an OTLP span: the bodies are rebuilt from its gen_ai message attributes; the span "
         "recorded no raw bytes, no headers and no stream chunks")


def flows(data: bytes, source: str) -> list[tuple[Flow, str]]:
    """(flow, where in the file) for each LLM span of the file, in the file's order."""
    found = []
    number = 0
    for request in parse(data, source):
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    attrs = attributes(span.attributes)
                    if attrs.get("gen_ai.operation.name") not in LLM_OPERATIONS:
                        continue
                    number += 1
                    found.append((_flow(span, attrs, number), f"{source} span {span.span_id.hex()} ({span.name})"))
    return found


def _messages(span: Any, attrs: dict[str, Any], key: str, event: str, event_key: str) -> Any:
    """The span's messages: the 1.37 attribute, else the older event's JSON (OpenAI-shaped)."""
    text = attrs.get(key)
    if text is None:
        for ev in span.events:
            if ev.name == event:
                text = attributes(ev.attributes).get(event_key)
                if text is not None:
                    return "legacy", _json(text)
        return None, None
    return "semconv", _json(text)


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return None


def _flow(span: Any, attrs: dict[str, Any], number: int) -> Flow:
    provider = attrs.get("gen_ai.provider.name") or attrs.get("gen_ai.system") or ""
    anthropic = provider == "anthropic"
    model = attrs.get("gen_ai.request.model") or attrs.get("gen_ai.response.model") or ""
    notes = [_SAID]
    kind, messages = _messages(span, attrs, "gen_ai.input.messages", "gen_ai.content.prompt", "gen_ai.prompt")
    system = _json(attrs.get("gen_ai.system_instructions"))
    tools = _json(attrs.get("gen_ai.tool.definitions"))
    request: dict[str, Any] | None = None
    if kind == "semconv" and isinstance(messages, list):
        request = (_anthropic_request if anthropic else _chat_request)(model, messages, system, tools, attrs)
    elif kind == "legacy" and isinstance(messages, list):
        request = {"model": model, "messages": messages, **({"tools": tools} if isinstance(tools, list) else {})}
    else:
        notes.append("the span carries no message content (gen_ai.input.messages): the request is not known")
    out_kind, output = _messages(span, attrs, "gen_ai.output.messages", "gen_ai.content.completion", "gen_ai.completion")
    response: dict[str, Any] | None = None
    if out_kind == "semconv" and isinstance(output, list):
        response = (_anthropic_response if anthropic else _chat_response)(model, output, attrs)
    elif out_kind == "legacy" and isinstance(output, list):
        response = {"id": attrs.get("gen_ai.response.id", ""), "object": "chat.completion", "model": model,
                    "choices": [{"index": i, "message": m, "finish_reason": None} for i, m in enumerate(output)]}
    else:
        notes.append("the span carries no output content (gen_ai.output.messages): the response is not known")
    if provider and provider not in ("openai", "anthropic"):
        notes.append(f"provider {provider}: its messages are read as OpenAI Chat Completions")
    raw_request, raw_response = attrs.get("toolwire.request.body"), attrs.get("toolwire.response.body")
    streamed = attrs.get("toolwire.response.streamed") is True
    if isinstance(raw_request, str) and isinstance(raw_response, str):
        # Our own export with content: the bodies as they crossed the wire (decoded), not rebuilt.
        notes = [_AS_SENT]
        request_body, response_body = raw_request.encode("utf-8"), raw_response.encode("utf-8")
    else:
        request_body, response_body = _body(request), _body(response)
        streamed = False
    status = attrs.get("http.response.status_code")
    status = int(status) if isinstance(status, (int, str)) and str(status).isdigit() else None
    start, end = span.start_time_unix_nano / 1e9, span.end_time_unix_nano / 1e9
    error = span.status.message or "the span's status is an error" if span.status.code == 2 else None
    host = attrs.get("server.address") or ""
    path = "/v1/messages" if anthropic else "/v1/chat/completions"
    if notes[0] is _AS_SENT and isinstance(attrs.get("toolwire.path"), str):
        path = attrs["toolwire.path"]
    return Flow(
        id=number, session_id=0, started_at=start, method="POST", path=path,
        request_body=request_body, upstream_url=f"https://{host}{path}" if host else "",
        status=status, response_body=response_body, streamed=streamed,
        response_headers=[("content-type", "text/event-stream" if streamed else "application/json")]
        if response_body else [],
        latency_ms=round((end - start) * 1000.0, 3) if end >= start else None,
        state=FlowState.ERROR if error else FlowState.COMPLETE, error=error, notes=notes)


def _body(document: Any) -> bytes:
    return b"" if document is None else json.dumps(document, ensure_ascii=False).encode("utf-8")


def _texts(parts: list[Any]) -> str:
    return "".join(p.get("content", "") for p in parts if isinstance(p, dict) and p.get("type") == "text")


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _chat_message(message: dict[str, Any]) -> list[dict[str, Any]]:
    role = message.get("role")
    parts = [p for p in message.get("parts") or [] if isinstance(p, dict)]
    if role == "tool":
        return [{"role": "tool", "tool_call_id": p.get("id"), "content": _arguments(p.get("response"))}
                for p in parts if p.get("type") == "tool_call_response"]
    out: dict[str, Any] = {"role": role, "content": _texts(parts) or None}
    calls = [{"id": p.get("id"), "type": "function",
              "function": {"name": p.get("name"), "arguments": _arguments(p.get("arguments"))}}
             for p in parts if p.get("type") == "tool_call"]
    if calls:
        out["tool_calls"] = calls
    return [out]


def _chat_request(model: str, messages: list[Any], system: Any, tools: Any, attrs: dict[str, Any]) -> dict[str, Any]:
    chat = [{"role": "system", "content": _texts(system)}] if isinstance(system, list) and system else []
    for message in messages:
        if isinstance(message, dict):
            chat.extend(_chat_message(message))
    request: dict[str, Any] = {"model": model, "messages": chat}
    if isinstance(tools, list) and tools:
        request["tools"] = tools
    if attrs.get("gen_ai.request.max_tokens") is not None:
        request["max_tokens"] = attrs["gen_ai.request.max_tokens"]
    return request


def _usage(attrs: dict[str, Any], inputs: str, outputs: str) -> dict[str, Any]:
    return {key: attrs[name] for key, name in ((inputs, "gen_ai.usage.input_tokens"),
                                               (outputs, "gen_ai.usage.output_tokens")) if name in attrs}


def _chat_response(model: str, output: list[Any], attrs: dict[str, Any]) -> dict[str, Any]:
    choices = []
    for index, message in enumerate(m for m in output if isinstance(m, dict)):
        (converted,) = _chat_message({**message, "role": "assistant"})
        choices.append({"index": index, "message": converted, "finish_reason": message.get("finish_reason")})
    response = {"id": attrs.get("gen_ai.response.id", ""), "object": "chat.completion",
                "model": attrs.get("gen_ai.response.model") or model, "choices": choices}
    usage = _usage(attrs, "prompt_tokens", "completion_tokens")
    if usage:
        response["usage"] = usage
    return response


def _anthropic_blocks(parts: list[Any]) -> list[dict[str, Any]]:
    blocks = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            blocks.append({"type": "text", "text": part.get("content", "")})
        elif part.get("type") == "tool_call":
            blocks.append({"type": "tool_use", "id": part.get("id"), "name": part.get("name"),
                           "input": part.get("arguments")})
        elif part.get("type") == "tool_call_response":
            blocks.append({"type": "tool_result", "tool_use_id": part.get("id"),
                           "content": _arguments(part.get("response"))})
    return blocks


def _anthropic_request(model: str, messages: list[Any], system: Any, tools: Any,
                       attrs: dict[str, Any]) -> dict[str, Any]:
    # A tool result travels in a user message in the Messages API.
    converted = [{"role": "user" if m.get("role") == "tool" else m.get("role"),
                  "content": _anthropic_blocks(m.get("parts") or [])} for m in messages if isinstance(m, dict)]
    request: dict[str, Any] = {"model": model, "messages": converted}
    if attrs.get("gen_ai.request.max_tokens") is not None:
        request["max_tokens"] = attrs["gen_ai.request.max_tokens"]
    if isinstance(system, list) and system:
        request["system"] = _texts(system)
    if isinstance(tools, list) and tools:
        request["tools"] = tools
    return request


def _anthropic_response(model: str, output: list[Any], attrs: dict[str, Any]) -> dict[str, Any]:
    message = next((m for m in output if isinstance(m, dict)), {})
    reasons = attrs.get("gen_ai.response.finish_reasons") or [message.get("finish_reason")]
    response = {"id": attrs.get("gen_ai.response.id", ""), "type": "message", "role": "assistant",
                "model": attrs.get("gen_ai.response.model") or model,
                "content": _anthropic_blocks(message.get("parts") or []),
                "stop_reason": _ANTHROPIC_STOP.get(reasons[0], reasons[0]) if reasons else None}
    usage = _usage(attrs, "input_tokens", "output_tokens")
    if usage:
        response["usage"] = usage
    return response


# The neutral stop reasons our spans carry, back in the Messages API's words.
_ANTHROPIC_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}

