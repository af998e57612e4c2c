"""Filter expressions: parsed into SQL over the store's columns, run against real stored flows."""

from __future__ import annotations

import re
import sqlite3
import time

import pytest

from inspector import analysis
from inspector.filters import FilterError, compile_filter, rules_text
from inspector.wire.dialects.openai_chat.mock import chat_completion
from inspector.store import SCHEMA_VERSION, Store
from tests.tui.flows import clean_request, defective_request, populate, save_flow


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "flows.sqlite3") as opened:
        ids = populate(opened)
        # 7: Gemini, with a provider error naming the schema; 8: a replay of the replay (#6).
        opened.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
        gemini = {"contents": [{"role": "user", "parts": [{"text": "Weather in Lyon?"}]}]}
        save_flow(opened, gemini, offset=11, path="/v1beta/models/gemini-2.5-flash:generateContent", status=400,
                  response={"error": {"code": 400, "message": "Invalid schema for function get_weather"}})
        save_flow(opened, clean_request(), offset=12, replay_of=ids["replay"])
        yield opened


def found(store: Store, expression: str) -> list[int]:
    ids = [row.id for row in store.rows(text=expression)]
    assert store.count(text=expression) == len(ids)
    return ids


@pytest.mark.parametrize(("expression", "ids"), [
    ("", [1, 2, 3, 4, 5, 6, 7, 8]),
    ("~dialect gemini", [7]),
    ("~dialect chat", [1, 2, 3, 4, 5, 6, 8]),
    ("~model gpt-4.1", [4]),
    ("~model GEMINI-2.5", [7]),
    ("~c 502", [5]),
    ("~c 4xx", [7]),
    ("~c 5", [5]),
    ("~e", [5, 7]),
    ("~r", [6, 8]),
    ("#3", [3, 6]),
    ("#6", [6, 8]),
    ("~v OC-05", [3, 6]),
    ("~v oc-17", [3, 6]),
    ("~v OC-0", []),  # whole rule ids only
    ("~v error", [3, 6]),
    ("~v warning", []),
    ("~tool scrape_webpage", [3, 6]),
    ("~tool scrape", []),  # a whole tool name
    ("OC-05", [3, 6]),
    ("Lyon", [7]),
    ("Invalid schema", [7]),  # two words: both
    ('"Invalid schema"', [7]),
    ('"schema Invalid"', []),
    ("upstream unreachable", [5]),
    ("~r & ~v error", [6]),
    ("~r ~v error", [6]),
    ("~r | ~e", [5, 6, 7, 8]),
    ("!~dialect chat", [7]),
    ("!(~r | ~e)", [1, 2, 3, 4]),
    ("~dialect chat & !(~c 200 | ~v error)", [5]),
    ("100%_", []),  # LIKE wildcards are literal
])
def test_expressions_find_exactly_these_flows(store, expression, ids):
    assert found(store, expression) == ids


@pytest.mark.parametrize(("expression", "message", "position"), [
    ("~x foo", "unknown filter ~x (known: ~R, ~S, ~b, ~bq, ~bs, ~c, ~d, ~dialect, ~e, ~h, ~hq, ~hs, ~m, ~marked, ~model, ~q, ~r, "
               "~replay, ~s, ~t, ~tool, ~tq, ~ts, ~u, ~v, ~w, ~websocket) (at 1)", 0),
    ("~d", "~d needs a value (at 3)", 2),
    ("~d (", "~d needs a value (at 4)", 3),
    ("~dialectx chat", "unknown filter ~dialectx (known: ~R, ~S, ~b, ~bq, ~bs, ~c, ~d, ~dialect, ~e, ~h, ~hq, ~hs, ~m, "
                       "~marked, ~model, ~q, ~r, ~replay, ~s, ~t, ~tool, ~tq, ~ts, ~u, ~v, ~w, ~websocket) (at 1)", 0),
    ("(~r | ~e", "missing ) (at 9)", 8),
    ("~r )", "unexpected ')' (at 4)", 3),
    ("~r |", "expected a filter (at 5)", 4),
    ("! ", "expected a filter (at 3)", 2),
    ('"Lyon', "unclosed quote (at 1)", 0),
    ("~c 4o4", "~c wants a status like 400, 4xx or 5, not '4o4' (at 4)", 3),
    ("~c 4000", "~c wants a status like 400, 4xx or 5, not '4000' (at 4)", 3),
])
def test_parse_errors_say_what_and_where(expression, message, position):
    with pytest.raises(FilterError) as raised:
        compile_filter(expression)
    assert (str(raised.value), raised.value.position) == (message, position)


def test_mitmproxy_s_letters_mean_what_they_mean_there(store):
    """~d domain, ~m method, ~c code, ~u URL, ~h header, ~b body, ~t content type, ~q no response,
    ~s a response, ~replay; each with the one-sided forms mitmproxy has (q: request, s: response)."""
    save_flow(store, clean_request(), offset=13, upstream="https://api.anthropic.com", path="/v1/messages",
              headers=[("Content-Type", "application/json; charset=utf-8"), ("anthropic-version", "2023-06-01")])
    save_flow(store, {}, offset=14, method="GET", path="/mcp", status=None,
              headers=[("accept", "text/event-stream")], upstream="http://localhost:3000")
    assert {expression: found(store, expression) for expression in [
        "~d anthropic.com", "~d 127.0.0.1", "~d localhost", "~d v1",  # the host only, never the path
        "~m get", "~m POS",  # whole methods
        "~u /v1/messages", "~u 127.0.0.1:9/v1beta",
        '~h "anthropic-version: 2023"', "~hq anthropic-version", "~hs anthropic-version",
        '~h "content-type: text/event-stream"', "~hs text/event-stream", "~hq text/event-stream",
        "~t event-stream", "~ts event-stream", "~tq event-stream", "~tq charset=utf-8", "~t authorization",
        "~b Lyon", "~bq Lyon", "~bs Lyon", "~bq scrape_webpage", "~bs scrape_webpage",
        "~q", "~s & ~d anthropic", "~replay", "~r",
    ]} == {
        "~d anthropic.com": [9], "~d 127.0.0.1": [1, 2, 3, 4, 5, 6, 7, 8], "~d localhost": [10], "~d v1": [],
        "~m get": [10], "~m POS": [],
        "~u /v1/messages": [9], "~u 127.0.0.1:9/v1beta": [7],
        '~h "anthropic-version: 2023"': [9], "~hq anthropic-version": [9], "~hs anthropic-version": [],
        '~h "content-type: text/event-stream"': [4], "~hs text/event-stream": [4], "~hq text/event-stream": [10],
        "~t event-stream": [4], "~ts event-stream": [4], "~tq event-stream": [], "~tq charset=utf-8": [9],
        "~t authorization": [],
        "~b Lyon": [7], "~bq Lyon": [7], "~bs Lyon": [], "~bq scrape_webpage": [3, 6], "~bs scrape_webpage": [3],
        "~q": [10], "~s & ~d anthropic": [9], "~replay": [6, 8], "~r": [6, 8],
    }


def test_session_filter_takes_a_session_number(store):
    assert (found(store, "~S 1"), found(store, "~S 2"), found(store, "~S 3"), found(store, "~S 99")) == (
        [1], [2, 3, 4, 5, 6], [7, 8], [])
    assert found(store, "!~S 2 & ~r") == [8]
    for value in ("two", "-1", "1.5", "1234567890123456789"):
        with pytest.raises(FilterError, match=rf"^~S wants a session number, not '{re.escape(value)}' \(at 4\)$"):
            compile_filter(f"~S {value}")


def test_a_header_column_that_is_not_json_matches_no_header_filter(store):
    """A store written by something else (or damaged) does not break the listing: the row just has no headers."""
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE flows SET request_headers = X'7B6E6F74' WHERE id = 1")  # b"{not"
    assert found(store, "~hq content-type") == [2, 3, 4, 5, 6, 7, 8]


def test_rules_column_is_whole_ids_sorted_once():
    assert rules_text(["OC-17", "OC-05", "OC-05"]) == " OC-05 OC-17 "
    assert rules_text([]) == ""


def test_stored_usage_per_flow(store):
    # The mock's chat completion reports 10 in, 5 out; the stream (4) and the Gemini error (7) none.
    assert [(row.id, row.tokens_in, row.tokens_out) for row in store.rows()] == [
        (1, 10, 5), (2, 10, 5), (3, 10, 5), (4, None, None), (5, 10, 5), (6, 10, 5), (7, None, None), (8, 10, 5)]


def test_stored_rule_ids_per_flow(store):
    assert [(row.id, row.errors) for row in store.rows(text="~v error")] == [(3, 3), (6, 3)]
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("SELECT id, rules FROM flows WHERE rules != '' ORDER BY id").fetchall() == [
            (3, " OC-05 OC-17 "), (6, " OC-05 OC-17 ")]


def test_sort_orders_end_on_the_newest_and_slowest_and_start_on_the_worst(store):
    assert [r.id for r in store.rows(order="time")] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert [r.id for r in store.rows(order="issues")] == [3, 6, 1, 2, 4, 5, 7, 8]
    assert [r.id for r in store.rows(order="latency", text="~dialect chat")] == [4, 1, 2, 3, 5, 6, 8]  # the stream is quickest


def as_schema_3(store: Store) -> None:
    """The store's file as schema 3 left it: no rule ids, no usage, no buffered streams."""
    store.flush()
    with sqlite3.connect(store.path) as conn:
        for column in ("rules", "tokens_in", "tokens_out", "buffered", "route", "analysis", "websocket", "socket_of", "continues", "history"):
            conn.execute(f"ALTER TABLE flows DROP COLUMN {column}")
        conn.execute("ALTER TABLE sessions DROP COLUMN findings")
        conn.execute("PRAGMA user_version=3")
    store.close()


def test_a_read_only_store_before_schema_4_filters_without_rule_ids(tmp_path, store):
    store.flush()
    as_schema_3(store)
    with Store(tmp_path / "flows.sqlite3", read_only=True) as old:
        assert found(old, "~v OC-05") == []
        assert found(old, "Lyon | ~v error") == [3, 6, 7]
        assert {(row.tokens_in, row.tokens_out, row.buffered) for row in old.rows()} == {(None, None, False)}


def _rules_and_usage(path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT id, rules, tokens_in, tokens_out FROM flows ORDER BY id").fetchall()


def test_opening_an_old_store_migrates_it_to_schema_4_and_backfills_rule_ids(tmp_path, store):
    store.flush()
    analysed = _rules_and_usage(store.path)  # what schema 4's analysis stored for every flow
    assert [(flow_id, rules) for flow_id, rules, *_ in analysed if rules] == [
        (3, " OC-05 OC-17 "), (6, " OC-05 OC-17 ")]
    as_schema_3(store)
    with Store(tmp_path / "flows.sqlite3") as migrated:
        # The flows analysed before schema 4 are analysed again on the writer thread, in batches,
        # so that filters by rule find them too; the caller is never made to wait for it.
        deadline = time.monotonic() + 10
        while _rules_and_usage(migrated.path) != analysed and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _rules_and_usage(migrated.path) == analysed
        assert found(migrated, "~v OC-05") == [3, 6]
        save_flow(migrated.new_session("u", "l") and migrated, defective_request(), response=chat_completion("ok"))
        assert found(migrated, "~v OC-05") == [3, 6, 9]
        with sqlite3.connect(migrated.path) as conn:  # done: nothing is left to backfill
            assert conn.execute("SELECT * FROM meta WHERE key = 'rules_backfill_below'").fetchall() == []


def _stored_analyses(path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT id, analysis FROM flows ORDER BY id").fetchall()


def test_opening_a_schema_6_store_analyses_its_flows_again_in_the_background(tmp_path, store):
    store.flush()
    stored = _stored_analyses(store.path)  # what schema 7's writer stored for every flow
    assert [flow_id for flow_id, blob in stored if blob is not None] == list(range(1, 9))
    store.close()
    with sqlite3.connect(store.path) as conn:
        for column in ("analysis", "websocket", "socket_of", "continues", "history"):
            conn.execute(f"ALTER TABLE flows DROP COLUMN {column}")
        conn.execute("ALTER TABLE sessions DROP COLUMN findings")
        conn.execute("PRAGMA user_version=6")
    with Store(tmp_path / "flows.sqlite3") as migrated:
        deadline = time.monotonic() + 10
        while _stored_analyses(migrated.path) != stored and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _stored_analyses(migrated.path) == stored
        before = analysis.calls.copy()
        opened = {flow_id: migrated.analysis(flow) for flow_id in range(1, 9)
                  if (flow := migrated.get(flow_id)) is not None}
        assert (analysis.calls - before)["analyse"] == 0
        assert [(flow_id, [v.rule for v in found.violations]) for flow_id, found in opened.items()
                if found.violations] == [(3, ["OC-05", "OC-05", "OC-17"]), (6, ["OC-05", "OC-05", "OC-17"])]


@pytest.mark.parametrize("order", ["time", "latency", "issues", "route"])
@pytest.mark.parametrize("expression", ["", "~dialect chat", "!~r"])
def test_index_of_is_the_position_in_rows(store, order, expression):
    listed = [row.id for row in store.rows(text=expression, order=order)]
    assert [store.index_of(flow_id, text=expression, order=order) for flow_id in range(1, 10)] == [
        listed.index(flow_id) if flow_id in listed else None for flow_id in range(1, 10)]


def test_route_filter_matches_the_whole_route_name(store):
    save_flow(store, clean_request(), offset=13, route="openai")
    save_flow(store, clean_request(), offset=14, route="Anthropic")
    assert [(row.id, row.route) for row in store.rows(text="#9 | #10")] == [(9, "openai"), (10, "Anthropic")]
    assert found(store, "~R openai") == [9]
    assert found(store, "~R anthropic") == [10]  # names match case-insensitively
    assert found(store, "~R open") == []  # whole names only
    assert found(store, '~R ""') == [1, 2, 3, 4, 5, 6, 7, 8]  # the unnamed route (--upstream)
    assert found(store, "~R openai | ~R Anthropic") == [9, 10]
    assert found(store, "!~R openai & ~r") == [6, 8]
    with pytest.raises(FilterError, match=r"^~R needs a value \(at 3\)$"):
        compile_filter("~R")


def test_route_order_groups_the_flows_of_each_route(store):
    save_flow(store, clean_request(), offset=13, route="openai")
    save_flow(store, clean_request(), offset=14, route="anthropic")
    save_flow(store, clean_request(), offset=15, route="openai")
    assert [(row.id, row.route) for row in store.rows(order="route", text="~R openai | ~R anthropic | #1")] == [
        (1, ""), (10, "anthropic"), (9, "openai"), (11, "openai")]
    assert store.index_of(11, order="route") == 10  # after the eight unnamed-route flows and #10, #9


def test_a_read_only_store_before_routes_orders_by_route_as_by_time(tmp_path, store):
    as_schema_4(store)
    with Store(tmp_path / "flows.sqlite3", read_only=True) as old:
        assert [row.id for row in old.rows(order="route")] == [1, 2, 3, 4, 5, 6, 7, 8]


def as_schema_4(store: Store) -> None:
    """The store's file as schema 4 left it: no buffered-stream mark, no route column, no stored analysis."""
    store.flush()
    with sqlite3.connect(store.path) as conn:
        for column in ("buffered", "route", "analysis", "websocket", "socket_of", "continues", "history"):
            conn.execute(f"ALTER TABLE flows DROP COLUMN {column}")
        conn.execute("ALTER TABLE sessions DROP COLUMN findings")
        conn.execute("PRAGMA user_version=4")
    store.close()


def test_a_read_only_store_at_schema_4_lists_every_flow_on_the_unnamed_route(tmp_path, store):
    as_schema_4(store)
    with Store(tmp_path / "flows.sqlite3", read_only=True) as old:
        assert {row.route for row in old.rows()} == {""}
        assert found(old, '~R ""') == [1, 2, 3, 4, 5, 6, 7, 8]
        assert found(old, "~R openai") == []
        assert (old.get(7).route, old.get(7).path) == ("", "/v1beta/models/gemini-2.5-flash:generateContent")


def test_opening_a_schema_4_store_migrates_it_to_this_schema(tmp_path, store):
    as_schema_4(store)
    with Store(tmp_path / "flows.sqlite3") as migrated:
        assert found(migrated, '~R ""') == [1, 2, 3, 4, 5, 6, 7, 8]
        save_flow(migrated.new_session("u", "l") and migrated, clean_request(), route="gemini")
        assert found(migrated, "~R gemini") == [9]
        assert (migrated.get(9).route, migrated.get(3).route) == ("gemini", "")
    with sqlite3.connect(tmp_path / "flows.sqlite3") as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
