"""Text the product puts on the clipboard, which a user then pastes into a shell: it holds no
character a terminal or a line editor acts on. A ^C aborts the line being pasted and the rest runs
as a command, an ESC starts terminal and readline sequences, a bidi override shows another text than
the one that runs. JSON keeps its meaning with them escaped; other text holding one is not pasted."""

from __future__ import annotations

import json
import unicodedata

import orjson

from .wire import jsonsafe


def unpastable(char: str) -> bool:
    """Whether `char` must not stand raw in pasted text: a control character but the newline (a
    command spans lines; inside quotes a newline is text), a line or paragraph separator, a format
    character (bidi controls, zero-width), a lone surrogate."""
    return char != "\n" and unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs")


def pastable(text: str) -> str | None:
    """`text` as it may be pasted: itself, or when it is JSON the same JSON with those characters
    escaped; None when it is neither clean nor JSON."""
    if not any(map(unpastable, text)):
        return text
    try:
        jsonsafe.loads(text)
    except (orjson.JSONDecodeError, jsonsafe.Unfaithful):
        return None
    # Valid JSON holds such a character raw only inside a string (DEL, C1, bidi: escaped there)
    # or as whitespace between tokens (\t, \r: a space is the same JSON).
    return "".join((" " if char in "\t\r" else escaped(char)) if unpastable(char) else char for char in text)


def escaped(char: str) -> str:
    """`char` as a JSON string escapes it (`\\u202e`; a pair of them beyond the BMP)."""
    return json.dumps(char)[1:-1]


def named(text: str) -> str:
    """The characters of `text` that may not be pasted, by code point: `U+001B, U+202E`."""
    return ", ".join(dict.fromkeys(f"U+{ord(char):04X}" for char in text if unpastable(char)))
