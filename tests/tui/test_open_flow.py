"""`toolwire-inspect open FILE --flow N` (issue 21): the deep link a span carries back to the bytes.
The UI opens on flow #N's view, whatever FILE is (a store, whose flows keep their numbers, or a
recording, whose turns are numbered as the list shows them); a flow FILE does not hold is one line
and exit 2, before any UI. Through the command line's own parsing, at 80×24."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli import parse_args
from inspector.cli.open import opened_app
from inspector.store import Store
from inspector.tui.screens.flow import FlowScreen
from inspector.tui.screens.flows import FlowsScreen
from inspector.tui.widgets.violations import ViolationPanel

from .conftest import workers_done

from .flows import populate

# The defective request's findings (tests/tui/flows.py), as the flow view lists them.
DEFECTIVE = [("OC-05", "/tools/0/function/parameters/type"),
             ("OC-05", "/tools/0/function/parameters/properties/url/type"),
             ("OC-17", "/messages/2/content")]


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "inspector", *argv], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> dict[str, Path]:
    """A store of two sessions (flows 1..6, the defective request #3) and its latest session (flows
    2..6) exported as HAR and as an OTLP/JSON trace with content, where the defective request is
    the second turn."""
    folder = tmp_path_factory.mktemp("recorded")
    with Store(folder / "flows.sqlite3") as store:
        assert populate(store)["defective"] == 3
    files = {"store": folder / "flows.sqlite3"}
    for kind, name, extra in (("har", "session-2.har", ()), ("otlp", "session-2.otlp.json", ("--capture-content",))):
        done = cli("export", "--session", "--format", kind, *extra, "-o", str(folder / kind),
                   "--store", str(files["store"]))
        assert done.returncode == 0, done.stderr
        files[kind] = folder / kind / name
    return files


@pytest.mark.parametrize(("kind", "number"), [("store", 3), ("har", 2), ("otlp", 2)])
async def test_open_on_a_flow_shows_that_flow_s_view(recorded, tmp_path, kind, number):
    app = opened_app(parse_args(["open", str(recorded[kind]), "--flow", str(number)]), tmp_path)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await workers_done(app)
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, FlowScreen) and screen.view is not None
            assert (screen.flow_id, screen.view.flow.id) == (number, number)
            assert [(item.violation.rule, item.violation.pointer)
                    for item in screen.query_one(ViolationPanel).items] == DEFECTIVE
            # Back is the list of the file's flows, as a plain `open` shows it.
            await pilot.press("escape")
            assert isinstance(app.screen, FlowsScreen)
    finally:
        app.store.close()


async def test_open_without_a_flow_shows_the_list(recorded, tmp_path):
    app = opened_app(parse_args(["open", str(recorded["har"])]), tmp_path)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await workers_done(app)
            await pilot.pause()
            assert isinstance(app.screen, FlowsScreen)
    finally:
        app.store.close()


def test_a_flow_the_file_does_not_hold_is_one_line_and_exit_2(recorded):
    for kind, held in (("store", "#1 to #6"), ("har", "#1 to #5")):
        done = cli("open", str(recorded[kind]), "--flow", "7")
        assert (done.returncode, done.stdout, done.stderr) == (
            2, "", f"toolwire-inspect: no flow #7 in {recorded[kind]}: its flows are {held}\n")


def test_a_store_is_opened_alone(recorded):
    done = cli("open", str(recorded["store"]), str(recorded["har"]), "--flow", "1")
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", f"toolwire-inspect: {recorded['store']} is a store: it is opened alone, not beside other files\n")


@pytest.mark.parametrize("number", ["0", "-1", "two"])
def test_a_flow_number_that_is_none_is_refused_by_the_parser(recorded, number):
    done = cli("open", str(recorded["har"]), f"--flow={number}")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (f"toolwire-inspect open: error: argument --flow: not a flow number: "
                                            f"{number!r}")
