"""What every dialect module shares: the emit context (names, ids, losses) and small helpers."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from .. import jsonsafe
from ..dialect import Dialect
from .model import Call, Loss, Message, Opaque, Part, Result, State
from .names import IdMap, NameMap, id_ok


@dataclass(slots=True)
class Emit:
    """One translation's view of the target: its name aliases, id map and loss list."""

    state: State
    names: NameMap
    ids: IdMap
    losses: list[Loss]

    @property
    def target(self) -> Dialect:
        return self.state.target

    def name(self, name: str, src: str, tgt: str) -> str:
        alias = self.names.alias(name)
        if alias != name:
            self.losses.append(Loss(src, tgt, "aliased",
                                    f"{name!r} is not a valid {self.target.value} tool name; sent as {alias!r} "
                                    "and reversed in the response", "XL-02"))
        return alias

    def call_id(self, call_id: str, src: str, tgt: str) -> str:
        mapped = self.ids.map(call_id)
        if mapped != call_id:
            reason = "does not fit" if not id_ok(call_id, self.target) else "would collide with another id in"
            self.losses.append(Loss(src, tgt, "renamed", f"call id {call_id!r} {reason} {self.target.value}; "
                                    f"sent as {mapped!r}", "XL-04"))
        return mapped

    def drop(self, src: str, why: str, rule: str = "") -> None:
        self.losses.append(Loss(src, None, "dropped", why, rule))

    def opaque(self, item: Opaque) -> bool:
        """True when the opaque item may be written as is; otherwise the drop is reported."""
        if item.dialect is self.target:
            return True
        self.drop(item.src, f"{item.dialect.value} {item.what} cannot cross to {self.target.value}", "XL-14")
        return False


def dumps(value: Any) -> str:
    return jsonsafe.dumps(value).decode()


def result_text(result: Result) -> str:
    return "".join(p.text for p in result.parts if p.kind == "text")


def text_of(parts: list[Part]) -> str:
    return "".join(p.text for p in parts if p.kind == "text")


_DATA_URL = re.compile(r"^data:([^;,]*)(;base64)?,(.*)$", re.S)


def split_data_url(url: str) -> tuple[str, str] | None:
    """(mime, base64 data) of a data: URL, None otherwise."""
    match = _DATA_URL.match(url)
    if not match or not match.group(2):
        return None
    return match.group(1), match.group(3)


def data_url(part: Part) -> str:
    return part.url or f"data:{part.mime or 'application/octet-stream'};base64,{part.data}"


ERROR_PREFIX = "Error: "


def flagged_text(result: Result, emit: Emit, tgt: str) -> str:
    """A result's text for a target with no error flag (Chat, Responses): the flag becomes a
    visible prefix so the model still sees the failure (XL-15)."""
    text = result_text(result)
    if result.is_error:
        emit.losses.append(Loss(result.src, tgt, "converted",
                                f"{emit.target.value} has no error flag on tool results; written as an "
                                f"{ERROR_PREFIX.strip()!r} prefix", "XL-15"))
        return ERROR_PREFIX + text
    return text


def assistant_turns(items: list[Any]) -> list[tuple[str, list[Any]]]:
    """Group items into (role, items) turns: consecutive assistant text and calls form one
    assistant turn; results and user messages one user turn; system messages stand alone."""
    turns: list[tuple[str, list[Any]]] = []
    for item in items:
        if isinstance(item, Message):
            role = item.role
        elif isinstance(item, Call):
            role = "assistant"
        elif isinstance(item, Result):
            role = "user"
        else:  # opaque state (reasoning, thinking, signatures) belongs to the model's turn
            role = "assistant"
        if turns and turns[-1][0] == role and role != "system":
            turns[-1][1].append(item)
        else:
            turns.append((role, [item]))
    return turns


# --- the way back: names and ids in a response -----------------------------------------------------

def back_name(state: State, name: str) -> str:
    return state.aliases.get(name, name)


def back_id(state: State, call_id: str | None, basis: str, losses: list[Loss], src: str, tgt: str) -> str:
    """A call id of the target's response as the source client should see it: the upstream id
    when it fits the source and collides with nothing the client already holds, otherwise a
    deterministic fresh one (XL-04)."""
    taken = call_id is not None and (call_id in state.ids or call_id in state.history_ids)
    if call_id and id_ok(call_id, state.source) and not taken:
        return call_id
    salt = 0
    while True:
        minted = "call_" + hashlib.sha256(f"{state.seed}:{basis}:{call_id}:{salt}".encode()).hexdigest()[:24]
        if minted not in state.ids and minted not in state.history_ids:
            break
        salt += 1
    if taken:
        why = f"upstream call id {call_id!r} repeats an id already in the history; sent as {minted!r}"
    elif call_id:
        why = f"upstream call id {call_id!r} does not fit {state.source.value}; sent as {minted!r}"
    else:
        why = f"the upstream call had no id; minted {minted!r}"
    losses.append(Loss(src, tgt, "synthesised" if not call_id else "renamed", why, "XL-04"))
    return minted
