"""Proxy mode's CA may sign only for the hosts proxy mode intercepts: its NameConstraints (critical)
permit their DNS subtrees and no IP address unless one is intercepted, so a client that trusts it
trusts it for nothing else. A run that intercepts a host the CA does not cover reissues it (same key,
same name) with that host added. Checked by a real `ssl` client context that trusts the CA."""

from __future__ import annotations

import ipaddress
import ssl

import pytest
from cryptography import x509

from inspector.proxy.ca import BUNDLE_FILE, CERT_FILE, LocalCA
from inspector.proxy.connect import DEFAULT_INTERCEPTS

from .test_ca import handshake

DEFAULT_DOMAINS = sorted({"api.openai.com", "openai.azure.com", "cognitiveservices.azure.com", "api.anthropic.com",
                          "generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com",
                          "googleapis.com", "aiplatform.googleapis.com", "openrouter.ai", "api.mistral.ai",
                          "api.groq.com", "api.together.xyz", "api.deepseek.com", "api.x.ai", "api.fireworks.ai",
                          "api.cohere.com", "api.perplexity.ai",
                          # bedrock-runtime.*.amazonaws.com: a constraint cannot say "one label here"
                          "amazonaws.com"})


def constraints(ca: LocalCA) -> tuple[bool, list, list]:
    cert = x509.load_pem_x509_certificate(ca.cert_path.read_bytes())
    extension = cert.extensions.get_extension_for_class(x509.NameConstraints)
    return (extension.critical, [name.value for name in extension.value.permitted_subtrees or ()],
            [name.value for name in extension.value.excluded_subtrees or ()])


def verifies(ca: LocalCA, host: str, trusted: str | None = None) -> str:
    client = ssl.create_default_context(cafile=trusted or str(ca.cert_path))
    try:
        handshake(ca.server_context(host), client, host)
    except ssl.SSLCertVerificationError as exc:
        return exc.verify_message
    return "ok"


def test_the_ca_permits_the_intercepted_hosts_subtrees_and_no_address(tmp_path):
    ca = LocalCA(tmp_path)
    assert constraints(ca) == (True, DEFAULT_DOMAINS,
                               [ipaddress.ip_network("0.0.0.0/0"), ipaddress.ip_network("::/0")])


@pytest.mark.parametrize(("host", "verdict"), [
    ("api.openai.com", "ok"), ("eu.api.openai.com", "ok"), ("myres.openai.azure.com", "ok"),
    ("us-central1-aiplatform.googleapis.com", "ok"), ("openrouter.ai", "ok"),
    ("example.com", "permitted subtree violation"), ("openai.com", "permitted subtree violation"),
    ("api.openai.com.evil.test", "permitted subtree violation"), ("xapi.openai.com", "permitted subtree violation"),
    ("127.0.0.1", "excluded subtree violation"), ("::1", "excluded subtree violation"),
])
def test_a_leaf_outside_the_constraints_fails_verification_and_one_inside_passes(tmp_path, host, verdict):
    assert verifies(LocalCA(tmp_path), host) == verdict


def test_a_run_that_intercepts_more_reissues_the_ca_with_the_same_key_and_the_old_trust_stays_narrow(tmp_path):
    first = LocalCA(tmp_path)
    (tmp_path / BUNDLE_FILE).write_bytes(b"ROOTS\n" + first.cert_pem())
    old = tmp_path / "old.pem"
    old.write_bytes(first.cert_pem())
    assert (first.created, first.reissued) == (True, False)

    wider = LocalCA(tmp_path, [*DEFAULT_INTERCEPTS, "llm.internal", "10.1.2.3"])
    assert (wider.created, wider.reissued) == (False, True)
    assert constraints(wider) == (True, [*sorted([*DEFAULT_DOMAINS, "llm.internal"]),
                                         ipaddress.ip_network("10.1.2.3/32")], [])
    assert x509.load_pem_x509_certificate(wider.cert_pem()).public_key() == \
        x509.load_pem_x509_certificate(old.read_bytes()).public_key()
    assert (tmp_path / BUNDLE_FILE).read_bytes() == b"ROOTS\n" + wider.cert_pem()
    assert [verifies(wider, host) for host in ("llm.internal", "10.1.2.3", "api.openai.com", "10.1.2.4")] == [
        "ok", "ok", "ok", "permitted subtree violation"]
    # A client that still trusts the CA as it was keeps its narrower trust.
    assert [verifies(wider, host, str(old)) for host in ("api.openai.com", "llm.internal")] == [
        "ok", "permitted subtree violation"]

    again = LocalCA(tmp_path, ["llm.internal"])  # covered already: kept as it is
    assert (again.created, again.reissued, again.cert_pem()) == (False, False, wider.cert_pem())
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([".lock", BUNDLE_FILE, "toolwire-ca-key.pem", CERT_FILE,
                                                                "old.pem"])


def test_the_ca_command_says_plainly_what_trusting_the_ca_means(tmp_path):
    from .test_ca import run_ca
    done = run_ca(tmp_path)
    directory = tmp_path / "toolwire-inspect" / "ca"
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.endswith(f"""
What trusting it means: whoever holds its key ({directory / "toolwire-ca-key.pem"}, readable by your user only) can read and
change that client's HTTPS traffic to the hosts the CA may sign for. Its name constraints limit it to the
hosts proxy mode intercepts (the providers' API hosts, and those you pass with --intercept) and their
subdomains, and no IP address unless you intercept one: a client that honours them (OpenSSL, Go, browsers)
refuses its certificate for any other site. Intercepting a new host reissues the certificate, same key,
with the host added: trust the new file again for that host. Trust it system-wide only on a machine
where you inspect, and delete {directory} (and the trust) to revoke it.
""")
