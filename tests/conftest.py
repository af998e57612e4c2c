"""Suite-wide settings.

Property tests draw a budget of examples (tests/budget.py; TOOLWIRE_THOROUGH=1 for the full counts).
On CI, they are derandomised: a run on a clean clone explores the same examples every
time, so a red CI is a real regression, not a new random draw. Locally they stay random (and keep
their example database) to find new failures."""

import os

from hypothesis import settings

from tests.budget import THOROUGH, examples

# Tests that set no count of their own draw a quarter of Hypothesis's 100 (all of them when thorough:
# tests/budget.py).
settings.register_profile("budget", max_examples=examples(100))
settings.register_profile("ci", parent=settings.get_profile("budget"), derandomize=True, database=None)
settings.load_profile("ci" if os.environ.get("CI") else "budget" if not THOROUGH else "default")


# The few tests that take tens of seconds go first, so that the workers (worksteal) share out the
# rest behind them instead of one worker ending the run alone on a long test.
_LONG_FIRST = (
    "tests/tui/test_hostile_text.py",
    "tests/test_crafted_recordings.py",
    "tests/proxy/test_secrets.py",
)


def pytest_collection_modifyitems(items):
    def rank(item) -> int:
        return next((n for n, path in enumerate(_LONG_FIRST) if item.nodeid.startswith(path)), len(_LONG_FIRST))

    items.sort(key=rank)
