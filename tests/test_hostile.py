"""Hostile input at the edges a person or a recording reaches: the analysis the store writer runs on
every flow, export, and the commands (check, check --fix, translate, export, replay, record, mock,
the TUI entry). Each gives a result or a clear one-line error with its exit status, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import orjson
import pytest

from inspector.analysis import analyse, session_findings
from inspector.cli import main
from inspector.formats.fixture import body_value, dumps, fixture
from inspector.flow import Flow, FlowState
from inspector.proxy.transform import Repairing, TransformError, TransformFactory
from inspector.store import Store

WIDE = "18446744073709551616"  # 2**64: orjson reads it as a rounded float
HUGE_ID = str(2**64)


def chat_request(arguments: str = '{"city": "Oslo"}', raw_extra: str | None = None) -> bytes:
    payload = {"model": "gpt-test", "messages": [
        {"role": "user", "content": "Oslo?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "4°C"}]}
    body = orjson.dumps(payload)
    return body if raw_extra is None else body[:-1] + b',"x_extra":' + raw_extra.encode() + b"}"


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def flow_of(body: bytes, path: str = "/v1/chat/completions", method: str = "POST", **fields) -> Flow:
    """A finished flow that sent `body`; its answer is a bare chat.completion unless given."""
    fields.setdefault("id", 1)
    fields.setdefault("response_body", b'{"object": "chat.completion", "choices": [{"index": 0, "message": '
                                       b'{"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}')
    return Flow(session_id=1, started_at=1.0, method=method, path=path, request_body=body,
                status=200, state=FlowState.COMPLETE, **fields)


# --- the analysis (run by the store writer on every flow) -----------------------------------------

ARGUMENTS_5000 = "/messages/1/tool_calls/0/function/arguments"
ANALYSIS_CASES = {
    # body, then (dialect, parse_error, [(where, rule, pointer)]) as analysed at /v1/chat/completions
    "arguments-nested-5000": (chat_request(nested(5000)),
                              ("openai-chat", None, [("request", "OC-15", ARGUMENTS_5000)])),
    # x_extra is not a Chat field: api.openai.com rejects it (OC-29), whatever it holds.
    "nested-1000": (chat_request(raw_extra=nested(1000)), ("openai-chat", None, [("request", "OC-29", "/x_extra")])),
    "nested-1025": (chat_request(raw_extra=nested(1025)),
                    ("openai-chat", "request not valid JSON: nested more than 1024 levels deep, deeper than can be "
                                    "read", [])),
    "wide-integer": (chat_request(raw_extra=WIDE), ("openai-chat", None, [("request", "OC-29", "/x_extra")])),
    "infinite-number": (chat_request(raw_extra="1e400"),
                        ("openai-chat", "request not valid JSON: number is infinity when parsed as double: line 1 "
                                        "column 288 (char 287)", [])),
    "lone-surrogate": (chat_request(raw_extra='"\\ud800"'),
                       ("openai-chat", "request not valid JSON: no low surrogate in string: line 1 column 289 "
                                       "(char 288)", [])),
}


@pytest.mark.parametrize("case", sorted(ANALYSIS_CASES))
def test_the_analysis_of_a_hostile_flow_is_total(case):
    body, (dialect, parse_error, violations) = ANALYSIS_CASES[case]
    analysis = analyse(flow_of(body))
    found = [(v.where, v.rule, v.pointer) for v in analysis.violations]
    assert (analysis.dialect.value, analysis.parse_error, found) == (dialect, parse_error, violations)


@pytest.mark.parametrize("key", ["method", "model", "type", "tools", "messages", "contents", "stop_reason"])
def test_a_member_nested_a_thousand_levels_where_the_dialect_is_told_by_shape(key):
    """Read without a traceback; a history whose first entry is a list, not a message, is that one finding."""
    # A path no dialect claims: the request's shape tells the dialect when the answer bears it too.
    answer = {"contents": b'{"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, '
                          b'"finishReason": "STOP"}]}'}
    analysis = analyse(flow_of(('{"%s":%s}' % (key, nested(1000))).encode(), path="/",
                               **({"response_body": answer[key]} if key in answer else {})))
    history = {"messages": [("request", "OC-28", "/messages/0")], "contents": [("request", "GM-20", "/contents/0")]}
    assert (analysis.parse_error, [(v.where, v.rule, v.pointer) for v in analysis.violations]) == (
        None, history.get(key, []))


@pytest.mark.parametrize(("method", "path"), [("OPTIONS", "*"), ("POST", "*"), ("GET", "*foo"), ("POST", "*foo")])
def test_request_targets_that_are_not_paths_analyse_by_shape(method, path):
    analysis = analyse(flow_of(chat_request(nested(5000)), path=path, method=method))
    assert (analysis.dialect.value, [(v.rule, v.pointer) for v in analysis.violations]) == (
        "openai-chat", [("OC-15", ARGUMENTS_5000)])


def test_a_tool_schema_nested_a_thousand_levels_is_analysed_by_shape():
    schema = '{"type":"object","properties":{"a":' * 499 + '{"type":"string"}' + "}}" * 499
    body = ('{"model":"m","max_tokens":5,"system":"s","messages":[{"role":"user","content":"x"}],'
            '"tools":[{"name":"f","input_schema":' + schema + "}]}").encode()
    answer = (b'{"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "ok"}], '
              b'"stop_reason": "end_turn"}')
    # No dialect in the path: told from the body's shape, which the answer bears out.
    analysis = analyse(flow_of(body, path="/", response_body=answer))
    assert (analysis.dialect.value, analysis.parse_error, analysis.tools) == ("anthropic", None, 1)


def test_the_session_rules_read_mcp_flows_nested_a_thousand_levels():
    schema = '{"type":"object","properties":{"a":' * 499 + '{"type":"string"}' + "}}" * 499
    exchanges = [
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
         '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"f","inputSchema":%s,"outputSchema":%s}]}}'
         % (schema, schema)),
        (b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"f","arguments":{}}}',
         '{"jsonrpc":"2.0","id":2,"result":{"content":[],"structuredContent":{"a":%s}}}' % nested(1000)),
        (b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"f","arguments":{"a":' + WIDE.encode()
         + b"}}}", '{"jsonrpc":"2.0","id":3,"result":{"content":[],"structuredContent":{"a":1e400}}}'),
    ]
    flows = [flow_of(request, path="/mcp", id=n, response_headers=[("content-type", "application/json")])
             for n, (request, response) in enumerate(exchanges, 1)]
    for flow, (_, response) in zip(flows, exchanges, strict=True):
        flow.response_body = response.encode()
    found = {n: [(v.rule, v.pointer, v.message) for v in violations]
             for n, violations in session_findings(flows).items()}
    assert found == {2: [("MCP-06", "/result/structuredContent", "structuredContent of 'f' does not match its "
                          "outputSchema: it cannot be validated: nested more than 254 levels deep, deeper than "
                          "can be written back")]}


@pytest.mark.parametrize(("path", "response"), [
    ("/v1beta/models/gemini-x:generateContent", b'{"candidates":[{"content":[1]},{"content":"text"}]}'),
    ("/v1/responses", b'{"object":"response","output":[{"type":' + nested(1000).encode() + b'}]}'),
], ids=["gemini-content-not-an-object", "responses-type-nested-1000"])
def test_the_tool_call_count_of_a_malformed_response_is_zero_not_a_crash(path, response):
    flow = flow_of(b'{"model":"m"}', path=path)
    flow.response_body = response
    assert analyse(flow).tool_calls == 0


def test_the_store_writer_records_every_hostile_flow(tmp_path):
    with Store(tmp_path / "flows.sqlite3") as store:
        store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8", "passthrough")
        rows = []
        for case in sorted(ANALYSIS_CASES):
            flow = flow_of(ANALYSIS_CASES[case][0], path="*", method="OPTIONS")
            flow.id, flow.session_id = store.next_flow_id(), store.session_id
            store.submit(flow, rows.append)
        store.flush()
        assert [(row.state, row.status) for row in rows] == [("complete", 200)] * len(ANALYSIS_CASES)
        assert [store.get(row.id).request_body for row in rows] == [ANALYSIS_CASES[c][0] for c in sorted(ANALYSIS_CASES)]


# --- export --------------------------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    chat_request(raw_extra=nested(1000)),  # the standard library's parser recursed to death on it
    chat_request(raw_extra=nested(300)),  # reads, cannot be written back as JSON
    chat_request(raw_extra=WIDE),  # would be rounded
    chat_request(raw_extra='"\\ud800"'),  # the standard library read it, then UTF-8 could not encode it
    chat_request(raw_extra="NaN"),  # the standard library read it, and wrote invalid JSON
], ids=["nested-1000", "nested-300", "wide-integer", "lone-surrogate", "nan"])
def test_a_body_that_json_cannot_carry_exactly_is_exported_as_its_text(body):
    assert body_value(body) == {"text": body.decode()}
    flow = flow_of(body)
    assert json.loads(dumps(fixture(flow, analyse(flow))))["request"]["body"] == {"text": body.decode()}


def test_a_body_json_carries_exactly_is_still_exported_as_json():
    assert body_value(b'{"n": 18446744073709551615, "deep": ' + nested(200).encode() + b"}") == {
        "json": {"n": 2**64 - 1, "deep": json.loads(nested(200))}}


# --- the commands ---------------------------------------------------------------------------------

def _run(capsys, *argv: str) -> tuple[int, list[str], list[str]]:
    try:
        status = main(list(argv))
    except SystemExit as exit:  # argparse refusing an argument
        status = exit.code
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out.splitlines(), err.splitlines()


def _run_apart(*argv: str) -> tuple[int, list[str], list[str]]:
    """A command that would listen until killed if it accepted its arguments, in its own process."""
    done = subprocess.run([sys.executable, "-m", "inspector", *argv], capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stdout + done.stderr
    return done.returncode, done.stdout.splitlines(), done.stderr.splitlines()


def _file(tmp_path, body: bytes) -> str:
    path = tmp_path / "payload.json"
    path.write_bytes(body)
    return str(path)


def test_check_reports_arguments_nested_5000_deep_as_a_finding(tmp_path, capsys):
    path = _file(tmp_path, chat_request(nested(5000)))
    status, out, err = _run(capsys, "check", "--profile", "openai-compatible", path)
    assert (status, out[-1], err) == (1, "1 file checked: 1 error(s), 0 warning(s), 0 info", [])
    assert out[0].startswith(f"{path}:{ARGUMENTS_5000}: error OC-15 (rejects) arguments is not JSON")


@pytest.mark.parametrize(("body", "reason"), [
    (chat_request(raw_extra=nested(300)), "nested more than 254 levels deep, deeper than can be written back"),
    (chat_request(raw_extra=WIDE), f"the integer {WIDE} does not fit in 64 bits and would be rounded"),
    (chat_request(orjson.dumps('{"n": ' + WIDE + "}").decode()),
     f"arguments: the integer {WIDE} does not fit in 64 bits and would be rounded"),
    (chat_request(nested(5000)), "arguments: nested more than 1024 levels deep, deeper than can be read"),
], ids=["nested-300", "wide-integer", "double-encoded-wide-integer", "arguments-nested-5000"])
def test_check_fix_refuses_in_one_line_what_it_cannot_fix_faithfully(tmp_path, capsys, body, reason):
    path = _file(tmp_path, body)
    out_path = tmp_path / "fixed.json"
    status, _, err = _run(capsys, "check", "--fix", str(out_path), path)
    assert (status, err) == (2, [f"toolwire-inspect: {path}: cannot fix faithfully: {reason}"])
    assert not out_path.exists()


@pytest.mark.parametrize(("body", "target", "status", "message"), [
    (chat_request(raw_extra=nested(300)), "anthropic", 1,
     "cannot translate {path}: /: cannot translate faithfully: nested more than 254 levels deep, deeper than can be "
     "written back"),
    (chat_request(raw_extra=WIDE), "anthropic", 2,
     f"{{path}} cannot be translated faithfully: the integer {WIDE} does not fit in 64 bits and would be rounded"),
    (chat_request('{"a": ' + nested(253) + "}"), "anthropic", 2,
     "{path} cannot be translated faithfully: nested more than 254 levels deep, deeper than can be written back"),
    (chat_request(nested(5000)), "openai-responses", 1,
     "cannot translate {path}: /: cannot translate faithfully: arguments: nested more than 1024 levels deep, deeper "
     "than can be read"),
], ids=["nested-300", "wide-integer", "output-too-deep", "arguments-nested-5000"])
def test_translate_refuses_in_one_line_what_it_cannot_translate_faithfully(tmp_path, capsys, body, target, status,
                                                                           message):
    path = _file(tmp_path, body)
    assert _run(capsys, "translate", "--from", "openai-chat", "--to", target, path) == (
        status, [], [f"toolwire-inspect: {message.format(path=path)}"])


@pytest.mark.parametrize("argv", [["export", HUGE_ID], ["replay", HUGE_ID], ["export", "0"], ["export", "-3"]])
def test_a_flow_id_sqlite_cannot_hold_is_refused(tmp_path, capsys, argv):
    store = tmp_path / "flows.sqlite3"
    Store(store).close()
    status, out, err = _run(capsys, *argv, "--store", str(store))
    assert (status, out, err[-1]) == (
        2, [], f"toolwire-inspect {argv[0]}: error: argument FLOW_ID: {argv[1]!r} is not a flow id (1 to {2**63 - 1})")


def test_check_session_with_an_id_sqlite_cannot_hold_is_no_such_session(tmp_path, capsys):
    store = tmp_path / "flows.sqlite3"
    Store(store).close()
    assert _run(capsys, "check", "--session", HUGE_ID, "--store", str(store)) == (
        2, [], [f"toolwire-inspect: no session {HUGE_ID} in {store}"])


@pytest.mark.parametrize("argv", [
    ["record", "--upstream", "http://127.0.0.1:9", "--port", "70000"],
    ["record", "--upstream", "http://127.0.0.1:9", "--port", "-1"],
    ["mock", "--port", "65536"],
    ["demo", "--port", "99999"],
    ["--upstream", "http://127.0.0.1:9", "--port", "70000"],  # the TUI entry
], ids=["record-70000", "record-negative", "mock-65536", "demo-99999", "tui-70000"])
def test_a_listen_port_out_of_range_is_refused_not_wrapped(tmp_path, argv):
    status, out, err = _run_apart(*argv, *(["--store", str(tmp_path / "s.sqlite3")] if argv[0] != "mock" else []))
    command = f"toolwire-inspect {argv[0]}" if argv[0] in ("record", "mock", "demo") else "toolwire-inspect"
    port = argv[argv.index("--port") + 1]
    assert (status, out, err[-1]) == (2, [], f"{command}: error: argument --port: {port!r} is not a port (0 to 65535)")


def test_an_upstream_port_out_of_range_is_refused_before_listening(tmp_path):
    assert _run_apart("record", "--upstream", "http://127.0.0.1:70000", "--port", "0",
                "--store", str(tmp_path / "s.sqlite3")) == (
        2, [], ["toolwire-inspect: --upstream 'http://127.0.0.1:70000': its port is out of range (0 to 65535)"])


def test_replay_to_an_upstream_port_out_of_range_is_refused(tmp_path, capsys):
    store_path = tmp_path / "flows.sqlite3"
    with Store(store_path) as store:
        store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8", "passthrough")
        flow = flow_of(chat_request())
        flow.id, flow.session_id = store.next_flow_id(), store.session_id
        store.submit(flow)
        store.flush()
    assert _run(capsys, "replay", str(flow.id), "--store", str(store_path), "--upstream", "http://127.0.0.1:70000") == (
        2, [], ["toolwire-inspect: --upstream 'http://127.0.0.1:70000': its port is out of range (0 to 65535)"])


# --- request targets that are not paths (`OPTIONS *`, `*foo`): the front door decides whether they are
# forwarded; the transforms must take them without raising ----------------------------------------

CHAT_BODY = b'{"model":"m","messages":[{"role":"user","content":"x"}]}'


@pytest.mark.parametrize("target", ["*", "*foo", "", "//", "*?x=1"])
def test_the_transforms_take_any_request_target(target):
    repairing = Repairing("http://127.0.0.1:9")
    assert (repairing.request(CHAT_BODY, target), repairing.take_notes()) == ((CHAT_BODY, target), [])
    assert [TransformFactory(spec)().request(CHAT_BODY, target)[1]
            for spec in ("openai-chat:anthropic", "openai-chat:openai-responses", "openai-chat:gemini")] == [
        "/v1/messages", "/v1/responses", "/v1beta/models/m:generateContent"]
    with pytest.raises(TransformError) as refused:
        TransformFactory("openai-chat:anthropic")().request(b"", target)  # `OPTIONS *` carries no body
    assert str(refused.value) == ("cannot translate a request body that is not JSON: Input is a zero-length, empty "
                                  "document: line 1 column 1 (char 0)")


@pytest.mark.parametrize(("body", "reason"), [
    (nested(300), "nested more than 254 levels deep, deeper than can be written back"),
    (WIDE, f"the integer {WIDE} does not fit in 64 bits and would be rounded"),
], ids=["nested-300", "wide-integer"])
def test_mock_refuses_in_one_line_a_hand_written_fixture_it_would_replay_changed(tmp_path, body, reason):
    fixture_path = tmp_path / "turn.json"
    fixture_path.write_text(
        '{"format": "toolwire-fixture", "version": 1, "request": {"method": "POST", "path": "/v1/chat/completions",'
        ' "body": {"json": {"n": 1}}}, "upstream_request": {"url": "{upstream}/v1/chat/completions"}, "response": '
        '{"status": 200, "headers": ["content-type: application/json"], "body": {"json": {"x": ' + body + "}}}}")
    assert _run_apart("mock", "--port", "0", str(fixture_path)) == (
        2, [], [f"toolwire-inspect: cannot load {fixture_path}: {reason}"])


# --- the views' builders (run in the TUI's workers): a flow nested 1000 levels deep wherever a payload
# can hold it gives each view its normal result ----------------------------------------------------

def deep_lines(key: str, depth: int, indent: int) -> list[str]:
    """`nested(depth)` as `pretty` (and every pane) writes it: one bracket a line."""
    pad = "  " * indent
    return [f'{pad}"{key}": ['] + [pad + "  " * d + "[" for d in range(1, depth - 1)] + \
        [pad + "  " * (depth - 1) + "[]"] + [pad + "  " * d + "]" for d in range(depth - 2, 0, -1)] + [pad + "]"]


def test_the_views_of_a_request_nested_a_thousand_levels(tmp_path):
    from inspector.tui.compare import (prepare_conversation, prepare_fixed_diff, prepare_response_diff,
                                       prepare_upstream_diff)
    from inspector.tui.view import PREVIEW_FROM, prepare, preview

    long = "x" * PREVIEW_FROM  # big enough for the request pane's first paint before the analysis
    body = chat_request(raw_extra=nested(1000)).replace(b'"Oslo?"', b'"' + long.encode() + b'"')
    view = prepare(flow_of(body))
    start = view.request.line_of("/x_extra")
    assert (start, view.request.lines()[start:]) == (27, deep_lines("x_extra", 1000, 1) + ["}"])
    first = preview(flow_of(body))
    assert first is not None and (first.text, first.note) == (view.request.text, "checking…")
    assert [(v.violation.rule, v.violation.pointer, v.lines) for v in view.violations] == [
        ("OC-29", "/x_extra", {"request": 27, "upstream": 27})]
    fixed = prepare_fixed_diff(view)
    reason = "cannot fix faithfully: nested more than 254 levels deep, deeper than can be written back"
    assert fixed is not None and (fixed.title, fixed.lines.lines, fixed.lines.marks, fixed.notes, fixed.summary) == (
        f"#1 original → fixed · {reason}", [reason], {0: "error"}, None, "")
    conversation = prepare_conversation(view)
    assert (conversation.title, conversation.turns.lines[1:]) == (
        "#1 openai-chat · 4 turns · orphans 0 · unanswered 0 · new calls 0",
        [f"   {long[:2000]}… ({PREVIEW_FROM - 2000} more characters)", "#1 assistant  /messages/1",
         "   → call get_weather  call_1 → answered in #2 ✖ not offered in tools", '       {"city": "Oslo"}',
         "#2 tool  /messages/2", "   ← result of get_weather  call_1 ← answers #1", "       4°C",
         "#3 assistant · response (new turn)  /choices/0", "   ok"])
    assert (prepare_upstream_diff(view), prepare_response_diff(view)) == (None, None)


def chain(depth: int, leaf: str) -> bytes:
    return ('{"a":' * depth + leaf + "}" * depth).encode()


def test_the_diffs_of_a_flow_nested_a_thousand_levels_in_its_upstream_copy_and_response(tmp_path):
    """The upstream copy (repair mode) holds the nesting, and the response, whose replay answers
    differently at the bottom: each diff gives its rows, the deep ones included."""
    from inspector.flow import Mode
    from inspector.tui.compare import prepare_replay_diff, prepare_upstream_diff
    from inspector.tui.view import prepare

    with Store(tmp_path / "flows.sqlite3") as store:
        store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8", "repair")
        origin = flow_of(chat_request(), id=store.next_flow_id(), mode=Mode.REPAIR,
                         upstream_request_body=chat_request(raw_extra=nested(1000)),
                         response_body=b'{"object":"chat.completion","choices":[],"x":' + chain(999, "1") + b"}")
        replayed = flow_of(chat_request(), id=store.next_flow_id(), replay_of=origin.id,
                           response_body=b'{"object":"chat.completion","choices":[],"x":' + chain(999, "2") + b"}")
        for flow in (origin, replayed):
            flow.session_id = store.session_id
            store.submit(flow)
        store.flush()
        view = prepare(origin)
        upstream = prepare_upstream_diff(view)
        assert upstream is not None and upstream.notes is not None
        assert (upstream.title, upstream.summary, upstream.notes.lines) == (
            "#1 original → sent upstream · repaired on the way", "+1 −0 ~0",
            ["no notes: nothing was reported for these changes"])
        assert upstream.lines.lines == ["  {", '    "model": "gpt-test"', '    "messages": [… 3 items]',
                                        '+   "x_extra": [', *("+ " + "  " * d + "[0] [" for d in range(2, 1000)),
                                        "+ " + "  " * 1000 + "[0] []",
                                        *("+ " + "  " * d + "]" for d in range(999, 0, -1)),
                                        "  }"]
        assert upstream.lines.marks == {line: "added" for line in range(3, 2002)}
        for start in (view, prepare(replayed)):  # from either end
            replay = prepare_replay_diff(store, start)
            assert replay is not None
            assert (replay.title, replay.summary, replay.lines.marks) == (
                "response of #1 (200) → replay #2 (200)", "+0 −0 ~1", {1002: "changed"})
            assert replay.lines.lines == ["  {", '    "object": "chat.completion"', '    "choices": [… 0 items]',
                                          '    "x": {', *("  " + "  " * d + '"a": {' for d in range(2, 1000)),
                                          "~ " + "  " * 1000 + '"a": 1 → 2',
                                          *("  " + "  " * d + "}" for d in range(999, -1, -1))]


def test_a_stream_chunk_nested_a_thousand_levels_reads_as_its_event():
    from inspector.flow import Chunk
    from inspector.tui.compare import prepare_conversation
    from inspector.tui.view import prepare

    events = [b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"ok"}}],"x":'
              + nested(1000).encode() + b"}\n\n", b"data: [DONE]\n\n"]
    flow = flow_of(chat_request(), streamed=True, chunks=[Chunk(0.001 * n, event) for n, event in enumerate(events, 1)],
                   response_body=b"".join(events), response_headers=[("content-type", "text/event-stream")])
    view = prepare(flow)
    assert view.chunks == [
        f'      +1.0 ms      Δ1.0 ms    {len(events[0])} B  ▸ chunk "ok" │ '
        + events[0].decode().replace("\n", "\\n"),
        "      +2.0 ms      Δ1.0 ms      14 B  ▸ [DONE] │ data: [DONE]\\n\\n"]
    assert (view.response.note, prepare_conversation(view).turns.lines[-2:]) == (
        "reassembled from 2 chunks (s: raw chunks)", ["#3 assistant · response (new turn)  /choices/0", "   ok"])


def test_the_views_of_a_tool_schema_and_a_tool_input_nested_a_thousand_levels():
    from inspector.tui.compare import prepare_conversation, prepare_fixed_diff
    from inspector.tui.view import prepare

    schema = '{"type":"object","properties":{"a":' * 499 + '{"type":"string"}' + "}}" * 499
    body = ('{"model":"m","max_tokens":5,"tools":[{"name":"f","input_schema":' + schema + '}],"messages":['
            '{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f",'
            '"input":' + chain(998, "1").decode() + '}]},{"role":"user","content":[{"type":"tool_result",'
            '"tool_use_id":"t1","content":"done"}]}]}').encode()
    view = prepare(flow_of(body, path="/v1/messages", response_body=b'{"type":"message","role":"assistant",'
                           b'"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn"}'))
    line = view.request.line_of("/messages/1/content/0/input" + "/a" * 998)
    assert (len(view.request.lines()), line, view.request.lines()[line]) == (4530, 3516, "  " * 1003 + '"a": 1')
    conversation = prepare_conversation(view)
    text = '{"a":' * 998 + "1" + "}" * 998
    assert (conversation.title, conversation.turns.lines, conversation.tools.lines) == (
        "#1 anthropic · 4 turns · orphans 0 · unanswered 0 · new calls 0",
        ["#0 user  /messages/0", "   x", "#1 assistant  /messages/1", "   → call f  t1 → answered in #2",
         f"       {text[:2000]}… ({len(text) - 2000} more characters)", "#2 tool  /messages/2",
         "   ← result of f  t1 ← answers #1", "       done", "#3 assistant · response (new turn)  /content/0",
         "   ok"],
        ["tools: 1 offered · 1 called · 0 never called · 0 not offered · 0 duplicated · 0 aliased",
         "f  offered · called ×1"])
    fixed = prepare_fixed_diff(view)
    assert fixed is not None and fixed.title == ("#1 original → fixed · cannot fix faithfully: nested more than 254 "
                                                 "levels deep, deeper than can be written back")


@pytest.mark.parametrize(("body", "path", "reason"), [
    (chat_request(raw_extra=nested(300)), "/v1/chat/completions",
     "cannot fix faithfully: nested more than 254 levels deep, deeper than can be written back"),
    (b"not json", "/v1/chat/completions", "nothing to fix: the request is not JSON of a known dialect"),
    (b'{"hello": 1}', "/somewhere", "nothing to fix: the request is not JSON of a known dialect"),
], ids=["nested-300", "not-json", "no-dialect"])
def test_a_fixed_replay_that_cannot_be_made_says_why_before_sending(body, path, reason):
    """R (and `replay --fixed`) refuses before sending, with the reason F shows for the same request."""
    from inspector.replay import ReplayRefused, fixed_request

    with pytest.raises(ReplayRefused) as refused:
        fixed_request(flow_of(body, path=path))
    assert str(refused.value) == reason
