"""Session rules computed once (issue 20): the writer stores each session's findings as its MCP
flows finish, parsing each flow once however long the session grows, and the readers (`check
--session`, the HTML export, the flow screen) read them instead of re-reading every MCP flow.
Real stores on real files; counted by the analysis module's own counter of its steps."""

from __future__ import annotations

import sqlite3

import orjson

from inspector import analysis
from inspector.cli import main
from inspector.flow import Flow, FlowState
from inspector.store import Store

T0 = 1_700_000_000.0
LISTING = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [
    {"name": "remember", "inputSchema": {"type": "object", "properties": {}}}]}}


def listing(store: Store, query: str, offset: float = 0.0) -> int:
    """A tools/list of the seed-003 endpoint, registered with `query`: the same server each time."""
    assert store.session_id is not None
    flow = Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=T0 + offset, method="POST",
                path="/balda/mcp", query=query,
                upstream_url="http://127.0.0.1:9/balda/mcp" + (f"?{query}" if query else ""),
                request_body=b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}', status=200,
                response_headers=[("content-type", "application/json")], response_body=orjson.dumps(LISTING),
                state=FlowState.COMPLETE)
    store.save(flow)
    return flow.id


def chat(store: Store) -> int:
    assert store.session_id is not None
    flow = Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=T0, method="POST",
                path="/v1/chat/completions", request_body=b'{"model": "m", "messages": []}', status=200,
                response_body=b"{}", state=FlowState.COMPLETE)
    store.save(flow)
    return flow.id


def shown(found: dict) -> dict:
    return {flow_id: [(v.rule, v.pointer, v.where) for v in violations] for flow_id, violations in found.items()}


def from_scratch(store: Store, session_id: int) -> dict:
    """What the session rules find reading every MCP flow of the session (what readers did)."""
    return analysis.session_findings(store.get(i) for i in store.flow_ids(session_id, dialects=("mcp",)))


def test_the_writer_stores_the_findings_parsing_each_mcp_flow_once(tmp_path) -> None:
    with Store(tmp_path / "s.db") as store:
        session_id = store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
        before = analysis.calls.copy()
        ids = [listing(store, query, n) for n, query in enumerate(("", "session=tok", "", "session=two"))]
        chat(store)
        spent = analysis.calls - before
        # One parse per MCP flow (not 1 + 2 + 3 + 4), one run of the rules per MCP flow written.
        assert (spent["session-part"], spent["session"]) == (4, 4)
        before = analysis.calls.copy()
        stored = store.session_findings(session_id)
        assert analysis.calls - before == {}
        assert stored == from_scratch(store, session_id)
        assert shown(stored) == {ids[n]: [("XL-03", "/result/tools/0/name", "session")] for n in (1, 3)}


def test_flows_another_process_writes_into_the_session_are_counted(tmp_path) -> None:
    """Two recorders on one session (a TUI and `mcp-stdio`): each writer reads the other's flows
    from the file, so neither stores findings that miss the other's."""
    path = tmp_path / "s.db"
    with Store(path) as first, Store(path) as second:
        session_id = first.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
        second.session_id = session_id
        ids = [listing(first, ""), listing(second, "session=tok"), listing(first, "session=two")]
        for store in (first, second):
            assert shown(store.session_findings(session_id)) == {
                ids[n]: [("XL-03", "/result/tools/0/name", "session")] for n in (1, 2)}
        assert first.session_findings(session_id) == from_scratch(first, session_id)


def test_a_session_without_stored_findings_is_computed_when_read(tmp_path) -> None:
    """A session recorded before schema 9 (its findings NULL), or whose stored findings are not this
    build's: read as before, from its MCP flows."""
    path = tmp_path / "s.db"
    with Store(path) as store:
        session_id = store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
        ids = [listing(store, ""), listing(store, "session=tok")]
    expected = {ids[1]: [("XL-03", "/result/tools/0/name", "session")]}
    for stored in (None, b'{"version": -1}', b"not json"):
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE sessions SET findings = ?", (stored,))
        with Store(path, read_only=True) as store:
            before = analysis.calls.copy()
            assert shown(store.session_findings(session_id)) == expected
            assert (analysis.calls - before)["session"] == 1


def test_check_session_reads_the_stored_findings(tmp_path, capsys) -> None:
    path = tmp_path / "s.db"
    with Store(path) as store:
        store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
        ids = [listing(store, ""), listing(store, "session=tok")]
    capsys.readouterr()
    before = analysis.calls.copy()
    assert main(["check", "--session", "--store", str(path)]) == 1  # XL-03 is an error
    spent = analysis.calls - before
    assert (spent["session"], spent["session-part"], spent["analyse"]) == (0, 0, 0)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines[:-1]] == [f"#{ids[1]}"]
    assert lines[-1] == "session 1: 2 MCP flow(s) checked: 1 error(s), 0 other finding(s)"


def test_the_html_export_analyses_nothing(tmp_path) -> None:
    from inspector.html import render

    path = tmp_path / "s.db"
    with Store(path) as store:
        store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
        ids = [listing(store, ""), listing(store, "session=tok"), chat(store)]
    with Store(path, read_only=True) as store:
        before = analysis.calls.copy()
        page = render(store, ids, title="t", workers=1)
        spent = analysis.calls - before
    assert (spent["analyse"], spent["session"], spent["session-part"]) == (0, 0, 0)
    assert page.count(b"XL-03") >= 1


def test_opening_a_store_from_before_schema_9_stores_its_sessions_findings(tmp_path) -> None:
    """Migration: the sessions recorded before their findings were stored get them in the
    background (the writer's backfill turns), so that their flows open without the rules either."""
    path = tmp_path / "s.db"
    with Store(path) as store:
        first = store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
        ids = [listing(store, ""), listing(store, "session=tok")]
        second = store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
        chat(store)
    with sqlite3.connect(path) as conn:
        conn.execute("ALTER TABLE sessions DROP COLUMN findings")
        for column in ("socket_of", "continues", "history"):  # schema 10's, after it
            conn.execute(f"ALTER TABLE flows DROP COLUMN {column}")
        conn.execute("PRAGMA user_version=8")
    with Store(path):  # the first batch of the backfill is committed before the open returns
        pass
    with sqlite3.connect(path) as conn:
        stored = dict(conn.execute("SELECT id, findings FROM sessions").fetchall())
    assert stored[second] is None  # no MCP flow: nothing for readers to read either
    assert shown(analysis.findings_from_stored(stored[first])) == {ids[1]: [("XL-03", "/result/tools/0/name", "session")]}
    with Store(path, read_only=True) as store:
        before = analysis.calls.copy()
        store.session_findings(first)
        assert (analysis.calls - before)["session"] == 0


THINKING = [{"type": "thinking", "thinking": "", "signature": "EqQBCkYIARgCIkAsig"},
            {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Oslo"}}]


def claude_turns(store: Store, returned: list) -> list[int]:
    """A tool-calling turn of Claude with thinking on, then the request that sends its result back
    with `returned` as the assistant message's content (what the client replayed)."""
    assert store.session_id is not None
    answer = {"id": "msg_1", "type": "message", "role": "assistant", "content": THINKING, "stop_reason": "tool_use"}
    ask = {"model": "claude-opus-4-7", "max_tokens": 2048, "thinking": {"type": "adaptive"},
           "messages": [{"role": "user", "content": "Weather in Oslo?"}]}
    back = {**ask, "messages": [*ask["messages"], {"role": "assistant", "content": returned},
                                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A",
                                                              "content": "4 °C"}]}]}
    ids = []
    for offset, (request, response) in enumerate(((ask, answer), (back, {**answer, "content": [
            {"type": "text", "text": "4 °C in Oslo."}], "stop_reason": "end_turn"}))):
        flow = Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=T0 + offset, method="POST",
                    path="/v1/messages", request_body=orjson.dumps(request), status=200,
                    response_headers=[("content-type", "application/json")], response_body=orjson.dumps(response),
                    state=FlowState.COMPLETE)
        store.save(flow)
        ids.append(flow.id)
    return ids


def test_a_signature_rewritten_between_two_flows_is_found_on_the_request_that_sent_it_back(tmp_path) -> None:
    """XL-14 across flows: a relay that re-encodes the signature the model sent with its call. The
    finding sits on the later request, where the changed block is, and check --session says so."""
    with Store(tmp_path / "s.db") as store:
        session_id = store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
        first, second = claude_turns(store, [{**THINKING[0], "signature": "EqQBCkYIARgCIkAsig=="}, THINKING[1]])
        found = store.session_findings(session_id)
        assert shown(found) == {second: [("XL-14", "/messages/1/content", "request")]}
        assert found[second][0].message == ("the signed thinking block the model sent with call 'toolu_01A' came "
                                            "back changed (the flow that answered with it is earlier in this "
                                            "recording)")
        assert found == analysis.session_findings(store.get(i) for i in (first, second))


def test_thinking_sent_back_as_it_came_is_no_session_finding(tmp_path, capsys) -> None:
    with Store(tmp_path / "s.db") as store:
        session_id = store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
        claude_turns(store, THINKING)
        assert store.session_findings(session_id) == {}
    assert main(["check", "--session", str(session_id), "--store", str(tmp_path / "s.db")]) == 0
