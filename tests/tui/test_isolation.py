"""Things that must be checked in a fresh interpreter: what the core imports, and a JSON TextArea
that a bad tree-sitter build would crash with a segfault (which no in-process test can catch)."""

import pkgutil
import subprocess
import sys
import textwrap

import pytest

import inspector.formats

CORE = ["inspector.wire", "inspector.proxy", "inspector.store", "inspector.replay",
        "inspector.mock", "inspector.analysis", "inspector.console", "inspector.child", "inspector.report", "inspector.textsafe",
        # the recording formats, each module of the package
        *(f"inspector.formats.{m.name}" for m in pkgutil.iter_modules(inspector.formats.__path__)),
        # the OpenTelemetry export
        "inspector.otlp.spans", "inspector.otlp.live",
        # the HTML page, built from the TUI's plain-data view models (tui.view, tui.compare), not its widgets
        "inspector.html"]


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("module", CORE)
def test_the_core_imports_neither_textual_nor_rich(module: str) -> None:
    result = run_python(f"""
        import importlib, sys
        importlib.import_module({module!r})
        print(sorted({{m.split('.')[0] for m in sys.modules}} & {{'textual', 'rich'}}))
    """)
    assert (result.returncode, result.stdout, result.stderr) == (0, "[]\n", "")


def test_a_json_textarea_renders_in_a_fresh_process() -> None:
    """docs/style.md, idiom 8: tree-sitter 0.26.1 segfaults TextArea(language="json") on Python 3.11."""
    result = run_python("""
        import asyncio
        from textual.app import App
        from textual.widgets import TextArea

        class Probe(App):
            def compose(self):
                yield TextArea('{"tools": [{"type": "OBJECT"}]}', language="json", read_only=True)

        async def main():
            app = Probe()
            async with app.run_test(size=(60, 8)) as pilot:
                await pilot.pause()
                area = app.query_one(TextArea)
                print(area.language, area.is_syntax_aware, "OBJECT" in app.export_screenshot())

        asyncio.run(main())
    """)
    assert (result.returncode, result.stdout, result.stderr) == (0, "json True True\n", "")
