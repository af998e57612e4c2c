"""Claude on Amazon Bedrock: InvokeModel and InvokeModelWithResponseStream with an Anthropic Messages
body (`anthropic_version: bedrock-2023-05-31`), signed as every Bedrock request (providers.py). A
variant of the anthropic dialect this folder contributes (`Home.variants`): the anthropic home reads
these paths, this profile and this stream framing without naming Bedrock."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from ...dialect import Dialect
from ...profiles import Profile
from .. import Paths, Variant
from ..anthropic.shape import NAMES
from .providers import HOSTS
from .shape import base_model
from .stream import CONTENT_TYPE, chunks

# The anthropic-beta values Bedrock's InvokeModel takes (in the body's anthropic_beta): LiteLLM's table
# (litellm/anthropic_beta_headers_config.json, "bedrock": the values it forwards as they are), and
# interleaved thinking, which AWS's Claude parameters page documents for Claude 4 (LiteLLM maps it to
# nothing).
BETAS = frozenset({
    "compact-2026-01-12", "computer-use-2025-01-24", "computer-use-2025-11-24", "context-1m-2025-08-07",
    "context-management-2025-06-27", "dangerous-tool-use-2026-09-03", "effort-2025-11-24",
    "fine-grained-tool-streaming-2025-05-14", "interleaved-thinking-2025-05-14",
    "mid-conversation-output-config-2026-07-01", "mid-conversation-tool-changes-2026-07-01",
    "thinking-binding-controls-2026-08-01", "thinking-display-updates-2026-08-18", "tool-search-tool-2025-10-19",
})

_INVOKE = re.compile(r"/model/([^/]+)/invoke(-with-response-stream)?$")

# https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html:
# the model in the path, anthropic_version: bedrock-2023-05-31 in the body, the stream framed as
# event-stream chunks (`Chunks`).
PROFILE = Profile("bedrock-anthropic", Dialect.ANTHROPIC, "Claude on Amazon Bedrock (InvokeModel): the model in the "
                  "path, anthropic_version in the body", NAMES, published_schema=False, supported_betas=BETAS,
                  hosts=HOSTS, paths=r"/model/[^/]+/invoke(-with-response-stream)?$")


# A model id that names its maker (`meta.llama3-…`, `amazon.titan-…`, `cohere.…`): InvokeModel then
# carries that maker's own body, not Anthropic Messages. SageMaker endpoints (Bedrock Marketplace)
# serve models of any maker. An id that names none (an application inference profile's or a
# provisioned model's ARN) is read as Claude's, the body Bedrock's own Claude guide sends there.
_MAKER = re.compile(r"^[a-z0-9-]+\.")


def claims(path: str) -> bool:
    found = _INVOKE.search(path)
    if found is None:
        return False
    model = unquote(found.group(1))
    if model.lower().startswith("arn:aws:sagemaker:"):
        return False
    base = base_model(model)
    return base.startswith("anthropic.") or _MAKER.match(base) is None


def another_makers(path: str) -> bool:
    """InvokeModel of a model another maker's body speaks (Nova's messages-v1 looks like Converse, and is not)."""
    return _INVOKE.search(path) is not None and not claims(path)


def stream_path(path: str) -> bool:
    """InvokeModelWithResponseStream streams; InvokeModel does not, whatever the body says."""
    return path.split("?", 1)[0].rstrip("/").endswith("/invoke-with-response-stream")


def model_of(path: str) -> str:
    """The modelId, as Converse's (shape.model_of): botocore sends it percent-encoded."""
    found = _INVOKE.search(path.split("?", 1)[0])
    return unquote(found.group(1)) if found else ""


class Chunks:
    """InvokeModelWithResponseStream's answer: each Anthropic event's JSON in the base64 bytes of an
    event-stream `chunk` frame (`stream.chunks`, botocore's parser); a `dialects.Carrier`."""

    content_types: tuple[str, ...] = (CONTENT_TYPE,)

    def parse(self, body: bytes) -> list[Any] | None:
        return chunks(body) if _framed(body) else None

    def tail(self, body: bytes) -> list[Any] | None:
        found = self.parse(body)
        return None if found is None else found[-8:]


def _framed(body: bytes) -> bool:
    """An event-stream frame opens with its length as 4 big-endian bytes: under 16 MiB (botocore's
    bound) the first is 0, which no SSE text starts with."""
    return body[:1] == b"\x00"


VARIANT = Variant(PROFILE, Paths(claims, stream=stream_path, model=model_of, elsewhere=another_makers), Chunks())
