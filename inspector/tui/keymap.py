"""The user's own keys: a `[keys]` table in the config file, binding ids to keys (posting's idea;
every binding has an id, listed in docs/keys.md), applied with Textual's keymap.

    # toolwire-inspect.toml
    [keys]
    "flow.next-flow" = "ctrl+n"          # a key, or several: "ctrl+n,J"
    "flows.replay" = "p"

It comes from the config file that applies, by the rule the routes follow (proxy/routes.py): the
one named with `--config`, else the working directory's once trusted, else the user config dir's;
a file in the working directory that is not trusted sets no key either. A bad entry is said in one
line and left out; the rest apply."""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path

from textual.binding import ActiveBinding, Binding
from textual.keys import Keys, key_to_character
from textual.screen import Screen

from ..config_file import ConfigError, find_config, read_config

MODIFIERS = {"ctrl", "shift", "alt", "meta", "super", "hyper"}
_NAMED = {key.value for key in Keys if "+" not in key.value}
_SECTION = "keys"


def key_problem(keys: str) -> str | None:
    """None when `keys` is one key or a comma-separated list of keys Textual can bind, else why not."""
    for key in (part.strip() for part in keys.split(",")):
        if not key:
            return "an empty key"
        if len(key) == 1:
            if not key.isprintable() or key.isspace():
                return f"{key!r} is not a key to type"
            continue
        *modifiers, base = key.split("+")
        unknown = [m for m in modifiers if m not in MODIFIERS]
        if unknown:
            return f"{unknown[0]!r} in {key!r} is not a modifier ({', '.join(sorted(MODIFIERS))})"
        if not (len(base) == 1 or base in _NAMED or key_to_character(base) is not None):
            return f"{base!r} is not a key name (a character, or f1, escape, pagedown, left_square_bracket …)"
    return None


def read_keymap(path: Path, data: bytes) -> tuple[dict[str, str], list[str]]:
    """(binding id → keys, a line for each entry left out) of the config file's `[keys]` table."""
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        return {}, [f"config {path} is not valid TOML: {exc}"]
    table = document.get(_SECTION, {})
    if not isinstance(table, dict):
        return {}, [f"config {path}: [keys] must be a table of \"binding.id\" = \"key\""]
    keymap, problems = {}, []
    for binding_id, keys in table.items():
        where = f"config {path}: [keys] {binding_id!r}"
        if not isinstance(keys, str):
            problems.append(f"{where} must be a string of keys, like \"ctrl+n\"")
            continue
        problem = key_problem(keys)
        if problem is not None:
            problems.append(f"{where} = {keys!r}: {problem}; left as it was")
            continue
        keymap[binding_id] = keys
    return keymap, problems


def user_keymap(config: str | None = None, cwd: Path | None = None) -> tuple[dict[str, str], list[str]]:
    """The keymap of the config file that applies (`config`: --config), and a line per problem."""
    try:
        if config is not None:
            path: Path | None = Path(config)
            data = read_config(Path(config))
        else:
            path, data, _ = find_config(cwd)  # the ignored file's notice is the forwarder's to say
    except ConfigError as exc:
        return {}, [f"keys: {exc}"]
    return ({}, []) if path is None else read_keymap(path, data)


def binding_ids() -> set[str]:
    """Every binding id of the app, read from the classes that hold them (their modules imported here)."""
    from . import app  # noqa: F401  (the modules whose classes hold the bindings)
    from .screens import confirm, export_format, flow, help  # noqa: F401
    from .widgets import editor  # noqa: F401

    return {binding.id for binding in _bindings(vars(module) for name, module in list(sys.modules.items())
                                                if name.startswith(__package__)) if binding.id}


def _bindings(namespaces: Iterable[dict[str, object]]) -> Iterable[Binding]:
    for namespace in namespaces:
        for value in namespace.values():
            if isinstance(value, type):
                yield from (b for b in value.__dict__.get("BINDINGS", ()) if isinstance(b, Binding))


def unknown_ids(keymap: dict[str, str]) -> list[str]:
    """A line for each id of `keymap` no binding has."""
    known = binding_ids()
    return [f"keys: no binding has the id {binding_id!r} (docs/keys.md lists them); left out"
            for binding_id in keymap if binding_id not in known]


def keys_of(screen: Screen, binding_id: str) -> set[str]:
    """The keys that run binding `binding_id` on `screen` now: what Textual dispatches, the user's
    keymap applied. Code that looks at a key itself asks here, never compares with a literal."""
    return {key for key, active in screen.active_bindings.items() if active.binding.id == binding_id}


def binding_of(screen: Screen, key: str) -> ActiveBinding | None:
    """What `key` runs on `screen` now (the user's keymap applied), None for a key bound to nothing."""
    return screen.active_bindings.get(key)
