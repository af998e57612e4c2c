"""Provider profiles: the limits that vary by endpoint (OC-03, OC-16, AN-02… in docs/rules.md), not rule constants.

A profile is chosen by name (`--profile`), or defaults per dialect. Rules read only these fields."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from .dialect import Dialect
from .dialects import Derived, home, homes
from .naming import NameRule
from .violations import Severity


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    dialect: Dialect
    description: str
    names: NameRule
    call_id_max: int | None = None  # Chat tool-call id length limit (OC-16)
    call_id_severity: Severity = Severity.WARNING
    max_tools: int | None = None
    # DeepSeek/DashScope-style servers reject arguments that are not one JSON text of an object.
    strict_arguments: bool = False
    # Servers that need `content` present (as null) on assistant tool-call messages (OC-12).
    content_key_required: bool = False
    # vLLM-style servers reject tool_choice without tools (OC-11).
    tool_choice_needs_tools: bool = False
    # DashScope and DeepSeek answer `tools: []` with a 400 ("[] is too short - 'tools'", OC-09); OpenAI
    # reads it as no tools, as vLLM now does to match it.
    empty_tools_refused: bool = False
    vertex: bool = False
    # Mistral's own chat API (same path as Chat, its own schema; recorded traffic 2025-12): tool and
    # tool-call `type` may be left out (it defaults to function), tool_choice 'any' means required,
    # assistant content is a list of chunks that may be empty or hold thinking, tool_calls may be [].
    mistral: bool = False
    # A router (OpenRouter) hands the request to the provider its model id names ("openai/gpt-4.1",
    # "google/gemini-2.5-flash"): OpenAI's own limits (40-char ids, the strict schema subset) are
    # errors only for openai/ models; recorded traffic shows others accepting both.
    routes_by_model: bool = False
    # Tool types the host runs itself beside function tools ("openrouter:web_search").
    server_tool_prefix: str = ""
    # The server mints its own Responses item ids (DeepSeek: UUIDs), so OpenAI's 'fc' prefix (OR-06)
    # only matters if the items are replayed to OpenAI.
    own_item_ids: bool = False
    # The 1024-character description cap (OC-03): api.openai.com stopped enforcing it (accepted
    # 15,664 characters in 2025-12), Azure still does.
    description_max: int = 1024
    description_severity: Severity = Severity.INFO
    # False for the client's side of a translated flow: that payload never reaches a provider, so
    # only its dialect's shape is judged, not what a provider keeps between turns (XL-14).
    reaches_provider: bool = True
    # The model the request names (Gemini's is in the URL), for rules whose verdict depends on it.
    model: str = ""
    # The API version the request's path names (Gemini's /v1/, /v1beta/; Vertex AI's /v1beta1/), where the
    # dialect's versions take different fields (the vendored spec's `versions`); "" where unknown.
    api_version: str = ""
    # Names the client declared that the forwarder aliased on the way up and restores on the way
    # back (repair and translate modes): in the response the client gets, they are its own names.
    restored_names: frozenset[str] = frozenset()
    # Whether the endpoint is the one the provider's published schema describes (the spec layer,
    # rules/spec.py): compatible servers take their own variants of the request.
    published_schema: bool = True
    # The beta features the request opts into by header (`with_headers`): they widen what the endpoint
    # accepts, e.g. Anthropic's interleaved thinking lets budget_tokens exceed max_tokens (AN-16).
    betas: frozenset[str] = frozenset()
    # The MCP revision an HTTP request names in its MCP-Protocol-Version header (`with_headers`): it decides
    # what the body must carry (2026-07-28 declares itself in _meta as well, MCP-04).
    revision: str = ""
    # The anthropic-beta values the endpoint takes, where it takes fewer than Anthropic's own API
    # (Vertex AI, Bedrock answer 400 "Unexpected value(s) … for the anthropic-beta header" to the
    # others, AN-19); None where every beta Anthropic defines is taken.
    supported_betas: frozenset[str] | None = None
    # The endpoint takes the model from the request's path, not its body (Claude on Vertex AI): the
    # published schema's required `model` is the path's (`model`).
    model_in_path: bool = False
    # The paths on which the endpoint takes the model from the path (Azure OpenAI's deployment path,
    # /openai/deployments/{deployment}/..., but not its /openai/v1/ path): model_in_path there.
    model_paths: str = ""
    # Top-level request fields of the provider's own variant, which the dialect's published definition
    # does not list (Vertex's anthropic_version; Code Assist's session_id): not judged by the spec layer.
    own_fields: frozenset[str] = frozenset()
    # Where the endpoint wraps the dialect's documents in an envelope of its own (Gemini Code Assist:
    # the request under "request", the response and each stream event under "response"): the keys,
    # request's then response's. The rules, views and reassembly read what is inside; pointers stay
    # pointers into the recorded body (`unwrap`).
    envelope: tuple[str, str] | None = None
    # The upstream hosts (a regex the whole host matches) whose requests of the dialect get this
    # profile rather than the dialect's default, and the request paths (a regex searched in the path)
    # that get it whatever the host (a relay or a base-URL route keeps the provider's path).
    hosts: str = field(default="", compare=False, repr=False)
    paths: str = field(default="", compare=False, repr=False)
    # Paths that name this profile only behind a host of no provider (loopback, a private address, a
    # bare name: a relay, a gateway, a test's fake): another provider serves the same path on its own
    # public host (Azure's /openai/v1/ is Groq's too).
    relay_paths: str = field(default="", compare=False, repr=False)

    @property
    def openai_limits(self) -> bool:
        """Whether OpenAI's own endpoint, with its limits, answers this request."""
        return not self.routes_by_model or self.model.startswith("openai/")

    def name_ok(self, name: str) -> bool:
        return name in self.restored_names or self.names.ok(name)


def _profiles() -> dict[str, Profile]:
    from .dialects import homes

    return {p.name: p for each in homes() for p in each.profiles}


# Every profile, from the homes (dialects/<name>/providers.py), and each dialect's default: its first.
PROFILES: Mapping[str, Profile] = Derived(_profiles)
DEFAULTS: Mapping[Dialect, str] = Derived(lambda: {each.dialect: each.profiles[0].name for each in homes()})


def get(profile: str | Profile | None, dialect: Dialect) -> Profile:
    """The named profile, or the dialect's default. Unknown names raise ValueError (the CLI checks)."""
    if isinstance(profile, Profile):
        return profile
    if profile is None:
        return PROFILES[DEFAULTS[dialect]]
    try:
        return PROFILES[profile]
    except KeyError:
        raise ValueError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}") from None


def neutral(dialect: Dialect, path: str = "") -> Profile:
    """The dialect's own contract without any provider's limits: how the client's side of a
    translated flow is judged (the bridge, not a provider, reads it). A client whose provider wraps
    the dialect in an envelope (known by the request's `path`) is read inside it, as the bridge reads it."""
    default = PROFILES[DEFAULTS[dialect]]
    wrapped = for_upstream(path, dialect) if path else default
    return replace(default, name=f"{default.name} (client side)", description=f"{dialect.value} as a client speaks "
                   "it to the forwarder, which translates it", call_id_max=None, max_tools=None,
                   description_severity=Severity.INFO, reaches_provider=False, envelope=wrapped.envelope,
                   own_fields=wrapped.own_fields)


def unwrap(payload: Any, profile: Profile, kind: str) -> tuple[Any, str]:
    """(the dialect's own document, the pointer of where it sits in `payload`) under the profile's
    envelope (`inside`)."""
    return inside(payload, profile.envelope, kind)


def inside(payload: Any, envelope: tuple[str, str] | None, kind: str) -> tuple[Any, str]:
    """What is under the envelope's key for `kind` ("request", or "response" for a response and a
    stream event) with the pointer of its place, or `payload` itself and "" where there is no
    envelope or the payload does not wear it."""
    if envelope is None or not isinstance(payload, dict):
        return payload, ""
    key = envelope[0 if kind == "request" else 1]
    inner = payload.get(key)
    return (inner, "/" + key) if isinstance(inner, dict) else (payload, "")


def with_path(profile: Profile, path: str) -> Profile:
    """`profile` for a request sent to `path`: the API version the path names, where the dialect's
    versions take different fields, and whether the endpoint reads the model from the path."""
    version = home(profile.dialect).paths.version
    named = version(path) if version is not None else ""
    changed: dict[str, Any] = {"api_version": named} if named and named != profile.api_version else {}
    if profile.model_paths and not profile.model_in_path and re.search(profile.model_paths, path):
        changed["model_in_path"] = True
    return replace(profile, **changed) if changed else profile


@lru_cache(maxsize=1024)
def with_model(profile: Profile, model: str) -> Profile:
    return replace(profile, model=model) if model and model != profile.model else profile


# The request headers that opt into beta features, as the SDKs send them: one header, the features
# comma-separated (`anthropic-beta: a,b`, Anthropic's `betas=[...]`; OpenAI's `OpenAI-Beta`).
BETA_HEADERS = frozenset({"anthropic-beta", "openai-beta"})
REVISION_HEADER = "mcp-protocol-version"


def with_headers(profile: Profile, headers: Iterable[tuple[str, str]]) -> Profile:
    """`profile` for a request sent with `headers`: what the endpoint accepts from this request, by
    the beta features it opts into and the MCP revision it names (the one place rules learn about
    headers)."""
    headers = list(headers)
    betas = frozenset(token.strip().lower() for name, value in headers if name.lower() in BETA_HEADERS
                      for token in value.split(",") if token.strip())
    revision = next((value.strip() for name, value in headers if name.lower() == REVISION_HEADER), profile.revision)
    if betas <= profile.betas and revision == profile.revision:
        return profile
    return replace(profile, betas=profile.betas | betas, revision=revision)


# The providers' own API hosts: those their published definitions (rules/spec.py) describe, and the
# only ones a key from the provider's SDK variables is sent to by replay. Azure has a profile of its own.
PROVIDER_HOSTS: Mapping[Dialect, str] = Derived(lambda: {each.dialect: provider.host for each in homes()
                                                          for provider in each.providers[:1] if provider.host})


def is_provider_host(host: str, dialect: Dialect | None) -> bool:
    """Whether `host` is the provider's own API host for `dialect`."""
    return dialect is not None and dialect in PROVIDER_HOSTS and host.lower() == PROVIDER_HOSTS[dialect]


def _public(host: str) -> bool:
    """Whether `host` is a name or address on the internet (a provider could own it), not a relay's
    (loopback, private or link-local, a name without a dot)."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return "." in host and not host.endswith((".local", ".internal", ".localhost"))
    return address.is_global


@lru_cache(maxsize=1024)  # a recorder asks for every flow, and its upstream URLs are few
def for_upstream(url: str, dialect: Dialect) -> Profile:
    """The profile for requests of `dialect` sent to `url`: a known host's profile when it speaks that
    dialect's family, else the dialect's default."""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:  # a recorded URL is anyone's text: `http://[not an address]/` names no host
        host = ""
    try:
        path = urlsplit(url).path
    except ValueError:
        path = ""
    for profile in home(dialect).profiles:
        if (profile.hosts and re.fullmatch(profile.hosts, host)) or (profile.paths and re.search(profile.paths, path)) \
                or (profile.relay_paths and not _public(host) and re.search(profile.relay_paths, path)):
            return with_path(profile, path)
    default = PROFILES[DEFAULTS[dialect]]
    if dialect in PROVIDER_HOSTS and host and not is_provider_host(host, dialect):
        # Another server speaking the dialect (Groq, Together, a local vLLM, an Anthropic-compatible
        # gateway): its own request variant, with fields of its own, not the one the provider defines.
        return replace(default, published_schema=False)
    return with_path(default, path)
