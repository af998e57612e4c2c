"""The columns of the flows and sessions tables, named once, and the typed rows read from them:
every statement that writes or reads a whole flow, and every mapping between a Flow and its row,
is built from the column tuples here."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any
from dataclasses import dataclass, fields, replace
from operator import attrgetter

import orjson

from ..flow import EDITED_REPLAY_NOTE, FIXED_REPLAY_NOTE, Flow, FlowState, Mode
from .chunks import pack_chunks, unpack_chunks


@dataclass(slots=True)
class FlowRow:
    id: int
    session_id: int
    started_at: float
    method: str
    path: str
    dialect: str  # "" when unknown
    model: str
    status: int | None
    state: str
    latency_ms: float | None
    ttfb_ms: float | None
    tools: int
    tool_calls: int
    errors: int
    warnings: int
    replay_of: int | None
    streamed: bool
    mode: str
    error: str | None  # the transport error, else the body's parse error
    replay_fixed: bool = False  # a replay sent with the safe repairs applied (R), not as recorded
    tokens_in: int | None = None  # as the response reports them; None when it does not
    tokens_out: int | None = None
    replay_edited: bool = False  # a replay of a request the user edited (e)
    buffered: bool = False  # a stream whose events all arrived at once (analysis.buffered_stream)
    route: str = ""  # "" for the unnamed route (--upstream) and in stores from before schema 6
    websocket: bool = False  # a WebSocket session (its frames: Store.frames)
    socket_of: int | None = None  # a socket's turn: the socket flow (inspector/sockets.py)
    continues: int | None = None  # the turn whose response it continues

    def __reduce__(self) -> tuple:
        # The writer process acknowledges each flow with its row: as its values, a row pickles and
        # unpickles ~5 times faster than as a slotted object (9.2 -> 1.7 us to unpickle).
        return FlowRow, _ROW_VALUES(self)


_ROW_VALUES = attrgetter(*(each.name for each in fields(FlowRow)))


@dataclass(slots=True)
class SessionRow:
    id: int
    started_at: float
    upstream: str
    listen: str
    mode: str


@dataclass(slots=True, frozen=True)
class Summary:
    """What analysis says of a finished flow: the summary columns of its row (a pending flow has
    the defaults)."""

    dialect: str = ""  # "" when unknown
    model: str = ""
    tools: int = 0
    tool_calls: int = 0
    errors: int = 0
    warnings: int = 0
    parse_error: str | None = None
    rules: str = ""  # the findings' rule ids, as filters.rules_text writes them
    tokens_in: int | None = None
    tokens_out: int | None = None
    buffered: bool = False
    analysis: bytes | None = None  # the whole analysis (analysis.to_stored), read when the flow is opened


# Flow columns are named as the Flow attributes they hold. The request side is complete when the
# request arrives; the response side is written when the response ends.
REQUEST_COLUMNS = (
    "id", "session_id", "started_at", "method", "path", "query", "request_headers", "request_body", "mode",
    "translate", "upstream_url", "upstream_request_headers", "upstream_request_body", "route", "websocket",
    "socket_of", "continues", "history",
)
RESPONSE_COLUMNS = (
    "status", "response_headers", "upstream_response_body", "response_body", "streamed", "chunks", "ttfb_ms",
    "latency_ms", "state", "error", "replay_of", "notes",
)
FLOW_COLUMNS = REQUEST_COLUMNS + RESPONSE_COLUMNS
SUMMARY_COLUMNS = tuple(f.name for f in fields(Summary))
SESSION_COLUMNS = tuple(f.name for f in fields(SessionRow))
# What the list shows as a row's error: the transport error, else the body's parse error.
_LISTED = {"error": "COALESCE(error, parse_error)",
           "replay_fixed": f"replay_of IS NOT NULL AND instr(CAST(notes AS TEXT), '{FIXED_REPLAY_NOTE}') > 0",
           "replay_edited": f"replay_of IS NOT NULL AND instr(CAST(notes AS TEXT), '{EDITED_REPLAY_NOTE}') > 0"}


# What a column added after schema 1 reads as in a file opened read-only from before it.
# The unnamed route; no sockets before schema 8, no socket turns before schema 10.
_ABSENT = {"route": "''", "websocket": "0", "socket_of": "NULL", "continues": "NULL", "history": "NULL"}


def list_columns(present: set[str]) -> str:
    """The SELECT list of a FlowRow from a flows table with the columns `present` (a store opened
    read-only may predate the summary columns of later schemas: those read as NULL)."""
    return ", ".join("NULL" if f.name in SUMMARY_COLUMNS and f.name not in present
                     else _ABSENT[f.name] if f.name in _ABSENT and f.name not in present
                     else _LISTED.get(f.name, f.name) for f in fields(FlowRow))


def insert(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT OR REPLACE INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


def update(table: str, columns: tuple[str, ...]) -> str:
    """An UPDATE of `columns` of the row whose id is the last parameter."""
    return f"UPDATE {table} SET {', '.join(f'{name} = ?' for name in columns)} WHERE id = ?"


def mode_value(mode: Mode | str) -> str:
    return mode.value if isinstance(mode, Mode) else str(mode)


def headers_blob(headers: list[tuple[str, str]]) -> bytes:
    return orjson.dumps(headers)


def _headers_from(blob: bytes) -> list[tuple[str, str]]:
    return [(k, v) for k, v in orjson.loads(blob)]


def _optional_bytes(value: bytes | None) -> bytes | None:
    return None if value is None else bytes(value)


# How a Flow attribute is stored, where not as it is (`chunks` needs the body too: see below). Each
# codec takes its own column's type, so the table can only say Any: the attribute comes from
# getattr, the column's value from sqlite3, both Any.
_TO_SQL: dict[str, Callable[[Any], object]] = {
    "request_headers": headers_blob, "upstream_request_headers": headers_blob, "response_headers": headers_blob,
    "mode": mode_value, "streamed": int, "state": lambda state: state.value, "notes": orjson.dumps,
    "websocket": int,
}
_FROM_SQL: dict[str, Callable[[Any], Any]] = {
    "request_headers": _headers_from, "upstream_request_headers": _headers_from, "response_headers": _headers_from,
    "request_body": bytes, "upstream_request_body": _optional_bytes, "upstream_response_body": _optional_bytes,
    "response_body": bytes, "mode": Mode, "streamed": bool, "state": FlowState,
    "notes": lambda notes: list(orjson.loads(notes)),
    "websocket": bool, "history": _optional_bytes,
}


def flow_values(flow: Flow, columns: tuple[str, ...]) -> tuple[object, ...]:
    """The values of `columns` for `flow`, in that order."""
    values: list[object] = []
    for name in columns:
        if name == "chunks":
            values.append(pack_chunks(flow.chunks, flow.response_body))
            continue
        value = getattr(flow, name)
        encode = _TO_SQL.get(name)
        values.append(value if encode is None else encode(value))
    return tuple(values)


def as_pending(flow: Flow) -> Flow:
    """The flow as its pending row holds it: the request, the replay link and notes, no response yet
    (the forwarder goes on filling that in)."""
    return replace(flow, status=None, response_headers=[], upstream_response_body=None, response_body=b"",
                   streamed=False, chunks=[], ttfb_ms=None, latency_ms=None, state=FlowState.PENDING, error=None)


def flow_row(flow: Flow, summary: Summary) -> FlowRow:
    """The list row of a flow just written."""
    return FlowRow(
        id=flow.id, session_id=flow.session_id, started_at=flow.started_at, method=flow.method, path=flow.path,
        dialect=summary.dialect, model=summary.model, status=flow.status, state=flow.state.value,
        latency_ms=flow.latency_ms, ttfb_ms=flow.ttfb_ms, tools=summary.tools, tool_calls=summary.tool_calls,
        errors=summary.errors, warnings=summary.warnings, replay_of=flow.replay_of, streamed=flow.streamed,
        mode=mode_value(flow.mode), error=flow.error or summary.parse_error,
        replay_fixed=flow.replay_of is not None and FIXED_REPLAY_NOTE in flow.notes,
        tokens_in=summary.tokens_in, tokens_out=summary.tokens_out,
        replay_edited=flow.replay_of is not None and EDITED_REPLAY_NOTE in flow.notes, buffered=summary.buffered,
        route=flow.route, websocket=flow.websocket, socket_of=flow.socket_of, continues=flow.continues,
    )


def listed_row(values: tuple) -> FlowRow:
    """A FlowRow from the values of `list_columns()`."""
    row = FlowRow(*values)
    row.streamed = bool(row.streamed)  # SQLite keeps booleans as integers
    row.replay_fixed = bool(row.replay_fixed)
    row.replay_edited = bool(row.replay_edited)
    row.buffered = bool(row.buffered)
    row.websocket = bool(row.websocket)
    return row


def load(conn: sqlite3.Connection, flow_id: int, *, present: set[str] | None = None) -> Flow | None:
    """`present`: the columns the table has, None for all of them (a store read-only from before
    schema 6, 8 or 9 has no route, websocket or socket turn columns: see _ABSENT)."""
    selected = FLOW_COLUMNS if present is None else tuple(
        _ABSENT[name] if name in _ABSENT and name not in present else name for name in FLOW_COLUMNS)
    found = conn.execute(f"SELECT {', '.join(selected)} FROM flows WHERE id = ?", (flow_id,)).fetchone()
    if found is None:
        return None
    values: dict[str, Any] = {name: _FROM_SQL.get(name, _same)(value) for name, value in zip(FLOW_COLUMNS, found, strict=True)}
    chunks = values.pop("chunks")
    return Flow(**values, chunks=unpack_chunks(bytes(chunks), values["response_body"]))


def _same(value: object) -> object:
    return value
