"""`toolwire-inspect translate`: JSON on stdout, loss report on stderr, exit 0 / 1 / 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from inspector.cli import main

REQUEST = {"model": "gpt-4o", "functions": None, "messages": [{"role": "user", "content": "hi"}],
           "tools": [{"type": "function", "function": {"name": "fs.read", "parameters": {"type": "object", "properties": {}}}}]}


def _write(tmp_path: Path, document: object) -> str:
    path = tmp_path / "in.json"
    path.write_bytes(orjson.dumps(document))
    return str(path)


def test_translates_a_file_with_a_human_report(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    source = _write(tmp_path, REQUEST)
    assert main(["translate", "--from", "openai-chat", "--to", "openai-responses", source]) == 0
    out, err = capsysbinary.readouterr()
    payload = orjson.loads(out)
    alias = payload["tools"][0]["name"]
    assert payload == {"model": "gpt-4o", "input": [{"role": "user", "content": "hi"}], "tools": [
        {"type": "function", "name": alias, "parameters": {"type": "object", "properties": {}}, "strict": False}], "store": False}
    assert err.decode().splitlines() == [
        f"{source}:dropped /functions: null means absent [XL-10]",
        f"{source}:aliased /tools/0/function/name -> /tools/0/name: 'fs.read' is not a valid openai-responses tool name; "
        f"sent as {alias!r} and reversed in the response [XL-02]",
        f"{source}:synthesised / -> /store: the Responses API stores responses by default; store is false as the "
        "client's own dialect implies",
        f"{source}:carried /tools/0/function/name: the input already has this error: tool name 'fs.read' does not "
        "match ^[a-zA-Z0-9_-]+$ [OC-02]",
        "4 change(s) reported"]


def test_json_report_and_stdin() -> None:
    done = subprocess.run([sys.executable, "-m", "inspector", "translate", "--from", "openai-chat", "--to", "anthropic",
                           "--json", "-"], input=orjson.dumps(REQUEST), capture_output=True, check=False)
    assert done.returncode == 0
    report = orjson.loads(done.stderr)
    assert [(r["source"], r["kind"], r["rule"]) for r in report] == [
        ("/functions", "dropped", "XL-10"), ("/tools/0/function/name", "aliased", "XL-02"), ("", "synthesised", ""),
        ("/tools/0/function/name", "carried", "OC-02")]
    assert orjson.loads(done.stdout)["max_tokens"] == 4096


def test_response_kind_and_mcp_source(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    response = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",
                "content": [{"type": "text", "text": "hello"}], "usage": {"input_tokens": 1, "output_tokens": 2}}
    assert main(["translate", "--from", "anthropic", "--to", "openai-chat", "--kind", "response",
                 _write(tmp_path, response)]) == 0
    assert orjson.loads(capsysbinary.readouterr().out)["choices"][0]["message"] == {"role": "assistant",
                                                                                   "content": "hello"}
    listing = {"tools": [{"name": "a.b", "inputSchema": {"type": "object"}}]}
    assert main(["translate", "--from", "mcp", "--to", "gemini", _write(tmp_path, listing)]) == 0
    assert orjson.loads(capsysbinary.readouterr().out) == {"tools": [{"functionDeclarations": [{"name": "a.b"}]}]}


def test_untranslatable_input_exits_1(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    orphan = {"model": "m", "messages": [{"role": "function", "name": "lookup", "content": "42"}]}
    assert main(["translate", "--from", "openai-chat", "--to", "openai-responses", "--json",
                 _write(tmp_path, orphan)]) == 1
    out, err = capsysbinary.readouterr()
    assert out == b""
    assert orjson.loads(err) == {"error": "the result of 'lookup' answers no earlier unanswered call of that name "
                                          "(an orphan result)", "pointer": "/messages/0"}


@pytest.mark.parametrize("content", [b"{not json", b""])
def test_unreadable_input_exits_2(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], content: bytes) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    assert main(["translate", "--from", "openai-chat", "--to", "anthropic", str(path)]) == 2
    assert main(["translate", "--from", "openai-chat", "--to", "anthropic", str(tmp_path / "missing.json")]) == 2
    assert b"cannot read" in capsysbinary.readouterr().err


def test_a_pair_not_offered_exits_2(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["translate", "--from", "openai-responses", "--to", "gemini", _write(tmp_path, {"input": "x"})]) == 2
    assert b"no bridge from openai-responses to gemini" in capsysbinary.readouterr().err
