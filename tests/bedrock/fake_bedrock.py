"""A local stand-in for Amazon Bedrock's runtime: it answers Converse, ConverseStream and
InvokeModel with canned answers, and first verifies each request's SigV4 signature with botocore's
own signer and the fixed test credentials, refusing a bad one with the 403 Bedrock sends. `host`: the
host it plays (a proxy-mode test's `bedrock-runtime.us-east-1.amazonaws.com`, which the client
signed); None: the Host it was sent, as AWS checks it."""

from __future__ import annotations

import re
from collections import deque

import orjson
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from inspector.mock import Canned, MockUpstream, Received, default_responder

KEY_ID = "AKIDTOOLWIRETEST0001"
SECRET = "toolwire-test-secret-access-key-0001"
REGION = "us-east-1"
HOST = f"bedrock-runtime.{REGION}.amazonaws.com"
_AUTH = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                   r"SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$")


def signature_problem(request: Received, host: str | None) -> str | None:
    """Why `request`'s signature is not one the test credentials made for it, or None."""
    match = _AUTH.match(request.header("authorization") or "")
    if match is None:
        return f"no SigV4 Authorization header (got {request.header('authorization')!r})"
    key_id, _, region, service, signed, signature = match.groups()
    if key_id != KEY_ID:
        return f"signed with access key {key_id!r}, not the test's"
    headers = {name: request.header(name) or "" for name in signed.split(";")}
    if host is not None:
        headers["host"] = host
    url = f"https://{headers['host']}{request.path}" + (f"?{request.query}" if request.query else "")
    unsigned = AWSRequest(method=request.method, url=url, data=request.body, headers=headers)
    unsigned.context["timestamp"] = request.header("x-amz-date")
    signer = SigV4Auth(Credentials(KEY_ID, SECRET), service, region)
    expected = signer.signature(signer.string_to_sign(unsigned, signer.canonical_request(unsigned)), unsigned)
    return None if expected == signature else "the request signature does not match"


class FakeBedrock:
    def __init__(self, host: str | None = None, tls: tuple[str, str] | None = None) -> None:
        self.host = host
        self.script: deque[Canned] = deque()
        self.refused: list[str] = []
        self.mock = MockUpstream(responder=self._answer, tls=tls)

    def __enter__(self) -> FakeBedrock:
        self.mock.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.mock.stop()

    @property
    def base_url(self) -> str:
        return self.mock.base_url

    @property
    def received(self) -> list[Received]:
        return self.mock.received

    def push(self, *canned: Canned) -> None:
        self.script.extend(canned)

    def _answer(self, request: Received) -> Canned:
        problem = signature_problem(request, self.host)
        if problem is not None:
            self.refused.append(problem)
            return Canned(403, [("content-type", "application/json"), ("x-amzn-errortype", "InvalidSignatureException")],
                          orjson.dumps({"message": problem}))
        return self.script.popleft() if self.script else default_responder(request)
