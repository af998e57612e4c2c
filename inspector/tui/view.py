"""What the flow view shows, prepared off the UI thread: analysis, pretty-printed payloads with
their pointer -> line maps, and the lines each violation lands on. Plain data, no widgets, so the
detail screen only has to load text (and this is testable without a terminal)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..analysis import Analysis, BodyTooLarge, analyse, decode_body, parse_json
from ..flow import Flow, Mode
from ..textsafe import shown, shown_lines
from ..wire.dialect import Dialect, from_path
from ..wire.dialects import describe_event as describe_stream_event
from ..wire.locate import LocatedText, pretty
from ..wire.sse import SSEParser
from ..wire.translate import Loss
from ..wire.violations import Effect, Severity, Violation
from . import format as fmt

PASSTHROUGH_NOTE = "identical to the original (passthrough)"
NOTHING_TO_REPAIR_NOTE = "nothing to repair: identical to the original"
# The one pane's title when the original went upstream byte for byte.
UNCHANGED_TITLE = "Request · sent upstream unchanged"
# Document order of the panes, for walking the findings top to bottom.
PANE_ORDER = {"request": 0, "upstream": 1, "response": 2}
MARK_ORDER = [Severity.ERROR.value, Severity.WARNING.value, Severity.INFO.value, "repair"]


@dataclass(slots=True)
class Pane:
    text: str
    located: LocatedText | None = None  # None when the body is not JSON
    note: str = ""  # shown in the pane's border subtitle
    # line -> the most important mark on it: a severity name, or "repair" in the fixed view
    marks: dict[int, str] = field(default_factory=dict)
    starts: list[tuple[int, str]] | None = None  # (line, pointer) sorted, built on first alignment
    split: list[str] | None = field(default=None, repr=False)  # the text's lines, once split

    def lines(self) -> list[str]:
        """The text's lines; prepare() splits them in its worker so showing a pane costs no pass over it."""
        if self.split is None:
            self.split = shown_lines(self.text) if self.text else []
        return self.split

    def line_of(self, pointer: str) -> int:
        return self.located.line_of(pointer) if self.located is not None else 0

    def pointer_at(self, line: int) -> str | None:
        """The pointer of the node that `line` belongs to: the nearest node starting at or above it
        (a closing bracket belongs to the node it closes the last member of, close enough to align on)."""
        if self.located is None:
            return None
        starts = self._starts()
        index = bisect_right(starts, (line, "\uffff")) - 1
        return starts[index][1] if index >= 0 else ""

    def _starts(self) -> list[tuple[int, str]]:
        if self.starts is None:
            # The deepest pointer wins a line: a key's line names the key, not its object.
            by_line: dict[int, str] = {}
            for pointer, line in (self.located.lines if self.located is not None else {}).items():
                if len(pointer) >= len(by_line.get(line, "")):
                    by_line[line] = pointer
            self.starts = sorted(by_line.items())
        return self.starts

    def mark(self, pointer: str, kind: str) -> int:
        line = self.line_of(pointer)
        current = self.marks.get(line)
        if current is None or MARK_ORDER.index(kind) < MARK_ORDER.index(current):
            self.marks[line] = kind
        return line


@dataclass(slots=True)
class Located:
    """A violation and where it lands: (pane name, line) for every pane that shows its payload."""

    violation: Violation
    lines: dict[str, int]


@dataclass(slots=True)
class FlowView:
    flow: Flow
    analysis: Analysis
    request: Pane
    upstream: Pane
    response: Pane
    chunks: list[str]
    headers: list[str]
    violations: list[Located]
    # What the upstream itself answered, when the client got something else (translate mode): its
    # JSON, or its stream's text as it came.
    upstream_response: Pane | None = None

    @property
    def unchanged(self) -> bool:
        return sent_unchanged(self.flow)


def sent_unchanged(flow: Flow) -> bool:
    """The original went upstream byte for byte (None: the forwarder kept no second copy): one pane
    says it all."""
    return flow.upstream_request_body in (None, flow.request_body)


def body_pane(body: bytes, headers: list[tuple[str, str]], document: Any | None = None) -> Pane:
    """Pretty JSON when the body (or an already parsed `document`) is JSON, else the text as is."""
    decoded = b""
    if document is None and body:
        try:
            decoded = decode_body(body, headers)
        except BodyTooLarge as exc:
            return Pane("", note=f"body {exc}: export the flow to get its bytes")
        document, _ = parse_json(decoded)
    if document is not None:
        located = pretty(document)
        return Pane(located.text, located)
    if not body:
        return Pane("", note="empty body")
    return Pane(decoded.decode("utf-8", "replace"), note="not JSON: shown as received")


# From this many request bytes the request pane gets a first paint before the analysis: checking and
# locating a 2 MB conversation takes a few hundred milliseconds, its text alone a few.
PREVIEW_FROM = 256 * 1024


def preview(flow: Flow) -> Pane | None:
    """The request pane before the analysis, for a body big enough to make the user wait for it (None
    for the others, which are shown whole at once). orjson's own two-space indentation is the text
    `pretty` builds, line for line, without its pointer map: the full view later lands on the same
    lines."""
    if len(flow.request_body) < PREVIEW_FROM:
        return None
    try:
        document, _ = parse_json(decode_body(flow.request_body, flow.request_headers))
    except BodyTooLarge:
        return None
    if document is None:
        return None
    try:
        text = orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()
    except orjson.JSONEncodeError:  # nested past the 254 levels orjson writes: `pretty` walks any depth
        text = pretty(document).text
    pane = Pane(text, note="checking…")
    pane.lines()
    return pane


def chunk_lines(flow: Flow) -> list[str]:
    """One line per relayed chunk (the viewer numbers them): arrival time, gap since the previous
    chunk, size, what the chunk completed read as events (type, delta, tool-call index), then the
    bytes with line breaks made visible. Events are cut by the same SSE parser the checker uses,
    fed chunk by chunk, so an event split across chunks shows on the chunk that completed it."""
    lines: list[str] = []
    previous = 0.0
    parser = SSEParser()
    dialect = from_path(flow.path)
    for chunk in flow.chunks:
        text = shown(chunk.data.decode("utf-8", "replace"))  # line breaks and every control made visible
        arrival, gap = f"+{chunk.t * 1000:.1f}", f"Δ{(chunk.t - previous) * 1000:.1f}"
        parsed = "".join(f"▸ {shown(describe_event(event.data, dialect))} " for event in parser.feed(chunk.data))
        lines.append(f"{arrival:>10} ms {gap:>9} ms {len(chunk.data):>7} B  {parsed}│ {text}")
        previous = chunk.t
    if lines and (last := parser.close()):  # an event the stream never closed with a blank line
        lines[-1] += "".join(f" ▸ {shown(describe_event(event.data, dialect))}" for event in last)
    return lines


def describe_event(data: str, dialect: Dialect | None = None) -> str:
    """One event's gist, as its dialect's home reads it (`dialects.describe_event`): its type, the
    text it adds (quoted, so spaces show) and the tool call or content block it belongs to. Data that
    is not a JSON object shows as it came."""
    try:
        event = orjson.loads(data)
    except orjson.JSONDecodeError:
        return data
    return describe_stream_event(event, dialect) if isinstance(event, dict) else data


def header_lines(flow: Flow) -> list[str]:
    """Request, upstream and response headers (redacted by the forwarder before they got here),
    and the forwarder's notes."""
    lines = [f"{flow.method} {flow.path}{'?' + flow.query if flow.query else ''}"]
    lines += [f"{name}: {value}" for name, value in flow.request_headers]
    if flow.upstream_url:
        lines += ["", f"→ {flow.upstream_url}"]
        lines += [f"{name}: {value}" for name, value in flow.upstream_request_headers]
    lines += ["", f"← {flow.status if flow.status is not None else '(no response)'}"]
    lines += [f"{name}: {value}" for name, value in flow.response_headers]
    if flow.notes:
        # What the forwarder noted on the way: translation losses, ignored replay headers, ...
        lines += ["", "notes:", *(f"  {note}" for note in flow.notes)]
    return [shown(line) for line in lines]


def prepare(flow: Flow, session: Sequence[Violation] = (), analysis: Analysis | None = None) -> FlowView:
    """`session`: this flow's findings from the session rules (see `analysis.session_findings`);
    `analysis`: the one the store kept (Store.analysis), else the flow is analysed here."""
    analysis = analyse(flow) if analysis is None else analysis
    request = body_pane(flow.request_body, flow.request_headers, analysis.request)
    sent = flow.upstream_request_body
    unchanged = sent_unchanged(flow)
    if unchanged or sent is None:  # (None is unchanged too: said again so that `sent` is bytes below)
        note = NOTHING_TO_REPAIR_NOTE if flow.mode is Mode.REPAIR else PASSTHROUGH_NOTE
        upstream = Pane(request.text, request.located, note)
    else:
        upstream = body_pane(sent, flow.upstream_request_headers, analysis.upstream_request)
        if flow.translate:
            upstream.note = f"translated {flow.translate.replace(':', ' → ')}"
        elif flow.mode is Mode.REPAIR:
            upstream.note = f"repaired on the way ({fmt.counted(len(flow.notes), 'repair')}, H: the list)"
    if flow.streamed and analysis.response is not None:
        response = body_pane(b"", [], analysis.response)
        response.note = f"reassembled from {fmt.counted(len(flow.chunks), 'chunk')} (s: raw chunks)"
    elif flow.streamed:
        response = body_pane(flow.response_body, flow.response_headers)
        response.note = f"{fmt.counted(len(flow.chunks), 'chunk')}, could not be reassembled (s: raw chunks)"
    else:
        response = body_pane(flow.response_body, flow.response_headers, analysis.response)
    if flow.error:
        response.note = f"error: {flow.error}" + (f" · {response.note}" if response.note else "")

    located = translation_report(flow, analysis, request, upstream, response)
    for violation in [*analysis.violations, *session]:
        lines: dict[str, int] = {}
        if violation.where in ("request", "") or (violation.where == "upstream" and unchanged):
            # One document, so one place: the pane that shows it marks it whichever side it was checked on.
            lines["request"] = request.mark(violation.pointer, violation.severity.value)
            if unchanged:
                lines["upstream"] = upstream.mark(violation.pointer, violation.severity.value)
        elif violation.where == "upstream":
            lines["upstream"] = upstream.mark(violation.pointer, violation.severity.value)
        elif violation.where in ("response", "stream", "session"):
            lines["response"] = response.mark(violation.pointer, violation.severity.value)
        located.append(Located(violation, lines))
    # Document order: n/N walk the panes top to bottom as the user reads them, not pointer strings
    # ("/10" sorts before "/2"). Findings with no line in any pane come last.
    located.sort(key=document_order)
    upstream_response = None
    if flow.upstream_response_body is not None and flow.upstream_response_body != flow.response_body:
        upstream_response = body_pane(flow.upstream_response_body, flow.response_headers)
        upstream_response.note = "what the upstream answered, before the translation back"
    for pane in (request, upstream, response, upstream_response):
        if pane is not None:
            pane.lines()
    return FlowView(flow, analysis, request, upstream, response, chunk_lines(flow), header_lines(flow), located,
                    upstream_response)


def document_order(item: Located) -> tuple[int, int, int]:
    pane, line = min(((PANE_ORDER[name], line) for name, line in item.lines.items()), default=(len(PANE_ORDER), 0))
    return pane, line, item.violation.severity.rank


def translation_report(flow: Flow, analysis: Analysis, request: Pane, upstream: Pane, response: Pane) -> list[Located]:
    """In translate mode, what the translation changed or lost, as warnings that lead from the
    original's line to the translated one (the side-by-side diff of issue 4).

    The structured reports, with both pointers, are the analysis's (kept by the store)."""
    items: list[tuple[str, Loss]] = [("request", loss) for loss in analysis.request_losses]
    items += [("response", loss) for loss in analysis.response_losses]
    located = []
    for side, loss in items:
        violation = Violation(loss.rule or "XL", Severity.WARNING, loss.source, f"{loss.kind}: {loss.why}",
                              where="translation", effect=Effect.CHANGES)  # the bridge changed it on the way
        lines: dict[str, int] = {}
        if side == "request":
            lines["request"] = request.mark(loss.source, Severity.WARNING.value)
            if loss.target is not None:
                lines["upstream"] = upstream.mark(loss.target, Severity.WARNING.value)
        elif loss.target is not None:
            lines["response"] = response.mark(loss.target, Severity.WARNING.value)
        located.append(Located(violation, lines))
    return located


