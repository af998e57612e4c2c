"""What the live export loses is shown while it happens, not only counted: `record` prints it on
stderr as soon as a collector fails, and the TUI's header says it (its forwarder's child process
reports the export's counts). The collector here is down: nothing listens on its port."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import httpx

from inspector.child import ForwarderProcess, Otlp
from inspector.proxy.options import Options, OtlpOptions
from inspector.mock import MockUpstream
from inspector.store import Store
from inspector.tui.bridge import EventBridge
from inspector.tui.widgets.connection import ConnectionBar
from tests.tui.conftest import make_app, settle
from tests.tui.flows import clean_request

from .test_collector_trouble import closed_port
from .test_live_export import start_record, stop


def wait_until(condition, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    """Poll with a deadline: another process's counts announce themselves to nobody here."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_record_says_on_stderr_when_the_collector_fails_while_it_records(tmp_path, monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    with MockUpstream() as upstream:
        proc, routes = start_record(tmp_path, "--store", str(tmp_path / "flows.sqlite3"), "--route",
                                    f"oa={upstream.base_url}", "--otlp-endpoint", f"http://127.0.0.1:{closed_port()}")
        watchdog = threading.Timer(60, proc.kill)  # a line that never comes fails the test, not the run
        watchdog.start()
        try:
            assert httpx.post(f"{routes['oa']}/v1/chat/completions", json=clean_request()).status_code == 200
            line = next(line for line in proc.stderr if "otlp:" in line)
        finally:
            watchdog.cancel()
            err = stop(proc)
    # Said while recording (the forwarder still runs), then once more in the summary at the end.
    assert line == "toolwire-inspect: otlp: 0 spans exported, 1 failed, 0 flows dropped (queue of 1024 full or closing)\n"
    assert err.splitlines()[-1] == line.rstrip("\n")


async def test_the_tuis_header_shows_what_the_export_lost(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")  # the child inherits it
    with MockUpstream() as upstream:
        child = ForwarderProcess.start(Options(upstream.base_url, store=str(tmp_path / "flows.sqlite3"), port=0,
                                               otlp=OtlpOptions(f"http://127.0.0.1:{closed_port()}")))
        try:
            bridge = EventBridge()
            bridge.follow(child)
            with Store(tmp_path / "flows.sqlite3", read_only=True) as store:
                store.session_id = child.session_id
                app = make_app(store, forwarder=child, bridge=bridge, clock=time.time)
                async with app.run_test(size=(120, 24)) as pilot:
                    bar = app.query_one(ConnectionBar)
                    assert bar.export_problem is None
                    response = await asyncio.to_thread(httpx.post, f"{child.base_url}/v1/chat/completions",
                                                       json=clean_request())
                    assert response.status_code == 200
                    await asyncio.to_thread(wait_until, lambda: bar.export_problem is not None)
                    await settle(app, pilot)
                    assert str(bar.render()).split("\n")[-1] == (
                        "otlp: 0 flows dropped, 1 spans failed (0 exported): the collector is down or slow")
                    assert child.otlp == Otlp(exported=0, failed=1, dropped=0)
        finally:
            child.stop()
