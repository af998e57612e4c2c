"""The header says when the store cannot be written: under the TUI, stderr is not on screen."""

from __future__ import annotations

import asyncio
import sqlite3
import time

from inspector.proxy import Forwarder
from inspector.store import Store
from inspector.tui.bridge import EventBridge
from inspector.tui.widgets.connection import ConnectionBar

from .conftest import make_app, settle
from .test_live import Seen, completed, forwarding, post_chat, upstream  # noqa: F401 (fixtures)

LOCKED = "store: cannot write (database is locked); flows are kept in memory and retried"


async def header_lines(app, pilot, wanted, timeout: float = 10.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while True:
        lines = str(app.query_one(ConnectionBar).render()).split("\n")
        if wanted(lines) or time.monotonic() > deadline:
            return lines
        await pilot.pause(0.05)


async def test_the_header_shows_a_store_that_cannot_be_written_until_it_can(
        store: Store, forwarding: tuple[Forwarder, EventBridge]) -> None:
    forwarder, bridge = forwarding
    seen = Seen()
    app = make_app(store, forwarder=forwarder, bridge=bridge, clock=time.time)
    async with app.run_test(size=(120, 36), message_hook=seen) as pilot:
        locker = sqlite3.connect(store.path, isolation_level=None)
        locker.execute("BEGIN EXCLUSIVE")
        try:
            await asyncio.to_thread(post_chat, forwarder.base_url)
            lines = await header_lines(app, pilot, lambda lines: lines[-1].startswith("store: "))
            assert lines[-1] == LOCKED
        finally:
            locker.execute("ROLLBACK")
            locker.close()
        await seen.wait_for(completed(1))
        await settle(app, pilot)
        lines = await header_lines(app, pilot, lambda lines: not lines[-1].startswith("store: "))
        base = forwarder.base_url
        assert lines[-1] == f"OPENAI_BASE_URL={base}/v1  ANTHROPIC_BASE_URL={base}  c: all settings"
