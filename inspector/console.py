"""Lines for an output stream that nobody may be reading (`record | (sleep 1000)`).

`put()` never blocks on a pipe or a terminal: lines go through a bounded queue drained by a thread
of their own, and when the queue is full they are dropped and counted. Whoever calls `put()` (the
store's writer thread, say) goes on while the reader of the stream sleeps. A regular file has no
reader to wait for and always takes its lines: there `put()` waits for room in the queue and
`close()` for the last line, so that no line is lost to a busy machine."""

from __future__ import annotations

import os
import queue
import stat
import threading
import time
from itertools import accumulate
from typing import TextIO

CAPACITY = 256  # lines waiting to be written before new ones are dropped
_BATCH = 64  # lines written in one write at most


class Console:
    def __init__(self, stream: TextIO, capacity: int = CAPACITY) -> None:
        self._stream = stream
        try:
            # Written with os.write: a write blocked on a full pipe then holds no lock of the
            # stream's buffer, which the interpreter takes to flush the stream at exit.
            self._fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self._fd = None  # a stream in memory (tests): it never blocks
        self._waits = self._fd is not None and stat.S_ISREG(os.fstat(self._fd).st_mode)
        self._lines: queue.Queue[str] = queue.Queue(capacity)
        self._changed = threading.Condition()
        self._put = self._dropped = self._handled = self._written = 0
        self.failure: str | None = None  # why the last line that could not be written was not
        threading.Thread(target=self._drain, name="toolwire-console", daemon=True).start()

    def put(self, line: str) -> None:
        if self._waits:
            with self._changed:
                self._put += 1
            self._lines.put(line)  # outside the lock: the drain thread takes it to count the line
            return
        with self._changed:
            self._put += 1
            try:
                self._lines.put_nowait(line)
            except queue.Full:
                self._dropped += 1

    def close(self, timeout: float = 2.0) -> int:
        """Wait up to `timeout` for the queued lines to be written (to a regular file, until they
        are); how many never were."""
        deadline = time.monotonic() + timeout
        with self._changed:
            self._changed.wait_for(lambda: self._handled + self._dropped >= self._put,
                                   None if self._waits else max(0.0, deadline - time.monotonic()))
            return self._put - self._written

    def _drain(self) -> None:
        while True:
            # What waits is written at once: one write and one wake-up for a burst of flows, not
            # one per line (a recorder under load prints thousands a second).
            lines = [self._lines.get()]
            while len(lines) < _BATCH:
                try:
                    lines.append(self._lines.get_nowait())
                except queue.Empty:
                    break
            written = self._write(lines)
            with self._changed:
                self._handled += len(lines)
                self._written += written
                self._changed.notify_all()

    def _write(self, lines: list[str]) -> int:
        """Write `lines`; how many reached the stream whole (the reader has gone, or the disk is
        full: the rest count as never written)."""
        encoded: list[bytes] = []
        sent = 0
        try:
            if self._fd is None:
                self._stream.write("".join(line + "\n" for line in lines))
                self._stream.flush()
                return len(lines)
            encoded = [(line + "\n").encode("utf-8", "replace") for line in lines]
            data = b"".join(encoded)
            while sent < len(data):
                sent += os.write(self._fd, data[sent:])
            return len(lines)
        except (OSError, ValueError) as exc:
            self.failure = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            # The lines whose last byte went out before the write failed.
            return sum(1 for end in accumulate(map(len, encoded)) if end <= sent)
