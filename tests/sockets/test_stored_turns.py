"""A socket saved in the store is split into its turns by the writer: each a row of its own, after
its socket, linked to it and to the turn it continues, analysed once like any flow."""

from __future__ import annotations

import orjson

from inspector.store import Store
from tests.sockets.recorded import record_socket, seeded
from tests.wire.test_responses_socket import _ASK, _CALL, session


def test_a_saved_socket_s_turns_are_rows_linked_to_it(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.new_session("https://api.openai.com", "http://127.0.0.1:1")
        socket = record_socket(store, seeded())
        rows = store.rows()
        assert [(r.id, r.method, r.websocket, r.socket_of, r.continues, r.dialect, r.model, r.status, r.errors,
                 r.tool_calls) for r in rows] == [
            (socket.id, "GET", True, None, None, "openai-responses", "", 101, 0, 0),
            (socket.id + 1, "WS", False, socket.id, None, "openai-responses", "gpt-5", 200, 0, 0),
            (socket.id + 2, "WS", False, socket.id, socket.id + 1, "openai-responses", "gpt-5", 200, 0, 1),
            (socket.id + 3, "WS", False, socket.id, socket.id + 2, "openai-responses", "gpt-5", 200, 2, 0),
        ]
        turn = store.get(socket.id + 3)
        assert orjson.loads(turn.history) == [_ASK, _CALL]
        found = store.analysis(turn).violations
        assert [(v.rule, v.pointer, v.where) for v in found] == [("OR-08", "/input/0/call_id", "request"),
                                                                 ("OR-08", "/previous_response_id", "request")]
        assert [r.id for r in store.rows(text="~v OR-08")] == [socket.id + 3]


def test_a_realtime_socket_s_findings_are_on_its_row(tmp_path):
    orphan = {"type": "conversation.item.create",
              "item": {"type": "function_call_output", "call_id": "call_9", "output": "{}"}}
    with Store(tmp_path / "s.db") as store:
        socket = record_socket(store, [["client", orphan]], path="/v1/realtime")
        (row,) = store.rows()
        assert (row.id, row.errors, row.socket_of) == (socket.id, 1, None)
        assert [(v.rule, v.pointer) for v in store.analysis(store.get(socket.id)).violations] == [
            ("RT-01", "/0/item/call_id")]


def test_a_session_read_back_read_only_keeps_its_turns(tmp_path):
    with Store(tmp_path / "s.db") as store:
        record_socket(store, session())
    with Store(tmp_path / "s.db", read_only=True) as store:
        assert [(r.socket_of, r.continues) for r in store.rows()] == [(None, None), (1, None), (1, 2), (1, 3)]


def test_filters_pick_sockets_and_their_turns(tmp_path):
    from tests.tui.flows import clean_request, save_flow

    with Store(tmp_path / "s.db") as store:
        store.new_session("https://api.openai.com", "http://127.0.0.1:1")
        first = record_socket(store, seeded())
        save_flow(store, clean_request())
        second = record_socket(store, session())
        found = {text: [r.id for r in store.rows(text=text)] for text in (
            "~w", "~websocket", "!~w", f"#{first.id}", f"#{second.id}", "~w & ~v OR-08", "~m WS", "~dialect responses")}
        assert found == {
            "~w": [1, 2, 3, 4, 6, 7, 8, 9], "~websocket": [1, 2, 3, 4, 6, 7, 8, 9], "!~w": [5],
            "#1": [1, 2, 3, 4], "#6": [6, 7, 8, 9], "~w & ~v OR-08": [4], "~m WS": [2, 3, 4, 7, 8, 9],
            "~dialect responses": [1, 2, 3, 4, 6, 7, 8, 9]}
