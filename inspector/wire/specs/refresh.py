"""Refresh the vendored request schemas the spec layer (`wire/rules/spec.py`) validates against.

Run by hand when a provider publishes a new definition; the product reads only the JSON it writes:

    .venv/bin/python -m inspector.wire.specs.refresh --openapi openai-openapi/openapi.yaml \\
        --commit f85dbe223d40 --date 2026-08-21

OpenAI: the request bodies of `POST /chat/completions` and `POST /responses` from openai-openapi's
`openapi.yaml`, with every component they reach. It is OpenAPI 3.1 but still carries 3.0-style
`nullable: true`, which is rewritten into a union with null so a JSON Schema 2020-12 validator reads
it as OpenAI means it. Documentation (descriptions, examples, x-* extensions, discriminator hints) is
dropped: the validator ignores it and it is most of the bytes. Needs PyYAML (the test extra).

Anthropic and Gemini: from their official SDKs' types (`… refresh anthropic`, `… refresh gemini`, with
the SDK installed: the frameworks extra has google-genai). Google publishes no request schema beside
its discovery document, which is not vendored anywhere we can fetch; google-genai's pydantic types are
the same messages, read in lowerCamelCase (the proto JSON names) and closed to unknown fields as
Gemini's JSON parser is ("Unknown name …: Cannot find field"). The fields each API version does not
take (`versions`, see _GEMINI_VERSIONS) need google-ai-generativelanguage installed and the aiplatform
discovery documents: `… refresh gemini --discovery DIR/aiplatform.v1.json DIR/aiplatform.v1beta1.json`
(DIR: google-api-python-client's googleapiclient/discovery_cache/documents)."""

from __future__ import annotations

import argparse
import json
import shutil
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
OPENAI_JSON = HERE / "openai.json"
ANTHROPIC_JSON = HERE / "anthropic.json"
GEMINI_JSON = HERE / "gemini.json"
GEMINI_LICENSE = HERE / "GEMINI-LICENSE"
OPENAI_LICENSE = HERE / "OPENAI-LICENSE"
ANTHROPIC_LICENSE = HERE / "ANTHROPIC-LICENSE"

# The request each dialect validates: the path's request body component.
OPENAI_REQUESTS = {"openai-chat": ("/chat/completions", "post"), "openai-responses": ("/responses", "post")}

# The keywords kept, by where their values hold schemas; everything else is documentation.
SCHEMA_MAPS = ("properties", "patternProperties")
SCHEMA_ONE = ("items", "additionalProperties", "not", "propertyNames", "contains")
SCHEMA_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_VALUES = ("type", "enum", "const", "required", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
           "minItems", "maxItems", "minLength", "maxLength", "pattern", "minProperties", "maxProperties",
           "uniqueItems", "multipleOf")
KEYWORDS = frozenset({"$ref", *SCHEMA_MAPS, *SCHEMA_ONE, *SCHEMA_LIST, *_VALUES})
_COMPONENT = "#/components/schemas/"  # OpenAPI
_DEFS = "#/$defs/"  # JSON Schema (pydantic)


def _component(ref: str, prefix: str = _COMPONENT) -> str:
    if not ref.startswith(prefix):
        raise ValueError(f"unsupported $ref {ref!r}: only local {prefix} schemas are vendored")
    return ref[len(prefix):]


def convert(node: Any, prefix: str = _COMPONENT) -> Any:
    """One schema (OpenAPI's or pydantic's) as JSON Schema 2020-12: validation keywords only, refs
    into $defs, and nullable rewritten into a union with null."""
    if isinstance(node, bool):
        return node
    if not isinstance(node, dict):
        raise ValueError(f"not a schema: {node!r}")
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref":
            out["$ref"] = _DEFS + _component(value, prefix)
        elif key in SCHEMA_MAPS:
            out[key] = {name: convert(sub, prefix) for name, sub in value.items()}
        elif key in SCHEMA_ONE:
            out[key] = convert(value, prefix)
        elif key in SCHEMA_LIST:
            out[key] = [convert(sub, prefix) for sub in value]
        elif key in _VALUES:
            out[key] = value
    if node.get("nullable") is True:
        out = _nullable(out)
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str) and "$ref" not in schema and not any(k in schema for k in SCHEMA_LIST):
        schema = {**schema, "type": [kind, "null"]}
        if "enum" in schema and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
        return schema
    return {"anyOf": [schema, {"type": "null"}]}


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [_component(node["$ref"])] if isinstance(node.get("$ref"), str) else []
        for key, value in node.items():
            if key != "$ref":
                found.extend(_refs(value))
        return found
    if isinstance(node, list):
        return [ref for value in node for ref in _refs(value)]
    return []


def extract(openapi: dict[str, Any], requests: dict[str, tuple[str, str]], provenance: dict[str, str]) -> dict[str, Any]:
    """The vendored document: provenance, the root component per dialect, and every component the
    roots reach (converted), sorted so a refresh diff shows only real changes."""
    schemas = openapi["components"]["schemas"]
    roots: dict[str, str] = {}
    for dialect, (path, method) in requests.items():
        body = openapi["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]
        roots[dialect] = _component(body["$ref"])
    reached: set[str] = set()
    pending = list(roots.values())
    while pending:
        name = pending.pop()
        if name not in reached:
            reached.add(name)
            pending.extend(_refs(schemas[name]))
    return {"provenance": provenance, "requests": roots,
            "$defs": {name: convert(schemas[name]) for name in sorted(reached)}}


def anthropic_document(schema: dict[str, Any], provenance: dict[str, str]) -> dict[str, Any]:
    """The vendored document from pydantic's JSON Schema of the SDK's request TypedDict."""
    defs = {name: convert(sub, _DEFS) for name, sub in schema.get("$defs", {}).items()}
    root = convert({key: value for key, value in schema.items() if key != "$defs"}, _DEFS)
    # The non-streaming TypedDict pins stream to false; the endpoint takes both.
    root["properties"]["stream"] = {"type": "boolean"}
    defs["MessageCreateParams"] = root
    return {"provenance": provenance, "requests": {"anthropic": "MessageCreateParams"},
            "$defs": dict(sorted(defs.items()))}


def _anthropic_sdk() -> tuple[dict[str, Any], dict[str, str], str]:
    import anthropic
    from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming
    from pydantic import TypeAdapter

    # The SDK moved from MIT to Apache-2.0 in 2.0.0: the licence is copied from the installed package.
    licence = next(f for f in metadata.distribution("anthropic").files or () if f.name == "LICENSE")
    provenance = {"source": "anthropic-sdk-python " + anthropic.__version__ + ": anthropic.types.beta."
                            "MessageCreateParamsNonStreaming (pydantic TypeAdapter.json_schema)",
                  "version": anthropic.__version__, "license": "Apache-2.0 (ANTHROPIC-LICENSE)"}
    return TypeAdapter(MessageCreateParamsNonStreaming).json_schema(), provenance, licence.read_text()


# GenerateContentConfig fields google-genai moves out of generationConfig (to the request's top level)
# or keeps to itself; the rest of it, with GenerationConfig's own fields, is the wire's generationConfig.
_GEMINI_TOP = ("system_instruction", "safety_settings", "tools", "tool_config", "labels", "cached_content",
               "service_tier", "store", "continuation_token", "model_armor_config", "generation_output_config")
_GEMINI_RENAMED = {"generation_output_config": "output_config"}  # the wire's name for it
_GEMINI_SDK_ONLY = ("http_options", "should_return_http_response", "automatic_function_calling",
                    "automatic_continuation")


def gemini_document(schema: dict[str, Any], provenance: dict[str, str],
                    only: dict[str, dict[str, list[str]]]) -> dict[str, Any]:
    """The vendored document from pydantic's JSON Schema (by alias: lowerCamelCase) of the request
    assembled from google-genai's types. Schema's references travel as `$ref`/`$defs` on the wire
    (the SDK's `ref`/`defs` fields are its own spellings of them), so both are taken. `only` names,
    per API, the fields the SDK documents as that API's alone (`_gemini_only`)."""
    document = anthropic_document(schema, provenance)
    document["only"] = only
    document["requests"] = {"gemini": "GenerateContentRequest"}
    defs = document["$defs"]
    defs["GenerateContentRequest"] = defs.pop("MessageCreateParams")
    del defs["GenerateContentRequest"]["properties"]["stream"]  # streaming is in the path
    # Gemini's JSON parser takes one message where a list of them is declared (recorded: `tools` as one
    # {functionDeclarations} object, accepted by generativelanguage.googleapis.com).
    # Its enum values are read in either case (recorded: Schema types "object", "string" accepted).
    for name, sub in defs.items():
        defs[name] = _one_for_many(sub)
    schema_def = defs["Schema"]["properties"]
    schema_def["$ref"] = {"type": "string"}
    schema_def["$defs"] = {"type": "object", "additionalProperties": {"$ref": _DEFS + "Schema"}}
    return document


def _one_for_many(node: Any) -> Any:
    """Gemini's leniencies, written into its schema: one message for a list, enums in lower case."""
    if isinstance(node, list):
        return [_one_for_many(sub) for sub in node]
    if not isinstance(node, dict):
        return node
    node = {key: _one_for_many(value) for key, value in node.items()}
    enum = node.get("enum")
    if isinstance(enum, list) and all(isinstance(value, str) for value in enum):
        node["enum"] = [*enum, *(value.lower() for value in enum if value.lower() not in enum)]
    items = node.get("items")
    if node.get("type") == "array" and isinstance(items, dict) and "$ref" in items:
        return {"anyOf": [node, items]}
    return node


# google-genai's types serve both Google APIs and say in a field's description when one of them does
# not take it; the API that does not answers 400 "Unknown name" (the spec's unknown-field rule).
_GEMINI_APIS = {"Vertex AI": "not supported in Gemini API", "the Gemini API": "not supported in Vertex AI"}
# The SDK's name for Vertex AI in newer releases.
_VERTEX_ALIASES = ("not supported in Gemini Enterprise Agent Platform",)


def _gemini_only(defs: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    """Per API, the fields (by definition, wire spelling) only that API takes, from the descriptions
    of the google-genai types behind the document's definitions."""
    from google.genai import types
    from pydantic.alias_generators import to_camel

    only: dict[str, dict[str, list[str]]] = {api: {} for api in _GEMINI_APIS}
    for name in sorted(defs):
        # The wire's generationConfig merges the SDK's GenerationConfig and GenerateContentConfig, whose
        # other fields are the request's top level.
        sources = {"GenerationConfig": ("GenerationConfig", "GenerateContentConfig"),
                   "GenerateContentRequest": ("GenerateContentConfig",)}.get(name, (name,))
        for source in sources:
            model = getattr(types, source, None)
            for field, info in getattr(model, "model_fields", {}).items():
                description = " ".join((info.description or "").split())  # the docstrings wrap
                wire = to_camel(field)
                if wire not in defs[name].get("properties", {}):
                    continue
                for api, phrase in _GEMINI_APIS.items():
                    phrases = (phrase, *_VERTEX_ALIASES) if api == "the Gemini API" else (phrase,)
                    if any(p in description for p in phrases) and wire not in only[api].setdefault(name, []):
                        only[api][name].append(wire)
    return {api: {name: sorted(fields) for name, fields in per.items() if fields} for api, per in only.items()}


# The API versions whose published request messages take fewer fields than google-genai's types (the
# version answers 400 "Unknown name" to the rest). Vertex AI's: the aiplatform discovery documents
# google-api-python-client ships (current: revised every few days). The Gemini API's v1: the protos of
# google-ai-generativelanguage (v1 is the stable surface; recorded: "Unknown name \"systemInstruction\"",
# "tools", "toolConfig", "responseMimeType" answered 400 on /v1/). Its v1beta and v1alpha are not
# read from there: those protos lag the live API by a year (no thinkingLevel, no server-side toolCall,
# no mediaResolution in a part, all of which v1beta takes; Google's media-resolution guide first said
# v1alpha only, now v1beta), and google-genai, which calls v1beta by default, is their current definition.
_GEMINI_VERSIONS = ("v1",)
_VERTEX_VERSIONS = ("v1", "v1beta1")


def _proto_fields(request: Any) -> dict[str, set[str]]:
    """Every message a proto request reaches, by the name google-genai gives it (a nested message's
    names joined: GenerationConfig.ThinkingConfig would be GenerationConfigThinkingConfig), with its
    fields' JSON names."""
    messages: dict[str, set[str]] = {}
    pending = [request]
    while pending:
        descriptor = pending.pop()
        prefix = descriptor.file.package + "."
        name = descriptor.full_name.removeprefix(prefix).replace(".", "")
        if name in messages:
            continue
        messages[name] = {f.json_name for f in descriptor.fields}
        pending.extend(f.message_type for f in descriptor.fields if f.message_type is not None
                       and f.message_type.file.package == descriptor.file.package)
    return messages


def _discovery_fields(document: dict[str, Any]) -> dict[str, set[str]]:
    """A discovery document's schemas (GoogleCloudAiplatformV1Part: Part) with their properties."""
    prefix = "GoogleCloudAiplatform" + document["version"][:1].upper() + document["version"][1:]
    return {name.removeprefix(prefix): set(schema.get("properties", {}))
            for name, schema in document["schemas"].items() if name.startswith(prefix)}


def _absent(defs: dict[str, Any], published: dict[str, set[str]], owned: tuple[str, ...]) -> dict[str, list[str]]:
    """The fields of each definition the version's published message of the same name lacks. A
    definition the version does not publish under that name is not judged (nothing says what it takes);
    the request's `model` is the path's."""
    absent: dict[str, list[str]] = {}
    for name, sub in defs.items():
        if name in owned or name not in published:
            continue
        missing = sorted(set(sub.get("properties", {})) - published[name] - ({"model"} if name == "GenerateContentRequest"
                                                                             else set()))
        if missing:
            absent[name] = missing
    return absent


def _gemini_versions(defs: dict[str, Any], discovery: list[Path]) -> tuple[dict[str, Any], dict[str, str]]:
    """Per API and version, the fields of the document's definitions that version does not take, and
    where each version's table was read."""
    import importlib

    # The Gemini API's other versions take every field google-genai's types give it (see _GEMINI_VERSIONS).
    versions: dict[str, dict[str, dict[str, list[str]]]] = {"the Gemini API": {"v1alpha": {}, "v1beta": {}},
                                                            "Vertex AI": {}}
    sources: dict[str, str] = {}
    package = metadata.version("google-ai-generativelanguage")
    for version in _GEMINI_VERSIONS:
        module = importlib.import_module("google.ai.generativelanguage_" + version)
        published = _proto_fields(module.GenerateContentRequest.pb().DESCRIPTOR)
        versions["the Gemini API"][version] = _absent(defs, published, ("Schema",))
        sources["the Gemini API " + version] = (f"google-ai-generativelanguage {package}: google.ai.generativelanguage_"
                                                f"{version} GenerateContentRequest and the messages it reaches")
    for path in discovery:
        document = json.loads(path.read_text())
        if document.get("name") != "aiplatform" or document.get("version") not in _VERTEX_VERSIONS:
            continue
        version = document["version"]
        versions["Vertex AI"][version] = _absent(defs, _discovery_fields(document), ("Schema",))
        sources["Vertex AI " + version] = (f"the aiplatform {version} discovery document, revision "
                                           f"{document['revision']} (google-api-python-client's discovery_cache)")
    return versions, sources


def _gemini_sdk() -> tuple[dict[str, Any], dict[str, str], str]:
    from google.genai import types, version
    from pydantic import ConfigDict, TypeAdapter, create_model
    from pydantic.alias_generators import to_camel

    closed = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True, arbitrary_types_allowed=True)
    generation: dict[str, Any] = {}
    for model in (types.GenerateContentConfig, types.GenerationConfig):  # GenerationConfig's types win
        generation.update((name, (f.annotation, None)) for name, f in model.model_fields.items()
                          if name not in _GEMINI_TOP and name not in _GEMINI_SDK_ONLY)
    top: dict[str, Any] = {_GEMINI_RENAMED.get(name, name): (types.GenerateContentConfig.model_fields[name].annotation,
                                                             None) for name in _GEMINI_TOP}
    # The SDK also takes strings, files and Python callables there; the wire takes the messages.
    top.update(system_instruction=(types.Content | None, None), tools=(list[types.Tool] | None, None))
    request = create_model(
        "MessageCreateParams", __config__=closed, model=(str | None, None), contents=(list[types.Content] | None, None),
        generation_config=(create_model("GenerationConfig", __config__=closed, **generation) | None, None), **top)
    licence = next(f for f in metadata.distribution("google-genai").files or () if f.name == "LICENSE")
    provenance = {"source": "google-genai " + version.__version__ + ": google.genai.types (Content, Tool, ToolConfig, "
                            "SafetySetting, GenerationConfig + GenerateContentConfig; pydantic TypeAdapter.json_schema "
                            "by alias)",
                  "version": version.__version__, "license": "Apache-2.0 (GEMINI-LICENSE)"}
    return TypeAdapter(request).json_schema(by_alias=True), provenance, licence.read_text()


def write(document: dict[str, Any], target: Path) -> None:
    target.write_text(json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    providers = parser.add_subparsers(dest="provider", required=True)
    openai = providers.add_parser("openai", help="from openai-openapi's openapi.yaml")
    openai.add_argument("--openapi", type=Path, required=True, help="openai-openapi's openapi.yaml")
    openai.add_argument("--commit", required=True, help="the openai-openapi commit it was taken from")
    openai.add_argument("--date", required=True, help="that commit's date (YYYY-MM-DD)")
    openai.add_argument("--license", type=Path, help="its licence (default: openai-openapi.LICENSE beside it)")
    openai.add_argument("--out", type=Path, default=OPENAI_JSON)
    anthropic = providers.add_parser("anthropic", help="from the installed anthropic SDK's types")
    anthropic.add_argument("--out", type=Path, default=ANTHROPIC_JSON)
    gemini = providers.add_parser("gemini", help="from the installed google-genai SDK's types")
    gemini.add_argument("--discovery", type=Path, nargs="*", default=[],
                        help="aiplatform.v1.json and aiplatform.v1beta1.json (google-api-python-client's "
                             "googleapiclient/discovery_cache/documents); the Gemini API's versions are read "
                             "from the installed google-ai-generativelanguage")
    gemini.add_argument("--out", type=Path, default=GEMINI_JSON)
    args = parser.parse_args(argv)
    if args.provider == "gemini":
        schema, provenance, licence = _gemini_sdk()
        document = gemini_document(schema, provenance, {})
        document["only"] = _gemini_only(document["$defs"])
        if args.discovery:
            document["versions"], document["provenance"]["versions"] = _gemini_versions(document["$defs"], args.discovery)
        write(document, args.out)
        args.out.with_name(GEMINI_LICENSE.name).write_text(licence)
        return
    if args.provider == "anthropic":
        schema, provenance, licence = _anthropic_sdk()
        write(anthropic_document(schema, provenance), args.out)
        args.out.with_name(ANTHROPIC_LICENSE.name).write_text(licence)
        return
    import yaml  # only the refresh needs it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    openapi = yaml.load(args.openapi.read_text(), Loader=loader)
    provenance = {"source": "https://github.com/openai/openai-openapi/blob/" + args.commit + "/openapi.yaml",
                  "commit": args.commit, "date": args.date, "license": "MIT (OPENAI-LICENSE)"}
    write(extract(openapi, OPENAI_REQUESTS, provenance), args.out)
    shutil.copyfile(args.license or args.openapi.with_name("openai-openapi.LICENSE"),
                    args.out.with_name(OPENAI_LICENSE.name))


if __name__ == "__main__":
    main()
