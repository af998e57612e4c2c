"""Bad input never escapes the translator as anything but a TranslationError: arbitrary JSON and
mutated valid payloads, as requests, responses and streams, for every pair."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import examples
from inspector.wire.dialect import Dialect
from inspector.wire.translate import PAIRS, TranslationError, get_bridge

from .golden.regenerate import PATHS, UPSTREAM

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["", "x", "call_1", "{}", "[1]", "user",
                                                                         "assistant", "tool", "function", "text"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["role", "content", "type", "name", "id", "tool_calls", "function", "arguments", "messages",
                         "input", "tools", "contents", "parts", "functionCall", "call_id", "output", "choices",
                         "delta", "index", "text", "candidates", "tool_use_id", "source", "model", "error", "toolUse",
                         "toolUseId", "toolResult", "toolSpec", "inputSchema", "json", "contentBlockIndex", "start",
                         "stopReason", "usage"]),
        children, max_size=5),
    max_leaves=25)

SETTINGS = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _mutate(document: Any, path: list[Any], value: Any) -> Any:
    """`document` with the node at `path` (as far as it exists) replaced by `value`."""
    if not path or not isinstance(document, (dict, list)) or not document:
        return value
    if isinstance(document, dict):
        key = sorted(document)[path[0] % len(document)]
        return {**document, key: _mutate(document[key], path[1:], value)}
    index = path[0] % len(document)
    return [*document[:index], _mutate(document[index], path[1:], value), *document[index + 1:]]


def _request(source: Dialect) -> dict[str, Any]:
    from pathlib import Path

    return orjson.loads((Path(__file__).parent / "golden" / "inputs" / f"{source.value}.request.json").read_bytes())


@SETTINGS
@given(st.sampled_from(PAIRS), json_values, st.lists(st.integers(0, 50), max_size=6), json_values)
def test_requests_and_responses_fail_only_with_translation_errors(pair, anything, path, value) -> None:
    source, target = pair
    bridge = get_bridge(source, target)
    for payload in (anything, _mutate(_request(source), path, value)):
        try:
            state = bridge.request(payload, PATHS[source]).state
        except TranslationError:
            state = bridge.request(_request(source), PATHS[source]).state
        for body in (anything, _mutate(UPSTREAM[target][0], path, value)):
            try:
                bridge.response(body, state)
            except TranslationError:
                pass


@SETTINGS
@given(st.sampled_from(PAIRS), st.lists(json_values, max_size=6), st.binary(max_size=40), st.integers(1, 64))
def test_streams_never_raise(pair, events, garbage, size) -> None:
    source, target = pair
    bridge = get_bridge(source, target)
    state = bridge.request(_request(source), PATHS[source]).state
    body = b"".join(b"data: " + orjson.dumps(e) + b"\n\n" for e in events) + garbage + UPSTREAM[target][1]
    relay = bridge.stream(state)
    out = b"".join(relay.feed(body[i:i + size]) for i in range(0, len(body), size)) + relay.close()
    assert isinstance(out, bytes)


BEDROCK_EVENTS = st.sampled_from(["messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop",
                                  "messageStop", "metadata", "modelStreamErrorException", "somethingNew"])


@SETTINGS
@given(st.sampled_from([pair for pair in PAIRS if pair[1] is Dialect.BEDROCK]),
       st.lists(st.tuples(BEDROCK_EVENTS, json_values), max_size=6), st.binary(max_size=40), st.integers(1, 64),
       st.booleans())
def test_event_streams_never_raise_and_a_broken_frame_ends_the_answer_failed(pair, events, garbage, size, cut) -> None:
    """Frames of any JSON under Bedrock's event types, then bytes that are no frame (or the stream
    cut inside one): the translation goes on to the client's end, and an answer the break cut short
    ends failed, never as if it were whole."""
    from inspector.wire.dialects.bedrock.stream import encode_event
    from inspector.wire.streams import parse_events

    source, target = pair
    bridge = get_bridge(source, target)
    state = bridge.request(_request(source), PATHS[source]).state
    body = b"".join(encode_event({kind: value}) for kind, value in events)
    tail = UPSTREAM[target][1][:-3] if cut else b"\x00\x00\x00\x01" + garbage
    relay = bridge.stream(state)
    sent = body + tail
    out = b"".join(relay.feed(sent[i:i + size]) for i in range(0, len(sent), size)) + relay.close()
    said = orjson.dumps(parse_events(out, source)).decode()
    # Unless an event before the break had ended the answer (metadata, an exception).
    ended = any(kind in ("metadata", "modelStreamErrorException") for kind, _ in events)
    assert ended or "the upstream's event stream cannot be read on" in said
