"""The one sanitiser for text from the wire shown to a person: exact outputs for every class of
character a terminal acts on or hides, and its cost on a 2 MB line."""

from __future__ import annotations

import time

import pytest

import orjson

from inspector.textsafe import json_text, shown, shown_lines

CASES = {
    "plain": ("gpt-4o-mini", "gpt-4o-mini"),
    "non-ascii text stays": ("Température 4°C, 東京, emoji 👩‍💻", "Température 4°C, 東京, emoji 👩‍💻"),
    "osc 52 clipboard write": ("\x1b]52;c;ZWNobyBwd25lZA==\x07", "\\x1b]52;c;ZWNobyBwd25lZA==\\x07"),
    "csi clear screen": ("a\x1b[2Jb", "a\\x1b[2Jb"),
    "dcs with st": ("\x1bP+q\x1b\\", "\\x1bP+q\\x1b\\"),
    "nul, bell, backspace": ("\x00\x07\x08", "\\x00\\x07\\x08"),
    "newline and return": ("a\r\nb", "a\\r\\nb"),
    "tab": ("a\tb", "a\\tb"),
    "del": ("\x7f", "\\x7f"),
    "c1 csi and osc": ("\x9b2J\x9d52;c;x\x9c", "\\x9b2J\\x9d52;c;x\\x9c"),
    "c1 bounds": ("\x80\x9f\xa0", "\\x80\\x9f\xa0"),
    "bidi override (trojan source)": ("admin\u202e\u2066 // \u2069\u2066", "admin\\u202e\\u2066 // \\u2069\\u2066"),
    "bidi embeddings and marks": ("\u202a\u202b\u202c\u202d\u200e\u200f\u061c",
                                  "\\u202a\\u202b\\u202c\\u202d\\u200e\\u200f\\u061c"),
    "isolates": ("\u2066\u2067\u2068\u2069", "\\u2066\\u2067\\u2068\\u2069"),
    "lone surrogates": ("a\ud800b\udfff", "a\\ud800b\\udfff"),
    "zero width and invisible": ("\u200b\u2060\ufeff\u00ad\u2028\u2029", "\\u200b\\u2060\\ufeff\\xad\\u2028\\u2029"),
    "tag characters (hidden ascii)": ("ok\U000e0041\U000e007f", "ok\\U000e0041\\U000e007f"),
    "interlinear annotation": ("\ufff9\ufffb", "\\ufff9\\ufffb"),
    "joiners of scripts and emoji stay": ("\u200c\u200d\ufe0f", "\u200c\u200d\ufe0f"),
    "a backslash is shown as itself": ("C:\\x1b", "C:\\x1b"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_shown(case):
    given, expected = CASES[case]
    assert shown(given) == expected


def test_multi_line_text_keeps_its_newlines_and_shows_tabs_as_spaces():
    assert shown("def f():\n\treturn 1\r\n\x1b[31m", lines=True) == "def f():\n    return 1\\r\n\\x1b[31m"


def test_json_text_escapes_what_orjson_leaves_raw_and_means_the_same_document():
    document = {"m\u202e": ["\x1b]52;c;x\x07", "\x9b2J\x7f", "\U000e0041 ok é"]}
    encoded = json_text(orjson.dumps(document).decode())
    assert encoded == ('{"m\\u202e":["\\u001b]52;c;x\\u0007","\\u009b2J\\u007f","\\udb40\\udc41 ok é"]}')
    assert orjson.loads(encoded) == document


def test_a_2_mb_line_costs_milliseconds():
    clean = "x" * 2_000_000
    hostile = ("ab\x1b]52;c;x\x07" * 200_000)[:2_000_000]
    started = time.perf_counter()
    assert shown(clean) is clean
    clean_seconds = time.perf_counter() - started
    started = time.perf_counter()
    out = shown(hostile)
    hostile_seconds = time.perf_counter() - started
    assert "\x1b" not in out and "\x07" not in out
    # Measured once on an idle 2-core machine: ~15 ms clean, ~0.25 s with 400k escapes. The bounds
    # are 40 times that, for a loaded machine: they catch a quadratic pass, not a slow core.
    assert (clean_seconds < 0.6, hostile_seconds < 10.0) == (True, True)


def test_shown_lines_splits_and_shows_each_line():
    assert shown_lines('{\n\t"a": "\x1b[2J"\r\n}') == ['{', '    "a": "\\x1b[2J"\\r', '}']


def test_shown_lines_of_clean_text_is_the_split():
    assert shown_lines("a\nb") == ["a", "b"]
