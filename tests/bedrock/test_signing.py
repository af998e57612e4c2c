"""Bedrock's auth (`providers.sigv4`) as the Signing addon calls it, with the Authorization header
as the client sent it: a Bedrock API key stays the bearer token it was (once), any other key is
never sent to AWS, and the request is signed with the AWS chain's credentials instead."""

from __future__ import annotations

import pytest

from inspector.wire.dialects import Outgoing
from inspector.wire.dialects.bedrock.providers import sigv4

from .fake_bedrock import KEY_ID

URL = "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse"


@pytest.mark.parametrize("token", ["bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t", "ABSKQmVkcm9ja0FQSUtleS1abc"])
@pytest.mark.parametrize("sent", ["Bearer {}", "bearer {}", "{}"], ids=["as-sent", "lower-case", "bare"])
def test_a_bedrock_api_key_is_sent_as_one_bearer_token(aws, token, sent):
    signed = sigv4(Outgoing("POST", URL, [("Authorization", sent.format(token))], b"{}"), sent.format(token))
    assert signed.headers == [("Authorization", f"Bearer {token}")]


@pytest.mark.parametrize("key", ["Bearer sk-openai-0001", "sk-ant-0001", "AIza-gemini-0001"])
def test_another_providers_key_never_reaches_aws_and_the_request_is_signed(aws, key):
    signed = sigv4(Outgoing("POST", URL, [("Authorization", key), ("content-type", "application/json")], b"{}"), key)
    names = [name.lower() for name, _ in signed.headers]
    assert names == ["content-type", "x-amz-date", "authorization"]
    assert dict(signed.headers)["Authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={KEY_ID}/")
    assert key.split()[-1] not in str(signed.headers)
