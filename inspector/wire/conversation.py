"""A flow's conversation: the request's history as turns, each tool call paired with its result,
orphans and unanswered calls marked in place, the tools offered against the tools called, and the
response's new turn at the end. Pure: no I/O, no UI.

The turns are read through each dialect's own parser (the neutral form of `translate.model`, the
one home of "what a dialect's history says") and paired by `translate.model.pair`, the same
pairing the bridges translate with. A history the parser refuses is read entry by entry through
that same parser: each refused entry is an error turn in its place, the rest is read and paired.
An MCP flow is its JSON-RPC exchange instead: requests paired with responses by id."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

from . import jsonsafe, profiles
from .dialect import Dialect
from .dialects import home
from .pointer import join, split
from .translate.bridge import read_request, read_response
from .translate.model import Call, Item, Message, Part, Request, Result, TranslationError, pair

CLIP = 2000  # characters of one entry's text: a 50 KB system prompt is read in the payload pane


class Mark(Enum):
    """What the pairing says about an entry."""

    NONE = ""
    ANSWERED = "answered"  # a call whose result follows
    UNANSWERED = "unanswered"  # a call in the history no result answers (providers reject the turn)
    ORPHAN = "orphan"  # a result that answers no earlier call
    AGAIN = "again"  # a second result for a call already answered
    NEW = "new"  # a call in the response: the client runs it and answers in its next request


@dataclass(slots=True)
class Entry:
    kind: Literal["message", "call", "result", "state", "error", "request", "response"]  # state: opaque;
    # request/response: an MCP exchange
    text: str  # the gist: a message's text, a call's arguments, a result's content, method(params)
    pointer: str  # where it is in its document (the request's, or the response's when the turn is new)
    call_id: str | None = None
    name: str | None = None
    mark: Mark = Mark.NONE
    partner: int | None = None  # the turn holding the paired call/result
    undeclared: bool = False  # a call to a tool the request does not offer


@dataclass(slots=True)
class Turn:
    role: str  # system, user, assistant, tool; MCP: client, server
    pointer: str
    entries: list[Entry] = field(default_factory=list)
    new: bool = False  # the response's turn


@dataclass(slots=True)
class ToolUse:
    name: str
    pointer: str  # its (first) declaration; "" when it is called but not declared
    declared: int = 0  # times offered: more than once is a duplicate
    called: int = 0  # calls in the history and the response
    hosted: bool = False  # a provider-hosted tool (web_search, ...)
    upstream_name: str | None = None  # the name it travelled upstream under, when aliased

    @property
    def undeclared(self) -> bool:
        return self.called > 0 and self.declared == 0 and not self.hosted


@dataclass(slots=True)
class Conversation:
    dialect: Dialect
    turns: list[Turn]
    tools: list[ToolUse]
    problem: str = ""  # why the request could not be read at all (not a JSON object): nothing else is filled then

    @property
    def refused(self) -> int:
        """Parts of the request its dialect's parser refused (each an error turn in its place)."""
        return sum(1 for turn in self.turns if not turn.new for entry in turn.entries if entry.kind == "error")

    def counts(self) -> dict[Mark, int]:
        found: dict[Mark, int] = {mark: 0 for mark in Mark if mark is not Mark.NONE}
        for turn in self.turns:
            for entry in turn.entries:
                if entry.mark is not Mark.NONE:
                    found[entry.mark] += 1
        return found


def build(dialect: Dialect, request: Any, response: Any = None, *, path: str = "",
          aliases: Mapping[str, str] | None = None) -> Conversation:
    """`aliases`: client tool name -> the name it went upstream under (translate and repair modes)."""
    if dialect is Dialect.MCP:
        return _mcp(request, response)
    # A provider's envelope (Gemini Code Assist's), known by the path: the turns are read inside it and
    # their pointers put back where the recorded documents hold them.
    profile = profiles.for_upstream(path, dialect)
    request, asked_at = profiles.unwrap(request, profile, "request")
    response, answered_at = profiles.unwrap(response, profile, "response")
    conversation = _build(dialect, request, response, path, aliases)
    if asked_at or answered_at:
        _enveloped(conversation, asked_at, answered_at)
    return conversation


def _enveloped(conversation: Conversation, asked_at: str, answered_at: str) -> None:
    for turn in conversation.turns:
        at = answered_at if turn.new else asked_at
        turn.pointer = at + turn.pointer if turn.pointer else ""
        for entry in turn.entries:
            entry.pointer = at + entry.pointer if entry.pointer else ""
    for tool in conversation.tools:
        tool.pointer = asked_at + tool.pointer if tool.pointer else ""


def _build(dialect: Dialect, request: Any, response: Any, path: str,
           aliases: Mapping[str, str] | None) -> Conversation:
    try:
        req, history = _read(dialect, request, path)
    except TranslationError as exc:
        return Conversation(dialect, [], [], f"the history cannot be read as {dialect.value}: {exc}")
    turns, entries = _turns(history, new=False)
    pairing = pair([item for item in history if not isinstance(item, Turn)])
    where = {id(entry): index for index, turn in enumerate(turns) for entry in turn.entries}
    answered: set[int] = set()
    for result, call in pairing.answers.items():
        if call is None:
            entries[result].mark = Mark.ORPHAN
            continue
        entries[result].partner = where[id(entries[call])]
        entries[result].name = entries[result].name or entries[call].name
        entries[result].mark = Mark.AGAIN if call in answered else Mark.NONE
        if call not in answered:
            entries[call].mark, entries[call].partner = Mark.ANSWERED, where[id(entries[result])]
        answered.add(call)
    for call in pairing.unanswered:
        entries[call].mark = Mark.UNANSWERED
    try:
        resp = read_response(dialect, response) if isinstance(response, dict) else None
    except TranslationError as exc:
        resp = None
        turns.append(_refused("response", "", exc, exc.pointer, new=True))
    if resp is not None:
        if resp.error is not None:
            turns.append(Turn("error", "", [Entry("error", _clip(_error(resp.error)), "/error")], new=True))
        else:
            new_turns, _ = _turns(list(resp.items), new=True)
            for turn in new_turns:
                for entry in turn.entries:
                    if entry.kind == "call":
                        entry.mark = Mark.NEW
                turns.append(turn)
    tools = _tools(req, turns, aliases or {}, request)
    offered = {tool.name for tool in tools if tool.declared or tool.hosted}
    for turn in turns:
        for entry in turn.entries:
            entry.undeclared = entry.kind == "call" and entry.name not in offered
    spelled = home(dialect).spelled
    if spelled is not None:
        _respell(spelled, turns, tools, request, response)
    return Conversation(dialect, turns, tools)


def _respell(spelled: Callable[[Any, str], str], turns: list[Turn], tools: list[ToolUse], request: Any,
             response: Any) -> None:
    """A dialect with two field spellings (`Home.spelled`): Gemini's parser reads a normalised copy (lowerCamelCase, a single message as a list of one), so
    its pointers are that copy's; a snake_case client (google-genai's REST spelling) gets them back in
    the spelling of the document it sent, where they point at something."""
    for turn in turns:
        document = response if turn.new else request
        turn.pointer = spelled(document, turn.pointer) if turn.pointer else ""
        for entry in turn.entries:
            old, entry.pointer = entry.pointer, spelled(document, entry.pointer) if entry.pointer else ""
            if entry.kind == "error" and old and entry.text.startswith(old + ":"):
                entry.text = entry.pointer + entry.text[len(old):]  # the refusal quotes its place (_refused)
    for tool in tools:
        tool.pointer = spelled(request, tool.pointer) if tool.pointer else ""


def _read(dialect: Dialect, request: Any, path: str) -> tuple[Request, list[Item | Turn]]:
    """The request in the neutral form, and its history in order: the parser's items, and an error
    turn in place of each part it refuses. A refused request is read again through the same parser
    in pieces: its top-level fields without each one refused in turn, then each history entry on its
    own. Raises TranslationError only for a request that is not a JSON object."""
    try:
        req = read_request(dialect, request, path)
        return req, list(req.items)
    except TranslationError:
        if not isinstance(request, dict):
            raise
    key = home(dialect).history
    found = request.get(key)
    entries = found if isinstance(found, list) else []
    by_entry = isinstance(found, list)
    frame = {**request, key: []} if by_entry else dict(request)
    history: list[Item | Turn] = []
    while True:
        try:
            req = read_request(dialect, frame, path)
            break
        except TranslationError as exc:
            history.append(_refused("request", exc.pointer, exc, exc.pointer))
            field = next(iter(split(exc.pointer)), None)
            if field is None or field not in frame or frame[field] == []:
                req = Request()  # refused as a whole, no field named: no tools, no system prompt to show
                break
            if field == key:
                frame[key] = []  # a history that is not a list: none to read, but the parsers need the field
            else:
                del frame[field]
    history += req.items
    for index, entry in enumerate(entries):
        here = join("", key, index)
        try:
            # The entry on its own is the history's entry 0: its pointers move back to its place.
            items = read_request(dialect, {key: [entry]}, path).items
        except TranslationError as exc:
            role = next((entry[name] for name in ("role", "type") if isinstance(entry, dict) and
                         isinstance(entry.get(name), str)), "unreadable")
            history.append(_refused(role, here, exc, _moved(exc.pointer, key, index) or here))
            continue
        for item in items:
            item.src = _moved(item.src, key, index)  # the only pointer of an item the conversation reads
            history.append(item)
    return req, history


def _moved(pointer: str, key: str, index: int) -> str:
    """A pointer into a one-entry history, into the whole history whose entry `index` it was."""
    first = join("", key, 0)
    if pointer == first or pointer.startswith(first + "/"):
        return join("", key, index) + pointer[len(first):]
    return pointer


def _refused(role: str, pointer: str, exc: TranslationError, where: str, *, new: bool = False) -> Turn:
    return Turn(role, pointer, [Entry("error", _clip(f"{where or '/'}: {exc.message}"), where)], new=new)


def _speaker(item: Item) -> str:
    if isinstance(item, Message):
        return item.role
    return "tool" if isinstance(item, Result) else "assistant"


def _turns(history: list[Item | Turn], *, new: bool) -> tuple[list[Turn], list[Entry]]:
    """Consecutive items of one speaker make a turn (a Chat assistant message and its tool calls,
    Responses' separate input items, the tool results that answer one assistant turn); a refused
    entry's turn stands alone. Also the items' entries, in the items' order (what `pair` indexes)."""
    turns: list[Turn] = []
    entries: list[Entry] = []
    joinable = False  # the last turn is the parser's, so the next item of its speaker joins it
    for item in history:
        if isinstance(item, Turn):
            turns.append(item)
            joinable = False
            continue
        speaker = _speaker(item)
        if not joinable or turns[-1].role != speaker:
            turns.append(Turn(speaker, _container(item.src), new=new))
        entry = _entry(item)
        turns[-1].entries.append(entry)
        entries.append(entry)
        joinable = True
    return turns, entries


def _container(pointer: str) -> str:
    """The message a pointer lies in: `/messages/3/content/0` -> `/messages/3`."""
    tokens = split(pointer)
    return join("", *tokens[:2]) if len(tokens) >= 2 and tokens[1].isdigit() else pointer


def _entry(item: Item) -> Entry:
    if isinstance(item, Message):
        return Entry("message", _clip(_parts(item.parts)), item.src)
    if isinstance(item, Call):
        arguments = item.arguments.get("input", "") if item.custom else \
            item.raw_arguments if item.raw_arguments is not None else _compact(item.arguments)
        return Entry("call", _clip(str(arguments)), item.src, item.id, item.name)
    if isinstance(item, Result):
        text = _parts(item.parts) or "(empty)"
        return Entry("result", _clip(("error: " if item.is_error else "") + text), item.src, item.call_id, item.name)
    return Entry("state", f"[{item.dialect.value} {item.what}]", item.src)


def _parts(parts: list[Part]) -> str:
    shown = []
    for part in parts:
        if part.kind == "text":
            shown.append(part.text)
        elif part.kind == "refusal":
            shown.append(f"refusal: {part.text}")
        else:
            shown.append(f"[{part.kind}{' ' + (part.filename or part.mime) if part.filename or part.mime else ''}]")
    return " ".join(text for text in shown if text)


def _tools(req: Any, turns: list[Turn], aliases: Mapping[str, str], document: Any) -> list[ToolUse]:
    by_name: dict[str, ToolUse] = {}
    for tool in req.tools:
        use = by_name.setdefault(tool.name, ToolUse(tool.name, tool.src))
        use.declared += 1
    for builtin in req.builtins:
        by_name.setdefault(builtin.kind, ToolUse(builtin.kind, builtin.src, hosted=True))
    # The parsers keep the first of two declarations of a name and report the repeat (XL-03) in their
    # loss report; the count here comes from the document, so a duplicate shows as declared twice.
    for name, count in Counter(_declared_names(document)).items():
        if name in by_name and not by_name[name].hosted:
            by_name[name].declared = max(by_name[name].declared, count)
    for turn in turns:
        for entry in turn.entries:
            if entry.kind == "call" and entry.name is not None:
                by_name.setdefault(entry.name, ToolUse(entry.name, "")).called += 1
    for use in by_name.values():
        use.upstream_name = aliases.get(use.name) if aliases.get(use.name) != use.name else None
    return list(by_name.values())


def _declared_names(document: Any) -> list[str]:
    """Every function name the request declares, repeats included, whatever the dialect's shape:
    Chat `tools[].function` and `functions[]`, Responses/Anthropic `tools[]`, Gemini
    `tools[].functionDeclarations[]` (both spellings)."""
    if not isinstance(document, dict):
        return []
    names: list[str] = []
    declarations: list[Any] = []
    tools = document.get("tools")
    for tool in tools if isinstance(tools, list) else []:  # else the parser refused it (an error turn says so)
        if not isinstance(tool, dict):
            continue
        nested = tool.get("functionDeclarations", tool.get("function_declarations"))
        declarations += nested if isinstance(nested, list) else [tool.get("function", tool)]
    declarations += document.get("functions") or [] if isinstance(document.get("functions"), list) else []
    for declaration in declarations:
        if isinstance(declaration, dict) and isinstance(declaration.get("name"), str):
            names.append(declaration["name"])
    return names


def _mcp(request: Any, response: Any) -> Conversation:
    """The JSON-RPC exchange: each request (or notification) and the response that answers it by id."""
    def messages(document: Any, base: str) -> list[tuple[str, Any]]:
        if isinstance(document, list):
            return [(join(base, index), message) for index, message in enumerate(document)]
        return [] if document is None else [(base, document)]

    client = Turn("client", "")
    for pointer, message in messages(request, ""):
        message = message if isinstance(message, dict) else {}
        method, params = str(message.get("method") or "?"), message.get("params")
        call_id = message.get("id") if isinstance(message.get("id"), (str, int)) else None
        name = params.get("name") if method == "tools/call" and isinstance(params, dict) else None
        gist = f"{method}({_compact(params) if params is not None else ''})"
        client.entries.append(Entry("request", _clip(gist), pointer, None if call_id is None else str(call_id),
                                    name if isinstance(name, str) else None))
    server = Turn("server", "", new=True)
    for pointer, message in messages(response, ""):
        message = message if isinstance(message, dict) else {}
        call_id = message.get("id") if isinstance(message.get("id"), (str, int)) else None
        if "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {}
            gist = f"error {error.get('code', '?')}: {error.get('message', _compact(message['error']))}"
        else:
            gist = _mcp_result(message.get("result"))
        server.entries.append(Entry("response", _clip(gist), pointer, None if call_id is None else str(call_id)))
    answered: set[str] = set()
    for entry in server.entries:
        request = next((e for e in client.entries if e.call_id is not None and e.call_id == entry.call_id), None)
        if request is None:
            entry.mark = Mark.ORPHAN
            continue
        entry.partner, request.partner = 0, 1
        entry.mark = Mark.AGAIN if entry.call_id in answered else Mark.NONE
        request.mark = Mark.ANSWERED
        answered.add(str(entry.call_id))
    if response is not None:
        for entry in client.entries:
            if entry.call_id is not None and entry.mark is Mark.NONE:
                entry.mark = Mark.UNANSWERED
    tools: dict[str, ToolUse] = {}
    for entry in server.entries:
        listed = _listed_tools(response, entry.pointer)
        for index, name in enumerate(listed):
            use = tools.setdefault(name, ToolUse(name, join(entry.pointer, "result", "tools", index)))
            use.declared += 1
    for entry in client.entries:
        if entry.name is not None:
            tools.setdefault(entry.name, ToolUse(entry.name, "")).called += 1
    turns = [client] + ([server] if server.entries else [])
    return Conversation(Dialect.MCP, turns, list(tools.values()))


def _error(error: Any) -> str:
    """A provider's error as its SDK would show it: type and message, the rest of the body after."""
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return _compact(error)
    kind = error.get("type") or error.get("status") or error.get("code")
    rest = {key: value for key, value in error.items() if key not in ("message", "type", "status")}
    text = f"{kind}: {error['message']}" if kind else error["message"]
    return text + (f" {_compact(rest)}" if rest else "")


def _mcp_result(result: Any) -> str:
    if isinstance(result, dict) and isinstance(result.get("tools"), list):
        names = [str(tool.get("name")) for tool in result["tools"] if isinstance(tool, dict)]
        return f"tools: {', '.join(names)}" if names else "tools: (none)"
    if isinstance(result, dict) and isinstance(result.get("content"), list):
        texts = [str(part.get("text")) for part in result["content"] if isinstance(part, dict) and "text" in part]
        return ("error: " if result.get("isError") else "") + (" ".join(texts) or _compact(result["content"]))
    return _compact(result)


def _listed_tools(response: Any, pointer: str) -> list[str]:
    node: Any = response
    for token in split(pointer):
        node = node[int(token)] if isinstance(node, list) else None
    result = node.get("result") if isinstance(node, dict) else None
    tools = result.get("tools") if isinstance(result, dict) else None
    return [tool["name"] for tool in tools or [] if isinstance(tool, dict) and isinstance(tool.get("name"), str)]


def _compact(value: Any) -> str:
    return jsonsafe.text(value).decode()  # any depth orjson reads, an int past 64 bits in full


def _clip(text: str) -> str:
    text = text.replace("\n", "⏎ ")
    return text if len(text) <= CLIP else f"{text[:CLIP]}… ({len(text) - CLIP} more characters)"
