"""The spec layer: a whole request checked against the provider's own machine-readable definition
(vendored under `wire/specs/`, refreshed by `wire/specs/refresh.py`: OpenAI's OpenAPI document, the
Anthropic SDK's request types), beneath the hand-written rules.

The hand-written rules know more than the schema (why a provider rejects, where it is lenient), so
a schema error is reported only where no hand-written finding already sits at or above its place.
Unions are followed the way the provider reads them: a branch whose discriminator (`type`, `role`)
does not match is not what the client meant, so the error reported is the one inside the branch
that was meant, or, when no branch was, which discriminator values the place takes."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Callable, Iterator

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from ..dialect import Dialect
from ..pointer import join
from ..profiles import Profile
from ..violations import Severity
from .base import Report, short, show_json


@dataclass(frozen=True, slots=True)
class _Spec:
    file: str
    request: str  # the document's name for the request ("requests" in the vendored JSON)
    rule: str  # a value or shape the schema does not take
    # A field the request does not define; None where the source does not list every field the
    # API takes (the Anthropic SDK 2.x dropped temperature/top_p/top_k, which the API still reads).
    unknown_rule: str | None
    # null in an optional field the schema does not make nullable: OpenAI reads it as absent (OC-09),
    # a note; for Anthropic nothing is recorded either way, so it is a warning, not an error.
    null_severity: Severity


SPECS = {
    Dialect.OPENAI_CHAT: _Spec("openai.json", "openai-chat", "OC-28", "OC-29", Severity.INFO),
    Dialect.OPENAI_RESPONSES: _Spec("openai.json", "openai-responses", "OR-13", "OR-14", Severity.INFO),
    Dialect.ANTHROPIC: _Spec("anthropic.json", "anthropic", "AN-14", None, Severity.WARNING),
}
_UNIONS = ("oneOf", "anyOf")

@dataclass(frozen=True, slots=True)
class _Lenient:
    """A place where the provider accepts what its definition does not: the schema keyword that
    failed, the message's pattern, and what the enclosing history item must be (None: any)."""

    dialect: Dialect
    pointer: re.Pattern[str]
    keyword: str
    message: re.Pattern[str]
    item: Callable[[dict[str, Any]], bool] | None = None


# Seen on requests api.openai.com accepted, in the recorded corpus (tests/bench/real_traffic.py).
_LENIENT = [
    # An assistant message's output_text/refusal parts replayed as an EasyInputMessage, whose schema
    # lists only input parts (18 requests, pydantic-ai's among them).
    _Lenient(Dialect.OPENAI_RESPONSES, re.compile(r"/input/\d+/content/\d+"), "oneOf",
             re.compile(r'^type "(output_text|refusal)"'), lambda item: item.get("role") == "assistant"),
    # An image generation call replayed by its id and type alone, without the status and result the
    # schema requires (2 requests).
    _Lenient(Dialect.OPENAI_RESPONSES, re.compile(r"/input/\d+"), "required", re.compile(r"^'(status|result)' "),
             lambda item: item.get("type") == "image_generation_call" and "id" in item),
    # Function tools without strict, which the schema requires (nullable) and the API defaults (14).
    _Lenient(Dialect.OPENAI_RESPONSES, re.compile(r"/tools/\d+"), "required", re.compile(r"^'strict' ")),
]


def _lenient(dialect: Dialect, pointer: str, path: list[Any], keyword: str, message: str,
             payload: dict[str, Any]) -> bool:
    for case in _LENIENT:
        if case.dialect is dialect and case.keyword == keyword and case.pointer.fullmatch(pointer) \
                and case.message.search(message):
            if case.item is None:
                return True
            items = payload.get(path[0]) if path else None
            item = items[path[1]] if isinstance(items, list) and len(path) > 1 and path[1] < len(items) else None
            if isinstance(item, dict) and case.item(item):
                return True
    return False


@cache
def _document(filename: str) -> dict[str, Any]:
    return json.loads(resources.files("inspector.wire.specs").joinpath(filename).read_text())


@cache
def _validator(dialect: Dialect) -> tuple[Draft202012Validator, frozenset[str]]:
    """The compiled validator for a dialect's request, and the top-level fields the request takes."""
    spec = SPECS[dialect]
    document = _document(spec.file)
    root = {"$ref": "#/$defs/" + document["requests"][spec.request], "$defs": document["$defs"]}
    return Draft202012Validator(root), frozenset(_top_level_fields(document["$defs"], root))


def _top_level_fields(defs: dict[str, Any], schema: dict[str, Any]) -> Iterator[str]:
    if "$ref" in schema:
        yield from _top_level_fields(defs, defs[schema["$ref"].rsplit("/", 1)[1]])
    yield from schema.get("properties", {})
    for part in schema.get("allOf", ()):
        yield from _top_level_fields(defs, part)


def check_request(payload: Any, dialect: Dialect, profile: Profile, report: Report) -> None:
    """Only where the endpoint is the one the definition describes: compatible servers and routes
    to other providers take their own variants (extra fields, Mistral's chunks, router tools), which
    recorded traffic shows them accepting."""
    spec = SPECS.get(dialect)
    if spec is None or not isinstance(payload, dict) or not (profile.published_schema and profile.openai_limits):
        return
    validator, fields = _validator(dialect)
    taken = [v.pointer for v in report.violations]
    if spec.unknown_rule is not None:
        for key in payload:
            if key not in fields and not _covered(join("", key), taken):
                report.add(spec.unknown_rule, join("", key), f"{short(key)} is not a field of this request")
    try:
        for pointer, message, severity in _schema_findings(payload, dialect, validator, taken):
            report.add(spec.rule, pointer, message, severity)
    except RecursionError:
        # jsonschema descends a few frames per level and orjson reads values 1024 levels deep: past
        # Python's limit the rest of the request goes unvalidated, and what was found before stands.
        pass


def _schema_findings(payload: dict[str, Any], dialect: Dialect, validator: Draft202012Validator,
                     taken: list[str]) -> Iterator[tuple[str, str, Severity]]:
    said: set[str] = set()
    checked, skipped = _tail(payload)
    for error in validator.iter_errors(checked):
        for leaf in _leaves(error):
            path = list(leaf.absolute_path)
            if skipped and len(path) > 1 and path[0] in _HISTORY:
                path[1] += skipped
            pointer = join("", *path)
            if _covered(pointer, taken):
                continue
            message = _message(leaf)
            if _lenient(dialect, pointer, path, leaf.validator, message, payload):
                continue
            severity = _severity(leaf, validator, SPECS[dialect].null_severity)
            if severity is not None and pointer not in said:  # one finding per place (type and enum both fail)
                said.add(pointer)
                yield pointer, message, severity


# Validating a union per history item costs ~0.5 ms (265 ms/MB on a 505-message conversation, over
# the 50 ms/MB budget of tests/bench/check_speed.py): only the newest items are validated, since
# the earlier ones were checked when the client first sent them.
_HISTORY = ("messages", "input")
_TAIL = 24


def _tail(payload: dict[str, Any]) -> tuple[dict[str, Any], int]:
    for key in _HISTORY:
        items = payload.get(key)
        if isinstance(items, list) and len(items) > _TAIL:
            return {**payload, key: items[-_TAIL:]}, len(items) - _TAIL
    return payload, 0


def _covered(pointer: str, taken: list[str]) -> bool:
    """A hand-written finding at this place, one that contains it, or one inside it (the schema
    reports a failed union or a missing field on the enclosing object) explains it better. One on an
    object's tag (type, role) covers the whole object: the schema's view of it follows a wrong tag."""
    for t in taken:
        owner, _, tag = t.rpartition("/")
        if tag in ("type", "role") and owner and (pointer == owner or pointer.startswith(owner + "/")):
            return True
        if pointer == t or (t and pointer.startswith(t + "/")) or (pointer and t.startswith(pointer + "/")):
            return True
    return False


def _mismatched(errors: list[ValidationError]) -> bool:
    """The branch's discriminator (type, role, or a one-value field) or its basic type does not
    match: the client did not mean this branch. Other enum fields (status) are values, not tags."""
    return any((len(e.relative_path) == 1 and e.instance is not None
                and ((e.validator in ("enum", "const", *_UNIONS) and e.relative_path[0] in ("type", "role"))
                     or e.validator == "const" or (e.validator == "enum" and len(e.validator_value) == 1)))
               or (e.validator == "type" and not e.relative_path) for e in errors)


def _leaves(error: ValidationError) -> list[ValidationError]:
    if error.validator not in _UNIONS or not error.context:
        return [error]
    branches: dict[Any, list[ValidationError]] = defaultdict(list)
    for sub in error.context:
        branches[sub.relative_schema_path[0]].append(sub)
    meant = [errors for errors in branches.values() if not _mismatched(errors)]
    if not meant:
        return [error]
    # Of several branches that fit the discriminator, the one that got furthest into the value.
    best = max(meant, key=lambda errors: (max(len(e.absolute_path) for e in errors), -len(errors)))
    return [leaf for sub in best for leaf in _leaves(sub)]


def _severity(error: ValidationError, validator: Draft202012Validator, null: Severity) -> Severity | None:
    if error.validator == "oneOf" and not error.context:
        # Valid under more than one branch: the published document's unions overlap, the API does not
        # reject such values (it reads them as the first match).
        return None
    if error.instance is None and error.validator in ("type", "enum", *_UNIONS) and not _required(error, validator):
        return null
    return Severity.ERROR


def _required(error: ValidationError, validator: Draft202012Validator) -> bool:
    """Whether the field the error sits on is required by the object schema that declares it."""
    if not error.absolute_path or not isinstance(error.absolute_path[-1], str):
        return True
    node: Any = validator.schema
    parent: Any = None
    for token in error.absolute_schema_path:
        while isinstance(node, dict) and "$ref" in node and token != "$ref":
            node = validator.schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
        if token == "$ref":
            continue
        if token == "properties":
            parent = node
        node = node[token] if isinstance(node, (dict, list)) else None
        if node is None:
            return True
    return parent is None or error.absolute_path[-1] in parent.get("required", ())


def _message(error: ValidationError) -> str:
    kind, expected, value = error.validator, error.validator_value, error.instance
    if kind == "type":
        wanted = " or ".join(expected) if isinstance(expected, list) else expected
        return f"{show_json(value)} is not of type {wanted}"
    if kind == "enum":
        return f"{show_json(value)} is not one of {show_json(expected, 120)}"
    if kind == "const":
        return f"{show_json(value)} is not {expected!r}"
    if kind in ("minimum", "exclusiveMinimum"):
        return f"{show_json(value)} is below the minimum {expected}" + (" (exclusive)" if kind.startswith("ex") else "")
    if kind in ("maximum", "exclusiveMaximum"):
        return f"{show_json(value)} is above the maximum {expected}" + (" (exclusive)" if kind.startswith("ex") else "")
    if kind in ("minItems", "maxItems", "minLength", "maxLength"):
        bound = "at least" if kind.startswith("min") else "at most"
        unit = "items" if kind.endswith("Items") else "characters"
        return f"has {len(value)} {unit}; the schema takes {bound} {expected}"
    if kind == "pattern":
        return f"{show_json(value)} does not match {expected}"
    if kind in _UNIONS:
        return _union_message(error)
    return error.message if len(error.message) <= 160 else error.message[:159] + "…"


def _union_message(error: ValidationError) -> str:
    """No branch's discriminator matches: say which values the place takes."""
    allowed: dict[str, list[Any]] = defaultdict(list)
    for sub in error.context:
        if sub.validator in ("enum", "const") and len(sub.relative_path) == 1:
            values = sub.validator_value if sub.validator == "enum" else [sub.validator_value]
            field = sub.relative_path[0]
            allowed[field].extend(v for v in values if v not in allowed[field])
    if isinstance(error.instance, dict):
        for field, values in allowed.items():
            if field in error.instance:
                return (f"{field} {show_json(error.instance[field])} is not accepted here "
                        f"(takes {show_json(values, 120)})")
    types = [t for sub in error.context if sub.validator == "type" and not sub.relative_path
             for t in (sub.validator_value if isinstance(sub.validator_value, list) else [sub.validator_value])]
    if types:
        return f"{show_json(error.instance)} is not of type {' or '.join(dict.fromkeys(types))}"
    return f"{show_json(error.instance)} matches none of the shapes this place takes"
