"""Converse's published definition for the spec layer (rules/spec.py): botocore's service model
`bedrock-runtime`, which ships with botocore, read as JSON Schema. Shapes map one to one:
structures to closed objects (their required members required), unions to objects holding exactly
one member, lists and maps to arrays and objects, with the model's length and value bounds; a
Document is any JSON value. The members botocore puts in the URL (modelId) are not the body's."""

from __future__ import annotations

from functools import cache
from typing import Any

_REQUESTS = ("ConverseRequest", "ConverseStreamRequest")
_SCALARS = {"string": "string", "blob": "string", "boolean": "boolean", "integer": "integer", "long": "integer",
            "float": "number", "double": "number", "timestamp": ["string", "number"]}


@cache
def document() -> dict[str, Any]:
    try:
        from botocore.loaders import create_loader  # only the spec layer, on its first Bedrock request, reads it
    except ImportError:  # without the `bedrock` extra: an open definition, which judges nothing
        return {"$defs": {"ConverseRequest": {}}, "requests": {"converse": "ConverseRequest"}}
    shapes: dict[str, Any] = create_loader().load_service_model("bedrock-runtime", "service-2")["shapes"]
    defs = {name: _schema(shape) for name, shape in shapes.items()}
    for name in _REQUESTS:
        members = shapes[name]["members"]
        body = {key: value for key, value in members.items() if value.get("location") != "uri"}
        defs[name] = _schema({**shapes[name], "members": body,
                              "required": [key for key in shapes[name].get("required", ()) if key in body]})
    return {"$defs": defs, "requests": {"converse": "ConverseRequest"}}


def _ref(member: dict[str, Any]) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{member['shape']}"}


def _schema(shape: dict[str, Any]) -> dict[str, Any]:
    kind = shape.get("type")
    if kind == "structure" and shape.get("document"):
        return {}
    if kind == "structure":
        out: dict[str, Any] = {"type": "object", "properties": {key: _ref(value) for key, value in
                                                                 shape.get("members", {}).items()},
                               "additionalProperties": False}
        if shape.get("union"):
            out.update(minProperties=1, maxProperties=1)
        elif shape.get("required"):
            out["required"] = list(shape["required"])
        return out
    if kind == "list":
        out = {"type": "array", "items": _ref(shape["member"])}
        out.update({k: shape[m] for m, k in (("min", "minItems"), ("max", "maxItems")) if m in shape})
        return out
    if kind == "map":
        return {"type": "object", "additionalProperties": _ref(shape["value"])}
    out = {"type": _SCALARS.get(str(kind), "string")}
    if kind == "string":
        if "enum" in shape:
            out["enum"] = list(shape["enum"])
        out.update({k: shape[m] for m, k in (("min", "minLength"), ("max", "maxLength")) if m in shape})
    elif kind in ("integer", "long", "float", "double"):
        out.update({k: shape[m] for m, k in (("min", "minimum"), ("max", "maximum")) if m in shape})
    return out
