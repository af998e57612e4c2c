"""`toolwire-inspect`: the TUI by default, and the same core headless through subcommands.

Each subcommand lives in its own module with `register(subparsers)`; the module's handler takes
the parsed args and returns the process exit status."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import NoReturn

from .common import CommandError, complain

# Subcommand modules, in the order `--help` lists them.
_COMMANDS = ["record", "run", "doctor", "flows", "replay", "export", "open", "check", "rules", "translate", "mock", "mcp-stdio", "ca",
             "config", "demo", "otlp"]


# The options of the bare command (the TUI) may also come before a subcommand
# (`toolwire-inspect --store s.sqlite3 flows`). argparse would let the subcommand's defaults
# overwrite them, so they are parsed under a prefix and handed over in `_hand_over`.
_BEFORE = "before_command_"


class _NotTheTui(Exception):
    """The bare command's parser could not read the line alone: the whole parser reads it."""


class _TuiParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _NotTheTui(message)


def build_parser(only: str | None = None, *, tui: bool = False) -> argparse.ArgumentParser:
    """The whole command line; with `only`, the bare command's options and that one command (each
    command module imports what its handler needs, and all of them together take a third of a
    second to import: a start-up every `toolwire-inspect flows` would pay for the other fifteen);
    with `tui`, the bare command's alone, which raises _NotTheTui for a line it cannot read (the
    TUI's first frame would wait for the other commands' imports, the export formats' checker
    among them)."""
    parser = (_TuiParser if tui else argparse.ArgumentParser)(
        prog="toolwire-inspect",
        description="Record, check, translate, replay and export LLM tool-calling traffic. With no COMMAND it "
                    "starts the TUI, its forwarder taking the options below; each COMMAND has its own "
                    "(toolwire-inspect COMMAND --help). The store is --store, else $TOOLWIRE_STORE, else "
                    "flows.sqlite3 in the user data dir.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    from . import tui as tui_command

    tui_command.add_arguments(parser)
    for action in parser._actions:
        if action.dest not in ("help", "version"):
            if action.metavar is None and action.nargs != 0:
                action.metavar = action.dest.upper()
            action.dest, action.default = _BEFORE + action.dest, argparse.SUPPRESS
    parser.set_defaults(handler=tui_command.run)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    names = [] if tui else _COMMANDS if only is None else [only]
    for name in names:
        importlib.import_module(f"{__name__}.{name.replace('-', '_')}").register(subparsers)
    _describe(subparsers)
    return parser


def _describe(subparsers: argparse._SubParsersAction) -> None:
    """A command's own --help opens with what it does: its line in the list, where it has no more
    to say; so do its own sub-commands' (`config trust`)."""
    for listed in subparsers._choices_actions:
        command = subparsers.choices[listed.dest]
        if command.description is None and listed.help:
            command.description = listed.help[:1].upper() + listed.help[1:] + "."
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                _describe(action)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("toolwire-inspect")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def _hand_over(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Give the options found before the command to the command (the TUI's defaults without one); one
    given again after the command keeps that value. An option the command does not take is refused."""
    given = {name[len(_BEFORE):]: value for name, value in vars(args).items() if name.startswith(_BEFORE)}
    for name in given:
        delattr(args, _BEFORE + name)
    if args.command is None:
        from . import tui as tui_command

        defaults = argparse.ArgumentParser(add_help=False)
        tui_command.add_arguments(defaults)
        vars(args).update({**vars(defaults.parse_args([])), **given})
        return
    command = _subparser(parser, args.command)
    flags = {action.dest: action.option_strings[-1] for action in parser._actions if action.option_strings}
    foreign = sorted(flags[_BEFORE + name] for name in given if not hasattr(args, name))
    if foreign:
        raise CommandError(f"{', '.join(foreign)} given before `{args.command}`, which takes no {', '.join(foreign)} "
                           f"(options go after the command: toolwire-inspect {args.command} --help)")
    for name, value in given.items():
        if getattr(args, name) == command.get_default(name):
            setattr(args, name, value)


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[command]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line as the handlers read it (a CommandError for an option that does not apply)."""
    argv = sys.argv[1:] if argv is None else argv
    # A command named first is the one command the line can hold: the other commands are not built.
    # A line of the bare command's options alone (the TUI) is read by that command's parser; anything
    # else (options before a command, --help, a typo) gets the whole parser and its whole answers.
    if argv and argv[0] in _COMMANDS:
        parser = build_parser(argv[0])
    else:
        if not {"-h", "--help", "--version"} & set(argv):  # the bare command's help would name no command
            tui = build_parser(tui=True)
            try:
                args = tui.parse_args(argv)
            except _NotTheTui:  # a command after options, a typo: the whole parser's answer
                pass
            else:
                _hand_over(tui, args)
                return args
        parser = build_parser()
    args = parser.parse_args(argv)
    _hand_over(parser, args)
    return args


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
        return int(args.handler(args) or 0)
    except CommandError as exc:
        complain(str(exc))
        return exc.status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader (`| head`) went away: stop quietly, as Unix tools do. Python would otherwise
        # report the pipe again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
