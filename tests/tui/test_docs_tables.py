"""docs/keys.md and docs/filters.md are what tests/tui/make_docs.py generates from the app's binding
table and the filter grammar: a key or a filter changed without its page fails here."""

from __future__ import annotations

from pathlib import Path

from .make_docs import filters_markdown, keys_markdown

DOCS = Path(__file__).resolve().parents[2] / "docs"
AGAIN = "stale: run `.venv/bin/python -m tests.tui.make_docs` and commit docs/"


def test_the_keys_page_is_the_binding_table():
    assert (DOCS / "keys.md").read_text(encoding="utf-8") == keys_markdown(), AGAIN


def test_the_filters_page_is_the_filter_grammar():
    assert (DOCS / "filters.md").read_text(encoding="utf-8") == filters_markdown(), AGAIN


def test_every_screenshot_keeps_its_leading_spaces_in_any_svg_renderer():
    shots = sorted((DOCS.parent / "screenshots").glob("*.svg"))
    assert shots and [shot.name for shot in shots if 'xml:space="preserve"' not in shot.read_text()[:300]] == []
