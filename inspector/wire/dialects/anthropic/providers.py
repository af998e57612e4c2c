"""Who speaks Anthropic Messages: Anthropic, and Claude on Vertex AI with its own request variant.
A provider whose folder is another dialect's contributes its own variant from there (`Home.variants`)."""

from __future__ import annotations

from ...dialect import Dialect
from ...profiles import Profile
from .. import Provider, SDKSetting, header_auth
from .shape import NAMES

VERSION = "2023-06-01"  # the API version Anthropic requires on every request

ANTHROPIC = Provider(
    "anthropic", "api.anthropic.com", ("ANTHROPIC_API_KEY",), header_auth("x-api-key"), frozenset({"x-api-key"}),
    version_headers=(("anthropic-version", VERSION),), own_header_prefix="anthropic-",
    settings=(SDKSetting("ANTHROPIC_BASE_URL", "", "anthropic SDK, Claude Code, LangChain's ChatAnthropic"),),
    route="https://api.anthropic.com", intercepts=("api.anthropic.com",),
)

# The anthropic-beta values Vertex AI takes (AN-19 cites where this comes from): LiteLLM's per-provider
# table (litellm/anthropic_beta_headers_config.json, "vertex_ai": the values it forwards), which Vertex's
# own 400s bear out ("Unexpected value(s) `effort-2025-11-24` for the `anthropic-beta` header").
VERTEX_BETAS = frozenset({
    "compact-2026-01-12", "compact-2026-09-04", "computer-use-2025-01-24", "computer-use-2025-11-24",
    "context-1m-2025-08-07", "context-management-2025-06-27", "dangerous-tool-use-2026-09-03",
    "interleaved-thinking-2025-05-14", "per-turn-control-2026-07-01", "thinking-binding-controls-2026-08-01",
    "thinking-display-updates-2026-08-18", "tool-search-tool-2025-10-19", "web-search-2025-03-05",
})

PROFILES = (
    Profile("anthropic", Dialect.ANTHROPIC, "Anthropic Messages", NAMES),
    # https://platform.claude.com/docs/en/build-with-claude/claude-on-vertex-ai: model in the URL, not
    # the body; anthropic_version: vertex-2023-10-16 in the body, not a header; the betas above.
    Profile("vertex-anthropic", Dialect.ANTHROPIC, "Claude on Vertex AI: the model in the path, anthropic_version "
            "in the body, fewer beta flags", NAMES, model_in_path=True, own_fields=frozenset({"anthropic_version"}),
            supported_betas=VERTEX_BETAS,
            hosts=r"([a-z0-9-]+-)?aiplatform\.googleapis\.com", paths=r"/publishers/anthropic/models/"),
)
