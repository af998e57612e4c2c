"""One flow, opened: the request as the client sent it beside what went upstream, the response
(reassembled when streamed) with the raw chunks one key away, and the violations list. Choosing
a violation moves the panes that show its payload to its line.

Below 100 columns the panes stack instead of sharing a row (two 38-column panes show nothing
whole), and `z` gives the focused pane the whole screen. A request that went upstream byte for byte
gets one pane; when the two differ, scrolling one keeps the other on the same JSON path.

The app builds this screen once and shows every flow in it (`open`): composing, mounting and styling
its fifty widgets took longer than reading and checking a 50 KB flow."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from ...flow import REPLAY_NOTES, Flow, FlowState, ReplayKind
from ...textsafe import shown
from ...wire.session import DIALECTS as SESSION_DIALECTS
from ...wire.violations import Violation
from .. import format as fmt
from ..compare import DiffView, prepare_fixed_diff, prepare_replay_diff, prepare_response_diff, prepare_upstream_diff
from ..view import UNCHANGED_TITLE, FlowView, Located, Pane, prepare, preview
from ..widgets.footer import SteadyFooter
from ..widgets.lines import LineViewer, ViewerScrolled
from ..widgets.payload import PayloadView
from ..widgets.violations import ViolationPanel
from .conversation import ConversationScreen
from .diff import DiffScreen
from .finding import FindingScreen
from .reading import ReadingScreen

if TYPE_CHECKING:
    from ..app import InspectorApp


def flow_title(view: FlowView) -> Content:
    flow, analysis = view.flow, view.analysis
    parts: list[str | tuple[str, str]] = [
        (f"#{flow.id} ", "bold $accent"),
        (shown(f"{flow.method} {flow.path}"), "bold"),
        f"  {analysis.dialect.value if analysis.dialect else 'unknown dialect'}",
    ]
    # The mode says how to read everything below (translated? repaired?): early, where it is never cut.
    mode = f"translate {flow.translate.replace(':', ' → ')}" if flow.translate else flow.mode.value
    parts.append((f" · {mode}", "$text-muted"))
    if analysis.model:
        parts.append(f"  {shown(analysis.model)}")
    failed = flow.state is FlowState.ERROR or (flow.status or 0) >= 400
    parts.append((f"  {fmt.status(flow.status, flow.state.value)}", "bold $error" if failed else "bold $success"))
    # Most telling first: the title is one line and a long path pushes the tail off screen.
    if analysis.errors or analysis.warnings:
        badge_style = "bold $error" if analysis.errors else "$warning"
        parts.append((f"  {fmt.badge(analysis.errors, analysis.warnings)}", badge_style))
    if flow.replay_of is not None:
        kind = next((f"{kind.value} " for kind, note in REPLAY_NOTES.items() if note in flow.notes), "")
        parts.append((f"  {kind}replay of #{flow.replay_of}", "bold $secondary"))
    parts.append(f"  latency {fmt.duration(flow.latency_ms)}")
    if flow.streamed or flow.ttfb_ms is not None:
        parts.append(f"  ttfb {fmt.duration(flow.ttfb_ms)}")
    if analysis.buffered:
        parts.append(("  ⇉ buffered: every event arrived at once", "bold $warning"))
    if analysis.parse_error:
        parts.append((f"  {shown(analysis.parse_error)}", "$warning"))
    return Content.assemble(*parts)


class FlowScreen(ReadingScreen):
    # -narrow stacks the panes (app.tcss); 100 columns is where two side-by-side panes of JSON
    # still show a key and its value (ReadingScreen's breakpoint).
    HELP_TITLE = "Flow view"
    BINDINGS = [
        Binding("escape,q", "back", "Back", id="flow.back", tooltip="Back to the flow list"),
        Binding("r", "replay", "Replay", id="flow.replay", tooltip="Send this request upstream again, as recorded"),
        Binding("R", "replay_fixed", "Replay fixed", show=False, id="flow.replay-fixed",
                tooltip="Send it again with every safe repair applied (F)"),
        # The footer shows what reading a failing turn needs at 80 columns; ? and ctrl+p have the rest.
        Binding("x", "export", "Export", show=False, id="flow.export", tooltip="Export this flow (fixture, pytest, cassette or HAR)"),
        Binding("e", "edit", "Edit", show=False, id="flow.edit", tooltip="Edit this request here, then send it (marked ↻E#N)"),
        Binding("E", "edit(True)", "Edit in $EDITOR", show=False, id="flow.edit-external",
                tooltip="Edit this request in $VISUAL or $EDITOR, then send it"),
        Binding("y", "copy('curl')", "Copy curl", show=False, id="flow.copy-curl",
                tooltip="Copy as curl with the key as $…_API_KEY (and to a file)"),
        Binding("Y", "copy('body')", "Copy body", show=False, id="flow.copy-body",
                tooltip="Copy the request body (and to a file)"),
        Binding("P", "copy('pointer')", "Copy pointer", show=False, id="flow.copy-pointer",
                tooltip="Copy the chosen finding's JSON pointer (and to a file)"),
        Binding("s", "chunks", "Chunks", show=False, id="flow.chunks", tooltip="Raw stream chunks with arrival times (toggle)"),
        Binding("H", "headers", "Headers", show=False, id="flow.headers",
                tooltip="Request, upstream and response headers (toggle)"),
        Binding("n", "violation(1)", "Next issue", id="flow.next-violation", tooltip="Go to the next violation"),
        Binding("N", "violation(-1)", "Prev issue", show=False, id="flow.previous-violation",
                tooltip="Go to the previous violation"),
        # n / N walk the findings (and a search's matches): the flows get the bracket keys.
        Binding("right_square_bracket", "step_flow(1)", "Next flow", show=False, id="flow.next-flow",
                key_display="]", tooltip="The next flow in the list (as filtered and sorted), in the same pane and zoom"),
        Binding("left_square_bracket", "step_flow(-1)", "Prev flow", show=False, id="flow.previous-flow",
                key_display="[", tooltip="The previous flow in the list, in the same pane and zoom"),
        Binding("i", "finding", "Finding", id="flow.finding",
                tooltip="The chosen finding whole: message, pointer, why and fix"),
        Binding("F", "fixed", "Fixed", id="flow.fixed",
                tooltip="The request beside itself with every safe repair applied, as a diff"),
        Binding("p", "pager", "Pager", show=False, id="flow.pager", tooltip="Open the focused payload in $PAGER"),
        Binding("z", "zoom", "Zoom", id="flow.zoom", tooltip="Give the focused pane the whole screen (toggle)"),
        # The views that explain a failing turn (compare.py).
        Binding("t", "conversation", "Turns", id="flow.conversation",
                tooltip="The conversation: turns, each tool call paired with its result, tools offered vs called"),
        Binding("d", "diff_upstream", "Diff", show=False, id="flow.diff-upstream",
                tooltip="The original request against what went upstream, the loss report on its lines"),
        Binding("D", "diff_response", "Diff response", show=False, id="flow.diff-response",
                tooltip="The upstream's own answer against what the client got, the loss report on its lines"),
        Binding("v", "diff_replay", "Vs replay", show=False, id="flow.diff-replay",
                tooltip="This response against its replay's (or, on a replay, its origin's)"),
    ]

    class Prepared(Message):
        def __init__(self, view: FlowView) -> None:
            super().__init__()
            self.view = view

    class Previewed(Message):
        """The request's text, before the analysis of a big flow is done (view.preview)."""

        def __init__(self, flow_id: int, pane: Pane) -> None:
            super().__init__()
            self.flow_id = flow_id
            self.pane = pane

    def __init__(self, flow_id: int) -> None:
        super().__init__()
        self.flow_id = flow_id
        self.view: FlowView | None = None
        self.chosen: Located | None = None  # the violation the panes are showing
        # `]` / `[`: the pane that had the focus, and the widget zoomed, for the next flow to show in.
        self._kept: tuple[Widget | None, Widget | None, str] | None = None

    def open(self, flow_id: int) -> None:
        """Show another flow in this screen: what the last one showed goes at once, so no pane ever
        shows one flow's payload under another's title."""
        self.flow_id, self.view, self.chosen = flow_id, None, None
        if self.is_mounted:
            self._clear()
            self.load()

    @property
    def inspector(self) -> InspectorApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Static(f"#{self.flow_id} loading…", id="flow-title")
        with Horizontal(id="request-row"):
            yield PayloadView("Request · original", id="request")
            yield PayloadView("Sent upstream", id="upstream")
        with Horizontal(id="response-row"):
            with TabbedContent(id="response-tabs"):
                with TabPane("Response", id="tab-response"):
                    # The tab names it; the frame stays for the note (e.g. "reassembled from 12 chunks").
                    yield PayloadView("", id="response")
                with TabPane("Stream chunks", id="tab-chunks"):
                    # Short documents whose rows are sentences: wrapped, so nothing is cut mid-word.
                    yield LineViewer(id="chunks", wrap=True)
                with TabPane("Headers", id="tab-headers"):
                    yield LineViewer(id="headers")
                with TabPane("Upstream response", id="tab-upstream-response"):
                    yield PayloadView("", id="upstream-response")
            yield ViolationPanel(id="violations")
        yield SteadyFooter(compact=True)  # 80 columns hold every key it shows (tests/tui/test_any_terminal.py)

    def on_mount(self) -> None:
        self._clear()
        self.load()

    def _clear(self) -> None:
        if self.maximized is not None:
            self.minimize()
        self.query_one("#flow-title", Static).update(f"#{self.flow_id} loading…")
        for pane in self.query(PayloadView):
            pane.clear()
        self.query_one("#request", PayloadView).border_title = "Request · original"
        self.query_one("#chunks", LineViewer).load([])
        self.query_one("#headers", LineViewer).load([])
        self.query_one(ViolationPanel).pending()
        tabs = self.query_one(TabbedContent)
        tabs.active = "tab-response"
        # Shown only for a translated flow, once the view knows it has an upstream answer of its own.
        tabs.hide_tab("tab-upstream-response")
        # The violations list starts focused: arrows (and n/N anywhere) walk the findings.
        self.query_one("#violation-list").focus()

    @work(thread=True, exclusive=True, exit_on_error=False, group="flow-view", description="prepare flow view")
    def load(self) -> None:
        """Analysis and pretty-printing of possibly megabytes of JSON: never on the UI thread."""
        flow_id = self.flow_id
        flow = self.inspector.store.get(flow_id)
        if flow is None:
            self.app.call_from_thread(self._missing, flow_id)
            return
        first = preview(flow)
        if first is not None:
            self.post_message(self.Previewed(flow_id, first))
        self.post_message(self.Prepared(prepare(flow, self._session_findings(flow), self.inspector.store.analysis(flow))))

    def _session_findings(self, flow: Flow) -> list[Violation]:
        """The session rules judge the MCP exchanges and the model flows of the flow's recording that
        may carry opaque state; other flows have none. The writer stored them: no other flow is read."""
        store = self.inspector.store
        if flow.id not in store.flow_ids(flow.session_id, dialects=SESSION_DIALECTS):
            return []
        return store.session_findings(flow.session_id).get(flow.id, [])

    def _missing(self, flow_id: int) -> None:
        if flow_id != self.flow_id:
            return
        self.notify(f"flow #{flow_id} is not in the store", severity="error")
        self.query_one("#flow-title", Static).update(f"#{flow_id} is not in the store")
        self.query_one(ViolationPanel).pending("nothing to check")
        self.inspector.show_flow_screen(flow_id)
        self.inspector.release_keys()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # exit_on_error=False keeps the app alive; the user still has to hear about it.
        if event.state is WorkerState.ERROR:
            self.notify(f"#{self.flow_id}: {event.worker.description} failed: {event.worker.error!r}",
                        severity="error", markup=False)
            if self.view is None:
                self.query_one("#flow-title", Static).update(f"#{self.flow_id} could not be shown")
                self.inspector.show_flow_screen(self.flow_id)
                self.inspector.release_keys()

    def on_flow_screen_previewed(self, message: Previewed) -> None:
        # A reload keeps showing the full view until the new one is ready; a flow left for
        # another one while it loaded shows nothing of itself.
        if self.view is None and message.flow_id == self.flow_id:
            self.query_one("#request", PayloadView).show(message.pane)
            self.inspector.show_flow_screen(self.flow_id)

    def on_flow_screen_prepared(self, message: Prepared) -> None:
        if message.view.flow.id != self.flow_id:
            return
        view = self.view = message.view
        self.query_one("#flow-title", Static).update(flow_title(view))
        request, upstream = self.query_one("#request", PayloadView), self.query_one("#upstream", PayloadView)
        request.border_title = UNCHANGED_TITLE if view.unchanged else "Request · original"
        self._show_upstream(not view.unchanged)
        request.show(view.request)
        if not view.unchanged:  # else hidden: loading a copy nobody sees was a third of the open
            upstream.show(view.upstream)
        self.query_one("#response", PayloadView).show(view.response)
        chunks = self.query_one("#chunks", LineViewer)
        chunks.load(view.chunks or ["(not streamed: the response arrived as one body)"])
        self.query_one("#headers", LineViewer).load(view.headers)
        tabs = self.query_one(TabbedContent)
        tabs.get_tab("tab-chunks").label = f"Stream chunks ({len(view.chunks)})"
        if view.upstream_response is None:
            tabs.hide_tab("tab-upstream-response")
        else:
            tabs.show_tab("tab-upstream-response")
            self.query_one("#upstream-response", PayloadView).show(view.upstream_response)
        self.query_one(ViolationPanel).show(view.violations)
        if not view.violations:
            # Nothing to walk: the keys go to the request, the pane that has content (z zooms it).
            self.query_one("#request", PayloadView).viewer.focus()
        if self._kept is not None:
            self._restore_panes(*self._kept)
            self._kept = None
        self.inspector.show_flow_screen(self.flow_id)
        # After the screen is up (and focus is where the view puts it), the keys typed meanwhile.
        self.call_after_refresh(self.inspector.release_keys)

    @on(ViolationPanel.Chosen)
    def go_to_violation(self, event: ViolationPanel.Chosen) -> None:
        self.chosen = event.item
        for pane, line in event.item.lines.items():
            if not self.query_one(f"#{pane}", PayloadView).display:
                continue
            if pane == "response":
                self.query_one(TabbedContent).active = "tab-response"
            self.query_one(f"#{pane}", PayloadView).go_to(line)

    @on(ViewerScrolled)
    def align_panes(self, event: ViewerScrolled) -> None:
        """The pane the user reads (the focused one) leads; the other follows to the same JSON path,
        as far into that node as the leader is. Following only the focused pane keeps the follower's
        own scroll events from pulling the leader back."""
        source = event.viewer.parent
        if not isinstance(source, PayloadView) or source.id not in ("request", "upstream"):
            return
        request, upstream = self.query_one("#request", PayloadView), self.query_one("#upstream", PayloadView)
        if not (upstream.display and source.has_focus_within):
            return
        target = upstream if source is request else request
        if source.pane is None or target.pane is None or target.pane.located is None:
            return
        top = source.top_line
        pointer = source.pane.pointer_at(top)
        if pointer is None:
            return
        line = target.pane.line_of(pointer) + top - source.pane.line_of(pointer)
        if target.top_line != line:
            target.scroll_to_line(line)

    def _show_upstream(self, shown: bool) -> None:
        self.query_one("#upstream", PayloadView).display = shown
        # Stacked at 80x24, two request panes need more than a third of the height (app.tcss).
        self.set_class(shown, "two-requests")

    def action_zoom(self) -> None:
        # The violations box of a clean flow holds one line: zooming it would fill the screen with
        # nothing. The request is what there is to read.
        panel = self.query_one(ViolationPanel)
        if self.maximized is None and panel.has_focus_within and not panel.items:
            self.maximize(self.query_one("#request", PayloadView))
            return
        super().action_zoom()

    def action_step_flow(self, delta: int) -> None:
        """`]` / `[`: the next or previous flow of the list as it stands, read where this one was."""
        flows = self.inspector.flows_screen.flow_list
        if not flows.select_id(self.flow_id):
            self.notify(f"#{self.flow_id} is not in the list as filtered (esc there clears the filter)",
                        severity="warning")
            return
        target = flows.row(flows.cursor + delta)
        if target is None:
            self.notify(f"#{self.flow_id} is the {'last' if delta > 0 else 'first'} flow in the list",
                        severity="information")
            return
        flows.action_move(delta)
        self._kept = (self.focused, self.maximized, self.query_one(TabbedContent).active)
        self.inspector.open_flow(target.id)

    def _restore_panes(self, focused: Widget | None, zoomed: Widget | None, tab: str) -> None:
        """The focus and zoom `]` left, where the new flow has them to give: the findings list of
        a clean flow, or a pane it does not show, gives way to the request (as on opening)."""
        tabs = self.query_one(TabbedContent)
        if tabs.get_tab(tab).display:
            tabs.active = tab
        panel = self.query_one(ViolationPanel)
        request = self.query_one("#request", PayloadView).viewer

        def usable(widget: Widget | None) -> Widget | None:
            if widget is None or (panel in widget.ancestors_with_self and not panel.items):
                return None
            hidden = any(not node.display for node in widget.ancestors_with_self if isinstance(node, Widget))
            return None if hidden else widget

        target = usable(focused) or request
        target.focus()
        if zoomed is not None:
            # The request pane itself when a clean flow's empty findings box would have been zoomed.
            parent = request.parent if isinstance(request.parent, Widget) else target
            self.maximize(usable(zoomed) or (parent if isinstance(zoomed, PayloadView) else target))

    def action_replay(self) -> None:
        self.inspector.replay_flow(self.flow_id)

    def action_replay_fixed(self) -> None:
        self.inspector.replay_flow(self.flow_id, ReplayKind.FIXED)

    def action_export(self) -> None:
        self.inspector.ask_export(self.flow_id)

    def action_edit(self, external: bool = False) -> None:
        self.inspector.edit_flow(self.flow_id, external=external)

    def action_copy(self, what: str) -> None:
        if what == "pointer" and self.chosen is None:
            self.notify("no finding chosen: pick one in the violations list (n)", severity="warning")
            return
        self.inspector.ask_copy(self.flow_id, what, self.chosen.violation.pointer if self.chosen else None)

    def action_chunks(self) -> None:
        tabs = self.query_one(TabbedContent)
        tabs.active = "tab-response" if tabs.active == "tab-chunks" else "tab-chunks"

    def action_headers(self) -> None:
        tabs = self.query_one(TabbedContent)
        tabs.active = "tab-response" if tabs.active == "tab-headers" else "tab-headers"

    def action_violation(self, delta: int) -> None:
        self.query_one(ViolationPanel).step(delta)

    def action_finding(self) -> None:
        panel = self.query_one(ViolationPanel)
        index = panel.highlighted
        if index is None:
            self.notify("no findings in this flow" if self.view is not None else "still checking this flow",
                        severity="information")
            return
        self.app.push_screen(FindingScreen(panel.items, index, panel.step))

    def action_pager(self) -> None:
        """The escape hatch for payloads too big to read here: the user's own pager."""
        if self.view is None:
            return
        pane = self.view.request
        for name in ("upstream", "response"):
            if self.query_one(f"#{name}", PayloadView).has_focus_within:
                pane = getattr(self.view, name)
        with tempfile.NamedTemporaryFile("w", suffix=".json", prefix=f"flow-{self.flow_id}-", delete=False) as out:
            out.write(pane.text)
        command = shlex.split(os.environ.get("PAGER") or "less") + [out.name]
        try:
            with self.app.suspend():
                subprocess.call(command)
        except (SuspendNotSupported, OSError) as exc:  # headless runs; a pager that is not installed
            self.app.notify(f"cannot open a pager ({type(exc).__name__}); the payload is in {out.name}",
                            severity="warning")
            return
        os.unlink(out.name)

    def reload(self) -> None:
        self.load()

    # -- the views that explain a failing turn: each computes in its own screen's thread worker ---

    def action_conversation(self) -> None:
        if self.view is not None:
            self.app.push_screen(ConversationScreen(self.view))

    def _diff(self, prepare: Callable[[FlowView], DiffView | None], title: str, absent: str, *,
              fixed: bool = False) -> None:
        """A diff screen over this flow's view, computed in the screen's worker."""
        if self.view is not None:
            view = self.view
            self.app.push_screen(DiffScreen(lambda: prepare(view), title=f"#{self.flow_id} {title}", absent=absent,
                                            fixed_of=self.flow_id if fixed else None))

    def action_diff_upstream(self) -> None:
        self._diff(prepare_upstream_diff, "original → upstream",
                   "sent upstream unchanged: there is nothing to compare")

    def action_fixed(self) -> None:
        self._diff(prepare_fixed_diff, "original → fixed",
                   "nothing to fix: the request is not JSON of a known dialect", fixed=True)

    def action_diff_replay(self) -> None:
        store = self.inspector.store
        self._diff(lambda view: prepare_replay_diff(store, view), "response vs replay",
                   "neither a replay nor replayed: r or R replays it")

    def action_diff_response(self) -> None:
        self._diff(prepare_response_diff, "upstream answer → client",
                   "the client got the upstream's own answer: there is nothing to compare")
