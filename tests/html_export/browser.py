"""A real headless Chromium for the HTML export's tests and bench: the system's browser (Debian's
`chromium` package, or $TOOLWIRE_CHROMIUM), driven by Playwright for Python, whose own browser
downloads are never used. Both are optional: `pip install -e '.[browser]'`."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium_path() -> str | None:
    wanted = os.environ.get("TOOLWIRE_CHROMIUM")
    if wanted:
        return wanted if os.access(wanted, os.X_OK) else None
    return next((found for found in map(shutil.which, NAMES) if found), None)


@dataclass
class Watched:
    """A page and everything it did that a test asserts on: every request any page of the context
    made, console messages, uncaught errors, dialogs (an injected alert would open one)."""

    page: Any
    requests: list[str] = field(default_factory=list)
    console: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


@contextmanager
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    assert path is not None, "no Chromium: apt-get install chromium, or set TOOLWIRE_CHROMIUM"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path)
        try:
            yield launched
        finally:
            launched.close()


@contextmanager
def offline_page(launched: Any) -> Iterator[Watched]:
    """A fresh page in a context with the network off (file:// still opens)."""
    context = launched.new_context(offline=True, viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        watched = Watched(page)
        context.on("request", lambda request: watched.requests.append(request.url))
        page.on("console", lambda message: watched.console.append((message.type, message.text)))
        page.on("pageerror", lambda error: watched.errors.append(str(error)))

        def dismiss(dialog: Any) -> None:
            watched.dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", dismiss)
        yield watched
    finally:
        context.close()
