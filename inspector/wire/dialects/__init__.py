"""One package per wire dialect, holding everything that is that dialect's own: its rules, its
bridge, its stream reassembly, its fixers, its value ranges, its field spellings and schema
dialect where it has them.

Each package declares its parts once, in its `home` module (`HOME`); the checker, the bridges, the
stream reader and the fixer find a dialect's parts through `home(dialect)`. Adding a dialect means
adding its folder (and its member of `Dialect`). Package `__init__` modules stay empty, so reading
one part (say `gemini.fields`) does not load the rest."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..dialect import Dialect

if TYPE_CHECKING:
    from ..canned import Call
    from ..fix import Fixer
    from ..profiles import Profile
    from ..rules.base import DialectRules, Report
    from ..translate.bridge import DialectBridge


class DialectSummary(Protocol):
    """What the flow list shows of a dialect's exchange (dialects/<name>/summary.py)."""

    # Where a response's usage object is, the counts that make the input, those that make the
    # output; None where the dialect reports no usage.
    USAGE: tuple[str, tuple[str, ...], tuple[str, ...]] | None

    def tools(self, payload: dict[str, Any], path: str) -> int: ...

    def tool_calls(self, payload: dict[str, Any]) -> int: ...


@dataclass(frozen=True, slots=True)
class Home:
    dialect: Dialect
    rules: DialectRules
    # Stream events (`streams.parse_events`) -> the response a client would hold (None if none),
    # reporting what is wrong with the stream on the way.
    reassemble: Callable[[list[Any], Profile, Report], Any]
    # What a stream event says of the answer a client that read it holds: True when it is whole (the
    # last content event, or the stream's end marker), False when more content was due, None for an
    # event that carries no content (a ping, a usage chunk): the event before it decides.
    is_final: Callable[[Any], bool | None]
    # Whether a parsed document (a JSON object) is a response rather than a request.
    is_response: Callable[[dict[str, Any]], bool]
    # Repairs a parsed payload in place, noting each repair on the fixer (`wire.fix`).
    fix: Callable[[Fixer, dict[str, Any]], None]
    summary: DialectSummary
    # The request bridge; None for a dialect translated document by document (MCP).
    bridge: DialectBridge | None = None
    # What a fake model answers in this dialect (the mock upstream, `inspector.mock`): text and
    # calls as a response body, and as stream events; None where the mock has no model to play (MCP).
    mock_response: Callable[[str | None, list[Call]], dict[str, Any]] | None = None
    mock_events: Callable[..., list[Any]] | None = None
    # The body of the 400 the provider sends for a request it refuses: (message, JSON pointer of the
    # place) -> body; None where the mock plays no provider (MCP).
    mock_error: Callable[[str, str], dict[str, Any]] | None = None
    # Where a request goes: the endpoint under an API prefix ("" where the path names the model),
    # and the whole path for a prefix, model and stream flag; None where there is no HTTP bridge (MCP).
    endpoint: str = ""
    request_path: Callable[[str, str, bool], str] | None = None
    # The model a request's URL names, for a dialect whose body does not (Gemini).
    model_in_path: Callable[[str], str] | None = None
    # The request's field holding the conversation's turns (messages, input, contents); "" for MCP.
    history: str = ""


_HOMES: dict[Dialect, Home] = {}


def home(dialect: Dialect) -> Home:
    """The parts of `dialect`. The homes load on first use (they import the shared layers, which
    import this package)."""
    global _HOMES
    if not _HOMES:
        found: dict[Dialect, Home] = {}
        for module in pkgutil.iter_modules(__path__):
            if module.ispkg:
                declared: Home = importlib.import_module(f"{__name__}.{module.name}.home").HOME
                found[declared.dialect] = declared
        _HOMES = found  # whole or not at all: another thread may be reading
    return _HOMES[dialect]
