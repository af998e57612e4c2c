"""The addons that rewrite an exchange: translation and repair (proxy/exchange.py's hooks).

Passthrough has neither (the hot path then copies nothing). Translate mode builds one
`Translation` per request around a bridge from `inspector.wire.translate`, which owns every rule of
the translation; repair mode one `Repairing` around `inspector.wire.fix`. This module only moves
bytes in and out of them. The two combine: repair runs first on the request, in the client's
dialect, and last on the response."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol
from urllib.parse import urlencode

import orjson

from ..flow import Flow
from ..redact import SECRET_QUERY_KEYS, query_pairs
from ..wire import jsonsafe
from ..wire.dialect import Dialect
from ..wire.dialects import Outgoing as ProviderRequest
from ..wire.dialects import auth_headers, home, homes
from .exchange import Addon, Hook, HookError, Outgoing


class TransformError(HookError):
    """The request (or response) cannot be transformed; the message says why."""


class StreamTransform(Protocol):
    # The media type of the rewritten stream, or None to keep the upstream's.
    @property
    def content_type(self) -> str | None: ...

    def feed(self, data: bytes) -> bytes: ...
    def close(self) -> bytes: ...


class Transform(Protocol):
    # False: the response goes back byte for byte (the forwarder then neither buffers a JSON
    # body nor drops its length). Known once request() has run.
    rewrites_response: bool

    def take_notes(self) -> list[str]: ...
    # An error of our own in the client's shape; None: the default shape (proxy/access.error_body).
    def refusal(self, kind: str, message: str, status: int) -> bytes | None: ...
    def request(self, body: bytes, path: str) -> tuple[bytes, str]: ...
    def response(self, body: bytes) -> bytes: ...
    def error(self, body: bytes) -> bytes: ...  # an upstream error body (status >= 400)
    def stream(self) -> StreamTransform: ...


def parse_spec(spec: str) -> tuple[str, str]:
    from ..wire.dialect import DIALECT_NAMES

    src, sep, dst = spec.partition(":")
    if not sep or src not in DIALECT_NAMES or dst not in DIALECT_NAMES:
        raise TransformError(f"--translate wants SRC:DST with dialects from {', '.join(DIALECT_NAMES)}; got {spec!r}")
    return src, dst


class TransformFactory(Addon):
    """Builds the transform of each request for one `--translate SRC:DST` setting."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        src, dst = parse_spec(spec)
        # Who serves each side, and how it wants its key (dialects/<name>/providers.py).
        self.source, self.target = home(Dialect(src)).providers[0], home(Dialect(dst)).providers[0]
        from ..wire.translate import UnsupportedPair, get_bridge  # only translate mode needs it

        try:
            self._bridge = get_bridge(src, dst)
        except UnsupportedPair as exc:
            raise TransformError(str(exc)) from exc

    def __call__(self) -> Translation:
        return Translation(self._bridge)

    def hook(self, flow: Flow, headers: Sequence[tuple[str, str]], query: str) -> Hook:
        return _TransformHook(self, self())

    def upstream_headers(self, headers: list[tuple[str, str]], query: str) -> list[tuple[str, str]]:
        """The client's headers made fit for the target provider (its `Provider` record): its key
        moved to where the target wants it (the client configured it for whoever answers, in its own
        SDK's shape), other providers' own headers (Anthropic's) dropped, the target's version headers
        added, and no accept-encoding, since the body is re-encoded here and must arrive plain."""
        moving = self.source.name != self.target.name
        key_headers = auth_headers()
        others = tuple(p.own_header_prefix for each in homes() for p in each.providers
                       if p.own_header_prefix and p.name != self.target.name)
        # A signed request (SigV4) carries a signature made for one request to its provider, and its
        # session token: neither is a key to move anywhere.
        signatures = tuple(p.signature for each in homes() for p in each.providers if p.signature)
        signed = any(name.lower() == "authorization" and value.startswith(signatures) for name, value in headers)
        key = None
        kept = []
        for name, value in headers:
            lower = name.lower()
            if lower == "accept-encoding":
                continue
            if moving and lower in key_headers:
                if key is None and not signed:
                    key = value[7:] if lower == "authorization" and value[:7].lower() == "bearer " else value
                continue
            if moving and others and lower.startswith(others):
                continue
            kept.append((name, value))
        if moving and key is None:
            key = next((v for k, v in query_pairs(query) if k == "key"), None)
        if moving and key is not None and self.target.auth is not None:
            if self.target.signs:  # signed last, for the URL it goes to (addons.Signing), which reads the key here
                kept.append(("Authorization", f"Bearer {key}"))
            else:
                kept = self.target.auth(ProviderRequest("POST", "", kept), key).headers
        for header, value in self.target.version_headers:
            if not any(k.lower() == header for k, _ in kept):
                kept.append((header, value))
        return kept


class Translation:
    """One request's translation: request, then response or stream, sharing the bridge's state."""

    rewrites_response = True

    def __init__(self, bridge: Any) -> None:
        self._bridge = bridge
        self._state: Any = None
        self.notes: list[str] = []
        self._stream: Any = None

    def take_notes(self) -> list[str]:
        """The loss report lines gathered since the last call."""
        notes, self.notes = self.notes, []
        return notes

    def refusal(self, kind: str, message: str, status: int) -> bytes:
        """An error of the forwarder's own in the client's dialect, as its SDK expects errors."""
        return jsonsafe.dumps(self._bridge.refusal(kind, message, status))

    def request(self, body: bytes, path: str) -> tuple[bytes, str]:
        try:
            payload = jsonsafe.loads(body)
        except orjson.JSONDecodeError as exc:
            raise TransformError(f"cannot translate a request body that is not JSON: {exc}") from exc
        except jsonsafe.Unfaithful as exc:
            raise TransformError(f"cannot translate the request faithfully: {exc}") from exc
        try:
            result = self._bridge.request(payload, path)
        except Exception as exc:  # the bridge rejects untranslatable input (orphans, media) by raising
            raise TransformError(f"cannot translate request: {exc}") from exc
        try:
            translated = jsonsafe.dumps(result.payload)
        except jsonsafe.Unfaithful as exc:  # e.g. arguments decoded into an object, now too deep
            raise TransformError(f"cannot translate the request faithfully: {exc}") from exc
        self._state = result.state
        self.notes.extend(str(loss) for loss in result.losses)
        return translated, result.path

    def response(self, body: bytes) -> bytes:
        try:
            payload = jsonsafe.loads(body)
            result = self._bridge.response(payload, self._state)
            translated = jsonsafe.dumps(result.payload)
        except Exception as exc:
            raise TransformError(f"cannot translate response: {exc}") from exc
        self.notes.extend(str(loss) for loss in result.losses)
        return translated

    def error(self, body: bytes) -> bytes:
        """An upstream error body in the client's dialect; as the upstream sent it when unreadable."""
        try:
            return self.response(body)
        except TransformError as exc:
            self.notes.append(f"error body relayed as the upstream sent it: {exc}")
            return body

    def stream(self) -> StreamTransform:
        self._stream = self._bridge.stream(self._state)
        return self

    @property
    def content_type(self) -> str | None:
        """The translated stream's media type (a Gemini client without alt=sse reads a JSON array)."""
        return str(self._stream.content_type)

    def feed(self, data: bytes) -> bytes:
        try:
            return self._stream.feed(data)
        except Exception as exc:  # a bridge bug or an untranslatable event must end this flow only
            raise TransformError(f"cannot translate the stream: {exc}") from exc

    def close(self) -> bytes:
        try:
            tail = self._stream.close()
        except Exception as exc:
            raise TransformError(f"cannot translate the end of the stream: {exc}") from exc
        self.notes.extend(str(loss) for loss in getattr(self._stream, "losses", []))
        return tail


class RepairFactory(Addon):
    """Builds the transform of each request in repair mode (`--repair`): the client's dialect is
    kept, and the defects `inspector.wire.fix` knows a safe repair for are fixed on the way up."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream

    def __call__(self) -> Repairing:
        return Repairing(self.upstream)

    def hook(self, flow: Flow, headers: Sequence[tuple[str, str]], query: str) -> Hook:
        return _TransformHook(self, self())

    def upstream_headers(self, headers: list[tuple[str, str]], query: str) -> list[tuple[str, str]]:
        # A response whose tool names must be restored is rewritten here, so it must arrive plain.
        return [(name, value) for name, value in headers if name.lower() != "accept-encoding"]


class Repairing:
    """One request's repairs. The request is rewritten only when something was repaired (else
    its bytes go up unchanged); the response only when a tool name was aliased, to give the
    client back the names it declared."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.notes: list[str] = []
        self.rewrites_response = False
        self._names: dict[bytes, bytes] = {}  # JSON string of an alias -> JSON string of its name
        self._pending = b""  # a stream's bytes after its last line break, not yet restored

    def take_notes(self) -> list[str]:
        notes, self.notes = self.notes, []
        return notes

    def refusal(self, kind: str, message: str, status: int) -> None:
        return None  # the client speaks the upstream's dialect: the default shape is its own

    def request(self, body: bytes, path: str) -> tuple[bytes, str]:
        from ..wire import profiles
        from ..wire.dialect import from_path
        from ..wire.fix import fix

        dialect = from_path(path)
        if dialect is None:
            return body, path
        try:
            payload = jsonsafe.loads(body)
            result = fix(payload, dialect, profiles.for_upstream(self.upstream, dialect))
            repaired = jsonsafe.dumps(result.payload) if result.repairs else body
        except orjson.JSONDecodeError:
            self.notes.append("repair: the request is not JSON; forwarded unchanged")
            return body, path
        except jsonsafe.Unfaithful as exc:
            self.notes.append(f"repair: cannot repair the request faithfully ({exc}); forwarded unchanged")
            return body, path
        if not result.repairs:
            return body, path
        self.notes.extend(f"repaired {r.rule} ({r.action}) at {r.pointer or '/'}: {r.detail}" for r in result.repairs)
        self._names = {orjson.dumps(alias): orjson.dumps(name) for alias, name in result.aliases.items()}
        self.rewrites_response = bool(self._names)
        return repaired, path

    def _restore(self, data: bytes) -> bytes:
        # An alias is `<sanitised>_<8 hex of sha256>`: as a whole JSON string it names nothing else.
        for alias, name in self._names.items():
            data = data.replace(alias, name)
        return data

    def response(self, body: bytes) -> bytes:
        return self._restore(body)

    error = response

    content_type = None  # the stream keeps its media type

    def stream(self) -> StreamTransform:
        return self

    def feed(self, data: bytes) -> bytes:
        # A JSON string never holds a raw line break, so text up to the last one can be restored
        # now; only the unfinished line waits for the next chunk.
        data = self._pending + data
        cut = max(data.rfind(b"\n"), data.rfind(b"\r")) + 1
        self._pending = data[cut:]
        return self._restore(data[:cut])

    def close(self) -> bytes:
        tail, self._pending = self._pending, b""
        return self._restore(tail)


class _TransformHook(Hook):
    """A transform (a Translation or a Repairing) in the exchange's chain of hooks."""

    __slots__ = ("_factory", "_transform", "_stream")

    def __init__(self, factory: TransformFactory | RepairFactory, transform: Transform) -> None:
        self._factory = factory
        self._transform = transform
        self._stream: StreamTransform | None = None

    def request(self, flow: Flow, outgoing: Outgoing) -> None:
        outgoing.headers = self._factory.upstream_headers(outgoing.headers, outgoing.query)
        target = outgoing.path + (f"?{outgoing.query}" if outgoing.query else "")
        body, target_path = self._transform.request(outgoing.body, target)
        if body is not outgoing.body:
            outgoing.body = body
            outgoing.path, _, outgoing.query = _translated_target(target_path, outgoing.query).partition("?")
            outgoing.rewritten = True

    @property
    def rewrites_response(self) -> bool:
        return self._transform.rewrites_response

    def response_headers(self, flow: Flow, headers: list[tuple[str, str]], stream: bool) -> list[tuple[str, str]]:
        if not stream or not self._transform.rewrites_response:
            return headers
        self._stream = self._transform.stream()
        if self._stream.content_type is None:
            return headers
        return [(k, v) for k, v in headers if k.lower() != "content-type"] + [("content-type",
                                                                                 self._stream.content_type)]

    def response_chunk(self, data: bytes) -> bytes:
        return data if self._stream is None else self._stream.feed(data)

    def response_end(self) -> bytes:
        return b"" if self._stream is None else self._stream.close()

    def response(self, body: bytes, failed: bool) -> bytes:
        if not self._transform.rewrites_response:
            return body
        return self._transform.error(body) if failed else self._transform.response(body)

    def error(self, kind: str, message: str, status: int) -> bytes | None:
        return self._transform.refusal(kind, message, status)

    def notes(self) -> list[str]:
        return self._transform.take_notes()


def _translated_target(path: str, query: str) -> str:
    """The upstream path and query of a translated request. The bridge's own query (Gemini's
    `alt=sse`) wins; otherwise the client's query goes along (an `api-version`, say), minus its
    secrets, which belong to the source provider and must not reach another, and minus `alt`,
    which only Gemini reads."""
    if "?" in path:
        return path
    kept = [(k, v) for k, v in query_pairs(query) if k.lower() not in SECRET_QUERY_KEYS and k != "alt"]
    return path + (f"?{urlencode(kept)}" if kept else "")
