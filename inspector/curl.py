"""A recorded request as a `curl` command that sends it again, straight to the upstream it went to.

The command never holds a key: the store has none (its secret headers and query values read
`[redacted]`), and the command names each one by the variable a shell fills in, `$OPENAI_API_KEY`,
`$ANTHROPIC_API_KEY` or `$GEMINI_API_KEY` by the upstream's dialect. It sends what went upstream
(the translation or repair, not the client's original, in those modes) with its content-encoding
undone, so the command is text a user can read and edit.

The command is pasted into a shell, so it holds no character a terminal or a line editor acts on
(inspector.paste): in a JSON body they are escaped (the same JSON), in the URL percent-encoded; any
other body holding one is sent from the body file, and a header holding one is refused by name."""

from __future__ import annotations

import re
import shlex
from urllib.parse import quote, urlsplit

from .analysis import BodyTooLarge, decode_body
from .flow import Flow
from .redact import REDACTED, SECRET_QUERY_KEYS, query_pairs, secret_header
from .replay import NOT_REPLAYED, key_variables
from .paste import escaped, named, pastable, unpastable
from .wire.dialect import from_path

# Linux refuses a single argument over 128 KiB (MAX_ARG_STRLEN); a body past half of that goes in a file.
INLINE_LIMIT = 64 * 1024
# Headers that describe the bytes as recorded, not the decoded body the command sends.
_NOT_SENT = NOT_REPLAYED | {"content-encoding", "accept-encoding"}
_SHELL_SPECIAL = re.compile(r'([\\"$`])')


class CurlError(ValueError):
    """The flow cannot be written as a command (it never went upstream)."""


def curl_body(flow: Flow) -> bytes:
    """The body the command sends: what went upstream, content-encoding undone."""
    body = flow.request_body if flow.upstream_request_body is None else flow.upstream_request_body
    headers = flow.upstream_request_headers or flow.request_headers
    try:
        return decode_body(body, headers)
    except BodyTooLarge:
        return body


def needs_body_file(flow: Flow) -> bool:
    """Whether the body is too big, not text, or holds what a pasted command must not carry
    (outside JSON, where it can be escaped), to stand in the command itself."""
    return _inline_body(curl_body(flow)) is None


def _inline_body(body: bytes) -> str | None:
    """The body as it stands in the command, or None when it must come from the body file."""
    if len(body) > INLINE_LIMIT:
        return None
    try:
        return pastable(body.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def _refusal(flow: Flow, name: str, value: str) -> CurlError:
    """Why the header `name` cannot stand in the command; the name itself shown escaped."""
    shown = "".join(escaped(char) if unpastable(char) else char for char in name)
    return CurlError(f"flow #{flow.id}: the header {shown} holds characters a pasted command must not carry "
                     f"({named(name + value)})")


def curl_command(flow: Flow, *, body_file: str | None = None) -> str:
    """The command, one option a line. `body_file`: the body is read from that file (`curl_body`
    written there) instead of standing in the command; needed when `needs_body_file`."""
    if not flow.upstream_url:
        raise CurlError(f"flow #{flow.id} never went upstream: there is no request to copy")
    body = curl_body(flow)
    inline = None if body_file is not None else _inline_body(body)
    if body and body_file is None and inline is None:
        raise CurlError(f"flow #{flow.id}: the body holds characters a pasted command must not carry, or is "
                        "too big or not text: it needs a body file")
    if any(map(unpastable, flow.method)):
        raise CurlError(f"flow #{flow.id}: the method holds characters a pasted command must not carry "
                        f"({named(flow.method)})")
    url = urlsplit(flow.upstream_url)
    variable = _key_variable(url.path)
    lines = [f"curl {_url(flow.upstream_url, variable)}"]
    if flow.method.upper() != "POST":
        lines.append(f"-X {shlex.quote(flow.method.upper())}")
    if flow.streamed:
        lines.append("--no-buffer")  # show the events as they come, as the client saw them
    for name, value in flow.upstream_request_headers or flow.request_headers:
        lower = name.lower()
        if lower in _NOT_SENT or lower.startswith("x-toolwire-"):
            continue
        if any(map(unpastable, name + value)):
            raise _refusal(flow, name, value)
        if secret_header(name) and value == REDACTED:
            secret = variable if lower in _KEY_HEADERS else re.sub(r"\W", "_", name).upper()
            lines.append("-H " + _double_quoted(f"{name}: {_KEY_HEADERS.get(lower, '')}", secret))
        else:
            lines.append(f"-H {shlex.quote(f'{name}: {value}')}")
    if body_file is not None:
        lines.append(f"--data-binary @{shlex.quote(body_file)}")
    elif inline:
        lines.append(f"--data-binary {shlex.quote(inline)}")
    return " \\\n  ".join(lines)


# The headers that carry an API key, and what comes before the key in them.
_KEY_HEADERS = {"authorization": "Bearer ", "x-api-key": "", "x-goog-api-key": "", "api-key": ""}


def _key_variable(path: str) -> str:
    names = key_variables(from_path(path))
    return names[0] if names else "API_KEY"


def _escaped(text: str) -> str:
    """`text` as it must stand inside double quotes to reach the command unchanged."""
    return _SHELL_SPECIAL.sub(r"\\\1", text)


def _double_quoted(literal: str, variable: str) -> str:
    """`literal` then the variable's value, as one double-quoted shell word."""
    return f'"{_escaped(literal)}${{{variable}}}"'


def _url(url: str, variable: str) -> str:
    # A character no URL may hold raw, percent-encoded as the byte it was recorded from (the
    # forwarder reads the request target as latin-1).
    url = "".join(quote(char, safe="", encoding="latin-1" if ord(char) < 256 else "utf-8") if unpastable(char)
                  else char for char in url)
    base, _, query = url.partition("?")
    pairs = query_pairs(query)
    if not any(k.lower() in SECRET_QUERY_KEYS and v == REDACTED for k, v in pairs):
        return shlex.quote(url)
    # `?key=[redacted]`: the key goes back in from the variable, the rest as recorded.
    parts = []
    for name, value in pairs:
        if name.lower() in SECRET_QUERY_KEYS and value == REDACTED:
            parts.append(f"{quote(name)}=${{{variable}}}")
        else:
            parts.append(_escaped(f"{quote(name)}={quote(value, safe=':/,')}"))
    return f'"{_escaped(base)}?{"&".join(parts)}"'
