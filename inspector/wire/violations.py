"""The unit of every finding: one broken (or noteworthy) contract at one place in a payload."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum


class Severity(str, Enum):
    """How bad a finding is (docs/rules.md): error = the provider rejects it (or, in a response, the
    client cannot use it), warning = accepted but information is lost or changed, info = a
    normalisation the inspector must know. What exactly happens is the finding's `Effect`."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


class Effect(str, Enum):
    """What the provider does with what a finding describes (for a response or a stream: what the
    client reading it gets). Shown with every finding beside its severity, which says how much it
    matters; the effect says what happens."""

    REJECTS = "rejects"  # the provider answers 4xx: the turn never runs
    MAY_REJECT = "may reject"  # accepted here; other endpoints, models or profiles reject it (the why names them)
    IGNORES = "ignores"  # accepted; the value has no effect (read as absent, dropped)
    CHANGES = "changes"  # accepted, but read differently from what was meant (merged, one of two, lost)
    ACCEPTS = "accepts"  # accepted as meant: a fact whoever reads or bridges the traffic must know
    BREAKS_CLIENT = "breaks client"  # a response the client's SDK or agent loop misreads or fails on


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
    effect: Effect = Effect.REJECTS  # what the provider does (the rule's effect at this severity)

    def to_dict(self) -> dict[str, str]:
        data = asdict(self)
        data["severity"] = self.severity.value
        data["effect"] = self.effect.value
        return data


def count_by_severity(violations: list[Violation]) -> tuple[int, int, int]:
    """(errors, warnings, infos)."""
    errors = sum(1 for v in violations if v.severity is Severity.ERROR)
    warnings = sum(1 for v in violations if v.severity is Severity.WARNING)
    return errors, warnings, len(violations) - errors - warnings
