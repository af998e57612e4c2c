"""RFC 6901 JSON pointers: build, escape, split."""

from __future__ import annotations


def escape(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def join(base: str, *tokens: str | int) -> str:
    """`join("/messages", 2, "content")` -> "/messages/2/content". The one way every module builds
    a pointer; integers need no escaping (the checker's hot path joins many)."""
    for token in tokens:
        base = f"{base}/{token}" if isinstance(token, int) else f"{base}/{escape(token)}"
    return base


def split(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"JSON pointer must start with '/': {pointer!r}")
    return [unescape(t) for t in pointer[1:].split("/")]
