"""The passthrough rig of the end-to-end tests: a mock upstream, a store in tmp_path and a real
forwarder between them, with the finished flows' rows as they complete."""

from __future__ import annotations

import threading

import pytest

from inspector.mock import MockUpstream
from inspector.proxy import FlowEvent, Forwarder
from inspector.store import Store
from inspector.proxy.options import Options


class Completed:
    """Rows of completed flows, waited for by count (no sleeps)."""

    def __init__(self) -> None:
        self.rows = []
        self._changed = threading.Condition()

    def __call__(self, event: FlowEvent) -> None:
        if event.kind == "completed":
            with self._changed:
                self.rows.append(event.row)
                self._changed.notify_all()

    def wait(self, count: int) -> list:
        with self._changed:
            assert self._changed.wait_for(lambda: len(self.rows) >= count, 10)
            return list(self.rows)


@pytest.fixture
def passthrough(tmp_path):
    """(mock, store, forwarder, completed)"""
    mock = MockUpstream().start()
    store = Store(tmp_path / "flows.sqlite3")
    completed = Completed()
    forwarder = Forwarder(Options(mock.base_url, port=0), store=store, on_event=completed)
    forwarder.start()
    yield mock, store, forwarder, completed
    forwarder.stop()
    store.close()
    mock.stop()


def sent_bytes(canned) -> bytes:
    """The bytes a canned response puts on the wire (its body, or its chunks joined)."""
    return canned.body if canned.chunks is None else b"".join(data for _, data in canned.chunks)
