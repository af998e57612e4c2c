"""Forwarder events -> Textual messages, batched.

The forwarder calls the bridge from its own thread for every flow that starts or completes. That
call must cost next to nothing (it sits beside a live stream), so it only appends an id to a list;
the first event of a batch schedules one delivery on the UI loop `interval` seconds later, which
drains whatever accumulated into a single `FlowsUpdated`. A flood of requests becomes a few
messages per second, never a flooded message queue (toolong's batching idiom)."""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING

from .messages import FlowsUpdated

if TYPE_CHECKING:
    from textual.message_pump import MessagePump

    from ..proxy import FlowEvent


class EventBridge:
    def __init__(self, interval: float = 0.15) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        self._started: list[int] = []
        self._completed: list[int] = []
        self._scheduled = False
        self._target: MessagePump | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def attach(self, target: MessagePump) -> None:
        """Start delivering to `target` (call on the UI loop). Events that arrived earlier are
        delivered in the first batch."""
        self._target = target
        self._loop = asyncio.get_running_loop()
        with self._lock:
            pending = bool(self._started or self._completed)
            self._scheduled = pending
        if pending:
            self._loop.call_later(self.interval, self._deliver)

    def detach(self) -> None:
        with self._lock:
            self._target = None
            self._loop = None

    def __call__(self, event: FlowEvent) -> None:
        """The forwarder's `on_event` hook (any thread)."""
        self.push(event.kind, event.flow.id)

    def push(self, kind: str, flow_id: int) -> None:
        with self._lock:
            (self._started if kind == "started" else self._completed).append(flow_id)
            if self._scheduled or self._loop is None:
                return
            self._scheduled = True
            loop = self._loop
        try:
            loop.call_soon_threadsafe(loop.call_later, self.interval, self._deliver)
        except RuntimeError:
            # The UI loop closed while the forwarder was still finishing a request.
            pass

    def _deliver(self) -> None:
        with self._lock:
            started, self._started = self._started, []
            completed, self._completed = self._completed, []
            self._scheduled = False
            target = self._target
        if target is not None and (started or completed):
            target.post_message(FlowsUpdated(tuple(started), tuple(completed)))
