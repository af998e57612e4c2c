"""`curl` of a recorded request: run by a real shell and the real curl against the fake upstream
the flow went to, it sends what the forwarder sent, with the key from the environment; the
command itself never holds a key."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import unicodedata
from dataclasses import replace

import pytest

from inspector.curl import INLINE_LIMIT, CurlError, curl_body, curl_command, needs_body_file
from inspector.flow import Flow
from inspector.mock import sse_response
from inspector.wire.dialects.openai_chat.mock import chat_stream

pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")

LIVE = "sk-live-0123456789abcdef"  # what the client sent: must never show up in the command
REPLAY = "sk-from-the-shell-9876543210"


def recorded(rig, path: str, body: bytes, headers: dict[str, str]) -> Flow:
    response = rig.client.post(path, content=body, headers=headers)
    assert response.status_code == 200
    (event,) = rig.events.completed()
    return rig.store.get(event.flow.id)


def run(command: str, env: dict[str, str], cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command + " --silent --show-error --output /dev/null"],
                          env={"PATH": os.environ["PATH"], **env}, capture_output=True, text=True, timeout=30,
                          cwd=cwd, check=False)


@pytest.mark.parametrize(("path", "headers", "variable", "key_header", "key_value"), [
    ("/v1/chat/completions?trace=a%20b", {"Authorization": f"Bearer {LIVE}"}, "OPENAI_API_KEY", "authorization",
     f"Bearer {REPLAY}"),
    ("/v1/messages", {"x-api-key": LIVE, "anthropic-version": "2023-06-01"}, "ANTHROPIC_API_KEY", "x-api-key",
     REPLAY),
    ("/v1beta/models/gemini-2.0-flash:generateContent", {"x-goog-api-key": LIVE}, "GEMINI_API_KEY",
     "x-goog-api-key", REPLAY),
])
def test_the_command_resends_the_request_with_the_key_from_the_environment(rig, path, headers, variable,
                                                                           key_header, key_value):
    body = b'{"model":"m","messages":[{"role":"user","content":"it\'s \\"$HOME\\" `x`"}],"contents":[]}'
    flow = recorded(rig, path, body, {"Content-Type": "application/json", **headers})
    command = curl_command(flow)
    assert LIVE not in command and f"${{{variable}}}" in command
    done = run(command, {variable: REPLAY})
    assert done.returncode == 0, done.stderr
    first, again = rig.mock.received
    assert (again.method, again.path, again.query, again.body) == (first.method, first.path, first.query, body)
    assert again.header(key_header) == key_value
    assert again.header("content-type") == "application/json"


def test_a_key_in_the_query_comes_back_from_the_environment(rig):
    body = b'{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}'
    flow = recorded(rig, f"/v1beta/models/gemini-2.0-flash:generateContent?alt=json&key={LIVE}", body,
                    {"Content-Type": "application/json"})
    command = curl_command(flow)
    assert command.splitlines()[0] == (
        f'curl "{rig.mock.base_url}/v1beta/models/gemini-2.0-flash:generateContent?alt=json&key=${{GEMINI_API_KEY}}" \\')
    assert run(command, {"GEMINI_API_KEY": REPLAY}).returncode == 0
    assert rig.mock.received[1].query == f"alt=json&key={REPLAY}"
    assert rig.mock.received[1].body == body


def test_the_whole_command_of_a_compressed_stream_request(rig):
    """Exact text: framing and encoding headers go (curl computes them for the decoded body it sends),
    a streamed answer is read unbuffered."""
    body = b'{"model":"gpt-4o-mini","stream":true,"messages":[]}'
    rig.mock.push(sse_response(chat_stream("hi")))
    response = rig.client.post("/v1/chat/completions", content=gzip.compress(body), headers={
        "Content-Type": "application/json", "Content-Encoding": "gzip", "Authorization": f"Bearer {LIVE}",
        "Accept-Encoding": "gzip", "X-Trace": "a'b"})
    assert response.status_code == 200
    (event,) = rig.events.completed()
    flow = rig.store.get(event.flow.id)
    assert curl_command(flow) == "\n".join([
        f"curl {rig.mock.base_url}/v1/chat/completions \\",
        "  --no-buffer \\",
        "  -H 'accept: */*' \\",
        "  -H 'user-agent: python-httpx/" + rig.mock.received[0].header("user-agent").split("/", 1)[1] + "' \\",
        "  -H 'content-type: application/json' \\",
        '  -H "authorization: Bearer ${OPENAI_API_KEY}" \\',
        "  -H 'x-trace: a'\"'\"'b' \\",
        f"  --data-binary '{body.decode()}'",
    ])


def test_a_big_body_is_sent_from_a_file(rig, tmp_path):
    body = b'{"model":"m","messages":[{"role":"user","content":"' + b"x" * INLINE_LIMIT + b'"}]}'
    flow = recorded(rig, "/v1/chat/completions", body, {"Content-Type": "application/json"})
    assert needs_body_file(flow)
    (tmp_path / "body.json").write_bytes(curl_body(flow))
    command = curl_command(flow, body_file="body.json")
    assert command.endswith("--data-binary @body.json") and len(command) < 500
    assert run(command, {}, cwd=tmp_path).returncode == 0
    assert rig.mock.received[1].body == body


def test_a_flow_that_never_went_upstream_is_refused():
    with pytest.raises(CurlError, match="flow #7 never went upstream"):
        curl_command(Flow(id=7, session_id=1, started_at=0.0, method="POST", path="/v1/chat/completions"))


# -- paste-jacking: the copied command holds no character a terminal or a line editor acts on ---------

# A ^C aborts the line being pasted and the rest runs as a command; ESC starts terminal and readline
# sequences; \r ends the line; a bidi override shows another command than the one that runs.
HOSTILE = "\x03\x1b[2J\r\u202e\x7f\x85\t\u2028"


def pastable(command: str) -> bool:
    return all(c == "\n" or unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp", "Cs") for c in command)


def sh(command: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", command + " --silent --show-error --output /dev/null"],
                          env={"PATH": os.environ["PATH"]}, capture_output=True, text=True, timeout=30, cwd=cwd,
                          check=False)


def test_a_json_body_with_control_and_bidi_characters_is_escaped_and_stays_the_same_json(rig):
    """Raw in a JSON string (DEL, C1, bidi, line separator) or as whitespace between tokens (\\t,
    \\r): JSON allows them; the command carries them escaped, and the upstream gets the same JSON."""
    body = ('{"model":"m",\r\n\t"messages":[{"role":"user","content":"rm \u202e-rf \x7f\x85\u2028 ~"}],'
            '"x":"\\u0003"}').encode()
    flow = recorded(rig, "/v1/chat/completions", body, {"Content-Type": "application/json"})
    assert not needs_body_file(flow)
    command = curl_command(flow)
    assert pastable(command)
    assert command.split("--data-binary ")[1] == (
        "'{\"model\":\"m\", \n \"messages\":[{\"role\":\"user\",\"content\":"
        "\"rm \\u202e-rf \\u007f\\u0085\\u2028 ~\"}],\"x\":\"\\u0003\"}'")
    done = sh(command)
    assert done.returncode == 0, done.stderr
    sent = rig.mock.received[1].body
    assert json.loads(sent) == json.loads(body)


@pytest.mark.parametrize("body", [
    ('{"model":"m","messages":[{"role":"user","content":"' + HOSTILE + '"}]}').encode(),  # not JSON: raw C0 in a string
    ("plain text " + HOSTILE + " tail").encode(),
], ids=["json-like", "text"])
def test_a_body_that_cannot_be_escaped_goes_in_the_body_file(rig, tmp_path, body):
    rig.client.post("/v1/chat/completions", content=body, headers={"Content-Type": "application/json"})
    (event,) = rig.events.completed()  # the mock upstream answers 400 (not JSON): recorded all the same
    flow = rig.store.get(event.flow.id)
    assert needs_body_file(flow)
    with pytest.raises(CurlError, match=f"flow #{flow.id}: the body holds characters a pasted command must not"):
        curl_command(flow)
    (tmp_path / "flow.body").write_bytes(curl_body(flow))
    command = curl_command(flow, body_file="flow.body")
    assert pastable(command) and command.endswith("--data-binary @flow.body")
    done = sh(command, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert rig.mock.received[1].body == body


def test_a_control_character_in_the_url_is_percent_encoded(rig):
    flow = recorded(rig, "/v1/chat/completions", b'{"model":"m","messages":[]}', {"Content-Type": "application/json"})
    flow = replace(flow, upstream_url=flow.upstream_url + "?trace=a\x1b;c;x\x07\u202eb")
    command = curl_command(flow)
    assert pastable(command)
    assert command.splitlines()[0] == f"curl '{rig.mock.base_url}/v1/chat/completions?trace=a%1B;c;x%07%E2%80%AEb' \\"
    assert sh(command).returncode == 0
    assert rig.mock.received[1].query == "trace=a%1B;c;x%07%E2%80%AEb"


def test_a_header_no_command_can_carry_is_refused_by_name():
    flow = Flow(id=7, session_id=1, started_at=0.0, method="POST", path="/v1/chat/completions",
                upstream_url="http://127.0.0.1:9/v1/chat/completions",
                request_headers=[("content-type", "application/json"), ("x-note", "ok\x1b[31m\u202e")],
                request_body=b"{}")
    with pytest.raises(CurlError) as raised:
        curl_command(flow)
    assert str(raised.value) == ("flow #7: the header x-note holds characters a pasted command must not carry "
                                 "(U+001B, U+202E)")
    flow = replace(flow, request_headers=[("x-\u202enote", "ok")])
    with pytest.raises(CurlError) as raised:
        curl_command(flow)
    assert str(raised.value) == ("flow #7: the header x-\\u202enote holds characters a pasted command must not carry "
                                 "(U+202E)")
    flow = replace(flow, request_headers=[], method="GET\x03")
    with pytest.raises(CurlError) as raised:
        curl_command(flow)
    assert str(raised.value) == "flow #7: the method holds characters a pasted command must not carry (U+0003)"
