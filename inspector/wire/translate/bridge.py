"""A bridge between a client dialect (source) and an upstream dialect (target): requests go
source -> target, responses and streams come back target -> source, with a loss report each way."""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, cast, runtime_checkable

from .. import jsonsafe, profiles
from ..dialect import Dialect, asks_for_sse
from ..naming import NAME_RULES, IdMap, NameMap
from ..sse import SSEEvent
from ..dialects import home
from . import events as ev
from .common import NAMELESS, Emit, vet
from .model import Call, Loss, Request, Response, Result, State, TranslationError, UnsupportedPair, pair



class StreamReader(Protocol):
    """A target's stream bytes in, as they arrive, its whole events out in its own framing
    (<dialect>.StreamReader: server-sent events, Bedrock's event-stream frames)."""

    def feed(self, chunk: bytes) -> list[Any]: ...

    def close(self) -> list[Any]: ...


class EventParser(Protocol):
    """A target's stream events, as its StreamReader yields them, in; neutral events out
    (<dialect>.StreamParser)."""

    def feed(self, event: Any) -> list[ev.Event]: ...

    def close(self) -> list[ev.Event]: ...


class EventEmitter(Protocol):
    """Neutral events in, the source's stream bytes out (<dialect>.StreamEmitter)."""

    losses: list[Loss]

    def emit(self, event: ev.Event) -> bytes: ...


@runtime_checkable
class DialectBridge(Protocol):
    """What each dialect's bridge module provides (dialects/<dialect>/bridge.py)."""

    @property
    def StreamReader(self) -> Callable[[], StreamReader]: ...

    @property
    def StreamParser(self) -> Callable[[State], EventParser]: ...

    @property
    def StreamEmitter(self) -> Callable[[State, list[Loss]], EventEmitter]: ...

    def parse_request(self, payload: dict[str, Any], path: str) -> tuple[Request, list[Loss]]: ...

    def emit_request(self, req: Request, emit: Emit) -> dict[str, Any]: ...

    def parse_response(self, payload: dict[str, Any], state: State) -> tuple[Response, list[Loss]]: ...

    def emit_response(self, resp: Response, state: State, losses: list[Loss]) -> dict[str, Any]: ...


# (source, target) pairs offered: the client speaks the first, the upstream the second.
PAIRS: tuple[tuple[Dialect, Dialect], ...] = (
    (Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES), (Dialect.OPENAI_RESPONSES, Dialect.OPENAI_CHAT),
    (Dialect.OPENAI_CHAT, Dialect.ANTHROPIC), (Dialect.ANTHROPIC, Dialect.OPENAI_CHAT),
    (Dialect.ANTHROPIC, Dialect.OPENAI_RESPONSES),
    (Dialect.GEMINI, Dialect.OPENAI_CHAT), (Dialect.OPENAI_CHAT, Dialect.GEMINI),
    (Dialect.OPENAI_CHAT, Dialect.BEDROCK), (Dialect.BEDROCK, Dialect.OPENAI_CHAT),
    (Dialect.OPENAI_RESPONSES, Dialect.BEDROCK), (Dialect.BEDROCK, Dialect.OPENAI_RESPONSES),
    (Dialect.ANTHROPIC, Dialect.BEDROCK), (Dialect.BEDROCK, Dialect.ANTHROPIC),
    (Dialect.GEMINI, Dialect.BEDROCK), (Dialect.BEDROCK, Dialect.GEMINI),
)
# The HTTP statuses of the inspector's own refusals as Google names them (a Gemini SDK shows the name).
_GOOGLE_STATUS = {400: "INVALID_ARGUMENT", 502: "UNAVAILABLE"}


@dataclass(slots=True)
class RequestTranslation:
    payload: dict[str, Any]
    path: str  # the upstream path for the target dialect
    losses: list[Loss]
    state: State


@dataclass(slots=True)
class ResponseTranslation:
    payload: dict[str, Any]
    losses: list[Loss]


def get_bridge(source: Dialect | str, target: Dialect | str) -> Bridge:
    try:
        source, target = Dialect(source), Dialect(target)
    except ValueError as exc:
        raise UnsupportedPair(str(exc)) from None
    if (source, target) not in PAIRS:
        offered = ", ".join(f"{s.value}:{t.value}" for s, t in PAIRS)
        hint = " (MCP documents translate with translate_document)" if Dialect.MCP in (source, target) else ""
        raise UnsupportedPair(f"no bridge from {source.value} to {target.value}{hint}; offered: {offered}")
    return Bridge(source, target)


def read_request(dialect: Dialect, payload: Any, path: str) -> Request:
    """A request of `dialect` in the neutral form, untranslated (the conversation view reads its
    turns from it). Raises TranslationError naming the place the parser could not read."""
    if not isinstance(payload, dict):
        raise TranslationError("the request body must be a JSON object", "")
    try:
        return _bridge(dialect).parse_request(payload, path)[0]
    except _MALFORMED as exc:
        raise TranslationError(f"malformed {dialect.value} request ({_describe(exc)})", "") from None


def read_response(dialect: Dialect, payload: Any) -> Response:
    """A response of `dialect` in the neutral form, untranslated; raises TranslationError."""
    if not isinstance(payload, dict):
        raise TranslationError("the response body must be a JSON object", "")
    try:
        return _bridge(dialect).parse_response(payload, State(dialect, dialect))[0]
    except _MALFORMED as exc:
        raise TranslationError(f"malformed {dialect.value} response ({_describe(exc)})", "") from None


class Bridge:
    def __init__(self, source: Dialect, target: Dialect) -> None:
        self.source = source
        self.target = target
        self._src = _bridge(source)
        self._dst = _bridge(target)

    def request(self, payload: Any, path: str) -> RequestTranslation:
        if not isinstance(payload, dict):
            raise TranslationError("the request body must be a JSON object", "")
        try:
            return self._request(payload, path)
        except jsonsafe.Unfaithful as exc:
            raise TranslationError(f"cannot translate faithfully: {exc}", "") from None
        except _MALFORMED as exc:
            raise TranslationError(f"malformed {self.source.value} request ({_describe(exc)})", "") from None

    def _request(self, payload: dict[str, Any], path: str) -> RequestTranslation:
        encoded = jsonsafe.dumps(payload)  # first: it refuses nesting too deep for the walks below
        # A client whose provider wraps the dialect's request (Gemini Code Assist, known by its path):
        # the request inside is translated, named by the envelope's model where it names none.
        profile = profiles.for_upstream(path, self.source)
        wrapper, (payload, at) = payload, profiles.unwrap(payload, profile, "request")
        if at and "model" not in payload and isinstance(wrapper.get("model"), str):
            payload = {**payload, "model": wrapper["model"]}
        req, losses = self._src.parse_request(payload, path)
        state = State(self.source, self.target, model=req.model, stream=req.stream)
        if at and profile.envelope is not None:
            state.envelope = profile.envelope[1]
        options = payload.get("stream_options")
        state.stream_usage = isinstance(options, dict) and options.get("include_usage") is True
        if options is not None and self.source is Dialect.OPENAI_CHAT:
            losses.append(Loss("/stream_options", None, "converted", "the translation itself honours it: the usage "
                               "chunk is written from the upstream's token counts", ""))
        # Only a query that is known and lacks alt=sse means a JSON-array stream; a path given
        # without its query is taken to be the SSE stream every SDK asks for.
        query = path.partition("?")[2]
        state.json_array_stream = self.source is Dialect.GEMINI and req.stream and bool(query) and \
            not asks_for_sse(query)
        state.history_ids = {i for item in req.items for i in _ids(item)}
        state.seed = hashlib.sha256(encoded).hexdigest()[:32]
        state.created = int(time.time())
        rule = NAME_RULES[self.target]
        names = NameMap(rule, {n for n in _names(req) if rule.ok(n)})
        ids = IdMap(self.target, state.history_ids, state.seed)
        _pair(req, ids, losses, self.source)
        for item in req.items:
            if isinstance(item, Call) and item.opaque:
                losses.append(Loss(item.src, None, "dropped", f"{', '.join(item.opaque)} of a {self.source.value} "
                                   f"call cannot cross to {self.target.value}", "XL-14"))
        emit = Emit(state, names, ids, losses)
        out = self._dst.emit_request(req, emit)
        source = home(self.source)
        if source.normalise is not None and source.spelled is not None and source.normalise(payload) is not payload:
            # Read in one spelling (Gemini's camelCase, GM-16); reported in the client's own.
            losses[:] = [replace(loss, source=source.spelled(payload, loss.source)) for loss in losses]
        if at:
            losses[:] = [replace(loss, source=at + loss.source) if loss.source.startswith("/") else loss
                         for loss in losses]
        state.aliases = dict(names.reverse)
        state.namespaced = dict(req.namespaced)
        state.ids = dict(ids.reverse)
        return RequestTranslation(out, _target_path(path, self.source, self.target, req.model, req.stream), losses,
                                  state)

    def response(self, payload: Any, state: State) -> ResponseTranslation:
        if not isinstance(payload, dict):
            raise TranslationError("the response body must be a JSON object", "")
        try:
            jsonsafe.check_writable(payload)
            resp, losses = self._dst.parse_response(payload, state)
            vet(resp, losses)
            return ResponseTranslation(self._src.emit_response(resp, state, losses), losses)
        except jsonsafe.Unfaithful as exc:
            raise TranslationError(f"cannot translate faithfully: {exc}", "") from None
        except _MALFORMED as exc:
            raise TranslationError(f"malformed {self.target.value} response ({_describe(exc)})", "") from None

    def refusal(self, kind: str, message: str, status: int) -> dict[str, Any]:
        """An error of the inspector's own (type `kind`, HTTP `status`) as the client's dialect writes errors."""
        error = {"type": kind, "message": message, "code": status, "status": _GOOGLE_STATUS.get(status, "INTERNAL")}
        return self._src.emit_response(Response(error=error), State(self.source, self.target), [])

    def stream(self, state: State) -> StreamTranslator:
        return StreamTranslator(self._dst.StreamReader(), self._dst.StreamParser(state),
                                self._src.StreamEmitter(state, []), state)


@dataclass(slots=True)
class StreamTranslator:
    """Target-dialect stream bytes in, source-dialect stream bytes out, event by event: nothing
    waits for the end of the stream (a Gemini-bound call waits only for its own arguments)."""

    reader: StreamReader
    parser: EventParser
    emitter: EventEmitter
    state: State
    _started: bool = False
    _nameless: set[Any] = field(default_factory=set)  # keys of upstream calls without a name

    @property
    def content_type(self) -> str:
        """The media type of the translated stream, for the response header."""
        return "application/json" if self.state.json_array_stream else home(self.state.source).framing.content_types[0]

    @property
    def losses(self) -> list[Loss]:
        return self.emitter.losses

    def feed(self, chunk: bytes) -> bytes:
        return b"".join(self._relay(event) for event in self.reader.feed(chunk))

    def close(self) -> bytes:
        out = b"".join(self._relay(event) for event in self.reader.close())
        return out + self._events(self.parser.close())

    def _relay(self, event: Any) -> bytes:
        # A malformed upstream event is reported and skipped: a stream in flight is never cut by it.
        try:
            return self._events(self.parser.feed(event))
        except _MALFORMED as exc:
            self.losses.append(Loss("/stream", None, "dropped", f"an upstream event that is not a valid "
                                    f"{self.state.target.value} event ({_describe(exc)}): {_excerpt(event)!r}"))
            return b""

    def _events(self, events: list[ev.Event]) -> bytes:
        out = []
        for event in self._vet(events):
            if not self._started and not isinstance(event, ev.Start):
                out.append(self.emitter.emit(ev.Start("", self.state.model)))
            self._started = True
            out.append(self.emitter.emit(event))
        return b"".join(out)

    def _vet(self, events: list[ev.Event]) -> list[ev.Event]:
        """The stream's `vet`: an upstream call without a name is dropped, reported, and the
        answer finishes failed."""
        kept: list[ev.Event] = []
        for event in events:
            if isinstance(event, ev.CallStart) and not event.name:
                self._nameless.add(event.key)
                kept.append(ev.Dropped("an upstream tool call without a name (no client can run it)", ""))
            elif isinstance(event, (ev.CallArgs, ev.CallEnd)) and event.key in self._nameless:
                continue
            elif isinstance(event, ev.Finish) and self._nameless:
                kept.append(dataclasses.replace(event, failed=NAMELESS))
            else:
                kept.append(event)
        return kept


def _bridge(dialect: Dialect) -> DialectBridge:
    bridge = home(dialect).bridge
    assert bridge is not None, f"{dialect.value} has no request bridge"  # PAIRS offers only dialects that do
    return bridge


# What malformed input raises inside the parsers (a list where an object belongs, and so on).
_MALFORMED = (AttributeError, TypeError, KeyError, IndexError, ValueError)


def _excerpt(event: Any) -> str:
    """The start of an upstream stream event, for a loss report: an SSE event's data, any other
    framing's event as text."""
    return (event.data if isinstance(event, SSEEvent) else str(event))[:60]


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


def _ids(item: Any) -> list[str]:
    if isinstance(item, Call) and item.id:
        return [item.id]
    if isinstance(item, Result) and item.call_id:
        return [item.call_id]
    return []


def _names(req: Request) -> set[str]:
    names = {tool.name for tool in req.tools}
    names.update(item.name for item in req.items if isinstance(item, (Call, Result)) and item.name)
    if req.choice is not None and req.choice.name:
        names.add(req.choice.name)
    return names


def _pair(req: Request, ids: IdMap, losses: list[Loss], source: Dialect) -> None:
    """Give every call an id and every result its call: calls without ids (legacy function_call,
    Gemini) get minted ones; results without ids answer the oldest unanswered call of the same
    name (XL-05, `model.pair`); a result that answers nothing is rejected (XL-06)."""
    for item in req.items:
        if isinstance(item, Call) and item.id is None:
            item.id = ids.mint(item.src)
            rule = "XL-05" if source is Dialect.OPENAI_CHAT else "XL-04"
            losses.append(Loss(item.src, None, "synthesised", f"the call to {item.name!r} had no id; "
                               f"{item.id!r} pairs it with its result", rule))
    for index, answered in pair(req.items).answers.items():
        result = cast(Result, req.items[index])
        if answered is None:
            if result.call_id is None:
                raise TranslationError(f"the result of {result.name!r} answers no earlier unanswered call of that "
                                       "name (an orphan result)", result.src)
            continue
        call = cast(Call, req.items[answered])
        if result.call_id is None:
            result.call_id = call.id
        if result.name is None:
            result.name = call.name


def _target_path(path: str, source: Dialect, target: Dialect, model: str, stream: bool) -> str:
    """The client's API prefix (what precedes its own endpoint) with the target's endpoint."""
    bare = path.split("?", 1)[0].rstrip("/")
    suffix = home(source).endpoint
    prefix = bare[: -len(suffix)] if suffix and bare.endswith(suffix) else "/v1"
    request_path = home(target).request_path
    assert request_path is not None, f"{target.value} has no request path"  # PAIRS offers only dialects that do
    return request_path(prefix or "/v1", model, stream)
