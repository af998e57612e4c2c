"""The app: wiring only. Screens render, workers do the heavy work, the core does the rest."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING
from collections.abc import Callable, Iterable

from textual import events, on, work
from textual.app import App, SuspendNotSupported, SystemCommand
from textual.notifications import SeverityLevel
from textual.binding import Binding
from textual.screen import Screen

from ..clients import likely_dialects
from ..flow import ReplayKind
from ..session import upstream_summary
from ..textsafe import shown
from .bridge import EventBridge
from .commands import FlowCommands, ScreenCommands
from .keymap import binding_of
from .messages import (Copied, CopyFailed, EditReady, ExportFailed, ExportFinished, FlowsUpdated, ForwarderFailed,
                       ForwarderReady, ForwarderStopped, ReplayFailed, ReplayFinished)
from .screens.export_format import ExportFormatScreen
from .screens.flows import FlowsScreen
from .screens.help import HelpScreen, binding_table, help_sections
from .widgets.connection import ConnectionBar, Listening, Proxying
from .widgets.flow_list import FlowList

# How long a flow may take to be read and checked before its screen shows it loading: below this it
# paints once, whole (open_flow).
SHOW_FLOW_AFTER = 0.1

if TYPE_CHECKING:
    from ..session import Session
    from .screens.flow import FlowScreen
    from ..store import Store


# How often the list looks for flows other processes wrote to the store (a PRAGMA, microseconds).
STORE_WATCH_INTERVAL = 1.0


class InspectorApp(App[None]):
    TITLE = "toolwire-inspect"
    CSS_PATH = "app.tcss"
    COMMANDS = App.COMMANDS | {FlowCommands, ScreenCommands}
    BINDINGS = [
        # Not in the footer: q quits from the list, and 80 columns have no room to say it twice.
        Binding("ctrl+q", "quit", "Quit", id="app.quit", tooltip="Quit (the forwarder stops with the app)",
                priority=True, show=False),
        Binding("question_mark", "help", "Keys", id="app.help", tooltip="Show every key"),
    ]

    def __init__(
        self,
        *,
        store: Store,
        forwarder: Session | None,
        bridge: EventBridge | None = None,
        upstream: str | None = None,
        mode: str | None = None,
        clock: Callable[[], float] | None = None,
        export_dir: Path | None = None,
        keys: tuple[dict[str, str], list[str]] = ({}, []),
        starting: bool = False,
        launch: Callable[[], None] | None = None,
        flow: int | None = None,
    ) -> None:
        """`keys`: the user's keymap (binding id → keys) and a line for each entry left out of it
        (tui/keymap.py's user_keymap). `flow`: the flow whose view opens first (`open --flow N`)."""
        super().__init__()
        self._first_flow = flow
        self.user_keys, self._keys_problems = keys
        self.store = store
        self.forwarder = forwarder
        self.bridge = bridge
        self.clock = clock or time.time  # tests and screenshots pin it; "today" decides the time format
        # Where copies and exports go: by default the user's exports directory (files.exports_dir),
        # made at the first file, never the current directory.
        self.export_dir = export_dir
        self.export_format = "json"  # what `x` offers first: the last format chosen
        self.save_folder: Path | None = None  # what `y`, `Y`, `x` offer first: the last folder chosen
        self._flow_screen: FlowScreen | None = None  # built at the first open_flow, then reused
        self._flow_to_show: int | None = None  # the flow asked for, until its screen is shown
        # Keys typed after the one that opens a flow, until the flow is ready (release_keys).
        self._held_keys: list[events.Key] | None = None
        # A forwarder's process still starting (`forwarder` is None until then): its ForwarderReady or
        # ForwarderFailed comes through the bridge, and the list does not wait for it.
        self.starting = starting
        self._launch = launch  # starts the forwarder's process, once the first frame is on the screen
        self.failed: ForwarderFailed | None = None
        self._shown_as = (upstream, mode)
        self.listening = None if forwarder is None else self._listening(forwarder)

    def _listening(self, forwarder: Session) -> Listening:
        """What the header shows; by default the forwarder's own upstream and mode."""
        upstream, mode = self._shown_as
        translate = forwarder.translate
        # Several upstreams (proxy/routes.py): each route's name, base URL and its clients' dialects.
        routes = tuple((route.route, route.client_url, likely_dialects(route.upstream, route.translate),
                        route.source) for route in forwarder.all)
        if routes:
            default_mode = "routes"
        else:
            default_mode = f"translate {translate.replace(':', ' → ')}" if translate else forwarder.mode.value
        # A routed session's upstream is stored as its routes (`=URL name=URL`): the header says it shorter.
        return Listening(forwarder.client_url, upstream or upstream_summary(forwarder.upstream_shown), mode or default_mode,
                         forwarder.access, accepts=translate.split(":", 1)[0] if translate else None, routes=routes,
                         proxy=Proxying.launched(forwarder.base_url, forwarder.proxy), ignored=forwarder.ignored)

    @property
    def store_problem(self) -> str | None:
        """The store's latest write failure: the child's writer reports it when the forwarder runs
        in a child process (this process then reads the store read-only)."""
        if self.forwarder is not None:
            return self.forwarder.store_problem
        return self.store.last_error

    async def on_event(self, event: events.Event) -> None:
        """Keys typed right after the one that opens a flow (`enter Tab z`, typed fast) are meant for
        that flow: they wait until it is ready, instead of acting in the list or on a half-built
        screen. The quit key never waits."""
        if isinstance(event, events.Key) and not event.is_forwarded:
            if self._held_keys is not None and event.key not in self._unheld_keys:
                self._held_keys.append(events.Key(event.key, event.character))
                return
            if self._opens_a_flow(event.key):
                self._held_keys = []
        await super().on_event(event)

    @property
    def _unheld_keys(self) -> set[str]:
        """The keys of our own priority bindings (quit), as the user's keymap has them."""
        ours = {binding.id for binding in self.BINDINGS if isinstance(binding, Binding) and binding.priority}
        return {key for key, active in self.screen.active_bindings.items() if active.binding.id in ours}

    def _opens_a_flow(self, key: str) -> bool:
        focused = self.screen.focused
        if not isinstance(focused, FlowList) or focused.current is None:
            return False
        active = binding_of(self.screen, key)  # the user's keymap applied: their key opens, enter may not
        return active is not None and active.node is focused and active.binding.action == "open"

    def release_keys(self) -> None:
        """The flow that was opening is shown (or could not be): the keys held for it go to it now."""
        held, self._held_keys = self._held_keys, None
        for key in held or ():
            self.post_message(key)

    @property
    def tunnelled(self) -> tuple[int, tuple[tuple[str, int], ...]]:
        """CONNECT tunnels the forwarder relayed unrecorded, and to where (Session.tunnelled)."""
        return (0, ()) if self.forwarder is None else self.forwarder.tunnelled

    @property
    def export_problem(self) -> str | None:
        """What the live OTLP export lost (flows dropped, spans failed), reported by the child."""
        counts = self.forwarder.otlp if self.forwarder is not None else None
        if counts is None or not (counts.dropped or counts.failed):
            return None
        return (f"otlp: {counts.dropped} flows dropped, {counts.failed} spans failed "
                f"({counts.exported} exported): the collector is down or slow")

    def get_default_screen(self) -> FlowsScreen:
        return FlowsScreen()

    def on_mount(self) -> None:
        if self.bridge is not None:
            self.bridge.attach(self)
        self.set_keymap(self.user_keys)
        for problem in self._keys_problems:
            self.notify(problem, title="Keys", severity="warning", timeout=30)
        self._announce()
        # The flow view and the checker behind it are half of the app's imports (~1 s on a busy
        # machine): imported after the list's first frame, in a thread, not before it.
        self.call_after_refresh(self._import_flow_view)
        if self._launch is not None:
            self.call_after_refresh(self._launch)
        # Other processes write to the same store (`mcp-stdio` wrappers, another `record`): their
        # flows reach no bridge, so the list follows the file itself.
        self._store_version = self.store.data_version()
        self.set_interval(STORE_WATCH_INTERVAL, self._watch_store)
        if self._first_flow is not None:
            self.call_after_refresh(self.open_flow, self._first_flow)

    def _announce(self) -> None:
        for notice in self.listening.ignored if self.listening is not None else ():
            # Said twice, as a stopped forwarder is: now, and in the header for as long as the app runs.
            self.notify(notice, title="Config ignored", severity="warning", timeout=30, markup=False)

    def _watch_store(self) -> None:
        version = self.store.data_version()
        if version is None or version == self._store_version:
            return
        self._store_version = version
        if self.flows_screen.query(FlowList):
            self.flows_screen.refresh_flows()

    @work(thread=True, exit_on_error=False, group="imports", description="import the flow view")
    def _import_flow_view(self) -> None:
        from .screens import flow  # noqa: F401

        if self.user_keys:  # its ids are known once every screen's module is imported
            from .keymap import unknown_ids

            for problem in unknown_ids(self.user_keys):
                self.call_from_thread(self.notify, problem, title="Keys", severity="warning", timeout=30)

    def on_unmount(self) -> None:
        if self.bridge is not None:
            self.bridge.detach()

    @property
    def flows_screen(self) -> FlowsScreen:
        return self.screen_stack[0]  # type: ignore[return-value]

    # -- live updates -----------------------------------------------------------------------

    @on(FlowsUpdated)
    def flows_updated(self, message: FlowsUpdated) -> None:
        from .screens.flow import FlowScreen

        if not self.flows_screen.query(FlowList):
            return  # the app is taking its screens down (an event can arrive as it exits)
        self.flows_screen.refresh_flows()
        for screen in self.screen_stack:
            if isinstance(screen, FlowScreen) and (message.reread or screen.flow_id in message.completed):
                screen.reload()

    @on(ForwarderReady)
    def forwarder_ready(self, message: ForwarderReady) -> None:
        self.forwarder, self.starting = message.session, False
        self.store.session_id = message.session_id  # the list marks this session's rows and sums its tokens
        self.listening = self._listening(message.session)
        # Before the list's screen is built (an early answer), it reads all this from the app.
        for bar in self.flows_screen.query(ConnectionBar):
            bar.listening, bar.starting = self.listening, False
        self._announce()
        if self.flows_screen.query(FlowList):
            self.flows_screen.refresh_flows()

    @on(ForwarderFailed)
    def forwarder_failed(self, message: ForwarderFailed) -> None:
        self.failed, self.starting = message, False
        for bar in self.flows_screen.query(ConnectionBar):
            bar.failed, bar.starting = message.reason, False
        self.notify(f"the forwarder could not start: {message.reason}; the flows already stored can still be read",
                    title="Not forwarding", severity="warning" if message.browse else "error", timeout=30,
                    markup=False)

    @on(ForwarderStopped)
    def forwarder_stopped(self, message: ForwarderStopped) -> None:
        # Said twice: a toast now, and in the header for as long as the app runs.
        self.flows_screen.query_one(ConnectionBar).stopped = message.reason
        self.notify(f"the forwarder process ended ({message.reason}): nothing more is recorded; the flows "
                    "already stored can still be read", title="Forwarder stopped", severity="error",
                    timeout=30, markup=False)

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every toast, from any screen or widget: its text quotes flows (a replay's failure, an
        export's path), so it is shown safe and never read as markup, whatever the caller asked."""
        super().notify(shown(message, lines=True), title=shown(title), severity=severity, timeout=timeout,
                       markup=False)

    async def action_quit(self) -> None:
        if self.forwarder is not None:
            # Asked now, so the child's shutdown runs while the UI takes itself down.
            self.forwarder.request_stop()
        self.exit()

    # -- commands shared by the screens -----------------------------------------------------

    def open_flow(self, flow_id: int) -> None:
        """One flow screen, built at the first open and shown again for every flow after it.

        Once built, it is shown when the flow is ready, or after SHOW_FLOW_AFTER if that is sooner:
        a flow read and checked in that time paints once, whole, instead of a frame of empty panes
        first and the screen laid out and drawn twice."""
        from .screens.flow import FlowScreen

        if self._flow_screen is None:
            self._flow_screen = FlowScreen(flow_id)
            self.install_screen(self._flow_screen, name="flow")
        screen = self._flow_screen
        screen.open(flow_id)
        if screen in self.screen_stack:  # opened from a screen above it (the palette, a diff)
            while self.screen is not screen:
                self.pop_screen()
        elif not screen.is_mounted:  # the first open builds it: shown at once, loading
            self.push_screen(screen)
        else:
            self._flow_to_show = flow_id
            self.set_timer(SHOW_FLOW_AFTER, partial(self.show_flow_screen, flow_id))

    def show_flow_screen(self, flow_id: int) -> None:
        """The flow screen's first paint of `flow_id` is due (it is ready, or has had its time)."""
        if self._flow_to_show != flow_id or self._flow_screen is None:
            return  # shown already, or another flow was asked for since
        self._flow_to_show = None
        if self._flow_screen not in self.screen_stack:
            self.push_screen(self._flow_screen)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's palette commands, less those our bindings list under the same name ("Quit",
        "Keys" for `?`): one entry each, ours."""
        ours = {binding.description for _, _, bindings in binding_table(screen) for binding in bindings}
        return [command for command in super().get_system_commands(screen) if command.title not in ours]

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(help_sections(self.screen)))

    @work(thread=True, exit_on_error=False, group="replay", description="replay a flow")
    def replay_flow(self, flow_id: int, kind: ReplayKind = ReplayKind.AS_RECORDED, body: bytes | None = None) -> None:
        """Replay goes through our own forwarder so the new flow is recorded like any other.
        `kind` FIXED: send the request with every safe repair applied instead of as recorded;
        EDITED: send `body`, the request as the user edited it. A forwarder in a child process
        replays there: it holds the client's credentials."""
        from ..replay import ReplayError  # first use only

        if self.forwarder is None:
            self.post_message(ReplayFailed(flow_id, "no forwarder running (start with --upstream)"))
            return
        try:
            new_id = self.forwarder.replay(flow_id, kind=kind, body=body)
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
        """`x`: ask for the format (the last one chosen offered first), then the folder, then export."""
        def chosen(fmt: str | None) -> None:
            if fmt is not None:
                self.export_format = fmt
                self.ask_folder(f"#{flow_id} as {fmt}", partial(self.export_flow, flow_id, fmt))

        self.push_screen(ExportFormatScreen(flow_id, self.export_format), chosen)

    def ask_copy(self, flow_id: int, what: str, pointer: str | None = None) -> None:
        """`y`, `Y`, `P`: ask for the folder of the file the copy is written to, then copy."""
        self.ask_folder(f"#{flow_id} {what}", lambda folder: self.copy_from_flow(flow_id, what, pointer, folder))

    def ask_folder(self, what: str, then: Callable[[Path], object]) -> None:
        """Which folder a file goes to: the last one chosen offered, else the exports directory."""
        from .screens.save_to import SaveToScreen

        try:
            offered = self.save_folder or self._side_files()
        except OSError as exc:  # the exports directory is a link, or cannot be made
            self.notify(str(exc), title="Not written", severity="error")
            return

        def chosen(folder: Path | None) -> None:
            if folder is not None:
                self.save_folder = folder
                then(folder)

        self.push_screen(SaveToScreen(what, offered), chosen)

    @work(thread=True, exit_on_error=False, group="export", description="export a flow")
    def export_flow(self, flow_id: int, fmt: str = "json", folder: Path | None = None) -> None:
        from ..formats.base import WriteOptions  # first use only, like replay
        from ..formats.registry import default_name, exported, render
        from ..files import write_new

        flow = self.store.get(flow_id)
        if flow is None:
            self.post_message(ExportFailed(flow_id, "not in the store"))
            return
        try:
            data = render(fmt, exported(fmt, self.store, [flow]), WriteOptions(store=self.store))
            path = write_new(folder or self._side_files(), default_name(fmt, flow_id), data, rename=True)
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

    # -- edit and replay, copy --------------------------------------------------------------

    @work(thread=True, exit_on_error=False, group="edit", description="read a request to edit")
    def edit_flow(self, flow_id: int, *, external: bool = False) -> None:
        """`e` (here) or `E` (in $VISUAL / $EDITOR): edit the request, then send it as a replay."""
        # First use only: the editor's TextArea and the checker it runs are a third of the app's
        # imports, and the list's first frame needs neither.
        from .widgets.editor import editable_request

        flow = self.store.get(flow_id)
        if flow is None:
            self.post_message(ReplayFailed(flow_id, "not in the store"))
            return
        text, is_json = editable_request(flow)
        self.post_message(EditReady(flow_id, text, is_json, external))

    @on(EditReady)
    def edit_ready(self, message: EditReady) -> None:
        if message.external:
            self._edit_externally(message.flow_id, message.text, message.is_json)
        else:
            self._edit_here(message.flow_id, message.text, message.is_json)

    def _edit_here(self, flow_id: int, text: str, is_json: bool, *, check: bool = False) -> None:
        from .widgets.editor import EditorScreen

        def sent(body: bytes | None) -> None:
            if body is not None:
                self.replay_flow(flow_id, ReplayKind.EDITED, body)

        self.push_screen(EditorScreen(flow_id, text, is_json=is_json, check=check), sent)

    def _edit_externally(self, flow_id: int, text: str, is_json: bool) -> None:
        from .widgets.editor import json_problem

        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
        if not editor:
            self.notify("no $VISUAL or $EDITOR set: editing here", title="Edit", markup=False)
            self._edit_here(flow_id, text, is_json)
            return
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".json" if is_json else ".txt",
                                         prefix=f"flow-{flow_id}-", delete=False) as out:
            out.write(text)
        path = Path(out.name)
        try:
            try:
                with self.suspend():
                    code = subprocess.call([*shlex.split(editor), str(path)])
            except (SuspendNotSupported, OSError) as exc:  # headless runs; an editor that is not installed
                self.notify(f"cannot run {editor} ({type(exc).__name__}): editing here", title="Edit",
                            severity="warning", markup=False)
                self._edit_here(flow_id, text, is_json)
                return
            edited = path.read_text(encoding="utf-8", errors="replace")
        finally:
            path.unlink(missing_ok=True)
        if code != 0:
            self.notify(f"{editor} exited with status {code}: #{flow_id} not sent", title="Edit",
                        severity="warning", markup=False)
        elif edited == text:
            self.notify(f"#{flow_id} unchanged: not sent", title="Edit", markup=False)
        elif is_json and json_problem(edited) is not None:
            # Nothing typed is lost: the in-app editor opens on it, saying what is wrong and where.
            self._edit_here(flow_id, edited, is_json, check=True)
        else:
            self.replay_flow(flow_id, ReplayKind.EDITED, edited.encode("utf-8"))

    @work(thread=True, exit_on_error=False, group="copy", description="copy from a flow")
    def copy_from_flow(self, flow_id: int, what: str, pointer: str | None = None, folder: Path | None = None) -> None:
        """`what`: "curl" (the request as a command), "body" (the client's request body) or
        "pointer" (`pointer`). Written to a file too: not every terminal passes OSC 52 on."""
        from ..curl import CurlError, curl_body, curl_command, needs_body_file  # first use only
        from ..files import write_new
        from ..paste import named, pastable
        from .widgets.editor import request_body

        flow = self.store.get(flow_id)
        if flow is None:
            self.post_message(CopyFailed(flow_id, "not in the store"))
            return
        base = f"flow-{flow_id}"
        try:
            folder = folder or self._side_files()
            if what == "curl":
                body_file = None
                if needs_body_file(flow):
                    body_file = write_new(folder, f"{base}.body", curl_body(flow), rename=True)
                text = curl_command(flow, body_file=None if body_file is None else str(body_file))
                name, written = f"{base}.curl.sh", (text + "\n").encode("utf-8")
            elif what == "body":
                written = request_body(flow)  # the file: as sent, not re-indented
                text = written.decode("utf-8", "replace")
                name = f"{base}.request-body.txt"
            else:
                text = pointer or ""
                name, written = f"{base}.pointer.txt", (text + "\n").encode("utf-8")
            path = write_new(folder, name, written, rename=True)
        except (CurlError, OSError) as exc:
            self.post_message(CopyFailed(flow_id, str(exc)))
            return
        # The clipboard is pasted into shells: a JSON body escaped, other text holding a control
        # character not copied (a ^C would abort the pasted line and run the rest).
        self.post_message(Copied(flow_id, what, pastable(text), str(path), refused=named(text)))

    def _side_files(self) -> Path:
        from ..files import exports_dir

        return exports_dir() if self.export_dir is None else self.export_dir

    @on(Copied)
    def copied(self, message: Copied) -> None:
        if message.text is None:
            self.notify(f"#{message.flow_id} {message.what} written to {message.path}; not copied: it holds "
                        f"characters a paste would act on ({message.refused})", title="Copy", markup=False)
            return
        self.copy_to_clipboard(message.text)
        self.notify(f"#{message.flow_id} {message.what} copied (if the terminal allows OSC 52) and written to "
                    f"{message.path}", title="Copy", markup=False)

    @on(CopyFailed)
    def copy_failed(self, message: CopyFailed) -> None:
        self.notify(f"#{message.flow_id}: {message.reason}", title="Copy failed", severity="error", markup=False)
