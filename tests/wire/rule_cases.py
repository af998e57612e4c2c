"""Shared machinery for the rule tables: a case mutates a valid baseline once to trip a rule, and a
near miss mutates it in the closest allowed way; the test asserts the exact rule, pointer and severity
for the first and the absence of the rule for the second."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from inspector.wire import check
from inspector.wire.dialect import Dialect
from inspector.wire.dialects import home
from inspector.wire.dialects.gemini import live
from inspector.wire.dialects.openai_responses import realtime
from inspector.wire.frames import Direction, Frame
from inspector.wire.profiles import Profile
from inspector.wire.session import SessionEntry, check_session
from inspector.wire.violations import Violation

from .wire_payloads import sse

Mutation = Callable[[Any], Any]


@dataclass(frozen=True)
class Case:
    name: str
    dialect: str
    base: Callable[[], Any]
    trip: Mutation
    rule: str
    pointer: str
    severity: str
    near: Mutation
    # request | response | stream, or a pair: exchange (base gives {"request", "response"}),
    # exchange-stream (the response as its events), session (base gives [{"url", "request", "response"}]),
    # realtime, live: one socket's frames, read by the OpenAI Realtime or Gemini Live checker (base gives
    # {"headers", "frames": [[direction, event], ...]})
    kind: str = "request"
    profile: str | Profile | None = None
    also: tuple[tuple[str, str, str], ...] = ()  # (rule, pointer, severity) the trip also causes
    # The near miss judged under another profile: the same bytes a different endpoint accepts.
    near_profile: str | Profile | None = None

    def run(self, mutation: Mutation, profile: str | Profile | None = None) -> list[Violation]:
        document = mutation(self.base())
        profile = profile or self.profile
        if self.kind == "request":
            return check.check_request(document, self.dialect, profile)
        if self.kind == "response":
            return check.check_response(document, self.dialect, profile)
        if self.kind == "stream":
            # In the dialect's own framing where that is not SSE (Bedrock's event stream).
            framing = home(Dialect(self.dialect)).framing
            body = sse(document) if "text/event-stream" in framing.content_types else b"".join(framing.encode(document))
            return check.check_stream(body, self.dialect, profile)
        if self.kind == "session":
            return check_session([SessionEntry(number, entry["url"], entry["request"], entry["response"])
                                  for number, entry in enumerate(document, 1)])
        if self.kind in SOCKET_CHECKS:
            return SOCKET_CHECKS[self.kind](document)
        response = sse(document["response"]) if self.kind == "exchange-stream" else document["response"]
        return check.check_exchange(document["request"], response, self.dialect, profile).violations


def socket_frames(document: Any) -> list[Frame]:
    """A socket case's frames: each event a text frame, a second apart."""
    return [Frame(Direction(direction), float(number), True, orjson.dumps(event))
            for number, (direction, event) in enumerate(document["frames"])]


SOCKET_CHECKS: dict[str, Callable[[Any], list[Violation]]] = {
    "realtime": lambda document: realtime.check(socket_frames(document), document["headers"]),
    "live": lambda document: live.check(socket_frames(document)),
}


def makers(dialect: str, request: Callable[[], Any], response: Callable[[], Any] | None = None,
           events: Callable[[], Any] | None = None):
    """The case builders of one dialect's table: (req, resp, stream), each taking the case's name,
    trip, rule, pointer, severity and near miss, then its profile and the other Case fields."""
    def build(base: Callable[[], Any] | None, kind: str):
        def make(name, trip, rule, pointer, severity, near, profile=None, **kw) -> Case:
            assert base is not None, f"no {kind} baseline for {dialect}"
            return Case(name, dialect, base, trip, rule, pointer, severity, near, kind, profile, **kw)
        return make
    return build(request, "request"), build(response, "response"), build(events, "stream")


def found(violations: list[Violation]) -> set[tuple[str, str, str]]:
    return {(v.rule, v.pointer, v.severity.value) for v in violations}


# What the provider does with each finding the tables trip, where it is not the rule of thumb: an
# error in a request is rejected; an error in a response or a stream breaks the client that reads it.
_REQ, _RESP = "request", "response"
_E, _W, _I = "error", "warning", "info"
_MAY, _IGN, _CHG, _ACC, _CLI, _REJ = "may reject", "ignores", "changes", "accepts", "breaks client", "rejects"
EFFECTS = {
    ("AN-02", _W, _REQ): _MAY, ("AN-05", _W, _REQ): _CHG, ("AN-13", _W, _RESP): _CLI, ("GM-08", _W, _REQ): _MAY,
    ("GM-11", _W, _REQ): _MAY, ("GM-12", _W, _REQ): _CHG, ("GM-13", _W, _REQ): _MAY, ("GM-15", _W, _RESP): _CLI,
    ("GM-16", _W, _REQ): _CHG, ("GM-17", _W, _REQ): _MAY, ("MCP-03", _I, _RESP): _MAY, ("MCP-03", _W, _RESP): _MAY,
    ("MCP-06", _W, _RESP): _CLI, ("MCP-07", _I, _RESP): _ACC, ("OC-03", _I, _REQ): _MAY, ("OC-07", _I, _REQ): _CHG,
    ("OC-09", _I, _REQ): _IGN, ("OC-11", _W, _REQ): _MAY, ("OC-12", _I, _REQ): _MAY, ("OC-12", _W, _REQ): _MAY,
    ("OC-13", _W, _RESP): _CLI, ("OC-15", _W, _REQ): _MAY, ("OC-15", _W, _RESP): _CLI, ("OC-16", _W, _REQ): _MAY, ("OC-17", _W, _REQ): _MAY,
    ("OC-22", _W, _RESP): _CLI, ("OC-22", _I, _RESP): _ACC, ("OC-23", _I, _RESP): _CLI, ("OC-28", _I, _REQ): _IGN, ("OR-10", _W, _RESP): _CLI,
    ("OR-11", _I, _REQ): _ACC, ("XL-05", _W, _REQ): _MAY, ("XL-08", _W, _REQ): _MAY, ("XL-08", _W, _RESP): _CLI,
    ("XL-10", _I, _REQ): _IGN,
    # An MCP tools/list result is what its client declares to a provider next: refused there.
    ("XL-01", _E, _RESP): _REJ,
    # A session rule on the call's flow: the server refuses the call.
    ("MCP-08", _E, _RESP): _REJ,
    # Socket rules (frames of one session): what the server does with the client's event.
    ("RT-01", _E, _RESP): _MAY, ("RT-02", _W, _RESP): _CHG, ("RT-03", _E, _RESP): _REJ, ("RT-05", _E, _RESP): _REJ,
    ("GM-22", _E, _RESP): _MAY, ("GM-23", _W, _RESP): _CHG, ("GM-24", _E, _RESP): _MAY,
    ("AN-15", _W, _RESP): _CLI, ("AN-19", _W, _REQ): _MAY, ("GM-18", _W, _RESP): _CLI, ("OR-15", _W, _RESP): _CLI,
    ("BR-10", _W, _RESP): _CLI, ("BR-13", _W, _REQ): _REJ,
}


def expected_effect(rule: str, severity: str, kind: str) -> str:
    side = _REQ if kind == "request" else _RESP
    default = (_REJ if side == _REQ else _CLI) if severity == _E else None
    effect = EFFECTS.get((rule, severity, side), default)
    assert effect is not None, f"no expected effect for {rule} at {severity} in a {side}: add it to EFFECTS"
    return effect


def assert_case(case: Case) -> None:
    assert found(case.run(same)) == set(), "the baseline must be valid"
    tripped = case.run(case.trip)
    assert sorted(found(tripped)) == sorted({(case.rule, case.pointer, case.severity), *case.also})
    assert len(tripped) == len(found(tripped)), "one finding per place"
    assert [(v.rule, v.effect.value) for v in tripped] == [
        (v.rule, expected_effect(v.rule, v.severity.value, "request" if v.where == "request" else case.kind))
        for v in tripped]
    near = case.run(case.near, case.near_profile)
    assert case.rule not in {v.rule for v in near}, sorted(found(near))


def setting(path: list[Any], value: Any) -> Mutation:
    """A mutation that sets the value at `path` (keys and indices)."""
    def mutate(document: Any) -> Any:
        node = document
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return document
    return mutate


def deleting(path: list[Any]) -> Mutation:
    def mutate(document: Any) -> Any:
        node = document
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
        return document
    return mutate


def doing(*mutations: Mutation) -> Mutation:
    def mutate(document: Any) -> Any:
        for mutation in mutations:
            document = mutation(document)
        return document
    return mutate


def same(document: Any) -> Any:
    return document


def real_near_miss(case: Case) -> bool:
    """A near miss that is not the untouched baseline (or is, judged under another profile)."""
    return case.near is not same or case.near_profile is not None
