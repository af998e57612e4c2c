"""Chat's repairs: tools and legacy functions, tool_choice, and the history's calls and results.

`fix(fixer, payload)` is this dialect's fixer (see `wire.fix`): it repairs `payload` in place."""

from __future__ import annotations

from typing import Any

from ...fix import UNAVAILABLE, Fixer, drop_nulls, fixed_arguments, json_schema
from ...naming import mint_id
from ...pointer import join
from .shape import with_root_properties
from ...rules import arguments
from ...rules.schema import strict_problem
from ...violations import Severity


def fix(fixer: Fixer, payload: dict[str, Any]) -> None:
    drop_nulls(fixer, payload, ("tools", "tool_choice", "functions", "function_call"), "OC-09")
    drop_nulls(fixer, payload, ("parallel_tool_calls",), "XL-10")
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


def _chat_tool(fixer: Fixer, given: Any, where: str) -> dict[str, Any] | None:
    if not isinstance(given, dict):
        fixer.note("OC-01", where, "dropped", "tool that is not an object dropped")
        return None
    tool: dict[str, Any] = given
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


def _chat_function(fixer: Fixer, function: dict[str, Any], where: str) -> None:
    function["name"] = fixer.name(function["name"], "OC-02", join(where, "name"))
    description = function.get("description")
    most = fixer.profile.description_max
    # Cut only where the endpoint refuses it (Azure): api.openai.com takes a longer one, and cutting it
    # there would lose what the model was told.
    if isinstance(description, str) and len(description) > most and fixer.profile.description_severity is Severity.ERROR:
        function["description"] = description[:most]
        fixer.note("OC-03", join(where, "description"), "set", f"description cut from {len(description)} to {most} "
                                                        "characters")
    if "parameters" in function and not isinstance(function["parameters"], dict):
        function["parameters"] = {"type": "object", "properties": {}}
        fixer.note("OC-05", join(where, "parameters"), "set", "parameters that were not a schema object replaced "
                                                       "by an empty object schema")
    if function.get("strict") is True and function.get("parameters") is None:
        # Absent parameters are read as a bare object, outside the strict subset; the closed empty
        # object says the same (no arguments) within it.
        function["parameters"] = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
        fixer.note("OC-06", join(where, "parameters"), "set", "strict:true with no parameters: the empty closed "
                                                        "object schema sent")
    parameters = function.get("parameters")
    if isinstance(parameters, dict):
        function["parameters"] = parameters = root_properties(
            fixer, json_schema(fixer, parameters, join(where, "parameters"), "OC-05"), join(where, "parameters"), "OC-05")
        if function.get("strict") is True and strict_problem(parameters) is not None:
            function["strict"] = False
            fixer.note("OC-06", join(where, "strict"), "set", "strict:true → false: the schema is not in the strict "
                                                       "subset (transforming it would change optional fields)")


def root_properties(fixer: Fixer, parameters: dict[str, Any], where: str, rule: str) -> dict[str, Any]:
    """An object root without properties gets the empty map OpenAI wants (the same function: no argument)."""
    fixed = with_root_properties(parameters)
    if fixed is not parameters:
        fixer.note(rule, where, "set", "\"properties\": {} added to the bare object schema")
    return fixed


def _chat_tool_choice(fixer: Fixer, payload: dict[str, Any], taken: set[str]) -> None:
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


def _chat_messages(fixer: Fixer, messages: list[Any]) -> list[Any]:
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


def _synthesised(fixer: Fixer, pending: dict[str, str], before: str) -> list[dict[str, Any]]:
    made = []
    for call_id in pending:
        made.append({"role": "tool", "tool_call_id": call_id, "content": UNAVAILABLE})
        fixer.note("OC-19", before, "synthesised", f"tool message {UNAVAILABLE!r} for unanswered call {call_id!r}")
    pending.clear()
    return made


def _chat_tool_message(fixer: Fixer, message: dict[str, Any], base: str) -> None:
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


def _chat_assistant(fixer: Fixer, message: dict[str, Any], base: str, pending: dict[str, str],
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
            call["arguments"] = fixed_arguments(fixer, call.get("arguments", "{}"), "OC-15",
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
        function["arguments"] = fixed_arguments(fixer, function.get("arguments", "{}"), "OC-15",
                                                 join(where, "function", "arguments"))
        pending[new] = function["name"]
        kept.append(call)
    if kept:
        message["tool_calls"] = kept
    else:
        del message["tool_calls"]
