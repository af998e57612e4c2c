"""Secrets never reach disk, exports or screenshots. Two nets, both applied by `redacted()` to
every flow before it is stored or exported:

- by name: the headers, query parameters and URL userinfo that carry credentials read `[redacted]`;
- by value: every credential a request carried (`Flow.secrets`, filled by the forwarder, plus the
  key fields of its JSON body) is replaced wherever it shows up again: an upstream error body
  that echoes the key, a stream, aiohttp's error text quoting the URL, a note."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from dataclasses import replace
from urllib.parse import unquote, unquote_plus

import orjson

from .flow import Chunk, Flow

REDACTED = "[redacted]"
_REDACTED_BYTES = REDACTED.encode()
# In a URL's userinfo brackets would read as an IPv6 host to every URL parser; pip's marker instead.
REDACTED_USERINFO = "****"
# Shorter values are not scrubbed by value: they would mangle ordinary text, and are no keys.
MIN_SECRET = 8

SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie", "set-cookie",
    # AI gateways' own keys, AWS session credentials, and MCP session ids (whoever holds one speaks
    # in that session).
    "helicone-auth", "cf-aig-authorization", "x-portkey-api-key", "x-amz-security-token", "mcp-session-id",
    # The forwarder's own access token and replay proof.
    "x-toolwire-token", "x-toolwire-replay-auth",
})
SECRET_QUERY_KEYS = frozenset({"key", "api_key", "api-key", "access_token", "token"})
# JSON body fields that hold a key (proxies such as LiteLLM take `api_key` in the body). Their value
# is scrubbed from every stored copy; the upstream still gets the body as the client sent it.
SECRET_BODY_KEYS = frozenset({"api_key", "apikey", "api-key", "access_token", "client_secret"})
_BODY_KEY_MARKS = tuple(f'"{key}"'.encode() for key in SECRET_BODY_KEYS)
_QUERY_SEPARATOR = re.compile(r"([&;])")  # servers split on both (`?alt=sse;key=...`)


def redact_headers(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name, REDACTED if name.lower() in SECRET_HEADERS else value) for name, value in headers]


def query_pairs(query: str) -> list[tuple[str, str]]:
    """(name, value) of each parameter, decoded, split on `&` and `;`."""
    pairs = []
    for part in _QUERY_SEPARATOR.split(query)[::2]:
        if part:
            name, _, value = part.partition("=")
            pairs.append((unquote_plus(name), unquote_plus(value)))
    return pairs


def redact_query(query: str) -> str:
    """The query as sent, but for the values of secret parameters."""
    if not query:
        return query
    parts = _QUERY_SEPARATOR.split(query)
    for index in range(0, len(parts), 2):
        name, equals, _ = parts[index].partition("=")
        if equals and unquote_plus(name).lower() in SECRET_QUERY_KEYS:
            parts[index] = f"{name}={REDACTED}"
    return "".join(parts)


def _split_url(url: str) -> tuple[str, str, str, str]:
    """(scheme://, userinfo, host and path, ?query) of an absolute URL or of a path?query."""
    scheme, sep, rest = ("", "", url) if url.startswith("/") else url.partition("://")
    if not sep:
        scheme, rest = "", url
    else:
        scheme += sep
    rest, mark, query = rest.partition("?")
    userinfo = ""
    if sep:
        authority_end = len(rest.split("/", 1)[0].split("#", 1)[0])
        userinfo, at, host = rest[:authority_end].rpartition("@")
        if at:
            rest = host + rest[authority_end:]
    return scheme, userinfo, rest, mark + query


def redact_url(url: str) -> str:
    """`url` with the password (or a lone token) of its userinfo and its secret query values redacted."""
    scheme, userinfo, rest, query = _split_url(url)
    if userinfo:
        user, colon, _ = userinfo.partition(":")
        rest = (f"{user}:{REDACTED_USERINFO}" if colon else REDACTED_USERINFO) + "@" + rest
    return scheme + rest + (f"?{redact_query(query[1:])}" if query else "")


def strip_userinfo(url: str) -> str:
    """`url` without its userinfo, which the forwarder sends as a header instead (see `basic_auth`)."""
    scheme, _, rest, query = _split_url(url)
    return scheme + rest + query


def basic_auth(url: str) -> str | None:
    """The `Authorization` value for the userinfo of `url` (`https://user:pass@host`), if any."""
    userinfo = _split_url(url)[1]
    if not userinfo:
        return None
    user, _, password = userinfo.partition(":")
    return "Basic " + base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")


def secret_values(headers: list[tuple[str, str]], query: str = "", url: str = "") -> tuple[str, ...]:
    """Every credential value in a request's secret headers, secret query parameters and URL
    userinfo, as sent and decoded: what `redacted()` scrubs by value."""
    found: list[str] = []
    for name, value in headers:
        lower = name.lower()
        if lower not in SECRET_HEADERS:
            continue
        found.append(value)
        if lower == "cookie":
            found += [part.partition("=")[2].strip() for part in value.split(";")]
        else:
            found.append(value.partition(" ")[2].strip())  # the token of `Bearer <token>`
    for part in _QUERY_SEPARATOR.split(query)[::2]:
        name, equals, value = part.partition("=")
        if equals and unquote_plus(name).lower() in SECRET_QUERY_KEYS:
            found += [unquote_plus(value), value]
    userinfo = _split_url(url)[1] if url else ""
    if userinfo:
        user, colon, password = userinfo.partition(":")
        secret = password if colon else user
        found += [unquote(secret), secret]
    return tuple(value for value in dict.fromkeys(found) if len(value) >= MIN_SECRET)


def body_secrets(body: bytes | None) -> list[str]:
    """The values of secret fields (`SECRET_BODY_KEYS`, names as written) anywhere in a JSON body,
    decoded and JSON-escaped."""
    if not body or not any(mark in body for mark in _BODY_KEY_MARKS):
        return []
    try:
        stack = [orjson.loads(body)]
    except orjson.JSONDecodeError:
        return []
    found: list[str] = []
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, str) and key in SECRET_BODY_KEYS:
                    found += [item, orjson.dumps(item).decode()[1:-1]]
                else:
                    stack.append(item)
        elif isinstance(value, list):
            stack.extend(value)
    return found


class Scrubber:
    """Replaces every occurrence of the given values, longest first, by `[redacted]`."""

    def __init__(self, values: Iterable[str]) -> None:
        self.texts = sorted({value for value in values if len(value) >= MIN_SECRET}, key=len, reverse=True)
        raw: dict[bytes, None] = {}
        for text in self.texts:
            raw[text.encode("utf-8", "surrogateescape")] = None
            try:  # header values are bytes read as latin-1
                raw[text.encode("latin-1")] = None
            except UnicodeEncodeError:
                pass
        self.raw = sorted(raw, key=len, reverse=True)
        self._text = re.compile("|".join(map(re.escape, self.texts))) if self.texts else None
        self._bytes = re.compile(b"|".join(map(re.escape, self.raw))) if self.raw else None

    def text(self, text: str | None) -> str | None:
        if not text or self._text is None or not any(secret in text for secret in self.texts):
            return text
        return self._text.sub(REDACTED, text)

    def data(self, data: bytes | None) -> bytes | None:
        if not data or self._bytes is None or not any(secret in data for secret in self.raw):
            return data
        return self._bytes.sub(_REDACTED_BYTES, data)

    def headers(self, headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
        named = redact_headers(headers)
        if self._text is None:  # most flows: nothing to look for by value
            return named
        return [(name, self.text(value)) for name, value in named]  # type: ignore[misc]

    def chunks(self, chunks: list[Chunk]) -> list[Chunk]:
        """Chunks scrubbed as one text, so that a secret cut across chunks goes too: its marker
        lands in the chunk where it began. The chunks still add up to the scrubbed body."""
        if self._bytes is None:
            return chunks
        joined = b"".join(chunk.data for chunk in chunks)
        if not any(secret in joined for secret in self.raw):
            return chunks
        spans = [match.span() for match in self._bytes.finditer(joined)]
        scrubbed, end, consumed, index = [], 0, 0, 0
        for chunk in chunks:
            end += len(chunk.data)
            parts = []
            while index < len(spans) and spans[index][0] < end:
                begin, finish = spans[index]
                parts += [joined[consumed:begin], _REDACTED_BYTES]
                consumed, index = finish, index + 1
            if consumed < end:
                parts.append(joined[consumed:end])
                consumed = end
            scrubbed.append(Chunk(chunk.t, b"".join(parts)))
        return scrubbed

    def fragment(self, data: bytes) -> bytes:
        """`data` scrubbed on its own, when it is one piece of a longer text whose other pieces are
        written apart (a stream's chunks persisted as they arrive): besides every whole secret, a
        piece of a secret cut at either end of `data`, or a piece lying wholly inside a secret, goes
        too. Pieces shorter than `_FRAGMENT` bytes are left: they tell nothing of the secret."""
        if self._bytes is None:
            return data
        data = self.data(data) or data
        for secret in self.raw:
            if len(data) >= _FRAGMENT and data in secret:
                return _REDACTED_BYTES
            for size in range(min(len(secret), len(data)) - 1, _FRAGMENT - 1, -1):
                if data.endswith(secret[:size]):
                    data = data[:-size] + _REDACTED_BYTES
                    break
            for size in range(min(len(secret), len(data)) - 1, _FRAGMENT - 1, -1):
                if data.startswith(secret[-size:]):
                    data = _REDACTED_BYTES + data[size:]
                    break
        return data


_FRAGMENT = 4


def scrubber(flow: Flow) -> Scrubber:
    """The scrubber of every secret value `flow`'s request carried (its credentials and the key
    fields of its JSON bodies)."""
    return Scrubber([*flow.secrets, *body_secrets(flow.request_body), *body_secrets(flow.upstream_request_body)])


def redacted(flow: Flow, *, request_only: bool = False) -> Flow:
    """A copy of `flow` fit to leave memory: secrets redacted by name and scrubbed by value, and
    `secrets` emptied. `request_only` leaves the response side as it is, unread (a pending flow's
    response is still being filled in by the forwarder)."""
    scrub = scrubber(flow)
    clean = replace(
        flow, path=scrub.text(flow.path), query=scrub.text(redact_query(flow.query)),
        request_headers=scrub.headers(flow.request_headers), request_body=scrub.data(flow.request_body),
        upstream_url=scrub.text(redact_url(flow.upstream_url)),
        upstream_request_headers=scrub.headers(flow.upstream_request_headers),
        upstream_request_body=scrub.data(flow.upstream_request_body), notes=[scrub.text(n) for n in flow.notes],
        secrets=(),
    )
    if request_only:
        return clean
    return replace(
        clean, response_headers=scrub.headers(flow.response_headers),
        upstream_response_body=scrub.data(flow.upstream_response_body), response_body=scrub.data(flow.response_body),
        chunks=scrub.chunks(flow.chunks), error=scrub.text(flow.error),
    )
