"""Replay attaches a key from the environment only where that key belongs: the provider host its
variable is for, or a host the user names with --key-host; never because of what a store says.
Real forwarders on loopback, two real upstreams (the one the flows went to, and another that must
never see a key), real SQLite files edited as an attacker would, the `replay` command."""

from __future__ import annotations

import sqlite3

import httpx
import pytest

from inspector.cli import main
from inspector.mock import MockUpstream
from inspector.proxy import Forwarder
from inspector.proxy.routes import open_forwarder, resolve
from inspector.store import Store
from inspector.proxy.options import Options

from .conftest import Events

KEYS = {"OPENAI_API_KEY": "sk-env-openai", "ANTHROPIC_API_KEY": "sk-ant-env", "GEMINI_API_KEY": "AIza-env"}
KEY_HEADERS = ("authorization", "x-api-key", "x-goog-api-key")
REQUESTS = [  # (path, body) of each provider's dialect, sent without any credential
    ("/v1/chat/completions", b'{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}'),
    ("/v1/messages", b'{"model": "claude-sonnet-4-6", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}'),
    ("/v1beta/models/gemini-2.5-flash:generateContent", b'{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}'),
]


@pytest.fixture(autouse=True)
def env_keys(tmp_path, monkeypatch):
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def upstreams():
    with MockUpstream() as local, MockUpstream() as other:
        yield local, other


def keys_seen(upstream: MockUpstream) -> list[tuple[str, list[tuple[str, str]]]]:
    return [(r.path, [(name, r.header(name)) for name in KEY_HEADERS if r.header(name) is not None])
            for r in upstream.received]


def record(store_path, upstream: str, headers: dict[str, str] | None = None) -> None:
    """Each provider dialect's request, through a real forwarder to `upstream`."""
    with Store(store_path) as store:
        events = Events()
        with Forwarder(Options(upstream, port=0), store=store, on_event=events) as forwarder:
            for path, body in REQUESTS:
                assert httpx.post(forwarder.client_url + path, content=body, headers=headers).status_code == 200
            events.completed(len(REQUESTS))


def test_a_flow_recorded_without_a_key_is_replayed_without_one_to_a_host_that_is_not_the_providers(
        tmp_path, upstreams, capsys):
    local, other = upstreams
    record(tmp_path / "s.db", local.base_url)
    for flow_id in (1, 2, 3):
        assert main(["replay", str(flow_id), "--store", str(tmp_path / "s.db"), "--upstream", other.base_url]) == 0
    assert capsys.readouterr().out == "#4 replay of #1: 200 complete\n#5 replay of #2: 200 complete\n" \
                                      "#6 replay of #3: 200 complete\n"
    assert keys_seen(other) == [(path, []) for path, _ in REQUESTS]
    # A host the user names on the command line gets the key of the flow's dialect.
    assert main(["replay", "2", "--store", str(tmp_path / "s.db"), "--upstream", other.base_url,
                 "--key-host", "127.0.0.1"]) == 0
    assert keys_seen(other)[-1] == ("/v1/messages", [("x-api-key", "sk-ant-env")])
    assert keys_seen(local) == [(path, []) for path, _ in REQUESTS]


def test_a_flow_sent_with_a_key_names_where_the_environments_key_may_go(tmp_path, upstreams, capsys):
    local, other = upstreams
    record(tmp_path / "s.db", local.base_url, {"x-api-key": "sk-ant-client", "authorization": "Bearer sk-client"})
    assert main(["replay", "2", "--store", str(tmp_path / "s.db"), "--upstream", other.base_url]) == 2
    assert capsys.readouterr().err == (
        "toolwire-inspect: flow #2 was sent with a key (x-api-key) and the store keeps none: ANTHROPIC_API_KEY goes "
        "only to api.anthropic.com, and this replay goes to 127.0.0.1 (--key-host 127.0.0.1 sends it there)\n")
    assert other.received == []


def test_an_edited_store_does_not_choose_where_a_replay_goes(tmp_path, upstreams, capsys):
    """Recorded through route `an` to the user's upstream with a key; the store then edited to say the
    route and the flow went to another host."""
    local, other = upstreams
    with Store(tmp_path / "s.db") as store:
        events = Events()
        with open_forwarder(resolve(routes=[f"an={local.base_url}"]), Options(port=0), store=store, on_event=events) as router:
            path, body = REQUESTS[1]
            httpx.post(f"{router.client_url}/r/an{path}", content=body, headers={"x-api-key": "sk-ant-client"})
            events.completed(1)
    with sqlite3.connect(tmp_path / "s.db") as db:
        db.execute("UPDATE sessions SET upstream = ?", (f"an={other.base_url}",))
        db.execute("UPDATE flows SET upstream_url = ?", (other.base_url + path,))
    db.close()
    assert main(["replay", "1", "--store", str(tmp_path / "s.db")]) == 2
    assert capsys.readouterr().err == (
        "toolwire-inspect: flow #1 came through route 'an', which the routes here do not have (openai, anthropic, "
        "gemini, bedrock; defaults): pass --route an=URL or --upstream URL (a replay goes where the command line or the "
        "config says, never where a store says)\n")
    assert main(["replay", "1", "--store", str(tmp_path / "s.db"), "--route", f"an={local.base_url}"]) == 2
    assert capsys.readouterr().err == (
        f"toolwire-inspect: flow #1 is not replayed: it went to {other.base_url}, not to this forwarder's upstream "
        f"{local.base_url}; its credentials are not sent anywhere else\n")
    assert (keys_seen(other), len(local.received)) == ([], 1)


def test_a_flow_of_a_plain_upstream_is_replayed_only_where_the_command_line_says(tmp_path, upstreams, capsys):
    local, other = upstreams
    record(tmp_path / "s.db", local.base_url)
    with sqlite3.connect(tmp_path / "s.db") as db:
        db.execute("UPDATE sessions SET upstream = ?", (other.base_url,))
    db.close()
    assert main(["replay", "1", "--store", str(tmp_path / "s.db")]) == 2
    assert capsys.readouterr().err == (
        "toolwire-inspect: flow #1 came through --upstream: pass --upstream URL to say where it goes now (a replay "
        "goes where the command line or the config says, never where a store says)\n")
    assert other.received == []
