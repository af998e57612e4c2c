"""Where the providers accept what their own published definitions refuse: one table, each entry
contributed by its dialect's folder (dialects/<name>/tolerances.py, `Home.tolerances`), read by the
spec layer (rules/spec.py, OR-13/OR-14, OC-28/OC-29, AN-14, GM-19/GM-20) and by the hand-written
rules that judge the same fields (AN-17, GM-04). A finding the provider would not answer 400 to is
never an error, so each entry names the exchange (a public recorded cassette, repo:path) or the
document that shows the API taking the value.

The kinds of entry:
- output-only: a field the definition requires because it describes what the API returns; on input
  the API fills it in (an item's `id`, a call's `status`);
- default: a field required by the definition that the API defaults when absent (`detail: auto`);
- bound: a keyword of the definition the endpoint does not enforce (`minItems` on `stop`);
- typo: a required name the definition never defines (the real field has another name);
- param: the definition of a resource used where the document also defines the request param
  for it, which is what the endpoint validates against;
- undocumented: a top-level field the endpoint takes though the document does not list it;
- sentinel: a value of a range-checked field that the API reads as "unset";
- enum-number: proto JSON (Gemini) reads an enum field from its name or its number;
- role: a role the rules' list does not name that the API takes on a turn of the given parts;
- history: a history item of a shape the definition does not list in that place;
- retired: a top-level field the document no longer lists that the API still reads, and validates as
  the definition that replaced it (Anthropic's beta `output_format`, now `output_config.format`);
- media-type: an enum field the endpoint also reads spelled as a media type (`video/mp4` for `mp4`)."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..dialect import Dialect
from ..dialects import Derived, DerivedList, homes


@dataclass(frozen=True, slots=True)
class Tolerance:
    kind: str
    # the definition the entry changes (spec kinds), or None for a whole request's field
    definition: str | None
    # the field (output-only, default, typo, undocumented, sentinel), the keyword (bound), the
    # param definition (param), or the history item's pattern (history)
    name: str
    evidence: str
    values: tuple[Any, ...] = ()  # sentinel: the values read as unset
    # history: where (a pointer pattern), the failed keyword, the message pattern, and what the
    # enclosing history item must carry (field -> value)
    where: str = ""
    keyword: str = ""
    item: tuple[tuple[str, Any], ...] = field(default=())
    # retired: the definition the field's value is validated as
    schema: str = ""
    # the dialect whose home contributes the entry (set as the table is read from the homes)
    dialects: tuple[Dialect, ...] = ()


_BY_DIALECT: Mapping[Dialect, tuple[Tolerance, ...]] = Derived(lambda: {
    each.dialect: tuple(replace(t, dialects=(each.dialect,)) for t in each.tolerances) for each in homes()})
TOLERANCES: Sequence[Tolerance] = DerivedList(lambda: [t for entries in _BY_DIALECT.values() for t in entries])


def of(kind: str, dialect: Dialect) -> list[Tolerance]:
    return [t for t in _BY_DIALECT.get(dialect, ()) if t.kind == kind]


def media_type_reads(dialect: Dialect, name: Any, value: Any, enum: Any) -> bool:
    """Whether the endpoint reads `value` of field `name` as the enum value after its media type's slash."""
    return isinstance(value, str) and isinstance(enum, list) and value.partition("/")[2] in enum \
        and any(t.name == name for t in of("media-type", dialect))


def undocumented_fields(dialect: Dialect) -> frozenset[str]:
    return frozenset(t.name for t in of("undocumented", dialect))


def unset(dialect: Dialect, name: str, value: Any) -> bool:
    """The value is the API's "unset" for this field (a sentinel), so no range applies to it."""
    return any(t.name == name and value in t.values and type(value) is int for t in of("sentinel", dialect))


def defaulted(dialect: Dialect, definition: str, name: str) -> bool:
    """The API defaults this field of this definition when it is absent."""
    return any(t.definition == definition and t.name == name for t in of("default", dialect))


def role_taken(dialect: Dialect, role: Any, parts: set[str]) -> bool:
    """A role the API takes on a turn whose parts are all of the given kinds."""
    return any(t.name == role and parts and parts <= set(t.values) for t in of("role", dialect))


def enum_numbers(dialect: Dialect) -> bool:
    return bool(of("enum-number", dialect))


def patched(definitions: dict[str, Any], dialect: Dialect) -> dict[str, Any]:
    """The document's definitions as the endpoint reads a request: output-only and defaulted fields
    not required, a misnamed required field dropped, unenforced bounds removed, resources replaced by
    their request params, retired fields read as their successors. A copy: the document itself stays as published."""
    defs = copy.deepcopy(definitions)
    for t in _BY_DIALECT.get(dialect, ()):
        if t.definition is None or t.definition not in defs:
            continue
        node = defs[t.definition]
        if t.kind in ("output-only", "default", "typo") and t.name in node.get("required", ()):
            node["required"] = [name for name in node["required"] if name != t.name]
        elif t.kind == "bound":
            _drop_keyword(node, t.name)
        elif t.kind == "param" and t.name in definitions:
            defs[t.definition] = copy.deepcopy(definitions[t.name])
        elif t.kind == "retired" and t.schema in definitions:
            node.setdefault("properties", {})[t.name] = {"anyOf": [{"$ref": "#/$defs/" + t.schema},
                                                                   {"type": "null"}]}
    return defs


def _drop_keyword(node: Any, keyword: str) -> None:
    if isinstance(node, dict):
        node.pop(keyword, None)
        for value in node.values():
            _drop_keyword(value, keyword)
    elif isinstance(node, list):
        for value in node:
            _drop_keyword(value, keyword)


def history_accepts(dialect: Dialect, pointer: str, keyword: str, message: str, item: Any) -> bool:
    """A history item the endpoint takes in this place though the definition lists no such shape."""
    for t in of("history", dialect):
        if t.keyword == keyword and re.fullmatch(t.where, pointer) and isinstance(item, dict) \
                and any(message.startswith(f'type "{value}"') for value in t.values) \
                and all(item.get(key) == value for key, value in t.item):
            return True
    return False
