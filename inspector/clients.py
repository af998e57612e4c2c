"""How each client is pointed at the forwarder: the setting it reads and what to put in it. The TUI's
header and `record` both read this table, and docs/clients.md says the same.

The forwarder keeps every path unchanged below `--upstream`, so a client's base URL is the
forwarder's plus the path prefix the client itself adds to the provider's host (OpenAI SDKs want
the `/v1` in the base URL; google-genai and Anthropic's add their version themselves)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from .wire.dialect import DIALECT_NAMES, Dialect
from .wire.profiles import PROVIDER_HOSTS


@dataclass(frozen=True, slots=True)
class ClientSetting:
    name: str  # an environment variable, or "MCP" for the URL an MCP client is given in its config
    suffix: str  # appended to the forwarder's base URL
    dialects: tuple[str, ...]  # the dialects whose clients read it
    readers: str  # who reads it
    header: bool = True  # one per dialect fits the TUI's header; `record` prints them all

    @property
    def label(self) -> str:
        """`NAME=` for a variable, `MCP ` for the URL."""
        return f"{self.name}=" if self.name != "MCP" else "MCP "


_OPENAI = (Dialect.OPENAI_CHAT.value, Dialect.OPENAI_RESPONSES.value)
SETTINGS = [
    ClientSetting("OPENAI_BASE_URL", "/v1", _OPENAI,
                  "openai SDK, openai-agents, pydantic-ai, LangChain's ChatOpenAI, LiteLLM openai/ models"),
    ClientSetting("ANTHROPIC_BASE_URL", "", (Dialect.ANTHROPIC.value,),
                  "anthropic SDK, Claude Code, LangChain's ChatAnthropic"),
    ClientSetting("GOOGLE_GEMINI_BASE_URL", "", (Dialect.GEMINI.value,), "google-genai SDK, Google ADK"),
    # LiteLLM's Gemini client ignores GOOGLE_GEMINI_BASE_URL and wants the API version in its base.
    ClientSetting("GEMINI_API_BASE", "/v1beta", (Dialect.GEMINI.value,), "LiteLLM gemini/ models", header=False),
    ClientSetting("MCP", "/mcp", (Dialect.MCP.value,),
                  "MCP clients over streamable HTTP (the server's own path, /mcp here)"),
]

# The providers' own hosts, and the dialects their clients speak.
_HOSTS = {host: tuple(dialect.value for dialect, its in PROVIDER_HOSTS.items() if its == host)
          for host in PROVIDER_HOSTS.values()}


def likely_dialects(upstream: str, translate: str | None = None) -> tuple[str, ...]:
    """The dialects clients of this forwarder speak: a translate session's source, else the dialects
    of a provider's own host, else any."""
    if translate:
        return (translate.split(":", 1)[0],)
    host = (urlsplit(upstream).hostname or "").lower()
    return _HOSTS.get(host, tuple(DIALECT_NAMES))


def suggestions(base_url: str, dialects: tuple[str, ...], *, header_only: bool = False) -> list[tuple[ClientSetting, str]]:
    """Each setting that fits `dialects`, with its value for a forwarder at `base_url`."""
    return [(setting, f"{base_url}{setting.suffix}") for setting in SETTINGS
            if (setting.header or not header_only) and any(dialect in setting.dialects for dialect in dialects)]


def agent_settings(base_url: str, dialects: tuple[str, ...] = tuple(DIALECT_NAMES)) -> list[tuple[str, str]]:
    """What a header has room for: (`NAME=` or `MCP `, value) of the one setting per SDK that fits
    `dialects`, for a forwarder (or route) at `base_url`."""
    return [(setting.label, url) for setting, url in suggestions(base_url, dialects, header_only=True)]
