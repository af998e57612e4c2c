"""Responses over WebSocket: a socket's frames split into turns, each a Responses request and the SSE
stream its events make, checked by the Responses rules unchanged; the history rebuilt along the
previous_response_id chain. Frames in the shape of the WebSocket-mode reference (client
`response.create`, `generate: false` prewarm, `stream_id`), with our own values."""

from __future__ import annotations

import copy
from typing import Any

import orjson

from inspector.wire import check
from inspector.wire.dialects.openai_responses.socket import check_turn, full_input, replay_request, turns
from inspector.wire.frames import Direction, Frame

_TOOLS = [{"type": "function", "name": "get_weather", "description": "Current weather in a city.", "strict": False,
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
_ASK = {"type": "message", "role": "user", "content": "Weather in Rome?"}
_CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
         "arguments": '{"city":"Rome"}', "status": "completed"}
_RESULT = {"type": "function_call_output", "call_id": "call_1", "output": '{"temp_c":18}'}
_ANSWER = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": "18 degrees in Rome.", "annotations": []}]}


def _response(response_id: str, status: str, output: list[Any], stream: dict[str, Any]) -> list[dict[str, Any]]:
    started = {"id": response_id, "object": "response", "status": "in_progress", "output": []}
    events: list[dict[str, Any]] = [{"type": "response.created", "sequence_number": 0, "response": started}]
    for index, item in enumerate(output):
        opened = {**item, "arguments": ""} if item["type"] == "function_call" else {**item, "content": []}
        events += [{"type": "response.output_item.added", "sequence_number": len(events), "output_index": index,
                    "item": opened}]
        if item["type"] == "function_call":
            events += [{"type": "response.function_call_arguments.delta", "sequence_number": len(events),
                        "item_id": item["id"], "output_index": index, "delta": item["arguments"]}]
        events += [{"type": "response.output_item.done", "sequence_number": len(events), "output_index": index,
                    "item": item}]
    events.append({"type": f"response.{status}", "sequence_number": len(events),
                   "response": {**started, "status": status, "output": output}})
    return [{**event, **stream} for event in events]


def _create(body: dict[str, Any], **envelope: Any) -> dict[str, Any]:
    return {"type": "response.create", **envelope, "model": "gpt-5", "tools": _TOOLS, "store": False, **body}


def session(stream: dict[str, Any] | None = None) -> list[list[Any]]:
    """A Codex-shaped socket: a prewarm, the question, the tool result."""
    stream = stream or {}
    return [
        ["client", _create({"input": []}, generate=False, **stream)],
        *[["server", event] for event in _response("resp_0", "completed", [], stream)],
        ["client", _create({"previous_response_id": "resp_0", "input": [_ASK]}, **stream)],
        *[["server", event] for event in _response("resp_1", "completed", [_CALL], stream)],
        ["client", _create({"previous_response_id": "resp_1", "input": [_RESULT]}, **stream)],
        *[["server", event] for event in _response("resp_2", "completed", [_ANSWER], stream)],
    ]


def frames_of(entries: list[list[Any]]) -> list[Frame]:
    return [Frame(Direction(direction), float(number), True, orjson.dumps(event))
            for number, (direction, event) in enumerate(entries)]


def test_each_response_create_and_its_events_is_a_turn():
    found = turns(frames_of(session()))
    assert [(t.number, t.prewarm, t.previous_response_id, t.response_id, t.ended, t.frames) for t in found] == [
        (0, True, None, "resp_0", True, [1, 2]),
        (3, False, "resp_0", "resp_1", True, [4, 5, 6, 7, 8]),
        (9, False, "resp_1", "resp_2", True, [10, 11, 12, 13]),
    ]
    assert found[1].request == {"model": "gpt-5", "tools": _TOOLS, "store": False, "previous_response_id": "resp_0",
                                "input": [_ASK]}
    assert found[2].response == {"id": "resp_2", "object": "response", "status": "completed", "output": [_ANSWER]}


def test_the_envelope_is_not_the_body():
    entries = session()
    found = turns(frames_of(entries))
    # The frame as it came, judged as an HTTP body: the envelope's fields are no Responses fields.
    raw = {(v.rule, v.pointer) for v in check.check_request(entries[0][1], "openai-responses")}
    assert {("OR-14", "/type"), ("OR-14", "/generate")} <= raw
    for turn in found:
        exchange = check_turn(turn)
        # A continuation's history is on the server: noted (info), never an error.
        continued = [("OR-11", "/previous_response_id")] if turn.previous_response_id else []
        assert ([(v.rule, v.pointer) for v in exchange.request], exchange.response, exchange.pair) == (continued, [], [])
        assert exchange.final == (None if turn.prewarm else turn.response)


def test_a_prewarm_s_empty_answer_is_no_empty_turn():
    prewarm = turns(frames_of(session()))[0]
    # Judged as an ordinary stream, the prepared response's empty output reads as an empty answer.
    ordinary = check.check_exchange(prewarm.request, prewarm.stream_body(), "openai-responses")
    assert [(v.rule, v.pointer) for v in ordinary.pair] == [("OR-15", "/output")]
    assert check_turn(prewarm).pair == []


def test_a_turn_s_stream_is_checked_by_the_responses_stream_rules():
    entries = session()
    entries[6][1]["delta"] = '{"city":"Paris"}'  # the streamed arguments differ from the final item's
    turn = turns(frames_of(entries))[1]
    exchange = check_turn(turn)
    assert sorted((v.rule, v.pointer, v.where) for v in exchange.response) == [
        ("OR-10", "/3/item/arguments", "stream"), ("OR-10", "/4/response/output/0/arguments", "stream")]


def test_the_history_is_rebuilt_along_the_previous_response_id_chain():
    found = turns(frames_of(session()))
    assert full_input(found, 2) == [_ASK, _CALL, _RESULT]
    assert replay_request(found, 2) == {"model": "gpt-5", "tools": _TOOLS, "store": False,
                                        "input": [_ASK, _CALL, _RESULT]}
    assert full_input(found, 0) == []
    # The replayed body holds its history: the call and its output pair within it, nothing noted.
    assert check.check_request(replay_request(found, 2), "openai-responses") == []


def test_a_string_input_is_the_user_message_it_stands_for():
    entries = session()
    entries[3][1]["input"] = "Weather in Rome?"
    assert full_input(turns(frames_of(entries)), 2) == [
        {"type": "message", "role": "user", "content": "Weather in Rome?"}, _CALL, _RESULT]


def test_a_chain_that_leaves_the_socket_cannot_be_replayed_as_full_input():
    entries = session()
    entries[9][1]["previous_response_id"] = "resp_from_another_socket"
    found = turns(frames_of(entries))
    assert (full_input(found, 2), replay_request(found, 2)) == (None, None)


def test_stream_ids_keep_interleaved_turns_apart():
    first, second = session({"stream_id": "a"}), session({"stream_id": "b"})
    interleaved = [entry for pair in zip(first, second, strict=True) for entry in pair]
    found = turns(frames_of(interleaved))
    assert [(t.stream_id, t.response_id, len(t.events)) for t in found] == [
        ("a", "resp_0", 2), ("b", "resp_0", 2), ("a", "resp_1", 5), ("b", "resp_1", 5),
        ("a", "resp_2", 4), ("b", "resp_2", 4)]
    assert all(event["stream_id"] == turn.stream_id for turn in found for event in turn.events)
    assert found[0].request == {"model": "gpt-5", "tools": _TOOLS, "store": False, "input": []}


def test_an_in_band_error_ends_its_turn():
    error = {"type": "error", "status": 400, "error": {"type": "invalid_request_error", "code": "previous_response_not_found",
                                                       "message": "Previous response with id 'resp_x' not found."}}
    entries = [["client", _create({"previous_response_id": "resp_x", "input": [_ASK]})], ["server", error],
               *copy.deepcopy(session()[3:9])]
    found = turns(frames_of(entries))
    assert [(t.number, t.ended, t.events[0]["type"], t.response) for t in found] == [
        (0, True, "error", None), (2, True, "response.created", found[1].events[-1]["response"])]


def test_frames_that_are_not_events_are_skipped_and_a_turn_in_flight_is_open():
    entries = session()[:6]
    frames = [Frame(Direction.SERVER, 0.0, False, b"\x00"), *frames_of(entries),
              Frame(Direction.CLIENT, 9.0, True, b'{"type": "response.create"')]
    found = turns(frames)
    assert [(t.number, t.ended, t.frames) for t in found] == [(1, True, [2, 3]), (4, False, [5, 6])]
