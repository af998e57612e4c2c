"""Build the real-traffic corpus: provider exchanges recorded in public VCR cassettes, one JSON line each.

The cassettes stay outside this repository (their projects' licences and size); this script reads them
from a checkout, or straight from a bare git directory (what `git clone --bare` or a mirror gives), and
writes `corpus.jsonl` to a directory outside the repository (default ~/.cache/toolwire-inspect/corpus/).
Each line: {"provenance": {repo, commit, path, index}, "method", "host", "path", "headers", "status",
"request": JSON or null, "request_text": text when not JSON, "response": JSON or null, "response_text":
text when not JSON (streams)}. Only the request headers that change what an endpoint accepts are kept
(`_CONTRACT_HEADERS`: beta features, versions; "headers_kept" says whether the cassette kept any request
header at all); Authorization never leaves the cassette.

Formats read: vcrpy YAML (`body: {string: ...}` or a plain string, `!!binary` bodies, gzip-encoded
bodies), pytest-recording's cassettes (the same), and pydantic-ai's `parsed_body` (the body already
parsed into YAML).

Rebuild (see README, "Measured on real traffic"):
    git clone --bare --filter=blob:limit=2m https://github.com/pydantic/pydantic-ai /tmp/pydantic-ai.git
    .venv/bin/python tests/bench/corpus.py --git-dir /tmp/pydantic-ai.git --repo pydantic/pydantic-ai
    .venv/bin/python tests/bench/corpus.py --dir ~/src/some-checkout --repo owner/name --append
Needs PyYAML (a test dependency)."""

from __future__ import annotations

import argparse
import base64
import gzip
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
import yaml

from inspector.formats.base import LoadError
from inspector.formats.registry import load_bytes

DEFAULT_OUT = Path.home() / ".cache" / "toolwire-inspect" / "corpus"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _is_cassette(path: str) -> bool:
    # vcrpy and Ruby VCR write under cassettes/, R's vcr (ellmer) under _vcr/
    return (("cassettes/" in path or "_vcr/" in path) and path.endswith((".yaml", ".yml", ".har"))) \
        or path.endswith(".httprr")


def from_git(git_dir: Path, rev: str = "HEAD") -> tuple[str, Iterator[tuple[str, bytes]]]:
    """(commit, (path, text) for every cassette at `rev`); blobs a partial clone lacks are skipped."""
    git = ["git", "--git-dir", str(git_dir)]
    commit = subprocess.run([*git, "rev-parse", rev], capture_output=True, text=True, check=True).stdout.strip()
    listing = subprocess.run([*git, "ls-tree", "-r", commit], capture_output=True, text=True, check=True).stdout
    entries = [(line.split()[2], line.split("\t", 1)[1]) for line in listing.splitlines()]

    def files() -> Iterator[tuple[str, bytes]]:
        for sha, path in entries:
            if not _is_cassette(path):
                continue
            # A missing blob (shallow or filtered clone) fails this one file, not the run.
            blob = subprocess.run([*git, "cat-file", "blob", sha], capture_output=True)
            if blob.returncode == 0:
                yield path, blob.stdout

    return commit, files()


def from_dir(root: Path) -> Iterator[tuple[str, bytes]]:
    for file in sorted(root.rglob("*")):
        rel = file.relative_to(root).as_posix()
        if file.is_file() and _is_cassette(rel):
            yield rel, file.read_bytes()


def _header(headers: Any, name: str) -> str:
    if not isinstance(headers, dict):
        return ""
    for key, value in headers.items():
        if isinstance(key, str) and key.lower() == name:
            return str(value[0] if isinstance(value, list) and value else value)
    return ""


# Request headers that change what an endpoint accepts (beta features, API and protocol versions): the
# only ones kept, and never a credential.
_CONTRACT_HEADERS = ("anthropic-beta", "anthropic-version", "openai-beta", "mcp-protocol-version")


def _contract_headers(headers: Any) -> list[list[str]]:
    return [[name, value] for name in _CONTRACT_HEADERS if (value := _header(headers, name))]


def _raw_body(side: dict) -> bytes | None:
    body = side.get("body")
    if isinstance(body, dict):
        body = base64.b64decode(body["base64_string"]) if "base64_string" in body else body.get("string")
    if body is None:
        return None
    return body if isinstance(body, bytes) else str(body).encode()


def _decode(raw: bytes, encoding: str) -> bytes:
    """Undo a content-encoding the cassette kept (gzip, deflate); other encodings are left as they are."""
    try:
        if "gzip" in encoding or raw[:2] == b"\x1f\x8b":
            return gzip.decompress(raw)
        if "deflate" in encoding:
            return zlib.decompress(raw)
    except (OSError, zlib.error, EOFError):
        return raw
    return raw


def _body(side: dict) -> tuple[Any, str | None]:
    """(parsed JSON or None, text when the body is not JSON or None when there is none)."""
    if "parsed_body" in side:
        return side["parsed_body"], None
    raw = _raw_body(side)
    if raw is None or raw == b"":
        return None, None
    raw = _decode(raw, _header(side.get("headers"), "content-encoding"))
    try:
        return orjson.loads(raw), None
    except orjson.JSONDecodeError:
        return None, raw.decode("utf-8", "replace")


def exchanges(text: bytes, provenance: dict) -> Iterator[dict]:
    if text.startswith(_HTTPRR):
        yield from _httprr_exchanges(text, provenance)
        return
    if provenance["path"].endswith(".har"):
        yield from _har_exchanges(text, provenance)
        return
    try:
        cassette = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError:
        return
    # vcrpy writes `interactions`, Ruby's VCR `http_interactions`
    interactions = (cassette.get("interactions") or cassette.get("http_interactions")) \
        if isinstance(cassette, dict) else None
    for index, interaction in enumerate(interactions or []):
        if not isinstance(interaction, dict):
            continue
        request, response = interaction.get("request") or {}, interaction.get("response") or {}
        url = str(request.get("uri") or request.get("url") or "")
        status = response.get("status")
        code = status.get("code") if isinstance(status, dict) else status
        req_json, req_text = _body(request)
        resp_json, resp_text = _body(response)
        yield {
            "provenance": {**provenance, "index": index},
            "method": str(request.get("method") or "").upper(),
            "headers": _contract_headers(request.get("headers")),
            "headers_kept": bool(request.get("headers")),
            **_host_and_path(url),
            "status": code if isinstance(code, int) else None,
            "request": req_json, "request_text": req_text,
            "response": resp_json, "response_text": resp_text,
        }


def _har_exchanges(text: bytes, provenance: dict) -> Iterator[dict]:
    """HAR files (Polly.js recordings, Mirascope's TypeScript tests), read by the product's own HAR
    reader: the corpus sees exactly what `open` would."""
    try:
        turns = load_bytes(text, provenance["path"])
    except LoadError:
        return
    for index, turn in enumerate(turns):
        flow = turn.flow
        req_json, req_text = _body({"body": flow.request_body})
        resp_json, resp_text = _body({"body": flow.response_body})
        url = flow.upstream_url or flow.path
        yield {
            "provenance": {**provenance, "index": index},
            "method": flow.method.upper(), **_host_and_path(url),
            "headers": _contract_headers(dict(flow.request_headers)), "headers_kept": bool(flow.request_headers),
            "status": flow.status,
            "request": req_json, "request_text": req_text,
            "response": resp_json, "response_text": resp_text,
        }


def _host_and_path(url: str) -> dict[str, str]:
    """The host and path of a recorded URL; a cassette that hid its base URL behind a placeholder
    (`<GPUSTACK_API_BASE>/chat/completions`) keeps the placeholder as the host, an upstream of no
    known provider."""
    parts = urlsplit(url)
    if parts.hostname:
        return {"host": parts.hostname, "path": parts.path + (f"?{parts.query}" if parts.query else "")}
    base, _, rest = url.partition("/")
    rest = urlsplit("/" + rest)
    return {"host": base, "path": rest.path + (f"?{rest.query}" if rest.query else "")}


_HTTPRR = b"httprr trace v1\n"


def _httprr_exchanges(text: bytes, provenance: dict) -> Iterator[dict]:
    """Go's httprr traces (langchaingo's testdata): after the header line, each exchange is a line
    "<request bytes> <response bytes>" followed by the raw HTTP/1.1 request and response."""
    at, index = len(_HTTPRR), 0
    while at < len(text):
        end = text.find(b"\n", at)
        sizes = text[at:end].split()
        if end < 0 or len(sizes) != 2 or not all(size.isdigit() for size in sizes):
            return
        request_size, response_size = int(sizes[0]), int(sizes[1])
        request = text[end + 1:end + 1 + request_size]
        response = text[end + 1 + request_size:end + 1 + request_size + response_size]
        at = end + 1 + request_size + response_size
        request_line, request_headers, request_body = _http_message(request)
        status_line, response_headers, response_body = _http_message(response)
        method, url = (request_line.split(" ") + ["", ""])[:2]
        status = status_line.split(" ")[1] if status_line.count(" ") >= 1 else ""
        req_json, req_text = _body({"body": request_body, "headers": request_headers})
        resp_json, resp_text = _body({"body": response_body, "headers": response_headers})
        yield {
            "provenance": {**provenance, "index": index},
            "method": method.upper(), **_host_and_path(url),
            "headers": _contract_headers(request_headers), "headers_kept": True,
            "status": int(status) if status.isdigit() else None,
            "request": req_json, "request_text": req_text,
            "response": resp_json, "response_text": resp_text,
        }
        index += 1


def _http_message(raw: bytes) -> tuple[str, dict[str, str], bytes]:
    """(start line, headers, body) of a raw HTTP/1.x message; a chunked body is joined."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    if headers.get("transfer-encoding", "").lower() == "chunked":
        joined, at = b"", 0
        while at < len(body):
            end = body.find(b"\r\n", at)
            size = int(body[at:end].split(b";")[0] or b"0", 16) if end >= 0 else 0
            if size == 0:
                break
            joined += body[end + 2:end + 2 + size]
            at = end + 2 + size + 2
        body = joined
    return lines[0], headers, body


def _default(value: Any) -> Any:
    # YAML timestamps and binary bodies that are not text
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--git-dir", type=Path, help="a (bare) git directory of the source repository")
    source.add_argument("--dir", type=Path, help="a checkout or `git archive` of the source repository")
    parser.add_argument("--repo", required=True, help="owner/name, recorded as provenance")
    parser.add_argument("--commit", help="commit recorded as provenance (read from --git-dir when not given)")
    parser.add_argument("--rev", default="HEAD", help="revision to read from --git-dir")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--append", action="store_true", help="add to corpus.jsonl instead of replacing it")
    args = parser.parse_args(argv)

    if args.git_dir:
        commit, files = from_git(args.git_dir, args.rev)
        commit = args.commit or commit
    else:
        commit, files = args.commit or "", from_dir(args.dir)
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / "corpus.jsonl"
    count = cassettes = 0
    with target.open("ab" if args.append else "wb") as out:
        for path, text in files:
            cassettes += 1
            for exchange in exchanges(text, {"repo": args.repo, "commit": commit, "path": path}):
                out.write(orjson.dumps(exchange, default=_default, option=orjson.OPT_NON_STR_KEYS) + b"\n")
                count += 1
    print(f"{count} exchanges from {cassettes} cassettes of {args.repo}@{commit[:12]} -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
