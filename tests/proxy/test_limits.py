"""What one client, one upstream answer or one compressed body may hold of the forwarder: bounded
heads, deadlines for slow clients, a cap on connections, bounded recorded bodies."""

from __future__ import annotations

import gzip
import os
import re
import socket
import threading
import time

import brotli
import orjson
import pytest
import zstandard

from inspector.analysis import MAX_DECODED
from inspector.mock import Canned, sse_response
from inspector.wire.canned import Call
from inspector.wire.dialects.openai_chat.mock import chat_completion
from inspector.proxy.server import ClientLimits

from .conftest import Rig

CHAT = "/v1/chat/completions"
BODY = b'{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}'


def _connect(rig: Rig) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", rig.forwarder.port), timeout=10)
    return sock


def _read_until_closed(sock: socket.socket) -> bytes:
    """Everything the forwarder sends until it closes the connection (a reset counts as closed)."""
    parts = []
    try:
        while data := sock.recv(65536):
            parts.append(data)
    except ConnectionResetError:
        pass
    return b"".join(parts)


@pytest.mark.parametrize("sent", [b"", b"POST /v1/chat/compl", b"POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\n"])
def test_a_client_stalling_before_its_head_is_complete_is_cut(make_rig, sent):
    rig = make_rig(limits=ClientLimits(client_timeout=0.5))
    with _connect(rig) as sock:
        started = time.monotonic()
        sock.sendall(sent)
        assert _read_until_closed(sock) == b""
        assert 0.4 <= time.monotonic() - started < 3.0
    assert rig.client.post(CHAT, content=BODY).status_code == 200
    rig.events.completed()
    assert rig.store.count() == 1  # no request head, nothing to record


def test_a_kept_alive_connection_that_stalls_in_its_next_head_is_cut(make_rig):
    rig = make_rig(limits=ClientLimits(client_timeout=0.5, keep_alive=30))
    with _connect(rig) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\ncontent-length: %d\r\n\r\n%s"
                     % (len(BODY), BODY))
        answer = b""
        while b"Hello from the mock upstream." not in answer:
            answer += sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
        sock.sendall(b"POST /v1/chat")
        started = time.monotonic()
        assert _read_until_closed(sock) == b""
        assert 0.4 <= time.monotonic() - started < 3.0


def test_a_client_stalling_mid_body_gets_408_and_an_error_flow(make_rig):
    rig = make_rig(limits=ClientLimits(client_timeout=0.5))
    with _connect(rig) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\ncontent-length: 100\r\n\r\n" + BODY[:10])
        answer = _read_until_closed(sock)
    message = "client sent no body bytes for 0.5 s (10 bytes read); not forwarded"
    body = b'{"error":{"type":"toolwire_bad_request","message":"%s","code":408}}' % message.encode()
    # Closed after the answer: what is left of the body must not pass for the next request.
    assert answer == (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                      b"connection: close\r\n\r\n%s" % (len(body), body))
    (event,) = rig.events.completed()
    assert (event.row.state, event.row.status, event.row.error) == ("error", 408, message)
    assert rig.store.get(event.flow.id).request_body == BODY[:10]
    assert rig.mock.received == []


@pytest.mark.parametrize("shape", ["one huge header", "many headers", "huge request line"])
def test_an_oversized_head_gets_431_and_does_not_stall_other_clients(make_rig, shape):
    rig = make_rig(limits=ClientLimits(max_head=64 * 1024))
    head = {
        "one huge header": b"POST /v1/chat/completions HTTP/1.1\r\nx-big: " + b"a" * (8 << 20) + b"\r\n",
        "many headers": b"POST /v1/chat/completions HTTP/1.1\r\n" + b"x-h: 0123456789\r\n" * 600_000,
        "huge request line": b"GET /v1/" + b"a" * (8 << 20) + b" HTTP/1.1\r\n",
    }[shape]
    with _connect(rig) as sock:
        def send() -> None:
            try:
                sock.sendall(head)
            except OSError:
                pass  # cut off mid-send, as it should be

        sender = threading.Thread(target=send)
        sender.start()
        started = time.monotonic()
        assert rig.client.post(CHAT, content=BODY).status_code == 200
        assert time.monotonic() - started < 1.0
        answer = _read_until_closed(sock)
        sender.join()
    message = b"request head larger than 65536 bytes"
    assert answer == (b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
                      b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(message), message))


def test_a_head_just_under_the_limit_is_served(make_rig):
    rig = make_rig(limits=ClientLimits(max_head=64 * 1024))
    response = rig.client.post(CHAT, content=BODY, headers={"x-big": "a" * 60_000})
    assert response.status_code == 200
    assert rig.mock.received[0].header("x-big") == "a" * 60_000


def test_connections_beyond_the_cap_are_refused_and_the_others_served(make_rig):
    rig = make_rig(limits=ClientLimits(max_connections=2))
    with _connect(rig) as first, _connect(rig) as second, _connect(rig) as third:
        assert _read_until_closed(third) == b""
        for sock in (first, second):
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\ncontent-length: %d\r\n\r\n%s"
                         % (len(BODY), BODY))
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 OK\r\n")


CALLS = orjson.dumps(chat_completion(None, [Call("a", "{}", "c1"), Call("b", "{}", "c2")]))


@pytest.mark.parametrize("encoding", ["gzip", "br", "zstd"])
def test_a_compressed_response_is_relayed_as_sent_and_analysed_decoded(rig, encoding):
    packed = {"gzip": lambda: gzip.compress(CALLS, mtime=0), "br": lambda: brotli.compress(CALLS),
              "zstd": lambda: zstandard.ZstdCompressor().compress(CALLS)}[encoding]()
    rig.mock.push(Canned(headers=[("content-type", "application/json"), ("content-encoding", encoding)], body=packed))
    with rig.client.stream("POST", CHAT, content=BODY, headers={"accept-encoding": encoding}) as response:
        assert b"".join(response.iter_raw()) == packed
    (event,) = rig.events.completed()
    assert (event.row.state, event.row.tool_calls, event.row.error) == ("complete", 2, None)
    assert rig.store.get(event.flow.id).response_body == packed


def test_a_gzip_bomb_is_relayed_as_sent_and_analysis_says_it_is_too_large(rig):
    bomb = gzip.compress(b"\0" * (MAX_DECODED + (16 << 20)), compresslevel=1, mtime=0)
    rig.mock.push(Canned(headers=[("content-type", "application/json"), ("content-encoding", "gzip")], body=bomb))
    with rig.client.stream("POST", CHAT, content=BODY, headers={"accept-encoding": "gzip"}) as response:
        assert b"".join(response.iter_raw()) == bomb
    (event,) = rig.events.completed()
    message = f"response body too large to analyse after decompression (over {MAX_DECODED} bytes)"
    assert (event.row.state, event.row.error) == ("complete", message)
    assert rig.store.get(event.flow.id).response_body == bomb


def test_a_client_that_stops_reading_is_cut_and_its_flow_recorded(make_rig):
    rig = make_rig(limits=ClientLimits(client_timeout=0.5))
    canned = sse_response(["x" * 65536] * 2000)  # 128 MiB: far more than the socket buffers hold
    rig.mock.push(canned)
    with _connect(rig) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\ncontent-length: %d\r\n\r\n%s"
                     % (len(BODY), BODY))
        (event,) = rig.events.completed()  # while the client reads nothing at all
    assert event.row.state == "error"
    assert re.fullmatch(r"client stopped reading for 0\.5 s after \d+ chunks", event.row.error)
    assert rig.mock.wait_answered(1)
    assert rig.mock.disconnects == 1
    assert rig.client.post(CHAT, content=BODY).status_code == 200


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors through /proc")
def test_many_slow_clients_are_all_cut_and_leave_no_descriptor_behind(make_rig):
    rig = make_rig(limits=ClientLimits(client_timeout=0.5))
    assert rig.client.post(CHAT, content=BODY).status_code == 200
    before = _open_descriptors()
    sockets = [_connect(rig) for _ in range(300)]
    try:
        for n, sock in enumerate(sockets):
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\n"[: n % 30])
        assert [_read_until_closed(sock) for sock in sockets] == [b""] * 300
    finally:
        for sock in sockets:
            sock.close()
    assert rig.client.post(CHAT, content=BODY).status_code == 200
    deadline = time.monotonic() + 5
    while _open_descriptors() > before and time.monotonic() < deadline:
        threading.Event().wait(0.05)  # polling the descriptor table with a deadline
    assert _open_descriptors() == before
