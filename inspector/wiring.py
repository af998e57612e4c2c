"""`toolwire-inspect run -- COMMAND`: what an agent's process is given so that its traffic reaches the
forwarder whatever it reads, and what the doctor says afterwards when it did not.

Every setting at once, since an unknown command may read any of them: the base URL variables of every
SDK (clients.py, one per dialect the forwarder serves), and proxy mode for the clients that take no
base URL (`HTTPS_PROXY`, with loopback exempt so the base URLs are not sent through the proxy, and
the local CA in each runtime's own trust variable). No Textual here: the CLI prints what it finds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .clients import SETTINGS, likely_dialects, suggestions

# Loopback goes straight to the forwarder's base URLs; a CONNECT to it would be refused anyway.
NO_PROXY = "localhost,127.0.0.1,::1"
# Codex reads the CA for its own HTTP and WebSocket clients from this variable, not from the
# system's or Node's settings.
CODEX_CA = "CODEX_CA_CERTIFICATE"


def base_urls(forwarders: list[Any]) -> dict[str, str]:
    """Each SDK variable (but MCP's, which lives in a client's config) with the base URL of the first
    forwarder whose upstream speaks that variable's dialects (a route, or `--upstream` for all)."""
    found: dict[str, str] = {}
    for forwarder in forwarders:
        dialects = likely_dialects(forwarder.upstream, forwarder.translate)
        for setting in SETTINGS:
            if setting.name != "MCP" and setting.name not in found and set(dialects) & set(setting.dialects):
                found[setting.name] = forwarder.client_url + setting.suffix
    return found


def agent_environment(forwarders: list[Any], proxy_url: str, trust: list[tuple[str, Path]],
                      ca_cert: Path) -> dict[str, str]:
    """The variables that send an agent's traffic through the forwarder: base URLs, the proxy (both
    spellings: Go and curl read the lower-case one) and the CA for Python, Node and Codex."""
    env = base_urls(forwarders)
    for name in ("HTTPS_PROXY", "https_proxy"):
        env[name] = proxy_url
    for name in ("NO_PROXY", "no_proxy"):
        env[name] = NO_PROXY
    env.update({name: str(path) for name, path in trust})
    env[CODEX_CA] = str(ca_cert)
    return env


@dataclass
class Watch:
    """What the forwarder saw while the agent ran: counters read before and after."""

    flows: int = 0
    refusals: Counter[str] = field(default_factory=Counter)
    reasons: dict[str, str] = field(default_factory=dict)
    tunnelled: Counter[str] = field(default_factory=Counter)


def diagnose(before: Watch, after: Watch, env: Mapping[str, str]) -> list[str]:
    """The doctor: one line per way the agent's traffic missed or failed the forwarder, each with
    the fix; none when every request was recorded."""
    lines: list[str] = []
    flows = after.flows - before.flows
    tls = after.refusals["toolwire_tls_refused"] - before.refusals["toolwire_tls_refused"]
    if tls:
        lines.append(f"{tls} TLS handshake(s) through the proxy failed: the client does not trust the proxy CA "
                     f"({after.reasons['toolwire_tls_refused']}). It was given SSL_CERT_FILE, REQUESTS_CA_BUNDLE, "
                     f"NODE_EXTRA_CA_CERTS and {CODEX_CA}; a client with a trust store of its own needs "
                     f"{env.get(CODEX_CA, 'the CA')} added there (`toolwire-inspect ca` says how)")
    for kind, count in sorted((after.refusals - before.refusals).items()):
        if kind != "toolwire_tls_refused":
            lines.append(f"{count} request(s) refused ({kind}): {after.reasons[kind]}")
    for host, count in sorted((after.tunnelled - before.tunnelled).items()):
        lines.append(f"{count} connection(s) to {host} went through the proxy untouched and unrecorded: "
                     f"--intercept {host.rsplit(':', 1)[0]} records them")
    if not flows and not lines:
        lines.append("the command made no request through the forwarder: it may pin a URL of its own or read a "
                     "variable not set here (" + ", ".join(sorted(name for name in env if name.isupper())) + ")")
    return lines


@dataclass(frozen=True, slots=True)
class Running:
    """A forwarder some process runs now: its recording session (the store's sessions row)."""

    session: int
    base_url: str  # what it listens on, as clients address it
    upstream: str
    mode: str


def _address(url: str) -> tuple[str, int] | None:
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    return ("127.0.0.1" if host == "localhost" else host, port) if host else None


def check_environment(env: Mapping[str, str], running: list[Running], trust: list[tuple[str, Path]],
                      ca_cert: Path) -> list[tuple[str, str]]:
    """`toolwire-inspect doctor`: would an agent started from this environment reach a running
    forwarder? (status, line) per SDK setting, the proxy and the CA, each wrong one with the fix;
    status is "ok", "fix" or "unset" ("unset" is no fault: that SDK goes to its provider)."""
    if not running:
        return [("fix", "no forwarder is running on this store: start `toolwire-inspect` (the TUI), `toolwire-inspect "
                        "record`, or run the agent under `toolwire-inspect run -- COMMAND`")]
    by_address = {_address(each.base_url): each for each in running}
    first = running[0]
    lines: list[tuple[str, str]] = []
    for setting, value in suggestions(first.base_url, likely_dialects(first.upstream)):
        if setting.name == "MCP":
            continue
        given = env.get(setting.name)
        if not given:
            lines.append(("unset", f"{setting.name} is not set: {setting.readers} go to the provider directly "
                                   f"(export {setting.name}={value})"))
        elif _address(given) in by_address:
            lines.append(("ok", f"{setting.name}={given} reaches session {by_address[_address(given)].session}"))
        else:
            lines.append(("fix", f"{setting.name}={given} is not a running forwarder: {setting.readers} bypass it "
                                 f"(export {setting.name}={value})"))
    proxy = env.get("HTTPS_PROXY") or env.get("https_proxy")
    if proxy and _address(proxy) not in by_address:
        lines.append(("fix", f"HTTPS_PROXY={proxy} is not a running forwarder: clients without a base URL bypass it "
                             f"(export HTTPS_PROXY={first.base_url})"))
    elif proxy:
        trusted = [name for name, path in [*trust, (CODEX_CA, ca_cert)] if env.get(name) == str(path)]
        if trusted:
            lines.append(("ok", f"HTTPS_PROXY={proxy} reaches session {by_address[_address(proxy)].session}, and "
                                f"{', '.join(trusted)} trust its CA"))
        else:
            lines.append(("fix", f"HTTPS_PROXY={proxy} reaches a forwarder, but no trust variable names its CA: TLS "
                                 "to intercepted hosts will fail (export " + " ".join(
                                     f"{name}={path}" for name, path in trust) + ", or run the agent under "
                                 "`toolwire-inspect run`)"))
    else:
        lines.append(("unset", f"HTTPS_PROXY is not set: clients that take no base URL bypass the forwarder (export "
                               f"HTTPS_PROXY={first.base_url} and trust its CA: `toolwire-inspect ca`)"))
    return lines
