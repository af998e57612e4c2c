"""`toolwire-inspect`: the TUI by default, and the same core headless through subcommands.

Each subcommand lives in its own module with `register(subparsers)`; the module's handler takes
the parsed args and returns the process exit status."""

from __future__ import annotations

import argparse
import importlib
import sys

from .common import CommandError

# Subcommand modules, in the order `--help` lists them.
_COMMANDS = ["record", "flows", "replay", "export", "check", "translate", "mock", "demo", "ca"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolwire-inspect",
        description="Record, check, translate, replay and export LLM tool-calling traffic.",
    )
    from . import tui as tui_command

    tui_command.add_arguments(parser)
    parser.set_defaults(handler=tui_command.run)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except CommandError as exc:
        print(f"toolwire-inspect: {exc}", file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
