"""What every rule module shares: the collector that turns a rule id and a place into a Violation,
and small accessors that never raise on a payload of the wrong shape."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from ..dialect import Dialect
from ..pointer import join, split
from ..profiles import Profile
from ..ranges import Range
from ..violations import Effect, Severity, Violation
from . import tolerance
from .catalogue import RULES

_FACT = re.compile(r"\{\{(\w+)\}\}")
_ABSENT = object()


class Report:
    """Collects violations for one document. `where` is stamped on each (e.g. "stream"). With the
    `document` the pointers point into, a why written as a template ({{value}}, {{path}}, see
    `facts`) is filled with the finding's own value and place, so it is about this finding.
    In a `response` (or stream) nothing is rejected on the way in: what a provider would refuse in
    a request is what the client gets here and fails on (or sends back next turn and is refused)."""

    __slots__ = ("document", "response", "violations", "where")

    def __init__(self, where: str = "", document: Any = _ABSENT, *, response: bool = False) -> None:
        self.violations: list[Violation] = []
        self.where = where
        self.document = document
        self.response = response

    def add(self, rule: str, pointer: str, message: str, severity: Severity | None = None,
            *, why: str = "", hint: str = "", effect: Effect | None = None) -> None:
        info = RULES[rule]
        severity = severity or info.severity
        why = why or info.why_for(severity)
        if "{{" in why:
            found = facts(self.document, pointer)
            why = _FACT.sub(lambda m: found[m.group(1)], why)
        if effect is None:  # a site that names the effect knows better than the side it is on
            effect = info.effect_at(severity)
            if self.response and effect in (Effect.REJECTS, Effect.MAY_REJECT):
                effect = Effect.BREAKS_CLIENT
                why += IN_A_RESPONSE
        self.violations.append(Violation(rule, severity, pointer, message, why, hint or info.hint, self.where, effect))


# What a why about a request's contract means when the defect sits in a response.
IN_A_RESPONSE = (" Here it is in a response: the client gets it as it is, and a next request that replays it meets "
                 "that answer.")

FACTS = ("value", "type", "key", "path", "dots", "pointer")


def facts(document: Any, pointer: str) -> dict[str, str]:
    """What a why template may quote about a finding: its `value` (as the provider's error quotes
    it), the value's JSON `type`, the `key` it sits under, its place as OpenAI's errors spell it
    (`path`: messages[3].content) and as Anthropic's do (`dots`: messages.3.content), and the
    `pointer`. A place the document does not hold gives "absent" for value and type."""
    return _Facts(document, pointer)


class _Facts(dict[str, str]):
    """`facts`, each computed when a template first asks for it (a schema with thousands of
    findings would otherwise pay for all six on every one)."""

    def __init__(self, document: Any, pointer: str) -> None:
        super().__init__(pointer=pointer)
        self.document = document
        self.tokens = split(pointer) if pointer.startswith("/") else []

    def __missing__(self, name: str) -> str:
        tokens = self.tokens
        if name in ("value", "type"):
            node: Any = self.document
            for token in tokens:
                if isinstance(node, dict) and token in node:
                    node = node[token]
                elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                    node = node[int(token)]
                else:
                    node = _ABSENT
                    break
            self["type"] = _json_type(node)
            self["value"] = "absent" if node is _ABSENT else short(node) if isinstance(node, str) else show_json(node)
        elif name == "key":
            self[name] = tokens[-1] if tokens else ""
        elif name == "path":
            self[name] = "".join(f"[{t}]" if t.isdigit() else f".{t}" for t in tokens).lstrip(".")
        elif name == "dots":
            self[name] = ".".join(tokens)
        else:
            raise KeyError(name)
        return self[name]


_TYPE_NAMES: dict[type[object], str] = {str: "string", list: "array", dict: "object"}


def _json_type(value: Any) -> str:
    if value is _ABSENT:
        return "absent"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return _TYPE_NAMES.get(type(value), type(value).__name__)


@runtime_checkable
class DialectRules(Protocol):
    """What each dialect's rule module provides (dialects/<dialect>/rules.py); check.py finds it through the dialect's home."""

    def check_request(self, payload: Any, profile: Profile, report: Report) -> None: ...

    def check_response(self, payload: Any, profile: Profile, report: Report) -> None: ...

    def check_exchange(self, request: Any, response: Any, profile: Profile, report: Report, *,
                       streamed: bool) -> None:
        """What only the request and its response together show (`response` parsed, or reassembled
        from a stream); for a stream also the turn rules `check_response` applies to a JSON body."""


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def mentions(value: Any, word: str) -> bool:
    """Whether any string in `value`, at any depth, holds `word` (lower case), case-insensitively:
    OpenAI's json_object check reads every message's text, whatever part or role carries it. Data URLs
    carry no words (base64 may spell one by chance), so they are skipped."""
    stack = [value]
    seen = 0
    while stack and seen < 1_000_000:
        node = stack.pop()
        seen += 1
        if isinstance(node, str):
            if not node.startswith("data:") and word in node.lower():
                return True
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def readable(value: Any) -> bool:
    """Whether a list the rules pair or look names up in holds only objects (absent and null are
    readable: nothing). A hole of another type is the provider's first refusal and is reported where
    it is; what the list would have declared or answered is unknown, so verdicts that count on it (a
    tool_choice naming no tool, a result without its call) are not given."""
    return value is None or (isinstance(value, list) and all(isinstance(item, dict) for item in value))


def check_history(report: Report, rule: str, payload: dict[str, Any], key: str, what: str, why: str, *,
                  text: bool = False, one: bool = False) -> None:
    """A conversation history (`key`: Chat's messages, Responses' input, ...) of the wrong JSON type, or
    an item of it that is not an object: one finding at that place, at every endpoint, since servers
    compatible with a dialect parse its history the same way (the spec layer, which judges the rest of
    a request, is off for them). Absent and null are the spec's business. `text`: a string is a
    history too; `one`: so is a single object (Gemini reads one Content where a list is declared)."""
    value = payload.get(key)
    if value is None or (text and isinstance(value, str)) or (one and isinstance(value, dict)):
        return
    if not isinstance(value, list):
        report.add(rule, join("", key), f"{key} is {show_json(value)}, not a list of {what}s", why=why)
        return
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            report.add(rule, join("", key, index), f"{key} item is {show_json(item)}, not an object", why=why)


def short(value: Any, limit: int = 60) -> str:
    """A value quoted for a one-line message, cut to `limit` characters."""
    try:
        text = value if isinstance(value, str) else repr(value)
    except RecursionError:  # repr recurses once per level; orjson reads values 1024 levels deep
        text = f"{'[' if isinstance(value, list) else '{'}… nested too deeply to show"
    text = text.replace("\n", "\\n")
    return repr(text[:limit] + "…") if len(text) > limit else repr(text)


def show_json(value: Any, limit: int = 60) -> str:
    """A value as JSON text (null, 3, "text"), cut to `limit` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return short(value, limit)
    return text if len(text) <= limit else text[:limit] + "…"


def check_tool_exchange(request: Any, response: Any, report: Report, *, streamed: bool,
                        turn: Callable[[Any, Report], Any], declared: Callable[[dict[str, Any]], set[str]],
                        calls: Callable[[dict[str, Any]], list[tuple[str, Any]]]) -> None:
    """The pair rules of a tool-calling dialect, its parts given by its rules module: for a stream,
    the turn rules on what it reassembled to (`turn`); XL-16, every call in the response (`calls`:
    pointer of the name, name) names a tool the request declared (`declared`). A call without a
    name is each dialect's own rule (OC-26, OR-12, ...)."""
    if not isinstance(response, dict):
        return
    if streamed:
        turn(response, report)
    if not isinstance(request, dict):
        return
    offered = declared(request)
    listed = ", ".join(sorted(offered)[:5]) + (", …" if len(offered) > 5 else "")
    for pointer, name in calls(response):
        if isinstance(name, str) and name and name not in offered:
            report.add("XL-16", pointer, f"the response calls {short(name)}, which the request does not declare ("
                                         + (f"it declares {listed})" if offered else "it declares no tools)"))


def remember_name(report: Report, rule: str, names: dict[str, str], name: Any, pointer: str,
                  what: str = "tool name", verb: str = "declared") -> None:
    """Note where `name` is declared; a second declaration is reported with the first's place."""
    if not isinstance(name, str) or not name:
        return
    if name in names:
        report.add(rule, pointer, f"{what} {short(name)} is {verb} twice (first at {names[name]})")
    else:
        names[name] = pointer


def check_null_or_empty(report: Report, payload: dict[str, Any], key: str, base: str, rule: str,
                        *, empty: Severity = Severity.ERROR) -> bool:
    """Null (absent: info) and empty-list handling for an optional list field, `empty` the severity
    of an empty list: an error where the API needs an item, a warning where it is accepted but
    better omitted, info where it is accepted and means none. Returns True when the field holds a
    non-empty value worth checking further."""
    if key not in payload:
        return False
    value = payload[key]
    if value is None:
        report.add(rule, join(base, key), f"{key} is null; treated as absent", Severity.INFO)
        return False
    if isinstance(value, list) and not value:
        report.add(rule, join(base, key), f"{key} is an empty array; " + _EMPTY[empty], empty)
        return False
    return True


_EMPTY = {Severity.ERROR: "the API needs at least one item", Severity.WARNING: "omit it instead",
          Severity.INFO: "accepted, and read as none"}


def check_tool_name(report: Report, profile: Profile, name: Any, pointer: str, what: str, rule: str, *,
                    verb: str = "does not match", unnamed: tuple[str, str] | None = None) -> bool:
    """A dialect's tool-name rule (OC-02, OR-03, AN-02, GM-02) in declarations and history alike;
    False when it fired. `unnamed`: (rule, message) for a missing name where that is a defect of its
    own: a declaration degraded from a built-in tool (XL-09, seed 001), a call in a response (OC-26)."""
    if not isinstance(name, str) or not name:
        if unnamed is not None:
            report.add(unnamed[0], pointer, unnamed[1])
        else:
            report.add(rule, pointer, f"{what} has no name")
        return False
    if not profile.name_ok(name):
        reason = (f"is {len(name)} characters (max {profile.names.max})" if len(name) > profile.names.max
                  else f"{verb} {profile.names.text}")
        report.add(rule, pointer, f"{what} name {short(name)} {reason}")
        return False
    return True


def check_ranges(report: Report, rule: str, node: dict[str, Any], ranges: dict[str, Range],
                 fields: dict[str, tuple[str, ...]], base: str = "", *, dialect: Dialect | None = None) -> None:
    """Numbers outside the provider's range (a dialect home's `limits`), each where the request holds
    it; a value of another type is the schema's business, not the range's, and a value the API
    reads as "unset" (rules/tolerance.py) is no value at all."""
    for name, bounds in ranges.items():
        for key in fields.get(name, ()):
            value = node.get(key)
            if bounds.fit(value) != value and not (dialect is not None and tolerance.unset(dialect, key, value)):
                report.add(rule, join(base, key), f"{key} {value!r} is outside the accepted range "
                                                  f"({bounds.describe()})")
