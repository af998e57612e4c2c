"""Gemini's schema dialect: the genai `Schema` of `parameters` (an OpenAPI 3.0 subset with upper-case
types, `nullable`, `propertyOrdering`), its conversions to and from JSON Schema, and the subset checks
the rules report (GM-04, GM-17). The bridges, the fixer and the rules all use this one module.

JSON Schema -> genai follows what LiteLLM (`_build_vertex_schema`), the Vercel AI SDK
(`convertJSONSchemaToOpenAPISchema`) and ADK (`_to_gemini_schema`) do, taken together: `const` -> enum,
type lists and null branches -> `nullable`, an untyped schema gets a type, an array gets typed items,
formats Gemini refuses are dropped, keywords beside `anyOf` move into its branches, and an object union
at the root is merged into one object. Every change is reported as a `Change`; spelling alone (type
casing, snake_case keywords) is not a change, since Gemini reads both."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ... import jsonsafe
from ...pointer import join
from ...rules.base import short
from ...rules.schema import JSON_TYPES, LIST_KEYWORDS, MAP_KEYWORDS, ONE_KEYWORDS
from ...violations import Severity
from .fields import camel
from .tolerances import TYPE_NUMBERS

GENAI_TYPES = frozenset({"TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"})
# Keywords Gemini's proto parser reads (camelCase); any other is "Unknown name" (GM-04).
KEYWORDS = frozenset({
    "type", "format", "title", "description", "nullable", "enum", "items", "properties", "required", "anyOf",
    "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum", "minProperties", "maxProperties",
    "pattern", "default", "example", "propertyOrdering", "additionalProperties", "$ref", "ref",
})
# In the SDK's Schema and read by Vertex, but the Gemini API answers "Unknown name" for them (GM-04;
# python-genai itself raises "additional_properties parameter is not supported in Gemini API"): never
# written by a translation, and an error off Vertex.
_NOT_EMITTED = frozenset({"additionalProperties"})
# Formats Gemini accepts per type ("only 'enum' and 'date-time' are supported for STRING type").
FORMATS = {"STRING": frozenset({"enum", "date-time"}),
           "NUMBER": frozenset({"float", "double", "int32", "int64"}),
           "INTEGER": frozenset({"float", "double", "int32", "int64"})}
# Keywords that only describe a schema; Vertex accepts them beside anyOf, not validation keywords.
ANNOTATIONS = frozenset({"description", "title", "default", "example"})
# The type an untyped node's keywords imply, first match wins (LiteLLM and ADK add OBJECT for properties).
_IMPLIED = (("OBJECT", ("properties",)), ("ARRAY", ("items", "minItems", "maxItems")),
            ("NUMBER", ("minimum", "maximum")), ("STRING", ("minLength", "maxLength", "pattern")))
# What makes a schema node typed for Gemini without a `type` of its own.
_TYPING = ("type", "anyOf", "$ref", "ref", "properties", "items", "enum")


def _format_accepted(fmt: Any, kind: str | None) -> bool:
    """Whether Gemini takes `fmt` as the format of a schema of type `kind`. A format is a string: a
    list or an object is none (and, unhashable, cannot be looked up)."""
    return isinstance(fmt, str) and kind is not None and fmt in FORMATS.get(kind, ())

ChangeKind = Literal["converted", "dropped", "merged", "moved", "synthesised"]


@dataclass(frozen=True, slots=True)
class Change:
    """One thing a conversion changed, with pointers into its input and output documents."""

    source: str
    target: str | None
    kind: ChangeKind
    why: str
    rule: str = ""  # "GM-17" for Gemini's Schema subset; "" lets the caller name its own rule


def needs_json_schema(schema: Any) -> bool:
    """Whether a JSON Schema uses references that `parameters` cannot carry; such schemas go out as
    `parametersJsonSchema` unchanged."""
    if isinstance(schema, dict):
        return any(k in schema for k in ("$ref", "$defs", "definitions")) or any(
            needs_json_schema(v) for v in schema.values())
    if isinstance(schema, list):
        return any(needs_json_schema(v) for v in schema)
    return False


# --- genai Schema -> JSON Schema -----------------------------------------------------------------

def to_json_schema(schema: Any, src: str, tgt: str, changes: list[Change], *, root: bool = False) -> Any:
    """genai Schema -> JSON Schema (a new value): lower-case types, `nullable` -> a union with null,
    `example` -> `examples`, `propertyOrdering` and `format: enum` dropped. Already-JSON-Schema input
    comes back unchanged. `root` marks function parameters, whose arguments are always an object, so
    a `nullable` there is dropped rather than written as `["object", "null"]`."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    nullable = False
    for key, value in schema.items():
        here, there = join(src, key), join(tgt, key)
        if key == "type":
            kind = _json_type(value, here, there, changes)
            if kind is not None:
                out["type"] = kind
        elif key == "nullable":
            if value is True:
                nullable = True
            else:
                changes.append(Change(here, None, "dropped", f"nullable {short(value)} is JSON Schema's default"))
        elif key == "propertyOrdering":
            changes.append(Change(here, None, "dropped", "propertyOrdering has no JSON Schema equivalent"))
        elif key == "format" and value == "enum":
            changes.append(Change(here, None, "dropped", "format \"enum\" is implied by enum in JSON Schema"))
        elif key == "example" and "examples" not in schema:
            out["examples"] = [value]
            changes.append(Change(here, join(tgt, "examples"), "converted", "example written as examples"))
        elif key in ONE_KEYWORDS and isinstance(value, dict):
            out[key] = to_json_schema(value, here, there, changes)
        elif key in MAP_KEYWORDS and isinstance(value, dict):
            out[key] = {name: to_json_schema(sub, join(here, name), join(there, name), changes)
                        for name, sub in value.items()}
        elif key in LIST_KEYWORDS and isinstance(value, list):
            out[key] = [to_json_schema(sub, join(here, i), join(there, i), changes) for i, sub in enumerate(value)]
        else:
            out[key] = value
    if nullable:
        _json_nullable(out, src, tgt, changes, root)
    return out


def _json_type(value: Any, here: str, there: str, changes: list[Change]) -> Any:
    if isinstance(value, list):
        lowered = [k.lower() if isinstance(k, str) and k.lower() in JSON_TYPES else k for k in value]
        if lowered != value:
            changes.append(Change(here, there, "converted", f"genai types {value} written as {lowered}"))
        return lowered
    if isinstance(value, int) and not isinstance(value, bool) and type_name(value) is not None:
        value = type_name(value)  # the proto number an enum-encoding=int client writes, by its name
    if not isinstance(value, str) or value in JSON_TYPES:
        return value
    if value.lower() in JSON_TYPES:
        changes.append(Change(here, there, "converted", f"genai type {value!r} written as JSON Schema "
                                                        f"{value.lower()!r}"))
        return value.lower()
    changes.append(Change(here, None, "dropped", f"type {value!r} has no JSON Schema equivalent"))
    return None


def _json_nullable(out: dict[str, Any], src: str, tgt: str, changes: list[Change], root: bool) -> None:
    at = join(src, "nullable")
    kind = out.get("type")
    if root:
        changes.append(Change(at, None, "dropped", "nullable on the parameters root: arguments are always an "
                                                   "object, and OpenAI needs an object root"))
    elif isinstance(kind, str):
        out["type"] = [kind, "null"] if kind != "null" else kind
        changes.append(Change(at, join(tgt, "type"), "converted", f"nullable written as type [{kind!r}, 'null']"))
    elif isinstance(kind, list):
        if "null" not in kind:
            out["type"] = [*kind, "null"]
        changes.append(Change(at, join(tgt, "type"), "converted", "nullable written as 'null' in the type list"))
    elif isinstance(out.get("anyOf"), list):
        if {"type": "null"} not in out["anyOf"]:
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
        changes.append(Change(at, join(tgt, "anyOf"), "converted", "nullable written as a null branch of anyOf"))
    elif any(key not in ANNOTATIONS for key in out):
        constrained = {key: value for key, value in out.items() if key not in ANNOTATIONS}
        for key in constrained:
            del out[key]
        out["anyOf"] = [constrained, {"type": "null"}]
        changes.append(Change(at, join(tgt, "anyOf"), "converted", "nullable written as anyOf [the schema, null]"))
    else:
        changes.append(Change(at, None, "dropped", "nullable on an untyped schema, which admits null already"))


# --- JSON Schema -> genai Schema -----------------------------------------------------------------

def to_genai(schema: Any, src: str, tgt: str, changes: list[Change], *, root: bool = False,
             respell: bool = True) -> dict[str, Any]:
    """JSON Schema (or genai Schema, or a mix) -> the genai Schema subset Gemini and Vertex accept.
    With `root` (function parameters), an object union is merged into one OBJECT and a nullable root
    is dropped; a root that is still not an OBJECT is left for the caller to route elsewhere.
    `respell` writes types upper-case and keywords in camelCase; the fixer keeps the client's own
    spelling, which Gemini reads as well."""
    out = _genai(schema, src, tgt, changes, root, respell)
    if root:
        _object_root(schema, out, src, tgt, changes)
    return out


def _genai(schema: Any, src: str, tgt: str, changes: list[Change], root: bool = False,
           respell: bool = True, typed: bool = True) -> dict[str, Any]:
    """One node converted; with `typed` False (an anyOf branch) it is not yet given a type, since the
    parent's keywords, its type among them, may still move into it."""
    if not isinstance(schema, dict):
        changes.append(Change(src, tgt, "converted", f"schema {short(schema)} is not a Schema object; written "
                                                     "as an untyped one", "GM-17"))
        schema = {}
    out: dict[str, Any] = {}
    nullable = False
    union: list[tuple[dict[str, Any], str, str]] | None = None  # (branch, source, target)
    for key, value in schema.items():
        name = camel(key)
        here, there = join(src, key), join(tgt, name)
        if name == "type":
            nullable = _genai_type(value, out, here, tgt, changes) or nullable
            kinds = value if isinstance(value, list) else [value]
            # The type as the client spelled it, or numbered it
            own = [k for k in kinds if "type" in out and type_name(k) == out["type"]]
            if not respell and own:
                out["type"] = own[0]
        elif name == "const":
            out["enum"] = [value]
            changes.append(Change(here, join(tgt, "enum"), "converted", "genai has no const; written as a one-value "
                                                                        "enum"))
        elif name == "examples":
            if isinstance(value, list) and value:
                out["example"] = value[0]
                changes.append(Change(here, join(tgt, "example"), "converted", "examples written as example (the "
                                                                               "first one)"))
            else:
                changes.append(Change(here, None, "dropped", "empty examples"))
        elif name == "items" and not isinstance(value, list):
            out["items"] = _genai(value, here, there, changes, respell=respell)
        elif name == "properties" and isinstance(value, dict):
            out["properties"] = {prop: _genai(sub, join(here, prop), join(there, prop), changes, respell=respell)
                                 for prop, sub in value.items()}
        elif name in ("anyOf", "oneOf") and isinstance(value, list):
            union = union or []
            for i, sub in enumerate(value):
                at = join(tgt, "anyOf", len(union))
                branch = _genai(sub, join(here, i), at, changes, respell=respell, typed=False)
                if _kind(branch) == "NULL":  # null, whatever else it says: only null is admitted
                    nullable = True
                    changes.append(Change(join(here, i), join(tgt, "nullable"), "converted",
                                          "a null branch of anyOf folded into nullable", "GM-17"))
                else:
                    union.append((branch, join(here, i), at))
            if name == "oneOf":
                changes.append(Change(here, join(tgt, "anyOf"), "converted", "genai has no oneOf; written as anyOf"))
        elif name == "allOf" and isinstance(value, list):
            # A ∧ B in one schema: each branch's keywords join this node (required and properties add up).
            for i, sub in enumerate(value):
                _conjoin(out, _genai(sub, join(here, i), tgt, changes, respell=respell, typed=False))
            changes.append(Change(here, tgt, "merged", "genai has no allOf; its branches are merged into the schema"))
        elif name in ("$defs", "defs") and root and isinstance(value, dict):
            out[name if respell else key] = {sub: _genai(child, join(here, sub), join(there, sub), changes,
                                                         respell=respell) for sub, child in value.items()}
        elif name in KEYWORDS and name not in _NOT_EMITTED:
            out[name if respell else key] = value
        else:
            changes.append(Change(here, None, "dropped", f"Gemini's Schema rejects the keyword {key!r}"))
    if union is None and "anyOf" in out:  # a type list, written as anyOf: keywords beside it move too
        union = [(branch, src, join(tgt, "anyOf", i)) for i, branch in enumerate(out.pop("anyOf"))]
    if union is not None:
        _genai_union(out, union, nullable, src, tgt, changes)
    elif nullable:
        out["nullable"] = True
    if typed:
        _genai_enum(out, src, tgt, changes)
        _genai_typed(out, src, tgt, changes)
    return out


def _genai_type(value: Any, out: dict[str, Any], here: str, tgt: str, changes: list[Change]) -> bool:
    """Writes the one genai type of `value` into `out`; True when `value` admits null."""
    kinds = value if isinstance(value, list) else [value]
    names = [type_name(k) for k in kinds]
    named = [n for n in names if n is not None and n != "NULL"]
    nullable = "NULL" in names
    unknown = [k for k in named if k not in GENAI_TYPES or k == "TYPE_UNSPECIFIED"]
    if unknown or len(named) < len(kinds) - nullable:
        changes.append(Change(here, None, "dropped", f"type {short(value)} is not a genai Type"))
        return nullable
    if len(named) == 1:
        out["type"] = named[0]
        if isinstance(value, list):
            changes.append(Change(here, join(tgt, "type"), "converted", f"type {value} written as {named[0]!r}"
                                  + (" + nullable" if nullable else "")))
    elif named:
        out["anyOf"] = [{"type": k} for k in named]
        changes.append(Change(here, join(tgt, "anyOf"), "converted",
                              "a type list is not a repeated field in genai; written as anyOf"))
    elif nullable:
        out["type"] = "NULL"
        nullable = False
    return nullable


def _genai_union(out: dict[str, Any], union: list[tuple[dict[str, Any], str, str]], nullable: bool, src: str,
                 tgt: str, changes: list[Change]) -> None:
    """anyOf (after null branches were folded): one branch joins its parent; several keep the anyOf,
    and the parent's validation keywords move into every branch, since Vertex rejects anyOf beside
    them (GM-17). A ∧ (B ∨ C) = (A ∧ B) ∨ (A ∧ C), so the meaning is kept."""
    if "anyOf" in out:  # a type list already became anyOf: both must hold
        union = [(_conjoin(dict(kind), branch), at, to) for kind in out.pop("anyOf")
                 for branch, at, to in union] or union
    # A branch that is itself a union (its keywords already moved into its own branches) joins this one:
    # A ∨ (B ∨ C) = A ∨ B ∨ C, and no anyOf is left beside the keywords moved below.
    flat = []
    for branch, at, to in union:
        if isinstance(branch.get("anyOf"), list):
            flat += [(sub, join(at, "anyOf", i), join(to, "anyOf", i)) for i, sub in enumerate(branch["anyOf"])]
        else:
            flat.append((branch, at, to))
    union = flat
    if len(union) == 1:  # anyOf [A] is A: nothing to report
        _conjoin(out, union[0][0])
        if nullable:
            out["nullable"] = True
        return
    moved = [key for key in out if key not in ANNOTATIONS]
    for key in moved:
        value = out.pop(key)
        for branch, _, _ in union:
            _conjoin(branch, {key: value})
        changes.append(Change(join(src, key), join(tgt, "anyOf"), "moved",
                              f"{key!r} beside anyOf moved into every branch (Vertex rejects anyOf with sibling "
                              "keywords)", "GM-17"))
    for branch, at, to in union:
        _genai_enum(branch, at, to, changes)
        _genai_typed(branch, at, to, changes)
        if nullable:
            branch["nullable"] = True
    out["anyOf"] = [branch for branch, _, _ in union]


def _conjoin(into: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`into` narrowed by `extra`: required lists and properties join; otherwise `into`'s own value,
    the more specific one, stays."""
    for key, value in extra.items():
        if key not in into:
            into[key] = value
        elif key == "required" and isinstance(into[key], list) and isinstance(value, list):
            into[key] = [*into[key], *(name for name in value if name not in into[key])]
        elif key == "properties" and isinstance(into[key], dict) and isinstance(value, dict):
            into[key] = {**value, **into[key]}
    return into


def _genai_enum(out: dict[str, Any], src: str, tgt: str, changes: list[Change]) -> None:
    if not isinstance(out.get("enum"), list):
        return
    # Gemini accepts enum only on STRING (GM-04): other values become strings.
    if _kind(out) not in (None, "STRING") or not all(isinstance(v, str) for v in out["enum"]):
        changes.append(Change(join(src, "enum"), join(tgt, "enum"), "converted",
                              "Gemini allows enum only on STRING; values written as strings"))
    if _kind(out) != "STRING":
        out["type"] = "STRING"
    out["enum"] = [v if isinstance(v, str) else jsonsafe.dumps(v).decode() for v in out["enum"]]


def _genai_typed(out: dict[str, Any], src: str, tgt: str, changes: list[Change]) -> None:
    """Every node typed, every array with typed items, only formats Gemini accepts (GM-17)."""
    if "type" not in out and "anyOf" not in out and "$ref" not in out and "ref" not in out:
        implied = next((kind for kind, keys in _IMPLIED if any(key in out for key in keys)), None)
        out["type"] = implied or "STRING"
        why = f"an untyped schema whose keywords apply to {implied} written as {implied}" if implied else \
            "an untyped schema (any value) is rejected by Gemini; written as STRING, not the OBJECT other " \
            "sanitisers pick: an OBJECT would make the model answer an object where any value was allowed, and " \
            "Gemini has refused nested OBJECTs without properties (\"should be non-empty for OBJECT type\")"
        changes.append(Change(src, join(tgt, "type"), "synthesised", why, "GM-17"))
    if _kind(out) not in (None, "OBJECT"):
        for key in ("properties", "required"):  # vacuous on other types in JSON Schema; refused by Gemini (GM-04)
            if key in out:
                del out[key]
                changes.append(Change(join(src, key), None, "dropped", f"{key} applies only to objects and the "
                                                                       f"schema is {_kind(out)}"))
    if _kind(out) == "ARRAY" and "items" not in out:
        out["items"] = {"type": "STRING"}
        changes.append(Change(src, join(tgt, "items"), "synthesised", "an ARRAY needs items with a type; items of "
                                                                      "any value written as STRING", "GM-17"))
    fmt = out.get("format")
    if fmt is not None and not _format_accepted(fmt, _kind(out)):
        del out["format"]
        changes.append(Change(join(src, "format"), None, "dropped", f"format {short(fmt)} is not one Gemini accepts "
                                                                    f"for {_kind(out)}", "GM-17"))


def _kind(node: dict[str, Any]) -> str | None:
    return type_name(node.get("type"))


def type_name(kind: Any) -> str | None:
    """A Schema's type as genai names it: the name in either case, or the proto number a client
    calling with enum-encoding=int writes (rules/tolerance.py)."""
    if isinstance(kind, str):
        return kind.upper()
    if isinstance(kind, int) and not isinstance(kind, bool):
        return TYPE_NUMBERS.get(kind)
    return None


def _object_root(schema: Any, out: dict[str, Any], src: str, tgt: str, changes: list[Change]) -> None:
    """Function parameters need an OBJECT root (GM-06): an object union is merged into one object
    whose properties are those of every branch and whose required are those all branches require."""
    branches = out.get("anyOf")
    key = "oneOf" if isinstance(schema, dict) and "oneOf" in schema and "anyOf" not in schema else "anyOf"
    if isinstance(branches, list) and branches and all(_kind(b) == "OBJECT" for b in branches):
        properties: dict[str, Any] = {}
        for branch in branches:
            for name, sub in (branch.get("properties") or {}).items():
                properties[name] = _either(properties[name], sub) if name in properties else sub
        common = [name for name in branches[0].get("required") or []
                  if all(name in (b.get("required") or []) for b in branches[1:])]
        del out["anyOf"]
        out["type"] = "OBJECT"
        out["properties"] = properties
        if common:
            out["required"] = common
        changes.append(Change(join(src, key), join(tgt, "properties"), "merged",
                              "Gemini needs an OBJECT parameters root: the object union is merged into one object "
                              "with every branch's properties, required only where all branches require them",
                              "GM-17"))
    if out.pop("nullable", None):
        changes.append(Change(join(src, "nullable") if isinstance(schema, dict) and "nullable" in schema else src,
                              None, "dropped", "a nullable parameters root: arguments are always an object"))


def _either(one: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """A schema admitting what `one` or `other` admits, in the subset: a NULL side becomes nullable."""
    if one == other:
        return one
    for this, that in ((one, other), (other, one)):
        if _kind(that) == "NULL":
            return {**this, "nullable": True} if "anyOf" not in this else \
                {**this, "anyOf": [{**branch, "nullable": True} for branch in this["anyOf"]]}
    left = one["anyOf"] if set(one) == {"anyOf"} else [one]
    right = other["anyOf"] if set(other) == {"anyOf"} else [other]
    return {"anyOf": [*left, *(branch for branch in right if branch not in left)]}


# --- subset checks (GM-04, GM-17) ---------------------------------------------------------------

Finding = tuple[str, str, str, Severity]  # rule, pointer, message, severity


def findings(schema: Any, pointer: str, *, what: str, vertex: bool) -> Iterator[Finding]:
    """What Gemini's proto-strict `Schema` rejects in function parameters: unknown keywords, type
    lists, a "null" type in anyOf, properties/enum on the wrong type (GM-04); arrays without typed
    items, untyped nodes, formats it refuses and, on Vertex, validation keywords beside anyOf (GM-17)."""
    stack: list[tuple[Any, str, bool]] = [(schema, pointer, True)]
    while stack:
        node, where, is_root = stack.pop()
        if not isinstance(node, dict):
            yield "GM-04", where, f"{what}: schema node is {short(node)}, not a Schema object", Severity.ERROR
            continue
        names = {camel(key): key for key in node}
        for name, key in names.items():
            if name in ("$defs", "defs") and is_root:
                if isinstance(node[key], dict):
                    stack.extend((child, join(where, key, sub), False) for sub, child in node[key].items())
            elif name not in KEYWORDS:
                yield "GM-04", join(where, key), f"{what}: Gemini rejects unknown schema field {key!r} " \
                                                 "(\"Unknown name\")", Severity.ERROR
            elif name in _NOT_EMITTED and not vertex:
                yield "GM-04", join(where, key), f"{what}: the Gemini API rejects {key!r} in a Schema (\"Unknown " \
                                                 "name\"; Vertex takes it): a JSON Schema goes in " \
                                                 "parametersJsonSchema", Severity.ERROR
        kind = node.get("type")
        if isinstance(kind, list):
            yield "GM-04", join(where, "type"), f"{what}: type arrays are rejected (\"Proto field is not " \
                                                "repeating\"); use one type plus nullable", Severity.ERROR
            kind = None
        elif kind is not None and type_name(kind) not in GENAI_TYPES:
            yield "GM-04", join(where, "type"), f"{what}: type {short(kind)} is not a genai Type", Severity.ERROR
            kind = None
        upper = type_name(kind)
        if upper is not None and upper != "OBJECT":
            for key in ("properties", "required"):
                if key in node:
                    yield "GM-04", join(where, key), f"{what}: {key} is only allowed on OBJECT, not {kind}", \
                        Severity.ERROR
        if "enum" in node and upper not in (None, "STRING"):
            yield "GM-04", join(where, "enum"), f"{what}: enum is only allowed on STRING, not {kind}", Severity.ERROR
        yield from _subset(node, names, where, upper, is_root, what, vertex)
        properties = node.get("properties")
        if isinstance(properties, dict):
            stack.extend((child, join(where, "properties", name), False) for name, child in properties.items())
        elif "properties" in node:
            yield "GM-04", join(where, "properties"), f"{what}: properties must be an object", Severity.ERROR
        required = node.get("required")
        if required is not None and not (isinstance(required, list) and all(isinstance(n, str) for n in required)):
            yield "GM-04", join(where, "required"), f"{what}: required must be a list of property names", \
                Severity.ERROR
        items = node.get("items")
        if isinstance(items, dict):
            stack.append((items, join(where, "items"), False))
        elif "items" in node:
            yield "GM-04", join(where, "items"), f"{what}: items must be one Schema object", Severity.ERROR
        key = names.get("anyOf", "anyOf")
        any_of = node.get(key)
        if isinstance(any_of, list):
            for index, child in enumerate(any_of):
                if isinstance(child, dict) and type_name(child.get("type")) == "NULL":
                    yield "GM-04", join(where, key, index, "type"), f"{what}: a \"null\" type inside anyOf is " \
                                                                    "rejected; use nullable:true", Severity.ERROR
                else:
                    stack.append((child, join(where, key, index), False))


def _subset(node: dict[str, Any], names: dict[str, str], where: str, upper: str | None, is_root: bool, what: str,
            vertex: bool) -> Iterator[Finding]:
    if upper == "ARRAY" and "items" not in names:
        yield "GM-17", where, f"{what}: an ARRAY needs items with a type (\"items: missing field\")", Severity.ERROR
    if not is_root and not any(name in names for name in _TYPING):
        yield "GM-17", where, f"{what}: an untyped schema (any value) is rejected; give it a type", Severity.ERROR
    fmt = node.get("format")
    if "format" in node and upper is not None and not _format_accepted(fmt, upper):
        yield "GM-17", join(where, "format"), f"{what}: format {short(fmt)} is not accepted for {upper} " \
                                              f"(accepted: {', '.join(sorted(FORMATS.get(upper, ()))) or 'none'}); " \
                                              "models have rejected it", Severity.WARNING
    if vertex and "anyOf" in names:
        for name, key in names.items():
            if name not in ANNOTATIONS and name != "anyOf":
                yield "GM-17", join(where, key), f"{what}: {key!r} beside anyOf is rejected by Vertex; move it into " \
                                                 "the branches", Severity.ERROR
