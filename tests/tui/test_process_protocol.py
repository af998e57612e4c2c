"""The child's side of the pipe (inspector.child.Outbox): the forwarder's events never wait for the
UI, and ids the UI is too slow to take give way to one "changed"."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from inspector.child import MAX_PENDING_IDS, Outbox
from inspector.flow import Flow
from inspector.proxy import FlowEvent, Forwarder
from inspector.store import Store


def event(kind: str, flow_id: int) -> FlowEvent:
    return FlowEvent(kind, Flow(id=flow_id, session_id=1, started_at=0.0, method="POST", path="/v1/chat/completions"))


def frames(read_end: int, count: int) -> list[dict]:
    data = b""
    while data.count(b"\n") < count:
        data += os.read(read_end, 65536)
    return [orjson.loads(line) for line in data.splitlines()]


def test_a_backlog_past_the_bound_becomes_one_changed_and_events_flow_again_after(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    with Store(tmp_path / "f.sqlite3") as store, os.fdopen(write_end, "wb") as stream:
        # Constructed, never started: the outbox only reads its access counts and the store's health.
        outbox = Outbox(stream)
        outbox.forwarder = Forwarder("http://127.0.0.1:9", store=store, port=0)
        # Nobody writes yet (the UI is as slow as can be): the events still return at once.
        for flow_id in range(1, MAX_PENDING_IDS // 2 + 1):
            outbox.flow_event(event("started", flow_id))
            outbox.flow_event(event("completed", flow_id))
        outbox.flow_event(event("started", MAX_PENDING_IDS))
        outbox.start()
        assert frames(read_end, 1) == [{"kind": "changed"}]
        # A frame sent goes before the ids gathered with it (or after it): this order either way.
        outbox.send({"kind": "replayed", "request": 1, "flow": 7})
        outbox.flow_event(event("completed", MAX_PENDING_IDS))
        assert frames(read_end, 2) == [{"kind": "replayed", "request": 1, "flow": 7},
                                       {"kind": "flows", "started": [], "completed": [MAX_PENDING_IDS]}]
        outbox.close()
    os.close(read_end)


def test_a_few_events_arrive_as_they_were_sent(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    with Store(tmp_path / "f.sqlite3") as store, os.fdopen(write_end, "wb") as stream:
        outbox = Outbox(stream)
        outbox.forwarder = Forwarder("http://127.0.0.1:9", store=store, port=0)
        for flow_id in (1, 2):
            outbox.flow_event(event("started", flow_id))
        outbox.flow_event(event("completed", 1))
        outbox.start()
        assert frames(read_end, 1) == [{"kind": "flows", "started": [1, 2], "completed": [1]}]
        outbox.close()
    os.close(read_end)
