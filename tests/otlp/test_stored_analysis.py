"""Exports read the analysis the store kept (issue 20, "computed once"): exporting a recorded
session as fixtures or as OTLP spans analyses no flow again. Counted by the counter the analysis
module keeps of its own steps, around the real CLI on a store the real forwarder recorded."""

from __future__ import annotations

import httpx
import pytest
from inspector import analysis
from inspector.cli import main


@pytest.mark.parametrize("form", ["json", "otlp", "html"])
def test_exporting_a_recorded_session_analyses_no_flow_again(recorded, tmp_path, form):
    before = analysis.calls.copy()
    assert main(["export", "--session", "--format", form, "-o", str(tmp_path / "out"),
                 "--store", str(recorded.path)]) == 0
    assert (analysis.calls - before)["analyse"] == 0
    assert len(list((tmp_path / "out").iterdir())) == (3 if form == "json" else 1)


def test_the_live_export_builds_spans_from_the_analysis_the_store_kept(tmp_path):
    """Issue 21: the live export analysed each flow again on its thread, in the forwarder's process,
    competing with forwarding for the GIL: each flow is analysed once, by the store's writer."""
    from inspector.mock import MockUpstream, json_response
    from inspector.otlp.live import open_live
    from inspector.proxy import Forwarder
    from inspector.proxy.options import Options
    from inspector.store import Store
    from inspector.wire.dialects.openai_chat.mock import chat_completion
    from tests.e2e.conftest import Completed

    from .receiver import Receiver

    flows = 4
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
        with Forwarder(Options(mock.base_url, port=0), store=store, on_event=on_event) as forwarder:
            for _ in range(flows):
                assert httpx.post(f"{forwarder.base_url}/v1/chat/completions", content=body).status_code == 200
            completed.wait(flows)
        counts = live.close_after(store)
        assert (counts.exported, counts.failed, counts.dropped) == (flows, 0, 0)
        assert (analysis.calls - before)["analyse"] == flows


def test_pushing_a_recorded_session_analyses_no_flow_again(recorded):
    from .receiver import Receiver

    with Receiver() as receiver:
        before = analysis.calls.copy()
        assert main(["otlp", "push", "--endpoint", receiver.url, "--store", str(recorded.path)]) == 0
        assert (analysis.calls - before)["analyse"] == 0
        assert [span.name for span in receiver.spans()] == [
            "chat gpt-4o-mini", "execute_tool scrape_webpage", "chat gpt-4o-mini", "chat claude-sonnet-4-6"]
