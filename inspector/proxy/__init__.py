"""The forwarder: relays an agent's requests to its upstream, live, and records every flow."""

from __future__ import annotations

from typing import Any

__all__ = ["FLOW_ID_HEADER", "REPLAY_HEADER", "FlowEvent", "Forwarder", "ForwarderError", "replay_marker"]


def __getattr__(name: str) -> Any:
    # Loaded at first use: importing proxy.options (the CLI, the UI's side of the child pipe) must
    # not bring in aiohttp and uvicorn.
    if name in __all__:
        from . import forwarder

        return getattr(forwarder, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
