"""Gemini field spellings (GM-16). Gemini's REST JSON follows the proto JSON mapping, so every field is
accepted in lowerCamelCase and in snake_case, and real clients send both (google-genai 2.x writes
`parameters_json_schema`, LiteLLM writes `function_call` parts and `max_output_tokens`). Readers either
ask for one field in both spellings (`field`) or read a copy with every field in lowerCamelCase
(`normalise`) and map pointers back to the client's spelling (`spelled`)."""

from __future__ import annotations

from typing import Any

from ...pointer import join, split

# Fields whose values are data, not proto messages: their keys are the client's, never respelled.
_DATA = frozenset({"args", "response", "parametersJsonSchema", "responseJsonSchema", "enum", "default", "example",
                   "labels", "partialArgs", "jsonSchema"})
# Fields whose values map data keys (property names) to messages (schemas).
_MAPS = frozenset({"properties", "defs", "$defs"})
# Lists of messages. Gemini's JSON parser also takes one message where a list is declared (recorded:
# `tools` as one {functionDeclarations} object; Vertex's own REST samples send `contents` and `parts`
# that way); `normalise` and `items` read it as a list of one, and `spelled` maps pointers back.
LISTS = frozenset({"contents", "parts", "tools", "functionDeclarations", "safetySettings"})


def camel(key: str) -> str:
    """`function_call` -> `functionCall`; camelCase and `$`-keywords are unchanged."""
    if "_" not in key or key.startswith(("_", "$")):
        return key
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)


def field(node: dict[str, Any], name: str) -> tuple[str, Any]:
    """(the key actually used, its value) for the camelCase field `name` in either spelling; the
    camelCase key and None when it is absent."""
    if name in node:
        return name, node[name]
    other = snake(name)
    if other in node:
        return other, node[other]
    return name, None


def items(value: Any, pointer: str) -> list[tuple[str, Any]]:
    """(pointer, message) for each message of a list field (LISTS) as Gemini's parser reads it: the
    list's items, or the one message written in its place, at the field's own pointer."""
    if isinstance(value, list):
        return [(join(pointer, index), item) for index, item in enumerate(value)]
    return [(pointer, value)] if isinstance(value, dict) else []


def whole(value: Any) -> bool:
    """Whether a list field (LISTS) is absent, one message, or a list of messages: what it declares or
    holds can be read (base.readable)."""
    return value is None or isinstance(value, dict) or (isinstance(value, list)
                                                        and all(isinstance(item, dict) for item in value))


def normalise(value: Any) -> Any:
    """`value` with every proto field name in lowerCamelCase; parts that need no respelling are
    shared, and a value already in camelCase comes back as the very same object. When a message
    carries a field in both spellings the camelCase one wins (the rules report the pair, GM-16)."""
    if isinstance(value, list):
        items = [normalise(item) for item in value]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    changed = False
    for key, item in value.items():
        name = camel(key)
        if name != key:
            changed = True
            if name in value:
                continue
        if name in _DATA:
            new = item
        elif name in LISTS and isinstance(item, dict):
            new = [normalise(item)]
        elif name in _MAPS and isinstance(item, dict):
            subs = {sub: normalise(schema) for sub, schema in item.items()}
            new = item if all(subs[sub] is schema for sub, schema in item.items()) else subs
        else:
            new = normalise(item)
        changed = changed or new is not item
        out[name] = new
    return out if changed else value


def spelled(original: Any, pointer: str) -> str:
    """`pointer`, written against `normalise(original)`, in the spelling (and list-or-single shape)
    `original` uses."""
    node = original
    tokens: list[str | int] = []
    for token in split(pointer):
        if isinstance(node, dict) and token == "0" and token not in node:
            continue  # a single message read as a list of one: the client's pointer has no index
        if isinstance(node, dict):
            key = token if token in node else snake(token) if snake(token) in node else token
            tokens.append(key)
            node = node.get(key)
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            tokens.append(token)
            node = node[int(token)]
        else:
            tokens.append(token)
            node = None
    return join("", *tokens)


def doubled(value: Any, pointer: str = "") -> list[tuple[str, str]]:
    """(pointer of the snake_case key, its camelCase twin) for every field written in both spellings
    in one message, outside data values."""
    found: list[tuple[str, str]] = []
    stack = [(value, pointer)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, list):
            stack.extend((item, join(where, i)) for i, item in reversed(list(enumerate(node))))
            continue
        if not isinstance(node, dict):
            continue
        children: list[tuple[Any, str]] = []
        for key, item in node.items():
            name = camel(key)
            if name != key and name in node:
                found.append((join(where, key), name))
            if name in _MAPS and isinstance(item, dict):
                children.extend((schema, join(where, key, sub)) for sub, schema in item.items())
            elif name not in _DATA:
                children.append((item, join(where, key)))
        stack.extend(reversed(children))
    return found
