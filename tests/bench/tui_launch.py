"""The TUI's first list frame of a real launch, beside a bare Textual app launched the same way, in one
run: each a fresh `python` in a pseudo-terminal (120×36), timed from the fork to the first screen
output holding a row of the list (for the TUI: `toolwire-inspect --upstream URL --port 0` over a
store of `--rows` flows, which starts its forwarder's child process too). Then, for the TUI, the
time until the header shows the child's listen address.

    .venv/bin/python tests/bench/tui_launch.py [--rows 10000] [--runs 5]

Printed figures only (goal: the first list frame ≤ 2× the bare app); a shared machine moves them."""

from __future__ import annotations

import argparse
import os
import pty
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

BARE = """
from textual.app import App
from textual.widgets import Static

class Bare(App):
    def compose(self):
        yield Static("\\n".join(f"{n:>6}  POST /v1/chat/completions  200  1.0ms" for n in range(40)))

Bare().run()
"""
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def launch(args: list[str], cwd: Path, patterns: list[str], timeout: float = 60.0) -> list[float]:
    """Seconds from the fork until each of `patterns` first shows on the terminal; the process is
    then ended (ctrl+q, then a kill if it lingers)."""
    master, slave = pty.openpty()
    # With the bytecode cache an installed program has: the warm-up launch writes it, where an
    # environment that turns it off (PYTHONDONTWRITEBYTECODE) would have every launch compile the
    # project's modules again, which the bare app's installed packages never do.
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
           "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "36"}
    began = time.perf_counter()
    process = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, close_fds=True)
    os.close(slave)
    output, found = "", []
    try:
        for pattern in patterns:
            while not re.search(pattern, ESCAPES.sub("", output)):
                left = began + timeout - time.perf_counter()
                if left <= 0:
                    raise SystemExit(f"{pattern!r} never showed: {output[-2000:]!r}")
                if select.select([master], [], [], left)[0]:
                    output += os.read(master, 65536).decode("utf-8", "replace")
            found.append(time.perf_counter() - began)
        os.write(master, b"\x11")
        deadline = time.monotonic() + 10
        while process.poll() is None and time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    os.read(master, 65536)
                except OSError:
                    break
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        os.close(master)
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from tui_render import seed

    from inspector.mock import MockUpstream

    scratch = Path(tempfile.mkdtemp())
    store = scratch / "flows.sqlite3"
    seed(store, args.rows)
    bare, listed, listening = [], [], []
    with MockUpstream() as upstream:
        tui = [sys.executable, "-m", "inspector", "--upstream", upstream.base_url, "--port", "0", "--store", str(store)]
        launch([sys.executable, "-c", BARE], scratch, [r"POST /v1/chat/completions"])  # warms the file cache
        launch(tui, scratch, [r"/v1/chat/completions\s+chat"])
        for _ in range(args.runs):  # interleaved, so a change in the machine's load falls on both
            bare += launch([sys.executable, "-c", BARE], scratch, [r"POST /v1/chat/completions"])
            first, ready = launch(tui, scratch, [r"/v1/chat/completions\s+chat", r"OPENAI_BASE_URL=http://127"])
            listed.append(first)
            listening.append(ready)
    floor, shown, header = (statistics.median(v) * 1000 for v in (bare, listed, listening))
    print(f"load average {os.getloadavg()[0]:.1f}; {args.runs} launches each, medians")
    print(f"bare Textual app, first frame:                     {floor:6.0f} ms (the floor)")
    print(f"toolwire-inspect over {args.rows} flows, first list frame: {shown:6.0f} ms "
          f"({shown / floor:.2f}× the floor; goal ≤ 2×)")
    print(f"  its header shows the child's listen address at      {header:6.0f} ms")


if __name__ == "__main__":
    main()
