"""Issue 22, the keys people bring with them, at 80×24 and 160×48: sorting by issues puts the worst
first, `]` / `[` walk the flows from inside the flow view, the palette finds actions by their footer
names, a user keymap from the config file, marks and deletion in the list, and where files go."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import Input, Static, TextArea

from inspector.store import Store
from inspector.tui.keymap import key_problem, user_keymap
from inspector.tui.screens.flow import FlowScreen
from inspector.tui.screens.flows import FlowsScreen
from inspector.tui.messages import Copied, CopyFailed, ExportFailed, ExportFinished
from inspector.tui.screens.save_to import SaveToScreen
from inspector.tui.widgets.editor import EditorScreen
from inspector.tui.widgets.flow_list import FlowList

from .conftest import make_app, settle, workers_done
from .flows import WEATHER, save_flow
from .test_live import Seen

SIZES = [(80, 24), (160, 48)]

_BAD_CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{bad"}}]}
# What the checker says of each (errors, warnings), beside populate's flows (3 and 6: three errors each).
ONE_WARNING = {"model": "llama-3", "messages": [{"role": "user", "content": "hi"}], "tool_choice": "auto"}
ONE_ERROR = {"model": "gpt-4o-mini", "tools": [WEATHER], "messages": [
    {"role": "user", "content": "hi"},
    {**_BAD_CALL, "tool_calls": [{**_BAD_CALL["tool_calls"][0], "function": {"name": "get_weather", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1"}]}
TWO_WARNINGS = {"model": "llama-3", "tool_choice": "auto", "messages": [
    {"role": "user", "content": "hi"}, _BAD_CALL, {"role": "tool", "tool_call_id": "c1", "content": "x"}]}


def more_issues(store: Store) -> dict[str, int]:
    """Flows 7 (one warning), 8 (one error), 9 (two warnings), after populate's six."""
    return {"one warning": save_flow(store, ONE_WARNING, offset=11), "one error": save_flow(store, ONE_ERROR, offset=12),
            "two warnings": save_flow(store, TWO_WARNINGS, offset=13)}


def listed(flows: FlowList) -> list[int]:
    return [flows.row(i).id for i in range(flows.total)]


# -- sort by issues -------------------------------------------------------------------------------

def test_the_issues_order_is_worst_first_errors_then_warnings_ties_in_time_order(store: Store, ids) -> None:
    more_issues(store)
    assert [(r.id, r.errors, r.warnings) for r in store.rows(order="issues")] == [
        (3, 3, 0), (6, 3, 0), (8, 1, 0), (9, 0, 2), (7, 0, 1), (1, 0, 0), (2, 0, 0), (4, 0, 0), (5, 0, 0)]
    assert [store.index_of(i, order="issues") for i in range(1, 10)] == [5, 6, 0, 7, 8, 1, 4, 2, 3]
    assert [r.id for r in store.rows(order="issues", text="!~v error")] == [9, 7, 1, 2, 4, 5]
    assert store.index_of(7, order="issues", text="!~v error") == 1


@pytest.mark.parametrize("size", SIZES)
async def test_S_to_issues_shows_the_worst_flow_at_the_top(store: Store, ids, size) -> None:
    more_issues(store)
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        await pilot.press("S", "S")
        await settle(app, pilot)
        assert (flows.order, listed(flows)) == ("issues", [3, 6, 8, 9, 7, 1, 2, 4, 5])
        # The flow under the cursor stays under it (the newest, 9), and the worst is on screen, first.
        assert (flows.current.id, flows.scroll_y) == (9, 0)
        assert flows.render_line(0).text.split()[1] == "3"


# -- ] and [ from inside the flow view -------------------------------------------------------------

async def shown_flow(app, pilot):
    await settle(app, pilot)
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, FlowScreen) and screen.view is not None
    return screen


def pane_state(screen) -> tuple[int, str | None, str | None]:
    """(the flow shown, the pane holding the focus, the pane zoomed)."""
    def pane(widget) -> str | None:
        return next((node.id for node in (widget.ancestors_with_self if widget else ())
                     if node.id in ("request", "upstream", "response", "violations")), None)
    return screen.view.flow.id, pane(screen.focused), pane(screen.maximized)


@pytest.mark.parametrize("size", SIZES)
async def test_brackets_walk_the_list_from_the_flow_view_keeping_the_zoomed_pane(store: Store, ids, size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        flows.select_id(ids["clean"])
        await pilot.press("enter")
        screen = await shown_flow(app, pilot)
        assert pane_state(screen) == (2, "request", None)  # a clean flow: the request has the keys
        await pilot.press("z", "right_square_bracket")
        screen = await shown_flow(app, pilot)
        # The next flow in the list, read in the same pane, still zoomed; the list's cursor follows.
        assert (pane_state(screen), flows.current.id) == ((3, "request", "request"), 3)
        await pilot.press("z")
        screen.query_one("#violation-list").focus()
        await pilot.press("z")
        assert pane_state(screen) == (3, "violations", "violations")
        await pilot.press("right_square_bracket")
        screen = await shown_flow(app, pilot)
        # The streamed flow has no findings: the zoom goes to the pane with content, as on opening.
        assert pane_state(screen) == (4, "request", "request")
        await pilot.press("left_square_bracket", "left_square_bracket", "left_square_bracket")
        screen = await shown_flow(app, pilot)
        assert (pane_state(screen), flows.current.id) == ((1, "request", "request"), 1)
        await pilot.press("left_square_bracket")
        await settle(app, pilot)
        assert pane_state(app.screen)[0] == 1
        assert [n.message for n in app._notifications][-1] == "#1 is the first flow in the list"
        await pilot.press("z", "escape")
        assert isinstance(app.screen, FlowsScreen) and flows.current.id == 1


@pytest.mark.parametrize("size", SIZES)
async def test_brackets_follow_the_list_as_filtered_and_sorted(store: Store, ids, size) -> None:
    more_issues(store)
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        await pilot.press("S", "S", "slash", *"~v error | ~v warning", "enter")  # by issues, with findings
        await settle(app, pilot)
        assert listed(flows) == [3, 6, 8, 9, 7]
        await pilot.press("g", "enter")
        seen = [(await shown_flow(app, pilot)).view.flow.id]
        for _ in range(4):
            await pilot.press("right_square_bracket")
            seen.append((await shown_flow(app, pilot)).view.flow.id)
        assert seen == [3, 6, 8, 9, 7]
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        assert [n.message for n in app._notifications][-1] == "#7 is the last flow in the list"


# -- the command palette ----------------------------------------------------------------------------

async def palette(app, pilot, query: str) -> list[tuple[str, str]]:
    """(title, help line) of what the palette lists for `query`, best first."""
    await pilot.press("ctrl+p", *query)
    await workers_done(app)
    await pilot.pause()
    assert isinstance(app.screen, CommandPalette)
    options = app.screen.query_one(CommandList)
    found = []
    for n in range(options.option_count):
        title, _, help_line = str(options.get_option_at_index(n).prompt).partition("\n")
        found.append((title, help_line))
    await pilot.press("escape")
    return found


@pytest.mark.parametrize("size", SIZES)
async def test_the_palette_finds_actions_by_their_footer_names_with_short_titles(store: Store, ids, size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        found = await palette(app, pilot, "replay")
        assert found[:2] == [
            ("Replay", "Send the selected request upstream again, as recorded (marked ↻#N) · r"),
            ("Replay fixed", "Send the selected request with every safe repair applied (marked ↻F#N) · R")]
        assert ("Export", "Export the selected flow (fixture, pytest, cassette or HAR) · x") in await palette(
            app, pilot, "export")
        app.query_one(FlowList).select_id(ids["defective"])
        await pilot.press("enter")
        await settle(app, pilot)
        found = await palette(app, pilot, "fix")
        assert sorted(found[:2]) == [
            ("Fixed", "The request beside itself with every safe repair applied, as a diff · F"),
            ("Replay fixed", "Send it again with every safe repair applied (F) · R")]
        # A word of the help line finds its action too, after the titles that hold it.
        assert ("Chunks", "Raw stream chunks with arrival times (toggle) · s") in await palette(app, pilot, "arrival")


# -- the user's keymap ------------------------------------------------------------------------------

KEYS = """
[keys]
"flows.sort" = "s"
"flow.next-flow" = "ctrl+n,J"
"flows.nope" = "x"
"flows.open" = "ctrl+bogus"
"flows.first" = 3
"""


@pytest.fixture
def own_config(tmp_path, monkeypatch) -> Path:
    """The user config dir's toolwire-inspect.toml (XDG_CONFIG_HOME, as platformdirs reads it)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = tmp_path / "config" / "toolwire-inspect" / "toolwire-inspect.toml"
    path.parent.mkdir(parents=True)
    return path


@pytest.mark.parametrize("size", SIZES)
async def test_the_users_keymap_rebinds_by_id_and_says_each_bad_entry_in_one_line(
        store: Store, ids, own_config: Path, tmp_path: Path, size) -> None:
    own_config.write_text(KEYS)
    own_config.chmod(0o600)
    # A file in the working directory (a cloned repository's) that nobody trusted sets no key.
    (tmp_path / "toolwire-inspect.toml").write_text('[keys]\n"flows.last" = "g"\n')
    keys = user_keymap(cwd=tmp_path)
    assert keys == ({"flows.sort": "s", "flow.next-flow": "ctrl+n,J", "flows.nope": "x"}, [
        f"config {own_config}: [keys] 'flows.open' = 'ctrl+bogus': 'bogus' is not a key name (a character, "
        "or f1, escape, pagedown, left_square_bracket …); left as it was",
        f"config {own_config}: [keys] 'flows.first' must be a string of keys, like \"ctrl+n\""])
    app = make_app(store, keys=keys)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        await pilot.press("S")
        await settle(app, pilot)
        assert flows.order == "time"  # S is no longer the sort key
        await pilot.press("s")
        await settle(app, pilot)
        assert flows.order == "latency"
        await pilot.press("g")
        assert flows.cursor == 0  # g is still First: the untrusted file's keys did nothing
        warnings = [(n.title, n.message) for n in app._notifications if n.title == "Keys"]
        assert warnings == [("Keys", problem) for problem in keys[1]] + [
            ("Keys", "keys: no binding has the id 'flows.nope' (docs/keys.md lists them); left out")]
        await pilot.press("question_mark")
        text = str(app.screen.query_one("#help-text", Static).content)
        assert "  s " in text and "Sort by time" in text.split("\n  s ")[1].splitlines()[0]
        await pilot.press("escape")
        flows.select_id(ids["clean"])
        await pilot.press("enter")
        await shown_flow(app, pilot)
        await pilot.press("ctrl+n")
        assert (await shown_flow(app, pilot)).view.flow.id == 3  # the list is by latency: 4, 1, 2, 3, 5, 6
        await pilot.press("J")
        assert (await shown_flow(app, pilot)).view.flow.id == 5


def test_a_trusted_working_directory_config_gives_its_keys_and_a_broken_file_a_line(own_config, tmp_path) -> None:
    from inspector import trust

    here = tmp_path / "toolwire-inspect.toml"
    here.write_bytes(b'[keys]\n"flows.last" = "L"\n')
    assert user_keymap(cwd=tmp_path) == ({}, [])
    trust.trust(here, here.read_bytes())
    assert user_keymap(cwd=tmp_path) == ({"flows.last": "L"}, [])
    broken = tmp_path / "broken.toml"
    broken.write_bytes(b"[keys\n")
    assert user_keymap(str(broken)) == ({}, [
        f"config {broken} is not valid TOML: Expected ']' at the end of a table declaration (at line 1, column 6)"])
    assert user_keymap(str(tmp_path / "missing.toml")) == ({}, [
        f"keys: cannot read config {tmp_path / 'missing.toml'}: No such file or directory"])
    assert [key_problem(k) for k in ("ctrl+shift+f5", "?", "left_square_bracket", "hyper+x", "", "a,,b",
                                     "cmd+k", "\x1b")] == [
        None, None, None, None, "an empty key", "an empty key",
        "'cmd' in 'cmd+k' is not a modifier (alt, ctrl, hyper, meta, shift, super)", "'\\x1b' is not a key to type"]


# -- the in-app editor asks before throwing edits away ------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
async def test_esc_in_the_editor_asks_before_throwing_edits_away(store: Store, ids, size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("e")
        await settle(app, pilot)
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        await pilot.press("escape")  # nothing changed: closed at once
        assert isinstance(app.screen, FlowsScreen)
        await pilot.press("e")
        await settle(app, pilot)
        editor = app.screen
        area = editor.query_one(TextArea)
        area.insert("  ", (0, 0))
        await pilot.press("escape")
        problem = editor.query_one("#edit-problem", Static)
        assert (app.screen, str(problem.content), problem.display) == (
            editor, "Unsent edits: esc again throws them away, ctrl+s sends them", True)
        area.insert(" ", (0, 0))  # typing on: the question is withdrawn, the next esc asks again
        await pilot.pause()
        assert problem.display is False
        await pilot.press("escape")
        assert app.screen is editor
        await pilot.press("escape")
        assert isinstance(app.screen, FlowsScreen) and store.count() == 6


# -- where files go ---------------------------------------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
async def test_y_Y_x_ask_the_folder_offering_the_exports_directory_then_the_last_one(
        store: Store, ids, tmp_path: Path, monkeypatch, size) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    exports = tmp_path / "data" / "toolwire-inspect" / "exports"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    seen = Seen()
    app = make_app(store)
    async with app.run_test(size=size, message_hook=seen) as pilot:
        await settle(app, pilot)
        await pilot.press("y")
        field = app.screen.query_one(Input)
        assert (type(app.screen), field.value, field.border_title) == (SaveToScreen, str(exports),
                                                                         "Write #6 curl into the folder")
        await pilot.press("escape")  # nothing written
        assert isinstance(app.screen, FlowsScreen) and list(exports.iterdir()) == []  # made, empty
        await pilot.press("Y")
        field = app.screen.query_one(Input)
        field.value = str(elsewhere)
        await pilot.press("enter")
        body = await seen.wait_for(lambda m: isinstance(m, (Copied, CopyFailed)))
        assert (type(body), body.path) == (Copied, str(elsewhere / "flow-6.request-body.txt"))
        await pilot.press("x", "enter")  # json
        field = app.screen.query_one(Input)
        assert (field.value, field.border_title) == (str(elsewhere), "Write #6 as json into the folder")
        await pilot.press("enter")
        done = await seen.wait_for(lambda m: isinstance(m, (ExportFinished, ExportFailed)))
        assert (type(done), done.path) == (ExportFinished, str(elsewhere / "flow-6.json"))
    assert sorted(p.name for p in elsewhere.iterdir()) == ["flow-6.json", "flow-6.request-body.txt"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["flows.sqlite3"] + sorted(
        p.name for p in tmp_path.glob("flows.sqlite3-*"))  # nothing in the working directory
