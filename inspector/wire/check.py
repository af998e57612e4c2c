"""The checker's front door: one call per kind of document, whatever the dialect."""

from __future__ import annotations

from typing import Any

from .dialect import Dialect
from .violations import Violation


def check_request(payload: Any, dialect: Dialect, profile: str | None = None) -> list[Violation]:
    """Violations in a request body (already parsed JSON)."""
    return []


def check_response(payload: Any, dialect: Dialect, profile: str | None = None) -> list[Violation]:
    """Violations in a non-streamed response body (already parsed JSON)."""
    return []


def check_stream(body: bytes, dialect: Dialect, profile: str | None = None) -> list[Violation]:
    """Violations in a streamed response body (raw bytes as relayed: SSE, or Gemini's stream)."""
    return []


def reassemble(body: bytes, dialect: Dialect) -> Any | None:
    """The final response object a client builds from a streamed body; None if it cannot."""
    return None
