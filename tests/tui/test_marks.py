"""Issue 22, marks and deletion in the list at 80×24 and 160×48, with mitmproxy's keys: `m` marks
(● before the id), `M` shows the marked alone, `U` unmarks all, `~marked` filters by them, `d`
deletes the marked flows or the selected one once asked: from this process's store, or over the
child protocol from the forwarder's process that owns the writer while it records."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import orjson
import pytest
from textual.widgets import Input, Static

from inspector.child import ForwarderProcess
from inspector.flow import Flow
from inspector.mock import MockUpstream
from inspector.proxy.options import Options
from inspector.store import Store
from inspector.tui.bridge import EventBridge
from inspector.tui.messages import DeleteFailed, FlowsDeleted
from inspector.tui.screens.confirm import ConfirmScreen
from inspector.tui.screens.flows import FlowsScreen
from inspector.tui.widgets.flow_list import FlowList

from .conftest import make_app, settle
from .flows import clean_request
from .test_flow_view import SIZES
from .test_live import Seen, completed, post_chat
from .test_process import reader


def listed(flows: FlowList) -> list[int]:
    return [flows.row(index).id for index in range(flows.total)]


def gutter(flows: FlowList) -> dict[int, str]:
    """The mark cell of each row on screen, by flow id: what sits between the session and the id."""
    found = {}
    for y in range(min(flows.total, flows.scrollable_content_region.height)):
        row = flows.row(int(flows.scroll_y) + y)
        found[row.id] = flows.render_line(y).text[2]
    return found


async def press(app, pilot, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await settle(app, pilot)


@pytest.mark.parametrize("size", SIZES)
async def test_m_marks_M_shows_the_marked_alone_and_U_unmarks(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        for name in ("clean", "failed"):
            flows.select_id(ids[name])
            await press(app, pilot, "m")
        assert flows.marks == {ids["clean"], ids["failed"]}
        assert gutter(flows) == {ids["earlier"]: " ", ids["clean"]: "●", ids["defective"]: " ", ids["streamed"]: " ",
                                 ids["failed"]: "●", ids["replay"]: " "}
        await press(app, pilot, "M")
        assert listed(flows) == [ids["clean"], ids["failed"]]
        # A mark taken back under M leaves the list at once.
        await press(app, pilot, "m")
        assert (flows.marks, listed(flows)) == ({ids["clean"]}, [ids["clean"]])
        await press(app, pilot, "M")
        assert listed(flows) == list(range(1, 7))
        # The filter grammar's spelling, with the rest of the grammar.
        await press(app, pilot, "slash")
        app.screen.query_one("#filter", Input).value = "~marked | ~e"
        await settle(app, pilot)
        assert listed(flows) == [ids["clean"], ids["failed"]]
        await press(app, pilot, "escape", "U")
        assert (flows.marks, gutter(flows)[ids["clean"]]) == (set(), " ")
        await press(app, pilot, "M")
        assert flows.total == 0
        assert flows.render_line(1).text.strip() == (
            "No marked flow here (m marks the flow under the cursor; M shows every flow).")


@pytest.mark.parametrize("size", SIZES)
async def test_d_asks_then_deletes_the_selected_flow_from_the_store(store: Store, ids: dict[str, int], size) -> None:
    seen = Seen()
    app = make_app(store)
    async with app.run_test(size=size, message_hook=seen) as pilot:
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        flows.select_id(ids["defective"])
        await press(app, pilot, "d")
        assert isinstance(app.screen, ConfirmScreen)
        assert str(app.screen.query_one("#confirm-question", Static).content).split("\n") == [
            f"Delete #{ids['defective']} from the store?", "Replays of a deleted flow stay, no longer linked to it."]
        await press(app, pilot, "n")  # no: nothing happens
        assert isinstance(app.screen, FlowsScreen) and store.count() == 6
        await press(app, pilot, "d", "y")
        done = await seen.wait_for(lambda m: isinstance(m, FlowsDeleted))
        await settle(app, pilot)
        assert done.deletion.deleted == (ids["defective"],)
        assert listed(flows) == [ids["earlier"], ids["clean"], ids["streamed"], ids["failed"], ids["replay"]]
        assert store.get(ids["replay"]).replay_of is None
        assert [n.message for n in app._notifications if n.title == "Delete"] == [
            f"1 flow deleted (#{ids['defective']})"]


@pytest.mark.parametrize("size", SIZES)
async def test_d_deletes_every_marked_flow_and_keeps_one_in_progress(store: Store, ids: dict[str, int], size) -> None:
    live = Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=0.0, method="POST",
                path="/v1/chat/completions", request_body=orjson.dumps(clean_request()))
    store.submit(live)  # pending: its forwarder is still relaying it
    store.flush()
    seen = Seen()
    app = make_app(store)
    async with app.run_test(size=size, message_hook=seen) as pilot:
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        flows.select_id(live.id)
        await press(app, pilot, "d")
        assert isinstance(app.screen, FlowsScreen)
        assert [n.message for n in app._notifications if n.title == "Not deleted"] == [
            f"#{live.id} is still in progress: a flow can be deleted once it ends"]
        for flow_id in (live.id, ids["earlier"], ids["streamed"]):
            flows.select_id(flow_id)
            await press(app, pilot, "m")
        flows.select_id(ids["clean"])  # the cursor's flow is not what d takes while flows are marked
        await press(app, pilot, "d")
        assert str(app.screen.query_one("#confirm-question", Static).content).split("\n") == [
            f"Delete the 2 marked flows (#{ids['earlier']}, #{ids['streamed']}) from the store?",
            f"#{live.id} is still in progress and kept.", "Replays of a deleted flow stay, no longer linked to it."]
        await press(app, pilot, "y")
        done = await seen.wait_for(lambda m: isinstance(m, FlowsDeleted))
        await settle(app, pilot)
        assert done.deletion.deleted == (ids["earlier"], ids["streamed"])
        assert (flows.marks, [r.id for r in store.rows()]) == (
            {live.id}, [ids["clean"], ids["defective"], ids["failed"], ids["replay"], live.id])


@pytest.mark.parametrize("size", SIZES)
async def test_a_read_only_store_without_a_forwarder_says_it_deletes_nothing(store: Store, ids, size) -> None:
    seen = Seen()
    with Store(store.path, read_only=True) as read_only:
        app = make_app(read_only)
        async with app.run_test(size=size, message_hook=seen) as pilot:
            await settle(app, pilot)
            await press(app, pilot, "d", "y")
            failed = await seen.wait_for(lambda m: isinstance(m, DeleteFailed))
            assert failed.reason == f"store {store.path} is open read-only"
            assert read_only.count() == 6


@pytest.mark.parametrize("size", SIZES)
async def test_d_deletes_through_the_forwarder_s_process_while_it_records(tmp_path: Path, size) -> None:
    """The TUI reads the store read-only; the child owns the writer: the delete crosses the pipe, and
    the child goes on recording."""
    with MockUpstream() as upstream:
        child = ForwarderProcess.start(Options(upstream.base_url, store=str(tmp_path / "flows.sqlite3"), port=0))
        bridge = EventBridge()
        bridge.follow(child)
        seen = Seen()
        try:
            with reader(child, tmp_path / "flows.sqlite3") as store:
                app = make_app(store, forwarder=child, bridge=bridge, clock=time.time)
                async with app.run_test(size=size, message_hook=seen) as pilot:
                    for flow_id in (1, 2, 3):
                        await asyncio.to_thread(post_chat, child.base_url)
                        await seen.wait_for(completed(flow_id))
                    await settle(app, pilot)
                    flows = app.query_one(FlowList)
                    for flow_id in (1, 3):
                        flows.select_id(flow_id)
                        await press(app, pilot, "m")
                    await press(app, pilot, "d", "y")
                    done = await seen.wait_for(lambda m: isinstance(m, FlowsDeleted))
                    await settle(app, pilot)
                    assert (done.deletion.deleted, listed(flows), flows.marks) == ((1, 3), [2], set())
                    # Still recording, into the same store.
                    await asyncio.to_thread(post_chat, child.base_url)
                    await seen.wait_for(completed(4))
                    await settle(app, pilot)
                    assert listed(flows) == [2, 4]
                    assert [n.message for n in app._notifications if n.title == "Delete"] == [
                        "2 flows deleted (#1, #3)"]
        finally:
            child.stop()
