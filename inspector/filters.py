"""Flow filter expressions, compiled to SQL over the store's columns. A letter that mitmproxy's
filters have means what it means there (`~d` domain, `~m` method, `~c` code, `~u` URL, `~h` header,
`~b` body, `~t` content type, `~e` error, `~q` no response, `~s` has a response, `~replay`); what
only an LLM inspector asks has a word of its own (`~dialect`, `~model`, `~tool`) or a letter
mitmproxy leaves free (`~v` findings, `~r` replays, `~R` route). `FILTERS` is the one table: the
parser, the TUI's help, `flows --help` and docs/filters.md all read it.

    #N           flow N, its replays and, for a socket, its turns
    TEXT         free text over method, path, model, dialect, state, status, errors, rule ids and
                 payload text (mitmproxy: a URL regex; here what the list shows and the payloads)
    a & b, a b   both;  a | b  either;  !a  not;  ( … )  grouping;  "two words" one text

Free text and values match case-insensitively (ASCII, as SQLite's LIKE does). No Textual here:
the TUI's filter bar and `flows --filter` share this."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass

from .wire.dialect import Dialect


@dataclass(frozen=True, slots=True)
class Filter:
    flag: str  # "~d"
    value: str  # what it takes ("DOMAIN"), "" for one that stands alone
    help: str
    mitmproxy: bool  # means what the same flag means in mitmproxy


FILTERS = [
    Filter("~v", "RULE", "has a finding of rule RULE (OC-05), or ~v error / ~v warning", False),
    Filter("~dialect", "NAME", "dialect: " + ", ".join(d.value.removeprefix("openai-") for d in Dialect), False),
    Filter("~model", "MODEL", "model contains MODEL", False),
    Filter("~tool", "TOOL", "a payload names the tool TOOL", False),
    Filter("~R", "ROUTE", "came through route ROUTE (toolwire-inspect --route NAME=URL)", False),
    Filter("~S", "N", "recorded in session N (each launch is one: the list's S column, flows --json)", False),
    Filter("~d", "DOMAIN", "the upstream's host contains DOMAIN", True),
    Filter("~m", "METHOD", "HTTP method: POST, GET", True),
    Filter("~c", "CODE", "HTTP status: 400, 4xx, 5", True),
    Filter("~u", "URL", "the upstream URL (path and query) contains URL", True),
    Filter("~h", "TEXT", "a request or response header (name: value) contains TEXT; ~hq, ~hs one side", True),
    Filter("~b", "TEXT", "the request or response body contains TEXT; ~bq, ~bs one side", True),
    Filter("~t", "TYPE", "the request's or response's content type contains TYPE; ~tq, ~ts one side", True),
    Filter("~e", "", "failed: transport error or status ≥ 400", True),
    Filter("~q", "", "a request with no response (yet)", True),
    Filter("~s", "", "has a response", True),
    Filter("~replay", "", "is a replay (also ~r)", True),
    Filter("~websocket", "", "a WebSocket session or one of its turns (also ~w)", True),
    Filter("~marked", "", "marked in the list (m; marks last as long as the TUI, M shows them alone)", True),
]
# One side only: q the request, s the response (as mitmproxy's ~hq, ~bs…).
_SIDED = {"~hq", "~hs", "~bq", "~bs", "~tq", "~ts"}
_VALUED = {f.flag for f in FILTERS if f.value} | _SIDED
_BARE = {f.flag for f in FILTERS if not f.value} | {"~r", "~w"}

HELP = [(f"{f.flag} {f.value}".strip(), f.help) for f in FILTERS] + [
    ("#N", "flow N, its replays and, for a socket, its turns"),
    ("text", "path, model, state, status, errors, rule ids, payload text"),
    ("& | ! ( )", "and (or a space), or, not, grouping; \"…\" quotes"),
]


class FilterError(ValueError):
    """The expression does not parse; `position` is the offset of the offending character."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} (at {position + 1})")
        self.position = position


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # "op" (& | ! ( )), "flag" (~x), "id" (#N), "word"
    text: str
    position: int


_TOKEN = re.compile(r'\s*(?:(?P<op>[&|!()])|(?P<flag>~[a-zA-Z]+)|(?P<quoted>"(?:[^"\\]|\\.)*")|(?P<unclosed>".*)|(?P<word>[^\s&|!()"]+))')
# Free text looks at what the list shows and at the payloads. Bodies are BLOBs: cast to read them
# as text (a compressed body does not match).
_TEXT_COLUMNS = ("method", "path", "model", "dialect", "state", "COALESCE(status, '')", "COALESCE(error, '')",
                 "COALESCE(parse_error, '')", "rules", "CAST(request_body AS TEXT)", "CAST(response_body AS TEXT)")
_PAYLOADS = ("CAST(request_body AS TEXT)", "CAST(response_body AS TEXT)")
_BODIES = {"q": _PAYLOADS[:1], "s": _PAYLOADS[1:], "": _PAYLOADS}
_HEADERS = {"q": ("request_headers",), "s": ("response_headers",), "": ("request_headers", "response_headers")}
_STANDALONE = {
    "~e": "(state = 'error' OR status >= 400)",
    "~q": "status IS NULL",
    "~s": "status IS NOT NULL",
    "~replay": "replay_of IS NOT NULL",
    "~r": "replay_of IS NOT NULL",
}


def _tokens(expression: str) -> list[Token]:
    found, at = [], 0
    while at < len(expression):
        match = _TOKEN.match(expression, at)
        if match is None or match.end() == at:
            if expression[at:].strip():
                raise FilterError(f"unexpected {expression[at]!r}", at)
            break
        at = match.end()
        kind = match.lastgroup
        assert kind is not None  # every alternative is a named group
        text = match.group(kind)
        position = match.start(kind)
        if kind == "unclosed":
            raise FilterError("unclosed quote", position)
        if kind == "quoted":
            found.append(Token("word", re.sub(r"\\(.)", r"\1", text[1:-1]), position))
        elif kind == "word" and re.fullmatch(r"#\d+", text):
            found.append(Token("id", text[1:], position))
        else:
            found.append(Token(kind, text, position))
    return found


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


_ESCAPE = " ESCAPE '\\'"


class _Parser:
    """Recursive descent: or := and ('|' and)*; and := not ('&'? not)*; not := '!' not | atom."""

    def __init__(self, expression: str, rules: bool, route: bool, sockets: bool,
                 marked: Collection[int] | None) -> None:
        self.tokens = _tokens(expression)
        self.marked = marked
        self.at = 0
        self.end = len(expression)
        # A store read-only at schema 3 or older has no rules column: rule ids then match nothing.
        self.rules = "rules" if rules else "''"
        # Nor has a store at schema 4 or older a route column: its flows all came through the unnamed one.
        self.route = "route" if route else "''"
        # Nor has one before schema 8 sockets, or before schema 10 their turns.
        self.websocket = "websocket" if sockets else "0"
        self.socket_of = "socket_of" if sockets else "NULL"

    def peek(self) -> Token | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> Token:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def parse(self) -> tuple[str, list[object]]:
        sql, params = self.either()
        token = self.peek()
        if token is not None:
            raise FilterError(f"unexpected {token.text!r}", token.position)
        return sql, params

    def either(self) -> tuple[str, list[object]]:
        sql, params = self.both()
        while (token := self.peek()) is not None and token.text == "|" and token.kind == "op":
            self.take()
            right, more = self.both()
            sql, params = f"({sql} OR {right})", params + more
        return sql, params

    def both(self) -> tuple[str, list[object]]:
        sql, params = self.negation()
        while (token := self.peek()) is not None and not (token.kind == "op" and token.text in "|)"):
            if token.kind == "op" and token.text == "&":
                self.take()
            right, more = self.negation()
            sql, params = f"({sql} AND {right})", params + more
        return sql, params

    def negation(self) -> tuple[str, list[object]]:
        token = self.peek()
        if token is not None and token.kind == "op" and token.text == "!":
            self.take()
            sql, params = self.negation()
            return f"(NOT {sql})", params
        return self.atom()

    def atom(self) -> tuple[str, list[object]]:
        token = self.peek()
        if token is None:
            raise FilterError("expected a filter", self.end)
        self.take()
        if token.kind == "op":
            if token.text != "(":
                raise FilterError(f"unexpected {token.text!r}", token.position)
            sql, params = self.either()
            close = self.peek()
            if close is None or close.text != ")" or close.kind != "op":
                raise FilterError("missing )", close.position if close is not None else self.end)
            self.take()
            return sql, params
        if token.kind == "id":
            return f"(id = ? OR replay_of = ? OR {self.socket_of} = ?)", [int(token.text)] * 3
        if token.kind == "word":
            return _free_text(token.text, self.rules)
        if token.text == "~marked":
            if self.marked is None:
                raise FilterError("~marked is the TUI's marks (m there); they are not stored", token.position)
            return "id IN (SELECT value FROM json_each(?))", [json.dumps(sorted(self.marked))]
        if token.text in ("~websocket", "~w"):
            return f"({self.websocket} = 1 OR {self.socket_of} IS NOT NULL)", []
        if token.text in _BARE:
            return _STANDALONE[token.text], []
        if token.text not in _VALUED:
            raise FilterError(f"unknown filter {token.text} (known: {', '.join(sorted(_VALUED | _BARE))})",
                              token.position)
        value = self.peek()
        if value is None or value.kind not in ("word", "id"):
            raise FilterError(f"{token.text} needs a value", value.position if value is not None else self.end)
        self.take()
        text = value.text if value.kind == "word" else f"#{value.text}"
        if token.text == "~R":
            return f"{self.route} = ? COLLATE NOCASE", [text]
        if token.text == "~S":
            if not re.fullmatch(r"\d{1,18}", text):
                raise FilterError(f"~S wants a session number, not {text!r}", value.position)
            return "session_id = ?", [int(text)]
        return _valued(token.text, text, value.position, self.rules)


def _free_text(text: str, rules: str) -> tuple[str, list[object]]:
    columns = [rules if c == "rules" else c for c in _TEXT_COLUMNS]
    pattern = _like(text)
    return "(" + " OR ".join(f"{c} LIKE ?{_ESCAPE}" for c in columns) + ")", [pattern] * len(columns)


def _any(columns: tuple[str, ...], pattern: str) -> tuple[str, list[object]]:
    return "(" + " OR ".join(f"{c} LIKE ?{_ESCAPE}" for c in columns) + ")", [pattern] * len(columns)


_HEADER_NAME, _HEADER_VALUE = "lower(json_extract(value, '$[0]'))", "json_extract(value, '$[1]')"


def _header(columns: tuple[str, ...], condition: str, pattern: str) -> tuple[str, list[object]]:
    """A header of `columns` (each a JSON list of [name, value] pairs) for which `condition`, over
    `{name}` and `{value}`, holds with `pattern`."""
    where = condition.format(name=_HEADER_NAME, value=_HEADER_VALUE)
    # Headers are stored as BLOBs, which SQLite's JSON functions refuse: read as text.
    texts = [f"CAST({c} AS TEXT)" for c in columns]
    found = [f"EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid({t}) THEN {t} ELSE '[]' END) WHERE {where})"
             for t in texts]
    return "(" + " OR ".join(found) + ")", [pattern] * len(columns)


def _valued(flag: str, value: str, position: int, rules: str) -> tuple[str, list[object]]:
    side = flag[2:] if flag in _SIDED else ""
    kind = flag[:2] if flag in _SIDED else flag
    if kind == "~d":
        # The host of `scheme://host[:port]/path`: what lies between the scheme and the path.
        host = "substr(upstream_url, instr(upstream_url, '://') + 3)"
        return f"substr({host}, 1, instr({host} || '/', '/') - 1) LIKE ?{_ESCAPE}", [_like(value)]
    if kind == "~m":
        return "method = ? COLLATE NOCASE", [value]
    if kind == "~c":
        digits = value.lower().rstrip("x")
        if not re.fullmatch(r"\d{1,3}", digits) or len(value) > 3:
            raise FilterError(f"~c wants a status like 400, 4xx or 5, not {value!r}", position)
        return "CAST(status AS TEXT) LIKE ?", [f"{digits}%"]
    if kind == "~u":
        return f"upstream_url LIKE ?{_ESCAPE}", [_like(value)]
    if kind == "~h":
        return _header(_HEADERS[side], f"({{name}} || ': ' || {{value}}) LIKE ?{_ESCAPE}", _like(value))
    if kind == "~t":
        return _header(_HEADERS[side], f"{{name}} = 'content-type' AND {{value}} LIKE ?{_ESCAPE}", _like(value))
    if kind == "~b":
        return _any(_BODIES[side], _like(value))
    if kind == "~dialect":
        return f"dialect LIKE ?{_ESCAPE}", [_like(value)]
    if kind == "~model":
        return f"model LIKE ?{_ESCAPE}", [_like(value)]
    if flag == "~v":
        severity = value.lower()
        if severity in ("error", "errors"):
            return "errors > 0", []
        if severity in ("warning", "warnings"):
            return "warnings > 0", []
        # Rule ids are stored space-delimited with a space on each side: a whole-id match.
        return f"{rules} LIKE ?{_ESCAPE}", [_like(f" {value.upper()} ")]
    # ~tool: the name as a whole JSON string, in the request (offered, answered) or response (called).
    return _any(_PAYLOADS, _like(f'"{value}"'))


def compile_filter(expression: str, *, rules: bool = True, route: bool = True, sockets: bool = True,
                   marked: Collection[int] | None = None) -> tuple[str, list[object]]:
    """(SQL condition, its parameters) for a WHERE clause over the flows table; ("", []) for a blank
    expression. `rules`, `route`: whether the table has those columns; `sockets`: the socket
    columns (schema 8's websocket, schema 10's socket_of); `marked`: the ids `~marked` matches (the
    TUI's marks; None where there are none to have, which refuses it). Raises FilterError."""
    if not expression.strip():
        return "", []
    return _Parser(expression, rules, route, sockets, marked).parse()


def rules_text(rule_ids: list[str]) -> str:
    """The `rules` column for a flow's findings: each id once, sorted, space-delimited with a space on
    each side so that a LIKE on " ID " matches whole ids only ("" when there are none)."""
    ids = sorted(set(rule_ids))
    return f" {' '.join(ids)} " if ids else ""
