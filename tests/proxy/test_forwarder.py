"""The forwarder relays bytes exactly, streams live, and records every flow, good or bad."""

from __future__ import annotations

import asyncio
import gzip
import socket
import threading
import time
from collections import Counter

import httpx
import orjson
import pytest

from inspector.flow import EDITED_REPLAY_NOTE, FIXED_REPLAY_NOTE, FlowState, Mode, ReplayKind
from inspector.mock import Canned, json_response, sse_response
from inspector.wire.dialects.openai_chat.mock import chat_stream
from inspector.proxy import Forwarder, ForwarderError
from inspector.proxy.forwarder import FLOW_ID_HEADER, REPLAY_AUTH_HEADER, REPLAY_HEADER, replay_marker
from inspector.redact import REDACTED
from inspector.proxy.options import Options

CHAT = "/v1/chat/completions"
BODY = b'{"model": "gpt-test",  "messages": [{"role": "user", "content": "hi"}]}'  # odd spacing on purpose


def test_json_passthrough_is_byte_exact_and_recorded(rig):
    canned = json_response({"id": "x", "object": "chat.completion", "choices": []}, headers=[("x-upstream", "1")])
    rig.mock.push(canned)
    response = rig.client.post(CHAT + "?api-version=1", content=BODY, headers={
        "content-type": "application/json", "authorization": "Bearer sk-live-123", "x-custom": "kept",
        "connection": "keep-alive, x-hop", "x-hop": "named by Connection", "te": "trailers",
    })
    assert response.status_code == 200
    assert response.content == canned.body
    assert response.headers["x-upstream"] == "1"
    (event,) = rig.events.completed()

    received = rig.mock.received[0]
    assert received.body == BODY
    assert received.path == CHAT and received.query == "api-version=1"
    assert received.header("host") == f"127.0.0.1:{rig.mock.port}"
    assert received.header("authorization") == "Bearer sk-live-123"
    assert received.header("x-custom") == "kept"
    for hop_by_hop in ("connection", "x-hop", "te"):
        assert received.header(hop_by_hop) is None
    assert received.header("content-length") == str(len(BODY))
    assert received.header("user-agent") == response.request.headers["user-agent"]

    flow = rig.store.get(event.flow.id)
    assert flow.request_body == BODY
    assert flow.upstream_request_body is None  # passthrough: what went upstream is the request
    assert flow.response_body == canned.body
    assert flow.status == 200 and flow.state is FlowState.COMPLETE and flow.mode is Mode.PASSTHROUGH
    assert flow.streamed is False and flow.chunks == []
    assert flow.query == "api-version=1"
    assert flow.upstream_url == f"{rig.mock.base_url}{CHAT}?api-version=1"
    assert ("authorization", REDACTED) in flow.request_headers
    assert 0 < flow.ttfb_ms <= flow.latency_ms
    row = event.row
    assert (row.dialect, row.model, row.status, row.state) == ("openai-chat", "gpt-test", 200, "complete")


def test_session_is_created_on_start(rig):
    (session,) = rig.store.sessions()
    assert (session.upstream, session.listen, session.mode) == (rig.mock.base_url, rig.url, "passthrough")
    assert rig.store.session_id == session.id


def test_stream_is_relayed_live_chunk_by_chunk(rig):
    release = threading.Event()
    events = chat_stream("one two three", pieces=3)
    canned = sse_response(events)
    canned.hold, canned.hold_after = release, 1
    rig.mock.push(canned)
    with rig.client.stream("POST", CHAT, content=b'{"model":"m","stream":true,"messages":[]}') as response:
        stream = response.iter_raw()
        first = next(stream)  # arrives while the upstream still holds the rest: nothing is buffered
        assert first == canned.chunks[0][1]
        release.set()
        rest = b"".join(stream)
    sent = b"".join(data for _, data in canned.chunks)
    assert first + rest == sent
    (event,) = rig.events.completed()
    flow = rig.store.get(event.flow.id)
    assert flow.streamed is True
    assert flow.response_body == sent
    assert b"".join(c.data for c in flow.chunks) == sent
    assert flow.chunks[0].data == canned.chunks[0][1]
    times = [c.t for c in flow.chunks]
    assert times == sorted(times)
    assert flow.ttfb_ms == pytest.approx(flow.chunks[0].t * 1000)


def test_gzip_response_is_relayed_compressed(rig):
    payload = orjson.dumps({"id": "x", "choices": []})
    packed = gzip.compress(payload, mtime=0)
    rig.mock.push(Canned(headers=[("content-type", "application/json"), ("content-encoding", "gzip")], body=packed))
    with rig.client.stream("POST", CHAT, content=BODY, headers={"accept-encoding": "gzip"}) as response:
        raw = b"".join(response.iter_raw())
    assert raw == packed
    (event,) = rig.events.completed()
    flow = rig.store.get(event.flow.id)
    assert flow.response_body == packed
    assert ("content-encoding", "gzip") in flow.response_headers
    assert rig.mock.received[0].header("accept-encoding") == "gzip"


def test_gzip_request_body_is_forwarded_as_is_and_still_analysed(rig):
    packed = gzip.compress(BODY, mtime=0)
    response = rig.client.post(CHAT, content=packed, headers={"content-encoding": "gzip",
                                                               "content-type": "application/json"})
    # The mock cannot read gzip, as most providers: its 400 comes back untouched.
    assert response.status_code == 400
    assert rig.mock.received[0].body == packed
    assert rig.mock.received[0].header("content-encoding") == "gzip"
    (event,) = rig.events.completed()
    assert (event.row.model, event.row.error) == ("gpt-test", None)


@pytest.mark.parametrize("body", [b"this is not json", b'{"model": "gpt-test", "messages": [{"role"'],
                         ids=["not-json", "truncated-json"])
def test_bad_json_body_is_forwarded_and_recorded_with_the_parse_error(rig, body):
    response = rig.client.post(CHAT, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert rig.mock.received[0].body == body
    (event,) = rig.events.completed()
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        reason = str(exc)
    assert event.row.error == f"request not valid JSON: {reason}"
    assert (event.row.state, event.row.status) == ("complete", 400)
    assert rig.client.post(CHAT, content=BODY).status_code == 200  # still serving


def test_wrong_content_type_is_passed_through(rig):
    response = rig.client.post(CHAT, content=BODY, headers={"content-type": "text/plain"})
    assert response.status_code == 200
    assert rig.mock.received[0].header("content-type") == "text/plain"
    (event,) = rig.events.completed()
    assert (event.row.model, event.row.error) == ("gpt-test", None)


def test_huge_body_is_refused_with_413_and_recorded(make_rig):
    rig = make_rig(max_body=1000)
    response = rig.client.post(CHAT, content=b"x" * 5000)
    assert response.status_code == 413
    message = "request body larger than 1000 bytes; not forwarded"
    assert response.json() == {"error": {"type": "toolwire_bad_request", "message": message, "code": 413}}
    (event,) = rig.events.completed()
    assert (event.row.state, event.row.error, event.row.status) == ("error", message, 413)
    assert rig.mock.received == []
    assert rig.client.post(CHAT, content=BODY).status_code == 200


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_upstream_gives_502_and_an_error_flow(store):
    port = _closed_port()
    upstream = f"http://127.0.0.1:{port}"
    with Forwarder(Options(upstream, port=0), store=store) as forwarder, httpx.Client(base_url=forwarder.base_url) as client:
        for _ in range(2):  # and it keeps serving
            response = client.post(CHAT, content=BODY)
            assert response.status_code == 502
            message = f"upstream unreachable: {upstream}: connection refused"
            assert response.json() == {"error": {"type": "toolwire_upstream_unreachable", "message": message,
                                                 "code": 502}}
        store.flush()
        rows = store.rows()
        assert [(r.state, r.status, r.error) for r in rows] == [("error", 502, message)] * 2
        assert store.get(rows[0].id).response_body == response.content


def test_upstream_timeout_before_answering_gives_504(make_rig):
    # The timeout bounds the connect too: 0.2 s was too short for a loopback connect on a busy CI machine.
    rig = make_rig(timeout=0.5)
    rig.mock.push(Canned(body=b"{}", delay=2.0))
    response = rig.client.post(CHAT, content=BODY)
    assert response.status_code == 504
    message = f"upstream sent nothing for 0.5 s ({rig.mock.base_url})"
    assert response.json()["error"]["message"] == message
    (event,) = rig.events.completed()
    assert (event.row.state, event.row.error) == ("error", message)


def test_upstream_silent_mid_stream_cuts_the_client_off(make_rig):
    rig = make_rig(timeout=0.2)
    canned = sse_response(["a", "b"])
    canned.chunks[1] = (1.0, canned.chunks[1][1])
    rig.mock.push(canned)
    with pytest.raises(httpx.RemoteProtocolError):
        with rig.client.stream("POST", CHAT, content=BODY) as response:
            b"".join(response.iter_raw())
    (event,) = rig.events.completed()
    assert (event.row.state, event.row.error) == ("error", "upstream went silent for 0.2 s after 1 chunks")
    assert rig.store.get(event.flow.id).response_body == b"data: a\n\n"


def test_client_disconnect_mid_stream_is_recorded_and_closes_the_upstream(rig):
    release = threading.Event()
    canned = sse_response(chat_stream("one two three four"))
    canned.hold, canned.hold_after = release, 1
    rig.mock.push(canned)
    try:
        with rig.client.stream("POST", CHAT, content=BODY) as response:
            assert next(response.iter_raw()) == canned.chunks[0][1]
        # Leaving the block closes the connection with the upstream still holding chunk 2.
        (event,) = rig.events.completed()
        assert (event.row.state, event.row.error) == ("error", "client disconnected after 1 chunks")
        assert rig.store.get(event.flow.id).response_body == canned.chunks[0][1]
        assert rig.mock.wait_answered(1)
        assert rig.mock.disconnects == 1
    finally:
        release.set()
    assert rig.client.post(CHAT, content=BODY).status_code == 200


def test_replay_marker_is_stripped_and_links_the_flow(rig):
    response = rig.client.post(CHAT, content=BODY, headers=replay_marker(41))
    (event,) = rig.events.completed()
    assert response.headers[FLOW_ID_HEADER] == str(event.flow.id)
    assert rig.mock.received[0].header(REPLAY_HEADER) is None
    assert rig.mock.received[0].header(REPLAY_AUTH_HEADER) is None
    assert event.row.replay_of == 41
    assert rig.store.get(event.flow.id).replay_of == 41
    assert (event.row.replay_fixed, event.row.replay_edited, rig.store.get(event.flow.id).notes) == (False, False, [])


@pytest.mark.parametrize(("kind", "note", "fixed", "edited"), [
    (ReplayKind.FIXED, FIXED_REPLAY_NOTE, True, False),
    (ReplayKind.EDITED, EDITED_REPLAY_NOTE, False, True),
])
def test_a_fixed_or_edited_replay_says_so_in_its_notes_and_row(rig, kind, note, fixed, edited):
    rig.client.post(CHAT, content=BODY, headers=replay_marker(41, kind=kind))
    (event,) = rig.events.completed()
    assert rig.mock.received[0].header(REPLAY_HEADER) is None
    assert (event.row.replay_of, event.row.replay_fixed, event.row.replay_edited) == (41, fixed, edited)
    assert rig.store.get(event.flow.id).notes == [note]
    assert [(r.id, r.replay_of, r.replay_fixed, r.replay_edited) for r in rig.store.rows()] == [
        (event.flow.id, 41, fixed, edited)]


def test_a_forged_fixed_mark_is_ignored(rig):
    # The signature covers the mark: a valid replay of #41 cannot be relabelled as fixed.
    (_, tag), = [h for h in replay_marker(41) if h[0] == REPLAY_AUTH_HEADER]
    rig.client.post(CHAT, content=BODY, headers=[(REPLAY_HEADER, "41 fixed"), (REPLAY_AUTH_HEADER, tag)])
    (event,) = rig.events.completed()
    assert (event.row.replay_of, event.row.replay_fixed) == (None, False)
    assert rig.store.get(event.flow.id).notes == [
        f"ignored {REPLAY_HEADER}: '41 fixed' was not sent by this process's replay"]


def test_credentials_are_kept_in_memory_only(rig):
    rig.client.post("/v1beta/models/gemini-2.5-flash:generateContent?key=AIza-secret&alt=json", content=b"{}",
                    headers={"x-api-key": "sk-ant-1"})
    (event,) = rig.events.completed()
    assert rig.forwarder.credentials(event.flow.id) == [("x-api-key", "sk-ant-1"), ("x-goog-api-key", "AIza-secret")]
    flow = rig.store.get(event.flow.id)
    assert flow.query == f"key={REDACTED}&alt=json"
    assert rig.mock.received[0].query == "key=AIza-secret&alt=json"
    assert rig.forwarder.credentials(event.flow.id + 1) == []


def test_started_event_comes_first_and_pending_row_is_written(rig):
    release = threading.Event()
    canned = sse_response(["a", "b"])
    canned.hold, canned.hold_after = release, 1
    rig.mock.push(canned)
    with rig.client.stream("POST", CHAT, content=BODY) as response:
        stream = response.iter_raw()
        next(stream)
        rig.store.flush()
        (row,) = rig.store.rows()
        # The head reaches the pending row with the stream's progress (within PROGRESS_INTERVAL), which a
        # flush does not force: read until it has (it failed twice under -n 2 reading status 200 at once).
        deadline = time.monotonic() + 10
        while row.status is None and time.monotonic() < deadline:
            rig.store.flush()
            (row,) = rig.store.rows()
        assert (row.state, row.status) == ("pending", 200)
        assert [e.kind for e in rig.events.all] == ["started"]
        release.set()
        b"".join(stream)
    rig.events.completed()
    assert [e.kind for e in rig.events.all] == ["started", "completed"]


def test_parallel_requests_are_all_recorded(rig):
    with httpx.Client(base_url=rig.url) as client:
        threads = [threading.Thread(target=client.post, args=(CHAT,), kwargs={"content": BODY}) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    completed = rig.events.completed(8)
    assert sorted(e.flow.id for e in completed) == list(range(1, 9))
    assert rig.store.count() == 8


def test_non_loopback_host_needs_allow_remote(store):
    with pytest.raises(ForwarderError) as raised:
        Forwarder(Options("http://127.0.0.1:9", host="0.0.0.0", port=0), store=store)
    assert str(raised.value) == (
        "refusing to listen on 0.0.0.0: it is reachable from other machines and the forwarder relays your API "
        "keys; pass --allow-remote (allow_remote=True) if you mean it"
    )
    with Forwarder(Options("http://127.0.0.1:9", host="0.0.0.0", port=0, allow_remote=True), store=store) as forwarder:
        assert forwarder.base_url == f"http://0.0.0.0:{forwarder.port}"


def test_bad_upstream_url_is_refused(store):
    with pytest.raises(ForwarderError) as raised:
        Forwarder(Options("api.openai.com"), store=store)
    assert str(raised.value) == "--upstream must be an http(s) URL such as https://api.openai.com; got 'api.openai.com'"


def test_upstream_with_a_query_is_refused(store):
    with pytest.raises(ForwarderError) as raised:
        Forwarder(Options("https://api.example.com/v1?api-version=1"), store=store)
    assert str(raised.value) == (
        "--upstream is a base URL; the client's own path and query are appended to it: drop '?api-version=1' from "
        "'https://api.example.com/v1?api-version=1'")


def test_busy_port_is_a_clear_error(store):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ForwarderError) as raised:
            Forwarder(Options("http://127.0.0.1:9", port=port), store=store).start()
    assert str(raised.value) == f"cannot listen on 127.0.0.1:{port}: Address already in use"


def test_client_gone_before_the_upstream_answers_is_recorded(rig):
    rig.mock.push(Canned(body=b"{}", delay=0.5))
    with pytest.raises(httpx.ReadTimeout):
        rig.client.post(CHAT, content=BODY, timeout=httpx.Timeout(5, read=0.1))
    (event,) = rig.events.completed()
    assert (event.row.state, event.row.error, event.row.status) == (
        "error", "client disconnected before the upstream answered", None)


def test_a_relayed_request_costs_the_loop_no_task_of_the_forwarder_s_own(rig):
    """Each task is a loop turn and a wake-up on the forwarder's one thread: a request is relayed by
    the task the server gave it, not by an upstream task, a task writing the body upstream or a
    task waiting for the client to hang up beside it."""
    loop = rig.forwarder._server.loop
    created: list[str] = []

    def factory(loop, coro, **kwargs):
        created.append(getattr(coro, "__qualname__", type(coro).__qualname__))
        return asyncio.Task(coro, loop=loop, **kwargs)

    asyncio.run_coroutine_threadsafe(_set_task_factory(loop, factory), loop).result(timeout=5)
    for _ in range(5):
        assert rig.client.post(CHAT, content=BODY).status_code == 200
    rig.events.completed(5)
    asyncio.run_coroutine_threadsafe(_set_task_factory(loop, None), loop).result(timeout=5)
    assert Counter(created[:-1]) == {"RequestResponseCycle.run_asgi": 5}


async def _set_task_factory(loop, factory) -> None:
    loop.set_task_factory(factory)


def test_upstream_dropping_the_connection_mid_stream_cuts_the_client_off(rig):
    canned = sse_response(["a", "b", "c"])
    canned.cut_after = 1
    rig.mock.push(canned)
    with pytest.raises(httpx.RemoteProtocolError):
        with rig.client.stream("POST", CHAT, content=BODY) as response:
            b"".join(response.iter_raw())
    (event,) = rig.events.completed()
    assert (event.row.state, event.row.error) == (
        "error", "upstream broke off after 1 chunks: the response body was cut short")
    assert rig.client.post(CHAT, content=BODY).status_code == 200


def test_client_gone_while_sending_the_body_is_recorded(rig):
    with socket.create_connection(("127.0.0.1", rig.forwarder.port)) as raw:
        raw.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n" + b'{"model": "m"')
    (event,) = rig.events.completed()
    assert (event.row.state, event.row.error, event.row.status) == (
        "error", "client disconnected before the request body was complete (13 bytes read)", None)
    assert rig.store.get(event.flow.id).request_body == b'{"model": "m"'
    assert rig.mock.received == []


def test_stopping_mid_stream_records_the_flow_as_cut(rig):
    release = threading.Event()
    canned = sse_response(["a", "b"])
    canned.hold, canned.hold_after = release, 1
    rig.mock.push(canned)
    try:
        with rig.client.stream("POST", CHAT, content=BODY) as response:
            stream = response.iter_raw()  # held: a dropped iterator closes the connection
            assert next(stream) == b"data: a\n\n"
            rig.forwarder.stop()
        (event,) = rig.events.completed()
        assert (event.row.state, event.row.error) == ("error", "forwarder stopped after 1 chunks")
    finally:
        release.set()


def test_stopping_while_the_upstream_thinks_records_the_flow_as_cut(rig):
    rig.mock.push(Canned(body=b"{}", delay=1.0))
    outcome: list[httpx.Response] = []

    def call() -> None:
        outcome.append(rig.client.post(CHAT, content=BODY))

    caller = threading.Thread(target=call)
    caller.start()
    rig.events.started()
    rig.forwarder.stop()
    caller.join()
    (event,) = rig.events.completed()
    message = "forwarder stopped before the upstream answered"
    assert (event.row.state, event.row.error, event.row.status) == ("error", message, 503)
    (response,) = outcome
    assert response.status_code == 503
    assert response.json() == {"error": {"type": "toolwire_forwarder_stopped", "message": message, "code": 503}}


def test_no_header_is_added_on_the_way_up(rig):
    with socket.create_connection(("127.0.0.1", rig.forwarder.port)) as raw:
        raw.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nX-Only: 1\r\nContent-Length: %d\r\n\r\n%s"
                    % (len(BODY), BODY))
        assert raw.recv(65536).startswith(b"HTTP/1.1 200 OK\r\n")
    rig.events.completed()
    assert rig.mock.received[0].headers == [
        ("host", f"127.0.0.1:{rig.mock.port}"), ("x-only", "1"), ("content-length", str(len(BODY)))]


def test_get_without_a_body_goes_up_without_one(rig):
    response = rig.client.get("/v1/models", headers={"accept": "application/json"})
    assert response.status_code == 404  # the mock has no model list; its answer is relayed as is
    (event,) = rig.events.completed()
    received = rig.mock.received[0]
    assert (received.method, received.body, received.header("content-length")) == ("GET", b"", None)
    assert (event.row.method, event.row.status, event.row.state) == ("GET", 404, "complete")


def test_empty_post_keeps_its_zero_length(rig):
    rig.client.post(CHAT, content=b"")
    rig.events.completed()
    assert rig.mock.received[0].header("content-length") == "0"


def test_a_big_body_passes_whole_and_is_analysed_apart(rig):
    history = [{"role": "user", "content": f"message {n} " + "x" * 2000} for n in range(1000)]
    big = orjson.dumps({"model": "gpt-big", "messages": history})
    assert len(big) > 2_000_000
    response = rig.client.post(CHAT, content=big, headers={"content-type": "application/json"})
    assert response.status_code == 200
    (event,) = rig.events.completed()
    assert rig.mock.received[0].body == big
    assert rig.store.get(event.flow.id).request_body == big
    assert (event.row.model, event.row.dialect, event.row.state) == ("gpt-big", "openai-chat", "complete")


def test_translate_spec_is_checked_at_construction(store):
    with pytest.raises(ForwarderError) as raised:
        Forwarder(Options("http://127.0.0.1:9", translate="chat:responses"), store=store)
    assert str(raised.value) == ("--translate wants SRC:DST with dialects from openai-chat, openai-responses, "
                                 "anthropic, gemini, mcp, bedrock; got 'chat:responses'")
    with pytest.raises(ForwarderError) as raised:
        Forwarder(Options("http://127.0.0.1:9", translate="anthropic:gemini"), store=store)
    assert str(raised.value).startswith("no bridge from anthropic to gemini; offered: ")
    forwarder = Forwarder(Options("http://127.0.0.1:9", translate="openai-chat:openai-responses"), store=store)
    assert (forwarder.mode, forwarder.translate) == (Mode.TRANSLATE, "openai-chat:openai-responses")


def test_a_request_that_cannot_be_translated_gets_400_and_an_error_flow(make_rig):
    rig = make_rig(translate="openai-chat:openai-responses")
    response = rig.client.post(CHAT, content=b"not json")
    assert response.status_code == 400
    (event,) = rig.events.completed()
    assert response.json()["error"]["message"] == event.row.error
    assert event.row.error.startswith("cannot translate a request body that is not JSON: ")
    assert (event.row.state, event.row.mode) == ("error", "translate")
    assert rig.mock.received == []


def test_translated_request_keeps_no_secret_of_the_source_provider_in_its_query(make_rig):
    rig = make_rig(translate="gemini:openai-chat")
    path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    body = orjson.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    with rig.client.stream("POST", f"{path}?alt=sse&key=AIza-source-secret&trace=1", content=body) as response:
        assert response.status_code == 200
        b"".join(response.iter_raw())
    (event,) = rig.events.completed()
    received = rig.mock.received[0]
    assert (received.path, received.query) == ("/v1/chat/completions", "trace=1")
    assert orjson.loads(received.body)["stream"] is True  # the bridge saw alt=sse
    assert rig.store.get(event.flow.id).upstream_url == f"{rig.mock.base_url}/v1/chat/completions?trace=1"
    assert event.row.state == "complete"


@pytest.mark.parametrize(("spec", "path", "auth", "expected"), [
    ("gemini:openai-chat", "/v1beta/models/g:generateContent", ("x-goog-api-key", "K1"),
     [("Authorization", "Bearer K1")]),
    ("anthropic:openai-chat", "/v1/messages", ("x-api-key", "K2"), [("Authorization", "Bearer K2")]),
    ("openai-chat:anthropic", "/v1/chat/completions", ("authorization", "Bearer K3"),
     [("x-api-key", "K3"), ("anthropic-version", "2023-06-01")]),
    ("openai-chat:openai-responses", "/v1/chat/completions", ("api-key", "K4"), [("api-key", "K4")]),
], ids=["gemini-to-chat", "anthropic-to-chat", "chat-to-anthropic", "azure-chat-to-responses"])
def test_translate_moves_the_key_to_the_target_providers_header(make_rig, spec, path, auth, expected):
    rig = make_rig(translate=spec)
    payloads = {"gemini": {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
                "anthropic": {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]},
                "openai-chat": {"model": "m", "messages": [{"role": "user", "content": "hi"}]}}
    body = orjson.dumps(payloads[spec.split(":")[0]])
    rig.client.post(path, content=body, headers=[auth, ("anthropic-beta", "x"), ("x-trace", "t")]
                    if spec.startswith("anthropic") else [auth, ("x-trace", "t")])
    rig.events.completed()
    sent = [(k, v) for k, v in rig.mock.received[0].headers
            if k in ("authorization", "x-api-key", "x-goog-api-key", "api-key", "anthropic-version", "anthropic-beta")]
    assert sent == [(k.lower(), v) for k, v in expected]
    assert rig.mock.received[0].header("x-trace") == "t"


@pytest.mark.parametrize("port", [70000, 65536, -1])
def test_a_library_caller_listening_on_a_port_out_of_range_gets_a_clear_error(store, port):
    # getaddrinfo takes the port modulo 65536: 70000 would listen on 4464 without a word.
    with pytest.raises(ForwarderError) as raised:
        Forwarder(Options("http://127.0.0.1:9", port=port), store=store).start()
    assert str(raised.value) == f"cannot listen on port {port}: ports go from 0 to 65535"
