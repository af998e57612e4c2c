"""A real forwarder in front of a real WebSocket upstream (tests/websocket/upstream.py), recording
to a real SQLite file."""

from __future__ import annotations

import pytest

from inspector.proxy import Forwarder
from inspector.proxy.options import Options
from inspector.store import Store

from tests.proxy.conftest import Events
from tests.websocket.upstream import SocketUpstream


@pytest.fixture
def upstream():
    with SocketUpstream() as server:
        yield server


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "flows.sqlite3") as flows:
        yield flows


@pytest.fixture
def events():
    return Events()


@pytest.fixture
def forwarder(upstream, store, events):
    with Forwarder(Options(upstream.base_url, port=0), store=store, on_event=events) as running:
        yield running
