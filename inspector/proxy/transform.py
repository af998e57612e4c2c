"""The seam between forwarding and rewriting: a per-request transform.

Passthrough has no transform at all (the hot path checks for None and copies nothing). Translate
mode builds one `Translation` per request around a bridge from `inspector.wire.translate`, which
owns every rule of the translation; this module only moves bytes in and out of it."""

from __future__ import annotations

from typing import Any, Protocol

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


class TransformFactory:
    """Builds the transform of each request for one `--translate SRC:DST` setting."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        src, dst = parse_spec(spec)
        from ..wire.translate import UnsupportedPair, get_bridge  # only translate mode needs it

        try:
            self._bridge = get_bridge(src, dst)
        except UnsupportedPair as exc:
            raise TransformError(str(exc)) from exc

    def __call__(self) -> Translation:
        return Translation(self._bridge)


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
