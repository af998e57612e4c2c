"""What the inspector knows about one flow: its dialect, facts for the list, parsed documents and
contract violations. Pure and total: bad bodies become `parse_error`, never an exception."""

from __future__ import annotations

import io
import zlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, get_args

import orjson

from .flow import PREWARM_NOTE, Flow, Mode, frames, header
from .sockets import socket_findings, turn_history
from .wire import check, jsonsafe
from .wire import profiles
from .wire.fix import FixResult, fix
from .wire.translate import Loss, RequestTranslation, TranslationError, UnsupportedPair, get_bridge
from .wire.translate.model import LossKind
from .wire.dialect import Dialect, elsewhere, from_path, from_shape
from .wire.dialects import home
from .wire.dialects.openai_responses import socket
from .wire.streams import check_and_reassemble, is_stream_type, parse_events
from .wire.session import (Declared, OpaqueUse, SessionEntry, check_opaque, check_session, declared_from_flows,
                           entries_from_flows, opaque_from_flows)
from .wire.summary import request_facts, response_tool_calls
from .wire.violations import Effect, Severity, Violation, count_by_severity

# How often each costly step ran in this process ("analyse", "decode", "parse", "session": the
# session rules run, "session-part": a flow parsed for them, "fixed-check": a repaired request checked): the
# work done once per flow is counted here so that a test can hold the product to it.
calls: Counter[str] = Counter()


@dataclass(slots=True)
class Analysis:
    dialect: Dialect | None = None
    upstream_dialect: Dialect | None = None
    model: str = ""
    tools: int = 0
    tool_calls: int = 0
    request: Any | None = None  # the original request, parsed
    upstream_request: Any | None = None  # what went upstream, parsed (None in passthrough)
    response: Any | None = None  # the response the client got, parsed or reassembled from the stream
    # translate mode: the pure bridge's translation of `request` (see the `translation` property)
    translation_: RequestTranslation | None = None
    # repair mode: the pure fixer's repair of `request` (see the `repaired` property)
    repaired_: FixResult | None = None
    # A stored analysis leaves the two above to be recomputed from this flow when first asked for:
    # only the diff and conversation views need them, and opening a flow must not run the bridge.
    rewrites_of: Flow | None = None
    violations: list[Violation] = field(default_factory=list)
    errors: int = 0
    warnings: int = 0
    parse_error: str | None = None
    buffered: bool = False  # a stream whose events all arrived at once (see buffered_stream)
    # translate mode: the bridge's loss reports, both ways, with pointers into both documents
    request_losses: list[Loss] = field(default_factory=list)
    response_losses: list[Loss] = field(default_factory=list)
    # The errors the request has left once every safe repair is applied (the fixed diff's "N errors
    # left"), checked once, with the flow, and stored: a page of a thousand flows must not check every
    # fixed request again. None when no safe repair applies or it was not computed (see fixed_errors).
    fixed_errors_: int | None = None

    @property
    def translation(self) -> RequestTranslation | None:
        """None when the flow is not translated or the bridge refused it."""
        self._rewrite()
        return self.translation_

    @translation.setter
    def translation(self, value: RequestTranslation | None) -> None:
        self.translation_ = value

    @property
    def repaired(self) -> FixResult | None:
        """The diff view shows each repair on its line, the conversation the aliased names."""
        self._rewrite()
        return self.repaired_

    @repaired.setter
    def repaired(self, value: FixResult | None) -> None:
        self.repaired_ = value

    def _rewrite(self) -> None:
        flow, self.rewrites_of = self.rewrites_of, None
        if flow is not None and self.dialect is not None:
            _rewrites(flow, self, self.dialect, _upstream_profile(flow, self, self.upstream_dialect or self.dialect),
                      flow.mode is Mode.TRANSLATE and _translate_target(flow) is not None)


MAX_DECODED = 64 * 1024 * 1024  # a few KiB of gzip can claim gigabytes: decode no further than this
_STEP = 1 << 20  # bytes decoded per step, so a bomb is caught within a MiB of the bound


class BodyTooLarge(ValueError):
    """The body decodes to more than MAX_DECODED bytes."""

    def __init__(self) -> None:
        super().__init__(f"too large to analyse after decompression (over {MAX_DECODED} bytes)")


def decode_body(body: bytes, headers: list[tuple[str, str]]) -> bytes:
    """The body with its content-encoding undone (gzip, deflate, br, zstd, stacked in the order
    they were applied); as received where it cannot be. Raises BodyTooLarge past MAX_DECODED.
    The one home of "the readable body of a flow": analysis and the UI both go through it."""
    calls["decode"] += 1
    encodings = [e.strip().lower() for e in (header(headers, "content-encoding") or "").split(",") if e.strip()]
    if not encodings and body[:2] == b"\x1f\x8b":
        encodings = ["gzip"]  # compressed by a client that did not say so
    decoded = body
    for encoding in reversed(encodings):
        decoder = _DECODERS.get(encoding)
        if decoder is None:
            return body  # identity, or an encoding nobody decodes: the bytes as they came
        try:
            decoded = decoder(decoded)
        except BodyTooLarge:
            raise
        except Exception:
            return body
    return decoded


def _zlib(body: bytes, wbits: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    data = body
    while data:  # one pass per gzip member
        decoder = zlib.decompressobj(wbits)
        while not decoder.eof:
            part = decoder.decompress(data, _STEP)
            data = decoder.unconsumed_tail
            if not part and not data:
                raise zlib.error("truncated stream")
            size += len(part)
            if size > MAX_DECODED:
                raise BodyTooLarge()
            parts.append(part)
        data = decoder.unused_data
        if wbits != _GZIP:
            break
    return b"".join(parts)


_GZIP = 16 + zlib.MAX_WBITS


def _gzip(body: bytes) -> bytes:
    return _zlib(body, _GZIP)


def _deflate(body: bytes) -> bytes:
    # HTTP's deflate is zlib-wrapped, but some servers send the raw stream.
    try:
        return _zlib(body, zlib.MAX_WBITS)
    except zlib.error:
        return _zlib(body, -zlib.MAX_WBITS)


def _brotli(body: bytes) -> bytes:
    import brotli  # only a br body needs it

    decoder = brotli.Decompressor()
    parts = [decoder.process(body, output_buffer_limit=_STEP)]
    size = len(parts[0])
    while not decoder.is_finished():
        if size > MAX_DECODED:
            raise BodyTooLarge()
        part = decoder.process(b"", output_buffer_limit=_STEP)
        if not part:
            raise brotli.error("truncated stream")
        size += len(part)
        parts.append(part)
    if size > MAX_DECODED:
        raise BodyTooLarge()
    return b"".join(parts)


def _zstd(body: bytes) -> bytes:
    import zstandard  # only a zstd body needs it

    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(body), read_across_frames=True) as reader:
        decoded = reader.read(MAX_DECODED + 1)
        if len(decoded) > MAX_DECODED:
            raise BodyTooLarge()
    return decoded


_DECODERS = {"gzip": _gzip, "x-gzip": _gzip, "deflate": _deflate, "br": _brotli, "zstd": _zstd}


def parse_json(body: bytes) -> tuple[Any | None, str | None]:
    """(document, None) or (None, a one-line reason)."""
    calls["parse"] += 1
    if not body.strip():
        return None, "empty body"
    try:
        return orjson.loads(body), None
    except orjson.JSONDecodeError as exc:
        return None, f"not valid JSON: {jsonsafe.TOO_DEEP_TO_READ if jsonsafe.too_deep_to_read(exc) else exc}"


def _translate_target(flow: Flow) -> Dialect | None:
    if not flow.translate or ":" not in flow.translate:
        return None
    try:
        return Dialect(flow.translate.split(":", 1)[1])
    except ValueError:
        return None


def is_stream(flow: Flow) -> bool:
    return flow.streamed or is_stream_type(flow.content_type)


def analyse(flow: Flow) -> Analysis:
    """The whole analysis; the store keeps it (`to_stored`), so that it runs once per flow."""
    calls["analyse"] += 1
    result = Analysis()
    if flow.websocket:
        # Its bodies are an upgrade and frame records, no payloads: the socket's own rules judge the
        # frames (a Responses socket's turns are flows of their own, judged as such).
        result.dialect = from_path(flow.path)
        result.violations = socket_findings(flow, frames(flow))
        result.errors, result.warnings, _ = count_by_severity(result.violations)
        return result
    request_error = _parse_requests(flow, result)
    dialect = from_path(flow.path)
    # A path none claims (a gateway's own) is read by the request's shape, as the answer bears it out.
    guess = None if dialect is not None or elsewhere(flow.path) else from_shape(result.request)
    response_body, response_error = _response_body(flow) if dialect or guess else (b"", None)
    if guess is not None:
        dialect = _borne_out(guess, result, response_body, response_error)
    result.dialect = dialect
    if request_error and flow.method.upper() not in ("GET", "HEAD", "DELETE", "OPTIONS"):
        result.parse_error = f"request {request_error}"
    result.model, result.tools = request_facts(result.request, dialect, flow.path)
    result.upstream_dialect = _translate_target(flow) or dialect

    if dialect is not None:
        # and `buffered`, from the check's parse of a stream
        result.violations = _check(flow, result, dialect, response_body, response_error)
    else:
        result.buffered = buffered_stream(flow, None)
    result.tool_calls = response_tool_calls(result.response, dialect)
    result.errors, result.warnings, _ = count_by_severity(result.violations)
    result.fixed_errors_ = _errors_after_repairs(result)
    if result.translation_ is not None:
        result.request_losses = list(result.translation_.losses)
        answer = upstream_answer(flow, result)
        result.response_losses = answer.losses if answer is not None else []
    return result


def _response_body(flow: Flow) -> tuple[bytes, str | None]:
    """The response's readable bytes (decoded once for the whole analysis), or why there are none."""
    try:
        return decode_body(flow.response_body, flow.response_headers), None
    except BodyTooLarge as exc:
        return b"", f"response body {exc}"


def _borne_out(dialect: Dialect, result: Analysis, body: bytes, body_error: str | None) -> Dialect | None:
    """`dialect`, which the request's shape names, if the answer bears its marks too (a JSON answer
    parsed here is kept as `result.response`). Other APIs' requests look like a dialect's (an
    embedding's `input` is Responses'; Ollama's native /api/chat has `messages`), their answers do
    not; a path a home disowns (another maker's InvokeModel) is never guessed (`elsewhere`)."""
    if body_error is not None:
        return None
    if not body.strip():
        return dialect  # no answer to tell otherwise (cut, refused, still to come)
    if body.lstrip()[:1] == b"{":
        answer = parse_json(body)[0]
        if from_shape(answer) is not dialect:
            return None
        result.response = answer
        return dialect
    events = parse_events(body, dialect)
    return dialect if any(isinstance(e, dict) and home(dialect).stream_event(e) for e in events[:4]) else None


def _parse_requests(flow: Flow, result: Analysis) -> str | None:
    """Fills the parsed request and upstream request; the request's parse error, if any."""
    try:
        result.request, request_error = parse_json(decode_body(flow.request_body, flow.request_headers))
    except BodyTooLarge as exc:
        result.request, request_error = None, f"body {exc}"
    if flow.upstream_request_body is not None:
        try:
            result.upstream_request, _ = parse_json(decode_body(flow.upstream_request_body,
                                                                flow.upstream_request_headers))
        except BodyTooLarge:
            pass  # what the client sent is analysed; the rewritten copy adds nothing judgeable
    return request_error


_STORED_VERSION = 1  # of the document below: a stored analysis of another version is analysed again


def to_stored(analysis: Analysis, flow: Flow) -> bytes | None:
    """What the store keeps of an analysis: all of it but the documents the flow's own bodies
    hold (parsed again on reading, one decode and one parse each), and a stream's reassembled
    response, which no body holds. None when that response is nested past what orjson writes:
    such a flow is analysed when it is read (from_stored)."""
    try:
        return _stored(analysis, flow)
    except orjson.JSONEncodeError:
        return None


def _losses(found: list[Loss]) -> list[dict[str, Any]]:
    return [{"source": loss.source, "target": loss.target, "kind": loss.kind, "why": loss.why, "rule": loss.rule}
            for loss in found]


def _stored(analysis: Analysis, flow: Flow) -> bytes:
    return orjson.dumps({
        "version": _STORED_VERSION,
        "dialect": analysis.dialect.value if analysis.dialect is not None else None,
        "upstream_dialect": analysis.upstream_dialect.value if analysis.upstream_dialect is not None else None,
        "model": analysis.model, "tools": analysis.tools, "tool_calls": analysis.tool_calls,
        "response": analysis.response if is_stream(flow) else None,
        "violations": [v.to_dict() for v in analysis.violations],
        "parse_error": analysis.parse_error, "buffered": analysis.buffered,
        "request_losses": _losses(analysis.request_losses), "response_losses": _losses(analysis.response_losses),
        "fixed_errors": analysis.fixed_errors_,
    })


def from_stored(flow: Flow, stored: bytes | None) -> Analysis:
    """The analysis the store kept for `flow`, its bodies parsed (no check, translation or repair
    runs); analysed afresh when there is none (a pending flow, a store not yet re-analysed) or
    what is there is not a stored analysis of this build (the file is anyone's to write)."""
    if stored is None:
        return analyse(flow)
    try:
        data = orjson.loads(stored)
        if not isinstance(data, dict) or data.get("version") != _STORED_VERSION:
            return analyse(flow)
        result = Analysis(
            dialect=_dialect(data["dialect"]), upstream_dialect=_dialect(data["upstream_dialect"]),
            model=_text(data["model"]), tools=int(data["tools"]), tool_calls=int(data["tool_calls"]),
            violations=[_violation(item) for item in data["violations"]],
            parse_error=None if data["parse_error"] is None else _text(data["parse_error"]),
            buffered=bool(data["buffered"]),
            request_losses=[_loss(item) for item in data["request_losses"]],
            response_losses=[_loss(item) for item in data["response_losses"]],
            # Absent from an analysis stored before it was: computed when first asked for.
            fixed_errors_=_count(data.get("fixed_errors")),
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        return analyse(flow)
    result.errors, result.warnings, _ = count_by_severity(result.violations)
    _parse_requests(flow, result)
    if is_stream(flow):
        result.response = data["response"]
    elif flow.response_body:
        try:
            body = decode_body(flow.response_body, flow.response_headers)
        except BodyTooLarge:
            body = b""
        if body:
            result.response, _ = parse_json(body)
    if flow.upstream_request_body is not None and flow.mode in (Mode.TRANSLATE, Mode.REPAIR):
        result.rewrites_of = flow
    return result


def _dialect(value: object) -> Dialect | None:
    return None if value is None else Dialect(_text(value))


def _violation(item: dict[str, Any]) -> Violation:
    return Violation(_text(item["rule"]), Severity(item["severity"]), _text(item["pointer"]), _text(item["message"]),
                     why=_text(item["why"]), hint=_text(item["hint"]), where=_text(item["where"]),
                     effect=Effect(item["effect"]))


def _loss(item: dict[str, Any]) -> Loss:
    kind = _text(item["kind"])
    if kind not in _LOSS_KINDS:
        raise ValueError(kind)
    target = item["target"]
    return Loss(_text(item["source"]), None if target is None else _text(target), kind,  # type: ignore[arg-type]
                _text(item["why"]), _text(item["rule"]))


def _count(value: object) -> int | None:
    if value is None:
        return None
    if type(value) is not int or value < 0:
        raise TypeError(f"not a count: {value!r}")
    return value


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"not a string: {type(value).__name__}")
    return value


_LOSS_KINDS = frozenset(get_args(LossKind))


# A model writes its tokens a millisecond or more apart: events that came closer together than that
# on average were held somewhere (a buffering proxy, gateway or client library) and let go at once.
BUFFER_GAP = 0.001  # seconds between events
MIN_BUFFERED_EVENTS = 3  # one or two events say nothing about pacing


def buffered_stream(flow: Flow, dialect: Dialect | None, events: int | None = None) -> bool:
    """Whether `flow` is a stream whose events all arrived at once: from the first chunk to the last,
    less than BUFFER_GAP per event, by the chunk timings the forwarder recorded. `events`: how many
    the check parsed already (the body is parsed here only when it was not checked)."""
    if not flow.streamed or not flow.chunks:
        return False
    spread = flow.chunks[-1].t - flow.chunks[0].t
    if events is None:
        try:
            body = decode_body(flow.response_body, flow.response_headers)
        except BodyTooLarge:
            return False
        events = len(parse_events(body, dialect or Dialect.OPENAI_CHAT))
    return events >= MIN_BUFFERED_EVENTS and spread < BUFFER_GAP * (events - 1)


def _check(flow: Flow, result: Analysis, dialect: Dialect, response_body: bytes,
           response_error: str | None) -> list[Violation]:
    """Violations of every document of the flow; fills `result.response` and, for a stream,
    `result.buffered` on the way (one parse).

    Each document is judged by the dialect and provider profile of the side it travels on: what
    went upstream by the upstream's; in passthrough and repair the client's request and the response
    by the same, since they speak the upstream's dialect; in translate mode by the client's dialect
    with a neutral profile, since only the bridge reads them. A finding in the client's request that
    the repair or the bridge fixed on the way is kept, marked repaired (info)."""
    found: list[Violation] = []

    def add(where: str, violations: list[Violation]) -> None:
        found.extend(v if v.where else _with_where(v, where) for v in violations)

    upstream_dialect = result.upstream_dialect or dialect
    upstream_profile = _upstream_profile(flow, result, upstream_dialect)
    translated = flow.mode is Mode.TRANSLATE and _translate_target(flow) is not None
    client_profile = (profiles.with_headers(profiles.with_model(profiles.neutral(dialect, flow.path), result.model),
                                            flow.request_headers) if translated else upstream_profile)
    fixed, restored = _rewrites(flow, result, dialect, upstream_profile, translated)
    response: Any = None  # what check_exchange judges: parsed JSON, or the stream's bytes
    if response_error is not None:
        result.parse_error = result.parse_error or response_error
    streamed = bool(response_body) and is_stream(flow)
    if streamed:
        response = response_body
    elif response_body:
        if result.response is None:  # _borne_out parsed it already
            result.response, _ = parse_json(response_body)
        response = result.response
    response_profile = replace(client_profile, restored_names=restored) if restored else client_profile
    history = _history(flow, result.request, dialect)
    judged = result.request if history is None else socket.with_history(result.request, history)
    exchange = check.check_exchange(judged, response, dialect, client_profile, response_profile=response_profile)
    if streamed:
        result.response = exchange.final
        result.buffered = buffered_stream(flow, dialect, exchange.events)
    request_findings = exchange.request if history is None else socket.own_findings(exchange.request, len(history))
    add("request", [_repaired(v) if _fixed_at(v, fixed) else v for v in request_findings])
    if result.upstream_request is not None:
        add("upstream", check.check_request(result.upstream_request, upstream_dialect, upstream_profile))
    # An error answer is the provider's verdict, not a tool-calling payload to judge; a prewarm's
    # empty answer is what it asked for.
    if (flow.status or 0) < 400 and PREWARM_NOTE not in flow.notes:
        add("response", [*exchange.response, *exchange.pair])
    return found


def _history(flow: Flow, request: Any, dialect: Dialect) -> list[Any] | None:
    """A socket turn's history (Flow.history), judged before its own input as the server reads it:
    pairing across turns (an output for a call no earlier turn made) is then checked, not assumed."""
    return turn_history(flow, request) if dialect is Dialect.OPENAI_RESPONSES else None


def _upstream_profile(flow: Flow, result: Analysis, upstream_dialect: Dialect) -> profiles.Profile:
    # What each side's endpoint accepts depends on the beta features its request opts into by header.
    return profiles.with_headers(
        profiles.with_model(profiles.for_upstream(flow.upstream_url, upstream_dialect), result.model),
        flow.upstream_request_headers or flow.request_headers)


def _rewrites(flow: Flow, result: Analysis, dialect: Dialect, profile: profiles.Profile,
              translated: bool) -> tuple[list[str], frozenset[str]]:
    """Where the forwarder rewrote the client's request (pointers into it), and the tool names it
    restores in the response. Recomputed from the pure repair/bridge: the store keeps only notes."""
    if result.request is None or flow.upstream_request_body is None:
        return [], frozenset()
    if translated:
        result.translation = translation_of(flow, result.request)
        if result.translation is None:
            return [], frozenset()
        return ([loss.source for loss in result.translation.losses if loss.source],
                frozenset(result.translation.state.aliases.values()))
    if flow.mode is Mode.REPAIR:
        repaired = fix(result.request, dialect, profile)
        result.repaired = repaired
        return [r.pointer for r in repaired.repairs if r.pointer], frozenset(repaired.aliases.values())
    return [], frozenset()


def translation_of(flow: Flow, request: Any) -> RequestTranslation | None:
    """The bridge's translation of a translate-mode flow's request; None when it refused it (the
    forwarder met the same failure and recorded it as the flow's error)."""
    source, _, target = (flow.translate or "").partition(":")
    try:
        return get_bridge(source, target).request(request, flow.path)
    except (TranslationError, UnsupportedPair, KeyError, ValueError, TypeError):
        return None


@dataclass(slots=True)
class UpstreamAnswer:
    """What the upstream itself answered, when the client got something else (a translation, or a
    repair that gave the client back the tool names it declared), read as the client's response
    is: its JSON, or its stream reassembled."""

    document: Any | None  # None when it is neither JSON nor a stream that reassembles
    losses: list[Loss]  # the bridge's report on the way back (translate mode; else empty)


def upstream_answer(flow: Flow, analysis: Analysis) -> UpstreamAnswer | None:
    """None when the client got the upstream's own bytes (passthrough, or nothing to rewrite)."""
    body = flow.upstream_response_body
    if body is None or body == flow.response_body:
        return None
    try:
        decoded = decode_body(body, flow.response_headers)
    except BodyTooLarge:
        return UpstreamAnswer(None, [])
    dialect = analysis.upstream_dialect
    if flow.streamed and dialect is not None:
        # Judged elsewhere (the client's side is what the flow's findings are about): reassembled only.
        document = check_and_reassemble(decoded, dialect, profiles.neutral(dialect))[2]
    else:
        document, _ = parse_json(decoded)
    return UpstreamAnswer(document, _response_losses(flow, analysis, decoded, document))


def _response_losses(flow: Flow, analysis: Analysis, body: bytes, document: Any) -> list[Loss]:
    """The bridge's loss report for the response, recomputed as the request's is (`translation_of`):
    a stream is fed through the same stream translator the forwarder ran."""
    if analysis.translation is None:
        return []
    source, _, target = (flow.translate or "").partition(":")
    try:
        bridge = get_bridge(source, target)
        if flow.streamed:
            translator = bridge.stream(analysis.translation.state)
            translator.feed(body)
            translator.close()
            return translator.losses
        if isinstance(document, dict):
            return bridge.response(document, analysis.translation.state).losses
    except (TranslationError, UnsupportedPair, KeyError, ValueError, TypeError):
        pass  # the forwarder met the same failure and recorded it as the flow's error
    return []


def _fixed_at(violation: Violation, pointers: list[str]) -> bool:
    return any(violation.pointer == p or violation.pointer.startswith(p + "/") for p in pointers)


def _repaired(violation: Violation) -> Violation:
    # The provider never sees it: the effect stays the one the unrepaired request would have met.
    return replace(violation, severity=Severity.INFO, message=f"repaired on the way: {violation.message}")


def _with_where(violation: Violation, where: str) -> Violation:
    return replace(violation, where=where)


def session_findings(flows: Iterable[Flow]) -> dict[int, list[Violation]]:
    """Violations that only show across the flows of one recording (the same MCP tool from two
    servers, one endpoint registered twice, structuredContent against an earlier outputSchema),
    by the id of the flow whose response holds them. Their pointers point into that response."""
    return findings_of([session_part(flow) for flow in flows])


@dataclass(frozen=True, slots=True)
class SessionPart:
    """What the session rules read of one flow, parsed once: the writer keeps one per MCP flow of
    each session it writes to, so that a new flow costs its own parse, not the session's."""

    flow_id: int
    entries: tuple[SessionEntry, ...]
    declared: tuple[Declared, ...]
    opaque: tuple[OpaqueUse, ...] = ()


def session_part(flow: Flow) -> SessionPart:
    calls["session-part"] += 1
    return SessionPart(flow.id, tuple(entries_from_flows([flow])), tuple(declared_from_flows([flow])),
                       tuple(opaque_from_flows([flow])))


def findings_of(parts: Iterable[SessionPart]) -> dict[int, list[Violation]]:
    """session_findings() over flows already parsed (their parts, in the recording's order)."""
    calls["session"] += 1
    parts = list(parts)
    found: dict[int, list[Violation]] = {}
    entries = [entry for part in parts for entry in part.entries]
    for violation in [*check_session(entries, [declared for part in parts for declared in part.declared]),
                      *check_opaque(use for part in parts for use in part.opaque)]:
        flow_id, _, side = violation.where.partition(":")
        # A finding on a request is shown on the request, as the flow's own are.
        found.setdefault(int(flow_id), []).append(_with_where(violation, side or "session"))
    return found


def findings_to_stored(found: dict[int, list[Violation]]) -> bytes:
    """What the store keeps of a session's findings (sessions.findings)."""
    return orjson.dumps({"version": _STORED_VERSION,
                         "flows": [[flow_id, [v.to_dict() for v in violations]] for flow_id, violations in found.items()]})


def findings_from_stored(stored: bytes | None) -> dict[int, list[Violation]] | None:
    """A session's findings as the writer stored them; None when there are none of this build's
    (a session recorded before schema 9, or a file someone else wrote): the caller computes them."""
    if stored is None:
        return None
    try:
        data = orjson.loads(stored)
        if not isinstance(data, dict) or data.get("version") != _STORED_VERSION:
            return None
        return {int(flow_id): [_violation(item) for item in violations] for flow_id, violations in data["flows"]}
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        return None


def safe_repairs(analysis: Analysis, flow: Flow | None = None) -> FixResult | None:
    """The flow's request with every safe repair applied (what a fixed replay, `R`, sends, and what
    a fixed fixture carries); None when the request is not JSON of a known dialect. Raises
    jsonsafe.Unfaithful, saying why, when it cannot be repaired faithfully (nested past what orjson
    writes, an integer it would round): each caller says so in its own place. A socket turn's
    (`flow`) is repaired as the server reads it, its history before its input: an output for a call
    no earlier turn made is dropped, a call left unanswered is answered."""
    if analysis.request is None or analysis.dialect is None:
        return None
    history = None if flow is None else _history(flow, analysis.request, analysis.dialect)
    request = analysis.request if history is None else socket.with_history(analysis.request, history)
    return fix(request, analysis.dialect)


def _errors_after_repairs(analysis: Analysis) -> int | None:
    """How many errors the checker finds in the request once every safe repair is applied; None when
    no safe repair applies (nothing to count) or the request cannot be repaired faithfully. A flow
    with no finding is not repaired here: the repairs answer findings, and the writer must not pay
    for healthy traffic (the rare repair of such a flow is counted where it is shown, fixed_errors)."""
    if not analysis.violations:
        return None
    try:
        repaired = safe_repairs(analysis)
    except jsonsafe.Unfaithful:
        return None
    if repaired is None or not repaired.repairs:
        return None
    assert analysis.dialect is not None  # safe_repairs answers only for a known dialect
    return _checked_errors(repaired, analysis.dialect)


def fixed_errors(analysis: Analysis, repaired: FixResult) -> int:
    """The errors left in `repaired`, the request of `analysis` with its safe repairs applied: as the
    analysis found them when it has, else checked now."""
    if analysis.fixed_errors_ is not None:
        return analysis.fixed_errors_
    assert analysis.dialect is not None  # a request was repaired, so its dialect is known
    return _checked_errors(repaired, analysis.dialect)


def _checked_errors(repaired: FixResult, dialect: Dialect) -> int:
    calls["fixed-check"] += 1
    errors, _, _ = count_by_severity(check.check_request(repaired.payload, dialect))
    return errors
