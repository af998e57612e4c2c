"""One binding table for every screen: each key of each screen (its own, its widgets', the app's)
is in that screen's `?` help and is a command of the palette opened on it; the whole set, both ways."""

from __future__ import annotations

import re

import pytest
from textual.binding import Binding
from textual.command import CommandList, CommandPalette
from textual.widgets import Static

from inspector.filters import HELP as FILTER_HELP
from inspector.store import Store
from inspector.tui.app import InspectorApp
from inspector.tui.screens.flow import FlowScreen
from inspector.tui.screens.flows import FlowsScreen
from inspector.tui.screens.help import PALETTE_KEY, PANE_KEYS, HelpScreen, key_names
from inspector.tui.widgets.editor import EditorScreen
from inspector.tui.widgets.flow_list import FlowList
from inspector.tui.widgets.lines import LineViewer
from inspector.tui.widgets.payload import PayloadView
from inspector.tui.widgets.violations import FindingList

from .conftest import make_app, settle, workers_done
from .test_flow_view import SIZES, open_flow

# Which classes' keys each screen offers, named here by hand so the table is checked, not echoed.
OFFERED = {
    "list": [FlowsScreen, FlowList, InspectorApp],
    "flow": [FlowScreen, PayloadView, LineViewer, FindingList, InspectorApp],
    "editor": [EditorScreen, InspectorApp],  # a modal screen: of the app's keys, the priority ones
}


def bindings(kinds: list[type]) -> list[Binding]:
    modal = EditorScreen in kinds
    return [b for kind in kinds for b in kind.BINDINGS
            if isinstance(b, Binding) and not (modal and kind is InspectorApp and not b.priority)]


async def go_to(app, pilot, where: str, ids: dict[str, int]) -> None:
    await settle(app, pilot)
    if where in ("flow", "editor"):
        await open_flow(app, pilot, ids["defective"])
    if where == "editor":
        await pilot.press("e")
        await settle(app, pilot)


def help_rows(app) -> list[tuple[str, str]]:
    text = str(app.screen.query_one("#help-text", Static).content)
    # "  keys<padding>what they do": keys hold single spaces at most ("j, down"); a long description
    # continues on lines of its own, indented under itself.
    rows: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("   ") and rows:
            rows[-1][1] += " " + line.strip()
        elif line.startswith("  "):
            rows.append(re.split(r" {2,}", line.strip(), maxsplit=1))
    return [tuple(row) for row in rows]


async def palette_commands(app, pilot) -> list[str]:
    await pilot.press("ctrl+p")
    await workers_done(app)
    await pilot.pause()
    assert isinstance(app.screen, CommandPalette)
    options = app.screen.query_one(CommandList)
    prompts = [str(options.get_option_at_index(n).prompt).split("\n")[0] for n in range(options.option_count)]
    await pilot.press("escape")
    return prompts


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("where", OFFERED)
async def test_every_key_of_the_screen_is_in_its_help_and_palette(store: Store, ids: dict[str, int], where, size):
    app = make_app(store)
    expected = [(key_names(b), b.tooltip or b.description) for b in bindings(OFFERED[where])]
    async with app.run_test(size=size) as pilot:
        await go_to(app, pilot, where, ids)
        screen = app.screen
        await pilot.press("f1" if where == "editor" else "question_mark")  # ? is text in the editor
        assert isinstance(app.screen, HelpScreen)
        extra = FILTER_HELP if where == "list" else []
        builtin = [PALETTE_KEY] if where == "editor" else [PANE_KEYS, PALETTE_KEY]  # tab indents in the editor
        assert sorted(help_rows(app)) == sorted(expected + extra + builtin)
        await pilot.press("escape")
        assert app.screen is screen
        commands = await palette_commands(app, pilot)
        textual = {command.title for command in app.get_system_commands(screen)}
        ours = {text for text in commands if text not in textual and not text.startswith(("Open #", "Filter: "))}
        assert ours == {b.description for b in bindings(OFFERED[where])}  # the footer's names


@pytest.mark.parametrize("size", SIZES)
async def test_a_long_description_continues_under_itself_not_under_the_keys(store: Store, size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        lines = str(app.screen.query_one("#help-text", Static).content).splitlines()
        start = next(n for n, line in enumerate(lines) if line.startswith("  /, f "))
        column = lines[start].index("Filter the list")
        assert lines[start:start + 2] == [
            "  /, f" + " " * (column - 6) + "Filter the list: ~v ~dialect ~model ~tool ~c ~e ~d … #N",
            " " * column + "or text, with & | ! ( ) (see below)"]
        box = app.screen.query_one("#help-text", Static)
        assert all(len(line) <= box.content_region.width for line in lines)
