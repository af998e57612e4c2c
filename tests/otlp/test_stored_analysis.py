"""Exports read the analysis the store kept (issue 20, "computed once"): exporting a recorded
session as fixtures or as OTLP spans analyses no flow again. Counted by the counter the analysis
module keeps of its own steps, around the real CLI on a store the real forwarder recorded."""

from __future__ import annotations

import pytest
from inspector import analysis
from inspector.cli import main


@pytest.mark.parametrize("form", ["json", "otlp"])
def test_exporting_a_recorded_session_analyses_no_flow_again(recorded, tmp_path, form):
    before = analysis.calls.copy()
    assert main(["export", "--session", "--format", form, "-o", str(tmp_path / "out"),
                 "--store", str(recorded.path)]) == 0
    assert (analysis.calls - before)["analyse"] == 0
    assert len(list((tmp_path / "out").iterdir())) == (1 if form == "otlp" else 3)


def test_the_live_export_reads_the_analysis_the_writer_stored(tmp_path):
    """`record --otlp-endpoint`'s export, fed each flow once it is committed, builds its spans from
    the analysis committed with it: the flows are analysed once each, by the writer."""
    import httpx

    from inspector.mock import MockUpstream, json_response
    from inspector.otlp.live import open_live
    from inspector.proxy import Forwarder
    from inspector.proxy.options import Options
    from inspector.store import Store
    from inspector.wire.dialects.openai_chat.mock import chat_completion
    from tests.e2e.conftest import Completed

    from .receiver import Receiver

    flows = 3
    body = b'{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}'
    with Receiver() as receiver, MockUpstream() as mock, Store(tmp_path / "flows.sqlite3") as store:
        mock.push(*[json_response(chat_completion(f"answer {n}")) for n in range(flows)])
        store.new_session(mock.base_url, "127.0.0.1:0")
        live = open_live(receiver.url, content=False, store=store)
        completed = Completed()

        def on_event(event):
            completed(event)
            if event.kind == "completed":
                live.flow_saved(event.flow)

        before = analysis.calls.copy()
        forwarder = Forwarder(Options(mock.base_url, port=0), store=store, on_event=on_event)
        forwarder.start()
        try:
            for _ in range(flows):
                assert httpx.post(f"{forwarder.base_url}/v1/chat/completions", content=body).status_code == 200
            completed.wait(flows)
        finally:
            forwarder.stop()
        counts = live.close_after(store)
        spent = analysis.calls - before
        spans = receiver.spans()
    assert (counts.exported, counts.failed, counts.dropped, len(spans)) == (flows, 0, 0, flows)
    assert spent["analyse"] == flows  # the writer's, one per flow; none by the export
