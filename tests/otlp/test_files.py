"""`export --format otlp` and `otlp push` from a recorded store, and OTLP/JSON files read back by
`open`'s loader and by `check`: the findings survive the trip, what a span lacks is said."""

from __future__ import annotations

import importlib.util
import json

import pytest
from inspector.analysis import analyse
from inspector.cli import main
from inspector.formats.base import LoadError
from inspector.formats.registry import load
from inspector.formats.otlp_json import parse
from inspector.store import Store

from .conftest import ANTHROPIC_KEY, OPENAI_KEY
from .receiver import Receiver, span_attributes


def export(recorded, tmp_path, *extra: str) -> bytes:
    out = tmp_path / "out"
    assert main(["export", "--session", "--format", "otlp", "-o", str(out), "--store", str(recorded.path), *extra]) == 0
    return (out / "session-1.otlp.json").read_bytes()


def stored_findings(recorded) -> list[list[tuple]]:
    with Store(recorded.path, read_only=True) as store:
        flows = [store.get(row.id) for row in store.rows()]
    return [[(v.where, v.rule, v.severity.value, v.pointer, v.message) for v in analyse(f).violations] for f in flows]


def test_an_exported_session_reopens_with_the_same_findings(recorded, tmp_path):
    data = export(recorded, tmp_path, "--capture-content")
    path = tmp_path / "trace.otlp.json"
    path.write_bytes(data)
    turns = load(path)
    reopened = [[(v.where, v.rule, v.severity.value, v.pointer, v.message) for v in analyse(t.flow).violations]
                for t in turns]
    original = stored_findings(recorded)
    assert any(rule == "OC-05" for _, rule, *_ in original[0])  # the demo's failing turn
    assert reopened == original
    assert [(t.flow.path, t.flow.request_headers, t.flow.status) for t in turns] == [
        ("/v1/chat/completions", [], 200), ("/v1/chat/completions", [], 200), ("/v1/messages", [], 200)]
    assert all(t.flow.notes == ["read from an OTLP span: the bodies are its toolwire.request.body and "
                                "toolwire.response.body (decoded); the span recorded no headers and no stream chunk "
                                "times"] for t in turns)
    assert OPENAI_KEY.encode() not in data and ANTHROPIC_KEY.encode() not in data


def test_check_reads_an_otlp_trace_and_exits_1_on_its_errors(recorded, tmp_path, capsys):
    path = tmp_path / "trace.otlp.json"
    path.write_bytes(export(recorded, tmp_path, "--capture-content"))
    capsys.readouterr()
    assert main(["check", "--format", "json", str(path)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(f["rule"], f["pointer"], f["message"]) for f in report] == [
        (rule, pointer, message) for flow in stored_findings(recorded) for _, rule, _, pointer, message in flow]


def test_without_content_the_reopened_flows_say_what_is_not_known(recorded, tmp_path):
    path = tmp_path / "trace.otlp.json"
    path.write_bytes(export(recorded, tmp_path))
    turns = load(path)
    assert [(t.flow.request_body, t.flow.response_body, analyse(t.flow).violations) for t in turns] == [(b"", b"", [])] * 3
    assert turns[0].flow.notes[1:] == [
        "the span carries no message content (gen_ai.input.messages): the request is not known",
        "the span carries no output content (gen_ai.output.messages): the response is not known"]


def test_exporting_a_session_twice_gives_the_same_bytes(recorded, tmp_path):
    assert export(recorded, tmp_path / "a", "--capture-content") == export(recorded, tmp_path / "b", "--capture-content")


def test_the_latest_conventions_alone_when_opted_in(recorded, tmp_path, monkeypatch):
    def systems(data: bytes) -> list:
        (request,) = parse(data, "x")
        return [span_attributes(s).get("gen_ai.system") for rs in request.resource_spans for ss in rs.scope_spans
                for s in ss.spans]

    assert systems(export(recorded, tmp_path / "a")) == ["openai", None, "openai", "anthropic"]
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "http,gen_ai_latest_experimental")
    assert systems(export(recorded, tmp_path / "b")) == [None] * 4


def test_push_sends_the_spans_the_export_writes(recorded, tmp_path, capsys):
    exported = parse(export(recorded, tmp_path, "--capture-content"), "x")
    with Receiver() as receiver:
        assert main(["otlp", "push", "--session", "1", "--endpoint", receiver.url, "--capture-content",
                     "--store", str(recorded.path)]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == "sent 4 spans for 3 flows of session 1"
    assert [r.SerializeToString() for r in receiver.requests] == [r.SerializeToString() for r in exported]


def test_push_to_a_collector_answering_500_exits_1(recorded, capsys):
    with Receiver("error") as receiver:
        assert main(["otlp", "push", "--endpoint", receiver.url, "--store", str(recorded.path)]) == 1
    assert len(receiver.requests) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        "toolwire-inspect: the collector did not take the 4 spans of session 1 (see the exporter's message above)")


@pytest.mark.parametrize(("text", "message"), [
    ('{"resourceSpans": 3}', "document 1 has no resourceSpans list"),
    ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz", "spanId": "00"}]}]}]}',
     "document 1: id 'zz' is not hex"),
    ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 7}]}]}]}', "document 1 is not an OTLP trace request"),
    ('{"resourceSpans": []}\n{"resourceSpans"', "not OTLP/JSON"),
    ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "GET /"}]}]}]}',
     "an OTLP/JSON trace with no GenAI LLM span (gen_ai.operation.name chat, generate_content or text_completion)"),
])
def test_a_broken_otlp_file_is_a_clear_error(tmp_path, capsys, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(LoadError) as caught:
        load(path)
    assert str(caught.value).startswith(f"{path}: {message}")
    assert main(["check", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_the_collector_file_exporters_json_lines_are_read(recorded, tmp_path):
    """The Collector's file exporter writes one OTLP/JSON request per line."""
    document = json.loads(export(recorded, tmp_path, "--capture-content"))
    path = tmp_path / "lines.json"
    path.write_text(json.dumps(document) + "\n" + json.dumps(document) + "\n")
    assert [t.flow.path for t in load(path)] == ["/v1/chat/completions", "/v1/chat/completions", "/v1/messages"] * 2


@pytest.mark.parametrize(("argv", "env", "message"), [
    (["--otlp-endpoint"], {}, "toolwire-inspect: no OTLP endpoint: give a URL or set OTEL_EXPORTER_OTLP_ENDPOINT\n"),
    pytest.param(["--otlp-endpoint", "http://127.0.0.1:1"], {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
                 "toolwire-inspect: OTLP over gRPC needs the otel-grpc extra: pip install 'toolwire-inspect[otel-grpc]'\n",
                 marks=pytest.mark.skipif(importlib.util.find_spec("opentelemetry.exporter.otlp.proto.grpc") is not None,
                                          reason="the gRPC exporter is installed (otel-grpc, or the phoenix extra)")),
    (["--otlp-endpoint", "http://127.0.0.1:1"], {"OTEL_EXPORTER_OTLP_PROTOCOL": "smoke-signals"},
     "toolwire-inspect: OTLP protocol 'smoke-signals' is not offered: http/protobuf or grpc\n"),
])
def test_record_refuses_an_export_it_cannot_make(tmp_path, capsys, monkeypatch, argv, env, message):
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                 "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
                 "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["record", "--upstream", "http://127.0.0.1:9", "--port", "0", "--store", str(tmp_path / "s.db"),
                 *argv]) == 2
    assert capsys.readouterr().err == message


def test_push_sends_the_genai_metrics_of_the_sessions_llm_calls(recorded):
    """gen_ai.client.operation.duration and gen_ai.client.token.usage, with the conventions' buckets
    and attributes: one point per model and (for tokens) token type; the execute_tool span is none."""
    from inspector.otlp.metrics import DURATION_BUCKETS, TOKEN_BUCKETS
    from inspector.otlp.spans import flow_end

    with Receiver() as receiver:
        assert main(["otlp", "push", "--endpoint", receiver.url, "--store", str(recorded.path)]) == 0
    with Store(recorded.path, read_only=True) as store:
        flows = [store.get(row.id) for row in store.rows()]
    (request,) = receiver.metric_requests
    (resource_metrics,) = request.resource_metrics
    (scope,) = resource_metrics.scope_metrics
    assert scope.scope.name == "toolwire-inspect"
    got = {}
    for metric in scope.metrics:
        for point in metric.histogram.data_points:
            got[(metric.name, metric.unit, tuple(sorted(span_attributes(point).items())))] = (
                point.count, point.sum, list(point.explicit_bounds))
    port = int(recorded.mock.base_url.rsplit(":", 1)[1])

    def key(name, unit, provider, model, **extra):
        return (name, unit, tuple(sorted({"gen_ai.operation.name": "chat", "gen_ai.provider.name": provider,
                                          "gen_ai.request.model": model, "gen_ai.response.model": model,
                                          "server.address": "127.0.0.1", "server.port": port, **extra}.items())))

    def seconds(flow):
        return (round(flow_end(flow) * 1e9) - round(flow.started_at * 1e9)) / 1e9

    def tokens(flow, side):
        usage = json.loads(flow.response_body)["usage"]
        return usage.get(f"{side}_tokens", usage.get({"input": "prompt_tokens", "output": "completion_tokens"}[side]))

    chats, claude = flows[:2], flows[2]
    durations, token_bounds = list(DURATION_BUCKETS), [float(b) for b in TOKEN_BUCKETS]
    assert got == {
        key("gen_ai.client.operation.duration", "s", "openai", "gpt-4o-mini"):
            (2, seconds(chats[0]) + seconds(chats[1]), durations),
        key("gen_ai.client.operation.duration", "s", "anthropic", "claude-sonnet-4-6"): (1, seconds(claude), durations),
        **{key("gen_ai.client.token.usage", "{token}", "openai", "gpt-4o-mini", **{"gen_ai.token.type": side}):
           (2, tokens(chats[0], side) + tokens(chats[1], side), token_bounds) for side in ("input", "output")},
        **{key("gen_ai.client.token.usage", "{token}", "anthropic", "claude-sonnet-4-6", **{"gen_ai.token.type": side}):
           (1, tokens(claude, side), token_bounds) for side in ("input", "output")},
    }


def test_no_metrics_when_otel_metrics_exporter_is_none(recorded, monkeypatch):
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
    with Receiver() as receiver:
        assert main(["otlp", "push", "--endpoint", receiver.url, "--store", str(recorded.path)]) == 0
    assert (len(receiver.requests), receiver.metric_requests) == (1, [])
