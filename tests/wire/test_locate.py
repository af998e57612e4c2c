"""Pretty-printing with a pointer -> line map: the line every violation is highlighted on."""

import orjson

from inspector.wire.locate import pretty


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
