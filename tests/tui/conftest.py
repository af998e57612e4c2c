import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.worker import WorkerState

from inspector.proxy import Forwarder
from inspector.proxy.routes import Router
from inspector.session import LocalSession
from inspector.store import Store
from inspector.tui.app import InspectorApp

from .flows import NOW, populate


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Times render in the local zone; tests pin it so exact strings hold everywhere."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    # A relative path keeps the header text (it shows the store path) the same in every run.
    monkeypatch.chdir(tmp_path)
    with Store("flows.sqlite3") as opened:
        yield opened


@pytest.fixture
def ids(store: Store) -> dict[str, int]:
    return populate(store)


def make_app(store: Store, **kwargs) -> InspectorApp:
    """The app; a Forwarder or Router given as `forwarder` is its session in this process."""
    kwargs.setdefault("clock", lambda: NOW)
    forwarder = kwargs.pop("forwarder", None)
    key_hosts = kwargs.pop("key_hosts", ())
    if isinstance(forwarder, (Forwarder, Router)):
        forwarder = LocalSession(forwarder, store, key_hosts)
    return InspectorApp(store=store, forwarder=forwarder, **kwargs)


async def workers_done(app: InspectorApp) -> None:
    """Until no worker of the app runs. An exclusive worker (the list's window read) is cancelled when
    a newer one of its group starts: that one is waited for instead, where waiting on all of them at
    once raised WorkerCancelled."""
    while running := [worker for worker in app.workers if worker.state in (WorkerState.PENDING, WorkerState.RUNNING)]:
        await asyncio.gather(*(worker.wait() for worker in running), return_exceptions=True)


async def settle(app: InspectorApp, pilot) -> None:
    """Let thread workers finish (the list reads its window in one) and their messages land."""
    await workers_done(app)
    await pilot.pause()
