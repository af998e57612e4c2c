"""The headless commands: record, flows, replay, export, mock."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import httpx
import pytest

from inspector.cli import main
from inspector.mock import json_response
from inspector.wire.dialects.openai_chat.mock import chat_completion
from inspector.store import Store

CHAT = "/v1/chat/completions"
BODY = b'{"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]}'


def start_command(*argv: str, marker: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "inspector", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    stream = proc.stderr if marker == "forwarding" else proc.stdout
    for line in stream:
        if marker in line:
            return proc, next(word for word in line.split() if word.startswith("http://"))
    raise AssertionError(f"{argv} exited {proc.wait()}: {proc.stderr.read()}")


def test_record_prints_one_line_per_flow_and_stops_on_sigterm(mock, tmp_path):
    store_path = tmp_path / "flows.sqlite3"
    proc, url = start_command("record", "--upstream", mock.base_url, "--port", "0", "--store", str(store_path),
                              marker="forwarding")
    try:
        assert httpx.post(url + CHAT, content=BODY).status_code == 200
        line = proc.stdout.readline().rstrip("\n")
        assert re.fullmatch(r"#1 POST /v1/chat/completions 200 \d+\.\dms errors=0 warnings=0", line), line
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    with Store(store_path) as store:
        assert [(r.id, r.state, r.status) for r in store.rows()] == [(1, "complete", 200)]


def test_record_refuses_a_remote_host_without_the_flag(capsys, tmp_path):
    code = main(["record", "--upstream", "http://127.0.0.1:9", "--host", "0.0.0.0", "--store", str(tmp_path / "s.db")])
    assert code == 2
    assert capsys.readouterr().err == (
        "toolwire-inspect: refusing to listen on 0.0.0.0: it is reachable from other machines and the forwarder "
        "relays your API keys; pass --allow-remote (allow_remote=True) if you mean it\n")


@pytest.fixture
def recorded(rig):
    """A store file with one recorded chat flow (#1), its forwarder stopped and store closed."""
    rig.mock.push(json_response(chat_completion("first")))
    rig.client.post(CHAT, content=BODY, headers={"authorization": "Bearer sk-from-the-client"})
    rig.events.completed()
    rig.stop()
    rig.store.close()
    return rig


def test_flows_lists_rows_as_json_and_as_a_table(recorded, capsys):
    path = str(recorded.store.path)
    assert main(["flows", "--store", path, "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert {k: row[k] for k in ("id", "session_id", "method", "path", "dialect", "model", "status", "state",
                                "errors", "warnings", "replay_of", "streamed", "mode", "error")} == {
        "id": 1, "session_id": 1, "method": "POST", "path": CHAT, "dialect": "openai-chat", "model": "gpt-test",
        "status": 200, "state": "complete", "errors": 0, "warnings": 0, "replay_of": None, "streamed": False,
        "mode": "passthrough", "error": None}
    assert main(["flows", "--store", path]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "SES", "TIME", "METHOD", "STATUS", "STATE", "LATENCY", "ERR", "WARN", "PATH"]
    assert lines[1].split()[:2] == ["1", "1"] and lines[1].split()[3:6] == ["POST", "200", "complete"]
    assert lines[1].endswith(CHAT)


def test_flows_filter_takes_the_tui_expressions(tmp_path, capsys):
    from inspector.flow import FIXED_REPLAY_NOTE
    from tests.tui.flows import defective_request, populate, save_flow

    path = tmp_path / "flows.sqlite3"
    with Store(path) as store:
        ids = populate(store)
        save_flow(store, defective_request(), offset=11, replay_of=ids["defective"], notes=[FIXED_REPLAY_NOTE])
    assert main(["flows", "--store", str(path), "--json", "--filter", "~v OC-05 & ~r"]) == 0
    assert [(r["id"], r["replay_of"], r["replay_fixed"]) for r in json.loads(capsys.readouterr().out)] == [
        (6, 3, False), (7, 3, True)]
    assert main(["flows", "--store", str(path), "--filter", "#3"]) == 0
    assert [line.split(None, 1)[0] + " " + line.rsplit(CHAT, 1)[1] for line in capsys.readouterr().out.splitlines()[1:]
            ] == ["3 ", "6   (replay of #3)", "7   (replay of #3, fixed)"]
    assert main(["flows", "--store", str(path), "--filter", "~c 4o4"]) == 2
    assert capsys.readouterr().err == (
        "toolwire-inspect: --filter: ~c wants a status like 400, 4xx or 5, not '4o4' (at 4)\n")


def test_export_writes_the_same_bytes_twice(recorded, capsys, tmp_path):
    path = str(recorded.store.path)
    assert main(["export", "1", "--store", path, "-o", str(tmp_path / "a.json")]) == 0
    assert main(["export", "1", "--store", path]) == 0
    out = capsys.readouterr()
    assert out.err == f"wrote {tmp_path / 'a.json'}\n"
    assert out.out.encode() == (tmp_path / "a.json").read_bytes()
    assert b"sk-from-the-client" not in (tmp_path / "a.json").read_bytes()
    assert main(["export", "9", "--store", path]) == 2
    assert capsys.readouterr().err == f"toolwire-inspect: no flow #9 in {path}\n"


def test_replay_command_uses_the_environment_key_and_links_the_flow(recorded, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-env")
    recorded.mock.push(json_response(chat_completion("again")))
    # The mock is not api.openai.com: the key goes there only because the command line says so.
    assert main(["replay", "1", "--store", str(recorded.store.path), "--upstream", recorded.mock.base_url,
                 "--key-host", "127.0.0.1"]) == 0
    assert capsys.readouterr().out == "#2 replay of #1: 200 complete\n"
    replayed = recorded.mock.received[1]
    assert replayed.header("authorization") == "Bearer sk-from-the-env"
    assert replayed.body == BODY
    with Store(recorded.store.path) as store:
        flow = store.get(2)
        assert (flow.replay_of, flow.session_id) == (1, 2)
        assert [s.upstream for s in store.sessions()] == [recorded.mock.base_url] * 2


def test_replay_of_an_unknown_flow_is_a_clear_error(tmp_path, capsys):
    Store(tmp_path / "s.db").close()
    assert main(["replay", "5", "--store", str(tmp_path / "s.db")]) == 2
    assert capsys.readouterr().err == f"toolwire-inspect: no flow #5 in {tmp_path / 's.db'}\n"


def test_mock_command_serves_an_exported_fixture(recorded, tmp_path):
    fixture = tmp_path / "turn.json"
    assert main(["export", "1", "--store", str(recorded.store.path), "-o", str(fixture)]) == 0
    proc, url = start_command("mock", str(fixture), "--port", "0", marker="mock upstream on")
    try:
        answer = httpx.post(url + CHAT, content=BODY)
        assert answer.status_code == 200
        assert answer.json() == chat_completion("first")
        miss = httpx.post(url + CHAT, content=b'{"model": "other"}')
        assert miss.status_code == 404
        assert miss.json()["error"]["message"] == (
            f"no fixture matches POST {CHAT} with this body; fixtures: POST {CHAT} ({fixture})")
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0


def test_mock_command_rejects_a_file_that_is_not_a_fixture(tmp_path, capsys):
    (tmp_path / "x.json").write_text("{}")
    assert main(["mock", str(tmp_path / "x.json"), "--port", "0"]) == 2
    assert capsys.readouterr().err == (
        f'toolwire-inspect: cannot load {tmp_path / "x.json"}: not a toolwire fixture, a HAR file or a vcrpy '
        'cassette\n')


def test_reading_commands_refuse_a_missing_store_and_create_nothing(tmp_path, capsys):
    missing = tmp_path / "nowhere" / "flows.sqlite3"
    for argv in (["flows"], ["export", "1"], ["replay", "1"], ["check", "--session"]):
        assert main([*argv, "--store", str(missing)]) == 2
        assert capsys.readouterr().err == (
            f"toolwire-inspect: no flow store at {missing} (record some flows first)\n")
    assert not (tmp_path / "nowhere").exists()


# `replay` as people run it: a key missing from the environment is named before anything is sent,
# and an upstream that refuses the replay makes the command fail.

GEMINI = "/v1beta/models/gemini-2.5-flash:generateContent"
GEMINI_BODY = b'{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}'


@pytest.fixture
def no_keys(monkeypatch, tmp_path):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    # No config file of the machine's decides where a replay goes.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)


def test_replay_names_the_missing_variable_and_sends_nothing(recorded, capsys, no_keys):
    assert main(["replay", "1", "--store", str(recorded.store.path), "--upstream", recorded.mock.base_url]) == 2
    assert capsys.readouterr().err == (
        "toolwire-inspect: flow #1 was sent with a key (authorization) and the store keeps none: set "
        "OPENAI_API_KEY to replay it\n")
    assert len(recorded.mock.received) == 1
    with Store(recorded.store.path) as store:
        assert [row.id for row in store.rows()] == [1]


def test_replay_of_a_gemini_flow_names_both_variables(rig, capsys, no_keys):
    rig.mock.push(json_response({"candidates": []}))
    rig.client.post(GEMINI + "?key=AIza-secret-in-the-query", content=GEMINI_BODY)
    rig.events.completed()
    rig.stop()
    rig.store.close()
    assert main(["replay", "1", "--store", str(rig.store.path), "--upstream", rig.mock.base_url]) == 2
    assert capsys.readouterr().err == (
        "toolwire-inspect: flow #1 was sent with a key (key in the query) and the store keeps none: set "
        "GEMINI_API_KEY or GOOGLE_API_KEY to replay it\n")


def test_a_flow_sent_without_a_key_replays_without_one(rig, capsys, no_keys):
    rig.mock.push(json_response(chat_completion("first")), json_response(chat_completion("again")))
    rig.client.post(CHAT, content=BODY)
    rig.events.completed()
    rig.stop()
    rig.store.close()
    assert main(["replay", "1", "--store", str(rig.store.path), "--upstream", rig.mock.base_url]) == 0
    assert capsys.readouterr().out == "#2 replay of #1: 200 complete\n"
    assert rig.mock.received[1].header("authorization") is None


@pytest.mark.parametrize("status", [401, 429, 500])
def test_replay_fails_when_the_upstream_refuses_it(recorded, capsys, monkeypatch, status):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-env")
    recorded.mock.push(json_response({"error": {"message": "no"}}, status=status))
    assert main(["replay", "1", "--store", str(recorded.store.path), "--upstream", recorded.mock.base_url,
                 "--key-host", "127.0.0.1"]) == 1
    assert capsys.readouterr().out == f"#2 replay of #1: {status} complete\n"


# `record` says what to give the agent: the settings of the clients that fit the upstream, or in
# translate mode those of the source dialect, each with the clients that read it.

def _hints(*argv: str) -> list[str]:
    """record's stderr after its `forwarding` line, the URL written `URL`. It stops on SIGTERM once a
    flow's line shows it is waiting for one."""
    proc, url = start_command("record", "--port", "0", *argv, marker="forwarding")
    try:
        httpx.get(url + "/v1/models")
        assert proc.stdout.readline().startswith("#1 GET /v1/models ")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    return [line.replace(url, "URL") for line in proc.stderr.read().splitlines()]


def test_record_names_every_client_setting_for_an_upstream_of_no_known_provider(mock, tmp_path):
    assert _hints("--upstream", mock.base_url, "--store", str(tmp_path / "s.sqlite3")) == [
        "point the agent at it:",
        "  OPENAI_BASE_URL=URL/v1                openai SDK, openai-agents, pydantic-ai, LangChain's ChatOpenAI, "
        "LiteLLM openai/ models",
        "  ANTHROPIC_BASE_URL=URL                anthropic SDK, Claude Code, LangChain's ChatAnthropic",
        "  GOOGLE_GEMINI_BASE_URL=URL            google-genai SDK, Google ADK",
        "  GEMINI_API_BASE=URL/v1beta            LiteLLM gemini/ models",
        "  MCP URL/mcp                           MCP clients over streamable HTTP (the server's own path, /mcp here)",
        "  AWS_ENDPOINT_URL_BEDROCK_RUNTIME=URL  boto3 / botocore bedrock-runtime clients, the AWS CLI",
        "  ANTHROPIC_BEDROCK_BASE_URL=URL        Claude Code on Bedrock, the anthropic SDK's AnthropicBedrock",
        "or, for a client that takes no base URL: HTTPS_PROXY=URL and trust the CA `toolwire-inspect ca` prints",
    ]


def test_record_in_translate_mode_names_the_source_dialects_settings():
    # The same lines record prints (above), for a translate session: only its source dialect's.
    from inspector.cli.record import agent_hints

    assert agent_hints("URL", "https://api.openai.com", "gemini:openai-chat").splitlines() == [
        "point the agent at it:",
        "  GOOGLE_GEMINI_BASE_URL=URL  google-genai SDK, Google ADK",
        "  GEMINI_API_BASE=URL/v1beta  LiteLLM gemini/ models",
    ]


# The README's contract for `replay`: 2 when nothing was sent, whatever refused it (the command's own
# checks, or the replay's before it sends a byte); 1 only for a transfer that failed or an error status.

UNSENT = "http://127.0.0.1:9"  # nothing listens there: a replay that reached it would fail, not hang


def stored(tmp_path, session: str = UNSENT, **fields):
    """A store holding one recorded chat flow (its session's upstream `session`), `fields` changed."""
    from inspector.flow import Flow, FlowState

    path = tmp_path / "flows.sqlite3"
    with Store(path) as store:
        store.new_session(session, "http://127.0.0.1:8")
        flow = Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=1.0, method="POST", path=CHAT,
                    request_headers=[("content-type", "application/json")], request_body=BODY,
                    upstream_url=UNSENT + CHAT, status=200, state=FlowState.COMPLETE, response_body=b"{}")
        for name, value in fields.items():
            setattr(flow, name, value)
        store.submit(flow)
        store.flush()
    return path


# A target that is not a path and an upstream the flow did not go to: test_access.py, beside the key they protect.
@pytest.mark.parametrize(("fields", "argv", "reason"), [
    ({"upstream_url": "https://tools.example" + CHAT, "request_headers": [("host", "tools.example")]}, [],
     "flow #1 is not replayed: it was intercepted from tools.example, which this forwarder does not intercept "
     "(--intercept tools.example adds it); a replay goes only to hosts on the intercept list, never to any host a "
     "stored flow names"),
    ({"upstream_url": "stdio://mcp-server"}, ["--upstream", UNSENT],
     "flow #1 is not replayed: it was recorded over stdio (mcp-stdio), and a replay is sent over HTTP"),
    ({"session_id": 77}, [], "flow #1 came through --upstream: pass --upstream URL to say where it goes now (a "
                             "replay goes where the command line or the config says, never where a store says)"),
    ({"session": f"openai={UNSENT}", "route": "gone"}, [],
     "flow #1 came through route 'gone', which the routes here do not have (openai, anthropic, gemini, bedrock; defaults): "
     "pass --route gone=URL or --upstream URL (a replay goes where the command line or the config says, never "
     "where a store says)"),
], ids=["intercepted-off-the-list", "stdio", "no-session", "route-gone"])
def test_a_replay_refused_before_sending_exits_2_and_records_nothing(tmp_path, capsys, no_keys, fields, argv,
                                                                   reason):
    path = stored(tmp_path, **fields)
    assert main(["replay", "1", "--store", str(path), *argv]) == 2
    assert capsys.readouterr() == ("", f"toolwire-inspect: {reason}\n")
    with Store(path) as store:
        assert [row.id for row in store.rows()] == [1]


def test_a_replay_whose_transfer_fails_exits_1(tmp_path, capsys, no_keys):
    """Sent, and the upstream never answered: the forwarder records the flow in error."""
    path = stored(tmp_path)
    assert main(["replay", "1", "--store", str(path), "--upstream", UNSENT]) == 1
    assert capsys.readouterr() == (
        "#2 replay of #1: 502 error upstream unreachable: http://127.0.0.1:9: connection refused\n", "")
    with Store(path) as store:
        assert [(row.id, row.replay_of, row.state) for row in store.rows()] == [(1, None, "complete"), (2, 1, "error")]
