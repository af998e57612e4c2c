"""`toolwire-inspect check`: output formats, exit status, detection, --fix."""

from __future__ import annotations

import subprocess
import sys

import orjson
import pytest

from inspector.cli import main

from .wire_payloads import anthropic_events, chat_request, named_sse, sse


def _write(tmp_path, name, payload):
    path = tmp_path / name
    path.write_bytes(payload if isinstance(payload, bytes) else orjson.dumps(payload))
    return str(path)


def _defective():
    payload = chat_request()
    payload["tools"][0]["function"]["parameters"]["properties"]["city"]["type"] = "STRING"
    payload["messages"][2]["tool_calls"][0]["function"]["arguments"] = '"{\\"city\\":\\"Oslo\\"}"'
    return payload


def test_human_output_lines_summary_and_exit_1(tmp_path, capsys):
    path = _write(tmp_path, "req.json", _defective())
    assert main(["check", path]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{path}:/tools/0/function/parameters/properties/city/type: error OC-05 (rejects) function 'get_weather': type 'STRING' "
        "is upper-case (genai Schema); JSON Schema wants 'string'",
        f"{path}:/messages/2/tool_calls/0/function/arguments: warning OC-15 (may reject) arguments is a double-encoded JSON object "
        "(a JSON string that decodes to a string first): '\"{\\\\\"city\\\\\":\\\\\"Oslo\\\\\"}\"'",
        "1 file checked: 1 error(s), 1 warning(s), 0 info",
    ]


def test_clean_file_exits_0_and_warnings_do_not_fail(tmp_path, capsys):
    payload = chat_request()
    payload["messages"][2]["tool_calls"][0]["function"]["arguments"] = "[1]"
    assert main(["check", _write(tmp_path, "ok.json", chat_request()), _write(tmp_path, "warn.json", payload)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "2 files checked: 0 error(s), 1 warning(s), 0 info"


def test_json_output_has_the_documented_fields(tmp_path, capsys):
    path = _write(tmp_path, "req.json", _defective())
    assert main(["check", "--json", path]) == 1
    records = orjson.loads(capsys.readouterr().out)
    # The file is one line of compact JSON: line and column are where each key sits in it.
    assert [(r["rule"], r["severity"], r["effect"], r["pointer"], r["file"], r["line"], r["column"], r["dialect"],
             r["kind"]) for r in records] == [
        ("OC-05", "error", "rejects", "/tools/0/function/parameters/properties/city/type", path, 1, 169, "openai-chat",
         "request"),
        ("OC-15", "warning", "may reject", "/messages/2/tool_calls/0/function/arguments", path, 1, 606, "openai-chat",
         "request")]
    assert records[0]["hint"].startswith("Convert the genai Schema")
    assert records[0]["why"].startswith("parameters must be a JSON Schema object")
    assert records[0]["message"] == "function 'get_weather': type 'STRING' is upper-case (genai Schema); JSON Schema wants 'string'"


def test_unparseable_and_unreadable_inputs_exit_2(tmp_path, capsys):
    assert main(["check", _write(tmp_path, "bad.json", b'{"model": ')]) == 2
    assert "bad.json: not valid JSON: " in capsys.readouterr().err
    assert main(["check", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["check", _write(tmp_path, "odd.json", {"hello": 1})]) == 2
    assert "cannot tell the dialect" in capsys.readouterr().err


def test_an_error_in_one_file_and_a_bad_file_exit_2(tmp_path, capsys):
    assert main(["check", _write(tmp_path, "req.json", _defective()), _write(tmp_path, "bad.json", b"[")]) == 2


def test_dialect_and_profile_override(tmp_path, capsys):
    payload = chat_request()
    payload["tools"][0]["function"]["name"] = "get.weather"
    payload["tool_choice"] = "none"
    path = _write(tmp_path, "req.json", payload)
    assert main(["check", "--profile", "azure-openai", path]) == 0
    assert main(["check", path]) == 1
    assert main(["check", "--dialect", "anthropic", path]) == 1
    assert "AN-10 (rejects) tool_choice 'none' is not" in capsys.readouterr().out


def test_streams_are_detected_and_checked(tmp_path, capsys):
    events = anthropic_events()
    events[4]["index"] = 0
    path = _write(tmp_path, "stream.sse", named_sse(events))
    assert main(["check", path]) == 1
    out = capsys.readouterr().out
    assert f"{path}:/7: error AN-13 (breaks client) joined partial_json of block toolu_a is not JSON (e.g. Python literal syntax or " \
        "truncated text): '{\"city\":{\"city\":\"Oslo\"}'" in out
    chat_stream = _write(tmp_path, "chat.sse", sse([{"object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": {"tool_calls": [{"index": -1}]}, "finish_reason": "stop"}]}], done=True))
    assert main(["check", chat_stream]) == 1
    assert f"{chat_stream}:/0/choices/0/delta/tool_calls/0/index: error XL-12 (breaks client) tool call delta has index -1" in \
        capsys.readouterr().out


def test_fix_writes_the_repaired_payload_and_lists_repairs(tmp_path, capsys):
    path = _write(tmp_path, "req.json", _defective())
    out = tmp_path / "fixed.json"
    assert main(["check", "--fix", str(out), path]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2:] == [
        f"{path}:/tools/0/function/parameters/properties/city/type: fixed OC-05 converted: genai type 'STRING' written as JSON Schema 'string'",
        f"{path}:/messages/2/tool_calls/0/function/arguments: fixed OC-15 unwrapped: unwrapped 2 JSON encodings",
        "1 file checked: 1 error(s), 1 warning(s), 0 info; 2 repair(s), 0 error(s) left",
    ]
    fixed = orjson.loads(out.read_bytes())
    assert fixed["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"city":"Oslo"}'
    assert main(["check", str(out)]) == 0


def test_fix_with_several_files_needs_a_directory(tmp_path, capsys):
    first, second = _write(tmp_path, "a.json", _defective()), _write(tmp_path, "b.json", _defective())
    assert main(["check", "--fix", str(tmp_path / "nope.json"), first, second]) == 2
    target = tmp_path / "out"
    target.mkdir()
    assert main(["check", "--fix", str(target), first, second]) == 0
    assert sorted(p.name for p in target.iterdir()) == ["a.json", "b.json"]


def test_stdin_in_a_real_process():
    process = subprocess.run([sys.executable, "-m", "inspector", "check", "--json", "-"], input=orjson.dumps(
        _defective()), capture_output=True, timeout=60)
    assert process.returncode == 1
    assert [(r["rule"], r["file"]) for r in orjson.loads(process.stdout)] == [("OC-05", "-"), ("OC-15", "-")]


def test_header_option_says_what_the_payload_was_sent_with(tmp_path, capsys):
    """A budget above max_tokens is refused unless the request opts into interleaved thinking by header;
    `--header` gives a bare payload the headers a recording would carry (case and spacing as sent)."""
    path = _write(tmp_path, "req.json", {"model": "claude-sonnet-4-6", "max_tokens": 2048,
                                         "thinking": {"type": "enabled", "budget_tokens": 8000},
                                         "messages": [{"role": "user", "content": "Hi"}]})
    assert main(["check", "--dialect", "anthropic", path]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{path}:/max_tokens: error AN-16 (rejects) max_tokens 2048 is not above thinking.budget_tokens 8000",
        "1 file checked: 1 error(s), 0 warning(s), 0 info"]
    assert main(["check", "--dialect", "anthropic", "--header",
                 "Anthropic-Beta: files-api-2025-04-14, interleaved-thinking-2025-05-14", path]) == 0
    assert capsys.readouterr().out.splitlines() == ["1 file checked: 0 error(s), 0 warning(s), 0 info"]
    with pytest.raises(SystemExit) as exited:
        main(["check", "--header", "interleaved-thinking-2025-05-14", path])
    assert exited.value.code == 2
    assert "argument --header: 'interleaved-thinking-2025-05-14' is not NAME:VALUE" in capsys.readouterr().err


def test_url_option_judges_a_file_as_sent_there_its_version_and_its_model(tmp_path, capsys):
    """A file has no path: the rules that read the API version (Gemini's /v1/ takes no
    systemInstruction) or the model (Bedrock's /model/ID/converse: Llama takes no toolChoice.tool)
    judged a recorded flow but could not judge a file. `--url` gives it the URL a recording carries."""
    gemini = _write(tmp_path, "gemini.json", {"systemInstruction": {"parts": [{"text": "Be brief."}]},
                                              "contents": [{"role": "user", "parts": [{"text": "Hi"}]}]})
    host = "https://generativelanguage.googleapis.com"
    assert main(["check", "--url", f"{host}/v1/models/gemini-2.5-flash:generateContent", gemini]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{gemini}:/systemInstruction: error GM-19 (rejects) 'systemInstruction' is not a field of this request "
        "(v1alpha and v1beta take it, v1 does not)",
        "1 file checked: 1 error(s), 0 warning(s), 0 info"]
    assert main(["check", "--url", f"{host}/v1beta/models/gemini-2.5-flash:generateContent", gemini]) == 0
    assert capsys.readouterr().out.splitlines() == ["1 file checked: 0 error(s), 0 warning(s), 0 info"]

    converse = _write(tmp_path, "converse.json", {
        "messages": [{"role": "user", "content": [{"text": "Weather in Paris?"}]}],
        "toolConfig": {"tools": [{"toolSpec": {"name": "weather", "inputSchema": {"json": {
            "type": "object", "properties": {"city": {"type": "string"}}}}}}],
            "toolChoice": {"tool": {"name": "weather"}}}})
    bedrock = "https://bedrock-runtime.us-east-1.amazonaws.com/model"
    assert main(["check", "--url", f"{bedrock}/us.meta.llama3-3-70b-instruct-v1:0/converse", converse]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split(" ", 3)[:3] for line in out[:-1]] == [[f"{converse}:/toolConfig/toolChoice/tool:", "error",
                                                               "BR-08"]]
    assert main(["check", "--url", f"{bedrock}/us.anthropic.claude-sonnet-4-5-20250929-v1:0/converse",
                 converse]) == 0
    capsys.readouterr()

    for argv, why in [
        (["--url", "https://example.com/elsewhere"], "--url https://example.com/elsewhere: its path names no "
                                                     "dialect; pass --dialect"),
        (["--url", "ftp://x/v1/chat/completions"], "--url ftp://x/v1/chat/completions: expected http(s)://HOST/PATH"),
        (["--url", f"{host}/v1/models/m:generateContent", "--profile", "gemini"],
         "--url picks the profile from its host: give --url or --profile, not both"),
    ]:
        assert main(["check", *argv, gemini]) == 2
        assert capsys.readouterr().err == f"toolwire-inspect: {why}\n"
