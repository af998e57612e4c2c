"""Recorded text never reaches a terminal raw from the CLI (issue 16): every command that shows a
flow, a file name or a finding, run as a real subprocess on a real store and real files holding
control characters, OSC 52, CSI, C1, bidi and tag characters, prints none of them; a file name with
a newline cannot inject a GitHub workflow command; the JSON outputs stay JSON and escape them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from inspector.flow import Flow, FlowState
from inspector.store import Store
from inspector.textsafe import _HIDDEN

RAW = re.compile(f"[{_HIDDEN}]")
H = "\x1b]52;c;ZWNobyBvd25lZA==\x07\x1b[2J\x9b31m\u202eevil\u202c\U000e0041\x7f"
NAME = "a\n::error file=x::owned\x1b]52;c;eA==\x07.json"  # a file name that tries to start a workflow command

REQUEST = {"model": H, "x_" + H: 1, "tools": [{"type": "function", "function": {"name": "get_" + H, "parameters": {
    "type": "object", "properties": {}}}}], "messages": [{"role": "user", "content": H}]}
RESPONSE = {"id": H, "object": "chat.completion", "model": H, "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": None, "tool_calls": [
                {"id": H, "type": "function", "function": {"name": "run_" + H, "arguments": "{}"}}]}}]}


def run(*argv: str, cwd: Path) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-m", "inspector", *argv], capture_output=True, text=True, timeout=60,
                          cwd=cwd, errors="surrogateescape")
    assert "Traceback" not in done.stdout + done.stderr
    return done.returncode, done.stdout, done.stderr


def raw(text: str) -> list[str]:
    return sorted({ascii(c) for c in RAW.findall(text)})


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A real store with one flow carrying H in its method, path, route, model, keys, tool names,
    ids, headers and error; its session's upstream too."""
    with Store(tmp_path / "flows.sqlite3") as store:
        store.new_session("http://127.0.0.1:9/" + H, "http://127.0.0.1:8787")
        assert store.session_id is not None
        store.save(Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=1764581400.0,
                        method="POST" + H, path="/v1/chat/completions", request_body=orjson.dumps(REQUEST),
                        request_headers=[("content-type", "application/json"), ("x-" + H, H)],
                        upstream_url="http://127.0.0.1:9/v1/chat/completions", status=200, route=H,
                        response_headers=[("content-type", "application/json"), ("x-" + H, H)],
                        response_body=orjson.dumps(RESPONSE), state=FlowState.ERROR, error=H,
                        latency_ms=3.0))
    return tmp_path


def test_flows_as_a_table_and_as_json(hostile: Path) -> None:
    status, out, err = run("flows", "--store", "flows.sqlite3", cwd=hostile)
    assert (status, raw(out), raw(err)) == (0, [], [])
    assert "POST\\x1b]52;c;ZWNobyBvd25lZA==\\x07" in out
    status, out, err = run("flows", "--json", "--store", "flows.sqlite3", cwd=hostile)
    assert (status, raw(out), raw(err)) == (0, [], [])
    assert json.loads(out)[0]["method"] == "POST" + H


@pytest.fixture
def checked(hostile: Path) -> Path:
    """The flow exported as a fixture (which check reads as a recorded exchange, XL-16 and all),
    and a plain payload, each under the hostile name too."""
    status, out, err = run("export", "1", "--store", "flows.sqlite3", "-o", "turn.json", cwd=hostile)
    assert (status, raw(out), raw(err)) == (0, [], [])
    (hostile / ("turn-" + NAME)).write_bytes((hostile / "turn.json").read_bytes())
    (hostile / NAME).write_bytes(orjson.dumps(REQUEST))
    return hostile


def test_check_human_output(checked: Path) -> None:
    status, out, err = run("check", "--explain", "turn.json", "turn-" + NAME, NAME, cwd=checked)
    assert (status, raw(out), raw(err)) == (1, [], [])
    # The XL-16 tool list, a pointer built from a key, the file name: each shown, none raw.
    assert "the response calls 'run_\\x1b]52" in out and "/x_\\x1b]52;c;" in out
    assert "a\\n::error file=x::owned\\x1b]52" in out
    assert not [line for line in out.splitlines() if line.startswith("::")]


def test_check_github_annotations_and_stderr(checked: Path) -> None:
    (checked / ("missing-" + NAME)).mkdir()  # a file not checked: its name is quoted on stderr
    status, out, err = run("check", "--format", "github", "turn.json", NAME, "missing-" + NAME, cwd=checked)
    assert (status, raw(out), raw(err)) == (2, [], [])
    commands = [line.split(" ", 1)[0] for line in out.splitlines()]
    assert set(commands) <= {"::error", "::warning", "::notice"} and len(commands) >= 3
    assert "file=a%0A%3A%3Aerror file=x%3A%3Aowned\\x1b]52;c;eA==\\x07.json" in out
    assert [line for line in err.splitlines() if line.startswith("::") or not line.startswith("toolwire-inspect: ")] \
        == []


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_check_json_outputs_stay_json_with_every_control_escaped(checked: Path, fmt: str) -> None:
    status, out, err = run("check", "--format", fmt, "turn.json", NAME, cwd=checked)
    assert (status, raw(out), raw(err)) == (1, [], [])
    strings, stack = set(), [json.loads(out)]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, str):
            strings.add(item)
    assert "/x_" + H in strings  # the pointer, the same string, only escaped


def test_rules_replay_and_record_quote_their_input_safely(hostile: Path) -> None:
    status, out, err = run("rules", H, cwd=hostile)
    assert (status, raw(out), raw(err)) == (2, [], [])
    status, out, err = run("replay", "1", "--store", "flows.sqlite3", "--upstream", "http://127.0.0.1:9/" + H,
                           cwd=hostile)
    assert (status, out, raw(err)) == (2, "", [])
    assert err == ("toolwire-inspect: --upstream: the upstream URL holds a control character or whitespace (U+001B at "
                   "position 20); a URL has none\n")
    status, out, err = run("replay", "1", "--store", "flows.sqlite3", "--upstream", "http://127.0.0.1:9/", cwd=hostile)
    assert (status, out, raw(err)) == (2, "", [])
    assert err.startswith("toolwire-inspect: replay of #1: the recorded request cannot be sent as HTTP: method can't "
                          "contain control characters. 'POST\\x1b]52;c;")
    status, out, err = run("record", "--upstream", "http://127.0.0.1:9/" + H, "--port", "-1", "--store", "r.db",
                           cwd=hostile)
    assert (status, raw(out), raw(err)) == (2, [], [])


def test_translate_names_its_losses_safely(tmp_path: Path) -> None:
    (tmp_path / NAME).write_bytes(orjson.dumps({**REQUEST, "x_" + H: None, "logprobs": True}))
    status, out, err = run("translate", "--to", "anthropic", NAME, cwd=tmp_path)
    assert raw(err) == [] and status in (0, 1, 2)
