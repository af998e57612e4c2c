"""Who speaks Anthropic Messages: Anthropic. A provider whose record is another folder's serves its
own variant of the dialect from there (`Home.variants`), with its paths and profile."""

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

PROFILES = (Profile("anthropic", Dialect.ANTHROPIC, "Anthropic Messages", NAMES),)
