"""A stream whose events all arrived at once (something between buffered it) is told apart from a
paced one, from the chunk timings the forwarder records: through a real forwarder, from a fake
upstream that buffers and one that paces."""

from __future__ import annotations

import gzip

import pytest

from inspector import analysis
from inspector.analysis import BUFFER_GAP, buffered_stream
from inspector.flow import Chunk, Flow
from inspector.mock import Canned, sse_response
from inspector.wire.dialects.openai_chat.mock import chat_stream
from inspector.wire.dialect import Dialect

CHAT = "/v1/chat/completions"
BODY = b'{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}'


def buffering(events: list, delay: float) -> Canned:
    """What a buffering proxy sends on: nothing for `delay`, then the whole stream in one write."""
    paced = sse_response(events)
    return Canned(headers=paced.headers, delay=delay, chunks=[(0.0, b"".join(data for _, data in paced.chunks))])


def stream_through(rig, canned: Canned) -> tuple[bool, bool, int]:
    rig.mock.push(canned)
    with rig.client.stream("POST", CHAT, content=BODY) as response:
        response.read()
    (event,) = rig.events.completed()
    flow = rig.store.get(event.flow.id)
    return event.row.buffered, rig.store.rows()[-1].buffered, len(flow.chunks)


def test_a_stream_a_proxy_held_back_is_marked_buffered(rig):
    assert stream_through(rig, buffering(chat_stream("The weather in Lyon is mild.", pieces=6), 0.05))[:2] == (
        True, True)


def test_a_paced_stream_is_not(rig):
    buffered, listed, chunks = stream_through(rig, sse_response(chat_stream("The weather in Lyon is mild.",
                                                                            pieces=6), interval=0.01))
    assert (buffered, listed) == (False, False)
    assert chunks == 9  # role, 6 pieces, finish, [DONE]: each its own read, 10 ms apart


def _flow(times: list[float], events: int, streamed: bool = True) -> Flow:
    body = b"".join(f"data: {{\"n\": {n}}}\n\n".encode() for n in range(events))
    cut = len(body) // len(times)
    pieces = [body[i * cut:(i + 1) * cut if i < len(times) - 1 else len(body)] for i in range(len(times))]
    return Flow(id=1, session_id=1, started_at=0.0, method="POST", path=CHAT, response_body=body,
                streamed=streamed, chunks=[Chunk(t, data) for t, data in zip(times, pieces, strict=True)])


@pytest.mark.parametrize(("times", "events", "streamed", "expected"), [
    ([1.5], 3, True, True),  # the whole stream in one read
    ([1.5, 1.5 + BUFFER_GAP * 1.9], 3, True, True),  # two reads, closer than one gap per event
    ([1.5, 1.5 + BUFFER_GAP * 2], 3, True, False),  # near miss: exactly a gap per event is paced enough
    ([1.5], 2, True, False),  # near miss: two events say nothing about pacing
    ([0.1, 0.2, 0.3], 3, True, False),  # paced
    ([1.5], 3, False, False),  # not a stream
])
def test_at_once_means_less_than_a_gap_per_event(times, events, streamed, expected):
    assert buffered_stream(_flow(times, events, streamed), Dialect.OPENAI_CHAT) is expected


@pytest.mark.parametrize("pacing", [[1.5], [0.1, 0.2, 0.3]])
def test_the_analysis_counts_a_streams_events_from_the_parse_its_check_made(pacing):
    """One decompression of a gzipped stream for the check and the pacing both (issue 20, "computed
    once"); the verdict the same as buffered_stream's own reading of the body."""
    events = chat_stream("It is sunny.", pieces=3)
    body = gzip.compress(b"".join(data for _, data in sse_response(events).chunks))
    flow = Flow(id=1, session_id=1, started_at=0.0, method="POST", path=CHAT, request_body=BODY,
                request_headers=[("content-type", "application/json")], status=200,
                response_headers=[("content-type", "text/event-stream"), ("content-encoding", "gzip")],
                response_body=body, streamed=True, chunks=[Chunk(t, b"") for t in pacing])
    before = analysis.calls.copy()
    found = analysis.analyse(flow)
    spent = analysis.calls - before
    assert (spent["decode"], found.buffered) == (2, buffered_stream(flow, Dialect.OPENAI_CHAT))
    assert found.buffered is (len(pacing) == 1)
