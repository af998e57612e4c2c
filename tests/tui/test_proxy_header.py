"""The header under a forwarder launched with proxy mode's options: a row with HTTPS_PROXY, how to
trust the CA (the variables `toolwire-inspect ca` prints, once it has written their file) and the
hosts intercepted, cut by priority to the width, whole entries only."""

from __future__ import annotations

import asyncio
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.child import ForwarderProcess
from inspector.mock import MockUpstream
from inspector.proxy.ca import LocalCA, default_dir
from inspector.store import Store
from inspector.tui.app import InspectorApp
from inspector.tui.widgets.connection import ConnectionBar, Proxying
from inspector.proxy.options import Options, ProxyOptions

from .conftest import make_app
from .test_process import wait_until

PROXY = {"intercept": ["api.example.com=http://127.0.0.1:9"], "allow_connect": [], "upstream_ca": None}


@pytest.fixture
def data_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The CA's folder in a data home of the test's own (XDG wants it absolute), of one length in
    every run so the header's layout is the same: /tmp/tw + 8 characters."""
    home = Path(tempfile.mkdtemp(prefix="tw", dir="/tmp"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    yield home
    shutil.rmtree(home)


@pytest.fixture
def child(tmp_path: Path, data_home: Path) -> Iterator[ForwarderProcess]:
    with MockUpstream() as upstream:
        forwarder = ForwarderProcess.start(Options(upstream.base_url, store=str(tmp_path / "flows.sqlite3"), port=0, proxy=ProxyOptions(**PROXY)))
        yield forwarder
        forwarder.stop()


def header(app: InspectorApp) -> list[str]:
    return str(app.query_one(ConnectionBar).render()).split("\n")


async def test_the_header_says_what_a_proxy_mode_client_sets(tmp_path: Path, data_home: Path,
                                                              child: ForwarderProcess) -> None:
    proxy = f"HTTPS_PROXY={child.base_url}"
    store = Store(tmp_path / "flows.sqlite3", read_only=True)
    try:
        app = make_app(store, forwarder=child)
        async with app.run_test(size=(80, 24)) as pilot:
            # Before `toolwire-inspect ca` there is no file to name: the command that makes it.
            assert header(app)[2:] == [f"{proxy}  CA: toolwire-inspect ca  c: all settings"]
            await pilot.resize_terminal(160, 48)
            await pilot.pause()
            assert header(app)[2:] == [f"{proxy}  CA: toolwire-inspect ca  intercepts api.example.com + 18 LLM "
                                       "API hosts"]
            # Too narrow for the hosts' names: their shorter form, still whole.
            await pilot.resize_terminal(104, 30)
            await pilot.pause()
            assert header(app)[2:] == [f"{proxy}  CA: toolwire-inspect ca  intercepts 1 given + 18 LLM API hosts"]
        bundle = LocalCA(default_dir()).write_bundle(b"")  # what `toolwire-inspect ca` writes
        assert bundle == data_home / "toolwire-inspect/ca/toolwire-ca-bundle.pem"
        app = make_app(store, forwarder=child)
        async with app.run_test(size=(80, 24)) as pilot:
            # The path is too wide for 80 columns beside HTTPS_PROXY: its short form, never a cut path.
            assert header(app)[2:] == [f"{proxy}  CA: toolwire-inspect ca  c: all settings"]
            await pilot.resize_terminal(160, 48)
            await pilot.pause()
            # Whole entries by priority: the hosts give way to the file the client must trust.
            assert header(app)[2:] == [f"{proxy}  SSL_CERT_FILE={bundle}  c: all settings"]
            await pilot.press("c")
            await pilot.pause()
            assert header(app)[-2:] == [
                f"{proxy}  SSL_CERT_FILE={bundle}  intercepts api.example.com + 18 LLM API hosts",
                f"REQUESTS_CA_BUNDLE={bundle}  NODE_EXTRA_CA_CERTS={bundle.parent / 'toolwire-ca.pem'}"]
    finally:
        store.close()


def test_without_proxy_options_there_is_no_proxy_row_near_miss() -> None:
    """CONNECT is always answered; the row is for those who launched with proxy mode's options."""
    assert Proxying.launched("http://127.0.0.1:8787", ProxyOptions()) is None
    assert Proxying.launched("http://127.0.0.1:8787", ProxyOptions(intercept=["a.test"])) is not None


def port_of(upstream: MockUpstream) -> str:
    return upstream.base_url.rsplit(":", 1)[1]


def tunnel(proxy_url: str, target: str) -> bytes:
    """One CONNECT through the proxy, closed once answered: the first line of the answer."""
    host, port = proxy_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        return sock.recv(100).split(b"\r\n")[0]


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_header_says_which_hosts_were_tunnelled_unrecorded(tmp_path: Path, data_home: Path, size) -> None:
    """A CONNECT to a host off the intercept list is relayed untouched: no flow says so, the header does."""
    with MockUpstream() as upstream, MockUpstream() as other:
        child = ForwarderProcess.start(Options(upstream.base_url, store=str(tmp_path / "flows.sqlite3"), port=0,
                                               proxy=ProxyOptions(allow_connect=["localhost", "127.0.0.1"])))
        try:
            store = Store(tmp_path / "flows.sqlite3", read_only=True)
            app = make_app(store, forwarder=child)
            async with app.run_test(size=size) as pilot:
                assert [line for line in header(app) if "tunnelled" in line] == []
                one, two = (f"localhost:{port_of(upstream)}", f"127.0.0.1:{port_of(other)}")
                for target in (one, two, one):
                    assert await asyncio.to_thread(tunnel, child.base_url, target) == b"HTTP/1.1 200 Connection established"
                await asyncio.to_thread(wait_until, lambda: child.tunnelled[0] == 3)
                assert child.tunnelled == (3, ((one, 2), (two, 1)))
                app.flows_screen.show_health()  # what its interval does twice a second
                await pilot.pause()
                assert header(app)[-1] == (f"tunnelled unrecorded 3: {one} ×2, {two}  (--intercept HOST records "
                                           "them)")
                assert store.count() == 0
            store.close()
        finally:
            child.stop()
