"""What live OpenTelemetry export costs forwarding: `toolwire-inspect record` without export, and with
`--otlp-endpoint` to a collector that answers, one that answers 500, one that takes 10 s to answer
each export (the exporter's timeout set to 30 s, so it waits them out) and one that is down. Each
forwarder in its own process, loopback only, bounded loops, the runs interleaved in rounds so that
the machine's load falls on all of them alike.

    .venv/bin/python tests/bench/otlp_overhead.py [--quick]

Prints p50/p99 latency of a small chat request at concurrency 1 and 8 for each, the p99 added in ms
(the target: within 2 ms) and as a ratio to the no-export run: pooled over every round, and the
median of each round's ratio to the same round's no-export run (a burst of load on the machine falls
on one round of all five forwarders alike, so it cancels in that round's ratio); the CPU time the
`record` process spent per request (its threads together, read from /proc: the figure a shared
machine's load moves least), also as a ratio to the no-export run's; how many spans each collector
received, and what each `record` said of its export when it stopped (spans exported, failed, flows
dropped). At least 4,000 requests per forwarder at c=1 and 8,000 at c=8 by default: a p99 of 40
and 80 samples' tail."""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

from proxy_overhead import CHAT, PYTHON, SMALL, load, pct, start  # noqa: E402

from tests.otlp.receiver import Receiver  # noqa: E402

ROUNDS = 10
SLOW = 10.0  # seconds the slow collector takes per export


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_record(argv: list[str]) -> tuple[subprocess.Popen, str, list[str]]:
    """`record` started; its base URL, and the lines it prints (kept, so its closing summary is read)."""
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1", "OTEL_EXPORTER_OTLP_TIMEOUT": "30"})
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("forwarding "):
            url = next(word for word in line.split() if word.startswith("http://"))
            said: list[str] = []
            threading.Thread(target=lambda: said.extend(proc.stderr), daemon=True).start()
            return proc, url, said
    raise RuntimeError(f"{argv} exited: {proc.wait()}")


def cpu_seconds(pid: int) -> float:
    """User and system time of the process `pid` so far, all its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer requests (a smoke run)")
    args = parser.parse_args()
    requests = 500 if args.quick else 4000
    mock, mock_url = start([PYTHON, "-m", "inspector", "mock", "--port", "0"], "mock upstream on")
    receivers = {"answering": Receiver(), "500": Receiver("error"), "slow": Receiver("slow", delay=SLOW)}
    for receiver in receivers.values():
        receiver.__enter__()
    endpoints = {"no export": None, **{f"collector {name}": r.url for name, r in receivers.items()},
                 "collector down": f"http://127.0.0.1:{closed_port()}"}
    folder = tempfile.mkdtemp(prefix="toolwire-otlp-bench-")
    forwarders = {}
    try:
        for n, (name, endpoint) in enumerate(endpoints.items()):
            export = ["--otlp-endpoint", endpoint, "--capture-content"] if endpoint else []
            forwarders[name] = start_record([PYTHON, "-m", "inspector", "record", "--upstream", mock_url, "--port", "0",
                                             "--store", f"{folder}/flows-{n}.sqlite3", *export])
        samples: dict[tuple[str, int], list[float]] = {(name, c): [] for name in endpoints for c in (1, 8)}
        # Each round's p99 over the same round's no-export p99.
        ratios: dict[tuple[str, int], list[float]] = {(name, c): [] for name in endpoints for c in (1, 8)}
        # CPU seconds each `record` spent from its first request to its last one's export (and a
        # 10 s export of the slow collector is waiting, not working).
        spent = dict.fromkeys(endpoints, 0.0)
        started = {name: cpu_seconds(proc.pid) for name, (proc, _, _) in forwarders.items()}
        for _ in range(ROUNDS):
            for conc in (1, 8):
                round_p99 = {}
                for name, (proc, url, _) in forwarders.items():
                    before = cpu_seconds(proc.pid)
                    found, _ = asyncio.run(load(url + CHAT, SMALL, requests=requests * (1 if conc == 1 else 2) // ROUNDS,
                                                concurrency=conc))
                    spent[name] += cpu_seconds(proc.pid) - before
                    samples[(name, conc)] += found
                    round_p99[name] = pct(found, 99)
                for name in endpoints:
                    ratios[(name, conc)].append(round_p99[name] / round_p99["no export"])
        # The whole run too: the export's batches are built while the other forwarders take their turn.
        total = {name: cpu_seconds(proc.pid) - started[name] for name, (proc, _, _) in forwarders.items()}
        for proc, _, _ in forwarders.values():
            proc.terminate()
            proc.wait(timeout=120)
    finally:
        for proc, _, _ in forwarders.values():
            if proc.poll() is None:
                proc.kill()
        mock.terminate()
        for receiver in receivers.values():
            receiver.__exit__()
    print(f"\nlive OTLP export vs none: {requests} small requests (c=1) / {requests * 2} (c=8) each, {ROUNDS} rounds, "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    print(f"| {'run':<20} | {'c':>2} | {'p50 ms':>8} | {'p99 ms':>8} | {'p99 added':>9} | {'p99 ratio':>9} | "
          f"{'per round':>9} |")
    print(f"|{'-' * 22}|{'-' * 4}|{'-' * 10}|{'-' * 10}|{'-' * 11}|{'-' * 11}|{'-' * 11}|")
    for conc in (1, 8):
        base = pct(samples[("no export", conc)], 99)
        for name in endpoints:
            values = samples[(name, conc)]
            p99 = pct(values, 99)
            print(f"| {name:<20} | {conc:>2} | {pct(values, 50):>8.2f} | {p99:>8.2f} | {p99 - base:>+9.2f} | "
                  f"{p99 / base:>9.2f} | {statistics.median(ratios[(name, conc)]):>9.2f} |")
    print("\nCPU ms of the record process per request, while its requests ran / over the whole run "
          "(× the no-export run's):")
    count = {name: len(samples[(name, 1)]) + len(samples[(name, 8)]) for name in endpoints}
    base_spent, base_total = (spent["no export"] / count["no export"], total["no export"] / count["no export"])
    for name in endpoints:
        per, whole = spent[name] / count[name], total[name] / count[name]
        print(f"  {name:<20} {per * 1000:.2f} / {whole * 1000:.2f}  (×{per / base_spent:.2f} / ×{whole / base_total:.2f})")
    print("\nspans received: " + ", ".join(f"{name} {len(r.spans())}" for name, r in receivers.items()))
    for name, (_, _, said) in forwarders.items():
        summary = next((line.strip() for line in reversed(said) if "otlp:" in line), None)
        if summary:
            print(f"{name}: {summary}")


if __name__ == "__main__":
    main()
