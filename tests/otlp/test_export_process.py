"""The live export runs in a process of its own, handed each committed flow's id, and reads the flow
back from the store (issues 20 and 21: span building and the collector's round trips cost the
recorder's process nothing but a pipe write). Real forwarder, real store, real receiver."""

from __future__ import annotations

import os
import signal

import httpx

from inspector.formats.otlp_json import attributes
from inspector.mock import MockUpstream, json_response
from inspector.otlp.live import Counts, start_live
from inspector.proxy import Forwarder
from inspector.proxy.options import Options
from inspector.store import Store
from inspector.wire.dialects.openai_chat.mock import chat_completion
from tests.e2e.conftest import Completed

from .receiver import Receiver
from .test_drops_shown import wait_until

BODY = b'{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}'


def test_the_export_process_reads_the_flows_back_and_its_death_costs_spans_only(tmp_path):
    with Receiver() as receiver, MockUpstream() as mock, Store(tmp_path / "flows.sqlite3") as store:
        mock.push(*[json_response(chat_completion(f"answer {n}")) for n in range(3)])
        store.new_session(mock.base_url, "127.0.0.1:0")
        live = start_live(receiver.url, content=False, store=store)
        assert live.pid != os.getpid()
        completed = Completed()

        def on_event(event):
            completed(event)
            if event.kind == "completed":
                live.flow_saved(event.flow)

        with Forwarder(Options(mock.base_url, port=0), store=store, on_event=on_event) as forwarder:
            for _ in range(2):
                assert httpx.post(f"{forwarder.base_url}/v1/chat/completions", content=BODY).status_code == 200
            completed.wait(2)
            wait_until(lambda: live.counts.exported == 2)
            assert [span.name for span in receiver.spans()] == ["chat gpt-4o-mini", "chat gpt-4o-mini"]
            # The spans name the stored flows: their ids, as the recorder numbered them.
            assert sorted(row.id for row in completed.rows) == sorted(
                attributes(span.attributes)["toolwire.flow.id"] for span in receiver.spans())

            os.kill(live.pid, signal.SIGKILL)
            os.waitpid(live.pid, 0)
            assert httpx.post(f"{forwarder.base_url}/v1/chat/completions", content=BODY).status_code == 200
            completed.wait(3)
        counts = live.close_after(store)
    # Forwarding and recording went on; the flow the dead exporter never took is counted, not lost silently.
    assert counts == Counts(queued=2, dropped=1, exported=2, failed=0, metrics_failed=0)
    assert store.path.exists() and len(receiver.spans()) == 2


def test_a_flow_saved_after_the_close_is_counted_and_written_nowhere(tmp_path):
    """The pipe's descriptor number, once closed, is the next one the process opens: a flow id
    written to it would land in somebody else's file (an event loop's, a socket)."""
    from inspector.flow import Flow

    with Receiver() as receiver, Store(tmp_path / "flows.sqlite3") as store:
        live = start_live(receiver.url, content=False, store=store)
        number = live._process.stdin.fileno()
        assert live.close() == Counts()
        read, write = os.pipe()
        if write != number:  # the closed number, made the writing end of someone else's pipe
            if read == number:
                read = os.dup(read)
            os.dup2(write, number)
            os.close(write)
        try:
            live.flow_saved(Flow(id=7, session_id=1, started_at=0.0, method="POST", path="/v1/chat/completions"))
            os.close(number)
            landed = os.read(read, 100)  # every writer closed: what was written, then the end
        finally:
            os.close(read)
    assert (landed, live.counts) == (b"", Counts(dropped=1))
