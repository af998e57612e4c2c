"""`toolwire-inspect mcp-stdio -- COMMAND`: the official mcp SDK client launches the wrapper, which
runs a real server over stdio. Relay byte for byte, every message a flow, and every way the exchange
can end (the server crashing, the client closing stdin, a line that is not JSON) recorded, never hung."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from inspector.analysis import analyse
from inspector.flow import Flow, FlowState
from inspector.proxy import stdio
from inspector.replay import ReplayError, replay_request
from inspector.store import Store
from inspector.wire.session import check_session, entries_from_flows

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def wrapper(db: Path, *server: str, name: str | None = None, extra: tuple[str, ...] = ()) -> list[str]:
    named = ["--name", name] if name else []
    return ["-m", "inspector", "mcp-stdio", "--store", str(db), *named, *extra, "--",
            sys.executable, "-m", "tests.mcp_servers", *server]


def sdk_server(db: Path, name: str, env: dict[str, str] | None = None, extra: tuple[str, ...] = ()) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=wrapper(db, "sdk", name, name=name, extra=extra),
                                 cwd=str(ROOT), env=env or ENV)


def stored(db: Path) -> list[Flow]:
    with Store(db, read_only=True) as store:
        return [store.get(row.id) for row in store.rows()]


def method(flow: Flow) -> str | None:
    return orjson.loads(flow.request_body).get("method") if flow.request_body else None


async def test_an_sdk_client_works_through_the_wrapper_and_each_request_is_a_flow_with_its_response(tmp_path):
    db = tmp_path / "flows.sqlite3"
    token = "srv-token-5f2b9c0e7d"
    async with Client(sdk_server(db, "alpha", env={**ENV, "SERVER_API_TOKEN": token})) as client:
        tools = await client.list_tools()
        result = await client.call_tool("lookup", {"query": "Lyon"})
        leaked = await client.call_tool("leak", {})
    assert [tool.name for tool in tools.tools] == ["lookup", "alpha_status", "crash", "leak"]
    assert result.content[0].text == "alpha: Lyon"
    # The client gets the server's answer unchanged; the store never holds the server's credential.
    assert (leaked.is_error, leaked.content[0].text) == (True, f"Error executing tool leak: upstream refused token {token}")
    assert token.encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("flows"))

    flows = stored(db)
    assert [(method(f), f.method, f.path, f.upstream_url, f.state, f.error, f.notes) for f in flows] == [
        ("server/discover", "STDIO", "stdio:alpha", "stdio://alpha", FlowState.COMPLETE, None, []),
        ("tools/list", "STDIO", "stdio:alpha", "stdio://alpha", FlowState.COMPLETE, None, []),
        ("tools/call", "STDIO", "stdio:alpha", "stdio://alpha", FlowState.COMPLETE, None, []),
        ("tools/call", "STDIO", "stdio:alpha", "stdio://alpha", FlowState.COMPLETE, None, []),
    ]
    for flow in flows:  # each response is the one answering its request
        assert orjson.loads(flow.response_body)["id"] == orjson.loads(flow.request_body)["id"]
    call = analyse(flows[2])
    assert (call.dialect.value, call.violations) == ("mcp", [])
    assert orjson.loads(flows[2].response_body)["result"]["content"] == [{"type": "text", "text": "alpha: Lyon"}]


def run_script(tmp_path: Path, client_bytes: bytes, answers: bytes, *, close_stdin: bool = True,
               extra: tuple[str, ...] = ()) -> tuple[subprocess.CompletedProcess[bytes], bytes, Path]:
    received = tmp_path / "received"
    (tmp_path / "received.answers").write_bytes(answers)
    db = tmp_path / "flows.sqlite3"
    proc = subprocess.run([sys.executable, *wrapper(db, "script", str(received), name="scripted", extra=extra)],
                          input=client_bytes, capture_output=True, cwd=ROOT, env=ENV, timeout=60)
    return proc, received.read_bytes() if received.exists() else b"", db


def test_bytes_pass_unchanged_both_ways_and_pairs_are_found_by_id(tmp_path):
    # Odd but valid: CRLF ends, non-ASCII, spacing, a string id equal to a number id, a batch, a
    # notification both ways, a request from the server (left unanswered: the client closes first).
    client = (b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\r\n'
              b'{ "jsonrpc" : "2.0", "id" : "1", "method" : "tools/call", "params": {"name": "caf\xc3\xa9"} }\n'
              b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
              b'[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":8,"method":"ping"}]\n'
              b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}\n')
    answers = (b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}\n'
               b'{"jsonrpc":"2.0","id":"1","result":{"content":[{"type":"text","text":"\xe2\x9c\x93"}]}}\r\n'
               b'{"jsonrpc":"2.0","id":"s1","method":"roots/list"}\n'
               b'[{"jsonrpc":"2.0","id":8,"result":{}},{"jsonrpc":"2.0","id":7,"result":{}}]\n'
               b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n')
    proc, received, db = run_script(tmp_path, client, answers)
    assert (proc.returncode, proc.stdout, received) == (0, answers, client)

    flows = stored(db)
    described = [(orjson.loads(f.request_body).get("method"), orjson.loads(f.request_body).get("id"),
                  orjson.loads(f.response_body).get("id") if f.response_body else None, f.state, f.error, f.notes)
                 for f in flows]
    assert sorted(described, key=str) == sorted([
        ("tools/list", 1, 1, FlowState.COMPLETE, None, []),
        ("tools/call", "1", "1", FlowState.COMPLETE, None, []),
        ("notifications/initialized", None, None, FlowState.COMPLETE, None,
         ["notification from the client (no response expected)"]),
        ("roots/list", "s1", None, FlowState.ERROR,
         "the client closed stdin and the server exited (status 0) before answering",
         ["request from the server to the client"]),
        ("ping", 7, 7, FlowState.COMPLETE, None, []),
        ("ping", 8, 8, FlowState.COMPLETE, None, []),
        ("notifications/cancelled", None, None, FlowState.COMPLETE, None,
         ["notification from the client (no response expected)"]),
        ("notifications/tools/list_changed", None, None, FlowState.COMPLETE, None,
         ["notification from the server (no response expected)"]),
    ], key=str)  # ids follow arrival, and the two sides arrive concurrently


def test_a_request_from_the_server_pairs_with_the_clients_answer_and_ids_are_per_side(tmp_path):
    with Store(tmp_path / "flows.sqlite3") as store:
        recorder = stdio.Recorder(store, store.new_session("stdio://s", "stdio"), "s")
        recorder.feed(stdio.CLIENT, b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')
        recorder.feed(stdio.SERVER, b'{"jsonrpc":"2.0","id":1,"method":"roots/list"}\n')
        recorder.feed(stdio.CLIENT, b'{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}\n')
        recorder.feed(stdio.SERVER, b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}\n')
        store.flush()
        flows = [store.get(row.id) for row in store.rows()]
    assert [(f.request_body, f.response_body, f.state, f.notes) for f in flows] == [
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}', b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}',
         FlowState.COMPLETE, []),
        (b'{"jsonrpc":"2.0","id":1,"method":"roots/list"}', b'{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}',
         FlowState.COMPLETE, ["request from the server to the client"]),
    ]


def test_lines_that_are_not_json_rpc_are_relayed_and_recorded_as_errors(tmp_path):
    client = (b'this is not json\n'
              b'[1, 2]\n'
              b'{"jsonrpc":"2.0","id":2}\n'
              b'{"jsonrpc":"2.0","id":3,"method":"ping"}\n')
    answers = (b'{"jsonrpc":"2.0","id":99,"result":{}}\n'
               b'\n'
               b'\n'
               b'{"jsonrpc":"2.0","id":3,"result":{}}\n')
    proc, received, db = run_script(tmp_path, client, answers)
    assert (proc.returncode, proc.stdout, received) == (0, answers, client)
    # ids follow arrival, and the two sides arrive concurrently
    assert sorted((f.request_body, f.response_body, f.state, f.error) for f in stored(db)) == sorted([
        (b"this is not json", b"", FlowState.ERROR,
         "not JSON-RPC: the client wrote a line that is not JSON (invalid literal, expected 'true': line 1 column 1 (char 0))"),
        (b"", b'{"jsonrpc":"2.0","id":99,"result":{}}', FlowState.ERROR, "a response from the server to id 99, which no open request has"),
        (b"1", b"", FlowState.ERROR, "not JSON-RPC: the client wrote a JSON value that is not an object"),
        (b"2", b"", FlowState.ERROR, "not JSON-RPC: the client wrote a JSON value that is not an object"),
        (b'{"jsonrpc":"2.0","id":2}', b"", FlowState.ERROR,
         "not JSON-RPC: a message from the client with neither a method nor a result/error and id"),
        (b'{"jsonrpc":"2.0","id":3,"method":"ping"}', b'{"jsonrpc":"2.0","id":3,"result":{}}', FlowState.COMPLETE, None),
    ])


def test_the_client_closing_stdin_with_a_request_open_ends_it_in_an_error(tmp_path):
    # The scripted server has no answer for the second request, and exits at EOF.
    client = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'
    proc, received, db = run_script(tmp_path, client, b'{"jsonrpc":"2.0","id":1,"result":{}}\n')
    assert (proc.returncode, received) == (0, client)
    assert [(method(f), f.state, f.error) for f in stored(db)] == [
        ("ping", FlowState.COMPLETE, None),
        ("tools/list", FlowState.ERROR,
         "the client closed stdin and the server exited (status 0) before answering"),
    ]


async def test_a_server_that_dies_mid_request_is_recorded_and_its_status_is_the_wrappers(tmp_path):
    db = tmp_path / "flows.sqlite3"
    with pytest.raises(ExceptionGroup) as raised:
        async with Client(sdk_server(db, "alpha")) as client:
            await client.call_tool("crash", {})
    closed = raised.value.exceptions[0].exceptions[0]  # the SDK's task groups wrap it twice
    assert (type(closed), str(closed)) == (MCPError, "Connection closed")
    flows = stored(db)
    assert [(method(f), f.state, f.error) for f in flows] == [
        ("server/discover", FlowState.COMPLETE, None),
        ("tools/call", FlowState.ERROR, "the server exited (status 3) before answering"),
    ]


def test_the_wrapper_exits_with_the_servers_status(tmp_path):
    db = tmp_path / "flows.sqlite3"
    proc = subprocess.Popen([sys.executable, *wrapper(db, "exit", "3")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, cwd=ROOT, env=ENV)
    proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    proc.stdin.flush()  # and stdin stays open: the server ends the exchange, not the client
    try:
        assert (proc.wait(60), proc.stdout.read()) == (3, b"")
    finally:
        proc.stdin.close()
        proc.stdout.close()
    assert [(method(f), f.state, f.error) for f in stored(db)] == [
        ("ping", FlowState.ERROR, "the server exited (status 3) before answering")]


def test_a_server_that_cannot_start_is_a_clear_error_and_a_flow(tmp_path):
    db = tmp_path / "flows.sqlite3"
    proc = subprocess.run([sys.executable, "-m", "inspector", "mcp-stdio", "--store", str(db), "--name", "gone", "--",
                           str(tmp_path / "no-such-server")], input=b"", capture_output=True, env=ENV, timeout=60)
    assert (proc.returncode, proc.stderr.decode()) == (
        127, f"toolwire-inspect: cannot start {str(tmp_path / 'no-such-server')!r}: No such file or directory\n")
    assert [(f.state, f.error) for f in stored(db)] == [
        (FlowState.ERROR, f"cannot start the server {str(tmp_path / 'no-such-server')!r}: No such file or directory")]


def test_no_command_is_refused(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "inspector", "mcp-stdio", "--store", str(tmp_path / "s.sqlite3")],
                          capture_output=True, env=ENV, timeout=60)
    assert (proc.returncode, proc.stderr.decode().splitlines()[0]) == (
        2, "toolwire-inspect: mcp-stdio needs the server's command after --, e.g. toolwire-inspect mcp-stdio -- "
           "npx -y @modelcontextprotocol/server-everything")


async def test_two_wrapped_servers_join_the_running_session_and_its_rules_see_both(tmp_path):
    db = tmp_path / "flows.sqlite3"
    with Store(db) as recording:  # stands for a running TUI or `record` on the same store
        session_id = recording.new_session("http://127.0.0.1:9/", "127.0.0.1:8787")
        # alpha and beta held at once by one agent; gamma in a session of its own
        async with Client(sdk_server(db, "alpha", extra=())) as alpha, Client(sdk_server(db, "beta", extra=())) as beta:
            await alpha.list_tools()
            await beta.list_tools()
        async with Client(sdk_server(db, "gamma", extra=("--new-session",))) as client:
            await client.list_tools()
        every = [recording.get(row.id) for row in recording.rows()]
    flows = [f for f in every if f.upstream_url != "stdio://gamma"]
    assert {f.session_id for f in flows} == {session_id}
    assert {f.session_id for f in every if f.upstream_url == "stdio://gamma"} == {session_id + 1}
    alpha, beta = (f.id for f in flows if method(f) == "tools/list")
    findings = [(v.rule, v.message) for v in check_session(entries_from_flows(flows))]
    assert findings == [("XL-03", f"tool {tool!r} is served by two servers: stdio://alpha (flow {alpha}) and "
                                  f"stdio://beta (flow {beta}), and they meet in one agent: both servers were in use at once (their exchanges interleave)")
                        for tool in ("lookup", "crash", "leak")]


def test_a_line_over_the_bound_is_relayed_whole_and_its_head_recorded_as_truncated(tmp_path, monkeypatch):
    monkeypatch.setattr(stdio, "MAX_LINE", 64)
    with Store(tmp_path / "flows.sqlite3") as store:
        recorder = stdio.Recorder(store, store.new_session("stdio://big", "stdio"), "big")
        big = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' + b"x" * 100 + b'"}}'
        for piece in (big[:40], big[40:90], big[90:] + b"\n", b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n'):
            recorder.feed(stdio.CLIENT, piece)
        recorder.feed(stdio.SERVER, b'{"jsonrpc":"2.0","id":2,"result":{}}\n')
        store.flush()
        flows = [store.get(row.id) for row in store.rows()]
    assert [(f.request_body, f.state, f.error) for f in flows] == [
        (big[:64], FlowState.ERROR, f"a line from the client of {len(big)} bytes, over the recording bound of 64: "
                                    f"relayed whole, its first 64 bytes recorded (truncated), not parsed"),
        (b'{"jsonrpc":"2.0","id":2,"method":"ping"}', FlowState.COMPLETE, None),
    ]


def test_a_flow_recorded_over_stdio_is_not_replayed_over_http(tmp_path):
    with Store(tmp_path / "flows.sqlite3") as store:
        recorder = stdio.Recorder(store, store.new_session("stdio://s", "stdio"), "s")
        recorder.feed(stdio.CLIENT, b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')
        recorder.close("over")
        store.flush()
        (flow,) = [store.get(row.id) for row in store.rows()]
    with pytest.raises(ReplayError) as refused:
        replay_request(flow, [])
    assert str(refused.value) == (f"flow #{flow.id} is not replayed: it was recorded over stdio (mcp-stdio), and a "
                                  f"replay is sent over HTTP")


@pytest.mark.parametrize("name", ["[x]", "a]b", "[::1", "srv [beta]"])
def test_a_server_name_with_brackets_is_recorded_listed_and_exported(tmp_path, name):
    """A name is the upstream's authority (`stdio://NAME`), where a bracket reads as an IPv6 host to
    every URL parser: `export` and `flows` raised on it."""
    received = tmp_path / "received"
    (tmp_path / "received.answers").write_bytes(b'{"jsonrpc":"2.0","id":1,"result":{}}\n')
    db = tmp_path / "flows.sqlite3"
    proc = subprocess.run([sys.executable, *wrapper(db, "script", str(received), name=name)],
                          input=b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', capture_output=True, cwd=ROOT,
                          env=ENV, timeout=60)
    assert proc.returncode == 0, proc.stderr
    [flow] = stored(db)
    assert (method(flow), flow.state) == ("ping", FlowState.COMPLETE)
    for command in (["flows", "--json"], ["export", "1"], ["export", "--session", "-o", str(tmp_path / "out")]):
        done = subprocess.run([sys.executable, "-m", "inspector", *command, "--store", str(db)], capture_output=True,
                              text=True, cwd=ROOT, env=ENV, timeout=60)
        assert (done.returncode, "Traceback" in done.stderr) == (0, False), (command, done.stderr)
