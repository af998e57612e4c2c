"""Soak: many concurrent streaming clients for a while, direct to the mock upstream and then through
`toolwire-inspect record` (recording and checking on), each server in its own process, loopback only;
between the two, through a bare aiohttp relay (nothing recorded), the floor a forwarder built from
the same parts can reach, whose CPU per request is printed beside the forwarder's.

    .venv/bin/python tests/bench/soak.py [--clients 200] [--seconds 60] [--tui-child]

`--tui-child`: the forwarder is the TUI's forwarder process (inspector.child.ForwarderProcess, as
`toolwire-inspect` starts it), not `record`. Either writes the store through its writer process,
whose CPU and RSS are printed beside the forwarder's.

Each client loops: one streamed chat completion (the mock's chunks, 5 ms apart), read to the end,
then the next. Prints per phase: requests, errors, TTFB and total p50/p99 (and what the forwarder
adds), then the flows recorded against requests answered, the recorder's RSS over time and the
store's size on disk."""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

import aiohttp

from proxy_overhead import CHAT, MINIMAL, PYTHON, STREAM, cpu_seconds, descendants, family_cpu, pct, start, stop

CHUNKS, INTERVAL_MS = 20, 5.0


async def soak(url: str, clients: int, seconds: float) -> tuple[list[float], list[float], int, list[str]]:
    """(TTFB ms, total ms, requests answered, errors) of `clients` looping clients for `seconds`."""
    ttfb: list[float] = []
    total: list[float] = []
    errors: list[str] = []
    deadline = time.perf_counter() + seconds
    connector = aiohttp.TCPConnector(limit=clients)
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        async def client() -> None:
            while time.perf_counter() < deadline:
                start_at = time.perf_counter()
                try:
                    async with session.post(url, data=STREAM, headers={"content-type": "application/json",
                                                                        "authorization": "Bearer sk-soak"}) as r:
                        first = None
                        events = 0
                        async for piece in r.content.iter_any():
                            if first is None:
                                first = time.perf_counter()
                            events += piece.count(b"\n\n")
                        if r.status != 200 or events != CHUNKS:
                            errors.append(f"status {r.status}, {events} events")
                            continue
                except (TimeoutError, aiohttp.ClientError) as exc:
                    errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                end = time.perf_counter()
                ttfb.append((first - start_at) * 1000.0)
                total.append((end - start_at) * 1000.0)

        await asyncio.gather(*(client() for _ in range(clients)))
    return ttfb, total, len(total), errors


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def family_rss(pid: int) -> tuple[float, float]:
    """RSS (MiB) of process `pid`, and of the processes it started (the writer process)."""
    return rss_mib(pid), sum(rss_mib(child) for child in descendants(pid))


def sample_rss(pid: int, every: float, stop_sampling: threading.Event,
               into: list[tuple[float, tuple[float, float]]]) -> None:
    started = time.perf_counter()
    while not stop_sampling.wait(every):
        into.append((time.perf_counter() - started, family_rss(pid)))


def recorded(store: Path) -> tuple[int, int]:
    """(flows complete, flows in any other state) in the store."""
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        complete = db.execute("SELECT count(*) FROM flows WHERE state = 'complete'").fetchone()[0]
        other = db.execute("SELECT count(*) FROM flows WHERE state != 'complete'").fetchone()[0]
    return complete, other


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0, help="per phase (direct, then forwarded)")
    parser.add_argument("--tui-child", action="store_true", help="through the TUI's forwarder process, not `record`")
    args = parser.parse_args()

    mock, mock_url = start([PYTHON, "-m", "inspector", "mock", "--port", "0", "--chunks", str(CHUNKS - 3),
                            "--interval-ms", str(INTERVAL_MS)], "mock upstream on")
    store_dir = Path(tempfile.mkdtemp(prefix="toolwire-soak-"))
    store = store_dir / "flows.sqlite3"
    child = None
    if args.tui_child:
        from inspector.child import ForwarderProcess
        from inspector.proxy.options import Options

        child = ForwarderProcess.start(Options(mock_url, store=str(store), port=0))
        forwarder_pid, forward_url = child.pid, child.base_url
    else:
        forwarder, forward_url = start([PYTHON, "-m", "inspector", "record", "--upstream", mock_url, "--port", "0",
                                        "--store", str(store)], "forwarding")
        forwarder_pid = forwarder.pid
    rss: list[tuple[float, tuple[float, float]]] = [(0.0, family_rss(forwarder_pid))]
    cpu: dict[str, float] = {}
    try:
        mock_cpu = cpu_seconds(mock.pid)
        direct = asyncio.run(soak(mock_url + CHAT, args.clients, args.seconds))
        cpu["mock, direct phase"] = cpu_seconds(mock.pid) - mock_cpu
        relay, relay_url = start([PYTHON, "-c", MINIMAL, "aiohttp", mock_url], "minimal")
        try:
            relay_cpu = cpu_seconds(relay.pid)
            bare = asyncio.run(soak(relay_url + CHAT, args.clients, args.seconds))
            cpu["bare relay, its phase"] = cpu_seconds(relay.pid) - relay_cpu
        finally:
            stop(relay)
        mock_cpu, forwarder_cpu = cpu_seconds(mock.pid), family_cpu(forwarder_pid)
        stop_sampling = threading.Event()
        sampler = threading.Thread(target=sample_rss, args=(forwarder_pid, max(1.0, args.seconds / 12),
                                                            stop_sampling, rss))
        sampler.start()
        through = asyncio.run(soak(forward_url + CHAT, args.clients, args.seconds))
        cpu["mock, forwarded phase"] = cpu_seconds(mock.pid) - mock_cpu
        after = family_cpu(forwarder_pid)
        cpu["forwarder, forwarded phase"] = after[0] - forwarder_cpu[0]
        cpu["its writer process"] = after[1] - forwarder_cpu[1]
        stop_sampling.set()
        sampler.join()
        rss.append((args.seconds, family_rss(forwarder_pid)))
    finally:
        if child is not None:
            child.stop()
        else:
            stop(forwarder)  # the recorder commits what it holds before it exits
        stop(mock)
    complete, other = recorded(store)
    size = sum(f.stat().st_size for f in store_dir.iterdir()) / (1 << 20)

    load_avg = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nsoak: {args.clients} streaming clients for {args.seconds:g} s per phase, {CHUNKS} events "
          f"{INTERVAL_MS:g} ms apart per stream")
    print(f"machine: {os.cpu_count()} cores, load average {load_avg} at the end (other work skews every figure)\n")
    print(f"| {'measure':<28} | {'direct':>9} | {'bare relay':>10} | {'forwarder':>9} | {'added':>8} |")
    print(f"|{'-' * 30}|{'-' * 11}|{'-' * 12}|{'-' * 11}|{'-' * 10}|")
    d_ttfb, d_total, d_n, d_errors = direct
    b_ttfb, b_total, b_n, b_errors = bare
    f_ttfb, f_total, f_n, f_errors = through
    rows = [
        ("requests answered", d_n, b_n, f_n),
        ("requests/s", d_n / args.seconds, b_n / args.seconds, f_n / args.seconds),
        ("errors", len(d_errors), len(b_errors), len(f_errors)),
        ("TTFB p50 (ms)", pct(d_ttfb, 50), pct(b_ttfb, 50), pct(f_ttfb, 50)),
        ("TTFB p99 (ms)", pct(d_ttfb, 99), pct(b_ttfb, 99), pct(f_ttfb, 99)),
        ("total p50 (ms)", pct(d_total, 50), pct(b_total, 50), pct(f_total, 50)),
        ("total p99 (ms)", pct(d_total, 99), pct(b_total, 99), pct(f_total, 99)),
    ]
    for name, a, r, b in rows:
        print(f"| {name:<28} | {a:>9.1f} | {r:>10.1f} | {b:>9.1f} | {b - a:>+8.1f} |")
    print(f"\nthroughput through the forwarder: {100.0 * (f_n / d_n - 1):+.1f} % of direct, "
          f"{f_n / max(b_n, 1):.2f}x the bare relay's")
    print(f"flows recorded: {complete} complete of {f_n} answered ({other} in another state)")
    print(f"forwarder: {'the TUI forwarder process' if args.tui_child else '`record`'}")
    print("RSS (MiB) over time, forwarder process + its writer process: "
          + ", ".join(f"{t:.0f}s {m:.0f}+{w:.0f}" for t, (m, w) in rss))
    print(f"store on disk: {size:.1f} MiB for {complete + other} flows")
    # What bounds throughput: on a small machine the load generator, the mock and the forwarder
    # share the cores, so the forwarder's CPU per request is the figure to watch.
    print("CPU used: " + ", ".join(f"{name} {used:.1f} s" for name, used in cpu.items())
          + f"; forwarder {1000.0 * cpu['forwarder, forwarded phase'] / max(f_n, 1):.2f} ms CPU per request "
          f"(its writer process {1000.0 * cpu['its writer process'] / max(f_n, 1):.2f} ms), "
          f"bare relay {1000.0 * cpu['bare relay, its phase'] / max(b_n, 1):.2f} ms")
    for errors, where in ((d_errors, "direct"), (b_errors, "bare relay"), (f_errors, "forwarder")):
        if errors:
            print(f"first errors {where}: {errors[:3]}")


if __name__ == "__main__":
    main()
