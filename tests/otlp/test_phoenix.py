"""End to end against a real OTLP backend, Arize Phoenix (opt-in: `pytest -m phoenix`). `phoenix
serve` runs on loopback in a fresh working directory; `record --otlp-endpoint` exports to it while
the openai SDK runs a tool-calling loop, the anthropic SDK makes a call and an MCP client calls a
tool through one launch; the spans are queried back with Phoenix's own client. Then the spans
Phoenix serves as OTLP JSON, saved to a file, open in `open`'s loader and in `check` with the
stored flows' findings.

Phoenix (arize-phoenix) pins anthropic below 2 and brings its own server stack, so it lives in a
venv of its own, named by TOOLWIRE_PHOENIX (its `phoenix` command); the query client comes with
the `phoenix` extra."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from datetime import datetime, timedelta, UTC

import httpx
import pytest

from inspector.analysis import analyse
from inspector.cli import main
from inspector.formats.registry import load
from inspector.mock import MockUpstream, json_response
from inspector.otlp.spans import FINDING_EVENT, session_trace_id, span_id
from inspector.store import Store
from inspector.wire.dialects.openai_chat.mock import chat_completion

from .test_live_export import CALL, drive, mcp_upstream, start_record, stop  # noqa: F401 (a fixture)

pytestmark = pytest.mark.phoenix
START_LIMIT = 300.0  # seconds for `phoenix serve` to migrate its database and listen (a loaded 2-core machine: ~60)
INGEST_LIMIT = 60.0  # seconds for the spans sent to be queryable (Phoenix ingests through a queue)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def until(condition, limit: float, what: str):  # type: ignore[no-untyped-def]
    """Poll with a deadline: another process's progress announces itself to nobody here."""
    deadline = time.monotonic() + limit
    while True:
        found = condition()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    command = os.environ.get("TOOLWIRE_PHOENIX") or shutil.which("phoenix")
    if not command:
        pytest.skip("set TOOLWIRE_PHOENIX to the `phoenix` command of a venv with arize-phoenix (docs/otel.md)")
    folder = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(folder), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(free_port()), "PHOENIX_TELEMETRY_ENABLED": "false"}
    with open(folder / "phoenix.log", "wb") as log:
        proc = subprocess.Popen([command, "serve"], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        assert proc.poll() is None, (folder / "phoenix.log").read_text()[-2000:]
        try:
            return httpx.get(f"{url}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        until(up, START_LIMIT, "phoenix serve")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def micros(iso: str) -> int:
    """Phoenix's ISO times as microseconds since the epoch."""
    return (datetime.fromisoformat(iso) - EPOCH) // timedelta(microseconds=1)


def kept(seconds: float) -> int:
    """A time as Phoenix keeps it: the span's nanoseconds as a datetime, to the nearest microsecond."""
    return (datetime.fromtimestamp(ns(seconds) / 1e9, UTC) - EPOCH) // timedelta(microseconds=1)


async def test_phoenix_receives_the_spans_of_one_launch(tmp_path, phoenix, mcp_upstream):
    from phoenix.client import Client

    db = tmp_path / "flows.sqlite3"
    with MockUpstream() as oa, MockUpstream() as an:
        oa.push(json_response(chat_completion(None, [CALL])), json_response(chat_completion("It is a test page.")))
        proc, routes = start_record(tmp_path, "--store", str(db), "--route", f"oa={oa.base_url}",
                                    "--route", f"an={an.base_url}", "--route", f"files={mcp_upstream}/alpha",
                                    "--otlp-endpoint", phoenix, "--capture-content", "--openinference",
                                    # Phoenix takes no metrics (405), and on a loaded machine answers in seconds.
                                    env={"OTEL_METRICS_EXPORTER": "none", "OTEL_EXPORTER_OTLP_TIMEOUT": "60"})
        try:
            await drive(routes)
        finally:
            err = stop(proc)
    assert "otlp: 7 spans exported, 0 failed, 0 flows dropped" in err
    with Store(db, read_only=True) as store:
        flows = [store.get(row.id) for row in store.rows()]
        (session,) = store.sessions()
    trace = f"{session_trace_id(session.id, session.started_at):032x}"
    client = Client(base_url=phoenix)
    spans = until(lambda: (found := client.spans.get_spans(project_identifier="default", trace_ids=[trace], limit=100))
                  and len(found) == 7 and found, INGEST_LIMIT, "the spans in Phoenix")

    # Names and OpenInference kinds as Phoenix shows them; every span in the session's one trace.
    assert sorted((span["name"], span["span_kind"]) for span in spans) == [
        ("chat claude-sonnet-4-6", "LLM"), ("chat gpt-4o-mini", "LLM"), ("chat gpt-4o-mini", "LLM"),
        ("execute_tool scrape_webpage", "TOOL"), ("server/discover", "UNKNOWN"), ("tools/call lookup", "TOOL"),
        ("tools/list", "UNKNOWN")]
    assert {span["context"]["trace_id"] for span in spans} == {trace}
    by_flow = {(span["attributes"]["toolwire.flow.id"], span["name"].startswith("execute_tool")): span
               for span in spans}

    # Each flow's span: its id, a root, the flow's own times (Phoenix keeps microseconds).
    for flow in flows:
        span = by_flow[(flow.id, False)]
        assert (span["context"]["span_id"], span["parent_id"], micros(span["start_time"]), micros(span["end_time"])) == (
            f"{span_id(flow.id):016x}", None, kept(flow.started_at), kept(flow.started_at + flow.latency_ms / 1000.0))

    # The tool ran from the end of the response that asked for it to the request that brought its result.
    first, second, claude = flows[:3]
    tool = by_flow[(first.id, True)]
    assert (tool["parent_id"], micros(tool["start_time"]), micros(tool["end_time"])) == (
        f"{span_id(first.id):016x}", kept(first.started_at + first.latency_ms / 1000.0), kept(second.started_at))
    assert {k: tool["attributes"][k] for k in ("gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.call.id",
                                                "tool.name", "input.value", "output.value")} == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "scrape_webpage",
        "gen_ai.tool.call.id": "call_scrape_1", "tool.name": "scrape_webpage",
        "input.value": '{"url": "https://example.org"}', "output.value": "Example Domain"}

    # The LLM calls' GenAI and OpenInference attributes, side by side.
    chat = by_flow[(first.id, False)]["attributes"]
    usage = json.loads(first.response_body)["usage"]
    assert {k: chat[k] for k in ("gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model",
                                  "gen_ai.response.finish_reasons", "gen_ai.usage.input_tokens",
                                  "gen_ai.usage.output_tokens", "llm.provider", "llm.model_name",
                                  "llm.token_count.total", "toolwire.flow.command")} == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.response.finish_reasons": ["tool_calls"], "gen_ai.usage.input_tokens": usage["prompt_tokens"],
        "gen_ai.usage.output_tokens": usage["completion_tokens"], "llm.provider": "openai",
        "llm.model_name": "gpt-4o-mini", "llm.token_count.total": usage["prompt_tokens"] + usage["completion_tokens"],
        "toolwire.flow.command": f"toolwire-inspect open {db.resolve()} --flow {first.id}"}
    assert (chat["input.value"], chat["output.value"]) == (first.request_body.decode(), first.response_body.decode())
    claude_attrs = by_flow[(claude.id, False)]["attributes"]
    assert (claude_attrs["gen_ai.provider.name"], claude_attrs["llm.provider"], claude_attrs["gen_ai.request.max_tokens"]) == (
        "anthropic", "anthropic", 16)

    # The demo's findings as events on the span of the flow they were found in.
    span_of_first = by_flow[(first.id, False)]
    findings = [(v.rule, v.severity.value, v.pointer, v.message) for v in analyse(first).violations]
    assert findings and {f[0] for f in findings} >= {"OC-05"}
    assert [(e["name"], tuple(e["attributes"][k] for k in ("toolwire.rule_id", "toolwire.severity", "toolwire.pointer",
                                                          "toolwire.message")), micros(e["timestamp"]))
            for e in span_of_first["events"]] == [
        (FINDING_EVENT, finding, micros(span_of_first["end_time"])) for finding in findings]

    (mcp_call,) = [span for span in spans if span["name"] == "tools/call lookup"]
    assert {k: mcp_call["attributes"][k] for k in ("mcp.method.name", "gen_ai.tool.name", "tool.name")} == {
        "mcp.method.name": "tools/call", "gen_ai.tool.name": "lookup", "tool.name": "lookup"}

    # What Phoenix serves as OTLP JSON, saved as a file, opens with the stored flows' findings.
    download = httpx.get(f"{phoenix}/v1/projects/default/spans/otlpv1", params={"trace_id": trace, "limit": 100})
    assert download.status_code == 200
    saved = tmp_path / "phoenix-spans.json"
    saved.write_bytes(download.content)
    reopened = sorted(load(saved), key=lambda turn: turn.flow.started_at)
    llm = [first, second, claude]
    assert [(t.flow.path, t.flow.request_body, t.flow.response_body) for t in reopened] == [
        (f.path, f.request_body, f.response_body) for f in llm]
    assert [found(t.flow) for t in reopened] == [found(f) for f in llm]
    assert main(["check", str(saved)]) == 1  # the demo's failing turn is an error


def ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


def found(flow) -> list[tuple]:  # type: ignore[no-untyped-def]
    return [(v.where, v.rule, v.severity.value, v.pointer, v.message) for v in analyse(flow).violations]
