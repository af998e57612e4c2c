"""Which config file applies, and its bytes: the one rule every reader of `toolwire-inspect.toml`
follows (the routes, proxy/routes.py; the user's keys, tui/keymap.py). Light on purpose: the UI
process reads its keys here without importing the forwarder.

With no `--config`: the working directory's file once trusted (inspector/trust.py), else the one in
the user config dir. A file in the working directory that is not trusted is ignored, with a notice
naming it and the command that trusts it. The file in the user config dir is the user's own; it
may be a symlink (dotfile managers make them), but what it points to must be a regular file of the
user's that nobody else may write, else it is refused."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import platformdirs

from . import trust

CONFIG_NAME = "toolwire-inspect.toml"
MAX_CONFIG_BYTES = 1 << 20


class ConfigError(ValueError):
    """The config file cannot be read, or may not act; one line."""


def read_config(path: Path) -> bytes:
    """The bytes of a config file (what is trusted, parsed and hashed is this one read), or a
    ConfigError."""
    try:
        with open(path, "rb") as source:
            data = source.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"config {path} is larger than {MAX_CONFIG_BYTES >> 20} MiB")
    return data


def user_config() -> Path:
    return Path(platformdirs.user_config_dir("toolwire-inspect")) / CONFIG_NAME


def trust_command(path: Path) -> str:
    return f"toolwire-inspect config trust {shlex.quote(trust.key(path))}"


def find_config(cwd: Path | None = None) -> tuple[Path | None, bytes, tuple[str, ...]]:
    """(path, bytes) of the config that applies, with no --config: the working directory's once
    trusted, else the user config dir's (None, b"" for none); and a notice for a file ignored."""
    here, own = (cwd or Path.cwd()) / CONFIG_NAME, user_config()
    ignored: tuple[str, ...] = ()
    if here.is_file() and not (own.is_file() and os.path.samefile(here, own)):
        try:
            data: bytes | None = read_config(here)
        except ConfigError:  # unreadable or too big: it could not be trusted either, and fails nothing
            data = None
        state = trust.UNKNOWN if data is None else trust.state(here, data)
        if state == trust.TRUSTED and data is not None:
            return here, data, ()
        why = "it changed since it was trusted" if state == trust.CHANGED else \
            "a config file in the working directory takes effect only once trusted (it decides where your API keys go)"
        ignored = (f"ignored config {trust.key(here)}: {why}; to use it: {trust_command(here)} "
                   f"(or pass --config {shlex.quote(trust.key(here))})",)
    try:
        info = os.stat(own)  # a symlink is followed: what it points to must be the user's own
    except OSError:
        return None, b"", ignored
    if not trust.owned_privately(info):
        raise ConfigError(f"config {own} is refused: it is not a regular file of yours that only you may write "
                         "(fix its owner or mode, or pass --config PATH)")
    return own, read_config(own), ignored


