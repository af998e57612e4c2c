"""Options given before the subcommand, and TOOLWIRE_STORE: an option is applied or refused, never
silently dropped; the store is --store, else $TOOLWIRE_STORE, else the user data dir."""

from __future__ import annotations

import json

import pytest

from inspector.cli import main
from inspector.store import Store
from tests.tui.flows import populate


@pytest.fixture
def stores(tmp_path, monkeypatch):
    """Two real stores, `a` with the populated flows and `b` with none; the default store lives in tmp_path."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("TOOLWIRE_STORE", raising=False)
    with Store(tmp_path / "a.sqlite3") as store:
        count = len(populate(store))
    Store(tmp_path / "b.sqlite3").close()
    return tmp_path / "a.sqlite3", tmp_path / "b.sqlite3", count


def _listed(capsys) -> int:
    return len(json.loads(capsys.readouterr().out))


def test_store_before_the_subcommand_is_the_store_it_reads(stores, capsys):
    a, b, count = stores
    assert main(["--store", str(a), "flows", "--json"]) == 0
    assert _listed(capsys) == count
    assert main(["--store", str(a), "export", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "toolwire-fixture"


def test_the_flag_after_the_subcommand_wins_over_the_one_before(stores, capsys):
    a, b, _ = stores
    assert main(["--store", str(a), "flows", "--json", "--store", str(b)]) == 0
    assert _listed(capsys) == 0


def test_toolwire_store_replaces_the_default_and_a_flag_replaces_it(stores, capsys, monkeypatch):
    a, b, count = stores
    monkeypatch.setenv("TOOLWIRE_STORE", str(a))
    assert main(["flows", "--json"]) == 0
    assert _listed(capsys) == count
    assert main(["flows", "--json", "--store", str(b)]) == 0
    assert _listed(capsys) == 0
    assert main(["--store", str(b), "flows", "--json"]) == 0
    assert _listed(capsys) == 0
    monkeypatch.setenv("TOOLWIRE_STORE", str(a.parent / "missing.sqlite3"))
    assert main(["flows"]) == 2
    assert capsys.readouterr().err == (
        f"toolwire-inspect: no flow store at {a.parent / 'missing.sqlite3'} (record some flows first)\n")


def test_an_empty_toolwire_store_means_unset(stores, capsys, monkeypatch):
    monkeypatch.setenv("TOOLWIRE_STORE", "")
    assert main(["flows"]) == 2
    default = stores[0].parent / "data" / "toolwire-inspect" / "flows.sqlite3"
    assert capsys.readouterr().err == f"toolwire-inspect: no flow store at {default} (record some flows first)\n"


def test_an_option_the_subcommand_does_not_take_is_refused_not_dropped(stores, capsys):
    a, _, _ = stores
    assert main(["--upstream", "http://127.0.0.1:9", "flows", "--store", str(a)]) == 2
    assert capsys.readouterr().err == (
        "toolwire-inspect: --upstream given before `flows`, which takes no --upstream (options go after the "
        "command: toolwire-inspect flows --help)\n")
    assert main(["--repair", "--port", "9", "export", "1"]) == 2
    assert capsys.readouterr().err == (
        "toolwire-inspect: --port, --repair given before `export`, which takes no --port, --repair (options go "
        "after the command: toolwire-inspect export --help)\n")


def test_forwarder_options_before_record_apply_to_it(stores, capsys):
    # --host before `record` reaches record: it refuses a remote address without --allow-remote.
    a, _, _ = stores
    assert main(["--host", "0.0.0.0", "record", "--port", "0", "--upstream", "http://127.0.0.1:9", "--store", str(a)]) == 2
    assert capsys.readouterr().err.startswith("toolwire-inspect: refusing to listen on 0.0.0.0: ")


def test_version_prints_the_installed_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert (done.value.code, capsys.readouterr().out) == (0, f"toolwire-inspect {version('toolwire-inspect')}\n")


def test_the_top_level_help_says_no_command_starts_the_tui(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "With no COMMAND it starts the TUI" in " ".join(capsys.readouterr().out.split())


def test_every_command_s_help_opens_with_what_it_does(capsys):
    from inspector.cli import _COMMANDS

    described = {}
    for command in _COMMANDS:
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = capsys.readouterr().out
        # usage, a blank line, then the description (before the arguments)
        described[command] = text.split("\n\n")[1].split("\n")[0]
    assert all(line and not line.startswith(("options:", "positional arguments:")) for line in described.values()), \
        described


@pytest.mark.parametrize("limit", [["--timeout", "5"], ["--max-body", "1000"]])
def test_the_tui_takes_the_forwarder_s_limits_like_record(limit):
    from inspector.cli import parse_args
    from inspector.cli.common import options

    given = options(parse_args(limit))
    assert (given.timeout, given.max_body) == ((5.0, 64 * 1024 * 1024) if "--timeout" in limit else (600.0, 1000))


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "five"])
def test_a_limit_that_is_no_positive_number_is_refused(value, capsys):
    from inspector.cli import parse_args

    with pytest.raises(SystemExit) as done:
        parse_args(["--timeout", value])
    assert done.value.code == 2
    assert f"argument --timeout: '{value}' is not a number above 0" in capsys.readouterr().err


def test_export_session_without_an_id_takes_the_latest_session_with_flows(stores, capsys, tmp_path):
    a, _, _ = stores
    with Store(a) as store:  # a launch that recorded nothing yet (the TUI still open) is a session of its own
        store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    with Store(a, read_only=True) as store:
        sessions = [s.id for s in store.sessions()]
        recorded = store.latest_session_with_flows()
    assert recorded != sessions[-1]
    out = tmp_path / "out"
    assert main(["export", "--session", "--store", str(a), "-o", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"session {recorded}, the latest with flows (session {sessions[-1]} has none)"
    assert err[1].startswith("wrote ")


def test_export_session_on_a_store_without_flows_says_so(stores, capsys, tmp_path):
    _, b, _ = stores
    assert main(["export", "--session", "--store", str(b), "-o", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"toolwire-inspect: no session with flows in {b}\n"


def _commands(parser, name="toolwire-inspect"):
    """Every command and sub-command's parser (`config trust` too), with its full name."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for each, command in action.choices.items():
                yield f"{name} {each}", command
                yield from _commands(command, f"{name} {each}")


def test_every_command_and_sub_command_has_a_description_and_f_wherever_format_is():
    """Issue 22's CLI bullet, for every parser there is: `config trust --help` opened with its usage
    and nothing saying what it does; `-f` is `--format` wherever `--format` exists."""
    from inspector.cli import build_parser

    commands = dict(_commands(build_parser()))
    assert [name for name, command in commands.items() if not command.description] == []
    assert {name: [action.option_strings for action in command._actions if "--format" in action.option_strings]
            for name, command in commands.items()
            if any("--format" in action.option_strings for action in command._actions)} == {
        "toolwire-inspect export": [["--format", "-f"]], "toolwire-inspect check": [["--format", "-f"]]}
    assert (commands["toolwire-inspect config trust"].description,
            commands["toolwire-inspect config untrust"].description) == (
        "Let this file set the routes when run in its directory, as it is now; any change makes it untrusted again.",
        "Forget the trust given to this file.")


def test_a_command_named_first_is_parsed_by_a_parser_holding_only_it_and_reads_the_same():
    """`toolwire-inspect flows …` builds the bare options and `flows` alone (each command module's
    imports cost the start-up of every other command); its help, every sub-command's and every option's
    reading are those of the whole parser."""
    import subprocess
    import sys

    from inspector.cli import _COMMANDS, build_parser

    whole = dict(_commands(build_parser()))
    for name in _COMMANDS:
        alone = dict(_commands(build_parser(name)))
        assert {each: command.format_help() for each, command in alone.items()} == {
            each: command.format_help() for each, command in whole.items()
            if each == f"toolwire-inspect {name}" or each.startswith(f"toolwire-inspect {name} ")}
    loaded = subprocess.run([sys.executable, "-c", "import sys; from inspector.cli import parse_args; "
                             "parse_args(['rules']); print(sorted(m for m in sys.modules if m.startswith('inspector.cli.')))"],
                            capture_output=True, text=True, check=True)
    assert loaded.stdout == "['inspector.cli.common', 'inspector.cli.otlp', 'inspector.cli.rules', 'inspector.cli.tui']\n"


def test_the_tui_s_line_is_read_without_the_other_commands_and_reads_as_the_whole_parser_does(capsys):
    """`toolwire-inspect --upstream URL …` (the TUI) builds only the bare command's options: the other
    commands' modules (the export formats, which import the checker) would sit in front of the TUI's
    first frame. A line that parser cannot read gets the whole parser's answer."""
    import subprocess
    import sys

    from inspector.cli import _hand_over, build_parser, parse_args

    line = ["--upstream", "http://127.0.0.1:9", "--port", "0", "--store", "s.sqlite3", "--repair", "--timeout", "5"]
    parser = build_parser()
    whole = parser.parse_args(line)
    _hand_over(parser, whole)
    assert vars(parse_args(line)) == vars(whole)
    loaded = subprocess.run([sys.executable, "-c", "import sys; from inspector.cli import parse_args; "
                             f"parse_args({line!r}); print(sorted(m for m in sys.modules if m.startswith("
                             "('inspector.cli.', 'inspector.formats', 'inspector.analysis'))))"],
                            capture_output=True, text=True, check=True)
    assert loaded.stdout == "['inspector.cli.common', 'inspector.cli.otlp', 'inspector.cli.tui']\n"
    for wrong, said in ((["flowz"], "invalid choice: 'flowz'"), (["--port", "0", "stray"], "invalid choice: 'stray'"),
                        (["--bogus"], "unrecognized arguments: --bogus")):
        with pytest.raises(SystemExit) as ended:
            parse_args(wrong)
        assert ended.value.code == 2 and said in capsys.readouterr().err
