"""How many examples a property test draws. The default run keeps the whole suite within its minutes
on two cores (CI runs it on every landing, derandomised); `TOOLWIRE_THOROUGH=1` draws each test's
full count, for a change to the checker, the translator or the forwarder's parsing
(docs/development.md)."""

from __future__ import annotations

import os

THOROUGH = os.environ.get("TOOLWIRE_THOROUGH") == "1"


def examples(full: int) -> int:
    return full if THOROUGH else max(10, full // 4)
