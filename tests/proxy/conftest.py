"""A real forwarder on an ephemeral loopback port, in front of a real mock upstream, recording to
a real SQLite file in tmp_path."""

from __future__ import annotations

import threading

import httpx
import pytest

from inspector.mock import MockUpstream
from inspector.proxy import FlowEvent, Forwarder
from inspector.store import Store
from inspector.proxy.options import Options


class Events:
    """Forwarder events as they come (from the forwarder and store threads)."""

    def __init__(self) -> None:
        self.all: list[FlowEvent] = []
        self._changed = threading.Condition()

    def __call__(self, event: FlowEvent) -> None:
        with self._changed:
            self.all.append(event)
            self._changed.notify_all()

    def started(self, count: int = 1, timeout: float = 10.0) -> list[FlowEvent]:
        """Wait for `count` flows to start; the started events in order."""
        return self._wait("started", count, timeout)

    def completed(self, count: int = 1, timeout: float = 10.0) -> list[FlowEvent]:
        """Wait for `count` completed flows; the completed events in order."""
        return self._wait("completed", count, timeout)

    def turns(self, count: int = 1, timeout: float = 10.0) -> list[FlowEvent]:
        """Wait for `count` socket turns saved as rows; their events in order."""
        return self._wait("turn", count, timeout)

    def _wait(self, kind: str, count: int, timeout: float) -> list[FlowEvent]:
        def done() -> list[FlowEvent]:
            return [e for e in self.all if e.kind == kind]

        with self._changed:
            assert self._changed.wait_for(lambda: len(done()) >= count, timeout), f"{len(done())} of {count} flows"
            return done()


class Rig:
    def __init__(self, mock: MockUpstream, store: Store, **forwarder_options) -> None:
        self.mock = mock
        self.store = store
        self.events = Events()
        self.forwarder = Forwarder(Options(mock.base_url, port=0, **forwarder_options), store=store, on_event=self.events)
        self.forwarder.start()
        self.client = httpx.Client(base_url=self.forwarder.base_url, timeout=10)

    @property
    def url(self) -> str:
        return self.forwarder.base_url

    def stop(self) -> None:
        self.client.close()
        self.forwarder.stop()


@pytest.fixture
def mock():
    with MockUpstream() as upstream:
        yield upstream


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "flows.sqlite3") as flows:
        yield flows


@pytest.fixture
def make_rig(mock, store):
    rigs: list[Rig] = []

    def make(**forwarder_options) -> Rig:
        rigs.append(Rig(mock, store, **forwarder_options))
        return rigs[-1]

    yield make
    for rig in rigs:
        rig.stop()


@pytest.fixture
def rig(make_rig) -> Rig:
    return make_rig()
