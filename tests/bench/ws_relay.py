"""What the WebSocket relay adds, measured: direct to a WebSocket upstream vs through `toolwire-inspect
record` (recording on), each server in its own process, loopback only, bounded loops.

    .venv/bin/python tests/bench/ws_relay.py [--quick]

Prints the round trip of a small text frame echoed by the upstream (two relayed frames per round
trip), p50 and p99, direct and through the forwarder in the same run; then a stream of 1,000
frames/s from the upstream for 60 s (10 s with --quick), direct and through the forwarder: frames
received, how late they came (upstream send to client receive), and the recording process's RSS
sampled every second, reported as start, middle and end and the slope of a least-squares line
through the samples. The forwarder holds a socket's frames only until the store has them on disk
(store/writer.py), so RSS stays flat however long the socket lasts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable

UPSTREAM = r'''
import asyncio, json, time
from aiohttp import WSMsgType, web

async def socket(request):
    ws = web.WebSocketResponse(max_msg_size=0)
    await ws.prepare(request)
    async for message in ws:
        if message.type is not WSMsgType.TEXT:
            continue
        event = json.loads(message.data)
        if event.get("type") != "stream":
            await ws.send_str(message.data)
            continue
        rate, seconds = event["rate"], event["seconds"]
        start = time.perf_counter()
        for n in range(rate * seconds):
            due = start + n / rate
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            await ws.send_str(json.dumps({"type": "response.output_text.delta", "n": n, "sent": time.time(),
                                          "delta": "token "}))
        await ws.send_str('{"type": "response.completed"}')
    return ws

async def main():
    app = web.Application()
    app.router.add_get("/{tail:.*}", socket)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(f"upstream on http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}", flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
'''


def start(argv: list[str], marker: str) -> tuple[subprocess.Popen, str]:
    """Start a server process; the base URL it prints after `marker`."""
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    for line in proc.stdout:
        if marker in line:
            url = next(word for word in line.split() if word.startswith("http://"))
            threading.Thread(target=proc.stdout.read, daemon=True).start()  # never block on a full pipe
            return proc, url
    raise RuntimeError(f"{argv} exited: {proc.wait()}")


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


async def round_trips(url: str, count: int) -> list[float]:
    frame = json.dumps({"type": "echo", "input": "x" * 200})
    times = []
    async with aiohttp.ClientSession() as session, session.ws_connect(url) as ws:
        for _ in range(50):  # warm up
            await ws.send_str(frame)
            await ws.receive()
        for _ in range(count):
            start = time.perf_counter()
            await ws.send_str(frame)
            await ws.receive()
            times.append((time.perf_counter() - start) * 1000)
    return times


async def stream(url: str, rate: int, seconds: int, pid: int | None) -> dict:
    """Ask for `rate` frames/s for `seconds`; RSS of process `pid` (the recorder) sampled each second."""
    late: list[float] = []
    samples: list[tuple[float, float]] = []
    began = time.monotonic()
    next_sample = began
    async with aiohttp.ClientSession() as session, session.ws_connect(url, max_msg_size=0) as ws:
        await ws.send_str(json.dumps({"type": "stream", "rate": rate, "seconds": seconds}))
        while True:
            message = await ws.receive()
            event = json.loads(message.data)
            if event["type"] == "response.completed":
                break
            late.append((time.time() - event["sent"]) * 1000)
            if pid is not None and time.monotonic() >= next_sample:
                samples.append((time.monotonic() - began, rss_mb(pid)))
                next_sample += 1
    if pid is not None:
        samples.append((time.monotonic() - began, rss_mb(pid)))
    return {"late": late, "expected": rate * seconds, "rss": samples}


def slope(samples: list[tuple[float, float]]) -> float:
    """MB per minute of the least-squares line through (seconds, MB) samples."""
    times = [t for t, _ in samples]
    sizes = [mb for _, mb in samples]
    mean_t, mean_mb = statistics.fmean(times), statistics.fmean(sizes)
    spread = sum((t - mean_t) ** 2 for t in times)
    return 60 * sum((t - mean_t) * (mb - mean_mb) for t, mb in samples) / spread


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer round trips, a 10 s stream")
    args = parser.parse_args()
    count, seconds = (500, 10) if args.quick else (3000, 60)
    upstream, upstream_url = start([PYTHON, "-c", UPSTREAM], "upstream on")
    with tempfile.TemporaryDirectory() as folder:
        record, forwarder_url = start([PYTHON, "-m", "inspector", "record", "--upstream", upstream_url, "--port", "0",
                                       "--store", str(Path(folder) / "flows.sqlite3")], "forwarding")
        try:
            direct = asyncio.run(round_trips(upstream_url.replace("http", "ws", 1) + "/v1/responses", count))
            relayed = asyncio.run(round_trips(forwarder_url.replace("http", "ws", 1) + "/v1/responses", count))
            direct_flood = asyncio.run(stream(upstream_url.replace("http", "ws", 1) + "/v1/responses", 1000, seconds,
                                              None))
            flood = asyncio.run(stream(forwarder_url.replace("http", "ws", 1) + "/v1/responses", 1000, seconds,
                                       record.pid))
        finally:
            record.terminate()
            record.wait(timeout=10)
            upstream.terminate()
            upstream.wait(timeout=10)

    def p(values: list[float], q: float) -> float:
        return statistics.quantiles(values, n=100)[q - 1]

    print(f"round trip of a 220-byte text frame, {count} sequential (two relayed frames each), ms:")
    print(f"  direct    p50 {p(direct, 50):.3f}  p99 {p(direct, 99):.3f}")
    print(f"  forwarder p50 {p(relayed, 50):.3f}  p99 {p(relayed, 99):.3f}")
    added = p(relayed, 50) - p(direct, 50)
    print(f"  added p50 per round trip {added:.3f} ms, per relayed frame {added / 2:.3f} ms")
    for name, run in (("direct   ", direct_flood), ("forwarder", flood)):
        late = run["late"]
        print(f"stream of 1000 frames/s for {seconds} s, {name}: {len(late)} of {run['expected']} frames; "
              f"late by p50 {p(late, 50):.2f} ms, p99 {p(late, 99):.2f} ms, at most {max(late):.1f} ms")
    rss = flood["rss"]
    middle = rss[len(rss) // 2]
    print(f"  recorder RSS, MB: start {rss[0][1]:.1f} (at {rss[0][0]:.0f} s), middle {middle[1]:.1f} "
          f"(at {middle[0]:.0f} s), end {rss[-1][1]:.1f} (at {rss[-1][0]:.0f} s); slope {slope(rss):+.2f} MB/min "
          f"over {len(rss)} samples")

if __name__ == "__main__":
    main()
