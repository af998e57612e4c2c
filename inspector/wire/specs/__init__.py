"""Providers' own machine-readable request definitions, vendored (see refresh.py and the README)."""
