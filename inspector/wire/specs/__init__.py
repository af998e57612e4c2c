"""Providers' own machine-readable request definitions, vendored (see refresh.py and docs/checker.md)."""
