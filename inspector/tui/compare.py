"""What the conversation, diff and replay-comparison screens show, prepared off the UI thread from
the core's conversation model (`wire.conversation`) and structural diff (`wire.diff`). Plain data,
no widgets, like `view.py`: the screens only load lines."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..analysis import BodyTooLarge, decode_body, fixed_errors, parse_json, safe_repairs, upstream_answer
from ..flow import Flow
from ..textsafe import shown
from ..wire import jsonsafe
from ..wire.conversation import Conversation, Entry, Mark, build
from ..wire.diff import Diff, Op, diff
from ..wire.pointer import join
from . import format as fmt
from .view import FlowView

if TYPE_CHECKING:
    from ..store import Store

# LineViewer marks: the diff's own kinds beside the severities the viewer already knows.
OP_MARK = {Op.ADDED: "added", Op.REMOVED: "removed", Op.CHANGED: "changed"}


@dataclass(slots=True)
class Lines:
    lines: list[str] = field(default_factory=list)
    marks: dict[int, str] = field(default_factory=dict)  # line -> mark kind

    def add(self, line: str, mark: str | None = None) -> None:
        """Every line of a conversation or a diff quotes the flow: it is added shown safe."""
        if mark is not None:
            self.marks[len(self.lines)] = mark
        self.lines.append(shown(line))


@dataclass(slots=True)
class ConversationView:
    title: str
    turns: Lines
    tools: Lines
    conversation: Conversation | None  # None when the request is of no known dialect


def prepare_conversation(view: FlowView) -> ConversationView:
    analysis, flow = view.analysis, view.flow
    if analysis.dialect is None:
        empty = Lines(["The request is not of a known dialect: there is no conversation to read."])
        return ConversationView(f"#{flow.id} conversation · unknown dialect", empty, Lines(), None)
    conversation = build(analysis.dialect, analysis.request, analysis.response, path=flow.path,
                         aliases=_aliases(view))
    turns, tools = Lines(), Lines()
    if conversation.problem:
        turns.add(conversation.problem, "error")
    for number, turn in enumerate(conversation.turns):
        where = f"  {turn.pointer}" if turn.pointer else ""
        heading = f"#{number} {turn.role}" + (" · response (new turn)" if turn.new else "") + where
        turns.add(heading, "info" if turn.new else None)
        for entry in turn.entries:
            _entry_lines(turns, entry)
    _tool_lines(tools, conversation)
    counts = conversation.counts()
    title = (f"#{flow.id} {analysis.dialect.value} · {fmt.counted(len(conversation.turns), 'turn')} · "
             f"orphans {counts[Mark.ORPHAN]} · unanswered {counts[Mark.UNANSWERED]} · new calls {counts[Mark.NEW]}" +
             (f" · ✖ {conversation.refused} unreadable" if conversation.refused else ""))
    return ConversationView(title, turns, tools, conversation)


def _aliases(view: FlowView) -> dict[str, str]:
    """Client tool name -> the name it travelled upstream under."""
    if view.analysis.translation is not None:
        return {client: upstream for upstream, client in view.analysis.translation.state.aliases.items()}
    if view.analysis.repaired is not None:
        return {name: alias for alias, name in view.analysis.repaired.aliases.items()}
    return {}


def _entry_lines(out: Lines, entry: Entry) -> None:
    call_id = f"  {entry.call_id}" if entry.call_id else ""
    if entry.kind == "call":
        status = {Mark.ANSWERED: f" → answered in #{entry.partner}",
                  Mark.UNANSWERED: " ✖ unanswered: no result follows",
                  Mark.NEW: " · new: the client runs it next"}.get(entry.mark, "")
        undeclared = " ✖ not offered in tools" if entry.undeclared else ""
        bad = entry.mark is Mark.UNANSWERED or entry.undeclared
        out.add(f"   → call {entry.name}{call_id}{status}{undeclared}", "error" if bad else None)
        out.add(f"       {entry.text}")
    elif entry.kind in ("result", "response"):
        status = {Mark.ORPHAN: " ✖ orphan: answers no earlier call",
                  Mark.AGAIN: f" ▲ answers #{entry.partner} again"}.get(entry.mark, "")
        if entry.mark is Mark.NONE and entry.partner is not None:
            status = f" ← answers #{entry.partner}"
        kind = "result of " + entry.name if entry.kind == "result" and entry.name else entry.kind
        mark = {Mark.ORPHAN: "error", Mark.AGAIN: "warning"}.get(entry.mark)
        out.add(f"   ← {kind}{call_id}{status}", mark)
        out.add(f"       {entry.text}")
    elif entry.kind == "request":
        status = {Mark.ANSWERED: f" → answered in #{entry.partner}",
                  Mark.UNANSWERED: " ✖ unanswered: no response has its id"}.get(entry.mark, "")
        out.add(f"   → {entry.text}{call_id}{status}", "error" if entry.mark is Mark.UNANSWERED else None)
    elif entry.kind == "error":
        out.add(f"   ✖ {entry.text}", "error")
    else:
        out.add(f"   {entry.text}")


def _tool_lines(out: Lines, conversation: Conversation) -> None:
    tools = conversation.tools
    offered = [t for t in tools if t.declared or t.hosted]
    out.add(f"tools: {len(offered)} offered · {sum(1 for t in tools if t.called)} called · "
            f"{sum(1 for t in offered if not t.called)} never called · "
            f"{sum(1 for t in tools if t.undeclared)} not offered · "
            f"{sum(1 for t in tools if t.declared > 1)} duplicated · "
            f"{sum(1 for t in tools if t.upstream_name)} aliased")
    width = max((len(t.name) for t in tools), default=0)
    for tool in tools:
        facts = []
        if tool.hosted:
            facts.append("hosted")
        elif tool.undeclared:
            facts.append("✖ not offered")
        else:
            facts.append("offered" if tool.declared == 1 else f"▲ declared ×{tool.declared}")
        facts.append(f"called ×{tool.called}" if tool.called else "never called")
        if tool.upstream_name:
            facts.append(f"upstream as {tool.upstream_name}")
        mark = "error" if tool.undeclared else "warning" if tool.declared > 1 else None
        out.add(f"{tool.name:<{width}}  {' · '.join(facts)}", mark)


@dataclass(slots=True)
class Note:
    """One entry of a loss report or a repair, placed on the diff's line for its pointer."""

    pointer: str  # in the left document
    target: str | None  # in the right document, when the change landed there
    text: str


@dataclass(slots=True)
class DiffView:
    title: str
    lines: Lines  # the diff, each note under its line
    notes: Lines | None  # the notes as a list; None where nothing reports on the changes (replays)
    summary: str  # +added −removed ~changed, notes
    diff: Diff | None = None


def diff_view(title: str, left: Any, right: Any, reported: Iterable[Note] | None = None,
              summary: str = "") -> DiffView:
    """`reported`: the loss report's or the repairs' entries; None when the changes have no report."""
    found = diff(left, right)
    placed: dict[int, list[Note]] = {}
    notes = list(reported or ())
    for note in notes:
        row = found.row_of(note.target, "right") if note.target is not None else None
        if row is None:
            row = found.row_of(note.pointer, "right")
        if row is None:
            row = found.line_of(note.pointer, "left")
        placed.setdefault(row, []).append(note)
    out = Lines()
    for index, line in enumerate(found.rows):
        indent = "  " * line.depth
        out.add(f"{line.op.value} {indent}{line.text}", OP_MARK.get(line.op))
        for note in placed.get(index, []):
            out.add(f"  {indent}  ▲ {note.text}", "warning")
    listed: Lines | None = None
    if reported is not None:
        listed = Lines()
        for note in notes:
            moved = note.target is not None and note.target != note.pointer
            listed.add(f"{note.pointer or '/'}" + (f" → {note.target or '/'}" if moved else ""))
            listed.add(f"  {note.text}")
        if not notes:
            listed.add("no notes: nothing was reported for these changes")
    counts = found.counts()
    changes = f"+{counts[Op.ADDED]} −{counts[Op.REMOVED]} ~{counts[Op.CHANGED]}"
    if found.identical:
        changes = "identical"
    summary = " · ".join(part for part in (changes, fmt.counted(len(notes), "note") if notes else "", summary) if part)
    return DiffView(title, out, listed, summary, found)


def prepare_upstream_diff(view: FlowView) -> DiffView | None:
    """The client's request against what went upstream, with the loss report (translate) or the
    repairs (repair) on their lines. None when the two are the same bytes."""
    flow, analysis = view.flow, view.analysis
    if view.unchanged:
        return None
    left = analysis.request if analysis.request is not None else _text(flow.request_body, flow.request_headers)
    right = analysis.upstream_request if analysis.upstream_request is not None else \
        _text(flow.upstream_request_body or b"", flow.upstream_request_headers)
    notes: list[Note] = []
    if analysis.translation is not None:
        notes = [Note(loss.source, loss.target, f"{loss.kind}: {loss.why}" + (f" [{loss.rule}]" if loss.rule else ""))
                 for loss in analysis.translation.losses]
        how = f"translated {flow.translate.replace(':', ' → ') if flow.translate else ''}"
    elif analysis.repaired is not None:
        notes = [Note(r.pointer, None, f"{r.action}: {r.detail} [{r.rule}]") for r in analysis.repaired.repairs]
        how = "repaired on the way"
    else:
        how = "rewritten on the way"
    return diff_view(f"#{flow.id} original → sent upstream · {how}", left, right, notes)


def prepare_response_diff(view: FlowView) -> DiffView | None:
    """What the upstream itself answered against what the client got, the bridge's response losses
    (translate) or the restored tool names (repair) on their lines; streams as each side's own
    dialect reassembles them. None when the client got the upstream's own answer."""
    flow, analysis = view.flow, view.analysis
    answer = upstream_answer(flow, analysis)
    if answer is None:
        return None
    left = answer.document if answer.document is not None else \
        _text(flow.upstream_response_body or b"", flow.response_headers)
    right = analysis.response if analysis.response is not None else _text(flow.response_body, flow.response_headers)
    notes = [Note(loss.source, loss.target, f"{loss.kind}: {loss.why}" + (f" [{loss.rule}]" if loss.rule else ""))
             for loss in answer.losses]
    if analysis.translation is not None:
        how = f"translated {flow.translate.replace(':', ' → ') if flow.translate else ''}"
    elif analysis.repaired is not None:
        restored = analysis.repaired.aliases  # alias -> the name the client declared
        notes = [Note(pointer, pointer, f"restored: the client declared {restored[alias]!r}, sent upstream as "
                      f"{alias!r}") for pointer, alias in _strings(left, set(restored))]
        how = "tool names restored on the way back"
    else:
        how = "rewritten on the way back"
    streamed = " · both streams reassembled" if flow.streamed else ""
    return diff_view(f"#{flow.id} upstream answer → client got · {how}{streamed}", left, right, notes)


def _strings(document: Any, wanted: set[str]) -> Iterable[tuple[str, str]]:
    """(pointer, value) of every string in `document` that is one of `wanted`, in document order."""
    stack: list[tuple[str, Any]] = [("", document)]
    while stack:
        pointer, node = stack.pop()
        if isinstance(node, dict):
            stack.extend((join(pointer, key), value) for key, value in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((join(pointer, index), value) for index, value in reversed(list(enumerate(node))))
        elif isinstance(node, str) and node in wanted:
            yield pointer, node


def prepare_fixed_diff(view: FlowView, *, repairs_only: bool = False) -> DiffView | None:
    """The request against itself with every safe repair applied (what `R` sends); None when the
    request is not JSON of a known dialect, and with `repairs_only` when no repair applies (a page
    of a thousand flows lists no identical documents). A request the fixer cannot rewrite faithfully
    (nested past what orjson writes, an integer it would round) is one line saying why, as `check
    --fix` says."""
    analysis = view.analysis
    try:
        result = safe_repairs(analysis)
    except jsonsafe.Unfaithful as exc:
        reason = f"cannot fix faithfully: {exc}"
        return DiffView(f"#{view.flow.id} original → fixed · {reason}", Lines([shown(reason)], {0: "error"}), None,
                        "")
    if result is None or (repairs_only and not result.repairs):
        return None
    notes = [Note(r.pointer, None, f"{r.action}: {r.detail} [{r.rule}]") for r in result.repairs]
    errors_left = fixed_errors(analysis, result)
    return diff_view(f"#{view.flow.id} original → fixed (R replays it)", analysis.request, result.payload, notes,
                     f"{fmt.counted(len(result.repairs), 'repair')} · {fmt.counted(errors_left, 'error')} left")


def prepare_replay_diff(store: Store, view: FlowView) -> DiffView | None:
    """From a replay: its origin's response against its own. From a replayed flow: its response
    against its newest replay's. None when the flow is neither (or the other one is gone)."""
    flow = view.flow
    origin: Flow | None
    replay: Flow | None
    if flow.replay_of is not None:
        origin, replay = store.get(flow.replay_of), flow
    else:
        # `#N` finds a flow's replays (filters.py): the one home of "the replays of a flow".
        replays = [row.id for row in store.rows(text=f"#{flow.id}") if row.replay_of == flow.id]
        origin, replay = flow, store.get(max(replays)) if replays else None
    if origin is None or replay is None:
        return None

    def response(other: Flow) -> Any:
        document = (view.analysis if other.id == flow.id else store.analysis(other)).response
        return document if document is not None else _text(other.response_body, other.response_headers)

    title = (f"response of #{origin.id} ({fmt.status(origin.status, origin.state.value)}) → "
             f"replay #{replay.id} ({fmt.status(replay.status, replay.state.value)})")
    return diff_view(title, response(origin), response(replay))


def _text(body: bytes, headers: list[tuple[str, str]]) -> Any:
    """A body that is not JSON compares as its text (one value: changed or not)."""
    try:
        decoded = decode_body(body, headers)
    except BodyTooLarge as exc:
        return f"(body {exc})"
    document, _ = parse_json(decoded)
    return document if document is not None else decoded.decode("utf-8", "replace")
