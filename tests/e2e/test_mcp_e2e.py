"""The official mcp SDK client -> the real forwarder -> two mcp SDK servers (streamable HTTP) behind one
upstream: tools/list and tools/call flows are recorded, parsed and checked, and the tool name both
servers expose is reported with both origins."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from mcp import Client

from inspector.analysis import analyse
from inspector.proxy import Forwarder
from inspector.proxy.server import ServerThread
from inspector.cli import main
from inspector.store import Store
from inspector.wire.dialect import Dialect
from inspector.wire.session import check_session, entries_from_flows
from inspector.proxy.options import Options
from tests.mcp_servers import mcp_server


class TwoServers:
    """alpha at /alpha/mcp and beta at /beta/mcp on one loopback port."""

    def __init__(self) -> None:
        self.servers = {name: mcp_server(name) for name in ("alpha", "beta")}
        self.apps = {name: server.streamable_http_app(streamable_http_path=f"/{name}/mcp")
                     for name, server in self.servers.items()}
        self._stack = contextlib.AsyncExitStack()
        self.thread = ServerThread(self, "127.0.0.1", 0, name="mcp-upstream", setup=self._setup,
                                   teardown=self._stack.aclose)

    async def _setup(self) -> None:
        # Both session managers run for the server's lifetime, on its loop, in its serving task.
        for server in self.servers.values():
            await self._stack.enter_async_context(server.session_manager.run())

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        name = scope.get("path", "/").strip("/").split("/", 1)[0]
        await self.apps.get(name, self.apps["alpha"])(scope, receive, send)


@contextlib.contextmanager
def forwarding_to(upstream, tmp_path):
    """A real forwarder on a loopback port in front of `upstream` (an MCP server app with a `thread`),
    recording into a fresh store: (forwarder, store)."""
    upstream.thread.start()
    store = Store(tmp_path / "flows.sqlite3")
    store.new_session(f"http://127.0.0.1:{upstream.thread.port}", "127.0.0.1:0")
    forwarder = Forwarder(Options(f"http://127.0.0.1:{upstream.thread.port}", port=0), store=store)
    forwarder.start()
    try:
        yield forwarder, store
    finally:
        forwarder.stop()
        store.close()
        upstream.thread.stop()


@pytest.fixture
def rig(tmp_path):
    with forwarding_to(TwoServers(), tmp_path) as pair:
        yield pair


async def test_mcp_through_the_forwarder_is_recorded_checked_and_duplicates_named(rig):
    forwarder, store = rig
    results = {}
    # One agent holding both servers at once (the seed's aggregation): their exchanges interleave.
    async with Client(f"{forwarder.base_url}/alpha/mcp") as alpha, Client(f"{forwarder.base_url}/beta/mcp") as beta:
        for name, client in (("alpha", alpha), ("beta", beta)):
            tools = await client.list_tools()
            called = await client.call_tool("lookup", {"query": "x"})
            results[name] = ([tool.name for tool in tools.tools], called.content[0].text)
    assert results == {"alpha": (["lookup", "alpha_status"], "alpha: x"), "beta": (["lookup", "beta_status"], "beta: x")}

    store.flush()
    flows = [store.get(row.id) for row in store.rows()]
    methods = {}
    for flow in flows:
        analysis = analyse(flow)
        request = analysis.request if isinstance(analysis.request, dict) else {}
        if request.get("method") in ("tools/list", "tools/call"):
            assert analysis.dialect is Dialect.MCP
            assert [v for v in analysis.violations if v.severity.value == "error"] == []
            methods.setdefault(request["method"], []).append(flow.path)
            assert analysis.response is not None
    assert {method: sorted(paths) for method, paths in methods.items()} == {
        "tools/list": ["/alpha/mcp", "/beta/mcp"], "tools/call": ["/alpha/mcp", "/beta/mcp"]}

    duplicates = check_session(entries_from_flows(flows))
    port = _upstream_port(flows)
    assert [(v.rule, v.severity.value, v.pointer) for v in duplicates] == [("XL-03", "error", "/result/tools/0/name")]
    assert duplicates[0].message == (
        f"tool 'lookup' is served by two servers: http://127.0.0.1:{port}/alpha/mcp (flow "
        f"{_list_flow(flows, '/alpha/mcp')}) and http://127.0.0.1:{port}/beta/mcp (flow {_list_flow(flows, '/beta/mcp')})"
        ", and they meet in one agent: both servers were in use at once (their exchanges interleave)")


async def test_two_mcp_clients_one_after_the_other_never_met(rig):
    """Issue 18: each client with its own server, one after the other: no agent saw both lists."""
    forwarder, store = rig
    for name in ("alpha", "beta"):
        async with Client(f"{forwarder.base_url}/{name}/mcp") as client:
            await client.list_tools()
            await client.call_tool("lookup", {"query": "x"})
    store.flush()
    assert check_session(entries_from_flows([store.get(row.id) for row in store.rows()])) == []


def _upstream_port(flows) -> int:
    return int(flows[0].upstream_url.split(":")[2].split("/")[0])


def _list_flow(flows, path: str) -> int:
    return next(f.id for f in flows if f.path == path and b'"tools/list"' in f.request_body)


async def test_check_session_command_reports_the_recorded_duplicate(rig, capsys):
    forwarder, store = rig
    async with Client(f"{forwarder.base_url}/alpha/mcp") as alpha, Client(f"{forwarder.base_url}/beta/mcp") as beta:
        await alpha.list_tools()
        await beta.list_tools()
    store.flush()
    flows = [store.get(row.id) for row in store.rows()]
    beta = _list_flow(flows, "/beta/mcp")
    mcp_flows = len(store.flow_ids(store.session_id, dialects=("mcp",)))

    assert main(["check", "--session", "--store", str(store.path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"#{beta}:/result/tools/0/name: error XL-03 (rejects) tool 'lookup' is served by two servers: ")
    assert lines[1:] == [f"session {store.session_id}: {mcp_flows} MCP flow(s) checked: 1 error(s), 0 other finding(s)"]

    assert main(["check", "--session", "999", "--store", str(store.path)]) == 2
