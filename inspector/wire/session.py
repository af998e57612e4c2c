"""Session rules: what only shows across the flows of one recording.

- The same MCP tool name served by two servers (XL-03 after aggregation): a client that merges the
  lists gets a duplicate and fails (Anthropic, Gemini and ADK's `duplicate tool` reject it). Judged
  where the two toolsets meet, and the finding says how they did: the two servers in use at once
  (their exchanges interleave in the recording), or one model request declaring tools of both. Two
  clients one after the other, each with its own server, never met: no agent saw both lists.
- The seed case: one endpoint (same host+path) registered twice with a different query, e.g. a plain
  entry and a session-scoped one carrying a context token. It is one server, so its tools collide with
  themselves. Dedupe by host+path and keep the session-scoped entry: it is a strict superset (without
  the token the server just skips the session context), while keeping the plain one loses session
  memory.
- MCP-06: a tools/call result's structuredContent checked against the outputSchema that the same
  server listed for that tool.
- MCP-08: a tools/call naming a tool that the same server's (complete) tools/list, earlier in the
  recording, did not list: the MCP side of "a response calls a tool the request never declared".
- MCP-01/MCP-05 by revision: when the request declares protocol 2026-07-28 (in `_meta`, or over HTTP
  in its MCP-Protocol-Version header), its tools/list result needs resultType, cacheScope and ttlMs,
  and its tools/call result needs resultType.

- XL-14 across flows: the opaque state a response attached to its tool calls (signed thinking,
  thoughtSignature, reasoning items) coming back dropped, reordered or rewritten beside the same
  calls in a later request of the recording (wire/opaque.py).

Violations carry `where` = the flow id (as a string) and a pointer into that flow's response, or,
for a finding on a request, "<flow id>:request" and a pointer into its request."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import orjson
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from ..flow import Flow
from . import jsonsafe, profiles
from .dialect import Dialect, from_path
from .dialects import DerivedList, home, homes
from .dialects.mcp.rules import MODERN, declared_revision
from .opaque import Carried, compare
from .pointer import join
from .rules.base import Report, as_dict, short
from .streams import check_and_reassemble
from .violations import Violation


@dataclass(frozen=True, slots=True)
class Declared:
    """The tool names a model request (a flow of a model dialect) declares."""

    flow_id: int
    names: frozenset[str]


@dataclass(frozen=True, slots=True)
class OpaqueUse:
    """The opaque state one model flow's response attached to its calls, and what its request's
    history carried back (Home.opaque), in the client's dialect."""

    flow_id: int
    dialect: Dialect
    produced: tuple[Carried, ...]
    returned: tuple[Carried, ...]


@dataclass(frozen=True, slots=True)
class SessionEntry:
    flow_id: int
    url: str  # the MCP endpoint as addressed: scheme://host/path?query (secrets already redacted)
    request: Any  # the parsed JSON-RPC request (or batch)
    response: Any  # the parsed JSON-RPC response (or batch), reassembled when it came as SSE
    revision: str = ""  # the MCP-Protocol-Version the request was sent with over HTTP
    # when the request started: recorders in other processes (mcp-stdio) number their flows apart
    started_at: float = 0.0


def endpoint(url: str) -> str:
    """host+path: the identity of an MCP server for tool names; the query does not make a new server."""
    parts = urlsplit(url)
    return f"{parts.netloc}{parts.path.rstrip('/')}"


def entries_from_flows(flows: Iterable[Flow]) -> list[SessionEntry]:
    """The MCP exchanges of recorded flows, parsed; other flows are skipped."""
    entries = []
    for flow in flows:
        try:
            request = orjson.loads(flow.request_body) if flow.request_body else None
        except orjson.JSONDecodeError:
            continue
        if from_path(flow.path) is not Dialect.MCP and not (isinstance(request, dict) and request.get("jsonrpc")):
            continue
        body = flow.response_body
        response: Any = None
        if body.lstrip()[:1] in (b"{", b"["):
            try:
                response = orjson.loads(body)
            except orjson.JSONDecodeError:
                response = None
        elif body:
            response = check_and_reassemble(body, Dialect.MCP, profiles.get(None, Dialect.MCP))[2]
        base = flow.upstream_url or flow.path
        url = base if not flow.query or "?" in base else f"{base}?{flow.query}"
        revision = profiles.with_headers(profiles.get(None, Dialect.MCP), flow.request_headers).revision
        entries.append(SessionEntry(flow.id, url, request, response, revision, flow.started_at))
    return entries




def declared_from_flows(flows: Iterable[Flow]) -> list[Declared]:
    """The tools each model request of the recording declares (where MCP toolsets may meet)."""
    found = []
    for flow in flows:
        dialect = from_path(flow.path)
        declared = None if dialect is None else home(dialect).declared
        if declared is None or not flow.request_body:
            continue
        try:
            request = orjson.loads(flow.request_body)
        except orjson.JSONDecodeError:
            continue
        if isinstance(request, dict):
            names = declared(request)
            if names:
                found.append(Declared(flow.id, frozenset(names)))
    return found


# The dialects of the flows the session rules read: MCP's exchanges, and the model requests whose
# calls carry opaque state across turns.
DIALECTS: Sequence[str] = DerivedList(lambda: [Dialect.MCP.value, *(each.dialect.value for each in homes()
                                                                   if each.opaque is not None)])

# What every dialect's opaque state looks like in bytes: a flow holding none of these has none to
# carry, and is not parsed for it.
_OPAQUE_MARKS = (b"signature", b"thought_signature", b"redacted_thinking", b"encrypted_content", b'"rs_')


def opaque_from_flows(flows: Iterable[Flow]) -> list[OpaqueUse]:
    """The opaque state of each model flow whose dialect has some (XL-14 across flows)."""
    found = []
    for flow in flows:
        dialect = from_path(flow.path)
        carried = None if dialect is None else home(dialect).opaque
        body = flow.response_body
        if carried is None or dialect is None or not any(
                mark in flow.request_body or mark in body for mark in _OPAQUE_MARKS):
            continue
        try:
            request = orjson.loads(flow.request_body) if flow.request_body else None
            response = orjson.loads(body) if body.lstrip()[:1] == b"{" else None
        except orjson.JSONDecodeError:
            continue
        if response is None and body:
            response = check_and_reassemble(body, dialect, profiles.get(None, dialect))[2]
        produced = tuple(carried(response, True)) if isinstance(response, dict) else ()
        returned = tuple(carried(request, False)) if isinstance(request, dict) else ()
        if produced or returned:
            found.append(OpaqueUse(flow.id, dialect, produced, returned))
    return found


def check_opaque(uses: Iterable[OpaqueUse]) -> list[Violation]:
    """XL-14 across flows: each request's history against what earlier responses of the recording,
    in its dialect, attached to the same calls."""
    made: dict[tuple[Dialect, str], Carried] = {}
    found = []
    for use in uses:
        earlier = [made[(use.dialect, each.call)] for each in use.returned if (use.dialect, each.call) in made]
        report = Report(f"{use.flow_id}:request")
        for pointer, message in compare(earlier, use.returned):
            report.add("XL-14", pointer, message + " (the flow that answered with it is earlier in this recording)")
        found.extend(report.violations)
        made.update(((use.dialect, each.call), each) for each in use.produced)
    return found


def _messages(document: Any) -> list[Any]:
    return document if isinstance(document, list) else [document]


def check_session(entries: Iterable[SessionEntry], declared: Iterable[Declared] = ()) -> list[Violation]:
    """`declared`: the model requests of the same recording (declared_from_flows), where the MCP
    toolsets of one agent meet."""
    entries = list(entries)
    found: list[Violation] = []
    # tool name -> {url: (flow id, pointer)} in order of first appearance
    origins: dict[str, dict[str, tuple[int, str]]] = {}
    schemas: dict[tuple[str, str], Any] = {}  # (endpoint, tool) -> outputSchema
    calls: list[tuple[SessionEntry, str, str, Any]] = []
    # endpoint -> (the tool names its latest tools/list gave so far, whether that list is complete)
    listed: dict[str, tuple[set[str], bool]] = {}
    for entry in entries:
        requests = {m.get("id"): m for m in _messages(entry.request) if isinstance(m, dict) and "method" in m
                    and isinstance(m.get("id"), (str, int))}
        for position, message in enumerate(_messages(entry.response)):
            if not isinstance(message, dict):
                continue
            base = join("", position) if isinstance(entry.response, list) else ""
            result = as_dict(message.get("result"))
            request_id = message.get("id")
            request = requests.get(request_id) if isinstance(request_id, (str, int)) else None
            if request is not None and (declared_revision(request.get("params")) or entry.revision) == MODERN \
                    and result:
                found.extend(_revision_fields(entry, request.get("method"), result, join(base, "result")))
            if request is not None and request.get("method") == "tools/call":
                found.extend(_unlisted_call(entry, listed.get(endpoint(entry.url)), request, message, base))
            if isinstance(result.get("tools"), list):
                _note_listed(listed, endpoint(entry.url), request, result)
                for index, tool in enumerate(result["tools"]):
                    name = as_dict(tool).get("name")
                    if not isinstance(name, str):
                        continue
                    origins.setdefault(name, {}).setdefault(entry.url, (entry.flow_id,
                                                                        join(base, "result", "tools", index, "name")))
                    if isinstance(tool.get("outputSchema"), dict):
                        schemas[(endpoint(entry.url), name)] = tool["outputSchema"]
            elif request is not None and request.get("method") == "tools/call" and result \
                    and ("structuredContent" in result or result.get("isError") is not True):
                tool = as_dict(request.get("params")).get("name")
                if isinstance(tool, str):
                    calls.append((entry, tool, join(base, "result", "structuredContent"),
                                  result.get("structuredContent", _ABSENT)))
    spans = _spans(entries)
    tools = _toolsets(origins)
    declarations = list(declared)
    for name, by_url in origins.items():
        if len(by_url) > 1:
            found.extend(_duplicate(name, by_url, spans, tools, declarations))
    for entry, tool, pointer, content in calls:
        schema = schemas.get((endpoint(entry.url), tool))
        if schema is None:
            continue
        report = Report(str(entry.flow_id))
        if content is _ABSENT:
            # A tool that declares an outputSchema MUST return structuredContent (2025-06-18 on; not
            # with isError, where the result says what went wrong).
            report.add("MCP-06", pointer.rsplit("/", 1)[0], f"tools/call result of {tool!r} has no structuredContent "
                                                            "though the tool declares an outputSchema")
            found.extend(report.violations)
            continue
        for where, problem in _conformance(content, schema):
            report.add("MCP-06", join(pointer, *where), f"structuredContent of {tool!r} does not match its "
                                                        f"outputSchema: {problem}")
        found.extend(report.violations)
    return found


_ABSENT = object()  # a tools/call result without structuredContent


def _note_listed(listed: dict[str, tuple[set[str], bool]], server: str, request: dict[str, Any] | None,
                 result: dict[str, Any]) -> None:
    """A tools/list page: a request without a cursor starts the list afresh (a re-list after
    list_changed), a later page adds to it; the list is complete once a page has no nextCursor."""
    names = {tool["name"] for tool in result["tools"] if isinstance(tool, dict) and isinstance(tool.get("name"), str)}
    continued = request is not None and as_dict(request.get("params")).get("cursor") is not None
    earlier = listed[server][0] if continued and server in listed else set()
    listed[server] = (earlier | names, not result.get("nextCursor"))


def _unlisted_call(entry: SessionEntry, known: tuple[set[str], bool] | None, request: dict[str, Any],
                   message: dict[str, Any], base: str) -> list[Violation]:
    """MCP-08: a tools/call naming a tool the same server's complete tools/list did not list. The
    pointer is the call's answer in this flow's response (its error, or its result)."""
    name = as_dict(request.get("params")).get("name")
    if known is None or not known[1] or not isinstance(name, str) or name in known[0]:
        return []
    report = Report(str(entry.flow_id))
    answer = "error" if "error" in message else "result" if "result" in message else None
    report.add("MCP-08", join(base, answer) if answer else base,
               f"tools/call names {short(name)}, which {endpoint(entry.url)}'s tools/list did not list")
    return report.violations


_REVISION_FIELDS = {"tools/list": ("MCP-01", ("resultType", "cacheScope", "ttlMs")),
                    "tools/call": ("MCP-05", ("resultType",))}


def _revision_fields(entry: SessionEntry, method: Any, result: dict[str, Any], base: str) -> list[Violation]:
    if not isinstance(method, str) or method not in _REVISION_FIELDS:
        return []
    rule, fields = _REVISION_FIELDS[method]
    report = Report(str(entry.flow_id))
    for key in fields:
        if key not in result:
            report.add(rule, join(base, key), f"the request declared protocol 2026-07-28, whose {method} result "
                                              f"requires {key}")
    return report.violations


_Moment = tuple[float, int]  # (started_at, flow id): the flow id orders flows started at the same time


def _spans(entries: list[SessionEntry]) -> dict[str, tuple[_Moment, _Moment]]:
    """url -> (its first exchange, its last): when a server was in use."""
    spans: dict[str, tuple[_Moment, _Moment]] = {}
    for entry in entries:
        moment = (entry.started_at, entry.flow_id)
        low, high = spans.get(entry.url, (moment, moment))
        spans[entry.url] = (min(low, moment), max(high, moment))
    return spans


def _toolsets(origins: dict[str, dict[str, tuple[int, str]]]) -> dict[str, set[str]]:
    """url -> the tool names it listed."""
    tools: dict[str, set[str]] = {}
    for name, by_url in origins.items():
        for url in by_url:
            tools.setdefault(url, set()).add(name)
    return tools


def _met(first: str, url: str, spans: dict[str, tuple[_Moment, _Moment]], tools: dict[str, set[str]],
         requests: list[Declared]) -> str | None:
    """How two servers' toolsets met in one agent, said for the finding; None when they never did."""
    (a_low, a_high), (b_low, b_high) = spans[first], spans[url]
    if a_low < b_high and b_low < a_high:
        return "both servers were in use at once (their exchanges interleave)"
    only_first, only_url = tools[first] - tools[url], tools[url] - tools[first]
    for request in requests:
        if request.names & only_first and request.names & only_url:
            return f"model request flow {request.flow_id} declares tools of both"
    return None


def _duplicate(name: str, by_url: dict[str, tuple[int, str]], spans: dict[str, tuple[_Moment, _Moment]],
               tools: dict[str, set[str]], requests: list[Declared]) -> list[Violation]:
    urls = list(by_url)
    first = urls[0]
    found = []
    for url in urls[1:]:
        flow_id, pointer = by_url[url]
        report = Report(str(flow_id))
        first_flow = by_url[first][0]
        met = None if endpoint(url) == endpoint(first) else _met(first, url, spans, tools, requests)
        if endpoint(url) != endpoint(first) and met is None:
            continue  # two clients, each with its own server: no agent saw both lists
        if endpoint(url) == endpoint(first):
            scoped = url if urlsplit(url).query else first
            report.add("XL-03", pointer,
                       f"tool {name!r} comes twice from one endpoint {endpoint(url)} registered as {first} (flow "
                       f"{first_flow}) and {url} (flow {flow_id}): one server, two entries",
                       why="The two entries address the same server (same host+path; the query only carries "
                           "context), so every tool is packed twice and the turn fails with a duplicate tool "
                           "error only when a tool is requested. Keep the session-scoped entry: it is a strict "
                           "superset; dropping it loses the session context (e.g. session memory).",
                       hint=f"Dedupe MCP servers by host+path and keep the session-scoped entry ({scoped}).")
        else:
            report.add("XL-03", pointer,
                       f"tool {name!r} is served by two servers: {first} (flow {first_flow}) and {url} "
                       f"(flow {flow_id}), and they meet in one agent: {met}",
                       hint="Prefix tool names with a server id (MCP-03 disambiguation), or keep one server.")
        found.extend(report.violations)
    return found


def _conformance(value: Any, schema: dict[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """(path into the value, why) for each way `value` breaks `schema`, validated as JSON Schema
    2020-12 (MCP's default dialect) unless the schema names another in `$schema`. A schema that
    cannot be applied is one finding at the root."""
    try:
        # The validator recurses per level: past what can be written back it would hit Python's limit.
        jsonsafe.check_writable(value)
        jsonsafe.check_writable(schema)
    except jsonsafe.Unfaithful as exc:
        return [((), f"it cannot be validated: {exc}")]
    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
        errors = list(cls(schema).iter_errors(value))
    except SchemaError as exc:
        return [((), f"the outputSchema is not valid JSON Schema: {_clip(exc.message)}")]
    except Exception as exc:
        # referencing/re, deep nesting from the recursion limit; the check stays total either way.
        return [((), f"the outputSchema cannot be applied ({type(exc).__name__}: {_clip(str(exc))})")]
    errors.sort(key=lambda error: (list(map(str, error.absolute_path)), error.message))
    return [(tuple(error.absolute_path), _clip(error.message)) for error in errors]


def _clip(text: str, limit: int = 160) -> str:
    """A validator's message for a one-line finding (it quotes the instance, which may be large)."""
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "…"
