"""A collector that is down, answers 500 or does not answer: forwarding goes on, every flow is
stored, and what the export could not send is counted. The export is fed by the store's writer
(after a flow is committed) through a bounded queue, never by the forwarder."""

from __future__ import annotations

import socket

import httpx
import pytest

from inspector.mock import MockUpstream, json_response
from inspector.otlp.live import LiveExport, exporter
from inspector.otlp.spans import options
from inspector.proxy import Forwarder
from inspector.store import Store
from inspector.wire.dialects.openai_chat.mock import chat_completion
from inspector.proxy.options import Options
from tests.e2e.conftest import Completed

from .receiver import Receiver

FLOWS = 12
CAPACITY = 2
BODY = b'{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}'


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens once the socket is closed


def forward_with_export(tmp_path, endpoint: str) -> tuple[LiveExport, list[int], list]:
    """FLOWS requests through a forwarder whose finished flows feed a live export to `endpoint`."""
    with MockUpstream() as mock, Store(tmp_path / "flows.sqlite3") as store:
        mock.push(*[json_response(chat_completion(f"answer {n}")) for n in range(FLOWS)])
        store.new_session(mock.base_url, "127.0.0.1:0")
        live = LiveExport(exporter(endpoint), options(), get=store.get,
                          session_started=lambda _: 0.0, capacity=CAPACITY)
        completed = Completed()

        def on_event(event):
            completed(event)
            if event.kind == "completed":
                live.flow_saved(event.flow)

        forwarder = Forwarder(Options(mock.base_url, port=0), store=store, on_event=on_event)
        forwarder.start()
        try:
            statuses = [httpx.post(f"{forwarder.base_url}/v1/chat/completions", content=BODY).status_code
                        for _ in range(FLOWS)]
            rows = completed.wait(FLOWS)
        finally:
            forwarder.stop()
        return live, statuses, rows


@pytest.fixture(autouse=True)
def short_export_timeout(monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")  # the SDK's own deadline per export


def test_a_collector_that_does_not_answer_drops_flows_counted_and_forwarding_completes(tmp_path, monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "60")  # the export waits on the collector all along
    with Receiver("hold") as receiver:
        live, statuses, rows = forward_with_export(tmp_path, receiver.url)
        receiver.wait(1)  # the first export is still held at the collector: every flow has been forwarded
        assert statuses == [200] * FLOWS
        assert [row.state for row in rows] == ["complete"] * FLOWS
        receiver.release.set()
        counts = live.close(timeout=30)
    # The first flows went out in the held export, CAPACITY waited behind it, the rest were dropped.
    assert (counts.exported + counts.dropped, counts.failed) == (FLOWS, 0)
    assert counts.dropped > 0
    assert len(receiver.spans()) == counts.exported


def test_a_collector_answering_500_counts_failed_spans(tmp_path):
    with Receiver("error") as receiver:
        live, statuses, rows = forward_with_export(tmp_path, receiver.url)
        counts = live.close(timeout=10)
    assert statuses == [200] * FLOWS
    assert (counts.exported, counts.failed + counts.dropped) == (0, FLOWS)
    assert len(receiver.requests) >= 1


def test_a_collector_that_is_down_counts_failed_spans(tmp_path):
    live, statuses, rows = forward_with_export(tmp_path, f"http://127.0.0.1:{closed_port()}")
    counts = live.close(timeout=10)
    assert statuses == [200] * FLOWS
    assert [row.state for row in rows] == ["complete"] * FLOWS
    assert (counts.exported, counts.failed + counts.dropped) == (0, FLOWS)


def test_a_collector_that_answers_gets_every_flow(tmp_path):
    with Receiver() as receiver:
        live, statuses, rows = forward_with_export(tmp_path, receiver.url)
        counts = live.close(timeout=10)
    assert (counts.exported + counts.dropped, counts.failed) == (FLOWS, 0)
    assert len(receiver.spans()) == counts.exported


def test_flows_still_in_an_export_when_the_close_gives_up_are_counted_dropped(tmp_path, monkeypatch):
    """A collector that holds the export past the close's time: every flow is accounted for, the
    ones in the export that never ended included (they were neither exported nor failed)."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "60")
    with Receiver("hold") as receiver:
        live, statuses, _ = forward_with_export(tmp_path, receiver.url)
        receiver.wait(1)
        counts = live.close(timeout=0.5)
        assert (counts.exported, counts.failed, counts.dropped) == (0, 0, FLOWS)
        receiver.release.set()
    assert statuses == [200] * FLOWS
