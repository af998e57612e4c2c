"""Nothing leaked: every credential a client sends, by any of its names, and every echo of it
(error bodies, streams, aiohttp's error text, the upstream URL) stays out of every artefact:
the store's files, `flows --json`, exports, `record`'s output. Store and exports are private files."""

from __future__ import annotations

import base64
import json
import os
import secrets as random
import shlex
import signal
import socketserver
import stat
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote, quote_plus, urlencode

import httpx
import pytest

from inspector.formats.fixture import write_fixture
from inspector.flow import Chunk, Flow, FlowState, frame_chunk, frames
from inspector.mock import json_response
from inspector.proxy import Forwarder
from inspector.redact import REDACTED, REDACTED_USERINFO, redact_query, redact_url, redacted, secret_values
from inspector.replay import replay
from inspector.store import Store
from inspector.proxy.options import Options

from inspector.wire.frames import Direction, Frame

from .conftest import Events



def token(kind: str) -> str:
    return f"{kind}-{random.token_hex(8)}"


class EchoUpstream(socketserver.ThreadingTCPServer):
    """A raw HTTP/1.1 upstream that says back everything it was sent, as providers' error bodies
    do with a bad key: `/echo` as a 401 JSON error, `/stream` as an SSE stream cut in 5-byte
    chunks (so a key is split across chunks), `/garbage` as an unparseable status line (an HTTP
    client's error text may carry the full URL). One request per connection."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _EchoHandler)
        self.requests: list[bytes] = []
        self.issued: dict[str, str] = {}  # what /oauth answers: token name -> value
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self.server_address[1]

    def close(self) -> None:
        self.shutdown()
        self.server_close()


class _EchoHandler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            line = self.rfile.readline()
            if not line:
                return
            head += line
        length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        request = head + self.rfile.read(length)
        self.server.requests.append(request)
        target = head.split(b" ", 2)[1]
        echo = request.decode("latin-1")
        issued = self.server.issued
        if target.startswith(b"/oauth"):  # a token endpoint's answer: JSON, form-encoded, or JSON chunked
            self.wfile.write(_token_response(target, issued))
        elif target.startswith(b"/garbage"):
            self.wfile.write(b"HTTP/1.1 abc nonsense\r\n\r\n")
        elif target.startswith(b"/stream"):
            data = f"data: {json.dumps({'echo': echo})}\n\n".encode()
            self.wfile.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
                             b"connection: close\r\n\r\n")
            for start in range(0, len(data), 5):
                piece = data[start:start + 5]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        else:
            data = json.dumps({"error": {"message": f"Incorrect API key provided: {echo}"}}).encode()
            self.wfile.write(b"HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n"
                             b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(data), data))


# Response headers that name tokens and counts, not credentials: kept as sent.
COUNTING_HEADERS = [("x-ratelimit-remaining-tokens", "39000"), ("anthropic-ratelimit-output-tokens-remaining", "1000"),
                    ("anthropic-ratelimit-input-tokens-reset", "2026-12-01T20:00:00Z"), ("openai-processing-ms", "123")]


def _token_response(target: bytes, issued: dict[str, str]) -> bytes:
    """An OAuth token endpoint's answer carrying `issued`, with a session token in a response header
    (as OpenStack's X-Subject-Token), the access token quoted in a header whose name says nothing,
    and rate-limit headers that count tokens."""
    headers = [*COUNTING_HEADERS, ("X-Subject-Token", issued["subject"]), ("x-debug", f"issued {issued['access_token']}")]
    fields = {name: issued[name] for name in ("access_token", "refresh_token", "id_token")}
    if target.startswith(b"/oauth-form"):  # GitHub's answer to a client that does not ask for JSON
        body = urlencode({**fields, "token_type": "bearer", "scope": "repo"}).encode()
        headers.append(("content-type", "application/x-www-form-urlencoded"))
    else:
        body = json.dumps({**fields, "token_type": "Bearer", "expires_in": 3600, "scope": "openid"}).encode()
        headers.append(("content-type", "application/json"))
    head = "".join(f"{name}: {value}\r\n" for name, value in headers)
    if not target.startswith(b"/oauth-chunked"):
        return f"HTTP/1.1 200 OK\r\n{head}content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode() + body
    # Cut in 5-byte chunks: the writer persists a chunked answer's pieces while it is under way.
    pieces = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 5]), body[i:i + 5]) for i in range(0, len(body), 5))
    return (f"HTTP/1.1 200 OK\r\n{head}transfer-encoding: chunked\r\nconnection: close\r\n\r\n".encode()
            + pieces + b"0\r\n\r\n")


def read_lines(stream, count: int) -> list[str]:
    lines = []
    for line in stream:
        lines.append(line)
        if len(lines) == count:
            break
    assert len(lines) == count, lines
    return lines


def start_record(*argv: str) -> tuple[subprocess.Popen, str, str]:
    """`record` running: (process, its URL, what it printed on stderr up to the URL)."""
    proc = subprocess.Popen([sys.executable, "-m", "inspector", "record", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    printed = ""
    for line in proc.stderr:
        printed += line
        if line.startswith("forwarding "):
            return proc, line.split()[1], printed
    raise AssertionError(f"record exited {proc.wait()}: {printed}")


def cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", *argv], capture_output=True, timeout=60)


def test_no_secret_sent_or_echoed_reaches_any_artefact(tmp_path):
    values = {kind: token(kind) for kind in (
        "bearer", "x-api-key", "goog", "helicone", "cf-aig", "portkey", "amz", "mcp-session", "query-token",
        "semicolon-key", "query-key", "body-api-key", "userinfo", "cookie", "access-token")}
    upstream = EchoUpstream()
    store_path = tmp_path / "flows.sqlite3"
    # The password of the upstream URL authenticates every request (aiohttp sends it as Basic auth).
    base = f"http://toolwire:{values['userinfo']}@127.0.0.1:{upstream.port}"
    proc, url, printed = start_record("--upstream", base, "--port", "0", "--store", str(store_path))
    headers = {
        "Authorization": f"Bearer {values['bearer']}", "x-api-key": values["x-api-key"],
        "x-goog-api-key": values["goog"], "Helicone-Auth": f"Bearer {values['helicone']}",
        "cf-aig-authorization": f"Bearer {values['cf-aig']}", "x-portkey-api-key": values["portkey"],
        "X-Amz-Security-Token": values["amz"], "Mcp-Session-Id": values["mcp-session"],
        "Cookie": f"session={values['cookie']}", "x-request-id": "req-visible-0123456789",
    }
    body = json.dumps({"model": "gpt-test", "api_key": values["body-api-key"], "api_key_name": "team-default-key",
                       "max_tokens": 1234567890, "messages": [{"role": "user", "content": "hi"}]}).encode()
    try:
        with httpx.Client(base_url=url, headers=headers, timeout=10) as client:
            echoed = client.post(f"/echo/v1/chat/completions?token={values['query-token']}&trace=visible-trace-id",
                                 content=body)
            streamed = client.post(f"/stream/v1beta/models/g:streamGenerateContent?alt=sse;key={values['semicolon-key']}"
                                   f"&access_token={values['access-token']}", content=body)
            garbage = client.post(f"/garbage/v1beta/models/g:generateContent?key={values['query-key']}", content=body)
            upstream.close()  # now unreachable: the error names the upstream
            unreachable = client.post("/echo/v1/chat/completions", content=body)
        assert [echoed.status_code, streamed.status_code, garbage.status_code, unreachable.status_code] == [
            401, 200, 502, 502]
        lines = read_lines(proc.stdout, 4)
        # While it runs, the store is a database file, its WAL and its shared memory index.
        files = {suffix: (tmp_path / f"flows.sqlite3{suffix}").read_bytes() for suffix in ("", "-wal", "-shm")}
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    # The upstream got every credential as sent: passthrough is byte-exact.
    first = upstream.requests[0]
    assert first.endswith(b"\r\n\r\n" + body)
    assert f"\r\nx-api-key: {values['x-api-key']}\r\n".encode() in first
    assert f"?token={values['query-token']}&".encode() in first

    artefacts = {f"store{suffix}": data for suffix, data in files.items()}
    artefacts["record stdout"] = ("".join(lines) + out).encode()
    artefacts["record stderr"] = (printed + err).encode()
    listing = cli("flows", "--store", str(store_path), "--json")
    assert listing.returncode == 0, listing.stderr
    artefacts["flows --json"] = listing.stdout + listing.stderr
    rows = json.loads(listing.stdout)
    assert [row["status"] for row in rows] == [401, 200, 502, 502]
    for row in rows:
        exported = cli("export", str(row["id"]), "--store", str(store_path))
        assert exported.returncode == 0, exported.stderr
        artefacts[f"export {row['id']}"] = exported.stdout + exported.stderr
        page = cli("export", str(row["id"]), "--format", "html", "--store", str(store_path))
        assert page.returncode == 0, page.stderr
        artefacts[f"export {row['id']} html"] = page.stdout + page.stderr
    for name in ("", "-wal", "-shm"):
        path = tmp_path / f"flows.sqlite3{name}"
        if path.exists():
            artefacts[f"store{name} after stop"] = path.read_bytes()

    # aiohttp sends the upstream URL's userinfo as Basic auth, which the upstream echoes.
    values["userinfo-basic"] = base64.b64encode(f"toolwire:{values['userinfo']}".encode()).decode()
    leaks = {(artefact, kind) for artefact, data in artefacts.items() for kind, value in values.items()
             if value.encode() in data}
    assert leaks == set()
    # What is not a secret is kept as it was.
    with Store(store_path) as store:
        flow = store.get(rows[0]["id"])
        session = store.session(flow.session_id)
    assert ("x-request-id", "req-visible-0123456789") in flow.request_headers
    assert json.loads(flow.request_body) == {
        "model": "gpt-test", "api_key": REDACTED, "api_key_name": "team-default-key", "max_tokens": 1234567890,
        "messages": [{"role": "user", "content": "hi"}]}
    assert flow.query == f"token={REDACTED}&trace=visible-trace-id"
    assert session.upstream == f"http://toolwire:{REDACTED_USERINFO}@127.0.0.1:{upstream.port}"
    assert rows[2]["error"] == "upstream failed before answering: malformed response head: Invalid status code"
    assert rows[3]["error"] == (f"upstream unreachable: http://toolwire:{REDACTED_USERINFO}@127.0.0.1:{upstream.port}: "
                                "connection refused")


def test_an_upstream_with_a_key_in_its_query_is_refused_without_printing_the_key(tmp_path):
    key = token("upstream-key")
    refused = cli("record", "--upstream", f"http://127.0.0.1:9/v1?key={key}", "--port", "0",
                  "--store", str(tmp_path / "s.db"))
    assert refused.returncode == 2
    assert refused.stdout == b""
    assert refused.stderr.decode() == (
        "toolwire-inspect: --upstream is a base URL; the client's own path and query are appended to it: drop "
        f"'?key={REDACTED}' from 'http://127.0.0.1:9/v1?key={REDACTED}'\n")


# -- what is redacted, by name and by value -------------------------------------------------------

def test_query_secrets_are_redacted_by_name_whatever_the_separator_and_the_rest_is_kept_as_sent():
    assert redact_query("alt=sse;key=AIza-abcdefgh") == f"alt=sse;key={REDACTED}"
    assert redact_query("token=t0k3n-value&x=a%2Fb&api%5Fkey=v&Key=upper") == (
        f"token={REDACTED}&x=a%2Fb&api%5Fkey={REDACTED}&Key={REDACTED}")
    assert redact_query("keys=1&monkey=2&key") == "keys=1&monkey=2&key"
    assert redact_query("") == ""


def test_urls_lose_their_userinfo_secret_and_query_secrets():
    assert redact_url("https://user:pa55word@host:8443/v1?key=k&alt=sse") == (
        f"https://user:****@host:8443/v1?key={REDACTED}&alt=sse")
    assert redact_url("https://sk-only-a-token@host/v1") == "https://****@host/v1"
    assert redact_url("https://host/v1/a@b") == "https://host/v1/a@b"
    assert redact_url("/v1/models?alt=sse;key=abc") == f"/v1/models?alt=sse;key={REDACTED}"
    assert redact_url("/fetch/https://a@b/c?token=t") == f"/fetch/https://a@b/c?token={REDACTED}"


def test_secret_values_come_from_credentials_and_skip_what_is_too_short_to_be_a_secret():
    headers = [("Authorization", "Bearer sk-abcdefgh12"), ("x-api-key", "short7"), ("x-request-id", "req-123456789"),
               ("Cookie", "a=cookie-value-1; b=cookie-value-2"), ("Helicone-Auth", "Bearer helicone-0001")]
    assert secret_values(headers, "key=AIza%2Fslash1&alt=sse", "https://u:pass-word-1@h") == (
        "Bearer sk-abcdefgh12", "sk-abcdefgh12", "a=cookie-value-1; b=cookie-value-2", "cookie-value-1",
        "cookie-value-2", "Bearer helicone-0001", "helicone-0001", "AIza/slash1", "AIza%2Fslash1", "pass-word-1")


def make_flow(**fields) -> Flow:
    base = {"id": 1, "session_id": 1, "started_at": 1.0, "method": "POST", "path": "/v1/chat/completions"}
    return Flow(**{**base, **fields})


def test_every_stored_byte_of_a_flow_is_scrubbed_of_its_secrets_and_chunks_stay_consistent(tmp_path):
    key = "sk-live-0123456789"
    stream = f"data: {key}\n\ndata: ok\n\n".encode()
    cut = stream.index(b"0123")  # the key straddles two chunks
    flow = make_flow(
        query="key=AIza-query-secret", request_headers=[("Authorization", f"Bearer {key}")],
        request_body=f'{{"api_key": "body-secret-1", "api_key_name": "keep-me-visible", "echo": "{key}"}}'.encode(),
        upstream_url="http://h/v1?key=AIza-query-secret", upstream_request_body=b'{"k": "AIza-query-secret"}',
        status=200, response_headers=[("x-echo", key)], upstream_response_body=stream, response_body=stream,
        streamed=True, chunks=[Chunk(0.1, stream[:cut]), Chunk(0.2, stream[cut:])], state=FlowState.ERROR,
        error="ClientResponseError url='http://h/v1?key=AIza-query-secret' body-secret-1", notes=[f"saw {key}"],
        secrets=(f"Bearer {key}", key, "AIza-query-secret"),
    )
    clean = f"data: {REDACTED}\n\ndata: ok\n\n".encode()
    expected = make_flow(
        query=f"key={REDACTED}", request_headers=[("Authorization", REDACTED)],
        request_body=f'{{"api_key": "{REDACTED}", "api_key_name": "keep-me-visible", "echo": "{REDACTED}"}}'.encode(),
        upstream_url=f"http://h/v1?key={REDACTED}", upstream_request_body=f'{{"k": "{REDACTED}"}}'.encode(),
        status=200, response_headers=[("x-echo", REDACTED)], upstream_response_body=clean, response_body=clean,
        streamed=True, chunks=[Chunk(0.1, f"data: {REDACTED}".encode()), Chunk(0.2, b"\n\ndata: ok\n\n")],
        state=FlowState.ERROR,
        error=f"ClientResponseError url='http://h/v1?key={REDACTED}' {REDACTED}", notes=[f"saw {REDACTED}"],
    )
    assert redacted(flow) == expected
    assert redacted(flow).secrets == ()
    with Store(tmp_path / "s.db") as store:
        store.save(flow)
        assert store.get(1) == expected
    assert "secrets" not in repr(flow)


def test_every_frame_of_a_socket_is_scrubbed_on_its_own_and_keeps_its_direction_and_opcode(tmp_path):
    key = "sk-live-socket-0123456789"
    shaped_key = shaped("sk-proj-", 120, ALNUM + "_-")  # in no header: found by its shape
    sent = [(Direction.CLIENT, True, f'{{"note": "{shaped_key}", "api_key": "frame-secret-1"}}'.encode()),
            (Direction.SERVER, True, f'{{"echo": "{shaped_key} {key}"}}'.encode()),
            # A string left open to the frame's end (a whole message, read like a whole body): the net
            # does not run on into the next record and eat its head byte.
            (Direction.CLIENT, True, b'{"api_key": "left-open'),
            (Direction.SERVER, False, b"\x00\x81\x01 frame-secret-1")]
    chunks = [frame_chunk(0.1 * n, *frame) for n, frame in enumerate(sent, 1)]
    flow = make_flow(method="GET", path="/v1/responses", query="key=AIza-socket-secret", websocket=True,
                     request_headers=[("Authorization", f"Bearer {key}")], status=101, chunks=chunks,
                     response_body=b"".join(chunk.data for chunk in chunks), state=FlowState.COMPLETE,
                     secrets=(f"Bearer {key}", key, "AIza-socket-secret"))
    clean = [f'{{"note": "{REDACTED}", "api_key": "{REDACTED}"}}'.encode(), f'{{"echo": "{REDACTED} {REDACTED}"}}'.encode(),
             b'{"api_key": "left-open', f"\x00\x81\x01 {REDACTED}".encode("latin-1")]
    expected = [Frame(direction, flow.started_at + 0.1 * n, text, payload)
                for n, ((direction, text, _), payload) in enumerate(zip(sent, clean, strict=True), 1)]
    scrubbed = redacted(flow)
    assert (frames(scrubbed), scrubbed.query, scrubbed.request_headers) == (
        expected, f"key={REDACTED}", [("Authorization", REDACTED)])
    assert scrubbed.response_body == b"".join(chunk.data for chunk in scrubbed.chunks)
    with Store(tmp_path / "s.db") as store:
        store.save(flow)
        assert store.frames(1) == expected
    for file in tmp_path.iterdir():
        data = file.read_bytes()
        assert [value for value in (key, shaped_key, "frame-secret-1", "AIza-socket-secret")
                if value.encode() in data] == [], file


def test_a_text_found_clean_in_one_flow_is_still_scrubbed_where_it_is_another_flow_s_secret():
    # Header values are scanned by name and shape once (they repeat flow after flow); by value,
    # each flow is still scrubbed of its own secrets.
    value = "opaque-session-0123456789"  # no name nor shape says secret
    plain = make_flow(request_headers=[("x-session", value)], response_headers=[("x-session", value)])
    assert redacted(plain) == plain
    keyed = make_flow(request_headers=[("Authorization", f"Bearer {value}"), ("x-session", value)],
                      response_headers=[("x-session", value)], path=f"/v1/{value}", secrets=(value,))
    assert redacted(keyed) == make_flow(request_headers=[("Authorization", REDACTED), ("x-session", REDACTED)],
                                        response_headers=[("x-session", REDACTED)], path=f"/v1/{REDACTED}")
    # A shape found once is found every time.
    shaped_key = "sk-proj-" + "a1" * 12
    for _ in range(2):
        assert redacted(make_flow(response_headers=[("x-echo", shaped_key)])).response_headers == [("x-echo", REDACTED)]


def test_values_too_short_to_be_secrets_are_not_scrubbed_and_bodies_stay_byte_for_byte():
    body = b'{"model": "m", "max_tokens": 12345678, "text": "short7 Bearer x"}'
    flow = make_flow(request_body=body, request_headers=[("x-api-key", "short7")], secrets=("short7",),
                     response_body=body, chunks=[Chunk(0.1, body[:9]), Chunk(0.2, body[9:])])
    assert redacted(flow) == make_flow(request_body=body, request_headers=[("x-api-key", REDACTED)],
                                       response_body=body, chunks=[Chunk(0.1, body[:9]), Chunk(0.2, body[9:])])


def test_exports_scrub_body_secrets_of_flows_stored_before_scrubbing(tmp_path):
    flow = make_flow(request_body=b'{"api_key": "old-stored-secret", "model": "m"}', status=200,
                     response_body=b'{"error": "bad key old-stored-secret"}', state=FlowState.COMPLETE)
    path = write_fixture(flow, tmp_path / "flow.json")
    data = json.loads(path.read_bytes())
    assert data["request"]["body"] == {"json": {"api_key": REDACTED, "model": "m"}}
    assert data["response"]["body"] == {"json": {"error": f"bad key {REDACTED}"}}


def test_a_replay_is_stored_scrubbed_of_the_credentials_it_was_given(rig):
    key = token("sk-replayed")
    rig.mock.responder = lambda request: json_response({"error": f"bad key {request.header('x-api-key')}"}, 401)
    body = b'{"model": "claude-test", "max_tokens": 12345678, "messages": []}'
    assert rig.client.post("/v1/messages", content=body, headers={"x-api-key": key}).status_code == 401
    (first,) = rig.events.completed()
    original = rig.store.get(first.flow.id)
    new_id = replay(original, via=rig.forwarder, credentials=rig.forwarder.credentials(original.id))
    rig.events.completed(2)
    replayed = rig.store.get(new_id)
    assert rig.mock.received[1].header("x-api-key") == key
    assert (replayed.replay_of, replayed.request_body, replayed.response_body) == (
        original.id, body, f'{{"error":"bad key {REDACTED}"}}'.encode())
    assert original.response_body == replayed.response_body


# -- files -------------------------------------------------------------------------------------------

def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_store_files_and_exports_are_private_whatever_the_umask(tmp_path):
    previous = os.umask(0o022)
    try:
        with Store(tmp_path / "data" / "flows.sqlite3") as store:
            store.save(make_flow(id=store.next_flow_id(), state=FlowState.COMPLETE))
            created = {path.name: mode(path) for path in (tmp_path / "data").iterdir()}
            exported = write_fixture(store.get(1), tmp_path / "flow.json")
        old = tmp_path / "old.json"
        old.write_bytes(b"{}")
        os.chmod(old, 0o644)
        write_fixture(make_flow(), old)
    finally:
        os.umask(previous)
    assert created == {"flows.sqlite3": 0o600, "flows.sqlite3-wal": 0o600, "flows.sqlite3-shm": 0o600}
    assert mode(tmp_path / "data") == 0o700
    assert (mode(exported), mode(old)) == (0o600, 0o600)


def test_an_existing_world_readable_store_is_made_private_on_open(tmp_path):
    path = tmp_path / "flows.sqlite3"
    Store(path).close()
    os.chmod(path, 0o644)
    with Store(path):
        assert {p.name: mode(p) for p in tmp_path.iterdir()} == {
            "flows.sqlite3": 0o600, "flows.sqlite3-wal": 0o600, "flows.sqlite3-shm": 0o600}


def test_the_export_command_writes_a_private_file(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.save(make_flow(id=store.next_flow_id(), state=FlowState.COMPLETE))
    out = tmp_path / "out.json"
    previous = os.umask(0o022)
    try:
        done = cli("export", "1", "--store", str(tmp_path / "s.db"), "-o", str(out))
    finally:
        os.umask(previous)
    assert done.returncode == 0, done.stderr
    assert mode(out) == 0o600


def test_the_tui_header_shows_the_upstream_without_its_password(store):
    from inspector.session import LocalSession
    from inspector.tui.app import InspectorApp

    forwarder = Forwarder(Options("https://me:hunter2-password@gw.example/v1"), store=store)
    assert InspectorApp(store=store, forwarder=LocalSession(forwarder, store)).listening.upstream == "https://me:****@gw.example/v1"


def test_the_upstream_userinfo_is_sent_as_basic_auth_unless_the_client_brings_its_own(mock, store):
    events = Events()
    forwarder = Forwarder(Options(f"http://gw-user:pa55-word-1@127.0.0.1:{mock.port}", port=0), store=store, on_event=events)
    # Fixed client headers: httpx's own accept-encoding depends on which decoders are installed.
    sent = {"accept": "*/*", "accept-encoding": "gzip", "user-agent": "test-client"}
    with forwarder, httpx.Client(base_url=forwarder.base_url, timeout=10, headers=sent) as client:
        assert client.post("/v1/chat/completions", content=b"{}").status_code == 200
        assert client.post("/v1/chat/completions", content=b"{}", headers={"Authorization": "Bearer sk-own-key-1"}
                           ).status_code == 200
        first, second = (store.get(event.flow.id) for event in events.completed(2))
    assert [request.header("authorization") for request in mock.received] == [
        "Basic " + base64.b64encode(b"gw-user:pa55-word-1").decode(), "Bearer sk-own-key-1"]
    assert (first.upstream_url, first.upstream_request_headers, first.notes) == (
        f"http://gw-user:****@127.0.0.1:{mock.port}/v1/chat/completions",
        [("accept", "*/*"), ("accept-encoding", "gzip"), ("user-agent", "test-client"), ("Authorization", REDACTED)], [])
    assert second.notes == ["the upstream URL's credentials were not sent: the request has its own Authorization"]
    assert store.sessions()[0].upstream == f"http://gw-user:****@127.0.0.1:{mock.port}"


def test_the_default_data_folder_is_made_private_even_when_it_exists(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "xdg" / "toolwire-inspect"
    folder.mkdir(parents=True, mode=0o755)
    os.chmod(folder, 0o755)
    with Store() as store:
        assert store.path == folder / "flows.sqlite3"
    assert mode(folder) == 0o700


# -- every class of credential: OAuth, token responses, header names, token shapes, argv, env ------

ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def shaped(prefix: str, length: int, alphabet: str = ALNUM) -> str:
    """A random credential in the shape a provider issues: `prefix` and `length` characters after it."""
    return prefix + "".join(random.choice(alphabet) for _ in range(length - 1)) + random.choice("0123456789")


def jwt() -> str:
    part = lambda data: base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()  # noqa: E731
    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part({'sub': token('user'), 'aud': 'toolwire'})}.{token('sig')}"


def encodings(value: str) -> set[str]:
    """The forms a value takes in the artefacts: as is, percent-encoded, and JSON-escaped."""
    return {value, quote(value, safe=""), quote_plus(value), json.dumps(value)[1:-1]}


def exports_and_listings(store_path: Path) -> dict[str, bytes]:
    """`flows`, `flows --json` and every export format of every flow, as printed."""
    found = {}
    for argv in (("flows",), ("flows", "--json")):
        done = cli(*argv, "--store", str(store_path))
        assert done.returncode == 0, done.stderr
        found[" ".join(argv)] = done.stdout + done.stderr
    for row in json.loads(found["flows --json"]):
        for fmt in ("json", "pytest", "vcr", "har", "html"):
            done = cli("export", str(row["id"]), "--format", fmt, "--store", str(store_path))
            assert done.returncode == 0, done.stderr
            found[f"export {row['id']} {fmt}"] = done.stdout + done.stderr
    # The page of a whole recording also reads what the views fetch besides the flows (session rules, replays).
    folder = store_path.parent / "html-session"
    done = cli("export", "--session", "--format", "html", "-o", str(folder), "--store", str(store_path))
    assert done.returncode == 0, done.stderr
    found["export --session html"] = b"".join(path.read_bytes() for path in folder.iterdir()) + done.stderr
    return found


def store_files(folder: Path, name: str) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in folder.iterdir() if path.name.startswith(name)}


def leaks(artefacts: dict[str, bytes], values: dict[str, str]) -> set[tuple[str, str]]:
    return {(artefact, kind) for artefact, data in artefacts.items() for kind, value in values.items()
            if any(form.encode() in data for form in encodings(value))}


def test_oauth_fields_token_responses_secret_header_names_and_token_shapes_reach_no_artefact(tmp_path):
    issued = {"access_token": token("gho-access"), "refresh_token": token("refresh"), "id_token": jwt(),
              "subject": token("subject")}
    values = {
        "code": token("auth-code"), "code_verifier": token("verifier") + "-._~", "client_secret": token("cs") + "/+=",
        "password": token("pw") + "!", "client_assertion": token("assertion"), "request_refresh": token("rt"),
        "x-api-token": token("api-token"), "x-auth-token": token("auth-token"), "subscription": token("apim"),
        "x-client-secret": token("client-secret"), "anthropic": shaped("sk-ant-api03-", 95),
        "openai": shaped("sk-proj-", 120, ALNUM + "_-"), "stripe": shaped("sk_live_", 40), "ghp": shaped("ghp_", 36),
        "github_pat": shaped("github_pat_", 82, ALNUM + "_"), "slack_bot": "xoxb-" + shaped("", 12, "0123456789") + "-"
        + shaped("", 24), "aws": shaped("AKIA", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"), "google": shaped("AIza", 35),
        "jwt": jwt(), "webhook": shaped("T", 10) + "/" + shaped("B", 10) + "/" + shaped("", 24),
        "dsn_password": token("db-pass"), "tool_password": token("tool-pw"),
        **{f"issued {name}": value for name, value in issued.items()},
    }
    upstream = EchoUpstream()
    upstream.issued = issued
    store_path = tmp_path / "flows.sqlite3"
    proc, url, printed = start_record("--upstream", f"http://127.0.0.1:{upstream.port}", "--port", "0",
                                      "--store", str(store_path))
    form = (f"grant_type=authorization_code&code={values['code']}&code_verifier={quote(values['code_verifier'])}"
            f"&client_id=visible-client&client_secret={quote(values['client_secret'], safe='')}"
            "&redirect_uri=http%3A%2F%2F127.0.0.1%3A8976%2Fcallback").encode()
    oauth_json = json.dumps({
        "grant_type": "password", "username": "visible-user", "password": values["password"],
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": values["client_assertion"], "refresh_token": values["request_refresh"]}).encode()
    arguments = json.dumps({"password": values["tool_password"], "password_hint": "dog"})
    chat = json.dumps({"model": "gpt-test", "max_tokens": 1234567890, "messages": [
        {"role": "user", "content": f"keys: {values['anthropic']} {values['openai']} {values['stripe']} "
                                    f"{values['ghp']} {values['github_pat']} {values['slack_bot']} {values['aws']} "
                                    f"{values['google']} {values['jwt']}; hook "
                                    f"https://hooks.slack.com/services/{values['webhook']}; db "
                                    f"postgres://app:{values['dsn_password']}@db.internal:5432/prod; see "
                                    "http://127.0.0.1:8080/docs and mail ops@example.com; sk-learn-compatible-interface"},
        {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                                              "function": {"name": "login", "arguments": arguments}}]}],
        "tools": [], "stream": False}).encode()
    secret_headers = {"X-Api-Token": values["x-api-token"], "X-Auth-Token": values["x-auth-token"],
                      "Ocp-Apim-Subscription-Key": values["subscription"], "X-Client-Secret": values["x-client-secret"],
                      "x-request-id": "req-visible-0123456789"}
    form_type = {"content-type": "application/x-www-form-urlencoded"}
    try:
        with httpx.Client(base_url=url, timeout=10) as client:
            answers = [
                client.post("/echo/token", content=form, headers=form_type),
                client.post("/echo/token", content=oauth_json, headers={"content-type": "application/json"}),
                client.post("/oauth/token", content=form, headers=form_type),
                client.post("/oauth-form/login/oauth/access_token", content=form, headers=form_type),
                client.post("/oauth-chunked/token", content=form, headers=form_type),
                client.post("/echo/v1/chat/completions", content=chat, headers=secret_headers),
            ]
        assert [answer.status_code for answer in answers] == [401, 401, 200, 200, 200, 401]
        # The client got every token as issued: only the stored copies lose them.
        assert answers[4].json()["refresh_token"] == issued["refresh_token"]
        lines = read_lines(proc.stdout, len(answers))
        running = store_files(tmp_path, "flows.sqlite3")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
        upstream.close()
    assert upstream.requests[0].endswith(b"\r\n\r\n" + form)  # passthrough stays byte-exact
    artefacts = {f"{name} while recording": data for name, data in running.items()}
    artefacts |= {f"{name} after stop": data for name, data in store_files(tmp_path, "flows.sqlite3").items()}
    artefacts["record stdout"] = ("".join(lines) + out).encode()
    artefacts["record stderr"] = (printed + err).encode()
    artefacts |= exports_and_listings(store_path)
    assert leaks(artefacts, values) == set()

    with Store(store_path, read_only=True) as store:
        flows = [store.get(row.id) for row in store.rows()]
    form_stored, json_stored, token_json, token_form, token_chunked, chat_stored = flows
    assert form_stored.request_body == (
        f"grant_type=authorization_code&code={REDACTED}&code_verifier={REDACTED}&client_id=visible-client"
        f"&client_secret={REDACTED}&redirect_uri=http%3A%2F%2F127.0.0.1%3A8976%2Fcallback").encode()
    assert json.loads(json_stored.request_body) == {
        "grant_type": "password", "username": "visible-user", "password": REDACTED,
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": REDACTED, "refresh_token": REDACTED}
    expected_tokens = {"access_token": REDACTED, "refresh_token": REDACTED, "id_token": REDACTED}
    assert json.loads(token_json.response_body) == {**expected_tokens, "token_type": "Bearer", "expires_in": 3600,
                                                    "scope": "openid"}
    assert token_chunked.response_body == token_json.response_body
    assert b"".join(chunk.data for chunk in token_chunked.chunks) == token_chunked.response_body
    assert token_form.response_body == (f"access_token={REDACTED}&refresh_token={REDACTED}&id_token={REDACTED}"
                                        "&token_type=bearer&scope=repo").encode()
    for flow in (token_json, token_form, token_chunked):
        kept = [(name, value) for name, value in flow.response_headers
                if name.lower() not in ("content-type", "content-length", "transfer-encoding", "connection")]
        assert kept == [*COUNTING_HEADERS, ("X-Subject-Token", REDACTED), ("x-debug", f"issued {REDACTED}")]
    sent = {name.lower() for name in secret_headers}
    assert [(name, value) for name, value in chat_stored.request_headers if name in sent] == [
        ("x-api-token", REDACTED), ("x-auth-token", REDACTED), ("ocp-apim-subscription-key", REDACTED),
        ("x-client-secret", REDACTED), ("x-request-id", "req-visible-0123456789")]
    expected_chat = chat.decode().replace(f"app:{values['dsn_password']}@", f"app:{REDACTED_USERINFO}@")
    for kind in ("anthropic", "openai", "stripe", "ghp", "github_pat", "slack_bot", "aws", "google", "jwt", "webhook",
                 "tool_password"):
        expected_chat = expected_chat.replace(values[kind], REDACTED)
    assert chat_stored.request_body == expected_chat.encode()


ROOT = Path(__file__).resolve().parents[2]


def test_an_mcp_stdio_command_line_and_the_environment_a_server_echoes_reach_no_artefact(tmp_path):
    values = {"--api-key": shaped("sk-live-", 24), "--token=": token("tok"), "API_KEY=": token("env-prefix"),
              "--password": token("pass"), "DATABASE_URL password": token("db-pw"), "GITHUB_PAT": token("pat"),
              "SLACK_WEBHOOK": shaped("", 24), "SENTRY_DSN key": token("sentry"), "APP_PASSWORD": token("app-pw"),
              "MY_SECRET_VALUE": token("secret-value"), "SERVICE_TOKEN_2": token("service"),
              "STRIPE_KEY": token("stripe"), "DB_PASS": token("db-pass")}
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "DATABASE_URL": f"postgres://app:{values['DATABASE_URL password']}@db.internal:5432/prod",
           "GITHUB_PAT": values["GITHUB_PAT"], "SLACK_WEBHOOK": f"https://hooks.slack.com/services/{values['SLACK_WEBHOOK']}",
           "SENTRY_DSN": f"https://{values['SENTRY_DSN key']}@o1.ingest.sentry.io/1",
           "APP_PASSWORD": values["APP_PASSWORD"], "MY_SECRET_VALUE": values["MY_SECRET_VALUE"],
           "SERVICE_TOKEN_2": values["SERVICE_TOKEN_2"], "STRIPE_KEY": values["STRIPE_KEY"], "DB_PASS": values["DB_PASS"],
           "VISIBLE_SETTING": "plain-visible-value", "MAX_TOKENS": "4096", "TOKENIZERS_PARALLELISM": "false-but-long"}
    store_path = tmp_path / "flows.sqlite3"
    server = ["env", f"API_KEY={values['API_KEY=']}", sys.executable, "-m", "tests.mcp_servers", "echo",
              "--api-key", values["--api-key"], f"--token={values['--token=']}", "--password", values["--password"],
              "--max-tokens", "4096", "--key-file", "/etc/visible/key.pem"]
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "whoami", "arguments": {"password_hint": "dog"}}}
    done = subprocess.run([sys.executable, "-m", "inspector", "mcp-stdio", "--store", str(store_path), "--", *server],
                          input=json.dumps(request).encode() + b"\n", capture_output=True, cwd=ROOT, env=env,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)  # the client gets the server's answer as it was written
    assert answer["result"]["argv"][1:] == server[5:]
    assert answer["result"]["env"]["API_KEY"] == values["API_KEY="]

    artefacts = {"mcp-stdio stderr": done.stderr, **store_files(tmp_path, "flows.sqlite3")}
    artefacts |= exports_and_listings(store_path)
    assert leaks(artefacts, values) == set()
    # The command line names the server in its stdio:// URL, where brackets would read as an IPv6 host.
    shown = shlex.join(["env", f"API_KEY={REDACTED_USERINFO}", sys.executable, "-m", "tests.mcp_servers", "echo",
                        "--api-key", REDACTED_USERINFO, f"--token={REDACTED_USERINFO}", "--password", REDACTED_USERINFO,
                        "--max-tokens", "4096", "--key-file", "/etc/visible/key.pem"])
    with Store(store_path, read_only=True) as store:
        (flow,) = [store.get(row.id) for row in store.rows()]
        sessions = store.sessions()
    assert ([session.upstream for session in sessions], flow.path, flow.upstream_url) == (
        [f"stdio://{shown}"], f"stdio:{shown}", f"stdio://{shown}")
    assert json.loads(flow.request_body) == request
    echoed = json.loads(flow.response_body)["result"]
    assert echoed["argv"][1:] == ["echo", "--api-key", REDACTED, f"--token={REDACTED}", "--password", REDACTED,
                                  "--max-tokens", "4096", "--key-file", "/etc/visible/key.pem"]
    assert {name: echoed["env"][name] for name in (
        "API_KEY", "DATABASE_URL", "GITHUB_PAT", "SLACK_WEBHOOK", "SENTRY_DSN", "APP_PASSWORD", "MY_SECRET_VALUE",
        "SERVICE_TOKEN_2", "STRIPE_KEY", "DB_PASS", "VISIBLE_SETTING", "MAX_TOKENS", "TOKENIZERS_PARALLELISM")} == {
        "API_KEY": REDACTED, "DATABASE_URL": f"postgres://app:{REDACTED_USERINFO}@db.internal:5432/prod",
        "GITHUB_PAT": REDACTED, "SLACK_WEBHOOK": REDACTED,
        "SENTRY_DSN": REDACTED, "APP_PASSWORD": REDACTED, "MY_SECRET_VALUE": REDACTED, "SERVICE_TOKEN_2": REDACTED,
        "STRIPE_KEY": REDACTED, "DB_PASS": REDACTED, "VISIBLE_SETTING": "plain-visible-value", "MAX_TOKENS": "4096",
        "TOKENIZERS_PARALLELISM": "false-but-long"}


def test_the_access_token_of_a_remote_forwarder_is_scrubbed_when_a_body_quotes_it(mock, store):
    from .conftest import Rig

    mock.responder = lambda request: json_response({"echo": request.body.decode()}, 400)
    rig = Rig(mock, store, host="0.0.0.0", allow_remote=True)
    try:
        secret = rig.forwarder.access.token
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": f"my base URL is "
                                                       f"{rig.forwarder.client_url}/v1 and my token {secret}"}]})
        answer = rig.client.post(f"/t/{secret}/v1/chat/completions", content=body)
        assert answer.status_code == 400
        (done,) = rig.events.completed()
        store.flush()
        flow = store.get(done.flow.id)
    finally:
        rig.stop()
    assert json.loads(flow.request_body)["messages"][0]["content"] == (
        f"my base URL is http://0.0.0.0:{rig.forwarder.port}/t/{REDACTED}/v1 and my token {REDACTED}")
    assert secret.encode() not in b"".join(store_files(store.path.parent, store.path.name).values())


# -- the rules, one by one ------------------------------------------------------------------------

def test_header_names_that_carry_credentials_and_those_that_count_tokens():
    from inspector.redact import secret_header

    names = ["Authorization", "X-Api-Token", "X-Auth-Token", "X-Access-Token", "X-Upstream-Authorization",
             "X-Client-Secret", "Ocp-Apim-Subscription-Key", "x-api-key", "X-CSRF-Token", "X-Subject-Token",
             "X-Session-Token", "X-Vercel-OIDC-Token", "X-Gitlab-Token", "X-Password", "Api-Key", "x-goog-api-key",
             "Cookie", "X-Amz-Security-Token", "X-Secret-Key", "Private-Token", "X-Jwt-Assertion",
             # counts, ids, challenges and nonces: kept
             "x-ratelimit-remaining-tokens", "x-ratelimit-limit-tokens", "anthropic-ratelimit-output-tokens-remaining",
             "anthropic-ratelimit-input-tokens-reset", "openai-processing-ms", "x-request-id", "WWW-Authenticate",
             "Idempotency-Key", "Sec-WebSocket-Key", "Content-Type", "x-stainless-retry-count", "X-Token-Count",
             "openai-organization", "X-Key-Id", "Keep-Alive"]
    assert [name for name in names if secret_header(name)] == names[:21]


def near_miss_flow() -> Flow:
    request = (b'{"model": "m", "max_tokens": 4096, "max_completion_tokens": 100, "logprobs": true, '
               b'"messages": [{"role": "user", "content": "write code; see https://u@example.com/x and '
               b'http://127.0.0.1:8080/docs, ops@example.com, task-1234567890123456789 desk_0123456789abcdef0123"}], '
               b'"tools": [{"name": "login", "input_schema": {"properties": {"password_hint": {"type": "string"}}}}], '
               b'"tool_args": {"password_hint": "dog", "code": "print(1234567890)"}, "_meta": {"progressToken": "pt-0123456789"}}')
    response = (b'{"error": {"code": 400, "type": "invalid_request_error", "message": "bad"}, "code": "invalid_api_key", '
                b'"usage": {"input_tokens": 12345678, "output_tokens": 9, "cache_read_input_tokens": 0}, '
                b'"choices": [{"logprobs": {"content": [{"token": "Hello-world-token", "logprob": -0.1}]}}], '
                b'"nextPageToken": 7}')
    return make_flow(request_headers=[("content-type", "application/json"), ("x-request-id", "req-0123456789")],
                     request_body=request, upstream_request_body=request, status=400,
                     response_headers=[(name, value) for name, value in COUNTING_HEADERS], response_body=response,
                     chunks=[Chunk(0.1, response[:40]), Chunk(0.2, response[40:])], state=FlowState.COMPLETE,
                     notes=["max_tokens 4096 exceeds the model's limit"], error=None)


def test_near_misses_are_kept_as_sent():
    flow = near_miss_flow()
    assert redacted(flow) == flow


def test_code_is_a_credential_only_in_an_oauth_shaped_body():
    from inspector.redact import Scrubber

    scrub = Scrubber(())
    assert scrub.data(b"code=abc123456789&lang=py", form=True) == b"code=abc123456789&lang=py"
    # An authorization response (RFC 6749 4.1.2) carries the code with the client's state.
    assert scrub.data(b"code=abc123456789&state=xyz", form=True) == f"code={REDACTED}&state=xyz".encode()
    assert scrub.data(b"grant_type=authorization_code&code=abc123456789&state=xyz", form=True) == (
        f"grant_type=authorization_code&code={REDACTED}&state=xyz".encode())
    assert scrub.data(b'{"grant_type": "authorization_code", "code": "abc123456789", "n": 4}') == (
        f'{{"grant_type": "authorization_code", "code": "{REDACTED}", "n": 4}}'.encode())
    assert scrub.data(b'{"code": "abc123456789", "password": "short", "apiKey": "k", "client_secret": 12}') == (
        f'{{"code": "abc123456789", "password": "{REDACTED}", "apiKey": "{REDACTED}", "client_secret": 12}}'.encode())
    # A tool call's arguments are JSON inside a JSON string: their fields are found there too.
    assert scrub.data(br'{"arguments": "{\"password\": \"p\\\"w1\", \"user\": \"me\"}"}') == (
        f'{{"arguments": "{{\\"password\\": \\"{REDACTED}\\", \\"user\\": \\"me\\"}}"}}'.encode())


def test_token_shapes_are_found_in_any_text_and_userinfo_passwords_in_any_url():
    from inspector.redact import Scrubber

    scrub = Scrubber(())
    for secret in (shaped("sk-ant-api03-", 40), shaped("ghp_", 36), shaped("github_pat_", 82), "xoxp-1234567890-abcdefghij",
                   shaped("AKIA", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"), shaped("AIza", 35), jwt()):
        assert scrub.text(f"say {secret}.") == f"say {REDACTED}.", secret
    assert scrub.text("redis://:hunter2@cache:6379/0 and https://u:p%40ss@h/") == (
        f"redis://:{REDACTED_USERINFO}@cache:6379/0 and https://u:{REDACTED_USERINFO}@h/")
    assert scrub.text("https://hooks.slack.com/services/T0/B1/abcdefgh1234") == (
        f"https://hooks.slack.com/services/{REDACTED}")
    kept = "sk-learn-compatible-interface, eyJhbGciOi alone, a task-1234567890abcdefghij, AKIA in text"
    assert scrub.text(kept) == kept


def test_a_stream_is_scrubbed_piece_by_piece_with_what_came_before_it():
    from inspector.redact import Scrubber

    access, shape = token("opaque-access"), shaped("ghp_", 36)
    body = json.dumps({"access_token": access, "note": f"use {shape} now", "max_tokens": 5}).encode()
    pieces = [body[start:start + 5] for start in range(0, len(body), 5)]
    scrub = Scrubber(())
    written = []
    for index in range(0, len(pieces), 3):  # the writer's ticks: a few new pieces each, after those written
        written += scrub.stream(b"".join(pieces[:index]), pieces[index:index + 3])
    stored = b"".join(written)
    assert access.encode() not in stored and shape.encode() not in stored
    assert not any(piece in access.encode() or piece in shape.encode() for piece in written
                   if len(piece) >= 4 and piece != REDACTED.encode() and b"[" not in piece)


def test_argv_and_environment_secrets():
    from inspector.redact import environment_secrets, redact_argv

    argv = ["npx", "server", "--api-key", "sk-live-0123456789abcdef", "--token=t0k3n-value-1", "--auth-token", "x",
            "API_KEY=env-key-01234567", "--max-tokens", "4096", "--key-file", "/k.pem", "--verbose",
            "--url", "postgres://u:db-pass-123@h/db", "--password"]
    assert redact_argv(argv) == (
        ["npx", "server", "--api-key", REDACTED, f"--token={REDACTED}", "--auth-token", REDACTED, f"API_KEY={REDACTED}",
         "--max-tokens", "4096", "--key-file", "/k.pem", "--verbose", "--url", f"postgres://u:{REDACTED_USERINFO}@h/db",
         "--password"],
        ("sk-live-0123456789abcdef", "t0k3n-value-1", "env-key-01234567", "db-pass-123"))
    environ = {"GITHUB_PAT": "pat-0123456789", "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T/B/abcdefgh",
               "SENTRY_DSN": "https://k@o.io/1", "DB_PASSWORD": "pw-0123456789", "AWS_SECRET_ACCESS_KEY": "aws-0123456789",
               "DATABASE_URL": "postgres://u:db-pass-123@h/db", "HF_TOKEN": "hf-0123456789", "SHORT_KEY": "1234567",
               "PWD": "/home/me/project", "MAX_TOKENS": "40960000", "GIT_AUTHOR_NAME": "Jane Developer",
               "HOME": "/home/me", "KEYBOARD_LAYOUT": "us-intl-altgr"}
    assert set(environment_secrets(environ)) == {
        "pat-0123456789", "https://hooks.slack.com/services/T/B/abcdefgh", "https://k@o.io/1", "pw-0123456789",
        "aws-0123456789", "db-pass-123", "hf-0123456789"}


def test_a_header_value_is_scrubbed_of_its_own_flows_secrets_whatever_another_flow_had():
    """Scrubber keeps the header values it scrubbed per set of secrets: the same value under another
    flow's secrets is scrubbed of those, not given the first flow's answer."""
    from inspector.redact import Scrubber

    value = "note plainvalue-123456789 and other-words-987654"
    assert Scrubber(["plainvalue-123456789"]).headers([("x-note", value)]) == [
        ("x-note", "note [redacted] and other-words-987654")]
    assert Scrubber(["other-words-987654"]).headers([("x-note", value)]) == [
        ("x-note", "note plainvalue-123456789 and [redacted]")]
    assert Scrubber([]).headers([("x-note", value)]) == [("x-note", value)]
    assert Scrubber(["plainvalue-123456789"]).headers([("x-note", value)]) == [
        ("x-note", "note [redacted] and other-words-987654")]


@pytest.mark.parametrize("secret", [b"sk-proj-abcd1234efgh5678", b"aaaaaaaab", b"abab-abab-abab", b"tok\\u0022en12"])
def test_the_start_of_a_secret_cut_at_a_pieces_end_is_found_at_every_cut(secret):
    """cut_secret is the longest start of the secret (shorter than it, 4 bytes at least) the text
    ends with, wherever the piece ends: the definition, tried length by length, agrees at every cut,
    after text that holds false starts of it (near misses) and after none."""
    from inspector.redact import cut_secret

    def by_definition(data: bytes) -> int:
        return next((size for size in range(min(len(secret), len(data)) - 1, 3, -1) if data.endswith(secret[:size])), 0)

    for before in (b"", b"x", secret[:5] + b"!" + secret[:3], secret[:-1] + b"?", secret):
        for cut in range(len(secret) + 1):
            data = b"text " + before + secret[:cut]
            assert cut_secret(data, secret) == by_definition(data), (before, cut)
    assert cut_secret(b"ends with sk-p", b"sk-proj-abcd") == 4
    assert cut_secret(b"ends with sk-", b"sk-proj-abcd") == 0  # three bytes tell nothing


def test_what_an_open_tail_redacts_is_what_searching_the_whole_window_finds():
    """_open_tails tries each net only where a match can start; at every cut of bodies holding
    secret fields (plain and inside a JSON string), tokens, userinfo and their near misses, the
    piece's end is redacted from the same byte as by searching the whole window for each net."""
    from inspector.redact import _OPEN_FIELD, _OPEN_TOKEN, _OPEN_URLS, _open_tails

    def start(matches) -> int | None:
        starts = [m.start(group) for m in matches if m is not None for group in m.re.groupindex if m.start(group) >= 0]
        return min(starts, default=None)

    bodies = [
        json.dumps({"messages": [{"role": "user", "content": "max_tokens and a key"}], "api_key": token("k"),
                    "note": f"use {shaped('ghp_', 36)} or AKIA", "Access-Token": "t-0123456789"}).encode(),
        json.dumps({"arguments": json.dumps({"password": "p\"w1 long enough", "user": "me"})}).encode(),
        b'data: {"delta": "see postgres://u:' + b"hunter2-hunter2@db/x and sk-proj-" + b"a1" * 20 + b'"}\n\n',
        b'{"text": "sk-learn and eyJ alone, xoxb" , "secretive": 1, "refreshToken": "r' + b"9" * 40 + b'"}',
        b'{"url": "postgres:\\/\\/u:hunter2-hunter2@db\\/x", "hook": "https:\\/\\/hooks.slack.com\\/services\\/T0\\/B1"}',
    ]
    for body in bodies:
        for cut in range(1, len(body) + 1):
            window = body[:cut]
            expected = start([net.search(window) for net in (_OPEN_FIELD, _OPEN_TOKEN, *(net for _, net in _OPEN_URLS))])
            assert start(_open_tails(window)) == expected, window


def test_a_flows_request_is_scanned_once_across_its_redactions():
    """The writer redacts a flow's request for its pending row, its stream progress and its final
    row: with the scans of the first kept (redact.scrubber's `scans`), the later ones take the same
    findings instead of scanning again, and redact exactly as a fresh scan does. A body that is
    not byte for byte the one scanned (the same length, one secret more) is scanned afresh."""
    from inspector.redact import scrubber

    access = token("opaque-access")
    request = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "api_key": access}).encode()
    flow = Flow(id=1, session_id=1, started_at=0.0, method="POST", path="/v1/chat/completions",
                request_headers=[("content-type", "application/json")], request_body=request,
                upstream_request_body=request, response_body=b'{"ok": true}')
    scans: list = []
    pending = redacted(flow, request_only=True, scans=scans)
    assert [(body, form) for body, form, _ in scans] == [(request, False)]  # the upstream copy is the same bytes
    first = scans[0][2]
    later = scrubber(flow, scans=scans)
    assert later._scanned[0][2] is first and later._scanned[1][2] is first  # taken, not scanned again
    assert len(scans) == 1  # a response body is not kept: it changes while the flow streams
    fresh = scrubber(flow)
    assert (later.raw, later.data(request)) == (fresh.raw, fresh.data(request))
    assert redacted(flow, scans=scans) == redacted(flow)
    assert access.encode() not in pending.request_body
    swapped = ("sk-" + "a1" * 40)[:len(access)].encode()  # the same length, a token of another key
    changed = replace(flow, request_body=request.replace(access.encode(), swapped), upstream_request_body=None)
    assert len(changed.request_body) == len(request) and changed.request_body != request
    again = scrubber(changed, scans=scans)
    assert again._scanned[0][2] is not first and again.raw == scrubber(changed).raw
    assert swapped in again.raw


@pytest.mark.parametrize("body, value", [
    # A value with JSON escapes in it (`\u0041`, `\/`, `\"`), in a body ...
    (b'data: {"api_key": "abcdefgh\\u0041ijkl\\/mnop\\"qrst"}\n\n', b'abcdefgh\\u0041ijkl\\/mnop\\"qrst'),
    # ... and in a tool call's arguments, a JSON string inside a JSON string (its escapes escaped again).
    (b'data: {"arguments": "{\\"password\\": \\"pw\\\\\\"12\\\\\\\\34\\\\n56\\"}"}\n\n', b'pw\\\\\\"12\\\\\\\\34\\\\n56'),
])
def test_a_secret_fields_value_cut_inside_an_escape_leaves_no_part_of_it_on_disk(body, value):
    """Stream progress scrubs each piece as it is written, knowing only what came before it. A
    value cut right after the backslash of an escape was not an open secret to the nets (the value's
    pattern wants the whole escape), so its start was written as it came: `"api_key": "abcdefgh\\`.
    At every cut, into two pieces and into pieces of three bytes, no start of the value of four
    bytes or more is written."""
    from inspector.redact import Scrubber

    starts = [value[:size] for size in range(4, len(value) + 1)]
    at = body.index(value)
    for cut in range(at, at + len(value)):
        scrub = Scrubber(())
        written = scrub.stream(b"", [body[:cut]]) + scrub.stream(body[:cut], [body[cut:]])
        assert not [start for start in starts if start in b"".join(written)], (cut, written)
    pieces = [body[start:start + 3] for start in range(0, len(body), 3)]
    for first in range(3):  # the three ways pieces of three bytes fall on the value
        scrub = Scrubber(())
        written = [b"".join(pieces[:first + 1])]
        written = scrub.stream(b"", written)
        for index in range(first + 1, len(pieces)):
            written += scrub.stream(b"".join(pieces[:index]), [pieces[index]])
        assert not [start for start in starts if start in b"".join(written)], (first, written)


@pytest.mark.parametrize("text, expected", [
    (b'{"dsn": "postgres:\\/\\/admin:hunter2-secret@db.internal\\/app"}',
     b'{"dsn": "postgres:\\/\\/admin:****@db.internal\\/app"}'),
    (b'{"hook": "https:\\/\\/hooks.slack.com\\/services\\/T0AB\\/B1CD\\/abcdefgh1234"}',
     b'{"hook": "https:\\/\\/hooks.slack.com\\/services\\/[redacted]"}'),
    # Near misses: no password, and a slash escaped once only.
    (b'{"home": "https:\\/\\/admin@example.com\\/", "odd": "https:\\//user:pass-word@h"}',
     b'{"home": "https:\\/\\/admin@example.com\\/", "odd": "https:\\//user:pass-word@h"}'),
])
def test_a_url_in_json_that_escapes_its_slashes_has_its_password_and_webhook_redacted(text, expected):
    """PHP's json_encode (and the JavaScript libraries that copy it) writes `/` as `\\/`: a URL's
    `://` becomes `:\\/\\/`, which the URL net, looking for `://`, did not see. Whole and as a
    stream cut at every byte."""
    from inspector.redact import Scrubber

    assert Scrubber(()).data(text) == expected
    for cut in range(1, len(text)):
        scrub = Scrubber(())
        written = scrub.stream(b"", [text[:cut]]) + scrub.stream(text[:cut], [text[cut:]])
        if expected != text:
            assert b"hunter2" not in b"".join(written) and b"abcdefgh1234" not in b"".join(written), cut


def test_the_field_names_found_once_for_a_whole_text_give_each_window_of_it_the_same_open_tails():
    """Scrubber.stream looks for the secret field names once over the text it scrubs and gives
    those in its last _CONTEXT bytes to _open_tails: at every start of the window, one falling on a
    field's quote, inside its name and after it included, the open tails are those the window's own
    search finds."""
    from inspector.redact import _CONTEXT, _field_quotes, _open_tails

    field = b'"refresh_token": "rt-9876543210'  # open where the text ends
    text = b'{"pad": "' + b"p" * (_CONTEXT - 20) + b'", "client_secret": "cs-0123456789abcdef", ' + field
    quotes = _field_quotes(text)
    at = text.index(field)

    def spans(matches):
        return sorted((m.start(), m.end()) for m in matches)

    found = set()
    for start in range(at - 60, at + len(field)):
        window = text[start:]
        found.add(len(_open_tails(window)))
        assert spans(_open_tails(window, [q - start for q in quotes if q >= start])) == spans(_open_tails(window)), start
    assert found == {0, 1}  # the field open in the windows that start at its quote or before, not in the others
