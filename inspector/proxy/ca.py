"""The local certificate authority of proxy mode: it signs a certificate for each intercepted host,
so that a client which trusts it talks TLS to the forwarder as if to the provider.

Everything cryptographic is `cryptography`'s; this module only chooses names, lifetimes and file
modes. The CA lives in the user data directory (folder 0700, its files 0600: inspector.files), made on
first use; a key
file others may read is refused rather than used, as ssh does.

The CA may sign only for the hosts proxy mode intercepts: its NameConstraints extension (critical)
permits their DNS subtrees and no IP address but the intercepted ones, so that trusting it trusts
it for those hosts and nothing else. A run that intercepts a host the CA does not cover reissues
the CA certificate, same key and name, with the host added (the constraints only grow: two runs
with different lists do not take turns), and says so: a client keeps the trust it was given until
it trusts the new certificate."""

from __future__ import annotations

import datetime
import fcntl
import ipaddress
import os
import ssl
import stat
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path

import platformdirs
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ..files import write_file

CERT_FILE = "toolwire-ca.pem"
KEY_FILE = "toolwire-ca-key.pem"
BUNDLE_FILE = "toolwire-ca-bundle.pem"
_CA_YEARS = 10
# Leaf certificates live in memory for the process; a day's margin each side absorbs clock skew.
_LEAF_DAYS = 30
_LEAF_RENEW = 7 * 86400  # seconds after which a cached leaf is made afresh
_LEAVES_KEPT = 256


class CAError(Exception):
    """The CA cannot be made or read (permissions, a damaged file)."""


def default_dir() -> Path:
    return Path(platformdirs.user_data_dir("toolwire-inspect")) / "ca"


def trust_settings(directory: Path | str | None = None) -> list[tuple[str, Path]]:
    """What a client sets to trust the CA in `directory` (default: the user's), as (variable, file):
    Python's clients first (the bundle, `LocalCA.write_bundle`), then Node's (the CA alone). Names
    only: nothing is made here."""
    directory = Path(directory) if directory is not None else default_dir()
    bundle = directory / BUNDLE_FILE
    return [("SSL_CERT_FILE", bundle), ("REQUESTS_CA_BUNDLE", bundle), ("NODE_EXTRA_CA_CERTS", directory / CERT_FILE)]


def name_constraints(hosts: Iterable[str]) -> x509.NameConstraints:
    """What a CA for these intercept patterns may sign for: each host with its subdomains (a DNS
    subtree), `*.x` as x's subtree, `*-x.y` as y's (a constraint cannot say "a label ending in -x"),
    `a.*.x` as x's (nor "any one label here");
    an IP host as its one address, and, when there is none, no address at all."""
    domains: set[str] = set()
    addresses: set[ipaddress.IPv4Network | ipaddress.IPv6Network] = set()
    for pattern in hosts:
        domain = pattern.partition(".")[2] if pattern.startswith("*-") else pattern.rpartition("*.")[2]
        try:
            addresses.add(ipaddress.ip_network(domain))
        except ValueError:
            domains.add(domain.lower())
    permitted: list[x509.GeneralName] = [x509.DNSName(domain) for domain in sorted(domains)]
    permitted += [x509.IPAddress(network) for network in sorted(addresses, key=lambda net: (net.version, net))]
    excluded = None if addresses else [x509.IPAddress(ipaddress.ip_network("0.0.0.0/0")),
                                       x509.IPAddress(ipaddress.ip_network("::/0"))]
    return x509.NameConstraints(permitted_subtrees=permitted, excluded_subtrees=excluded)


def _subtrees(constraints: x509.NameConstraints) -> set[str]:
    """The permitted names, each as an intercept pattern that gives it back (name_constraints)."""
    return {str(ipaddress.ip_network(name.value).network_address) if isinstance(name, x509.IPAddress) else name.value
            for name in constraints.permitted_subtrees or ()}


def _covered(cert: x509.Certificate) -> set[str] | None:
    """What a CA certificate may sign for, or None when it may sign for anything (no constraints:
    made before they were)."""
    try:
        return _subtrees(cert.extensions.get_extension_for_class(x509.NameConstraints).value)
    except x509.ExtensionNotFound:
        return None


class LocalCA:
    """The CA in `directory`, made there if missing, and reissued if it does not cover `hosts`
    (intercept patterns: InterceptList.hosts). Blocking (disk, key generation): call it off the
    forwarder's loop."""

    def __init__(self, directory: Path | str | None = None, hosts: Iterable[str] | None = None) -> None:
        from .connect import DEFAULT_INTERCEPTS  # the module that owns the list imports this one

        self.directory = Path(directory) if directory is not None else default_dir()
        self._wanted = _subtrees(name_constraints(DEFAULT_INTERCEPTS if hosts is None else hosts))
        self.created = False
        self.reissued = False  # the certificate changed to cover more hosts: clients must trust it anew
        self._key, self._cert = self._load_or_create()
        # One key for every leaf: a leaf is worth no more than the CA key beside it on this disk.
        self._leaf_key = ec.generate_private_key(ec.SECP256R1())
        self._leaves: OrderedDict[str, tuple[float, ssl.SSLContext]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def cert_path(self) -> Path:
        return self.directory / CERT_FILE

    @property
    def key_path(self) -> Path:
        return self.directory / KEY_FILE

    def cert_pem(self) -> bytes:
        return self._cert.public_bytes(serialization.Encoding.PEM)

    def server_context(self, host: str) -> ssl.SSLContext:
        """A TLS server context presenting a certificate for `host` signed by this CA."""
        host = host.lower()
        with self._lock:
            cached = self._leaves.get(host)
            if cached is not None and time.time() - cached[0] < _LEAF_RENEW:
                self._leaves.move_to_end(host)
                return cached[1]
        context = self._make_context(host)
        with self._lock:
            self._leaves[host] = (time.time(), context)
            if len(self._leaves) > _LEAVES_KEPT:
                self._leaves.popitem(last=False)
        return context

    def write_bundle(self, roots: bytes) -> Path:
        """`roots` (a CA bundle's PEM) followed by this CA, in one file: SSL_CERT_FILE and
        REQUESTS_CA_BUNDLE replace a client's trust store, and tunnelled hosts still need the real roots."""
        path = self.directory / BUNDLE_FILE
        write_file(path, roots.rstrip(b"\n") + b"\n" + self.cert_pem())
        return path

    # -- the CA itself ------------------------------------------------------------------------

    def _load_or_create(self) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.directory.chmod(0o700)  # ours alone, also when it was made with looser rights
            # Serialises two first uses (two launches at once) so both end up with one CA.
            with open(os.open(self.directory / ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)) as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if self.key_path.exists() or self.cert_path.exists():
                    key, cert = self._load()
                    covered = _covered(cert)
                    if covered is not None and self._wanted <= covered:
                        return key, cert
                    return key, self._reissue(key, cert, self._wanted | (covered or set()))
                key, cert = _new_ca(name_constraints(self._wanted))
                write_file(self.key_path, key.private_bytes(serialization.Encoding.PEM,
                                                            serialization.PrivateFormat.PKCS8,
                                                            serialization.NoEncryption()))
                write_file(self.cert_path, cert.public_bytes(serialization.Encoding.PEM))
                self.created = True
                return key, cert
        except OSError as exc:
            raise CAError(f"cannot make the proxy CA in {self.directory}: {exc.strerror or exc}") from exc

    def _reissue(self, key: ec.EllipticCurvePrivateKey, old: x509.Certificate, hosts: set[str]) -> x509.Certificate:
        """The CA certificate again, same key and name, constrained to `hosts`; the bundle beside it
        (write_bundle) ends with the new one instead of the old."""
        cert = _ca_certificate(key, old.subject, name_constraints(hosts))
        pem = cert.public_bytes(serialization.Encoding.PEM)
        write_file(self.cert_path, pem)
        bundle = self.directory / BUNDLE_FILE
        old_pem = old.public_bytes(serialization.Encoding.PEM)
        if bundle.exists() and (roots := bundle.read_bytes()).endswith(old_pem):
            write_file(bundle, roots[:-len(old_pem)] + pem)
        self.reissued = True
        return cert

    def _load(self) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        mode = self.key_path.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise CAError(f"{self.key_path} may be read by others (mode {stat.S_IMODE(mode):04o}); "
                          f"`chmod 600 {self.key_path}` or delete the folder to make a new CA")
        try:
            key = serialization.load_pem_private_key(self.key_path.read_bytes(), password=None)
            cert = x509.load_pem_x509_certificate(self.cert_path.read_bytes())
        except (ValueError, TypeError, FileNotFoundError) as exc:
            raise CAError(f"the proxy CA in {self.directory} is damaged ({exc}); delete the folder to make "
                          "a new one (clients must then trust the new one)") from exc
        if not isinstance(key, ec.EllipticCurvePrivateKey) or key.public_key() != cert.public_key():
            raise CAError(f"the key and certificate in {self.directory} do not match; delete the folder to make "
                          "a new CA")
        return key, cert

    def _make_context(self, host: str) -> ssl.SSLContext:
        now = datetime.datetime.now(datetime.UTC)
        try:
            name: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host))
            # No common name: verifiers judge a CN that looks like a host name by the CA's DNS
            # constraints, which never permit an address. The subject is then empty, and RFC 5280
            # makes the SAN critical.
            subject = x509.Name([])
        except ValueError:
            name = x509.DNSName(host)
            subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host[:64])])
        leaf_public = self._leaf_key.public_key()
        leaf = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self._cert.subject)
            .public_key(leaf_public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=_LEAF_DAYS))
            .add_extension(x509.SubjectAlternativeName([name]), critical=not subject)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False, content_commitment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(leaf_public), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()), critical=False)
            .sign(self._key, hashes.SHA256())
        )
        chain = (self._leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                              serialization.NoEncryption())
                 + leaf.public_bytes(serialization.Encoding.PEM))  # a root is never sent: clients hold it
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        # No TLS 1.3 session ticket after the handshake: it reaches a client as it sends its first
        # request, and a client that reads on one thread while it writes on another (websockets' sync
        # client, under the OpenAI SDK's sockets) then loses the handshake now and again. Each
        # tunnel is a full handshake; clients keep their connections open, so that is rare.
        context.num_tickets = 0
        # The ssl module loads a certificate chain from a file only: a private one, gone once read.
        with tempfile.NamedTemporaryFile(dir=self.directory, prefix=".leaf-", suffix=".pem") as file:
            file.write(chain)
            file.flush()
            context.load_cert_chain(file.name)
        return context


def _new_ca(constraints: x509.NameConstraints) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    # A name of its own per install, so two machines' CAs are told apart in a trust store.
    name = x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "toolwire-inspect"),
        x509.NameAttribute(NameOID.COMMON_NAME, f"toolwire-inspect local CA {os.urandom(4).hex()}"),
    ])
    return key, _ca_certificate(key, name, constraints)


def _ca_certificate(key: ec.EllipticCurvePrivateKey, name: x509.Name,
                    constraints: x509.NameConstraints) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=365 * _CA_YEARS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=False, key_encipherment=False, content_commitment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                     crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(constraints, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )

