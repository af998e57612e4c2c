"""The spec layer: a whole request checked against the provider's own machine-readable definition
(vendored under `wire/specs/`, refreshed by `wire/specs/refresh.py`: OpenAI's OpenAPI document, the
Anthropic and google-genai SDKs' request types), beneath the hand-written rules. A Gemini request is
read in lowerCamelCase (GM-16: both spellings are Gemini's) and reported in the client's spelling.

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
from typing import Any
from collections.abc import Callable, Iterator, Mapping

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from ..dialect import Dialect
from ..dialects import Derived, home, homes
from ..pointer import join, split
from ..profiles import Profile
from ..violations import Severity
from . import tolerance
from .base import Report, short, show_json


@dataclass(frozen=True, slots=True)
class Spec:
    file: str
    request: str  # the document's name for the request ("requests" in the vendored JSON)
    rule: str  # a value or shape the schema does not take
    # A field the request does not define; None where the source does not list every field the
    # API takes (the Anthropic SDK 2.x dropped temperature/top_p/top_k, which the API still reads).
    unknown_rule: str | None
    # null in an optional field the schema does not make nullable: OpenAI reads it as absent (OC-09),
    # a note; for Anthropic nothing is recorded either way, so it is a warning, not an error.
    null_severity: Severity
    # Definitions the hand-written rules judge in full, left out of the validation: Gemini's Schema is
    # GM-04/GM-17's (dialects/gemini/schema.py knows its subset), and validating 50 declarations'
    # schemas again tripled the check's time (tests/bench/check_speed.py).
    owned: tuple[str, ...] = ()
    # Which of the APIs the document serves answers a request with this profile (the document's
    # `only` names the fields each takes alone: Gemini's types serve the Gemini API and Vertex AI; its
    # `versions`, per API, the fields each API version does not take, the version being the path's,
    # `Profile.api_version`).
    api: Callable[[Profile], str] | None = None
    # The definition itself, for a provider whose published definition ships in a library rather than
    # vendored under `wire/specs/` (Bedrock's: botocore's service model); None reads `file` there.
    document: Callable[[], dict[str, Any]] | None = None


# Each dialect's published definition, from its home (`Home.spec`).
SPECS: Mapping[Dialect, Spec] = Derived(lambda: {each.dialect: each.spec for each in homes() if each.spec is not None})
_UNIONS = ("oneOf", "anyOf")

@cache
def _document(filename: str) -> dict[str, Any]:
    return json.loads(resources.files("inspector.wire.specs").joinpath(filename).read_text())


def _definition(spec: Spec) -> dict[str, Any]:
    """The published definition a spec names: its own loader's, or the vendored file's."""
    return spec.document() if spec.document is not None else _document(spec.file)


@cache
def _validator(dialect: Dialect, api: str = "", version: str = "") -> tuple[Draft202012Validator, frozenset[str]]:
    """The compiled validator for a dialect's request as `api` takes it at `version`, and the
    top-level fields the request takes."""
    spec = SPECS[dialect]
    document = _definition(spec)
    patched = _for_api(tolerance.patched(document["$defs"], dialect), document.get("only", {}), api,
                       _absent(document, api, version))
    defs = _inlined({name: {} if name in spec.owned else sub for name, sub in patched.items()})
    root = {"$ref": "#/$defs/" + document["requests"][spec.request], "$defs": defs}
    return Draft202012Validator(root), frozenset(_top_level_fields(defs, root)) | tolerance.undocumented_fields(dialect)


def _absent(document: dict[str, Any], api: str, version: str) -> dict[str, list[str]]:
    """The fields of each definition that `api` at `version` does not take (the document's `versions`,
    from each version's published messages); none where the version is unknown."""
    return document.get("versions", {}).get(api, {}).get(version, {})


def _for_api(defs: dict[str, Any], only: dict[str, dict[str, list[str]]], api: str,
             absent: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """The definitions without the fields that only another API takes, nor those the API's version
    does not take (`absent`)."""
    dropped: dict[str, set[str]] = {}
    for other, per in only.items() if api else ():
        if other != api:
            for name, fields in per.items():
                dropped.setdefault(name, set()).update(fields)
    for name, fields in (absent or {}).items():
        dropped.setdefault(name, set()).update(fields)
    if not dropped:
        return defs
    return {name: {**sub, "properties": {k: v for k, v in sub["properties"].items() if k not in dropped[name]}}
            if name in dropped and isinstance(sub.get("properties"), dict) else sub for name, sub in defs.items()}


def _elsewhere(dialect: Dialect, api: str, version: str, key: str) -> str:
    """What a finding on an unknown field adds when another version of the API, or another API the
    document serves, takes it."""
    document = _definition(SPECS[dialect])

    def missing(named: str) -> set[str]:  # the definitions where that version lacks the field
        return {name for name, fields in _absent(document, api, named).items() if key in fields}

    here = missing(version)
    if here:
        others = [other for other in document["versions"][api] if other != version and not here <= missing(other)]
        if others:
            return f" ({' and '.join(sorted(others))} {'take' if len(others) > 1 else 'takes'} it, {version} does not)"
    for other, per in document.get("only", {}).items():
        if other != api and any(key in fields for fields in per.values()):
            return f" ({other} takes it, {api} does not)"
    return ""


def _inlined(defs: dict[str, Any]) -> dict[str, Any]:
    """The definitions with every reference to a non-recursive definition replaced by the definition
    itself: resolving a $ref costs jsonschema a registry lookup per node visited, which was a third of
    the check's time on a Gemini request with 50 declarations. Recursive ones (Schema) stay references."""
    refs = {name: set(_ref_names(sub)) for name, sub in defs.items()}
    recursive = {name for name in defs if _reaches(name, name, refs)}
    done: dict[str, Any] = {}

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(sub) for sub in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and len(node) == 1 and ref.rsplit("/", 1)[1] not in recursive:
            name = ref.rsplit("/", 1)[1]
            if name not in done:
                done[name] = inline(defs[name])
            return done[name]
        return _optional({key: inline(value) for key, value in node.items()})

    return {name: inline(sub) for name, sub in defs.items()}


def _optional(node: dict[str, Any]) -> dict[str, Any]:
    """pydantic's Optional[X] (`anyOf: [X, {type: null}]`) as X taking null, one level fewer to
    descend for every optional field of the SDK types: `type` gains null, `enum` gains None."""
    union = node.get("anyOf")
    if len(node) != 1 or not isinstance(union, list) or len(union) != 2 or union[1] != {"type": "null"}:
        return node
    kind = union[0].get("type") if isinstance(union[0], dict) else None
    if not isinstance(kind, str) or any(k in union[0] for k in ("$ref", "const", *_UNIONS)):
        return node
    merged = {**union[0], "type": [kind, "null"]}
    if "enum" in merged and None not in merged["enum"]:
        merged["enum"] = [*merged["enum"], None]
    return merged


def _ref_names(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"].rsplit("/", 1)[1]
        for value in node.values():
            yield from _ref_names(value)
    elif isinstance(node, list):
        for value in node:
            yield from _ref_names(value)


def _reaches(start: str, goal: str, refs: dict[str, set[str]]) -> bool:
    seen: set[str] = set()
    pending = list(refs.get(start, ()))
    while pending:
        name = pending.pop()
        if name == goal:
            return True
        if name not in seen:
            seen.add(name)
            pending.extend(refs.get(name, ()))
    return False


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
    api = spec.api(profile) if spec.api is not None else ""
    validator, fields = _validator(dialect, api, profile.api_version)
    taken = [v.pointer for v in report.violations]
    if profile.own_fields & payload.keys():
        payload = {key: value for key, value in payload.items() if key not in profile.own_fields}
    if profile.model_in_path and "model" not in payload:
        payload = {**payload, "model": profile.model}  # the path's: the body carries none
    original = payload
    normalise = home(dialect).normalise
    if normalise is not None:
        try:
            payload = normalise(payload)
        except RecursionError:
            # Nested past Python's limit (orjson reads 1024 levels): the hand-written rules, which walk
            # iteratively, have judged it; the schema cannot be followed that deep either.
            return
    if spec.unknown_rule is not None:
        for key in payload:
            pointer = _spelled(dialect, original, payload, join("", key))
            if key not in fields and not _covered(pointer, taken):
                report.add(spec.unknown_rule, pointer, f"{short(split(pointer)[-1])} is not a field of this request"
                                                       f"{_elsewhere(dialect, api, profile.api_version, key)}")
                taken.append(pointer)  # a closed root (Gemini's) names it again
    try:
        for rule, pointer, message, severity in _schema_findings(payload, original, dialect, api, profile.api_version,
                                                                 validator, taken):
            report.add(rule, pointer, message, severity)
    except RecursionError:
        # jsonschema descends a few frames per level and orjson reads values 1024 levels deep: past
        # Python's limit the rest of the request goes unvalidated, and what was found before stands.
        pass


def _spelled(dialect: Dialect, original: Any, checked: Any, pointer: str) -> str:
    """A pointer into the checked (normalised) payload, in the client's own spelling."""
    spelled = home(dialect).spelled
    return pointer if original is checked or spelled is None else spelled(original, pointer)


def _schema_findings(payload: dict[str, Any], original: dict[str, Any], dialect: Dialect, api: str, version: str,
                     validator: Draft202012Validator, taken: list[str]) -> Iterator[tuple[str, str, str, Severity]]:
    spec = SPECS[dialect]
    said: set[str] = set()
    checked, skipped = _tail(payload)
    for error in validator.iter_errors(checked):
        for leaf in _leaves(error):
            path = list(leaf.absolute_path)
            if skipped and len(path) > 1 and path[0] in _HISTORY:
                path[1] += skipped
            if leaf.validator == "additionalProperties" and spec.unknown_rule is not None \
                    and isinstance(leaf.instance, dict):
                # A closed message (Gemini's proto JSON): each field it does not define, where it sits.
                for key in _extra(leaf):
                    pointer = _spelled(dialect, original, payload, join("", *path, key))
                    if not _covered(pointer, taken) and pointer not in said:
                        said.add(pointer)
                        yield spec.unknown_rule, pointer, f"{short(split(pointer)[-1])} is not a field here" \
                                                          f"{_elsewhere(dialect, api, version, key)}", Severity.ERROR
                continue
            pointer = _spelled(dialect, original, payload, join("", *path))
            if _covered(pointer, taken):
                continue
            message = _message(leaf)
            if _tolerated(dialect, leaf, pointer, path, message, payload):
                continue
            severity = _severity(leaf, validator, spec.null_severity)
            if severity is not None and pointer not in said:  # one finding per place (type and enum both fail)
                said.add(pointer)
                yield spec.rule, pointer, message, severity


def _tolerated(dialect: Dialect, leaf: ValidationError, pointer: str, path: list[Any], message: str,
               payload: dict[str, Any]) -> bool:
    """What the tolerance table says the endpoint takes here, though the definition does not."""
    value = leaf.instance
    if tolerance.enum_numbers(dialect) and isinstance(value, int) and not isinstance(value, bool) \
            and leaf.validator in ("type", "enum") and isinstance(leaf.schema, dict) and "enum" in leaf.schema:
        return True
    if leaf.validator == "enum" and path and isinstance(leaf.schema, dict) \
            and tolerance.media_type_reads(dialect, path[-1], value, leaf.schema.get("enum")):
        return True
    items = payload.get(path[0]) if path else None
    item = items[path[1]] if isinstance(items, list) and len(path) > 1 and isinstance(path[1], int) \
        and path[1] < len(items) else None
    return tolerance.history_accepts(dialect, pointer, leaf.validator, message, item)


def _extra(error: ValidationError) -> list[str]:
    """The fields an additionalProperties: false rejected."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    known = schema.get("properties", {})
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    return [key for key in error.instance if key not in known and not any(p.search(key) for p in patterns)]


# Validating a union per history item costs ~0.5 ms (265 ms/MB on a 505-message conversation, over
# the 50 ms/MB budget of tests/bench/check_speed.py): only the newest items are validated, since
# the earlier ones were checked when the client first sent them.
_HISTORY = ("messages", "input", "contents")
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
