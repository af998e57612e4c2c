"""The local certificate authority of proxy mode: it signs a certificate for each intercepted host,
so that a client which trusts it talks TLS to the forwarder as if to the provider.

Everything cryptographic is `cryptography`'s; this module only chooses names, lifetimes and file
modes. The CA lives in the user data directory (folder 0700, its files 0600: inspector.files), made on first use; a key
file others may read is refused rather than used, as ssh does."""

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


class LocalCA:
    """The CA in `directory`, made there if missing. Blocking (disk, key generation): call it off
    the forwarder's loop."""

    def __init__(self, directory: Path | str | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_dir()
        self.created = False
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
                    return self._load()
                key, cert = _new_ca()
                write_file(self.key_path, key.private_bytes(serialization.Encoding.PEM,
                                                            serialization.PrivateFormat.PKCS8,
                                                            serialization.NoEncryption()))
                write_file(self.cert_path, cert.public_bytes(serialization.Encoding.PEM))
                self.created = True
                return key, cert
        except OSError as exc:
            raise CAError(f"cannot make the proxy CA in {self.directory}: {exc.strerror or exc}") from exc

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
        except ValueError:
            name = x509.DNSName(host)
        leaf_public = self._leaf_key.public_key()
        leaf = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host[:64])]))
            .issuer_name(self._cert.subject)
            .public_key(leaf_public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=_LEAF_DAYS))
            .add_extension(x509.SubjectAlternativeName([name]), critical=False)
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
        # The ssl module loads a certificate chain from a file only: a private one, gone once read.
        with tempfile.NamedTemporaryFile(dir=self.directory, prefix=".leaf-", suffix=".pem") as file:
            file.write(chain)
            file.flush()
            context.load_cert_chain(file.name)
        return context


def _new_ca() -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    # A name of its own per install, so two machines' CAs are told apart in a trust store.
    name = x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "toolwire-inspect"),
        x509.NameAttribute(NameOID.COMMON_NAME, f"toolwire-inspect local CA {os.urandom(4).hex()}"),
    ])
    cert = (
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
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert

