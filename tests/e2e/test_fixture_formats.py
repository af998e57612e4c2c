"""Recorded turns exported in every format, read back by their real consumers and by `open`/`mock`.

One recording (module scope: it is the costly part) through the real forwarder with the openai SDK:
#1 a broken request (a Gemini-style schema the fixers repair) answered with gzip-encoded JSON, #2 a
streamed tool call paced in chunks, #3 the fixed replay of #1 (what `R` sends). Then each format
round-trips through `inspector.formats` to the same flow and findings, the mock serves each back to the
SDK with the same bytes, and no byte of any file holds the API key."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import jsonschema
import openai
import orjson
import pytest
import vcr
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from inspector.analysis import analyse, decode_body, safe_repairs
from inspector.cli import main
from inspector.cli.open import opened_store
from inspector.flow import ReplayKind, header
from inspector.formats.base import LoadError
from inspector.formats.registry import load
from inspector.mock import Canned, FixtureRoute, MockUpstream, json_response, sse_response
from inspector.wire.canned import Call
from inspector.wire.dialects.gemini.mock import gemini_response, gemini_stream
from inspector.wire.dialects.openai_chat.mock import chat_completion, chat_stream
from inspector.proxy import Forwarder
from inspector.replay import replay
from inspector.store import Store
from inspector.proxy.options import Options

from .conftest import Completed

API_KEY = "sk-test-fixtures-5b1e9d2c7a4f8e30"
BROKEN_TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.",
                                                "parameters": {"type": "OBJECT",
                                                               "properties": {"city": {"type": "STRING"}}}}}
GOOD_TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.",
                                              "parameters": {"type": "object",
                                                             "properties": {"city": {"type": "string"}},
                                                             "required": ["city"]}}}
MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]
ANSWER = chat_completion("Sunny.")
STREAM = sse_response(chat_stream(None, [Call("get_weather", '{"city": "Paris"}', "call_p")]), interval=0.02)
FORMATS = ["json", "har", "vcr"]
SUFFIX = {"json": "json", "har": "har", "vcr": "yaml", "pytest": "py"}


def gzipped(payload: dict) -> Canned:
    return Canned(headers=[("content-type", "application/json"), ("content-encoding", "gzip")],
                  body=gzip.compress(orjson.dumps(payload), mtime=0))


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """(store path, export dir, the three flows' ids)."""
    folder = tmp_path_factory.mktemp("recording")
    mock = MockUpstream([gzipped(ANSWER), STREAM, gzipped(chat_completion("Sunny, fixed."))]).start()
    store = Store(folder / "flows.sqlite3")
    completed = Completed()
    forwarder = Forwarder(Options(mock.base_url, port=0), store=store, on_event=completed)
    forwarder.start()
    client = openai.OpenAI(base_url=f"{forwarder.base_url}/v1", api_key=API_KEY, max_retries=0)
    try:
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, tools=[BROKEN_TOOL])
        list(client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, tools=[GOOD_TOOL], stream=True))
        first, second = completed.wait(2)
        original = store.get(first.id)
        fixed_body = orjson.dumps(safe_repairs(analyse(original)).payload)
        fixed_id = replay(original, via=forwarder, credentials=forwarder.credentials(first.id), body=fixed_body,
                          kind=ReplayKind.FIXED)
        completed.wait(3)
        store.flush()
    finally:
        client.close()
        forwarder.stop()
        store.close()
        mock.stop()
    out = folder / "out"
    out.mkdir()
    for fmt in [*FORMATS, "pytest"]:
        for flow_id in (first.id, second.id, fixed_id):
            assert main(["export", str(flow_id), "--format", fmt, "--store", str(folder / "flows.sqlite3"),
                         "-o", str(out / f"{flow_id}.{SUFFIX[fmt]}")]) == 0
    return folder / "flows.sqlite3", out, (first.id, second.id, fixed_id)


def stored(recording, flow_id):
    with Store(recording[0], read_only=True) as store:
        return store.get(flow_id)


def findings(flow):
    return [(v.where, v.rule, v.pointer, v.severity.value) for v in analyse(flow).violations]


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_gives_the_same_flow_and_findings(recording, fmt, tmp_path):
    """record → export → `open` (the files loaded into a store the UI opens read-only) → the same flows."""
    _, out, (first, second, _) = recording
    opened = opened_store([str(out / f"{flow_id}.{SUFFIX[fmt]}") for flow_id in (first, second)], tmp_path)
    with opened:
        rows = opened.rows()
        loaded = [opened.get(row.id) for row in rows]
    originals = [stored(recording, flow_id) for flow_id in (first, second)]
    assert [(row.dialect, row.errors, row.streamed) for row in rows] == [("openai-chat", 2, False),
                                                                          ("openai-chat", 0, True)]
    for flow, original in zip(loaded, originals, strict=True):
        assert (flow.method, flow.path, flow.status, flow.streamed) == (
            original.method, original.path, original.status, original.streamed)
        assert orjson.loads(flow.request_body) == orjson.loads(original.request_body)
        # A gzip answer comes back gzip-encoded again (its bytes re-made), with the same content.
        assert header(flow.response_headers, "content-encoding") == header(original.response_headers,
                                                                           "content-encoding")
        assert decode_body(flow.response_body, flow.response_headers) == decode_body(original.response_body,
                                                                                     original.response_headers)
        assert [(round(c.t * 1000, 1), c.data) for c in flow.chunks] == [
            (round(c.t * 1000, 1), c.data) for c in original.chunks]
        assert findings(flow) == findings(original)
    assert len(originals[1].chunks) > 1  # the stream really came in pieces


def test_first_flow_found_the_rule_the_fixers_repair(recording):
    assert findings(stored(recording, recording[2][0])) == [
        ("request", "OC-05", "/tools/0/function/parameters/type", "error"),
        ("request", "OC-05", "/tools/0/function/parameters/properties/city/type", "error"),
    ]


def test_original_and_its_fixed_replay_export_the_same_pair(recording):
    _, out, (first, _, fixed_id) = recording
    for fmt in [*FORMATS, "pytest"]:
        assert (out / f"{first}.{SUFFIX[fmt]}").read_bytes() == (out / f"{fixed_id}.{SUFFIX[fmt]}").read_bytes(), fmt
    data = json.loads((out / f"{first}.json").read_bytes())
    assert data["version"] == 2
    assert data["response"]["body"] == {"json": ANSWER, "content_encoding": "gzip"}
    fixed = data["fixed"]
    assert fixed["request"]["body"]["json"]["tools"][0]["function"]["parameters"] == {
        "type": "object", "properties": {"city": {"type": "string"}}}
    assert [(r["rule"], r["pointer"], r["action"]) for r in fixed["repairs"]] == [
        ("OC-05", "/tools/0/function/parameters/type", "converted"),
        ("OC-05", "/tools/0/function/parameters/properties/city/type", "converted"),
    ]
    assert fixed["violations"] == []
    assert (fixed["replay"]["status"], fixed["replay"]["body"]) == (
        200, {"json": chat_completion("Sunny, fixed."), "content_encoding": "gzip"})


def test_re_export_gives_the_same_bytes(recording, tmp_path):
    store, out, ids = recording
    for fmt in [*FORMATS, "pytest"]:
        for flow_id in ids:
            again = tmp_path / f"{flow_id}.{SUFFIX[fmt]}"
            assert main(["export", str(flow_id), "--format", fmt, "--store", str(store), "-o", str(again)]) == 0
            assert again.read_bytes() == (out / f"{flow_id}.{SUFFIX[fmt]}").read_bytes()


def test_no_byte_of_any_format_holds_the_key(recording, tmp_path):
    store, out, _ = recording
    assert main(["export", "--session", "--format", "har", "--store", str(store), "-o", str(tmp_path)]) == 0
    assert main(["export", "--session", "--format", "vcr", "--store", str(store), "-o", str(tmp_path)]) == 0
    files = [*out.iterdir(), *tmp_path.iterdir()]
    assert len(files) == 14
    for path in files:
        data = path.read_bytes()
        assert API_KEY.encode() not in data and API_KEY[10:].encode() not in data, path


@pytest.mark.parametrize("fmt", FORMATS)
def test_mock_serves_each_format_back_to_the_sdk(recording, fmt):
    _, out, (first, second, _) = recording
    routes = [*FixtureRoute.load(out / f"{first}.{SUFFIX[fmt]}"), *FixtureRoute.load(out / f"{second}.{SUFFIX[fmt]}")]
    with MockUpstream(fixtures=routes, realtime=False) as offline:
        client = openai.OpenAI(base_url=f"{offline.base_url}/v1", api_key="unused", max_retries=0)
        raw = client.chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=MESSAGES,
                                                               tools=[BROKEN_TOOL])
        assert raw.http_response.content == orjson.dumps(ANSWER)
        assert raw.parse().choices[0].message.content == "Sunny."
        events = list(client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, tools=[GOOD_TOOL],
                                                     stream=True))
        client.close()
    original = stored(recording, second)
    assert b"".join(data for _, data in routes[1].canned.chunks) == original.response_body
    assert "".join(e.choices[0].delta.tool_calls[0].function.arguments for e in events
                   if e.choices and e.choices[0].delta.tool_calls) == '{"city": "Paris"}'


def test_vcrpy_replays_the_cassette_for_the_openai_sdk(recording, tmp_path):
    _, out, (first, second, _) = recording
    cassette = tmp_path / "both.yaml"
    assert main(["export", "--select", "!~r", "--format", "vcr", "--store", str(recording[0]),
                 "-o", str(tmp_path)]) == 0
    (tmp_path / "selection.yaml").rename(cassette)
    # Any host: the cassette matches on method, path and body, and vcrpy never lets a request out.
    client = openai.OpenAI(base_url="http://api.invalid/v1", api_key="unused", max_retries=0)
    with vcr.use_cassette(str(cassette), match_on=["method", "path", "body"], record_mode="none") as played:
        answer = client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, tools=[BROKEN_TOOL])
        events = list(client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, tools=[GOOD_TOOL],
                                                     stream=True))
        assert played.play_count == 2
    client.close()
    assert answer.choices[0].message.content == "Sunny."
    assert "".join(e.choices[0].delta.tool_calls[0].function.arguments for e in events
                   if e.choices and e.choices[0].delta.tool_calls) == '{"city": "Paris"}'


def run_pytest(folder, *args):
    """pytest in a fresh project folder, with no plugin but those asked for (as a bare project has)."""
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=folder, capture_output=True, text=True, timeout=120, env=env)


def test_pytest_recording_replays_the_cassette(recording, tmp_path):
    _, out, (first, _, _) = recording
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "cassettes" / "test_weather.yaml").write_bytes((out / f"{first}.yaml").read_bytes())
    (tmp_path / "test_client.py").write_text(textwrap.dedent(f'''
        import openai
        import pytest

        @pytest.fixture(scope="module")
        def vcr_config():
            return {{"match_on": ["method", "path", "body"], "record_mode": "none"}}

        @pytest.fixture(scope="module")
        def vcr_cassette_dir():
            return "cassettes"

        @pytest.mark.vcr
        def test_weather():
            client = openai.OpenAI(base_url="http://api.invalid/v1", api_key="unused", max_retries=0)
            answer = client.chat.completions.create(model="gpt-4o-mini", messages={MESSAGES!r}, tools=[{BROKEN_TOOL!r}])
            assert answer.choices[0].message.content == "Sunny."
    '''))
    result = run_pytest(tmp_path, "-p", "pytest_recording.plugin", "--block-network", "-v")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_exported_pytest_file_passes_in_a_fresh_project_and_fails_when_broken_again(recording, tmp_path):
    _, out, (first, second, _) = recording
    test_file = tmp_path / "test_turn.py"
    test_file.write_bytes((out / f"{first}.py").read_bytes())
    (tmp_path / "test_stream.py").write_bytes((out / f"{second}.py").read_bytes())
    result = run_pytest(tmp_path, "-v")
    assert result.returncode == 0, result.stdout + result.stderr
    passed = sorted(line.split(" ")[0] for line in result.stdout.splitlines() if " PASSED" in line)
    assert passed == [
        "test_stream.py::test_client_gets_the_recorded_response",
        "test_stream.py::test_recorded_request_trips_the_recorded_rules",
        "test_stream.py::test_sdk_replays_the_recorded_response",
        "test_turn.py::test_client_gets_the_recorded_response",
        "test_turn.py::test_fixed_request_passes",
        "test_turn.py::test_recorded_request_trips_the_recorded_rules",
        "test_turn.py::test_sdk_replays_the_recorded_response",
    ]
    # Edited back to the broken request, the fixed test fails and names the rule.
    source = test_file.read_text()
    start = source.index("FIXED_REQUEST = ")
    end = source.index("\n\n", start)
    test_file.write_text(source[:start] + 'FIXED_REQUEST = RECORDED_REQUEST["json"]' + source[end:])
    result = run_pytest(tmp_path, "test_turn.py", "-k", "fixed_request")
    assert result.returncode == 1
    assert "1 failed, 3 deselected" in result.stdout
    assert ("AssertionError: the fixed request breaks OC-05 at /tools/0/function/parameters/type, "
            "OC-05 at /tools/0/function/parameters/properties/city/type") in result.stdout


def test_exported_gemini_pytest_file_replays_through_google_genai_and_fails_when_broken_again(tmp_path):
    """The same for Gemini, recorded with the google-genai SDK: a declaration named with a space
    (GM-02, renamed by the fixers) answered in JSON, an SSE stream with a call, and a 400."""
    refusal = {"error": {"code": 400, "message": "Invalid value at 'tools[0]'", "status": "INVALID_ARGUMENT"}}
    mock = MockUpstream([json_response(gemini_response("Looking.")),
                         sse_response(gemini_stream("Looking.", [Call("get_weather", '{"city": "Paris"}', "c1")]),
                                      interval=0.01),
                         Canned(status=400, body=orjson.dumps(refusal))]).start()
    store = Store(tmp_path / "flows.sqlite3")
    completed = Completed()
    forwarder = Forwarder(Options(mock.base_url, port=0), store=store, on_event=completed)
    forwarder.start()
    client = genai.Client(api_key="AIza-test-fixtures",
                          http_options=genai_types.HttpOptions(base_url=forwarder.base_url))
    city = genai_types.Schema(type=genai_types.Type.OBJECT,
                              properties={"city": genai_types.Schema(type=genai_types.Type.STRING)})
    try:
        for name, call in (("get weather", client.models.generate_content),
                           ("get_weather", client.models.generate_content_stream)):
            declaration = genai_types.FunctionDeclaration(name=name, description="Weather by city", parameters=city)
            config = genai_types.GenerateContentConfig(tools=[genai_types.Tool(function_declarations=[declaration])],
                                                       temperature=0.2)
            result = call(model="gemini-2.5-flash", contents="Weather in Paris?", config=config)
            if name == "get_weather":
                list(result)  # the stream read to its end
        with pytest.raises(genai_errors.ClientError):
            client.models.generate_content(model="gemini-2.5-flash", contents="Again?")
        first, second, third = completed.wait(3)
        store.flush()
    finally:
        client.close()
        forwarder.stop()
        store.close()
        mock.stop()
    project = tmp_path / "project"
    project.mkdir()
    for flow_id, test_name in ((first.id, "test_turn.py"), (second.id, "test_stream.py"),
                               (third.id, "test_refused.py")):
        assert main(["export", str(flow_id), "--format", "pytest", "--store", str(tmp_path / "flows.sqlite3"),
                     "-o", str(project / test_name)]) == 0
    result = run_pytest(project, "-v")
    assert result.returncode == 0, result.stdout + result.stderr
    passed = sorted(line.split(" ")[0] for line in result.stdout.splitlines() if " PASSED" in line)
    assert passed == [
        "test_refused.py::test_client_gets_the_recorded_response",
        "test_refused.py::test_recorded_request_trips_the_recorded_rules",
        "test_refused.py::test_sdk_replays_the_recorded_response",
        "test_stream.py::test_client_gets_the_recorded_response",
        "test_stream.py::test_recorded_request_trips_the_recorded_rules",
        "test_stream.py::test_sdk_replays_the_recorded_response",
        "test_turn.py::test_client_gets_the_recorded_response",
        "test_turn.py::test_fixed_request_passes",
        "test_turn.py::test_recorded_request_trips_the_recorded_rules",
        "test_turn.py::test_sdk_replays_the_recorded_response",
    ]
    test_file = project / "test_turn.py"
    source = test_file.read_text()
    start = source.index("FIXED_REQUEST = ")
    end = source.index("\n\n", start)
    test_file.write_text(source[:start] + 'FIXED_REQUEST = RECORDED_REQUEST["json"]' + source[end:])
    result = run_pytest(project, "test_turn.py", "-k", "fixed_request")
    assert result.returncode == 1
    assert "1 failed, 3 deselected" in result.stdout
    assert "AssertionError: the fixed request breaks GM-02 at /tools/0/functionDeclarations/0/name" in result.stdout


def test_a_fixture_of_a_newer_version_is_refused(recording, tmp_path):
    _, out, (first, _, _) = recording
    data = json.loads((out / f"{first}.json").read_bytes())
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({**data, "version": 3}))
    with pytest.raises(LoadError) as raised:
        load(newer)
    assert str(raised.value) == (f"{newer}: fixture format version 3 is newer than this toolwire-inspect reads "
                                 "(up to 2); upgrade toolwire-inspect to read it")


HAR_SCHEMA = Path(__file__).parent.parent / "data" / "har" / "har-1.2.schema.json"


def test_har_export_is_valid_har_1_2(recording, tmp_path):
    """Every field HAR 1.2 requires, of the type it requires; ours only under `_` names. The same
    schema accepts the devtools, mitmproxy and HTTP Toolkit samples (tests/data/har)."""
    store, out, _ = recording
    assert main(["export", "--session", "--format", "har", "--store", str(store), "-o", str(tmp_path)]) == 0
    validator = jsonschema.Draft202012Validator(json.loads(HAR_SCHEMA.read_text()))
    for path in [*tmp_path.glob("*.har"), *out.glob("*.har"), *HAR_SCHEMA.parent.glob("*.har")]:
        assert [e.message for e in validator.iter_errors(json.loads(path.read_bytes()))] == [], path
    (session,) = tmp_path.glob("*.har")
    entries = json.loads(session.read_bytes())["log"]["entries"]
    # The fixed replay rides in the first flow's entry.
    assert [(e["request"]["method"], e["response"]["status"], e["_toolwire"]["chunks"] is not None)
            for e in entries] == [("POST", 200, False), ("POST", 200, True)]
    streamed = entries[1]
    assert [c["bytes"] for c in streamed["_toolwire"]["chunks"]] == [
        len(c.data) for c in stored(recording, recording[2][1]).chunks]


@pytest.mark.mitmproxy
def test_mitmproxy_reads_the_har_export(recording):
    """mitmproxy's own HAR reader (mitmproxy.io) loads our HAR into flows with our bytes. mitmproxy
    pins brotli below the 1.2 we need, so it lives in a venv of its own: TOOLWIRE_MITMPROXY_PYTHON."""
    python = os.environ.get("TOOLWIRE_MITMPROXY_PYTHON")
    if not python:
        pytest.skip("set TOOLWIRE_MITMPROXY_PYTHON to a Python with mitmproxy installed (see README)")
    _, out, (first, second, _) = recording
    script = textwrap.dedent("""
        import json, sys
        from mitmproxy import io
        found = []
        for name in sys.argv[1:]:
            with open(name, "rb") as f:
                for flow in io.FlowReader(f).stream():
                    found.append([flow.request.method, flow.request.url, flow.request.get_text(),
                                  flow.response.status_code, flow.response.get_content().decode()])
        print(json.dumps(found))
    """)
    result = subprocess.run([python, "-c", script, str(out / f"{first}.har"), str(out / f"{second}.har")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    expected = []
    for flow_id in (first, second):
        original = stored(recording, flow_id)
        expected.append(["POST", "http://127.0.0.1/v1/chat/completions", original.request_body.decode(), 200,
                         decode_body(original.response_body, original.response_headers).decode()])
    found = json.loads(result.stdout)
    assert [[m, u, json.loads(req), s, body] for m, u, req, s, body in found] == [
        [m, u, json.loads(req), s, body] for m, u, req, s, body in expected]


def test_check_judges_the_exported_turn_in_every_format(recording, capsys):
    _, out, (first, _, _) = recording
    files = [str(out / f"{first}.{SUFFIX[fmt]}") for fmt in FORMATS]
    assert main(["check", *files]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        line for name in files for line in (
            f"{name}:request:/tools/0/function/parameters/type: error OC-05 (rejects) function 'get_weather': type 'OBJECT' "
            "is upper-case (genai Schema); JSON Schema wants 'object'",
            f"{name}:request:/tools/0/function/parameters/properties/city/type: error OC-05 (rejects) function 'get_weather': "
            "type 'STRING' is upper-case (genai Schema); JSON Schema wants 'string'")
    ] + ["3 files checked: 6 error(s), 0 warning(s), 0 info"]


def test_export_refuses_what_it_cannot_do_in_one_line(recording, tmp_path, capsys):
    store = str(recording[0])
    cases = [
        (["export", "--store", store], "export needs either FLOW_ID or --session/--select"),
        (["export", "1", "--session", "--store", store, "-o", str(tmp_path)],
         "export needs either FLOW_ID or --session/--select"),
        (["export", "--session", "--store", store], "--session and --select write several files: give -o DIR"),
        (["export", "--session", "9", "--store", store, "-o", str(tmp_path)], f"no session 9 in {store}"),
        (["export", "--select", "~dialect gemini", "--store", store, "-o", str(tmp_path)],
         "no flow to export matches '~dialect gemini'"),
        (["export", "--select", "(", "--store", store, "-o", str(tmp_path)], None),
        (["export", "99", "--store", store], f"no flow #99 in {store}"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        if message is None:
            assert err.startswith("toolwire-inspect: --select '(': "), err
        else:
            assert err == f"toolwire-inspect: {message}\n", argv
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_mock_keeps_the_recorded_pacing(recording, fmt):
    _, out, (_, second, _) = recording
    original = stored(recording, second)
    (route,) = FixtureRoute.load(out / f"{second}.{SUFFIX[fmt]}")
    times = [round(c.t * 1000, 1) for c in original.chunks]
    assert [round(delay * 1000, 1) for delay, _ in route.canned.chunks] == [
        round(t - previous, 1) for previous, t in zip([0.0, *times], times, strict=False)]
    # Served in real time, the stream takes at least as long as it did (each delay is a wait).
    with MockUpstream(fixtures=[route]) as offline:
        client = openai.OpenAI(base_url=f"{offline.base_url}/v1", api_key="unused", max_retries=0)
        started = time.monotonic()
        list(client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, tools=[GOOD_TOOL], stream=True))
        took = time.monotonic() - started
        client.close()
    assert took >= times[-1] / 1000.0 > 0.1
