"""The child's side of the pipe (inspector.child.Outbox): the forwarder's events never wait for the
UI, and ids the UI is too slow to take give way to one "changed"."""

from __future__ import annotations

import os
import select
from pathlib import Path

import orjson

from inspector import child
from inspector.child import MAX_PENDING_IDS, Outbox, Replayed
from inspector.flow import Flow
from inspector.proxy import FlowEvent, Forwarder
from inspector.store import Store
from inspector.proxy.options import Options


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
        outbox.forwarder = Forwarder(Options("http://127.0.0.1:9", port=0), store=store)
        # Nobody writes yet (the UI is as slow as can be): the events still return at once.
        for flow_id in range(1, MAX_PENDING_IDS // 2 + 1):
            outbox.flow_event(event("started", flow_id))
            outbox.flow_event(event("completed", flow_id))
        outbox.flow_event(event("started", MAX_PENDING_IDS))
        outbox.start()
        assert frames(read_end, 1) == [{"kind": "changed"}]
        # A frame sent goes before the ids gathered with it (or after it): this order either way.
        outbox.send(Replayed(1, 7))
        outbox.flow_event(event("completed", MAX_PENDING_IDS))
        assert frames(read_end, 2) == [{"kind": "replayed", "request": 1, "flow": 7, "reason": None},
                                       {"kind": "flows", "started": [], "completed": [MAX_PENDING_IDS]}]
        outbox.close()
    os.close(read_end)


def test_a_few_events_arrive_as_they_were_sent(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    with Store(tmp_path / "f.sqlite3") as store, os.fdopen(write_end, "wb") as stream:
        outbox = Outbox(stream)
        outbox.forwarder = Forwarder(Options("http://127.0.0.1:9", port=0), store=store)
        for flow_id in (1, 2):
            outbox.flow_event(event("started", flow_id))
        outbox.flow_event(event("completed", 1))
        outbox.start()
        assert frames(read_end, 1) == [{"kind": "flows", "started": [1, 2], "completed": [1]}]
        outbox.close()
    os.close(read_end)


def test_ids_gather_into_one_frame_until_a_frame_is_sent(tmp_path: Path, monkeypatch) -> None:
    """A busy forwarder's starts and ends are one write for a while (GATHER), not one each: the
    outbox wakes for the first id, gathers, and a frame to send cuts the gathering short."""
    monkeypatch.setattr(child, "GATHER", 3600.0)
    read_end, write_end = os.pipe()
    with Store(tmp_path / "f.sqlite3") as store, os.fdopen(write_end, "wb") as stream:
        outbox = Outbox(stream)
        outbox.forwarder = Forwarder(Options("http://127.0.0.1:9", port=0), store=store)
        outbox.start()
        outbox.flow_event(event("started", 1))
        readable, _, _ = select.select([read_end], [], [], 0.2)  # the outbox awake, gathering: nothing written
        assert readable == []
        for flow_id in range(2, 201):
            outbox.flow_event(event("started", flow_id))
            outbox.flow_event(event("completed", flow_id - 1))
        outbox.send(Replayed(1, 7))
        assert frames(read_end, 2) == [{"kind": "replayed", "request": 1, "flow": 7, "reason": None},
                                       {"kind": "flows", "started": list(range(1, 201)), "completed": list(range(1, 200))}]
        outbox.close()
    os.close(read_end)


def test_every_frame_and_the_options_cross_the_pipe_unchanged() -> None:
    from inspector.child import (Changed, Failed, Flows, Ready, Refused, Replay, RouteShown, Stop, Stopped,
                                 StoreHealth, Tunnelled, Delete, Deleted, decode, encode)
    from inspector.proxy.options import ClientLimits, Options, OtlpOptions, ProxyOptions, RouteFlags

    frames = [Ready("http://127.0.0.1:1/t", "http://127.0.0.1:1", "u", "u", "passthrough", None, "t", 3, ("i",),
                    (RouteShown("oa", "http://127.0.0.1:1/r/oa", "https://api.openai.com", "openai-chat:anthropic",
                                "--route"),)),
              Failed("no", True), Flows([1, 2], [1]), Changed(), Refused(2, "Host 'x'"), StoreHealth(None),
              Tunnelled(3, (("a.test:443", 2), ("[::1]:8443", 1))), Delete(7, (1, 3)), Deleted(7, (1, 3, 4), (5,), (9,)),
              Deleted(8, reason="store locked"),
              Replayed(4, 9), Replayed(5, reason="why"), Stopped("exit status 1"), Replay(6, 7, "fixed", "eyJ9"),
              Stop()]
    assert [decode(encode(frame)) for frame in frames] == frames
    options = Options("https://api.openai.com", host="::1", port=0, translate="openai-chat:anthropic", repair=True,
                      allow_hosts=["box"], timeout=3.5, max_body=10, limits=ClientLimits(max_head=100),
                      proxy=ProxyOptions(intercept=["a.test"], max_tunnels=2), routes=RouteFlags(["oa=http://x"]),
                      store="/s.sqlite3", key_hosts=("k.test",), otlp=OtlpOptions("http://o.test", True))
    assert Options.from_json(orjson.loads(orjson.dumps(options.to_json()))) == options
    assert (options.allow_hosts, options.proxy.intercept, options.routes.route) == (("box",), ("a.test",),
                                                                                   ("oa=http://x",))
