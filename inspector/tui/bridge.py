"""Forwarder events -> Textual messages, batched.

The forwarder calls the bridge for every flow that starts or completes: from its own thread when it
runs in this process, from the reader thread of its pipe when it runs in a child process (the TUI's
case, see inspector.child). That call must cost next to nothing (in-process it sits beside a live
stream), so it only appends an id to a list;
the first event of a batch schedules one delivery on the UI loop `interval` seconds later, which
drains whatever accumulated into a single `FlowsUpdated`. A flood of requests becomes a few
messages per second, never a flooded message queue (toolong's batching idiom)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..child import Changed, ChildFailed, Flows, Frame, Stopped
from .messages import FlowsUpdated, ForwarderFailed, ForwarderReady, ForwarderStopped

if TYPE_CHECKING:
    from textual.message import Message
    from textual.message_pump import MessagePump

    from ..child import ForwarderProcess
    from ..proxy import FlowEvent


class EventBridge:
    def __init__(self, interval: float = 0.15) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        self._started: list[int] = []
        self._completed: list[int] = []
        self._reread = False  # the child dropped ids (the UI was slow): read the whole store again
        self._notices: list[Message] = []  # other messages that arrived before attach()
        self._scheduled = False
        self._target: MessagePump | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def attach(self, target: MessagePump) -> None:
        """Start delivering to `target` (call on the UI loop). Events that arrived earlier are
        delivered in the first batch."""
        self._target = target
        self._loop = asyncio.get_running_loop()
        with self._lock:
            pending = bool(self._started or self._completed or self._reread)
            self._scheduled = pending
            notices, self._notices = self._notices, []
        if pending:
            self._loop.call_later(self.interval, self._deliver)
        for notice in notices:
            target.post_message(notice)

    def detach(self) -> None:
        with self._lock:
            self._target = None
            self._loop = None

    def __call__(self, event: FlowEvent) -> None:
        """The forwarder's `on_event` hook (any thread)."""
        self.push(event.kind, event.flow.id)

    def follow(self, child: ForwarderProcess) -> None:
        """Take the events of a forwarder running in a child process."""
        child.listen(self._frame)

    def launching(self, child: ForwarderProcess) -> None:
        """Wait for a child still starting in a thread of its own, so the app's first frame does
        not: a ForwarderReady (then its events, as `follow`) or a ForwarderFailed follows."""
        self.follow(child)  # before it is ready: its reader thread starts reading at once

        def wait() -> None:
            try:
                child.wait_ready()
            except ChildFailed as exc:
                self._notify(ForwarderFailed(str(exc), exc.browse))
                return
            self._notify(ForwarderReady(child, child.session_id))

        threading.Thread(target=wait, name="toolwire-child-ready", daemon=True).start()

    def _frame(self, frame: Frame) -> None:
        """One frame from the child (its reader thread): see inspector.child for the protocol."""
        if isinstance(frame, Flows):
            self.push_many(frame.started, frame.completed)
        elif isinstance(frame, Changed):
            self.push_many((), (), reread=True)
        elif isinstance(frame, Stopped):
            self._notify(ForwarderStopped(frame.reason))

    def _notify(self, message: Message) -> None:
        with self._lock:
            target = self._target
            if target is None:
                self._notices.append(message)
                return
        target.post_message(message)  # thread-safe in Textual

    def push(self, kind: str, flow_id: int) -> None:
        if kind == "started":
            self.push_many((flow_id,), ())
        else:
            self.push_many((), (flow_id,))

    def push_many(self, started: Iterable[int], completed: Iterable[int], *, reread: bool = False) -> None:
        with self._lock:
            self._started.extend(started)
            self._completed.extend(completed)
            self._reread |= reread
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
            reread, self._reread = self._reread, False
            self._scheduled = False
            target = self._target
        if target is not None and (started or completed or reread):
            target.post_message(FlowsUpdated(tuple(started), tuple(completed), reread))
