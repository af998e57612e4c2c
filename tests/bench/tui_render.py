"""What the TUI costs, and whether it can stall forwarding (STYLE idioms 2 and 5), measured.

    .venv/bin/python tests/bench/tui_render.py [--rows N] [--requests N]

1. The flow list's first frame over N stored flows (a window over the store, not a row widget each).
2. Opening a 2 MB flow: analysis and pretty-printing in a worker, then the panes (line viewer tier).
3. What the forwarder adds while the UI is idle vs while it opens that 2 MB flow over and over:
   small chat requests through a real forwarder to a mock upstream, one at a time, from a thread."""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time

import httpx
import orjson

from inspector.flow import Flow, FlowState
from inspector.mock import MockUpstream
from inspector.wire.dialects.openai_chat.mock import chat_completion
from inspector.proxy import Forwarder
from inspector.store import Store
from inspector.tui.app import InspectorApp
from inspector.tui.bridge import EventBridge
from inspector.tui.screens.flow import FlowScreen

sys.path.insert(0, os.path.dirname(__file__))  # the sibling benchmark's conversation generator

SMALL = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}


def big_request() -> dict:
    """About 2 MB of realistic structure: two copies of check_speed's 1 MB tool-calling history
    (many small nodes, which is what pretty-printing and highlighting pay for)."""
    from check_speed import chat_conversation

    conversation = chat_conversation()
    conversation["messages"] = conversation["messages"] * 2
    return conversation


def seed(store: Store, rows: int) -> int:
    store.new_session("http://bench", "http://127.0.0.1:0")
    body = orjson.dumps(SMALL)
    response = orjson.dumps(chat_completion("ok"))
    for n in range(rows):
        store.submit(Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=time.time() + n,
                          method="POST", path="/v1/chat/completions", request_body=body, status=200,
                          response_body=response, state=FlowState.COMPLETE, latency_ms=1.0))
    big = Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=time.time(), method="POST",
               path="/v1/chat/completions", request_body=orjson.dumps(big_request()), status=200,
               response_body=response, state=FlowState.COMPLETE, latency_ms=1.0)
    store.submit(big)
    store.flush()
    return big.id


def latencies(base_url: str, count: int) -> list[float]:
    out = []
    with httpx.Client(base_url=base_url) as client:
        for _ in range(count):
            start = time.perf_counter()
            client.post("/v1/chat/completions", json=SMALL).raise_for_status()
            out.append((time.perf_counter() - start) * 1000)
    return out


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    return f"p50 {statistics.median(ordered):6.2f} ms   p99 {ordered[int(len(ordered) * 0.99) - 1]:6.2f} ms"


async def run(rows: int, requests: int) -> None:
    scratch = tempfile.mkdtemp()
    os.chdir(scratch)
    store = Store("flows.sqlite3")
    t = time.perf_counter()
    big_id = seed(store, rows)
    print(f"seeded {rows} flows + one 2 MB flow in {time.perf_counter() - t:.1f} s")
    with MockUpstream() as upstream:
        bridge = EventBridge()
        forwarder = Forwarder(upstream.base_url, store=store, port=0, on_event=bridge)
        forwarder.start()
        app = InspectorApp(store=store, forwarder=forwarder, bridge=bridge)
        start = time.perf_counter()
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause()
            print(f"flow list first frame over {rows} flows: {(time.perf_counter() - start) * 1000:.0f} ms "
                  f"(rows read: {app.flows_screen.flow_list.loaded_rows})")

            async def open_big() -> float:
                began = time.perf_counter()
                app.open_flow(big_id)
                await pilot.pause()
                await app.workers.wait_for_complete()
                await pilot.pause()
                took = time.perf_counter() - began
                assert isinstance(app.screen, FlowScreen)
                await pilot.press("escape")
                return took

            first = await open_big()  # pays Textual's lazy widget imports and tree-sitter's first parse
            warm = statistics.median([await open_big() for _ in range(5)])
            print(f"open the 2 MB flow (analyse + pretty in a worker, then the panes): first {first * 1000:.0f} ms, "
                  f"then {warm * 1000:.0f} ms (median of 5)")

            idle = await asyncio.to_thread(latencies, forwarder.base_url, requests)
            done = threading.Event()
            busy: list[float] = []

            def measure() -> None:
                busy.extend(latencies(forwarder.base_url, requests))
                done.set()

            worker = threading.Thread(target=measure)
            worker.start()
            opened = 0
            while not done.is_set():
                await open_big()
                opened += 1
            worker.join()
            print(f"forwarder round trip, UI idle:                 {summary(idle)}")
            print(f"forwarder round trip, UI opening 2 MB ({opened}x): {summary(busy)}")
        forwarder.stop()
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    asyncio.run(run(args.rows, args.requests))


if __name__ == "__main__":
    main()
