"""A recorder killed with SIGKILL mid-socket keeps the frames it relayed: they were on disk within
the store's PROGRESS_INTERVAL, and the next open marks the session interrupted with them."""

from __future__ import annotations

import json
import os
import signal

from websockets.sync.client import connect

from inspector.flow import FlowState
from inspector.store import Store
from inspector.wire.frames import Direction
from tests.proxy.test_durability import read_only, start_record, wait_until


def test_kill_9_mid_socket_keeps_the_frames_relayed(upstream, tmp_path):
    store_path = tmp_path / "flows.sqlite3"
    proc, url, _ = start_record(store_path, upstream.base_url)
    sent = [json.dumps({"type": "echo", "n": n}) for n in range(5)]
    try:
        with connect(url.replace("http://", "ws://", 1) + "/v1/responses") as ws:
            for text in sent:
                ws.send(text)
                assert ws.recv(timeout=10) == text
            conn = read_only(store_path)
            wait_until(lambda: conn.execute("SELECT COUNT(*) FROM flow_chunks WHERE flow_id = 1").fetchone()[0] == 10)
            conn.close()
            os.kill(proc.pid, signal.SIGKILL)
            assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
    with Store(store_path) as store:
        flow = store.get(1)
        frames = store.frames(1)
    assert (flow.state, flow.websocket, flow.status) == (FlowState.ERROR, True, 101)
    assert flow.error == (f"interrupted: the recording process (pid {proc.pid}) ended before the response did; "
                          f"{sum(len(t) + 1 for t in sent) * 2} bytes relayed by then are kept")
    assert [(f.direction, f.payload.decode()) for f in frames] == [
        (direction, text) for text in sent for direction in (Direction.CLIENT, Direction.SERVER)]
