"""Proxy mode's CA: made once with private file modes, reused, refused when others may read its
key, and the certificates it signs pass a real TLS client's verification for their host only."""

from __future__ import annotations

import os
import ssl
import stat
import subprocess
import sys

import pytest

from inspector.proxy.ca import CERT_FILE, KEY_FILE, CAError, LocalCA


def run_ca(data_home) -> subprocess.CompletedProcess:
    # platformdirs puts the user data dir under XDG_DATA_HOME: the real one is never touched.
    return subprocess.run([sys.executable, "-m", "inspector", "ca"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "XDG_DATA_HOME": str(data_home)})


def test_ca_command_makes_the_ca_once_with_private_modes_and_says_how_to_trust_it(tmp_path):
    first = run_ca(tmp_path)
    assert (first.returncode, first.stderr) == (0, "")
    directory = tmp_path / "toolwire-inspect" / "ca"
    cert = directory / CERT_FILE
    bundle = directory / "toolwire-ca-bundle.pem"
    assert first.stdout.splitlines()[0] == (f"made the proxy CA: {cert}  (its key {directory / KEY_FILE} stays on "
                                            "this machine)")
    for line in (f"    export SSL_CERT_FILE={bundle}", f"    export REQUESTS_CA_BUNDLE={bundle}",
                 f"    export NODE_EXTRA_CA_CERTS={cert}",
                 f"    Debian/Ubuntu: sudo cp {cert} /usr/local/share/ca-certificates/toolwire-inspect.crt && "
                 "sudo update-ca-certificates"):
        assert line in first.stdout.splitlines()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE((directory / KEY_FILE).stat().st_mode) == 0o600
    assert bundle.read_bytes().endswith(cert.read_bytes())
    pem = cert.read_bytes()

    second = run_ca(tmp_path)
    assert (second.returncode, second.stderr) == (0, "")
    assert second.stdout.splitlines()[0] == f"found the proxy CA: {cert}  (its key {directory / KEY_FILE} stays on " \
                                            "this machine)"
    assert cert.read_bytes() == pem


def test_a_key_others_may_read_is_refused_not_used(tmp_path):
    directory = tmp_path / "toolwire-inspect" / "ca"
    LocalCA(directory)
    key = directory / KEY_FILE
    key.chmod(0o640)
    with pytest.raises(CAError) as caught:
        LocalCA(directory)
    why = f"{key} may be read by others (mode 0640); `chmod 600 {key}` or delete the folder to make a new CA"
    assert str(caught.value) == why
    result = run_ca(tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"toolwire-inspect: {why}\n")


def test_a_damaged_ca_is_refused_with_the_way_out(tmp_path):
    LocalCA(tmp_path)
    (tmp_path / CERT_FILE).write_bytes(b"not a certificate")
    with pytest.raises(CAError, match=r"^the proxy CA in .* is damaged \(.*\); delete the folder to make a new one"):
        LocalCA(tmp_path)


def handshake(server: ssl.SSLContext, client: ssl.SSLContext, name: str) -> ssl.SSLObject:
    """A whole TLS handshake between two real contexts over memory buffers; the client's end, given
    all the server wrote."""
    c_in, c_out, s_in, s_out = ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO()
    c = client.wrap_bio(c_in, c_out, server_hostname=name)
    s = server.wrap_bio(s_in, s_out, server_side=True)
    done = {"c": False, "s": False}
    for _ in range(10):
        for side, obj, out, peer_in in (("c", c, c_out, s_in), ("s", s, s_out, c_in)):
            if not done[side]:
                try:
                    obj.do_handshake()
                    done[side] = True
                except ssl.SSLWantReadError:
                    pass
            peer_in.write(out.read())
        if all(done.values()):
            c_in.write(s_out.read())
            return c
    raise AssertionError("handshake did not finish")


@pytest.mark.parametrize("host", ["api.openai.com", "127.0.0.1"])
def test_a_leaf_verifies_for_its_host_and_for_no_other(tmp_path, host):
    ca = LocalCA(tmp_path, [host])  # the CA may sign only for what is intercepted (test_ca_constraints.py)
    client = ssl.create_default_context(cafile=str(ca.cert_path))  # strict X.509 checks on 3.13+
    context = ca.server_context(host)
    assert ca.server_context(host.upper()) is context  # made once per host
    handshake(context, client, host)
    with pytest.raises(ssl.SSLCertVerificationError, match="mismatch"):
        handshake(context, client, "api.anthropic.com")
    with pytest.raises(ssl.SSLCertVerificationError, match="unable to get local issuer"):
        handshake(context, ssl.create_default_context(), host)  # a client that does not trust the CA
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", KEY_FILE, CERT_FILE]  # no leaf left on disk


def test_an_intercepted_tls_session_sends_nothing_after_its_handshake(tmp_path):
    """No TLS 1.3 session ticket: a client that reads on one thread while it writes on another (the
    websockets sync client the OpenAI SDK's sockets use) lost ~0.5 % of its handshakes to the ticket
    arriving under its first write, measured against a plain TLS echo server (0 of 1,200 without)."""
    ca = LocalCA(tmp_path, ["api.openai.com"])
    client = ssl.create_default_context(cafile=str(ca.cert_path))
    end = handshake(ca.server_context("api.openai.com"), client, "api.openai.com")
    assert end.version() == "TLSv1.3"
    with pytest.raises(ssl.SSLWantReadError):
        end.read()  # all the server sent is read: nothing was there to read
    assert end.session is not None and not end.session.has_ticket
    # Near miss: the same handshake, the server's context given OpenSSL's default 2 tickets, gets one.
    ticketing = LocalCA(tmp_path / "other", ["api.openai.com"])
    context = ticketing.server_context("api.openai.com")
    context.num_tickets = 2
    end = handshake(context, ssl.create_default_context(cafile=str(ticketing.cert_path)), "api.openai.com")
    with pytest.raises(ssl.SSLWantReadError):
        end.read()
    assert end.session is not None and end.session.has_ticket
