"""Which config files the user has trusted, by path and content: the rule direnv and git apply to a
directory they did not make. A config file found in the working directory (a cloned repository
can ship one) decides where the user's API keys go, so it takes effect only when named with
`--config`, or once `toolwire-inspect config trust PATH` has recorded its path and the SHA-256 of
its bytes; any change to the file makes it untrusted again.

The decisions live in one JSON file in the user data dir, written whole (a private temporary file
renamed over it) and readable by its owner alone. A store that is not the user's own regular file
with no permission for anyone else (a symlink, another owner, group- or world-writable) is taken
as empty: trust cannot be planted by someone else."""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path

import orjson
import platformdirs

TRUST_FILE = "trusted-configs.json"
# What the store says of a file: trusted with these bytes, trusted once with other bytes, never.
TRUSTED, CHANGED, UNKNOWN = "trusted", "changed", "unknown"


def store_path() -> Path:
    return Path(platformdirs.user_data_dir("toolwire-inspect")) / TRUST_FILE


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def key(path: Path) -> str:
    """The path a decision is recorded under: absolute, symlinks left as they are (the hash of what
    they point to is checked anyway, and a link elsewhere is another file)."""
    return os.path.abspath(path)


def state(path: Path, data: bytes) -> str:
    """TRUSTED when the user trusted the file at `path` with exactly these bytes, CHANGED when with
    other bytes, else UNKNOWN."""
    recorded = _decisions().get(key(path))
    return UNKNOWN if recorded is None else TRUSTED if recorded == digest(data) else CHANGED


def trust(path: Path, data: bytes) -> str:
    """Record that the file at `path`, with these bytes, may act; the digest recorded."""
    decisions = _decisions()
    decisions[key(path)] = digest(data)
    _write(decisions)
    return decisions[key(path)]


def untrust(path: Path) -> bool:
    """Forget the decision for `path`; whether there was one."""
    decisions = _decisions()
    if decisions.pop(key(path), None) is None:
        return False
    _write(decisions)
    return True


def owned_privately(info: os.stat_result) -> bool:
    """A regular file of this user (or root) that nobody else may write."""
    return stat.S_ISREG(info.st_mode) and info.st_uid in (os.getuid(), 0) and not info.st_mode & 0o022


def _decisions() -> dict[str, str]:
    try:
        fd = os.open(store_path(), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return {}  # none yet, or a symlink: no decision is taken from it
    with open(fd, "rb") as source:
        info = os.fstat(fd)
        if not owned_privately(info) or info.st_mode & 0o077:
            return {}
        try:
            document = orjson.loads(source.read())
        except orjson.JSONDecodeError:
            return {}
    trusted = document.get("trusted") if isinstance(document, dict) else None
    if not isinstance(trusted, dict):
        return {}
    return {path: value for path, value in trusted.items() if isinstance(value, str)}


def _write(decisions: dict[str, str]) -> None:
    folder = store_path().parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{TRUST_FILE}.")  # 0600, created afresh
    try:
        with open(fd, "wb") as out:
            out.write(orjson.dumps({"version": 1, "trusted": decisions}, option=orjson.OPT_INDENT_2 |
                                   orjson.OPT_SORT_KEYS))
        os.replace(temporary, store_path())
    except BaseException:
        os.unlink(temporary)
        raise
