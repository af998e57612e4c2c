"""The live export in a process of its own, the store as the hand-off (issues 20 and 21).

Building spans, encoding them and talking to the collector cost CPU in whatever process does them;
in the recorder's process that CPU is taken, under its GIL, from forwarding (measured: +5 to +16 ms
p99 at 8 concurrent clients). Here the recorder only writes each committed flow's id to a pipe (a
non-blocking write of a few bytes: a pipe full because the exporter is stuck counts the flow
dropped, it never waits), and the export process reads the flow back from the store, with the
analysis the writer kept, redacted as stored, and runs the same LiveExport as before. Its counts
come back on its stdout, a line of JSON each time they change, for `record`'s stderr and the TUI's
header."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from dataclasses import asdict, fields
from pathlib import Path
from typing import IO, Any

import orjson

from ..flow import Flow
from .live import QUEUE_FLOWS, Counts, Reporting

REPORT_EVERY = 0.25  # seconds between two looks at the counts in the export process


class ExportProcess(Reporting):
    """What LiveExport offers the recorder (flow_saved, counts, close, trouble), with the work in a
    process of its own, started now."""

    def __init__(self, endpoint: str | None, *, content: bool, openinference: bool, store: Path,
                 capacity: int = QUEUE_FLOWS) -> None:
        super().__init__(capacity)
        config = {"endpoint": endpoint, "content": content, "openinference": openinference,
                  "store": str(store), "capacity": capacity}
        self._process = subprocess.Popen([sys.executable, "-m", "inspector.otlp.process"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, close_fds=True)
        assert self._process.stdin is not None and self._process.stdout is not None
        self._ids: int | None = self._process.stdin.fileno()
        os.write(self._ids, orjson.dumps(config) + b"\n")  # the pipe is empty: this cannot block
        os.set_blocking(self._ids, False)
        self._lock = threading.Lock()  # the pipe's writes and its close, and the counts
        self._turned_away = 0  # flows the pipe (or a dead exporter) did not take
        self._theirs = Counts()
        self.counts = Counts()
        self._reader = threading.Thread(target=self._read, args=(self._process.stdout,),
                                        name="toolwire-otlp-counts", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self._process.pid

    def _count(self) -> None:
        """`counts` again, from the process's and the pipe's (under the lock): one assignment, so
        a reader on another thread sees the old counts or the new, never half of each."""
        self.counts = Counts(**{**asdict(self._theirs), "dropped": self._theirs.dropped + self._turned_away})

    def flow_saved(self, flow: Flow) -> None:
        """A flow the store committed: its id to the export process; never waits."""
        with self._lock:  # against close(): a descriptor closed may be another's number by now
            try:
                if self._ids is None:
                    raise BrokenPipeError
                os.write(self._ids, b"%d\n" % flow.id)
            except OSError:  # stuck (EAGAIN), gone (EPIPE) or closed: the flow is not exported
                self._turned_away += 1
                self._count()

    def _read(self, out: IO[bytes]) -> None:
        for line in out:
            try:
                reported = Counts(**{name: int(value) for name, value in orjson.loads(line).items()
                                     if name in _COUNTS})
            except (orjson.JSONDecodeError, TypeError, ValueError, AttributeError):
                continue  # not a line of ours: nothing else writes there, but a count is never guessed
            with self._lock:
                self._theirs = reported
                self._count()

    def close(self, timeout: float = 5.0) -> Counts:
        """Let the export process send what it holds, for at most `timeout` seconds, and end."""
        assert self._process.stdin is not None
        with self._lock:
            self._ids = None
        try:
            # Its end of input: it exports what is queued and reports last. Closed through the file
            # object that owns the descriptor, never os.close: that object would close the number
            # again when collected, by then perhaps another's (an event loop's) descriptor.
            self._process.stdin.close()
        except OSError:
            pass
        try:
            self._process.wait(timeout + 5.0)  # its own close gives up after `timeout`
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._reader.join()
        return self.counts


_COUNTS = {field.name for field in fields(Counts)}


def _serve(config: dict[str, Any], ids: IO[bytes], out: IO[bytes]) -> None:
    from ..store import Store, StoreError
    from .live import open_live

    try:
        store = Store(Path(config["store"]), read_only=True, live=True)
    except StoreError as exc:
        print(f"toolwire-inspect: otlp: cannot read the store: {exc}; nothing is exported", file=sys.stderr)
        for _ in ids:
            pass
        return
    live = open_live(config["endpoint"], content=config["content"], openinference=config["openinference"],
                     store=store, capacity=config["capacity"])
    stop = threading.Event()
    lock = threading.Lock()
    sent: dict[str, int] = {}

    def report() -> None:
        nonlocal sent
        with lock:
            now = asdict(live.counts)
            if now != sent:
                out.write(orjson.dumps(now) + b"\n")
                out.flush()
                sent = now

    def reporter() -> None:
        while not stop.wait(REPORT_EVERY):
            report()

    thread = threading.Thread(target=reporter, name="toolwire-otlp-report", daemon=True)
    thread.start()
    try:
        for line in ids:
            try:
                flow = store.get(int(line))
            except (ValueError, StoreError):
                continue
            if flow is not None:
                live.flow_saved(flow)
    finally:
        live.close()
        stop.set()
        thread.join()
        report()
        store.close()


def main() -> None:
    # Background work: where the cores are all busy, forwarding goes first (the queue absorbs the wait).
    try:
        os.nice(10)
    except OSError:
        pass
    ids, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # the counts' channel: nothing else may print there
    line = ids.readline()
    if not line:
        return
    try:
        _serve(orjson.loads(line), ids, out)
    except (BrokenPipeError, KeyboardInterrupt):
        pass  # the recorder is gone: nobody reads the counts


if __name__ == "__main__":
    main()
