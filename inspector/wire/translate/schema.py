"""Tool parameter schemas between genai `Schema` (OpenAPI 3.0 subset, upper-case types) and JSON
Schema (XL-01). Types are changed only on schema nodes, never inside `enum`/`default` values."""

from __future__ import annotations

from typing import Any

from .. import jsonsafe
from ..pointer import join
from .model import Loss

_GENAI_TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}
# Keywords whose values are schemas / maps of schemas / lists of schemas.
_SUB_SCHEMA = ("items", "additionalProperties", "not")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def genai_to_json_schema(schema: Any, src: str, losses: list[Loss]) -> dict[str, Any]:
    """genai Schema -> JSON Schema: lower-case types, `nullable` -> a union with null,
    `propertyOrdering` and `format:"enum"` dropped, `example` -> `examples`."""
    if not isinstance(schema, dict):
        return {}
    out: dict[str, Any] = {}
    nullable = schema.get("nullable") is True
    for key, value in schema.items():
        here = join(src, key)
        if key == "type":
            if isinstance(value, str):
                lowered = value.lower()
                if value.upper() == "TYPE_UNSPECIFIED":
                    losses.append(Loss(here, None, "dropped", "TYPE_UNSPECIFIED has no JSON Schema type", "XL-01"))
                    continue
                if value != lowered:
                    losses.append(Loss(here, None, "converted",
                                       f"genai type {value!r} written as JSON Schema {lowered!r}", "XL-01"))
                out["type"] = lowered
            else:
                out["type"] = value
        elif key == "nullable":
            if value is not True and value is not False:
                out[key] = value
        elif key == "propertyOrdering":
            losses.append(Loss(here, None, "dropped", "propertyOrdering has no JSON Schema equivalent", "XL-01"))
        elif key == "format" and value == "enum":
            losses.append(Loss(here, None, "dropped", "format \"enum\" is implied by enum in JSON Schema", "XL-01"))
        elif key == "example":
            out["examples"] = [value]
        elif key in _SUB_SCHEMA and isinstance(value, dict):
            out[key] = genai_to_json_schema(value, here, losses)
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: genai_to_json_schema(sub, join(here, name), losses) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [genai_to_json_schema(sub, join(here, i), losses) for i, sub in enumerate(value)]
        else:
            out[key] = value
    if nullable:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        elif "anyOf" in out:
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
        losses.append(Loss(join(src, "nullable"), None, "converted", "nullable written as a union with null",
                           "XL-01"))
    return out


# Keywords genai `Schema` understands; anything else is rejected by the proto parser (GM-04).
_GENAI_KEYS = {"type", "format", "title", "description", "nullable", "enum", "items", "properties",
               "required", "anyOf", "minItems", "maxItems", "minLength", "maxLength", "minimum",
               "maximum", "minProperties", "maxProperties", "pattern", "default", "example",
               "propertyOrdering"}


def needs_json_schema(schema: Any) -> bool:
    """Whether a JSON Schema uses references Gemini's `parameters` cannot carry; such schemas go
    out as `parametersJsonSchema` unchanged."""
    if isinstance(schema, dict):
        return any(k in schema for k in ("$ref", "$defs", "definitions")) or any(
            needs_json_schema(v) for v in schema.values())
    if isinstance(schema, list):
        return any(needs_json_schema(v) for v in schema)
    return False


def json_schema_to_genai(schema: Any, src: str, target: str, losses: list[Loss]) -> dict[str, Any]:
    """JSON Schema -> genai Schema: upper-case types, type unions with null -> `nullable`, `const`
    -> a one-value enum, keywords the proto parser rejects dropped with a report."""
    if not isinstance(schema, dict):
        return {}
    out: dict[str, Any] = {}
    nullable = False
    for key, value in schema.items():
        here, there = join(src, key), join(target, key)
        if key == "type":
            kinds = value if isinstance(value, list) else [value]
            named = [k for k in kinds if isinstance(k, str) and k != "null"]
            nullable = nullable or "null" in kinds
            if len(named) == 1:
                out["type"] = named[0].upper()
            elif named:
                out["anyOf"] = [{"type": k.upper()} for k in named]
                losses.append(Loss(here, join(target, "anyOf"), "converted",
                                   "a type list is not a repeated field in genai; written as anyOf", "XL-01"))
            elif nullable:
                out["type"] = "NULL"
        elif key == "const":
            out["enum"] = [value]
            losses.append(Loss(here, join(target, "enum"), "converted", "genai has no const; written as a one-value enum",
                               "XL-01"))
        elif key == "examples" and isinstance(value, list) and value:
            out["example"] = value[0]
        elif key == "items" and isinstance(value, dict):
            out["items"] = json_schema_to_genai(value, here, there, losses)
        elif key == "properties" and isinstance(value, dict):
            out["properties"] = {name: json_schema_to_genai(sub, join(here, name), join(there, name), losses)
                                 for name, sub in value.items()}
        elif key in ("anyOf", "oneOf") and isinstance(value, list):
            branches = []
            for i, sub in enumerate(value):
                if isinstance(sub, dict) and sub.get("type") == "null" and len(sub) == 1:
                    nullable = True
                    continue
                branches.append(json_schema_to_genai(sub, join(here, i), join(target, "anyOf", len(branches)), losses))
            if key == "oneOf":
                losses.append(Loss(here, join(target, "anyOf"), "converted", "genai has no oneOf; written as anyOf",
                                   "XL-01"))
            if len(branches) == 1 and not out.get("type"):
                out.update(branches[0])
            elif branches:
                out["anyOf"] = branches
        elif key in _GENAI_KEYS:
            out[key] = value
        else:
            losses.append(Loss(here, None, "dropped", f"Gemini's Schema rejects the keyword {key!r}", "XL-01"))
    if nullable:
        out["nullable"] = True
    if isinstance(out.get("enum"), list):
        # Gemini accepts enum only on STRING (GM-04): other values become strings.
        if out.get("type") not in (None, "STRING") or not all(isinstance(v, str) for v in out["enum"]):
            losses.append(Loss(join(src, "enum"), join(target, "enum"), "converted",
                               "Gemini allows enum only on STRING; values written as strings", "XL-01"))
        out["type"] = "STRING"
        out["enum"] = [v if isinstance(v, str) else _text(v) for v in out["enum"]]
    return out


def _text(value: Any) -> str:
    return jsonsafe.dumps(value).decode()

