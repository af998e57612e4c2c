"""The event-stream writer (`stream.frame`, ours: botocore has none) read back by botocore's own
parser, and the incremental reader the translation reads a ConverseStream answer with: whole
frames whatever the chunking, and one `Unreadable` where the stream breaks or is cut."""

from __future__ import annotations

import binascii

import orjson
from botocore.eventstream import EventStreamBuffer
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.wire.dialects.bedrock.stream import EventReader, Unreadable, encode_event, frame

from tests.budget import examples

EVENTS = [{"messageStart": {"role": "assistant"}},
          {"contentBlockDelta": {"delta": {"text": "Grüße ☃"}, "contentBlockIndex": 0}},
          {"modelStreamErrorException": {"message": "the model stopped"}}]
texts = st.text(max_size=40)


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.tuples(st.lists(st.tuples(st.text("abc:-", min_size=1, max_size=12), texts), max_size=4,
                                   unique_by=lambda h: h[0]), st.binary(max_size=300)), max_size=5))
def test_botocore_reads_back_every_frame_written(messages) -> None:
    buffer = EventStreamBuffer()
    buffer.add_data(b"".join(frame(headers, payload) for headers, payload in messages))
    assert [(m.headers, m.payload) for m in buffer] == [(dict(headers), payload) for headers, payload in messages]


def test_an_event_is_framed_as_boto3_reads_it() -> None:
    buffer = EventStreamBuffer()
    buffer.add_data(b"".join(encode_event(event) for event in EVENTS))
    read = list(buffer)
    assert [m.headers for m in read] == [
        {":event-type": "messageStart", ":content-type": "application/json", ":message-type": "event"},
        {":event-type": "contentBlockDelta", ":content-type": "application/json", ":message-type": "event"},
        {":exception-type": "modelStreamErrorException", ":content-type": "application/json",
         ":message-type": "exception"}]
    assert [orjson.loads(m.payload) for m in read] == [next(iter(e.values())) for e in EVENTS]


@given(st.integers(1, 200))
def test_the_reader_gives_whole_events_whatever_the_chunking(size: int) -> None:
    body = b"".join(encode_event(event) for event in EVENTS)
    reader = EventReader()
    read = [event for i in range(0, len(body), size) for event in reader.feed(body[i:i + size])]
    assert read + reader.close() == EVENTS


def test_a_corrupt_frame_ends_the_reading_once_with_why() -> None:
    good = encode_event(EVENTS[0])
    bad = bytearray(encode_event(EVENTS[1]))
    bad[-1] ^= 0xFF  # the message CRC
    stored, actual = int.from_bytes(bad[-4:], "big"), binascii.crc32(bytes(bad[:-4]))
    reader = EventReader()
    first = reader.feed(good + bytes(bad))
    assert first[0] == EVENTS[0]
    assert [type(e) for e in first[1:]] == [Unreadable]
    assert first[1].why == ("the upstream's event stream cannot be read on: ChecksumMismatch: Checksum mismatch: "
                            f"expected 0x{stored:08x}, calculated 0x{actual:08x}")
    assert reader.feed(good) == [] and reader.close() == []  # nothing after it is read, and it is said once


def test_a_stream_cut_inside_a_frame_is_said_at_its_end() -> None:
    body = encode_event(EVENTS[0]) + encode_event(EVENTS[1])[:20]
    reader = EventReader()
    assert reader.feed(body) == [EVENTS[0]]
    cut = reader.close()
    assert [type(e) for e in cut] == [Unreadable]
    assert cut[0].why == ("the upstream's event stream cannot be read on: the stream ended inside an event-stream "
                          "frame (20 bytes of it arrived)")
