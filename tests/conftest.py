"""Suite-wide settings.

Property tests draw a budget of examples (tests/budget.py; TOOLWIRE_THOROUGH=1 for the full counts).
On CI, they are derandomised: a run on a clean clone explores the same examples every
time, so a red CI is a real regression, not a new random draw. Locally they stay random (and keep
their example database) to find new failures."""

import os
import sys
from pathlib import Path

from hypothesis import settings

from tests.budget import THOROUGH, examples

# Tests that set no count of their own draw a quarter of Hypothesis's 100 (all of them when thorough:
# tests/budget.py).
settings.register_profile("budget", max_examples=examples(100))
settings.register_profile("ci", parent=settings.get_profile("budget"), derandomize=True, database=None)
settings.load_profile("ci" if os.environ.get("CI") else "budget" if not THOROUGH else "default")


# The suite starts a few hundred interpreters (the CLI, record, the TUI's child, SDK clients) and two
# xdist workers. Under PYTHONDONTWRITEBYTECODE (set on some CI images and shells) each of them compiles
# every module from source again, and pytest rewrites every test module's asserts again: a third of
# the suite's CPU. The suite writes its bytecode (into the git-ignored __pycache__ folders) whatever
# the shell says; the workers and subprocesses started from here inherit this environment.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto`: half as many workers again as cores. A test spends about two fifths of its time
    waiting (on the processes it starts, on sockets, on a timeout it proves), so one worker per core
    left the cores idle that long; a worker more per two cores fills it."""
    cores = len(os.sched_getaffinity(0))
    return cores + max(1, cores // 2)


# The few tests that take tens of seconds go first, so that the workers (worksteal) share out the
# rest behind them instead of one worker ending the run alone on a long test.
_LONG_FIRST = (
    "tests/tui/test_hostile_text.py",
    "tests/formats/test_crafted_recordings.py",
    "tests/proxy/test_secrets.py",
)


def pytest_collection_modifyitems(items):
    missing = [path for path in _LONG_FIRST if not (Path(__file__).parent.parent / path).is_file()]
    assert not missing, f"_LONG_FIRST names files that moved: {missing}"
    def rank(item) -> int:
        return next((n for n, path in enumerate(_LONG_FIRST) if item.nodeid.startswith(path)), len(_LONG_FIRST))

    items.sort(key=rank)
