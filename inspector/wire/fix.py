"""Repairs for the defects that have a safe fix, each recorded with the rule it repairs.

`fix(payload, dialect, profile)` returns a new payload (the input is never changed) and the list of
repairs; the repaired payload passes the checker without errors for every defect repaired here.
Repair pointers point into the *original* payload. Choices that a reader needs to know:
- arguments that are not an object are wrapped as {"value": …} (arguments.WRAP_KEY);
- an invalid name becomes `<sanitised stem>_<sha256 prefix>` (naming.NameMap, as the bridges alias):
  injective, and reversible through `FixResult.aliases` (alias → original), applied to tools,
  tool_choice and every call in history;
- a call left unanswered gets a synthesised result "result unavailable" (flagged as an error where the
  dialect has a flag); a result that answers no pending call is dropped."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from . import jsonsafe, profiles
from .dialect import Dialect
from .dialects import home
from .naming import NameMap, mint_id
from .pointer import join
from .profiles import Profile
from .rules import arguments
from .dialects.gemini.schema import Change, to_json_schema

UNAVAILABLE = "result unavailable"


@dataclass(frozen=True, slots=True)


class Repair:
    rule: str
    pointer: str  # where the defect was, in the original payload
    action: str  # converted | set | unwrapped | wrapped | encoded | removed | aliased | rewritten | synthesised | dropped | reordered | merged | moved
    detail: str


@dataclass(slots=True)


class FixResult:
    payload: Any
    repairs: list[Repair] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # alias -> original name


def fix(payload: Any, dialect: Dialect | str, profile: str | Profile | None = None) -> FixResult:
    """The repaired payload (a copy) and what was repaired. Raises jsonsafe.Unfaithful when the
    repaired payload could not be written back exactly as read (see `inspector.wire.jsonsafe`)."""
    dialect = Dialect(dialect)
    chosen = profiles.get(profile, dialect)
    document = orjson.loads(jsonsafe.dumps(payload))
    fixer = Fixer(chosen, document)
    if isinstance(document, dict):
        home(dialect).fix(fixer, document)
    return FixResult(document, fixer.repairs, {alias: name for name, alias in fixer.names.forward.items()})


class Fixer:
    def __init__(self, profile: Profile, document: Any) -> None:
        self.profile = profile
        self.repairs: list[Repair] = []
        self.names = NameMap(profile.names, _valid_names(document, profile))
        self.ids: dict[str, str] = {}  # rewritten call id: original -> new

    def note(self, rule: str, pointer: str, action: str, detail: str) -> None:
        self.repairs.append(Repair(rule, pointer, action, detail))

    # names ---------------------------------------------------------------------------------------
    def name(self, name: Any, rule: str, pointer: str) -> Any:
        """The name to use for `name`: itself when valid, else its alias (made once, then reused)."""
        if not isinstance(name, str) or not name or self.profile.name_ok(name):
            return name
        alias = self.names.alias(name)
        self.note(rule, pointer, "aliased", f"{name!r} → {alias!r}")
        return alias

    def keep_first(self, name: Any, taken: set[str], rule: str, pointer: str, what: str = "tool") -> bool:
        """False, with the removal noted, when `name` was declared already (the first one stays)."""
        if not isinstance(name, str):
            return True
        if name in taken:
            self.note(rule, pointer, "removed", f"duplicate {what} {name!r} removed (the first one is kept)")
            return False
        taken.add(name)
        return True

    def renamed(self, name: Any) -> str | None:
        """The alias already given to `name`, if any."""
        return self.names.forward.get(name) if isinstance(name, str) else None

    # call ids ------------------------------------------------------------------------------------
    def call_id(self, call_id: Any, seen: set[str], rule_pointer: tuple[str, str], limit: int | None,
                pattern: re.Pattern[str] | None = None) -> Any:
        """A call id that is unique in `seen` and fits the limit/charset; rewrites recorded."""
        if not isinstance(call_id, str) or not call_id:
            return call_id
        rule, pointer = rule_pointer
        fits = (limit is None or len(call_id) <= limit) and (pattern is None or pattern.fullmatch(call_id))
        if fits and call_id not in seen:
            seen.add(call_id)
            return call_id
        new = mint_id(call_id, seen, {call_id}, limit=limit or 64)
        seen.add(new)
        reason = "repeats an earlier id" if fits else "does not fit the id limit"
        self.note(rule, pointer, "rewritten", f"call id {call_id!r} {reason} → {new!r}")
        return new


def _valid_names(document: Any, profile: Profile) -> set[str]:
    """Every valid name the payload holds (tools, calls, choices, and more): an alias must never
    equal one of them."""
    found: set[str] = set()
    stack = [document]
    while stack:  # iterative: payloads may nest deeper than Python recurses
        value = stack.pop()
        if isinstance(value, dict):
            name = value.get("name")
            if isinstance(name, str) and profile.name_ok(name):
                found.add(name)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found


def json_schema(fixer: Fixer, schema: dict[str, Any], pointer: str, rule: str) -> dict[str, Any]:
    """Function parameters as JSON Schema (a genai Schema converted; see dialects/gemini/schema.py)."""
    changes: list[Change] = []
    converted: dict[str, Any] = to_json_schema(schema, pointer, "", changes, root=True)
    note_changes(fixer, changes, rule)
    return converted


def note_changes(fixer: Fixer, changes: list[Change], rule: str) -> None:
    for change in changes:
        fixer.note(change.rule or rule, change.source, "removed" if change.kind == "dropped" else change.kind,
                   change.why)


def drop_nulls(fixer: Fixer, payload: dict[str, Any], keys: tuple[str, ...], rule: str) -> None:
    for key in keys:
        if key in payload and payload[key] is None:
            del payload[key]
            fixer.note(rule, join("", key), "removed", f"{key}: null removed (null means absent)")


def fixed_arguments(fixer: Fixer, value: Any, rule: str, pointer: str) -> str:
    if isinstance(value, str) and arguments.decode(value).ok:
        return value
    obj, note = arguments.as_object(value)
    action = "encoded" if isinstance(value, dict) else ("unwrapped" if "unwrapped" in note else "wrapped")
    fixer.note(rule, pointer, action, note or "arguments object encoded once as a JSON string")
    return arguments.encode(obj)
