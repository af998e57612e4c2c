"""Bedrock Converse rules (BR-* in docs/rules.md): each trip and its near miss, shapes from
botocore's service model bedrock-runtime."""

from __future__ import annotations

import pytest

from inspector.wire import check, profiles
from inspector.wire.dialect import Dialect

from .rule_cases import assert_case, deleting, doing, makers, same, setting
from .wire_payloads import bedrock_events, bedrock_request, bedrock_response

req, resp, stream = makers("bedrock", bedrock_request, bedrock_response, bedrock_events)

_TOOL = ["toolConfig", "tools", 0, "toolSpec"]
_USE = ["messages", 1, "content", 1, "toolUse"]
_RESULT = ["messages", 2, "content", 0, "toolResult"]


def _drop_tool_config(doc):
    del doc["toolConfig"]
    return doc


def _plain_history(doc):
    """The conversation without tool blocks: no toolConfig is needed then."""
    doc["messages"] = [doc["messages"][0]]
    del doc["toolConfig"]
    return doc


def _declare(name):
    def mutate(doc):
        doc["toolConfig"]["tools"].append({"toolSpec": {"name": name, "inputSchema": {"json": {"type": "object"}}}})
        return doc
    return mutate


def _served(kind):
    """The assistant calls a code interpreter (its toolUse typed `kind`) and holds its result."""
    def mutate(doc):
        use = {"toolUseId": "tooluse_srv1", "name": "nova_code_interpreter", "input": {"snippet": "6 * 7"}}
        doc["toolConfig"]["tools"].append({"systemTool": {"name": "nova_code_interpreter"}})
        doc["messages"][1]["content"][2:2] = [
            {"toolUse": {**use, "type": kind} if kind else use},
            {"toolResult": {"toolUseId": "tooluse_srv1", "type": "nova_code_interpreter_result", "status": "success",
                            "content": [{"json": {"stdOut": "42", "stdErr": "", "exitCode": 0}}]}}]
        return doc
    return mutate


# The models of pydantic-ai's recorded test_multimodal_tool_return_matrix (each media block and source sent
# to both, in and beside a toolResult), as the path names them: an inference profile, and one by its ARN.
NOVA = profiles.with_model(profiles.get("bedrock", Dialect.BEDROCK), "us.amazon.nova-2-lite-v1:0")
CLAUDE = profiles.with_model(profiles.get("bedrock", Dialect.BEDROCK), "arn:aws:bedrock:us-east-1:123456789012:"
                             "inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0")
LLAMA = profiles.with_model(profiles.get("bedrock", Dialect.BEDROCK), "us.meta.llama4-maverick-17b-instruct-v1:0")
MISTRAL = profiles.with_model(profiles.get("bedrock", Dialect.BEDROCK), "mistral.mistral-large-2402-v1:0")
_S3 = {"s3Location": {"uri": "s3://pydantic-ai-test-files/test-files/dummy.pdf"}}
_PDF = {"document": {"name": "Document 1", "format": "pdf", "source": _S3}}
_JPEG = {"image": {"format": "jpeg", "source": _S3}}
_MP4 = {"video": {"format": "mp4", "source": _S3}}


def _in_result(block):
    """The first toolResult's content is `block`."""
    return setting([*_RESULT, "content"], [block])


def _beside(block):
    """`block` in the user message after its toolResults."""
    def mutate(doc):
        doc["messages"][2]["content"].append(block)
        return doc
    return mutate


def _exception(kind):
    def mutate(events):
        return [*events[:4], {kind: {"message": "Model is getting throttled."}}]
    return mutate


CASES = [
    req("schema not wrapped in json", setting([*_TOOL, "inputSchema"], {"type": "object"}), "BR-01",
        "/toolConfig/tools/0/toolSpec/inputSchema", "error",
        setting([*_TOOL, "inputSchema"], {"json": {"type": "object"}})),
    req("schema root not an object", setting([*_TOOL, "inputSchema", "json", "type"], "array"), "BR-01",
        "/toolConfig/tools/0/toolSpec/inputSchema/json/type", "error",
        setting([*_TOOL, "inputSchema", "json", "type"], "object")),
    req("dotted tool name", setting([*_TOOL, "name"], "weather.get"), "BR-02", "/toolConfig/tools/0/toolSpec/name",
        "error", setting([*_TOOL, "name"], "weather-get")),
    req("tool name over 64", setting([*_TOOL, "name"], "n" * 65), "BR-02", "/toolConfig/tools/0/toolSpec/name",
        "error", setting([*_TOOL, "name"], "n" * 64)),
    req("duplicate tool", _declare("get_weather"), "BR-03", "/toolConfig/tools/1/toolSpec/name", "error",
        _declare("get_time")),
    req("toolUse input a string", setting([*_USE, "input"], '{"city": "Rome"}'), "BR-04",
        "/messages/1/content/1/toolUse/input", "error", setting([*_USE, "input"], {"city": "Rome", "days": 2})),
    req("toolUseId with a slash", doing(setting([*_USE, "toolUseId"], "tool/2"),
                                        setting([*_RESULT, "toolUseId"], "tool/2")),
        "BR-04", "/messages/1/content/1/toolUse/toolUseId", "error",
        doing(setting([*_USE, "toolUseId"], "tooluse.2:a-b_c"),
              setting([*_RESULT, "toolUseId"], "tooluse.2:a-b_c")),
        also=(("BR-05", "/messages/2/content/0/toolResult/toolUseId", "error"),)),
    req("orphan toolResult", setting([*_RESULT, "toolUseId"], "tooluse_9"), "BR-05",
        "/messages/2/content/0/toolResult/toolUseId", "error",
        doing(setting([*_USE, "toolUseId"], "tooluse_9"), setting([*_RESULT, "toolUseId"], "tooluse_9")),
        also=(("BR-06", "/messages/1/content/1/toolUse", "error"),)),
    # A tool Bedrock runs itself (pydantic-ai's recorded Nova code interpreter, accepted): called and
    # answered inside one assistant message; the same toolResult answering a client tool is BR-05.
    req("a toolResult in the assistant message answering a client tool", _served(""), "BR-05",
        "/messages/1/content/3", "error", _served("server_tool_use"),
        also=(("BR-06", "/messages/1/content/2/toolUse", "error"),)),
    req("unanswered toolUse", deleting(["messages", 2, "content", 1]), "BR-06", "/messages/1/content/2/toolUse",
        "error", setting(["messages", 2, "content", 1], {"toolResult": {
            "toolUseId": "tooluse_2", "content": [{"text": "failed"}], "status": "error"}})),
    req("tool blocks without toolConfig", _drop_tool_config, "BR-07", "", "error", _plain_history),
    req("toolChoice none", setting(["toolConfig", "toolChoice"], {"none": {}}), "BR-08", "/toolConfig/toolChoice",
        "error", setting(["toolConfig", "toolChoice"], {"any": {}})),
    req("toolChoice names an undeclared tool", setting(["toolConfig", "toolChoice"], {"tool": {"name": "get_time"}}),
        "BR-08", "/toolConfig/toolChoice/tool/name", "error",
        setting(["toolConfig", "toolChoice"], {"tool": {"name": "get_weather"}})),
    req("content a string", setting(["messages", 0, "content"], "Weather?"), "BR-09", "/messages/0/content", "error",
        setting(["messages", 0, "content"], [{"text": "Weather?"}, {"text": "Please."}])),
    req("toolResult content a string", setting([*_RESULT, "content"], "4°C"), "BR-09",
        "/messages/2/content/0/toolResult/content", "error", setting([*_RESULT, "content"], [{"json": {"c": 4}}])),
    # Model-specific toolChoice members (the model from the path): Claude and Nova took {tool} and {any} (recorded).
    req("Llama: toolChoice tool", setting(["toolConfig", "toolChoice"], {"tool": {"name": "get_weather"}}), "BR-08",
        "/toolConfig/toolChoice/tool", "error", same, LLAMA, near_profile=CLAUDE),
    req("Llama: toolChoice any", setting(["toolConfig", "toolChoice"], {"any": {}}), "BR-08",
        "/toolConfig/toolChoice/any", "error", setting(["toolConfig", "toolChoice"], {"auto": {}}), LLAMA),
    req("Mistral: toolChoice tool", setting(["toolConfig", "toolChoice"], {"tool": {"name": "get_weather"}}), "BR-08",
        "/toolConfig/toolChoice/tool", "error", setting(["toolConfig", "toolChoice"], {"tool": {"name": "get_weather"}}),
        MISTRAL, near_profile=NOVA),
    # Model-specific media blocks (BR-09, the model from the path); each near miss was recorded accepted.
    req("Nova: a document from s3Location inside a toolResult", _in_result(_PDF), "BR-09", "/messages/2/content/0",
        "error", _in_result(_JPEG), NOVA),
    req("Nova: a video from s3Location inside a toolResult", _in_result(_MP4), "BR-09", "/messages/2/content/0",
        "error", _beside(_MP4), NOVA),
    req("Claude: a document from s3Location beside the toolResult", _beside(_PDF), "BR-09",
        "/messages/2/content/3/document/source", "error", _in_result(_PDF), CLAUDE),
    req("Claude: an image from s3Location", _in_result(_JPEG), "BR-09",
        "/messages/2/content/0/toolResult/content/0/image", "error", _in_result(_JPEG), CLAUDE, near_profile=NOVA),
    req("Claude: a video", _beside({"video": {"format": "mp4", "source": {"bytes": "AAAAHGZ0eXA="}}}), "BR-09",
        "/messages/2/content/3/video", "error", _beside({"video": {"format": "mp4", "source": {"bytes": "AAAAHGZ0eXA="}}}),
        CLAUDE, near_profile=NOVA),
    req("temperature above 1", setting(["inferenceConfig", "temperature"], 1.5), "BR-12",
        "/inferenceConfig/temperature", "error", setting(["inferenceConfig", "temperature"], 1)),
    # botocore's VideoFormat enum; Bedrock also reads a media type's subtype (the tolerance table).
    req("a video format Bedrock does not take", setting(["messages", 0, "content"], [
        {"text": "Explain this video"}, {"video": {"format": "video/avi", "source": {"bytes": "AAAA"}}}]), "BR-13",
        "/messages/0/content/1/video/format", "error", setting(["messages", 0, "content"], [
            {"text": "Explain this video"}, {"video": {"format": "video/mp4", "source": {"bytes": "AAAA"}}}])),
    req("a field Converse does not take", setting(["stream"], True), "BR-13", "/stream", "error",
        setting(["additionalModelRequestFields"], {"stream": True})),
    resp("tool_use stop without a toolUse", deleting(["output", "message", "content", 1]), "BR-10",
         "/stopReason", "error", doing(deleting(["output", "message", "content", 1]), setting(["stopReason"], "end_turn"))),
    # The near miss: an answer cut at its token limit mid-call (Anthropic's max_tokens with tool_use, AN-13).
    resp("toolUse with end_turn", setting(["stopReason"], "end_turn"), "BR-10", "/stopReason", "error",
         setting(["stopReason"], "max_tokens")),
    resp("unknown stopReason", setting(["stopReason"], "done"), "BR-10", "/stopReason", "warning",
         doing(deleting(["output", "message", "content", 1]), setting(["stopReason"], "model_context_window_exceeded"))),
    resp("output message not an object", setting(["output", "message"], "Checking."), "BR-14", "/output/message",
         "error", setting(["output", "message", "content"], [{"text": "Checking."}, {"text": "Done."}])),
    resp("usage not an object", setting(["usage"], [1, 1]), "BR-14", "/usage", "error",
         setting(["usage"], {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2, "cacheReadInputTokens": 0})),
    stream("toolUse fragments that are not JSON", setting([3, "contentBlockDelta", "delta", "toolUse", "input"],
                                                          '"Oslo"'), "BR-10", "/1/contentBlockStart/start/toolUse",
           "error", setting([3, "contentBlockDelta", "delta", "toolUse", "input"], '"Oslo", "days": 2}')),
    stream("a throttling exception mid-answer", _exception("throttlingException"), "BR-11",
           "/4/throttlingException", "error", setting([5], {"messageStop": {"stopReason": "tool_use"}})),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_bedrock_rule(case):
    assert_case(case)


def test_a_model_specific_refusal_quotes_the_answer_the_model_gives():
    # The 400s recorded (pydantic-ai test_multimodal_tool_return_matrix), each spelled at this finding's place.
    nova = check.check_request(_in_result(_PDF)(bedrock_request()), Dialect.BEDROCK, NOVA)
    assert [(v.message, v.why) for v in nova] == [(
        "a document from s3Location inside a toolResult: us.amazon.nova-2-lite-v1:0 refuses it",
        "Amazon Nova models refuse a toolResult holding a document from s3Location: 400 \"Malformed input request: "
        "#/messages/2/content/0: extraneous key [toolResult] is not permitted\" (an image from s3Location there, or "
        "the document beside the toolResult, is taken).")]
    claude = check.check_request(_beside(_PDF)(bedrock_request()), Dialect.BEDROCK, CLAUDE)
    assert [(v.pointer, v.why) for v in claude] == [(
        "/messages/2/content/3/document/source",
        "Claude models on Bedrock answer 400 \"messages.2.content.3.document.source.type: Field required\" to a "
        "document from s3Location in the message itself (the Anthropic API's document source has a type; Bedrock "
        "maps none for S3 there); inside a toolResult the same document is taken.")]


def test_a_refused_tool_choice_quotes_the_answer_and_names_what_the_model_takes():
    request = setting(["toolConfig", "toolChoice"], {"tool": {"name": "get_weather"}})(bedrock_request())
    assert [(v.message, v.why, v.hint) for v in check.check_request(request, Dialect.BEDROCK, MISTRAL)] == [(
        "toolChoice.tool: mistral.mistral-large-2402-v1:0 does not take it",
        "Bedrock answers 400 \"This model doesn't support the toolConfig.toolChoice.tool field. Remove "
        "toolConfig.toolChoice.tool and try again.\" for the path's model: it does not take this toolChoice member "
        "(Anthropic Claude and Amazon Nova models take every one).",
        "For this model, send {any: {}}; Anthropic Claude and Amazon Nova models take every toolChoice.")]
    assert [v.hint for v in check.check_request(request, Dialect.BEDROCK, LLAMA)] == [
        "For this model, omit toolChoice (auto); Anthropic Claude and Amazon Nova models take every toolChoice."]


@pytest.mark.parametrize("model", ["", "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3",
                                   "us.meta.llama4-maverick-17b-instruct-v1:0"])
def test_a_model_whose_refusals_are_not_known_is_not_judged_by_anothers(model):
    # An application inference profile's id names no model; Llama 4 took a document in a toolResult (recorded).
    profile = profiles.with_model(profiles.get("bedrock", Dialect.BEDROCK), model)
    request = _beside(_MP4)(_in_result(_PDF)(bedrock_request()))
    assert check.check_request(request, Dialect.BEDROCK, profile) == []
