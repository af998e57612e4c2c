"""Schema checks shared by the dialects: JSON Schema as OpenAI, Anthropic and MCP read it (lower-case
types, no genai keywords, the strict-mode subset), and the genai `Schema` that Gemini parses
proto-strictly. One iterative walk per schema, no copies."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..violations import Severity
from .base import Report, ptr, short

JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
GENAI_TYPES = frozenset({"TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"})
GENAI_ONLY_KEYWORDS = ("nullable", "propertyOrdering")

_MAP_KEYWORDS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_ONE_KEYWORDS = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
                 "unevaluatedProperties", "unevaluatedItems", "additionalItems")
_LIST_KEYWORDS = ("anyOf", "oneOf", "allOf", "prefixItems", "items")
# Composition the strict (Structured Outputs) subset rejects.
_STRICT_UNSUPPORTED = ("allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas")


def subschemas(node: dict[str, Any], pointer: str) -> Iterator[tuple[Any, str]]:
    """The direct child schemas of a JSON Schema node, with their pointers."""
    for key in _MAP_KEYWORDS:
        children = node.get(key)
        if isinstance(children, dict):
            for name, child in children.items():
                yield child, ptr(pointer, key, name)
    for key in _ONE_KEYWORDS:
        child = node.get(key)
        if isinstance(child, dict):
            yield child, ptr(pointer, key)
    for key in _LIST_KEYWORDS:
        children = node.get(key)
        if isinstance(children, list):
            for index, child in enumerate(children):
                yield child, f"{pointer}/{key}/{index}"


def walk(schema: Any, pointer: str) -> Iterator[tuple[Any, str]]:
    """Every schema node (depth first, document order), bounded against cyclic Python objects."""
    stack = [(schema, pointer)]
    seen = 0
    while stack and seen < 100_000:
        node, where = stack.pop()
        seen += 1
        yield node, where
        if isinstance(node, dict):
            stack.extend(reversed(list(subschemas(node, where))))


def check_json_schema(report: Report, schema: Any, pointer: str, rule: str, *, what: str) -> None:
    """Lower-case JSON Schema: flags upper-case / genai types and genai-only keywords.
    `rule` is the dialect's id for this defect (OC-05 in Chat, XL-01 elsewhere)."""
    for node, where in walk(schema, pointer):
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            report.add(rule, where, f"{what}: schema node is {short(node)}, not a JSON Schema object",
                       Severity.ERROR)
            continue
        if "type" in node:
            _check_json_type(report, node["type"], ptr(where, "type"), rule, what)
        for keyword in GENAI_ONLY_KEYWORDS:
            if keyword in node:
                report.add(rule, ptr(where, keyword),
                           f"{what}: genai keyword {keyword!r} is not JSON Schema and is ignored",
                           Severity.WARNING)
        if node.get("format") == "enum":
            report.add(rule, ptr(where, "format"), f"{what}: genai format 'enum' is not a JSON Schema format",
                       Severity.WARNING)
        properties = node.get("properties")
        if "properties" in node and not isinstance(properties, dict):
            report.add(rule, ptr(where, "properties"), f"{what}: properties must be an object",
                       Severity.ERROR)
        required = node.get("required")
        if "required" in node and not (isinstance(required, list) and all(isinstance(r, str) for r in required)):
            report.add(rule, ptr(where, "required"), f"{what}: required must be a list of property names",
                       Severity.ERROR)


def _check_json_type(report: Report, value: Any, where: str, rule: str, what: str) -> None:
    values = value if isinstance(value, list) else [value]
    for index, item in enumerate(values):
        at = f"{where}/{index}" if isinstance(value, list) else where
        if isinstance(item, str) and item in JSON_TYPES:
            continue
        if isinstance(item, str) and item.lower() in JSON_TYPES:
            report.add(rule, at, f"{what}: type {item!r} is upper-case (genai Schema); JSON Schema wants "
                                 f"{item.lower()!r}", Severity.ERROR)
        else:
            report.add(rule, at, f"{what}: type {short(item)} is not a JSON Schema type", Severity.ERROR)


def root_is_object(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "object" or (
        isinstance(schema.get("type"), list) and "object" in schema["type"])


def check_strict(report: Report, schema: Any, pointer: str, rule: str, *, what: str) -> None:
    """The Structured-Outputs subset that strict:true demands (OC-06 / XL-13)."""
    if not isinstance(schema, dict):
        return
    if schema.get("type") != "object":
        report.add(rule, pointer if "type" not in schema else ptr(pointer, "type"),
                   f"{what}: with strict:true the root must be type 'object' (not anyOf or another type)")
    for node, where in walk(schema, pointer):
        if not isinstance(node, dict):
            continue
        for keyword in _STRICT_UNSUPPORTED:
            if keyword in node:
                report.add(rule, ptr(where, keyword), f"{what}: {keyword!r} is not supported with strict:true")
        is_object = node.get("type") == "object" or (
            isinstance(node.get("type"), list) and "object" in node["type"]) or "properties" in node
        if not is_object:
            continue
        if node.get("additionalProperties") is not False:
            report.add(rule, ptr(where, "additionalProperties"),
                       f"{what}: strict:true needs additionalProperties:false on every object")
        properties = node.get("properties") if isinstance(node.get("properties"), dict) else {}
        required = node.get("required") if isinstance(node.get("required"), list) else []
        missing = [name for name in properties if name not in required]
        if missing:
            report.add(rule, ptr(where, "required"),
                       f"{what}: strict:true needs every property in required; missing {', '.join(missing)}")


_GENAI_KEYS = frozenset({
    "type", "format", "title", "description", "nullable", "enum", "items", "properties", "required", "anyOf",
    "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum", "minProperties", "maxProperties",
    "pattern", "default", "example", "propertyOrdering", "additionalProperties", "$ref", "ref",
})


def _camel(key: str) -> str:
    if "_" not in key:
        return key
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def check_genai_schema(report: Report, schema: Any, pointer: str, *, what: str) -> None:
    """Gemini's proto-strict `Schema` (GM-03/GM-04): the keywords it knows, one type per node, no
    "null" type, properties only on OBJECT, enum only on STRING."""
    stack: list[tuple[Any, str, bool]] = [(schema, pointer, True)]
    while stack:
        node, where, is_root = stack.pop()
        if not isinstance(node, dict):
            report.add("GM-04", where, f"{what}: schema node is {short(node)}, not a Schema object")
            continue
        for key, value in node.items():
            name = _camel(key)
            if name in ("$defs", "defs") and is_root:
                if isinstance(value, dict):
                    stack.extend((child, ptr(where, key, sub), False) for sub, child in value.items())
                continue
            if name not in _GENAI_KEYS:
                report.add("GM-04", ptr(where, key), f"{what}: Gemini rejects unknown schema field {key!r} "
                                                    f"(\"Unknown name\")")
        kind = node.get("type")
        if isinstance(kind, list):
            report.add("GM-04", ptr(where, "type"), f"{what}: type arrays are rejected (\"Proto field is not "
                                                     f"repeating\"); use one type plus nullable")
            kind = None
        elif kind is not None and not (isinstance(kind, str) and kind.upper() in GENAI_TYPES):
            report.add("GM-04", ptr(where, "type"), f"{what}: type {short(kind)} is not a genai Type")
            kind = None
        upper = kind.upper() if isinstance(kind, str) else None
        if upper is not None and upper != "OBJECT":
            for key in ("properties", "required"):
                if key in node:
                    report.add("GM-04", ptr(where, key), f"{what}: {key} is only allowed on OBJECT, not {kind}")
        if "enum" in node and upper not in (None, "STRING"):
            report.add("GM-04", ptr(where, "enum"), f"{what}: enum is only allowed on STRING, not {kind}")
        properties = node.get("properties")
        if isinstance(properties, dict):
            for name, child in properties.items():
                stack.append((child, ptr(where, "properties", name), False))
        elif "properties" in node:
            report.add("GM-04", ptr(where, "properties"), f"{what}: properties must be an object")
        items = node.get("items")
        if isinstance(items, dict):
            stack.append((items, ptr(where, "items"), False))
        elif "items" in node:
            report.add("GM-04", ptr(where, "items"), f"{what}: items must be one Schema object")
        any_of = node.get("anyOf", node.get("any_of"))
        key = "anyOf" if "anyOf" in node else "any_of"
        if isinstance(any_of, list):
            for index, child in enumerate(any_of):
                if isinstance(child, dict) and isinstance(child.get("type"), str) and child["type"].upper() == "NULL":
                    report.add("GM-04", f"{where}/{key}/{index}/type",
                               f"{what}: a \"null\" type inside anyOf is rejected; use nullable:true")
                    continue
                stack.append((child, f"{where}/{key}/{index}", False))
