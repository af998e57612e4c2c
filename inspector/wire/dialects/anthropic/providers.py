"""Who speaks Anthropic Messages: Anthropic, and Claude on Amazon Bedrock (InvokeModel with an
Anthropic body, signed as every Bedrock request: dialects/bedrock/providers.py)."""

from __future__ import annotations

from ...dialect import Dialect
from ...profiles import Profile
from .. import Provider, SDKSetting, header_auth
from ..bedrock.providers import HOSTS
from .shape import NAMES

VERSION = "2023-06-01"  # the API version Anthropic requires on every request

ANTHROPIC = Provider(
    "anthropic", "api.anthropic.com", ("ANTHROPIC_API_KEY",), header_auth("x-api-key"), frozenset({"x-api-key"}),
    version_headers=(("anthropic-version", VERSION),), own_header_prefix="anthropic-",
    settings=(SDKSetting("ANTHROPIC_BASE_URL", "", "anthropic SDK, Claude Code, LangChain's ChatAnthropic"),),
    route="https://api.anthropic.com", intercepts=("api.anthropic.com",),
)

PROFILES = (
    Profile("anthropic", Dialect.ANTHROPIC, "Anthropic Messages", NAMES),
    # https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html:
    # the model in the path, anthropic_version: bedrock-2023-05-31 in the body, the stream framed as
    # event-stream chunks (stream.AnthropicFraming).
    Profile("bedrock-anthropic", Dialect.ANTHROPIC, "Claude on Amazon Bedrock (InvokeModel): the model in the path, "
            "anthropic_version in the body", NAMES, published_schema=False, hosts=HOSTS),
)
