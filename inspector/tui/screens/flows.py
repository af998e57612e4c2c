"""The main screen: where to point the agent, and the live list of flows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Input

from ...filters import FilterError, compile_filter
from ..widgets.connection import ConnectionBar
from ..widgets.flow_list import ColumnHeader, FlowList

if TYPE_CHECKING:
    from ..app import InspectorApp


STORE_CHECK_INTERVAL = 0.5  # seconds between looks at the store's health, for the header


class FlowsScreen(Screen[None]):
    BINDINGS = [
        Binding("q", "app.quit", "Quit", id="flows.quit", tooltip="Quit (the forwarder stops with the app)"),
        Binding("slash,f", "filter", "Filter", id="flows.filter",
                tooltip="Filter the list: ~d ~m ~s ~v ~t ~e ~r ~R #N or text, with & | ! ( ) (see below)"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="flows.clear-filter",
                tooltip="Drop the filter and show every flow"),
        Binding("r", "replay", "Replay", id="flows.replay",
                tooltip="Send the selected request upstream again, as recorded (marked ↻#N)"),
        Binding("R", "replay_fixed", "Replay fixed", show=False, id="flows.replay-fixed",
                tooltip="Send the selected request with every safe repair applied (marked ↻F#N)"),
        Binding("x", "export", "Export", id="flows.export",
                tooltip="Export the selected flow (fixture, pytest, cassette or HAR)"),
        Binding("c", "connection", "Agent settings", show=False, id="flows.connection",
                tooltip="Show or hide every SDK variable and the store path in the header"),
    ]

    @property
    def inspector(self) -> InspectorApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        app = self.inspector
        yield ConnectionBar(app.listening, store_path=str(app.store.path), id="connection")
        yield ColumnHeader()
        yield FlowList(app.store, clock=app.clock, id="flows")
        yield Input(placeholder="filter: text, ~d DIALECT ~m MODEL ~s 4xx ~v RULE ~t TOOL ~e ~r #N, & | ! ( )",
                    id="filter")
        yield Footer()

    @property
    def flow_list(self) -> FlowList:
        return self.query_one("#flows", FlowList)

    def on_mount(self) -> None:
        self.flow_list.focus()
        self.set_interval(STORE_CHECK_INTERVAL, self._show_store_problem)

    def _show_store_problem(self) -> None:
        self.query_one("#connection", ConnectionBar).problem = self.inspector.store.last_error

    def _update_filter_count(self) -> None:
        flows = self.flow_list
        field = self.query_one("#filter", Input)
        if field.has_class("-invalid"):
            return  # the parse error stays shown until the expression parses
        field.border_title = f"{flows.total} of {flows.source.count()} flows match" if flows.filter_text else None

    def refresh_flows(self) -> None:
        self.flow_list.reload()

    @on(FlowList.Reloaded)
    def flows_reloaded(self) -> None:
        self._update_filter_count()
        store = self.inspector.store
        if store.session_id is not None:
            self.query_one("#connection", ConnectionBar).usage = store.session_usage(store.session_id)

    def action_filter(self) -> None:
        field = self.query_one("#filter", Input)
        field.add_class("visible")
        field.focus()

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
            compile_filter(event.value)
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
        self.inspector.replay_flow(row.id, fixed=True)

    def action_export(self) -> None:
        row = self.flow_list.current
        if row is None:
            self.notify("no flow selected", severity="warning")
            return
        self.inspector.ask_export(row.id)
