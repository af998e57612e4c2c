"""MCP (MCP-* in docs/rules.md): JSON-RPC `tools/list` results, `tools/call` requests and results. A document
is one JSON-RPC message or a batch (a list of them); other methods are not tool contracts and pass.
Rules spanning several flows (the same tool from two servers) live in `session.py`."""

from __future__ import annotations

from typing import Any

from ..anthropic.shape import NAMES as ANTHROPIC_NAMES
from ..openai_chat.shape import NAMES as OPENAI_NAMES
from ...pointer import join
from ...profiles import Profile
from ...violations import Severity
from ...rules.base import Report, readable, remember_name, short, show_json
from ...rules.schema import check_json_schema

# The name rules a tool name must meet to cross to OpenAI and Anthropic without an alias.
_PORTABLE = (OPENAI_NAMES, ANTHROPIC_NAMES)
_BLOCK_FIELDS: dict[str, tuple[str, ...]] = {
    "text": ("text",), "image": ("data", "mimeType"), "audio": ("data", "mimeType"),
    "resource_link": ("uri", "name"), "resource": ("resource",),
}
_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
_PROTOCOL_ERRORS = (-32700, -32600, -32601, -32602)


def _messages(payload: Any) -> list[tuple[Any, str]]:
    if isinstance(payload, list):
        return [(message, join("", index)) for index, message in enumerate(payload)]
    return [(payload, "")]


# The first revision that declares itself in every request's _meta (and in the MCP-Protocol-Version
# header over HTTP, which must agree); earlier ones negotiate it once, in initialize.
MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


# What 2026-07-28 reserves in a request's _meta, and the JSON type each takes.
_RESERVED_META = {VERSION_KEY: str, "io.modelcontextprotocol/clientInfo": dict,
                  "io.modelcontextprotocol/clientCapabilities": dict}


def declared_revision(params: Any) -> Any:
    """The revision a request's params declare in _meta (2026-07-28 and later); None without one."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(VERSION_KEY, meta.get("protocolVersion")) if isinstance(meta, dict) else None


def check_request(payload: Any, profile: Profile, report: Report) -> None:
    for message, base in _messages(payload):
        if isinstance(message, dict) and message.get("method") == "tools/call":
            check_call_params(report, message.get("params"), join(base, "params"))
            _check_revision(report, profile, message.get("params"), join(base, "params"))


def _check_revision(report: Report, profile: Profile, params: Any, base: str) -> None:
    """MCP-04 against the revision the header names: a 2026-07-28 request declares it in _meta too, and a
    body that names a revision names the header's (the server answers 400 HeaderMismatch otherwise)."""
    if not profile.revision or not isinstance(params, dict) \
            or not isinstance(params.get("_meta"), (dict, type(None))):
        return  # a _meta of another type is check_call_params' finding
    declared = declared_revision(params)
    if declared is None:
        if profile.revision == MODERN:
            report.add("MCP-04", base, f"MCP-Protocol-Version {profile.revision} needs the revision in "
                                       f"_meta[{VERSION_KEY!r}] as well: this tools/call has none")
    elif declared != profile.revision:
        key = VERSION_KEY if VERSION_KEY in params["_meta"] else "protocolVersion"
        report.add("MCP-04", join(base, "_meta", key), f"_meta names revision {short(declared)} but the "
                                                       f"MCP-Protocol-Version header {profile.revision!r}")


def check_call_params(report: Report, params: Any, base: str) -> None:
    if not isinstance(params, dict):
        report.add("MCP-04", base, "tools/call needs params {name, arguments?}")
        return
    if not isinstance(params.get("name"), str) or not params["name"]:
        report.add("MCP-04", join(base, "name"), "tools/call params have no name")
    if "arguments" in params and params["arguments"] is not None and not isinstance(params["arguments"], dict):
        value = params["arguments"]
        detail = "a JSON string; send the decoded object" if isinstance(value, str) else short(value)
        report.add("MCP-04", join(base, "arguments"), f"arguments is {detail}, not an object")
    meta = params.get("_meta")
    if meta is not None and not isinstance(meta, dict):
        report.add("MCP-04", join(base, "_meta"), f"_meta is {short(meta)}, not an object")
    elif isinstance(meta, dict):
        for key, kind in _RESERVED_META.items():
            if key in meta and not isinstance(meta[key], kind):
                report.add("MCP-04", join(base, "_meta", key), f"{key} is {short(meta[key])}, not "
                                                               f"{'a string' if kind is str else 'an object'}")


def check_response(payload: Any, profile: Profile, report: Report) -> None:
    for message, base in _messages(payload):
        if not isinstance(message, dict):
            continue
        result = message.get("result")
        error = message.get("error")
        if isinstance(result, dict) and "tools" in result:
            check_list_result(report, profile, result, join(base, "result"))
        elif isinstance(result, dict) and ("content" in result or "structuredContent" in result
                                           or "isError" in result):
            check_call_result(report, result, join(base, "result"))
        elif isinstance(error, dict) and error.get("code") not in _PROTOCOL_ERRORS:
            report.add("MCP-07", join(base, "error"), f"JSON-RPC error {short(error.get('code'))}: a tool execution "
                                                      "failure belongs in a result with isError:true")


def check_list_result(report: Report, profile: Profile, result: dict[str, Any], base: str) -> None:
    tools = result.get("tools")
    if not isinstance(tools, list):
        report.add("MCP-01", join(base, "tools"), f"tools is {short(tools)}, not an array")
        return
    revision_fields = [key for key in ("resultType", "cacheScope", "ttlMs") if key in result]
    if revision_fields:
        # Any of the 2026-07-28 fields marks that revision, which requires all three.
        for key in ("resultType", "cacheScope", "ttlMs"):
            if key not in result:
                report.add("MCP-01", join(base, key), f"2026-07-28 tools/list result has {revision_fields[0]} but "
                                                      f"no {key}")
        if "cacheScope" in result and result["cacheScope"] not in ("public", "private"):
            report.add("MCP-01", join(base, "cacheScope"), f"cacheScope {short(result['cacheScope'])} is not "
                                                           "public|private")
        ttl = result.get("ttlMs")
        if "ttlMs" in result and not (isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0):
            report.add("MCP-01", join(base, "ttlMs"), f"ttlMs {short(ttl)} is not an integer ≥ 0")
    names: dict[str, str] = {}
    for index, tool in enumerate(tools):
        check_tool(report, profile, tool, join(base, "tools", index), names)


def check_tool(report: Report, profile: Profile, tool: Any, base: str, names: dict[str, str]) -> None:
    if not isinstance(tool, dict):
        report.add("MCP-02", base, f"tool is {short(tool)}, not an object")
        return
    name = tool.get("name")
    label = f"tool {name!r}" if isinstance(name, str) else "tool"
    if not isinstance(name, str) or not name:
        report.add("MCP-02", join(base, "name"), "tool has no name")
    else:
        if not profile.name_ok(name):
            report.add("MCP-03", join(base, "name"), f"tool name {short(name)} should be 1–{profile.names.max} "
                                                     f"characters of {profile.names.text}")
        elif not all(rule.ok(name) for rule in _PORTABLE):
            report.add("MCP-03", join(base, "name"), f"tool name {short(name)} is valid MCP but invalid for OpenAI "
                                                     "and Anthropic: it needs an alias there", Severity.INFO)
        remember_name(report, "MCP-03", names, name, join(base, "name"), verb="listed")
    schema = tool.get("inputSchema")
    if schema is None:
        report.add("MCP-02", join(base, "inputSchema"), f"{label} has no inputSchema (it must not be null)")
    elif not isinstance(schema, dict):
        report.add("MCP-02", join(base, "inputSchema"), f"{label}: inputSchema is {short(schema)}, not an object")
    else:
        root = schema.get("type")
        if not (isinstance(root, str) and root.lower() == "object"):
            report.add("MCP-02", join(base, "inputSchema", "type") if "type" in schema else join(base, "inputSchema"),
                       f"{label}: inputSchema must have type 'object'")
        check_json_schema(report, schema, join(base, "inputSchema"), "XL-01", what=label)
    if "outputSchema" in tool and tool["outputSchema"] is not None:
        output = tool["outputSchema"]
        if not isinstance(output, dict) or output.get("type") != "object":
            report.add("MCP-02", join(base, "outputSchema"), f"{label}: outputSchema must be an object schema "
                                                             "with type 'object'")
        else:
            check_json_schema(report, output, join(base, "outputSchema"), "XL-01", what=label)
    annotations = tool.get("annotations")
    if annotations is not None and not isinstance(annotations, dict):
        report.add("MCP-02", join(base, "annotations"), f"{label}: annotations is {short(annotations)}, not an object")
    elif isinstance(annotations, dict):
        for hint in _HINTS:
            if hint in annotations and not isinstance(annotations[hint], bool):
                report.add("MCP-02", join(base, "annotations", hint), f"{label}: {hint} must be a boolean")


def check_call_result(report: Report, result: dict[str, Any], base: str) -> None:
    content = result.get("content")
    has_text = False
    if not isinstance(content, list):
        report.add("MCP-05", join(base, "content"), f"CallToolResult content is {short(content)}, not an array")
    else:
        for index, block in enumerate(content):
            where = join(base, "content", index)
            kind = block.get("type") if isinstance(block, dict) else None
            if not isinstance(kind, str) or kind not in _BLOCK_FIELDS:
                report.add("MCP-05", where, f"content block type {short(kind)} is not "
                                            "text|image|audio|resource_link|resource")
                continue
            for required in _BLOCK_FIELDS[kind]:
                if required not in block:
                    report.add("MCP-05", join(where, required), f"{kind} block needs {required}")
            has_text = has_text or kind == "text"
    is_error = result.get("isError")
    if "isError" in result and is_error is not None and not isinstance(is_error, bool):
        report.add("MCP-05", join(base, "isError"), f"isError is {short(is_error)}, not a boolean")
    if is_error is True:
        report.add("MCP-07", join(base, "isError"), "the tool failed (isError:true): feed the result back to the "
                                                    "model rather than raising")
    structured = result.get("structuredContent")
    if structured is not None and not isinstance(structured, dict):
        report.add("MCP-05", join(base, "structuredContent"), f"structuredContent is {short(structured)}, not an "
                                                              "object")
    # Whether a text block mirrors it is known only when every block could be read.
    elif structured is not None and not has_text and readable(content):
        report.add("MCP-06", join(base, "structuredContent"), "structuredContent without its serialised JSON in a "
                                                              "text block (older clients see nothing)")


def check_exchange(request: Any, response: Any, profile: Profile, report: Report, *, streamed: bool) -> None:
    """A result of the wrong JSON type, which only the method of the request it answers (paired by id)
    names: a tools/list result (MCP-01), a CallToolResult (MCP-05). Which tools a call may name spans
    two exchanges, so the session rules judge it (MCP-08 in `session.py`); a result's own rules ran
    on the response."""
    methods = {message["id"]: message.get("method") for message, _ in _messages(request)
               if isinstance(message, dict) and isinstance(message.get("id"), (str, int))}
    for message, base in _messages(response):
        if not isinstance(message, dict) or "result" not in message or isinstance(message["result"], dict):
            continue
        answer_id = message.get("id")
        method = methods.get(answer_id) if isinstance(answer_id, (str, int)) else None
        if method in _RESULTS:
            rule, shape = _RESULTS[method]
            report.add(rule, join(base, "result"), f"{method} result is {show_json(message['result'])}, not {shape}")


# The tool methods' results, by the rule that owns each and the shape it must have.
_RESULTS = {"tools/list": ("MCP-01", "an object {tools: [...]}"), "tools/call": ("MCP-05", "a CallToolResult object")}
