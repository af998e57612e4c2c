"""Messages the UI passes around. Dataclass messages keep their payload explicit and testable
(tests record them with `run_test(message_hook=...)`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from ..store.deletion import Deletion


@dataclass
class FlowsUpdated(Message):
    """A batch of forwarder events (one message per ~150 ms at most, however busy the proxy is)."""

    started: tuple[int, ...]
    completed: tuple[int, ...]
    # The forwarder's process dropped ids because the UI read them too slowly: any flow may have
    # changed, so whatever shows one reads it again.
    reread: bool = False


@dataclass
class ForwarderStopped(Message):
    """The forwarder's child process ended without being asked to (killed, crashed)."""

    reason: str  # "exit status -9: <its last stderr line>"


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


@dataclass
class EditReady(Message):
    """A flow's request, ready to edit (read and decoded off the UI thread)."""

    flow_id: int
    text: str
    is_json: bool
    external: bool  # in $VISUAL / $EDITOR rather than the in-app editor


@dataclass
class Copied(Message):
    """Text to put on the clipboard, already written to `path` for terminals without OSC 52;
    None when it holds characters a paste would act on (`refused` names them)."""

    flow_id: int
    what: str
    text: str | None
    path: str
    refused: str = ""


@dataclass
class FlowsDeleted(Message):
    """What a delete did (store/deletion.Deletion), where the store's writer is."""

    deletion: Deletion


@dataclass
class DeleteFailed(Message):
    reason: str


@dataclass
class CopyFailed(Message):
    flow_id: int
    reason: str
