"""Reading recordings: what every reader shares (the file parsed as JSON or YAML, `Shape` for typed
values, `recorded_flow` for a turn another tool recorded, `FilePlaces` for a finding's line) and the
reader of our own fixture. Whatever the format, a turn becomes a Flow and is judged, served and
shown like a recorded one; `registry.load` picks the reader.

A file this version cannot read says why in a LoadError (one line, the file named); a fixture of a
newer format version is refused rather than half-read."""

from __future__ import annotations

import base64
import binascii
import gc
import gzip
import math
import re
import zlib
from datetime import datetime
from functools import cache
from typing import Any, Literal, overload
from urllib.parse import urlsplit

import orjson

from ..analysis import decode_body
from ..flow import Chunk, Flow, FlowState, Mode, frame_chunk, header
from ..redact import redact_headers, redacted, secret_values
from ..wire import jsonsafe
from ..wire.frames import Direction
from ..wire.locate import SourceText, within
from ..wire.locate import source as locate_source
from ..wire.pointer import join
from . import fixture
from .base import Keys, LoadError, NotARecording, Turn
from .fixture import body_bytes, header_pairs


class FilePlaces:
    """Where a finding in a recording's body is in the recording's file, as 1-based (line, column):
    the finding's own place inside the body, whether a JSON file (HAR, fixture, JSON cassette) writes
    the body in place or as the text of a string, or a YAML cassette as a quoted scalar folded over
    lines; the body's own place where it cannot be followed (base64, !!binary). The file is read for
    this only when asked (`open` and `mock` never ask)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._json: SourceText | None = None
        self._yaml: tuple[Any, SourceText] | None = None

    def position(self, body: Keys, pointer: str, *, sse: bool = False) -> tuple[int, int]:
        """`pointer` in the body at `body`; the body's own place for pointer "" (or one it cannot follow)."""
        if self.data.lstrip()[:1] in (b"{", b"["):
            if self._json is None:
                self._json = locate_source(self.data)
            return self._json.embedded(join("", *body), pointer, sse)
        import yaml

        if self._yaml is None:
            self._yaml = _yaml(self.data, "<cassette>", compose=True), SourceText(self.data.decode("utf-8", "replace"),
                                                                                  {})
        node, text = self._yaml
        for key in body:  # as far as the file has the path
            if isinstance(node, yaml.MappingNode) and any(name.value == key for name, _ in node.value):
                node = next(value for name, value in node.value if name.value == key)
            elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
                node = node.value[key]
            else:
                break
        start = node.start_mark.index
        if isinstance(node, yaml.ScalarNode) and node.style in ("'", None) and node.tag.endswith(":str"):
            decoded, places = _flow_scalar(text.text, start, node.end_mark.index, quoted=node.style == "'")
            if decoded == node.value:  # read as PyYAML reads it, or not followed at all
                start = within(decoded, places, pointer, sse, start)
        return text.position_at(start)


# The largest recording read: the forwarder records at most 64 MiB of one body (`--max-body`). A YAML
# cassette costs far more to read than its size: every value becomes a node object (about 35 times
# the file in memory; a 27 MB cassette took 947 MB and 92 s with the pure-Python reader).
MAX_RECORDING = 64 * 1024 * 1024
MAX_YAML_RECORDING = 16 * 1024 * 1024


def refuse_size(size: int, source: str, cap: int = MAX_RECORDING) -> None:
    if size > cap:
        kind = "a YAML cassette" if cap == MAX_YAML_RECORDING else "a recording"
        raise LoadError(f"{source}: {size / 2**20:.1f} MiB is larger than {kind} may be ({cap // 2**20} MiB); "
                        "split it, or export fewer flows into one file")


_FOLD = re.compile(r"[ \t]*(?:\r\n|\r|\n)[ \t\r\n]*")


def _flow_scalar(text: str, start: int, end: int, *, quoted: bool) -> tuple[str, list[int]]:
    """A single-quoted (or plain) YAML scalar in text[start:end] as its value, with the offset of each
    of its characters: '' is one quote, and a line break with the blanks around it folds into a space
    (n+1 breaks: n line breaks). How vcrpy's YAML writes a long JSON body over several lines."""
    out: list[str] = []
    places: list[int] = []
    position, stop = (start + 1, end - 1) if quoted else (start, end)
    while position < stop:
        fold = _FOLD.match(text, position, stop)
        if fold is not None:
            breaks = len(re.findall(r"\r\n|\r|\n", fold.group()))
            out.append(" " if breaks == 1 else "\n" * (breaks - 1))
            places.extend([position] * len(out[-1]))
            position = fold.end()
        elif quoted and text.startswith("''", position):
            out.append("'")
            places.append(position)
            position += 2
        else:
            out.append(text[position])
            places.append(position)
            position += 1
    return "".join(out), places


@cache
def _yaml_loader() -> type:
    """The YAML loader for cassettes (yaml is imported only when a cassette is read): libyaml's, which
    reads a megabyte in a fraction of a second (the pure-Python one takes seconds, and recurses past
    Python's limit on 1000 nested lists) and refuses nesting deeper than 1000 levels."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _refuse_aliases(root: Any, source: str) -> None:
    """A cassette has no aliases; a file of nested ones (the "billion laughs") reads as shared nodes
    that any walk over the data, ours included, would expand to billions. libyaml resolves an alias
    to the node it names, so a node reached twice is one."""
    import yaml

    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            raise LoadError(f"{source}: YAML aliases (*name) are not read: no cassette has them")
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            stack.extend(part for pair in node.value for part in pair)


def _yaml(data: bytes, source: str, compose: bool = False) -> Any:
    """The YAML file's data, or with `compose` its node tree (which knows each value's line)."""
    refuse_size(len(data), source, MAX_YAML_RECORDING)
    loader = _yaml_loader()(data)
    # The cyclic collector walks every node made so far each time it runs: with it on, composing is
    # quadratic (a 3 MB cassette: 5.8 s, 1.4 s without). Nodes hold no cycles to collect.
    collecting = gc.isenabled()
    gc.disable()
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _refuse_aliases(node, source)
        return node if compose else loader.construct_document(node)
    finally:
        if collecting:
            gc.enable()
        loader.dispose()


def parsed(data: bytes, source: str) -> Any:
    """The file parsed, JSON or YAML, to tell what it is (JSON integers beyond 64 bits rounded)."""
    if data.lstrip()[:1] in (b"{", b"["):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise LoadError(f"{source}: not valid JSON: {exc}") from exc
    import yaml  # cassettes are YAML; only they need it

    try:
        return _yaml(data, source)  # vcrpy writes bytes bodies as !!binary, which it reads
    except yaml.YAMLError as exc:
        raise NotARecording(f"{source}: not a toolwire fixture, a HAR file or a vcrpy cassette (neither JSON nor "
                            f"YAML: {str(exc).splitlines()[0]})") from exc


def faithful(data: bytes, source: str) -> Any:
    """A JSON recording read exactly: a body replayed rounded would not be the recording."""
    try:
        return jsonsafe.loads(data)
    except jsonsafe.Unfaithful as exc:
        raise LoadError(f"{source}: {exc}") from exc
    except orjson.JSONDecodeError as exc:  # read as YAML, which takes what JSON does not (a byte order mark)
        raise LoadError(f"{source}: not valid JSON: {exc}") from exc


# -- our fixture -------------------------------------------------------------------------------

def claims_fixture(document: Any) -> bool:
    return isinstance(document, dict) and document.get("format") == fixture.FORMAT


def read_fixture(data: bytes, document: Any, source: str) -> list[Turn]:
    document = faithful(data, source)
    return [Turn(flow_from_fixture(document, source), source, document, _fixture_bodies(document))]


def _wire(body: Any, headers: list[tuple[str, str]]) -> tuple[bytes, list[tuple[str, str]]]:
    """A fixture body as it travels: one the fixture holds decoded is encoded again with its recorded
    content-encoding (other bytes than the provider's, the same content), so the flow reads, shows
    and is served as recorded. An encoding nobody here writes is dropped with the header."""
    raw = body_bytes(body)
    encoding = body.get("content_encoding") if isinstance(body, dict) else None
    if not encoding:
        return raw, headers
    headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
    codings = [c.strip().lower() for c in encoding.split(",") if c.strip()]
    if not all(c in _ENCODERS for c in codings):
        return raw, [(k, v) for k, v in headers if k.lower() != "content-encoding"]
    for coding in codings:
        raw = _ENCODERS[coding](raw)
    return raw, headers


def _brotli(data: bytes) -> bytes:
    import brotli

    compressed: bytes = brotli.compress(data)
    return compressed


def _zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


_ENCODERS = {"gzip": lambda d: gzip.compress(d, mtime=0), "x-gzip": lambda d: gzip.compress(d, mtime=0),
             "deflate": zlib.compress, "br": _brotli, "zstd": _zstd}


def _fixture_bodies(data: dict[str, Any]) -> dict[str, Keys]:
    """Where our fixture file holds each side's body: its json, text or base64 value (a stream: its
    chunks). The upstream's is the request's unless the fixture says it differed."""
    def at(*path: str) -> Keys:
        body: Any = data
        for key in path:
            body = body.get(key) if isinstance(body, dict) else None
        kind = next((k for k in ("json", "text", "base64") if isinstance(body, dict) and k in body), None)
        return (*path, kind) if kind else path

    response = found if isinstance(found := data.get("response"), dict) else {}
    upstream = found if isinstance(found := data.get("upstream_request"), dict) else {}
    return {"request": at("request", "body"),
            "upstream": at("request", "body") if upstream.get("same_body_as_request", True)
            else at("upstream_request", "body"),
            "response": ("response", "chunks") if response.get("chunks") else at("response", "body")}


def flow_from_fixture(data: dict[str, Any], source: str = "<fixture>", flow_id: int = 1) -> Flow:
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise LoadError(f"{source}: fixture without a valid \"version\"")
    if version > fixture.VERSION:
        raise LoadError(f"{source}: fixture format version {version} is newer than this toolwire-inspect reads "
                        f"(up to {fixture.VERSION}); upgrade toolwire-inspect to read it")
    try:
        return _fixture_flow(Shape(source), data, flow_id)
    except jsonsafe.Unfaithful as exc:
        raise LoadError(f"{source}: {exc}") from exc


def _fixture_flow(shape: Shape, data: dict[str, Any], flow_id: int) -> Flow:
    request = shape.member(data, "request", dict)
    upstream = shape.member(data, "upstream_request", dict)
    response = shape.member(data, "response", dict)
    host = shape.member(upstream, "host", (str, NoneType), "upstream_request.", default="") or ""
    path = shape.member(upstream, "url", str, "upstream_request.").removeprefix(fixture.UPSTREAM_PLACEHOLDER)
    chunks = [Chunk(shape.time(chunk, "t_ms", f"response.chunks[{n}].", required=True) / 1000.0,
                    body_bytes(shape.body(chunk, f"response.chunks[{n}]", whole=True)))
              for n, chunk in enumerate(shape.items(response, "chunks", dict, "response.") or ())]
    request_body, request_headers = _wire(shape.body(request, "request.body"), shape.headers(request, "request."))
    response_body, response_headers = _wire(shape.body(response, "response.body"), shape.headers(response, "response."))
    if chunks:
        response_body = b"".join(c.data for c in chunks)
    flow = Flow(
        id=flow_id, session_id=0, started_at=0.0, method=shape.member(request, "method", str, "request."),
        path=shape.member(request, "path", str, "request."),
        query=shape.member(request, "query", str, "request.", default=""),
        request_headers=request_headers, request_body=request_body,
        mode=shape.choice(data, "mode", Mode, Mode.PASSTHROUGH),
        upstream_url=shape.url(fixture.upstream_origin(host) + path if host else path,
                               "upstream_request (its host and url)"),
        upstream_request_headers=shape.headers(upstream, "upstream_request."),
        status=shape.status(shape.member(response, "status", (int, NoneType), "response."), "response.status"),
        response_headers=response_headers, response_body=response_body,
        streamed=shape.member(response, "streamed", bool, "response.", default=False),
        chunks=chunks, ttfb_ms=shape.time(response, "ttfb_ms", "response."),
        latency_ms=shape.time(response, "latency_ms", "response."),
        state=shape.choice(data, "state", FlowState, FlowState.COMPLETE),
        error=shape.member(data, "error", (str, NoneType), default=None),
        translate=shape.member(data, "translate", (str, NoneType), default=None),
        notes=shape.items(data, "notes", str) or [],
    )
    history = shape.member(data, "history", (list, NoneType), default=None)
    if history is not None:
        flow.history = orjson.dumps(history)
    if shape.member(data, "websocket", bool, default=False):
        flow.websocket = True
        flow.chunks = [frame_chunk(shape.time(frame, "t_ms", f"response.frames[{n}].", required=True) / 1000.0,
                                   shape.choice(frame, "from", Direction, Direction.CLIENT),
                                   shape.member(frame, "opcode", int, f"response.frames[{n}].") == fixture.TEXT_OPCODE,
                                   body_bytes(shape.body(frame, f"response.frames[{n}]", whole=True)))
                       for n, frame in enumerate(shape.items(response, "frames", dict, "response.") or ())]
        flow.response_body = b"".join(chunk.data for chunk in flow.chunks)
    if not shape.member(upstream, "same_body_as_request", bool, "upstream_request.", default=True):
        flow.upstream_request_body, _ = _wire(shape.body(upstream, "upstream_request.body"), [])
    if "upstream_response" in data:
        flow.upstream_response_body, _ = _wire(
            shape.body(shape.member(data, "upstream_response", dict), "upstream_response.body"), [])
    return flow


NoneType = type(None)
_REQUIRED = object()
_KINDS = ((bool, "true or false"), (int, "an integer"), (float, "a number"), (str, "a string"), (list, "a list"),
          (dict, "an object"), (NoneType, "null"))


def _kind(value: Any) -> str:
    # YAML has more kinds than JSON (`!!binary` bytes, timestamps, sets): named by their type.
    return next((name for kind, name in _KINDS if isinstance(value, kind)), f"a YAML {type(value).__name__}")


class Shape:
    """One recording's values read with the types its format gives them, by every reader (the
    fixture, HAR and cassette ones; so `check`, `open`, `mock` and `export`): a value of another type,
    a missing one, a status that is no HTTP status or a time that is no time is a LoadError naming
    the file (and entry), the place in it and what was found there."""

    def __init__(self, source: str) -> None:
        self.source = source

    def refuse(self, place: str, what: str) -> LoadError:
        return LoadError(f"{self.source}: {place} {what}")

    def typed(self, value: Any, kinds: type | tuple[type, ...], place: str) -> Any:
        kinds = kinds if isinstance(kinds, tuple) else (kinds,)
        # JSON has no integer type apart from numbers: true is no 1, and 2.0 no integer where one is wanted.
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            wanted = " or ".join(name for kind, name in _KINDS if kind in kinds and not (kind is int and float in kinds))
            raise self.refuse(place, f"is {_kind(value)}, not {wanted}")
        return value

    def member(self, holder: dict[str, Any], key: str, kinds: type | tuple[type, ...], at: str = "",
               *, default: Any = _REQUIRED) -> Any:
        if key not in holder:
            if default is _REQUIRED:
                raise self.refuse(f"{at}{key}", "is missing")
            return default
        return self.typed(holder[key], kinds, f"{at}{key}")

    def items(self, holder: dict[str, Any], key: str, kinds: type | tuple[type, ...], at: str = "") -> list[Any] | None:
        """A list member (absent or null: None), each item of `kinds`."""
        values = self.member(holder, key, (list, NoneType), at, default=None)
        if values is None:
            return None
        return [self.typed(value, kinds, f"{at}{key}[{n}]") for n, value in enumerate(values)]

    def choice(self, holder: dict[str, Any], key: str, kinds: type[Mode] | type[FlowState] | type[Direction],
               default: Any) -> Any:
        value = self.member(holder, key, str, default=default.value)
        try:
            return kinds(value)
        except ValueError:
            known = ", ".join(kind.value for kind in kinds)
            raise self.refuse(key, f"is not one of {known}") from None

    def status(self, value: int | None, place: str) -> int | None:
        if value is not None and not 100 <= value <= 599:
            raise self.refuse(place, f"{value if abs(value) < 10**6 else 'of ' + str(len(str(value))) + ' digits'} "
                                     "is not an HTTP status (100 to 599)")
        return value

    @overload
    def time(self, holder: dict[str, Any], key: str, at: str = "", *, required: Literal[True]) -> float: ...
    @overload
    def time(self, holder: dict[str, Any], key: str, at: str = "", *, required: bool = False) -> float | None: ...

    def time(self, holder: dict[str, Any], key: str, at: str = "", *, required: bool = False) -> float | None:
        """A time in milliseconds: a finite number of 0 or more (null: not measured)."""
        value: float | None = self.member(holder, key, (int, float) if required else (int, float, NoneType), at,
                                          default=_REQUIRED if required else None)
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise self.refuse(f"{at}{key}", f"{value} is not a time (a finite number of milliseconds, 0 or more)")
        return value

    def url(self, url: str, place: str) -> str:
        """A URL whose host and port can be read (every reader of a flow reads them)."""
        try:
            urlsplit(url).port  # noqa: B018 - parsing is the check: a bad host or port raises
        except ValueError as exc:
            raise self.refuse(place, f"is not a URL ({exc})") from None
        return url

    def headers(self, holder: dict[str, Any], at: str) -> list[tuple[str, str]]:
        return header_pairs(self.items(holder, "headers", str, at) or [])

    def body(self, holder: dict[str, Any], place: str, *, whole: bool = False) -> dict[str, Any] | None:
        """A body value (see fixture.body_value): null, or one of json, text (a string) or base64 (a
        string of base64), and the content_encoding it travelled with. `whole`: `holder` is the value
        (a stream chunk), else its member named as `place` ends."""
        if not whole:
            at, _, key = place.rpartition(".")
            value: dict[str, Any] | None = self.member(holder, key, (dict, NoneType), f"{at}." if at else "",
                                                       default=None)
            if value is None:
                return None
        else:
            value = holder
        kinds = [kind for kind in ("json", "text", "base64") if kind in value]
        if len(kinds) != 1:
            raise self.refuse(place, "has none of json, text and base64" if not kinds
                              else f"has {' and '.join(kinds)}: one of them is the body")
        if kinds != ["json"]:
            self.typed(value[kinds[0]], str, f"{place}.{kinds[0]}")
        if kinds == ["base64"]:
            try:
                base64.b64decode(value["base64"], validate=True)
            except binascii.Error as exc:
                raise self.refuse(f"{place}.base64", f"is not base64 ({exc})") from None
        self.member(value, "content_encoding", (str, NoneType), f"{place}.", default=None)
        return value


def fixture_from_carried(carried: dict[str, Any], request_body: bytes, response_body: bytes,
                         source: str = "<recording>") -> dict[str, Any]:
    """Our fixture back from a container's bodies and what fixture.carried put beside them."""
    shape = Shape(source)
    try:
        data: dict[str, Any] = orjson.loads(orjson.dumps(shape.member(carried, "fixture", dict, "_toolwire.")))  # a copy to keep
    except orjson.JSONEncodeError as exc:
        raise shape.refuse("_toolwire.fixture", f"cannot be read back ({exc})") from None
    for side in ("request", "response"):
        shape.member(data, side, dict, "_toolwire.fixture.")
    data["request"]["body"] = _body(request_body, shape.member(carried, "request_body", (dict, NoneType), "_toolwire.",
                                                               default=None))
    chunks = shape.items(carried, "chunks", dict, "_toolwire.")
    if chunks is not None:
        sizes = [shape.member(chunk, "bytes", int, f"_toolwire.chunks[{n}].") for n, chunk in enumerate(chunks)]
        if any(size < 0 for size in sizes) or sum(sizes) != len(response_body):
            raise shape.refuse("_toolwire.chunks", f"cut {sum(sizes)} bytes, not the {len(response_body)} bytes of "
                                                   "the response body")
        parts, offset = [], 0
        for n, (chunk, size) in enumerate(zip(chunks, sizes, strict=True)):
            parts.append({"t_ms": shape.time(chunk, "t_ms", f"_toolwire.chunks[{n}].", required=True),
                          **fixture.chunk_value(response_body[offset:offset + size])})
            offset += size
        data["response"]["chunks"] = parts
    else:
        data["response"]["body"] = _body(response_body, shape.member(carried, "response_body", (dict, NoneType),
                                                                     "_toolwire.", default=None))
    return data


def _body(raw: bytes, meta: dict[str, Any] | None) -> dict[str, Any] | None:
    if meta is None:
        return None
    meta = dict(meta)
    if meta.pop("base64", False):
        return {"base64": base64.b64encode(raw).decode("ascii"), **meta}
    return {**(fixture.body_value(raw) or {"text": ""}), **meta}


# -- shared by the HAR and cassette readers ----------------------------------------------------

def split_url(url: str) -> tuple[str, str]:
    """(path, query) of a recorded URL."""
    parts = urlsplit(url)
    return parts.path or "/", parts.query


def iso_time(text: Any) -> float:
    """A HAR startedDateTime as unix time; 0 when absent or unreadable (the UI shows no time)."""
    if not isinstance(text, str):
        return 0.0
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError):
        return 0.0


def recorded_flow(flow_id: int, method: str, url: str, request_headers: list[tuple[str, str]], request_body: bytes,
                  status: int | None, response_headers: list[tuple[str, str]], response_body: bytes,
                  *, started_at: float = 0.0, ttfb_ms: float | None = None,
                  latency_ms: float | None = None) -> Flow:
    """A turn another tool recorded (a HAR entry, a cassette's interaction) as a Flow, redacted as
    the forwarder would have: secret headers and query values by name, and their values wherever
    else they show."""
    path, query = split_url(url)
    # Devtools and cassettes keep the decoded body beside the recorded content-encoding: the header
    # no longer describes these bytes.
    if header(response_headers, "content-encoding") and decode_body(response_body, response_headers) is response_body:
        response_headers = [(k, v) for k, v in response_headers
                            if k.lower() not in ("content-encoding", "content-length")]
    flow = Flow(
        id=flow_id, session_id=0, started_at=started_at, method=method, path=path, query=query,
        request_headers=redact_headers(request_headers), request_body=request_body, upstream_url=url,
        upstream_request_headers=redact_headers(request_headers), status=status,
        response_headers=redact_headers(response_headers), response_body=response_body,
        ttfb_ms=ttfb_ms, latency_ms=latency_ms,
        state=FlowState.COMPLETE if status else FlowState.ERROR,
        error=None if status else "no response recorded", secrets=secret_values(request_headers, query, url),
    )
    if "text/event-stream" in flow.content_type and response_body:
        # No per-chunk times recorded: one chunk per event, all at the first byte.
        flow.streamed = True
        at = (ttfb_ms or 0.0) / 1000.0
        flow.chunks = [Chunk(at, event) for event in _events(response_body)]
    return redacted(flow)


def _events(body: bytes) -> list[bytes]:
    """An SSE body cut after each blank line (the event boundaries), every byte kept."""
    parts, start = [], 0
    while True:
        end = body.find(b"\n\n", start)
        if end < 0:
            break
        parts.append(body[start:end + 2])
        start = end + 2
    if start < len(body):
        parts.append(body[start:])
    return parts
