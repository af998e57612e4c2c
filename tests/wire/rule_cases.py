"""Shared machinery for the rule tables: a case mutates a valid baseline once to trip a rule, and a
near miss mutates it in the closest allowed way; the test asserts the exact rule, pointer and severity
for the first and the absence of the rule for the second."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspector.wire import check
from inspector.wire.profiles import Profile
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
    kind: str = "request"  # request | response | stream
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
        return check.check_stream(sse(document), self.dialect, profile)


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


def assert_case(case: Case) -> None:
    assert found(case.run(same)) == set(), "the baseline must be valid"
    tripped = case.run(case.trip)
    assert sorted(found(tripped)) == sorted({(case.rule, case.pointer, case.severity), *case.also})
    assert len(tripped) == len(found(tripped)), "one finding per place"
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
