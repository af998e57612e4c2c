"""Shared machinery for the rule tables: a case mutates a valid baseline once to trip a rule, and a
near miss mutates it in the closest allowed way; the test asserts the exact rule, pointer and severity
for the first and the absence of the rule for the second."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspector.wire import check
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
    profile: str | None = None

    def run(self, mutation: Mutation) -> list[Violation]:
        document = mutation(self.base())
        if self.kind == "request":
            return check.check_request(document, self.dialect, self.profile)
        if self.kind == "response":
            return check.check_response(document, self.dialect, self.profile)
        return check.check_stream(sse(document), self.dialect, self.profile)


def found(violations: list[Violation]) -> set[tuple[str, str, str]]:
    return {(v.rule, v.pointer, v.severity.value) for v in violations}


def assert_case(case: Case) -> None:
    tripped = case.run(case.trip)
    assert (case.rule, case.pointer, case.severity) in found(tripped), sorted(found(tripped))
    near = case.run(case.near)
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
