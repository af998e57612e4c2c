"""The real entry point in a real pseudo-terminal: store, forwarder, bridge and app wired by
`inspector.cli.tui.run`, a request through it, and ctrl+q."""

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import httpx

from inspector.mock import MockUpstream
from inspector.store import Store

from .flows import clean_request


class Terminal:
    def __init__(self, args: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        self.master, slave = pty.openpty()
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "36", **(env or {})}
        self.process = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env,
                                        close_fds=True)
        os.close(slave)
        self.output = ""

    def expect(self, pattern: str, timeout: float = 20.0) -> re.Match[str]:
        """Read until `pattern` shows up in what the app drew (escape codes stripped)."""
        deadline = time.monotonic() + timeout
        while True:
            match = re.search(pattern, re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", self.output))
            if match:
                return match
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{pattern!r} never appeared; last output: {self.output[-2000:]!r}"
            ready, _, _ = select.select([self.master], [], [], remaining)
            if ready:
                self.output += os.read(self.master, 65536).decode("utf-8", "replace")

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def wait(self, timeout: float = 20.0) -> int:
        try:
            while self.process.poll() is None:
                ready, _, _ = select.select([self.master], [], [], 0.2)
                if ready:
                    try:
                        os.read(self.master, 65536)
                    except OSError:
                        break
            return self.process.wait(timeout)
        finally:
            os.close(self.master)


def test_launch_record_and_quit_in_a_terminal(tmp_path: Path) -> None:
    with MockUpstream() as upstream:
        terminal = Terminal([sys.executable, "-m", "inspector", "--upstream", upstream.base_url, "--port", "0",
                             "--store", "flows.sqlite3"], tmp_path)
        port = terminal.expect(r"OPENAI_BASE_URL=http://127\.0\.0\.1:(\d+)/v1").group(1)
        response = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=clean_request())
        assert response.status_code == 200
        terminal.expect(r"/v1/chat/completions\s+chat\s+gpt-4o-mini\s+200")
        terminal.send(b"\x11")  # ctrl+q
        assert terminal.wait() == 0
    with Store(tmp_path / "flows.sqlite3") as store:
        assert [(r.id, r.path, r.status) for r in store.rows()] == [(1, "/v1/chat/completions", 200)]
        assert len(store.sessions()) == 1
