"""The session rules across routes: two MCP servers, each behind a route of its own, used by the
official mcp SDK client in one session. Servers are told apart by their upstream host+path, not by
the route a client took, so the tool both expose is named with both origins, and one server
reached through two routes (one entry session-scoped) is one endpoint registered twice."""

from __future__ import annotations

import pytest
from mcp import Client

from inspector.proxy.routes import open_forwarder, resolve
from inspector.store import Store
from inspector.wire.session import check_session, entries_from_flows
from inspector.proxy.options import Options

from .test_mcp_e2e import TwoServers


@pytest.fixture
def upstream():
    servers = TwoServers()
    servers.thread.start()
    yield f"http://127.0.0.1:{servers.thread.port}"
    servers.thread.stop()


def listed(store: Store) -> list:
    store.flush()
    flows = [store.get(row.id) for row in store.rows()]
    return flows, {f.route: f.id for f in flows if b'"tools/list"' in f.request_body}


async def test_the_same_tool_from_two_servers_on_two_routes_is_named_with_both(upstream, tmp_path):
    with Store(tmp_path / "flows.sqlite3") as store:
        table = resolve(routes=[f"a={upstream}/alpha", f"b={upstream}/beta"], cwd=tmp_path)
        with open_forwarder(table, Options(port=0), store=store) as router:
            a, b = router.forwarders
            async with Client(f"{a.client_url}/mcp") as first, Client(f"{b.client_url}/mcp") as second:
                await first.list_tools()
                await second.list_tools()
        flows, lists = listed(store)
    findings = [(v.rule, v.severity.value, v.pointer, v.message) for v in check_session(entries_from_flows(flows))]
    assert findings == [("XL-03", "error", "/result/tools/0/name",
                         f"tool 'lookup' is served by two servers: {upstream}/alpha/mcp (flow {lists['a']}) and "
                         f"{upstream}/beta/mcp (flow {lists['b']}), and they meet in one agent: both servers were in use at once (their exchanges interleave)")]


async def test_one_endpoint_registered_twice_through_two_routes_is_one_server(upstream, tmp_path):
    with Store(tmp_path / "flows.sqlite3") as store:
        table = resolve(routes=[f"a={upstream}/alpha", f"again={upstream}/alpha"], cwd=tmp_path)
        with open_forwarder(table, Options(port=0), store=store) as router:
            plain, scoped = router.forwarders
            for url in (f"{plain.client_url}/mcp", f"{scoped.client_url}/mcp?session=s1"):
                async with Client(url) as client:
                    await client.list_tools()
        flows, lists = listed(store)
    first, second = f"{upstream}/alpha/mcp", f"{upstream}/alpha/mcp?session=s1"
    endpoint = first.removeprefix("http://")
    findings = [(v.rule, v.pointer, v.message) for v in check_session(entries_from_flows(flows))]
    assert findings == [
        ("XL-03", f"/result/tools/{n}/name",
         f"tool {tool!r} comes twice from one endpoint {endpoint} registered as {first} (flow {lists['a']}) and "
         f"{second} (flow {lists['again']}): one server, two entries")
        for n, tool in enumerate(("lookup", "alpha_status"))]
