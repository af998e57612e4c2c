"""Which InvokeModel paths carry Anthropic Messages: the model ids Bedrock's clients send there
(botocore percent-encodes them), from AWS's model-id and inference-profile pages and the cassettes
of traceloop/openllmetry and crewAI."""

from __future__ import annotations

import pytest

from inspector.wire.dialect import Dialect, from_path, is_stream_path
from inspector.wire.dialects.bedrock.invoke import model_of

CLAUDE = [
    "anthropic.claude-3-haiku-20240307-v1:0",
    "anthropic.claude-3-5-haiku-20241022-v1%3A0",
    "us.anthropic.claude-3-7-sonnet-20250219-v1%3A0",
    "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
    "arn%3Aaws%3Abedrock%3Aus-east-1%3A%3Afoundation-model%2Fanthropic.claude-v2%3A1",
    "arn%3Aaws%3Abedrock%3Aus-east-1%3A012345678901%3Ainference-profile%2Fus.anthropic.claude-3-7-sonnet-20250219-v1%3A0",
    # Names no model: read as Claude's, the body Bedrock's Claude guide sends to such a profile.
    "arn%3Aaws%3Abedrock%3Aus-east-1%3A012345678901%3Aapplication-inference-profile%2Fab12cd34ef56",
]
OTHERS = [
    "meta.llama2-13b-chat-v1", "meta.llama3-70b-instruct-v1%3A0", "amazon.titan-text-express-v1",
    "us.amazon.nova-lite-v1%3A0", "cohere.command-text-v14", "ai21.j2-mid-v1", "mistral.mistral-large-2402-v1:0",
    "openai.gpt-oss-120b-1%3A0", "amazon.titan-embed-text-v2%3A0",
    "arn%3Aaws%3Abedrock%3Aus-east-1%3A%3Afoundation-model%2Fmeta.llama3-8b-instruct-v1%3A0",
    # A Bedrock Marketplace model on a SageMaker endpoint: any maker's.
    "arn%3Aaws%3Asagemaker%3Aus-east-1%3A767398002385%3Aendpoint%2Fendpoint-quick-start-idr7y",
]


@pytest.mark.parametrize("stream", [False, True])
def test_only_claudes_invoke_paths_are_read_as_anthropic(stream):
    call = "invoke-with-response-stream" if stream else "invoke"
    assert {model: from_path(f"/model/{model}/{call}") for model in CLAUDE + OTHERS} == {
        **{model: Dialect.ANTHROPIC for model in CLAUDE}, **{model: None for model in OTHERS}}
    # Another maker's stream is still a stream: it is recorded as one.
    assert all(is_stream_path(f"/model/{model}/{call}") is stream for model in CLAUDE + OTHERS)


def test_the_model_of_an_invoke_path_is_its_decoded_id():
    assert model_of("/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/invoke") == \
        "us.anthropic.claude-3-7-sonnet-20250219-v1:0"
    assert model_of("/model/anthropic.claude-v2:1/invoke-with-response-stream?x=1") == "anthropic.claude-v2:1"
