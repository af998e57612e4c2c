"""A fixture as a pytest file: a regression test for one recorded turn that runs as-is in any
project with pytest.

- the recorded request trips the recorded rules (needs `toolwire-inspect`, skipped without it);
- the fixed request (FIXED_REQUEST, when the safe repairs applied) has no error: edited back to the
  broken request, the test fails naming the rule it breaks (needs `toolwire-inspect`);
- an in-process mock upstream (the standard library's http.server) answers the recorded response,
  chunk by chunk for a stream, and a client call gets those exact bytes back; through the official
  SDK when the dialect has one and it is installed (needs only pytest otherwise): openai, anthropic,
  google-genai (for the Gemini API's own paths, not Vertex AI's).

Written from the fixture (so redacted and stable); the fixture rides along as FIXTURE."""

from __future__ import annotations

import pprint
import re
from collections.abc import Sequence
from typing import Any

import orjson

from ..sockets import TURN_METHOD
from . import fixture
from .base import Exported, WriteOptions

# The SDK call that sends a recorded request body as is: (module, client expression, method path).
# Gemini's has a test of its own (_GENAI_TEST).
_SDKS = {
    "openai-chat": ("openai", "openai.OpenAI(base_url=base_url + '/v1', api_key='test-key', max_retries=0)",
                    "chat.completions.create"),
    "openai-responses": ("openai", "openai.OpenAI(base_url=base_url + '/v1', api_key='test-key', max_retries=0)",
                         "responses.create"),
    "anthropic": ("anthropic", "anthropic.Anthropic(base_url=base_url, api_key='test-key', max_retries=0)",
                  "messages.create"),
}


# The Gemini API paths google-genai builds (Vertex AI's differ); its stream is always SSE.
_GENAI_PATH = re.compile(r"/(v1|v1beta|v1alpha)/models/[^/:]+:(generateContent|streamGenerateContent)")

_GENAI_TEST = '''

def _genai_call():
    """The recorded REST request as the SDK's arguments: the API version, model and method from its
    path; the body's generationConfig and the rest of the body (tools, systemInstruction, ...) as
    the config, whose types take the REST spelling."""
    version, _, rest = FIXTURE["request"]["path"].strip("/").partition("/models/")
    model, _, method = rest.partition(":")
    body = dict(RECORDED_REQUEST["json"])
    contents = body.pop("contents", None)
    config = {**body.pop("generationConfig", {}), **body}
    return version, method == "streamGenerateContent", {"model": model, "contents": contents, "config": config}


def test_sdk_replays_the_recorded_response(upstream):
    genai = pytest.importorskip("google.genai")
    errors = pytest.importorskip("google.genai.errors")
    types = pytest.importorskip("google.genai.types")
    version, stream, arguments = _genai_call()
    client = genai.Client(api_key="test-key", http_options=types.HttpOptions(base_url=upstream, api_version=version))
    call = client.models.generate_content_stream if stream else client.models.generate_content
    status, _, _ = _recorded_response()
    if status >= 400:
        with pytest.raises(errors.APIError) as raised:
            result = call(**arguments)
            if stream:
                list(result)
        assert raised.value.code == status
        return
    result = call(**arguments)
    if stream:
        events = list(result)  # the SDK reads the whole recorded stream
        assert events
    else:
        # What the SDK read, in the REST spelling, without what it adds of its own.
        assert result.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={
            "sdk_http_response", "automatic_function_calling_history"}) == FIXTURE["response"]["body"]["json"]
'''


# A turn of a Responses-over-WebSocket socket: the mock answers its response.create over a socket.
_SOCKET_TEST = '''

def _recorded_events():
    """The recorded server events, each the text of the frame it came in (the fixture keeps them
    as the SSE stream a turn reads as)."""
    events = []
    for chunk in FIXTURE["response"]["chunks"]:
        lines = [line[6:] for line in chunk["text"].split("\\n") if line.startswith("data: ")]
        if lines:
            events.append("\\n".join(lines))
    return events


def test_socket_answers_the_recorded_events():
    mock = pytest.importorskip("inspector.mock", reason="the socket mock is toolwire-inspect's")
    client = pytest.importorskip("websockets.sync.client")
    route = mock.FixtureRoute.from_fixture(FIXTURE, __file__)
    with mock.MockUpstream(fixtures=[route], realtime=False) as upstream:
        with client.connect(upstream.base_url.replace("http", "ws", 1) + FIXTURE["request"]["path"]) as ws:
            ws.send(json.dumps({"type": "response.create", **RECORDED_REQUEST["json"]}))
            got = [ws.recv(timeout=30) for _ in _recorded_events()]
    assert got == _recorded_events()
'''


def _genai(data: dict[str, Any]) -> bool:
    """Whether google-genai can send the recorded request: a path it builds, an SSE stream."""
    request = data["request"]
    match = _GENAI_PATH.fullmatch(request["path"])
    return match is not None and (match[2] == "generateContent" or "alt=sse" in (request["query"] or "").split("&"))


def _literal(value: Any) -> str:
    return pprint.pformat(value, width=110, sort_dicts=False)


def _json_literal(value: Any) -> str:
    """`value` as JSON text parsed when the test is imported: a Python literal of a payload nested 200
    levels or more does not compile ("too many nested parentheses"), JSON text read at run time does,
    to the 254 levels a fixture holds as JSON. One string per line of the text, so it reads as JSON."""
    lines = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode().splitlines(keepends=True)
    return "json.loads(\n    " + "\n    ".join(map(repr, lines)) + ")"


def render(data: dict[str, Any], name: str = "turn") -> bytes:
    request_body = data["request"]["body"] or {}
    recorded = [(v["rule"], v["pointer"], v["severity"]) for v in data["violations"] if v["where"] == "request"]
    fixed = data.get("fixed")
    dialect = data.get("dialect")
    sdk = _SDKS.get(dialect or "") if "json" in request_body else None
    genai = dialect == "gemini" and "json" in request_body and _genai(data)
    sdk_name = sdk[0] if sdk is not None else "google-genai" if genai else None
    parts = [f'''"""Regression test for a recorded {dialect or "HTTP"} turn ({name}), exported by toolwire-inspect
(fixture format {fixture.VERSION}: docs/fixtures.md). Run it with pytest; the rule checks need
toolwire-inspect installed, the response replay only pytest{" (and the " + sdk_name + " SDK)" if sdk_name else ""}."""

import base64
import http.server
import json
import threading
import urllib.error
import urllib.request

import pytest

FIXTURE = {_json_literal(data)}

# The request as recorded and the rule findings it had, (rule, pointer, severity).
RECORDED_REQUEST = FIXTURE["request"]["body"]
RECORDED_FINDINGS = {_literal(recorded)}
''']
    if fixed is not None:
        parts.append(f'''
# The request with the safe repairs applied ({", ".join(sorted({r["rule"] for r in fixed["repairs"]}))}).
# Edit it as your code changes: the test below keeps it free of errors.
FIXED_REQUEST = {_json_literal(fixed["request"]["body"]["json"])}
''')
    parts.append('''

def _findings(body):
    """The request findings of the turn with `body` as its request, judged as the inspector judged it."""
    analysis = pytest.importorskip("inspector.analysis", reason="the rule checks need toolwire-inspect")
    load = pytest.importorskip("inspector.formats.load", reason="the rule checks need toolwire-inspect")
    data = {**FIXTURE, "request": {**FIXTURE["request"], "body": body}}
    found = analysis.analyse(load.flow_from_fixture(data, __file__)).violations
    return [(v.rule, v.pointer, v.severity.value) for v in found if v.where == "request"]


def test_recorded_request_trips_the_recorded_rules():
    assert _findings(RECORDED_REQUEST) == [tuple(finding) for finding in RECORDED_FINDINGS]
''')
    if fixed is not None:
        parts.append('''

def test_fixed_request_passes():
    errors = [f"{rule} at {pointer or '/'}" for rule, pointer, severity in _findings({"json": FIXED_REQUEST})
              if severity == "error"]
    assert not errors, "the fixed request breaks " + ", ".join(errors)
''')
    if data["request"]["method"] == TURN_METHOD:
        parts.append(_SOCKET_TEST)
        return "".join(parts).encode("utf-8")
    parts.append('''

def _recorded_response():
    response = FIXTURE["response"]
    chunks = [c["text"].encode() if "text" in c else base64.b64decode(c["base64"])
              for c in response.get("chunks") or ()]
    body = response.get("body")
    if not chunks and body is not None:
        chunks = [json.dumps(body["json"], ensure_ascii=False, separators=(",", ":")).encode() if "json" in body
                  else body["text"].encode() if "text" in body else base64.b64decode(body["base64"])]
    headers = [line.partition(": ")[::2] for line in response["headers"]]
    headers = [(k, v) for k, v in headers if k.lower() not in ("content-length", "transfer-encoding", "connection",
                                                                 "content-encoding")]
    return response["status"], headers, chunks


@pytest.fixture
def upstream():
    """An in-process mock upstream answering every POST with the recorded response."""
    status, headers, chunks = _recorded_response()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("connection", "close")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for chunk in chunks:  # each recorded chunk as one HTTP chunk, as the provider sent it
                if chunk:
                    self.wfile.write(b"%x\\r\\n%s\\r\\n" % (len(chunk), chunk))
                    self.wfile.flush()
            self.wfile.write(b"0\\r\\n\\r\\n")

        do_GET = do_POST

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_client_gets_the_recorded_response(upstream):
    status, _, chunks = _recorded_response()
    request = FIXTURE["request"]
    target = upstream + request["path"] + ("?" + request["query"] if request["query"] else "")
    body = json.dumps(RECORDED_REQUEST["json"]).encode() if RECORDED_REQUEST and "json" in RECORDED_REQUEST else b""
    sent = urllib.request.Request(target, data=body, method=request["method"],
                                  headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(sent, timeout=30) as answer:
            got_status, got = answer.status, answer.read()
    except urllib.error.HTTPError as error:
        got_status, got = error.code, error.read()
    assert (got_status, got) == (status, b"".join(chunks))
''')
    if sdk is not None:
        module, client, method = sdk
        parts.append(f'''

def test_sdk_replays_the_recorded_response(upstream):
    {module} = pytest.importorskip("{module}")
    base_url = upstream
    client = {client}
    status, _, _ = _recorded_response()
    if status >= 400:
        with pytest.raises({module}.APIStatusError) as raised:
            client.{method}(**RECORDED_REQUEST["json"])
        assert raised.value.status_code == status
        return
    result = client.{method}(**RECORDED_REQUEST["json"])
    if RECORDED_REQUEST["json"].get("stream"):
        events = list(result)  # the SDK reads the whole recorded stream
        assert events
    else:
        assert result.to_dict() == FIXTURE["response"]["body"]["json"]
''')
    elif genai:
        parts.append(_GENAI_TEST)
    return "".join(parts).encode("utf-8")


def write(turns: Sequence[Exported], options: WriteOptions) -> bytes:
    (turn,) = turns
    return render(turn.data, f"flow #{turn.flow_id}")
