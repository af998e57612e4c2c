"""What the forwarder adds, measured: direct to the mock upstream vs through `toolwire-inspect record`
(recording and checking on), each server in its own process, loopback only, bounded loops.

    .venv/bin/python tests/bench/proxy_overhead.py [--quick]

Prints one table: p50/p99 latency at concurrency 1 and 8 and req/s for a small request, the same
for a 1 MB request (a long tool-calling history), time to first byte of a 20-chunk stream with
chunks 5 ms apart and how late each chunk arrives compared with direct. Then the upstream-client
choice: a minimal forwarder (nothing recorded) with aiohttp vs httpx on the hot path; `record`'s c=8
rate against the bare aiohttp relay's, in rounds alternating between the two. Last, the CPU
time each server process spends per small request and per 20-event stream: `record` (its recording
finished) beside the bare aiohttp relay, taken from /proc, so that the figure stays meaningful on a
machine other work keeps busy."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
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
CHAT = "/v1/chat/completions"
SMALL = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Weather in Paris?"}]}).encode()
STREAM = json.dumps({"model": "gpt-4o-mini", "stream": True,
                     "messages": [{"role": "user", "content": "Weather in Paris?"}]}).encode()
CHUNKS, INTERVAL_MS = 20, 5.0


def big_request(size: int = 1_000_000) -> bytes:
    """A tool-calling history of about `size` bytes: calls, results and tools, as agents send."""
    tools = [{"type": "function", "function": {"name": f"tool_{n}", "description": "Looks something up. " * 4,
                                               "parameters": {"type": "object",
                                                              "properties": {"q": {"type": "string"}},
                                                              "required": ["q"]}}} for n in range(50)]
    messages: list[dict] = [{"role": "system", "content": "You are a careful agent."}]
    n = 0
    while len(json.dumps(messages)) < size - 20_000:
        calls = [{"id": f"call_{n}_{k}", "type": "function",
                  "function": {"name": f"tool_{(n + k) % 50}", "arguments": json.dumps({"q": f"query {n} {k}"})}}
                 for k in range(2)]
        messages.append({"role": "user", "content": f"Step {n}: look these up. " + "context " * 40})
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        for call in calls:
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": "result text " * 60})
        n += 1
    return json.dumps({"model": "gpt-4o-mini", "messages": messages, "tools": tools}).encode()


# -- servers in their own processes -------------------------------------------------------------

def start(argv: list[str], marker: str) -> tuple[subprocess.Popen, str]:
    """Start a server process; the base URL it prints (on stdout or stderr) after `marker`."""
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    for line in proc.stdout:
        if marker in line:
            url = next(word for word in line.split() if word.startswith("http://"))
            # Keep draining its output (one line per flow) so the server never blocks on a full pipe.
            threading.Thread(target=proc.stdout.read, daemon=True).start()
            return proc, url
    raise RuntimeError(f"{argv} exited: {proc.wait()}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time process `pid` has used so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def descendants(pid: int) -> list[int]:
    """The processes `pid` started, and theirs (a recorder's writer process and its analysis worker)."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split():
            found += [int(child), *descendants(int(child))]
    return found


def family_cpu(pid: int) -> tuple[float, float]:
    """CPU seconds of process `pid` itself, and of the processes it started (those alive now)."""
    return cpu_seconds(pid), sum(cpu_seconds(child) for child in descendants(pid))


def stored(store: Path) -> int:
    """Flows the store holds finished (not pending)."""
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        return int(db.execute("SELECT count(*) FROM flows WHERE state != 'pending'").fetchone()[0])


def cpu_per_request(pid: int, url: str, body: bytes, *, requests: int, stream: bool,
                    store: Path | None = None, upstream: int | None = None) -> tuple[float, float, float, float]:
    """Milliseconds of CPU process `pid` spends per request of `requests` (c=8 for small ones, one at a
    time for streams), and those of the processes it started (`record`'s writer process); with
    `store`, counted once the recording of all of them is committed, so that the recorder's share
    (analysis, redaction, row writes) is in the figure. Then those of this process (the load
    client) and of process `upstream` (the mock), the other two that share the machine's cores."""
    before_flows = stored(store) if store is not None else 0
    before = family_cpu(pid)
    client_before = time.process_time()
    upstream_before = cpu_seconds(upstream) if upstream is not None else 0.0
    if stream:
        asyncio.run(stream_times(url + CHAT, body, streams=requests - 3))  # 3 more warm it up
    else:
        asyncio.run(load(url + CHAT, body, requests=requests, concurrency=8))
    client = time.process_time() - client_before
    upstream_cpu = cpu_seconds(upstream) - upstream_before if upstream is not None else 0.0
    if store is not None:
        sent = requests + (0 if stream else min(20, requests))  # load() warms up with 20 more
        deadline = time.monotonic() + 60
        while stored(store) < before_flows + sent and time.monotonic() < deadline:
            time.sleep(0.05)  # a bench polling the file: the recorder is another process
    after = family_cpu(pid)
    own, children = after[0] - before[0], after[1] - before[1]
    return 1000.0 * own / requests, 1000.0 * children / requests, 1000.0 * client / requests, 1000.0 * upstream_cpu / requests


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    # A recorder commits what it holds before it exits: on a busy machine, the analysis of a
    # backlog of 1 MB flows takes longer than a server's shutdown.
    proc.wait(timeout=120)


MINIMAL = r'''
import asyncio, sys, aiohttp, httpx, uvicorn
kind, upstream = sys.argv[1], sys.argv[2].rstrip("/")
HOP = {b"host", b"content-length", b"connection", b"transfer-encoding", b"keep-alive"}
state = {}
async def app(scope, receive, send):
    body = b""
    while True:
        m = await receive(); body += m.get("body", b"")
        if not m.get("more_body"): break
    headers = [(k.decode(), v.decode()) for k, v in scope["headers"] if k not in HOP]
    url = upstream + scope["path"]
    if kind == "aiohttp":
        s = state.get("s") or state.setdefault("s", aiohttp.ClientSession(auto_decompress=False))
        async with s.post(url, data=body, headers=headers) as r:
            await send({"type": "http.response.start", "status": r.status,
                        "headers": [(k, v) for k, v in r.raw_headers if k.lower() not in HOP]})
            async for piece in r.content.iter_any():
                await send({"type": "http.response.body", "body": piece, "more_body": True})
    else:
        c = state.get("c") or state.setdefault("c", httpx.AsyncClient(limits=httpx.Limits(max_connections=100)))
        async with c.stream("POST", url, content=body, headers=headers) as r:
            await send({"type": "http.response.start", "status": r.status_code,
                        "headers": [(k, v) for k, v in r.headers.raw if k.lower() not in HOP]})
            async for piece in r.aiter_raw():
                await send({"type": "http.response.body", "body": piece, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})
import socket
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
sock.listen(128)  # listening before the URL is printed: connections queue until uvicorn runs
config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
server = uvicorn.Server(config)
print(f"minimal {kind} forwarder on http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
server.run(sockets=[sock])
'''


# -- the client side ----------------------------------------------------------------------------

async def timed_post(session: aiohttp.ClientSession, url: str, body: bytes) -> float:
    start = time.perf_counter()
    async with session.post(url, data=body, headers={"content-type": "application/json",
                                                     "authorization": "Bearer sk-bench"}) as response:
        await response.read()
        assert response.status == 200, response.status
    return (time.perf_counter() - start) * 1000.0


async def load(url: str, body: bytes, *, requests: int, concurrency: int) -> tuple[list[float], float]:
    """Latencies (ms) of `requests` posts by `concurrency` workers, and the requests per second."""
    latencies: list[float] = []
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        for _ in range(min(20, requests)):
            await timed_post(session, url, body)  # warm up connections and caches
        remaining = requests

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                latencies.append(await timed_post(session, url, body))

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
    return latencies, requests / elapsed


async def stream_times(url: str, body: bytes, *, streams: int) -> tuple[list[list[float]], float]:
    """For each stream: the arrival time (ms after the request) of each SSE event, taken when the
    piece of body that completes it arrives (pieces may carry several events)."""
    runs = []
    async with aiohttp.ClientSession() as session:
        for n in range(streams + 3):
            start = time.perf_counter()
            arrivals: list[float] = []
            async with session.post(url, data=body, headers={"content-type": "application/json"}) as response:
                async for piece in response.content.iter_any():
                    now = (time.perf_counter() - start) * 1000.0
                    arrivals += [now] * piece.count(b"\n\n")
            if n >= 3:  # the first streams warm up
                runs.append(arrivals)
    return runs, 0.0


ROUNDS = 5


def interleaved(measure, direct_url: str, forward_url: str) -> tuple[list, list, float, float]:
    """Direct and forwarded in alternating rounds, so that whatever else the machine does at the
    time weighs on both alike. (direct samples, forwarded samples, direct rate, forwarded rate)."""
    samples: dict[str, list] = {direct_url: [], forward_url: []}
    rates: dict[str, list[float]] = {direct_url: [], forward_url: []}
    for _ in range(ROUNDS):
        for url in (direct_url, forward_url):
            found, rate = asyncio.run(measure(url))
            samples[url] += found
            rates[url].append(rate)
    return (samples[direct_url], samples[forward_url], statistics.median(rates[direct_url]),
            statistics.median(rates[forward_url]))


def settled(store: Path) -> int:
    """The flows `store` holds finished once its writer has stopped adding any (for half a second)."""
    count, since = stored(store), time.monotonic()
    while time.monotonic() - since < 0.5:
        time.sleep(0.05)  # a bench polling the file: the recorder is another process
        now = stored(store)
        if now != count:
            count, since = now, time.monotonic()
    return count


def against_relay(relay_url: str, forward_url: str, store: Path, requests: int) -> tuple[float, float]:
    """Requests per second at c=8 of the bare relay and of `record`, in alternating rounds, each
    begun once the recording of every earlier round is committed: a round of `record` is one burst
    (the writer process writes it after), the writer's work falls in no round of the relay's, and
    the machine's drift (it swings by half within minutes here) weighs on both alike."""
    rates: dict[str, list[float]] = {relay_url: [], forward_url: []}
    expected = settled(store)
    for _ in range(ROUNDS):
        for url in (relay_url, forward_url):
            deadline = time.monotonic() + 60
            while stored(store) < expected and time.monotonic() < deadline:
                time.sleep(0.05)
            rates[url].append(asyncio.run(load(url + CHAT, SMALL, requests=requests, concurrency=8))[1])
            if url == forward_url:
                expected += requests + min(20, requests)  # load() warms up with 20 more
    return statistics.median(rates[relay_url]), statistics.median(rates[forward_url])


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100.0 * (len(ordered) - 1))))]


def row(name: str, direct: float, forwarded: float, target: str = "") -> str:
    met = ""
    if target.startswith("added <= "):
        met = "met" if forwarded - direct <= float(target.removeprefix("added <= ")) else "NOT MET"
    return (f"| {name:<44} | {direct:>9.2f} | {forwarded:>9.2f} | {forwarded - direct:>+8.2f} | {target:<11} "
            f"| {met:<7} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer requests (a smoke run)")
    parser.add_argument("--route", action="store_true",
                        help="through a route (--route bench=MOCK, base URL /r/bench) instead of --upstream")
    args = parser.parse_args()
    small_n, big_n, streams = (500, 50, 15) if args.quick else (2500, 250, 60)
    big = big_request()
    big_stream = big[:-1] + b', "stream": true}'

    mock, mock_url = start([PYTHON, "-m", "inspector", "mock", "--port", "0", "--chunks", str(CHUNKS - 3),
                            "--interval-ms", str(INTERVAL_MS)], "mock upstream on")
    store_dir = tempfile.mkdtemp(prefix="toolwire-bench-")
    # A route's line gives its own base URL (…/r/bench), the first URL on it.
    upstream, marker = (["--route", f"bench={mock_url}"], "route bench") if args.route else (
        ["--upstream", mock_url], "forwarding")
    store = Path(store_dir) / "flows.sqlite3"
    forwarder, forward_url = start([PYTHON, "-m", "inspector", "record", *upstream, "--port", "0",
                                    "--store", str(store)], marker)
    results: dict[str, tuple[float, float, str]] = {}
    streams_of: dict[str, tuple[list, list]] = {}
    try:
        for label, body, stream_body, n, target in [("small", SMALL, STREAM, small_n, 1), ("1 MB", big, big_stream, big_n, 4)]:
            for conc in (1, 8):
                direct, through, direct_rps, through_rps = interleaved(
                    lambda url: load(url + CHAT, body, requests=n * (1 if conc == 1 else 2) // ROUNDS,
                                     concurrency=conc),
                    mock_url, forward_url)
                results[f"{label} c={conc} p50 latency (ms)"] = (
                    pct(direct, 50), pct(through, 50), f"added <= {target}" if conc == 1 else "")
                results[f"{label} c={conc} p99 latency (ms)"] = (pct(direct, 99), pct(through, 99), "")
                results[f"{label} c={conc} requests/s"] = (direct_rps, through_rps, "")
            streams_of[label] = interleaved(
                lambda url: stream_times(url + CHAT, stream_body, streams=streams // ROUNDS), mock_url, forward_url)[:2]
        relay, relay_url = start([PYTHON, "-c", MINIMAL, "aiohttp", mock_url], "minimal")
        try:
            c8_relay, c8_record = against_relay(relay_url, forward_url, store, 2 * small_n // ROUNDS)
        finally:
            stop(relay)
    finally:
        stop(forwarder)
        stop(mock)

    # Jitter: how far each gap between two events strays from the upstream's 5 ms. A forwarder
    # that buffered would turn gaps into 0 and 10 ms; one that relays live leaves them alone.
    def jitter(runs: list[list[float]]) -> list[float]:
        return [abs(r[i] - r[i - 1] - INTERVAL_MS) for r in runs for i in range(1, len(r))]

    for label, (direct_runs, through_runs) in streams_of.items():
        assert {len(r) for r in direct_runs + through_runs} == {CHUNKS}, "every stream has all its events"
        results[f"{label} stream ({CHUNKS} chunks {INTERVAL_MS:g} ms apart) TTFB p50"] = (
            pct([r[0] for r in direct_runs], 50), pct([r[0] for r in through_runs], 50),
            "added <= 2" if label == "small" else "added <= 4")
        results[f"{label} stream chunk-gap jitter p99 (ms)"] = (
            pct(jitter(direct_runs), 99), pct(jitter(through_runs), 99), "added <= 2")
        results[f"{label} stream last chunk p50 (ms)"] = (
            pct([r[-1] for r in direct_runs], 50), pct([r[-1] for r in through_runs], 50), "")

    load_avg = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nforwarder overhead: direct to the mock vs through `toolwire-inspect record` (recording + checking on)"
          f"{', through a route' if args.route else ''}")
    print(f"machine: {os.cpu_count()} cores, load average {load_avg} at the end (other work skews every figure)")
    print(f"requests: small {small_n} (c=1) / {small_n * 2} (c=8), 1 MB ({len(big)} bytes) {big_n} (c=1) / "
          f"{big_n * 2} (c=8), streams {streams} of each\n")
    print(f"| {'measure':<44} | {'direct':>9} | {'forwarder':>9} | {'added':>8} | {'target':<11} | {'':<7} |")
    print(f"|{'-' * 46}|{'-' * 11}|{'-' * 11}|{'-' * 10}|{'-' * 13}|{'-' * 9}|")
    for name, (direct, forwarded, target) in results.items():
        print(row(name, direct, forwarded, target))

    # The upstream client of the hot path, chosen by this measurement (issue 2).
    print("\nupstream client on the hot path: minimal forwarder, nothing recorded")
    print(f"| {'client':<10} | {'c=1 p50 added (ms)':>18} | {'c=8 req/s':>10} |")
    print(f"|{'-' * 12}|{'-' * 20}|{'-' * 12}|")
    relay_added = 0.0
    mock, mock_url = start([PYTHON, "-m", "inspector", "mock", "--port", "0"], "mock upstream on")
    try:
        for kind in ("aiohttp", "httpx"):
            server, url = start([PYTHON, "-c", MINIMAL, kind, mock_url], "minimal")
            try:
                direct, through, _, _ = interleaved(
                    lambda u: load(u + CHAT, SMALL, requests=small_n // ROUNDS, concurrency=1), mock_url, url)
                _, _, _, rps = interleaved(
                    lambda u: load(u + CHAT, SMALL, requests=2 * small_n // ROUNDS, concurrency=8), mock_url, url)
            finally:
                stop(server)
            added = pct(through, 50) - pct(direct, 50)
            print(f"| {kind:<10} | {added:>18.2f} | {rps:>10.0f} |")
            if kind == "aiohttp":  # the floor the targets are set against
                relay_added = added
    finally:
        stop(mock)
    direct_p50, record_p50, _ = results["small c=1 p50 latency (ms)"]
    added = record_p50 - direct_p50
    ratio = f", {added / relay_added:.2f}x the relay's" if relay_added > 0 else ""
    # The target, 0.35 ms beside a relay adding ~0.3 ms, is as a ratio <= 1.17x the relay's.
    print(f"\nsmall c=1 p50 added: `record` {added:+.2f} ms, the bare relay {relay_added:+.2f} ms{ratio} "
          f"(target: `record` <= 0.35 ms beside a relay at ~0.3 ms, i.e. <= 1.17x)")
    print(f"\nc=8 small requests, rounds alternating with a bare relay: `record` {c8_record:.0f} req/s, "
          f"the relay {c8_relay:.0f}")
    cpu_figures(c8_relay, c8_record)


# Requests for the CPU figures, in quick runs too: /proc counts CPU in ticks of 10 ms, and these
# make each figure some 60 ticks on the bare relay.
CPU_SMALL, CPU_STREAMS = 2000, 200


def cpu_figures(relay_rps: float, record_rps: float, small_n: int = CPU_SMALL, streams: int = CPU_STREAMS) -> None:
    """The CPU each process spends per request: what bounds throughput on a shared machine.
    `relay_rps`, `record_rps`: the c=8 small-request rates measured above, set against the bound."""
    print("\nCPU per request (ms of the server process's own user+system time)")
    stream_title = f"{CHUNKS}-event stream"
    print(f"| {'server':<37} | {'small request, c=8':>18} | {stream_title:>16} |")
    print(f"|{'-' * 39}|{'-' * 20}|{'-' * 18}|")
    mock, mock_url = start([PYTHON, "-m", "inspector", "mock", "--port", "0", "--chunks", str(CHUNKS - 3),
                            "--interval-ms", "1"], "mock upstream on")
    store = Path(tempfile.mkdtemp(prefix="toolwire-bench-cpu-")) / "flows.sqlite3"
    smalls: list[tuple[float, float, float, float]] = []  # the relay's, then record's
    try:
        for name, argv, marker, recording in [
                ("bare aiohttp relay (nothing recorded)", [PYTHON, "-c", MINIMAL, "aiohttp", mock_url], "minimal", None),
                ("`record` (forwarder + recording)", [PYTHON, "-m", "inspector", "record", "--upstream", mock_url,
                                                      "--port", "0", "--store", str(store)], "forwarding", store)]:
            server, url = start(argv, marker)
            try:
                small = cpu_per_request(server.pid, url, SMALL, requests=small_n, stream=False, store=recording,
                                        upstream=mock.pid)
                stream = cpu_per_request(server.pid, url, STREAM, requests=streams, stream=True, store=recording,
                                         upstream=mock.pid)
            finally:
                stop(server)
            smalls.append(small)
            print(f"| {name:<37} | {small[0]:>18.3f} | {stream[0]:>16.3f} |")
            if recording is not None:  # where recording went: out of the forwarder's process
                print(f"| {'  its writer process':<37} | {small[1]:>18.3f} | {stream[1]:>16.3f} |")
        # Measured beside `record`, the last server above.
        print(f"| {'the load client (this bench)':<37} | {small[2]:>18.3f} | {stream[2]:>16.3f} |")
        print(f"| {'the mock upstream':<37} | {small[3]:>18.3f} | {stream[3]:>16.3f} |")
    finally:
        stop(mock)
    # Client, upstream, forwarder and writer share the cores: where they are all busy, the rate
    # through `record` can reach at most the relay's times the ratio of their CPU per request.
    relay, record = smalls
    others = (relay[2] + relay[3] + record[2] + record[3]) / 2
    bound = (others + relay[0]) / (others + record[0] + record[1])
    print(f"\nc=8 small requests through `record`: {record_rps / relay_rps:.2f}x the bare relay's req/s "
          f"(target >= 0.8); with every process on these {os.cpu_count()} cores, CPU bounds a sustained rate to "
          f"{bound:.2f}x ((client + mock + relay) / (client + mock + forwarder + writer) ms per request; a burst "
          "as short as a round above, which the writer process writes after it, can pass it)")


if __name__ == "__main__":
    main()
