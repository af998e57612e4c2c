"""Golden translations for every offered pair: request, JSON response and stream, with the exact
loss report. The goldens were reviewed by hand (regenerate with tests/wire/golden/regenerate.py
only after a deliberate change). Every translated document passes our own checker."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from inspector.wire.check import check_request, check_response, check_stream, reassemble
from inspector.wire.dialect import Dialect
from inspector.wire.translate import PAIRS, get_bridge
from inspector.wire.violations import Severity

from . import translate_cases as cases
from .golden.regenerate import CREATED, UPSTREAM

GOLDEN = Path(__file__).parent / "golden"
PAIR_IDS = [f"{s.value}:{t.value}" for s, t in PAIRS]


def _golden(source: Dialect, target: Dialect) -> dict:
    return orjson.loads((GOLDEN / f"{source.value}__{target.value}.json").read_bytes())


def _request(source: Dialect) -> dict:
    return orjson.loads((GOLDEN / "inputs" / f"{source.value}.request.json").read_bytes())


def _errors(violations: list) -> list[tuple[str, str, str]]:
    return [(v.rule, v.pointer, v.message) for v in violations if v.severity is Severity.ERROR]


def _sent(source: Dialect, target: Dialect):
    golden = _golden(source, target)
    sent = get_bridge(source, target).request(_request(source), golden["request"]["path"])
    sent.state.created = CREATED
    return golden, sent


@pytest.mark.parametrize(("source", "target"), PAIRS, ids=PAIR_IDS)
def test_request_matches_golden(source: Dialect, target: Dialect) -> None:
    golden, sent = _sent(source, target)
    assert sent.path == golden["request"]["translated_path"]
    assert sent.payload == golden["request"]["output"]
    assert [loss.to_dict() for loss in sent.losses] == golden["request"]["losses"]
    assert _errors(check_request(sent.payload, target)) == []


@pytest.mark.parametrize(("source", "target"), PAIRS, ids=PAIR_IDS)
def test_response_matches_golden(source: Dialect, target: Dialect) -> None:
    golden, sent = _sent(source, target)
    back = get_bridge(source, target).response(UPSTREAM[target][0], sent.state)
    assert back.payload == golden["response"]["output"]
    assert [loss.to_dict() for loss in back.losses] == golden["response"]["losses"]
    assert _errors(check_response(back.payload, source)) == []


@pytest.mark.parametrize("size", [1, 5, 64, 1 << 20])
@pytest.mark.parametrize(("source", "target"), PAIRS, ids=PAIR_IDS)
def test_stream_matches_golden_whatever_the_chunking(source: Dialect, target: Dialect, size: int) -> None:
    golden, sent = _sent(source, target)
    relay = get_bridge(source, target).stream(sent.state)
    out, _ = cases.run_stream(relay, UPSTREAM[target][1], size)
    assert cases.events(out, source) == golden["stream"]["output"]
    assert [loss.to_dict() for loss in relay.losses] == golden["stream"]["losses"]
    assert _errors(check_stream(out, source)) == []


@pytest.mark.parametrize(("source", "target"), PAIRS, ids=PAIR_IDS)
def test_stream_reassembles_to_the_json_translation(source: Dialect, target: Dialect) -> None:
    """What a client builds from the translated stream carries the same calls and text as the
    translated JSON response."""
    golden, sent = _sent(source, target)
    relay = get_bridge(source, target).stream(sent.state)
    out, _ = cases.run_stream(relay, UPSTREAM[target][1], 9)
    assert _calls_and_text(reassemble(out, source), source) == _calls_and_text(golden["response"]["output"], source)


def _calls_and_text(payload: dict, dialect: Dialect) -> tuple[str, list[tuple[str, str, dict]]]:
    if dialect is Dialect.OPENAI_CHAT:
        message = payload["choices"][0]["message"]
        return message["content"], [(c["id"], c["function"]["name"], orjson.loads(c["function"]["arguments"]))
                                    for c in message["tool_calls"]]
    if dialect is Dialect.OPENAI_RESPONSES:
        text = "".join(p["text"] for i in payload["output"] if i["type"] == "message" for p in i["content"])
        return text, [(i["call_id"], i["name"], orjson.loads(i["arguments"]))
                      for i in payload["output"] if i["type"] == "function_call"]
    if dialect is Dialect.ANTHROPIC:
        text = "".join(b["text"] for b in payload["content"] if b["type"] == "text")
        return text, [(b["id"], b["name"], b["input"]) for b in payload["content"] if b["type"] == "tool_use"]
    if dialect is Dialect.BEDROCK:
        blocks = payload["output"]["message"]["content"]
        return "".join(b.get("text", "") for b in blocks), [
            (b["toolUse"]["toolUseId"], b["toolUse"]["name"], b["toolUse"]["input"]) for b in blocks if "toolUse" in b]
    parts = payload["candidates"][0]["content"]["parts"]
    return "".join(p.get("text", "") for p in parts), [
        (p["functionCall"]["id"], p["functionCall"]["name"], p["functionCall"]["args"]) for p in parts
        if "functionCall" in p]


@pytest.mark.parametrize(("source", "target"), PAIRS, ids=PAIR_IDS)
def test_stream_is_relayed_as_it_arrives(source: Dialect, target: Dialect) -> None:
    """The text of the first upstream event is out before the upstream stream ends (never buffered)."""
    _, sent = _sent(source, target)
    relay = get_bridge(source, target).stream(sent.state)
    body = UPSTREAM[target][1]
    assert b"Checking both." in relay.feed(body[:_end_of_event_holding(body, b"Checking both.", target)])


def _end_of_event_holding(body: bytes, text: bytes, target: Dialect) -> int:
    at = body.index(text)
    if target is not Dialect.BEDROCK:
        return body.index(b"\n\n", at) + 2
    end = 0
    while end <= at:  # each event-stream frame opens with its whole length, 4 bytes big-endian
        end += int.from_bytes(body[end:end + 4], "big")
    return end
