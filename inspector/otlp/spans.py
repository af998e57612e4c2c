"""Flows -> OpenTelemetry spans (GenAI semantic conventions, see the package docstring for the
version), built by the SDK with the flows' own recorded times.

How traces are cut: one trace per recorded session. Its trace id is derived from the session (id and
start time), so a live export and a later `otlp push` of the same session land in the same trace and
give every span the same id. A flow whose client sent a W3C `traceparent` (an instrumented agent)
joins the client's trace instead, as a child of the client's span; an MCP request does the same
with the trace context in its `params._meta`. Every other flow's span is a root span of the
session's trace: a live export cannot hold a session-wide parent open.

Spans per flow:
- an LLM call: `{operation} {model}` (`chat gpt-4o`, `generate_content gemini-2.5-flash`), CLIENT;
- each tool call the model made, once a later request of the session carries its result:
  `execute_tool {name}`, a child of the call's LLM span, from the end of that response to the start
  of the request that brought the result back (paired by call id, the way `translate.model.pair`
  pairs them within one request);
- an MCP exchange: `{method} {target}` (`tools/call lookup`, `tools/list`), CLIENT.
The inspector's own knowledge rides along: each finding a `toolwire.finding` event, the notes (the
translation's loss report, the repairs) an attribute, a replay a link to its origin's span, and the
flow id with the command that shows its bytes.

OpenInference (opt-in, `Options.openinference`): the same spans also carry the attributes Arize
Phoenix and other OpenInference readers key on (`openinference.span.kind`, `llm.*`, `tool.name`,
`input.value` / `output.value`, flattened `llm.input_messages.N.message.*`), from the same facts."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import trace as trace_api
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from ..analysis import Analysis, BodyTooLarge, analyse, decode_body, is_stream
from ..flow import Flow, FlowState
from ..redact import redacted
from ..wire.dialect import Dialect
from ..wire.rules.base import as_dict
from ..wire.translate.bridge import read_request, read_response
from ..wire.translate.model import Call, Message, Part, Request, Response, Result, TranslationError
from . import INSTRUMENTATION, SCHEMA_URL, SEMCONV_VERSION

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
OPENINFERENCE_ENV = "TOOLWIRE_OTLP_OPENINFERENCE"
STABILITY_ENV = "OTEL_SEMCONV_STABILITY_OPT_IN"
LATEST = "gen_ai_latest_experimental"

# gen_ai.operation.name and gen_ai.provider.name of each LLM dialect.
OPERATIONS = {Dialect.OPENAI_CHAT: "chat", Dialect.OPENAI_RESPONSES: "chat", Dialect.ANTHROPIC: "chat",
              Dialect.GEMINI: "generate_content"}
PROVIDERS = {Dialect.OPENAI_CHAT: "openai", Dialect.OPENAI_RESPONSES: "openai", Dialect.ANTHROPIC: "anthropic",
             Dialect.GEMINI: "gcp.gemini"}
FINDING_EVENT = "toolwire.finding"
# llm.provider and llm.system of OpenInference, where its value lists name the provider.
OI_PROVIDERS = {"openai": "openai", "anthropic": "anthropic", "gcp.gemini": "google"}
OI_SYSTEMS = {"openai": "openai", "anthropic": "anthropic"}
JSON = "application/json"


@dataclass(frozen=True, slots=True)
class Options:
    content: bool = False  # message content on the spans (opt-in), redacted as the store is
    latest_only: bool = False  # OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental: no deprecated names
    store: str = ""  # the store file, for the command that opens a flow's bytes
    openinference: bool = False  # OpenInference attributes beside the GenAI ones (opt-in)


def _true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("true", "1", "yes")


def options(*, content: bool = False, openinference: bool = False, store: str = "") -> Options:
    """The options a command's flags (`content`, `openinference`) and the variables ask for."""
    opt_in = {part.strip() for part in os.environ.get(STABILITY_ENV, "").split(",")}
    return Options(content=content or _true(CONTENT_ENV), latest_only=LATEST in opt_in, store=store,
                   openinference=openinference or _true(OPENINFERENCE_ENV))


def resource() -> Resource:
    """service.name toolwire-inspect unless OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES say otherwise;
    without the SDK's random service.instance.id, so that exporting a session twice gives the same bytes."""
    made = Resource.create({"service.name": INSTRUMENTATION})
    return Resource({k: v for k, v in made.attributes.items() if k != "service.instance.id"}, made.schema_url)


def _id(size: int, *parts: object) -> int:
    digest = hashlib.sha256("\x00".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:size], "big") or 1  # zero is the invalid id


def session_trace_id(session_id: int, started_at: float) -> int:
    return _id(16, "toolwire-session", session_id, repr(started_at))


def span_id(flow_id: int, kind: str = "flow", key: object = "") -> int:
    """Flow ids are unique in a store, so a flow's spans keep their ids across exports."""
    return _id(8, "toolwire-span", flow_id, kind, key)


def _ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


class _Collect(SpanProcessor):
    def __init__(self) -> None:
        self.ended: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        self.ended.append(span)


class _ChosenIds(IdGenerator):
    """The SDK asks for an id when it starts a span: we hand it the one chosen for that span."""

    def __init__(self) -> None:
        self.span = 0
        self.trace = 0

    def generate_span_id(self) -> int:
        return self.span

    def generate_trace_id(self) -> int:
        return self.trace


@dataclass(slots=True)
class _Pending:
    """A tool call the model made, waiting for the request that carries its result."""

    parent: SpanContext
    name: str
    left_at: float  # when the response that made it ended
    flow_id: int
    arguments: Any = None  # as the model gave them, for OpenInference's input.value


class TraceBuilder:
    """Spans for the flows of sessions, fed in recording order (`add`): it remembers the tool calls
    still unanswered, so that a result arriving in a later flow closes its `execute_tool` span.
    `get` reads a flow (a replay's origin), `session_started` a session's start time, `analysed` the
    analysis the store kept of a flow (given redacted, as the store holds it; None: the flow is
    analysed here)."""

    def __init__(self, opts: Options, *, get: Callable[[int], Flow | None] = lambda _: None,
                 session_started: Callable[[int], float | None] = lambda _: None,
                 analysed: Callable[[Flow], Analysis | None] = lambda _: None) -> None:
        self.options = opts
        self._get = get
        self._analysed = analysed
        self._session_started = session_started
        self._ids = _ChosenIds()
        self._collected = _Collect()
        self._provider = TracerProvider(resource=resource(), id_generator=self._ids)
        self._provider.add_span_processor(self._collected)
        self._tracer = self._provider.get_tracer(INSTRUMENTATION, schema_url=SCHEMA_URL,
                                                 attributes={"toolwire.semconv": SEMCONV_VERSION})
        self._pending: dict[tuple[int, str], _Pending] = {}  # (session, call id) -> the call

    def add(self, flow: Flow) -> list[ReadableSpan]:
        flow = redacted(flow)
        if flow.state is FlowState.PENDING:
            return []
        stored = self._analysed(flow)
        analysis = analyse(flow) if stored is None else stored
        if analysis.dialect is Dialect.MCP:
            self._mcp(flow, analysis)
        else:
            self._llm(flow, analysis)
        spans, self._collected.ended = self._collected.ended, []
        return spans

    def spans(self, flows: Sequence[Flow]) -> list[ReadableSpan]:
        return [span for flow in flows for span in self.add(flow)]

    # -- contexts ------------------------------------------------------------------------------

    def _trace_of(self, session_id: int) -> int:
        return session_trace_id(session_id, self._session_started(session_id) or 0.0)

    def parent_of(self, flow: Flow, carrier: dict[str, str] | None = None) -> SpanContext | None:
        """The client's span when the flow carried a W3C trace context (headers, or MCP `_meta`)."""
        found = trace_api.get_current_span(TraceContextTextMapPropagator().extract(
            carrier if carrier is not None else {k.lower(): v for k, v in flow.request_headers})).get_span_context()
        return found if found.is_valid else None

    def _start(self, name: str, flow: Flow, own_id: int, parent: SpanContext | None, start: float,
               kind: SpanKind, attributes: dict[str, Any], links: Sequence[Link] = ()) -> trace_api.Span:
        self._ids.span = own_id
        self._ids.trace = self._trace_of(flow.session_id)
        context = trace_api.set_span_in_context(trace_api.NonRecordingSpan(parent)) if parent is not None else None
        return self._tracer.start_span(name, context=context, kind=kind, attributes=attributes, links=links,
                                       start_time=_ns(start))

    def _flow_context(self, flow: Flow) -> SpanContext:
        parent = self.parent_of(flow)
        trace_id = parent.trace_id if parent is not None else self._trace_of(flow.session_id)
        return SpanContext(trace_id, span_id(flow.id), is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))

    def _common(self, flow: Flow) -> dict[str, Any]:
        attributes: dict[str, Any] = {"toolwire.flow.id": flow.id, "toolwire.session.id": flow.session_id,
                                      "toolwire.mode": flow.mode.value, "toolwire.path": flow.path}
        if self.options.store:
            # The deep link back to the bytes: the UI opened on this flow's view, from its store.
            attributes["toolwire.flow.command"] = (f"toolwire-inspect open {shlex.quote(str(self.options.store))} "
                                                   f"--flow {flow.id}")
        url = urlsplit(flow.upstream_url)
        if url.hostname:
            attributes["server.address"] = url.hostname
            if url.port:
                attributes["server.port"] = url.port
        if flow.status is not None:
            attributes["http.response.status_code"] = flow.status
        if flow.route:
            attributes["toolwire.route"] = flow.route
        if flow.translate:
            attributes["toolwire.translate"] = flow.translate
        if flow.notes:
            attributes["toolwire.notes"] = list(flow.notes)
        if flow.chunks and is_stream(flow):  # the conventions give it to streamed responses alone
            attributes["gen_ai.response.time_to_first_chunk"] = round(flow.chunks[0].t, 6)  # seconds
        return attributes

    def _links(self, flow: Flow) -> list[Link]:
        if flow.replay_of is None:
            return []
        origin = self._get(flow.replay_of)
        if origin is None:
            return []
        return [Link(self._flow_context(origin), {"toolwire.link": "replay_of", "toolwire.flow.id": origin.id})]

    def _end(self, span: trace_api.Span, flow: Flow, analysis: Analysis, end: float) -> None:
        for v in analysis.violations:
            span.add_event(FINDING_EVENT, {
                "toolwire.rule_id": v.rule, "toolwire.severity": v.severity.value, "toolwire.pointer": v.pointer,
                "toolwire.where": v.where, "toolwire.message": v.message, "toolwire.effect": v.why},
                timestamp=_ns(end))
        if flow.state is FlowState.ERROR or (flow.status or 0) >= 400:
            span.set_attribute("error.type", str(flow.status) if (flow.status or 0) >= 400 else "toolwire.forward_error")
            span.set_status(Status(StatusCode.ERROR, flow.error or f"HTTP {flow.status}"))
        span.end(end_time=_ns(end))

    # -- LLM calls -----------------------------------------------------------------------------

    def _llm(self, flow: Flow, analysis: Analysis) -> None:
        dialect = analysis.dialect
        request = _read(read_request, dialect, analysis.request, flow.path)
        response = _read(read_response, dialect, analysis.response) if dialect is not None else None
        end = flow_end(flow)
        context = self._flow_context(flow)
        if request is not None:
            self._tool_results(flow, request)
        attributes = self._common(flow)
        if dialect in OPERATIONS:
            # The provider is who answered: in translate mode the upstream's dialect, not the client's.
            operation = OPERATIONS[dialect]
            provider = PROVIDERS.get(analysis.upstream_dialect or dialect, PROVIDERS[dialect])
            attributes.update({"gen_ai.operation.name": operation, "gen_ai.provider.name": provider})
            if not self.options.latest_only:
                attributes["gen_ai.system"] = provider  # the name before 1.37
            name = f"{operation} {analysis.model}" if analysis.model else operation
            attributes.update(_request_attributes(analysis, request))
            if response is not None:
                attributes.update(_response_attributes(response))
            if self.options.content:
                attributes.update(_content(analysis, request, response))
                attributes.update(_bodies(flow))
            if self.options.openinference:
                attributes.update(_openinference_llm(flow, attributes, analysis, request, response,
                                                     content=self.options.content))
        else:
            name = f"{flow.method} {flow.path}"
            attributes["http.request.method"] = flow.method
        span = self._start(name, flow, context.span_id, self.parent_of(flow), flow.started_at,
                           SpanKind.CLIENT, attributes, self._links(flow))
        self._end(span, flow, analysis, end)
        if response is not None:
            for item in response.items:
                if isinstance(item, Call) and item.id:
                    self._pending[(flow.session_id, item.id)] = _Pending(context, item.name, end, flow.id,
                                                                         item.arguments)

    def _tool_results(self, flow: Flow, request: Request) -> None:
        """The `execute_tool` span of each call whose result this request is the first to carry."""
        for item in request.items:
            if not isinstance(item, Result) or item.call_id is None:
                continue
            call = self._pending.pop((flow.session_id, item.call_id), None)
            if call is None:
                continue
            self._ids.span = span_id(call.flow_id, "execute_tool", item.call_id)
            self._ids.trace = call.parent.trace_id
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name,
                "gen_ai.tool.call.id": item.call_id, "gen_ai.tool.type": "function",
                "toolwire.flow.id": call.flow_id, "toolwire.result_flow.id": flow.id}
            if item.is_error:
                attributes["error.type"] = "tool_error"
            if self.options.content:
                attributes["gen_ai.tool.call.result"] = _text(item.parts)
            if self.options.openinference:
                attributes.update(_openinference_tool(flow.session_id, call.name, call.arguments, _text(item.parts),
                                                      content=self.options.content))
            span = self._tracer.start_span(
                f"execute_tool {call.name}", context=trace_api.set_span_in_context(trace_api.NonRecordingSpan(call.parent)),
                kind=SpanKind.INTERNAL, attributes=attributes, start_time=_ns(call.left_at))
            span.end(end_time=_ns(max(flow.started_at, call.left_at)))

    # -- MCP -----------------------------------------------------------------------------------

    def _mcp(self, flow: Flow, analysis: Analysis) -> None:
        requests = analysis.request if isinstance(analysis.request, list) else [analysis.request]
        answers = analysis.response if isinstance(analysis.response, list) else [analysis.response]
        by_id = {a.get("id"): a for a in answers if isinstance(a, dict) and isinstance(a.get("id"), (str, int))}
        end = flow_end(flow)
        session = next((v for k, v in flow.request_headers if k.lower() == "mcp-session-id"), None)
        for index, message in enumerate(requests):
            if not isinstance(message, dict) or not isinstance(message.get("method"), str):
                continue
            method = message["method"]
            params = as_dict(message.get("params"))
            target = params.get("name") if method in ("tools/call", "prompts/get") else None
            target = target if isinstance(target, str) else None
            attributes = {**self._common(flow), "mcp.method.name": method}
            if "id" in message and isinstance(message["id"], (str, int)):
                attributes["jsonrpc.request.id"] = str(message["id"])
            if session:
                attributes["mcp.session.id"] = session
            revision = next((v for k, v in flow.request_headers if k.lower() == "mcp-protocol-version"), None)
            if revision:
                attributes["mcp.protocol.version"] = revision
            if method == "tools/call" and target:
                attributes.update({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": target})
                if self.options.content:
                    attributes["gen_ai.tool.call.arguments"] = json.dumps(params.get("arguments"), ensure_ascii=False)
            answer = by_id.get(message.get("id"))
            if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
                attributes["error.type"] = str(answer["error"].get("code", "jsonrpc_error"))
                attributes["rpc.response.status_code"] = str(answer["error"].get("code", ""))
            elif isinstance(answer, dict) and self.options.content and method == "tools/call":
                attributes["gen_ai.tool.call.result"] = json.dumps(answer.get("result"), ensure_ascii=False)
            if self.options.openinference and method == "tools/call" and target:
                result = answer.get("result") if isinstance(answer, dict) else None
                attributes.update(_openinference_tool(flow.session_id, target, params.get("arguments"),
                                                      json.dumps(result, ensure_ascii=False), content=self.options.content))
            meta = as_dict(params.get("_meta"))
            carrier = {k: v for k, v in meta.items() if k in ("traceparent", "tracestate") and isinstance(v, str)}
            parent = self.parent_of(flow, carrier) if carrier else self.parent_of(flow)
            own = span_id(flow.id) if index == 0 else span_id(flow.id, "mcp", index)
            span = self._start(f"{method} {target}" if target else method, flow, own, parent, flow.started_at,
                               SpanKind.CLIENT, attributes, self._links(flow) if index == 0 else ())
            if "error.type" in attributes:
                span.set_status(Status(StatusCode.ERROR, attributes["error.type"]))
            self._end(span, flow, analysis if index == 0 else Analysis(), end)


def flow_end(flow: Flow) -> float:
    """When the response ended: the recorded latency, else the last chunk, else the request's arrival."""
    if flow.latency_ms is not None:
        return flow.started_at + flow.latency_ms / 1000.0
    if flow.chunks:
        return flow.started_at + flow.chunks[-1].t
    return flow.started_at


def _read(reader: Callable[..., Any], dialect: Dialect | None, *args: Any) -> Any:
    if dialect is None or dialect not in OPERATIONS or args[0] is None:
        return None
    try:
        return reader(dialect, *args)
    except TranslationError:
        return None


def _request_attributes(analysis: Analysis, request: Request | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    if analysis.model:
        attributes["gen_ai.request.model"] = analysis.model
    if request is None:
        return attributes
    for name, value in (("max_tokens", request.max_tokens), ("temperature", request.temperature),
                        ("top_p", request.top_p)):
        if value is not None:
            attributes[f"gen_ai.request.{name}"] = value
    if request.stop:
        attributes["gen_ai.request.stop_sequences"] = list(request.stop)
    if request.stream:
        attributes["gen_ai.request.stream"] = True
    return attributes


def _response_attributes(response: Response) -> dict[str, Any]:
    attributes: dict[str, Any] = {"gen_ai.response.finish_reasons": [response.stop]}
    if response.id:
        attributes["gen_ai.response.id"] = response.id
    if response.model:
        attributes["gen_ai.response.model"] = response.model
    if response.input_tokens or response.output_tokens:
        attributes["gen_ai.usage.input_tokens"] = response.input_tokens
        attributes["gen_ai.usage.output_tokens"] = response.output_tokens
    return attributes


# -- content (opt-in) --------------------------------------------------------------------------

def _part(part: Part) -> dict[str, Any]:
    if part.kind in ("text", "refusal"):
        return {"type": "text", "content": part.text}
    if part.url:
        return {"type": "uri", "modality": part.kind, "uri": part.url, **({"mime_type": part.mime} if part.mime else {})}
    # Inline data is not repeated on a span: the kind and type say what was there.
    return {"type": "blob", "modality": part.kind, **({"mime_type": part.mime} if part.mime else {})}


def _text(parts: list[Part]) -> str:
    return "".join(part.text for part in parts if part.kind in ("text", "refusal"))


def semconv_messages(items: Sequence[Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(system instructions, messages) of neutral items in the GenAI conventions' message shape:
    consecutive items of one role are one message."""
    system: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []

    def add(role: str, part: dict[str, Any]) -> None:
        if messages and messages[-1]["role"] == role:
            messages[-1]["parts"].append(part)
        else:
            messages.append({"role": role, "parts": [part]})

    for item in items:
        if isinstance(item, Message):
            if item.role == "system":
                system.extend(_part(p) for p in item.parts)
            else:
                for part in item.parts:
                    add(item.role, _part(part))
        elif isinstance(item, Call):
            add("assistant", {"type": "tool_call", "id": item.id, "name": item.name, "arguments": item.arguments})
        elif isinstance(item, Result):
            add("tool", {"type": "tool_call_response", "id": item.call_id, "response": _text(item.parts)})
    return system, messages


def _bodies(flow: Flow) -> dict[str, Any]:
    """The bodies as the client sent and received them (decoded, UTF-8 only): the GenAI messages
    cannot say what the wire said (a key missing rather than null, an upper-case schema type), and
    the checker needs that to find the same faults in the trace again."""
    attributes: dict[str, Any] = {}
    for key, body, headers in (("toolwire.request.body", flow.request_body, flow.request_headers),
                               ("toolwire.response.body", flow.response_body, flow.response_headers)):
        try:
            attributes[key] = decode_body(body, headers).decode("utf-8")
        except (BodyTooLarge, UnicodeDecodeError):
            continue
    if is_stream(flow):
        attributes["toolwire.response.streamed"] = True
    return attributes


def _content(analysis: Analysis, request: Request | None, response: Response | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    if request is not None:
        system, messages = semconv_messages(request.items)
        attributes["gen_ai.input.messages"] = json.dumps(messages, ensure_ascii=False)
        if system:
            attributes["gen_ai.system_instructions"] = json.dumps(system, ensure_ascii=False)
    tools = analysis.request.get("tools") if isinstance(analysis.request, dict) else None
    if isinstance(tools, list) and tools:
        # The declarations as the client sent them: the findings in them (a schema's "OBJECT") stay readable.
        attributes["gen_ai.tool.definitions"] = json.dumps(tools, ensure_ascii=False)
    if response is not None:
        _, messages = semconv_messages(response.items)
        for message in messages:
            message["finish_reason"] = response.stop
        attributes["gen_ai.output.messages"] = json.dumps(messages, ensure_ascii=False)
    return attributes


# -- OpenInference (opt-in) --------------------------------------------------------------------

def _openinference_llm(flow: Flow, attributes: dict[str, Any], analysis: Analysis, request: Request | None,
                       response: Response | None, *, content: bool) -> dict[str, Any]:
    """An LLM span's OpenInference attributes, read from its GenAI ones and the neutral request and
    response; the messages, tools and bodies only when content is captured."""
    provider = attributes["gen_ai.provider.name"]
    found: dict[str, Any] = {"openinference.span.kind": "LLM", "session.id": f"toolwire-session-{flow.session_id}"}
    if provider in OI_PROVIDERS:
        found["llm.provider"] = OI_PROVIDERS[provider]
    if provider in OI_SYSTEMS:
        found["llm.system"] = OI_SYSTEMS[provider]
    model = attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
    if model:
        found["llm.model_name"] = model
    if "gen_ai.usage.input_tokens" in attributes:
        found["llm.token_count.prompt"] = attributes["gen_ai.usage.input_tokens"]
        found["llm.token_count.completion"] = attributes["gen_ai.usage.output_tokens"]
        found["llm.token_count.total"] = attributes["gen_ai.usage.input_tokens"] + attributes["gen_ai.usage.output_tokens"]
    parameters = {key.removeprefix("gen_ai.request."): value for key, value in attributes.items()
                  if key.startswith("gen_ai.request.") and key != "gen_ai.request.model"}
    found["llm.invocation_parameters"] = json.dumps(parameters, ensure_ascii=False)
    if not content:
        return found
    for key, side in (("toolwire.request.body", "input"), ("toolwire.response.body", "output")):
        if key in attributes:
            found[f"{side}.value"] = attributes[key]
            found[f"{side}.mime_type"] = JSON
    if request is not None:
        system, messages = semconv_messages(request.items)
        if system:
            messages = [{"role": "system", "parts": system}, *messages]
        found.update(_openinference_messages("llm.input_messages", messages))
    if response is not None:
        found.update(_openinference_messages("llm.output_messages", semconv_messages(response.items)[1]))
    tools = analysis.request.get("tools") if isinstance(analysis.request, dict) else None
    for number, tool in enumerate(tools if isinstance(tools, list) else []):
        found[f"llm.tools.{number}.tool.json_schema"] = json.dumps(tool, ensure_ascii=False)
    return found


def _openinference_messages(prefix: str, messages: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Messages in the GenAI shape as OpenInference's flattened list: a tool result is a message of
    its own (role tool, with the call's id), a call one of its message's tool_calls."""
    found: dict[str, Any] = {}
    number = 0
    for message in messages:
        if message["role"] == "tool":
            for part in message["parts"]:
                base = f"{prefix}.{number}.message"
                found.update({f"{base}.role": "tool", f"{base}.content": part.get("response", "")})
                if part.get("id"):
                    found[f"{base}.tool_call_id"] = part["id"]
                number += 1
            continue
        base = f"{prefix}.{number}.message"
        found[f"{base}.role"] = message["role"]
        text = "".join(part["content"] for part in message["parts"] if part["type"] == "text")
        if text:
            found[f"{base}.content"] = text
        calls = [part for part in message["parts"] if part["type"] == "tool_call"]
        for index, call in enumerate(calls):
            where = f"{base}.tool_calls.{index}.tool_call"
            found[f"{where}.function.name"] = call["name"]
            found[f"{where}.function.arguments"] = _arguments(call["arguments"])
            if call.get("id"):
                found[f"{where}.id"] = call["id"]
        number += 1
    return found


def _arguments(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def _openinference_tool(session_id: int, name: str, arguments: Any, result: str, *, content: bool) -> dict[str, Any]:
    """A tool span's OpenInference attributes (an execute_tool span, an MCP tools/call)."""
    found: dict[str, Any] = {"openinference.span.kind": "TOOL", "tool.name": name,
                             "session.id": f"toolwire-session-{session_id}"}
    if content:
        # input.value: the call's arguments (OpenInference's tool.parameters is the tool's schema, not them).
        found.update({"input.value": _arguments(arguments), "input.mime_type": JSON, "output.value": result})
    return found
