"""Model Context Protocol (tools/list, tools/call)."""
