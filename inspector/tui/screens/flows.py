"""The main screen: where to point the agent, and the live list of flows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input

from ...filters import HELP as FILTER_HELP
from ...filters import FilterError, compile_filter
from ...flow import ReplayKind
from ..format import counted
from ..messages import DeleteFailed, FlowsDeleted
from ..widgets.connection import ConnectionBar
from ..widgets.footer import SteadyFooter
from ..widgets.flow_list import ColumnHeader, FlowList
from .confirm import ConfirmScreen
from .frames import FramesScreen

if TYPE_CHECKING:
    from ..app import InspectorApp


STORE_CHECK_INTERVAL = 0.5  # seconds between looks at the store's health, for the header


class FlowsScreen(Screen[None]):
    HELP_TITLE = "Flow list"
    HELP_EXTRA = [("Filter expressions (/ in the list; flows --filter)", FILTER_HELP)]
    BINDINGS = [
        Binding("q", "app.quit", "Quit", id="flows.quit", tooltip="Quit (the forwarder stops with the app)"),
        # Priority: run as soon as the app reads the key, so the keys typed right after it go to
        # the field it focuses, not to the list (see check_action for typing these in the field).
        Binding("slash,f", "filter", "Filter", id="flows.filter", priority=True,
                tooltip="Filter the list: ~v ~dialect ~model ~tool ~c ~e ~d … #N or text, with & | ! ( ) (see below)"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="flows.clear-filter",
                tooltip="Drop the filter and show every flow"),
        Binding("r", "replay", "Replay", id="flows.replay",
                tooltip="Send the selected request upstream again, as recorded (marked ↻#N)"),
        Binding("R", "replay_fixed", "Replay fixed", show=False, id="flows.replay-fixed",
                tooltip="Send the selected request with every safe repair applied (marked ↻F#N)"),
        Binding("x", "export", "Export", id="flows.export", tooltip="Export the selected flow (fixture, pytest, cassette or HAR)"),
        Binding("e", "edit", "Edit", id="flows.edit",
                tooltip="Edit the request here, then send it (marked ↻E#N)"),
        Binding("E", "edit(True)", "Edit in $EDITOR", show=False, id="flows.edit-external",
                tooltip="Edit the request in $VISUAL or $EDITOR, then send it"),
        Binding("y", "copy('curl')", "Copy curl", show=False, id="flows.copy-curl",
                tooltip="Copy as curl with the key as $…_API_KEY (and to a file)"),
        Binding("Y", "copy('body')", "Copy body", show=False, id="flows.copy-body",
                tooltip="Copy the request body (and to a file)"),
        Binding("c", "connection", "Agent settings", show=False, id="flows.connection",
                tooltip="Show or hide every SDK variable and the store path in the header"),
        Binding("d", "delete", "Delete", show=False, id="flows.delete",
                tooltip="Delete the marked flows, or the selected one, from the store (asks first)"),
    ]

    @property
    def inspector(self) -> InspectorApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        app = self.inspector
        yield ConnectionBar(app.listening, store_path=str(app.store.path), id="connection")
        yield ColumnHeader()
        yield FlowList(app.store, clock=app.clock, id="flows")
        yield Input(placeholder="filter: text, ~v RULE ~dialect D ~model M ~tool T ~c 4xx ~e ~d DOMAIN #N, & | ! ( )",
                    id="filter")
        yield SteadyFooter(compact=True)  # 80 columns hold every key it shows (tests/tui/test_any_terminal.py)

    @property
    def flow_list(self) -> FlowList:
        return self.query_one("#flows", FlowList)

    def on_mount(self) -> None:
        self.flow_list.focus()
        self.set_interval(STORE_CHECK_INTERVAL, self.show_health)

    def show_health(self) -> None:
        """The header's news from the forwarder: the store's health, the export's losses, the tunnels
        that bypassed recording."""
        bar = self.query_one("#connection", ConnectionBar)
        bar.problem = self.inspector.store_problem
        bar.export_problem = self.inspector.export_problem
        bar.tunnelled = self.inspector.tunnelled

    def _update_filter_count(self) -> None:
        flows = self.flow_list
        field = self.query_one("#filter", Input)
        if field.has_class("-invalid"):
            return  # the parse error stays shown until the expression parses
        field.border_title = f"{flows.total} of {flows.source.count()} flows match" if flows.filter_text else None

    def refresh_flows(self) -> None:
        self.flow_list.reload()

    @on(FlowList.Reloaded)
    def flows_reloaded(self, message: FlowList.Reloaded) -> None:
        self._update_filter_count()
        if message.usage is not None:  # read with the window, off the UI thread
            self.query_one("#connection", ConnectionBar).usage = message.usage

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "filter":  # `/` and `f` typed in the filter field are text
            return not isinstance(self.focused, Input)
        return True

    def action_filter(self) -> None:
        field = self.query_one("#filter", Input)
        field.add_class("visible")
        self.set_focus(field)  # now, not on the next loop turn as focus() does

    def set_filter(self, expression: str) -> None:
        """Show the filter bar with `expression` in it (the palette's filters)."""
        field = self.query_one("#filter", Input)
        field.add_class("visible")
        field.value = expression
        self.flow_list.focus()

    def action_clear_filter(self) -> None:
        field = self.query_one("#filter", Input)
        field.value = ""
        field.remove_class("visible", "-invalid")
        self.flow_list.focus()

    @on(Input.Changed, "#filter")
    def filter_changed(self, event: Input.Changed) -> None:
        field = self.query_one("#filter", Input)
        try:
            compile_filter(event.value, marked=())  # ~marked is the list's marks here
        except FilterError as exc:
            # The list keeps the last expression that parsed; the bar says what is wrong, and where.
            field.add_class("-invalid")
            field.border_title = f"✖ {exc}"
            return
        field.remove_class("-invalid")
        self.flow_list.filter_text = event.value
        self._update_filter_count()

    @on(FlowList.Sorted)
    def flows_sorted(self, event: FlowList.Sorted) -> None:
        self.query_one(ColumnHeader).order = event.order

    def action_connection(self) -> None:
        bar = self.query_one("#connection", ConnectionBar)
        bar.expanded = not bar.expanded

    @on(Input.Submitted, "#filter")
    def filter_done(self) -> None:
        if not self.query_one("#filter", Input).value:
            self.query_one("#filter", Input).remove_class("visible")
        self.flow_list.focus()

    @on(FlowList.Opened)
    def open_flow(self, event: FlowList.Opened) -> None:
        row = self.flow_list.current
        if row is not None and row.id == event.flow_id and row.websocket:
            # A socket is read frame by frame; its turns open as flows.
            self.app.push_screen(FramesScreen(event.flow_id))
            return
        self.inspector.open_flow(event.flow_id)

    def action_replay(self) -> None:
        row = self.flow_list.current
        if row is None:
            self.notify("no flow selected", severity="warning")
            return
        self.inspector.replay_flow(row.id)

    def action_replay_fixed(self) -> None:
        row = self.flow_list.current
        if row is None:
            self.notify("no flow selected", severity="warning")
            return
        self.inspector.replay_flow(row.id, ReplayKind.FIXED)

    def action_export(self) -> None:
        row = self.flow_list.current
        if row is None:
            self.notify("no flow selected", severity="warning")
            return
        self.inspector.ask_export(row.id)

    def action_edit(self, external: bool = False) -> None:
        row = self.flow_list.current
        if row is None:
            self.notify("no flow selected", severity="warning")
            return
        self.inspector.edit_flow(row.id, external=external)

    def action_delete(self) -> None:
        """`d`: the marked flows (wherever the filter put them), else the one under the cursor, once
        asked. A flow still being recorded is kept: its forwarder writes it again when it ends."""
        flows = self.flow_list
        if flows.marks:
            rows = self.inspector.store.rows(text="~marked", marked=flows.marks)
        elif flows.current is not None:
            rows = [flows.current]
        else:
            self.notify("no flow selected", severity="warning")
            return
        chosen = [row.id for row in rows if row.state != "pending"]
        kept = [row.id for row in rows if row.state == "pending"]
        if not chosen:
            self.notify(f"{_ids(kept)} {'is' if len(kept) == 1 else 'are'} still in progress: a flow can be deleted "
                        "once it ends", title="Not deleted", severity="warning")
            return
        what = f"#{chosen[0]}" if len(chosen) == 1 and not flows.marks else \
            f"the {counted(len(chosen), 'marked flow')} ({_ids(chosen)})"
        lines = [f"Delete {what} from the store?"]
        if any(row.websocket for row in rows if row.id in chosen):
            lines.append("A WebSocket session goes with its turns.")
        if kept:
            lines.append(f"{_ids(kept)} {'is' if len(kept) == 1 else 'are'} still in progress and kept.")
        lines.append("Replays of a deleted flow stay, no longer linked to it.")

        def answered(yes: bool | None) -> None:
            if yes:
                self.delete_flows(chosen)

        self.app.push_screen(ConfirmScreen("Delete", "\n".join(lines), yes="delete"), answered)

    @work(thread=True, exit_on_error=False, group="delete", description="delete flows")
    def delete_flows(self, flow_ids: list[int]) -> None:
        """Where the store's writer is: the forwarder's process, whose store this one only reads,
        else this process's own store."""
        from ...store import StoreError

        forwarder = self.inspector.forwarder
        try:
            done = forwarder.delete(flow_ids) if forwarder is not None else self.inspector.store.delete(flow_ids)
        except StoreError as exc:
            self.post_message(DeleteFailed(str(exc)))
            return
        self.post_message(FlowsDeleted(done))

    @on(FlowsDeleted)
    def flows_deleted(self, message: FlowsDeleted) -> None:
        done = message.deletion
        self.flow_list.unmark(done.deleted)
        self.refresh_flows()
        said = [f"{counted(len(done.deleted), 'flow')} deleted ({_ids(done.deleted)})" if done.deleted
                else "nothing deleted"]
        if done.in_progress:
            said.append(f"{_ids(done.in_progress)} kept: still in progress")
        if done.missing:
            said.append(f"{_ids(done.missing)} were not in the store")
        self.notify("; ".join(said), title="Delete", markup=False)

    @on(DeleteFailed)
    def delete_failed(self, message: DeleteFailed) -> None:
        self.notify(f"nothing deleted: {message.reason}", title="Delete failed", severity="error", markup=False)

    def action_copy(self, what: str) -> None:
        row = self.flow_list.current
        if row is None:
            self.notify("no flow selected", severity="warning")
            return
        self.inspector.ask_copy(row.id, what)


def _ids(flow_ids: list[int] | tuple[int, ...], most: int = 8) -> str:
    shown = ", ".join(f"#{flow_id}" for flow_id in flow_ids[:most])
    return shown + (f" and {len(flow_ids) - most} more" if len(flow_ids) > most else "")
