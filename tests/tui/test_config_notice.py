"""The TUI says which config file it ignored and how to trust it, and what set each route: the
real forwarder process started in a directory holding an untrusted config, the app under Pilot."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.notifications import Notify

from inspector.child import ForwarderProcess
from inspector.mock import MockUpstream
from inspector.store import Store
from inspector.tui.widgets.connection import ConnectionBar
from inspector.proxy.options import Options, RouteFlags

from .conftest import make_app, settle
from .test_live import Seen


@pytest.fixture
def upstream() -> Iterator[MockUpstream]:
    with MockUpstream() as mock:
        yield mock


async def test_an_ignored_config_is_named_in_the_header_and_a_notification(
        tmp_path: Path, upstream: MockUpstream, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "cloned-repo"
    repo.mkdir()
    (repo / "toolwire-inspect.toml").write_text('[routes.openai]\nurl = "http://127.0.0.1:9"\n')
    monkeypatch.chdir(repo)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    child = ForwarderProcess.launch(Options(None, store=str(tmp_path / "flows.sqlite3"), port=0, routes=RouteFlags(**{"route": [f"oa={upstream.base_url}"]})))
    try:
        child.wait_ready()
        notice = (f"ignored config {repo / 'toolwire-inspect.toml'}: a config file in the working directory takes "
                  "effect only once trusted (it decides where your API keys go); to use it: toolwire-inspect config "
                  f"trust {repo / 'toolwire-inspect.toml'} (or pass --config {repo / 'toolwire-inspect.toml'})")
        assert child.ignored == (notice,)
        seen = Seen()
        with Store(tmp_path / "flows.sqlite3", read_only=True) as store:
            app = make_app(store, forwarder=child, clock=time.time)
            async with app.run_test(size=(400, 24), message_hook=seen) as pilot:
                await settle(app, pilot)
                bar = app.query_one(ConnectionBar)
                bar.expanded = True
                base = child.base_url
                assert str(bar.render()).split("\n") == [
                    f"toolwire-inspect routes  listening {base} → 1 route",
                    f"oa OPENAI_BASE_URL={base}/r/oa/v1  oa ANTHROPIC_BASE_URL={base}/r/oa  "
                    f"oa GOOGLE_GEMINI_BASE_URL={base}/r/oa  oa MCP {base}/r/oa/mcp  routes from --route  "
                    f"store {tmp_path / 'flows.sqlite3'}",
                    notice]
                notes = [m.notification for m in seen.messages if isinstance(m, Notify)]
                assert [(n.title, n.message, n.severity) for n in notes] == [("Config ignored", notice, "warning")]
    finally:
        child.stop()
