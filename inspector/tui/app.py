"""The app: wiring only. Screens render, workers do the heavy work, the core does the rest."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from textual import on, work
from textual.app import App
from textual.binding import Binding

from ..base_urls import accepted_dialect
from ..filters import HELP as FILTER_HELP
from ..wire.dialect import from_path
from .bridge import EventBridge
from .commands import FlowCommands, ListCommands
from .messages import ExportFailed, ExportFinished, FlowsUpdated, ReplayFailed, ReplayFinished
from .screens.export_format import ExportFormatScreen
from .screens.flow import FlowScreen
from .screens.flows import FlowsScreen
from .screens.help import HelpScreen, binding_rows
from .view import fixed_request
from .widgets.connection import Listening
from .widgets.flow_list import FlowList
from .widgets.payload import JsonArea, PayloadView

if TYPE_CHECKING:
    from ..proxy import Forwarder
    from ..store import Store


class InspectorApp(App[None]):
    TITLE = "toolwire-inspect"
    CSS_PATH = "app.tcss"
    COMMANDS = App.COMMANDS | {FlowCommands, ListCommands}
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="app.quit", tooltip="Quit (the forwarder stops with the app)",
                priority=True),
        Binding("question_mark", "help", "Keys", id="app.help", tooltip="Show every key"),
    ]

    def __init__(
        self,
        *,
        store: Store,
        forwarder: Forwarder | None,
        bridge: EventBridge | None = None,
        upstream: str | None = None,
        mode: str | None = None,
        clock: Callable[[], float] | None = None,
        export_dir: Path | None = None,
    ) -> None:
        super().__init__()
        self.store = store
        self.forwarder = forwarder
        self.bridge = bridge
        self.clock = clock or time.time  # tests and screenshots pin it; "today" decides the time format
        self.export_dir = export_dir or Path.cwd()
        self.export_format = "json"  # what `x` offers first: the last format chosen
        self.listening = None
        if forwarder is not None:
            # What the header shows; by default the forwarder's own upstream and mode.
            translate = forwarder.translate
            default_mode = f"translate {translate.replace(':', ' → ')}" if translate else "passthrough"
            # A Router (proxy/routes.py) has `all` its routes' forwarders, each with its own base URL.
            routes = tuple((f.route or "", f.client_url, accepted_dialect(f.upstream, f.translate))
                           for f in getattr(forwarder, "all", ()))
            self.listening = Listening(forwarder.client_url, upstream or forwarder.upstream_shown,
                                       mode or ("routes" if routes else default_mode), forwarder.access,
                                       accepts=translate.split(":", 1)[0] if translate else None, routes=routes)

    def get_default_screen(self) -> FlowsScreen:
        return FlowsScreen()

    def on_mount(self) -> None:
        if self.bridge is not None:
            self.bridge.attach(self)

    def on_unmount(self) -> None:
        if self.bridge is not None:
            self.bridge.detach()

    @property
    def flows_screen(self) -> FlowsScreen:
        return self.screen_stack[0]  # type: ignore[return-value]

    # -- live updates -----------------------------------------------------------------------

    @on(FlowsUpdated)
    def flows_updated(self, message: FlowsUpdated) -> None:
        self.flows_screen.refresh_flows()
        for screen in self.screen_stack:
            if isinstance(screen, FlowScreen) and screen.flow_id in message.completed:
                screen.reload()

    # -- commands shared by the screens -----------------------------------------------------

    def open_flow(self, flow_id: int) -> None:
        self.push_screen(FlowScreen(flow_id))

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        # Keys Textual itself provides have no Binding of ours to read; they are listed by hand.
        builtin = [("tab, shift+tab", "Move between panes"), ("ctrl+p", "Command palette (themes, …)")]
        self.push_screen(HelpScreen([
            ("Flow list", binding_rows([*FlowsScreen.BINDINGS, *FlowList.BINDINGS])),
            ("Filter expressions (/ in the list; flows --filter)", FILTER_HELP),
            ("Flow view", binding_rows(FlowScreen.BINDINGS)),
            ("Payload pane (tab to it)", binding_rows([*PayloadView.BINDINGS, *JsonArea.BINDINGS])),
            ("Everywhere", binding_rows(self.BINDINGS) + builtin),
        ]))

    @work(thread=True, exit_on_error=False, group="replay", description="replay a flow")
    def replay_flow(self, flow_id: int, fixed: bool = False) -> None:
        """Replay goes through our own forwarder so the new flow is recorded like any other.
        `fixed`: send the request with every safe repair applied instead of as recorded."""
        from ..replay import ReplayError, credentials_from_env, replay  # first use only

        flow = self.store.get(flow_id)
        if flow is None or self.forwarder is None:
            reason = "not in the store" if flow is None else "no forwarder running (start with --upstream)"
            self.post_message(ReplayFailed(flow_id, reason))
            return
        body = None
        if fixed:
            body = fixed_request(flow)
            if body is None:
                self.post_message(ReplayFailed(flow_id, "nothing to fix: the request is not JSON of a known dialect"))
                return
        credentials = self.forwarder.credentials(flow_id) or credentials_from_env(from_path(flow.path))
        try:
            new_id = replay(flow, via=self.forwarder, credentials=credentials, body=body, fixed=fixed)
        except ReplayError as exc:
            self.post_message(ReplayFailed(flow_id, str(exc)))
            return
        self.post_message(ReplayFinished(flow_id, new_id))

    @on(ReplayFinished)
    def replay_finished(self, message: ReplayFinished) -> None:
        self.notify(f"#{message.original_id} replayed as #{message.new_id}", title="Replay", markup=False)
        # The forwarder finishes recording just after the client has the whole response, so
        # the new row may not be committed yet: the list selects it as soon as it has it.
        self.flows_screen.flow_list.reveal(message.new_id)

    @on(ReplayFailed)
    def replay_failed(self, message: ReplayFailed) -> None:
        self.notify(f"#{message.original_id}: {message.reason}", title="Replay failed", severity="error",
                    markup=False)

    def ask_export(self, flow_id: int) -> None:
        """`x`: ask for the format (the last one chosen offered first), then export."""
        def chosen(fmt: str | None) -> None:
            if fmt is not None:
                self.export_format = fmt
                self.export_flow(flow_id, fmt)

        self.push_screen(ExportFormatScreen(flow_id, self.export_format), chosen)

    @work(thread=True, exit_on_error=False, group="export", description="export a flow")
    def export_flow(self, flow_id: int, fmt: str = "json") -> None:
        from ..export import default_name, from_store, render, write_private  # first use only, like replay

        flow = self.store.get(flow_id)
        if flow is None:
            self.post_message(ExportFailed(flow_id, "not in the store"))
            return
        try:
            turn = from_store(self.store, flow)
            path = self.export_dir / default_name(fmt, turn.flow_id)
            write_private(path, render(fmt, [turn]))
        except OSError as exc:
            self.post_message(ExportFailed(flow_id, str(exc)))
            return
        self.post_message(ExportFinished(flow_id, str(path)))

    @on(ExportFinished)
    def export_finished(self, message: ExportFinished) -> None:
        self.notify(f"#{message.flow_id} written to {message.path}", title="Export", markup=False)

    @on(ExportFailed)
    def export_failed(self, message: ExportFailed) -> None:
        self.notify(f"#{message.flow_id}: {message.reason}", title="Export failed", severity="error",
                    markup=False)
