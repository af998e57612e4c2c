"""Claude on Vertex AI: Anthropic Messages bodies on Vertex's rawPredict and streamRawPredict
(`/v1/projects/{p}/locations/{l}/publishers/anthropic/models/{m}:rawPredict`), the model and whether
to stream in the path, `anthropic_version: vertex-2023-10-16` in the body. A variant of the anthropic
dialect this folder contributes (`Home.variants`) with its Vertex AI record (providers.VERTEX): the
anthropic home reads these paths and this profile without naming Vertex."""

from __future__ import annotations

import re

from ...dialect import Dialect
from ...profiles import Profile
from .. import Paths, Variant
from ..anthropic.shape import NAMES
from .providers import VERTEX, VERTEX_HOSTS

# The anthropic-beta values Vertex AI takes (AN-19 cites where this comes from): LiteLLM's per-provider
# table (litellm/anthropic_beta_headers_config.json, "vertex_ai": the values it forwards), which Vertex's
# own 400s bear out ("Unexpected value(s) `effort-2025-11-24` for the `anthropic-beta` header").
BETAS = frozenset({
    "compact-2026-01-12", "compact-2026-09-04", "computer-use-2025-01-24", "computer-use-2025-11-24",
    "context-1m-2025-08-07", "context-management-2025-06-27", "dangerous-tool-use-2026-09-03",
    "interleaved-thinking-2025-05-14", "per-turn-control-2026-07-01", "thinking-binding-controls-2026-08-01",
    "thinking-display-updates-2026-08-18", "tool-search-tool-2025-10-19", "web-search-2025-03-05",
})

_RAW_PREDICT = re.compile(r"/publishers/anthropic/models/([^/:]+):(stream)?[rR]awPredict$")

# https://platform.claude.com/docs/en/build-with-claude/claude-on-vertex-ai: model in the URL, not
# the body; anthropic_version: vertex-2023-10-16 in the body, not a header; the betas above.
PROFILE = Profile("vertex-anthropic", Dialect.ANTHROPIC, "Claude on Vertex AI: the model in the path, "
                  "anthropic_version in the body, fewer beta flags", NAMES, model_in_path=True,
                  own_fields=frozenset({"anthropic_version"}), supported_betas=BETAS, hosts=VERTEX_HOSTS,
                  paths=r"/publishers/anthropic/models/")


def claims(path: str) -> bool:
    return _RAW_PREDICT.search(path) is not None


def stream_path(path: str) -> bool:
    """:streamRawPredict streams, :rawPredict does not, whatever the body says."""
    found = _RAW_PREDICT.search(path.split("?", 1)[0])
    return found is not None and found.group(2) is not None


def model_of(path: str) -> str:
    found = _RAW_PREDICT.search(path.split("?", 1)[0])
    return found.group(1) if found else ""


VARIANT = Variant(PROFILE, Paths(claims, stream=stream_path, model=model_of), providers=(VERTEX,))
