"""The terminal is the victim (issue 16): the real TUI in a real tmux, recording a request whose
`model` carries an OSC 52 clipboard write, with no key pressed. tmux keeps what an application
writes to the clipboard as a paste buffer (`set-clipboard on`), and `pipe-pane` hands over every
byte the app wrote: neither may hold the sequence; the pane shows it as text."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from inspector.mock import MockUpstream

from .flows import clean_request

OSC52 = "\x1b]52;c;eA==\x07"  # short enough to fit the model column whole
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


class Tmux:
    def __init__(self, socket: Path) -> None:
        self.socket = str(socket)

    def __call__(self, *args: str) -> str:
        return subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True, check=True,
                              timeout=20).stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "app")

    def wait_for(self, pattern: str, timeout: float = 30.0) -> re.Match[str]:
        """Until the pane shows `pattern`: tmux has no event for "the app drew", so it is asked again."""
        deadline = time.monotonic() + timeout
        while True:
            match = re.search(pattern, self.screen())
            if match:
                return match
            assert time.monotonic() < deadline, f"{pattern!r} never showed; the pane: {self.screen()}"
            time.sleep(0.1)


def test_an_osc_52_model_neither_writes_the_clipboard_nor_reaches_the_terminal(tmp_path: Path) -> None:
    tmux = Tmux(tmp_path / "tmux.sock")
    written = tmp_path / "written.bin"
    command = (f"cd {shlex.quote(str(tmp_path))} && exec {shlex.quote(sys.executable)} -m inspector "
               "--upstream {upstream} --port 0 --store flows.sqlite3")
    with MockUpstream() as upstream:
        tmux("-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", "120", "-y", "36",
             command.format(upstream=shlex.quote(upstream.base_url)))
        try:
            tmux("set-option", "-s", "set-clipboard", "on")
            tmux("pipe-pane", "-O", "-t", "app", f"cat > {shlex.quote(str(written))}")
            port = tmux.wait_for(r"OPENAI_BASE_URL=http://127\.0\.0\.1:(\d+)/v1").group(1)
            request = clean_request(model=f"g{OSC52}")
            response = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=request)
            assert response.status_code == 200
            # No key pressed: the live list draws the new flow, its model shown as text.
            row = tmux.wait_for(r"/v1/chat/completions\s+(g\S*)").group(1)
            assert row == "g\\x1b]52;c;eA==…"
            assert tmux("list-buffers") == ""  # tmux saw no clipboard write
            tmux("pipe-pane", "-t", "app")  # closes the pipe: what the app wrote so far is in the file
            output = written.read_bytes()
            # The only operating system commands are Textual's own (22: the pointer's shape): no 52.
            assert (sorted(set(re.findall(rb"\x1b\](\d+);", output))), len(output) > 1000) == ([b"22"], True)
            tmux("send-keys", "-t", "app", "C-q")
        finally:
            subprocess.run(["tmux", "-S", tmux.socket, "kill-server"], capture_output=True, timeout=20)
