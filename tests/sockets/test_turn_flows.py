"""A Responses socket's turns as flows: each one an HTTP Responses stream the analysis reads
unchanged, linked to its socket and to the turn it continues, judged with the history it continues
(an output for a call no earlier turn made is OR-08 on the turn that sends it)."""

from __future__ import annotations

import itertools

import orjson

from inspector.analysis import analyse
from inspector.flow import Flow, FlowState
from inspector.sockets import Protocol, protocol, socket_findings, turn_flows
from inspector.wire.frames import Direction, Frame
from tests.wire.test_responses_socket import _ANSWER, _ASK, _CALL, _RESULT, _TOOLS, frames_of, session


def socket_flow(flow_id: int = 7, path: str = "/v1/responses") -> Flow:
    return Flow(id=flow_id, session_id=1, started_at=0.0, method="GET", path=path,
                request_headers=[("openai-beta", "responses_websockets=2026-02-06")], status=101,
                state=FlowState.COMPLETE, route="openai", upstream_url="https://api.openai.com/v1/responses")


def seeded() -> list[list[object]]:
    """The session with the tool result answering a call no turn made."""
    entries = session()
    entries[9][1]["input"] = [{**_RESULT, "call_id": "call_unknown"}]
    return entries


def test_each_turn_is_a_flow_linked_to_its_socket_and_to_the_turn_it_continues():
    ids = itertools.count(20)
    made = turn_flows(socket_flow(), frames_of(session()), lambda: next(ids))
    assert [(f.id, f.method, f.path, f.socket_of, f.continues, f.started_at, f.status, f.state, f.route)
            for f in made] == [
        (20, "WS", "/v1/responses", 7, None, 0.0, 200, FlowState.COMPLETE, "openai"),
        (21, "WS", "/v1/responses", 7, 20, 3.0, 200, FlowState.COMPLETE, "openai"),
        (22, "WS", "/v1/responses", 7, 21, 9.0, 200, FlowState.COMPLETE, "openai"),
    ]
    assert orjson.loads(made[2].request_body) == {"model": "gpt-5", "tools": _TOOLS, "store": False,
                                                   "previous_response_id": "resp_1", "input": [_RESULT]}
    assert [orjson.loads(f.history) if f.history else None for f in made] == [None, [], [_ASK, _CALL]]
    # One chunk per frame, at its time since the turn's response.create.
    assert [(c.t, c.data.split(b"\n")[0]) for c in made[2].chunks] == [
        (1.0, b"event: response.created"), (2.0, b"event: response.output_item.added"),
        (3.0, b"event: response.output_item.done"), (4.0, b"event: response.completed")]
    assert (made[2].ttfb_ms, made[2].latency_ms) == (1000.0, 4000.0)
    assert made[0].notes == ["turn 1 of WebSocket #7; request: frame 0; its events: frames 1–2 (event N of the "
                             "stream is frame N of these)",
                             "prewarm (generate: false): the server prepares the turn and answers no output"]


def test_a_turn_is_analysed_as_the_responses_stream_it_stands_for():
    made = turn_flows(socket_flow(), frames_of(session()), iter(range(1, 9)).__next__)
    analyses = [analyse(f) for f in made]
    assert [(a.dialect.value if a.dialect else None, a.model, a.tools, a.tool_calls, a.parse_error) for a in analyses] \
        == [("openai-responses", "gpt-5", 1, 0, None), ("openai-responses", "gpt-5", 1, 1, None),
            ("openai-responses", "gpt-5", 1, 0, None)]
    assert analyses[2].response == {"id": "resp_2", "object": "response", "status": "completed", "output": [_ANSWER]}
    # The prewarm's empty answer is what it asked for (no OR-15); the history is known, so no
    # continuation is left to the server (no OR-11).
    assert [a.violations for a in analyses] == [[], [], []]


def test_an_output_for_a_call_no_earlier_turn_made_is_caught_on_its_turn():
    made = turn_flows(socket_flow(), frames_of(seeded()), iter(range(1, 9)).__next__)
    found = analyse(made[2]).violations
    # The output answers no call, and the call the model made (in the history) is left unanswered.
    assert [(v.rule, v.pointer, v.message) for v in found] == [
        ("OR-08", "/input/0/call_id", "no function_call with call_id 'call_unknown' precedes this output "
                                      "(\"No tool call found\")"),
        ("OR-08", "/previous_response_id", "function_call 'call_1' has no function_call_output (\"No tool output "
                                           "found\") (item 1 of the history it continues)")]
    # The same turn judged without the history it continues: pairing is the server's, only noted.
    alone = analyse(Flow(**{**{k: getattr(made[2], k) for k in made[2].__slots__}, "history": None}))
    assert [(v.rule, v.pointer) for v in alone.violations] == [("OR-11", "/previous_response_id")]


def test_a_chain_that_leaves_the_socket_is_the_server_s_and_said_so():
    entries = session()
    entries[3][1]["previous_response_id"] = "resp_elsewhere"
    made = turn_flows(socket_flow(), frames_of(entries), iter(range(1, 9)).__next__)
    # The turn after it continues it, and so the history beyond the socket too.
    assert [(f.continues, f.history) for f in made[1:]] == [(None, None), (2, None)]
    assert made[1].notes[1:] == ["continues resp_elsewhere, a response this socket never saw: its history is the "
                                 "server's alone"]
    assert [(v.rule, v.pointer) for v in analyse(made[1]).violations] == [("OR-11", "/previous_response_id")]


def test_a_turn_the_socket_closed_on_and_an_in_band_error():
    error = {"type": "error", "status": 400, "error": {"type": "invalid_request_error",
                                                       "code": "previous_response_not_found", "message": "gone"}}
    entries = [["client", {"type": "response.create", "model": "gpt-5", "previous_response_id": "resp_x",
                           "input": [_ASK]}], ["server", error], *session()[3:6]]
    made = turn_flows(socket_flow(), frames_of(entries), iter(range(1, 9)).__next__)
    assert [(f.status, f.state, f.error, len(f.chunks)) for f in made] == [
        (400, FlowState.COMPLETE, None, 1),
        (200, FlowState.ERROR, "the socket closed before this turn ended", 2)]


def test_the_protocol_is_the_upgrade_path_s_and_only_responses_sockets_have_turns():
    assert [protocol(p) for p in ("/v1/responses", "/backend-api/codex/responses", "/v1/realtime?model=gpt-realtime",
                                  "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent",
                                  "/v1/chat/completions")] == [
        Protocol.RESPONSES, Protocol.RESPONSES, Protocol.REALTIME, Protocol.LIVE, None]
    realtime_frames = [Frame(Direction.CLIENT, 1.0, True, orjson.dumps(
        {"type": "conversation.item.create", "item": {"type": "function_call_output", "call_id": "call_9",
                                                      "output": "{}"}}))]
    assert turn_flows(socket_flow(path="/v1/realtime"), realtime_frames, iter(range(1, 9)).__next__) == []
    assert [(v.rule, v.pointer) for v in socket_findings(socket_flow(path="/v1/realtime"), realtime_frames)] == [
        ("RT-01", "/0/item/call_id")]
    assert socket_findings(socket_flow(), frames_of(seeded())) == []
