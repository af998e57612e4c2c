"""Proxy mode: clients configured only with a proxy and a CA reach a provider through the forwarder.
A provider host on the intercept list is mapped to a local TLS mock (its own test CA, trusted
through `upstream_ca`); its flows are recorded like any other. Other hosts are tunnelled untouched
and unrecorded; tunnels to loopback addresses need allowing by name; a client that does not trust
the proxy CA fails, and the forwarder counts and shows why."""

from __future__ import annotations

import dataclasses
import os
import re
import resource
import socket
import ssl
import subprocess
import sys
import threading
import time

import httpx
import openai
import pytest
import trustme

from inspector.flow import ReplayKind
from inspector.mock import MockUpstream
from inspector.proxy import Forwarder, ForwarderError
from inspector.proxy.ca import LocalCA
from inspector.proxy.connect import InterceptList
from inspector.proxy.server import ClientLimits
from inspector.redact import REDACTED
from inspector.replay import ReplayError, replay, replay_stored
from inspector.store import Store
from inspector.proxy.options import DEFAULT_MAX_TUNNELS, DEFAULT_TUNNEL_IDLE, Options, ProxyOptions

from .conftest import Events

CHAT = "/v1/chat/completions"
BODY = b'{"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]}'
KEY = "sk-proxy-mode-secret"


@pytest.fixture(scope="module")
def upstream_tls(tmp_path_factory):
    """A test CA of the upstream's own (not the proxy's) and a certificate it signed for loopback."""
    directory = tmp_path_factory.mktemp("upstream-tls")
    ca = trustme.CA()
    ca.cert_pem.write_to_path(directory / "ca.pem")
    ca.issue_cert("127.0.0.1", "localhost").private_key_and_cert_chain_pem.write_to_path(directory / "chain.pem")
    return directory


@pytest.fixture
def tls_mock(upstream_tls):
    chain = str(upstream_tls / "chain.pem")
    with MockUpstream(tls=(chain, chain)) as upstream:
        yield upstream


class ProxyRig:
    def __init__(self, mock: MockUpstream, store, upstream_tls, ca_dir, upstream: str = "http://127.0.0.1:9",
                 allow_connect=(), tunnel_idle=DEFAULT_TUNNEL_IDLE, max_tunnels=DEFAULT_MAX_TUNNELS,
                 **options) -> None:
        self.mock = mock
        self.store = store
        self.events = Events()
        proxy = ProxyOptions(intercept=(f"api.openai.com={mock.base_url}", f"*.example.test={mock.base_url}/base"),
                             allow_connect=allow_connect, ca_dir=ca_dir, upstream_ca=upstream_tls / "ca.pem",
                             tunnel_idle=tunnel_idle, max_tunnels=max_tunnels)
        self.forwarder = Forwarder(Options(upstream, port=0, proxy=proxy, **options), store=store,
                                   on_event=self.events)
        self.forwarder.start()
        self.ca = ca_dir / "toolwire-ca.pem"

    @property
    def proxy(self) -> str:
        return self.forwarder.base_url

    def trusting(self) -> ssl.SSLContext:
        """A client context that trusts the proxy CA as this forwarder makes it (on the first
        intercepted tunnel, or now): constrained to what it intercepts."""
        LocalCA(self.ca.parent, self.forwarder.connect.intercepts.hosts)
        return ssl.create_default_context(cafile=str(self.ca))

    def refused(self, count: int, timeout: float = 10.0) -> str | None:
        """Wait (polling, the counter lives on the forwarder's loop) for `count` refusals; the last one."""
        deadline = time.monotonic() + timeout
        while self.forwarder.access.refused < count:
            assert time.monotonic() < deadline, f"{self.forwarder.access.refused} of {count} refusals"
            time.sleep(0.01)
        return self.forwarder.access.last_refusal


@pytest.fixture
def proxy_rig(tls_mock, store, upstream_tls, tmp_path):
    rig = ProxyRig(tls_mock, store, upstream_tls, tmp_path / "proxy-ca", allow_connect=["localhost"])
    yield rig
    rig.forwarder.stop()


def test_httpx_through_the_proxy_reaches_the_intercepted_host_and_the_flow_is_recorded(proxy_rig):
    with httpx.Client(proxy=proxy_rig.proxy, verify=proxy_rig.trusting(), timeout=10) as client:
        response = client.post(f"https://api.openai.com{CHAT}", content=BODY,
                               headers={"authorization": f"Bearer {KEY}", "content-type": "application/json"})
        assert response.status_code == 200
        assert response.json()["choices"][0]["message"]["content"] == "Hello from the mock upstream."
        # A second tunnel to a wildcard host, whose upstream has a base path.
        assert client.get("https://eu.example.test/v1/models").status_code == 404
    proxy_rig.events.completed(2)
    received = proxy_rig.mock.received
    assert [(r.method, r.path, r.body) for r in received] == [("POST", CHAT, BODY), ("GET", "/base/v1/models", b"")]
    assert received[0].header("authorization") == f"Bearer {KEY}"
    assert received[0].header("host") == f"127.0.0.1:{proxy_rig.mock.port}"
    rows = proxy_rig.store.rows(order="time")
    assert sorted((r.id, r.method, r.path, r.dialect, r.status, r.state, r.mode) for r in rows) == [
        (1, "POST", CHAT, "openai-chat", 200, "complete", "passthrough"),
        (2, "GET", "/v1/models", "", 404, "complete", "passthrough")]
    first = proxy_rig.store.get(1)
    assert first.upstream_url == f"{proxy_rig.mock.base_url}{CHAT}"
    assert dict(first.request_headers)["authorization"] == REDACTED
    assert KEY.encode() not in proxy_rig.store.path.read_bytes()
    assert proxy_rig.forwarder.access.refused == 0


def test_the_openai_sdk_streams_through_the_proxy(proxy_rig):
    http_client = httpx.Client(proxy=proxy_rig.proxy, verify=proxy_rig.trusting())
    with openai.OpenAI(api_key=KEY, http_client=http_client, max_retries=0) as client:
        stream = client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "hi"}],
                                                stream=True)
        text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert text == "Hello from the mock upstream."
    (event,) = proxy_rig.events.completed(1)
    assert (event.row.path, event.row.dialect, event.row.streamed, event.row.state, event.row.errors) == (
        CHAT, "openai-chat", True, "complete", 0)


def test_an_sdk_given_only_https_proxy_and_ssl_cert_file_is_recorded(proxy_rig, tmp_path):
    bundle = LocalCA(proxy_rig.ca.parent, proxy_rig.forwarder.connect.intercepts.hosts).write_bundle(b"")  # only the proxy CA: nothing else is reached
    script = ("import openai; c = openai.OpenAI(api_key='sk-env-only', max_retries=0); "
              "print(c.chat.completions.create(model='gpt-test', messages=[{'role': 'user', 'content': 'hi'}])"
              ".choices[0].message.content)")
    env = {**os.environ, "HTTPS_PROXY": proxy_rig.proxy, "SSL_CERT_FILE": str(bundle), "NO_PROXY": ""}
    env.pop("OPENAI_BASE_URL", None)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "Hello from the mock upstream.\n", "")
    (event,) = proxy_rig.events.completed(1)
    assert (event.row.path, event.row.dialect, event.row.status) == (CHAT, "openai-chat", 200)


def test_a_host_off_the_intercept_list_is_tunnelled_untouched_and_not_recorded(proxy_rig, upstream_tls):
    # The client verifies the mock's own certificate: the bytes went through unread.
    verify = ssl.create_default_context(cafile=str(upstream_tls / "ca.pem"))
    with httpx.Client(proxy=proxy_rig.proxy, verify=verify, timeout=10) as client:
        response = client.post(f"https://localhost:{proxy_rig.mock.port}{CHAT}", content=BODY)
        assert response.status_code == 200
        assert client.post(f"https://localhost:{proxy_rig.mock.port}{CHAT}", content=BODY).status_code == 200
    assert proxy_rig.mock.wait_answered(2)
    assert [r.path for r in proxy_rig.mock.received] == [CHAT, CHAT]
    assert (proxy_rig.store.count(), proxy_rig.forwarder.connect.tunnelled, proxy_rig.forwarder.access.refused) == (
        0, 1, 0)


def connect(port: int, target: str, headers: str = "") -> tuple[socket.socket, bytes]:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n{headers}\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        data = sock.recv(65536)
        if not data:
            break
        head += data
    return sock, head


@pytest.mark.parametrize("target", ["127.0.0.1:{port}", "[::1]:{port}", "[::ffff:127.0.0.1]:{port}",
                                    "[::127.0.0.1]:{port}", "[64:ff9b::7f00:1]:{port}", "[2002:7f00:1::]:{port}"])
def test_a_tunnel_to_a_loopback_address_not_allowed_by_name_is_refused(proxy_rig, target):
    target = target.format(port=proxy_rig.mock.port)
    sock, answer = connect(proxy_rig.forwarder.port, target)
    sock.close()
    host = target.rpartition(":")[0].strip("[]")
    why = (f"refused: CONNECT {host}:{proxy_rig.mock.port} leads to a loopback or private address; pass "
           f"--allow-connect {host} to tunnel there")
    assert answer.split(b"\r\n")[0] == b"HTTP/1.1 403 Forbidden"
    assert answer.endswith(b'{"error":{"type":"toolwire_connect_not_allowed","message":"' + why.encode()
                           + b'","code":403}}')
    assert proxy_rig.refused(1) == why
    assert (proxy_rig.mock.received, proxy_rig.store.count()) == ([], 0)


def test_a_client_that_does_not_trust_the_proxy_ca_fails_and_the_refusal_is_shown(proxy_rig):
    with httpx.Client(proxy=proxy_rig.proxy, timeout=10) as client:  # certifi's roots only
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            client.post(f"https://api.openai.com{CHAT}", content=BODY)
    assert proxy_rig.refused(1) == (
        "TLS with a client for api.openai.com failed (TLSV1_ALERT_UNKNOWN_CA): a client that does not trust the "
        "proxy CA refuses its certificate; `toolwire-inspect ca` says how to trust it")
    assert (proxy_rig.mock.received, proxy_rig.store.count()) == ([], 0)


def test_a_request_in_a_tunnel_must_name_the_tunnels_host(proxy_rig):
    context = proxy_rig.trusting()
    for host, status in (("api.openai.com:443", b"200"), ("evil.example:443", b"421"), ("api.openai.com:8443", b"421")):
        sock, answer = connect(proxy_rig.forwarder.port, "api.openai.com:443")
        assert answer == b"HTTP/1.1 200 Connection established\r\n\r\n"
        with context.wrap_socket(sock, server_hostname="api.openai.com") as tls:
            tls.sendall(f"POST {CHAT} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len(BODY)}\r\n"
                        "Connection: close\r\n\r\n".encode() + BODY)
            assert tls.recv(65536).split(b" ")[1] == status, host
    assert [r.path for r in proxy_rig.mock.received] == [CHAT]
    assert proxy_rig.refused(2) == ("refused: Host 'api.openai.com:8443' is not the host this tunnel was opened "
                                    "for (api.openai.com:443)")


def test_beyond_loopback_a_tunnel_needs_the_token_as_the_proxy_password(tls_mock, store, upstream_tls, tmp_path):
    rig = ProxyRig(tls_mock, store, upstream_tls, tmp_path / "ca", host="0.0.0.0", allow_remote=True)
    try:
        sock, answer = connect(rig.forwarder.port, "api.openai.com:443")
        sock.close()
        assert answer.split(b"\r\n")[0] == b"HTTP/1.1 403 Forbidden"
        assert rig.refused(1).startswith("refused: this server listens beyond loopback and needs its access token")
        proxy = f"http://token:{rig.forwarder.access.token}@127.0.0.1:{rig.forwarder.port}"
        with httpx.Client(proxy=proxy, verify=rig.trusting(), timeout=10) as client:
            assert client.post(f"https://api.openai.com{CHAT}", content=BODY).status_code == 200
        rig.events.completed(1)
    finally:
        rig.forwarder.stop()


@pytest.mark.parametrize(("spec", "why"), [
    ("api.openai.com=ftp://x", "--intercept 'api.openai.com=ftp://x': the upstream after '=' must be an http(s) "
                               "base URL without credentials, query or fragment, such as https://127.0.0.1:9443"),
    ("https://api.openai.com", "--intercept 'https://api.openai.com': expected a host name such as api.example.com "
                               "or *.example.com, optionally =URL of the upstream to send its requests to"),
])
def test_a_bad_intercept_is_refused_at_start(store, spec, why):
    with pytest.raises(ForwarderError) as caught:
        Forwarder(Options("http://127.0.0.1:9", port=0, proxy=ProxyOptions(intercept=[spec])), store=store)
    assert str(caught.value) == why


def test_record_serves_proxy_mode_with_its_options(tls_mock, upstream_tls, tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "XDG_DATA_HOME": str(tmp_path)}  # the CA goes under tmp_path
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector", "record", "--upstream", "http://127.0.0.1:9", "--port", "0",
         "--store", str(tmp_path / "flows.sqlite3"), "--intercept", f"api.openai.com={tls_mock.base_url}",
         "--upstream-ca", str(upstream_tls / "ca.pem"), "--max-tunnels", "1", "--tunnel-idle", "30"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stderr.readline()
        while line and not line.startswith("or, for a client that takes no base URL"):
            line = proc.stderr.readline()  # the base-URL settings come first
        proxy = line.split("HTTPS_PROXY=")[1].split()[0]
        assert line == (f"or, for a client that takes no base URL: HTTPS_PROXY={proxy} and trust the CA "
                        "`toolwire-inspect ca` prints\n")
        with httpx.Client(proxy=proxy, verify=ssl.create_default_context(
                cafile=str(LocalCA(tmp_path / "toolwire-inspect" / "ca").cert_path)), timeout=10) as client:
            assert client.post(f"https://api.openai.com{CHAT}", content=BODY).status_code == 200
            # The client keeps its tunnel open: the one --max-tunnels allows.
            sock, answer = connect(int(proxy.rpartition(":")[2]), "api.openai.com:443")
            sock.close()
            assert answer.split(b"\r\n")[0] == b"HTTP/1.1 503 Service Unavailable"
        assert proc.stdout.readline().startswith(f"#1 POST {CHAT} 200 ")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_tunnel_options_reach_the_forwarder_and_refuse_what_is_not_above_zero(capsys):
    from inspector.cli import parse_args
    from inspector.cli.common import options

    for command in (["record"], []):  # `record` and the TUI
        assert options(parse_args([*command, "--tunnel-idle", "2.5", "--max-tunnels", "7"])).proxy == ProxyOptions(
            tunnel_idle=2.5, max_tunnels=7)
        assert options(parse_args(command)).proxy == ProxyOptions()  # the forwarder's defaults
    refused = []
    for option, value in (("--tunnel-idle", "0"), ("--tunnel-idle", "nan"), ("--tunnel-idle", "inf"),
                          ("--max-tunnels", "0"), ("--max-tunnels", "1.5")):
        with pytest.raises(SystemExit):
            parse_args(["record", option, value])
        refused.append(capsys.readouterr().err.splitlines()[-1])
    assert refused == [
        "toolwire-inspect record: error: argument --tunnel-idle: '0' is not a number above 0",
        "toolwire-inspect record: error: argument --tunnel-idle: 'nan' is not a number above 0",
        "toolwire-inspect record: error: argument --tunnel-idle: 'inf' is not a number above 0",
        "toolwire-inspect record: error: argument --max-tunnels: '0' is not a whole number above 0",
        "toolwire-inspect record: error: argument --max-tunnels: '1.5' is not a whole number above 0"]


def test_an_unreadable_upstream_ca_is_refused_at_start(store, tmp_path):
    (tmp_path / "ca.pem").write_text("not pem")
    with pytest.raises(ForwarderError, match=rf"^--upstream-ca {tmp_path / 'ca.pem'}: cannot load it as PEM "):
        Forwarder(Options("http://127.0.0.1:9", port=0, proxy=ProxyOptions(upstream_ca=tmp_path / "ca.pem")), store=store)


class OneShotServer:
    """A raw TCP server for one connection: reads `expect` bytes, answers them reversed, then
    closes (or keeps the connection open when `linger`, until the test ends)."""

    def __init__(self, expect: int, linger: bool = False) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.expect = expect
        self.linger = linger
        self.closed = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            got = b""
            while len(got) < self.expect:
                got += conn.recv(65536)
            conn.sendall(got[::-1])
            if self.linger:
                conn.settimeout(30)
                while conn.recv(65536):  # until the tunnel is cut
                    pass
        self.closed.set()

    def close(self) -> None:
        self.sock.close()


def read_to_end(sock: socket.socket) -> bytes:
    parts = []
    while data := sock.recv(65536):
        parts.append(data)
    return b"".join(parts)


def test_a_tunnel_relays_bytes_both_ways_and_closes_when_the_far_side_does(proxy_rig):
    payload = bytes(range(256)) * 4096  # 1 MiB, every byte value, some sent with the CONNECT head itself
    server = OneShotServer(len(payload))
    try:
        sock = socket.create_connection(("127.0.0.1", proxy_rig.forwarder.port), timeout=10)
        with sock:
            sock.sendall(f"CONNECT localhost:{server.port} HTTP/1.1\r\nHost: localhost:{server.port}\r\n\r\n".encode()
                         + payload[:1000])
            sock.sendall(payload[1000:])
            answer = read_to_end(sock)
        assert answer == b"HTTP/1.1 200 Connection established\r\n\r\n" + payload[::-1]
    finally:
        server.close()
    assert (proxy_rig.store.count(), proxy_rig.forwarder.connect.tunnelled) == (0, 1)


def test_stopping_the_forwarder_cuts_its_tunnels(proxy_rig):
    server = OneShotServer(5, linger=True)
    try:
        sock, head = connect(proxy_rig.forwarder.port, f"localhost:{server.port}")
        with sock:
            assert head == b"HTTP/1.1 200 Connection established\r\n\r\n"
            sock.sendall(b"hello")
            assert sock.recv(5) == b"olleh"
            proxy_rig.forwarder.stop()
            assert read_to_end(sock) == b""
        assert server.closed.wait(10)
    finally:
        server.close()


def test_the_intercept_list_matches_hosts_and_subdomains_exactly():
    intercepts = InterceptList(["*.corp.test=https://127.0.0.1:9443/v1", "llm.internal"])
    cases = [("api.openai.com", 443), ("api.openai.com", 8443), ("my-resource.openai.azure.com", 443),
             ("openai.azure.com", 443), ("evilopenai.azure.com", 443), ("us-central1-aiplatform.googleapis.com", 443),
             ("a.b.corp.test", 443), ("corp.test", 443), ("llm.internal", 443), ("api.openai.com.evil.test", 443),
             ("example.com", 443)]
    found = [(host, port, None if (hit := intercepts.match(host, port)) is None else
              (hit.scheme, hit.authority, hit.base_path, hit.shown)) for host, port in cases]
    assert found == [
        ("api.openai.com", 443, ("https", "api.openai.com", "", "https://api.openai.com")),
        ("api.openai.com", 8443, ("https", "api.openai.com:8443", "", "https://api.openai.com:8443")),
        ("my-resource.openai.azure.com", 443, ("https", "my-resource.openai.azure.com", "",
                                               "https://my-resource.openai.azure.com")),
        ("openai.azure.com", 443, None),
        ("evilopenai.azure.com", 443, None),
        ("us-central1-aiplatform.googleapis.com", 443, ("https", "us-central1-aiplatform.googleapis.com", "",
                                                        "https://us-central1-aiplatform.googleapis.com")),
        ("a.b.corp.test", 443, ("https", "127.0.0.1:9443", "/v1", "https://127.0.0.1:9443/v1")),
        ("corp.test", 443, None),
        ("llm.internal", 443, ("https", "llm.internal", "", "https://llm.internal")),
        ("api.openai.com.evil.test", 443, None),
        ("example.com", 443, None),
    ]


@pytest.mark.parametrize("target", ["example.com:0", "example.com:99999", "exa_mple..com:443", "[::1:443",
                                    "example.com"])
def test_a_connect_target_that_is_not_host_port_is_refused(proxy_rig, target):
    sock, answer = connect(proxy_rig.forwarder.port, target)
    sock.close()
    why = f"refused: CONNECT target {target!r} is not host:port"
    assert answer.split(b"\r\n")[0] == b"HTTP/1.1 400 Bad Request"
    assert answer.endswith(b'{"error":{"type":"toolwire_bad_target","message":"' + why.encode() + b'","code":400}}')
    assert proxy_rig.refused(1) == why
    assert (proxy_rig.mock.received, proxy_rig.store.count()) == ([], 0)


def test_a_name_that_resolves_to_loopback_is_refused_unless_allowed(tls_mock, store, upstream_tls, tmp_path):
    rig = ProxyRig(tls_mock, store, upstream_tls, tmp_path / "ca")  # no --allow-connect
    try:
        sock, answer = connect(rig.forwarder.port, f"localhost:{tls_mock.port}")
        sock.close()
        assert answer.split(b"\r\n")[0] == b"HTTP/1.1 403 Forbidden"
        assert rig.refused(1) == (f"refused: CONNECT localhost:{tls_mock.port} leads to a loopback or private "
                                  f"address; pass --allow-connect localhost to tunnel there")
    finally:
        rig.forwarder.stop()


@pytest.mark.parametrize("mode", [{"translate": "openai-chat:anthropic"}, {"repair": True}])
def test_intercepted_flows_are_passthrough_whatever_the_forwarders_mode(tls_mock, store, upstream_tls, tmp_path,
                                                                        mode):
    rig = ProxyRig(tls_mock, store, upstream_tls, tmp_path / "ca", **mode)
    try:
        with httpx.Client(proxy=rig.proxy, verify=rig.trusting(), timeout=10) as client:
            assert client.post(f"https://api.openai.com{CHAT}", content=BODY).status_code == 200
        (event,) = rig.events.completed(1)
    finally:
        rig.forwarder.stop()
    assert [(r.path, r.body) for r in tls_mock.received] == [(CHAT, BODY)]
    assert (event.row.mode, event.flow.translate, event.flow.upstream_request_body) == ("passthrough", None, None)


def test_connect_is_not_served_by_the_mock_nor_inside_a_tunnel(proxy_rig):
    plain = MockUpstream().start()
    try:
        sock, answer = connect(plain.port, "api.openai.com:443")
        sock.close()
        assert answer.split(b"\r\n")[0] == b"HTTP/1.1 405 Method Not Allowed"
    finally:
        plain.stop()
    sock, answer = connect(proxy_rig.forwarder.port, "api.openai.com:443")
    with proxy_rig.trusting().wrap_socket(sock, server_hostname="api.openai.com") as tls:
        tls.sendall(b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
        assert tls.recv(65536).split(b"\r\n")[0] == b"HTTP/1.1 405 Method Not Allowed"
    assert (proxy_rig.mock.received, proxy_rig.store.count()) == ([], 0)


def test_proxy_mode_works_on_the_routes_shared_port_and_its_flows_name_no_route(tls_mock, store, upstream_tls,
                                                                               tmp_path):
    # `toolwire-inspect` with routes (the defaults included) still answers CONNECT on its port.
    from inspector.proxy.routes import open_forwarder, resolve

    events = Events()
    table = resolve(routes=["oa=http://127.0.0.1:9", "an=http://127.0.0.1:9"], cwd=tmp_path)
    router = open_forwarder(table, Options(port=0, proxy=ProxyOptions(**{
        "ca_dir": tmp_path / "proxy-ca", "intercept": [f"api.openai.com={tls_mock.base_url}"],
        "upstream_ca": upstream_tls / "ca.pem"})), store=store, on_event=events)
    with router:
        LocalCA(tmp_path / "proxy-ca")
        trusting = ssl.create_default_context(cafile=str(tmp_path / "proxy-ca" / "toolwire-ca.pem"))
        with httpx.Client(proxy=router.base_url, verify=trusting, timeout=10) as client:
            response = client.post(f"https://api.openai.com{CHAT}", content=BODY,
                                   headers={"authorization": f"Bearer {KEY}", "content-type": "application/json"})
        assert response.status_code == 200
        events.completed(1)
    store.flush()
    [row] = store.rows()
    assert (row.route, row.path, row.dialect, row.status) == ("", CHAT, "openai-chat", 200)
    assert store.get(row.id).upstream_url == f"{tls_mock.base_url}{CHAT}"


# -- tunnels: idle timeout and bound ------------------------------------------------------------

ESTABLISHED = b"HTTP/1.1 200 Connection established\r\n\r\n"


class TalkingServer:
    """A raw TCP server for one connection: sends `ticks` single bytes `pace` seconds apart, then
    hangs up, or keeps what it receives until the tunnel is cut."""

    def __init__(self, ticks: int = 0, pace: float = 0.0, hang_up: bool = False) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.ticks, self.pace, self.hang_up = ticks, pace, hang_up
        self.received = b""
        self.closed = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            for _ in range(self.ticks):
                conn.sendall(b".")
                threading.Event().wait(self.pace)  # pacing the bytes, not waiting on anything
            conn.settimeout(30)
            while not self.hang_up and (data := conn.recv(65536)):  # until the tunnel is cut
                self.received += data
        self.closed.set()

    def close(self) -> None:
        self.sock.close()


def read_response(sock: socket.socket) -> bytes:
    """One whole response with a content-length, head and body."""
    data = b""
    while b"\r\n\r\n" not in data and (more := sock.recv(65536)):
        data += more
    head = data.partition(b"\r\n\r\n")[0].lower()
    length = int(head.partition(b"content-length: ")[2].partition(b"\r\n")[0])
    while len(data) < len(head) + 4 + length and (more := sock.recv(65536)):
        data += more
    return data


def open_tunnels(rig: ProxyRig, count: int, timeout: float = 10.0) -> None:
    """Wait (polling: the count lives on the forwarder's loop) until `count` tunnels are open."""
    deadline = time.monotonic() + timeout
    while rig.forwarder.connect.open_tunnels != count:
        assert time.monotonic() < deadline, f"{rig.forwarder.connect.open_tunnels} tunnels open, not {count}"
        threading.Event().wait(0.01)


@pytest.mark.parametrize("then", ["listens", "hangs up"])
def test_a_far_side_that_speaks_first_is_relayed_from_its_first_byte(proxy_rig, then):
    # SSH, SMTP and the like greet before the client says anything: those bytes (and the far
    # side's hanging up) may reach the forwarder before the client's end of the tunnel is joined.
    server = TalkingServer(ticks=3, hang_up=then == "hangs up")
    try:
        sock, head = connect(proxy_rig.forwarder.port, f"localhost:{server.port}")
        with sock:
            if then == "hangs up":
                answer = head + read_to_end(sock)
            else:
                answer = head
                while len(answer) < len(ESTABLISHED) + 3 and (data := sock.recv(65536)):
                    answer += data
        assert answer == ESTABLISHED + b"..."
        assert server.closed.wait(10)
    finally:
        server.close()
    assert (proxy_rig.forwarder.connect.tunnelled, proxy_rig.forwarder.access.refused) == (1, 0)


def test_an_idle_tunnel_is_closed_both_ways_after_the_idle_timeout(tls_mock, store, upstream_tls, tmp_path):
    rig = ProxyRig(tls_mock, store, upstream_tls, tmp_path / "ca", allow_connect=["localhost"], tunnel_idle=0.5)
    server = TalkingServer()
    try:
        sock, head = connect(rig.forwarder.port, f"localhost:{server.port}")
        with sock:
            assert head == ESTABLISHED
            started = time.monotonic()
            assert read_to_end(sock) == b""  # the EOF, within the socket's 10 s deadline
            assert time.monotonic() - started < 5  # the idle timer's doing, not another deadline's
        assert server.closed.wait(10)
        open_tunnels(rig, 0)
    finally:
        server.close()
        rig.forwarder.stop()
    assert (rig.forwarder.connect.tunnelled, rig.forwarder.access.refused) == (1, 0)


@pytest.mark.parametrize("talker", ["client", "server"])
def test_a_tunnel_busy_one_way_stays_open_past_the_idle_timeout_then_closes_once_idle(
        tls_mock, store, upstream_tls, tmp_path, talker):
    rig = ProxyRig(tls_mock, store, upstream_tls, tmp_path / "ca", allow_connect=["localhost"], tunnel_idle=0.3)
    ticks = 8  # a byte every 0.1 s: busy for more than twice the idle timeout
    server = TalkingServer(ticks=ticks if talker == "server" else 0, pace=0.1)
    try:
        sock, head = connect(rig.forwarder.port, f"localhost:{server.port}")
        with sock:
            started = time.monotonic()
            if talker == "client":
                for _ in range(ticks):
                    sock.sendall(b".")
                    threading.Event().wait(0.1)  # pacing the bytes, not waiting on anything
            # The server's first byte may come with the head.
            assert head + read_to_end(sock) == ESTABLISHED + (b"." * ticks if talker == "server" else b"")
            assert time.monotonic() - started >= 0.8
        assert server.closed.wait(10)
        assert server.received == (b"." * ticks if talker == "client" else b"")
    finally:
        server.close()
        rig.forwarder.stop()


def test_an_idle_intercepted_connection_is_closed_by_the_client_timeout(tls_mock, store, upstream_tls, tmp_path):
    # An intercepted tunnel is an HTTP connection of the forwarder's: its idle limits are the
    # server's (a request head within client_timeout, keep_alive between two requests).
    rig = ProxyRig(tls_mock, store, upstream_tls, tmp_path / "ca", limits=ClientLimits(client_timeout=0.5,
                                                                                       keep_alive=1))
    try:
        for requests in (0, 1):
            sock, head = connect(rig.forwarder.port, "api.openai.com:443")
            assert head == ESTABLISHED
            with rig.trusting().wrap_socket(sock, server_hostname="api.openai.com") as tls:
                open_tunnels(rig, 1)
                if requests:
                    tls.sendall(f"POST {CHAT} HTTP/1.1\r\nHost: api.openai.com\r\nContent-Length: {len(BODY)}"
                                "\r\n\r\n".encode() + BODY)
                    assert read_response(tls).startswith(b"HTTP/1.1 200 OK\r\n")
                started = time.monotonic()
                assert read_to_end(tls) == b""
                assert time.monotonic() - started < 5
            open_tunnels(rig, 0)
    finally:
        rig.forwarder.stop()
    assert (len(tls_mock.received), rig.forwarder.access.refused) == (1, 0)


def test_a_tunnel_beyond_the_bound_is_refused_while_the_others_and_plain_requests_are_served(
        tls_mock, store, upstream_tls, tmp_path):
    rig = ProxyRig(tls_mock, store, upstream_tls, tmp_path / "ca", upstream=tls_mock.base_url,
                   allow_connect=["localhost"], max_tunnels=2)
    server = TalkingServer()
    try:
        relayed, head = connect(rig.forwarder.port, f"localhost:{server.port}")
        assert head == ESTABLISHED
        sock, head = connect(rig.forwarder.port, "api.openai.com:443")
        assert head == ESTABLISHED
        intercepted = rig.trusting().wrap_socket(sock, server_hostname="api.openai.com")
        open_tunnels(rig, 2)  # one relayed, one intercepted: both count
        refused, answer = connect(rig.forwarder.port, "api.openai.com:443")
        why = "refused: 2 tunnels are open, as many as --max-tunnels allows"
        body = b'{"error":{"type":"toolwire_too_many_tunnels","message":"' + why.encode() + b'","code":503}}'
        assert answer + read_to_end(refused) == (
            b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(body), body))
        refused.close()
        assert rig.refused(1) == why
        # Plain requests and the open tunnels are served all the while.
        assert httpx.post(f"{rig.forwarder.base_url}{CHAT}", content=BODY, timeout=10).status_code == 200
        intercepted.sendall(f"POST {CHAT} HTTP/1.1\r\nHost: api.openai.com\r\nContent-Length: {len(BODY)}\r\n\r\n"
                            .encode() + BODY)
        assert read_response(intercepted).startswith(b"HTTP/1.1 200 OK\r\n")
        relayed.sendall(b"still here")
        # A tunnel that ends frees its place.
        relayed.close()
        assert server.closed.wait(10)
        assert server.received == b"still here"
        open_tunnels(rig, 1)
        again, head = connect(rig.forwarder.port, "api.openai.com:443")
        assert head == ESTABLISHED
        rig.trusting().wrap_socket(again, server_hostname="api.openai.com").close()
        intercepted.close()
        rig.events.completed(2)
    finally:
        server.close()
        rig.forwarder.stop()
    assert rig.forwarder.access.refused == 1


# -- replaying a flow recorded by interception ---------------------------------------------------

def record_intercepted(rig: ProxyRig, key: str = KEY) -> int:
    """One chat request through the proxy to api.openai.com; its flow's id."""
    with httpx.Client(proxy=rig.proxy, verify=rig.trusting(), timeout=10) as client:
        response = client.post(f"https://api.openai.com{CHAT}", content=BODY,
                                headers={"authorization": f"Bearer {key}", "content-type": "application/json"})
    assert response.status_code == 200
    (event,) = rig.events.completed(1)
    return event.flow.id


@pytest.mark.parametrize("kind", [ReplayKind.AS_RECORDED, ReplayKind.FIXED])
def test_an_intercepted_flow_replays_through_a_tunnel_to_its_host(proxy_rig, kind):
    original = record_intercepted(proxy_rig)
    new_id = replay_stored(proxy_rig.store, proxy_rig.forwarder, original, kind=kind)
    (_, event) = proxy_rig.events.completed(2)
    assert (event.flow.id, event.row.replay_of, event.row.status, event.row.state, event.row.mode, event.row.route,
            event.flow.upstream_url) == (new_id, original, 200, "complete", "passthrough", "",
                                         f"{proxy_rig.mock.base_url}{CHAT}")
    assert dict(event.flow.request_headers)["host"] == "api.openai.com"
    # The key the client sent, from the forwarder's memory, reached the host both times.
    assert [(r.path, r.header("authorization")) for r in proxy_rig.mock.received] == [(CHAT, f"Bearer {KEY}")] * 2
    assert (proxy_rig.forwarder.access.refused, proxy_rig.forwarder.connect.tunnelled) == (0, 0)


def test_an_intercepted_flow_replays_through_a_routers_shared_port(tls_mock, store, upstream_tls, tmp_path,
                                                                  monkeypatch, capsys):
    # The TUI's forwarder with no --upstream serves the default routes: the tunnel is the way in.
    from inspector.cli import main
    from inspector.proxy.routes import open_forwarder, resolve

    events = Events()
    router = open_forwarder(resolve(routes=["oa=http://127.0.0.1:9"], cwd=tmp_path), Options(port=0, proxy=ProxyOptions(**{"ca_dir": tmp_path / "proxy-ca", "upstream_ca": upstream_tls
                                                    / "ca.pem", "intercept": [f"api.openai.com={tls_mock.base_url}"]})), store=store, on_event=events)
    with router:
        context = ssl.create_default_context(cafile=str(LocalCA(tmp_path / "proxy-ca").cert_path))
        with httpx.Client(proxy=router.base_url, verify=context, timeout=10) as client:
            assert client.post(f"https://api.openai.com{CHAT}", content=BODY,
                               headers={"authorization": f"Bearer {KEY}"}).status_code == 200
        (first,) = events.completed(1)
        new_id = replay_stored(store, router, first.flow.id)
        (_, event) = events.completed(2)
    assert (event.flow.id, event.row.replay_of, event.row.status, event.row.route) == (new_id, first.flow.id, 200, "")
    assert [r.header("authorization") for r in tls_mock.received] == [f"Bearer {KEY}"] * 2
    # The replay command too, although the flow belongs to none of the session's routes.
    store.flush()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    # The intercept sends api.openai.com to the mock: its key goes there only when named.
    assert main(["replay", str(first.flow.id), "--store", str(store.path), "--upstream-ca",
                 str(upstream_tls / "ca.pem"), "--intercept", f"api.openai.com={tls_mock.base_url}",
                 "--key-host", "127.0.0.1"]) == 0
    assert re.fullmatch(rf"#\d+ replay of #{first.flow.id}: 200 complete\n", capsys.readouterr().out)
    assert [r.header("authorization") for r in tls_mock.received] == [f"Bearer {KEY}"] * 2 + ["Bearer sk-from-env"]


def test_an_intercepted_flow_is_not_replayed_where_the_intercept_list_does_not_send_it(tls_mock, store,
                                                                                      upstream_tls, tmp_path):
    recording = ProxyRig(tls_mock, store, upstream_tls, tmp_path / "ca")
    try:
        original = store.get(record_intercepted(recording))
    finally:
        recording.forwarder.stop()
    # Today api.openai.com is intercepted as itself (the default list), not sent to the mock.
    elsewhere = Forwarder(Options("http://127.0.0.1:9", port=0, proxy=ProxyOptions(ca_dir=tmp_path / "ca")), store=store)
    # A stored flow that names a host off the list (a store can be edited or imported).
    foreign = dataclasses.replace(original, upstream_url=f"https://llm.example.test{CHAT}",
                                  request_headers=[("host", "llm.example.test"), *original.request_headers[1:]])
    assert original.request_headers[0] == ("host", "api.openai.com")
    with elsewhere:
        refused = []
        for flow in (original, foreign):
            with pytest.raises(ReplayError) as caught:
                replay(flow, via=elsewhere, credentials=[("Authorization", "Bearer sk-env")])
            refused.append(str(caught.value))
        assert (elsewhere.access.refused, elsewhere.connect.open_tunnels) == (0, 0)
    assert refused == [
        f"flow #{original.id} is not replayed: it went to {tls_mock.base_url} through a tunnel to api.openai.com, "
        "which this forwarder sends to https://api.openai.com; its credentials are not sent anywhere else",
        f"flow #{original.id} is not replayed: it was intercepted from llm.example.test, which this forwarder does "
        "not intercept (--intercept llm.example.test adds it); a replay goes only to hosts on the intercept list, "
        "never to any host a stored flow names"]
    assert (len(tls_mock.received), store.count()) == (1, 1)


def test_the_replay_command_sends_an_intercepted_flow_to_its_host(tls_mock, store, upstream_tls, tmp_path,
                                                                 monkeypatch, capsys):
    from inspector.cli import main

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))  # the replay's forwarder makes its CA under tmp_path
    recording = ProxyRig(tls_mock, store, upstream_tls, tmp_path / "ca")
    try:
        original = record_intercepted(recording)
    finally:
        recording.forwarder.stop()
    store.flush()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    argv = ["replay", str(original), "--store", str(store.path), "--upstream-ca", str(upstream_tls / "ca.pem")]
    assert main(argv) == 2  # nothing sent: today api.openai.com is itself: the mock needs --intercept, as when recording
    assert capsys.readouterr().err == (
        f"toolwire-inspect: flow #{original} is not replayed: it went to {tls_mock.base_url} through a tunnel to "
        "api.openai.com, which this forwarder sends to https://api.openai.com; its credentials are not sent "
        "anywhere else\n")
    assert main([*argv, "--intercept", f"api.openai.com={tls_mock.base_url}", "--key-host", "127.0.0.1"]) == 0
    new_id = re.fullmatch(rf"#(\d+) replay of #{original}: 200 complete\n", capsys.readouterr().out).group(1)
    assert store.get(int(new_id)).replay_of == original
    assert [r.header("authorization") for r in tls_mock.received] == [f"Bearer {KEY}", "Bearer sk-from-env"]


def test_the_tuis_forwarder_process_replays_an_intercepted_flow_and_takes_the_tunnel_options(
        tls_mock, upstream_tls, tmp_path):
    # `r`/`R` in the TUI: the replay runs in the forwarder's own process, which got proxy mode's
    # options (the TUI's flags) through its config.
    from inspector.child import Flows, ForwarderProcess, Frame

    completed: list[int] = []
    arrived = threading.Condition()

    def on_frame(frame: Frame) -> None:
        with arrived:
            if isinstance(frame, Flows):
                completed.extend(frame.completed)
            arrived.notify_all()

    child = ForwarderProcess.start(Options(None, store=str(tmp_path / "flows.sqlite3"), port=0, proxy=ProxyOptions(**{
        "ca_dir": str(tmp_path / "ca"), "intercept": [f"api.openai.com={tls_mock.base_url}"],
        "upstream_ca": str(upstream_tls / "ca.pem"), "max_tunnels": 1})))
    try:
        child.listen(on_frame)
        context = ssl.create_default_context(cafile=str(LocalCA(tmp_path / "ca").cert_path))
        with httpx.Client(proxy=child.base_url, verify=context, timeout=10) as client:
            assert client.post(f"https://api.openai.com{CHAT}", content=BODY,
                               headers={"authorization": f"Bearer {KEY}"}).status_code == 200
            # Its tunnel is open (kept alive): the only one --max-tunnels 1 allows.
            sock, answer = connect(int(child.base_url.rpartition(":")[2]), "api.openai.com:443")
            sock.close()
            assert answer.split(b"\r\n")[0] == b"HTTP/1.1 503 Service Unavailable"
        with arrived:
            assert arrived.wait_for(lambda: len(completed) == 1, 10)
        # The client's tunnel may still be closing: wait until the replay's own can open.
        deadline = time.monotonic() + 10
        while True:
            try:
                new_id = child.replay(completed[0], kind=ReplayKind.FIXED)
                break
            except ReplayError as exc:
                assert "503" in str(exc) and time.monotonic() < deadline, str(exc)
                threading.Event().wait(0.05)
    finally:
        child.stop()
    with Store(tmp_path / "flows.sqlite3", read_only=True) as store:
        replayed = store.get(new_id)
    assert (replayed.replay_of, replayed.status, replayed.upstream_url) == (
        completed[0], 200, f"{tls_mock.base_url}{CHAT}")
    assert [r.header("authorization") for r in tls_mock.received] == [f"Bearer {KEY}"] * 2


def test_a_replay_whose_tunnel_is_refused_says_why(tls_mock, store, upstream_tls, tmp_path):
    rig = ProxyRig(tls_mock, store, upstream_tls, tmp_path / "ca", allow_connect=["localhost"], max_tunnels=1)
    server = TalkingServer()
    try:
        original = record_intercepted(rig)
        open_tunnels(rig, 0)
        held, head = connect(rig.forwarder.port, f"localhost:{server.port}")  # the one tunnel allowed
        with held:
            assert head == ESTABLISHED
            with pytest.raises(ReplayError) as caught:
                replay_stored(store, rig.forwarder, original)
    finally:
        server.close()
        rig.forwarder.stop()
    assert str(caught.value) == (f"replay of #{original} through {rig.forwarder.base_url} failed: Tunnel connection "
                                 "failed: 503 Service Unavailable")
    assert (len(tls_mock.received), rig.forwarder.access.refused) == (1, 1)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd") or not 600 <= resource.getrlimit(resource.RLIMIT_NOFILE)[1],
                    reason="needs Linux and a hard descriptor limit of at least 600")
def test_under_a_low_descriptor_limit_a_flood_of_tunnels_leaves_room_for_plain_clients(mock, tmp_path):
    """`record` limited to 600 descriptors: 344 of them for 172 client/upstream pairs, a fifth of
    which (34) for tunnels. A local process holding every tunnel it can get is refused the 35th,
    and the plain connections' share still serves a full set of clients."""
    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (600, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    far = socket.create_server(("127.0.0.1", 0), backlog=128)  # never accepts: the kernel's backlog holds them
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector", "record", "--upstream", mock.base_url, "--port", "0",
         "--store", str(tmp_path / "flows.sqlite3"), "--allow-connect", "localhost"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=low_limit,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "XDG_DATA_HOME": str(tmp_path)})
    held: list[socket.socket] = []
    try:
        line = proc.stderr.readline()
        while line and not line.startswith("forwarding"):
            line = proc.stderr.readline()
        url = next(word for word in line.split() if word.startswith("http://"))
        port = int(url.rpartition(":")[2].split("/")[0])
        for _ in range(34):
            sock, head = connect(port, f"localhost:{far.getsockname()[1]}")
            held.append(sock)
            assert head == ESTABLISHED
        sock, answer = connect(port, f"localhost:{far.getsockname()[1]}")
        sock.close()
        assert answer.split(b"\r\n")[0] == b"HTTP/1.1 503 Service Unavailable"
        assert b"34 tunnels are open, as many as --max-tunnels allows" in answer
        # The plain connections' share (the other 138 pairs) is whole: 137 idle clients and a request.
        held += [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(137)]
        assert httpx.post(f"{url}{CHAT}", content=BODY, timeout=10).status_code == 200
        assert proc.stdout.readline().startswith(f"#1 POST {CHAT} 200 ")
    finally:
        for sock in held:
            sock.close()
        far.close()
        proc.terminate()
        _, errors = proc.communicate(timeout=10)
    assert "Too many open files" not in errors
