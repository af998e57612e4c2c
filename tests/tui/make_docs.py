"""docs/keys.md and docs/filters.md, generated: the keys from the binding table every screen's `?` help
reads (each screen opened for real, as a user reaches it), the filters from the filter grammar's own
table, so the reference cannot drift from the app. tests/tui/test_docs_tables.py fails when the files
are not what this writes.

    .venv/bin/python -m tests.tui.make_docs [DOCS_DIR]     (default: docs/)"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from inspector.filters import FILTERS, HELP
from inspector.store import Store
from inspector.tui.screens.help import EVERYWHERE, binding_table, help_sections, key_names

from .conftest import make_app, settle
from .flows import populate

# Where each screen is reached from, in the order a user meets them: (what to call it, keys from the list).
SCREENS = [
    ("The flow list", ()),
    ("A flow", ("enter",)),
    ("A finding, whole (i)", ("enter", "i")),
    ("The conversation (t)", ("enter", "t")),
    ("A diff (d, D, F, v)", ("enter", "F")),
    ("The request editor (e)", ("enter", "e")),
    ("The delete prompt (d)", ("d",)),
]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _table(rows: list[tuple[str, str]], ids: dict[tuple[str, str], str]) -> list[str]:
    """The keys, with each binding's id for the `[keys]` table of the config file (— for Textual's own)."""
    lines = ["| key | what it does | id |", "|---|---|---|"]
    lines += [f"| `{_cell(key)}` | {_cell(what)} | {f'`{ids[key, what]}`' if (key, what) in ids else '—'} |"
              for key, what in rows]
    return lines


async def _sections() -> list[tuple[str, list[tuple[str, list[tuple[str, str]]]], dict[tuple[str, str], str]]]:
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "flows.sqlite3")
        ids = populate(store)
        found = []
        for title, keys in SCREENS:
            app = make_app(store)
            async with app.run_test(size=(160, 48)) as pilot:
                await settle(app, pilot)
                app.query_one("FlowList").select_id(ids["defective"])  # a flow with findings and repairs
                for key in keys:
                    await pilot.press(key)
                    await settle(app, pilot)
                sections = [(name, rows) for name, rows in help_sections(app.screen) if "Filter expressions" not in name]
                binding_ids = {(key_names(b), b.tooltip or b.description): b.id
                               for _, _, bindings in binding_table(app.screen) for b in bindings if b.id}
                found.append((title, sections, binding_ids))
        store.close()
    return found


OWN_KEYS = [
    "## Your own keys", "",
    "A `[keys]` table in the config file gives a binding (by its id, the last column below) keys of your",
    "own; they replace its keys wherever it works, and the help, the footer and the palette show them:", "",
    "```toml", "# toolwire-inspect.toml, in the user config dir (~/.config/toolwire-inspect/ on Linux)", "[keys]",
    '"flow.next-flow" = "ctrl+n"        # one key, or several: "ctrl+n,J"', '"flows.sort" = "s"', "```", "",
    "A key is a character or a key name (`f1`, `escape`, `pagedown`, `left_square_bracket`) after any of",
    "`ctrl+`, `shift+`, `alt+`, `meta+`, `super+`, `hyper+`. The keys come from the config file that",
    "applies, by the rule the routes follow: `--config PATH`, else the working directory's",
    "`toolwire-inspect.toml` once trusted (`toolwire-inspect config trust`), else the user config dir's.",
    "An entry with an unknown id or a key that is not one is said in one line when the app starts, and",
    "left out; the others apply.", ""]


def keys_markdown() -> str:
    lines = ["# Keys", "",
             "Generated from the binding table every screen's `?` help reads (`python -m tests.tui.make_docs`);",
             "a test fails when this page and the app part.", ""]
    everywhere: list[tuple[str, str]] = []
    every_id: dict[tuple[str, str], str] = {}
    for title, sections, ids in asyncio.run(_sections()):
        lines += [f"## {title}", ""]
        for name, rows in sections:
            if name == EVERYWHERE:
                everywhere, every_id = everywhere or rows, every_id or ids
                continue
            lines += [f"**{name}**", "", *_table(rows, ids), ""]
    return "\n".join(lines[:5] + ["## Everywhere", "", *_table(everywhere, every_id), ""] + OWN_KEYS + lines[5:])


def filters_markdown() -> str:
    lines = ["# Filter expressions", "",
             "`/` in the list, `flows --filter`, `export --select`. Generated from the filter grammar's table",
             "(`inspector/filters.py`, `python -m tests.tui.make_docs`). A letter that mitmproxy's filters have",
             "means what it means there; what only an LLM inspector asks has a spelling of its own.", "",
             "| filter | matches | as in mitmproxy |", "|---|---|---|"]
    lines += [f"| `{f.flag}{' ' + f.value if f.value else ''}` | {_cell(f.help)} | {'yes' if f.mitmproxy else '—'} |"
              for f in FILTERS]
    grammar = HELP[len(FILTERS):]
    lines += ["", "| also | meaning |", "|---|---|"]
    lines += [f"| `{_cell(key)}` | {_cell(what)} |" for key, what in grammar]
    lines += ["", "Values and free text match case-insensitively. A value with a space is quoted: "
              "`~h \"anthropic-version: 2023\"`. Unlike mitmproxy, free text is not a URL regex: it searches "
              "what the list shows and the payloads (`~u` is the URL).", ""]
    return "\n".join(lines)


def main(folder: Path) -> None:
    (folder / "keys.md").write_text(keys_markdown(), encoding="utf-8")
    (folder / "filters.md").write_text(filters_markdown(), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs"))
