"""What to give an agent to point it at a forwarder: the base URL setting each official SDK reads,
for the dialects the upstream behind it speaks. The TUI's header and `record`'s first lines share
it; no Textual and no forwarder here, so the UI imports it cheaply."""

from __future__ import annotations

from .wire.profiles import official_dialects

# Each setting, and the dialects whose clients read it.
_SETTINGS = [
    ("OPENAI_BASE_URL=", "/v1", ("openai-chat", "openai-responses")),
    ("ANTHROPIC_BASE_URL=", "", ("anthropic",)),
    ("GOOGLE_GEMINI_BASE_URL=", "", ("gemini",)),
    ("MCP ", "/mcp", ("mcp",)),
]


def agent_settings(base_url: str, accepts: str | None = None) -> list[tuple[str, str]]:
    """What to give the agent: the environment each official SDK reads (`NAME=`), and the URL an
    MCP client connects to (the forwarder keeps paths unchanged, so the server's own path). A
    translate session accepts one dialect: only its setting is given."""
    return [(label, f"{base_url}{suffix}") for label, suffix, dialects in _SETTINGS
            if accepts is None or accepts in dialects]


def accepted_dialect(upstream: str, translate: str | None) -> str | None:
    """The dialect a client of this upstream speaks, when one is known: a translate mode's source,
    else the dialect of a provider's own host (None: any, e.g. a local server)."""
    if translate:
        return translate.split(":", 1)[0]
    dialects = official_dialects(upstream)
    return dialects[0].value if dialects else None
