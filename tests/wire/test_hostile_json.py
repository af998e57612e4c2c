"""Hostile JSON through the pure core: nesting deeper than orjson can write (254) or read (1024),
integers beyond 64 bits (orjson rounds them), infinite numbers, lone surrogates, duplicate keys.
A rewrite (fix, translate) either carries the payload exactly or refuses it with the reason; the
checker reads anything and never raises."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import examples
from inspector.analysis import analyse
from inspector.flow import Flow, FlowState
from inspector.wire import check, jsonsafe
from inspector.wire.dialect import DIALECT_NAMES
from inspector.wire.fix import fix
from inspector.wire.jsonsafe import Unfaithful
from inspector.wire.rules import arguments
from inspector.wire.translate import PAIRS, TranslationError, get_bridge, translate_document

from .wire_payloads import (anthropic_request, anthropic_response, chat_request, chat_response, gemini_request,
                            gemini_response, mcp_call_result, mcp_list_result, responses_request, responses_response)

WIDE = 2**64  # the first integer orjson.loads rounds (to 1.8446744073709552e+19)


def nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


def with_extra(payload: dict, raw_value: str) -> bytes:
    """The payload's JSON with one more top-level member whose value is written as given."""
    return orjson.dumps(payload)[:-1] + b',"x_extra":' + raw_value.encode() + b"}"


# --- jsonsafe: one home for "does this survive a rewrite" ---------------------------------------

@pytest.mark.parametrize(("text", "wide"), [
    ("18446744073709551616", "18446744073709551616"),
    ("18446744073709551615", None),  # 2**64 - 1: orjson keeps it exact
    ("-9223372036854775808", None),
    ("-9223372036854775809", "-9223372036854775809"),
    ('{"id": "123456789012345678901234"}', None),  # digits in a string are text
    ('["\\"12345678901234567890123"]', None),  # ... after an escaped quote too
    ("[1.1234567890123456789012]", None),  # a fraction is a float by definition
    ("[12345678901234567890.5, 1e12345678901234567890]", None),
    ('{"a": [1, -123456789012345678901234567]}', "-123456789012345678901234567"),
    ("[" + "9" * 5000 + "]", "9" * 5000),  # beyond int()'s 4300-digit limit
])
def test_wide_integer_finds_exactly_the_integers_orjson_would_round(text, wide):
    assert jsonsafe.wide_integer(text) == wide
    assert jsonsafe.wide_integer(text.encode()) == wide


def test_text_writes_what_orjson_cannot_as_orjson_would_have():
    """Showing and comparing (the diff, the conversation) need text past orjson's 254 written levels."""
    deep = orjson.loads(nested(1000, '{"b":2,"a":1}'))
    assert jsonsafe.text(deep) == ("[" * 1000 + '{"b":2,"a":1}' + "]" * 1000).encode()
    assert jsonsafe.text(deep, sort_keys=True) == ("[" * 1000 + '{"a":1,"b":2}' + "]" * 1000).encode()
    assert jsonsafe.text({"n": WIDE, "m": [1.5, None, "é"]}) == b'{"n":18446744073709551616,"m":[1.5,null,"\xc3\xa9"]}'
    assert jsonsafe.text({"z": 1, "a": [True]}, sort_keys=True) == orjson.dumps({"a": [True], "z": 1})


def test_loads_refuses_rounding_and_dumps_names_what_it_cannot_write():
    assert jsonsafe.loads(b'{"n": 18446744073709551615}') == {"n": 2**64 - 1}
    with pytest.raises(Unfaithful) as wide:
        jsonsafe.loads(b'{"n": 18446744073709551616}')
    assert str(wide.value) == "the integer 18446744073709551616 does not fit in 64 bits and would be rounded"
    with pytest.raises(Unfaithful) as long:
        jsonsafe.loads("[" + "1" * 40 + "]")
    assert str(long.value) == "the integer 111111111111…111111 (40 digits) does not fit in 64 bits and would be rounded"
    assert jsonsafe.dumps(orjson.loads(nested(254))) == nested(254).encode()
    with pytest.raises(Unfaithful) as deep:
        jsonsafe.dumps(orjson.loads(nested(255)))
    assert str(deep.value) == "nested more than 254 levels deep, deeper than can be written back"
    with pytest.raises(Unfaithful) as big:
        jsonsafe.dumps({"n": WIDE})
    assert str(big.value) == "an integer does not fit in 64 bits"


# --- fix ----------------------------------------------------------------------------------------

def _fixable_chat() -> dict:
    payload = chat_request()
    payload["tools"][0]["function"]["name"] = "get.weather"  # OC-02: gets an alias
    return payload


def test_fix_refuses_a_payload_it_cannot_write_back():
    payload = _fixable_chat()
    payload["x_extra"] = orjson.loads(nested(300))
    with pytest.raises(Unfaithful) as refused:
        fix(payload, "openai-chat")
    assert str(refused.value) == "nested more than 254 levels deep, deeper than can be written back"


@pytest.mark.parametrize(("text", "reason"), [
    # double-encoded: the fixer would unwrap it and write the rounded number
    (orjson.dumps('{"n": 18446744073709551616}').decode(),
     "arguments: the integer 18446744073709551616 does not fit in 64 bits and would be rounded"),
    # deeper than orjson reads: valid JSON the fixer must not wrap as if it were text
    (nested(5000), "arguments: nested more than 1024 levels deep, deeper than can be read"),
], ids=["double-encoded-wide-integer", "nested-5000"])
def test_fix_refuses_arguments_it_would_change_unfaithfully(text, reason):
    payload = chat_request()
    payload["messages"][2]["tool_calls"][0]["function"]["arguments"] = text
    with pytest.raises(Unfaithful) as refused:
        fix(payload, "openai-chat")
    assert str(refused.value) == reason


def test_fix_keeps_exact_arguments_that_it_does_not_need_to_touch():
    payload = _fixable_chat()
    payload["messages"][2]["tool_calls"][0]["function"]["arguments"] = '{"n": 18446744073709551616}'
    result = fix(payload, "openai-chat")
    assert result.payload["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"n": 18446744073709551616}'
    assert [r.rule for r in result.repairs] == ["OC-02"]


# --- the checker reads what orjson reads, and never raises ----------------------------------------

def test_arguments_nested_past_the_read_limit_are_reported_not_raised():
    payload = chat_request()
    payload["messages"][2]["tool_calls"][0]["function"]["arguments"] = nested(5000)
    decoded = arguments.decode(nested(5000))
    assert (decoded.kind, decoded.unfaithful) == ("invalid", "nested more than 1024 levels deep, deeper than can be read")
    assert [(v.rule, v.pointer) for v in check.check_request(payload, "openai-chat")] == [
        ("OC-15", "/messages/2/tool_calls/0/function/arguments")]


def test_arguments_that_cannot_be_parsed_by_either_parser_are_invalid_not_a_crash():
    # orjson stops at the trailing x; the standard library's parser would recurse 990 deep to see it
    assert arguments.decode(nested(990) + "x").kind == "invalid"


# --- translate ----------------------------------------------------------------------------------

SOURCES = {"openai-chat": chat_request, "openai-responses": responses_request, "anthropic": anthropic_request,
           "gemini": gemini_request}


@pytest.mark.parametrize(("source", "target"), [(s.value, t.value) for s, t in PAIRS])
def test_every_bridge_refuses_a_request_it_cannot_write_back(source, target):
    payload = SOURCES[source]()
    payload["x_extra"] = orjson.loads(nested(300))
    with pytest.raises(TranslationError) as refused:
        translate_document(payload, source, target)
    assert str(refused.value) == ("/: cannot translate faithfully: nested more than 254 levels deep, deeper than "
                                  "can be written back")


@pytest.mark.parametrize("target", ["anthropic", "gemini", "openai-responses"])
def test_chat_arguments_with_a_wide_integer_are_refused_not_rounded(target):
    payload = chat_request()
    payload["messages"][2]["tool_calls"][0]["function"]["arguments"] = '{"n": 18446744073709551616}'
    with pytest.raises(TranslationError) as refused:
        translate_document(payload, "openai-chat", target)
    assert str(refused.value) == ("/: cannot translate faithfully: arguments: the integer 18446744073709551616 does "
                                  "not fit in 64 bits and would be rounded")


def test_a_streamed_event_with_a_wide_integer_becomes_an_error_event_not_a_rounded_call():
    # A stream in flight is never cut (the bridge's policy): the event is answered with an error event.
    bridge = get_bridge("openai-chat", "gemini")
    sent = bridge.request({"model": "gemini-x", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
                          "/v1/chat/completions")
    relay = bridge.stream(sent.state)
    out = relay.feed(b'data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f",'
                     b'"args":{"n":18446744073709551616}}}]},"finishReason":"STOP"}]}\r\n\r\n') + relay.close()
    events = [orjson.loads(line[6:]) for line in out.split(b"\n") if line.startswith(b"data: {")]
    assert [e.get("error") for e in events] == [None, {
        "message": "upstream sent a chunk that cannot be translated faithfully: the integer 18446744073709551616 "
                   "does not fit in 64 bits and would be rounded", "type": "server_error", "param": None, "code": None}]


SCHEMA_HOLDERS = {  # a body per dialect with one tool whose schema is written exactly as given
    "openai-chat": '{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function",'
                   '"function":{"name":"f","parameters":%s}}]}',
    "openai-responses": '{"model":"m","input":"x","tools":[{"type":"function","name":"f","parameters":%s}]}',
    "anthropic": '{"model":"m","max_tokens":5,"system":"s","messages":[{"role":"user","content":"x"}],'
                 '"tools":[{"name":"f","input_schema":%s}]}',
    "gemini": '{"contents":[{"role":"user","parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":'
              '[{"name":"f","parameters":%s}]}]}',
    "mcp": '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"f","inputSchema":%s}]}}',
}
DEEP_SCHEMAS = {  # ~1000 levels of JSON: every walk that recurses per level would exhaust the stack
    "properties": '{"type":"object","properties":{"a":' * 499 + '{"type":"string"}' + "}}" * 499,
    "items": '{"type":"array","items":' * 999 + '{"type":"string"}' + "}" * 999,
    "anyOf": '{"anyOf":[' * 499 + '{"type":"string"}' + "]}" * 499,
}
TOO_DEEP = "nested more than 254 levels deep, deeper than can be written back"


@pytest.mark.parametrize("shape", sorted(DEEP_SCHEMAS))
@pytest.mark.parametrize("dialect", sorted(SCHEMA_HOLDERS))
def test_a_tool_schema_nested_a_thousand_levels_is_checked_and_refused_not_a_recursion_error(dialect, shape):
    body = (SCHEMA_HOLDERS[dialect] % DEEP_SCHEMAS[shape]).encode()
    assert check.check_bytes(body).dialect.value == dialect  # detected by shape, without repr() of the tools
    assert check.check_bytes(body, dialect).error is None
    payload = orjson.loads(body)
    with pytest.raises(Unfaithful) as refused:
        fix(payload, dialect)
    assert str(refused.value) == TOO_DEEP
    for source, target in PAIRS:
        if source.value == dialect:
            with pytest.raises(TranslationError) as untranslated:
                translate_document(payload, source, target)
            assert str(untranslated.value) == f"/: cannot translate faithfully: {TOO_DEEP}"
    if dialect == "mcp":
        for target in ("openai-chat", "anthropic", "gemini"):
            with pytest.raises(Unfaithful) as unwritable:
                translate_document(payload, "mcp", target)
            assert str(unwritable.value) == TOO_DEEP


@pytest.mark.parametrize("dialect", ["openai-chat", "anthropic", "gemini", "openai-responses"])
def test_a_deep_list_read_as_a_stream_is_an_error_not_a_raise(dialect):
    assert check.check_bytes(nested(300).encode(), dialect).error == f"cannot check as a stream: {TOO_DEEP}"


# --- the property: nothing hostile makes the core raise anything but its documented refusals -----

BASES = {"openai-chat": chat_request, "openai-responses": responses_request, "anthropic": anthropic_request,
         "gemini": gemini_request, "mcp": mcp_list_result}
HOSTILE_VALUES = st.one_of(
    st.integers(1, 1024).map(nested),
    st.integers(1, 1024).map(lambda depth: '{"a":' * depth + "1" + "}" * depth),
    st.sampled_from([str(WIDE), str(-(2**63) - 1), "1" * 60, str(2**64 - 1), "1e400", "-1e400", "NaN",
                     "Infinity", "-Infinity", '"\\ud800"', '"\\udfff x"', '"a\\u0000b"',
                     '{"k": 1, "k": 2}', "1.0000000000000000000001", "12345678901234567890.0"]),
)
HOSTILE = settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))


SENTINEL = "@@hostile@@"
PATHS = {  # request paths that name each dialect, and one that names none (told by shape)
    "openai-chat": "/v1/chat/completions", "openai-responses": "/v1/responses", "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/gemini-x:generateContent", "mcp": "/mcp"}


def _places(document: Any, path: tuple = ()) -> list[tuple]:
    found = [path]
    if isinstance(document, dict):
        for key, value in document.items():
            found += _places(value, path + (key,))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found += _places(value, path + (index,))
    return found


def _hostile_body(document: Any, place: tuple, raw: str, as_text: bool) -> bytes:
    """The document's JSON with the value at `place` replaced by `raw`, written exactly as given, or
    (as_text) by a JSON string holding it, as tool-call arguments do."""
    parent = document
    for token in place[:-1]:
        parent = parent[token]
    parent[place[-1]] = SENTINEL
    value = orjson.dumps(raw).decode() if as_text else raw
    return orjson.dumps(document).replace(orjson.dumps(SENTINEL), value.encode())


DOCUMENTS = [(builder, dialect) for dialect, builder in BASES.items()] + [
    (chat_response, "openai-chat"), (responses_response, "openai-responses"), (anthropic_response, "anthropic"),
    (gemini_response, "gemini"), (mcp_call_result, "mcp")]


@HOSTILE
@given(st.sampled_from(range(len(DOCUMENTS))), st.data(), HOSTILE_VALUES, st.booleans())
def test_hostile_values_anywhere_never_raise_out_of_check_fix_translate_or_analysis(which, data, raw, as_text):
    builder, dialect = DOCUMENTS[which]
    base = builder()
    place = data.draw(st.sampled_from([p for p in _places(base) if p]))
    body = _hostile_body(base, place, raw, as_text)
    for kind in (None, "request", "response", "stream"):
        result = check.check_bytes(body, dialect, kind)
        assert (result.error is None) or result.error.startswith(("not valid JSON", "cannot check as a stream",
                                                                  "nothing to check"))
    for path in (PATHS[dialect], "/"):
        for flow in (Flow(id=1, session_id=1, started_at=1.0, method="POST", path=path, request_body=body,
                          response_body=body, status=200, state=FlowState.COMPLETE),
                     Flow(id=1, session_id=1, started_at=1.0, method="POST", path=path, request_body=body,
                          response_body=b"data: " + body + b"\n\n", status=200, state=FlowState.COMPLETE,
                          streamed=True)):
            analysis = analyse(flow)
            assert analysis.parse_error is None or analysis.parse_error.startswith("request not valid JSON")
    try:
        payload = jsonsafe.loads(body)
    except (orjson.JSONDecodeError, Unfaithful):
        return  # a rewrite refuses it before it starts (the transform and the CLI test that)
    try:
        jsonsafe.dumps(fix(payload, dialect).payload)
    except Unfaithful:
        pass
    for source, target in PAIRS:  # as a request going up, and as a response coming back
        for kind, frm, to in (("request", source, target), ("response", target, source)):
            if frm.value == dialect:
                try:
                    jsonsafe.dumps(translate_document(payload, frm, to, kind)[0])
                except (TranslationError, Unfaithful):
                    pass
    if dialect == "mcp":
        for target in ("openai-chat", "anthropic", "gemini"):
            try:
                jsonsafe.dumps(translate_document(payload, "mcp", target)[0])
            except (TranslationError, Unfaithful):
                pass


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_duplicate_keys_keep_the_last_value_everywhere(dialect):
    # RFC 8259 leaves duplicates to the parser; orjson (like Python, JavaScript and Go) keeps the last.
    body = orjson.dumps(BASES[dialect]())[:-1] + b',"x_dup":1,"x_dup":2}'
    assert jsonsafe.loads(body)["x_dup"] == 2
    assert check.check_bytes(body, dialect).error is None
