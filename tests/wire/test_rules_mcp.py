"""MCP rules (MCP-* in docs/rules.md) and the session rules across recorded flows."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from inspector.flow import Flow
from inspector.wire import check, profiles
from inspector.wire.dialect import Dialect
from inspector.wire.session import SessionEntry, check_session, declared_from_flows, endpoint, entries_from_flows

from .rule_cases import Case, assert_case, deleting, doing, same, setting
from .wire_payloads import mcp_call_request, mcp_call_result, mcp_list_result, sse

MCP = "mcp"
TOOL = ["result", "tools", 0]


def listing(name, trip, rule, pointer, severity, near, **kw):
    return Case(name, MCP, mcp_list_result, trip, rule, pointer, severity, near, "response", **kw)


def call_result(name, trip, rule, pointer, severity, near, **kw):
    return Case(name, MCP, mcp_call_result, trip, rule, pointer, severity, near, "response", **kw)


def call(name, trip, rule, pointer, severity, near, **kw):
    return Case(name, MCP, mcp_call_request, trip, rule, pointer, severity, near, "request", **kw)


def revision(version):
    """An MCP server answering a request sent over HTTP with `MCP-Protocol-Version: <version>`."""
    return profiles.with_headers(profiles.get(None, Dialect.MCP), [("MCP-Protocol-Version", version)])


def _modern_call():
    """A 2026-07-28 tools/call: the revision, the client and its capabilities in _meta."""
    request = mcp_call_request()
    request["params"]["_meta"] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                  "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                                  "io.modelcontextprotocol/clientCapabilities": {}}
    return request


CASES = [
    listing("tools not a list", setting(["result", "tools"], {}), "MCP-01", "/result/tools", "error", same),
    listing("2026-07-28 fields incomplete", setting(["result", "cacheScope"], "public"), "MCP-01", "/result/ttlMs",
            "error", doing(setting(["result", "cacheScope"], "public"), setting(["result", "ttlMs"], 0),
                           setting(["result", "resultType"], "complete")),
        also=(("MCP-01", "/result/resultType", "error"),)),
    listing("negative ttlMs", doing(setting(["result", "cacheScope"], "private"), setting(["result", "ttlMs"], -1),
                                    setting(["result", "resultType"], "complete")), "MCP-01", "/result/ttlMs",
            "error", same),
    listing("null inputSchema", setting(TOOL + ["inputSchema"], None), "MCP-02", "/result/tools/0/inputSchema",
            "error", setting(TOOL + ["inputSchema"], {"type": "object", "additionalProperties": False})),
    listing("inputSchema not an object schema", setting(TOOL + ["inputSchema", "type"], "array"), "MCP-02",
            "/result/tools/0/inputSchema/type", "error", same),
    listing("tool without name", deleting(TOOL + ["name"]), "MCP-02", "/result/tools/0/name", "error", same),
    listing("annotation hint not boolean", setting(TOOL + ["annotations", "readOnlyHint"], "yes"), "MCP-02",
            "/result/tools/0/annotations/readOnlyHint", "error", same),
    listing("name with a space", setting(TOOL + ["name"], "get weather"), "MCP-03", "/result/tools/0/name", "warning",
            setting(TOOL + ["name"], "get_weather")),
    listing("dotted name needs an alias downstream", setting(TOOL + ["name"], "admin.tools.list"), "MCP-03",
            "/result/tools/0/name", "info", same),
    listing("name listed twice by one server", setting(["result", "tools", 1, "name"], "get_weather"), "MCP-03",
            "/result/tools/1/name", "warning", same),
    listing("upper-case inputSchema type", setting(TOOL + ["inputSchema", "properties", "city", "type"], "STRING"),
            "XL-01", "/result/tools/0/inputSchema/properties/city/type", "error", same),
    call("tools/call without name", deleting(["params", "name"]), "MCP-04", "/params/name", "error", same),
    call("arguments as a JSON string", setting(["params", "arguments"], '{"city":"Oslo"}'), "MCP-04",
         "/params/arguments", "error", deleting(["params", "arguments"])),
    # The revision the HTTP header names decides what the body needs: 2026-07-28 declares itself in _meta
    # as well, and the two must agree; the same body under 2025-11-25 needs no _meta.
    Case("_meta not an object", MCP, _modern_call, setting(["params", "_meta"], "2026-07-28"), "MCP-04",
         "/params/_meta", "error", setting(["params", "_meta"], {})),
    Case("clientInfo not an object", MCP, _modern_call,
         setting(["params", "_meta", "io.modelcontextprotocol/clientInfo"], "c/1"), "MCP-04",
         "/params/_meta/io.modelcontextprotocol~1clientInfo", "error",
         setting(["params", "_meta", "io.modelcontextprotocol/clientInfo"], {"name": "c", "version": "1"})),
    Case("2026-07-28 tools/call without _meta", MCP, _modern_call, deleting(["params", "_meta"]), "MCP-04",
         "/params", "error", deleting(["params", "_meta"]), profile=revision("2026-07-28"),
         near_profile=revision("2025-11-25")),
    Case("_meta names another revision than the header", MCP, _modern_call,
         setting(["params", "_meta", "io.modelcontextprotocol/protocolVersion"], "2025-11-25"), "MCP-04",
         "/params/_meta/io.modelcontextprotocol~1protocolVersion", "error",
         setting(["params", "_meta", "io.modelcontextprotocol/protocolVersion"], "2025-11-25"),
         profile=revision("2026-07-28"), near_profile=revision("2025-11-25")),
    # Whether a text block mirrors structuredContent is unknown while content cannot be read: no MCP-06.
    call_result("content not a list", setting(["result", "content"], "4°C"), "MCP-05", "/result/content", "error",
                same),
    call_result("unknown content block", setting(["result", "content", 0], {"type": "json", "json": {}}), "MCP-05",
                "/result/content/0", "error",
                setting(["result", "content", 0], {"type": "resource_link", "uri": "file:///a", "name": "a"}),
        also=(("MCP-06", "/result/structuredContent", "warning"),)),
    call_result("image block without mimeType", setting(["result", "content", 0], {"type": "image", "data": "AA=="}),
                "MCP-05", "/result/content/0/mimeType", "error", same,
        also=(("MCP-06", "/result/structuredContent", "warning"),)),
    call_result("isError not boolean", setting(["result", "isError"], "false"), "MCP-05", "/result/isError", "error",
                same),
    call_result("structuredContent without a text block", setting(["result", "content"], []), "MCP-06",
                "/result/structuredContent", "warning",
                setting(["result", "content"], [{"type": "text", "text": '{"celsius":4}'}])),
    call_result("tool failure as a result", setting(["result", "isError"], True), "MCP-07", "/result/isError", "info",
                same),
    call_result("tool failure as a JSON-RPC error", lambda doc: {"jsonrpc": "2.0", "id": 2, "error": {
        "code": -32603, "message": "boom"}}, "MCP-07", "/error", "info",
        lambda doc: {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "Unknown tool: x"}}),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rule(case):
    assert_case(case)


def test_valid_baselines_have_no_violations():
    assert check.check_response(mcp_list_result(), MCP) == []
    assert check.check_request(mcp_call_request(), MCP) == []
    assert check.check_response(mcp_call_result(), MCP) == []
    assert check.check_request({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}, MCP) == []


def test_a_batch_is_checked_message_by_message():
    batch = [mcp_call_request(), {**mcp_call_request(), "params": {"arguments": {}}}]
    assert [(v.rule, v.pointer) for v in check.check_request(batch, MCP)] == [("MCP-04", "/1/params/name")]


def test_streamable_http_sse_response_is_checked_and_reassembled():
    result = mcp_call_result()
    result["result"]["isError"] = "no"
    body = sse([result])
    assert [(v.rule, v.pointer, v.where) for v in check.check_stream(body, MCP)] == [
        ("MCP-05", "/0/result/isError", "stream")]
    assert check.reassemble(body, MCP) == result


# --- session rules ------------------------------------------------------------------------------------


def _flow(flow_id, path, request, response, query="", revision=None):
    return Flow(id=flow_id, session_id=1, started_at=0.0, method="POST", path=path, query=query,
                upstream_url=f"http://127.0.0.1:9000{path}" + (f"?{query}" if query else ""),
                request_headers=[("mcp-protocol-version", revision)] if revision else [],
                request_body=orjson.dumps(request), response_body=orjson.dumps(response))


LIST_REQUEST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def _called(name: str) -> dict[str, Any]:
    call = mcp_call_request()
    call["params"]["name"] = name
    return call


def _listing(*tools: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": t, "inputSchema": {"type": "object"}}
                                                             for t in tools]}}


def _chat(flow_id: int, *tools: str) -> Flow:
    request = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "tools": [
        {"type": "function", "function": {"name": t, "parameters": {"type": "object", "properties": {}}}}
        for t in tools]}
    return Flow(id=flow_id, session_id=1, started_at=0.0, method="POST", path="/v1/chat/completions",
                request_body=orjson.dumps(request))


def _session(flows: list[Flow]) -> list[tuple[str, str, str, str, str]]:
    return [(v.rule, v.severity.value, v.where, v.pointer, v.message)
            for v in check_session(entries_from_flows(flows), declared_from_flows(flows))]


def test_same_tool_from_two_servers_in_use_at_once_names_both_origins():
    # One agent: it lists A, then B, then calls A again; the two servers' exchanges interleave.
    assert _session([_flow(3, "/a/mcp", LIST_REQUEST, mcp_list_result()),
                     _flow(5, "/b/mcp", LIST_REQUEST, mcp_list_result()),
                     _flow(6, "/a/mcp", mcp_call_request(), mcp_call_result())]) == [
        ("XL-03", "error", "5", f"/result/tools/{index}/name",
         f"tool {name!r} is served by two servers: http://127.0.0.1:9000/a/mcp (flow 3) and "
         "http://127.0.0.1:9000/b/mcp (flow 5), and they meet in one agent: both servers were in use at once "
         "(their exchanges interleave)") for index, name in enumerate(["get_weather", "ping"])]


def test_two_clients_one_after_the_other_each_with_its_own_server_never_met():
    """Issue 18: mcp 1.x then mcp 2.x in one recording session, each with its own server exposing the
    same names; no agent saw both lists, and no model request declared both."""
    assert _session([_flow(1, "/a/mcp", LIST_REQUEST, _listing("search", "fetch_a")),
                     _flow(2, "/a/mcp", _called("search"), mcp_call_result()),
                     _chat(3, "search", "fetch_a"),
                     _flow(4, "/b/mcp", LIST_REQUEST, _listing("search", "fetch_b")),
                     _flow(5, "/b/mcp", _called("search"), mcp_call_result()),
                     _chat(6, "search", "fetch_b")]) == []


def test_toolsets_of_two_servers_meeting_in_one_model_request_are_a_duplicate():
    assert _session([_flow(1, "/a/mcp", LIST_REQUEST, _listing("search", "fetch_a")),
                     _flow(4, "/b/mcp", LIST_REQUEST, _listing("search", "fetch_b")),
                     _chat(6, "search", "fetch_a", "fetch_b")]) == [
        ("XL-03", "error", "4", "/result/tools/0/name",
         "tool 'search' is served by two servers: http://127.0.0.1:9000/a/mcp (flow 1) and "
         "http://127.0.0.1:9000/b/mcp (flow 4), and they meet in one agent: model request flow 6 declares tools "
         "of both")]


def test_one_endpoint_registered_twice_says_keep_the_session_scoped_entry():
    """Seed 003: the bundled server registered plainly and again with a session token in the query."""
    entries = entries_from_flows([
        _flow(1, "/balda", LIST_REQUEST, mcp_list_result()),
        _flow(2, "/balda", LIST_REQUEST, mcp_list_result(), query="session=tok123"),
    ])
    violation = check_session(entries)[0]
    assert (violation.rule, violation.where, violation.pointer) == ("XL-03", "2", "/result/tools/0/name")
    assert violation.message == (
        "tool 'get_weather' comes twice from one endpoint 127.0.0.1:9000/balda registered as "
        "http://127.0.0.1:9000/balda (flow 1) and http://127.0.0.1:9000/balda?session=tok123 (flow 2): one server, "
        "two entries")
    assert violation.hint == ("Dedupe MCP servers by host+path and keep the session-scoped entry "
                              "(http://127.0.0.1:9000/balda?session=tok123).")
    assert "Keep the session-scoped entry" in violation.why


def test_relisting_from_the_same_url_is_not_a_duplicate():
    entries = entries_from_flows([_flow(1, "/a/mcp", LIST_REQUEST, mcp_list_result()),
                                  _flow(2, "/a/mcp", LIST_REQUEST, mcp_list_result())])
    assert check_session(entries) == []


def test_structured_content_is_checked_against_the_servers_output_schema():
    bad = mcp_call_result()
    bad["result"]["structuredContent"] = {"celsius": "four"}
    entries = entries_from_flows([_flow(1, "/a/mcp", LIST_REQUEST, mcp_list_result()),
                                  _flow(2, "/a/mcp", mcp_call_request(), bad),
                                  _flow(3, "/a/mcp", mcp_call_request(), mcp_call_result())])
    assert [(v.rule, v.severity.value, v.where, v.pointer, v.message) for v in check_session(entries)] == [
        ("MCP-06", "warning", "2", "/result/structuredContent/celsius",
         "structuredContent of 'get_weather' does not match its outputSchema: 'four' is not of type 'number'")]


def test_a_tool_with_an_output_schema_must_return_structured_content_unless_the_call_failed():
    """2026-07-28 and 2025-06-18: with an outputSchema the server MUST return structuredContent; a result
    with isError:true says what went wrong instead."""
    plain = mcp_call_result()
    del plain["result"]["structuredContent"]
    failed = {"jsonrpc": "2.0", "id": 2, "result": {"isError": True, "content": [
        {"type": "text", "text": "upstream weather service down"}]}}
    entries = entries_from_flows([_flow(1, "/a/mcp", LIST_REQUEST, mcp_list_result()),
                                  _flow(2, "/a/mcp", mcp_call_request(), plain),
                                  _flow(3, "/a/mcp", mcp_call_request(), failed)])
    assert [(v.rule, v.severity.value, v.where, v.pointer, v.message) for v in check_session(entries)] == [
        ("MCP-06", "warning", "2", "/result",
         "tools/call result of 'get_weather' has no structuredContent though the tool declares an outputSchema")]


def _structured(schema, content):
    """MCP-06 findings (pointer, message tail) for one structuredContent against one outputSchema."""
    listed = mcp_list_result()
    listed["result"]["tools"][0]["outputSchema"] = schema
    result = mcp_call_result()
    result["result"]["structuredContent"] = content
    entries = entries_from_flows([_flow(1, "/a/mcp", LIST_REQUEST, listed), _flow(2, "/a/mcp", mcp_call_request(),
                                                                                    result)])
    return [(v.rule, v.severity.value, v.pointer, v.message.split(": ", 1)[1]) for v in check_session(entries)]


# Keywords the hand-written validator ignored; each with a value that breaks it and one that keeps it.
KEYWORD_CASES = {
    "enum": ({"type": "object", "properties": {"unit": {"enum": ["C", "F"]}}}, {"unit": "K"}, {"unit": "F"},
             "/unit", "'K' is not one of ['C', 'F']"),
    "anyOf": ({"type": "object", "properties": {"t": {"anyOf": [{"type": "number"}, {"type": "null"}]}}},
              {"t": "warm"}, {"t": None}, "/t", "'warm' is not valid under any of the given schemas"),
    "additionalProperties": ({"type": "object", "properties": {"a": {}}, "additionalProperties": False},
                             {"a": 1, "b": 2}, {"a": 1}, "", "Additional properties are not allowed ('b' was "
                                                                 "unexpected)"),
    "$ref into $defs": ({"type": "object", "$defs": {"pos": {"type": "integer", "minimum": 0}},
                         "properties": {"n": {"$ref": "#/$defs/pos"}}}, {"n": -1}, {"n": 0}, "/n",
                        "-1 is less than the minimum of 0"),
}


@pytest.mark.parametrize("keyword", KEYWORD_CASES)
def test_output_schema_is_validated_as_json_schema_2020_12(keyword):
    schema, bad, good, where, message = KEYWORD_CASES[keyword]
    assert _structured(schema, bad) == [("MCP-06", "warning", f"/result/structuredContent{where}", message)]
    assert _structured(schema, good) == []


def test_output_schema_pointers_are_rfc_6901_escaped():
    schema = {"type": "object", "properties": {"a/b": {"type": "object", "properties": {"~x": {"type": "string"}}}}}
    assert [p for _, _, p, _ in _structured(schema, {"a/b": {"~x": 1}})] == ["/result/structuredContent/a~1b/~0x"]
    assert _structured(schema, {"a/b": {"~x": "1"}}) == []


def test_an_output_schema_that_cannot_be_applied_is_one_finding_not_an_exception():
    assert _structured({"type": 5}, {}) == [
        ("MCP-06", "warning", "/result/structuredContent", "the outputSchema is not valid JSON Schema: 5 is not "
                                                           "valid under any of the given schemas")]
    assert [m.split(" (")[0] for *_, m in _structured({"$ref": "#/$defs/missing"}, {})] == [
        "the outputSchema cannot be applied"]


def test_sse_responses_are_read_for_session_rules():
    flows = [_flow(1, "/a/mcp", LIST_REQUEST, mcp_list_result()), _flow(2, "/b/mcp", LIST_REQUEST, {}),
             _flow(3, "/a/mcp", LIST_REQUEST, mcp_list_result())]
    flows[1].response_body = sse([mcp_list_result()])
    assert len(check_session(entries_from_flows(flows))) == 2


def test_non_mcp_flows_are_skipped_and_endpoint_ignores_query():
    chat = Flow(id=9, session_id=1, started_at=0.0, method="POST", path="/v1/chat/completions",
                request_body=b'{"messages": []}')
    assert entries_from_flows([chat]) == []
    assert endpoint("http://h:1/p/?t=1") == endpoint("http://h:1/p") == "h:1/p"
    assert check_session([SessionEntry(1, "http://h/p", None, None)]) == []


def test_results_of_a_2026_07_28_request_need_that_revisions_fields():
    meta = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    listed = {**LIST_REQUEST, "params": meta}
    call = mcp_call_request()
    call["params"].update(meta)
    entries = entries_from_flows([_flow(1, "/a/mcp", listed, mcp_list_result()),
                                  _flow(2, "/a/mcp", call, mcp_call_result()),
                                  _flow(3, "/a/mcp", LIST_REQUEST, mcp_list_result())])
    assert [(v.rule, v.where, v.pointer) for v in check_session(entries)] == [
        ("MCP-01", "1", "/result/resultType"), ("MCP-01", "1", "/result/cacheScope"), ("MCP-01", "1", "/result/ttlMs"),
        ("MCP-05", "2", "/result/resultType")]


def test_the_revision_header_decides_which_result_fields_are_required():
    """Over HTTP the MCP-Protocol-Version header names the revision of a request whose body does not."""
    entries = entries_from_flows([_flow(1, "/a/mcp", LIST_REQUEST, mcp_list_result(), revision="2026-07-28"),
                                  _flow(2, "/a/mcp", mcp_call_request(), mcp_call_result(), revision="2026-07-28"),
                                  _flow(3, "/a/mcp", LIST_REQUEST, mcp_list_result(), revision="2025-11-25")])
    assert [(v.rule, v.where, v.pointer) for v in check_session(entries)] == [
        ("MCP-01", "1", "/result/resultType"), ("MCP-01", "1", "/result/cacheScope"), ("MCP-01", "1", "/result/ttlMs"),
        ("MCP-05", "2", "/result/resultType")]
