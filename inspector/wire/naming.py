"""Tool names and call ids: what each dialect accepts (XL-02/03, OC-16) and the one way a name or
id it rejects is replaced. The checker, the fixer and the bridges all read these rules; the fixer
and the bridges all mint with `NameMap`, `IdMap` and `mint_id`."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Container, Mapping
from dataclasses import dataclass, field, replace

from .dialect import Dialect
from .dialects import Derived, homes


@dataclass(frozen=True, slots=True)
class NameRule:
    """The tool names one dialect (or provider) accepts: characters from `chars`, at most `max`
    of them, the first from `first` when that is set."""

    chars: str  # a regex character-class body
    max: int
    text: str  # as the provider's error quotes it
    first: str = ""  # a regex character-class body for the first character; "" = any of `chars`
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    bad: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        head = f"[{self.first}]" if self.first else f"[{self.chars}]"
        object.__setattr__(self, "pattern", re.compile(f"{head}[{self.chars}]*"))
        object.__setattr__(self, "bad", re.compile(f"[^{self.chars}]"))

    def ok(self, name: str) -> bool:
        return 0 < len(name) <= self.max and self.pattern.fullmatch(name) is not None

    def widened(self, chars: str, text: str) -> NameRule:
        return replace(self, chars=chars, text=text)


# One rule per dialect, from its home (`Home.names`); a provider profile may widen its dialect's (profiles.py).
NAME_RULES: Mapping[Dialect, NameRule] = Derived(lambda: {each.dialect: each.names for each in homes()})


def digest(text: str) -> str:
    """sha256 hex of any str, lone surrogates included (JSON can carry them)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class NameMap:
    """Injective, deterministic aliases for the names a rule rejects: `<sanitised stem>_<sha256
    prefix>`, the prefix widened until the alias collides with nothing. The alias depends on the
    name alone, so the same name is aliased the same way in tools, history and tool_choice, and
    again when the client replays a history the response handed back un-aliased."""

    def __init__(self, rule: NameRule, reserved: set[str]) -> None:
        self.rule = rule
        self.forward: dict[str, str] = {}
        self.reverse: dict[str, str] = {}
        self._reserved = reserved  # valid names in use: an alias must never equal one of them

    def alias(self, name: str) -> str:
        if name in self.forward:
            return self.forward[name]
        if self.rule.ok(name) and name not in self.reverse:
            alias = name
        else:
            alias = self._mint(name)
        self.forward[name] = alias
        self.reverse[alias] = name
        return alias

    def _mint(self, name: str) -> str:
        stem = self.rule.bad.sub("_", name) or "tool"
        if self.rule.first and not re.match(f"[{self.rule.first}]", stem):
            stem = "_" + stem
        hexdigest = digest(name)
        limit = min(self.rule.max, 64)  # 64: the portable bound, whatever the target allows
        for width in range(8, 65, 4):
            alias = f"{stem[: limit - 1 - width]}_{hexdigest[:width]}"
            if alias not in self.reverse and alias not in self._reserved:
                return alias
        raise AssertionError("sha256 prefixes of 64 hex chars cannot all collide")


# (charset, max length) of a call id each dialect accepts (`Home.ids`; MCP has no call ids).
ID_RULES: Mapping[Dialect, tuple[re.Pattern[str], int]] = Derived(
    lambda: {each.dialect: each.ids for each in homes() if each.ids is not None})


def id_ok(call_id: str, dialect: Dialect) -> bool:
    return ID_RULES[dialect][0].fullmatch(call_id) is not None


def mint_id(basis: str, *taken: Container[str], limit: int = 64) -> str:
    """`call_<sha256 prefix>`: deterministic in `basis`, valid in every dialect (≤ `limit`), and in
    none of `taken` (a salt is added to the basis until it is free)."""
    width = min(24, limit - 5)
    salt = 0
    candidate = "call_" + digest(basis)[:width]
    while any(candidate in ids for ids in taken):
        salt += 1
        candidate = "call_" + digest(f"{basis}#{salt}")[:width]
    return candidate


class IdMap:
    """Call ids rewritten for one target: kept when valid, otherwise minted from the source id so
    that a call and its result still pair (deterministic), two ids never merge (injective), and a
    minted id never equals an id already in the history (XL-04)."""

    def __init__(self, target: Dialect, taken: set[str], seed: str) -> None:
        self.pattern, self.limit = ID_RULES[target]
        self.forward: dict[str, str] = {}
        self.reverse: dict[str, str] = {}
        self._taken = taken
        self._seed = seed

    def map(self, source_id: str) -> str:
        if source_id in self.forward:
            return self.forward[source_id]
        if self.pattern.fullmatch(source_id) and source_id not in self.reverse:
            target = source_id
        else:
            target = self._mint("id:" + source_id)
        self.forward[source_id] = target
        self.reverse[target] = source_id
        return target

    def mint(self, basis: str) -> str:
        """A fresh id for a call that had none (legacy function_call, Gemini functionCall)."""
        target = self._mint(f"new:{self._seed}:{basis}")
        self.forward[target] = target
        self.reverse[target] = target
        return target

    def _mint(self, basis: str) -> str:
        return mint_id(basis, self.reverse, self._taken, limit=self.limit)
