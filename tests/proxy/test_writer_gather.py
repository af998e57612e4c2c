"""A writer process's writer holds finished flows back while its forwarder is busy and writes them
when it is quiet (store/writer.py, `gather`): what is urgent is never held back with them. An open
stream's chunks and request rows reach disk every PROGRESS_INTERVAL through any burst, a job writes
every flow submitted before it, and a flow held back longest is written once it has waited
BURST_GATHER, however busy the forwarder stays."""

from __future__ import annotations

import itertools
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager

import orjson

from inspector import store as store_module
from inspector.flow import Chunk, Flow, FlowState
from inspector.store import Store
from inspector.store.writer import Writer

from .test_durability import CHAT, SSE, STREAM_BODY, read_only, wait_until


def gathering(path, after_listeners=None) -> Writer:
    Store(path).close()  # the schema
    return Writer(path, first_free_id=1, analyse_apart=store_module.ANALYSE_APART, gather=True,
                  after_listeners=after_listeners)


@contextmanager
def gathering_with_file(tmp_path) -> Iterator[tuple[Writer, sqlite3.Connection]]:
    """A gathering writer and a read-only connection to its file, both closed after."""
    path = tmp_path / "s.db"
    writer = gathering(path)
    conn = read_only(path)
    try:
        yield writer, conn
    finally:
        writer.stop()
        conn.close()


def state_of(conn: sqlite3.Connection, flow_id: int) -> str | None:
    row = conn.execute("SELECT state FROM flows WHERE id = ?", (flow_id,)).fetchone()
    return None if row is None else row[0]


def finished(writer: Writer, marker: str) -> Flow:
    flow = Flow(id=writer.next_flow_id(), session_id=0, started_at=1000.0, method="POST", path=CHAT,
                request_body=orjson.dumps({"model": "m", "messages": [{"role": "user", "content": marker}]}))
    flow.status, flow.state, flow.response_body = 200, FlowState.COMPLETE, b'{"object": "chat.completion"}'
    return flow


def test_an_open_streams_chunks_reach_disk_through_a_burst_that_is_held_back(tmp_path, monkeypatch):
    """Before, the writer slept through the whole gathering of a burst (up to BURST_GATHER, 1 s): an
    open stream's chunks waited with it, ten times the 100 ms a kill may lose."""
    monkeypatch.setattr(store_module, "BURST_GATHER", 3600.0)  # the burst is never overdue here
    with gathering_with_file(tmp_path) as (writer, conn):
        stream = Flow(id=writer.next_flow_id(), session_id=0, started_at=1000.0, method="POST", path=CHAT,
                      request_body=STREAM_BODY)
        writer.submit(stream, None)
        stream.status, stream.streamed, stream.response_headers = 200, True, list(SSE)
        markers = (f"burst {n}" for n in itertools.count())
        burst: list[str] = []

        def busy_then(condition):
            """A finished flow submitted at every look: the forwarder stays busy."""
            burst.append(next(markers))
            writer.submit(finished(writer, burst[-1]), None)
            return condition()

        wait_until(lambda: busy_then(lambda: state_of(conn, stream.id) == "pending"))
        stream.chunks.append(Chunk(0.1, b'data: {"n": 1}\n\n'))
        wait_until(lambda: busy_then(lambda: conn.execute("SELECT COUNT(*) FROM flow_chunks").fetchone() == (1,)))
        # The burst itself is still held back ...
        assert conn.execute("SELECT COUNT(*) FROM flows WHERE state = 'complete'").fetchone() == (0,)
        # ... and a job (a flush) writes every flow submitted before it.
        writer.call(lambda conn: None)
        stored = [orjson.loads(body)["messages"][0]["content"] for (body,) in conn.execute(
            "SELECT request_body FROM flows WHERE state = 'complete' ORDER BY id")]
        assert stored == burst


def test_a_flow_held_back_is_written_once_it_has_waited_burst_gather_while_the_burst_goes_on(tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "BURST_GATHER", 0.3)
    with gathering_with_file(tmp_path) as (writer, conn):
        first = finished(writer, "first")
        writer.submit(first, None)
        submitted = time.monotonic()
        markers = (f"burst {n}" for n in itertools.count())

        def busy_then_written() -> bool:
            writer.submit(finished(writer, next(markers)), None)
            return state_of(conn, first.id) == "complete"

        wait_until(busy_then_written)
        waited = time.monotonic() - submitted
    # Held back while the burst went on, written once overdue (a generous bound above it: a slow CI machine).
    assert 0.3 <= waited < 3.0


def test_a_flow_that_comes_alone_is_written_at_the_next_quiet_look(tmp_path):
    with gathering_with_file(tmp_path) as (writer, conn):
        flow = finished(writer, "alone")
        writer.submit(flow, None)
        wait_until(lambda: state_of(conn, flow.id) == "complete")


def test_a_forwarder_that_stays_busy_does_not_leave_the_writer_further_behind(tmp_path, monkeypatch):
    """While the forwarder stays busy, the held flows that have waited BURST_GATHER go as many as
    come. A slice per look (one look every PROGRESS_INTERVAL) drained at most 32 flows per look: a
    forwarder relaying more than that, sustained, left the writer further behind every second, its
    memory growing without end. Here 100 or so come per look, for seven looks."""
    monkeypatch.setattr(store_module, "BURST_GATHER", 0.2)
    monkeypatch.setattr(store_module, "PROGRESS_INTERVAL", 0.5)  # a look every half second, while busy
    path = tmp_path / "s.db"
    writer = gathering(path)
    saved: set[int] = set()
    submitted: list[tuple[float, int]] = []
    try:
        markers = (f"busy {n}" for n in itertools.count())
        until = time.monotonic() + 3.5

        def busy_for_a_while() -> bool:
            flow = finished(writer, next(markers))
            submitted.append((time.monotonic(), flow.id))
            writer.submit(flow, lambda row: saved.add(row.id))
            return time.monotonic() >= until

        wait_until(busy_for_a_while)
        end = time.monotonic()
        late = [flow_id for at, flow_id in submitted if at < end - 1.5 and flow_id not in saved]
    finally:
        writer.stop()
    # Written BURST_GATHER and a look after they came, at most; more than three looks behind, none.
    assert len(submitted) > 7 * 32 and late == []
