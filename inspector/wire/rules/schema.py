"""Schema checks shared by the dialects: JSON Schema as OpenAI, Anthropic and MCP read it (lower-case
types, no genai keywords, the strict-mode subset). Gemini's own `Schema` dialect lives in
`dialects/gemini/schema.py`. One iterative walk per schema, no copies."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..violations import Severity
from ..pointer import join
from .base import Report, as_dict, as_list, short

JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
GENAI_ONLY_KEYWORDS = ("nullable", "propertyOrdering")

MAP_KEYWORDS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
ONE_KEYWORDS = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
                "unevaluatedProperties", "unevaluatedItems", "additionalItems")
LIST_KEYWORDS = ("anyOf", "oneOf", "allOf", "prefixItems", "items")
# Composition the strict (Structured Outputs) subset rejects.
_STRICT_UNSUPPORTED = ("allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas")


def subschemas(node: dict[str, Any], pointer: str) -> Iterator[tuple[Any, str]]:
    """The direct child schemas of a JSON Schema node, with their pointers."""
    for key in MAP_KEYWORDS:
        children = node.get(key)
        if isinstance(children, dict):
            for name, child in children.items():
                yield child, join(pointer, key, name)
    for key in ONE_KEYWORDS:
        child = node.get(key)
        if isinstance(child, dict):
            yield child, join(pointer, key)
    for key in LIST_KEYWORDS:
        children = node.get(key)
        if isinstance(children, list):
            for index, child in enumerate(children):
                yield child, join(pointer, key, index)


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
            _check_json_type(report, node["type"], join(where, "type"), rule, what)
        for keyword in GENAI_ONLY_KEYWORDS:
            if keyword in node:
                report.add(rule, join(where, keyword),
                           f"{what}: genai keyword {keyword!r} is not JSON Schema and is ignored",
                           Severity.WARNING)
        if node.get("format") == "enum":
            report.add(rule, join(where, "format"), f"{what}: genai format 'enum' is not a JSON Schema format",
                       Severity.WARNING)
        properties = node.get("properties")
        if "properties" in node and not isinstance(properties, dict):
            report.add(rule, join(where, "properties"), f"{what}: properties must be an object",
                       Severity.ERROR)
        required = node.get("required")
        if "required" in node and not (isinstance(required, list) and all(isinstance(r, str) for r in required)):
            report.add(rule, join(where, "required"), f"{what}: required must be a list of property names",
                       Severity.ERROR)


def _check_json_type(report: Report, value: Any, where: str, rule: str, what: str) -> None:
    values = value if isinstance(value, list) else [value]
    for index, item in enumerate(values):
        at = join(where, index) if isinstance(value, list) else where
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


def strict_problem(schema: Any) -> str | None:
    """The first reason OpenAI refuses strict:true on `schema` (OC-06 / XL-13), None when it takes it."""
    report = Report()
    check_strict(report, schema, "", "OC-06", what="schema")
    return report.violations[0].message.removeprefix("schema: ") if report.violations else None


def check_strict(report: Report, schema: Any, pointer: str, rule: str, *, what: str,
                 severity: Severity | None = None) -> None:
    """The Structured-Outputs subset that strict:true demands (OC-06 / XL-13); `severity` overrides
    the rule's where the endpoint does not enforce the subset."""
    if not isinstance(schema, dict):
        return
    if schema.get("type") != "object":
        report.add(rule, pointer if "type" not in schema else join(pointer, "type"),
                   f"{what}: with strict:true the root must be type 'object' (not anyOf or another type)", severity)
    for node, where in walk(schema, pointer):
        if not isinstance(node, dict):
            continue
        for keyword in _STRICT_UNSUPPORTED:
            if keyword in node:
                report.add(rule, join(where, keyword), f"{what}: {keyword!r} is not supported with strict:true",
                           severity)
        is_object = node.get("type") == "object" or (
            isinstance(node.get("type"), list) and "object" in node["type"]) or "properties" in node
        if not is_object:
            continue
        if node.get("additionalProperties") is not False:
            report.add(rule, join(where, "additionalProperties"),
                       f"{what}: strict:true needs additionalProperties:false on every object", severity)
        if "properties" not in node:
            # A tool without arguments still declares them: "object schema missing properties".
            report.add(rule, join(where, "properties"),
                       f"{what}: strict:true needs properties on every object ({{}} when there are none)", severity)
        properties = as_dict(node.get("properties"))
        required = as_list(node.get("required"))
        missing = [name for name in properties if name not in required]
        if missing:
            report.add(rule, join(where, "required"),
                       f"{what}: strict:true needs every property in required; missing {', '.join(missing)}", severity)
