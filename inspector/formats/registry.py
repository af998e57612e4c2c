"""The recording formats, in one table, and what every command does with them: `export --format`
and the TUI's `x` write through `exported` / `render` / `files` / `default_name`, `open`, `check` and `mock` read
through `load` / `load_bytes` / `into_store`. A new format is a module with its `read` and/or
`write`, and its `Format` here, in FORMATS (and READERS if it reads): see the package's docstring."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..flow import Flow
from . import cassette, fixture, har, html, load as reading, otlp, pytest_export
from .base import Exported, Format, LoadError, NotARecording, Turn, WriteOptions

if TYPE_CHECKING:
    from ..store import FlowRow, Store

JSON = Format("json", "fixture: the turn as recorded and its fixed form", "a toolwire fixture", "flow-{n}.json",
              mark=b'"toolwire-fixture"', claims=reading.claims_fixture, read=reading.read_fixture, write=fixture.write)
PYTEST = Format("pytest", "a regression test file for your project", "a pytest file", "test_flow_{n}.py",
                write=pytest_export.write)
VCR = Format("vcr", "a vcrpy / pytest-recording cassette", "a vcrpy cassette", "flow-{n}.yaml", holds_many=True,
             mark=b"interactions", claims=cassette.claims, read=cassette.read, write=cassette.write)
HAR = Format("har", "HAR 1.2 for devtools and mitmproxy", "a HAR file", "flow-{n}.har", holds_many=True,
             mark=b'"log"', claims=har.claims, read=har.read, write=har.write)
OTLP = Format("otlp", "OTLP/JSON trace of OpenTelemetry GenAI spans", "an OTLP/JSON trace", "flow-{n}.otlp.json",
              holds_many=True, extra="otel", mark=otlp.MARK, read=otlp.read, write=otlp.write)
HTML = Format("html", "a page anyone can open in a browser (offline, redacted)", "an HTML page", "flow-{n}.html",
              holds_many=True, reads_store=True, write=html.write)
# Read only: what Arize Phoenix serves as OTLP JSON (its span search, `{"data": [span, ...]}`) names no
# resourceSpans, only protobuf's own field names; the OTLP codec reads it (formats/otlp_json.py).
PHOENIX = Format("phoenix", "Arize Phoenix's OTLP JSON span download", "an Arize Phoenix span download",
                 "flow-{n}.json", holds_many=True, extra="otel", mark=b'"start_time_unix_nano"', read=otlp.read)

# Every format, in the order `export --format` and the TUI's menu offer them.
FORMATS: tuple[Format, ...] = (JSON, PYTEST, VCR, HAR, OTLP, HTML)
# The readers, in the order they claim a parsed file (a HAR log that also holds an "interactions"
# list is a HAR file), and name themselves when a file is none of them.
READERS: tuple[Format, ...] = (JSON, HAR, VCR, OTLP, PHOENIX)
WRITERS: tuple[str, ...] = tuple(f.name for f in FORMATS if f.write is not None)


def by_name(name: str) -> Format:
    found = next((f for f in FORMATS if f.name == name and f.write is not None), None)
    if found is None:
        raise ValueError(f"unknown export format {name!r}; known: {', '.join(WRITERS)}")
    return found


# -- writing ------------------------------------------------------------------------------------

def exported(name: str, store: Store, flows: Sequence[Flow | FlowRow]) -> list[Exported]:
    """The turns format `name` is written from, for these stored flows (or their rows): each one's
    fixture with its fixed form (fixture.from_store), or for a format that reads the store itself,
    which flows and when."""
    if by_name(name).reads_store:
        return [Exported(flow.id, {}, flow.started_at) for flow in flows]
    loaded = (flow if isinstance(flow, Flow) else store.get(flow.id) for flow in flows)
    return [fixture.from_store(store, flow) for flow in loaded if flow is not None]


def render(name: str, turns: Sequence[Exported], options: WriteOptions = WriteOptions()) -> bytes:
    """The bytes of one file of format `name` holding `turns` (a format that does not `holds_many`:
    exactly one)."""
    write = by_name(name).write
    assert write is not None  # by_name finds writers only
    return write(turns, options)


def files(name: str, turns: Sequence[Exported], recording: str | None = None,
          options: WriteOptions = WriteOptions()) -> list[tuple[str, bytes]]:
    """(file name, bytes) for `turns`: one file per flow, or for a format that `holds_many` one file
    named `recording` (`session-3`) when given."""
    found = by_name(name)
    if found.holds_many and recording is not None:
        return [(recording + found.suffix, render(name, turns, options))]
    return [(default_name(name, turn.flow_id), render(name, [turn], options)) for turn in turns]


def default_name(name: str, flow_id: int) -> str:
    return by_name(name).flow_file.format(n=flow_id)


# -- reading ------------------------------------------------------------------------------------

def load(path: str | Path) -> list[Turn]:
    """Every turn in the file at `path`. A format without absolute times (our fixture) gets the
    file's modification time, so the list shows when it was written."""
    path = Path(path)
    try:
        with path.open("rb") as file:
            status = os.fstat(file.fileno())
            reading.refuse_size(status.st_size, str(path))
            data = file.read(reading.MAX_RECORDING + 1)  # a file that grows while read is still bounded
        written = status.st_mtime
    except OSError as exc:
        raise LoadError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    turns = load_bytes(data, str(path))
    for turn in turns:
        if not turn.flow.started_at:
            turn.flow.started_at = written
    return turns


def into_store(paths: Sequence[str | Path], store: Store) -> int:
    """Record every turn of the files at `paths` in `store` as one new session, analysed as the
    forwarder's flows are (what `open` shows); the session's id. A LoadError before anything is
    written if any file cannot be read."""
    turns = [turn for path in paths for turn in load(path)]
    session_id = store.new_session(", ".join(str(p) for p in paths), "(opened files)", "passthrough")
    for turn in turns:
        turn.flow.id = store.next_flow_id()
        turn.flow.session_id = session_id
        store.submit(turn.flow)
    store.flush()
    return session_id


def _not_read(source: str) -> NotARecording:
    titles = [f.title for f in READERS if f.claims is not None]
    return NotARecording(f"{source}: not {', '.join(titles[:-1])} or {titles[-1]}")


def load_bytes(data: bytes, source: str) -> list[Turn]:
    """The turns of a recording's bytes. Each format names itself with its mark: a file holding none
    is not parsed at all (`check` then reads it as a bare payload, which may be megabytes)."""
    reading.refuse_size(len(data), source)
    marked = [f for f in READERS if f.mark is not None and f.mark in data]
    if not marked:
        raise _not_read(source)
    if len(marked) == 1 and marked[0].claims is None:
        return _read(marked[0], data, None, source)
    document = reading.parsed(data, source)
    found = next((f for f in READERS if f.claims is not None and f.claims(document)), None)
    if found is None:
        raise _not_read(source)
    return _read(found, data, document, source)


def _read(found: Format, data: bytes, document: object, source: str) -> list[Turn]:
    assert found.read is not None  # READERS holds readers only
    return found.read(data, document, source)
