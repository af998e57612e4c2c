"""The store under failure: a recorder killed mid-stream, a full disk, a locked file, a stdout
nobody reads, read-only commands. Recording may fail; forwarding never stops and nothing is lost
silently."""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import resource
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import httpx
import orjson
import pytest

from inspector.cli import main
from inspector.flow import Flow, FlowState
from inspector.mock import Canned, json_response
from inspector import store as store_module
from inspector.store import ID_POOL, Store

CHAT = "/v1/chat/completions"
BODY = b'{"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]}'
STREAM_BODY = b'{"model": "gpt-test", "stream": true, "messages": [{"role": "user", "content": "hi"}]}'
SSE = [("content-type", "text/event-stream")]


class Output:
    """A subprocess's output lines as they come, each with the time it arrived."""

    def __init__(self, stream) -> None:
        self.lines: list[tuple[float, str]] = []
        self._changed = threading.Condition()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            with self._changed:
                self.lines.append((time.monotonic(), line.rstrip("\n")))
                self._changed.notify_all()

    def wait_for(self, pattern: str, timeout: float = 15.0) -> tuple[float, str]:
        def found():
            return next(((t, line) for t, line in self.lines if re.search(pattern, line)), None)

        with self._changed:
            assert self._changed.wait_for(found, timeout), f"no line matching {pattern!r} in {self.lines}"
            return found()

    def text(self) -> list[str]:
        with self._changed:
            return [line for _, line in self.lines]


def start_record(store_path, upstream: str, stdout=subprocess.PIPE) -> tuple[subprocess.Popen, str, Output]:
    proc = subprocess.Popen([sys.executable, "-m", "inspector", "record", "--upstream", upstream, "--port", "0",
                             "--store", str(store_path)], stdout=stdout, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    errors = Output(proc.stderr)
    _, line = errors.wait_for(r"^forwarding http://")
    return proc, line.split()[1], errors


def family(pid: int) -> list[int]:
    """Process `pid` and its descendants (the recorder's writer process)."""
    found = [pid]
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as children:
            for child in children.read().split():
                found += family(int(child))
    return found


def read_only(path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def wait_until(condition, timeout: float = 10.0, interval: float = 0.005):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(interval)  # polling another process's file: there is nothing to wait on


# -- a recorder killed mid-stream ----------------------------------------------------------------

def test_kill_9_mid_stream_keeps_the_relayed_bytes_and_the_next_open_marks_the_flow_interrupted(mock, tmp_path):
    store_path = tmp_path / "flows.sqlite3"
    hold = threading.Event()
    pieces = [(0.0, b"data: %04d %s\n\n" % (i, b"x" * 1000)) for i in range(10)]
    mock.push(Canned(headers=SSE, chunks=[*pieces, (0.0, b"data: [DONE]\n\n")], hold=hold, hold_after=10))
    expected = b"".join(data for _, data in pieces)
    proc, url, _ = start_record(store_path, mock.base_url)
    try:
        with httpx.stream("POST", url + CHAT, content=STREAM_BODY, timeout=10) as response:
            # One iterator, never left: leaving it would close the connection.
            stream, received = response.iter_raw(), b""
            while len(received) < len(expected):
                received += next(stream)
            relayed_at = time.monotonic()
            conn = read_only(store_path)
            wait_until(lambda: conn.execute("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM flow_chunks WHERE flow_id = 1"
                                            ).fetchone()[0] == len(expected))
            persisted_after = time.monotonic() - relayed_at
            conn.close()
            os.kill(proc.pid, signal.SIGKILL)
            assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        hold.set()
        if proc.poll() is None:
            proc.kill()
    assert received == expected
    # PROGRESS_INTERVAL is 50 ms; on a loaded 2-core machine, allow the scheduler some slack.
    assert persisted_after < 0.5, persisted_after
    with Store(store_path) as store:
        flow = store.get(1)
        # Finished like any flow: analysed, so the list shows its dialect and model.
        assert [(r.id, r.state, r.dialect, r.model, r.status) for r in store.rows()] == [
            (1, "error", "openai-chat", "gpt-test", 200)]
    assert (flow.state, flow.status, flow.streamed, flow.response_body) == (FlowState.ERROR, 200, True, expected)
    assert flow.error == (f"interrupted: the recording process (pid {proc.pid}) ended before the response did; "
                          f"{len(expected)} bytes relayed by then are kept")
    assert b"".join(chunk.data for chunk in flow.chunks) == expected
    conn = read_only(store_path)
    assert conn.execute("SELECT COUNT(*) FROM flow_chunks").fetchone() == (0,)
    conn.close()


def pending_flow(store: Store, session_id: int) -> Flow:
    flow = Flow(id=store.next_flow_id(), session_id=session_id, started_at=1000.0, method="POST", path=CHAT,
                request_body=BODY)
    store.save(flow)
    return flow


def test_only_the_pending_flows_of_dead_processes_are_marked_interrupted(tmp_path):
    path = tmp_path / "s.db"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    with Store(path) as store:
        live = store.new_session("https://a.example", "http://127.0.0.1:1")
        reused = store.new_session("https://a.example", "http://127.0.0.1:2")
        gone = store.new_session("https://a.example", "http://127.0.0.1:3")
        unowned = store.new_session("https://a.example", "http://127.0.0.1:4")
        flows = [pending_flow(store, session) for session in (live, reused, gone, unowned)]
    conn = sqlite3.connect(path)
    # This pid, started at another time: a reused pid, not this process.
    conn.execute("UPDATE sessions SET owner_started = 'another start' WHERE id = ?", (reused,))
    conn.execute("UPDATE sessions SET owner_pid = ? WHERE id = ?", (dead_pid, gone))
    conn.execute("UPDATE sessions SET owner_pid = NULL, owner_started = NULL WHERE id = ?", (unowned,))
    conn.commit()
    conn.close()
    with Store(path) as store:
        store.flush()
        assert [(row.id, row.state, row.error) for row in store.rows()] == [
            (flows[0].id, "pending", None),
            (flows[1].id, "error", f"interrupted: the recording process (pid {os.getpid()}) ended before the "
                                   "response did; 0 bytes relayed by then are kept"),
            (flows[2].id, "error", f"interrupted: the recording process (pid {dead_pid}) ended before the "
                                   "response did; 0 bytes relayed by then are kept"),
            (flows[3].id, "error", "interrupted: the recording process ended before the response did; "
                                   "0 bytes relayed by then are kept"),
        ]


def test_stream_progress_is_appended_chunk_by_chunk_and_folded_in_at_the_end(rig):
    hold = threading.Event()
    pieces = [(0.0, b"data: %d\n\n" % i) for i in range(6)]
    rig.mock.push(Canned(headers=SSE, chunks=pieces, hold=hold, hold_after=4))
    path = rig.store.path
    conn = read_only(path)

    def chunk_rows():
        return conn.execute("SELECT seq, data FROM flow_chunks WHERE flow_id = 1 ORDER BY seq").fetchall()

    with httpx.Client(base_url=rig.url, timeout=10) as client, client.stream("POST", CHAT, content=STREAM_BODY) as response:
        stream, received = response.iter_raw(), b""
        while len(received) < sum(len(d) for _, d in pieces[:4]):
            received += next(stream)
        rows = wait_until(lambda: (found := chunk_rows()) and b"".join(bytes(d) for _, d in found) == received
                          and found)
        # Each chunk is one row, written once; the flow row keeps its (empty) body until the end.
        assert [seq for seq, _ in rows] == list(range(len(rows)))
        assert conn.execute("SELECT state, status, LENGTH(response_body) FROM flows WHERE id = 1").fetchone() == (
            "pending", 200, 0)
        hold.set()
        for data in stream:
            received += data
    assert received == b"".join(d for _, d in pieces)
    rig.events.completed()
    assert chunk_rows() == []
    assert conn.execute("SELECT state, response_body FROM flows WHERE id = 1").fetchone() == (
        "complete", b"".join(d for _, d in pieces))
    conn.close()


def test_stream_progress_never_puts_a_secret_on_disk_even_cut_across_chunks(rig):
    # The upstream echoes the client's key in its stream, cut in three pieces: the rows persisted
    # while the stream goes on hold no piece of it that says anything about the key.
    key = "sk-progress-9f8e7d6c5b4a"
    hold = threading.Event()
    pieces = [(0.0, b'data: {"echo": "' + key[:6].encode()), (0.0, key[6:14].encode()),
              (0.0, key[14:].encode() + b'"}\n\n'), (0.0, b"data: " + key.encode() + b"\n\n"), (0.0, b"data: [DONE]\n\n")]
    rig.mock.push(Canned(headers=SSE, chunks=pieces, hold=hold, hold_after=4))
    conn = read_only(rig.store.path)
    headers = {"authorization": f"Bearer {key}"}
    with httpx.Client(base_url=rig.url, timeout=10) as client, \
            client.stream("POST", CHAT, content=STREAM_BODY, headers=headers) as response:
        stream, received = response.iter_raw(), b""
        while len(received) < sum(len(d) for _, d in pieces[:4]):
            received += next(stream)
        # However the pieces were coalesced on the way, all four are on disk once two events end there.
        persisted = wait_until(lambda: (joined := b"".join(bytes(d) for (d,) in conn.execute(
            "SELECT data FROM flow_chunks WHERE flow_id = 1 ORDER BY seq"))).count(b"data: ") == 2
            and joined.endswith(b"\n\n") and joined)
        assert persisted.startswith(b'data: {"echo": "[redacted]') and persisted.endswith(b"data: [redacted]\n\n")
        assert [key[i:i + 4] for i in range(len(key) - 3) if key[i:i + 4].encode() in persisted] == []
        hold.set()
        for data in stream:
            received += data
    rig.events.completed()
    assert conn.execute("SELECT response_body FROM flows WHERE id = 1").fetchone() == (
        b'data: {"echo": "[redacted]"}\n\ndata: [redacted]\n\ndata: [DONE]\n\n',)
    conn.close()
    for suffix in ("", "-wal"):
        assert key[:6].encode() not in (rig.store.path.parent / (rig.store.path.name + suffix)).read_bytes()


# -- flow ids -----------------------------------------------------------------------------------

def test_next_flow_id_never_waits_on_a_locked_store(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as store:
        store.new_session("https://a.example", "http://127.0.0.1:1")
        locker = sqlite3.connect(path, isolation_level=None)
        locker.execute("BEGIN EXCLUSIVE")
        started = time.monotonic()
        ids = [store.next_flow_id() for _ in range(ID_POOL + 10)]
        took = time.monotonic() - started
        flows = [Flow(id=i, session_id=1, started_at=1.0, method="GET", path="/v1/models", state=FlowState.COMPLETE)
                 for i in ids[-3:]]
        for flow in flows:
            store.submit(flow)
        wait_until(lambda: store.last_error is not None)
        assert store.last_error.startswith("cannot write (database is locked)")
        locker.execute("ROLLBACK")
        locker.close()
        store.flush()
        assert store.last_error is None
        assert [row.id for row in store.rows()] == ids[-3:]
    assert took < 0.5, took
    assert ids == list(range(1, ID_POOL + 11))


def test_a_store_opens_on_a_locked_file_and_its_ids_wait_for_the_writer(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as earlier:
        earlier.save(Flow(id=earlier.next_flow_id(), session_id=0, started_at=1.0, method="GET", path="/a",
                          state=FlowState.COMPLETE))
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    started = time.monotonic()
    with Store(path) as store:
        opened_after = time.monotonic() - started
        assert store.last_error == "cannot write (database is locked); flows are kept in memory and retried"
        flow = Flow(id=store.next_flow_id(), session_id=0, started_at=1.0, method="GET", path="/b",
                    state=FlowState.COMPLETE)
        store.submit(flow)
        locker.execute("ROLLBACK")
        locker.close()
        store.flush()
        assert [(row.id, row.path) for row in store.rows()] == [(1, "/a"), (2, "/b")]
        assert store.last_error is None
    assert opened_after < 5, opened_after


def test_ids_borrowed_past_the_pool_are_claimed_when_free_and_replaced_when_taken(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as first:
        first.flush()  # its writer has settled: nothing tops its pool up until it writes
        used = [first.next_flow_id() for _ in range(ID_POOL)]
        borrowed = first.next_flow_id()  # past the pool, before the writer could reserve more
        assert (used, borrowed) == (list(range(1, ID_POOL + 1)), ID_POOL + 1)
        with Store(path) as second:  # reserves the next ids: the borrowed one is its now
            taken = second.next_flow_id()
            assert taken == ID_POOL + 1
            second.flush()  # its pool topped up again: it holds up to 2 * ID_POOL + 1 now
            flow = Flow(id=borrowed, session_id=0, started_at=1.0, method="GET", path="/a", state=FlowState.COMPLETE)
            first.save(flow)
            second.save(Flow(id=taken, session_id=0, started_at=1.0, method="GET", path="/b",
                             state=FlowState.COMPLETE))
        assert flow.id == 2 * ID_POOL + 2
        assert flow.notes == [f"renumbered from #{borrowed}: another process took that id while this one could "
                              "not reach the store"]
        assert [(row.id, row.path) for row in first.rows()] == [(ID_POOL + 1, "/b"), (2 * ID_POOL + 2, "/a")]
    with Store(path) as alone:
        ids = [alone.next_flow_id() for _ in range(ID_POOL + 2)]
        alone.save(Flow(id=ids[-1], session_id=0, started_at=1.0, method="GET", path="/c", state=FlowState.COMPLETE))
        # Nobody took the borrowed ids: they stay, and the ids go on from them.
        assert alone.rows()[-1].id == ids[-1] == ids[0] + ID_POOL + 1
        assert alone.next_flow_id() == ids[-1] + 1


def test_two_stores_recording_on_one_file_keep_the_ids_dense(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as tui, Store(path) as cli:
        for _ in range(10):
            for store, name in ((tui, "/t"), (cli, "/c")):
                store.save(Flow(id=store.next_flow_id(), session_id=0, started_at=1.0, method="GET", path=name,
                                state=FlowState.COMPLETE))
        # Each store's reserved pool is the widest jump the other one sees.
        assert [(row.id, row.path) for row in tui.rows()] == [
            *((i, "/t") for i in range(1, ID_POOL + 1)), *((i, "/c") for i in range(ID_POOL + 1, 2 * ID_POOL + 1)),
            *((2 * ID_POOL + i, name) for i, name in ((1, "/t"), (2, "/c"), (3, "/t"), (4, "/c")))]


def test_the_ids_a_killed_recorder_held_go_to_the_next_flow_and_a_live_ones_do_not(mock, tmp_path):
    path = tmp_path / "s.db"
    mock.push(json_response({"ok": True}))
    killed, url, _ = start_record(path, mock.base_url)
    live, live_url, _ = start_record(path, mock.base_url)
    try:
        assert httpx.post(url + CHAT, content=b"{}", timeout=10).status_code == 200
        wait_until(lambda: read_only(path).execute("SELECT COUNT(*) FROM flows WHERE state = 'complete'"
                                                   ).fetchone() == (1,))
        # Both hold a pool of ids: the killed one never gives its pool back.
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        # The live one's pool is keyed to its pid (its writer process holds it for it), and covers
        # the ids its writer process streamed ahead to it.
        (live_pool_end,) = read_only(path).execute("SELECT MAX(value) FROM meta WHERE key LIKE ?",
                                                   (f"pool:{live.pid}:%",)).fetchone()
        assert live_pool_end > ID_POOL
        with Store(path) as store:
            assert store.next_flow_id() == live_pool_end  # past the live recorder's pool
    finally:
        live.send_signal(signal.SIGTERM)
        live.wait()
    with Store(path) as store:  # both gone: the ids go on from the last flow
        assert store.next_flow_id() == 2


# -- a locked store ------------------------------------------------------------------------------

def test_a_locked_store_keeps_forwarding_and_writes_every_flow_once_unlocked(rig):
    locker = sqlite3.connect(rig.store.path, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        for _ in range(5):
            started = time.monotonic()
            assert rig.client.post(CHAT, content=BODY).status_code == 200
            assert time.monotonic() - started < 1.0
        wait_until(lambda: rig.store.last_error is not None)
        assert [e for e in rig.events.all if e.kind == "completed"] == []
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    events = rig.events.completed(5, timeout=15)
    assert [(e.row.id, e.row.state) for e in events] == [(i, "complete") for i in range(1, 6)]
    assert [(r.id, r.state, r.status) for r in rig.store.rows()] == [(i, "complete", 200) for i in range(1, 6)]
    assert rig.store.last_error is None


def test_the_flows_kept_for_a_locked_store_are_bounded_and_the_dropped_ones_named(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(store_module, "BACKLOG_FLOWS", 3)
    monkeypatch.setattr(store_module, "WRITE_TIMEOUT", 0.1)
    path = tmp_path / "s.db"
    with Store(path) as store:
        locker = sqlite3.connect(path, isolation_level=None)
        locker.execute("BEGIN EXCLUSIVE")
        try:
            for _ in range(5):
                store.submit(Flow(id=store.next_flow_id(), session_id=0, started_at=1.0, method="GET", path="/a",
                                  state=FlowState.COMPLETE))
            errors = []
            wait_until(lambda: errors.append(capsys.readouterr().err) or "BACKLOG FULL" in "".join(errors))
        finally:
            locker.execute("ROLLBACK")
            locker.close()
        store.flush()
        assert [row.id for row in store.rows()] == [3, 4, 5]
    assert "".join(errors).splitlines() == [
        "toolwire-inspect: store: cannot write (database is locked); flows are kept in memory and retried",
        "toolwire-inspect: store: BACKLOG FULL, dropped 2 unwritten flow writes (#1..#2): the store has not "
        "been writable for a while",
    ]


# -- a full disk ---------------------------------------------------------------------------------

def test_a_full_disk_keeps_forwarding_prints_only_stored_flows_and_leaves_the_store_openable(mock, tmp_path):
    store_path = tmp_path / "flows.sqlite3"
    proc, url, errors = start_record(store_path, mock.base_url)
    lines = Output(proc.stdout)
    try:
        assert httpx.post(url + CHAT, content=BODY).status_code == 200
        lines.wait_for(r"^#1 ")
        # The disk is full: no file of the recorder (its writer process's) may grow any more.
        limit = max(os.path.getsize(f"{store_path}{suffix}") for suffix in ("", "-wal"))
        for pid in family(proc.pid):
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
        big = orjson.dumps({"model": "gpt-test", "messages": [{"role": "user", "content": "x" * 50_000}]})
        for _ in range(3):
            answer = httpx.post(url + CHAT, content=big)
            assert answer.status_code == 200 and answer.json()["object"] == "chat.completion"
        errors.wait_for(r"^toolwire-inspect: store: cannot write \(.*\); flows are kept in memory and retried$")
        freed_at = time.monotonic()
        for pid in family(proc.pid):
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        errors.wait_for(r"^toolwire-inspect: store: writing again; the flows kept in memory are stored$")
        for flow_id in (2, 3, 4):
            printed_at, _ = lines.wait_for(rf"^#{flow_id} POST {CHAT} 200 ")
            assert printed_at > freed_at  # printed once stored, not when forwarded
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert [line.split()[0] for line in lines.text()] == ["#1", "#2", "#3", "#4"]
    with Store(store_path) as store:
        assert [(r.id, r.state, r.status) for r in store.rows()] == [(i, "complete", 200) for i in range(1, 5)]


# -- a stdout nobody reads -----------------------------------------------------------------------

def test_a_stdout_nobody_reads_neither_stops_recording_nor_blocks_the_exit(mock, tmp_path):
    store_path = tmp_path / "flows.sqlite3"
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, 1031, 4096)  # F_SETPIPE_SZ: a pipe that fills after a few dozen lines
    try:
        proc, url, errors = start_record(store_path, mock.base_url, stdout=write_end)
    finally:
        os.close(write_end)
    count = 400  # more than the pipe and the console's queue hold together
    try:
        with httpx.Client(base_url=url) as client:
            for _ in range(count):
                assert client.post(CHAT, content=BODY).status_code == 200
        conn = read_only(store_path)
        wait_until(lambda: conn.execute("SELECT COUNT(*) FROM flows WHERE state = 'complete'").fetchone() == (count,),
                   timeout=30)
        conn.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    with os.fdopen(read_end, "rb") as pipe:
        printed = pipe.read().decode().splitlines()
    assert printed == [line for line in printed if re.fullmatch(r"#\d+ POST /v1/chat/completions 200 .*", line)]
    _, notice = errors.wait_for(r"flow lines were not printed")
    assert notice == f"toolwire-inspect: {count - len(printed)} flow lines were not printed (stdout was not read)"


# -- read-only commands --------------------------------------------------------------------------

def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_read_only_commands_refuse_a_foreign_sqlite_file_and_leave_it_as_it_was(tmp_path, capsys):
    path = tmp_path / "theirs.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('mine')")
    conn.commit()
    conn.close()
    before = digest(path)
    for argv in (["flows"], ["export", "1"], ["check", "--session"]):
        assert main([*argv, "--store", str(path)]) == 2
        assert capsys.readouterr().err == f"toolwire-inspect: {path} is not a toolwire-inspect flow store\n"
    assert digest(path) == before
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database at all, but long enough to have a header " * 4)
    assert main(["flows", "--store", str(notes)]) == 2
    assert capsys.readouterr().err == (f"toolwire-inspect: {notes} is not a toolwire-inspect flow store: "
                                       "file is not a database\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "theirs.db"]


def test_read_only_commands_work_on_a_read_only_store_and_change_nothing(recorded_store, capsys):
    path = recorded_store
    os.chmod(path, 0o444)
    os.chmod(path.parent, 0o555)
    try:
        before = digest(path)
        assert main(["flows", "--store", str(path), "--json"]) == 0
        assert [(row["id"], row["state"]) for row in orjson.loads(capsys.readouterr().out)] == [(1, "complete")]
        assert main(["export", "1", "--store", str(path)]) == 0
        assert orjson.loads(capsys.readouterr().out)["request"]["body"] == {"json": orjson.loads(BODY)}
        # The session has no MCP flow for the session rules to judge: it says so, having read the store.
        assert main(["check", "--session", "--store", str(path)]) == 2
        assert capsys.readouterr().err == ("toolwire-inspect: nothing checked: session 1 has no MCP or model flow the "
                                           "session rules read\n")
        assert digest(path) == before
        assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    finally:
        os.chmod(path.parent, 0o755)


@pytest.fixture
def recorded_store(rig, tmp_path):
    """A closed store file with one recorded flow, alone in its folder."""
    assert rig.client.post(CHAT, content=BODY).status_code == 200
    rig.events.completed()
    rig.stop()
    rig.store.close()
    folder = tmp_path / "ro"
    folder.mkdir()
    target = folder / rig.store.path.name
    rig.store.path.rename(target)
    return target


def test_an_id_asked_for_while_the_pool_is_topped_up_comes_from_the_new_pool_in_order(tmp_path):
    """The transaction that tops the pool up hands its ids out before it commits: an id asked for
    meanwhile is not borrowed past them (a flow begun then was numbered after the flows begun later,
    and the list, in id order, showed the demo's turns out of order)."""
    from inspector.store.writer import Writer

    path = tmp_path / "s.db"
    Store(path).close()  # the schema
    writer = Writer(path, first_free_id=1, analyse_apart=store_module.ANALYSE_APART)
    try:
        writer.call(lambda conn: None)  # the first transaction reserves the pool
        first = [writer.next_flow_id() for _ in range(ID_POOL)]
        during = writer.call(lambda conn: writer.next_flow_id())  # inside the transaction that tops it up
        after = writer.next_flow_id()
    finally:
        writer.stop()
    assert [*first, during, after] == list(range(1, ID_POOL + 3))
