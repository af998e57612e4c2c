"""Each frame as the frame view lists it: type, delta, call id, audio as bytes and seconds (never
the base64 itself), for OpenAI's socket events and Gemini Live's messages."""

from __future__ import annotations

import base64

import orjson

from inspector.sockets import describe
from inspector.wire.frames import Described, Direction, Frame
from tests.sockets.test_turn_flows import socket_flow

PCM = base64.b64encode(b"\x01\x02" * 24000).decode()  # one second of 16-bit PCM at 24 kHz


def frame(direction: str, body: object, text: bool = True) -> Frame:
    return Frame(Direction(direction), 0.0, text, body if isinstance(body, bytes) else orjson.dumps(body))


def test_openai_events_name_their_type_delta_call_and_audio():
    frames = [
        frame("server", {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": '{"ci'}),
        frame("server", {"type": "response.output_item.done", "item": {"type": "function_call", "call_id": "call_1"}}),
        frame("server", {"type": "response.output_audio.delta", "delta": PCM}),
        frame("client", b"\x00\xff", text=False),
        frame("client", b'{"type": "trunc'),
    ]
    assert describe(socket_flow(path="/v1/realtime"), frames) == [
        Described("response.function_call_arguments.delta", '{"ci', None, None, None, orjson.loads(frames[0].payload)),
        Described("response.output_item.done", None, "call_1", None, None, orjson.loads(frames[1].payload)),
        Described("response.output_audio.delta", None, None, 48000, 1.0,
                  {"type": "response.output_audio.delta", "delta": "<48000 bytes of audio>"}),
        Described(), Described(),
    ]


def test_gemini_live_messages_name_their_kind_text_calls_and_audio():
    path = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
    audio = {"serverContent": {"modelTurn": {"parts": [
        {"text": "Looking"}, {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": PCM}}]}}}
    frames = [
        frame("server", audio),
        frame("server", {"toolCall": {"functionCalls": [{"id": "c1", "name": "f", "args": {}},
                                                        {"id": "c2", "name": "g", "args": {}}]}}),
        frame("client", {"tool_response": {"function_responses": [{"id": "c1", "name": "f", "response": {}}]}}),
        frame("client", {"realtimeInput": {"audio": {"mimeType": "audio/pcm", "data": PCM}}}),
    ]
    found = describe(socket_flow(path=path), frames)
    assert [(d.kind, d.delta, d.call_id, d.audio_bytes, d.audio_seconds) for d in found] == [
        ("serverContent", "Looking", None, 48000, 1.0), ("toolCall", None, "c1, c2", None, None),
        ("tool_response", None, "c1", None, None), ("realtimeInput", None, None, 48000, 1.5)]
    assert found[0].shown == {"serverContent": {"modelTurn": {"parts": [
        {"text": "Looking"}, {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": "<48000 bytes of audio>"}}]}}}
    assert PCM not in orjson.dumps([d.shown for d in found]).decode()
