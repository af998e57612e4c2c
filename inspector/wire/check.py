"""The checker's front door: one call per kind of document, whatever the dialect.

Pure and total: any JSON value (or any bytes, for streams) gives a list of violations, never an
exception. Payloads are read in place (no copies) and every list is walked once."""

from __future__ import annotations

from typing import Any

from . import profiles
from .dialect import Dialect
from .profiles import Profile
from .rules import openai_chat
from .rules.base import Report
from .violations import Violation

_RULES = {
    Dialect.OPENAI_CHAT: openai_chat,
}


def check_request(payload: Any, dialect: Dialect | str, profile: str | Profile | None = None) -> list[Violation]:
    """Violations in a request body (already parsed JSON)."""
    dialect = Dialect(dialect)
    report = Report()
    module = _RULES.get(dialect)
    if module is not None:
        module.check_request(payload, profiles.get(profile, dialect), report)
    return report.violations


def check_response(payload: Any, dialect: Dialect | str, profile: str | Profile | None = None) -> list[Violation]:
    """Violations in a non-streamed response body (already parsed JSON)."""
    dialect = Dialect(dialect)
    report = Report()
    module = _RULES.get(dialect)
    if module is not None:
        module.check_response(payload, profiles.get(profile, dialect), report)
    return report.violations


def check_stream(body: bytes, dialect: Dialect | str, profile: str | Profile | None = None) -> list[Violation]:
    """Violations in a streamed response body (raw bytes as relayed: SSE, or Gemini's stream)."""
    return []


def reassemble(body: bytes, dialect: Dialect | str) -> Any | None:
    """The final response object a client builds from a streamed body; None if it cannot."""
    return None
