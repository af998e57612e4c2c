"""Nothing leaked: every credential a client sends, by any of its names, and every echo of it
(error bodies, streams, aiohttp's error text, the upstream URL) stays out of every artefact:
the store's files, `flows --json`, exports, `record`'s output. Store and exports are private files."""

from __future__ import annotations

import base64
import json
import os
import secrets as random
import signal
import socketserver
import stat
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from inspector.export import write_fixture
from inspector.flow import Chunk, Flow, FlowState
from inspector.mock import json_response
from inspector.proxy import Forwarder
from inspector.redact import REDACTED, REDACTED_USERINFO, redact_query, redact_url, redacted, secret_values
from inspector.replay import replay
from inspector.store import Store

from .conftest import Events



def token(kind: str) -> str:
    return f"{kind}-{random.token_hex(8)}"


class EchoUpstream(socketserver.ThreadingTCPServer):
    """A raw HTTP/1.1 upstream that says back everything it was sent, as providers' error bodies
    do with a bad key: `/echo` as a 401 JSON error, `/stream` as an SSE stream cut in 5-byte
    chunks (so a key is split across chunks), `/garbage` as an unparseable status line (aiohttp's
    error text then carries the full URL). One request per connection."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _EchoHandler)
        self.requests: list[bytes] = []
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
        if target.startswith(b"/garbage"):
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
    assert rows[2]["error"].startswith("upstream failed before answering: ClientResponseError")
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
    from inspector.tui.app import InspectorApp

    forwarder = Forwarder("https://me:hunter2-password@gw.example/v1", store=store)
    assert InspectorApp(store=store, forwarder=forwarder).listening.upstream == "https://me:****@gw.example/v1"


def test_the_upstream_userinfo_is_sent_as_basic_auth_unless_the_client_brings_its_own(mock, store):
    events = Events()
    forwarder = Forwarder(f"http://gw-user:pa55-word-1@127.0.0.1:{mock.port}", store=store, port=0, on_event=events)
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
