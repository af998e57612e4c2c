"""Translation to and from Bedrock through the real forwarder on loopback, with the official SDKs as
clients: the openai SDK's Chat client through an openai-chat:bedrock route to the fake Bedrock,
which verifies every request's SigV4 signature (the forwarder signs with the AWS chain's
credentials, never with the client's OpenAI key); and boto3's `converse` / `converse_stream`
through a bedrock:anthropic route to an Anthropic-shaped fake. Tool-use loops, streamed and not."""

from __future__ import annotations

import boto3
import openai
import orjson
import pytest
from botocore.config import Config

from inspector.mock import Canned, MockUpstream, Received, framed, json_response
from inspector.proxy import Forwarder
from inspector.proxy.options import Options
from inspector.wire.canned import Call
from inspector.wire.check import check_request
from inspector.wire.dialect import Dialect
from inspector.wire.dialects import home
from inspector.wire.dialects.anthropic.mock import anthropic_message, anthropic_stream
from inspector.wire.dialects.bedrock.mock import converse_response, converse_stream
from inspector.wire.dialects.bedrock.stream import FRAMING
from inspector.wire.violations import Severity

from tests.proxy.conftest import Events
from .fake_bedrock import KEY_ID, REGION

MODEL = "amazon.nova-pro-v1:0"
CONVERSE = "/model/amazon.nova-pro-v1%3A0/converse"
OPENAI_KEY = "sk-openai-not-for-aws-0001"
SESSION_TOKEN = "aws-session-token-not-for-anthropic-0001"
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
PARIS = Call("get_weather", '{"city": "Paris"}', "tooluse_paris1")
OSLO = Call("get_weather", '{"city": "Oslo"}', "tooluse_oslo2")


def _errors(payload: dict, dialect: Dialect) -> list[tuple[str, str]]:
    return [(v.rule, v.pointer) for v in check_request(payload, dialect) if v.severity is Severity.ERROR]


@pytest.fixture
def chat_to_bedrock(aws, fake, store):
    events = Events()
    with Forwarder(Options(fake.base_url, port=0, translate="openai-chat:bedrock"), store=store,
                   on_event=events) as running:
        running.events = events
        yield running


def test_an_openai_chat_client_runs_a_tool_loop_on_bedrock_signed_with_aws_credentials(chat_to_bedrock, fake, store):
    fake.push(json_response(converse_response("Checking.", [PARIS])), json_response(converse_response("Sunny.")),
              framed(converse_stream("Checking both.", [PARIS, OSLO]), FRAMING))
    client = openai.OpenAI(base_url=f"{chat_to_bedrock.base_url}/v1", api_key=OPENAI_KEY, max_retries=0)
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather by city",
                                               "parameters": WEATHER}}]
    ask = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.chat.completions.create(model=MODEL, messages=ask, tools=tools)
    message = first.choices[0].message
    assert (message.content, first.choices[0].finish_reason) == ("Checking.", "tool_calls")
    assert [(c.id, c.function.name, orjson.loads(c.function.arguments)) for c in message.tool_calls] == [
        ("tooluse_paris1", "get_weather", {"city": "Paris"})]

    history = [*ask, message.model_dump(exclude_none=True),
               {"role": "tool", "tool_call_id": "tooluse_paris1", "content": "clear sky"}]
    second = client.chat.completions.create(model=MODEL, messages=history, tools=tools)
    assert (second.choices[0].message.content, second.choices[0].finish_reason) == ("Sunny.", "stop")

    text, calls, usage = "", {}, None
    for chunk in client.chat.completions.create(model=MODEL, messages=ask, tools=tools, stream=True,
                                                stream_options={"include_usage": True}):
        usage = chunk.usage or usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for delta in choice.delta.tool_calls or []:
                entry = calls.setdefault(delta.index, {"id": delta.id, "name": delta.function.name, "args": ""})
                entry["args"] += delta.function.arguments or ""
    client.close()
    assert text == "Checking both."
    assert calls == {0: {"id": "tooluse_paris1", "name": "get_weather", "args": '{"city":"Paris"}'},
                     1: {"id": "tooluse_oslo2", "name": "get_weather", "args": '{"city":"Oslo"}'}}
    assert (usage.prompt_tokens, usage.completion_tokens) == (10, 5)

    chat_to_bedrock.events.completed(3)
    assert fake.refused == []  # every request's SigV4 signature verified
    assert [r.path for r in fake.received] == [CONVERSE, CONVERSE, CONVERSE + "-stream"]
    for request in fake.received:
        assert request.header("authorization").startswith(f"AWS4-HMAC-SHA256 Credential={KEY_ID}/")
        assert OPENAI_KEY not in str(request.headers)  # an OpenAI key never goes to AWS
        assert _errors(orjson.loads(request.body), Dialect.BEDROCK) == []
    assert orjson.loads(fake.received[1].body)["messages"] == [
        {"role": "user", "content": [{"text": "Weather in Paris?"}]},
        {"role": "assistant", "content": [{"text": "Checking."}, {"toolUse": {
            "toolUseId": "tooluse_paris1", "name": "get_weather", "input": {"city": "Paris"}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_paris1",
                                                     "content": [{"text": "clear sky"}]}}]}]
    rows = store.rows(order="time")
    assert [(r.dialect, r.status, r.state, r.mode) for r in rows] == [("openai-chat", 200, "complete", "translate")] * 3
    flow = store.get(rows[2].id)
    assert f"signed again for bedrock as it went to {fake.base_url} (the client's signature covers the host it " \
           "sent to)" in flow.notes


def test_without_aws_credentials_the_chat_client_is_told_why_in_its_own_dialect(aws_env, fake, store):
    events = Events()
    with Forwarder(Options(fake.base_url, port=0, translate="openai-chat:bedrock"), store=store,
                   on_event=events) as running:
        client = openai.OpenAI(base_url=f"{running.base_url}/v1", api_key=OPENAI_KEY, max_retries=0)
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}])
        client.close()
        events.completed(1)
    assert refused.value.body["type"] == "toolwire_no_credentials"
    assert refused.value.body["message"].startswith("no AWS credentials found to sign the request for Bedrock")
    assert fake.received == []


def _anthropic(script: list[Canned]):
    def answer(request: Received) -> Canned:
        return script.pop(0)
    return MockUpstream(responder=answer)


@pytest.fixture
def bedrock_to_anthropic(aws, store):
    aws.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)  # boto3 sends it beside its signature
    script: list[Canned] = []
    upstream = _anthropic(script)
    upstream.start()
    events = Events()
    with Forwarder(Options(upstream.base_url, port=0, translate="bedrock:anthropic"), store=store,
                   on_event=events) as running:
        running.events, running.script, running.upstream = events, script, upstream
        yield running
    upstream.stop()


def test_a_boto3_converse_client_runs_a_tool_loop_on_an_anthropic_upstream(bedrock_to_anthropic, store):
    rig = bedrock_to_anthropic
    rig.script.extend([json_response(anthropic_message("Checking.", [PARIS])),
                       json_response(anthropic_message("Sunny.")),
                       framed(anthropic_stream("Checking both.", [PARIS, OSLO]), home(Dialect.ANTHROPIC).framing)])
    bedrock = boto3.client("bedrock-runtime", region_name=REGION, endpoint_url=rig.base_url,
                           config=Config(retries={"max_attempts": 1}))
    tools = {"tools": [{"toolSpec": {"name": "get_weather", "description": "Weather by city",
                                     "inputSchema": {"json": WEATHER}}}]}
    ask = [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]
    first = bedrock.converse(modelId=MODEL, messages=ask, toolConfig=tools)
    assert first["stopReason"] == "tool_use"
    assert first["output"]["message"]["content"] == [
        {"text": "Checking."}, {"toolUse": {"toolUseId": "tooluse_paris1", "name": "get_weather",
                                            "input": {"city": "Paris"}}}]
    history = [*ask, first["output"]["message"], {"role": "user", "content": [{"toolResult": {
        "toolUseId": "tooluse_paris1", "content": [{"json": {"sky": "clear"}}], "status": "success"}}]}]
    second = bedrock.converse(modelId=MODEL, messages=history, toolConfig=tools)
    assert (second["stopReason"], second["output"]["message"]["content"]) == ("end_turn", [{"text": "Sunny."}])

    events = list(bedrock.converse_stream(modelId=MODEL, messages=ask, toolConfig=tools)["stream"])
    text = "".join(e["contentBlockDelta"]["delta"].get("text", "") for e in events if "contentBlockDelta" in e)
    started = [e["contentBlockStart"]["start"]["toolUse"] for e in events if "contentBlockStart" in e]
    inputs: dict[int, str] = {}
    for e in events:
        delta = e.get("contentBlockDelta", {})
        if "toolUse" in delta.get("delta", {}):
            inputs[delta["contentBlockIndex"]] = inputs.get(delta["contentBlockIndex"], "") + \
                delta["delta"]["toolUse"]["input"]
    assert text == "Checking both."
    assert started == [{"toolUseId": "tooluse_paris1", "name": "get_weather"},
                       {"toolUseId": "tooluse_oslo2", "name": "get_weather"}]
    assert [orjson.loads(v) for _, v in sorted(inputs.items())] == [{"city": "Paris"}, {"city": "Oslo"}]
    assert [next(iter(e)) for e in events][-2:] == ["messageStop", "metadata"]
    assert events[-2] == {"messageStop": {"stopReason": "tool_use"}}

    rig.events.completed(3)
    received = rig.upstream.received
    assert [r.path for r in received] == ["/v1/messages"] * 3
    for request in received:
        sent = str(request.headers).lower()
        # A signature and its session token are no key to move.
        assert "aws4-hmac-sha256" not in sent and "x-amz-" not in sent and SESSION_TOKEN.lower() not in sent
        assert _errors(orjson.loads(request.body), Dialect.ANTHROPIC) == []
    assert orjson.loads(received[1].body)["messages"][2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "tooluse_paris1", "content": '{"sky":"clear"}'}]}
    assert orjson.loads(received[2].body)["stream"] is True
    rows = store.rows(order="time")
    assert [(r.dialect, r.status, r.state, r.mode) for r in rows] == [("bedrock", 200, "complete", "translate")] * 3
