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

What trusting it means: whoever holds its key ({ca.key_path}, readable by your user only) can read and
change that client's HTTPS traffic to the hosts the CA may sign for. Its name constraints limit it to the
hosts proxy mode intercepts (the providers' API hosts, and those you pass with --intercept) and their
subdomains, and no IP address unless you intercept one: a client that honours them (OpenSSL, Go, browsers)
refuses its certificate for any other site. Intercepting a new host reissues the certificate, same key,
with the host added: trust the new file again for that host. Trust it system-wide only on a machine
where you inspect, and delete {ca.directory} (and the trust) to revoke it.""")
    sys.stdout.flush()
    return 0
