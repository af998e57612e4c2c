"""WebSocket flows in the store: frames kept in order with direction, time, opcode and payload,
readable while the socket is open, scrubbed of the credentials the upgrade carried, and files
from before schema 8 still read."""

from __future__ import annotations

import sqlite3
import time

from inspector.flow import Flow, FlowState, frame_chunk, frames
from inspector.store import SCHEMA_VERSION, Store, schema
from inspector.wire.frames import Direction, Frame

KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
CREATE = b'{"type": "response.create", "model": "gpt-test", "input": "hi"}'
CREATED = b'{"type": "response.created", "response": {"id": "resp_1"}}'


def socket_flow(store: Store, **fields) -> Flow:
    values = dict(id=store.next_flow_id(), session_id=store.session_id or 0, started_at=1000.0, method="GET",
                  path="/v1/responses", websocket=True, request_headers=[("authorization", "[redacted]")],
                  secrets=(f"Bearer {KEY}", KEY))
    values.update(fields)
    return Flow(**values)


def add(flow: Flow, t: float, direction: Direction, text: bool, payload: bytes) -> None:
    chunk = frame_chunk(t, direction, text, payload)
    flow.chunks.append(chunk)
    flow.response_body += chunk.data


def wait_until(condition, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.005)  # the writer persists on its own clock: there is nothing to wait on
    return value


def test_a_finished_socket_reads_back_its_frames_in_order(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.new_session("https://api.example.com", "http://127.0.0.1:1")
        flow = socket_flow(store)
        store.save(flow)
        add(flow, 0.5, Direction.CLIENT, True, CREATE)
        add(flow, 0.75, Direction.SERVER, True, CREATED)
        add(flow, 1.0, Direction.SERVER, False, b"\x00\xff audio")
        flow.status, flow.state = 101, FlowState.COMPLETE
        flow.notes.append("closed by the client: 1000 'bye'")
        store.save(flow)
        assert store.frames(flow.id) == [Frame(Direction.CLIENT, 1000.5, True, CREATE),
                                         Frame(Direction.SERVER, 1000.75, True, CREATED),
                                         Frame(Direction.SERVER, 1001.0, False, b"\x00\xff audio")]
        (row,) = store.rows()
        assert (row.websocket, row.status, row.state, row.method, row.path) == (
            True, 101, "complete", "GET", "/v1/responses")
        assert store.get(flow.id).notes == ["closed by the client: 1000 'bye'"]
    with Store(tmp_path / "s.db", read_only=True) as store:
        assert [f.payload for f in store.frames(1)] == [CREATE, CREATED, b"\x00\xff audio"]


def test_a_flow_that_is_no_socket_has_no_frames(tmp_path):
    with Store(tmp_path / "s.db") as store:
        flow = socket_flow(store, websocket=False, method="POST", path="/v1/chat/completions")
        flow.chunks.append(frame_chunk(0.1, Direction.SERVER, True, b"data: x\n\n"))
        flow.state = FlowState.COMPLETE
        store.save(flow)
        assert (store.frames(flow.id), store.frames(999), frames(flow)) == ([], [], [])


def test_frames_of_an_open_socket_are_on_disk_while_it_lasts_and_scrubbed(tmp_path):
    with Store(tmp_path / "s.db") as store:
        flow = socket_flow(store)
        store.save(flow)
        sent = b'{"type": "session.update", "api_key": "' + KEY.encode() + b'", "note": "Bearer ' + KEY.encode() + b'"}'
        add(flow, 0.1, Direction.CLIENT, True, sent)
        add(flow, 0.2, Direction.SERVER, True, CREATED)
        found = wait_until(lambda: len(store.frames(flow.id)) == 2 and store.frames(flow.id))
        assert found == [Frame(Direction.CLIENT, 1000.1, True,
                               b'{"type": "session.update", "api_key": "[redacted]", "note": "[redacted]"}'),
                         Frame(Direction.SERVER, 1000.2, True, CREATED)]
        flow.status, flow.state = 101, FlowState.COMPLETE
        store.save(flow)
        assert store.frames(flow.id) == found
    raw = (tmp_path / "s.db").read_bytes() + (tmp_path / "s.db-wal").read_bytes() \
        if (tmp_path / "s.db-wal").exists() else (tmp_path / "s.db").read_bytes()
    assert KEY.encode() not in raw


def test_a_schema_7_file_opens_read_only_and_migrates(tmp_path):
    path = tmp_path / "s.db"
    conn = sqlite3.connect(path)
    conn.executescript("".join(schema._STEPS[:7]) + "PRAGMA user_version = 7;")
    conn.execute("INSERT INTO flows (id, session_id, started_at, method, path, query, request_headers, request_body, "
                 "mode, upstream_url, upstream_request_headers, response_headers, response_body, streamed, chunks, "
                 "state, notes) VALUES (3, 1, 0, 'POST', '/x', '', X'5B5D', X'', 'passthrough', '', X'5B5D', X'5B5D', "
                 "X'', 0, X'', 'complete', X'5B5D')")
    conn.commit()
    conn.close()
    with Store(path, read_only=True) as store:
        assert [(r.id, r.websocket) for r in store.rows()] == [(3, False)]
        assert (store.get(3).websocket, store.frames(3)) == (False, [])
    with Store(path) as store:
        assert [(r.id, r.websocket) for r in store.rows()] == [(3, False)]
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,) == (8,)
    conn.close()
