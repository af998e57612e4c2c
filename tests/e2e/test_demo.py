"""The built-in demo really runs: scripted agent → forwarder → fake upstream, every turn recorded
and the seeded defects caught with their rule ids."""

import subprocess
import sys

import httpx
import orjson
import pytest

from inspector.analysis import analyse
from inspector.demo import demo_upstream, run_agent
from inspector.demo_script import DEMO_API_KEY, TURNS
from inspector.mock import Received, provider_refusal
from inspector.proxy import Forwarder
from inspector.flow import ReplayKind
from inspector.replay import replay_stored
from inspector.store import Store
from inspector.proxy.options import Options


def test_demo_turns_are_recorded_with_their_violations(tmp_path):
    store = Store(tmp_path / "demo.sqlite3")
    with demo_upstream(interval=0.0) as upstream, Forwarder(Options(upstream.base_url, port=0), store=store) as forwarder:
        statuses = run_agent(forwarder.base_url)
        store.flush()
    assert statuses == [turn.status for turn in TURNS]
    found = {row.id: sorted((v.rule, v.severity.value, v.pointer) for v in analyse(store.get(row.id)).violations)
             for row in store.rows()}
    store.close()
    params = "/tools/0/function/parameters"
    assert found == {
        1: [],
        2: [],
        3: [  # seed 000: a genai Schema sent as-is
            ("OC-05", "error", params + "/properties/render_js/type"),
            ("OC-05", "error", params + "/properties/url/type"),
            ("OC-05", "error", params + "/type"),
            ("OC-05", "warning", params + "/properties/render_js/nullable"),
            ("OC-05", "warning", params + "/propertyOrdering"),
        ],
        4: [  # seed 003: double-encoded arguments, tool message without content
            ("OC-15", "warning", "/messages/1/tool_calls/0/function/arguments"),
            ("OC-17", "error", "/messages/2/content"),
        ],
        5: [("OC-02", "error", "/tools/2/function/name"), ("XL-03", "error", "/tools/1/function/name")],
        6: [("OC-18", "error", "/messages/3/tool_call_id"), ("OC-19", "error", "/messages/1/tool_calls/0/id")],
        7: [],
        8: [("AN-09", "error", "/messages/2/content/0")],
        9: [],
    }
    for path in tmp_path.iterdir():
        assert DEMO_API_KEY.encode() not in path.read_bytes(), path.name


def test_demo_headless_command_prints_every_flow(tmp_path):
    done = subprocess.run([sys.executable, "-m", "inspector", "demo", "--headless", "--store", str(tmp_path / "d.db")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [f"#{i}" for i in range(1, len(TURNS) + 1)]


@pytest.mark.parametrize("number", range(1, len(TURNS) + 1))
def test_each_turn_s_scripted_status_is_what_the_rules_say_the_provider_answers(number):
    """The demo tells the truth: a turn scripted to fail is one the checker says the provider
    rejects, and a turn scripted to pass is one it accepts."""
    turn = TURNS[number - 1]
    refused = provider_refusal(Received("POST", turn.path, "", [], turn.body))
    assert (refused is not None) == (turn.status == 400), turn.title


def test_a_failing_turn_fails_again_as_recorded_and_passes_only_fixed(tmp_path):
    store = Store(tmp_path / "demo.sqlite3")
    with demo_upstream(interval=0.0) as upstream, Forwarder(Options(upstream.base_url, port=0), store=store) as forwarder:
        run_agent(forwarder.base_url, TURNS[:3])
        store.flush()
        again = replay_stored(store, forwarder, 3)
        fixed = replay_stored(store, forwarder, 3, kind=ReplayKind.FIXED)
        store.flush()
        recorded, as_recorded, with_fixes = store.get(3), store.get(again), store.get(fixed)
    store.close()
    assert (recorded.status, as_recorded.status, with_fixes.status) == (400, 400, 200)
    assert as_recorded.response_body == recorded.response_body  # the provider's own words, both times
    assert orjson.loads(with_fixes.response_body)["choices"][0]["message"] == {
        "role": "assistant", "content": "Hello from the mock upstream."}


@pytest.mark.parametrize(("path", "body", "answer"), [
    ("/v1/chat/completions",
     {"model": "m", "messages": [{"role": "user", "content": "hi"}],
      "tools": [{"type": "function", "function": {"name": "a.b", "parameters": {"type": "object"}}}]},
     {"error": {"message": "tool name 'a.b' does not match ^[a-zA-Z0-9_-]+$ (OC-02)",
                "type": "invalid_request_error", "param": "tools[0].function.name", "code": None}}),
    ("/v1/responses",
     {"model": "m", "input": [{"type": "function_call_output", "call_id": "c1", "output": "x"}]},
     {"error": {"message": "no function_call with call_id 'c1' precedes this output (\"No tool call found\") (OR-08)",
                "type": "invalid_request_error", "param": "input[0].call_id", "code": None}}),
    ("/v1/messages",
     {"model": "m", "max_tokens": 8, "messages": [
         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}]},
     {"type": "error", "error": {"type": "invalid_request_error", "message":
                                 "tool_result answers 'toolu_1', which the previous message did not call (AN-08)"}}),
    ("/v1beta/models/gemini-2.5-flash:generateContent",
     {"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}],
      "tools": [{"functionDeclarations": [{"name": "f.g"}]}]},
     {"error": {"code": 400, "status": "INVALID_ARGUMENT",
                "message": "a function-response turn must directly follow its function-call turn (GM-10)"}}),
])
def test_an_unscripted_request_the_provider_rejects_gets_that_provider_s_400(path, body, answer):
    with demo_upstream(interval=0.0) as upstream:
        response = httpx.post(upstream.base_url + path, json=body)
    assert (response.status_code, response.json()) == (400, answer)


def test_a_request_the_provider_accepts_gets_a_plain_answer_and_a_near_miss_name_passes():
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "a_b-c", "parameters": {"type": "object", "properties": {}}}}]}
    with demo_upstream(interval=0.0) as upstream:
        response = httpx.post(upstream.base_url + "/v1/chat/completions", json=body)
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == "Hello from the mock upstream."
