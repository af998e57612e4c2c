"""The HTML export without a browser: what the page holds (the TUI's view models, exactly), that it
can fetch nothing, and that no recorded byte becomes markup. The browser tests open it for real."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import orjson
import pytest

from inspector import analysis
from inspector.demo_script import DEMO_API_KEY
from inspector.flow import Flow, FlowState
from inspector.html import embedded_json, render
from inspector.store import Store
from inspector.tui.compare import prepare_conversation
from inspector.tui.view import prepare
from inspector.proxy.options import Options

from .conftest import FAILING

DATA = re.compile(r'<script type="application/json" id="toolwire-data">(.*?)</script>', re.S)
SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)
STYLE = re.compile(r"<style>(.*?)</style>", re.S)
POLICY = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')


def page_data(page: str) -> dict:
    """The page's data as its script reads it: each index into the table of strings replaced by its string."""
    (block,) = DATA.findall(page)
    data = json.loads(block)
    strings = data["strings"]
    assert len(set(strings)) == len(strings)  # each string once

    def lines(part: dict) -> None:
        part["lines"] = [strings[index] for index in part["lines"]]

    for flow in data["flows"]:
        for pane in flow["panes"].values():
            lines(pane)
        lines(flow["conversation"]["turns"])
        lines(flow["conversation"]["tools"])
        for made in flow["diffs"]:
            lines(made["rows"])
            if made["notes"] is not None:
                lines(made["notes"])
        flow["headers"] = [strings[index] for index in flow["headers"]]
        flow["chunks"] = [strings[index] for index in flow["chunks"]]
        for finding in flow["findings"]:
            for text in ("message", "why", "hint"):
                finding[text] = strings[finding[text]]
    return data


def sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def cli(*argv: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "inspector", *argv], capture_output=True, timeout=60)


def session_page(store_path: Path) -> str:
    with Store(store_path, read_only=True) as store:
        return render(store, [row.id for row in store.rows()], title="session 1").decode()


def test_the_demo_session_page_lists_every_flow_with_the_facts_the_filters_read(demo_store):
    data = page_data(session_page(demo_store))
    assert (data["format"], data["version"], data["title"]) == ("toolwire-page", 2, "session 1")
    facts = [(f["id"], f["status"], f["dialect"], f["rules"], f["tool_names"], f["errors"], f["warnings"],
              f["replay_of"], [d["name"] for d in f["diffs"]]) for f in data["flows"]]
    # The fix where there is one to show; the replay comparison on both sides of the replay.
    fixed = "original → fixed"
    assert facts == [
        (1, 200, "openai-chat", [], ["get_weather"], 0, 0, None, []),
        (2, 200, "openai-chat", [], ["get_weather"], 0, 0, None, []),
        (3, 400, "openai-chat", ["OC-05"], ["scrape_webpage"], 3, 2, None, [fixed, "response → replay"]),
        (4, 400, "openai-chat", ["OC-15", "OC-17"], ["read_file"], 1, 1, None, [fixed]),
        (5, 400, "openai-chat", ["OC-02", "XL-03"], ["github.search_code", "list_issues"], 2, 0, None, [fixed]),
        (6, 400, "openai-chat", ["OC-18", "OC-19"], ["book_train"], 2, 0, None, [fixed]),
        (7, 200, "openai-responses", [], ["get_weather", "web_search"], 0, 0, None, []),
        (8, 400, "anthropic", ["AN-09"], ["get_weather"], 1, 0, None, [fixed]),
        (9, 200, "gemini", [], ["get_weather"], 0, 0, None, []),
        # The demo's translate route (its two losses are warnings) and repair route (the client's
        # defects, repaired: info).
        (10, 200, "openai-chat", ["XL"], ["get_weather"], 0, 2, None,
         ["original → sent upstream", "upstream answer → client got"]),
        (11, 200, "openai-chat", ["OC-05"], ["scrape_webpage"], 0, 0, None, ["original → sent upstream", fixed]),
        (12, 200, "openai-chat", [], ["scrape_webpage"], 0, 0, FAILING, ["response → replay"]),
    ]


def test_the_failing_turn_carries_the_tui_s_panes_findings_conversation_and_diffs(demo_store):
    data = page_data(session_page(demo_store))
    flow = data["flows"][FAILING - 1]
    with Store(demo_store, read_only=True) as store:
        view = prepare(store.get(FAILING))
    conversation = prepare_conversation(view)
    # One pane for the request: it went upstream unchanged. Each finding on the line the TUI marks.
    assert list(flow["panes"]) == ["request", "response"]
    assert flow["panes"]["request"]["title"] == "Request · sent upstream unchanged"
    assert flow["panes"]["request"]["lines"] == view.request.lines()
    assert flow["panes"]["request"]["marks"] == [[15, "error"], [18, "error"], [21, "error"], [22, "warning"],
                                                 [28, "warning"]]
    assert flow["panes"]["response"]["lines"] == view.response.lines()
    assert [(f["rule"], f["severity"], f["pointer"], f["lines"]["request"]) for f in flow["findings"]] == [
        ("OC-05", "error", "/tools/0/function/parameters/type", 15),
        ("OC-05", "error", "/tools/0/function/parameters/properties/url/type", 18),
        ("OC-05", "error", "/tools/0/function/parameters/properties/render_js/type", 21),
        ("OC-05", "warning", "/tools/0/function/parameters/properties/render_js/nullable", 22),
        ("OC-05", "warning", "/tools/0/function/parameters/propertyOrdering", 28),
    ]
    assert flow["panes"]["request"]["lines"][15] == '          "type": "OBJECT",'
    assert flow["findings"][0]["message"] == (
        "function 'scrape_webpage': type 'OBJECT' is upper-case (genai Schema); JSON Schema wants 'object'")
    assert flow["conversation"] == {
        "title": conversation.title,
        "turns": {"lines": conversation.turns.lines, "marks": [list(m) for m in sorted(conversation.turns.marks.items())]},
        "tools": {"lines": conversation.tools.lines, "marks": [list(m) for m in sorted(conversation.tools.marks.items())]},
    }
    fixed, replay = flow["diffs"]
    assert (fixed["title"], fixed["summary"]) == ("#3 original → fixed (R replays it)",
                                                  "+1 −3 ~2 · 5 notes · 5 repairs · 0 errors left")
    assert fixed["rows"]["lines"][10:12] == ['~           "type": "OBJECT" → "object"',
                                             "              ▲ converted: genai type 'OBJECT' written as JSON Schema "
                                             "'object' [OC-05]"]
    assert (replay["title"], replay["summary"]) == ("response of #3 (400) → replay #12 (200)", "+6 −1 ~0")
    assert replay["notes"] is None


def test_the_page_can_fetch_nothing_and_runs_only_its_own_script_and_style(demo_store):
    page = session_page(demo_store)
    (policy,) = POLICY.findall(page)
    (script,) = SCRIPT.findall(page)
    (style,) = STYLE.findall(page)
    assert policy == (f"default-src 'none'; script-src {sha256(script)}; style-src {sha256(style)}; img-src 'none'; "
                      "connect-src 'none'; font-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; "
                      "worker-src 'none'; manifest-src 'none'; form-action 'none'; base-uri 'none'")
    # The policy comes before anything it governs; nothing in the page names another resource.
    assert page.index("Content-Security-Policy") < page.index("<style>") < page.index("<script")
    assert re.findall(r"\b(?:src|href)\s*=", page) == []
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script and "eval(" not in script
    assert DEMO_API_KEY not in page


HOSTILE = ('</script><script>alert(1)</script><!-- <img src=x onerror=alert(2)> & "quotes" '
           "\u202eevil\u202c \x1b]52;c;aGk=\x07")


def test_no_recorded_byte_becomes_markup_and_the_data_reads_back_as_recorded(tmp_path):
    body = json.dumps({"model": HOSTILE, "messages": [{"role": "user", "content": HOSTILE}]}).encode()
    with Store(tmp_path / "s.db") as store:
        store.new_session("http://127.0.0.1:1", "127.0.0.1:0")
        store.save(Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=1767225600.0, method="POST",
                        path="/v1/chat/completions", query="q=</script>", request_body=body, status=200,
                        response_body=HOSTILE.encode(), state=FlowState.COMPLETE, error="<b>" + HOSTILE))
        store.flush()
        page = render(store, [1], title="<title>" + HOSTILE).decode()
    # The page's own two scripts, the JSON block's end and its script's end: nothing else opens or closes one.
    assert page.count("<script") == 2 and page.count("</script") == 2
    assert "<img" not in page and "<b>" not in page and "<!--" not in page and "\u202e" not in page
    assert "<title>&lt;title&gt;&lt;/script&gt;&lt;script&gt;alert(1)" in page
    flow = page_data(page)["flows"][0]
    shown = ('</script><script>alert(1)</script><!-- <img src=x onerror=alert(2)> & "quotes" '
             "\\u202eevil\\u202c \\x1b]52;c;aGk=\\x07")
    assert flow["model"] == shown
    assert flow["path"] == "/v1/chat/completions?q=</script>"
    assert flow["error"] == "<b>" + shown
    assert flow["panes"]["response"]["lines"] == [shown]
    # The pretty JSON writes C0 controls as JSON escapes, and `shown` the bidi controls as Python's.
    assert flow["panes"]["request"]["lines"][1] == '  "model": ' + json.dumps(HOSTILE) + ","


def test_embedded_json_escapes_what_could_end_the_script_element():
    text = embedded_json(orjson.dumps({"a": "</script><!--&>"}))
    assert text == '{"a":"\\u003c/script\\u003e\\u003c!--\\u0026\\u003e"}'
    assert json.loads(text) == {"a": "</script><!--&>"}


def test_each_line_and_finding_text_is_in_the_page_once(demo_store):
    """Issue 21: a 1,000-flow page carried every flow's lines whole (6.6 MB for the demo's turns over
    and over), though an agent sends its history again with every turn: each string is in the page's
    table once, so the same flows listed twice add not one string."""
    with Store(demo_store, read_only=True) as store:
        ids = [row.id for row in store.rows()]
        (once,), (twice,) = (DATA.findall(render(store, ids * n, title="t").decode()) for n in (1, 2))
    once_data, twice_data = json.loads(once), json.loads(twice)
    assert twice_data["strings"] == once_data["strings"]
    assert twice_data["flows"] == once_data["flows"] * 2
    lines = sum(len(pane["lines"]) for flow in once_data["flows"] for pane in flow["panes"].values())
    assert len(once_data["strings"]) < lines


def test_worker_processes_make_the_same_page(demo_store):
    with Store(demo_store, read_only=True) as store:
        ids = [row.id for row in store.rows()]
        assert render(store, ids, title="t", workers=2) == render(store, ids, title="t", workers=1)


def test_the_page_reads_the_analysis_the_store_kept(demo_store):
    """Issue 21: a 1,000-flow page took seconds analysing every flow again (and its replay's origin)
    when the store holds each flow's analysis already."""
    with Store(demo_store, read_only=True) as store:
        before = analysis.calls.copy()
        page = render(store, [row.id for row in store.rows()], title="t", workers=1)
    spent = analysis.calls - before
    assert spent["analyse"] == 0
    # Nor is any repaired request checked again: the writer counted the errors each one has left.
    assert spent["fixed-check"] == 0
    fixed = {flow["id"]: diff["summary"] for flow in page_data(page.decode())["flows"]
             for diff in flow["diffs"] if diff["name"] == "original → fixed"}
    assert fixed == FIXED_SUMMARIES


# The demo's fixed diffs, as the page lists them: the flows whose request a safe repair changes.
FIXED_SUMMARIES = {
    3: "+1 −3 ~2 · 5 notes · 5 repairs · 0 errors left",
    4: "+1 −0 ~1 · 2 notes · 2 repairs · 0 errors left",
    5: "+0 −1 ~1 · 2 notes · 2 repairs · 0 errors left",
    6: "+1 −1 ~0 · 2 notes · 2 repairs · 0 errors left",
    8: "+1 −1 ~0 · 1 note · 1 repair · 0 errors left",
    11: "+1 −3 ~2 · 5 notes · 5 repairs · 0 errors left",
}


def test_an_analysis_stored_before_it_counted_the_fixed_errors_gives_the_same_page(demo_store, tmp_path):
    """A store written by an earlier build has no count of the errors a fixed request has left: the
    page checks those requests itself, and says the same."""
    import shutil
    import sqlite3

    older = tmp_path / "older.sqlite3"
    shutil.copy(demo_store, older)
    with sqlite3.connect(older) as db:
        changed = db.execute("UPDATE flows SET analysis = CAST(json_remove(analysis, '$.fixed_errors') AS BLOB) "
                             "WHERE json_extract(analysis, '$.fixed_errors') IS NOT NULL").rowcount
    assert changed == len(FIXED_SUMMARIES)
    with Store(older, read_only=True) as store:
        ids = [row.id for row in store.rows()]
        before = analysis.calls.copy()
        page = render(store, ids, title="t", workers=1)
    assert (analysis.calls - before)["fixed-check"] == len(FIXED_SUMMARIES)
    with Store(demo_store, read_only=True) as store:
        assert page == render(store, ids, title="t", workers=1)


def test_the_page_is_a_registry_format_written_from_the_store(demo_store):
    """Issue 21: `export` and the TUI's `x` wrote html beside the registry, as a special case."""
    from inspector.formats import registry
    from inspector.formats.base import WriteOptions

    with Store(demo_store, read_only=True) as store:
        rows = store.rows()
        turns = registry.exported("html", store, rows)
        assert [(turn.flow_id, turn.data, turn.started_at) for turn in turns] == [
            (row.id, {}, row.started_at) for row in rows]
        assert registry.files("html", turns, "session-1", WriteOptions(store=store, title="session 1")) == [
            ("session-1.html", render(store, [row.id for row in rows], title="session 1"))]
        assert registry.files("html", turns[:2], None, WriteOptions(store=store)) == [
            ("flow-1.html", render(store, [1], title="flow #1")), ("flow-2.html", render(store, [2], title="flow #2"))]
        with pytest.raises(ValueError, match="written from the store"):
            registry.render("html", turns, WriteOptions())


def test_export_writes_the_page_of_a_flow_a_session_or_a_selection(demo_store, tmp_path):
    one = cli("export", str(FAILING), "--format", "html", "--store", str(demo_store))
    assert (one.returncode, one.stderr) == (0, b"")
    assert [f["id"] for f in page_data(one.stdout.decode())["flows"]] == [FAILING]
    done = cli("export", "--session", "--format", "html", "-o", str(tmp_path / "out"), "--store", str(demo_store))
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode() == f"wrote 1 file(s) for 12 flow(s) into {tmp_path / 'out'}\n"
    page = (tmp_path / "out" / "session-1.html").read_text()
    assert [f["id"] for f in page_data(page)["flows"]] == list(range(1, 13))
    assert (tmp_path / "out" / "session-1.html").stat().st_mode & 0o777 == 0o600
    again = cli("export", "--session", "--format", "html", "-o", str(tmp_path / "out"), "--store", str(demo_store))
    assert again.returncode == 2
    assert (tmp_path / "out" / "session-1.html").read_text() == page  # never replaced
    picked = cli("export", "--select", "~v OC-05 | ~r", "--format", "html", "-o", str(tmp_path / "sel"),
                 "--store", str(demo_store))
    assert picked.returncode == 0, picked.stderr
    data = page_data((tmp_path / "sel" / "selection.html").read_text())
    assert (data["title"], [f["id"] for f in data["flows"]]) == ("selection · ~v OC-05 | ~r", [FAILING, 11, 12])


@pytest.mark.parametrize("argv", [("--select", "~v"), ("--select", "~model nothing-like-this")])
def test_a_selection_that_does_not_parse_or_matches_nothing_is_a_clear_error(demo_store, tmp_path, argv):
    done = cli("export", *argv, "--format", "html", "-o", str(tmp_path), "--store", str(demo_store))
    assert done.returncode == 2
    assert done.stderr.decode().startswith("toolwire-inspect: ")
    assert list(tmp_path.iterdir()) == []


def test_a_translated_flow_shows_both_requests_both_answers_and_the_loss_report_on_its_lines(tmp_path):
    from inspector.mock import MockUpstream, json_response
    from inspector.proxy import Forwarder
    from inspector.tui.compare import prepare_response_diff, prepare_upstream_diff
    from inspector.wire.dialects.anthropic.mock import anthropic_message

    answer = anthropic_message("Sunny.")
    answer["content"].insert(0, {"type": "thinking", "thinking": "Paris, then.", "signature": "sig"})
    with Store(tmp_path / "s.db") as store, MockUpstream() as upstream:
        upstream.push(json_response(answer))
        with Forwarder(Options(upstream.base_url, port=0, translate="openai-chat:anthropic"), store=store) as forwarder:
            sent = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Weather in Paris?"}]}
            assert httpx.post(f"{forwarder.base_url}/v1/chat/completions", json=sent).status_code == 200
        view = prepare(store.get(1))
        (flow,) = page_data(render(store, [1], title="t").decode())["flows"]
    assert [(name, pane["title"]) for name, pane in flow["panes"].items()] == [
        ("request", "Request · as the client sent it"), ("upstream", "Sent upstream"), ("response", "Response"),
        ("upstream_response", "Upstream answer")]
    assert flow["panes"]["upstream"]["lines"] == view.upstream.lines()
    assert flow["panes"]["upstream_response"]["lines"] == view.upstream_response.lines()
    assert [d["name"] for d in flow["diffs"]] == ["original → sent upstream", "upstream answer → client got"]
    for made, expected in zip(flow["diffs"], (prepare_upstream_diff(view), prepare_response_diff(view)), strict=True):
        assert (made["title"], made["summary"], made["rows"]["lines"], made["notes"]["lines"]) == (
            expected.title, expected.summary, expected.lines.lines, expected.notes.lines)
    assert "        ▲ dropped: anthropic thinking block cannot cross to Chat [XL-14]" in flow["diffs"][1]["rows"]["lines"]
    assert [(f["rule"], f["where"], f["lines"]) for f in flow["findings"]] == [
        ("XL", "translation", {"request": 0, "upstream": 13}), ("XL-14", "translation", {})] == [
        (item.violation.rule, item.violation.where, item.lines) for item in view.violations]


@pytest.mark.parametrize("body", [
    b"", b"\xff\xfe\x00not utf-8", b'{"messages": [', b"[" * 1024 + b"]" * 1024,
    b'{"model": "m", "messages": ' + b"[" * 1000 + b"]" * 1000 + b"}", b'{"n": 123456789012345678901234567890}',
    b'"\\ud800 a lone surrogate"',
])
def test_any_recorded_bytes_give_a_page(tmp_path, body):
    with Store(tmp_path / "s.db") as store:
        store.new_session("http://127.0.0.1:1", "127.0.0.1:0")
        store.save(Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=1767225600.0, method="POST",
                        path="/v1/chat/completions", request_body=body, status=200, response_body=body,
                        state=FlowState.COMPLETE))
        store.flush()
        view = prepare(store.get(1))
        (flow,) = page_data(render(store, [1], title="t").decode())["flows"]
    assert flow["panes"]["request"]["lines"] == view.request.lines()
    assert flow["panes"]["response"]["lines"] == view.response.lines()
