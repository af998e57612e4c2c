"""The exported page in a real headless Chromium, offline from file://: the demo's failing turn with
its finding on its line and its fix, the conversation, the replay, the filters, and not one request
besides the file itself. `pytest -m browser` runs these alone; they need the browser extra
(`pip install -e '.[browser]'`) and a Chromium (`apt-get install chromium`), and skip without."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.flow import Flow, FlowState
from inspector.html import render
from inspector.store import Store

from .browser import browser, chromium_path, offline_page
from .conftest import FAILING

pytest.importorskip("playwright.sync_api", reason="the browser tests need the browser extra: "
                                                  "pip install -e '.[browser]'")
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(chromium_path() is None,
                                 reason="no Chromium found: apt-get install chromium, or set TOOLWIRE_CHROMIUM")]


@pytest.fixture(scope="module")
def chromium():
    with browser() as launched:
        yield launched


@pytest.fixture(scope="module")
def session_page(demo_store, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("page")
    done = subprocess.run([sys.executable, "-m", "inspector", "export", "--session", "--format", "html",
                           "-o", str(folder), "--store", str(demo_store)], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return folder / "session-1.html"


def shown_ids(page) -> list[int]:
    return [int(row) for row in page.eval_on_selector_all(
        "#flow-list .rows .row:not([hidden])", "rows => rows.map(row => row.dataset.flow)")]


def texts(page, selector: str) -> list[str]:
    return page.eval_on_selector_all(selector, "nodes => nodes.map(node => node.textContent)")


def test_the_failing_turn_shows_its_finding_on_its_line_its_fix_and_its_replay(chromium, session_page):
    with offline_page(chromium) as watched:
        page = watched.page
        page.goto(session_page.as_uri())
        assert page.title() == "session 1 · toolwire-inspect"
        assert page.text_content("#shown-count") == "12 of 12 flows"
        page.click(f'#flow-list .row[data-flow="{FAILING}"]')
        assert page.text_content("#flow-title") == "#3 POST /v1/chat/completions · 400 · openai-chat · gpt-4.1-mini"
        assert page.evaluate("location.hash") == "#flow-3"
        # The finding in the list and on its line of the request, with the provider's why and the fix.
        assert texts(page, ".findings tbody tr td.rule") == ["OC-05"] * 5
        first = page.locator(".findings tbody tr").first
        assert first.locator(".message").text_content() == (
            "function 'scrape_webpage': type 'OBJECT' is upper-case (genai Schema); JSON Schema wants 'object'")
        assert first.locator(".fix").text_content().startswith("fix: Convert the genai Schema to JSON Schema")
        line = page.locator('section[data-pane="request"] li[data-line="15"]')
        assert line.get_attribute("class") == "mark-error"
        assert line.locator(".text").text_content() == '          "type": "OBJECT",'
        assert line.locator("xpath=following-sibling::li[1]").text_content() == (
            "▲ OC-05 error · function 'scrape_webpage': type 'OBJECT' is upper-case (genai Schema); "
            "JSON Schema wants 'object'")
        first.click()
        assert line.get_attribute("class") == "mark-error flash"
        # The conversation: the user's turn, then the provider's refusal as the response's new turn.
        page.click('button[data-tab="conversation"]')
        assert texts(page, "#tab-conversation .conversation > ol.lines:first-of-type .text")[:3] == [
            "#0 user  /messages/0", "   Summarise https://example.org", "#1 error · response (new turn)"]
        # The fix, each repair under its line, and the fixed replay's answer against the refusal.
        page.click('button[data-tab="diffs"]')
        fixed = page.locator('section[data-diff="original → fixed"]')
        assert fixed.locator("h3").text_content() == "#3 original → fixed (R replays it)"
        assert fixed.locator("p.note").text_content() == "+1 −3 ~2 · 5 notes · 5 repairs · 0 errors left"
        assert texts(page, 'section[data-diff="original → fixed"] > ol.lines:first-of-type li.mark-changed .text')[0] \
            == '~           "type": "OBJECT" → "object"'
        replay = page.locator('section[data-diff="response → replay"]')
        assert replay.locator("h3").text_content() == "response of #3 (400) → replay #12 (200)"
        assert '+               "name": "scrape_webpage"' in texts(
            page, 'section[data-diff="response → replay"] li.mark-added .text')
        assert (watched.requests, watched.errors, watched.dialogs, watched.console) == (
            [session_page.as_uri()], [], [], [])


def test_the_filters_choose_the_flows_by_the_facts_the_export_computed(chromium, session_page):
    with offline_page(chromium) as watched:
        page = watched.page
        page.goto(session_page.as_uri())
        page.select_option("#filter-rule", "OC-05")
        assert (shown_ids(page), page.text_content("#shown-count")) == ([FAILING, 11], "2 of 12 flows")
        page.select_option("#filter-rule", "")
        page.check("#filter-errors")
        assert shown_ids(page) == [3, 4, 5, 6, 8]
        page.check("#filter-warnings")
        assert shown_ids(page) == [3, 4]
        page.uncheck("#filter-errors")
        page.uncheck("#filter-warnings")
        page.select_option("#filter-status", "2xx")
        assert shown_ids(page) == [1, 2, 7, 9, 10, 11, 12]
        page.select_option("#filter-replay", "only")
        assert shown_ids(page) == [12]
        page.select_option("#filter-replay", "")
        page.select_option("#filter-status", "")
        page.select_option("#filter-dialect", "anthropic")
        assert shown_ids(page) == [8]
        page.select_option("#filter-dialect", "")
        page.select_option("#filter-tool", "web_search")
        assert shown_ids(page) == [7]
        page.select_option("#filter-tool", "")
        page.fill("#filter-text", "#3")  # as in the filter grammar: the flow and its replays
        assert shown_ids(page) == [3, 12]
        page.fill("#filter-text", "gemini")
        assert shown_ids(page) == [9]
        page.fill("#filter-text", "Summarise")  # only in a payload
        assert shown_ids(page) == []
        page.check("#filter-payloads")
        assert shown_ids(page) == [3, 11, 12]
        page.fill("#filter-text", "")
        assert page.text_content("#shown-count") == "12 of 12 flows"
        # j/k walk the flows the filters show.
        page.select_option("#filter-status", "4xx")
        page.click('#flow-list .row[data-flow="3"]')
        page.keyboard.press("j")
        assert page.text_content("#flow-title").startswith("#4 ")
        page.keyboard.press("k")
        assert page.text_content("#flow-title").startswith("#3 ")
        assert (watched.requests, watched.errors, watched.dialogs) == ([session_page.as_uri()], [], [])


HOSTILE = '<img src="http://127.0.0.1:9/x.png" onerror="alert(1)"></script><script>alert(2)</script>'


def test_recorded_markup_stays_text_and_fetches_nothing(chromium, tmp_path):
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": HOSTILE}]}).encode()
    with Store(tmp_path / "s.db") as store:
        store.new_session("http://127.0.0.1:1", "127.0.0.1:0")
        store.save(Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=1767225600.0, method="POST",
                        path="/v1/chat/completions", request_body=body, status=500, response_body=HOSTILE.encode(),
                        state=FlowState.COMPLETE, error=HOSTILE))
        store.flush()
        (tmp_path / "page.html").write_bytes(render(store, [1], title=HOSTILE))
    with offline_page(chromium) as watched:
        page = watched.page
        page.goto((tmp_path / "page.html").as_uri() + "#flow-1")
        assert page.title() == HOSTILE + " · toolwire-inspect"
        assert page.text_content("#detail p.error") == HOSTILE
        assert texts(page, 'section[data-pane="response"] .text') == [HOSTILE]
        page.click('button[data-tab="conversation"]')
        assert "   " + HOSTILE in texts(page, "#tab-conversation .text")
        assert page.locator("img").count() == 0
        assert page.locator("script").count() == 2
        assert (watched.requests, watched.errors, watched.dialogs) == ([(tmp_path / "page.html").as_uri()], [], [])
