"""The dialects and how to tell them apart: from the request path (each home's `Paths`), or from a
payload's shape."""

from __future__ import annotations

import re
from enum import Enum
from functools import lru_cache
from typing import Any


class Dialect(str, Enum):
    OPENAI_CHAT = "openai-chat"
    OPENAI_RESPONSES = "openai-responses"
    ANTHROPIC = "anthropic"
    GEMINI = "gemini"
    MCP = "mcp"
    BEDROCK = "bedrock"


DIALECT_NAMES = [d.value for d in Dialect]

def from_path(path: str) -> Dialect | None:
    """Dialect of an HTTP request path (query string ignored); None when unknown. Each dialect's home
    says which paths it claims (`Paths.claims`), asked in `Dialect` order."""
    return _claimed(path.split("?", 1)[0].rstrip("/"))


# Asked several times per request (the hooks, the recorder, the analysis) of the few paths an agent
# uses: each home's claims are tried once per path.
@lru_cache(maxsize=1024)
def _claimed(path: str) -> Dialect | None:
    from .dialects import homes

    return next((each.dialect for each in homes() if each.paths.claims(path)), None)


@lru_cache(maxsize=1024)
def elsewhere(path: str) -> bool:
    """Whether the path is one a home disowns (`Paths.elsewhere`): its bodies are not to be read by shape."""
    from .dialects import homes

    return any(each.paths.elsewhere(path.split("?", 1)[0].rstrip("/")) for each in homes())


@lru_cache(maxsize=1024)  # asked of every response head, of the few paths an agent uses
def is_stream_path(path: str) -> bool:
    """Whether the path itself asks for a stream (Gemini's `:streamGenerateContent`)."""
    from .dialects import homes

    return any(each.paths.stream(path) for each in homes())


def asks_for_sse(query: str) -> bool:
    """Whether a Gemini stream request's query has `alt=sse` (servers split on & and ;); without
    it the stream is one JSON array."""
    return "alt=sse" in re.split("[&;]", query)


def is_server_push(method: str, path: str, accept: str) -> bool:
    """MCP's GET stream, on which the server may send requests and notifications at any time:
    idle by design, kept open for as long as the session lives."""
    return method == "GET" and from_path(path) is Dialect.MCP and "text/event-stream" in accept.lower()


def from_shape(payload: Any) -> Dialect | None:
    """Best guess from a request or response body alone (for files given to `check`): the dialect
    whose home finds its surest marks in it (`Home.marks`), None when none does."""
    if isinstance(payload, list):
        payload = next((p for p in payload if isinstance(p, dict)), None)
    if not isinstance(payload, dict):
        return None
    from .dialects import homes

    best, surest = None, 0
    for each in homes():
        sure = each.marks(payload)
        if sure > surest:
            best, surest = each.dialect, sure
    return best
