"""Where the providers accept what their own published definitions refuse: one table, read by the
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
from dataclasses import dataclass, field
from typing import Any

from ..dialect import Dialect

_CHAT, _RESPONSES = Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES

_RUBY_LLM = "crmne/ruby_llm:spec/fixtures/vcr_cassettes/"
_LANGCHAINGO = "tmc/langchaingo:llms/googleai/testdata/"
_PYDANTIC_AI = "pydantic/pydantic-ai:tests/models/cassettes/test_openai_responses/"


@dataclass(frozen=True, slots=True)
class Tolerance:
    kind: str
    dialects: tuple[Dialect, ...]
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


TOLERANCES: tuple[Tolerance, ...] = (
    Tolerance("default", (_RESPONSES,), "InputImageContent", "detail",
              _RUBY_LLM + "activerecord_actsas_attachment_handling_handles_attachments_in_ask_method.yml "
              "(an input_image without detail, answered 200); the SDK's ResponseInputImage: \"Defaults to auto\""),
    Tolerance("param", (_RESPONSES,), "InputImageContent", "InputImageContentParamAutoParam",
              "openai.json itself: the request param the document defines for an input image (detail optional)"),
    Tolerance("param", (_RESPONSES,), "InputFileContent", "InputFileContentParam",
              "openai.json itself: the request param the document defines for an input file"),
    Tolerance("param", (_RESPONSES,), "FunctionTool", "FunctionToolParam",
              _PYDANTIC_AI + " (function tools without strict, 14 requests answered 200): strict defaults"),
    Tolerance("output-only", (_RESPONSES,), "ReasoningItem", "id",
              _RUBY_LLM + "chat_basic_chat_functionality_openai_gpt-5-nano_can_handle_multi-turn_conversations.yml "
              "(store: false, a reasoning item with encrypted_content and no id replayed, answered 200)"),
    Tolerance("output-only", (_RESPONSES,), "OutputMessage", "id",
              "https://platform.openai.com/docs/guides/conversation-state (assistant output replayed as input "
              "by content alone); " + _RUBY_LLM + "chat_basic_chat_functionality_openai_gpt-5-nano_"
              "can_handle_multi-turn_conversations.yml"),
    Tolerance("output-only", (_RESPONSES,), "OutputMessage", "status",
              "as OutputMessage.id: the API sets status on the items it returns"),
    Tolerance("output-only", (_RESPONSES,), "ImageGenToolCall", "status",
              _PYDANTIC_AI + "test_openai_responses_image_generation_with_tools.yaml (replayed by id and type)"),
    Tolerance("output-only", (_RESPONSES,), "ImageGenToolCall", "result",
              _PYDANTIC_AI + "test_openai_responses_image_generation_with_tools.yaml (replayed by id and type)"),
    Tolerance("typo", (_RESPONSES,), "MCPApprovalResponse", "request_id",
              "openai.json: MCPApprovalResponse requires request_id but defines approval_request_id, the field "
              "https://platform.openai.com/docs/guides/tools-remote-mcp shows clients sending"),
    Tolerance("typo", (_RESPONSES,), "LocalShellToolCallOutput", "call_id",
              "openai.json: LocalShellToolCallOutput requires call_id but defines only id, output, status and type, "
              "the fields of openai-python's LocalShellCallOutput (types/responses/response_input_item_param.py)"),
    Tolerance("bound", (_CHAT,), "StopConfiguration", "minItems",
              "issue 18's measurement: `stop: []` answered 200 by api.openai.com (read as no stop sequence); "
              "no public recording of it was found for this table"),
    Tolerance("undocumented", (_RESPONSES,), None, "client_metadata",
              "openai/codex (codex-rs/codex-api builds the Responses request Codex sends api.openai.com); relays "
              "of that traffic in public code carry `\"client_metadata\":{\"codex_version\":…}` on accepted "
              "requests; issue 18's recorded Codex traffic, answered 200"),
    Tolerance("sentinel", (Dialect.ANTHROPIC,), None, "top_k",
              "issue 18's measurement: -1, the legacy \"unset\" of Anthropic's early SDKs, answered 200 by "
              "api.anthropic.com; no public recording of it was found for this table", values=(-1,)),
    Tolerance("sentinel", (Dialect.ANTHROPIC,), None, "top_p", "as top_k", values=(-1,)),
    Tolerance("enum-number", (Dialect.GEMINI,), None, "*",
              _LANGCHAINGO + "TestGoogleAIWithTools.httprr ($alt=json;enum-encoding=int: safetySettings "
              "category 10, threshold 3, parameters type 6, answered 200); "
              "https://protobuf.dev/programming-guides/json/ (enum: name or integer)"),
    Tolerance("default", (Dialect.GEMINI,), "FunctionResponse", "response",
              "issue 18's measurement (a functionResponse without response answered 200: proto reads an absent "
              "Struct as empty); FunctionResponse also carries `parts`, a multimodal result with no response "
              "object (https://ai.google.dev/api/caching#FunctionResponse)"),
    Tolerance("role", (Dialect.GEMINI,), None, "function",
              "ai.google.dev's 2024 REST function-calling examples send the functionResponse turn with role "
              "\"function\", and google-generativeai 0.x did the same; issue 18's measurement: answered 200",
              values=("functionResponse",)),
    Tolerance("history", (_RESPONSES,), None, "assistant output parts", where=r"/input/\d+/content/\d+",
              keyword="oneOf", evidence="pydantic/pydantic-ai:tests/models/cassettes/test_openai_responses/ "
              "(18 requests answered 200: an assistant message's output_text/refusal parts replayed as an "
              "EasyInputMessage, whose schema lists only input parts)", values=("output_text", "refusal"),
              item=(("role", "assistant"),)),
    Tolerance("retired", (Dialect.ANTHROPIC,), "MessageCreateParams", "output_format",
              "the structured-outputs beta (structured-outputs-2025-11-13) took a top-level output_format "
              "{type: json_schema, schema} (https://hackage.haskell.org/package/claude-1.0.1/src/CHANGELOG.md); "
              "output_config.format replaced it at GA (claude-1.1.0's changelog), and the API still validates "
              "it: issue 18's recorded rejection \"output_format.schema: Field required\" of the OpenAI shape",
              schema="BetaJSONOutputFormatParam"),
    Tolerance("media-type", (Dialect.BEDROCK,), None, "format",
              "pydantic/pydantic-ai:tests/models/cassettes/test_bedrock/test_video_url_input.yaml (a Converse video "
              "block with format \"video/mp4\", answered 200; botocore's VideoFormat lists mp4)"),
)

# genai's Type enum by proto number (google/ai/generativelanguage/v1beta/content.proto), what a
# client sending enum-encoding=int writes in a Schema's `type`.
GEMINI_TYPE_NUMBERS = {0: "TYPE_UNSPECIFIED", 1: "STRING", 2: "NUMBER", 3: "INTEGER", 4: "BOOLEAN", 5: "ARRAY",
                       6: "OBJECT", 7: "NULL"}


def of(kind: str, dialect: Dialect) -> list[Tolerance]:
    return [t for t in TOLERANCES if t.kind == kind and dialect in t.dialects]


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
    for t in TOLERANCES:
        if dialect not in t.dialects or t.definition is None or t.definition not in defs:
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
