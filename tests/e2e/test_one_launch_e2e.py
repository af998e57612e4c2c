"""Issue 11's whole capture in one launch: the TUI's forwarder process serving routes (an openai-SDK
agent on one, an anthropic-SDK call on another, an MCP server over streamable HTTP on a route with a
port of its own) and an MCP server over stdio through `mcp-stdio`, all in one session, where the
session rules see the tool both MCP servers expose."""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

import anthropic
import openai
import pytest
from mcp import Client, StdioServerParameters

from inspector.child import ForwarderProcess
from inspector.flow import FlowState
from inspector.mock import MockUpstream
from inspector.store import Store
from inspector.wire.session import check_session, entries_from_flows
from inspector.proxy.options import Options, RouteFlags

from .test_mcp_e2e import TwoServers

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def mcp_upstream():
    servers = TwoServers()
    servers.thread.start()
    yield f"http://127.0.0.1:{servers.thread.port}"
    servers.thread.stop()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def flows_of(db: Path, count: int) -> list:
    """The store's flows once `count` have finished (another process writes them)."""
    deadline = time.monotonic() + 30
    while True:
        with Store(db, read_only=True) as store:
            flows = [store.get(row.id) for row in store.rows()]
        if sum(f.state is not FlowState.PENDING for f in flows) >= count or time.monotonic() > deadline:
            return flows
        time.sleep(0.05)  # polling another process's writes, with a deadline


async def test_one_launch_records_two_providers_and_two_mcp_servers_in_one_session(tmp_path, mcp_upstream,
                                                                                   monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    db = tmp_path / "flows.sqlite3"
    with MockUpstream() as first, MockUpstream() as second:
        child = ForwarderProcess.start(Options(None, store=str(db), port=0, routes=RouteFlags(**{"route": [
            f"oa={first.base_url}", f"an={second.base_url}", f"files={mcp_upstream}/alpha@{free_port()}"]})))
        try:
            routes = {route.route: route.client_url for route in child.all}
            assert sorted(routes) == ["an", "files", "oa"]
            chat = openai.OpenAI(api_key="sk-one-launch", base_url=f"{routes['oa']}/v1", max_retries=0)
            chat.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
            claude = anthropic.Anthropic(api_key="sk-ant-one-launch", base_url=routes["an"], max_retries=0)
            claude.messages.create(model="claude-sonnet-4-6", max_tokens=16,
                                   messages=[{"role": "user", "content": "hi"}])
            stdio = StdioServerParameters(
                command=sys.executable, cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)},
                args=["-m", "inspector", "mcp-stdio", "--store", str(db), "--name", "beta", "--",
                      sys.executable, "-m", "tests.mcp_servers", "sdk", "beta"])
            # one agent holding the HTTP server and the wrapped stdio one at once
            async with Client(f"{routes['files']}/mcp") as files, Client(stdio) as wrapped:
                await files.list_tools()
                await wrapped.list_tools()
            flows = flows_of(db, 6)
        finally:
            child.stop()
    assert {f.session_id for f in flows} == {child.session_id}
    # The MCP client's HTTP session is several exchanges on one path; each provider call is one.
    assert sorted({(f.route, f.path, f.upstream_url.split("/v1")[0].split("/alpha")[0]) for f in flows}) == [
        ("", "stdio:beta", "stdio://beta"), ("an", "/v1/messages", second.base_url),
        ("files", "/mcp", mcp_upstream), ("oa", "/v1/chat/completions", first.base_url)]
    http_list = next(f.id for f in flows if f.route == "files" and b'"tools/list"' in f.request_body)
    stdio_list = next(f.id for f in flows if f.upstream_url == "stdio://beta" and b'"tools/list"' in f.request_body)
    findings = [(v.rule, v.message) for v in check_session(entries_from_flows(flows))]
    assert findings == [("XL-03", f"tool 'lookup' is served by two servers: {mcp_upstream}/alpha/mcp (flow "
                                  f"{http_list}) and stdio://beta (flow {stdio_list}), and they meet in one agent: both servers were in use at once (their exchanges interleave)")]
