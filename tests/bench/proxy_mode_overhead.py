"""What proxy mode adds, measured: a client with HTTPS_PROXY-style settings (CONNECT, then TLS to the
proxy's certificate) reaching a local TLS mock upstream as `https://api.openai.com`, through
`toolwire-inspect record` (intercepting and recording, TLS on both sides) and, in the same run,
through mitmdump in its regular mode (when `--mitmdump PATH` is given or `mitmdump` is on PATH).
Each server in its own process, loopback only, bounded loops.

    .venv/bin/python tests/bench/proxy_mode_overhead.py [--quick] [--mitmdump PATH]

Rows: p50/p99 of a small request on a kept-alive tunnel at concurrency 1, p50 of a request on a new
connection each time (CONNECT and both TLS handshakes included), and the time to first byte of a
stream. Direct is the client to the mock over TLS, no proxy."""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import trustme

sys.path.insert(0, str(Path(__file__).parent))
from proxy_overhead import CHAT, PYTHON, ROOT, SMALL, STREAM, pct, start, stop

HOST = "api.openai.com"
TLS_MOCK = r'''
import sys, threading
from inspector.mock import MockUpstream
chain = sys.argv[1]
with MockUpstream(tls=(chain, chain), realtime=False) as mock:
    print(f"tls mock on port {mock.port}", flush=True)
    threading.Event().wait()
'''


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_listening(port: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


async def timed(session: aiohttp.ClientSession, url: str, body: bytes, proxy: str | None,
                context: ssl.SSLContext) -> tuple[float, float]:
    """(ms to the whole response, ms to its first body byte)."""
    start = time.perf_counter()
    async with session.post(url, data=body, proxy=proxy, ssl=context,
                            headers={"content-type": "application/json", "authorization": "Bearer sk-bench"}) as r:
        first = None
        async for _ in r.content.iter_any():
            if first is None:
                first = time.perf_counter()
        assert r.status == 200, r.status
    end = time.perf_counter()
    return (end - start) * 1000.0, ((first or end) - start) * 1000.0


async def measure(url: str, proxy: str | None, context: ssl.SSLContext, n: int) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {"kept": [], "fresh": [], "ttfb": []}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1)) as session:
        for _ in range(20):
            await timed(session, url, SMALL, proxy, context)  # warm up
        for _ in range(n):
            found["kept"].append((await timed(session, url, SMALL, proxy, context))[0])
        for _ in range(max(10, n // 10)):
            found["ttfb"].append((await timed(session, url, STREAM, proxy, context))[1])
    for _ in range(max(10, n // 5)):
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session:
            found["fresh"].append((await timed(session, url, SMALL, proxy, context))[0])
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer requests (a smoke run)")
    parser.add_argument("--mitmdump", metavar="PATH", default=shutil.which("mitmdump"),
                        help="the mitmdump to compare with (default: the one on PATH)")
    args = parser.parse_args()
    n = 100 if args.quick else 500
    work = Path(tempfile.mkdtemp(prefix="toolwire-proxy-bench-"))
    ca = trustme.CA()
    ca.cert_pem.write_to_path(work / "upstream-ca.pem")
    ca.issue_cert("127.0.0.1", HOST).private_key_and_cert_chain_pem.write_to_path(work / "chain.pem")

    mock = subprocess.Popen([PYTHON, "-c", TLS_MOCK, str(work / "chain.pem")], cwd=ROOT, stdout=subprocess.PIPE,
                            text=True)
    assert mock.stdout is not None
    mock_port = int(mock.stdout.readline().split()[-1])
    mock_url = f"https://127.0.0.1:{mock_port}"
    os.environ["XDG_DATA_HOME"] = str(work / "data")  # the bench's own proxy CA, for `record` and here
    forwarder, forward_url = start([PYTHON, "-m", "inspector", "record", "--upstream", "http://127.0.0.1:9",
                                    "--port", "0", "--store", str(work / "flows.sqlite3"),
                                    "--intercept", f"{HOST}={mock_url}",
                                    "--upstream-ca", str(work / "upstream-ca.pem")], "forwarding")
    from inspector.proxy.ca import LocalCA

    direct_ctx = ssl.create_default_context(cafile=str(work / "upstream-ca.pem"))
    toolwire_ctx = ssl.create_default_context(cafile=str(LocalCA().cert_path))
    runs = {"direct": (mock_url + CHAT, None, direct_ctx), "toolwire": (f"https://{HOST}{CHAT}", forward_url,
                                                                       toolwire_ctx)}
    mitm = None
    if args.mitmdump:
        port = free_port()
        confdir = work / "mitmproxy"
        mitm = subprocess.Popen(
            [args.mitmdump, "--listen-host", "127.0.0.1", "--listen-port", str(port), "--quiet",
             "--set", f"confdir={confdir}", "--set", "connection_strategy=lazy",
             "--set", f"ssl_verify_upstream_trusted_ca={work / 'upstream-ca.pem'}",
             "--map-remote", f"|//{HOST}/|//127.0.0.1:{mock_port}/"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_listening(port, mitm)
        runs["mitmdump"] = (f"https://{HOST}{CHAT}", f"http://127.0.0.1:{port}",
                            ssl.create_default_context(cafile=str(confdir / "mitmproxy-ca-cert.pem")))
    results: dict[str, dict[str, list[float]]] = {name: {"kept": [], "fresh": [], "ttfb": []} for name in runs}
    try:
        for _ in range(3):  # interleaved rounds: other load weighs on every column alike
            for name, (url, proxy, context) in runs.items():
                for key, values in asyncio.run(measure(url, proxy, context, n // 3)).items():
                    results[name][key] += values
    finally:
        stop(forwarder)
        if mitm is not None:
            stop(mitm)
        stop(mock)

    names = list(runs)
    print(f"\nproxy mode: client -> CONNECT proxy -> TLS mock upstream; {n} small requests per column, "
          f"{os.cpu_count()} cores, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.mitmdump is None:
        print("(mitmdump not found: pass --mitmdump PATH to compare)")
    print("| measure (ms) | " + " | ".join(f"{name:>9}" for name in names) + " | "
          + " | ".join(f"{name + ' added':>15}" for name in names[1:]) + " |")
    print("|---" * (len(names) * 2) + "|")
    for label, key, q in (("kept-alive p50", "kept", 50), ("kept-alive p99", "kept", 99),
                          ("new connection p50", "fresh", 50), ("stream TTFB p50", "ttfb", 50)):
        values = [pct(results[name][key], q) for name in names]
        print(f"| {label} | " + " | ".join(f"{v:>9.2f}" for v in values) + " | "
              + " | ".join(f"{v - values[0]:>+15.2f}" for v in values[1:]) + " |")


if __name__ == "__main__":
    main()
