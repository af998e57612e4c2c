"""The store's writer in a process of its own (store/writer_process.py): what `record` and the TUI's
forwarder write through. Killed mid-burst, forwarding goes on and a new writer process writes every
flow once; open streams and sockets are resumed where the dead one left them; ids never wait."""

from __future__ import annotations

import concurrent.futures
import pickle
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing

import httpx
import orjson
from inspector.flow import Chunk, Direction, Flow, FlowState, Mode, frame_chunk
from inspector.mock import json_response
from inspector.store import Store
from inspector.store.rows import FlowRow
from inspector.store import writer_process

from .test_durability import CHAT, SSE, STREAM_BODY, family, read_only, start_record, wait_until

SECRET = "sk-proj-writerprocesssecret0123456789"


def finished(store: Store, session_id: int, marker: str) -> Flow:
    flow = Flow(id=store.next_flow_id(), session_id=session_id, started_at=1000.0, method="POST", path=CHAT,
                request_headers=[("authorization", f"Bearer {SECRET}")], secrets=(SECRET,),
                request_body=orjson.dumps({"model": "m", "messages": [{"role": "user", "content": marker}]}))
    flow.status, flow.state, flow.response_body = 200, FlowState.COMPLETE, b'{"object": "chat.completion"}'
    return flow


def kill_writer(store: Store) -> int:
    pid = store.writer_pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    return pid


def test_the_writer_process_killed_mid_burst_loses_no_flow_and_doubles_none(mock, tmp_path):
    path = tmp_path / "flows.sqlite3"
    count = 60
    for _ in range(count):
        mock.push(json_response({"object": "chat.completion", "choices": []}))
    proc, url, errors = start_record(path, mock.base_url)
    try:
        (writer,) = family(proc.pid)[1:]  # the recorder's one child: its writer process
        killed = threading.Event()

        def post(i: int) -> int:
            if i == count // 2:
                os.kill(writer, signal.SIGKILL)
                killed.set()
            body = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": f"burst {i}"}]})
            return httpx.post(url + CHAT, content=body, timeout=10).status_code

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(post, range(count)))
        assert killed.is_set() and statuses == [200] * count  # forwarding never waited on the writer
        conn = read_only(path)
        try:
            wait_until(lambda: conn.execute("SELECT COUNT(*) FROM flows WHERE state = 'complete'").fetchone()[0] == count)
        except AssertionError:
            raise AssertionError((conn.execute("SELECT state, COUNT(*) FROM flows GROUP BY state").fetchall(),
                                  errors.text(), family(proc.pid))) from None
        errors.wait_for(r"^toolwire-inspect: store: the writer process ended \(exit -9\); starting another$")
        new_writer = family(proc.pid)[1:]
        assert len(new_writer) == 1 and new_writer[0] != writer
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    markers = [orjson.loads(body)["messages"][0]["content"] for (body,) in
               conn.execute("SELECT request_body FROM flows ORDER BY id")]
    assert sorted(markers) == sorted(f"burst {i}" for i in range(count))  # each once: none lost, none doubled
    assert conn.execute("SELECT COUNT(DISTINCT id), COUNT(*), MAX(id) FROM flows").fetchone() == (count, count, count)
    conn.close()


def test_a_stream_open_while_its_writer_process_dies_is_resumed_and_written_whole(tmp_path):
    with Store(tmp_path / "s.db", writer_process=True) as store:
        session = store.new_session("http://up", "127.0.0.1:1")
        flow = Flow(id=store.next_flow_id(), session_id=session, started_at=1000.0, method="POST", path=CHAT,
                    request_body=STREAM_BODY, secrets=(SECRET,))
        store.submit(flow)
        flow.status, flow.streamed, flow.response_headers = 200, True, list(SSE)
        first = [Chunk(0.1, b"data: {\"n\": %d}\n\n" % i) for i in range(3)]
        flow.chunks.extend(first)
        conn = read_only(tmp_path / "s.db")
        wait_until(lambda: conn.execute("SELECT COUNT(*) FROM flow_chunks").fetchone()[0] == 3)
        dead = kill_writer(store)
        flow.chunks.append(Chunk(0.2, f"data: {SECRET}\n\n".encode()))
        wait_until(lambda: store.writer_pid not in (None, dead))
        wait_until(lambda: conn.execute("SELECT COUNT(*) FROM flow_chunks").fetchone()[0] == 4)
        # Resent from the first chunk: the dead writer's three are replaced, not doubled.
        assert conn.execute("SELECT seq, data FROM flow_chunks ORDER BY seq").fetchall() == [
            *((i, chunk.data) for i, chunk in enumerate(first)), (3, b"data: [redacted]\n\n")]
        flow.response_body = b"".join(chunk.data for chunk in flow.chunks)
        flow.state = FlowState.COMPLETE
        store.submit(flow)
        store.flush()
        stored = store.get(flow.id)
        assert stored is not None
        assert (stored.state, stored.response_body) == (
            FlowState.COMPLETE, b"".join(chunk.data for chunk in first) + b"data: [redacted]\n\n")
        assert conn.execute("SELECT COUNT(*) FROM flow_chunks").fetchone() == (0,)
        assert [row.id for row in store.rows()] == [flow.id]
        conn.close()


def test_a_sockets_frames_leave_the_forwarders_memory_once_on_disk_and_survive_a_new_writer(tmp_path):
    with Store(tmp_path / "s.db", writer_process=True) as store:
        session = store.new_session("http://up", "127.0.0.1:1")
        socket_flow = Flow(id=store.next_flow_id(), session_id=session, started_at=1000.0, method="GET",
                           path="/v1/realtime", websocket=True)
        store.submit(socket_flow)
        socket_flow.status = 101
        sent = [frame_chunk(0.1 * i, Direction.CLIENT, True, b'{"n": %d}' % i) for i in range(4)]
        socket_flow.chunks.extend(sent[:2])
        wait_until(lambda: len(socket_flow.chunks) == 0)  # on disk: the forwarder let go of them
        dead = kill_writer(store)
        socket_flow.chunks.extend(sent[2:])
        wait_until(lambda: store.writer_pid not in (None, dead))
        wait_until(lambda: len(socket_flow.chunks) == 0)
        socket_flow.state = FlowState.COMPLETE
        store.submit(socket_flow)
        store.flush()
        assert [frame.payload for frame in store.frames(socket_flow.id)] == [b'{"n": %d}' % i for i in range(4)]


def test_ids_never_wait_a_burst_past_those_in_hand_is_renumbered_by_the_writer(tmp_path):
    with Store(tmp_path / "s.db", writer_process=True) as store:
        session = store.new_session("http://up", "127.0.0.1:1")
        flows = [finished(store, session, f"n{i}") for i in range(writer_process.IDS_AHEAD * 3)]
        provisional = [flow.id for flow in flows if flow.id >= writer_process.PROVISIONAL]
        assert provisional  # more than were in hand, asked for at once: none waited
        rows = []
        for flow in flows:
            store.submit(flow, rows.append)
        store.flush()
        ids = sorted(row.id for row in rows)
        # One row each, under ids of the store's own (those still in hand are the next flows').
        assert len(set(ids)) == len(flows) and ids[-1] < writer_process.PROVISIONAL
        assert sorted(row.id for row in store.rows()) == ids
        renumbered = [flow for flow in map(store.get, ids) if flow is not None and any(
            note.startswith("renumbered from a provisional id") for note in flow.notes)]
        assert len(renumbered) == len(provisional)


def test_a_writer_process_ends_with_its_forwarder_and_writes_what_it_was_sent(tmp_path):
    """The forwarder's process killed: its writer process writes what it had and ends (the next open
    marks the open flows interrupted, as for a recorder that wrote in a thread)."""
    code = (
        "import os, sys, time\n"
        "from inspector.store import Store\n"
        "from inspector.flow import Flow, FlowState\n"
        "store = Store(sys.argv[1], writer_process=True)\n"
        "session = store.new_session('http://up', '127.0.0.1:1')\n"
        "flow = Flow(id=store.next_flow_id(), session_id=session, started_at=1.0, method='POST', path='/v1/chat/completions')\n"
        "flow.state, flow.status = FlowState.COMPLETE, 200\n"
        "store.submit(flow)\n"
        "store.flush()\n"
        "print(store.writer_pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "s.db")], stdout=subprocess.PIPE, text=True)
    try:
        writer = int(proc.stdout.readline())
        proc.kill()
        proc.wait()
        wait_until(lambda: not os.path.exists(f"/proc/{writer}") or _zombie(writer))
    finally:
        if proc.poll() is None:
            proc.kill()
    conn = sqlite3.connect(tmp_path / "s.db")
    assert conn.execute("SELECT id, state FROM flows").fetchall() == [(1, "complete")]
    conn.close()


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_flow_submitted_while_the_writer_process_restarts_is_written_with_nothing_more_to_wake_it(
        tmp_path, monkeypatch):
    monkeypatch.setattr(writer_process, "RESTART_PAUSE", 2.0)
    with Store(tmp_path / "s.db", writer_process=True) as store:
        session = store.new_session("http://up", "127.0.0.1:1")
        dead = kill_writer(store)  # within RESTART_PAUSE of its start: the next start waits that long
        wait_until(lambda: store.writer_pid is None)  # reaped, and the next one not started yet
        flow = finished(store, session, "alone")
        store.submit(flow)  # the only one: no later submit wakes the sender
        wait_until(lambda: store.get(flow.id) is not None)  # read from the file, not waited on the writer
        assert store.writer_pid not in (None, dead)
        assert [row.id for row in store.rows()] == [flow.id]


def test_a_burst_is_sent_in_frames_each_pickled_apart():
    """The forwarder's GIL is held for one frame's pickling at a time, not a whole burst's: 40
    messages go as frames of FRAME_MESSAGES, read back whole and in order."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        burst = [("submit", seq, "x" * 100) for seq in range(40)]
        writer_process._send(ours, burst)
        ours.shutdown(socket.SHUT_WR)
        raw = theirs.makefile("rb").read()
    frames, at = [], 0
    while at < len(raw):
        (size,) = writer_process._LENGTH.unpack(raw[at:at + 4])
        frames.append(pickle.loads(raw[at + 4:at + 4 + size]))
        at += 4 + size
    frame = writer_process.FRAME_MESSAGES
    assert [len(each) for each in frames] == [min(frame, 40 - start) for start in range(0, 40, frame)]
    assert len(frames) > 1
    assert [message for each in frames for message in each] == burst



def written_rows(path) -> sqlite3.Connection:
    """A connection to `path` in which the table `written` gets (id, state) of each row the writer
    process writes to `flows`, as it writes it."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE written (flow_id INTEGER, state TEXT)")
    conn.execute("CREATE TRIGGER each_write AFTER INSERT ON flows BEGIN INSERT INTO written VALUES (NEW.id, NEW.state); END")
    conn.commit()
    return conn


def test_a_flow_that_ends_before_its_request_row_is_due_is_sent_once_finished(tmp_path, monkeypatch):
    """Most requests end within milliseconds: their request row would be pickled and sent, and
    written by a flush, only to be replaced by the finished one. Sent while still open for
    PENDING_AFTER, it is; a job still finds every row submitted before it."""
    monkeypatch.setattr(writer_process, "PENDING_AFTER", 3600.0)  # never due while this test runs
    path = tmp_path / "s.db"
    with Store(path, writer_process=True) as store:
        session = store.new_session("http://up", "127.0.0.1:1")
        with closing(written_rows(path)) as conn:
            quick, held = finished(store, session, "quick"), finished(store, session, "held")
            for flow in (quick, held):
                flow.status, flow.state, flow.response_body = None, FlowState.PENDING, b""
                store.submit(flow)
            wait_until(lambda: store.unwritten() == 0)  # taken by the sender, on its own
            marker = finished(store, session, "sent after them")
            store.submit(marker)
            wait_until(lambda: conn.execute("SELECT COUNT(*) FROM written").fetchone()[0] > 0)
            quick.status, quick.state, quick.response_body = 200, FlowState.COMPLETE, b'{"object": "chat.completion"}'
            store.submit(quick)
            store.flush()
            assert conn.execute("SELECT flow_id, state FROM written").fetchall() == [
                (marker.id, "complete"), (quick.id, "complete"), (held.id, "pending")]


def test_every_field_of_a_flow_crosses_to_the_writer_process_unchanged():
    """Flows cross as Flow.__reduce__ packs them (chunks as pairs): each field, set apart from its
    default, comes back equal and of its type, secrets included (the writer scrubs by them)."""
    flow = Flow(
        id=7, session_id=3, started_at=1000.5, method="POST", path=CHAT, query="api-version=1",
        request_headers=[("authorization", "Bearer [REDACTED]")], request_body=b'{"model": "m"}', mode=Mode.TRANSLATE,
        upstream_url="http://up/v1/messages", upstream_request_body=b'{"model": "n"}',
        upstream_request_headers=[("x-api-key", "[REDACTED]")], status=200, response_headers=[("content-type", "text/event-stream")],
        upstream_response_body=b"event: x\n\n", response_body=b"data: 1\n\n", streamed=True,
        chunks=[Chunk(0.25, b"data: 1\n\n"), frame_chunk(0.5, Direction.SERVER, True, b"{}")],
        ttfb_ms=1.5, latency_ms=2.5, state=FlowState.ERROR, error="upstream broke off", replay_of=2, socket_of=4, continues=5,
        history=b"[]", translate="openai-chat:anthropic", route="claude", notes=["repaired"], websocket=True,
        secrets=(SECRET,))
    assert_crosses_unchanged(flow, Flow(0, 0, 0.0, "", ""))
    assert [type(chunk) for chunk in pickle.loads(pickle.dumps(flow, protocol=5)).chunks] == [Chunk, Chunk]


def assert_crosses_unchanged(record: Flow | FlowRow, default: Flow | FlowRow) -> None:
    """`record` has no field at its `default`, and each comes back from pickle equal and of its type."""
    names = list(type(record).__dataclass_fields__)
    assert [name for name in names if getattr(record, name) == getattr(default, name)] == []
    crossed = pickle.loads(pickle.dumps(record, protocol=5))
    assert [(getattr(crossed, name), type(getattr(crossed, name))) for name in names] == [
        (getattr(record, name), type(getattr(record, name))) for name in names]


def test_every_field_of_a_row_crosses_back_from_the_writer_process_unchanged():
    """A flow's acknowledgement carries its row as FlowRow.__reduce__ packs it: each field, set
    apart from its default, comes back equal and of its type."""
    row = FlowRow(id=9, session_id=2, started_at=1000.5, method="POST", path=CHAT, dialect="openai-chat",
                  model="gpt-test", status=200, state="complete", latency_ms=12.5, ttfb_ms=3.5, tools=2, tool_calls=1,
                  errors=1, warnings=3, replay_of=4, streamed=True, mode="repair", error="why", replay_fixed=True,
                  tokens_in=10, tokens_out=20, replay_edited=True, buffered=True, route="claude", websocket=True,
                  socket_of=5, continues=6)
    assert_crosses_unchanged(row, FlowRow(*([None] * 19)))
