"""The forwarder: relays an agent's requests to its upstream, live, and records every flow."""

from .forwarder import FLOW_ID_HEADER, REPLAY_HEADER, FlowEvent, Forwarder, ForwarderError, replay_marker

__all__ = ["FLOW_ID_HEADER", "REPLAY_HEADER", "FlowEvent", "Forwarder", "ForwarderError", "replay_marker"]
