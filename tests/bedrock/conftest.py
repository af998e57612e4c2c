"""The Bedrock rig: the AWS chain given the fake's fixed credentials through the environment (and
nothing of the user's: no shared files, no instance role), the fake Bedrock, a store."""

from __future__ import annotations

import pytest

from inspector.store import Store

from .fake_bedrock import KEY_ID, REGION, SECRET, FakeBedrock

AWS_VARIABLES = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK",
                 "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                 "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
                 "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy")


@pytest.fixture
def aws_env(monkeypatch, tmp_path):
    """No credentials but none of the user's either: an empty config, no instance metadata."""
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    return monkeypatch


@pytest.fixture
def aws(aws_env):
    """The fake's credentials, as the client and the forwarder both find them."""
    aws_env.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    aws_env.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    return aws_env


@pytest.fixture
def fake():
    with FakeBedrock() as upstream:
        yield upstream


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "flows.sqlite3") as flows:
        yield flows
