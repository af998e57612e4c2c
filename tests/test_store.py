"""The store: SQLite WAL, one writer thread, flows readable across sessions, secrets never written."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import orjson
import pytest

from inspector.flow import Chunk, Flow, FlowState, Mode
from inspector.redact import REDACTED
from inspector.store import SCHEMA_VERSION, analysis_worker, schema, Store, StoreError, pack_chunks, unpack_chunks

BODY = orjson.dumps({"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}],
                     "tools": [{"type": "function", "function": {"name": "a", "parameters": {"type": "object", "properties": {}}}}]})


def make_flow(store: Store, **fields) -> Flow:
    values = dict(id=store.next_flow_id(), session_id=store.session_id or 0, started_at=1000.0, method="POST",
                  path="/v1/chat/completions", request_body=BODY)
    values.update(fields)
    return Flow(**values)


def finish(flow: Flow, body: bytes = b'{"choices": []}', **fields) -> Flow:
    flow.status = 200
    flow.response_body = body
    flow.latency_ms = 12.5
    flow.ttfb_ms = 3.25
    for name, value in fields.items():
        setattr(flow, name, value)
    flow.state = fields.get("state", FlowState.COMPLETE)
    return flow


def test_schema_is_versioned_and_wal(tmp_path):
    with Store(tmp_path / "s.db"):
        pass
    conn = sqlite3.connect(tmp_path / "s.db")
    assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    conn.close()


def test_version_1_store_is_migrated(tmp_path):
    conn = sqlite3.connect(tmp_path / "s.db")
    conn.executescript(schema.SCHEMA_1 + "PRAGMA user_version = 1;")
    conn.execute("INSERT INTO flows (id, session_id, started_at, method, path, query, request_headers, request_body, "
                 "mode, upstream_url, upstream_request_headers, response_headers, response_body, streamed, chunks, "
                 "state, notes) VALUES (7, 1, 0, 'POST', '/x', '', '[]', '', 'passthrough', '', '[]', '[]', '', 0, '', "
                 "'complete', '[]')")
    conn.commit()
    conn.close()
    with Store(tmp_path / "s.db") as store:
        assert store.next_flow_id() == 8
        assert [r.id for r in store.rows()] == [7]
    conn = sqlite3.connect(tmp_path / "s.db")
    assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    conn.close()


def test_two_stores_on_one_file_never_share_a_flow_id(tmp_path):
    with Store(tmp_path / "s.db") as tui, Store(tmp_path / "s.db") as cli:
        ids = [tui.next_flow_id(), cli.next_flow_id(), tui.next_flow_id(), cli.next_flow_id()]
        assert len(set(ids)) == 4
        tui.save(finish(make_flow(tui, id=ids[0])))
        cli.save(finish(make_flow(cli, id=ids[1])))
        assert [r.id for r in tui.rows()] == sorted(ids[:2])


def test_unknown_schema_version_is_refused(tmp_path):
    conn = sqlite3.connect(tmp_path / "s.db")
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(StoreError) as raised:
        Store(tmp_path / "s.db")
    assert str(raised.value) == f"{tmp_path / 's.db'} has schema version 99; this build knows {SCHEMA_VERSION}"


def test_unreadable_path_is_a_store_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError):
        Store(tmp_path / "file" / "flows.sqlite3")


def test_pending_row_then_completed_row_with_summary(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.new_session("https://api.example.com", "http://127.0.0.1:8787")
        flow = make_flow(store)
        store.save(flow)
        (row,) = store.rows()
        # In progress, the row already says what the request says: its dialect and model (issue 22).
        assert (row.state, row.status, row.dialect, row.model, row.latency_ms) == (
            "pending", None, "openai-chat", "gpt-test", None)
        store.save(finish(flow))
        (row,) = store.rows()
        assert (row.id, row.session_id, row.method, row.path, row.state, row.status) == (
            1, 1, "POST", "/v1/chat/completions", "complete", 200)
        assert (row.dialect, row.model, row.tools, row.tool_calls, row.latency_ms, row.ttfb_ms) == (
            "openai-chat", "gpt-test", 1, 0, 12.5, 3.25)
        assert store.get(1) == flow


def test_every_flow_field_round_trips(tmp_path):
    with Store(tmp_path / "s.db") as store:
        flow = finish(
            make_flow(store, query="a=1", request_headers=[("content-type", "application/json"), ("x-a", "1"),
                                                            ("x-a", "2")],
                      mode=Mode.TRANSLATE, translate="openai-chat:openai-responses",
                      upstream_url="https://u.example/v1/responses", upstream_request_body=b'{"input": []}',
                      upstream_request_headers=[("content-type", "application/json")], replay_of=7,
                      notes=["dropped /x: why"]),
            body=b"data: 1\n\ndata: 2\n\n", upstream_response_body=b"data: x\n\n", streamed=True,
            chunks=[Chunk(0.001, b"data: 1\n\n"), Chunk(0.002, b"data: 2\n\n")],
            response_headers=[("content-type", "text/event-stream")], state=FlowState.ERROR, error="boom",
        )
        store.save(flow)
        assert store.get(flow.id) == flow


def test_secret_headers_and_query_are_redacted_on_save(tmp_path):
    with Store(tmp_path / "s.db") as store:
        flow = finish(make_flow(store, query="key=AIza-top-secret&alt=sse",
                                request_headers=[("Authorization", "Bearer sk-top-secret")],
                                upstream_url="https://u.example/v1?key=AIza-top-secret"),
                      response_headers=[("set-cookie", "session=top-secret")])
        store.save(flow)
        saved = store.get(flow.id)
        assert saved.request_headers == [("Authorization", REDACTED)]
        assert saved.query == f"key={REDACTED}&alt=sse"
        assert saved.upstream_url == f"https://u.example/v1?key={REDACTED}"
        assert saved.response_headers == [("set-cookie", REDACTED)]
    for suffix in ("", "-wal", "-shm"):
        path = tmp_path / f"s.db{suffix}"
        if path.exists():
            assert b"top-secret" not in path.read_bytes()


def test_flow_ids_continue_after_reopen_and_sessions_stay_readable(tmp_path):
    with Store(tmp_path / "s.db") as store:
        first = store.new_session("https://a.example", "http://127.0.0.1:1")
        store.save(finish(make_flow(store)))
        store.save(finish(make_flow(store)))
    with Store(tmp_path / "s.db") as store:
        second = store.new_session("https://b.example", "http://127.0.0.1:2", "translate")
        assert store.next_flow_id() == 3
        assert [(s.id, s.upstream, s.listen, s.mode) for s in store.sessions()] == [
            (first, "https://a.example", "http://127.0.0.1:1", "passthrough"),
            (second, "https://b.example", "http://127.0.0.1:2", "translate")]
        assert [(r.id, r.session_id) for r in store.rows()] == [(1, first), (2, first)]
        assert store.session(second).upstream == "https://b.example"
        assert store.session(99) is None


def test_rows_window_filter_and_count(tmp_path):
    with Store(tmp_path / "s.db") as store:
        for path in ["/v1/chat/completions", "/v1/responses", "/v1/messages", "/v1/responses"]:
            store.submit(finish(make_flow(store, path=path)))
        store.flush()
        assert [r.id for r in store.rows()] == [1, 2, 3, 4]
        assert [r.id for r in store.rows(limit=2, offset=1)] == [2, 3]
        assert [r.id for r in store.rows(text="responses")] == [2, 4]
        assert store.count() == 4 and store.count(text="responses") == 2
        assert store.count(text="100%_") == 0  # LIKE wildcards are literal
        assert [r.id for r in store.rows(text="#3")] == [3]


def test_on_saved_runs_after_commit_with_the_row(tmp_path):
    with Store(tmp_path / "s.db") as store:
        seen = []
        flow = finish(make_flow(store))
        store.submit(flow, lambda row: seen.append((row.id, row.state, store.count())))
        store.flush()
        assert seen == [(1, "complete", 1)]


def test_parse_error_shows_in_the_row(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.save(finish(make_flow(store, request_body=b"not json")))
        (row,) = store.rows()
        assert (row.state, row.dialect) == ("complete", "openai-chat")
        try:
            orjson.loads(b"not json")
        except orjson.JSONDecodeError as exc:
            assert row.error == f"request not valid JSON: {exc}"


@pytest.mark.parametrize("chunks", [
    [Chunk(0.5, b"ab"), Chunk(1.25, b""), Chunk(2.0, b"cde")],
    [],
])
def test_chunks_pack_as_an_index_into_the_body(chunks):
    body = b"".join(c.data for c in chunks)
    packed = pack_chunks(chunks, body)
    assert len(packed) == (0 if not chunks else 1 + 4 + 12 * len(chunks))
    assert unpack_chunks(packed, body) == chunks


def test_chunks_that_are_not_the_body_keep_their_bytes():
    chunks = [Chunk(0.5, b"xy"), Chunk(1.0, b"z")]
    packed = pack_chunks(chunks, b"something else")
    assert unpack_chunks(packed, b"something else") == chunks


def test_closed_store_refuses_work(tmp_path):
    store = Store(tmp_path / "s.db")
    store.close()
    store.close()  # idempotent
    with pytest.raises(StoreError):
        store.new_session("https://a.example", "x")


def test_big_flows_are_analysed_in_a_helper_process(tmp_path):
    messages = [{"role": "user", "content": "x" * 1000}] * 300
    body = orjson.dumps({"model": "gpt-big", "messages": messages})
    with Store(tmp_path / "s.db", analyse_apart=len(body) - 1) as store:
        store.save(finish(make_flow(store, request_body=body)))
        store.save(finish(make_flow(store)))  # a small one, in the writer thread
        assert [(r.dialect, r.model, r.state) for r in store.rows()] == [
            ("openai-chat", "gpt-big", "complete"), ("openai-chat", "gpt-test", "complete")]


BIG_BODY = orjson.dumps({"model": "gpt-big", "messages": [{"role": "user", "content": "x" * 1000}] * 300})
APART = len(BIG_BODY) + len(b'{"choices": []}')  # a finished BIG_BODY flow is just big enough


def test_the_analysis_worker_runs_at_a_lower_priority_and_only_for_big_flows(tmp_path):
    with Store(tmp_path / "s.db", analyse_apart=APART) as store:
        store.save(finish(make_flow(store, request_body=BIG_BODY.replace(b"x", b"", 1))))  # one byte short
        assert multiprocessing.active_children() == []
        store.save(finish(make_flow(store, request_body=BIG_BODY)))
        [worker] = multiprocessing.active_children()
        assert os.getpriority(os.PRIO_PROCESS, worker.pid) == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 10)
        assert [(r.id, r.dialect, r.model, r.state) for r in store.rows()] == [
            (1, "openai-chat", "gpt-big", "complete"), (2, "openai-chat", "gpt-big", "complete")]
    assert multiprocessing.active_children() == []  # close() ends the worker


def test_a_killed_analysis_worker_is_survived_and_its_flow_analysed_in_the_writer(tmp_path, capsys):
    with Store(tmp_path / "s.db", analyse_apart=APART) as store:
        store.save(finish(make_flow(store, request_body=BIG_BODY)))
        [worker] = multiprocessing.active_children()
        os.kill(worker.pid, signal.SIGKILL)
        store.save(finish(make_flow(store, request_body=BIG_BODY), status=201))
        store.save(finish(make_flow(store, request_body=BIG_BODY), status=202))  # in the writer from now on
        assert multiprocessing.active_children() == []
        assert [(r.id, r.dialect, r.model, r.status, r.state, r.errors) for r in store.rows()] == [
            (1, "openai-chat", "gpt-big", 200, "complete", 1), (2, "openai-chat", "gpt-big", 201, "complete", 1),
            (3, "openai-chat", "gpt-big", 202, "complete", 1)]  # `choices` empty: one error
        assert store.last_error is None
    assert capsys.readouterr().err == ("toolwire-inspect: analysis worker process died; "
                                       "analysing in the writer thread from now on\n")


@pytest.mark.parametrize("failure", [OSError(24, "Too many open files"), RuntimeError("bootstrapping")])
def test_an_analysis_worker_that_cannot_start_leaves_the_analysis_to_the_writer(tmp_path, capsys, monkeypatch,
                                                                                failure):
    def refuse(*args, **kwargs):
        raise failure

    monkeypatch.setattr(analysis_worker, "ProcessPoolExecutor", refuse)
    with Store(tmp_path / "s.db", analyse_apart=APART) as store:
        store.save(finish(make_flow(store, request_body=BIG_BODY)))
        store.save(finish(make_flow(store, request_body=BIG_BODY), status=201))
        assert [(r.id, r.dialect, r.model, r.status, r.state, r.errors) for r in store.rows()] == [
            (1, "openai-chat", "gpt-big", 200, "complete", 1), (2, "openai-chat", "gpt-big", 201, "complete", 1)]
        assert store.last_error is None
    assert capsys.readouterr().err == (f"toolwire-inspect: analysis worker process failed to start ({failure}); "
                                       "analysing in the writer thread from now on\n")


def test_the_analysis_worker_ends_with_its_parent_even_one_killed_outright(tmp_path):
    recorder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import multiprocessing, time
        from inspector.flow import Flow, FlowState
        from inspector.store import Store
        store = Store({str(tmp_path / "s.db")!r}, analyse_apart=1)
        store.save(Flow(id=store.next_flow_id(), session_id=0, started_at=1.0, method="POST",
                        path="/v1/chat/completions", request_body=b'{{"model": "m", "messages": []}}',
                        state=FlowState.COMPLETE))
        print(*(child.pid for child in multiprocessing.active_children()), flush=True)
        time.sleep(60)
    """)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        worker = int(recorder.stdout.readline())
    finally:
        recorder.kill()
        recorder.wait()

    def alive(pid: int) -> bool:  # a zombie nobody reaps has ended too
        try:
            with open(f"/proc/{pid}/stat") as stat:
                return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            return False

    deadline = time.monotonic() + 10
    while alive(worker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(worker)


def test_a_flow_that_cannot_be_written_is_reported_and_the_writer_keeps_going(tmp_path, capsys):
    with Store(tmp_path / "s.db") as store:
        broken = finish(make_flow(store, started_at=object()))
        store.save(broken)
        store.save(finish(make_flow(store)))
        assert [r.id for r in store.rows()] == [broken.id + 1]
        assert store.last_error.startswith(f"flow #{broken.id}: ")
    assert capsys.readouterr().err == f"toolwire-inspect: store: {store.last_error}\n"
