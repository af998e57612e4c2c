"""Who speaks Gemini: the Gemini API, and Vertex AI with its own limits."""

from __future__ import annotations

from ...dialect import Dialect
from ...profiles import Profile
from .. import Provider, SDKSetting, header_auth
from .shape import NAMES

GEMINI = Provider(
    "gemini", "generativelanguage.googleapis.com", ("GEMINI_API_KEY", "GOOGLE_API_KEY"), header_auth("x-goog-api-key"),
    frozenset({"x-goog-api-key"}),
    settings=(SDKSetting("GOOGLE_GEMINI_BASE_URL", "", "google-genai SDK, Google ADK"),
              # LiteLLM's Gemini client ignores GOOGLE_GEMINI_BASE_URL and wants the API version in its base.
              SDKSetting("GEMINI_API_BASE", "/v1beta", "LiteLLM gemini/ models", header=False)),
    route="https://generativelanguage.googleapis.com",
    intercepts=("generativelanguage.googleapis.com", "*-aiplatform.googleapis.com", "aiplatform.googleapis.com"),
)

PROFILES = (
    Profile("gemini", Dialect.GEMINI, "Gemini API (generativelanguage.googleapis.com)", NAMES),
    Profile("vertex", Dialect.GEMINI, "Vertex AI: at most 128 declarations, OBJECT parameters root",
            NAMES, max_tools=128, vertex=True, hosts=r"([a-z0-9-]+-)?aiplatform\.googleapis\.com"),  # us-central1-…
)
