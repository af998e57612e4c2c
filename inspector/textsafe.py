"""Text from the wire, made safe to show a person: the one home for it (every TUI view, CLI line,
notification and annotation passes recorded text through `shown`).

Everything the product shows was written by someone else, and a terminal acts on some characters
instead of printing them: ESC starts CSI/OSC/DCS sequences (OSC 52 writes the clipboard), C1 codes
are 8-bit forms of the same, CR and BS overwrite what was printed, bidi controls reorder text so a
line reads other than it is (Trojan Source), and invisible format characters hide text from the
reader (Unicode tag characters smuggle ASCII a model reads and a person does not see).

The convention: each such character is shown as the escape Python would write for it, `\\x1b`,
`\\x9b`, `\\u202e`, `\\U000e0041`, so it is visible, names its code point and can be pasted back;
the pretty-printed JSON views already show C0 controls as JSON's `\\u001b`. A lone surrogate (a
string decoded with `surrogateescape`) is shown the same way. A backslash is left as it is: the
escapes mark where the text held a character no terminal may receive, not a reversible encoding."""

from __future__ import annotations

import re

# C0 but tab and newline (handled by the caller's choice), DEL, C1; the bidi controls (embeddings,
# overrides, isolates, marks, the Arabic letter mark); invisible characters that hide or split
# text: soft hyphen, Mongolian vowel separator, zero width space, word joiner and the invisible
# operators, the deprecated format controls, line and paragraph separators, the BOM, interlinear
# annotation, tags; and lone surrogates. ZWNJ/ZWJ and variation selectors stay: scripts and emoji
# need them and they reorder or hide nothing.
_HIDDEN = ("\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064"
           "\u2066-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f\ud800-\udfff")
_UNSAFE = re.compile(f"[{_HIDDEN}\t\n]")
_UNSAFE_IN_LINES = re.compile(f"[{_HIDDEN}]")

TAB_WIDTH = 4


def _escape(match: re.Match[str]) -> str:
    return ascii(match.group())[1:-1]


def shown(text: str, *, lines: bool = False) -> str:
    """`text` with every character a terminal would act on or hide shown as its escape.

    One line by default (a newline or tab shows as `\\n`, `\\t`); `lines=True` keeps newlines for a
    widget that splits the lines itself, and makes tabs spaces."""
    if lines:
        if "\t" in text:
            text = text.expandtabs(TAB_WIDTH)
        pattern = _UNSAFE_IN_LINES
    else:
        pattern = _UNSAFE
    # The search first: most text has nothing to escape, and one scan of 2 MB costs ~15 ms.
    if pattern.search(text) is None:
        return text
    return pattern.sub(_escape, text)


def shown_lines(text: str) -> list[str]:
    """`text` cut at its newlines, each line `shown`: what a line viewer draws. One scan of the whole
    text decides (a 2 MB payload with nothing to escape is split and no more); only a text that holds
    something to show pays a pass per line."""
    lines = text.split("\n")
    if "\t" not in text and _UNSAFE_IN_LINES.search(text) is None:
        return lines
    return [shown(line.expandtabs(TAB_WIDTH) if "\t" in line else line) for line in lines]


def json_text(encoded: str) -> str:
    """JSON text (as orjson writes it: C0 escaped, the rest raw UTF-8) with DEL, C1, bidi and the
    invisible characters escaped as `\\uXXXX` too: the same document, and nothing a terminal acts on
    when it is printed. They can only occur inside strings, where the escape means the same character."""
    if _UNSAFE_IN_LINES.search(encoded) is None:
        return encoded
    return _UNSAFE_IN_LINES.sub(_json_escape, encoded)


def _json_escape(match: re.Match[str]) -> str:
    point = ord(match.group())
    if point > 0xFFFF:
        point -= 0x10000
        return f"\\u{0xD800 + (point >> 10):04x}\\u{0xDC00 + (point & 0x3FF):04x}"
    return f"\\u{point:04x}"
