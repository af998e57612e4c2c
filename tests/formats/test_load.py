"""Other tools' recordings (devtools, mitmproxy and HTTP Toolkit HAR files, a vcrpy cassette) read as
flows: the exchange as recorded, redacted, judged like a recorded flow; `check` and `open` on them."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from inspector.analysis import analyse
from inspector.cli import main
from inspector.cli.open import opened_store
from inspector.formats.base import LoadError
from inspector.formats.registry import load
from inspector.mock import FixtureRoute, Received
from inspector.wire.dialect import Dialect
from inspector.tui.app import InspectorApp
from inspector.tui.widgets.flow_list import FlowList

from tests.tui.conftest import workers_done

DATA = Path(__file__).parent.parent / "data"
SECRETS = {
    "chrome": "sk-chrome-devtools-7d1c9e04b2", "firefox": "sk-ant-firefox-3e8a61c0f9",
    "mitmproxy": "AIzaSyMitmSecret0123456789", "httptoolkit": "sk-proj-httptoolkit-88c2d1f0",
}


def summary(path):
    (turn,) = load(path)
    flow = turn.flow
    analysis = analyse(flow)
    return ((analysis.dialect.value, flow.method, flow.path, flow.query, flow.status, flow.streamed, len(flow.chunks),
             flow.ttfb_ms, flow.latency_ms),
            [(v.where, v.rule, v.pointer, v.severity.value) for v in analysis.violations])


def test_devtools_mitmproxy_and_http_toolkit_hars_read_as_flows():
    assert summary(DATA / "har" / "chrome.har") == (
        ("openai-chat", "POST", "/v1/chat/completions", "", 200, False, 0, 704.7, 734.5),
        # The sample's answer calls the name the request should have declared: the pair rule sees it.
        [("request", "OC-02", "/tools/0/function/name", "error"),
         ("response", "XL-16", "/choices/0/message/tool_calls/0/function/name", "error")])
    assert summary(DATA / "har" / "firefox.har") == (
        ("anthropic", "POST", "/v1/messages", "", 200, True, 6, 380.0, 475.0), [])
    assert summary(DATA / "har" / "mitmproxy.har") == (
        ("gemini", "POST", "/v1beta/models/gemini-2.5-flash:generateContent", "key=[redacted]", 200, False, 0,
         495.0, 512.3), [])
    assert summary(DATA / "har" / "httptoolkit.har") == (
        ("openai-responses", "POST", "/v1/responses", "", 200, False, 0, 201.0, 220.5),
        [("request", "XL-13", "/tools/0/parameters/additionalProperties", "error")])


def test_devtools_keep_the_decoded_body_so_its_content_encoding_is_dropped():
    (chrome,) = load(DATA / "har" / "chrome.har")
    assert chrome.flow.response_headers == [("content-type", "application/json"), ("openai-processing-ms", "412"),
                                            ("x-request-id", "req_1a2b")]
    assert json.loads(chrome.flow.response_body)["id"] == "chatcmpl-AbC1"
    # HTTP/2 pseudo-headers are no headers; the credential is redacted.
    assert chrome.flow.request_headers == [
        ("authorization", "[redacted]"), ("content-type", "application/json"),
        ("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36")]


def test_a_foreign_sse_body_is_cut_at_its_events():
    (firefox,) = load(DATA / "har" / "firefox.har")
    assert [chunk.data.split(b"\n")[0] for chunk in firefox.flow.chunks] == [
        b"event: message_start", b"event: content_block_start", b"event: content_block_delta",
        b"event: content_block_stop", b"event: message_delta", b"event: message_stop"]
    assert b"".join(chunk.data for chunk in firefox.flow.chunks) == firefox.flow.response_body
    assert analyse(firefox.flow).response["content"] == [{"type": "text", "text": "Hello"}]


def test_a_vcrpy_cassette_reads_as_flows():
    first, second = load(DATA / "cassettes" / "openai_chat.yaml")
    assert (first.source, second.source) == (f"{DATA / 'cassettes' / 'openai_chat.yaml'}#interaction1",
                                             f"{DATA / 'cassettes' / 'openai_chat.yaml'}#interaction2")
    assert ("authorization", "[redacted]") in first.flow.request_headers
    assert ("set-cookie", "[redacted]") in first.flow.response_headers
    assert [(v.where, v.rule, v.pointer, v.severity.value) for v in analyse(second.flow).violations] == [
        ("request", "OC-12", "/messages/1/content", "info"),
        ("request", "OC-19", "/messages/1/tool_calls/0/id", "error")]
    assert (second.flow.streamed, len(second.flow.chunks)) == (True, 3)
    route = FixtureRoute.from_flow(first.flow, first.source)
    assert route.path == "/v1/chat/completions"
    assert route.matches(Received("POST", "/v1/chat/completions", "", [], first.flow.request_body))


@pytest.mark.parametrize("text", ['{"format": "toolwire-fixture"}', '{"log": {}}', "interactions: 3\n", '{"log": nope'])
def test_unreadable_recordings_are_refused_in_one_line(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(LoadError) as raised:
        load(path)
    assert str(raised.value) == {
        '{"format": "toolwire-fixture"}': f'{path}: fixture without a valid "version"',
        '{"log": {}}': f"{path}: a HAR file without log.entries",
        "interactions: 3\n": f"{path}: not a toolwire fixture, a HAR file or a vcrpy cassette",
        '{"log": nope': f"{path}: not valid JSON: invalid literal, expected 'null': line 1 column 9 (char 8)",
    }[text]


def test_check_judges_each_recorded_exchange(capsys):
    files = [str(DATA / "har" / name) for name in ("chrome.har", "firefox.har", "httptoolkit.har")]
    assert main(["check", *files, str(DATA / "cassettes" / "openai_chat.yaml")]) == 1
    cassette = DATA / "cassettes" / "openai_chat.yaml"
    assert capsys.readouterr().out.splitlines() == [
        f"{files[0]}:request:/tools/0/function/name: error OC-02 (rejects) tool name 'get weather' does not match "
        "^[a-zA-Z0-9_-]+$",
        f"{files[0]}:response:/choices/0/message/tool_calls/0/function/name: error XL-16 (breaks client) the response calls "
        "'get_weather', which the request does not declare (it declares get weather)",
        f"{files[2]}:request:/tools/0/parameters/additionalProperties: error XL-13 (rejects) function 'lookup': strict:true "
        "needs additionalProperties:false on every object",
        f"{cassette}#interaction2:request:/messages/1/content: info OC-12 (may reject) assistant message with tool_calls has "
        "no content key",
        f"{cassette}#interaction2:request:/messages/1/tool_calls/0/id: error OC-19 (rejects) tool call 'call_v1' has no tool "
        "message before the next message",
        "4 files checked: 4 error(s), 0 warning(s), 1 info",
    ]


def test_open_loads_every_file_into_a_read_only_store_and_no_secret_reaches_it(tmp_path):
    files = [str(DATA / "har" / f"{name}.har") for name in SECRETS] + [str(DATA / "cassettes" / "openai_chat.yaml")]
    store = opened_store(files, tmp_path)
    try:
        assert store.read_only
        rows = store.rows()
        assert [(row.dialect, row.path, row.errors) for row in rows] == [
            ("openai-chat", "/v1/chat/completions", 2), ("anthropic", "/v1/messages", 0),
            ("gemini", "/v1beta/models/gemini-2.5-flash:generateContent", 0), ("openai-responses", "/v1/responses", 1),
            ("openai-chat", "/v1/chat/completions", 0), ("openai-chat", "/v1/chat/completions", 1)]
        assert len({row.session_id for row in rows}) == 1
    finally:
        store.close()
    for path in tmp_path.iterdir():
        data = path.read_bytes()
        for secret in [*SECRETS.values(), "sk-vcr-recorded-4f0e1a9b3c", "vcrcookievalue0123456789"]:
            assert secret.encode() not in data, (path, secret)


async def test_the_ui_shows_opened_files(tmp_path):
    store = opened_store([str(DATA / "har" / "chrome.har"), str(DATA / "har" / "firefox.har")], tmp_path)
    try:
        app = InspectorApp(store=store, forwarder=None)
        async with app.run_test(size=(120, 30)) as pilot:
            await workers_done(app)
            await pilot.pause()
            flows = app.query_one(FlowList)
            assert (flows.total, flows.current.path) == (2, "/v1/messages")
            await pilot.press("enter")
            await pilot.pause()
            assert app.screen.flow_id == flows.current.id
    finally:
        store.close()


def test_open_refuses_an_unreadable_file_before_starting_the_ui(tmp_path, capsys):
    (tmp_path / "x.txt").write_text("interactions: [a recording")
    assert main(["open", str(tmp_path / "x.txt"), str(DATA / "har" / "chrome.har")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"toolwire-inspect: {tmp_path / 'x.txt'}: not a toolwire fixture, a HAR file or a vcrpy "
                          "cassette (neither JSON nor YAML: while parsing a flow sequence"), err


def test_a_yaml_alias_bomb_is_refused_before_it_is_walked(tmp_path):
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 10) + "]" for n in range(1, 10)]
    laughs = "\n".join(lines) + "\ninteractions: [*l9]\n"
    path = tmp_path / "laughs.yaml"
    path.write_text(laughs)
    with pytest.raises(LoadError) as raised:
        load(path)
    assert str(raised.value) == f"{path}: YAML aliases (*name) are not read: no cassette has them"


def test_a_ruby_vcr_cassette_reads_as_flows():
    # As ruby-openai, ruby_llm and langchainrb record them: http_interactions, bodies under `string` or
    # `base64_string`, lower-case methods. The first is Ollama's native chat, which no dialect speaks.
    cassette = DATA / "cassettes" / "ruby_vcr_ollama.yml"
    ollama, openai = load(cassette)
    assert (ollama.flow.method, ollama.flow.path, ollama.flow.status) == ("POST", "/api/chat", 200)
    assert ("authorization", "[redacted]") in [(k.lower(), v) for k, v in openai.flow.request_headers]
    assert orjson.loads(openai.flow.response_body)["choices"][0]["message"]["content"] == "Ok."
    first, second = analyse(ollama.flow), analyse(openai.flow)
    assert (first.dialect, first.violations) == (None, [])
    assert [(v.where, v.rule, v.pointer, v.severity.value) for v in second.violations] == [
        ("request", "OC-19", "/messages/1/tool_calls/0/id", "error")]


def test_a_cassette_with_binary_header_values_reads_as_flows():
    # vcrpy writes botocore's header values as !!binary (traceloop/openllmetry's Bedrock cassettes).
    (turn,) = load(DATA / "cassettes" / "botocore_binary_headers.yaml")
    assert ("Content-Type", "application/json") in turn.flow.request_headers
    assert ("User-Agent", "Boto3/1.34.122") in turn.flow.request_headers
    analysis = analyse(turn.flow)
    assert (analysis.dialect, analysis.violations) == (Dialect.BEDROCK, [])


def test_a_yaml_value_of_no_json_kind_is_named_not_a_traceback(tmp_path):
    path = tmp_path / "when.yaml"
    path.write_text("interactions:\n- request: {method: 2024-06-11, uri: 'https://x/v1/chat/completions'}\n"
                    "  response: {status: {code: 200}}\n")
    with pytest.raises(LoadError) as raised:
        load(path)
    assert str(raised.value) == f"{path}: request.method is a YAML date, not a string"
