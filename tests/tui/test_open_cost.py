"""Opening a flow analyses nothing (issue 20, "computed once"): the writer stored the analysis, and
the flow screen reads it, decoding and parsing each body once. Counted by the counter the analysis
module keeps of its own steps, around the real app opening flows of a real store."""

import gzip

import orjson

from inspector import analysis
from inspector.flow import Chunk, Flow, FlowState, Mode
from inspector.store import Store
from inspector.wire.dialects.openai_chat.mock import chat_stream
from inspector.wire.translate import get_bridge

from .conftest import make_app
from .flows import T0, clean_request, defective_request, populate, sse
from .test_flow_view import open_flow


def _gzip_stream(store: Store) -> int:
    """A streamed answer the upstream gzipped: decompressed and event-parsed once, by the writer."""
    assert store.session_id is not None
    events = sse(chat_stream("It is sunny in Paris.", pieces=3))
    body = gzip.compress(b"".join(events))
    flow = Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=T0 + 11, method="POST",
                path="/v1/chat/completions", request_headers=[("content-type", "application/json")],
                request_body=orjson.dumps(clean_request()), upstream_url="http://127.0.0.1:9/v1/chat/completions",
                status=200, response_headers=[("content-type", "text/event-stream"), ("content-encoding", "gzip")],
                response_body=body, streamed=True, chunks=[Chunk(0.1, body)], state=FlowState.COMPLETE)
    store.save(flow)
    return flow.id


def _translated(store: Store) -> int:
    """A Chat request the forwarder sent to an Anthropic upstream: translated once, by the forwarder."""
    assert store.session_id is not None
    request = defective_request()
    sent = get_bridge("openai-chat", "anthropic").request(request, "/v1/chat/completions").payload
    answer = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
              "content": [{"type": "text", "text": "Sunny."}], "stop_reason": "end_turn",
              "usage": {"input_tokens": 3, "output_tokens": 2}}
    flow = Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=T0 + 13, method="POST",
                path="/v1/chat/completions", request_headers=[("content-type", "application/json")],
                request_body=orjson.dumps(request), mode=Mode.TRANSLATE, translate="openai-chat:anthropic",
                upstream_url="http://127.0.0.1:9/v1/messages",
                upstream_request_headers=[("content-type", "application/json")],
                upstream_request_body=orjson.dumps(sent), status=200,
                response_headers=[("content-type", "application/json")],
                upstream_response_body=orjson.dumps(answer),
                response_body=orjson.dumps(get_bridge("openai-chat", "anthropic").response(
                    answer, get_bridge("openai-chat", "anthropic").request(request, "/v1/chat/completions").state
                ).payload), state=FlowState.COMPLETE)
    store.save(flow)
    return flow.id


async def test_opening_a_flow_runs_no_analysis_and_decodes_each_body_once(store: Store) -> None:
    ids = populate(store)
    ids["gzip-stream"] = _gzip_stream(store)
    ids["translated"] = _translated(store)
    store.flush()
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        counted = {}
        for name, flow_id in ids.items():
            before = analysis.calls.copy()
            screen = await open_flow(app, pilot, flow_id)
            assert screen.view is not None and screen.view.flow.id == flow_id
            spent = analysis.calls - before
            counted[name] = (spent["analyse"], spent["decode"], spent["parse"])
            await pilot.press("escape")
            await pilot.pause()
    # (analyses, decodes, parses): the request and the response of each; a stream's reassembled
    # answer is stored, so its bytes are not read at all; a translated flow has four bodies.
    assert counted == {
        "earlier": (0, 2, 2), "clean": (0, 2, 2), "defective": (0, 2, 2), "streamed": (0, 1, 1),
        "failed": (0, 2, 2), "replay": (0, 2, 2), "gzip-stream": (0, 1, 1), "translated": (0, 4, 4),
    }


def test_the_stored_analysis_is_the_analysis_of_the_stored_flow(store: Store) -> None:
    ids = populate(store)
    ids["gzip-stream"] = _gzip_stream(store)
    ids["translated"] = _translated(store)
    store.flush()
    for flow_id in ids.values():
        flow = store.get(flow_id)
        assert flow is not None
        kept, fresh = store.analysis(flow), analysis.analyse(flow)
        # What only the diff and conversation views need is recomputed when they first ask for it.
        assert (kept.translation is None, kept.repaired is None) == (fresh.translation is None, fresh.repaired is None)
        if kept.translation is not None:
            # The clock time the translated response will be stamped with (`created`), taken when each
            # translation ran: two runs a second apart differ there only (CI failed once so).
            fresh.translation.state.created = kept.translation.state.created
        assert kept == fresh
    translated = store.analysis(store.get(ids["translated"]))
    assert [loss.kind for loss in translated.request_losses] == [loss.kind for loss in translated.translation.losses]
    assert translated.request_losses


async def test_opening_an_mcp_flow_reads_no_other_flow_of_its_session(store: Store) -> None:
    """The session rules' findings were stored by the writer: opening one MCP flow of a long session
    neither parses the session's other MCP flows nor runs the rules again."""
    from tests.test_session_findings import listing

    from inspector.tui.widgets.violations import ViolationPanel

    store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    ids = [listing(store, "session=tok" if n % 2 else "", n) for n in range(6)]
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        before = analysis.calls.copy()
        screen = await open_flow(app, pilot, ids[1])  # where the second registration first lists the tool
        spent = analysis.calls - before
        session = [i.violation.rule for i in screen.query_one(ViolationPanel).items if i.violation.where == "session"]
    assert (spent["analyse"], spent["session"], spent["session-part"]) == (0, 0, 0)
    assert session == ["XL-03"]
