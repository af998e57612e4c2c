"""Several upstreams through one forwarder: the route table, the dispatcher in front of per-route
forwarders, and what `record` prints for them. Real forwarders on loopback, real mock upstreams,
the official SDKs as clients."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys

import anthropic
import httpx
import openai
import pytest

from inspector.cli import main
from inspector.flow import FlowState, Mode
from inspector.mock import MockUpstream
from inspector.proxy.routes import DEFAULT_ROUTES, Route, RouteError, RouteTable, open_forwarder, resolve
from inspector.store import Store
from inspector.proxy.options import Options, RouteFlags

from .conftest import Events

CHAT = "/v1/chat/completions"


@pytest.fixture(autouse=True)
def user_config(tmp_path, monkeypatch):
    """The user config dir (platformdirs reads XDG_CONFIG_HOME): empty unless a test writes there;
    the data dir, where config trust is recorded, too."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "config" / "toolwire-inspect"


def trusted(path):
    """`path`, trusted as it is now (what `toolwire-inspect config trust` records)."""
    from inspector import trust

    trust.trust(path, path.read_bytes())
    return path


def trusted_as(path, text):
    path.write_text(text)
    return trusted(path)


@pytest.fixture
def two(tmp_path):
    """Two mock upstreams, a store, and a started router with routes `oa` and `an` to them."""
    with MockUpstream() as first, MockUpstream() as second, Store(tmp_path / "flows.sqlite3") as store:
        events = Events()
        router = open_forwarder(resolve(routes=[f"oa={first.base_url}", f"an={second.base_url}"]), Options(port=0), store=store, on_event=events)
        router.start()
        try:
            yield router, first, second, store, events
        finally:
            router.stop()


def stored(store: Store) -> list:
    store.flush()
    return [store.get(row.id) for row in store.rows()]


def test_the_openai_and_anthropic_sdks_reach_their_own_upstreams_in_one_session(two):
    router, first, second, store, events = two
    oa, an = router.forwarders
    chat = openai.OpenAI(api_key="sk-route-test", base_url=f"{oa.client_url}/v1", max_retries=0)
    claude = anthropic.Anthropic(api_key="sk-ant-route-test", base_url=an.client_url, max_retries=0)
    assert chat.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]) \
        .choices[0].message.content == "Hello from the mock upstream."
    assert claude.messages.create(model="claude-sonnet-4-6", max_tokens=16, messages=[{"role": "user", "content": "hi"}]) \
        .content[0].text == "Hello from the mock upstream."
    events.completed(2)
    assert [(r.path, r.header("x-api-key"), r.header("authorization")) for r in first.received] == [
        (CHAT, None, "Bearer sk-route-test")]
    assert [(r.path, r.header("authorization")) for r in second.received] == [("/v1/messages", "Bearer sk-ant-route-test")]
    flows = stored(store)
    assert [(f.route, f.path, f.status, f.state, f.upstream_url, f.session_id) for f in flows] == [
        ("oa", CHAT, 200, FlowState.COMPLETE, f"{first.base_url}{CHAT}", store.session_id),
        ("an", "/v1/messages", 200, FlowState.COMPLETE, f"{second.base_url}/v1/messages", store.session_id)]
    [session] = store.sessions()
    assert (session.upstream, session.listen, session.mode) == (
        f"oa={first.base_url} an={second.base_url}", router.base_url, "routes")
    assert [row.route for row in store.rows()] == ["oa", "an"]


def test_an_unknown_route_is_answered_404_and_recorded(two):
    router, first, second, store, events = two
    for path in ("/r/nope/v1/chat/completions", CHAT, "/r/", "/r/oax/v1/x"):
        response = httpx.post(router.client_url + path, content=b"{}")
        assert (response.status_code, response.json()["error"]["type"]) == (404, "toolwire_unknown_route")
    events.completed(4)
    assert first.received == second.received == []
    assert [(f.route, f.path, f.status, f.state, f.error, f.upstream_url) for f in stored(store)] == [
        ("", path, 404, FlowState.ERROR, f"no route for {path!r}: paths start with one of /r/oa/, /r/an/", "")
        for path in ("/r/nope/v1/chat/completions", CHAT, "/r/", "/r/oax/v1/x")]


def test_a_route_keeps_its_target_below_its_upstreams_base_path(two):
    router, first, second, store, events = two
    # A dot segment would climb out of /r/oa/ into another route, or out of the upstream's base path
    # (encoded: httpx would resolve a plain one before sending).
    response = httpx.post(router.client_url + "/r/oa/%2e%2e/an/v1/messages", content=b"{}")
    assert (response.status_code, response.json()["error"]["type"]) == (400, "toolwire_bad_target")
    # The bare prefix is the upstream's root.
    assert httpx.get(router.client_url + "/r/an").json() == {"error": {"message": "mock upstream: no route for GET /", "type": "not_found"}}
    events.completed(2)
    assert [r.path for r in second.received] == ["/"]
    assert [(f.route, f.path, f.status) for f in stored(store)] == [("oa", "/%2e%2e/an/v1/messages", 400), ("an", "/", 404)]


def test_the_front_door_holds_for_every_route(two):
    router, first, second, store, events = two
    for path in ("/r/oa" + CHAT, "/r/nope" + CHAT):
        response = httpx.post(router.client_url + path, content=b"{}", headers={"host": "evil.example"})
        assert (response.status_code, response.json()["error"]["type"]) == (421, "toolwire_host_not_allowed")
        response = httpx.post(router.client_url + path, content=b"{}", headers={"origin": "http://evil.example"})
        assert (response.status_code, response.json()["error"]["type"]) == (403, "toolwire_origin_not_allowed")
    assert router.access.refused == 4
    assert (stored(store), first.received, second.received) == ([], [], [])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_route_on_its_own_port_serves_at_its_root(tmp_path):
    port = free_port()
    with MockUpstream() as first, MockUpstream() as second, Store(tmp_path / "flows.sqlite3") as store:
        events = Events()
        table = resolve(routes=[f"oa={first.base_url}", f"tools={second.base_url}@{port}"], cwd=tmp_path)
        assert [(r.name, r.port) for r in table.routes] == [("oa", None), ("tools", port)]
        with open_forwarder(table, Options(port=0), store=store, on_event=events) as router:
            oa, tools = router.forwarders
            assert (oa.client_url, tools.client_url) == (f"{router.base_url}/r/oa", f"http://127.0.0.1:{port}")
            assert httpx.post(f"http://127.0.0.1:{port}{CHAT}", content=b"{}").status_code == 200
            # Its own port has no /r/ prefixes: the path goes to its upstream as it is.
            assert httpx.post(f"http://127.0.0.1:{port}/r/oa{CHAT}", content=b"{}").status_code == 200
            response = httpx.post(f"http://127.0.0.1:{port}{CHAT}", content=b"{}", headers={"host": "evil.example"})
            assert response.status_code == 421
            events.completed(2)
            assert router.access.refused == 1
        assert [r.path for r in second.received] == [CHAT, f"/r/oa{CHAT}"]
        assert first.received == []
        assert [(f.route, f.path, f.session_id) for f in stored(store)] == [
            ("tools", CHAT, store.session_id), ("tools", f"/r/oa{CHAT}", store.session_id)]
        assert len(store.sessions()) == 1


def test_a_route_may_repair_and_translate(tmp_path):
    table = resolve(routes=["oa=http://x", "an=http://y"], route_modes=["oa=repair+translate:openai-chat:anthropic"],
                    cwd=tmp_path)
    assert [(r.name, r.translate, r.repair, r.mode) for r in table.routes] == [
        ("oa", "openai-chat:anthropic", True, "repair+translate:openai-chat:anthropic"),
        ("an", None, False, "passthrough")]


def test_route_flags_are_checked_with_a_one_line_error(tmp_path):
    for routes, modes, message in [
        (["oa"], [], "--route 'oa': expected NAME=URL or NAME=URL@PORT"),
        (["o/a=http://x"], [], "--route o/a: a route name is letters, digits, '_', '.' or '-' (at most 64), got 'o/a'"),
        (["oa=ftp://x"], [], "--route oa: the upstream must be an http(s) URL, got 'ftp://x'"),
        (["oa=http://x@0"], [], "--route oa: port 0 is not from 1 to 65535"),
        (["oa=http://x@70000"], [], "--route oa: port 70000 is not from 1 to 65535"),
        (["oa=http://x@9000", "an=http://y@9000"], [], "two routes ask for the same port: [9000, 9000]"),
        (["oa=http://x"], ["an=repair"], "--route-mode 'an=repair': expected NAME=MODE for a route (routes: oa)"),
        (["oa=http://x"], ["oa=fix"], "--route-mode oa: mode 'fix' is not one of passthrough, repair, "
                                      "translate:SRC:DST or repair+translate:SRC:DST"),
        (["oa=http://x"], ["oa=repair+repair"], "--route-mode oa: mode 'repair+repair' is not one of passthrough, "
                                                "repair, translate:SRC:DST or repair+translate:SRC:DST"),
    ]:
        with pytest.raises(RouteError) as caught:
            resolve(routes=routes, route_modes=modes, cwd=tmp_path)
        assert str(caught.value) == message
    # Userinfo may hold an @: only digits after the last one make a port.
    assert resolve(routes=["oa=https://u:p@x.example"], cwd=tmp_path).routes == (Route("oa", "https://u:p@x.example"),)


def test_defaults_without_upstream_or_routes(tmp_path):
    table = resolve(cwd=tmp_path, config=None)
    assert table == RouteTable(DEFAULT_ROUTES, None, "defaults")
    assert [(r.name, r.upstream, r.port, r.mode) for r in table.routes] == [
        ("openai", "https://api.openai.com", None, "passthrough"),
        ("anthropic", "https://api.anthropic.com", None, "passthrough"),
        ("gemini", "https://generativelanguage.googleapis.com", None, "passthrough"),
        ("bedrock", "https://bedrock-runtime.us-east-1.amazonaws.com", None, "passthrough")]
    assert resolve(cwd=tmp_path, repair=True).routes == tuple(Route(r.name, r.upstream, repair=True)
                                                              for r in DEFAULT_ROUTES)
    # --upstream alone: no route at all, a plain forwarder.
    assert resolve(upstream="http://127.0.0.1:9", cwd=tmp_path) == RouteTable((), "http://127.0.0.1:9", "flags")


def test_defaults_are_served_under_their_prefixes_without_reaching_out(tmp_path):
    with Store(tmp_path / "flows.sqlite3") as store:
        router = open_forwarder(resolve(cwd=tmp_path), Options(port=0), store=store)
        router.start()
        try:
            assert [(f.route, f.client_url, f.upstream, f.mode) for f in router.all] == [
                (r.name, f"{router.base_url}/r/{r.name}", r.upstream, Mode.PASSTHROUGH) for r in DEFAULT_ROUTES]
        finally:
            router.stop()


def test_record_names_each_route_with_its_base_url_and_sdk_settings(tmp_path):
    with MockUpstream() as first, MockUpstream() as second:
        proc = subprocess.Popen(
            [sys.executable, "-m", "inspector", "record", "--port", "0", "--store", str(tmp_path / "flows.sqlite3"),
             "--route", f"oa={first.base_url}", "--route", "an=https://api.anthropic.com",
             "--route", f"gm={second.base_url}", "--route-mode", "gm=translate:openai-chat:gemini"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
            cwd=tmp_path)
        try:
            head = [proc.stderr.readline().rstrip("\n") for _ in range(4)]
            base = re.search(r"http://127\.0\.0\.1:\d+", head[1]).group(0)
            assert head == [
                f"forwarding 3 routes (flags; session 1, store {tmp_path / 'flows.sqlite3'})",
                f"route oa {base}/r/oa -> {first.base_url} [passthrough] (from --route)  "
                f"OPENAI_BASE_URL={base}/r/oa/v1  ANTHROPIC_BASE_URL={base}/r/oa  GOOGLE_GEMINI_BASE_URL={base}/r/oa  "
                f"MCP {base}/r/oa/mcp",
                f"route an {base}/r/an -> https://api.anthropic.com [passthrough] (from --route)  "
                f"ANTHROPIC_BASE_URL={base}/r/an",
                f"route gm {base}/r/gm -> {second.base_url} [translate openai-chat:gemini] (from --route)  "
                f"OPENAI_BASE_URL={base}/r/gm/v1"]
            assert httpx.post(f"{base}/r/oa{CHAT}", content=b"{}").status_code == 200
            line = proc.stdout.readline().rstrip("\n")
            assert re.fullmatch(r"#1 POST /v1/chat/completions 200 \d+\.\dms errors=\d+ warnings=\d+ route=oa", line), line
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=30)
    assert proc.returncode == 0


CONFIG = """
[routes.oa]
url = "http://127.0.0.1:9/openai"
mode = "repair"
[routes.tools]
url = "http://127.0.0.1:9"
port = 8790
"""


def test_config_in_the_working_directory_and_flags_over_it(tmp_path):
    (tmp_path / "toolwire-inspect.toml").write_text(CONFIG)
    trusted(tmp_path / "toolwire-inspect.toml")
    table = resolve(cwd=tmp_path)
    assert table == RouteTable((Route("oa", "http://127.0.0.1:9/openai", repair=True),
                                Route("tools", "http://127.0.0.1:9", port=8790)), None,
                               f"config {tmp_path / 'toolwire-inspect.toml'}")
    # A flag replaces the file's route of that name but not its mode; --route-mode sets a mode;
    # --repair is the mode of the routes that set none.
    table = resolve(cwd=tmp_path, routes=["oa=http://127.0.0.1:10", "an=http://127.0.0.1:11"],
                    route_modes=["tools=translate:openai-chat:anthropic"], repair=True)
    assert table.routes == (Route("oa", "http://127.0.0.1:10", repair=True),
                            Route("tools", "http://127.0.0.1:9", port=8790, translate="openai-chat:anthropic"),
                            Route("an", "http://127.0.0.1:11", repair=True))
    # With routes from a file, --upstream is the unnamed route beside them.
    assert resolve(cwd=tmp_path, upstream="http://127.0.0.1:12").upstream == "http://127.0.0.1:12"


def test_config_flag_wins_over_the_working_directory(tmp_path):
    (tmp_path / "toolwire-inspect.toml").write_text(CONFIG)
    other = tmp_path / "other.toml"
    other.write_text('[routes.gm]\nurl = "https://generativelanguage.googleapis.com"\n')
    assert resolve(cwd=tmp_path, config=str(other)) == RouteTable(
        (Route("gm", "https://generativelanguage.googleapis.com"),), None, f"config {other}")


@pytest.mark.parametrize(("text", "why"), [
    ("[routes.oa\nurl = 1", "is not valid TOML: Expected ']' at the end of a table declaration (at line 1, column 11)"),
    ("port = 1", ": unknown key(s) port (known: routes, keys)"),
    ("routes = 1", ": routes must be tables, [routes.NAME] with url = \"...\""),
    ("[routes.oa]\nurl = 1", ": [routes.oa] needs url = \"http(s)://...\""),
    ("[routes.oa]\nurl = \"http://x\"\nhost = 1", ": [routes.oa]: unknown key(s) host (known: url, port, mode)"),
    ("[routes.oa]\nurl = \"http://x\"\nport = 0", ": [routes.oa]: port must be a number from 1 to 65535"),
    ("[routes.oa]\nurl = \"http://x\"\nport = true", ": [routes.oa]: port must be a number from 1 to 65535"),
    ("[routes.oa]\nurl = \"http://x\"\nmode = \"fix\"",
     ": [routes.oa]: mode 'fix' is not one of passthrough, repair, translate:SRC:DST or repair+translate:SRC:DST"),
    ("[routes.\"a b\"]\nurl = \"http://x\"",
     ": [routes.a b]: a route name is letters, digits, '_', '.' or '-' (at most 64), got 'a b'"),
])
def test_a_broken_config_is_a_one_line_error(tmp_path, monkeypatch, capsys, text, why):
    path = trusted_as(tmp_path / "toolwire-inspect.toml", text)
    monkeypatch.chdir(tmp_path)
    assert main(["record", "--port", "0", "--store", str(tmp_path / "flows.sqlite3")]) == 2
    separator = " " if why.startswith("is") else ""
    assert capsys.readouterr() == ("", f"toolwire-inspect: config {path}{separator}{why}\n")


def test_a_missing_config_file_is_a_one_line_error(tmp_path):
    with pytest.raises(RouteError) as caught:
        resolve(config=str(tmp_path / "none.toml"))
    assert str(caught.value) == f"cannot read config {tmp_path / 'none.toml'}: No such file or directory"


def test_replay_goes_through_the_route_the_flow_came_through(two):
    from inspector.replay import ReplayError, replay

    router, first, second, store, events = two
    oa, an = router.forwarders
    httpx.post(f"{an.client_url}/v1/messages", content=b'{"model": "m"}', headers={"x-api-key": "sk-ant-replayed"})
    httpx.post(f"{oa.client_url}{CHAT}", content=b'{"model": "m"}', headers={"authorization": "Bearer sk-replayed"})
    events.completed(2)
    anthropic_flow, openai_flow = stored(store)
    new_ids = [replay(flow, via=router, credentials=router.credentials(flow.id))
               for flow in (openai_flow, anthropic_flow)]
    events.completed(4)
    flows = {f.id: f for f in stored(store)}
    assert [(flows[i].route, flows[i].path, flows[i].replay_of, flows[i].status) for i in new_ids] == [
        ("oa", CHAT, openai_flow.id, 200), ("an", "/v1/messages", anthropic_flow.id, 200)]
    assert [(r.path, r.header("authorization")) for r in first.received] == [(CHAT, "Bearer sk-replayed")] * 2
    assert [(r.path, r.header("x-api-key")) for r in second.received] == [("/v1/messages", "sk-ant-replayed")] * 2
    openai_flow.route = "gone"
    with pytest.raises(ReplayError, match=rf"^flow #{openai_flow.id} is not replayed: it came through route 'gone', "
                                          "which this forwarder does not serve$"):
        replay(openai_flow, via=router, credentials=[])


def test_the_replay_command_uses_the_upstream_the_flows_route_has_now(two, capsys, tmp_path, monkeypatch):
    # Now: the routes `record` would serve (here its flag), not the ones the store names.
    router, first, second, store, events = two
    oa, an = router.forwarders
    httpx.post(f"{an.client_url}/v1/messages", content=b'{"model": "m"}')
    events.completed(1)
    [flow] = stored(store)
    monkeypatch.chdir(tmp_path)
    assert main(["replay", str(flow.id), "--store", str(store.path), "--route", f"an={second.base_url}"]) == 0
    # The command's own store reserves its own ids: the new flow's id is whatever it got.
    assert re.fullmatch(rf"#\d+ replay of #{flow.id}: 200 complete\n", capsys.readouterr().out)
    assert [r.path for r in second.received] == ["/v1/messages"] * 2
    assert first.received == []


def test_each_route_has_its_own_mode(tmp_path):
    with MockUpstream() as first, MockUpstream() as second, Store(tmp_path / "flows.sqlite3") as store:
        events = Events()
        table = resolve(routes=[f"plain={first.base_url}", f"bridge={second.base_url}"],
                        route_modes=["bridge=translate:openai-chat:anthropic"], cwd=tmp_path)
        with open_forwarder(table, Options(port=0), store=store, on_event=events) as router:
            plain, bridge = router.forwarders
            for forwarder in (plain, bridge):
                client = openai.OpenAI(api_key="sk-test", base_url=f"{forwarder.client_url}/v1", max_retries=0)
                answer = client.chat.completions.create(model="claude-sonnet-4-6", max_tokens=16,
                                                        messages=[{"role": "user", "content": "hi"}])
                assert answer.choices[0].message.content == "Hello from the mock upstream."
            events.completed(2)
        assert [r.path for r in first.received] == [CHAT]
        assert [r.path for r in second.received] == ["/v1/messages"]
        assert [(f.route, f.mode, f.translate, f.path, f.upstream_url) for f in stored(store)] == [
            ("plain", Mode.PASSTHROUGH, None, CHAT, f"{first.base_url}{CHAT}"),
            ("bridge", Mode.TRANSLATE, "openai-chat:anthropic", CHAT, f"{second.base_url}/v1/messages")]


def test_upstream_alone_is_a_plain_forwarder_and_beside_routes_takes_what_they_do_not_claim(tmp_path):
    from inspector.proxy import Forwarder

    with MockUpstream() as first, MockUpstream() as second, Store(tmp_path / "flows.sqlite3") as store:
        plain = open_forwarder(resolve(upstream=first.base_url, cwd=tmp_path), Options(port=0), store=store)
        assert type(plain) is Forwarder and plain.route is None and plain.client_url.endswith(":0")
        events = Events()
        table = resolve(upstream=first.base_url, routes=[f"an={second.base_url}"], cwd=tmp_path)
        with open_forwarder(table, Options(port=0), store=store, on_event=events) as router:
            assert httpx.post(f"{router.client_url}{CHAT}", content=b"{}").status_code == 200
            assert httpx.post(f"{router.client_url}/r/an/v1/messages", content=b"{}").status_code == 200
            assert httpx.post(f"{router.client_url}/r/other{CHAT}", content=b"{}").status_code == 200
            events.completed(3)
            assert store.sessions()[-1].upstream == f"={first.base_url} an={second.base_url}"
        assert [r.path for r in first.received] == [CHAT, f"/r/other{CHAT}"]
        assert [r.path for r in second.received] == ["/v1/messages"]
        assert [(f.route, f.path) for f in stored(store)] == [
            ("", CHAT), ("an", "/v1/messages"), ("", f"/r/other{CHAT}")]


def test_beyond_loopback_the_token_comes_before_the_route(tmp_path):
    with MockUpstream() as first, Store(tmp_path / "flows.sqlite3") as store:
        table = resolve(routes=[f"oa={first.base_url}"], cwd=tmp_path)
        with open_forwarder(table, Options(host="0.0.0.0", allow_remote=True, port=0), store=store) as router:
            [oa] = router.forwarders
            token = router.access.token
            assert oa.client_url == f"http://0.0.0.0:{router.port}/t/{token}/r/oa"
            local = f"http://127.0.0.1:{router.port}"
            assert httpx.post(f"{local}/t/{token}/r/oa{CHAT}", content=b"{}").status_code == 200
            assert httpx.post(f"{local}/r/oa{CHAT}", content=b"{}").status_code == 403
            assert httpx.post(f"{local}/r/oa/t/{token}{CHAT}", content=b"{}").status_code == 403
        assert [r.path for r in first.received] == [CHAT]


def test_config_in_the_user_config_dir_when_the_working_directory_has_none(tmp_path, user_config):
    user_config.mkdir(parents=True)
    (user_config / "toolwire-inspect.toml").write_text(CONFIG)
    assert resolve(cwd=tmp_path).source == f"config {user_config / 'toolwire-inspect.toml'}"
    (tmp_path / "toolwire-inspect.toml").write_text('[routes.here]\nurl = "http://127.0.0.1:9"\n')
    assert resolve(cwd=tmp_path).source == f"config {user_config / 'toolwire-inspect.toml'}"  # not trusted yet
    trusted(tmp_path / "toolwire-inspect.toml")
    assert resolve(cwd=tmp_path).routes == (Route("here", "http://127.0.0.1:9"),)


def test_the_tui_browses_when_the_default_routes_cannot_listen(tmp_path, monkeypatch):
    # The TUI's forwarder process says whether only the default routes failed (then the UI browses
    # the store) or something the user asked for did (then the launch fails).
    from inspector.child import ChildFailed, ForwarderProcess

    monkeypatch.chdir(tmp_path)
    db = tmp_path / "flows.sqlite3"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        outcomes = []
        for upstream, routes in ((None, []), (None, ["x=http://127.0.0.1:9"]), ("http://127.0.0.1:9", [])):
            child = ForwarderProcess.launch(Options(upstream, store=str(db), port=port, routes=RouteFlags(**{"route": routes})))
            with pytest.raises(ChildFailed) as failed:
                child.wait_ready()
            outcomes.append((str(failed.value), failed.value.browse))
    refused = f"cannot listen on 127.0.0.1:{port}: Address already in use"
    assert outcomes == [(refused, True), (refused, False), (refused, False)]
    with Store(db, read_only=True) as store:
        assert store.sessions() == []
