"""Who speaks Bedrock Converse: Amazon Bedrock's runtime, whose requests are signed (AWS SigV4).

SigV4 signs the method, host, path, query and a hash of the body, so a request whose host (a
base-URL route), path (the route's prefix) or body (repair, translation) changed on its way is
signed again here, with botocore's signer and the credentials the usual AWS chain finds
(environment, shared files, SSO, instance roles), held by botocore in memory and never stored. A
client that sends a Bedrock API key (`AWS_BEARER_TOKEN_BEDROCK`, a bearer token) keeps it."""

from __future__ import annotations

import os
import re
import threading
from typing import Any
from urllib.parse import urlsplit

from ...dialect import Dialect
from ...profiles import Profile
from .. import AuthError, Outgoing, Provider, SDKSetting, header_auth
from .shape import NAMES

SERVICE = "bedrock"  # the signing name of bedrock-runtime (its service model's signingName)
DEFAULT_REGION = "us-east-1"
# Headers a signature covers or carries: dropped before signing again (the client's are stale).
SIGNATURE_HEADERS = frozenset({"authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"})
# Bedrock's runtime hosts, every region (the profiles' `hosts`: a regex the whole host matches).
HOSTS = r"bedrock-runtime(?:-fips)?\.[a-z0-9-]+\.amazonaws\.com"
_REGION_IN_HOST = re.compile(r"bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com$")
_REGION_IN_SCOPE = re.compile(r"Credential=[^/,]+/\d{8}/([a-z0-9-]+)/")
_bearer = header_auth("Authorization", "Bearer ")
_API_KEY_PREFIXES = ("bedrock-api-key-", "ABSK")
_lock = threading.Lock()
# The environment variables the AWS chain starts from: credentials are found again when one changes.
_CHAIN = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
          "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
          "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN")
_found: dict[tuple[str | None, ...], Any] = {}  # refreshable credentials refresh themselves (botocore)


def _credentials() -> Any:
    """The AWS chain's credentials, found once per environment (finding them reads files, or asks
    an instance role); AuthError, saying where it looked, when there are none."""
    start = tuple(os.environ.get(name) for name in _CHAIN)
    with _lock:
        if start in _found:
            return _found[start]
        try:
            import botocore.session  # only a signed request needs botocore (the `bedrock` extra)
        except ImportError:
            raise AuthError("signing a request for Bedrock needs botocore: pip install 'toolwire-inspect[bedrock]'") \
                from None
        try:
            found = botocore.session.Session().get_credentials()
        except Exception as exc:  # a broken shared config file, an SSO cache that cannot be read
            raise AuthError(f"AWS credentials could not be loaded to sign the request for Bedrock: {exc}") from None
        if found is None:
            raise AuthError("no AWS credentials found to sign the request for Bedrock (looked in AWS_ACCESS_KEY_ID/"
                            "AWS_SECRET_ACCESS_KEY, AWS_PROFILE and ~/.aws, SSO, and instance or container roles); "
                            "set them, or send it through proxy mode, which keeps the client's own signature")
        _found[start] = found
        return found


def region_of(url: str, key: str) -> str:
    """The region a request is signed for: its host's, else the client's own signature scope's, else
    the AWS chain's (AWS_REGION, the profile), else us-east-1."""
    host = (urlsplit(url).hostname or "").lower()
    match = _REGION_IN_HOST.search(host) or _REGION_IN_SCOPE.search(key)
    if match:
        return match.group(1)
    import botocore.session  # signing found it

    return botocore.session.Session().get_config_variable("region") or DEFAULT_REGION


def api_key(key: str) -> bool:
    """Whether `key` (without its scheme) is a Bedrock API key: short-term ones start
    `bedrock-api-key-` (the prefix AWS's aws-bedrock-token-generator writes), long-term ones `ABSK`,
    a literal prefix of the key as AWS issues it."""
    return key.startswith(_API_KEY_PREFIXES)


def sigv4(request: Outgoing, key: str) -> Outgoing:
    """`request` signed with SigV4 for Bedrock (botocore's SigV4Auth), its old signature dropped; a
    Bedrock API key (`api_key`) is sent as the bearer token it is. Any other key (another provider's,
    which a translating route's client sent) never goes to AWS: the request is signed instead.
    AuthError when nothing can sign it."""
    bare = key[7:] if key[:7].lower() == "bearer " else key  # the Authorization header as sent, or the key
    if api_key(bare):
        return _bearer(request, bare)
    credentials = _credentials().get_frozen_credentials()
    from botocore.auth import SigV4Auth  # found by _credentials(), or it raised
    from botocore.awsrequest import AWSRequest

    kept = [(name, value) for name, value in request.headers if name.lower() not in SIGNATURE_HEADERS]
    url = request.url or f"https://{BEDROCK.host}/"
    unsigned = AWSRequest(method=request.method, url=url, data=request.body,
                          headers={name: value for name, value in kept if name.lower() != "host"})
    SigV4Auth(credentials, SERVICE, region_of(url, key)).add_auth(unsigned)
    added = [(name, value) for name, value in unsigned.headers.items() if name.lower() in SIGNATURE_HEADERS]
    return Outgoing(request.method, request.url, [*kept, *added], request.body)


BEDROCK = Provider(
    "bedrock", "bedrock-runtime.us-east-1.amazonaws.com", ("AWS_BEARER_TOKEN_BEDROCK",), sigv4,
    frozenset({"authorization", "x-amz-security-token"}), signs=True, signature="AWS4-HMAC-SHA256 ",
    own_header_prefix="x-amz-",  # the signature's date and body hash: dropped when a request goes elsewhere
    # Claude Code on Bedrock (CLAUDE_CODE_USE_BEDROCK=1) reads ANTHROPIC_BEDROCK_BASE_URL.
    # Not in the TUI's header (record prints them): it shows one variable per dialect it had before.
    settings=(SDKSetting("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "", "boto3 / botocore bedrock-runtime clients, the AWS "
                         "CLI", header=False),
              SDKSetting("ANTHROPIC_BEDROCK_BASE_URL", "", "Claude Code on Bedrock, the anthropic SDK's AnthropicBedrock",
                         header=False)),
    route="https://bedrock-runtime.us-east-1.amazonaws.com",
    intercepts=("bedrock-runtime.*.amazonaws.com",),
)

PROFILES = (Profile("bedrock", Dialect.BEDROCK, "Amazon Bedrock Converse", NAMES, hosts=HOSTS),)
