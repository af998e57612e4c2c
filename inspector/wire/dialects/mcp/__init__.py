"""Model Context Protocol (tools/list, tools/call)."""

# Its name in the flow list (Home.short), here so that the list can show it without loading the home.
SHORT = "mcp"
