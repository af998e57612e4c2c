"""Secrets never reach disk, exports or screenshots: every header list and query string that is
stored or shown passes through here first."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

REDACTED = "[redacted]"

SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie", "set-cookie",
     "x-toolwire-token", "x-toolwire-replay-auth"}  # the forwarder's own access token and replay proof
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


def redact_query_url(url: str) -> str:
    """A URL with secret query parameters redacted."""
    base, sep, query = url.partition("?")
    return base + sep + redact_query(query) if sep else url
