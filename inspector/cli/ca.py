"""`toolwire-inspect ca`: where proxy mode's CA is (made now if it is not yet) and how to trust it."""

from __future__ import annotations

import argparse
import sys

from .common import CommandError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ca", help="print proxy mode's CA certificate path (made on first use) and how to make clients trust it")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import certifi  # httpx's own root bundle: the roots most Python clients trust by default

    from ..proxy.ca import CAError, LocalCA, trust_settings

    try:
        ca = LocalCA()
        with open(certifi.where(), "rb") as roots:
            bundle = ca.write_bundle(roots.read())
    except (CAError, OSError) as exc:
        raise CommandError(str(exc)) from exc
    cert = ca.cert_path
    # The TUI's header names the same variables (tui/widgets/connection.py): one list of them.
    python, requests, node = (f"export {name}={path}" for name, path in trust_settings(ca.directory))
    print(f"{'made' if ca.created else 'found'} the proxy CA: {cert}  (its key {ca.key_path} stays on this machine)")
    print(f"""
With HTTPS_PROXY=http://127.0.0.1:8787 (or the port you listen on), clients reach the LLM providers
through toolwire-inspect, which shows them a certificate signed by this CA. Make them trust it:

  Python (openai, anthropic, httpx, requests, aiohttp):
    {python}
    {requests}
    ({bundle.name} holds the usual roots plus this CA: both variables replace a client's roots, and
    the hosts that are only tunnelled still show their real certificates)
  Node.js:
    {node}
  The system store (curl, Go, most other tools):
    Debian/Ubuntu: sudo cp {cert} /usr/local/share/ca-certificates/toolwire-inspect.crt && sudo update-ca-certificates
    Fedora/RHEL:   sudo trust anchor {cert}
    macOS:         sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain {cert}

Anyone holding the key can impersonate any site to a client that trusts this CA: trust it only where you
inspect, and delete {ca.directory} (and the trust) to revoke it.""")
    sys.stdout.flush()
    return 0
