"""`check`'s output formats for CI: GitHub annotations and SARIF 2.1.0, placed on the finding's line
and column in the file as written; and a check that judged nothing says so and fails."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import orjson
import pytest
import yaml

from inspector.formats import fixture as export
from inspector.cli import main
from inspector.formats.registry import load
from inspector.wire.rules.catalogue import RULES

SCHEMA = json.loads((Path(__file__).parent / "sarif" / "sarif-schema-2.1.0.json").read_text())

# A request as people write it by hand: indented, two defects on line 5, one on line 8.
REQUEST = """{
  "model": "gpt-4o",
  "messages": [{"role": "user", "content": "hi"}],
  "tools": [
    {"type": "function", "function": {"name": "get.weather", "parameters": {"type": "OBJECT"}}}
  ],
  "tool_choice": "auto",
  "parallel_tool_calls": "yes"
}
"""
# A chat stream whose first event has a tool-call delta with index -1; the event is on line 3.
STREAM = (": keep-alive\n\n"
          'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":-1}]},'
          '"finish_reason":"stop"}]}\n\n'
          "data: [DONE]\n\n")


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative names, as a CI job passes them
    Path("req.json").write_text(REQUEST)
    Path("chat.sse").write_text(STREAM)
    return tmp_path


def test_github_annotations_sit_on_the_line_and_column_of_each_pointer(files, capsys):
    assert main(["check", "--format", "github", "req.json", "chat.sse"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "::error file=req.json,line=5,col=39,title=OC-02 Function names match ^[a-zA-Z0-9_-]+$%2C at most 64 "
        "characters::/tools/0/function/name: tool name 'get.weather' does not match ^[a-zA-Z0-9_-]+$",
        "::error file=req.json,line=5,col=77,title=OC-05 parameters is a JSON Schema object with lower-case "
        "types::/tools/0/function/parameters/type: function 'get.weather': type 'OBJECT' is upper-case (genai "
        "Schema); JSON Schema wants 'object'",
        "::error file=req.json,line=8,col=3,title=OC-10 parallel_tool_calls is a boolean::/parallel_tool_calls: "
        "parallel_tool_calls is 'yes', not a boolean",
        "::error file=chat.sse,line=3,col=87,title=XL-12 Re-chunked streams keep call ids%2C names and "
        "indices::/0/choices/0/delta/tool_calls/0/index: tool call delta has index -1",
    ]


def test_github_escapes_what_would_end_a_property_or_the_message(files, capsys):
    # A colon and a comma would end the file property early; a percent sign would start an escape.
    Path("odd:name,%.json").write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": '
                                       '[{"type": "function", "function": {"name": "a:b,c%", "parameters": {}}}]}')
    assert main(["check", "--format", "github", "odd:name,%.json"]) == 1
    assert capsys.readouterr().out == (
        "::error file=odd%3Aname%2C%25.json,line=1,col=109,title=OC-02 Function names match ^[a-zA-Z0-9_-]+$%2C at "
        "most 64 characters::/tools/0/function/name: tool name 'a:b,c%25' does not match ^[a-zA-Z0-9_-]+$\n")


def test_json_lines_are_lines_of_the_file_as_written(files, capsys):
    assert main(["check", "--json", "req.json"]) == 1
    assert [(r["rule"], r["line"], r["column"]) for r in orjson.loads(capsys.readouterr().out)] == [
        ("OC-02", 5, 39), ("OC-05", 5, 77), ("OC-10", 8, 3)]


def test_sarif_validates_against_the_official_schema_and_places_each_result(files, capsys):
    assert main(["check", "--format", "sarif", "req.json", "chat.sse"]) == 1
    log = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == list(RULES)
    oc05 = rules[list(RULES).index("OC-05")]
    assert (oc05["shortDescription"]["text"], oc05["defaultConfiguration"]["level"], oc05["helpUri"],
            oc05["properties"]["dialects"], oc05["properties"]["evidence"]) == (
        "parameters is a JSON Schema object with lower-case types", "error", "docs/rules.md#oc-05", ["openai-chat"],
        ["[S-OAI] `FunctionParameters` (L40649)", "https://github.com/google/adk-python/issues/1389"])
    assert [(r["ruleId"], rules[r["ruleIndex"]]["id"], r["level"],
             r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             r["locations"][0]["physicalLocation"]["region"], r["properties"]["pointer"]) for r in run["results"]] == [
        ("OC-02", "OC-02", "error", "req.json", {"startLine": 5, "startColumn": 39}, "/tools/0/function/name"),
        ("OC-05", "OC-05", "error", "req.json", {"startLine": 5, "startColumn": 77},
         "/tools/0/function/parameters/type"),
        ("OC-10", "OC-10", "error", "req.json", {"startLine": 8, "startColumn": 3}, "/parallel_tool_calls"),
        ("XL-12", "XL-12", "error", "chat.sse", {"startLine": 3, "startColumn": 87},
         "/0/choices/0/delta/tool_calls/0/index"),
    ]
    assert run["invocations"] == [{"executionSuccessful": True, "toolExecutionNotifications": []}]


def test_sarif_of_a_clean_file_and_of_a_file_not_checked(files, capsys):
    Path("ok.json").write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}')
    assert main(["check", "--format", "sarif", "ok.json"]) == 0
    log = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert log["runs"][0]["results"] == []
    Path("odd.json").write_text('{"hello": 1}')
    assert main(["check", "--format", "sarif", "ok.json", "odd.json"]) == 2
    log = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert log["runs"][0]["invocations"] == [{"executionSuccessful": False, "toolExecutionNotifications": [
        {"level": "error", "message": {"text": "odd.json: cannot tell the dialect from the shape; pass a dialect"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "odd.json"}}}]}]}]


def test_a_stream_event_spread_over_several_data_lines_points_at_its_first(files, capsys):
    Path("multi.sse").write_text('event: x\ndata: {"object":"chat.completion.chunk",\ndata: "choices":[{"index":0,'
                                 '"delta":{"tool_calls":[{"index":-1}]},"finish_reason":"stop"}]}\n\n')
    assert main(["check", "--format", "github", "multi.sse"]) == 1
    assert capsys.readouterr().out.startswith("::error file=multi.sse,line=2,col=7,title=XL-12 ")


# A check that judged nothing: it says which file and why, the summary does not count it as
# checked, and the exit status is 2.
NOTHING = [
    ("cannot tell the dialect", [], '{"note": "no dialect has this shape"}',
     "cannot tell the dialect from the shape; pass a dialect"),
    ("a fixture without its version", [], '{"format": "toolwire-fixture", "request": {}}',
     'fixture without a valid "version"'),
    ("empty file", [], "", "nothing to check: the input is empty"),
    ("blank file with a dialect", ["--dialect", "openai-chat"], "\n  \n", "nothing to check: the input is empty"),
    ("another format with a dialect", ["--dialect", "openai-chat"], '{"note": "no dialect has this shape"}',
     "nothing to check: no field a openai-chat request is judged by (messages, tools, functions, tool_choice, "
     "function_call)"),
    ("a response kind with no response field", ["--dialect", "anthropic", "--kind", "response"], '{"id": "msg_1"}',
     "nothing to check: no field a anthropic response is judged by (content)"),
    ("a stream with no event", ["--dialect", "openai-chat", "--kind", "stream"], ": only a comment\n\n",
     "nothing to check: the stream has no events"),
    ("a Gemini JSON-array stream with no event", ["--dialect", "gemini", "--kind", "stream"], "[]",
     "nothing to check: the stream has no events"),
    # Mirascope's mlx_lm cassettes (no HTTP was recorded): YAML that is no recording, named as such.
    ("a cassette of nothing", [], "interactions: {}\n",
     "not a toolwire fixture, a HAR file or a vcrpy cassette, nor a JSON payload or a stream"),
    # pydantic/logfire's Claude Agent SDK transcripts: a messages list, of no dialect's messages.
    ("a transcript of another kind", [], '{"metadata": {}, "messages": [{"direction": "send", "message": '
                                        '{"type": "control_request"}}]}',
     "cannot tell the dialect from the shape; pass a dialect"),
]


@pytest.mark.parametrize(("options", "content", "reason"), [case[1:] for case in NOTHING],
                         ids=[case[0] for case in NOTHING])
def test_a_check_that_judged_nothing_says_so_and_fails(files, capsys, options, content, reason):
    Path("x.json").write_text(content)
    assert main(["check", *options, "x.json"]) == 2
    out = capsys.readouterr()
    assert (out.out, out.err) == ("nothing checked: 1 file could not be checked\n",
                                  f"toolwire-inspect: x.json: {reason}\n")


def test_the_summary_counts_only_the_files_it_judged(files, capsys):
    Path("odd.json").write_text('{"hello": 1}')
    assert main(["check", "req.json", "odd.json", "missing.json"]) == 2
    out = capsys.readouterr()
    assert out.out.splitlines()[-1] == "1 file checked, 2 not checked: 3 error(s), 0 warning(s), 0 info"
    assert out.err.splitlines() == [
        "toolwire-inspect: odd.json: cannot tell the dialect from the shape; pass a dialect",
        "toolwire-inspect: cannot read missing.json: No such file or directory"]


def test_machine_formats_also_fail_when_nothing_was_checked(files, capsys):
    Path("odd.json").write_text('{"hello": 1}')
    assert main(["check", "--json", "odd.json"]) == 2
    assert capsys.readouterr().out == "[]\n"
    assert main(["check", "--format", "github", "odd.json"]) == 2
    out = capsys.readouterr()
    assert out.out == ("::error file=odd.json,title=not checked::odd.json: cannot tell the dialect from the shape; "
                       "pass a dialect\n")
    assert out.err.splitlines()[-1] == "toolwire-inspect: nothing checked"


def test_session_rules_over_a_session_without_mcp_flows_checked_nothing(tmp_path, capsys):
    from inspector.store import Store
    from tests.tui.flows import populate

    with Store(tmp_path / "flows.sqlite3") as store:
        populate(store)  # its latest session holds no MCP flow
    assert main(["check", "--session", "--store", str(tmp_path / "flows.sqlite3")]) == 2
    out = capsys.readouterr()
    assert (out.out, out.err) == ("", "toolwire-inspect: nothing checked: session 2 has no MCP or model flow the "
                                      "session rules read\n")


DATA = Path(__file__).parent / "data"


@pytest.fixture
def recordings(tmp_path, monkeypatch):
    """Devtools' and HTTP Toolkit's HAR files, a vcrpy cassette and our fixture of the devtools turn,
    under relative names."""
    monkeypatch.chdir(tmp_path)
    for name in ("har/chrome.har", "har/httptoolkit.har", "cassettes/openai_chat.yaml"):
        Path(name).parent.mkdir(exist_ok=True)
        Path(name).write_bytes((DATA / name).read_bytes())
    (turn,) = load("har/chrome.har")
    export.write_fixture(turn.flow, "turn.json")
    return ["har/chrome.har", "har/httptoolkit.har", "cassettes/openai_chat.yaml", "turn.json"]


# Each finding where its body holds it: in a HAR's postData.text and content.text (JSON strings, so
# inside the escaped text), in a fixture's body.json (written in place), in a cassette's quoted body (a
# missing content key: its message).
PLACES = [
    ("har/chrome.har", 58, 177, "OC-02", "/tools/0/function/name"),
    ("har/chrome.har", 88, 444, "XL-16", "/choices/0/message/tool_calls/0/function/name"),
    ("har/httptoolkit.har", 35, 132, "XL-13", "/tools/0/parameters/additionalProperties"),
    ("cassettes/openai_chat.yaml", 41, 71, "OC-12", "/messages/1/content"),
    ("cassettes/openai_chat.yaml", 41, 106, "OC-19", "/messages/1/tool_calls/0/id"),
    ("turn.json", 31, 15, "OC-02", "/tools/0/function/name"),
    ("turn.json", 83, 21, "XL-16", "/choices/0/message/tool_calls/0/function/name"),
]


def test_github_annotations_on_recordings_sit_where_the_body_holds_each_finding(recordings, capsys):
    assert main(["check", "--format", "github", *recordings]) == 1
    assert [(line.split(" ", 1)[1].split(",title=")[0], line.rsplit("::", 1)[1].split(":")[0])
            for line in capsys.readouterr().out.splitlines()] == [
        (f"file={file},line={line},col={column}", pointer) for file, line, column, _, pointer in PLACES]


def test_sarif_regions_of_recordings_and_the_log_still_validates(recordings, capsys):
    assert main(["check", "--format", "sarif", *recordings]) == 1
    log = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert [(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             r["locations"][0]["physicalLocation"]["region"], r["ruleId"], r["properties"]["pointer"])
            for r in log["runs"][0]["results"]] == [
        (file, {"startLine": line, "startColumn": column}, rule, pointer)
        for file, line, column, rule, pointer in PLACES]


def test_escapes_in_a_har_body_are_followed_to_the_character(tmp_path, capsys, monkeypatch):
    """postData.text is a JSON string: an escaped character is six characters in the file for one in
    the body (twelve for a surrogate pair), a line break two; the column counts the file's."""
    monkeypatch.chdir(tmp_path)
    request = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Météo à Paris 🌧?"}],
               "tools": [{"type": "function", "function": {"name": "météo", "parameters": {"type": "object", "properties": {}}}}]}
    entry = {"request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions", "headers": [],
                         "postData": {"mimeType": "application/json",
                                      "text": json.dumps(request, ensure_ascii=False, indent=1)}},
             "response": {"status": 0, "headers": [], "content": {"size": 0, "mimeType": ""}}}
    Path("escaped.har").write_text(json.dumps({"log": {"version": "1.2", "entries": [entry]}}, indent=1))
    assert Path("escaped.har").read_text().splitlines()[11][236:255] == '\\"name\\": \\"m\\u00e9'
    assert main(["check", "--format", "github", "escaped.har"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "::error file=escaped.har,line=12,col=237,title=OC-02 Function names match ^[a-zA-Z0-9_-]+$%2C at most 64 "
        "characters::/tools/0/function/name: tool name 'météo' does not match ^[a-zA-Z0-9_-]+$"]


def test_a_cassette_body_folded_over_lines_is_followed_to_the_character(tmp_path, capsys, monkeypatch):
    """vcrpy writes a long body as a single-quoted YAML scalar folded at 80 columns ('' for a quote):
    the finding's line is the one its key ended up on."""
    monkeypatch.chdir(tmp_path)
    body = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "It's raining in Paris; and Lyon?"}],
                       "tools": [{"type": "function", "function": {"name": "get weather", "description": "By city",
                                                                   "parameters": {"type": "object", "properties": {}}}}]})
    Path("folded.yaml").write_text(yaml.dump({"interactions": [{
        "request": {"body": body, "headers": {"Content-Type": ["application/json"]}, "method": "POST",
                    "uri": "https://api.openai.com/v1/chat/completions"},
        "response": {"body": {"string": ""}, "headers": {}, "status": {"code": 400, "message": "Bad Request"}}}],
        "version": 1}))
    lines = Path("folded.yaml").read_text().splitlines()
    assert (lines[2][-14:], lines[3][:8], lines[3][74:80]) == ("\"It''s raining", "      in", '"name"')
    assert main(["check", "--format", "github", "folded.yaml"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "::error file=folded.yaml,line=4,col=75,title=OC-02 Function names match ^[a-zA-Z0-9_-]+$%2C at most 64 "
        "characters::/tools/0/function/name: tool name 'get weather' does not match ^[a-zA-Z0-9_-]+$"]
