"""Opaque state across turns (XL-14): what a model attaches to its tool calls — Anthropic's signed and
redacted thinking blocks, Gemini's thoughtSignature, a Responses reasoning item's encrypted_content —
goes back unchanged and in order beside the same calls in the requests that follow. Within one request
only a missing block shows (XL-14, GM-08, OR-09); a rewritten, reordered or dropped one shows only
against the response that produced it, an earlier flow of the same recording. Each dialect's home says
where its state sits (`Home.opaque`); this module compares."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class State:
    kind: str  # what it is, for the message ("signed thinking block", "thoughtSignature", …)
    value: str  # the opaque text; "" when the request refers to it by `ref` instead of carrying it
    ref: str = ""  # the item's own id where the dialect has one (a Responses reasoning item's rs_…)


@dataclass(frozen=True, slots=True)
class Carried:
    """The state that travels with one tool call."""

    call: str  # the call's id (Gemini calls without one: their name and arguments)
    states: tuple[State, ...]
    pointer: str  # the call's turn in the payload it was read from
    latest: bool = False  # in a request: the call belongs to the history's latest model turn


def model_turns(history: Any, role: str, field: str) -> list[tuple[int, list[Any], bool]]:
    """(index, parts, latest) of each turn of the model's `role` in a request's history whose
    `field` is a list of parts; `latest` marks the last of them."""
    if not isinstance(history, list):
        return []
    turns = [(index, turn[field]) for index, turn in enumerate(history)
             if isinstance(turn, dict) and turn.get("role") == role and isinstance(turn.get(field), list)]
    return [(index, parts, number == len(turns) - 1) for number, (index, parts) in enumerate(turns)]


def _same(produced: State, returned: State) -> bool:
    if returned.value:
        return returned.value == produced.value
    return bool(returned.ref) and returned.ref == produced.ref  # sent by reference: the server holds it


def compare(produced: Iterable[Carried], returned: Iterable[Carried]) -> list[tuple[str, str]]:
    """(pointer into the returning request, message) for each call whose state came back dropped,
    reordered or rewritten. A call absent from the request's history is no finding (the client moved
    on, or the server keeps the history); a state dropped from an older turn neither (providers
    need it back only on the latest one)."""
    back = {carried.call: carried for carried in returned}
    found: list[tuple[str, str]] = []
    for made in produced:
        came = back.get(made.call)
        if came is None or not made.states:
            continue
        if len(came.states) == len(made.states) and all(
                _same(p, r) for p, r in zip(made.states, came.states, strict=True)):
            continue
        kind = made.states[0].kind
        if not came.states:
            if came.latest:
                found.append((came.pointer, f"the {kind} the model sent with call {made.call!r} was dropped"))
            continue
        values = sorted(s.value for s in made.states)
        if len(came.states) == len(made.states) and sorted(s.value for s in came.states) == values:
            found.append((came.pointer, f"the {kind}s the model sent with call {made.call!r} came back "
                                        "in another order"))
        elif len(came.states) < len(made.states) and all(any(_same(p, r) for p in made.states) for r in came.states):
            if came.latest:
                found.append((came.pointer, f"{len(made.states) - len(came.states)} of the {len(made.states)} "
                                            f"{kind}s the model sent with call {made.call!r} were dropped"))
        else:
            found.append((came.pointer, f"the {kind} the model sent with call {made.call!r} came back changed"))
    return found
