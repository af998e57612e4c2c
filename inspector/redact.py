"""Secrets never reach disk, exports or screenshots. Three nets, all applied by `redacted()` to
every flow before it is stored or exported:

- by name: the headers whose names say credential (`credential_name`), the query parameters and
  the form or JSON fields of requests and responses that carry one (`SECRET_FIELDS`; OAuth's `code`
  and `assertion` only in an OAuth-shaped body), and URL userinfo passwords read `[redacted]`;
- by shape: the tokens providers issue in a recognisable form (`sk-…`, `ghp_…`, `xoxb-…`, `AKIA…`,
  `AIza…`, JWTs, Slack webhooks) and userinfo passwords, in any text;
- by value: every credential the flow carried (`Flow.secrets`, filled by the forwarder or
  mcp-stdio, plus each value the first net found, in a request or a response) is replaced wherever
  it shows up again: an upstream error body that echoes the key, a stream, aiohttp's error text
  quoting the URL, a note.

Bodies without a secret are kept byte for byte, and the cost stays small on the store's writer
thread: each net is a scan for a literal first (C speed), and a match is confirmed only there."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any, overload
from urllib.parse import quote, unquote, unquote_plus

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
# The words that make a header, an environment variable or a command-line option name a credential
# (`X-Auth-Token`, `GITHUB_PAT`, `--api-key`): whole words, so that `x-ratelimit-remaining-tokens`,
# `MAX_TOKENS`, `GIT_AUTHOR_NAME` and `KEYBOARD_LAYOUT` are not.
_CREDENTIAL_WORDS = frozenset({
    "token", "secret", "secrets", "password", "passwd", "pass", "passphrase", "auth", "authorization",
    "credential", "credentials", "apikey", "cookie", "pat", "webhook", "dsn", "jwt",
})
_CREDENTIAL_ENDINGS = ("token", "secret", "password", "apikey")  # camelCase and run-together: accessToken
# `key` is a credential (`STRIPE_KEY`, `Ocp-Apim-Subscription-Key`) unless the word before it says it
# names something else (`Idempotency-Key`, `Sec-WebSocket-Key`).
_PLAIN_KEYS = frozenset({"idempotency", "websocket", "cache", "public", "primary", "sort", "partition"})
# A name ending so holds where the credential is, or a fact about it, not the credential itself.
_ABOUT_A_CREDENTIAL = frozenset({"file", "path", "dir", "name", "id", "count", "type", "sock", "url_env"})
_NAME_WORDS = re.compile(r"[-_.\s]+")
# JSON, form and query fields that hold a credential, written in any case and with `_`, `-` or
# nothing between the words (`access_token`, `accessToken`, `refresh-token`). Not `token` or `key`
# alone: logprobs carry `{"token": "Hello"}`, MCP `progressToken`, tools `{"key": …}`.
SECRET_FIELDS = (
    "api_key", "access_token", "refresh_token", "id_token", "client_secret", "client_assertion", "code_verifier",
    "password", "passwd", "secret", "private_key", "subject_token", "actor_token", "device_code", "auth_token",
    "session_token", "api_token", "bearer_token", "secret_key", "secret_access_key", "aws_secret_access_key",
    "aws_session_token",
)
# OAuth's authorization code and JWT-bearer assertion: credentials in a token request (a body with
# `grant_type`, RFC 6749 4.1.3 and RFC 7523) or an authorization response (`code` with `state`),
# ordinary words elsewhere (`{"code": 400}`, `{"code": "invalid_api_key"}`, a tool's `code` argument).
OAUTH_FIELDS = ("code", "assertion")
_FIELDS = frozenset(name.replace("_", "") for name in SECRET_FIELDS)
_OAUTH = frozenset(OAUTH_FIELDS)


def _field_names(names: Iterable[str]) -> bytes:
    return b"|".join(re.escape(name).encode().replace(b"_", b"[-_]?") for name in sorted(names, key=len, reverse=True))


@lru_cache(maxsize=4096)
def credential_name(name: str) -> bool:
    """Whether a header, environment variable or option name says its value is a credential."""
    words = [word for word in _NAME_WORDS.split(name.lower()) if word]
    if not words or words[-1] in _ABOUT_A_CREDENTIAL:
        return False
    for index, word in enumerate(words):
        if word in _CREDENTIAL_WORDS or word.endswith(_CREDENTIAL_ENDINGS):
            return True
        if word in ("key", "keys") and (index == 0 or words[index - 1] not in _PLAIN_KEYS):
            return True
    return False


@lru_cache(maxsize=1024)  # asked of every header of every flow written; a client's header names are few
def secret_header(name: str) -> bool:
    return name.lower() in SECRET_HEADERS or credential_name(name)


def secret_field(name: str, *, oauth: bool = False) -> bool:
    """Whether a JSON, form or query field of that name holds a credential (`oauth`: in an
    OAuth-shaped body or query, where `code` and `assertion` do too)."""
    normal = name.lower().replace("_", "").replace("-", "")
    return normal in _FIELDS or (oauth and normal in _OAUTH)


def secret_query_key(name: str, *, oauth: bool = False) -> bool:
    return name.lower() in SECRET_QUERY_KEYS or secret_field(name, oauth=oauth)


def _oauth_shaped(names: Iterable[str]) -> bool:
    seen = {name.lower() for name in names}
    return "grant_type" in seen or {"code", "state"} <= seen


_QUERY_SEPARATOR = re.compile(r"([&;])")  # servers split on both (`?alt=sse;key=...`)


# A browser's WebSocket cannot set headers, so OpenAI Realtime takes the key (often an ephemeral
# client secret, of no known shape) from the subprotocols: `realtime, openai-insecure-api-key.<key>`.
_KEY_SUBPROTOCOL = "openai-insecure-api-key."


def subprotocol_secrets(value: str) -> list[str]:
    """The credentials in a Sec-WebSocket-Protocol value."""
    return [token[len(_KEY_SUBPROTOCOL):] for token in (part.strip() for part in value.split(","))
            if token.lower().startswith(_KEY_SUBPROTOCOL)]


def _redact_subprotocols(value: str) -> str:
    return ", ".join(_KEY_SUBPROTOCOL + REDACTED if token.lower().startswith(_KEY_SUBPROTOCOL) else token
                     for token in (part.strip() for part in value.split(",")))


def redact_headers(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name, REDACTED if secret_header(name) else _redact_subprotocols(value)
             if name.lower() == "sec-websocket-protocol" and _KEY_SUBPROTOCOL in value.lower() else value)
            for name, value in headers]


def query_pairs(query: str) -> list[tuple[str, str]]:
    """(name, value) of each parameter, decoded, split on `&` and `;`."""
    pairs = []
    for part in _QUERY_SEPARATOR.split(query)[::2]:
        if part:
            name, _, value = part.partition("=")
            pairs.append((unquote_plus(name), unquote_plus(value)))
    return pairs


def redact_query(query: str) -> str:
    """The query (or form body) as sent, but for the values of secret parameters."""
    if not query:
        return query
    parts = _QUERY_SEPARATOR.split(query)
    oauth = _oauth_shaped(name for name, _ in query_pairs(query))
    for index in range(0, len(parts), 2):
        name, equals, _ = parts[index].partition("=")
        if equals and secret_query_key(unquote_plus(name), oauth=oauth):
            parts[index] = f"{name}={REDACTED}"
    return "".join(parts)


def query_secrets(query: str) -> list[str]:
    """The values of a query's (or form body's) secret parameters, as sent and decoded."""
    if not query:
        return []  # most requests: asked of every one
    pairs = [part.partition("=") for part in _QUERY_SEPARATOR.split(query)[::2]]
    oauth = _oauth_shaped(unquote_plus(name) for name, _, _ in pairs)
    found: list[str] = []
    for name, equals, value in pairs:
        if equals and secret_query_key(unquote_plus(name), oauth=oauth):
            found += [unquote_plus(value), value]
    return found


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
        if lower == "sec-websocket-protocol":
            found += subprotocol_secrets(value)
            continue
        if not secret_header(name):
            continue
        found.append(value)
        if lower == "cookie":
            found += [part.partition("=")[2].strip() for part in value.split(";")]
        else:
            found.append(value.partition(" ")[2].strip())  # the token of `Bearer <token>`
    found += query_secrets(query)
    userinfo = _split_url(url)[1] if url else ""
    if userinfo:
        user, colon, password = userinfo.partition(":")
        secret = password if colon else user
        found += [unquote(secret), secret]
    return tuple(value for value in dict.fromkeys(found) if len(value) >= MIN_SECRET)


# -- the nets over a body or a text ---------------------------------------------------------------

_USERINFO = REDACTED_USERINFO.encode()
_JSON_VALUE_0 = rb'(?:[^"\\]|\\.)*'
# A string inside a JSON string (a tool call's `arguments`): its quotes and escapes escaped once more.
_JSON_VALUE_1 = rb'(?:[^"\\]|\\[^"\\]|\\\\\\["\\]|\\\\[^"\\])*'


def _json_fields(names: bytes, end: bytes = b"") -> re.Pattern[bytes]:
    """The secret fields `names` with their values; `end` (`\\Z`): a field whose value is still open
    where the text ends, which may end inside an escape (a value's pattern wants the whole escape:
    one cut after its backslash was not open, and its start was written as it came)."""
    # Starts with the quote of the name, a literal: the engine skips to each quote at C speed.
    close0, close1 = (b"", b"") if end else (b'"', b'\\\\"')
    cut0, cut1 = (rb"\\?", rb"\\{0,3}") if end else (b"", b"")  # the start of an escape (of one escaped again)
    return re.compile(rb'"(?:' + names + rb')(?:"\s*:\s*"(?P<v0>' + _JSON_VALUE_0 + cut0 + rb')' + close0
                      + rb'|\\"\s*:\s*\\"(?P<v1>' + _JSON_VALUE_1 + cut1 + rb')' + close1 + rb')' + end, re.IGNORECASE)


_FIELD_NAMES = _field_names(SECRET_FIELDS)
_OAUTH_NAMES = _field_names((*SECRET_FIELDS, *OAUTH_FIELDS))
_JSON_FIELD = _json_fields(_FIELD_NAMES)
_OAUTH_JSON_FIELD = _json_fields(_OAUTH_NAMES)
_OAUTH_JSON = re.compile(rb'\\?"grant_type\\?"\s*:', re.IGNORECASE)
# How the name of every secret field ends, as JSON writes it (`access_token"`, `apiKey"`, `\"password\"`):
# the field regex, which stops at every quote, runs only on a body that has one of them. `tokens"`
# (`max_tokens`) is not one.
_FIELD_MARKS = (b'oken"', b'oken\\"', b'ey"', b'ey\\"', b"ecret", b"assw", b"ssertion", b"erifier", b'ode"', b'ode\\"',
                b'OKEN"', b'EY"', b"ECRET", b"ASSW")
_FORM_FIELD = re.compile(rb"(?:^|(?<=[&;]))([^&;=]*)=([^&;]*)")
# Token shapes, each behind a literal of its own (one alternation of them all would make the engine
# try every byte: 70 ms for 2 MB against 2 ms for one literal). A match counts where it starts a word.
_SHAPES = tuple(re.compile(pattern) for pattern in (
    rb"sk[-_](?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{16,}",  # OpenAI sk-/sk-proj-, Anthropic sk-ant-, Stripe sk_live_
    rb"g(?:h[pousr]_[A-Za-z0-9]{30,}|ithub_pat_[A-Za-z0-9_]{40,})",  # GitHub
    rb"xox[bpasr]-[A-Za-z0-9-]{10,}",  # Slack
    rb"A(?:[KS]IA[0-9A-Z]{16}|Iza[0-9A-Za-z_-]{35})",  # AWS access key ids, Google API keys
    rb"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",  # JWTs: two base64url JSON objects
))


def _url_nets(slash: bytes, open_end: bool) -> re.Pattern[bytes]:
    """A URL's userinfo password or Slack webhook path, after its scheme's `:` and two `slash`es
    (`/`, or `\\/` as a JSON writer that escapes slashes writes them); `open_end`: one still open where
    the text ends (see _open_tails)."""
    hook = rb"[A-Za-z0-9_/-]" if slash == b"/" else rb"[A-Za-z0-9_/\\-]"
    kinds = rb"[a-z]+" if open_end else rb"(?:services|workflows|triggers)"
    more, end = (b"*", rb"\Z") if open_end else (b"+", b"")
    at = b"" if open_end else b"@"
    return re.compile(rb":" + re.escape(slash * 2) + rb"(?:hooks\.slack\.com" + re.escape(slash) + kinds + re.escape(slash)
                      + rb"(?P<hook>" + hook + more + rb")|[^\s/?#@:\"'<>\\]*:(?P<pw>[^\s/?#@\"'<>\\]" + more + rb")"
                      + at + rb")" + end)


# By the `://` that each begins with (searched for first: few bodies have one).
_URL_SECRETS = tuple((slash * 2, _url_nets(slash, False)) for slash in (b"/", b"\\/"))
# What a piece of a stream may end with while the secret goes on in the next piece: an open secret
# field, the start of a token, a URL's open userinfo password. See _open_tails.
_OPEN_FIELD = _json_fields(_FIELD_NAMES, rb"\Z")
_OPEN_TOKEN = re.compile(rb"(?<![A-Za-z0-9])(?P<v>(?:sk[-_]|gh[pousr]_|github_pat_|xox[bpasr]-|A[KS]IA|AIza|eyJ)"
                         rb"[A-Za-z0-9_.-]*)\Z")
_OPEN_URLS = tuple((slash * 2, _url_nets(slash, True)) for slash in (b"/", b"\\/"))
_CONTEXT = 8192  # bytes of a stream before a piece that a secret running into the piece may start in
_ALNUM_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_ALNUM = frozenset(_ALNUM_BYTES)
_TOKEN_BYTES = _ALNUM_BYTES + b"_.-"  # what _OPEN_TOKEN's runs are made of

_Span = tuple[int, int, bytes]  # [start, end) of a secret and what stands in its place


def _group_spans(match: re.Match[bytes], spans: list[_Span], values: list[bytes]) -> None:
    for group in match.re.groupindex:
        start, end = match.span(group)
        if start < 0:
            continue
        spans.append((start, end, _USERINFO if group == "pw" else _REDACTED_BYTES))
        values.append(match.group(group))


def _field_quotes(data: bytes) -> list[int]:
    """Where a secret JSON field of `data` may begin: the quote before each name that ends as one
    does (a search for a literal runs at C speed; the field pattern tried at every quote of a 2 MB
    body would cost ten times more)."""
    quotes: dict[int, None] = {}
    for mark in _FIELD_MARKS:
        at = data.find(mark)
        while at >= 0:
            quote_at = data.rfind(b'"', max(0, at - _LONGEST_NAME), at)
            if quote_at >= 0:
                quotes[quote_at] = None
            at = data.find(mark, at + 1)
    return list(quotes)


def _field_matches(data: bytes, fields: re.Pattern[bytes], quotes: list[int] | None = None) -> list[re.Match[bytes]]:
    """The matches of `fields` at `quotes` (default: _field_quotes(data))."""
    return [match for quote_at in (_field_quotes(data) if quotes is None else quotes)
            if (match := fields.match(data, quote_at)) is not None]


_LONGEST_NAME = max(map(len, SECRET_FIELDS)) + 8


def _open_tails(window: bytes, quotes: list[int] | None = None) -> list[re.Match[bytes]]:
    """Where `window` ends in a secret that may go on past it. Each net is tried only where a match
    can start: an open field at the names that end as a secret field's does (as in a scan; `quotes`:
    _field_quotes(window), when they are known), a token in the run of token bytes the window ends
    with. Searched for over the whole window, the first two cost 90 µs per 2 KB, on every
    stream-progress write of every open stream."""
    found = _field_matches(window, _OPEN_FIELD, quotes) if b'"' in window else []
    run = len(window.rstrip(_TOKEN_BYTES))  # where the last run of token bytes starts
    if run < len(window):
        token = _OPEN_TOKEN.search(window, run)  # the byte before `run` is none of them: the lookbehind holds
        if token is not None:
            found.append(token)
    for slashes, net in _OPEN_URLS:
        if b":" + slashes in window:
            url = net.search(window)
            if url is not None:
                found.append(url)
    return found


def scan(data: bytes, *, form: bool = False, quotes: list[int] | None = None) -> tuple[list[_Span], list[bytes]]:
    """Where `data` holds a secret by name or by shape, and the secrets found (to scrub by value
    wherever else they show up). `form`: the body is `application/x-www-form-urlencoded`;
    `quotes`: _field_quotes(data), when they are known."""
    spans: list[_Span] = []
    values: list[bytes] = []
    if not data:
        return spans, values
    if b'"' in data:  # every secret field's match starts at the quote of its name
        fields = _OAUTH_JSON_FIELD if b"grant_type" in data and _OAUTH_JSON.search(data) else _JSON_FIELD
        for match in _field_matches(data, fields, quotes):
            _group_spans(match, spans, values)
    if form and b"=" in data:
        pairs = [(match, unquote_plus(match.group(1).decode("latin-1"))) for match in _FORM_FIELD.finditer(data)]
        oauth = _oauth_shaped(name for _, name in pairs)
        for match, name in pairs:
            if secret_query_key(name, oauth=oauth):
                spans.append((*match.span(2), _REDACTED_BYTES))
                values += [match.group(2), unquote_plus(match.group(2).decode("latin-1")).encode("latin-1", "replace")]
    for shape in _SHAPES:
        for match in shape.finditer(data):
            start = match.start()
            if start == 0 or data[start - 1] not in _ALNUM:
                spans.append((start, match.end(), _REDACTED_BYTES))
                values.append(match.group())
    for slashes, net in _URL_SECRETS:
        if b":" + slashes in data:
            for match in net.finditer(data):
                _group_spans(match, spans, values)
    return spans, values


# Short texts in which the nets found nothing. Header values, paths and URLs repeat flow after
# flow, and `scan` is a function of its input alone, so each is scanned once (by value they are
# still scrubbed per flow). Only what holds no secret by name or shape is kept.
_CLEAN: dict[bytes, None] = {}
_CLEAN_LONGEST, _CLEAN_MOST = 512, 4096


def _text_spans(data: bytes) -> list[_Span]:
    """`scan(data)`'s spans, from _CLEAN when `data` is a short text known to hold none."""
    if data in _CLEAN:
        return []
    spans = scan(data)[0]
    if not spans and len(data) <= _CLEAN_LONGEST:
        if len(_CLEAN) >= _CLEAN_MOST:
            _CLEAN.clear()
        _CLEAN[data] = None
    return spans


def _apply(data: bytes, spans: list[_Span]) -> bytes:
    """`data` with each span replaced; of overlapping spans the one starting first stands for both."""
    if not spans:
        return data
    parts, end = [], 0
    for start, finish, marker in sorted(spans, key=lambda span: (span[0], -span[1], span[2] != _USERINFO)):
        if finish <= end:
            continue
        if start >= end:
            parts += [data[end:start], marker]
        end = finish
    parts.append(data[end:])
    return b"".join(parts)


@lru_cache(maxsize=1024)  # an agent sends the same key on every request: its forms are worked out once
def _forms(value: str | bytes) -> tuple[bytes, ...]:
    """A secret as it may be written: as is, JSON-escaped, percent-encoded (and decoded), those
    long enough to be scrubbed."""
    text = value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value
    forms = {text, orjson.dumps(text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")).decode()[1:-1],
             quote(text, safe=""), unquote(text)}
    found = []
    for form in forms:
        found.append(form.encode("utf-8", "surrogateescape"))
        try:  # header values are bytes read as latin-1
            found.append(form.encode("latin-1"))
        except UnicodeEncodeError:
            pass
    return tuple(form for form in found if len(form) >= MIN_SECRET)


@lru_cache(maxsize=256)
def _net(raw: frozenset[bytes]) -> tuple[tuple[bytes, ...], re.Pattern[bytes] | None]:
    """The secrets longest first, and one pattern matching any of them: the same set for every flow
    of one client, so built once."""
    ordered = tuple(sorted(raw, key=len, reverse=True))
    return ordered, re.compile(b"|".join(map(re.escape, ordered))) if ordered else None


# Scrubber._header's: (the secrets, a header value) -> the value scrubbed. Memory only, like _net's
# secrets: the values are the flows' own, held by them already.
_HEADERS_SCRUBBED: dict[tuple[tuple[bytes, ...], str], str] = {}


class Scrubber:
    """The three nets for one flow: `values` (and every secret the nets find in the `scanned`
    bodies, see `scrubber()`) replaced wherever they occur, longest first, by `[redacted]`."""

    def __init__(self, values: Iterable[str | bytes], scanned: Sequence[tuple[bytes, bool, tuple[list[_Span], list[bytes]]]] = ()) -> None:
        raw: set[bytes] = set()
        for value in values:
            raw.update(_forms(value))
        for _, _, (_, found) in scanned:
            for value in found:
                raw.update(_forms(value))
        raw.discard(_REDACTED_BYTES)  # a value read back from a redacted recording
        self.raw, self._bytes = _net(frozenset(raw))
        self._scanned = list(scanned)

    def _spans(self, data: bytes, form: bool) -> list[_Span]:
        for body, was_form, (spans, _) in self._scanned:  # the bodies scanned already: not twice
            if was_form == form and (body is data or (len(body) == len(data) and body == data)):
                found = list(spans)
                break
        else:
            found = scan(data, form=True)[0] if form else _text_spans(data)
        return found + self._valued(data)

    def _valued(self, data: bytes) -> list[_Span]:
        """Where `data` holds one of the secrets by value. Text past a header value's length is
        first searched for each secret (memchr-fast): the alternation, tried at every offset, costs
        more there than the searches."""
        if self._bytes is not None and (len(data) < 256 or any(secret in data for secret in self.raw)):
            return [(*match.span(), _REDACTED_BYTES) for match in self._bytes.finditer(data)]
        return []

    @overload
    def data(self, data: bytes, *, form: bool = False) -> bytes: ...
    @overload
    def data(self, data: bytes | None, *, form: bool = False) -> bytes | None: ...

    def data(self, data: bytes | None, *, form: bool = False) -> bytes | None:
        if not data:
            return data
        return _apply(data, self._spans(data, form))

    @overload
    def text(self, text: str, *, url: bool = False) -> str: ...
    @overload
    def text(self, text: str | None, *, url: bool = False) -> str | None: ...

    def text(self, text: str | None, *, url: bool = False) -> str | None:
        """`text` scrubbed; `url`: it is read as a URL, where every secret becomes `****` (see
        REDACTED_USERINFO), whatever part of it the secret was in."""
        if not text:
            return text
        data = text.encode("utf-8", "surrogateescape")
        spans = self._spans(data, False)
        if url:
            spans = [(start, end, _USERINFO) for start, end, _ in spans]
        return _apply(data, spans).decode("utf-8", "surrogateescape") if spans else text

    def headers(self, headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return [(name, REDACTED if secret_header(name) else self._header(value)) for name, value in headers]

    def _header(self, value: str) -> str:
        """A header value scrubbed: the same few values come with every flow of a client, scrubbed
        of the same secrets, so a short one is scrubbed once per set of secrets (a pure function of
        both: the scanned bodies only spare a scan)."""
        if len(value) >= 256:
            return self.text(value)
        key = (self.raw, value)
        found = _HEADERS_SCRUBBED.get(key)
        if found is None:
            if len(_HEADERS_SCRUBBED) >= 4096:
                _HEADERS_SCRUBBED.clear()
            found = _HEADERS_SCRUBBED[key] = self.text(value)
        return found

    def chunks(self, chunks: list[Chunk], *, form: bool = False) -> list[Chunk]:
        """Chunks scrubbed as one text, so that a secret cut across chunks goes too: its marker
        lands in the chunk where it began. The chunks still add up to the scrubbed body."""
        if not chunks:
            return chunks
        pieces = self._pieces(b"".join(chunk.data for chunk in chunks), 0, [chunk.data for chunk in chunks], form)
        return [Chunk(chunk.t, piece) for chunk, piece in zip(chunks, pieces, strict=True)]

    def frames(self, chunks: list[Chunk]) -> list[Chunk]:
        """The frame records of a WebSocket flow (flow.frame_chunk), each payload scrubbed on its
        own: a net spanning two records would eat the second one's head byte. A secret is sent in
        one message, so nothing that matters is lost by not reading across frames."""
        return [Chunk(chunk.t, chunk.data[:1] + self.data(chunk.data[1:])) for chunk in chunks]

    def stream(self, before: bytes, pieces: list[bytes]) -> list[bytes]:
        """`pieces` scrubbed when they are written apart from what comes after them (a stream's
        chunks persisted as they arrive), knowing what came `before` them: a secret that began
        before goes from them too, and so does the start of one cut at their end, whether the
        nets know it by value, by name (an open `"access_token": "…`) or by shape."""
        context = before[-_CONTEXT:]
        joined = context + b"".join(pieces)
        # The field names are looked for once, for both the scan and the open tails of the window.
        quotes = _field_quotes(joined) if b'"' in joined else []
        spans = scan(joined, quotes=quotes)[0] + self._valued(joined)
        window = joined[-_CONTEXT:]
        shift = len(joined) - len(window)
        for match in _open_tails(window, [quote_at - shift for quote_at in quotes if quote_at >= shift]):
            for group in match.re.groupindex:
                if match.start(group) >= 0:
                    spans.append((shift + match.start(group), len(joined), _REDACTED_BYTES))
        for secret in self.raw:
            size = cut_secret(joined, secret)
            if size:
                spans.append((len(joined) - size, len(joined), _REDACTED_BYTES))
        return self._pieces(joined, len(context), pieces, False, spans)

    def _pieces(self, joined: bytes, offset: int, pieces: list[bytes], form: bool,
                spans: list[_Span] | None = None) -> list[bytes]:
        """`joined[offset:]` is `pieces` one after the other: each piece with its share of the spans."""
        if spans is None:
            spans = self._spans(joined, form)
        if not spans:
            return pieces
        merged: list[list] = []
        for start, finish, marker in sorted(spans, key=lambda span: (span[0], -span[1])):
            if merged and start < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], finish)
            else:
                merged.append([start, finish, marker])
        scrubbed, begin = [], offset
        for piece in pieces:
            end = begin + len(piece)
            parts, at = [], begin
            for start, finish, marker in merged:
                if finish <= at or start >= end:
                    continue
                if start > at:
                    parts.append(joined[at:start])
                if start >= begin:  # the marker goes where the secret begins
                    parts.append(marker)
                at = min(finish, end)
            parts.append(joined[at:end])
            scrubbed.append(b"".join(parts))
            begin = end
        return scrubbed


_FRAGMENT = 4  # a piece of a secret shorter than this tells nothing of it


def cut_secret(data: bytes, secret: bytes) -> int:
    """How long the start of `secret` that `data` ends with is: the longest start shorter than the
    secret and _FRAGMENT long at least, 0 when there is none. Found by searching the tail for the
    secret's first bytes (memchr-fast; asked of every secret on every stream-progress write), not
    by trying each length."""
    longest = min(len(secret), len(data)) - 1
    if longest < _FRAGMENT:
        return 0
    tail, head = data[-longest:], secret[:_FRAGMENT]
    at = tail.find(head)
    while at >= 0:  # the first that fits is the longest
        if secret.startswith(tail[at:]):
            return longest - at
        at = tail.find(head, at + 1)
    return 0


def _is_form(headers: list[tuple[str, str]]) -> bool:
    return any(name.lower() == "content-type" and value.lower().startswith("application/x-www-form-urlencoded")
               for name, value in headers)


# A body, whether it was read as a form, and what `scan` found in it.
Scan = tuple[bytes, bool, tuple[list[_Span], list[bytes]]]


def scrubber(flow: Flow, *, request_only: bool = False, scans: list[Scan] | None = None) -> Scrubber:
    """The scrubber of every secret `flow` carried: its credentials, and what the nets find by name
    and by shape in its bodies, requests and responses alike (an OAuth token answer's
    `access_token` goes from the notes and the headers too). `request_only`: the request side.

    `scans`: the request bodies of this flow scanned by an earlier redaction, reused where a body
    is byte for byte the same, and this one's added. A recorder redacts a flow's request when its
    pending row is written, for its stream progress and again when it ends: the scan of a long
    conversation (1 ms per 100 KB) is done once."""
    sides = [(flow.request_body, flow.request_headers, True),
             (flow.upstream_request_body, flow.upstream_request_headers or flow.request_headers, True)]
    if not request_only:
        sides += [(flow.response_body, flow.response_headers, False),
                  (flow.upstream_response_body, flow.response_headers, False)]
    scanned: list[Scan] = []
    for body, headers, request in sides:
        if body:
            form = _is_form(headers)
            # A passthrough's upstream copy is the request again: scanned once.
            same = next((found for seen, was_form, found in (*scanned, *(scans or ()))
                         if was_form == form and len(seen) == len(body) and seen == body), None)
            if same is None:
                same = scan(body, form=form)
                if request and scans is not None:
                    scans.append((body, form, same))
            scanned.append((body, form, same))
    named = [value for headers in (flow.request_headers, flow.upstream_request_headers,
                                   *(() if request_only else (flow.response_headers,)))
             for name, value in headers if secret_header(name)]
    return Scrubber([*flow.secrets, *named], scanned)


# -- a command line and its environment (mcp-stdio) -----------------------------------------------

_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)


def redact_text(text: str, *, url: bool = False) -> str:
    """`text` without the tokens and userinfo passwords the by-shape net finds in it (`url`: see
    Scrubber.text)."""
    return Scrubber(()).text(text, url=url) or text


def text_secrets(text: str) -> list[str]:
    """What the by-shape net finds in `text` (tokens, userinfo passwords)."""
    return [value.decode("utf-8", "surrogateescape") for value in scan(text.encode("utf-8", "surrogateescape"))[1]]


def redact_argv(argv: Sequence[str], *, url: bool = False) -> tuple[list[str], tuple[str, ...]]:
    """(the command line fit to show and store, the credentials it carried): the value of each
    option whose name says credential (`--api-key V`, `--token=V`), of each `NAME=V` whose name
    does (`env API_KEY=V cmd`), and every token or userinfo password in any argument. `url`: the
    line goes into a URL (`stdio://COMMAND`), where the marker is `****`."""
    marker = REDACTED_USERINFO if url else REDACTED
    shown: list[str] = []
    found: list[str] = []
    after_secret_option = False
    for arg in argv:
        if after_secret_option and not arg.startswith("-"):
            shown.append(marker)
            found.append(arg)
            after_secret_option = False
            continue
        after_secret_option = False
        option, equals, value = arg.partition("=")
        if arg.startswith("-") and equals and credential_name(option.lstrip("-")):
            shown.append(f"{option}={marker}")
            found.append(value)
        elif arg.startswith("-"):
            after_secret_option = credential_name(arg.lstrip("-"))
            shown.append(arg)
        elif (assignment := _ASSIGNMENT.fullmatch(arg)) and credential_name(assignment.group(1)):
            shown.append(f"{assignment.group(1)}={marker}")
            found.append(assignment.group(2))
        else:
            shown.append(redact_text(arg, url=url))
            found += text_secrets(arg)
    return shown, tuple(value for value in dict.fromkeys(found) if len(value) >= MIN_SECRET)


def environment_secrets(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values in an environment that are credentials: those of variables whose names say so
    (`*_TOKEN*`, `*_KEY`, `*_SECRET*`, `*_PASSWORD`, `*_PAT`, `*_DSN`, `*_WEBHOOK*`, …), and the
    tokens and userinfo passwords in any value (`DATABASE_URL=postgres://u:pw@h/db`)."""
    found: list[str] = []
    for name, value in environ.items():
        if credential_name(name):
            found.append(value)
        else:
            found += text_secrets(value)
    return tuple(value for value in dict.fromkeys(found) if len(value) >= MIN_SECRET)


def redacted(flow: Flow, *, request_only: bool = False, scans: list[Scan] | None = None) -> Flow:
    """A copy of `flow` fit to leave memory: secrets redacted by name and by shape and scrubbed by
    value, and `secrets` emptied. `request_only` leaves the response side as it is, unread (a
    pending flow's response is still being filled in by the forwarder). `scans`: see scrubber()."""
    scrub = scrubber(flow, request_only=request_only, scans=scans)
    upstream_headers = flow.upstream_request_headers or flow.request_headers
    request: dict[str, Any] = dict(
        path=scrub.text(flow.path), query=scrub.text(redact_query(flow.query)),
        request_headers=scrub.headers(flow.request_headers),
        request_body=scrub.data(flow.request_body, form=_is_form(flow.request_headers)),
        upstream_url=scrub.text(redact_url(flow.upstream_url), url=True),
        upstream_request_headers=scrub.headers(flow.upstream_request_headers),
        upstream_request_body=scrub.data(flow.upstream_request_body, form=_is_form(upstream_headers)),
        notes=[scrub.text(n) for n in flow.notes], secrets=(),
    )
    # One copy of the flow, not one per side: copying a Flow costs as much as scrubbing a small one.
    if request_only:
        return replace(flow, **request)
    form = _is_form(flow.response_headers)
    if flow.websocket:
        chunks = scrub.frames(flow.chunks)
        return replace(flow, **request, response_headers=scrub.headers(flow.response_headers), response_body=b"".join(
            chunk.data for chunk in chunks), chunks=chunks, error=scrub.text(flow.error))
    return replace(
        flow, **request, response_headers=scrub.headers(flow.response_headers),
        upstream_response_body=scrub.data(flow.upstream_response_body, form=form),
        response_body=scrub.data(flow.response_body, form=form), chunks=scrub.chunks(flow.chunks, form=form),
        error=scrub.text(flow.error),
    )
