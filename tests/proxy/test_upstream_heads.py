"""An upstream whose response head is not HTTP (a control byte or a bare CR or LF in a header value, a
name that is not a token), or that the HTTP layer cannot send on (a status outside 100-599), gets the
client a 502 saying why and a flow in an error state; before, uvicorn raised, the client got a closed
connection and the flow stayed pending. A raw-socket upstream writes
the head byte for byte: no HTTP library would produce these."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import httpx
import pytest

from inspector.proxy.forwarder import Forwarder
from inspector.proxy.options import Options

CHAT = "/v1/chat/completions"


@pytest.fixture
def raw_upstream() -> Iterator[tuple[str, list[bytes]]]:
    """An upstream that answers each request with the next head of `heads` and a 2-byte body."""
    heads: list[bytes] = []
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                request = b""
                while b"\r\n\r\n" not in request:
                    request += conn.recv(65536)
                conn.sendall(heads.pop(0) + b"\r\nContent-Length: 2\r\n\r\n{}")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}", heads
    listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() (a close alone leaves it blocked)
    listener.close()
    thread.join(5)
    assert not thread.is_alive()


def relayed(store, upstream: str, heads: list[bytes], head: bytes) -> tuple[httpx.Response, tuple]:
    heads.append(head)
    with Forwarder(Options(upstream, port=0), store=store) as forwarder:
        response = httpx.post(forwarder.base_url + CHAT, content=b"{}", timeout=10)
    store.flush()
    (row,) = store.rows()
    flow = store.get(row.id)
    return response, (flow.state, flow.status, flow.error, flow.response_body == response.content)


@pytest.mark.parametrize("status", [999, 600, 99, 0])
def test_a_status_outside_100_to_599_gets_the_client_a_502_and_an_error_flow(store, raw_upstream, status):
    upstream, heads = raw_upstream
    response, flow = relayed(store, upstream, heads, b"HTTP/1.1 %03d Odd" % status)
    message = f"upstream sent a response the forwarder cannot relay: status {status}, outside 100-599"
    assert (response.status_code, response.json()["error"]["message"]) == (502, message)
    assert flow == ("error", 502, message, True)


@pytest.mark.parametrize(("header", "refusal"), [
    (b"X-Bad: a\x01b", "Invalid header value char"), (b"X-Bad: a\x7fb", "Invalid header value char"),
    (b"X-Bad: \x1b[31mred", "Invalid header value char"), (b"X-Bad: a\x08b", "Invalid header value char"),
    (b"X-Bad: a\x1fb", "Invalid header value char"), (b"X-Bad: a\x00b", "Invalid header value char"),
    (b"X-Bad: a\rb", "Missing expected LF after header value"),
    (b"X-Bad: a\nb", "Missing expected CR after header value"),
    (b"X-B@d: v", "Invalid header token"), (b"X Bad: v", "Invalid header token"),
])
def test_a_head_the_upstream_client_refuses_gets_the_client_a_502_and_an_error_flow(store, raw_upstream, header,
                                                                                   refusal):
    upstream, heads = raw_upstream
    response, flow = relayed(store, upstream, heads, b"HTTP/1.1 200 OK\r\nX-Fine: 1\r\n" + header)
    message = f"upstream failed before answering: malformed response head: {refusal}"
    assert (response.status_code, response.json()) == (
        502, {"error": {"type": "toolwire_upstream_error", "message": message, "code": 502}})
    assert flow == ("error", 502, message, True)


@pytest.mark.parametrize("header", [b"X-Odd: caf\xc3\xa9", b"X-Odd: a\tb", b"X-Odd: \xff\x80", b"X-Odd:"])
def test_bytes_the_http_layer_allows_are_relayed_unchanged(store, raw_upstream, header):
    upstream, heads = raw_upstream
    response, flow = relayed(store, upstream, heads, b"HTTP/1.1 200 OK\r\n" + header)
    value = header.split(b":", 1)[1].strip()
    assert (response.status_code, response.content, response.headers.raw[0]) == (200, b"{}", (b"x-odd", value))
    assert flow == ("complete", 200, None, True)
