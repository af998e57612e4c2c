"""`toolwire-inspect config trust|untrust [PATH]`: let a config file found in a working directory
take effect, or stop it (see inspector/trust.py). Trusting names the routes the file sets, so the
user sees where their keys would go before saying yes; a broken file is not trusted."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import CommandError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("config", help="trust (or untrust) a toolwire-inspect.toml found in a directory")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, help_text in (("trust", "let this file set the routes when run in its directory, as it is now; "
                                      "any change makes it untrusted again"),
                            ("untrust", "forget the trust given to this file")):
        action = actions.add_parser(name, help=help_text)
        action.add_argument("path", nargs="?", metavar="PATH", help="the config file (default ./toolwire-inspect.toml)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from .. import trust
    from ..redact import redact_url
    from ..proxy.routes import CONFIG_NAME, RouteError, load_config, read_config

    path = Path(trust.key(Path(args.path or CONFIG_NAME)))
    if args.action == "untrust":
        forgot = trust.untrust(path)
        print(f"{'untrusted' if forgot else 'was not trusted:'} {trust.key(path)}")
        return 0
    try:
        data = read_config(path)
        routes = load_config(path, data)
    except RouteError as exc:
        raise CommandError(f"not trusted: {exc}") from None
    try:
        digest = trust.trust(path, data)
    except OSError as exc:
        raise CommandError(f"cannot record the trust in {trust.store_path()}: {exc.strerror or exc}") from None
    print(f"trusted {trust.key(path)} (sha256 {digest[:16]}); its routes:")
    for route in routes:
        port = f" at port {route.port}" if route.port else ""
        print(f"  {route.name} -> {redact_url(route.upstream)} [{route.mode}]{port}")
    return 0
