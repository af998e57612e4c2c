"""Value ranges of numeric request fields (sampling, output length): each dialect's home lists its
own (`dialects/<name>/limits.py`); the checker flags a value outside them and the bridges move it
to the nearest bound, with a report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Range:
    """The values a provider accepts for a numeric request field (bounds inclusive)."""

    low: float | None = None
    high: float | None = None

    def fit(self, value: Any) -> Any:
        """`value` moved to the nearest bound; anything but a number is returned as it is."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return value
        if self.low is not None and value < self.low:
            return type(value)(self.low)
        if self.high is not None and value > self.high:
            return type(value)(self.high)
        return value

    def describe(self) -> str:
        if self.high is None:
            return f"at least {self.low:g}"
        return f"{self.low:g} to {self.high:g}" if self.low is not None else f"at most {self.high:g}"
