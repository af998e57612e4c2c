"""The seam between forwarding and rewriting: a per-request transform.

Passthrough has no transform at all (the hot path checks for None and copies nothing). Translate
mode builds one `Translation` per request around a bridge from `inspector.wire.translate`, which
owns every rule of the translation; this module only moves bytes in and out of it."""

from __future__ import annotations

from typing import Any, Protocol
from urllib.parse import parse_qsl

import orjson


class TransformError(Exception):
    """The request (or response) cannot be transformed; the message says why."""


class StreamTransform(Protocol):
    def feed(self, data: bytes) -> bytes: ...
    def close(self) -> bytes: ...


class Transform(Protocol):
    def take_notes(self) -> list[str]: ...
    def request(self, body: bytes, path: str) -> tuple[bytes, str]: ...
    def response(self, body: bytes) -> bytes: ...
    def stream(self) -> StreamTransform: ...


def parse_spec(spec: str) -> tuple[str, str]:
    from ..wire.dialect import DIALECT_NAMES

    src, sep, dst = spec.partition(":")
    if not sep or src not in DIALECT_NAMES or dst not in DIALECT_NAMES:
        raise TransformError(f"--translate wants SRC:DST with dialects from {', '.join(DIALECT_NAMES)}; got {spec!r}")
    return src, dst


# Who serves each dialect, and how it wants its key.
_PROVIDER = {"openai-chat": "openai", "openai-responses": "openai", "anthropic": "anthropic", "gemini": "gemini",
             "mcp": "mcp"}
_KEY_HEADER = {"openai": "Authorization", "anthropic": "x-api-key", "gemini": "x-goog-api-key"}
_AUTH_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key"})
ANTHROPIC_VERSION = "2023-06-01"  # the API version Anthropic requires on every request


class TransformFactory:
    """Builds the transform of each request for one `--translate SRC:DST` setting."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        src, dst = parse_spec(spec)
        self.source, self.target = _PROVIDER[src], _PROVIDER[dst]
        from ..wire.translate import UnsupportedPair, get_bridge  # only translate mode needs it

        try:
            self._bridge = get_bridge(src, dst)
        except UnsupportedPair as exc:
            raise TransformError(str(exc)) from exc

    def __call__(self) -> Translation:
        return Translation(self._bridge)

    def upstream_headers(self, headers: list[tuple[str, str]], query: str) -> list[tuple[str, str]]:
        """The client's headers made fit for the target provider: its key moved to the target's
        auth header (the client configured it for whoever answers, in its own SDK's shape),
        Anthropic's version headers dropped or added, and no accept-encoding, since the body is
        re-encoded here and must arrive plain."""
        moving = self.source != self.target
        key = None
        kept = []
        for name, value in headers:
            lower = name.lower()
            if lower == "accept-encoding":
                continue
            if moving and lower in _AUTH_HEADERS:
                if key is None:
                    key = value[7:] if lower == "authorization" and value[:7].lower() == "bearer " else value
                continue
            if moving and lower.startswith("anthropic-") and self.target != "anthropic":
                continue
            kept.append((name, value))
        if moving and key is None:
            key = next((v for k, v in parse_qsl(query) if k == "key"), None)
        if moving and key is not None and self.target in _KEY_HEADER:
            header = _KEY_HEADER[self.target]
            kept.append((header, f"Bearer {key}" if header == "Authorization" else key))
        if self.target == "anthropic" and not any(k.lower() == "anthropic-version" for k, _ in kept):
            kept.append(("anthropic-version", ANTHROPIC_VERSION))
        return kept


class Translation:
    """One request's translation: request, then response or stream, sharing the bridge's state."""

    def __init__(self, bridge: Any) -> None:
        self._bridge = bridge
        self._state: Any = None
        self.notes: list[str] = []
        self._stream: Any = None

    def take_notes(self) -> list[str]:
        """The loss report lines gathered since the last call."""
        notes, self.notes = self.notes, []
        return notes

    def request(self, body: bytes, path: str) -> tuple[bytes, str]:
        try:
            payload = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise TransformError(f"cannot translate a request body that is not JSON: {exc}") from exc
        try:
            result = self._bridge.request(payload, path)
        except Exception as exc:  # the bridge rejects untranslatable input (orphans, media) by raising
            raise TransformError(f"cannot translate request: {exc}") from exc
        self._state = result.state
        self.notes.extend(str(loss) for loss in result.losses)
        return orjson.dumps(result.payload), result.path

    def response(self, body: bytes) -> bytes:
        try:
            payload = orjson.loads(body)
            result = self._bridge.response(payload, self._state)
        except Exception as exc:
            raise TransformError(f"cannot translate response: {exc}") from exc
        self.notes.extend(str(loss) for loss in result.losses)
        return orjson.dumps(result.payload)

    def stream(self) -> StreamTransform:
        self._stream = self._bridge.stream(self._state)
        return self

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
