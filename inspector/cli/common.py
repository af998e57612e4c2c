"""What several subcommands share: the store option, and refusing with a clear one-line error."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..textsafe import shown

if TYPE_CHECKING:
    from ..proxy.access import AccessPolicy
    from ..proxy.options import Options
    from ..proxy.routes import RouteTable
    from ..store import Store


class CommandError(Exception):
    """A refusal: `main` prints `toolwire-inspect: <message>` on stderr and exits with `status`."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def not_written(exc: OSError, target: str, hint: str) -> str:
    """The one line that says why inspector.files did not write a file (`hint`: what to do when
    a side file's name is taken)."""
    from ..files import NotWritten

    if isinstance(exc, NotWritten):
        return str(exc)
    if isinstance(exc, FileExistsError):
        return f"cannot write {exc.filename}: {exc.strerror} ({hint})"
    return f"cannot write {exc.filename or target}: {exc.strerror or exc}"


def complain(message: str, *, flush: bool = False) -> None:
    """`toolwire-inspect: <message>` on stderr, on one line: messages quote file names, ids and
    recorded text, which are shown safe (textsafe.shown), so none can move the cursor, write the
    clipboard or start a line of its own (a GitHub workflow command reads stderr too)."""
    print(f"toolwire-inspect: {shown(message)}", file=sys.stderr, flush=flush)


MAX_ID = 2**63 - 1  # SQLite's largest integer: no stored flow or session has a larger id


def stored_id(text: str) -> int | None:
    """The flow or session id `text` names, or None when no stored row can have it."""
    value = int(text) if text.isdecimal() else 0
    return value if 1 <= value <= MAX_ID else None


def chosen_session(store: Store, wanted: str) -> int:
    """The session a `--session [ID]` option names ("latest" without an ID: the latest one that has
    flows, since a launch that recorded nothing yet, the TUI still open, is a session too, and saying
    so on stderr when that is not the latest of all); a CommandError when there is none."""
    if wanted != "latest":
        session_id = stored_id(wanted)
        if session_id is None or store.session(session_id) is None:
            raise CommandError(f"no session {wanted} in {store.path}")
        return session_id
    recorded = store.latest_session_with_flows()
    if recorded is None:
        raise CommandError(f"no session with flows in {store.path}")
    newest = store.sessions()[-1].id
    if newest != recorded:
        print(f"session {recorded}, the latest with flows (session {newest} has none)", file=sys.stderr)
    return recorded


def flow_id(text: str) -> int:
    """argparse type of a FLOW_ID."""
    value = stored_id(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a flow id (1 to {MAX_ID})")
    return value


def port(text: str) -> int:
    """argparse type of a --port to listen on: out of range, the OS would silently take it modulo 65536."""
    value = int(text) if text.isdecimal() else -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (0 to 65535)")
    return value


def positive(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    """argparse type of a count or a number of seconds above zero."""

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if not value > 0 or value == float("inf"):
            raise argparse.ArgumentTypeError(f"{text!r} is not a {'whole ' if kind is int else ''}number above 0")
        return value

    return parse


STORE_VARIABLE = "TOOLWIRE_STORE"  # saves repeating --store; the flag wins over it


def add_store_argument(parser: argparse.ArgumentParser,
                       help: str = f"SQLite flow store (default: ${STORE_VARIABLE}, else flows.sqlite3 in the user "
                                   "data dir)") -> None:
    parser.add_argument("--store", metavar="PATH", help=help)


def add_capture_content_argument(parser: argparse.ArgumentParser) -> None:
    """What OpenTelemetry spans carry besides the GenAI conventions' attributes."""
    parser.add_argument("--capture-content", action="store_true",
                        help="OpenTelemetry spans carry the messages, redacted like the store "
                             "(also OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true); credentials never")
    parser.add_argument("--openinference", action="store_true",
                        help="OpenTelemetry spans also carry OpenInference attributes (llm.*, openinference.span.kind), "
                             "as Arize Phoenix reads them (also TOOLWIRE_OTLP_OPENINFERENCE=true)")


def add_mode_arguments(parser: argparse.ArgumentParser) -> None:
    """The forwarder's modes besides passthrough (the default, byte-exact)."""
    parser.add_argument("--translate", metavar="SRC:DST",
                        help="translate between dialects, e.g. openai-chat:openai-responses (the client keeps "
                             "speaking SRC, the upstream gets DST)")
    parser.add_argument("--repair", action="store_true",
                        help="fix on the way up what has a safe repair (genai schemas, missing tool content, "
                             "encoded arguments, invalid or duplicate tool names, unpaired calls); aliased "
                             "names come back to the client as it declared them")


def add_access_arguments(parser: argparse.ArgumentParser) -> None:
    """Who besides loopback clients may send requests (see proxy/access.py)."""
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="also answer requests whose Host is NAME (any port); repeatable. Only loopback "
                             "names are answered otherwise, which stops DNS-rebinding web pages")
    parser.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                        help="answer browser requests from this Origin (e.g. http://localhost:3000); repeatable. "
                             "Requests with any other Origin are refused")


def add_proxy_arguments(parser: argparse.ArgumentParser) -> None:
    """Proxy mode (HTTPS_PROXY=http://127.0.0.1:PORT; see proxy/connect.py)."""
    add_intercept_arguments(parser)
    parser.add_argument("--allow-connect", action="append", default=[], metavar="HOST",
                        help="tunnel to HOST even though it is a loopback or private address (refused "
                             "otherwise); repeatable")
    # Defaults live in proxy/connect.py, which `--help` should not have to import.
    parser.add_argument("--tunnel-idle", type=positive(float), metavar="SECONDS",
                        help="close a tunnel to a host not intercepted once nothing has moved through it either "
                             "way for this long (default 600)")
    parser.add_argument("--max-tunnels", type=positive(int), metavar="N",
                        help="refuse CONNECT with 503 while N tunnels are open (default: a fifth of what the "
                             "file-descriptor limit allows)")


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """The forwarder's limits, for every command that runs one (`options()` reads them back)."""
    # Defaults live in the forwarder, which `--help` should not have to import.
    parser.add_argument("--timeout", type=positive(float), metavar="SECONDS",
                        help="give up on an upstream silent this long (default 600)")
    parser.add_argument("--max-body", type=positive(int), metavar="BYTES",
                        help="refuse larger request bodies with 413 Payload Too Large, recorded as an error flow "
                             "(default 64 MiB)")


def add_intercept_arguments(parser: argparse.ArgumentParser) -> None:
    """Which hosts proxy mode intercepts, and where their requests go: also what `replay` needs to
    send a flow recorded so back to its host."""
    parser.add_argument("--intercept", action="append", default=[], metavar="HOST[=URL]",
                        help="also intercept and record CONNECT tunnels to HOST (*.example.com for any subdomain), "
                             "besides the known LLM API hosts; =URL sends its requests there instead of "
                             "https://HOST; repeatable")
    parser.add_argument("--upstream-ca", metavar="FILE",
                        help="trust the CA certificates in this PEM file for upstream TLS, besides the usual roots "
                             "(e.g. a local test upstream's own CA)")


def add_route_arguments(parser: argparse.ArgumentParser) -> None:
    """Several upstreams through one forwarder (see proxy/routes.py)."""
    parser.add_argument("--route", action="append", default=[], metavar="NAME=URL[@PORT]",
                        help="serve the upstream URL at /r/NAME/ of the forwarder's port, or at / of PORT; "
                             "repeatable. With no --upstream and no routes (flags or config), openai, anthropic "
                             "and gemini routes go to the providers")
    parser.add_argument("--route-mode", action="append", default=[], metavar="NAME=MODE",
                        help="the mode of route NAME: passthrough, repair or translate:SRC:DST (default: "
                             "--translate/--repair, else passthrough); repeatable")
    parser.add_argument("--config", metavar="PATH",
                        help="a TOML file of [routes.NAME] tables (url, port, mode); default: "
                             "./toolwire-inspect.toml, else toolwire-inspect.toml in the user config dir")


def add_key_host_argument(parser: argparse.ArgumentParser, what: str) -> None:
    """--key-host: a host the environment's keys may go to besides their providers' (inspector/replay.py)."""
    parser.add_argument("--key-host", action="append", default=[], metavar="HOST",
                        help=f"let {what} send the environment's key to HOST as well (by default a key goes only to "
                             "its own provider's host: OPENAI_API_KEY to api.openai.com, ...); repeatable")


def options(args: argparse.Namespace) -> Options:
    """The one options object (proxy/options.py) of a command that runs the forwarder, from the
    flags of add_forwarder_arguments (record, run) or the TUI's; what they leave out keeps its default."""
    from ..proxy.options import Options, OtlpOptions, ProxyOptions, RouteFlags

    given = vars(args)

    def set_(*names: str) -> dict[str, Any]:
        return {name: given[name] for name in names if given.get(name) is not None}

    otlp = None if given.get("otlp_endpoint") is None else OtlpOptions(
        args.otlp_endpoint, args.capture_content, bool(given.get("openinference")))
    return Options(
        upstream=args.upstream, host=args.host, port=args.port, translate=args.translate, repair=args.repair,
        allow_remote=args.allow_remote, allow_hosts=args.allow_host, allow_origins=args.allow_origin,
        proxy=ProxyOptions(intercept=args.intercept, allow_connect=args.allow_connect, upstream_ca=args.upstream_ca,
                           **set_("tunnel_idle", "max_tunnels")),
        routes=RouteFlags(args.route, args.route_mode, args.config), store=args.store,
        key_hosts=given.get("key_host", ()), otlp=otlp, **set_("timeout", "max_body"))


def route_table(options: Options) -> RouteTable:
    """The routes `record` and the TUI serve for their flags (proxy/routes.resolve); a RouteError."""
    from ..proxy import routes

    return routes.resolve(upstream=options.upstream, routes=options.routes.route,
                          route_modes=options.routes.route_mode, config=options.routes.config,
                          translate=options.translate, repair=options.repair, builtin=options.routes.builtin)


def refusal_reporter(access: AccessPolicy) -> Callable[[], None]:
    """A callable that prints a line on stderr when `access` has refused requests since its last call:
    the server's loop never writes to the console itself."""
    reported = 0

    def report() -> None:
        nonlocal reported
        if access.refused != reported:
            reported = access.refused
            complain(f"refused {reported} request(s) so far; last: {access.last_refusal}", flush=True)

    return report


def open_store(path: str | Path | None, *, create: bool = True, read_only: bool = False, live: bool = False,
               writer_process: bool = False) -> Store:
    """The store at `path` (None: the default one), or a CommandError saying why not.

    Commands that only read (`create=False`) refuse a missing file rather than leave an empty
    store, and its folders, behind; with `read_only` they also leave the file as it is (no
    migration, no WAL switch), so they work on a read-only file and on someone else's. Commands
    that forward (`writer_process`) write through a writer process: see store.writer_process."""
    from ..store import Store, StoreError, default_path

    path = path or os.environ.get(STORE_VARIABLE) or None
    if (read_only or not create) and not Path(path or default_path()).exists():
        raise CommandError(f"no flow store at {path or default_path()} (record some flows first)")
    try:
        return Store(path, read_only=read_only, live=live, writer_process=writer_process)
    except StoreError as exc:
        raise CommandError(str(exc)) from exc
