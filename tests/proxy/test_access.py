"""The front door: only origin-form targets reach the upstream, only loopback (or allowed) Host
names and no browser Origin get in, a token guards a forwarder listening beyond loopback, and
only this process's own replays are linked as replays."""

from __future__ import annotations

import posixpath
import queue
import re
import signal
import socket
import threading
import time

from urllib.parse import unquote

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import examples
from inspector.cli import main
from inspector.flow import Flow, FlowState
from inspector.mock import MockUpstream, json_response
from inspector.wire.dialects.openai_chat.mock import chat_completion
from inspector.proxy import FLOW_ID_HEADER, REPLAY_HEADER, Forwarder, ForwarderError
from inspector.proxy.access import _NOT_A_PATH, target_problem
from inspector.redact import REDACTED
from inspector.replay import ReplayError, replay
from inspector.store import Store
from inspector.proxy.options import Options

from .conftest import Events, Rig
from .test_cli import start_command

CHAT = "/v1/chat/completions"
BODY = b'{"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]}'
KEY = "sk-ant-must-stay-home"


class Answer:
    def __init__(self, raw: bytes) -> None:
        head, _, self.body = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split()[1])
        self.headers = {k.lower(): v for k, _, v in (line.partition(": ") for line in lines[1:])}

    def json(self) -> dict:
        return orjson.loads(self.body)


def send_raw(port: int, head: str, body: bytes = b"") -> Answer:
    """One request written byte for byte (what httpx would refuse to send); the whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode("latin-1") + b"\r\n\r\n" + body)
        chunks = []
        while data := sock.recv(65536):
            chunks.append(data)
    return Answer(b"".join(chunks))


def request(port: int, target: str, *, method: str = "POST", host: str | None = "localhost", headers=(),
            body: bytes = BODY) -> Answer:
    lines = [f"{method} {target} HTTP/1.1", "Connection: close", f"x-api-key: {KEY}",
             f"Content-Length: {len(body)}"]
    if host is not None:
        lines.insert(1, f"Host: {host}")
    lines += [f"{k}: {v}" for k, v in headers]
    return send_raw(port, "\r\n".join(lines), body)


@pytest.fixture
def elsewhere():
    """A second upstream on another port: no request, and so no key, may ever reach it."""
    with MockUpstream() as upstream:
        yield upstream


# -- 1. only origin-form targets, and the upstream URL is built from parts -----------------------

def escapes(port: int) -> list[tuple[str, str]]:
    """(method, target) pairs that must never leave the upstream's origin or its base path."""
    return [
        ("POST", f"*@127.0.0.1:{port}/v1/messages"),
        ("POST", f"*@127.0.0.1:{port}"),
        ("OPTIONS", "*"),
        ("POST", "*foo"),
        ("POST", f"http://127.0.0.1:{port}/v1/messages"),
        ("POST", f"HTTP://127.0.0.1:{port}/v1/messages"),
        ("POST", f"//127.0.0.1:{port}/v1/messages"),
        ("POST", f"/%2F127.0.0.1:{port}/v1/messages"),
        ("POST", f"/%2f%2f127.0.0.1:{port}/v1/messages"),
        ("POST", f"/\\127.0.0.1:{port}/v1/messages"),
        ("POST", "/v1/../../v1/messages"),
        ("POST", "/v1/%2e%2e/%2E%2E/v1/messages"),
        ("POST", "/v1/.%2e/messages"),
        ("POST", "/v1/./messages"),
        ("POST", "/v1/x%2F..%2F..%2Fmessages"),
        ("POST", "/v1/x%5C..%5Cmessages"),
        ("POST", "/v1/%252e%252e/%252E%252E/v1/messages"),
        ("POST", "/%252F127.0.0.1/v1/messages"),
        ("POST", "/v1/messages%00"),
        ("POST", "/v1/messages%0d%0aHost:%20elsewhere"),
        ("POST", "/v1/messages#@elsewhere"),
        ("POST", "/v1/mes%zzsages"),
        ("POST", "/v1/messages?x=#frag"),
    ]


@pytest.mark.parametrize("base", ["", "/base"])
def test_no_escape_attempt_reaches_another_host_and_each_is_a_recorded_400(mock, store, elsewhere, base):
    events = Events()
    attempts = escapes(elsewhere.port)
    with Forwarder(Options(mock.base_url + base, port=0), store=store, on_event=events) as forwarder:
        for method, target in attempts:
            answer = request(forwarder.port, target, method=method)
            assert (answer.status, answer.json()["error"]["type"]) == (400, "toolwire_bad_target"), target
            assert FLOW_ID_HEADER not in answer.headers
        completed = events.completed(len(attempts))
    assert elsewhere.received == []
    assert mock.received == []
    flows = [store.get(event.flow.id) for event in completed]
    assert [(f.method, f.path + (f"?{f.query}" if f.query else ""), f.status, f.state, f.upstream_url)
            for f in flows] == [(method, target, 400, FlowState.ERROR, "") for method, target in attempts]
    assert {f.error.split(":")[0] for f in flows} == {"not forwarded"}
    assert store.count() == len(attempts)


def test_the_escape_quoted_in_the_issue_gets_a_clear_message(rig, elsewhere):
    answer = request(rig.forwarder.port, f"*@127.0.0.1:{elsewhere.port}/v1/messages")
    assert answer.json() == {"error": {
        "type": "toolwire_bad_target", "code": 400,
        "message": f"not forwarded: request target '*@127.0.0.1:{elsewhere.port}/v1/messages' is not a path; "
                   "only /path?query targets are forwarded to the upstream (plain-HTTP proxying is not served: "
                   "set the client's base URL to the forwarder, or HTTPS_PROXY for https:// URLs)"}}


def test_what_the_http_parser_refuses_reaches_nobody(rig, elsewhere):
    """uvicorn answers these 400 before any app runs: nothing is forwarded and nothing recorded."""
    for method, target in (("POST", f"@127.0.0.1:{elsewhere.port}/x"), ("POST", f"\\\\127.0.0.1:{elsewhere.port}/x"),
                           ("POST", "/a\x01b"), ("POST", "/\xe4"), ("POST", "/a b"), ("POST", "?x=1"),
                           ("GET", f"127.0.0.1:{elsewhere.port}")):
        assert request(rig.forwarder.port, target, method=method).status == 400, target
    # Proxy mode answers CONNECT, but opens no tunnel to a loopback address not allowed by name.
    assert request(rig.forwarder.port, f"127.0.0.1:{elsewhere.port}", method="CONNECT").status == 403
    # A bare CR ends nothing for httptools; a bare LF ends the request line, so the smuggled Host
    # makes two and the front door refuses it.
    for head, status in ((f"POST /a\rHost: 127.0.0.1:{elsewhere.port} HTTP/1.1\r\nHost: localhost", 400),
                         (f"POST /a\nHost: 127.0.0.1:{elsewhere.port} HTTP/1.1\r\nHost: localhost", 421)):
        assert send_raw(rig.forwarder.port, head).status == status
    assert (elsewhere.received, rig.mock.received, rig.store.count()) == ([], [], 0)


@pytest.mark.parametrize("base", ["", "/base"])
def test_near_misses_are_forwarded_unchanged_to_the_upstream(mock, store, elsewhere, base):
    targets = [
        (CHAT, CHAT, ""),
        ("/v1beta/models/gemini-2.5-flash:generateContent?key=AIza-1&alt=sse",
         "/v1beta/models/gemini-2.5-flash:generateContent", "key=AIza-1&alt=sse"),
        ("/v1/files/a%2Fb/content", "/v1/files/a%2Fb/content", ""),
        ("/v1/projects/p/publishers/anthropic/models/claude-3-5-sonnet@20240620:rawPredict",
         "/v1/projects/p/publishers/anthropic/models/claude-3-5-sonnet@20240620:rawPredict", ""),
        ("/v1/a.b/..c/...?next=http://x/@y", "/v1/a.b/..c/...", "next=http://x/@y"),
        ("/v1/models?filter[name]=a|b", "/v1/models", "filter[name]=a|b"),
    ]
    with Forwarder(Options(mock.base_url + base, port=0), store=store) as forwarder:
        for target, _, _ in targets:
            assert request(forwarder.port, target, host=f"localhost:{forwarder.port}").status in (200, 404), target
    assert elsewhere.received == []
    assert [(r.path, r.query, r.header("host"), r.header("x-api-key")) for r in mock.received] == [
        (base + path, query, f"127.0.0.1:{mock.port}", KEY) for _, path, query in targets]


def test_a_translated_target_is_checked_too(make_rig, elsewhere):
    """The bridge builds Gemini's path from the body's model name: that must not escape either."""
    rig = make_rig(translate="openai-chat:gemini")
    body = orjson.dumps({"model": f"../../x/@127.0.0.1:{elsewhere.port}",
                         "messages": [{"role": "user", "content": "hi"}]})
    answer = request(rig.forwarder.port, CHAT, body=body)
    assert (answer.status, answer.json()["error"]["type"]) == (400, "toolwire_bad_target")
    (event,) = rig.events.completed()
    assert (event.row.status, event.row.state) == (400, "error")
    assert (elsewhere.received, rig.mock.received) == ([], [])


# -- 2. who may use it: Host, Origin, token -------------------------------------------------------

@pytest.mark.parametrize("host", ["localhost", "LocalHost:1", "127.0.0.1", "127.0.0.1:80", "127.9.8.7:8787",
                                  "[::1]", "[::1]:8787"])
def test_loopback_host_names_are_let_in(rig, host):
    rig.mock.push(json_response(chat_completion("ok")))
    assert request(rig.forwarder.port, CHAT, host=host).status == 200
    assert [r.path for r in rig.mock.received] == [CHAT]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8787", "localhost.evil.example",
                                  "127.0.0.1.nip.io", "localhost.", "0.0.0.0", "10.0.0.1",
                                  "[::1", "localhost:x", ""])
def test_other_host_names_are_refused_with_421_and_not_recorded(rig, host):
    answer = request(rig.forwarder.port, CHAT, host=host)
    assert answer.status == 421
    assert answer.json()["error"]["type"] == "toolwire_host_not_allowed"
    assert rig.mock.received == [] and rig.store.count() == 0
    assert rig.forwarder.access.refused == 1
    assert rig.forwarder.access.last_refusal == answer.json()["error"]["message"]


def test_host_refusal_says_how_to_allow_it(rig):
    answer = request(rig.forwarder.port, CHAT, host="evil.example:8787")
    assert answer.json() == {"error": {"type": "toolwire_host_not_allowed", "code": 421, "message":
        "refused: Host 'evil.example' is not allowed (a web page reaching this port through DNS rebinding "
        "sends its own name); only loopback names and those given with --allow-host NAME are answered"}}


def test_a_request_without_host_or_with_two_is_refused(rig):
    assert request(rig.forwarder.port, CHAT, host=None).status == 421
    assert request(rig.forwarder.port, CHAT, headers=[("Host", "evil.example")]).status == 421
    assert rig.forwarder.access.refused == 2
    assert (rig.mock.received, rig.store.count()) == ([], 0)


def test_allowed_host_names_are_let_in(make_rig):
    rig = make_rig(allow_hosts=["Inspector.LAN", "[fd00::1]", "fd00::2"])
    rig.mock.push(*[json_response(chat_completion("ok"))] * 3)
    for host in ("inspector.lan:8787", "[fd00::1]:8787", "[FD00::2]"):
        assert request(rig.forwarder.port, CHAT, host=host).status == 200, host
    assert request(rig.forwarder.port, CHAT, host="other.lan").status == 421
    assert request(rig.forwarder.port, CHAT, host="fd00::1").status == 421  # unbracketed: not a Host


@pytest.mark.parametrize("origin", ["http://evil.example", "http://localhost:3000", "null", "http://127.0.0.1"])
def test_any_browser_origin_is_refused_with_403_and_not_recorded(rig, origin):
    answer = request(rig.forwarder.port, CHAT, headers=[("Origin", origin)])
    assert answer.status == 403
    assert answer.json()["error"] == {"type": "toolwire_origin_not_allowed", "code": 403, "message":
        f"refused: requests from web pages (Origin {origin!r}) are not answered; "
        f"pass --allow-origin {origin} to allow that page"}
    assert (rig.mock.received, rig.store.count(), rig.forwarder.access.refused) == ([], 0, 1)


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
def test_a_request_a_browser_made_for_another_site_is_refused_even_without_origin(rig, site):
    answer = request(rig.forwarder.port, "/v1/models", method="GET", body=b"", headers=[("Sec-Fetch-Site", site)])
    assert (answer.status, answer.json()["error"]) == (403, {"type": "toolwire_origin_not_allowed", "code": 403,
        "message": f"refused: requests from web pages (Sec-Fetch-Site: {site}, no Origin) are not answered"})
    assert (rig.mock.received, rig.store.count(), rig.forwarder.access.refused) == ([], 0, 1)


def test_a_request_the_user_made_from_the_address_bar_is_let_in(rig):
    for site in ("none", "same-origin"):
        assert request(rig.forwarder.port, "/v1/models", method="GET", body=b"",
                       headers=[("Sec-Fetch-Site", site)]).status == 404
    assert [r.path for r in rig.mock.received] == ["/v1/models", "/v1/models"]


def test_an_allowed_origin_is_let_in(store):
    # The header goes upstream as the client sent it: the mock, as upstream, must allow it too.
    with MockUpstream(allow_origins=["http://localhost:3000"]) as mock:
        rig = Rig(mock, store, allow_origins=["http://localhost:3000/"])
        try:
            mock.push(json_response(chat_completion("ok")))
            assert request(rig.forwarder.port, CHAT, headers=[("Origin", "http://LOCALHOST:3000"),
                                                                ("Sec-Fetch-Site", "same-site")]).status == 200
            assert request(rig.forwarder.port, CHAT, headers=[("Origin", "http://localhost:3001")]).status == 403
            assert request(rig.forwarder.port, CHAT, headers=[("Origin", "http://localhost:3000"),
                                                                ("Origin", "http://evil.example")]).status == 403
        finally:
            rig.stop()
        assert [(r.path, r.header("origin")) for r in mock.received] == [(CHAT, "http://LOCALHOST:3000")]
        assert (rig.forwarder.access.refused, mock.access.refused) == (2, 0)


def test_no_token_on_loopback(rig):
    assert rig.forwarder.access.token is None
    assert rig.forwarder.client_url == rig.forwarder.base_url


@pytest.fixture
def remote(mock, store):
    """A forwarder listening on every interface: it needs its token."""
    rig = Rig(mock, store, host="0.0.0.0", allow_remote=True)
    yield rig
    rig.stop()


def test_beyond_loopback_a_token_is_required(remote):
    forwarder = remote.forwarder
    token = forwarder.access.token
    assert len(token) == 43  # secrets.token_urlsafe(32)
    assert forwarder.client_url == f"http://0.0.0.0:{forwarder.port}/t/{token}"
    missing = request(forwarder.port, CHAT)
    assert missing.status == 403
    assert missing.json()["error"] == {"type": "toolwire_token_required", "code": 403, "message":
        "refused: this server listens beyond loopback and needs its access token, as the "
        "x-toolwire-token header or as the /t/<token> prefix of the base URL it printed"}
    for wrong in ([("x-toolwire-token", token[:-1] + "x")], [("x-toolwire-token", "")],
                  [("x-toolwire-token", "\xe9" * 43)], [("x-toolwire-token", token), ("x-toolwire-token", "x")]):
        answer = request(forwarder.port, CHAT, headers=wrong)
        assert (answer.status, answer.json()["error"]["type"]) == (403, "toolwire_wrong_token"), wrong
    for target in (f"/t/{token[:-1]}x{CHAT}", f"/t/{CHAT}", f"/t{CHAT}", f"/T/{token}{CHAT}"):
        assert request(forwarder.port, target).status == 403, target
    assert (remote.mock.received, remote.store.count(), forwarder.access.refused) == ([], 0, 9)
    assert forwarder.access.last_refusal == missing.json()["error"]["message"]


def test_the_token_works_as_header_and_as_path_prefix_and_never_goes_up_or_to_disk(remote):
    forwarder = remote.forwarder
    token = forwarder.access.token
    for _ in range(2):
        remote.mock.push(json_response(chat_completion("ok")))
    assert request(forwarder.port, CHAT, headers=[("x-toolwire-token", token)]).status == 200
    assert request(forwarder.port, f"/t/{token}{CHAT}?a=1").status == 200
    first, second = remote.events.completed(2)
    assert [(r.path, r.query, r.header("x-toolwire-token")) for r in remote.mock.received] == [
        (CHAT, "", None), (CHAT, "a=1", None)]
    flows = [remote.store.get(e.flow.id) for e in (first, second)]
    assert [(f.path, f.query, f.upstream_url) for f in flows] == [
        (CHAT, "", remote.mock.base_url + CHAT), (CHAT, "a=1", remote.mock.base_url + CHAT + "?a=1")]
    assert ("x-toolwire-token", REDACTED) in flows[0].request_headers
    assert forwarder.credentials(first.flow.id) == [("x-api-key", KEY)]
    remote.stop()
    remote.store.close()
    on_disk = b"".join(p.read_bytes() for p in remote.store.path.parent.iterdir() if p.is_file())
    assert token.encode() not in on_disk


# -- 3. only our own replays are replays ---------------------------------------------------------

@pytest.mark.parametrize("headers", [
    [(REPLAY_HEADER, "41")],
    [(REPLAY_HEADER, "41"), ("x-toolwire-replay-auth", "0" * 64)],
    [(REPLAY_HEADER, "x")],
])
def test_a_client_cannot_mark_its_own_flow_as_a_replay(rig, headers):
    rig.mock.push(json_response(chat_completion("ok")))
    answer = request(rig.forwarder.port, CHAT, headers=headers)
    assert answer.status == 200 and FLOW_ID_HEADER not in answer.headers
    (event,) = rig.events.completed()
    flow = rig.store.get(event.flow.id)
    assert (flow.replay_of, event.row.replay_of) == (None, None)
    assert flow.notes == [f"ignored {REPLAY_HEADER}: {headers[0][1]!r} was not sent by this process's replay"]
    assert [(k, v) for k, v in rig.mock.received[0].headers if k.startswith("x-toolwire")] == []


def test_our_replay_is_linked_and_learns_the_new_id(rig):
    rig.mock.push(json_response(chat_completion("first")), json_response(chat_completion("again")))
    rig.client.post(CHAT, content=BODY, headers={"x-api-key": KEY})
    (first,) = rig.events.completed()
    original = rig.store.get(first.flow.id)
    new_id = replay(original, via=rig.forwarder, credentials=rig.forwarder.credentials(original.id))
    second = rig.store.get(rig.events.completed(2)[1].flow.id)
    assert (second.id, second.replay_of, second.notes) == (new_id, original.id, [])
    assert dict(second.request_headers)["x-toolwire-replay-auth"] == REDACTED
    assert [r.header("x-api-key") for r in rig.mock.received] == [KEY, KEY]
    assert [[k for k, _ in r.headers if k.startswith("x-toolwire")] for r in rig.mock.received] == [[], []]


def test_our_replay_gets_through_a_forwarder_that_needs_its_token(remote):
    remote.mock.push(json_response(chat_completion("first")), json_response(chat_completion("again")))
    request(remote.forwarder.port, f"/t/{remote.forwarder.access.token}{CHAT}")
    (first,) = remote.events.completed()
    new_id = replay(remote.store.get(first.flow.id), via=remote.forwarder,
                    credentials=remote.forwarder.credentials(first.flow.id))
    second = remote.events.completed(2)[1]
    assert (second.flow.id, second.row.replay_of) == (new_id, first.flow.id)
    assert [r.path for r in remote.mock.received] == [CHAT, CHAT]


# -- 4. replay re-checks the recorded target ------------------------------------------------------

def stored(**fields) -> Flow:
    return Flow(**{"id": 7, "session_id": 1, "started_at": 0.0, "method": "POST", "path": "/v1/messages",
                   "request_body": b"{}", "request_headers": [("x-api-key", REDACTED)], **fields})


def test_replay_refuses_a_recorded_target_that_is_not_a_path(rig, elsewhere):
    for target in (f"*@127.0.0.1:{elsewhere.port}/v1/messages", f"//127.0.0.1:{elsewhere.port}/v1/messages",
                   "/v1/../../x"):
        with pytest.raises(ReplayError) as caught:
            replay(stored(path=target), via=rig.forwarder, credentials=[("x-api-key", KEY)])
        assert str(caught.value).startswith(f"flow #7 is not replayed: request target {target!r} ")
    assert (elsewhere.received, rig.mock.received, rig.store.count()) == ([], [], 0)


def test_replay_refuses_a_flow_recorded_against_another_upstream(rig, elsewhere):
    flow = stored(upstream_url=f"{elsewhere.base_url}/v1/messages")
    with pytest.raises(ReplayError) as caught:
        replay(flow, via=rig.forwarder, credentials=[("x-api-key", KEY)])
    assert str(caught.value) == (
        f"flow #7 is not replayed: it went to {elsewhere.base_url}, not to this forwarder's upstream "
        f"{rig.mock.base_url}; its credentials are not sent anywhere else")
    smuggled = stored(upstream_url=f"{rig.mock.base_url}*@127.0.0.1:{elsewhere.port}/v1/messages")
    with pytest.raises(ReplayError):
        replay(smuggled, via=rig.forwarder, credentials=[("x-api-key", KEY)])
    assert (elsewhere.received, rig.mock.received, rig.store.count()) == ([], [], 0)


def test_replay_to_the_recorded_upstream_goes_ahead(rig):
    rig.mock.push(json_response(chat_completion("ok")))
    new_id = replay(stored(upstream_url=f"{rig.mock.base_url}/v1/messages"), via=rig.forwarder,
                    credentials=[("x-api-key", KEY)])
    assert rig.events.completed()[0].flow.id == new_id
    assert [(r.path, r.header("x-api-key")) for r in rig.mock.received] == [("/v1/messages", KEY)]


# -- the mock's front door --------------------------------------------------------------------------

def test_the_mock_has_the_same_front_door():
    with MockUpstream(host="0.0.0.0", allow_origins=["http://ok.example"]) as mock:
        token = mock.access.token
        assert mock.client_url == f"http://0.0.0.0:{mock.port}/t/{token}"
        assert request(mock.port, CHAT).status == 403
        assert request(mock.port, f"/t/{token}{CHAT}", host="evil.example").status == 421
        assert request(mock.port, f"/t/{token}{CHAT}", headers=[("Origin", "http://evil.example")]).status == 403
        assert request(mock.port, f"/t/{token}{CHAT}", headers=[("Origin", "http://ok.example")]).status == 200
        assert request(mock.port, CHAT, headers=[("x-toolwire-token", token)]).status == 200
        # The mock keeps requests as they came (that is how tests see what the forwarder sends).
        assert [(r.path, r.header("x-toolwire-token")) for r in mock.received] == [(CHAT, None), (CHAT, token)]
        assert mock.access.refused == 3
    with MockUpstream() as mock:
        assert mock.access.token is None and mock.client_url == mock.base_url
        assert request(mock.port, CHAT, host="evil.example").status == 421
        assert mock.received == []


# -- the commands ---------------------------------------------------------------------------------

class Lines:
    """The lines of a subprocess's pipe, read on a thread so a test can wait for one with a
    deadline (select() would miss lines already in the pipe object's buffer)."""

    def __init__(self, stream) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [self._lines.put(line) for line in stream], daemon=True).start()

    def find(self, marker: str, timeout: float = 10.0) -> str:
        """The next line holding `marker`."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                break
            if marker in line:
                return line.rstrip("\n")
        raise AssertionError(f"no {marker!r} within {timeout} s")


def test_record_beyond_loopback_prints_its_token_and_reports_refusals(mock, tmp_path):
    store_path = tmp_path / "flows.sqlite3"
    proc, url = start_command("record", "--upstream", mock.base_url, "--host", "0.0.0.0", "--allow-remote",
                              "--port", "0", "--allow-host", "inspector.lan", "--store", str(store_path),
                              marker="forwarding")
    stdout, stderr = Lines(proc.stdout), Lines(proc.stderr)
    try:
        port, token = re.fullmatch(r"http://0\.0\.0\.0:(\d+)/t/([\w-]{43})", url).groups()
        port = int(port)
        assert stderr.find("access token") == (
            f"access token {token}: clients send it as the x-toolwire-token header or keep the /t/<token> "
            "prefix of the URL above")
        mock.push(json_response(chat_completion("ok")))
        assert request(port, f"/t/{token}{CHAT}", host="inspector.lan:1").status == 200
        assert stdout.find("#1 ").startswith("#1 POST /v1/chat/completions 200 ")
        assert request(port, CHAT).status == 403
        assert stderr.find("refused") == (
            "toolwire-inspect: refused 1 request(s) so far; last: refused: this server listens beyond loopback "
            "and needs its access token, as the x-toolwire-token header or as the /t/<token> prefix of the "
            "base URL it printed")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert token.encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert [(r.path, r.header("x-toolwire-token")) for r in mock.received] == [(CHAT, None)]


def test_mock_command_beyond_loopback_prints_its_url_with_the_token():
    proc, url = start_command("mock", "--host", "0.0.0.0", "--port", "0", marker="mock upstream on")
    stderr = Lines(proc.stderr)
    try:
        port, token = re.fullmatch(r"http://0\.0\.0\.0:(\d+)/t/([\w-]{43})", url).groups()
        assert request(int(port), f"/t/{token}{CHAT}").status == 200
        assert request(int(port), CHAT).status == 403
        assert stderr.find("refused") == (
            "toolwire-inspect: refused 1 request(s) so far; last: refused: this server listens beyond loopback and "
            "needs its access token, as the x-toolwire-token header or as the /t/<token> prefix of the base URL it "
            "printed")
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0


def recorded_store(path, upstream: str, flow: Flow) -> None:
    with Store(path) as store:
        store.new_session(upstream, "http://127.0.0.1:8787")
        flow.session_id = store.session_id
        store.save(flow)


# Where a replay goes is the command line's (or the config's) to say, never the store's.
FROM_THE_STORE = ("flow #1 came through --upstream: pass --upstream URL to say where it goes now (a replay goes "
                  "where the command line or the config says, never where a store says)")


@pytest.mark.parametrize(("fields", "argv", "why"), [
    ({"path": "*@127.0.0.1:{port}/v1/messages"}, ["--upstream", "{upstream}", "--key-host", "127.0.0.1"],
     "flow #1 is not replayed: request target '*@127.0.0.1:{port}/v1/messages' " + _NOT_A_PATH),
    ({"upstream_url": "{upstream}*@127.0.0.1:{port}/v1/messages"}, [], FROM_THE_STORE),
    ({"upstream_url": "http://127.0.0.1:{port}/v1/messages"}, [], FROM_THE_STORE),
])
def test_replay_command_never_sends_the_environment_key_elsewhere(mock, elsewhere, tmp_path, capsys, monkeypatch,
                                                                  fields, argv, why):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    fields = {k: v.format(port=elsewhere.port, upstream=mock.base_url) for k, v in fields.items()}
    recorded_store(tmp_path / "s.db", mock.base_url, stored(id=1, state=FlowState.COMPLETE, status=200, **fields))
    argv = [arg.format(upstream=mock.base_url) for arg in argv]
    assert main(["replay", "1", "--store", str(tmp_path / "s.db"), *argv]) == 2  # nothing was sent
    assert capsys.readouterr().err == (
        f"toolwire-inspect: {why.format(port=elsewhere.port, upstream=mock.base_url)}\n")
    assert (mock.received, elsewhere.received) == ([], [])


def test_replay_command_to_an_upstream_named_on_the_command_line_goes_there(mock, elsewhere, tmp_path, capsys,
                                                                          monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    recorded_store(tmp_path / "s.db", mock.base_url,
                   stored(id=1, state=FlowState.COMPLETE, status=200, upstream_url=f"{mock.base_url}/v1/messages"))
    elsewhere.push(json_response({"ok": True}))
    argv = ["replay", "1", "--store", str(tmp_path / "s.db"), "--upstream", elsewhere.base_url]
    assert main(argv) == 2  # the key of api.anthropic.com goes to another host only when named
    assert capsys.readouterr().err == (
        "toolwire-inspect: flow #1 was sent with a key (x-api-key) and the store keeps none: ANTHROPIC_API_KEY goes "
        "only to api.anthropic.com, and this replay goes to 127.0.0.1 (--key-host 127.0.0.1 sends it there)\n")
    assert main([*argv, "--key-host", "127.0.0.1"]) == 0
    assert capsys.readouterr().out == "#2 replay of #1: 200 complete\n"
    assert [(r.path, r.header("x-api-key")) for r in elsewhere.received] == [("/v1/messages", KEY)]
    assert mock.received == []


# Characters that make URLs go elsewhere, and the ones around them.
_TRICKY = st.lists(st.sampled_from(list("/.%25eEfFcC@:\\?#*a ;=\x00\t") +
                                   ["%2e", "%2f", "%5c", "%2F", "%00", "%25", "//", ".."]), max_size=16).map("".join)


@pytest.fixture(scope="module")
def unstarted(tmp_path_factory):
    """A forwarder that is never started: the property only asks it for upstream URLs."""
    with Store(tmp_path_factory.mktemp("prop") / "flows.sqlite3") as flows:
        yield Forwarder(Options("https://user:pw@api.example:8443/base", port=0), store=flows)


@settings(max_examples=examples(400), deadline=None)
@given(path=_TRICKY, query=_TRICKY, slash=st.booleans())
def test_every_target_let_through_stays_below_the_upstreams_base_path(unstarted, path, query, slash):
    """What target_problem lets pass reaches the upstream's own origin, under its base path even
    after the upstream percent-decodes and normalises it."""
    path = "/" + path if slash else path
    if target_problem(path, query) is not None:
        return
    url = unstarted._upstream_url(path, query)
    # The userinfo travels as an Authorization header (see test_secrets), never in the authority.
    assert (url.scheme, url.raw_authority, url.raw_query_string) == ("https", "api.example:8443", query)
    assert url.raw_path == "/base" + path
    twice = unquote(unquote(url.raw_path))
    for decoded in (url.raw_path, unquote(url.raw_path), twice):
        normalised = posixpath.normpath(decoded.replace("\\", "/"))
        assert normalised == "/base" or normalised.startswith("/base/"), decoded


@pytest.mark.parametrize("upstream", ["http://[bad", "http://api.example:x", "http://:80",
                                      "http://user@", "ftp://api.example"])
def test_an_upstream_whose_parts_cannot_be_told_is_a_clear_error(store, upstream):
    with pytest.raises(ForwarderError) as raised:
        Forwarder(Options(upstream), store=store)
    # A lone userinfo may be a token: it is never printed.
    shown = upstream.replace("user@", "****@")
    assert str(raised.value) == f"--upstream must be an http(s) URL such as https://api.openai.com; got {shown!r}"
