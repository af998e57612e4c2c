"""`toolwire-inspect open FILE` keeps its turns in a temporary store: it goes when the UI ends, also
when the terminal is closed under it (SIGHUP) or the process is asked to stop (SIGTERM). A real
process on a real terminal (a pty it has as its controlling terminal), a real signal."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest

HAR = Path(__file__).parent / "data" / "har" / "chrome.har"


class Screen:
    """What the process writes on its terminal, read as it comes (it would block on a full pty)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.seen = b""
        self._changed = threading.Condition()
        self._stop, self._stopping = os.pipe()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def close(self) -> None:
        """Close the terminal's side: the kernel hangs up the session when nothing holds it any more,
        so the reader (blocked on it) stops first."""
        if self.fd < 0:
            return
        os.write(self._stopping, b"x")
        self._reader.join()
        for fd in (self.fd, self._stop, self._stopping):
            os.close(fd)
        self.fd = -1

    def _read(self) -> None:
        while True:
            ready, _, _ = select.select([self.fd, self._stop], [], [])
            if self._stop in ready:
                return
            try:
                data = os.read(self.fd, 65536)
            except OSError:  # EIO: the other side is gone
                data = b""
            with self._changed:
                self.seen += data
                self._changed.notify_all()
            if not data:
                return

    def wait_for(self, text: bytes, timeout: float = 60.0) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: text in self.seen, timeout), self.seen[-2000:]


def launched(tmp_path: Path) -> tuple[subprocess.Popen, int, Path]:
    temp = tmp_path / "tmp"
    temp.mkdir()
    main_fd, terminal = os.openpty()
    fcntl.ioctl(main_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))

    def own_terminal() -> None:  # a session of its own whose controlling terminal is the pty, as in a shell
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    process = subprocess.Popen(
        [sys.executable, "-m", "inspector", "open", str(HAR)], stdin=terminal, stdout=terminal, stderr=terminal,
        preexec_fn=own_terminal, close_fds=True,
        env={**os.environ, "TMPDIR": str(temp), "TERM": "xterm-256color", "XDG_DATA_HOME": str(tmp_path / "data")})
    os.close(terminal)
    return process, main_fd, temp


@pytest.mark.parametrize("how", ["hangup", "SIGTERM"])
def test_open_removes_its_temporary_store_when_the_terminal_goes_or_it_is_stopped(tmp_path, how):
    process, terminal, temp = launched(tmp_path)
    screen = Screen(terminal)
    try:
        screen.wait_for(b"/v1/chat/completions")  # the list shows the recording: the store is there
        (folder,) = temp.iterdir()
        assert folder.name.startswith("toolwire-open-") and (folder / "opened.sqlite3").exists()
        if how == "hangup":
            screen.close()  # the terminal window closes: the kernel hangs up the session (SIGHUP)
        else:
            process.send_signal(signal.SIGTERM)
        status = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        screen.close()
    assert list(temp.iterdir()) == []
    assert status == 128 + (signal.SIGHUP if how == "hangup" else signal.SIGTERM)
