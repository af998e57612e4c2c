"""How each client is pointed at the forwarder: the setting it reads and what to put in it. The TUI's
header and `record` both read this table, derived from the providers' records in the dialect homes,
and docs/clients.md says the same.

The forwarder keeps every path unchanged below `--upstream`, so a client's base URL is the
forwarder's plus the path prefix the client itself adds to the provider's host (OpenAI SDKs want
the `/v1` in the base URL; google-genai and Anthropic's add their version themselves)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from .wire.dialect import DIALECT_NAMES
from .wire.dialects import Derived, DerivedList, Provider, homes
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


def _settings() -> list[ClientSetting]:
    """Each provider's settings (dialects/<name>/providers.py), once, with the dialects whose homes
    name the provider."""
    found: dict[str, list[str]] = {}
    providers: dict[str, Provider] = {}
    for each in homes():
        for provider in each.providers:
            providers.setdefault(provider.name, provider)
            found.setdefault(provider.name, []).append(each.dialect.value)
    return [ClientSetting(setting.name, setting.suffix, tuple(found[name]), setting.readers, setting.header)
            for name, provider in providers.items() for setting in provider.settings]


SETTINGS: Sequence[ClientSetting] = DerivedList(_settings)


def _hosts() -> dict[str, tuple[str, ...]]:
    """The providers' own hosts, and the dialects their clients speak."""
    return {host: tuple(dialect.value for dialect, its in PROVIDER_HOSTS.items() if its == host)
            for host in PROVIDER_HOSTS.values()}


_HOSTS: Mapping[str, tuple[str, ...]] = Derived(_hosts)


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
