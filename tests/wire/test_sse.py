"""sse.py: the one SSE parser (the checker's whole bodies, the bridges' chunks)."""

from __future__ import annotations

from inspector.wire.sse import SSEEvent, SSEParser, encode, parse_all


def test_a_stream_ending_in_a_lone_carriage_return_ends_its_line_there():
    # The old close() read the held "\r" as part of the value ("x\r").
    assert parse_all(b"event: e\rdata: x\r") == [SSEEvent("x", "e")]


def test_a_carriage_return_split_from_its_line_feed_is_one_line_end():
    parser = SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\n\r\n") == [SSEEvent("a")]
    assert parser.feed(b"data: b\r\rdata: c\n\n") == [SSEEvent("b"), SSEEvent("c")]
    assert parser.close() == []


def test_fields_follow_the_spec():
    body = b": keepalive\nid: 7\nevent: delta\ndata:one\ndata:  two\nretry: 5\ndataX: no\n\ndata\n\n"
    assert parse_all(body) == [SSEEvent("one\n two", "delta", "7"), SSEEvent("", "", "7")]


def test_a_character_split_across_chunks_is_decoded_whole():
    parser = SSEParser()
    encoded = "data: é\n\n".encode()
    assert parser.feed(encoded[:7]) + parser.feed(encoded[7:]) == [SSEEvent("é")]


def test_an_encoded_event_parses_back_whatever_its_line_end():
    # sse.encode writes every stream the bridges and the mock send; sse.parse_all reads them back.
    for end in (b"\n", b"\r\n"):
        body = encode(b'{"a":1}', "delta", end) + encode(b"two\nlines", end=end) + encode(b"[DONE]", end=end)
        assert parse_all(body) == [SSEEvent('{"a":1}', "delta"), SSEEvent("two\nlines"), SSEEvent("[DONE]")]
    assert encode(b"x", "e") == b"event: e\ndata: x\n\n"


def test_one_reading_of_alt_sse_for_the_bridge_and_the_mock():
    from inspector.wire.dialect import asks_for_sse
    from inspector.wire.translate import get_bridge

    assert [asks_for_sse(q) for q in ("alt=sse", "key=k&alt=sse", "key=k;alt=sse", "salt=sse", "alt=json", "")] == [
        True, True, True, False, False, False]
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    arrays = [get_bridge("gemini", "openai-chat").request(body, f"/v1beta/models/g:streamGenerateContent{q}")
              .state.json_array_stream for q in ("?key=k;alt=sse", "?key=k&alt=sse", "?key=k", "")]
    assert arrays == [False, False, True, False]  # a path without its query is taken as the SDKs' SSE
