"""`toolwire-inspect record`: the forwarder without the UI, one line per finished flow on stdout."""

from __future__ import annotations

import argparse
import gc
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..textsafe import shown
from .common import (CommandError, add_access_arguments, add_limit_arguments, add_mode_arguments, add_proxy_arguments,
                     add_route_arguments, add_store_argument, complain, open_store, options, port,
                     refusal_reporter, route_table)
from .otlp import add_live_arguments, live_export
from .tui import DEFAULT_PORT

if TYPE_CHECKING:
    from ..console import Console
    from ..otlp.live import Reporting
    from ..proxy import FlowEvent, Forwarder
    from ..proxy.routes import Router
    from ..store import Store


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("record", help="run the forwarder headless and print each finished flow")
    add_forwarder_arguments(parser)
    parser.set_defaults(handler=run)


def add_forwarder_arguments(parser: argparse.ArgumentParser) -> None:
    """Everything a headless forwarder takes (`record`, `run`)."""
    parser.add_argument("--upstream", metavar="URL",
                        help="forward every request to this base URL (e.g. https://api.openai.com); "
                             "without it and without routes, the default routes")
    parser.add_argument("--port", type=port, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT}; 0 picks one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--allow-remote", action="store_true",
                        help="allow a --host other than loopback (the forwarder relays your API keys); "
                             "clients then need the access token it prints")
    add_access_arguments(parser)
    add_mode_arguments(parser)
    add_proxy_arguments(parser)
    add_route_arguments(parser)
    add_store_argument(parser)
    add_limit_arguments(parser)
    add_live_arguments(parser)


def flow_line(row) -> str:
    """One finished flow: `#id METHOD path status latency errors=N warnings=N [route=NAME] [error: why]`,
    shown safe (the method, path, route and error are the client's and the upstream's words)."""
    status = "-" if row.status is None else str(row.status)
    latency = "-" if row.latency_ms is None else f"{row.latency_ms:.1f}ms"
    line = f"#{row.id} {row.method} {row.path} {status} {latency} errors={row.errors} warnings={row.warnings}"
    if row.route:
        line += f" route={row.route}"
    if row.replay_of is not None:
        line += f" replay-of=#{row.replay_of}"
    if row.error:
        line += f" {'error' if row.state == 'error' else 'note'}: {row.error}"
    return shown(line)


def agent_hints(client_url: str, upstream: str, translate: str | None) -> str:
    """What to give the agent, for the clients that fit the upstream (or a translate session's source)."""
    from ..clients import likely_dialects, suggestions

    rows = [(f"{setting.label}{url}", setting.readers)
            for setting, url in suggestions(client_url, likely_dialects(upstream, translate))]
    width = max(len(setting) for setting, _ in rows)
    return "\n".join(["point the agent at it:", *(f"  {setting:<{width}}  {readers}" for setting, readers in rows)])


# -- routes: the first lines of a routed launch -------------------------------------------------


def route_lines(router, store) -> list[str]:
    """`forwarding N routes (from WHERE; session, store)`, then one line per route: its name, its
    base URL, its upstream, mode and what set it, and the settings of the SDKs that speak the
    upstream's dialect."""
    from ..clients import agent_settings, likely_dialects

    lines = [f"forwarding {len(router.all)} routes ({router.source}; session {store.session_id}, store {store.path})"]
    for forwarder in router.all:
        dialects = likely_dialects(forwarder.upstream, forwarder.translate)
        settings = "  ".join(f"{label}{url}" for label, url in agent_settings(forwarder.client_url, dialects))
        name = forwarder.route or "(unnamed)"
        source = router.source_of(forwarder.route)
        lines.append(f"route {name} {forwarder.client_url} -> {forwarder.upstream_shown} "
                     f"[{forwarder.mode.value}{f' {forwarder.translate}' if forwarder.translate else ''}] "
                     f"(from {source})  {settings}")
    return lines


def wait_for_signal(every_second: Callable[[], None] | None = None) -> None:
    """Block until Ctrl-C or SIGTERM, calling `every_second` meanwhile."""
    done = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: done.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not done.wait(3600 if every_second is None else 1.0):
            if every_second is not None:
                every_second()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def flow_printer(console: Console, live: Reporting | None) -> Callable[[FlowEvent], None]:
    """The forwarder's listener of `record` and `run`: each finished flow a line on `console`, and a
    span for the live OpenTelemetry export when there is one."""

    def on_event(event: FlowEvent) -> None:
        if event.kind == "completed" and event.row is not None:
            console.put(flow_line(event.row))
            if live is not None:
                live.flow_saved(event.flow)

    return on_event


def reporter(refusals: Callable[[], None], live: Reporting | None) -> Callable[[], None]:
    """`record`'s once-a-second look: the front door's refusals, and the live export's drops and
    failures (a collector down or slow) while they happen, not only in the summary at the end."""

    def report() -> None:
        refusals()
        trouble = live.trouble() if live is not None else None
        if trouble is not None:
            complain(trouble, flush=True)

    return report


def start_forwarder(args: argparse.Namespace, store: Store,
                    on_event: Callable[[FlowEvent], None]) -> Forwarder | Router:
    """The forwarder `record` and `run` serve for their flags, started (a config found and ignored is
    named on stderr); a CommandError says why there is none."""
    from ..proxy import ForwarderError
    from ..proxy.routes import open_forwarder
    from ..store import StoreError

    try:
        given = options(args)
        table = route_table(given)
        for notice in table.ignored:
            complain(notice)
        forwarder = open_forwarder(table, given, store=store, on_event=on_event)
        forwarder.start()
    except (ForwarderError, StoreError) as exc:
        raise CommandError(str(exc)) from exc
    return forwarder


def run(args: argparse.Namespace) -> int:
    from ..console import Console
    from ..proxy import Forwarder
    from ..proxy.access import TOKEN_HEADER

    # `completed` comes once the flow is stored, on the store's writer thread: a stdout nobody
    # reads must not stop it, so the lines go through a console that drops rather than waits.
    console = Console(sys.stdout)
    live = None
    store = open_store(args.store, writer_process=True)
    try:
        live = live_export(args, store)
        forwarder = start_forwarder(args, store, flow_printer(console, live))
        if isinstance(forwarder, Forwarder):
            print(shown(f"forwarding {forwarder.client_url} -> {forwarder.upstream_shown}  "
                        f"(session {store.session_id}, store {store.path})"), file=sys.stderr)
        else:
            print("\n".join(map(shown, route_lines(forwarder, store))), file=sys.stderr)
        if forwarder.access.token:
            print(f"access token {forwarder.access.token}: clients send it as the {TOKEN_HEADER} header or keep "
                  "the /t/<token> prefix of the URL above", file=sys.stderr)
        if isinstance(forwarder, Forwarder):
            print(shown(agent_hints(forwarder.client_url, args.upstream, args.translate), lines=True), file=sys.stderr)
            print(f"or, for a client that takes no base URL: HTTPS_PROXY={forwarder.base_url} and trust the CA "
                  "`toolwire-inspect ca` prints", file=sys.stderr, flush=True)
        # What is alive now lives as long as the process: out of the collector's generations, so that a full
        # collection under load walks only what the requests made.
        gc.freeze()
        try:
            wait_for_signal(reporter(refusal_reporter(forwarder.access), live))
        finally:
            forwarder.stop()
    finally:
        if live is not None:
            live.close_after(store)
            complain(f"{live.summary()}")
        store.close()
        unwritten = console.close()
        if unwritten:
            why = f"writing stdout failed: {console.failure}" if console.failure else "stdout was not read"
            complain(f"{unwritten} flow lines were not printed ({why})")
    return 0
