"""Crafted recordings: for each format the product reads (our fixture, HAR ours and foreign, vcrpy
cassettes ours and foreign, YAML and JSON), a well-formed file and its hostile variants. Every field
of the well-formed file takes every wrong type and every edge value (NaN, infinities, -0, integers
beyond 64 bits, huge strings, deep nesting, invalid base64), is dropped, or is duplicated; and the
whole file is broken in the ways that are not about one field (invalid UTF-8, YAML anchors and
aliases, 10,000-deep lists, several documents, a file past the size cap).

`cases()` gives (name, file name, bytes); tests/formats/test_crafted_recordings.py runs every one through
every reader."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import yaml

from inspector.formats import cassette, fixture as export, har
from inspector.analysis import analyse
from inspector.flow import Chunk, Flow, FlowState

CHAT_REQUEST = (b'{"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}], '
                b'"tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}]}')
CHAT_RESPONSE = (b'{"id": "c1", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop", '
                 b'"message": {"role": "assistant", "content": "hello"}}]}')
STREAM_REQUEST = b'{"model": "claude-test", "max_tokens": 5, "stream": true, "messages": [{"role": "user", "content": "hi"}]}'
STREAM_EVENTS = [
    b'event: message_start\ndata: {"type": "message_start", "message": {"id": "m1", "type": "message", '
    b'"role": "assistant", "content": [], "model": "claude-test"}}\n\n',
    b'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, '
    b'"content_block": {"type": "text", "text": ""}}\n\n',
    b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
    b'"delta": {"type": "text_delta", "text": "Hello"}}\n\n',
    b'event: message_stop\ndata: {"type": "message_stop"}\n\n',
]


def chat_flow() -> Flow:
    return Flow(id=1, session_id=1, started_at=1767225600.5, method="POST", path="/v1/chat/completions",
                request_headers=[("content-type", "application/json"), ("user-agent", "crafted/1")],
                request_body=CHAT_REQUEST, upstream_url="https://api.openai.com/v1/chat/completions",
                upstream_request_headers=[("content-type", "application/json")], status=200,
                response_headers=[("content-type", "application/json"), ("x-request-id", "req_1")],
                response_body=CHAT_RESPONSE, ttfb_ms=3.5, latency_ms=4.25, state=FlowState.COMPLETE)


def stream_flow() -> Flow:
    return Flow(id=2, session_id=1, started_at=1767225601.5, method="POST", path="/v1/messages",
                request_headers=[("content-type", "application/json")], request_body=STREAM_REQUEST,
                upstream_url="https://api.anthropic.com/v1/messages",
                upstream_request_headers=[("content-type", "application/json")], status=200,
                response_headers=[("content-type", "text/event-stream")], response_body=b"".join(STREAM_EVENTS),
                streamed=True, chunks=[Chunk(0.01 * (n + 1), event) for n, event in enumerate(STREAM_EVENTS)],
                ttfb_ms=10.0, latency_ms=40.0, state=FlowState.COMPLETE)


def fixtures() -> list[dict[str, Any]]:
    return [export.fixture(flow, analyse(flow)) for flow in (chat_flow(), stream_flow())]


def foreign(document: Any) -> Any:
    """The document without our `_toolwire` fields: what another tool writes."""
    if isinstance(document, dict):
        return {k: foreign(v) for k, v in document.items() if k != "_toolwire"}
    if isinstance(document, list):
        return [foreign(v) for v in document]
    return document


# The base documents, each with how it is written and the places crafted in it: (name, file suffix,
# document, "json" | "yaml", the path prefixes crafted). Ours and the foreign form of one container
# share their container's fields: those are crafted in the foreign form, our `_toolwire` in ours.
def bases() -> list[tuple[str, str, Any, str, tuple[Path, ...]]]:
    chat, stream = fixtures()
    ours_har = har.document([(chat, 1767225600.5), (stream, 1767225601.5)])
    ours_vcr = cassette.document([chat, stream])
    return [("fixture", ".json", chat, "json", ((),)),
            ("fixture-stream", ".json", stream, "json", (("response",),)),
            ("har", ".har", ours_har, "json", (("log", "entries", 0, "_toolwire"),)),
            ("har-foreign", ".har", foreign(ours_har), "json", ((),)),
            ("vcr", ".yaml", ours_vcr, "yaml", (("interactions", 0, "_toolwire"), ("interactions", 0, "response"))),
            ("vcr-foreign", ".yaml", foreign(ours_vcr), "yaml", ((),)),
            ("vcr-json", ".json", foreign(ours_vcr), "json", (("interactions", 0, "response", "status"),))]


class _Plain(yaml.CSafeDumper):
    """Every value written where it stands: the recording has no aliases (they are crafted apart)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def write(document: Any, kind: str) -> bytes:
    if kind == "json":
        return json.dumps(document, indent=1, ensure_ascii=False, allow_nan=True).encode("utf-8", "surrogatepass")

    return yaml.dump(document, Dumper=_Plain, sort_keys=False, allow_unicode=True, width=1 << 20).encode("utf-8")


Path = tuple[str | int, ...]


class Raw:
    """A value written as this literal text in place of the JSON or YAML the writer would give."""

    def __init__(self, json_text: str, yaml_text: str) -> None:
        self.json_text, self.yaml_text = json_text, yaml_text




# Our fields inside a HAR entry or a cassette's interaction: the fixture's own are crafted in the
# fixture itself, so here only where the carried copy differs (the body metadata, the chunk table).
_CARRIED = {("_toolwire",), ("_toolwire", "fixture"), ("_toolwire", "fixture", "version"),
            ("_toolwire", "fixture", "response"), ("_toolwire", "fixture", "response", "status"),
            ("_toolwire", "request_body"), ("_toolwire", "response_body"), ("_toolwire", "chunks")}


def places(value: Any, path: Path = ()) -> Iterator[Path]:
    """Every place in a document: each member and the first element of each list (it stands for the
    rest), containers included."""
    if "_toolwire" in path:
        inner = path[path.index("_toolwire"):]
        if inner not in _CARRIED and inner[:2] != ("_toolwire", "chunks"):
            return
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from places(child, (*path, key))
    elif isinstance(value, list) and value:
        yield from places(value[0], (*path, 0))


def replaced(document: Any, path: Path, value: Any) -> Any:
    copied = copy.deepcopy(document)
    *parent, last = path
    holder = copied
    for key in parent:
        holder = holder[key]
    holder[last] = value
    return copied


def dropped(document: Any, path: Path) -> Any:
    copied = copy.deepcopy(document)
    *parent, last = path
    holder = copied
    for key in parent:
        holder = holder[key]
    del holder[last]
    return copied


NESTED = "[" * 10_000 + "]" * 10_000
# Every wrong type, at every place.
WRONG_TYPES: dict[str, Any] = {"null": None, "bool": True, "number": 1.5, "string": "x", "list": [1, "a"],
                               "object": {"a": 1}}
# The edge values of a number, where the recording has a number.
NUMBERS: dict[str, Any] = {
    "zero": 0, "minus-one": -1, "minus-zero": -0.0, "huge-int": 2**70, "int64-max": 2**63 - 1,
    "number-string": "200", "nan-string": "NaN", "nan": Raw("NaN", ".nan"), "infinity": Raw("Infinity", ".inf"),
    "minus-infinity": Raw("-Infinity", "-.inf"), "exponent": Raw("1e400", "1e400"),
}
# The edge values of a string, where the recording has one.
STRINGS: dict[str, Any] = {"empty-string": "", "huge-string": "A" * 300_000, "bad-base64": "!!not base64!!",
                           "control-string": "\x1b]52;c;SGVsbG8=\x07\u202e\x00", "number-string": "200"}


def values(value: Any, path: Path) -> dict[str, Any]:
    """What a place holding `value` is given."""
    edges = (NUMBERS if isinstance(value, (int, float)) and not isinstance(value, bool)
             else STRINGS if isinstance(value, str) else {})
    deep = {"deep": Raw(NESTED, NESTED)} if isinstance(value, (dict, list)) and len(path) <= 3 else {}
    return {**WRONG_TYPES, **edges, **deep}


def _marked(document: Any, kind: str, raw: Raw) -> bytes:
    """The document written with the raw literal where the marker string stands."""
    text = write(document, kind).decode("utf-8", "surrogatepass")
    marker = json.dumps("\x00raw-marker\x00") if kind == "json" else "\"\\0raw-marker\\0\""
    assert marker in text, (kind, marker)
    return text.replace(marker, raw.json_text if kind == "json" else raw.yaml_text).encode("utf-8", "surrogatepass")


def _variant(document: Any, kind: str, path: Path, value: Any) -> bytes:
    if isinstance(value, Raw):
        return _marked(replaced(document, path, "\x00raw-marker\x00"), kind, value)
    return write(replaced(document, path, value), kind)


def _at(document: Any, path: Path) -> Any:
    for key in path:
        document = document[key]
    return document


def field_cases() -> Iterator[tuple[str, str, bytes]]:
    """Each place of each base, given each value of VALUES, and dropped."""
    for base, suffix, document, kind, prefixes in bases():
        for path in places(document):
            if not path or not any(path[:len(prefix)] == prefix for prefix in prefixes):
                continue
            where = "/".join(map(str, path))
            yield f"{base}:{where}:missing", suffix, write(dropped(document, path), kind)
            for name, value in values(_at(document, path), path).items():
                yield f"{base}:{where}:{name}", suffix, _variant(document, kind, path, value)


def whole_file_cases() -> Iterator[tuple[str, str, bytes]]:
    """What is wrong with a file as a whole, not with one of its fields."""
    chat, _ = fixtures()
    fixture_text = write(chat, "json")
    har_text = write(bases()[2][2], "json")
    vcr_text = write(bases()[4][2], "yaml")
    yield "fixture:invalid-utf8", ".json", fixture_text.replace(b'"hi"', b'"h\xff\xfei"')
    yield "har:invalid-utf8", ".har", har_text.replace(b'"hi', b'"h\xff\xfe', 1)
    yield "vcr:invalid-utf8", ".yaml", vcr_text.replace(b"hi", b"h\xff\xfe", 1)
    yield "fixture:utf16", ".json", fixture_text.decode().encode("utf-16")
    yield "fixture:bom", ".json", b"\xef\xbb\xbf" + fixture_text
    yield "fixture:truncated", ".json", fixture_text[: len(fixture_text) // 2]
    yield "fixture:duplicate-keys", ".json", fixture_text.replace(
        b'"format": "toolwire-fixture"', b'"format": "toolwire-fixture", "format": "other"')
    yield "fixture:duplicate-request", ".json", fixture_text.replace(
        b'"request": {', b'"request": {"method": "GET"}, "request": {', 1)
    yield "har:duplicate-entries", ".har", har_text.replace(b'"entries": [', b'"entries": [], "entries": [', 1)
    yield "vcr:duplicate-keys", ".yaml", vcr_text.replace(b"interactions:", b"interactions: []\ninteractions:", 1)
    yield "fixture:array-root", ".json", b"[" + fixture_text + b"]"
    yield "fixture:deep-root", ".json", b'{"format": "toolwire-fixture", "x": ' + NESTED.encode() + b"}"
    yield "har:deep-root", ".har", b'{"log": ' + NESTED.encode() + b"}"
    yield "vcr:deep-root", ".yaml", b"interactions: " + NESTED.encode() + b"\n"
    yield "vcr:deep-block", ".yaml", b"interactions:\n" + b"".join(b"  " * n + b"- \n" for n in range(2000))
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 10) + "]" for n in range(1, 10)]
    yield "vcr:billion-laughs", ".yaml", ("\n".join(lines) + "\ninteractions: [*l9]\n").encode()
    yield "vcr:merge-key", ".yaml", b"base: &b {code: 200}\ninteractions:\n- response: {status: {<<: *b}}\n"
    yield "vcr:anchor-only", ".yaml", vcr_text.replace(b"interactions:", b"interactions: &all", 1)
    yield "vcr:two-documents", ".yaml", vcr_text + b"---\n" + vcr_text
    yield "vcr:python-tag", ".yaml", b"interactions: !!python/object/apply:os.system ['true']\n"
    yield "vcr:binary-bad", ".yaml", vcr_text.replace(b"body: {string:", b"body: {string: !!binary '!!!', x:", 1)
    yield "vcr:timestamp-tag", ".yaml", b"interactions:\n- request: {body: 2001-12-14t21:59:43.10-05:00}\n"
    yield "vcr:set-tag", ".yaml", b"interactions: !!set {a, b}\n"
    yield "har:empty-entries", ".har", b'{"log": {"version": "1.2", "entries": []}}'
    yield "vcr:empty-interactions", ".yaml", b"interactions: []\nversion: 1\n"
    yield "empty", ".json", b""
    yield "nul-bytes", ".json", b"\x00" * 64 + b'"log"'


def cases() -> list[tuple[str, str, bytes]]:
    return [*field_cases(), *whole_file_cases()]
