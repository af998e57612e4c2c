"""Messages the UI passes around. Dataclass messages keep their payload explicit and testable
(tests record them with `run_test(message_hook=...)`)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class FlowsUpdated(Message):
    """A batch of forwarder events (one message per ~150 ms at most, however busy the proxy is)."""

    started: tuple[int, ...]
    completed: tuple[int, ...]


@dataclass
class ReplayFinished(Message):
    original_id: int
    new_id: int


@dataclass
class ReplayFailed(Message):
    original_id: int
    reason: str


@dataclass
class ExportFinished(Message):
    flow_id: int
    path: str


@dataclass
class ExportFailed(Message):
    flow_id: int
    reason: str
