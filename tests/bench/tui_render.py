"""What the TUI costs, and whether it can stall forwarding (docs/style.md, idioms 2 and 5), measured in one
run beside the floor: a bare Textual app rendering a static list, started the same way.

    .venv/bin/python tests/bench/tui_render.py [--rows 10000 100000] [--requests N]

1. First list frame, from process launch, over each store size vs the bare app (goal ≤ 2× the floor).
2. Opening a 50 KB flow (goal ≤ 150 ms) and a 2 MB flow (first paint ≤ 300 ms), with the latency of
   keys sent while the 2 MB flow loads (goal ≤ 100 ms).
3. Quit: from `q` to the app gone, and to the forwarder's child process gone (goal ≤ 300 ms).
4. Forwarding round trips, p50/p99, while the UI is idle vs while it opens the 2 MB flow over and
   over (goal: p99 within 2 ms of idle). The forwarder runs in its child process as under
   `toolwire-inspect --upstream`; the client and the mock upstream run in a process of their own,
   so that neither shares a GIL with the UI being measured.

Printed figures only: on a shared machine they move, so none of this is a test."""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, os.path.dirname(__file__))  # the sibling benchmark's conversation generator
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `tests.bench...` when run as a script

SMALL = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
SIZE = (120, 36)


def conversation(size: int) -> dict:
    """About `size` bytes of realistic structure, cut from check_speed's 1 MB tool-calling history
    (many small nodes, which is what pretty-printing and highlighting pay for)."""
    from check_speed import chat_conversation

    whole = chat_conversation()
    whole["messages"] = whole["messages"] * 2
    while len(orjson.dumps(whole)) > size * 1.1 and len(whole["messages"]) > 2:
        whole["messages"] = whole["messages"][: len(whole["messages"]) * 3 // 4]
    return whole


def seed(path: Path, rows: int) -> tuple[int, int]:
    """A store of `rows` small flows plus a 50 KB and a 2 MB one; their ids. The small ones are
    copied in SQL from one recorded through the real store (recording 100k takes minutes)."""
    from inspector.flow import Flow, FlowState
    from inspector.wire.dialects.openai_chat.mock import chat_completion
    from inspector.store import Store

    with Store(path) as store:
        store.new_session("http://bench", "http://127.0.0.1:0")
        response = orjson.dumps(chat_completion("ok"))

        def save(body: bytes) -> int:
            flow = Flow(id=store.next_flow_id(), session_id=store.session_id or 0, started_at=time.time(),
                        method="POST", path="/v1/chat/completions", request_body=body, status=200,
                        response_body=response, state=FlowState.COMPLETE, latency_ms=1.0)
            store.save(flow)
            return flow.id

        first = save(orjson.dumps(SMALL))
        medium, big = save(orjson.dumps(conversation(50_000))), save(orjson.dumps(conversation(2_000_000)))
    with sqlite3.connect(path) as conn:
        columns = ", ".join(name for _, name, *_ in conn.execute("PRAGMA table_info(flows)") if name != "id")
        conn.execute(f"WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < ?) "
                     f"INSERT INTO flows (id, {columns}) SELECT ? + k, {columns} FROM flows, n WHERE flows.id = ?",
                     (rows - 1, big, first))
    return medium, big


# -- 1. first frame, in a fresh process -------------------------------------------------------------


FIRST_FRAME = """
import asyncio, sys, time
launched = float(sys.argv[1])
kind = sys.argv[2]
if kind == "bare":
    from textual.app import App
    from textual.widgets import Static

    class Timed(App):
        def compose(self):
            yield Static("\\n".join(f"{n:>6}  POST /v1/chat/completions  200  1.0ms" for n in range(40)))
else:
    from inspector.store import Store
    from inspector.tui.app import InspectorApp
    store = Store(sys.argv[3], read_only=True)

async def main():
    app = Timed() if kind == "bare" else InspectorApp(store=store, forwarder=None)
    shown = asyncio.Event()
    async with app.run_test(size=(120, 36)):
        app.call_after_refresh(shown.set)
        await shown.wait()
        print(f"{(time.time() - launched) * 1000:.0f}")

asyncio.run(main())
"""


def first_frame(kind: str, store: Path | None = None) -> float:
    """Milliseconds from launching a fresh interpreter to the app's first refresh."""
    launched = time.time()
    done = subprocess.run([sys.executable, "-c", FIRST_FRAME, str(launched), kind, str(store or "")],
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr)
    return float(done.stdout.strip().splitlines()[-1])


# -- the client process: mock upstream and load, apart from the UI --------------------------------


CLIENT = """
import sys, time, orjson, httpx
from inspector.mock import MockUpstream
with MockUpstream() as upstream:
    print(upstream.base_url, flush=True)
    for line in sys.stdin:
        url, count = line.split()
        out = []
        with httpx.Client(base_url=url) as client:
            for _ in range(int(count)):
                start = time.perf_counter()
                client.post("/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "hi"}]}).raise_for_status()
                out.append((time.perf_counter() - start) * 1000)
        print(orjson.dumps(out).decode(), flush=True)
"""


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    return f"p50 {statistics.median(ordered):6.2f} ms   p99 {ordered[max(0, int(len(ordered) * 0.99) - 1)]:6.2f} ms"


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * 0.99) - 1)]


async def in_app(store_path: Path, medium: int, big: int, requests: int) -> None:
    from textual import events

    from inspector.child import ForwarderProcess
    from inspector.proxy.options import Options
    from inspector.store import Store
    from inspector.tui.app import InspectorApp
    from inspector.tui.bridge import EventBridge
    from inspector.tui.screens.flow import FlowScreen
    from inspector.tui.widgets.payload import PayloadView

    client = subprocess.Popen([sys.executable, "-c", CLIENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    assert client.stdin is not None and client.stdout is not None
    upstream_url = client.stdout.readline().strip()
    child = ForwarderProcess.start(Options(upstream_url, store=str(store_path), port=0))
    bridge = EventBridge()
    bridge.follow(child)
    store = Store(store_path, read_only=True)
    store.session_id = child.session_id
    keys: dict[int, float] = {}  # id of a Key sent -> when the app dispatched it

    def hook(message: object) -> None:
        if isinstance(message, events.Key) and id(message) in keys and not keys[id(message)]:
            keys[id(message)] = time.perf_counter()

    app = InspectorApp(store=store, forwarder=child, bridge=bridge)
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await app.workers.wait_for_complete()

        async def open_flow(flow_id: int, probe_keys: bool = False) -> tuple[float, float, list[float]]:
            """(ms to the first frame showing the request pane's text, ms to the first frame showing
            everything, key latencies)."""
            began = time.perf_counter()
            app.open_flow(flow_id)
            sent: list[tuple[events.Key, float]] = []
            painted: list[float] = []  # set by the first refresh after the request pane got its text
            asked = False
            while True:
                screen = app.screen
                if isinstance(screen, FlowScreen) and screen.is_mounted:
                    request = screen.query_one("#request", PayloadView)
                    if not asked and request.pane is not None:
                        asked = True
                        app.call_after_refresh(lambda: painted.append(time.perf_counter()))
                    if screen.view is not None and painted and not app.workers._workers:
                        break
                if probe_keys:
                    # A key the flow view ignores ("ctrl+y"), sent to the app as the terminal would.
                    key = events.Key("ctrl+y", None)
                    keys[id(key)] = 0.0
                    sent.append((key, time.perf_counter()))
                    app.post_message(key)
                await asyncio.sleep(0.005 if not probe_keys else 0.02)
            shown = asyncio.Event()
            app.call_after_refresh(shown.set)
            await shown.wait()
            done = time.perf_counter()
            await pilot.pause()
            latencies = [(keys[id(key)] or done) - at for key, at in sent]
            await pilot.press("escape")
            await app.workers.wait_for_complete()
            return (painted[0] - began) * 1000, (done - began) * 1000, [x * 1000 for x in latencies]

        first = await open_flow(medium)  # builds the flow screen, which every later open reuses
        print(f"first open of the session (builds the flow screen): first paint {first[0]:5.0f} ms, "
              f"all shown {first[1]:5.0f} ms")
        opened = [await open_flow(medium) for _ in range(5)]
        print(f"open a 50 KB flow: first paint {statistics.median(o[0] for o in opened):5.0f} ms, "
              f"all shown {statistics.median(o[1] for o in opened):5.0f} ms (median of 5; goal ≤ 150 ms)")
        opened = [await open_flow(big, probe_keys=True) for _ in range(3)]
        waits = [x for o in opened for x in o[2]]
        print(f"open a 2 MB flow:  first paint {statistics.median(o[0] for o in opened):5.0f} ms (goal ≤ 300 ms), "
              f"all shown {statistics.median(o[1] for o in opened):5.0f} ms (median of 3)")
        print(f"keys while it loads: {len(waits)} sent, answered in median {statistics.median(waits):.0f} ms, "
              f"worst {max(waits):.0f} ms (goal ≤ 100 ms)")

        client.stdin.write(f"{child.base_url} {requests}\n")
        client.stdin.flush()
        idle = orjson.loads(await asyncio.to_thread(client.stdout.readline))
        client.stdin.write(f"{child.base_url} {requests}\n")
        client.stdin.flush()
        busy_line = asyncio.ensure_future(asyncio.to_thread(client.stdout.readline))
        count = 0
        while not busy_line.done():
            await open_flow(big)
            count += 1
        busy = orjson.loads(busy_line.result())
        print(f"forwarding, UI idle:                  {summary(idle)}")
        print(f"forwarding, UI opening 2 MB ({count:>2}x):    {summary(busy)}   "
              f"(p99 {p99(busy) - p99(idle):+.2f} ms vs idle; goal within 2 ms)")
        quit_began = time.perf_counter()
        await app.action_quit()
    app_gone = time.perf_counter()
    await asyncio.to_thread(child._process.wait)
    child_gone = time.perf_counter()
    print(f"quit: app gone in {(app_gone - quit_began) * 1000:.0f} ms, forwarder process gone in "
          f"{(child_gone - quit_began) * 1000:.0f} ms (goal ≤ 300 ms)")
    store.close()
    client.stdin.close()
    client.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp())
    stores = {}
    for rows in args.rows:
        began = time.perf_counter()
        stores[rows] = scratch / f"flows-{rows}.sqlite3"
        ids = seed(stores[rows], rows)
        print(f"seeded {rows} flows (+ a 50 KB and a 2 MB one) in {time.perf_counter() - began:.1f} s")
    first_frame("bare")  # warms the file cache for both
    floor = statistics.median(first_frame("bare") for _ in range(3))
    print(f"bare Textual app, first frame from launch: {floor:5.0f} ms (the floor)")
    for rows, path in stores.items():
        shown = statistics.median(first_frame("store", path) for _ in range(3))
        print(f"flow list over {rows:>6} flows, first frame from launch: {shown:5.0f} ms "
              f"({shown / floor:.2f}× the floor; goal ≤ 2×)")
    asyncio.run(in_app(stores[min(stores)], *ids, args.requests))


if __name__ == "__main__":
    main()
