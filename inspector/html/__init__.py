"""`export --format html`: a recording (or a selection) as one self-contained HTML page that anyone
can open from a bug report. No server, no network: the page carries its data, its script and its
style, and a Content-Security-Policy that forbids every fetch (no connect, image, font, frame or
form target, no other script or style than its own, by hash), so a page attached to a ticket can
neither phone home nor be made to by the bytes it shows.

The page shows what the TUI shows, from the same view models (`tui.view.prepare`, `tui.compare`:
plain data, no widgets): the flow list, each flow's panes with its findings on their lines, the
conversation with calls paired to results, the original-vs-sent, fixed and replay diffs. Nothing
is checked twice in another language: the filters in the page work on facts computed here (dialect,
status, rule ids, tool names, severities, replays) and its free text on the lines the page already
holds. The filter grammar itself runs at export time, server-side: `--select EXPR` picks the flows.

Every recorded byte is hostile: each flow passes the redactor again (as every export does), every
line is already `shown` (control and bidi characters made visible), the data travels as JSON in a
`<script type="application/json">` block with `<`, `>` and `&` escaped, and the page's script
writes recorded text only through `textContent`."""

from __future__ import annotations

import base64
import hashlib
import html
import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from importlib import resources
from multiprocessing import get_context
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from ..analysis import Analysis
from ..flow import Flow
from ..redact import redacted
from ..textsafe import shown
from ..tui.compare import (DiffView, Lines, prepare_conversation, prepare_fixed_diff, prepare_replay_diff,
                           prepare_response_diff, prepare_upstream_diff)
from ..tui.view import UNCHANGED_TITLE, Pane, prepare
from ..wire.violations import Severity, Violation

if TYPE_CHECKING:
    from ..store import Store
    from ..store.rows import FlowRow

PAGE_FORMAT = "toolwire-page"
# 2: every line and finding text is an index into the page's one table of strings (`strings`).
PAGE_VERSION = 2


# From this many flows the page is prepared by worker processes, one per core. Each flow's views cost
# about 2 ms of CPU now that nothing is checked again (the stored analysis counts what a fixed request
# has left); a worker's start, its imports and first flows about 1.5 s: at 1,000 flows two workers
# spent 3.3 CPU s where this process alone spent 1.8 (and took 4.2 s against 1.9).
POOL_FROM = 5000
_CHUNK = 25  # flows a worker prepares per task: the order is kept, the cores stay busy to the end


def render(store: Store, ids: Sequence[int], *, title: str, workers: int | None = None) -> bytes:
    """The page of the stored flows `ids`, in that order, with what the views read besides the flows
    themselves: their replays and the session rules' findings. `workers`: processes preparing the
    flows (default: one per core from POOL_FROM flows on, else none); the bytes are the same."""
    ids = list(ids)
    wanted = set(ids)
    sessions = {row.session_id for row in store.rows() if row.id in wanted}
    findings = _session_findings(_Redacting(store), sessions)
    # One query for which flows were replayed: asking each flow for its replays reads the store once per flow.
    replayed = {row.replay_of for row in store.rows(text="~replay")}
    if workers is None:
        workers = min(os.cpu_count() or 1, 8) if len(ids) >= POOL_FROM else 1
    chunks = [(ids[at:at + _CHUNK], {i: findings[i] for i in ids[at:at + _CHUNK] if i in findings}, replayed)
              for at in range(0, len(ids), _CHUNK)]
    parts = _in_workers(store, chunks, workers) if workers > 1 else None
    if parts is None:
        source = _Redacting(store)
        parts = [part for chunk in chunks for part in _prepared(*chunk, source=source)]
    strings = _Strings()
    flows = [strings.compact(flow) for flow in parts]
    return _page(shown(title), orjson.dumps({"format": PAGE_FORMAT, "version": PAGE_VERSION, "title": shown(title),
                                             "strings": strings.table, "flows": flows}))


class _Strings:
    """The page's one table of the lines and finding texts its flows show, each string once. An
    agent sends its whole history again with every turn, so the lines of a session's requests, their
    diffs and the rules' explanations repeat from flow to flow: the page carries each once, and its
    script reads a flow's views from the indexes when the flow is shown."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self._index: dict[str, int] = {}

    def _id(self, text: str) -> int:
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self.table)
            self.table.append(text)
        return found

    def _ids(self, lines: list[str]) -> list[int]:
        return [self._id(line) for line in lines]

    def compact(self, flow: dict[str, Any]) -> dict[str, Any]:
        for pane in flow["panes"].values():
            pane["lines"] = self._ids(pane["lines"])
        for part in ("turns", "tools"):
            flow["conversation"][part]["lines"] = self._ids(flow["conversation"][part]["lines"])
        for made in flow["diffs"]:
            made["rows"]["lines"] = self._ids(made["rows"]["lines"])
            if made["notes"] is not None:
                made["notes"]["lines"] = self._ids(made["notes"]["lines"])
        flow["headers"], flow["chunks"] = self._ids(flow["headers"]), self._ids(flow["chunks"])
        for finding in flow["findings"]:
            for text in ("message", "why", "hint"):
                finding[text] = self._id(finding[text])
        return flow


def _in_workers(store: Store, chunks: list[tuple[Any, ...]], workers: int) -> list[dict[str, Any]] | None:
    """Each chunk prepared in a worker process, in order; None when the workers cannot start (a
    caller whose main module a fresh interpreter cannot import again): this process does it then."""
    # spawn: a fresh interpreter, no thread or SQLite connection of this process carried over.
    try:
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_open,
                                 initargs=(str(store.path),)) as pool:
            return [part for chunk in pool.map(_prepared, *zip(*chunks, strict=True)) for part in chunk]
    except BrokenProcessPool:
        return None


_worker_store: Store | None = None


def _open(path: str) -> None:
    from ..store import Store

    global _worker_store
    _worker_store = Store(path, read_only=True)


def _prepared(ids: list[int], findings: dict[int, list[Violation]], replayed: set[int | None], *,
              source: _Redacting | None = None) -> list[dict[str, Any]]:
    """The page's data of each flow of `ids` still in the store; in a worker, read from the worker's own store."""
    if source is None:
        assert _worker_store is not None  # the pool's initializer opened it
        source = _Redacting(_worker_store)
    return [_flow(source, flow, findings.get(flow.id, []), replayed) for flow in map(source.get, ids) if flow is not None]


class _Redacting:
    """The store as the views read it, each flow redacted on the way out: a replay's response or a
    session's MCP exchange is as much the page's as the flows listed."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def get(self, flow_id: int) -> Flow | None:
        flow = self._store.get(flow_id)
        return None if flow is None else redacted(flow)

    def analysis(self, flow: Flow) -> Analysis:
        """The flow's analysis as the writer stored it: the writer analysed the flow redacted, as
        `get` returns it, so its pointers fall on the bodies the page shows."""
        return self._store.analysis(flow)

    def rows(self, *, text: str = "") -> list[FlowRow]:
        return self._store.rows(text=text)

    def flow_ids(self, session_id: int, *, dialects: Sequence[str]) -> list[int]:
        return self._store.flow_ids(session_id, dialects=dialects)

    def session_findings(self, session_id: int) -> dict[int, list[Violation]]:
        return self._store.session_findings(session_id, get=self.get)


def _session_findings(source: _Redacting, sessions: set[int]) -> dict[int, list[Violation]]:
    """The session rules' findings of every flow of `sessions`, as the writer stored them (a
    session recorded before they were stored has its MCP exchanges read once, redacted)."""
    found: dict[int, list[Violation]] = {}
    for session_id in sorted(sessions):
        found.update(source.session_findings(session_id))
    return found


def _flow(source: _Redacting, flow: Flow, session: list[Violation], replayed: set[int | None]) -> dict[str, Any]:
    view = prepare(flow, session, source.analysis(flow))
    analysis = view.analysis
    conversation = prepare_conversation(view)
    rules = sorted({item.violation.rule for item in view.violations})
    tools = sorted({tool.name for tool in conversation.conversation.tools} if conversation.conversation else ())
    errors = sum(1 for item in view.violations if item.violation.severity is Severity.ERROR)
    warnings = sum(1 for item in view.violations if item.violation.severity is Severity.WARNING)
    panes = {"request": _pane(UNCHANGED_TITLE if view.unchanged else "Request · as the client sent it", view.request)}
    if not view.unchanged:
        panes["upstream"] = _pane("Sent upstream", view.upstream)
    panes["response"] = _pane("Response", view.response)
    if view.upstream_response is not None:
        panes["upstream_response"] = _pane("Upstream answer", view.upstream_response)
    diffs = [(name, made) for name, made in (
        ("original → sent upstream", prepare_upstream_diff(view)),
        ("upstream answer → client got", prepare_response_diff(view)),
        ("original → fixed", prepare_fixed_diff(view, repairs_only=True)),
        ("response → replay", prepare_replay_diff(source, view)  # type: ignore[arg-type]  # reads get, rows and analysis only
         if flow.replay_of is not None or flow.id in replayed else None),
    ) if made is not None]
    return {
        "id": flow.id,
        "session": flow.session_id,
        "started": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(flow.started_at)) + "Z",
        "method": shown(flow.method),
        "path": shown(flow.path + (f"?{flow.query}" if flow.query else "")),
        "host": shown(urlsplit(flow.upstream_url).hostname or ""),
        "route": shown(flow.route),
        "dialect": analysis.dialect.value if analysis.dialect is not None else "",
        "model": shown(analysis.model),
        "status": flow.status,
        "state": flow.state.value,
        "mode": flow.mode.value,
        "streamed": flow.streamed,
        "latency_ms": flow.latency_ms,
        "ttfb_ms": flow.ttfb_ms,
        "tools": analysis.tools,
        "tool_calls": analysis.tool_calls,
        "errors": errors,
        "warnings": warnings,
        "rules": rules,
        "tool_names": [shown(name) for name in tools],
        "replay_of": flow.replay_of,
        "error": shown(flow.error or analysis.parse_error or ""),
        "panes": panes,
        "findings": [_finding(item.violation, item.lines) for item in view.violations],
        "headers": view.headers,
        "chunks": view.chunks,
        "conversation": {"title": shown(conversation.title), "turns": _lines(conversation.turns),
                         "tools": _lines(conversation.tools)},
        "diffs": [_diff(name, made) for name, made in diffs],
    }


def _pane(title: str, pane: Pane) -> dict[str, Any]:
    return {"title": title, "note": shown(pane.note), "lines": pane.lines(), "marks": sorted(pane.marks.items())}


def _finding(violation: Violation, lines: dict[str, int]) -> dict[str, Any]:
    return {"rule": shown(violation.rule), "severity": violation.severity.value, "effect": violation.effect.value,
            "where": shown(violation.where), "pointer": shown(violation.pointer), "message": shown(violation.message),
            "why": shown(violation.why), "hint": shown(violation.hint), "lines": lines}


def _lines(lines: Lines) -> dict[str, Any]:
    return {"lines": lines.lines, "marks": sorted(lines.marks.items())}


def _diff(name: str, view: DiffView) -> dict[str, Any]:
    return {"name": name, "title": shown(view.title), "summary": shown(view.summary), "rows": _lines(view.lines),
            "notes": _lines(view.notes) if view.notes is not None else None}


# -- the page ----------------------------------------------------------------------------------

def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def embedded_json(data: bytes) -> str:
    """JSON text fit to stand inside a <script> element: no `<` can close it or open a comment, no
    `>` or `&` can be read as markup by anything that looks."""
    return data.decode("utf-8").replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _page(title: str, data: bytes) -> bytes:
    script, style = _asset("page.js"), _asset("page.css")
    # Nothing may be fetched: no default source, and the one script and style by their hashes. The
    # JSON block is never executed, so the policy has nothing to say about it.
    policy = (f"default-src 'none'; script-src {_hash(script)}; style-src {_hash(style)}; img-src 'none'; "
              "connect-src 'none'; font-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; "
              "worker-src 'none'; manifest-src 'none'; form-action 'none'; base-uri 'none'")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)} · toolwire-inspect</title>\n"
        f"<style>{style}</style>\n</head>\n<body>\n"
        '<noscript>This page shows the flows with its own script, which the browser does not run.</noscript>\n'
        f'<script type="application/json" id="toolwire-data">{embedded_json(data)}</script>\n'
        f"<script>{script}</script>\n</body>\n</html>\n"
    ).encode()
