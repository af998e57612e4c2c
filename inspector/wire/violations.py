"""The unit of every finding: one broken (or noteworthy) contract at one place in a payload."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum


class Severity(str, Enum):
    """How bad a finding is (docs/rules.md): error = the provider rejects it, warning = accepted
    but information is lost or changed, info = a normalisation the inspector must know."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


@dataclass(frozen=True, slots=True)
class Violation:
    rule: str  # stable id in the catalogue (docs/rules.md), e.g. "OC-05"
    severity: Severity
    pointer: str  # RFC 6901 JSON pointer into the payload ("" is the whole document)
    message: str  # one line: what is wrong here
    why: str = ""  # why the provider rejects it, or what is lost
    hint: str = ""  # how to fix it
    # Where the payload lives when a check spans several documents (e.g. "request", "response",
    # "stream", or a flow id in session rules). Empty for single-payload checks.
    where: str = ""

    def to_dict(self) -> dict[str, str]:
        data = asdict(self)
        data["severity"] = self.severity.value
        return data


def count_by_severity(violations: list[Violation]) -> tuple[int, int, int]:
    """(errors, warnings, infos)."""
    errors = sum(1 for v in violations if v.severity is Severity.ERROR)
    warnings = sum(1 for v in violations if v.severity is Severity.WARNING)
    return errors, warnings, len(violations) - errors - warnings
