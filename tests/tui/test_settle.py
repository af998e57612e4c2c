"""The tests' own wait for the app's workers (conftest.workers_done): an exclusive worker that a
newer one of its group cancelled made `app.workers.wait_for_complete()` raise WorkerCancelled, which
failed a test now and then (the list's window read is such a worker, restarted by each update)."""

from __future__ import annotations

import threading

from textual.worker import WorkerState

from .conftest import make_app, settle


async def test_settle_waits_for_the_worker_that_superseded_a_cancelled_one(store, ids) -> None:
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        gate = threading.Event()
        first = app.run_worker(lambda: gate.wait(10), thread=True, group="window", exclusive=True)
        second = app.run_worker(gate.set, thread=True, group="window", exclusive=True)
        await settle(app, pilot)
        assert (first.state, second.state) == (WorkerState.CANCELLED, WorkerState.SUCCESS)
