"""What every rule module shares: the collector that turns a rule id and a place into a Violation,
and small accessors that never raise on a payload of the wrong shape."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..pointer import join
from ..profiles import Profile
from ..ranges import Range
from ..violations import Severity, Violation
from .catalogue import RULES


class Report:
    """Collects violations for one document. `where` is stamped on each (e.g. "stream")."""

    __slots__ = ("violations", "where")

    def __init__(self, where: str = "") -> None:
        self.violations: list[Violation] = []
        self.where = where

    def add(self, rule: str, pointer: str, message: str, severity: Severity | None = None,
            *, why: str = "", hint: str = "") -> None:
        info = RULES[rule]
        self.violations.append(Violation(rule, severity or info.severity, pointer, message,
                                         why or info.why, hint or info.hint, self.where))


@runtime_checkable
class DialectRules(Protocol):
    """What each dialect's rule module provides (dialects/<dialect>/rules.py); check.py finds it through the dialect's home."""

    def check_request(self, payload: Any, profile: Profile, report: Report) -> None: ...

    def check_response(self, payload: Any, profile: Profile, report: Report) -> None: ...


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def short(value: Any, limit: int = 60) -> str:
    """A value quoted for a one-line message, cut to `limit` characters."""
    try:
        text = value if isinstance(value, str) else repr(value)
    except RecursionError:  # repr recurses once per level; orjson reads values 1024 levels deep
        text = f"{'[' if isinstance(value, list) else '{'}… nested too deeply to show"
    text = text.replace("\n", "\\n")
    return repr(text[:limit] + "…") if len(text) > limit else repr(text)


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
                        *, empty_is_error: bool = True) -> bool:
    """Null (absent: info) and empty-list (error) handling for an optional list field. Returns True
    when the field holds a non-empty value worth checking further."""
    if key not in payload:
        return False
    value = payload[key]
    if value is None:
        report.add(rule, join(base, key), f"{key} is null; treated as absent", Severity.INFO)
        return False
    if isinstance(value, list) and not value:
        if empty_is_error:
            report.add(rule, join(base, key), f"{key} is an empty array; the API needs at least one item",
                       Severity.ERROR)
        else:
            report.add(rule, join(base, key), f"{key} is an empty array; omit it instead", Severity.WARNING)
        return False
    return True


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
                 fields: dict[str, tuple[str, ...]], base: str = "") -> None:
    """Numbers outside the provider's range (a dialect home's `limits`), each where the request holds
    it; a value of another type is the schema's business, not the range's."""
    for name, bounds in ranges.items():
        for key in fields.get(name, ()):
            value = node.get(key)
            if bounds.fit(value) != value:
                report.add(rule, join(base, key), f"{key} {value!r} is outside the accepted range "
                                                  f"({bounds.describe()})")
