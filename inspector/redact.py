"""Secrets never reach disk, exports or screenshots: every header list and query string that is
stored or shown passes through here first."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

REDACTED = "[redacted]"

SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie", "set-cookie"}
)
SECRET_QUERY_KEYS = frozenset({"key", "api_key", "api-key", "access_token"})


def redact_headers(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name, REDACTED if name.lower() in SECRET_HEADERS else value) for name, value in headers]


def redact_query(query: str) -> str:
    if not query:
        return query
    pairs = parse_qsl(query, keep_blank_values=True)
    if not any(k.lower() in SECRET_QUERY_KEYS for k, _ in pairs):
        return query
    return urlencode([(k, REDACTED if k.lower() in SECRET_QUERY_KEYS else v) for k, v in pairs], safe="[]")


def secret_values(headers: list[tuple[str, str]], query: str = "") -> list[str]:
    """The secret strings themselves (kept only in memory, e.g. to scrub them from bodies)."""
    values = [v for k, v in headers if k.lower() in SECRET_HEADERS and v]
    for k, v in parse_qsl(query, keep_blank_values=True):
        if k.lower() in SECRET_QUERY_KEYS and v:
            values.append(v)
    # "Bearer sk-…": the token alone may appear elsewhere too.
    values += [v.split(" ", 1)[1] for v in values if v.lower().startswith("bearer ") and " " in v]
    return values
