"""The dialect-neutral form every translation passes through, the loss report, and the errors.

A request or response is parsed into a flat list of items (the shape the Responses API uses):
text messages, tool calls, tool results and opaque state. Every item keeps the JSON pointer of
the place it came from, so that each emitter can report what it changed at both ends."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..dialect import Dialect
from ..pointer import join

# "carried": an error the source document already had, which no translation mends (the output has
# it too, in the target's terms).
LossKind = Literal["renamed", "aliased", "converted", "dropped", "synthesised", "merged", "moved", "carried"]


@dataclass(frozen=True, slots=True)
class Loss:
    """One thing a translation changed or could not carry."""

    source: str  # JSON pointer into the source document ("" = the whole document)
    target: str | None  # JSON pointer into the translated document, None when nothing landed there
    kind: LossKind
    why: str
    rule: str = ""  # the rule (docs/rules.md) the change protects, e.g. "XL-02"

    def __str__(self) -> str:
        where = self.source or "/"
        if self.target is not None:
            where += f" -> {self.target or '/'}"
        rule = f" [{self.rule}]" if self.rule else ""
        return f"{self.kind} {where}: {self.why}{rule}"

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "kind": self.kind, "why": self.why,
                "rule": self.rule}


class TranslationError(Exception):
    """The source cannot be expressed in the target at all (orphan legacy result, untranslatable
    media, server-side history). `pointer` names the offending place in the source document."""

    def __init__(self, message: str, pointer: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.pointer = pointer

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: {self.message}"


class UnsupportedPair(ValueError):
    """No bridge is offered between these two dialects."""


# --- content -------------------------------------------------------------------------------------

@dataclass(slots=True)
class Part:
    """One piece of message or tool-result content."""

    kind: Literal["text", "refusal", "image", "audio", "file"]  # refusal: the model declined (Chat, Responses)
    src: str
    text: str = ""
    url: str = ""  # an http(s) URL or a provider file reference (file_id, fileUri)
    data: str = ""  # base64 payload
    mime: str = ""
    filename: str = ""


@dataclass(slots=True)
class Message:
    role: Literal["system", "user", "assistant"]
    parts: list[Part]
    src: str


@dataclass(slots=True)
class Call:
    id: str | None  # None only while a legacy/Gemini call waits for its minted id
    name: str
    arguments: dict[str, Any]
    src: str
    raw_arguments: str | None = None  # the source's own JSON text when it was exactly one object
    custom: bool = False  # an OpenAI custom (free-form input) tool call; `arguments` = {"input": text}
    opaque: dict[str, Any] = field(default_factory=dict)  # same-dialect state, e.g. thoughtSignature
    name_src: str = ""  # pointers of the name and the id, when they are not `src` itself
    id_src: str = ""


@dataclass(slots=True)
class Result:
    call_id: str | None
    name: str | None
    parts: list[Part]
    src: str
    is_error: bool = False
    custom: bool = False
    name_src: str = ""
    id_src: str = ""
    structured: Any = None  # the result as a JSON value (MCP structuredContent), beside or instead of its text


@dataclass(slots=True)
class Opaque:
    """State only its own dialect understands: reasoning items, thinking blocks, server tool
    results. Kept when source and target agree, dropped with a report otherwise (XL-14)."""

    dialect: Dialect
    what: str
    raw: Any
    src: str


Item = Message | Call | Result | Opaque


@dataclass(slots=True)
class Pairing:
    """Which call each tool result answers, by index into the items."""

    answers: dict[int, int | None]  # result index -> the call it answers; None: it answers none (an orphan)
    unanswered: list[int]  # calls no later result answers, in order


def pair(items: list[Item]) -> Pairing:
    """The one pairing of calls and results: by id, and a result without an id (legacy Chat
    `function` messages, Gemini functionResponse) answers the oldest unanswered call of its name
    (FIFO, XL-05). The bridge mints ids with it; the conversation view marks orphans with it."""
    pending: list[int] = []
    calls: dict[int, Call] = {}
    by_id: dict[str, int] = {}
    answers: dict[int, int | None] = {}
    for index, item in enumerate(items):
        if isinstance(item, Call):
            pending.append(index)
            calls[index] = item
            if item.id is not None:
                by_id[item.id] = index
        elif isinstance(item, Result):
            if item.call_id is None:
                call = next((c for c in pending if calls[c].name == item.name), None)
            else:
                call = by_id.get(item.call_id)
            answers[index] = call
            if call in pending:
                pending.remove(call)
    return Pairing(answers, pending)


@dataclass(slots=True)
class Tool:
    name: str
    description: str
    schema: dict[str, Any]  # JSON Schema (lower-case types)
    src: str
    strict: bool | None = None
    custom: bool = False
    name_src: str = ""
    schema_src: str = ""  # where the schema came from, when not src/parameters
    output_schema: dict[str, Any] | None = None  # JSON Schema of the result (an MCP tool's outputSchema)


@dataclass(slots=True)
class Builtin:
    """A provider-hosted tool. `kind` is neutral (web_search, code_interpreter, ...)."""

    kind: str
    options: dict[str, Any]
    src: str
    dialect: Dialect
    raw: Any = None
    pointers: dict[str, str] = field(default_factory=dict)  # option -> its source pointer, when not src/option

    def pointer(self, option: str) -> str:
        return self.pointers.get(option, join(self.src, option))


@dataclass(slots=True)
class Choice:
    mode: Literal["auto", "none", "required", "named", "hosted"]
    src: str
    name: str = ""  # the function a named choice forces; the neutral Builtin kind a hosted choice forces
    # allowed_tools: the only tools the model may call (mode auto or required); None = every declared tool
    allowed: list[str] | None = None
    allowed_src: str = ""


@dataclass(slots=True)
class Reasoning:
    """How hard a reasoning model thinks: OpenAI's effort scale (none, minimal, low, medium, high,
    xhigh); "none" also states Anthropic's `thinking: disabled`. `budget` is the token budget the
    source stated (Anthropic budget_tokens, Gemini thinkingBudget), when it stated one: the
    effort is then read from it by the table in translate/reasoning.py."""

    effort: str
    src: str
    budget: int | None = None
    level: bool = False  # the source named a level (Gemini thinkingLevel), not a number


@dataclass(slots=True)
class Identifier:
    """An opaque identifier the source states (an end user's, a cache key) and where."""

    value: str
    src: str


@dataclass(slots=True)
class Output:
    """The shape the model's answer must take (structured output): plain text (stated), any JSON
    object, or JSON matching `schema`. Chat's response_format, Responses' text.format, Gemini's
    responseMimeType with responseJsonSchema/responseSchema, Anthropic's output_config.format."""

    kind: Literal["text", "json", "schema"]
    src: str
    schema: dict[str, Any] = field(default_factory=dict)  # JSON Schema (lower-case types)
    name: str = ""
    description: str = ""
    strict: bool | None = None
    # Where name, description, strict and schema came from, when not src/<field>.
    pointers: dict[str, str] = field(default_factory=dict)

    def pointer(self, part: str) -> str:
        return self.pointers.get(part, join(self.src, part))


@dataclass(slots=True)
class Request:
    model: str = ""
    items: list[Item] = field(default_factory=list)
    tools: list[Tool] = field(default_factory=list)
    builtins: list[Builtin] = field(default_factory=list)
    choice: Choice | None = None
    parallel: bool | None = None
    parallel_src: str = "/parallel_tool_calls"
    stream: bool = False
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    reasoning: Reasoning | None = None
    stop: list[str] = field(default_factory=list)
    stop_src: str = "/stop"
    # Where a sampling field (max_tokens, temperature, top_p) came from, when not /<field>.
    sources: dict[str, str] = field(default_factory=dict)
    output: Output | None = None
    store: bool | None = None  # whether the provider keeps the exchange (Chat and Responses only)
    user: Identifier | None = None  # the end user, for the provider's abuse monitoring
    cache_key: Identifier | None = None  # OpenAI's prompt_cache_key: requests that share a prompt prefix
    # Flattened name -> (namespace, name) of the tools a Responses namespace groups.
    namespaced: dict[str, tuple[str, str]] = field(default_factory=dict)
    # Source fields no other dialect can carry: (pointer, why). Reported as dropped on emit.
    leftovers: list[tuple[str, str]] = field(default_factory=list)


StopReason = Literal["stop", "length", "tool_calls", "content_filter"]


@dataclass(slots=True)
class Response:
    id: str = ""
    model: str = ""
    created: int = 0
    items: list[Item] = field(default_factory=list)
    stop: StopReason = "stop"
    input_tokens: int = 0
    output_tokens: int = 0
    error: Any = None  # a provider error body, passed on as an error
    failed: str = ""  # why an answer that arrived whole cannot be delivered as complete (e.g. a nameless call)


@dataclass(slots=True)
class State:
    """Request-scoped facts a response translation needs (and nothing else)."""

    source: Dialect
    target: Dialect
    model: str = ""
    stream: bool = False
    stream_usage: bool = False  # a Chat client asked for the usage chunk (stream_options.include_usage)
    json_array_stream: bool = False  # a Gemini client streaming without alt=sse reads one JSON array
    # The key the client's provider wraps each answer under (Gemini Code Assist's "response",
    # `Profile.envelope`), "" for none: the source dialect's emitters write the answer inside it.
    envelope: str = ""
    aliases: dict[str, str] = field(default_factory=dict)  # target name -> source name
    wrapped: set[str] = field(default_factory=set)  # target tools whose arguments travel as {"value": …}
    namespaced: dict[str, tuple[str, str]] = field(default_factory=dict)  # source name -> (namespace, name)
    ids: dict[str, str] = field(default_factory=dict)  # target call id -> source call id
    history_ids: set[str] = field(default_factory=set)  # every call id the client already holds
    seed: str = ""  # request digest: makes minted ids deterministic per request
    created: int = 0  # unix time of the request: the timestamp of responses whose upstream gives none
