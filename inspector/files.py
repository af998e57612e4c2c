"""Every file the product writes goes through here: never through a symbolic link, never over a file
the user did not name, private from its first byte (files 0600, directories 0700), and whole.

Two kinds of file. One the **user named** (`export -o PATH`, `check --fix OUT`, the CA's own files in
its private folder) is replaced whole: the bytes go to a new temporary file beside it (created
O_EXCL, 0600) that then takes the name (rename), so nobody ever reads half a file, and a link at
that name is refused, not followed (the folders on the way are the user's to name, links included).

A **side file** the product names itself (`flow-3.curl.sh`: a recording chooses the 3, so a
repository can ship a link of that name) is only ever a new file: written under a temporary name,
then hard-linked to its own name, which fails on any entry already there, a dangling link included,
and never follows one. With `rename` the next free name (`flow-3-2.curl.sh`) is taken instead."""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import platformdirs

# How many names `write_new(rename=True)` tries before it gives up: a folder is not expected to
# hold thousands of copies of one flow, and a loop over names must end.
_NAMES_TRIED = 1000


class NotWritten(OSError):
    """A path the product will not write through; the message says why and what to do."""


def exports_dir() -> Path:
    """Where the UI's copies and exports go: `exports` in the user data directory, beside the
    store and the proxy CA. The product owns it: made 0700 (and kept so), refused if it is a link.
    Not the current directory (a checkout would get untracked files, and a recording could plant
    links there), nor the documents folder (often synced to a cloud, and the exports hold prompts)."""
    path = Path(platformdirs.user_data_dir("toolwire-inspect")) / "exports"
    make_dirs(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and path.is_symlink():
            raise NotWritten(f"{path} is a symbolic link: not written through it (remove the link)") from None
        raise
    try:
        os.fchmod(fd, 0o700)
    finally:
        os.close(fd)
    return path


def make_dirs(path: str | Path) -> None:
    """`mkdir -p`, each folder it makes 0700 (Path.mkdir gives the parents the umask's mode);
    folders already there are left as they are: the user's own."""
    path = Path(path)
    missing = []
    while not path.exists() and not path.is_symlink() and path != path.parent:
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass  # made by another process meanwhile: the next open says whether it is usable


def write_file(path: str | Path, data: bytes) -> Path:
    """`data` as the whole of `path`, a name the user gave: a new private file takes the name
    (a file there before is replaced, never written into: its other hard links keep their bytes)."""
    path = Path(path)
    if path.is_symlink():
        raise NotWritten(f"{path} is a symbolic link: not written through it "
                         "(name the file it points to, or remove the link)")
    with _named(path):
        temp = _written(path.parent, path.name, data)
        try:
            os.replace(temp, path)  # a link put there since the check is itself replaced, not followed
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
    return path


def write_new(directory: str | Path, name: str, data: bytes, *, rename: bool = False) -> Path:
    """`data` as a new private file `name` in `directory`, never over anything already there:
    FileExistsError, or with `rename` the first free name of `name-2`, `name-3`… (the number
    before the extensions: `flow-3-2.request-body.txt`)."""
    directory = Path(directory)
    with _named(directory / name):
        temp = _written(directory, name, data)
        try:
            for candidate in _names(name) if rename else (name,):
                try:
                    os.link(temp, directory / candidate)
                except FileExistsError:
                    continue
                return directory / candidate
        finally:
            temp.unlink()
    raise taken_error(directory / name)


def taken_error(path: Path) -> FileExistsError:
    """What `write_new` raises for a name already taken (said the same before writing, too)."""
    return FileExistsError(errno.EEXIST, "it exists, not replaced", str(path))


@contextmanager
def _named(path: Path) -> Iterator[None]:
    """An error says the file asked for, not the temporary one beside it."""
    try:
        yield
    except (FileExistsError, NotWritten):
        raise
    except OSError as exc:
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None


def _names(name: str) -> Iterator[str]:
    stem, dot, extensions = name.partition(".")
    yield name
    for number in range(2, _NAMES_TRIED + 1):
        yield f"{stem}-{number}{dot}{extensions}"


def _written(directory: Path, name: str, data: bytes) -> Path:
    """A new temporary file in `directory` (O_EXCL, 0600: mkstemp) holding `data`, on disk."""
    fd, temp = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
    except BaseException:
        os.unlink(temp)
        raise
    return Path(temp)
