"""What every dialect module shares: the emit context (names, ids, losses) and small helpers."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeGuard, overload

from .. import jsonsafe
from ..dialects.gemini.schema import GENAI_TYPES, Change, to_json_schema
from ..dialect import Dialect
from ..naming import IdMap, NameMap, digest, id_ok, mint_id
from ..pointer import join
from ..ranges import Range
from .model import (Call, Identifier, Loss, Message, Opaque, Output, Part, Request, Response, Result, State,
                    StopReason, TranslationError)
from .reasoning import EFFORTS, rounding


@dataclass(slots=True)
class Emit:
    """One translation's view of the target: its name aliases, id map and loss list."""

    state: State
    names: NameMap
    ids: IdMap
    losses: list[Loss]

    @property
    def target(self) -> Dialect:
        return self.state.target

    def name(self, name: str, src: str, tgt: str) -> str:
        alias = self.names.alias(name)
        if alias != name:
            self.losses.append(Loss(src, tgt, "aliased",
                                    f"{name!r} is not a valid {self.target.value} tool name; sent as {alias!r} "
                                    "and reversed in the response", "XL-02"))
        return alias

    def call_id(self, call_id: str, src: str, tgt: str) -> str:
        mapped = self.ids.map(call_id)
        if mapped != call_id:
            reason = "does not fit" if not id_ok(call_id, self.target) else "would collide with another id in"
            self.losses.append(Loss(src, tgt, "renamed", f"call id {call_id!r} {reason} {self.target.value}; "
                                    f"sent as {mapped!r}", "XL-04"))
        return mapped

    def drop(self, src: str, why: str, rule: str = "") -> None:
        self.losses.append(Loss(src, None, "dropped", why, rule))

    def convert(self, src: str, tgt: str | None, why: str, rule: str = "") -> None:
        self.losses.append(Loss(src, tgt, "converted", why, rule))

    def ranged(self, req: Request, field: str, tgt: str, ranges: dict[str, Range]) -> Any:
        """The request's `field` as the target accepts it: a value outside the target's range
        (say a max_tokens of 10 for the Responses API's minimum of 16) is moved to the nearest
        bound and reported, instead of being sent to a certain rejection."""
        value = getattr(req, field)
        bounds = ranges.get(field)
        if bounds is None:
            return value
        fitted = bounds.fit(value)
        if fitted != value:
            self.convert(req.sources.get(field, join("", field)), tgt,
                         f"{value!r} is outside {self.target.value}'s range for this field "
                         f"({bounds.describe()}); sent as {fitted!r}")
        return fitted

    def opaque(self, item: Opaque) -> bool:
        """True when the opaque item may be written as is; otherwise the drop is reported."""
        if item.dialect is self.target:
            return True
        self.drop(item.src, f"{item.dialect.value} {item.what} cannot cross to {self.target.value}", "XL-14")
        return False


def openai_reasoning(req: Request, emit: Emit, tgt: str) -> str | None:
    """The reasoning effort to send an OpenAI model (Chat `reasoning_effort`, Responses
    `reasoning.effort`), or None for none. An OpenAI client's effort passes as it is; another
    dialect's budget or level is read by the table in translate/reasoning.py, and an effort below
    the lowest the model accepts (a stated "reasoning off", Anthropic `thinking: disabled`) becomes
    that lowest, since OpenAI's reasoning models think by default."""
    reasoning = req.reasoning
    if reasoning is None:
        return None
    if emit.state.source in (Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES):
        return reasoning.effort
    lowest = next((effort for pattern, effort in _LOWEST_EFFORT if pattern.match(req.model)), "low")
    effort = reasoning.effort
    if lowest is None or (effort == "none" and not any(p.match(req.model) for p, _ in _LOWEST_EFFORT)):
        emit.drop(reasoning.src, f"{req.model!r} is not a reasoning model: there is no reasoning to "
                  + ("switch off" if effort == "none" else "ask for"))
        return None
    why = rounding(reasoning.budget, effort) if reasoning.budget is not None else ""
    if effort == "none" or EFFORTS.index(effort) < EFFORTS.index(lowest):
        why = (f"reasoning off is stated as the lowest effort {req.model!r} accepts ({lowest!r}): OpenAI reasoning "
               "models think unless told not to") if effort == "none" else \
            f"the effort {effort!r} is below the lowest {req.model!r} accepts; {lowest!r} is sent"
        effort = lowest
    if why:
        emit.convert(reasoning.src, tgt, why)
    return effort


# The lowest reasoning effort each OpenAI model family accepts (first match wins); an OpenAI model
# family listed with None does not reason and rejects any effort. A model of none of these families
# (a route's own name, a compatible server's model) is taken to reason from "low" up.
_LOWEST_EFFORT = ((re.compile(r"gpt-5-chat"), None), (re.compile(r"gpt-5\.\d"), "none"),
                  (re.compile(r"gpt-5"), "minimal"), (re.compile(r"o\d"), "low"),
                  (re.compile(r"(gpt-|chatgpt-|davinci|babbage)"), None))


def fitted_identifier(ident: Identifier, emit: Emit, tgt: str, limit: int) -> str:
    """An opaque identifier (an end user's, a cache key) as a target field of at most `limit`
    characters takes it: a longer one is sent as its digest, which still tells users (or prompts)
    apart as the original did, reported."""
    if len(ident.value) <= limit:
        return ident.value
    value = digest(ident.value)[:limit]
    emit.convert(ident.src, tgt, f"the identifier is longer than {emit.target.value} takes here ({limit} "
                 f"characters); its sha256 prefix {value!r} is sent, which keeps it distinct")
    return value


def openai_identifiers(req: Request, emit: Emit, out: dict[str, Any], user_field: str) -> None:
    """The end user and the prompt cache key as an OpenAI API states them: Chat's `user`, Responses'
    `safety_identifier`, both APIs' `prompt_cache_key` (64 characters each)."""
    if req.user is not None:
        out[user_field] = fitted_identifier(req.user, emit, join("", user_field), _OPENAI_IDENTIFIER)
        if not req.user.src.endswith(f"/{user_field}"):
            emit.convert(req.user.src, join("", user_field), f"the end user's identifier is {emit.target.value}'s "
                         f"{user_field}")
    if req.cache_key is not None:
        out["prompt_cache_key"] = fitted_identifier(req.cache_key, emit, "/prompt_cache_key", _OPENAI_IDENTIFIER)


def read_openai_identifiers(payload: dict[str, Any], req: Request, fields: tuple[str, ...]) -> None:
    """The end user (the first of `fields` given) and the prompt cache key of an OpenAI request."""
    for key in fields:
        if isinstance(payload.get(key), str) and payload[key]:
            req.user = Identifier(payload[key], join("", key))
            break
    if isinstance(payload.get("prompt_cache_key"), str) and payload["prompt_cache_key"]:
        req.cache_key = Identifier(payload["prompt_cache_key"], "/prompt_cache_key")


# safety_identifier, prompt_cache_key (maxLength in OpenAI's OpenAPI document); Chat's `user` the same.
_OPENAI_IDENTIFIER = 64


# --- structured output ---------------------------------------------------------------------------

# An OpenAI format name (Chat json_schema.name, Responses text.format.name): required, 64 characters
# of letters, digits, _ and -.
_FORMAT_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_FORMAT_NAME_OFF = re.compile(r"[^A-Za-z0-9_-]")


def openai_output(fmt: Any, src: str, req: Request, nested: bool) -> None:
    """An OpenAI format object into `req.output`: Chat's response_format (the schema's fields
    nested under json_schema) or Responses' text.format (flat). A type no other dialect has is a
    leftover."""
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind == "text":
        req.output = Output("text", src)
    elif kind == "json_object":
        req.output = Output("json", src)
    elif kind == "json_schema":
        body_src = join(src, "json_schema") if nested else src
        body = fmt.get("json_schema") if nested else fmt
        body = body if isinstance(body, dict) else {}
        schema = body.get("schema")
        req.output = Output("schema", src, schema if isinstance(schema, dict) else {},
                            name=str(body.get("name") or ""), description=str(body.get("description") or ""),
                            strict=body["strict"] if isinstance(body.get("strict"), bool) else None,
                            pointers={part: join(body_src, part) for part in ("name", "description", "strict",
                                                                              "schema")})
    else:
        req.leftovers.append((join(src, "type") if isinstance(fmt, dict) else src,
                              f"output format {kind!r} has no counterpart"))


def openai_format(output: Output, emit: Emit, tgt: str, nested: bool) -> dict[str, Any]:
    """`output` as an OpenAI format object (see openai_output). A json_schema format needs a name:
    one is made up, or the given one fitted to OpenAI's pattern, and reported."""
    if output.kind == "text":
        return {"type": "text"}
    if output.kind == "json":
        return {"type": "json_object"}
    body_tgt = join(tgt, "json_schema") if nested else tgt
    name = output.name
    if not name:
        name = "response"
        emit.losses.append(Loss(output.src, join(body_tgt, "name"), "synthesised",
                                f"{emit.target.value} needs a name for the response schema; 'response' is sent", ""))
    elif not _FORMAT_NAME.fullmatch(name):
        name = _FORMAT_NAME_OFF.sub("_", name)[:64]
        emit.convert(output.pointer("name"), join(body_tgt, "name"), f"the schema name {output.name!r} does not fit "
                     f"{emit.target.value} (letters, digits, _ and -, at most 64); sent as {name!r}")
    body: dict[str, Any] = {"name": name, "schema": output.schema}
    if output.description:
        body["description"] = output.description
    if output.strict is not None:
        body["strict"] = output.strict
    return {"type": "json_schema", "json_schema": body} if nested else {"type": "json_schema", **body}


def sent_stop(stop: StopReason, calls: bool) -> StopReason:
    """The stop an answer is sent with: one that holds calls stopped to have them run, unless it was
    cut at its token limit (a call cut short, which the client must not take for a whole one); one
    without calls did not stop for them."""
    if stop == "length":
        return stop
    return "tool_calls" if calls else "stop" if stop == "tool_calls" else stop


def openai_strict(strict: bool | None, schema: dict[str, Any], src: str, tgt: str, emit: Emit) -> bool | None:
    """`strict` as an OpenAI target may state it for `schema` (XL-13): strict:true on a schema outside
    OpenAI's Structured-Outputs subset (an optional property, an object open to others) is refused
    there with a 400, though Anthropic and Bedrock take it; it is sent as strict:false, and said so."""
    if strict is not True:
        return strict
    from ..rules.schema import strict_problem  # the checker's own test: rules load the homes, whose bridges import this

    problem = strict_problem(schema)
    if problem is None:
        return True
    emit.convert(src, tgt, f"strict:true sent as strict:false: {emit.target.value} refuses it on this schema "
                 f"({problem}); the model may stray from the schema", "XL-13")
    return False


def output_kept_whole(output: Output, emit: Emit) -> None:
    """Report what a response schema loses on a target that holds every answer to its schema and
    takes neither a name nor a description (Anthropic, Gemini)."""
    if output.name:
        emit.drop(output.pointer("name"), f"{emit.target.value} takes no name for the response schema")
    if output.description:
        emit.drop(output.pointer("description"), f"{emit.target.value} takes no description for the response "
                  "schema; put it in the prompt")
    if output.strict is False:
        emit.convert(output.pointer("strict"), None, f"{emit.target.value} always holds the answer to the schema; "
                     "strict false cannot be stated")


def _bounds(bounds: Range) -> str:
    if bounds.high is None:
        return f"at least {bounds.low:g}"
    return f"{bounds.low:g} to {bounds.high:g}" if bounds.low is not None else f"at most {bounds.high:g}"


def json_schema_of(schema: dict[str, Any], src: str, losses: list[Loss]) -> dict[str, Any]:
    """A source's tool schema as the neutral form holds it, JSON Schema: a genai Schema that leaked
    into a JSON-Schema dialect (`"type": "OBJECT"`, `nullable`, the seeds' defect) is converted by the
    one converter (dialects/gemini/schema.py), reported; JSON Schema comes back unchanged."""
    if not _genai_marked(schema):
        return schema
    changes: list[Change] = []
    converted: dict[str, Any] = to_json_schema(schema, src, "", changes, root=True)
    losses.extend(Loss(c.source, None, c.kind, c.why, c.rule or "XL-01") for c in changes)
    return converted


# Keywords only a genai Schema has (to_json_schema's conversions); a schema without any, and without
# an upper-case or numbered genai type, is JSON Schema already.
_GENAI_KEYWORDS = frozenset({"nullable", "propertyOrdering", "example"})


def _genai_marked(schema: Any) -> bool:
    """Whether a schema holds anything of genai's, found without recursion: the conversion walks
    recursively, and a schema of JSON Schema alone (of any depth) is left as it is."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            kind = node.get("type")
            kinds = kind if isinstance(kind, list) else [kind]
            if any((isinstance(k, str) and k in GENAI_TYPES) or (isinstance(k, int) and not isinstance(k, bool))
                   for k in kinds) or _GENAI_KEYWORDS & node.keys() or node.get("format") == "enum":
                return True
            stack.extend(node.values())
    return False


def parse_turns(payload: dict[str, Any], req: Request, losses: list[Loss],
                user: Callable[[Any, str, list[Any], list[Loss]], None],
                assistant: Callable[[Any, str, list[Any]], None]) -> None:
    """`messages` of user and assistant turns (Anthropic's and Bedrock's), each turn's content read
    into `req.items` by the dialect's own reader for its role."""
    messages = payload.get("messages")
    if not isinstance(messages, list):
        raise TranslationError("messages must be a list", "/messages")
    for index, message in enumerate(messages):
        src = join("/messages", index)
        if not isinstance(message, dict):
            raise TranslationError("a message must be an object", src)
        role = message.get("role")
        if role == "user":
            user(message.get("content"), src, req.items, losses)
        elif role == "assistant":
            assistant(message.get("content"), src, req.items)
        else:
            raise TranslationError(f"unknown message role {role!r}", join(src, "role"))


def message_of(src: str) -> str:
    """The source message a pointer lies in (/messages/3/content/1 -> /messages/3), to tell
    when a translation merges several source messages into one target turn."""
    return "/".join(src.split("/")[:3])


def role_turn(turns: list[tuple[str, list[dict[str, Any]], str]], merged: list[str], role: str, src: str,
              emit: Emit, provider: str) -> tuple[list[dict[str, Any]], str]:
    """The blocks of the turn an item of `role` (at `src`) joins, and the pointer its first block
    gets: a new turn when the role changes, else the last one. A provider that alternates roles
    (Anthropic, Converse) takes several source messages of one role as one turn, which the loss
    report says. `merged` holds each turn's latest source message."""
    if not turns or turns[-1][0] != role:
        turns.append((role, [], src))
        merged.append(message_of(src))
    elif message_of(src) != merged[-1]:
        merged[-1] = message_of(src)
        emit.convert(src, join("/messages", len(turns) - 1),
                     f"{provider} alternates roles: this {role} message joins the {role} turn before it", "")
    blocks = turns[-1][1]
    return blocks, join("/messages", len(turns) - 1, "content", len(blocks))


def dumps(value: Any) -> str:
    return jsonsafe.dumps(value).decode()


# Separate blocks (Anthropic system blocks, a tool result's text parts, the system messages of a
# conversation) written where the target takes one string: a blank line keeps them apart, as a
# prompt's paragraphs ("...Claude Code." and "Prefer terse..." must not run together).
BLOCKS = "\n\n"
# The model's own answer is one run of text that providers cut at arbitrary points (citation
# spans, stream chunks): the SDKs join it with nothing (OpenAI `output_text`, genai `.text`), and
# so does every stream, whose deltas the JSON translation must equal.
RUN = ""


def join_text(parts: Iterable[Part], separator: str = BLOCKS, kind: str = "text") -> str:
    """The text of every part of `kind` as one string, empty parts skipped. Blocks are kept apart by
    a blank line, of which a block's own trailing newlines count: "a\n" and "b" join as "a\n\nb",
    never with a newline doubled into "a\n\n\nb"."""
    texts = [p.text for p in parts if p.kind == kind and p.text]
    if separator != BLOCKS:
        return separator.join(texts)
    out: list[str] = []
    for text in texts:
        if out:
            ending = len(out[-1]) - len(out[-1].rstrip("\n"))
            out.append(BLOCKS[min(ending, len(BLOCKS)):])
        out.append(text)
    return "".join(out)


def plain(parts: list[Part], losses: list[Loss], target: Dialect, tgt: str | None = None) -> list[Part]:
    """Parts for a target with no refusal part: a refusal is carried as text, reported."""
    out: list[Part] = []
    for part in parts:
        if part.kind == "refusal":
            losses.append(refusal_as_text(part.src, tgt, target))
            part = Part("text", part.src, text=part.text)
        out.append(part)
    return out


def refusal_as_text(src: str, tgt: str | None, target: Dialect) -> Loss:
    return Loss(src, tgt, "converted", f"{target.value} has no refusal part; the refusal is carried as text", "")


_DATA_URL = re.compile(r"^data:([^;,]*)(;base64)?,(.*)$", re.S)


def split_data_url(url: str) -> tuple[str, str] | None:
    """(mime, base64 data) of a data: URL, None otherwise."""
    match = _DATA_URL.match(url)
    if not match or not match.group(2):
        return None
    return match.group(1), match.group(3)


def data_url(part: Part) -> str:
    return part.url or f"data:{part.mime or 'application/octet-stream'};base64,{part.data}"


ERROR_PREFIX = "Error: "


def flagged_text(result: Result, emit: Emit, tgt: str) -> str:
    """A result's text for a target with no error flag (Chat, Responses): the flag becomes a
    visible prefix so the model still sees the failure (XL-15)."""
    text = join_text(result.parts)
    if result.is_error:
        emit.losses.append(Loss(result.src, tgt, "converted",
                                f"{emit.target.value} has no error flag on tool results; written as an "
                                f"{ERROR_PREFIX.strip()!r} prefix", "XL-15"))
        return ERROR_PREFIX + text
    return text


def assistant_turns(items: list[Any]) -> list[tuple[str, list[Any]]]:
    """Group items into (role, items) turns: consecutive assistant text and calls form one
    assistant turn; results and user messages one user turn; system messages stand alone."""
    turns: list[tuple[str, list[Any]]] = []
    for item in items:
        if isinstance(item, Message):
            role = item.role
        elif isinstance(item, Call):
            role = "assistant"
        elif isinstance(item, Result):
            role = "user"
        else:  # opaque state (reasoning, thinking, signatures) belongs to the model's turn
            role = "assistant"
        if turns and turns[-1][0] == role and role != "system":
            turns[-1][1].append(item)
        else:
            turns.append((role, [item]))
    return turns


# --- errors ---------------------------------------------------------------------------------------

# One row per kind of provider error: HTTP status, Anthropic type, OpenAI (type, code), Google
# (code, status). OpenAI names most kinds by `code` under a generic `type` (a 429 is type
# "tokens" or "requests", code "rate_limit_exceeded").
_ERRORS = (
    (400, "invalid_request_error", ("invalid_request_error", None), (400, "INVALID_ARGUMENT")),
    (401, "authentication_error", ("invalid_request_error", "invalid_api_key"), (401, "UNAUTHENTICATED")),
    (403, "permission_error", ("invalid_request_error", "permission_denied"), (403, "PERMISSION_DENIED")),
    (404, "not_found_error", ("invalid_request_error", "not_found"), (404, "NOT_FOUND")),
    (413, "request_too_large", ("invalid_request_error", "request_too_large"), (400, "INVALID_ARGUMENT")),
    (429, "rate_limit_error", ("requests", "rate_limit_exceeded"), (429, "RESOURCE_EXHAUSTED")),
    (500, "api_error", ("server_error", None), (500, "INTERNAL")),
    (529, "overloaded_error", ("server_error", "overloaded"), (503, "UNAVAILABLE")),
)
_ROW = {row[0]: row for row in _ERRORS}
# Every spelling a provider uses for a kind, as the kind's HTTP status. OpenAI's `code` names the
# kind more precisely than its `type`, so it is read first; Google's numeric `code` is read last,
# as its `status` is the finer of the two.
_STATUS_OF = {name: row[0] for row in _ERRORS for name in (row[1], row[2][1], row[3][1]) if name} | {
    "tokens": 429, "requests": 429, "insufficient_quota": 429, "model_not_found": 404, "server_error": 500,
    "engine_overloaded": 529, "FAILED_PRECONDITION": 400, "OUT_OF_RANGE": 400, "DEADLINE_EXCEEDED": 500}


@overload
def token_counts(usage: Any, key: str, /) -> tuple[int]: ...
@overload
def token_counts(usage: Any, input_key: str, output_key: str, /) -> tuple[int, int]: ...


def token_counts(usage: Any, *keys: str) -> tuple[int, ...]:
    """The counts `usage` reports under `keys`, 0 for each it does not give as a whole number: an
    upstream that writes its usage wrongly costs the client the token counts, never the answer."""
    found = usage if isinstance(usage, dict) else {}
    return tuple(int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
                 and float(value).is_integer() else 0 for value in (found.get(key) for key in keys))


def error_status(error: Any) -> int:
    """The kind of a provider error body (OpenAI, Anthropic or Google) as its HTTP status."""
    if not isinstance(error, dict):
        return 500
    for key in ("code", "type", "status"):
        if isinstance(error.get(key), str) and error[key] in _STATUS_OF:
            return _STATUS_OF[error[key]]
    code = error.get("code")
    return code if isinstance(code, int) and code in _ROW else 500


def _own_kind(error: Any) -> str | None:
    """The type of an error the inspector itself answers (`toolwire_…`): it names what went wrong
    better than any provider kind, so every dialect keeps it."""
    kind = error.get("type") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) and kind.startswith("toolwire_") else None


def anthropic_error(error: Any) -> dict[str, Any]:
    return {"type": _own_kind(error) or _ROW[error_status(error)][1], "message": _message(error)}


def openai_error(error: Any) -> dict[str, Any]:
    kind, code = _ROW[error_status(error)][2]
    own = _own_kind(error)
    return {"message": _message(error), "type": own or kind, "param": None, "code": error["code"] if own else code}


def google_error(error: Any) -> dict[str, Any]:
    code, status = _ROW[error_status(error)][3]
    if _own_kind(error):
        code = error["code"]  # the inspector's own answer: its HTTP status
    return {"code": code, "message": _message(error), "status": status}


def _message(error: Any) -> str:
    return str(error.get("message", "")) if isinstance(error, dict) else str(error)


# --- the way back: names and ids in a response -----------------------------------------------------

def hollow(resp: Response, losses: list[Loss], pointer: str) -> None:
    """Report an upstream answer with neither text nor a tool call: its client gets an empty one."""
    if resp.error is None and not any(isinstance(item, (Message, Call)) for item in resp.items):
        losses.append(Loss(pointer, None, "synthesised", "the upstream answer has neither content nor tool calls; "
                           "an empty answer is sent", ""))


NAMELESS = "the upstream model produced a tool call without a name"


def vet(resp: Response, losses: list[Loss]) -> None:
    """Drop the upstream calls no client can run (no name), reported, and mark the response
    failed so that no client reads it as complete."""
    kept: list[Any] = []
    for item in resp.items:
        if isinstance(item, Call) and not item.name:
            losses.append(Loss(item.src, None, "dropped", "the upstream tool call has no name; no client can run it",
                               ""))
            resp.failed = NAMELESS
        else:
            kept.append(item)
    resp.items = kept


def declared_once(name: Any, src: str, seen: set[str], losses: list[Loss], what: str = "tool",
                  verb: str = "declared") -> TypeGuard[str]:
    """Whether the tool `name` at `src` crosses (then it is a name, a string): one without a name
    (XL-09) and a repeat (XL-03, the first is kept) are dropped with a report."""
    if not isinstance(name, str) or not name:
        losses.append(Loss(src, None, "dropped", f"a {what} without a name cannot be declared", "XL-09"))
        return False
    if name in seen:
        losses.append(Loss(src, None, "dropped", f"{what} {name!r} is {verb} twice; the first is kept", "XL-03"))
        return False
    seen.add(name)
    return True


def back_name(state: State, name: str) -> str:
    return state.aliases.get(name, name)


def back_id(state: State, call_id: str | None, basis: str, losses: list[Loss], src: str, tgt: str) -> str:
    """A call id of the target's response as the source client should see it: the upstream id
    when it fits the source and collides with nothing the client already holds, otherwise a
    deterministic fresh one (XL-04)."""
    taken = call_id is not None and (call_id in state.ids or call_id in state.history_ids)
    if call_id and id_ok(call_id, state.source) and not taken:
        return call_id
    minted = mint_id(f"{state.seed}:{basis}:{call_id}", state.ids, state.history_ids)
    if taken:
        why = f"upstream call id {call_id!r} repeats an id already in the history; sent as {minted!r}"
    elif call_id:
        why = f"upstream call id {call_id!r} does not fit {state.source.value}; sent as {minted!r}"
    else:
        why = f"the upstream call had no id; minted {minted!r}"
    losses.append(Loss(src, tgt, "synthesised" if not call_id else "renamed", why, "XL-04"))
    return minted
