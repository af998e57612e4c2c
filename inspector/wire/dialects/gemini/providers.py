"""Who speaks Gemini: the Gemini API, Vertex AI with its own limits, and Gemini Code Assist (Gemini
CLI signed in with a Google account), which wraps the same documents in an envelope of its own."""

from __future__ import annotations

from ...dialect import Dialect
from ...profiles import Profile
from .. import Provider, SDKSetting, header_auth
from .shape import ENVELOPE, NAMES

GEMINI = Provider(
    "gemini", "generativelanguage.googleapis.com", ("GEMINI_API_KEY", "GOOGLE_API_KEY"), header_auth("x-goog-api-key"),
    frozenset({"x-goog-api-key"}),
    settings=(SDKSetting("GOOGLE_GEMINI_BASE_URL", "", "google-genai SDK, Google ADK"),
              # LiteLLM's Gemini client ignores GOOGLE_GEMINI_BASE_URL and wants the API version in its base.
              SDKSetting("GEMINI_API_BASE", "/v1beta", "LiteLLM gemini/ models", header=False)),
    route="https://generativelanguage.googleapis.com",
    intercepts=("generativelanguage.googleapis.com",),
)

# Vertex AI serves Gemini (publishers/google) and Claude (publishers/anthropic: raw_predict.py, the
# variant of the anthropic dialect this folder contributes with this record): one host per region, an
# OAuth access token as Bearer, no key variable. No default route and so no client setting: a client
# pointed at the forwarder by ANTHROPIC_VERTEX_BASE_URL needs a route whose upstream is its region's
# host (or proxy mode, which intercepts these hosts).
VERTEX_HOSTS = r"([a-z0-9-]+-)?aiplatform\.googleapis\.com"  # us-central1-…, or the global endpoint
VERTEX = Provider(
    "vertex", "", (), header_auth("Authorization", "Bearer "), frozenset({"authorization"}),
    intercepts=("*-aiplatform.googleapis.com", "aiplatform.googleapis.com"),
)

# Gemini CLI's Code Assist server (packages/core/src/code_assist/server.ts: CODE_ASSIST_ENDPOINT,
# version v1internal, `:streamGenerateContent` with alt=sse), an OAuth access token as Bearer. As for
# Vertex, no default route: proxy mode, or CODE_ASSIST_ENDPOINT at a route to this host.
CODE_ASSIST = Provider(
    "code-assist", "", (), header_auth("Authorization", "Bearer "), frozenset({"authorization"}),
    intercepts=("cloudcode-pa.googleapis.com",),
)

PROFILES = (
    Profile("gemini", Dialect.GEMINI, "Gemini API (generativelanguage.googleapis.com)", NAMES),
    Profile("vertex", Dialect.GEMINI, "Vertex AI: at most 128 declarations, OBJECT parameters root",
            NAMES, max_tools=128, vertex=True, hosts=VERTEX_HOSTS,
            paths=r"/projects/[^/]+/locations/[^/]+/publishers/google/models/"),
    # converter.ts: CAGenerateContentRequest {model, project, user_prompt_id, request:
    # VertexGenerateContentRequest, enabled_credit_types}; CaGenerateContentResponse {response, traceId,
    # consumedCredits, remainingCredits}, and each streamed chunk is one of those. The request inside is
    # Vertex's (VertexGenerateContentRequest, with its labels and Code Assist's session_id), so Vertex's limits.
    Profile("code-assist", Dialect.GEMINI, "Gemini Code Assist (Gemini CLI with a Google account): the request "
            "under `request`, the answer under `response`; Vertex's limits", NAMES, max_tools=128, vertex=True,
            envelope=ENVELOPE, own_fields=frozenset({"session_id", "labels"}), hosts=r"cloudcode-pa\.googleapis\.com", paths=r"/v1internal:"),
)
