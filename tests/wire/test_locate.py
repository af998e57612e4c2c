"""Pretty-printing with a pointer -> line map: the line every violation is highlighted on."""

import json

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import examples
from inspector.wire.locate import pretty, source
from inspector.wire.pointer import join


def test_lines_of_every_value_and_escaped_keys():
    located = pretty({"a": [1, {"b/c": None}], "x": {}, "t~": "s"})
    assert located.text.splitlines() == [
        "{", '  "a": [', "    1,", "    {", '      "b/c": null', "    }", "  ],", '  "x": {},', '  "t~": "s"', "}"]
    assert located.lines == {"": 0, "/a": 1, "/a/0": 2, "/a/1": 3, "/a/1/b~1c": 4, "/x": 7, "/t~0": 8}


def test_text_is_the_document_exactly():
    document = {"model": "m", "messages": [{"role": "user", "content": "é\\n"}], "n": 1.5, "ok": True}
    assert orjson.loads(pretty(document).text) == document


def test_missing_pointer_lands_on_its_deepest_existing_ancestor():
    located = pretty({"messages": [{"role": "tool"}]})
    assert located.line_of("/messages/0/content") == 2
    assert located.line_of("/nowhere/at/all") == 0


def test_the_deepest_document_orjson_accepts_does_not_exhaust_the_stack():
    deep = orjson.loads(b"[" * 1024 + b"]" * 1024)
    located = pretty(deep)
    assert located.line_of("/0" * 1023) == 1023
    assert len(located.text.splitlines()) == 2047


# `source`: where each pointer is in the file as written (check's CI annotations and SARIF).

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=20)


def _pointers(value, pointer="", key=None):
    """(pointer, its member key or None, value) for every value of a document."""
    yield pointer, key, value
    if isinstance(value, dict):
        for name, child in value.items():
            yield from _pointers(child, join(pointer, name), name)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _pointers(child, join(pointer, index))


@settings(max_examples=examples(60), deadline=None)
@given(JSON_VALUES, st.sampled_from([None, 1, 2, "\t"]), st.sampled_from([", ", ","]))
def test_every_pointer_lands_on_its_key_or_value_however_the_file_is_laid_out(document, indent, separator):
    text = json.dumps(document, indent=indent, separators=(separator, ": "), ensure_ascii=False)
    located = source(text.encode())
    lines = text.split("\n")
    for pointer, key, value in _pointers(document):
        line, column = located.position_of(pointer)
        at = lines[line - 1][column - 1:]
        expected = json.dumps(key, ensure_ascii=False) if key is not None else json.dumps(value, ensure_ascii=False)[:1]
        assert at.startswith(expected), (pointer, line, column)


def test_sse_events_count_as_streams_parse_them_and_missing_pointers_fall_back():
    body = (b": comment\n\nevent: a\ndata: {\"x\": [1, {\"y\": 2}]}\n\n"
            b"data: {\"first\":\ndata: 1}\n\ndata: [DONE]\n\n")
    located = source(body, sse=True)
    assert [located.position_of(p) for p in ("/0", "/0/x/1/y", "/1", "/1/first", "/2", "/0/nowhere", "/9")] == [
        (4, 7), (4, 18), (6, 7), (6, 7), (9, 7), (4, 7), (1, 1)]


def test_crlf_lines_and_text_that_is_not_json_give_positions_not_errors():
    assert source(b'{\r\n  "a": 1\r\n}').position_of("/a") == (2, 3)
    assert source(b'{"a": [1, 2').position_of("/a/1") == (1, 11)
    assert source(b"\xff{garbage").position_of("/x") == (1, 1)
    deep = b"[" * 1024 + b"]" * 1024
    assert source(deep).position_of("/0" * 1023) == (1, 1024)


@settings(max_examples=examples(40), deadline=None)
@given(JSON_VALUES, st.sampled_from([None, 1]), st.booleans())
def test_a_document_held_as_the_text_of_a_json_string_is_followed_through_its_escapes(document, indent, ascii):
    """A HAR's postData.text: each pointer's position in the file is where its key or value begins
    once the string's escapes (\\", \\n, \\u00e9, surrogate pairs) are read."""
    body = json.dumps(document, indent=indent, ensure_ascii=False)
    text = json.dumps({"entries": [{"postData": {"text": body}}]}, indent=1, ensure_ascii=ascii)
    located = source(text.encode())
    lines = text.split("\n")
    for pointer, key, value in _pointers(document):
        line, column = located.embedded("/entries/0/postData/text", pointer)
        rest = json.decoder.scanstring(lines[line - 1], column - 1)[0]
        expected = json.dumps(key, ensure_ascii=False) if key is not None else json.dumps(value, ensure_ascii=False)[:1]
        assert rest.startswith(expected), (pointer, line, column)


def test_an_embedded_document_in_place_base64_or_missing_falls_back_to_the_nearest_place():
    text = '{\n "body": {"json": {"a": [1, 2]}},\n "b64": {"base64": "eyJhIjogMX0="},\n "bad": "\\q"\n}'
    located = source(text.encode())
    assert [located.embedded("/body/json", "/a/1"), located.embedded("/body/json", "/a/9"),
            located.embedded("/b64/base64", "/a"), located.embedded("/bad", "/a"),
            located.embedded("/nowhere/text", "/a")] == [(2, 29), (2, 20), (3, 21), (4, 9), (1, 1)]
