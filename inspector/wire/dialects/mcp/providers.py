"""MCP has no provider: any server speaks it. Its record says how a client is pointed at the forwarder."""

from __future__ import annotations

from ...dialect import Dialect
from ...profiles import Profile
from .. import Provider, SDKSetting
from .shape import NAMES

MCP = Provider("mcp", "", (), None, settings=(
    SDKSetting("MCP", "/mcp", "MCP clients over streamable HTTP (the server's own path, /mcp here)"),))

PROFILES = (Profile("mcp", Dialect.MCP, "Model Context Protocol (2026-07-28, 2025-11-25)", NAMES),)
