"""Bedrock end to end with boto3 as the client (`bedrock-runtime`: converse, converse_stream, and
Claude's InvokeModel, invoke_model_with_response_stream)
against a fake Bedrock that verifies every SigV4 signature with botocore: through a base-URL route
and in repair mode the forwarder signs again (the client signed the forwarder's host), through
proxy mode the client's own signature arrives intact; the tool-use loop is reassembled and checked,
a seeded defect is caught, explained, repaired, replayed and exported."""

from __future__ import annotations

import boto3
import orjson
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from inspector.analysis import analyse
from inspector.cli import main
from inspector.flow import ReplayKind
from inspector.formats.fixture import from_store
from inspector.formats.registry import render
from inspector.mock import Canned, framed, json_response
from inspector.proxy import Forwarder
from inspector.proxy.ca import LocalCA
from inspector.proxy.options import Options, ProxyOptions
from inspector.redact import REDACTED
from inspector.replay import replay_stored
from inspector.wire.canned import Call
from inspector.wire.dialects.bedrock.mock import converse_response, converse_stream
from inspector.wire.dialects.anthropic.mock import anthropic_stream
from inspector.wire.dialects.bedrock.stream import FRAMING, encode_chunk

from tests.proxy.conftest import Events
from .fake_bedrock import HOST, REGION, SECRET, FakeBedrock

MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
PATH = "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse"
TOOLS = {"tools": [{"toolSpec": {"name": "get_weather", "description": "Weather by city", "inputSchema": {
    "json": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}}]}
ASK = [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]
CALL = Call("get_weather", '{"city": "Paris"}', "tooluse_paris1")


def client(endpoint: str | None = None, **config):
    return boto3.client("bedrock-runtime", region_name=REGION, endpoint_url=endpoint,
                        config=Config(retries={"max_attempts": 1}, **config), **({} if endpoint else {}))


@pytest.fixture
def forwarder(aws, fake, store):
    """A base-URL route to the fake: boto3 signs for the forwarder's host, the forwarder signs again."""
    events = Events()
    with Forwarder(Options(fake.base_url, port=0), store=store, on_event=events) as running:
        running.events = events
        yield running


def test_the_fake_refuses_a_signature_made_for_another_host(aws):
    with FakeBedrock(host=HOST) as elsewhere:
        with pytest.raises(ClientError) as refused:
            client(elsewhere.base_url).converse(modelId=MODEL, messages=ASK)
    assert refused.value.response["Error"]["Code"] == "InvalidSignatureException"
    assert elsewhere.refused == ["the request signature does not match"]


def test_converse_through_a_base_url_route_is_signed_again_and_the_tool_use_loop_is_checked(forwarder, fake, store):
    fake.push(json_response(converse_response("Checking.", [CALL])), json_response(converse_response("Sunny.")))
    bedrock = client(forwarder.base_url)
    first = bedrock.converse(modelId=MODEL, messages=ASK, toolConfig=TOOLS)
    assert first["stopReason"] == "tool_use"
    assert first["output"]["message"]["content"] == [
        {"text": "Checking."}, {"toolUse": {"toolUseId": "tooluse_paris1", "name": "get_weather", "input": {"city": "Paris"}}}]
    history = [*ASK, first["output"]["message"], {"role": "user", "content": [{"toolResult": {
        "toolUseId": "tooluse_paris1", "content": [{"json": {"sky": "clear"}}], "status": "success"}}]}]
    second = bedrock.converse(modelId=MODEL, messages=history, toolConfig=TOOLS)
    assert second["output"]["message"]["content"] == [{"text": "Sunny."}]
    forwarder.events.completed(2)
    assert fake.refused == []
    assert [(r.method, r.path, r.header("host")) for r in fake.received] == [
        ("POST", PATH, f"127.0.0.1:{fake.mock.port}")] * 2
    rows = store.rows(order="time")
    assert [(r.dialect, r.status, r.state, r.mode, r.tools, r.tool_calls, r.errors) for r in rows] == [
        ("bedrock", 200, "complete", "passthrough", 1, 1, 0), ("bedrock", 200, "complete", "passthrough", 1, 0, 0)]
    flow = store.get(rows[1].id)
    assert flow.notes == [f"signed again for bedrock as it went to {fake.base_url} (the client's signature covers "
                          "the host it sent to)"]
    for headers in (flow.request_headers, flow.upstream_request_headers):
        assert {k.lower(): v for k, v in headers}["authorization"] == REDACTED
    analysis = analyse(flow)
    assert (analysis.model, analysis.violations) == (MODEL, [])
    store.flush()
    assert SECRET.encode() not in store.path.read_bytes()


def test_converse_stream_through_a_base_url_route_is_reassembled(forwarder, fake, store):
    fake.push(framed(converse_stream("Checking both.", [CALL, Call("get_weather", '{"city": "Oslo"}', "tooluse_oslo2")]),
                     FRAMING))
    answer = client(forwarder.base_url).converse_stream(modelId=MODEL, messages=ASK, toolConfig=TOOLS)
    events = list(answer["stream"])
    assert [next(iter(event)) for event in events] == [
        "messageStart", "contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockStop",
        "contentBlockStart", "contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockStop",
        "contentBlockStart", "contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockStop",
        "messageStop", "metadata"]
    forwarder.events.completed(1)
    assert fake.refused == []
    flow = store.get(store.rows()[0].id)
    assert (flow.path, flow.streamed, flow.status) == (PATH + "-stream", True, 200)
    analysis = analyse(flow)
    assert analysis.violations == []
    assert analysis.response == {
        "output": {"message": {"role": "assistant", "content": [
            {"text": "Checking both."},
            {"toolUse": {"toolUseId": "tooluse_paris1", "name": "get_weather", "input": {"city": "Paris"}}},
            {"toolUse": {"toolUseId": "tooluse_oslo2", "name": "get_weather", "input": {"city": "Oslo"}}}]}},
        "stopReason": "tool_use", "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        "metrics": {"latencyMs": 12}}


def test_without_aws_credentials_the_flow_says_why_and_nothing_goes_upstream(aws_env, fake, store):
    events = Events()
    with Forwarder(Options(fake.base_url, port=0), store=store, on_event=events) as running:
        # The client signs with credentials of its own; the forwarder's chain finds none.
        unsigned = boto3.client("bedrock-runtime", region_name=REGION, endpoint_url=running.base_url,
                                aws_access_key_id="AKIDCLIENTONLY", aws_secret_access_key="client-only-secret",
                                config=Config(retries={"max_attempts": 1}))
        with pytest.raises(ClientError) as refused:
            unsigned.converse(modelId=MODEL, messages=ASK)
        events.completed(1)
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert fake.received == []
    flow = store.get(store.rows()[0].id)
    assert (flow.status, flow.error) == (400, (
        "no AWS credentials found to sign the request for Bedrock (looked in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, "
        "AWS_PROFILE and ~/.aws, SSO, and instance or container roles); set them, or send it through proxy mode, "
        "which keeps the client's own signature"))


SEEDED = [*ASK, {"role": "assistant", "content": [{"toolUse": {"toolUseId": "tooluse_paris1", "name": "get_weather",
                                                                "input": {"city": "Paris"}}}]},
          {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_lost9", "content": [{"text": "sunny"}]}}]}]


def test_a_seeded_defect_is_caught_explained_repaired_replayed_and_exported(aws, fake, store, tmp_path, capsys):
    events = Events()
    with Forwarder(Options(fake.base_url, port=0, repair=True), store=store, on_event=events) as running:
        fake.push(json_response(converse_response("Sunny.")), json_response(converse_response("Still sunny.")))
        answer = client(running.base_url).converse(modelId=MODEL, messages=SEEDED, toolConfig=TOOLS)
        assert answer["output"]["message"]["content"] == [{"text": "Sunny."}]
        events.completed(1)
        original = store.get(1)
        replayed = replay_stored(store, running, 1, kind=ReplayKind.FIXED)
        events.completed(2)
    assert fake.refused == []
    repaired = [*SEEDED[:2], {"role": "user", "content": [{"toolResult": {
        "toolUseId": "tooluse_paris1", "content": [{"text": "result unavailable"}], "status": "error"}}]}]
    assert [orjson.loads(r.body)["messages"] for r in fake.received] == [repaired, repaired]
    assert original.notes[:2] == [
        "repaired BR-05 (dropped) at /messages/2/content/0: toolResult for 'tooluse_lost9' dropped: no toolUse of "
        "the previous message has that id",
        "repaired BR-06 (synthesised) at /messages/1/content/0/toolUse: toolResult 'result unavailable' (status error) for "
        "'tooluse_paris1'"]
    assert [(v.rule, v.pointer) for v in analyse(original).violations] == [
        ("BR-05", "/messages/2/content/0/toolResult/toolUseId"), ("BR-06", "/messages/1/content/0/toolUse")]
    # Explained: the rule, why Bedrock refuses it, and where that is written down.
    seeded = tmp_path / "seeded.json"
    seeded.write_bytes(original.request_body)
    assert main(["check", "--dialect", "bedrock", "--explain", str(seeded)]) == 1
    said = capsys.readouterr().out
    assert "BR-05" in said and "A toolResult answers a toolUse of the previous message" in said
    assert "ToolResultBlock" in said
    again = store.get(replayed)
    assert (again.replay_of, again.status, analyse(again).violations) == (1, 200, [])
    fixture = orjson.loads(render("json", [from_store(store, store.get(1))]))
    assert fixture["request"]["path"] == PATH
    assert (fixture["dialect"], fixture["mode"], fixture["request"]["body"]["json"]) == (
        "bedrock", "repair", {"messages": SEEDED, "toolConfig": TOOLS})
    assert fixture["upstream_request"]["body"]["json"]["messages"] == repaired
    assert [(v["rule"], v["severity"], v["message"].startswith("repaired on the way")) for v in fixture["violations"]] \
        == [("BR-05", "info", True), ("BR-06", "info", True)]
    assert fixture["fixed"]["request"]["body"]["json"]["messages"] == repaired
    assert (fixture["fixed"]["replay"]["status"], fixture["fixed"]["replay"]["violations"]) == (200, [])


@pytest.fixture(scope="module")
def upstream_tls(tmp_path_factory):
    import trustme

    directory = tmp_path_factory.mktemp("bedrock-tls")
    ca = trustme.CA()
    ca.cert_pem.write_to_path(directory / "ca.pem")
    ca.issue_cert("127.0.0.1", "localhost").private_key_and_cert_chain_pem.write_to_path(directory / "chain.pem")
    return directory


def test_proxy_mode_records_bedrock_with_the_clients_signature_intact(aws, store, upstream_tls, tmp_path):
    chain = str(upstream_tls / "chain.pem")
    with FakeBedrock(host=HOST, tls=(chain, chain)) as real:
        real.push(json_response(converse_response("Checking.", [CALL])))
        events = Events()
        proxy = ProxyOptions(intercept=(f"{HOST}={real.base_url}",), ca_dir=str(tmp_path / "ca"),
                             upstream_ca=str(upstream_tls / "ca.pem"))
        with Forwarder(Options("http://127.0.0.1:9", port=0, proxy=proxy), store=store, on_event=events) as running:
            LocalCA(tmp_path / "ca", running.connect.intercepts.hosts)
            bedrock = boto3.client("bedrock-runtime", region_name=REGION, verify=str(tmp_path / "ca" / "toolwire-ca.pem"),
                                   config=Config(proxies={"https": running.base_url}, retries={"max_attempts": 1}))
            answer = bedrock.converse(modelId=MODEL, messages=ASK, toolConfig=TOOLS)
            events.completed(1)
    assert answer["stopReason"] == "tool_use"
    assert real.refused == []  # the signature boto3 made for bedrock-runtime.us-east-1.amazonaws.com
    flow = store.get(1)
    assert (flow.path, flow.status, flow.notes, flow.upstream_url) == (PATH, 200, [], real.base_url + PATH)
    assert [(r.dialect, r.tool_calls, r.errors) for r in store.rows()] == [("bedrock", 1, 0)]


INVOKE = "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/invoke-with-response-stream"
CLAUDE = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 200,
          "tools": [{"name": "get_weather", "description": "Weather by city", "input_schema": {
              "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}],
          "messages": [{"role": "user", "content": "Weather in Paris?"}]}


def test_invoke_model_with_response_stream_carries_anthropic_events_and_is_signed_again(forwarder, fake, store):
    events = [event for _, event in anthropic_stream("Checking.", [Call("get_weather", '{"city": "Paris"}', "toolu_1")])]
    fake.push(Canned(headers=[("content-type", "application/vnd.amazon.eventstream"),
                              ("x-amzn-bedrock-content-type", "application/json")],
                     chunks=[(0.0, encode_chunk(event)) for event in events]))
    answer = client(forwarder.base_url).invoke_model_with_response_stream(modelId=MODEL, body=orjson.dumps(CLAUDE))
    got = [orjson.loads(part["chunk"]["bytes"]) for part in answer["body"]]
    assert got == events
    forwarder.events.completed(1)
    assert fake.refused == []
    assert [(r.path, orjson.loads(r.body)) for r in fake.received] == [(INVOKE, CLAUDE)]
    flow = store.get(1)
    assert (flow.streamed, flow.notes) == (True, [
        f"signed again for bedrock as it went to {fake.base_url} (the client's signature covers the host it sent to)"])
    assert [(r.dialect, r.tools, r.tool_calls, r.errors) for r in store.rows()] == [("anthropic", 1, 1, 0)]
    analysis = analyse(flow)
    assert analysis.violations == []
    assert analysis.response["content"] == [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]
    assert analysis.response["stop_reason"] == "tool_use"


# traceloop/openllmetry's Bedrock cassettes (test_meta, test_titan, test_cohere, test_ai21): InvokeModel
# carries each maker's own body; only Claude's is Anthropic Messages.
LLAMA = "meta.llama3-70b-instruct-v1:0"
LLAMA_BODY = {"prompt": "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nTell me a joke", "max_gen_len": 128,
              "temperature": 0.1}
LLAMA_ANSWER = {"generation": "Why did the llama cross the road?", "prompt_token_count": 19,
                "generation_token_count": 128, "stop_reason": "length"}


def test_invoke_model_of_another_maker_is_relayed_and_signed_but_not_read_as_anthropic(forwarder, fake, store):
    fake.push(json_response(LLAMA_ANSWER))
    answer = client(forwarder.base_url).invoke_model(modelId=LLAMA, body=orjson.dumps(LLAMA_BODY))
    assert orjson.loads(answer["body"].read()) == LLAMA_ANSWER
    forwarder.events.completed(1)
    assert fake.refused == []
    assert [(r.path, orjson.loads(r.body)) for r in fake.received] == [
        ("/model/meta.llama3-70b-instruct-v1%3A0/invoke", LLAMA_BODY)]
    flow = store.get(1)
    assert flow.notes == [
        f"signed again for bedrock as it went to {fake.base_url} (the client's signature covers the host it sent to)"]
    assert [(r.dialect, r.errors, r.warnings) for r in store.rows()] == [("", 0, 0)]
    assert analyse(flow).violations == []


def test_invoke_model_of_claude_is_still_checked_as_anthropic(forwarder, fake, store):
    # The near miss: Claude's own InvokeModel answer with a stop_reason Anthropic never sends.
    fake.push(json_response({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
                             "content": [{"type": "text", "text": "Sunny."}], "stop_reason": "length",
                             "stop_sequence": None, "usage": {"input_tokens": 9, "output_tokens": 2}}))
    client(forwarder.base_url).invoke_model(modelId=MODEL, body=orjson.dumps(CLAUDE))
    forwarder.events.completed(1)
    assert [(r.dialect, r.errors, r.warnings) for r in store.rows()] == [("anthropic", 0, 1)]
    assert [(v.rule, v.pointer) for v in analyse(store.get(1)).violations] == [("AN-13", "/stop_reason")]


def test_a_bedrock_call_of_no_dialect_is_signed_again_too(forwarder, fake, store):
    # ApplyGuardrail: no dialect reads it, and the client's signature still covers the forwarder's host.
    verdict = {"action": "NONE", "outputs": [], "assessments": [], "usage": {"topicPolicyUnits": 1}}
    fake.push(json_response(verdict))
    answer = client(forwarder.base_url).apply_guardrail(guardrailIdentifier="gr1", guardrailVersion="1",
                                                        source="INPUT", content=[{"text": {"text": "Hello"}}])
    assert (answer["action"], answer["usage"]) == ("NONE", {"topicPolicyUnits": 1})
    forwarder.events.completed(1)
    assert fake.refused == []
    assert [r.path for r in fake.received] == ["/guardrail/gr1/version/1/apply"]
    assert [(r.dialect, r.errors, r.warnings) for r in store.rows()] == [("", 0, 0)]
