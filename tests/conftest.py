"""Suite-wide settings.

On CI, property tests are derandomised: a run on a clean clone explores the same examples every
time, so a red CI is a real regression, not a new random draw. Locally they stay random (and keep
their example database) to find new failures."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
