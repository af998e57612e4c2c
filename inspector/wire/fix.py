"""Repairs for the defects that have a safe fix, each recorded with the rule it repairs.

`fix(payload, dialect, profile)` returns a new payload (the input is never changed) and the list of
repairs; the repaired payload passes the checker without errors for every defect repaired here.
Repair pointers point into the *original* payload. Choices that a reader needs to know:
- arguments that are not an object are wrapped as {"value": …} (arguments.WRAP_KEY);
- an invalid name becomes `<sanitised stem>_<sha256 prefix>` (naming.NameMap, as the bridges alias):
  injective, and reversible through `FixResult.aliases` (alias → original), applied to tools,
  tool_choice and every call in history;
- a call left unanswered gets a synthesised result "result unavailable" (flagged as an error where the
  dialect has a flag); a result that answers no pending call is dropped."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from . import jsonsafe, profiles
from .dialect import Dialect
from .naming import ID_RULES, NameMap, mint_id
from .pointer import join, split
from .profiles import Profile
from .rules import arguments
from .rules.base import Report
from .dialects.gemini.fields import doubled, field as gfield
from .dialects.gemini.schema import Change, to_genai, to_json_schema
from .rules.schema import check_strict
from .violations import Severity

UNAVAILABLE = "result unavailable"


@dataclass(frozen=True, slots=True)
class Repair:
    rule: str
    pointer: str  # where the defect was, in the original payload
    action: str  # converted | set | unwrapped | wrapped | encoded | removed | aliased | rewritten | synthesised | dropped | reordered | merged | moved
    detail: str


@dataclass(slots=True)
class FixResult:
    payload: Any
    repairs: list[Repair] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # alias -> original name


def fix(payload: Any, dialect: Dialect | str, profile: str | Profile | None = None) -> FixResult:
    """The repaired payload (a copy) and what was repaired. Raises jsonsafe.Unfaithful when the
    repaired payload could not be written back exactly as read (see `inspector.wire.jsonsafe`)."""
    dialect = Dialect(dialect)
    chosen = profiles.get(profile, dialect)
    document = orjson.loads(jsonsafe.dumps(payload))
    fixer = _Fixer(chosen, document)
    if isinstance(document, dict):
        _FIXERS[dialect](fixer, document)
    return FixResult(document, fixer.repairs, {alias: name for name, alias in fixer.names.forward.items()})


class _Fixer:
    def __init__(self, profile: Profile, document: Any) -> None:
        self.profile = profile
        self.repairs: list[Repair] = []
        self.names = NameMap(profile.names, _valid_names(document, profile))
        self.ids: dict[str, str] = {}  # rewritten call id: original -> new

    def note(self, rule: str, pointer: str, action: str, detail: str) -> None:
        self.repairs.append(Repair(rule, pointer, action, detail))

    # names ---------------------------------------------------------------------------------------
    def name(self, name: Any, rule: str, pointer: str) -> Any:
        """The name to use for `name`: itself when valid, else its alias (made once, then reused)."""
        if not isinstance(name, str) or not name or self.profile.name_ok(name):
            return name
        alias = self.names.alias(name)
        self.note(rule, pointer, "aliased", f"{name!r} → {alias!r}")
        return alias

    def keep_first(self, name: Any, taken: set[str], rule: str, pointer: str, what: str = "tool") -> bool:
        """False, with the removal noted, when `name` was declared already (the first one stays)."""
        if not isinstance(name, str):
            return True
        if name in taken:
            self.note(rule, pointer, "removed", f"duplicate {what} {name!r} removed (the first one is kept)")
            return False
        taken.add(name)
        return True

    def renamed(self, name: Any) -> str | None:
        """The alias already given to `name`, if any."""
        return self.names.forward.get(name) if isinstance(name, str) else None

    # call ids ------------------------------------------------------------------------------------
    def call_id(self, call_id: Any, seen: set[str], rule_pointer: tuple[str, str], limit: int | None,
                pattern: re.Pattern[str] | None = None) -> Any:
        """A call id that is unique in `seen` and fits the limit/charset; rewrites recorded."""
        if not isinstance(call_id, str) or not call_id:
            return call_id
        rule, pointer = rule_pointer
        fits = (limit is None or len(call_id) <= limit) and (pattern is None or pattern.fullmatch(call_id))
        if fits and call_id not in seen:
            seen.add(call_id)
            return call_id
        new = mint_id(call_id, seen, {call_id}, limit=limit or 64)
        seen.add(new)
        reason = "repeats an earlier id" if fits else "does not fit the id limit"
        self.note(rule, pointer, "rewritten", f"call id {call_id!r} {reason} → {new!r}")
        return new


def _valid_names(document: Any, profile: Profile) -> set[str]:
    """Every valid name the payload holds (tools, calls, choices, and more): an alias must never
    equal one of them."""
    found: set[str] = set()
    stack = [document]
    while stack:  # iterative: payloads may nest deeper than Python recurses
        value = stack.pop()
        if isinstance(value, dict):
            name = value.get("name")
            if isinstance(name, str) and profile.name_ok(name):
                found.add(name)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found


# schemas -------------------------------------------------------------------------------------------


def _json_schema(fixer: _Fixer, schema: dict[str, Any], pointer: str, rule: str) -> dict[str, Any]:
    """Function parameters as JSON Schema (a genai Schema converted; see dialects/gemini/schema.py)."""
    changes: list[Change] = []
    converted: dict[str, Any] = to_json_schema(schema, pointer, "", changes, root=True)
    _note_changes(fixer, changes, rule)
    return converted


def _note_changes(fixer: _Fixer, changes: list[Change], rule: str) -> None:
    for change in changes:
        fixer.note(change.rule or rule, change.source, "removed" if change.kind == "dropped" else change.kind,
                   change.why)


def _strict_compliant(schema: Any) -> bool:
    report = Report()
    check_strict(report, schema, "", "OC-06", what="")
    return not report.violations


# OpenAI Chat ---------------------------------------------------------------------------------------


def _drop_nulls(fixer: _Fixer, payload: dict[str, Any], keys: tuple[str, ...], rule: str) -> None:
    for key in keys:
        if key in payload and payload[key] is None:
            del payload[key]
            fixer.note(rule, join("", key), "removed", f"{key}: null removed (null means absent)")


def _fix_chat(fixer: _Fixer, payload: dict[str, Any]) -> None:
    _drop_nulls(fixer, payload, ("tools", "tool_choice", "functions", "function_call"), "OC-09")
    _drop_nulls(fixer, payload, ("parallel_tool_calls",), "XL-10")
    taken: set[str] = set()
    if isinstance(payload.get("tools"), list):
        kept = []
        for index, tool in enumerate(payload["tools"]):
            where = join("/tools", index)
            fixed = _chat_tool(fixer, tool, where)
            if fixed is None:
                continue
            if fixer.keep_first(_chat_tool_name(fixed), taken, "XL-03", where):
                kept.append(fixed)
        payload["tools"] = kept
        if not kept:
            del payload["tools"]
            fixer.note("OC-09", "/tools", "removed", "empty tools removed")
    if isinstance(payload.get("functions"), list):
        kept = []
        for index, function in enumerate(payload["functions"]):
            where = join("/functions", index)
            if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
                fixer.note("OC-20", where, "dropped", "function without a name dropped")
                continue
            _chat_function(fixer, function, where)
            if fixer.keep_first(function["name"], taken, "XL-03", where, "function"):
                kept.append(function)
        payload["functions"] = kept
        if not kept:
            del payload["functions"]
            fixer.note("OC-09", "/functions", "removed", "empty functions removed")
    _chat_tool_choice(fixer, payload, taken)
    if isinstance(payload.get("messages"), list):
        payload["messages"] = _chat_messages(fixer, payload["messages"])


def _chat_tool_name(tool: dict[str, Any]) -> Any:
    if tool.get("type") == "custom":
        return tool.get("custom", {}).get("name")
    return tool.get("function", {}).get("name")


def _chat_tool(fixer: _Fixer, tool: Any, where: str) -> dict[str, Any] | None:
    if not isinstance(tool, dict):
        fixer.note("OC-01", where, "dropped", "tool that is not an object dropped")
        return None
    kind = tool.get("type")
    if kind == "custom":
        custom = tool.get("custom")
        if not isinstance(custom, dict) or not isinstance(custom.get("name"), str) or not custom["name"]:
            fixer.note("OC-02", where, "dropped", "custom tool without a name dropped")
            return None
        custom["name"] = fixer.name(custom["name"], "OC-02", join(where, "custom", "name"))
        return tool
    if kind == "function" and not isinstance(tool.get("function"), dict) and isinstance(tool.get("name"), str):
        nested = {key: tool[key] for key in ("name", "description", "parameters", "strict") if key in tool}
        tool = {"type": "function", "function": nested}
        fixer.note("OC-01", where, "converted", "flat Responses tool nested under function")
    elif kind != "function" or not isinstance(tool.get("function"), dict):
        detail = (f"built-in tool {kind!r} dropped (Chat has only function/custom tools; web search is "
                  "web_search_options)" if isinstance(kind, str) and kind != "function" else "tool without a function "
                  "definition dropped")
        fixer.note("XL-09" if isinstance(kind, str) and kind != "function" else "OC-01", where, "dropped", detail)
        return None
    function = tool["function"]
    if not isinstance(function.get("name"), str) or not function["name"]:
        fixer.note("XL-09", where, "dropped", "function tool with an empty name dropped")
        return None
    _chat_function(fixer, function, join(where, "function"))
    return tool


def _chat_function(fixer: _Fixer, function: dict[str, Any], where: str) -> None:
    function["name"] = fixer.name(function["name"], "OC-02", join(where, "name"))
    description = function.get("description")
    if isinstance(description, str) and len(description) > 1024:
        function["description"] = description[:1024]
        fixer.note("OC-03", join(where, "description"), "set", f"description cut from {len(description)} to 1024 "
                                                        "characters")
    if "parameters" in function and not isinstance(function["parameters"], dict):
        function["parameters"] = {"type": "object", "properties": {}}
        fixer.note("OC-05", join(where, "parameters"), "set", "parameters that were not a schema object replaced "
                                                       "by an empty object schema")
    parameters = function.get("parameters")
    if isinstance(parameters, dict):
        function["parameters"] = parameters = _json_schema(fixer, parameters, join(where, "parameters"), "OC-05")
        if function.get("strict") is True and not _strict_compliant(parameters):
            function["strict"] = False
            fixer.note("OC-06", join(where, "strict"), "set", "strict:true → false: the schema is not in the strict "
                                                       "subset (transforming it would change optional fields)")


def _chat_tool_choice(fixer: _Fixer, payload: dict[str, Any], taken: set[str]) -> None:
    choice = payload.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "function":
        if not isinstance(choice.get("function"), dict) and isinstance(choice.get("name"), str):
            payload["tool_choice"] = choice = {"type": "function", "function": {"name": choice["name"]}}
            fixer.note("OC-08", "/tool_choice", "converted", "flat Responses tool_choice nested under function")
        function = choice.get("function")
        if isinstance(function, dict) and fixer.renamed(function.get("name")):
            function["name"] = fixer.renamed(function["name"])
            fixer.note("OC-02", "/tool_choice/function/name", "aliased", f"→ {function['name']!r}")
    if isinstance(payload.get("function_call"), dict) and fixer.renamed(payload["function_call"].get("name")):
        payload["function_call"]["name"] = fixer.renamed(payload["function_call"]["name"])
        fixer.note("OC-02", "/function_call/name", "aliased", f"→ {payload['function_call']['name']!r}")
    if "tool_choice" in payload and "tools" not in payload and payload["tool_choice"] != "none" \
            and fixer.profile.tool_choice_needs_tools:
        del payload["tool_choice"]
        fixer.note("OC-11", "/tool_choice", "removed", "tool_choice without tools removed")
    if "tool_choice" in payload and "tools" not in payload and isinstance(payload["tool_choice"], dict):
        del payload["tool_choice"]
        fixer.note("OC-11", "/tool_choice", "removed", "named tool_choice without tools removed")


def _fixed_arguments(fixer: _Fixer, value: Any, rule: str, pointer: str) -> str:
    if isinstance(value, str) and arguments.decode(value).ok:
        return value
    obj, note = arguments.as_object(value)
    action = "encoded" if isinstance(value, dict) else ("unwrapped" if "unwrapped" in note else "wrapped")
    fixer.note(rule, pointer, action, note or "arguments object encoded once as a JSON string")
    return arguments.encode(obj)


def _chat_messages(fixer: _Fixer, messages: list[Any]) -> list[Any]:
    out: list[Any] = []
    pending: dict[str, str] = {}  # id -> name of the call, for the latest assistant batch
    seen_ids: set[str] = set()
    rewritten: dict[str, str] = {}
    for index, message in enumerate(messages):
        base = join("/messages", index)
        if not isinstance(message, dict):
            out.append(message)
            continue
        role = message.get("role")
        if role == "tool":
            _chat_tool_message(fixer, message, base)
            call_id = message.get("tool_call_id")
            call_id = rewritten.get(call_id, call_id) if isinstance(call_id, str) else call_id
            if isinstance(call_id, str) and call_id in pending:
                message["tool_call_id"] = call_id
                del pending[call_id]
                out.append(message)
            else:
                fixer.note("OC-18", base, "dropped", f"tool message answering {call_id!r} dropped: no pending call")
            continue
        if pending:
            out.extend(_synthesised(fixer, pending, base))
        if role == "assistant":
            _chat_assistant(fixer, message, base, pending, seen_ids, rewritten)
        elif role == "function" and "content" not in message:
            message["content"] = ""
            fixer.note("OC-20", join(base, "content"), "set", "missing function message content set to \"\"")
        out.append(message)
    if pending:
        out.extend(_synthesised(fixer, pending, join("/messages", len(messages))))
    return out


def _synthesised(fixer: _Fixer, pending: dict[str, str], before: str) -> list[dict[str, Any]]:
    made = []
    for call_id in pending:
        made.append({"role": "tool", "tool_call_id": call_id, "content": UNAVAILABLE})
        fixer.note("OC-19", before, "synthesised", f"tool message {UNAVAILABLE!r} for unanswered call {call_id!r}")
    pending.clear()
    return made


def _chat_tool_message(fixer: _Fixer, message: dict[str, Any], base: str) -> None:
    content = message.get("content")
    if content is None:
        message["content"] = ""
        fixer.note("OC-17", join(base, "content"), "set", "missing tool content set to \"\"")
    elif isinstance(content, list):
        texts = [part for part in content if isinstance(part, dict) and part.get("type") == "text"
                 and isinstance(part.get("text"), str)]
        if len(texts) != len(content):
            fixer.note("XL-15", join(base, "content"), "dropped", f"{len(content) - len(texts)} non-text part(s) "
                                                                 "dropped: Chat tool messages carry text only")
        message["content"] = texts if texts else ""
        if not texts:
            fixer.note("OC-17", join(base, "content"), "set", "tool content without text parts set to \"\"")
    elif not isinstance(content, str):
        message["content"] = arguments.encode(content) if isinstance(content, dict) else str(content)
        fixer.note("OC-17", join(base, "content"), "encoded", "non-string tool content serialised to text")


def _chat_assistant(fixer: _Fixer, message: dict[str, Any], base: str, pending: dict[str, str],
                    seen_ids: set[str], rewritten: dict[str, str]) -> None:
    if message.get("content") == []:
        message["content"] = None if message.get("tool_calls") else ""
        fixer.note("OC-12", join(base, "content"), "set", "empty assistant content array replaced")
    if "function_call" in message:
        call = message["function_call"]
        if call is None:
            del message["function_call"]
            fixer.note("XL-10", join(base, "function_call"), "removed", "function_call: null removed")
        elif isinstance(call, dict):
            if "name" in call:
                call["name"] = fixer.name(call["name"], "OC-02", join(base, "function_call", "name"))
            call["arguments"] = _fixed_arguments(fixer, call.get("arguments", "{}"), "OC-15",
                                                 join(base, "function_call", "arguments"))
    if "tool_calls" not in message:
        return
    calls = message["tool_calls"]
    if not isinstance(calls, list) or not calls:
        del message["tool_calls"]
        fixer.note("OC-13" if calls == [] else "XL-10", join(base, "tool_calls"), "removed",
                   "tool_calls: [] removed" if calls == [] else "tool_calls that is not a list removed")
        return
    if "content" not in message and fixer.profile.content_key_required:
        message["content"] = None
        fixer.note("OC-12", join(base, "content"), "set", "content: null added (this profile needs the key)")
    limit = fixer.profile.call_id_max if fixer.profile.call_id_severity is Severity.ERROR else None
    kept = []
    for position, call in enumerate(calls):
        where = join(base, "tool_calls", position)
        if not isinstance(call, dict) or not isinstance(call.get("function"), dict) \
                or not isinstance(call["function"].get("name"), str) or not call["function"]["name"]:
            fixer.note("OC-14", where, "dropped", "tool call without a function name dropped")
            continue
        call["type"] = "function" if call.get("type") != "function" else call["type"]
        original = call.get("id")
        if not isinstance(original, str) or not original:
            original = mint_id(where)
            fixer.note("OC-14", join(where, "id"), "set", f"missing call id set to {original!r}")
        new = fixer.call_id(original, seen_ids, ("OC-16" if limit and len(original) > limit else "XL-04",
                                                 join(where, "id")), limit)
        if new != original:
            rewritten[original] = new
        call["id"] = new
        function = call["function"]
        function["name"] = fixer.name(function["name"], "OC-02", join(where, "function", "name"))
        function["arguments"] = _fixed_arguments(fixer, function.get("arguments", "{}"), "OC-15",
                                                 join(where, "function", "arguments"))
        pending[new] = function["name"]
        kept.append(call)
    if kept:
        message["tool_calls"] = kept
    else:
        del message["tool_calls"]


# OpenAI Responses ----------------------------------------------------------------------------------


def _fix_responses(fixer: _Fixer, payload: dict[str, Any]) -> None:
    _drop_nulls(fixer, payload, ("tools", "tool_choice"), "XL-10")
    taken: set[str] = set()
    if isinstance(payload.get("tools"), list):
        kept = []
        for index, tool in enumerate(payload["tools"]):
            where = join("/tools", index)
            if isinstance(tool, dict) and tool.get("type") == "function" and isinstance(tool.get("function"), dict):
                tool = {"type": "function", **tool["function"]}
                fixer.note("OR-02", join(where, "function"), "converted", "nested Chat tool flattened")
            if isinstance(tool, dict) and tool.get("type") == "function":
                if not isinstance(tool.get("name"), str) or not tool["name"]:
                    fixer.note("XL-09", where, "dropped", "function tool with an empty name dropped")
                    continue
                tool["name"] = fixer.name(tool["name"], "OR-03", join(where, "name"))
                if isinstance(tool.get("parameters"), dict):
                    tool["parameters"] = _json_schema(fixer, tool["parameters"], join(where, "parameters"), "XL-01")
                    if tool.get("strict") is True and not _strict_compliant(tool["parameters"]):
                        tool["strict"] = False
                        fixer.note("XL-13", join(where, "strict"), "set", "strict:true → false (schema not strict)")
                if not fixer.keep_first(tool["name"], taken, "XL-03", where):
                    continue
            kept.append(tool)
        payload["tools"] = kept
    choice = payload.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "function":
        if isinstance(choice.get("function"), dict):
            payload["tool_choice"] = choice = {"type": "function", "name": choice["function"].get("name")}
            fixer.note("OR-04", "/tool_choice", "converted", "nested Chat tool_choice flattened")
        if fixer.renamed(choice.get("name")):
            choice["name"] = fixer.renamed(choice["name"])
            fixer.note("OR-03", "/tool_choice/name", "aliased", f"→ {choice['name']!r}")
    if isinstance(payload.get("input"), list):
        payload["input"] = _responses_input(fixer, payload["input"], payload.get("previous_response_id") is not None)


def _responses_input(fixer: _Fixer, items: list[Any], server_history: bool) -> list[Any]:
    out: list[Any] = []
    pending: list[str] = []
    seen: set[str] = set()
    answered: set[str] = set()
    for index, item in enumerate(items):
        base = join("/input", index)
        if not isinstance(item, dict):
            out.append(item)
            continue
        kind = item.get("type")
        if kind in (None, "message") and item.get("role") == "tool":
            item = {"type": "function_call_output", "call_id": item.get("tool_call_id"),
                    "output": item.get("content") if isinstance(item.get("content"), str) else ""}
            fixer.note("OR-05", base, "converted", "role:'tool' message → function_call_output item")
            kind = "function_call_output"
        if kind == "function_call":
            if isinstance(item.get("name"), str):
                item["name"] = fixer.name(item["name"], "OR-03", join(base, "name"))
            item["arguments"] = _fixed_arguments(fixer, item.get("arguments", "{}"), "XL-08", join(base, "arguments"))
            if item.get("id") is not None and not (isinstance(item["id"], str) and item["id"].startswith("fc")):
                fixer.note("OR-06", join(base, "id"), "removed", f"id {item['id']!r} is not an fc_ id")
                del item["id"]
            call_id = item.get("call_id")
            if isinstance(call_id, str):
                item["call_id"] = call_id = fixer.call_id(call_id, seen, ("XL-04", join(base, "call_id")), 64)
                pending.append(call_id)
            out.append(item)
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if not isinstance(item.get("output"), (str, list)):
                item["output"] = ""
                fixer.note("OR-07", join(base, "output"), "set", "missing output set to \"\"")
            if isinstance(call_id, str) and call_id in pending:
                pending.remove(call_id)
                answered.add(call_id)
                out.append(item)
            elif server_history and isinstance(call_id, str) and call_id not in seen:
                out.append(item)
            else:
                fixer.note("OR-08", base, "dropped", f"function_call_output for {call_id!r} dropped: no pending call")
        else:
            if pending and "role" in item:
                out.extend(_responses_unavailable(fixer, pending, base))
            out.append(item)
    if pending:
        out.extend(_responses_unavailable(fixer, pending, join("/input", len(items))))
    return out


def _responses_unavailable(fixer: _Fixer, pending: list[str], before: str) -> list[dict[str, Any]]:
    made = [{"type": "function_call_output", "call_id": call_id, "output": UNAVAILABLE} for call_id in pending]
    for call_id in pending:
        fixer.note("OR-08", before, "synthesised", f"function_call_output {UNAVAILABLE!r} for {call_id!r}")
    pending.clear()
    return made


# Anthropic -----------------------------------------------------------------------------------------

_ANTHROPIC_ID = ID_RULES[Dialect.ANTHROPIC]  # (pattern, max length) of a tool_use id


def _fix_anthropic(fixer: _Fixer, payload: dict[str, Any]) -> None:
    _drop_nulls(fixer, payload, ("tools", "tool_choice"), "XL-10")
    taken: set[str] = set()
    if isinstance(payload.get("tools"), list):
        kept = []
        for index, tool in enumerate(payload["tools"]):
            where = join("/tools", index)
            if not isinstance(tool, dict):
                fixer.note("AN-01", where, "dropped", "tool that is not an object dropped")
                continue
            if tool.get("type") in (None, "custom"):
                if not isinstance(tool.get("name"), str) or not tool["name"]:
                    fixer.note("AN-02", where, "dropped", "tool without a name dropped")
                    continue
                tool["name"] = fixer.name(tool["name"], "AN-02", join(where, "name"))
                if not isinstance(tool.get("input_schema"), dict):
                    tool["input_schema"] = {"type": "object", "properties": {}}
                    fixer.note("AN-01", join(where, "input_schema"), "set", "missing input_schema set to an empty "
                                                                     "object schema")
                tool["input_schema"] = _json_schema(fixer, tool["input_schema"], join(where, "input_schema"), "XL-01")
            if fixer.keep_first(tool.get("name"), taken, "AN-03", where):
                kept.append(tool)
        payload["tools"] = kept
        if not kept:
            del payload["tools"]
    choice = payload.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool" and fixer.renamed(choice.get("name")):
        choice["name"] = fixer.renamed(choice["name"])
        fixer.note("AN-02", "/tool_choice/name", "aliased", f"→ {choice['name']!r}")
    if "tool_choice" in payload and "tools" not in payload:
        del payload["tool_choice"]
        fixer.note("AN-10", "/tool_choice", "removed", "tool_choice without tools removed")
    if isinstance(payload.get("messages"), list):
        payload["messages"] = _anthropic_messages(fixer, payload["messages"])


def _anthropic_messages(fixer: _Fixer, messages: list[Any]) -> list[Any]:
    out: list[Any] = []
    pending: list[str] = []
    seen: set[str] = set()
    rewritten: dict[str, str] = {}
    for index, message in enumerate(messages):
        base = join("/messages", index)
        if not isinstance(message, dict):
            out.append(message)
            continue
        role = message.get("role")
        blocks = message.get("content") if isinstance(message.get("content"), list) else None
        if role == "user":
            results, others = [], []
            for position, block in enumerate(blocks or []):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    tool_use_id = block.get("tool_use_id")
                    tool_use_id = rewritten.get(tool_use_id, tool_use_id) if isinstance(tool_use_id, str) else None
                    if tool_use_id in pending:
                        block["tool_use_id"] = tool_use_id
                        pending.remove(tool_use_id)
                        results.append(block)
                    else:
                        fixer.note("AN-08", join(base, "content", position), "dropped",
                                   f"tool_result for {block.get('tool_use_id')!r} dropped: no pending tool_use")
                else:
                    others.append(block)
            if results and others and blocks is not None and blocks[: len(results)] != results:
                fixer.note("AN-09", join(base, "content"), "reordered", "tool_result blocks moved before the text")
            results.extend(_anthropic_unavailable(fixer, pending, base))
            if blocks is not None:
                message["content"] = results + others
            elif results:
                text = message.get("content")
                message["content"] = results + ([{"type": "text", "text": text}] if isinstance(text, str) and text
                                                 else [])
        else:
            if pending:
                out.append({"role": "user", "content": _anthropic_unavailable(fixer, pending, base)})
            if role == "assistant":
                for position, block in enumerate(blocks or []):
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        where = join(base, "content", position)
                        if isinstance(block.get("name"), str):
                            block["name"] = fixer.name(block["name"], "AN-02", join(where, "name"))
                        if not isinstance(block.get("input"), dict):
                            block["input"], note = arguments.as_object(block.get("input", {}))
                            fixer.note("AN-05", join(where, "input"), "converted", note or "input decoded")
                        original = block.get("id")
                        if isinstance(original, str):
                            new = fixer.call_id(original, seen, ("AN-05", join(where, "id")), _ANTHROPIC_ID[1],
                                                _ANTHROPIC_ID[0])
                            rewritten[original] = new
                            block["id"] = new
                            pending.append(new)
        content = message.get("content")
        if (content == "" or content == []) and not (role == "assistant" and index == len(messages) - 1):
            fixer.note("AN-12", base, "dropped", "message with empty content dropped")
            continue
        out.append(message)
    if pending:
        out.append({"role": "user",
                    "content": _anthropic_unavailable(fixer, pending, join("/messages", len(messages)))})
    return out


def _anthropic_unavailable(fixer: _Fixer, pending: list[str], before: str) -> list[dict[str, Any]]:
    made = [{"type": "tool_result", "tool_use_id": block_id, "content": UNAVAILABLE, "is_error": True}
            for block_id in pending]
    for block_id in pending:
        fixer.note("AN-07", before, "synthesised", f"tool_result {UNAVAILABLE!r} (is_error) for {block_id!r}")
    pending.clear()
    return made


# Gemini --------------------------------------------------------------------------------------------

def _fix_gemini(fixer: _Fixer, payload: dict[str, Any]) -> None:
    # A field in both spellings (GM-16): the camelCase one is what the bridge reads, so it stays.
    for where, name in doubled(payload):
        *path, key = split(where)
        parent: Any = payload
        for token in path:
            parent = parent[int(token)] if isinstance(parent, list) else parent.get(token)
            if not isinstance(parent, (dict, list)):
                break
        if isinstance(parent, dict) and key in parent:  # absent when an enclosing twin went first
            del parent[key]
            fixer.note("GM-16", where, "removed", f"the snake_case twin of {name!r} removed; the camelCase one stays")
    taken: set[str] = set()
    for index, tool in enumerate(payload.get("tools") if isinstance(payload.get("tools"), list) else []):
        if not isinstance(tool, dict):
            continue
        key, decls = gfield(tool, "functionDeclarations")
        if not isinstance(decls, list):
            continue
        kept = []
        for position, decl in enumerate(decls):
            where = join("/tools", index, key, position)
            if not isinstance(decl, dict) or not isinstance(decl.get("name"), str) or not decl["name"]:
                fixer.note("GM-02", where, "dropped", "declaration without a name dropped")
                continue
            decl["name"] = fixer.name(decl["name"], "GM-02", join(where, "name"))
            params_key, parameters = gfield(decl, "parameters")
            json_key, json_schema = gfield(decl, "parametersJsonSchema")
            if parameters is not None and json_schema is not None:
                del decl[params_key]
                fixer.note("GM-05", join(where, params_key), "removed", "parameters removed: parametersJsonSchema "
                                                                       "carries the schema")
            elif isinstance(parameters, dict):
                changes: list[Change] = []
                decl[params_key] = to_genai(parameters, join(where, params_key), "", changes, root=True, respell=False)
                _note_changes(fixer, changes, "GM-04")
            if fixer.keep_first(decl["name"], taken, "GM-14", where, "declaration"):
                kept.append(decl)
        tool[key] = kept
    if isinstance(payload.get("contents"), list):
        for index, content in enumerate(payload["contents"]):
            for position, part in enumerate(content.get("parts", []) if isinstance(content, dict)
                                             and isinstance(content.get("parts"), list) else []):
                if not isinstance(part, dict):
                    continue
                key, call = gfield(part, "functionCall")
                where = join("/contents", index, "parts", position, key)
                if isinstance(call, dict):
                    if isinstance(call.get("name"), str):
                        call["name"] = fixer.name(call["name"], "GM-02", join(where, "name"))
                    if "args" in call and call["args"] is not None and not isinstance(call["args"], dict):
                        call["args"], note = arguments.as_object(call["args"])
                        fixer.note("GM-08", join(where, "args"), "converted", note or "args decoded")
                rkey, response = gfield(part, "functionResponse")
                if isinstance(response, dict):
                    rwhere = join("/contents", index, "parts", position, rkey)
                    if isinstance(response.get("name"), str):
                        response["name"] = fixer.name(response["name"], "GM-02", join(rwhere, "name"))
                    if not isinstance(response.get("response"), dict):
                        response["response"] = {"output": response.get("response")}
                        fixer.note("GM-09", join(rwhere, "response"), "wrapped", "response wrapped as {\"output\": …}")


def _fix_mcp(fixer: _Fixer, payload: dict[str, Any]) -> None:
    params = payload.get("params")
    if payload.get("method") == "tools/call" and isinstance(params, dict) and "arguments" in params \
            and params["arguments"] is not None and not isinstance(params["arguments"], dict):
        params["arguments"], note = arguments.as_object(params["arguments"])
        fixer.note("MCP-04", "/params/arguments", "converted", note or "arguments decoded")
    result = payload.get("result")
    if isinstance(result, dict) and isinstance(result.get("tools"), list):
        for index, tool in enumerate(result["tools"]):
            if isinstance(tool, dict) and tool.get("inputSchema") is None:
                tool["inputSchema"] = {"type": "object", "additionalProperties": False}
                fixer.note("MCP-02", join("/result/tools", index, "inputSchema"), "set",
                           "null inputSchema → the recommended no-argument schema")
            elif isinstance(tool, dict) and isinstance(tool.get("inputSchema"), dict):
                tool["inputSchema"] = _json_schema(fixer, tool["inputSchema"],
                                                   join("/result/tools", index, "inputSchema"), "XL-01")


_FIXERS = {
    Dialect.OPENAI_CHAT: _fix_chat,
    Dialect.OPENAI_RESPONSES: _fix_responses,
    Dialect.ANTHROPIC: _fix_anthropic,
    Dialect.GEMINI: _fix_gemini,
    Dialect.MCP: _fix_mcp,
}
