"""Deleting flows (issue 22, `d` in the list): a flow goes with its chunks, a socket with its turns,
what pointed at them stops pointing, session findings are found again without them, a flow in
progress is kept; `~marked` takes the TUI's marks and is refused where there are none. Real stores
on real files."""

from __future__ import annotations

import orjson
import pytest

from inspector.filters import FilterError
from inspector.flow import Chunk, Flow, FlowState
from inspector.formats.registry import exported, render
from inspector.formats.base import WriteOptions
from inspector.store import Store
from inspector.store.deletion import Deletion
from tests.sockets.recorded import record_socket, seeded
from tests.test_session_findings import listing, shown
from tests.tui.flows import clean_request, defective_request, save_flow


def pending(store: Store) -> int:
    flow = Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=0.0, method="POST",
                path="/v1/chat/completions", request_body=orjson.dumps(clean_request()), streamed=True,
                chunks=[Chunk(0.1, b"data: {}\n\n")])
    store.submit(flow)
    store.flush()
    return flow.id


def test_a_deleted_flow_takes_what_is_its_own_and_nothing_points_at_it(tmp_path) -> None:
    with Store(tmp_path / "s.db") as store:
        store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
        origin = save_flow(store, defective_request())
        replay = save_flow(store, defective_request(), replay_of=origin)
        socket = record_socket(store, seeded())
        turns = [socket.id + 1, socket.id + 2, socket.id + 3]
        other = save_flow(store, clean_request())
        live = pending(store)
        assert [(r.id, r.replay_of, r.socket_of) for r in store.rows()][:2] == [(origin, None, None), (replay, origin, None)]
        done = store.delete([origin, socket.id, live, 999])
        assert done == Deletion((origin, socket.id, *turns), in_progress=(live,), missing=(999,))
        # The replay stays, no longer naming an origin (an id the store may give out again).
        assert [(r.id, r.replay_of, r.socket_of, r.state) for r in store.rows()] == [
            (replay, None, None, "complete"), (other, None, None, "complete"), (live, None, None, "pending")]
        assert store.get(origin) is None and store.frames(socket.id) == []
        with store._read_lock:
            assert store._read.execute("SELECT flow_id FROM flow_chunks WHERE flow_id != ?", (live,)).fetchall() == []
        # What is left exports whole.
        data = render("json", exported("json", store, [store.get(replay)]), WriteOptions(store=store))
        assert (orjson.loads(data)["request"]["body"]["json"]["model"], orjson.loads(data)["state"]) == ("gpt-4o-mini", "complete")


def test_deleting_a_turn_alone_unlinks_the_turn_that_continued_it(tmp_path) -> None:
    with Store(tmp_path / "s.db") as store:
        socket = record_socket(store, seeded())
        assert store.delete([socket.id + 2]).deleted == (socket.id + 2,)
        assert [(r.id, r.socket_of, r.continues) for r in store.rows()] == [
            (socket.id, None, None), (socket.id + 1, socket.id, None), (socket.id + 3, socket.id, None)]


def test_session_findings_are_found_again_without_the_deleted_flow(tmp_path) -> None:
    with Store(tmp_path / "s.db") as store:
        session_id = store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
        ids = [listing(store, query, n) for n, query in enumerate(("", "session=tok", "session=two"))]
        assert shown(store.session_findings(session_id)) == {
            ids[n]: [("XL-03", "/result/tools/0/name", "session")] for n in (1, 2)}
        store.delete([ids[2]])
        assert shown(store.session_findings(session_id)) == {ids[1]: [("XL-03", "/result/tools/0/name", "session")]}
        store.delete([ids[0]])  # the first registration gone, the second explains nothing any more
        assert shown(store.session_findings(session_id)) == {}


def test_marked_matches_the_marks_given_and_is_refused_without(tmp_path) -> None:
    with Store(tmp_path / "s.db") as store:
        store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
        ids = [save_flow(store, clean_request()) for _ in range(4)]
        assert [r.id for r in store.rows(text="~marked", marked={ids[1], ids[3]})] == [ids[1], ids[3]]
        assert [r.id for r in store.rows(text="!~marked & ~s", marked={ids[1]})] == [ids[0], ids[2], ids[3]]
        assert store.count(text="~marked", marked=set()) == 0
        assert store.index_of(ids[3], text="~marked", marked={ids[1], ids[3]}) == 1
        with pytest.raises(FilterError, match=r"^~marked is the TUI's marks \(m there\); they are not stored \(at 1\)$"):
            store.rows(text="~marked")


def test_a_read_only_store_deletes_nothing(tmp_path) -> None:
    from inspector.store import StoreError

    with Store(tmp_path / "s.db") as store:
        store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
        flow_id = save_flow(store, clean_request())
    with Store(tmp_path / "s.db", read_only=True) as reader:
        with pytest.raises(StoreError, match="read-only"):
            reader.delete([flow_id])
        assert reader.count() == 1
    assert FlowState.PENDING.value == "pending"
