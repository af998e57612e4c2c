"""naming: the one rule table for tool names and the one way names and call ids are minted, which
the checker, the fixer and every bridge share."""

from __future__ import annotations

import hashlib

from inspector.wire.dialect import Dialect
from inspector.wire.fix import fix
from inspector.wire.naming import NAME_RULES, mint_id
from inspector.wire.profiles import PROFILES


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_a_minted_id_is_deterministic_salted_past_every_taken_id_and_within_the_limit():
    first = "call_" + _sha("basis")[:24]
    second = "call_" + _sha("basis#1")[:24]
    third = "call_" + _sha("basis#2")[:24]
    assert [mint_id("basis"), mint_id("basis", {first}), mint_id("basis", {first}, {second})] == [first, second, third]
    assert mint_id("basis", limit=12) == "call_" + _sha("basis")[:7]


def test_the_profiles_read_the_dialect_table():
    assert [PROFILES[p].names for p in ("openai", "anthropic", "gemini", "vertex", "mcp")] == [
        NAME_RULES[Dialect.OPENAI_CHAT], NAME_RULES[Dialect.ANTHROPIC], NAME_RULES[Dialect.GEMINI],
        NAME_RULES[Dialect.GEMINI], NAME_RULES[Dialect.MCP]]
    gemini = NAME_RULES[Dialect.GEMINI]
    assert [gemini.ok(n) for n in ("_a.b:c", "a" * 64, "a" * 65, "1a", "")] == [True, True, False, False, False]
    assert [NAME_RULES[Dialect.ANTHROPIC].ok(n) for n in ("a" * 128, "a" * 129, "1-a")] == [True, False, True]


def test_the_fixer_mints_a_repeated_call_id_as_the_bridges_do():
    call = {"id": "dup", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    payload = {"model": "m", "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}],
               "messages": [{"role": "user", "content": "hi"},
                            {"role": "assistant", "content": None, "tool_calls": [call, dict(call)]},
                            {"role": "tool", "tool_call_id": "dup", "content": "a"},
                            {"role": "tool", "tool_call_id": "dup", "content": "b"}]}
    result = fix(payload, "openai-chat")
    ids = [c["id"] for c in result.payload["messages"][1]["tool_calls"]]
    # the old fixer salted even its first try ("dup#0"); the shared minting hashes the id unsalted first
    assert ids == ["dup", mint_id("dup", {"dup"})] == ["dup", "call_" + _sha("dup")[:24]]


def test_every_dialect_home_provides_what_its_parts_are_typed_by():
    # The homes are found by scanning wire/dialects/ (one registration per dialect); this keeps a new
    # or renamed dialect folder honest at run time against the Protocols its parts are typed by.
    from inspector.wire.dialects import home
    from inspector.wire.rules.base import DialectRules
    from inspector.wire.translate.bridge import PAIRS, DialectBridge

    homes = {d: home(d) for d in Dialect}
    assert [d for d, h in homes.items() if h.dialect is not d] == []
    assert [d for d, h in homes.items() if not isinstance(h.rules, DialectRules)] == []
    parts = {d: (h.reassemble, h.is_final, h.is_response, h.fix) for d, h in homes.items()}
    assert [d for d, fns in parts.items() if not all(map(callable, fns))] == []
    assert [d for d, h in homes.items() if not (callable(h.summary.tools) and callable(h.summary.tool_calls))] == []
    bridged = {d for d, h in homes.items() if h.bridge is not None}
    assert bridged == {d for pair in PAIRS for d in pair}
    assert [d for d in bridged if not isinstance(homes[d].bridge, DialectBridge)] == []


def test_a_name_declared_twice_is_reported_the_same_way_in_every_dialect():
    # One check (rules.base.remember_name) replaces five copies; Gemini quoted a long name uncut and
    # MCP said "by this server": the checker's one wording is kept.
    from inspector.wire import check

    long = "g" * 70
    cut = repr("g" * 60 + "…")
    fn = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
    found = [
        check.check_request({"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [fn, fn]},
                            "openai-chat"),
        check.check_request({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}],
                             "tools": [{"name": "f", "input_schema": {"type": "object"}}] * 2}, "anthropic"),
        check.check_request({"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                             "tools": [{"functionDeclarations": [{"name": long}, {"name": long}]}]}, "gemini",
                            "vertex"),
        check.check_response({"jsonrpc": "2.0", "id": 1, "result": {
            "tools": [{"name": "f", "inputSchema": {"type": "object"}}] * 2}}, "mcp"),
    ]
    assert [[(v.rule, v.severity.value, v.pointer, v.message) for v in violations] for violations in found] == [
        [("XL-03", "error", "/tools/1/function/name", "tool name 'f' is declared twice (first at /tools/0/function/name)")],
        [("AN-03", "error", "/tools/1/name", "tool name 'f' is declared twice (first at /tools/0/name)")],
        [("GM-02", "error", "/tools/0/functionDeclarations/0/name", f"function name {cut} is 70 characters (max 64)"),
         ("GM-02", "error", "/tools/0/functionDeclarations/1/name", f"function name {cut} is 70 characters (max 64)"),
         ("GM-14", "error", "/tools/0/functionDeclarations/1/name",
          f"function {cut} is declared twice (first at /tools/0/functionDeclarations/0/name)")],
        [("MCP-03", "warning", "/result/tools/1/name", "tool name 'f' is listed twice (first at /result/tools/0/name)")],
    ]


def test_the_checker_the_fixer_and_the_bridges_read_one_anthropic_id_rule():
    from inspector.wire import check
    from inspector.wire.naming import id_ok

    def request(call_id):
        return {"model": "m", "max_tokens": 50, "tools": [{"name": "f", "input_schema": {"type": "object"}}],
                "messages": [{"role": "user", "content": "hi"},
                             {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": "f",
                                                                "input": {}}]},
                             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id,
                                                           "content": "ok"}]}]}

    for call_id, ok in [("a" * 64, True), ("toolu_01-x", True), ("a" * 65, False), ("call.1", False)]:
        found = [(v.rule, v.pointer) for v in check.check_request(request(call_id), "anthropic")]
        fixed = fix(request(call_id), "anthropic").payload["messages"][1]["content"][0]["id"]
        assert (id_ok(call_id, Dialect.ANTHROPIC), found, fixed == call_id) == \
            (ok, [] if ok else [("AN-05", "/messages/1/content/0/id")], ok), call_id


def test_mcp_names_are_called_portable_by_the_rules_the_bridges_alias_by():
    # MCP-03's info used its own pattern, which wanted a letter first: "1st_tool" crosses to OpenAI
    # and Anthropic unaliased (NameMap keeps it), so it is portable; "a.b" is not.
    from inspector.wire import check

    def listing(name):
        return {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": name, "inputSchema": {"type": "object"}}]}}

    assert [[(v.rule, v.severity.value, v.pointer) for v in check.check_response(listing(n), "mcp")]
            for n in ("1st_tool", "a.b", "a" * 65)] == [
        [], [("MCP-03", "info", "/result/tools/0/name")], [("MCP-03", "info", "/result/tools/0/name")]]
