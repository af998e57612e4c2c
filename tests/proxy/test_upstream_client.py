"""The forwarder's own HTTP/1.1 client to its upstream (proxy/upstream.py), against a raw-socket
upstream that writes each answer byte for byte and counts its connections: keep-alive, interim
answers, HEAD, bodies that end with the connection, and the ways an upstream's answer goes wrong."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest
import trustme

from inspector.mock import MockUpstream
from inspector.proxy.forwarder import Forwarder
from inspector.proxy.options import Options
from inspector.proxy.upstream import MAX_HEAD

CHAT = "/v1/chat/completions"
CLOSE = b""  # as an answer: close the connection without a byte


class ThenClose(bytes):
    """An answer after which the upstream closes the connection."""


@dataclass
class RawUpstream:
    """Answers each request, on whatever connection it comes, with the next of `answers`; keeps the
    connection for the next request unless the answer was CLOSE or ThenClose, or the client closed it."""

    listener: socket.socket
    answers: list[bytes] = field(default_factory=list)
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0

    @property
    def url(self) -> str:
        host, port = self.listener.getsockname()[:2]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            pending = b""
            while True:
                while b"\r\n\r\n" not in pending:
                    data = conn.recv(65536)
                    if not data:
                        return
                    pending += data
                head, _, pending = pending.partition(b"\r\n\r\n")
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                while len(pending) < length:
                    pending += conn.recv(65536)
                self.requests.append(head + b"\r\n\r\n" + pending[:length])
                pending = pending[length:]
                answer = self.answers.pop(0)
                if answer == CLOSE:
                    return
                conn.sendall(answer)
                if isinstance(answer, ThenClose):
                    return


def serving(listener: socket.socket) -> Iterator[RawUpstream]:
    upstream = RawUpstream(listener)
    thread = threading.Thread(target=upstream.serve, daemon=True)
    thread.start()
    yield upstream
    listener.shutdown(socket.SHUT_RDWR)
    listener.close()
    thread.join(5)


@pytest.fixture
def raw() -> Iterator[RawUpstream]:
    yield from serving(socket.create_server(("127.0.0.1", 0)))


@pytest.fixture
def raw_v6() -> Iterator[RawUpstream]:
    try:
        listener = socket.create_server(("::1", 0), family=socket.AF_INET6)
    except OSError:
        pytest.skip("this machine has no IPv6 loopback")
    yield from serving(listener)


def posted_in_turn(store, raw: RawUpstream, count: int) -> tuple[list[bytes], int]:
    """POST `count` requests one after another on one client connection: the bodies the client got,
    and how many connections the upstream saw."""
    with Forwarder(Options(raw.url, port=0), store=store) as forwarder, httpx.Client(timeout=10) as client:
        bodies = [client.post(forwarder.base_url + CHAT, content=b"{}").content for _ in range(count)]
    return bodies, raw.connections


def flows(store) -> list[tuple]:
    store.flush()
    return [(flow.method, flow.state.value, flow.status, flow.error, flow.response_body)
            for flow in sorted((store.get(row.id) for row in store.rows()), key=lambda flow: flow.id)]


def test_requests_in_turn_share_one_kept_alive_connection(store, raw):
    raw.answers += [b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nok %d" % n for n in range(3)]
    assert posted_in_turn(store, raw, 3) == ([b"ok 0", b"ok 1", b"ok 2"], 1)
    assert flows(store) == [("POST", "complete", 200, None, b"ok %d" % n) for n in range(3)]


def test_an_answer_saying_close_is_not_used_again(store, raw):
    raw.answers += [b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}",
                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]"]
    assert posted_in_turn(store, raw, 2) == ([b"{}", b"[]"], 2)


@pytest.mark.parametrize(("method", "second"), [
    ("GET", (200, b"again")),  # may be sent twice: it goes again, on a new connection
    ("PUT", (200, b"again")),
    ("POST", (502, b"upstream failed before answering: the upstream closed the connection")),  # may not
])
def test_a_kept_alive_connection_the_upstream_closes_under_a_request(store, raw, method, second):
    raw.answers += [b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst", CLOSE,
                    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nagain"]
    with Forwarder(Options(raw.url, port=0), store=store) as forwarder, httpx.Client(timeout=10) as client:
        first = client.request(method, forwarder.base_url + CHAT, content=b"{}")
        then = client.request(method, forwarder.base_url + CHAT, content=b"{}")
    answer = then.content if then.status_code == 200 else then.json()["error"]["message"].encode()
    assert ((first.status_code, first.content), (then.status_code, answer)) == ((200, b"first"), second)
    assert (len(raw.requests), raw.connections) == ((3, 2) if second[0] == 200 else (2, 1))


def test_the_request_goes_up_with_host_first_and_the_length_last(store, raw):
    raw.answers.append(b"HTTP/1.1 204 No Content\r\n\r\n")
    with Forwarder(Options(raw.url + "/base", port=0), store=store) as forwarder:
        with socket.create_connection(("127.0.0.1", forwarder.port)) as client:
            client.sendall(b"PUT /v1/x?a=1&b=%20 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-One: 1\r\nX-One: 2\r\nContent-Length: 3\r\n"
                           b"Connection: keep-alive\r\n\r\nabc")
            assert client.recv(65536).startswith(b"HTTP/1.1 204 No Content\r\n")
    port = raw.listener.getsockname()[1]
    assert raw.requests == [b"PUT /base/v1/x?a=1&b=%20 HTTP/1.1\r\nHost: 127.0.0.1:" + str(port).encode() +
                            b"\r\nx-one: 1\r\nx-one: 2\r\nContent-Length: 3\r\n\r\nabc"]  # as uvicorn read them
    assert flows(store) == [("PUT", "complete", 204, None, b"")]


def test_an_ipv6_upstream_gets_its_host_in_brackets(store, raw_v6):
    raw_v6.answers.append(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
    with Forwarder(Options(raw_v6.url, port=0), store=store) as forwarder:
        response = httpx.post(forwarder.base_url + CHAT, content=b"{}", timeout=10)
    assert (response.status_code, raw_v6.requests[0].split(b"\r\n")[:2]) == (
        200, [b"POST /v1/chat/completions HTTP/1.1", b"Host: [::1]:" + str(raw_v6.listener.getsockname()[1]).encode()])


@pytest.mark.parametrize("interim", [b"HTTP/1.1 100 Continue\r\n\r\n",
                                     b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"])
def test_an_interim_answer_is_skipped_for_the_one_that_follows(store, raw, interim):
    raw.answers.append(interim + b"HTTP/1.1 201 Created\r\nX-Real: yes\r\nContent-Length: 2\r\n\r\n{}")
    with Forwarder(Options(raw.url, port=0), store=store) as forwarder:
        response = httpx.post(forwarder.base_url + CHAT, content=b"{}", timeout=10)
    assert (response.status_code, response.headers.get("x-real"), response.headers.get("link"), response.content) == (
        201, "yes", None, b"{}")
    assert flows(store) == [("POST", "complete", 201, None, b"{}")]


def test_a_head_answer_has_a_length_and_no_body(store, raw):
    raw.answers += [b"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"]
    with Forwarder(Options(raw.url, port=0), store=store) as forwarder, httpx.Client(timeout=10) as client:
        head = client.head(forwarder.base_url + "/v1/models")
        after = client.post(forwarder.base_url + CHAT, content=b"{}")
    assert (head.status_code, head.content, after.content) == (200, b"", b"{}")
    assert flows(store) == [("HEAD", "complete", 200, None, b""), ("POST", "complete", 200, None, b"{}")]


def test_a_body_without_a_length_ends_with_the_connection(store, raw):
    raw.answers.append(ThenClose(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\ndata: 2\n\n"))
    with Forwarder(Options(raw.url, port=0), store=store) as forwarder:
        with socket.create_connection(("127.0.0.1", forwarder.port)) as client:
            client.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}")
            received = b""
            while not received.endswith(b"0\r\n\r\n"):  # uvicorn frames it in chunks, ended properly
                received += client.recv(65536)
    assert received.split(b"\r\n\r\n", 1)[1] == b"12\r\ndata: 1\n\ndata: 2\n\n\r\n0\r\n\r\n"
    assert flows(store) == [("POST", "complete", 200, None, b"data: 1\n\ndata: 2\n\n")]


@pytest.mark.parametrize(("answer", "error"), ids=["closed", "huge-head", "endless-head", "length-and-chunked", "upgrade",
                                                      "not-http"],
                         argvalues=[
    (CLOSE, "upstream failed before answering: the upstream closed the connection"),
    (b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * MAX_HEAD + b"\r\n\r\n",
     f"upstream failed before answering: response head larger than {MAX_HEAD} bytes"),
    (b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * MAX_HEAD,  # no end, on a connection kept open
     f"upstream failed before answering: response head larger than {MAX_HEAD} bytes"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
     "upstream failed before answering: malformed response head: Transfer-Encoding can't be present with "
     "Content-Length"),
    (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: upgrade\r\n\r\n",
     "upstream failed before answering: the upstream switched protocols (101) on an HTTP request"),
    (b"SSH-2.0-OpenSSH_9.6\r\n", "upstream failed before answering: malformed response head: Expected HTTP/, RTSP/ or ICE/"),
])
def test_an_answer_that_is_not_one_gets_a_502_and_an_error_flow(store, raw, answer, error):
    raw.answers.append(answer)
    with Forwarder(Options(raw.url, port=0), store=store) as forwarder:
        response = httpx.post(forwarder.base_url + CHAT, content=b"{}", timeout=10)
    assert (response.status_code, response.json()["error"]["message"]) == (502, error)
    assert flows(store) == [("POST", "error", 502, error, response.content)]


def test_a_chunked_body_that_breaks_its_framing_cuts_the_client_off(store, raw):
    raw.answers.append(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\nzz\r\n")
    with Forwarder(Options(raw.url, port=0), store=store) as forwarder:
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.post(forwarder.base_url + CHAT, content=b"{}", timeout=10)
    assert flows(store) == [
        ("POST", "error", 200, "upstream broke off after 1 chunks: malformed response body: Invalid character in "
                                "chunk size", b"{}")]


def test_a_second_answer_to_one_request_spoils_the_connection_not_the_next_request(store, raw):
    raw.answers += [b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray",
                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]"]
    assert posted_in_turn(store, raw, 2) == ([b"{}", b"[]"], 2)
    assert flows(store) == [("POST", "complete", 200, None, b"{}"), ("POST", "complete", 200, None, b"[]")]


def test_a_large_body_is_relayed_whole_through_the_reads_paused_and_resumed(store, raw):
    body = bytes(range(256)) * 16384  # 4 MiB: the client reads it in small pieces, so the forwarder pauses its reads
    raw.answers.append(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    with Forwarder(Options(raw.url, port=0), store=store) as forwarder:
        with httpx.stream("POST", forwarder.base_url + CHAT, content=b"{}", timeout=10) as response:
            received = b"".join(response.iter_raw(1024))
    assert received == body
    ((method, state, status, error, _),) = flows(store)
    assert (method, state, status, error) == ("POST", "complete", 200, None)


@pytest.fixture(scope="module")
def untrusted_tls(tmp_path_factory):
    """A certificate for loopback signed by a CA nobody here trusts."""
    path = tmp_path_factory.mktemp("untrusted") / "chain.pem"
    trustme.CA().issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(path)
    return str(path)


def test_an_upstream_whose_certificate_is_not_trusted_is_unreachable_saying_so(store, untrusted_tls):
    with MockUpstream(tls=(untrusted_tls, untrusted_tls)) as upstream:
        with Forwarder(Options(upstream.base_url, port=0), store=store) as forwarder:
            response = httpx.post(forwarder.base_url + CHAT, content=b"{}", timeout=10)
        error = (f"upstream unreachable: {upstream.base_url}: its TLS certificate is not trusted "
                 "(unable to get local issuer certificate)")
    assert (response.status_code, response.json()["error"]["message"]) == (502, error)
    assert flows(store) == [("POST", "error", 502, error, response.content)]
