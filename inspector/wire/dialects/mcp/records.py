"""MCP's rule records: each rule's catalogue entry (severity, why, fix, the provider's effect)
and its reference (title, evidence), in id order. `rules/catalogue.py` and `rules/reference.py`
collect them from the dialect's home; the rules that report them are in `rules.py`."""

from __future__ import annotations

from ...rules.catalogue import E, I, W, ACC, CLI, MAY, REJ, Rule

RULES = [
    Rule("MCP-01", E, "A tools/list result is {tools: Tool[], nextCursor?} (2026-07-28 adds resultType, "
         "cacheScope, ttlMs).",
         "Return tools as a list (and the 2026-07-28 fields together).", CLI),
    Rule("MCP-02", E, "A Tool needs name and inputSchema, a JSON object with type:\"object\" (never null); "
                      "outputSchema, "
         "when given, is an object schema, and annotation hints are booleans. Client SDKs validate the list and "
         "fail on '{{path}}'.",
         "Use {\"type\":\"object\",\"additionalProperties\":false} for a tool without arguments.", CLI),
    Rule("MCP-03", W, "Tool names SHOULD be 1–128 chars of A-Z a-z 0-9 _ - . and unique within a server; "
         "names with dots are invalid for OpenAI and Anthropic and need an alias there.",
         "Rename, or alias the tool when it crosses to another dialect.", MAY),
    Rule("MCP-04", E, "tools/call params are {name, arguments?: object, _meta…}.",
         "Send name and the arguments as a JSON object.", REJ),
    Rule("MCP-05", E, "A CallToolResult needs content: ContentBlock[] (text|image|audio|resource_link|resource); "
         "isError is a boolean.",
         "Return content as a list of typed blocks.", CLI),
    Rule("MCP-06", W, "With an outputSchema the server MUST return conforming structuredContent, and SHOULD "
         "also return the serialised JSON in a text block.",
         "Return structuredContent that matches outputSchema, plus its JSON in a text block.", CLI),
    Rule("MCP-07", I, "Unknown tools and malformed requests are JSON-RPC errors; tool failures are results with "
         "isError:true, which clients SHOULD feed back to the model.",
         "Report execution failures as isError results so the model can react.", ACC),
    Rule("MCP-08", E, "tools/call names a tool the same server's tools/list did not list; the server answers "
         "a JSON-RPC error (\"Unknown tool\") and the model's call fails.",
         "Call only listed tools; re-list after notifications/tools/list_changed; map aliased names back to "
         "the server's own.", REJ),
]

REFERENCE: dict[str, tuple[str, tuple[str, ...]]] = {
    'MCP-01': ("A tools/list result has the revision's fields", (
        '[S-MCP] `ListToolsResult` (both revisions)',
        '`tools.mdx` §Capabilities',
    )),
    'MCP-02': ('An MCP Tool has name and an object inputSchema', (
        '[S-MCP] `Tool`, `ToolAnnotations`',
        '`docs/specification/2026-07-28/server/tools.mdx` §Data Types',
    )),
    'MCP-03': ('MCP tool names follow the naming rules', (
        '`tools.mdx` §Tool Names (2025-11-25 L217ff',
        '2026-07-28 L309ff)',
    )),
    'MCP-04': ('tools/call params have name and object arguments', (
        '[S-MCP] `CallToolRequestParams`',
    )),
    'MCP-05': ('A CallToolResult has content blocks', (
        '[S-MCP] `CallToolResult` (both revisions)',
    )),
    'MCP-06': ('structuredContent conforms to the outputSchema', (
        '`tools.mdx` §Structured Content/§Output Schema',
    )),
    'MCP-07': ('Tool failures are results with isError, not protocol errors', (
        '`tools.mdx` §Error Handling',
        '[S-MCP] `CallToolResult.isError` description',
    )),
    'MCP-08': ("tools/call names a tool the server's tools/list listed", (
        '[S-MCP] `CallToolRequest`, `ListToolsResult` (a complete list has no nextCursor)',
    )),
}
