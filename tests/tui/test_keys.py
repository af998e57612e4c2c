"""`?` help, `x` export, `p` pager fallback, `ctrl+q` quit."""

import json
from pathlib import Path

from textual.notifications import Notify
from textual.widgets import OptionList, Static

from inspector.analysis import analyse
from inspector.formats.fixture import dumps, fixture
from inspector.store import Store
from inspector.tui.messages import ExportFinished
from inspector.tui.screens.export_format import ExportFormatScreen
from inspector.tui.screens.flow import FlowScreen
from inspector.tui.screens.flows import FlowsScreen
from inspector.tui.screens.help import HelpScreen
from inspector.tui.widgets.flow_list import FlowList

from .conftest import make_app, settle, workers_done
from .test_flow_view import open_flow
from .test_live import Seen


async def test_question_mark_lists_every_key_of_the_list(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text", Static).content)
        # A key's row starts two spaces in; a long description continues further in.
        lines = [line.split(None, 1) for line in text.splitlines() if line.startswith("  ") and line[2] != " "]
        keys = [key.rstrip(",") for key, *_ in lines]
        assert keys == ["q", "/", "esc", "r", "R", "x", "e", "E", "y", "Y", "c", "d", "enter", "j", "k", "g", "G", "pgdn", "pgup",
                        "S", "o", "m", "M", "U",
                        "~v", "~dialect", "~model", "~tool", "~R", "~S", "~d", "~m", "~c", "~u", "~h", "~b", "~t", "~e", "~q",
                        "~s", "~replay", "~websocket", "~marked", "#N", "text", "&",
                        "ctrl+q", "?", "tab", "ctrl+p"]
        lines = text.splitlines()
        start = lines.index("  /, f            Filter the list: ~v ~dialect ~model ~tool ~c ~e ~d … #N")
        assert lines[start + 1] == "                  or text, with & | ! ( ) (see below)"
        # The expressions are documented where the keys are, from the table the parser's module keeps.
        start = lines.index("Filter expressions (/ in the list; flows --filter)")
        assert lines[start + 1:start + 33] == [
            "  ~v RULE         has a finding of rule RULE (OC-05), or ~v error / ~v",
            "                  warning",
            "  ~dialect NAME   dialect: chat, responses, anthropic, gemini, mcp,",
            "                  bedrock",
            "  ~model MODEL    model contains MODEL",
            "  ~tool TOOL      a payload names the tool TOOL",
            "  ~R ROUTE        came through route ROUTE (toolwire-inspect --route",
            "                  NAME=URL)",
            "  ~S N            recorded in session N (each launch is one: the list's S",
            "                  column, flows --json)",
            "  ~d DOMAIN       the upstream's host contains DOMAIN",
            "  ~m METHOD       HTTP method: POST, GET",
            "  ~c CODE         HTTP status: 400, 4xx, 5",
            "  ~u URL          the upstream URL (path and query) contains URL",
            "  ~h TEXT         a request or response header (name: value) contains",
            "                  TEXT; ~hq, ~hs one side",
            "  ~b TEXT         the request or response body contains TEXT; ~bq, ~bs one",
            "                  side",
            "  ~t TYPE         the request's or response's content type contains TYPE;",
            "                  ~tq, ~ts one side",
            "  ~e              failed: transport error or status ≥ 400",
            "  ~q              a request with no response (yet)",
            "  ~s              has a response",
            "  ~replay         is a replay (also ~r)",
            "  ~websocket      a WebSocket session or one of its turns (also ~w)",
            "  ~marked         marked in the list (m; marks last as long as the TUI, M",
            "                  shows them alone)",
            "  #N              flow N, its replays and, for a socket, its turns",
            "  text            path, model, state, status, errors, rule ids, payload",
            "                  text",
            '  & | ! ( )       and (or a space), or, not, grouping; "…" quotes',
            ""]
        await pilot.press("escape")
        assert isinstance(app.screen, FlowsScreen)


async def test_help_from_the_flow_view_returns_there(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        await open_flow(app, pilot, ids["clean"])
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("question_mark")
        assert isinstance(app.screen, FlowScreen)


async def test_x_exports_the_selected_flow_as_a_fixture(store: Store, ids: dict[str, int], tmp_path: Path) -> None:
    seen = Seen()
    app = make_app(store, export_dir=tmp_path / "out")
    (tmp_path / "out").mkdir()
    async with app.run_test(size=(120, 36), message_hook=seen) as pilot:
        await pilot.press("k", "k", "k", "x")
        assert isinstance(app.screen, ExportFormatScreen)
        await pilot.press("enter", "enter")  # json, offered first; the folder offered
        done = await seen.wait_for(lambda m: isinstance(m, ExportFinished))
        path = tmp_path / "out" / f"flow-{ids['defective']}.json"
        assert (done.flow_id, done.path) == (ids["defective"], str(path))
        # Exactly what the export module writes for that flow (its format is the export's own).
        flow = store.get(ids["defective"])
        assert path.read_bytes() == dumps(fixture(flow, analyse(flow)))
        assert sorted(v["rule"] for v in json.loads(path.read_text())["violations"]) == ["OC-05", "OC-05", "OC-17"]
        await pilot.pause()
        notes = [m.notification for m in seen.messages if isinstance(m, Notify)]
        assert [(n.title, n.message) for n in notes] == [("Export", f"#{ids['defective']} written to {path}")]


async def test_x_in_the_flow_view_exports_that_flow(store: Store, ids: dict[str, int], tmp_path: Path) -> None:
    seen = Seen()
    app = make_app(store, export_dir=tmp_path)
    async with app.run_test(size=(120, 36), message_hook=seen) as pilot:
        await open_flow(app, pilot, ids["streamed"])
        await pilot.press("x", "enter", "enter")  # json; the folder offered
        done = await seen.wait_for(lambda m: isinstance(m, ExportFinished))
        assert done.path == str(tmp_path / f"flow-{ids['streamed']}.json")
        flow = store.get(ids["streamed"])
        assert Path(done.path).read_bytes() == dumps(fixture(flow, analyse(flow)))


async def test_x_asks_the_format_and_offers_the_last_one_first(store: Store, ids: dict[str, int],
                                                                tmp_path: Path) -> None:
    seen = Seen()
    out = tmp_path / "out"
    out.mkdir()
    app = make_app(store, export_dir=out)
    async with app.run_test(size=(120, 36), message_hook=seen) as pilot:
        await pilot.press("x", "escape")  # cancelled: nothing written
        assert isinstance(app.screen, FlowsScreen)
        await pilot.press("x", "down", "down", "down", "enter", "enter")
        done = await seen.wait_for(lambda m: isinstance(m, ExportFinished))
        assert done.path == str(out / f"flow-{ids['replay']}.har")
        assert json.loads(Path(done.path).read_text())["log"]["version"] == "1.2"
        await pilot.press("k", "x")
        assert app.screen.query_one(OptionList).highlighted == 3  # har again
        await pilot.press("up", "enter", "enter")
        done = await seen.wait_for(lambda m: isinstance(m, ExportFinished) and m.path.endswith(".yaml"))
        assert done.path == str(out / f"flow-{ids['failed']}.yaml")
        assert sorted(p.name for p in out.iterdir()) == [f"flow-{ids['failed']}.yaml", f"flow-{ids['replay']}.har"]


async def test_pager_without_a_terminal_says_where_the_payload_is(store: Store, ids: dict[str, int]) -> None:
    seen = Seen()
    app = make_app(store)
    async with app.run_test(size=(120, 36), message_hook=seen) as pilot:
        await open_flow(app, pilot, ids["clean"])
        await pilot.press("p")
        await pilot.pause()
        notes = [m.notification for m in seen.messages if isinstance(m, Notify)]
        assert len(notes) == 1 and notes[0].severity == "warning"
        assert notes[0].message.startswith("cannot open a pager (SuspendNotSupported); the payload is in ")
        saved = Path(notes[0].message.rsplit(" ", 1)[1])
        assert saved.read_text() == app.screen.view.request.text
        saved.unlink()


async def test_ctrl_q_quits_from_any_screen(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        await open_flow(app, pilot, ids["clean"])
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running


async def test_keys_typed_into_the_filter_are_not_commands(store: Store, ids: dict[str, int]) -> None:
    """`r` and `x` inside the filter field are letters, not replay/export."""
    seen = Seen()
    app = make_app(store)
    async with app.run_test(size=(120, 36), message_hook=seen) as pilot:
        await pilot.press("slash", "e", "r", "r", "o", "r")
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        assert (flows.filter_text, flows.total) == ("error", 1)
        await pilot.pause()
        assert not [m for m in seen.messages if isinstance(m, Notify)]


async def test_the_command_palette_opens_a_flow_by_what_you_type(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.press(*"#3 POST")
        await workers_done(app)
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, FlowScreen) and app.screen.flow_id == ids["defective"]


async def test_the_palette_runs_the_lists_actions_and_filters(store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        flows = app.query_one(FlowList)
        await pilot.press("ctrl+p", *"Sort")
        await workers_done(app)
        await pilot.pause()
        await pilot.press("enter")
        await settle(app, pilot)
        assert flows.order == "latency"
        await pilot.press("ctrl+p", *"flows that failed")
        await workers_done(app)
        await pilot.pause()
        await pilot.press("enter")
        await settle(app, pilot)
        assert (flows.filter_text, [flows.row(i).id for i in range(flows.total)]) == ("~e", [ids["failed"]])
        assert app.focused is flows


async def test_x_exports_the_selected_flow_as_an_html_page(store: Store, ids: dict[str, int], tmp_path: Path) -> None:
    from inspector.html import render as page

    seen = Seen()
    app = make_app(store, export_dir=tmp_path / "out")
    (tmp_path / "out").mkdir()
    async with app.run_test(size=(120, 36), message_hook=seen) as pilot:
        await pilot.press("k", "k", "k", "x")
        assert isinstance(app.screen, ExportFormatScreen)
        await pilot.press("end", "enter", "enter")  # html, offered last; the folder offered
        done = await seen.wait_for(lambda m: isinstance(m, ExportFinished))
        path = tmp_path / "out" / f"flow-{ids['defective']}.html"
        assert (done.flow_id, done.path) == (ids["defective"], str(path))
        assert path.read_bytes() == page(store, [ids["defective"]], title=f"flow #{ids['defective']}")
