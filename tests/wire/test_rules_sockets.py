"""The socket rules: OpenAI Realtime (RT-) and Gemini Live (GM-22…24) over recorded-shape sessions,
each event a frame as the GA Realtime reference (openai-python `types/realtime`) and the Live API
reference (BidiGenerateContent messages) spell it, with our own values."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

from inspector.wire.dialects.gemini import live
from inspector.wire.dialects.openai_responses import realtime
from inspector.wire.frames import Direction, Frame

from .rule_cases import Case, assert_case, deleting, doing, setting, socket_frames

C, S = "client", "server"
_WEATHER = {"type": "function", "name": "get_weather", "description": "Current weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
_AUDIO = base64.b64encode(bytes(4800)).decode()  # 0.1 s of 16-bit PCM at 24 kHz


def _call_items(call_id: str, item_id: str, index: int) -> list[list[Any]]:
    item = {"id": item_id, "type": "function_call", "call_id": call_id, "name": "get_weather", "arguments": ""}
    arguments = '{"city":"Paris"}'
    return [
        [S, {"type": "response.output_item.added", "event_id": f"ev_{item_id}_a", "response_id": "resp_1",
             "output_index": index, "item": item}],
        [S, {"type": "response.function_call_arguments.delta", "event_id": f"ev_{item_id}_d", "response_id": "resp_1",
             "item_id": item_id, "output_index": index, "call_id": call_id, "delta": arguments}],
        [S, {"type": "response.function_call_arguments.done", "event_id": f"ev_{item_id}_e", "response_id": "resp_1",
             "item_id": item_id, "output_index": index, "call_id": call_id, "name": "get_weather",
             "arguments": arguments}],
        [S, {"type": "response.output_item.done", "event_id": f"ev_{item_id}_f", "response_id": "resp_1",
             "output_index": index, "item": {**item, "arguments": arguments, "status": "completed"}}],
    ]


def _output(call_id: str) -> list[Any]:
    return [C, {"type": "conversation.item.create",
                "item": {"type": "function_call_output", "call_id": call_id, "output": '{"temp_c":12}'}}]


def realtime_session() -> dict[str, Any]:
    return {"headers": {"OpenAI-Beta": ""}, "frames": [
        [S, {"type": "session.created", "event_id": "ev_0", "session": {
            "type": "realtime", "object": "realtime.session", "model": "gpt-realtime",
            "audio": {"output": {"format": {"type": "audio/pcm", "rate": 24000}}}}}],
        [C, {"type": "session.update", "session": {"type": "realtime", "tools": [copy.deepcopy(_WEATHER)], "tool_choice": "auto"}}],
        [S, {"type": "session.updated", "event_id": "ev_2", "session": {"type": "realtime"}}],
        [C, {"type": "conversation.item.create", "item": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]}}],
        [C, {"type": "response.create"}],
        [S, {"type": "response.created", "event_id": "ev_5", "response": {
            "id": "resp_1", "object": "realtime.response", "status": "in_progress"}}],
        *_call_items("call_1", "item_1", 0),  # frames 6-9
        [S, {"type": "response.done", "event_id": "ev_10", "response": {"id": "resp_1", "status": "completed"}}],
        _output("call_1"),  # frame 11
        [C, {"type": "response.create"}],
        [S, {"type": "response.created", "event_id": "ev_13", "response": {"id": "resp_2", "status": "in_progress"}}],
        [S, {"type": "response.output_audio.delta", "event_id": "ev_14", "response_id": "resp_2", "item_id": "item_2",
             "output_index": 0, "content_index": 0, "delta": _AUDIO}],
        [S, {"type": "response.done", "event_id": "ev_15", "response": {"id": "resp_2", "status": "completed"}}],
    ]}


def gemini_session() -> dict[str, Any]:
    declaration = {"name": "get_weather", "parameters": {
        "type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]}}
    return {"headers": {}, "frames": [
        [C, {"setup": {"model": "models/gemini-live-2.5-flash", "tools": [{"functionDeclarations": [declaration]}]}}],
        [S, {"setupComplete": {}}],
        [C, {"clientContent": {"turns": [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}],
                               "turnComplete": True}}],
        [S, {"toolCall": {"functionCalls": [{"id": "fc_1", "name": "get_weather", "args": {"city": "Paris"}}]}}],
        [C, {"toolResponse": {"functionResponses": [{"id": "fc_1", "name": "get_weather",
                                                     "response": {"temp_c": 12}}]}}],
        [S, {"serverContent": {"modelTurn": {"parts": [{"text": "12 degrees."}]}}}],
        [S, {"serverContent": {"turnComplete": True}}],
        [C, {"clientContent": {"turns": [{"role": "user", "parts": [{"text": "Thanks."}]}], "turnComplete": True}}],
    ]}


def inserting(position: int, *frames: list[Any]):
    def mutate(document: dict[str, Any]) -> dict[str, Any]:
        document["frames"][position:position] = [list(frame) for frame in frames]
        return document
    return mutate


def appending(path: list[Any], value: Any):
    def mutate(document: dict[str, Any]) -> dict[str, Any]:
        node: Any = document
        for key in path:
            node = node[key]
        node.append(value)
        return document
    return mutate


def retyping(position: int, kind: str):
    return setting(["frames", position, 1, "type"], kind)


def rt(name, trip, rule, pointer, severity, near, **kw) -> Case:
    return Case(name, "openai-responses", realtime_session, trip, rule, pointer, severity, near, "realtime", **kw)


def gl(name, trip, rule, pointer, severity, near, **kw) -> Case:
    return Case(name, "gemini", gemini_session, trip, rule, pointer, severity, near, "live", **kw)


_SECOND_CALL = doing(inserting(10, *_call_items("call_2", "item_3", 1)), inserting(15, _output("call_2")))
_AFTER_CANCEL = inserting(6, [C, {"type": "response.cancel"}],
                          [S, {"type": "response.done", "event_id": "ev_c", "response": {"id": "resp_1",
                                                                                        "status": "cancelled"}}],
                          [C, {"type": "response.create"}])


def _refused(code: str) -> list[Any]:
    return [S, {"type": "error", "event_id": "ev_err", "error": {
        "type": "invalid_request_error", "code": code, "message": "refused", "event_id": None, "param": None}}]


CASES = [
    rt("output for an unknown call_id", setting(["frames", 11, 1, "item", "call_id"], "call_9"),
       "RT-01", "/11/item/call_id", "error",
       # the call announced by conversation.item.* alone is still a call
       doing(retyping(6, "conversation.item.added"), retyping(9, "conversation.item.done")),
       also=(("RT-02", "/12", "warning"),)),
    rt("response.create before a pending call's output", deleting(["frames", 11]), "RT-02", "/11", "warning",
       _SECOND_CALL),
    rt("a second response.create while one is active", inserting(6, [C, {"type": "response.create"}]),
       "RT-03", "/6", "error", _AFTER_CANCEL),
    rt("the server refuses a response.create (server VAD raced it)",
       inserting(16, [C, {"type": "response.create"}], _refused("conversation_already_has_active_response")),
       "RT-03", "/17/error/code", "error",
       inserting(16, [C, {"type": "response.cancel"}], _refused("response_cancel_not_active"))),
    rt("a beta event name from the server", inserting(15, [S, {
        "type": "response.audio_transcript.delta", "response_id": "resp_2", "item_id": "item_2", "output_index": 0,
        "content_index": 0, "delta": "Twelve"}]), "RT-04", "/15/type", "error",
       inserting(15, [S, {"type": "response.output_audio_transcript.delta", "response_id": "resp_2",
                          "item_id": "item_2", "output_index": 0, "content_index": 0, "delta": "Twelve"}])),
    rt("the beta header on a GA session", setting(["headers", "OpenAI-Beta"], "realtime=v1"),
       "RT-04", "/openai-beta", "error", setting(["headers", "openai-beta"], "responses_websockets=2026-02-06")),
    rt("a tool in the Chat shape", setting(["frames", 1, 1, "session", "tools", 0],
                                           {"type": "function", "function": {k: v for k, v in _WEATHER.items()
                                                                             if k != "type"}}),
       "RT-05", "/1/session/tools/0/function", "error",
       appending(["frames", 1, 1, "session", "tools"],
               {"type": "mcp", "server_label": "docs", "server_url": "https://docs.example.test/mcp"})),
    rt("tool_choice in the Chat shape",
       setting(["frames", 1, 1, "session", "tool_choice"], {"type": "function", "function": {"name": "get_weather"}}),
       "RT-05", "/1/session/tool_choice", "error",
       setting(["frames", 1, 1, "session", "tool_choice"], {"type": "function", "name": "get_weather"})),
    gl("a functionResponse for an unknown id", setting(["frames", 4, 1, "toolResponse", "functionResponses", 0, "id"],
                                                       "fc_9"),
       "GM-22", "/4/toolResponse/functionResponses/0/id", "error",
       # the proto JSON parser's other spelling, on both sides
       doing(setting(["frames", 3, 1], {"tool_call": {"function_calls": [
           {"id": "fc_1", "name": "get_weather", "args": {"city": "Paris"}}]}}),
           setting(["frames", 4, 1], {"tool_response": {"function_responses": [
               {"id": "fc_1", "name": "get_weather", "response": {"temp_c": 12}}]}})),
       also=(("GM-23", "/7/clientContent", "warning"),)),
    gl("a client turn before the toolResponse", deleting(["frames", 4]), "GM-23", "/6/clientContent", "warning",
       setting(["frames", 4], [S, {"toolCallCancellation": {"ids": ["fc_1"]}}])),
    gl("a functionResponse under another name",
       setting(["frames", 4, 1, "toolResponse", "functionResponses", 0, "name"], "get_forecast"),
       "GM-24", "/4/toolResponse/functionResponses/0/name", "error",
       # two calls of one function, answered in the other order
       doing(appending(["frames", 3, 1, "toolCall", "functionCalls"],
                     {"id": "fc_2", "name": "get_weather", "args": {"city": "Lyon"}}),
             setting(["frames", 4, 1, "toolResponse", "functionResponses"], [
                 {"id": "fc_2", "name": "get_weather", "response": {"temp_c": 9}},
                 {"id": "fc_1", "name": "get_weather", "response": {"temp_c": 12}}]))),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_rule(case):
    assert_case(case)


def test_a_refusal_after_a_flagged_response_create_is_the_same_finding():
    document = inserting(6, [C, {"type": "response.create"}],
                         _refused("conversation_already_has_active_response"))(realtime_session())
    assert [(v.rule, v.pointer) for v in realtime.check(socket_frames(document), {})] == [("RT-03", "/6")]


def test_frames_that_are_not_json_objects_keep_their_numbers():
    frames = [Frame(Direction.SERVER, 0.0, False, bytes(320)), Frame(Direction.CLIENT, 1.0, True, b"not json"),
              *socket_frames(realtime_session())]
    frames[13] = Frame(Direction.CLIENT, 13.0, True, b'{"type":"conversation.item.create","item":'
                                                         b'{"type":"function_call_output","call_id":"call_7"}}')
    assert [(v.rule, v.pointer, v.where) for v in realtime.check(frames)] == [
        ("RT-01", "/13/item/call_id", "socket"), ("RT-02", "/14", "socket")]


def test_audio_deltas_are_summarised_at_the_session_format():
    document = realtime_session()
    document["frames"][1:1] = [[C, {"type": "session.update", "session": {"type": "realtime", "audio": {
        "input": {"format": {"type": "audio/pcmu"}}}}}],
        [C, {"type": "input_audio_buffer.append", "audio": base64.b64encode(bytes(800)).decode()}]]
    frames = socket_frames(document)
    assert realtime.audio_deltas(frames) == [realtime.AudioDelta(2, Direction.CLIENT, 800, 0.1),
                                             realtime.AudioDelta(16, Direction.SERVER, 4800, 0.1)]
    delta = document["frames"][16][1]
    assert realtime.shown(delta) == {**delta, "delta": "<4800 bytes of audio>"}
    assert realtime.shown(document["frames"][3][1]) is document["frames"][3][1]


def test_an_unknown_audio_format_gives_the_size_without_a_duration():
    document = realtime_session()
    document["frames"][0][1]["session"]["audio"]["output"]["format"] = {"type": "audio/opus"}
    assert realtime.audio_deltas(socket_frames(document)) == [realtime.AudioDelta(14, Direction.SERVER, 4800, None)]


def test_live_checks_nothing_in_frames_it_cannot_read():
    frames = [Frame(Direction.CLIENT, 0.0, False, b"\x00\x01"), Frame(Direction.SERVER, 1.0, True, b"[1, 2]"),
              *socket_frames(gemini_session())]
    assert live.check(frames) == []


def test_a_response_create_the_server_refused_for_another_reason_leaves_none_active():
    document = inserting(16, [C, {"type": "response.create", "response": {"output_modalities": ["video"]}}],
                         _refused("invalid_value"), [C, {"type": "response.create"}])(realtime_session())
    assert realtime.check(socket_frames(document), {}) == []


def test_a_call_the_client_put_in_the_conversation_is_answerable():
    call = {"type": "function_call", "call_id": "call_restored", "name": "get_weather", "arguments": '{"city":"Oslo"}'}
    document = inserting(3, [C, {"type": "conversation.item.create", "item": call}],
                         _output("call_restored"))(realtime_session())
    assert realtime.check(socket_frames(document), {}) == []
