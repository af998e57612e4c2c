"""OpenAI Chat Completions (OC-* in docs/rules.md): tools, tool_choice, messages and their pairing, the
legacy functions surface, and responses. Streams are in `streams.py` (they reuse `check_call`)."""

from __future__ import annotations

from typing import Any

from ...profiles import Profile, with_model
from ...violations import Severity
from ...rules import arguments
from ...pointer import join
from ...rules.base import (Report, as_dict, as_list, check_history, check_null_or_empty, check_ranges,
                           check_tool_exchange, check_tool_name, mentions, readable, remember_name, short)
from ...rules.schema import check_json_schema, check_strict
from . import limits
from .shape import lacks_root_properties

FINISH_REASONS = frozenset({"stop", "length", "tool_calls", "content_filter", "function_call"})
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_CHOICE_STRINGS = ("none", "auto", "required")


DEGRADED_TOOL = ("XL-09", "function tool has no name: a built-in tool degraded into a function?")


def check_name(report: Report, profile: Profile, name: Any, pointer: str, what: str,
               unnamed: tuple[str, str] | None = None) -> None:
    check_tool_name(report, profile, name, pointer, what, "OC-02",
                    unnamed=DEGRADED_TOOL if what == "tool" else unnamed)


def check_arguments_text(report: Report, profile: Profile, value: Any, pointer: str, rule: str = "OC-15") -> None:
    """OC-14 (a string) and OC-15 (one JSON text of an object). `rule` is XL-08 for Responses."""
    if not isinstance(value, str):
        shape = "OC-14" if rule == "OC-15" else "OR-06"
        report.add(shape, pointer, f"arguments is {type(value).__name__ if value is not None else 'null'}, "
                                   "not a JSON string")
        return
    decoded = arguments.decode(value)
    if decoded.ok:
        return
    severity = Severity.ERROR if profile.strict_arguments else Severity.WARNING
    report.add(rule, pointer, f"arguments is {decoded.describe()}: {short(value)}", severity)


def check_call(report: Report, profile: Profile, call: Any, pointer: str, ids: dict[str, str],
               unnamed: tuple[str, str] | None = None) -> str | None:
    """One entry of tool_calls (request history or response; `unnamed` is the response's rule for a
    call without a name). Returns its id when it has one."""
    if not isinstance(call, dict):
        report.add("OC-14", pointer, f"tool call is {short(call)}, not an object")
        return None
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        report.add("OC-14", join(pointer, "id"), "tool call has no id")
        call_id = None
    else:
        if profile.call_id_max is not None and len(call_id) > profile.call_id_max:
            report.add("OC-16", join(pointer, "id"), f"tool call id is {len(call_id)} characters; "
                                                     f"{profile.name} allows {profile.call_id_max}"
                                                     + ("" if profile.openai_limits else
                                                        f" for openai/ models, not {profile.model or 'this one'}"),
                       profile.call_id_severity if profile.openai_limits else Severity.WARNING)
        if call_id in ids:
            report.add("XL-04", join(pointer, "id"), f"tool call id {short(call_id)} is already used at "
                                                     f"{ids[call_id]}")
        else:
            ids[call_id] = join(pointer, "id")
    kind = call.get("type")
    if kind == "custom":
        custom = call.get("custom")
        if not isinstance(custom, dict) or not isinstance(custom.get("input"), str):
            report.add("OC-14", join(pointer, "custom"), "custom tool call needs custom.name and custom.input "
                                                         "(a string)")
        else:
            check_name(report, profile, custom.get("name"), join(pointer, "custom", "name"), "custom tool call",
                       unnamed)
        return call_id
    if kind != "function" and not (kind is None and profile.mistral):
        report.add("OC-14", join(pointer, "type"), f"tool call type is {short(kind)}, not 'function'")
    function = call.get("function")
    if not isinstance(function, dict):
        report.add("OC-14", join(pointer, "function"), "tool call has no function object")
        return call_id
    check_name(report, profile, function.get("name"), join(pointer, "function", "name"), "called function", unnamed)
    if "arguments" not in function:
        report.add("OC-14", join(pointer, "function", "arguments"), "tool call has no arguments")
    else:
        check_arguments_text(report, profile, function["arguments"], join(pointer, "function", "arguments"))
    return call_id


def _check_tool(report: Report, profile: Profile, tool: Any, pointer: str, names: dict[str, str]) -> None:
    if not isinstance(tool, dict):
        report.add("OC-01", pointer, f"tool is {short(tool)}, not an object")
        return
    kind = tool.get("type")
    if kind == "custom":
        custom = tool.get("custom")
        name = custom.get("name") if isinstance(custom, dict) else None
        check_name(report, profile, name, join(pointer, "custom", "name"), "tool")
        remember_name(report, "XL-03", names, name, join(pointer, "custom", "name"))
        return
    if profile.server_tool_prefix and isinstance(kind, str) and kind.startswith(profile.server_tool_prefix):
        return
    if kind != "function" and not (kind is None and profile.mistral):
        hint = ("use the top-level web_search_options" if isinstance(kind, str) and "web_search" in kind
                else "map it to a function tool or drop it with a warning")
        report.add("OC-01", join(pointer, "type"), f"tool type {short(kind)} is not accepted by Chat "
                                                   f"(only 'function' and 'custom')", hint=f"Built-in tools: {hint}.")
        return
    function = tool.get("function")
    if not isinstance(function, dict):
        flat = " (the flat {type, name, parameters} is the Responses shape)" if "name" in tool else ""
        report.add("OC-01", join(pointer, "function"), "function tool has no function definition (\"expected a "
                                                       f"function definition, but got null\"){flat}")
        return
    _check_function(report, profile, function, join(pointer, "function"), "tool", names)


def _check_function(report: Report, profile: Profile, function: dict[str, Any], pointer: str, what: str,
                    names: dict[str, str]) -> None:
    name = function.get("name")
    check_name(report, profile, name, join(pointer, "name"), what)
    remember_name(report, "XL-03", names, name, join(pointer, "name"))
    label = f"function {name!r}" if isinstance(name, str) else "function"
    description = function.get("description")
    if isinstance(description, str) and len(description) > profile.description_max:
        limit = (f"max {profile.description_max} on {profile.name}" if profile.description_severity is Severity.ERROR
                 else f"{profile.name} accepts it; Azure stops at {profile.description_max}")
        report.add("OC-03", join(pointer, "description"), f"{label}: description is {len(description)} characters "
                                                          f"({limit})", profile.description_severity)
    strict = function.get("strict") is True
    severity = None if profile.openai_limits else Severity.WARNING
    if "parameters" not in function or function["parameters"] is None:
        if strict:
            # OpenAI reads absent parameters as {"type": "object"}, which the strict subset refuses.
            report.add("OC-06", join(pointer, "parameters"), f"{label}: strict:true with no parameters (OpenAI "
                                                             "reads them as an object without additionalProperties:"
                                                             "false)", severity)
        return
    parameters = function["parameters"]
    where = join(pointer, "parameters")
    if not isinstance(parameters, dict):
        report.add("OC-05", where, f"{label}: parameters is {short(parameters)}, not a JSON Schema object")
        return
    root_type = parameters.get("type")
    # An upper-case "OBJECT" is reported once, by the schema walk.
    if root_type is not None and not (isinstance(root_type, str) and root_type.lower() == "object"):
        report.add("OC-05", join(where, "type"), f"{label}: parameters must be type 'object', not {short(root_type)}")
    check_json_schema(report, parameters, where, "OC-05", what=label)
    if strict:  # the strict subset's own rule names the missing properties
        check_strict(report, parameters, where, "OC-06", what=label, severity=severity)
    else:
        check_root_properties(report, profile, parameters, where, "OC-05", label)


def check_root_properties(report: Report, profile: Profile, parameters: dict[str, Any], where: str, rule: str,
                          label: str) -> None:
    """OpenAI's own endpoints (Chat and Responses) refuse a function declared with a bare object
    schema; servers that only speak the dialect take it, so elsewhere nothing is said."""
    openai_serves = profile.openai_limits and (profile.published_schema or profile.routes_by_model)
    if openai_serves and lacks_root_properties(parameters):
        report.add(rule, where, f"{label}: parameters is an object schema with no properties; OpenAI answers 400 "
                                "\"object schema missing properties\" (send \"properties\": {} when it takes no argument)")


def _routed(profile: Profile, payload: dict[str, Any]) -> Profile:
    """A router's profile with the model the body names (the verdict of some rules follows it)."""
    model = payload.get("model")
    return with_model(profile, model) if profile.routes_by_model and isinstance(model, str) else profile


def check_request(payload: Any, profile: Profile, report: Report) -> None:
    if not isinstance(payload, dict):
        return
    profile = _routed(profile, payload)
    if profile.reaches_provider:
        check_ranges(report, "OC-30", payload, limits.ranges(profile), limits.FIELDS)
    names: dict[str, str] = {}
    tools = as_list(payload.get("tools"))
    refused = payload.get("tool_choice") is not None or profile.empty_tools_refused
    if check_null_or_empty(report, payload, "tools", "", "OC-09", empty=Severity.ERROR if refused else Severity.WARNING):
        if not isinstance(payload["tools"], list):
            report.add("OC-01", "/tools", "tools must be an array")
        elif profile.max_tools is not None and len(tools) > profile.max_tools:
            report.add("OC-04", "/tools", f"{len(tools)} tools; {profile.name} accepts at most {profile.max_tools}")
        for index, tool in enumerate(tools):
            _check_tool(report, profile, tool, join("/tools", index), names)
    functions = as_list(payload.get("functions"))
    if check_null_or_empty(report, payload, "functions", "", "OC-09"):
        if len(functions) > 128:
            report.add("OC-04", "/functions", f"{len(functions)} functions; at most 128")
        for index, function in enumerate(functions):
            if isinstance(function, dict):
                _check_function(report, profile, function, join("/functions", index), "function", names)
            else:
                report.add("OC-20", join("/functions", index), f"function is {short(function)}, not an object")
    strict = next((i for i, t in enumerate(tools) if as_dict(as_dict(t).get("function")).get("strict") is True), None)
    if strict is not None and payload.get("parallel_tool_calls") is not False:
        report.add("OC-07", "/parallel_tool_calls" if "parallel_tool_calls" in payload else
                   join("/tools", strict, "function", "strict"),
                   "strict tools with parallel calls allowed: parallel calls may not match the schemas")
    if "parallel_tool_calls" in payload:
        value = payload["parallel_tool_calls"]
        if value is None:
            report.add("XL-10", "/parallel_tool_calls", "parallel_tool_calls is null; treated as absent (true)")
        elif not isinstance(value, bool):
            report.add("OC-10", "/parallel_tool_calls", f"parallel_tool_calls is {short(value)}, not a boolean")
    if readable(payload.get("tools")):
        _check_tool_choice(report, profile, payload, names, bool(tools))
    if readable(payload.get("functions")):
        _check_function_call_choice(report, payload, functions)
    check_history(report, "OC-28", payload, "messages", "message object", _HISTORY)
    _check_messages(report, profile, payload.get("messages"))
    fmt = as_dict(payload.get("response_format"))
    # JSON mode needs the prompt to ask for JSON; OpenAI's own endpoints check it, compatible servers do not.
    if fmt.get("type") == "json_object" and profile.published_schema and profile.reaches_provider \
            and isinstance(payload.get("messages"), list) and not mentions(payload["messages"], "json"):
        report.add("OC-31", "/response_format/type", "response_format is json_object, but no message contains "
                                                     "the word 'json'")
    body = as_dict(fmt.get("json_schema"))
    if fmt.get("type") == "json_schema" and body.get("strict") is True:
        # A strict response format is held to the same subset as a strict tool.
        check_strict(report, body.get("schema"), "/response_format/json_schema/schema", "OC-06",
                     what=f"response format {short(body.get('name'))}",
                     severity=None if profile.openai_limits else Severity.WARNING)


def _check_tool_choice(report: Report, profile: Profile, payload: dict[str, Any], names: dict[str, str],
                       has_tools: bool) -> None:
    if "tool_choice" not in payload:
        return
    choice = payload["tool_choice"]
    if choice is None:
        report.add("OC-09", "/tool_choice", "tool_choice is null; treated as absent")
        return
    named: str | None = None
    if isinstance(choice, str):
        if choice not in _CHOICE_STRINGS and not (choice == "any" and profile.mistral):
            report.add("OC-08", "/tool_choice", f"tool_choice {short(choice)} is not none|auto|required")
            return
    elif isinstance(choice, dict):
        kind = choice.get("type")
        if kind == "function":
            function = choice.get("function")
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                named = function["name"]
            elif "name" in choice:
                report.add("OC-08", "/tool_choice", "tool_choice uses the flat Responses shape "
                                                    "{type:'function', name}; Chat nests it under function")
                named = choice["name"] if isinstance(choice["name"], str) else None
            else:
                report.add("OC-08", "/tool_choice/function", "named tool_choice needs function.name")
        elif kind == "allowed_tools":
            allowed = choice.get("allowed_tools")
            if not (isinstance(allowed, dict) and allowed.get("mode") in ("auto", "required")
                    and isinstance(allowed.get("tools"), list)):
                report.add("OC-08", "/tool_choice/allowed_tools", "allowed_tools needs mode auto|required and "
                                                                  "a tools list")
        elif kind == "custom":
            custom = choice.get("custom")
            if isinstance(custom, dict) and isinstance(custom.get("name"), str):
                named = custom["name"]
            else:
                report.add("OC-08", "/tool_choice/custom", "custom tool_choice needs custom.name")
        else:
            report.add("OC-08", "/tool_choice", f"tool_choice type {short(kind)} is not a Chat shape")
            return
    else:
        report.add("OC-08", "/tool_choice", f"tool_choice is {short(choice)}")
        return
    # Mistral's SDK sends tool_choice "auto" whether or not there are tools, and Mistral takes it
    # (Arize-ai/openinference's mistralai cassettes, test_instrumentor/*streaming_chat_completions*).
    if not has_tools and choice != "none" and not (profile.mistral and choice == "auto"):
        severity = Severity.ERROR if profile.tool_choice_needs_tools else Severity.WARNING
        report.add("OC-11", "/tool_choice", "tool_choice is set but the request has no tools", severity)
    elif named is not None and names and named not in names:
        report.add("OC-11", "/tool_choice", f"tool_choice names {short(named)}, which is not among the tools")


def _check_function_call_choice(report: Report, payload: dict[str, Any], functions: list[Any]) -> None:
    if "function_call" not in payload:
        return
    choice = payload["function_call"]
    if choice is None:
        report.add("OC-09", "/function_call", "function_call is null; treated as absent")
    elif isinstance(choice, dict):
        name = choice.get("name")
        if not isinstance(name, str):
            report.add("OC-20", "/function_call", "function_call must be none|auto|{name}")
        elif functions and name not in [as_dict(f).get("name") for f in functions]:
            report.add("OC-11", "/function_call/name", f"function_call names {short(name)}, which is not "
                                                       "among the functions")
    elif choice not in ("none", "auto"):
        report.add("OC-20", "/function_call", f"function_call {short(choice)} is not none|auto|{{name}}")


_HISTORY = ("Chat servers read messages as a list of message objects and refuse the request at a value of another "
            "type: here {{value}} at '{{path}}'.")


def _check_messages(report: Report, profile: Profile, messages: Any) -> None:
    if not isinstance(messages, list):
        return
    # Calls are paired with their answers only over a history of objects (base.readable).
    paired = readable(messages) and all(readable(message.get("tool_calls")) for message in messages)
    ids: dict[str, str] = {}
    pending: dict[str, str] = {}  # id -> pointer of the call, for the latest assistant batch
    answered: set[str] = set()
    legacy: list[tuple[str, str]] = []  # (name, pointer) of unanswered legacy function_calls, FIFO
    for index, message in enumerate(messages):
        base = join("/messages", index)
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role != "tool" and pending:
            _unanswered(report, pending, paired)
        if role == "tool":
            _check_tool_message(report, profile, message, base, pending, answered, ids, paired)
            continue
        if not isinstance(role, str) or role not in _ROLES:
            continue
        if role == "function":
            _check_function_message(report, message, base, legacy, paired)
            continue
        if role == "user" and profile.published_schema and profile.openai_limits:
            _check_file_parts(report, message.get("content"), join(base, "content"))
        if role != "assistant":
            continue
        answered = set()
        if isinstance(message.get("content"), list):
            _check_assistant_parts(report, profile, message["content"], join(base, "content"))
        if "function_call" in message:
            call = message["function_call"]
            if call is None:
                report.add("XL-10", join(base, "function_call"), "function_call is null; treated as absent")
            elif not isinstance(call, dict):
                report.add("OC-20", join(base, "function_call"), f"function_call is {short(call)}")
            else:
                name = call.get("name")
                if not isinstance(name, str) or not name:
                    report.add("OC-20", join(base, "function_call", "name"), "function_call has no name")
                else:
                    check_name(report, profile, name, join(base, "function_call", "name"), "called function")
                    legacy.append((name, join(base, "function_call")))
                if "arguments" in call:
                    check_arguments_text(report, profile, call["arguments"], join(base, "function_call", "arguments"))
                else:
                    report.add("OC-14", join(base, "function_call", "arguments"), "function_call has no arguments")
        if "tool_calls" not in message:
            continue
        calls = message["tool_calls"]
        if calls is None:
            report.add("XL-10", join(base, "tool_calls"), "tool_calls is null; treated as absent")
            continue
        if not isinstance(calls, list):
            report.add("OC-14", join(base, "tool_calls"), f"tool_calls is {short(calls)}, not an array")
            continue
        if not calls:
            if not profile.mistral:
                report.add("OC-13", join(base, "tool_calls"), "tool_calls is an empty array")
            continue
        if "content" not in message:
            report.add("OC-12", join(base, "content"), "assistant message with tool_calls has no content key",
                       Severity.WARNING if profile.content_key_required else Severity.INFO)
        for position, call in enumerate(calls):
            call_id = check_call(report, profile, call, join(base, "tool_calls", position), ids)
            if call_id is not None:
                pending[call_id] = join(base, "tool_calls", position, "id")
    if pending:
        _unanswered(report, pending, paired)


def _check_assistant_parts(report: Report, profile: Profile, parts: list[Any], pointer: str) -> None:
    """OC-12: an assistant content array holds text parts or exactly one refusal, at least one
    (Mistral: any number of text and thinking chunks)."""
    allowed = ("text", "thinking") if profile.mistral else ("text", "refusal")
    if not parts and not profile.mistral:
        report.add("OC-12", pointer, "assistant content is an empty array (send null or omit it)", Severity.ERROR)
        return
    kinds = [part.get("type") if isinstance(part, dict) else None for part in parts]
    for position, kind in enumerate(kinds):
        if kind not in allowed:
            report.add("OC-12", join(pointer, position), f"assistant content part {short(kind or parts[position])} is "
                                                         f"not {' or '.join(allowed)}", Severity.ERROR)
    if "refusal" in kinds and len(parts) > 1:
        report.add("OC-12", pointer, "a refusal part must be the only assistant content part", Severity.ERROR)


def _check_file_parts(report: Report, parts: Any, pointer: str) -> None:
    """OC-29 in a file part: the inline file is file.file_data; `data` (the name Anthropic's and Gemini's
    inline sources use) is a field OpenAI does not define, and the part then carries no file."""
    for position, part in enumerate(as_list(parts)):
        file = as_dict(part).get("file") if as_dict(part).get("type") == "file" else None
        if isinstance(file, dict) and "data" in file and "file_data" not in file:
            report.add("OC-29", join(pointer, position, "file", "data"), "a file part's inline data goes in "
                                                                        "file_data, not data",
                       hint="Send the base64 data URL as file.file_data (and a filename).")


def _unanswered(report: Report, pending: dict[str, str], paired: bool) -> None:
    for call_id, pointer in pending.items() if paired else ():
        report.add("OC-19", pointer, f"tool call {short(call_id)} has no tool message before the next message")
    pending.clear()


def _check_tool_message(report: Report, profile: Profile, message: dict[str, Any], base: str, pending: dict[str, str],
                        answered: set[str], ids: dict[str, str], paired: bool) -> None:
    if "content" not in message or message["content"] is None:
        state = "null" if "content" in message else "missing"
        report.add("OC-17", join(base, "content"), f"tool message content is {state}")
    else:
        content = message["content"]
        if isinstance(content, list):
            if not content:
                report.add("OC-17", join(base, "content"), "tool message content is an empty array")
            for position, part in enumerate(content):
                if not (isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)):
                    kind = part.get("type") if isinstance(part, dict) else None
                    # OpenAI's own endpoint refuses it; servers that only speak the dialect (Ollama,
                    # vLLM) take images in a tool message (ruby_llm's ollama_qwen3 cassettes).
                    report.add("OC-17", join(base, "content", position),
                               f"tool message content part is {short(kind or part)}; only text parts are allowed",
                               None if profile.published_schema else Severity.WARNING,
                               hint="Move images to a following user message (XL-15).")
        elif not isinstance(content, str):
            report.add("OC-17", join(base, "content"), f"tool message content is {short(content)}, not a string")
    call_id = message.get("tool_call_id")
    if not isinstance(call_id, str) or not call_id:
        report.add("OC-17", join(base, "tool_call_id"), "tool message has no tool_call_id")
        return
    if not paired:
        return
    if call_id in pending:
        del pending[call_id]
        answered.add(call_id)
    elif call_id in answered:
        report.add("OC-18", join(base, "tool_call_id"), f"tool message answers {short(call_id)} a second time")
    elif call_id in ids:
        report.add("OC-18", join(base, "tool_call_id"), f"tool message answers {short(call_id)}, a call of an "
                                                        "earlier turn: other messages came between")
    else:
        report.add("OC-18", join(base, "tool_call_id"), f"tool message answers {short(call_id)}, which no "
                                                        "preceding assistant message called")


def _check_function_message(report: Report, message: dict[str, Any], base: str,
                            legacy: list[tuple[str, str]], paired: bool) -> None:
    name = message.get("name")
    if "content" not in message:
        report.add("OC-20", join(base, "content"), "function message has no content (required, may be null)")
    elif message["content"] is not None and not isinstance(message["content"], str):
        report.add("OC-27", join(base, "content"), f"function message content is {short(message['content'])}, not a "
                                                   "string")
    if not isinstance(name, str) or not name:
        report.add("OC-20", join(base, "name"), "function message has no name: it cannot be paired with its call")
        return
    if not paired:
        return
    for position, (called, _) in enumerate(legacy):
        if called == name:
            del legacy[position]
            return
    report.add("XL-05", join(base, "name"), f"function message {short(name)} answers no pending function_call "
                                            "of that name: an orphan once translated")


_UNNAMED_CALL = ("OC-26", "the response's tool call has no function name")


def check_response(payload: Any, profile: Profile, report: Report) -> None:
    if not isinstance(payload, dict):
        return
    profile = _routed(profile, payload)
    if not check_turn(payload, report):
        return
    choices = payload["choices"]
    ids: dict[str, str] = {}
    for index, choice in enumerate(choices):
        if not isinstance(choice, dict):
            continue
        base = join("/choices", index)
        message = as_dict(choice.get("message"))
        calls = message.get("tool_calls")
        count = 0
        if isinstance(calls, list):
            if not calls:
                report.add("OC-13", join(base, "message", "tool_calls"), "tool_calls is an empty array",
                           Severity.WARNING, why="Clients read it as no calls; replayed as it is, OpenAI refuses "
                                                 "the message (\"empty array\").")
            for position, call in enumerate(calls):
                check_call(report, profile, call, join(base, "message", "tool_calls", position), ids, _UNNAMED_CALL)
            count = len(calls)
        elif calls is not None and "tool_calls" in message:
            report.add("OC-14", join(base, "message", "tool_calls"), f"tool_calls is {short(calls)}, not an array")
        legacy = isinstance(message.get("function_call"), dict)
        if legacy:
            call = message["function_call"]
            check_name(report, profile, call.get("name"), join(base, "message", "function_call", "name"),
                       "called function", _UNNAMED_CALL)
            check_arguments_text(report, profile, call.get("arguments"),
                                 join(base, "message", "function_call", "arguments"))
        # The calls of a message or a tool_calls of another type are unknown (reported where it is).
        if isinstance(choice.get("message", {}), dict) and readable(calls):
            check_finish_reason(report, choice.get("finish_reason"), count, legacy, join(base, "finish_reason"))


_UNREADABLE = ("A client parses each choice and its message as objects; a value of another type fails there and "
               "the agent gets no turn.")


def check_turn(payload: dict[str, Any], report: Report) -> bool:
    """OC-24 and OC-25: the response holds a turn to read, for a JSON body or a reassembled stream.
    False when there is no choice to read further."""
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        error = payload.get("error")
        if not choices and error:  # OpenRouter, and Azure's content filter, answer so under a 200
            said = error.get("message") or error if isinstance(error, dict) else error
            report.add("OC-24", "/error", f"the response has no choices but an error under a success status: "
                                          f"{short(said, 120)}")
            return False
        report.add("OC-24", "/choices", f"the response has {'no choices' if not choices else short(choices)}: "
                                        "there is no message to read")
        return False
    for index, choice in enumerate(choices):
        if not isinstance(choice, dict):
            report.add("OC-24", join("/choices", index), f"choice is {short(choice)}, not an object", why=_UNREADABLE)
            continue
        if not isinstance(choice.get("message", {}), dict):
            report.add("OC-25", join("/choices", index, "message"), f"message is {short(choice['message'])}, not an "
                                                                     "object", why=_UNREADABLE)
            continue
        message = as_dict(choice.get("message"))
        # A filtered or truncated answer may be empty (Azure's content filter sends content null).
        if not (message.get("tool_calls") or isinstance(message.get("function_call"), dict)) and message.get(
                "content") is None and not any(message.get(key) for key in ("refusal", "audio")) and as_dict(
                choice).get("finish_reason") not in ("content_filter", "length"):
            report.add("OC-25", join("/choices", index, "message"),
                       "the assistant message has neither content nor tool calls")
    return True


def check_exchange(request: Any, response: Any, profile: Profile, report: Report, *, streamed: bool) -> None:
    check_tool_exchange(request, response, report, streamed=streamed, turn=check_turn, declared=declared,
                        calls=_calls)
    if isinstance(request, dict) and isinstance(response, dict) and not _forced(request.get("tool_choice")):
        for index, choice in enumerate(as_list(response.get("choices"))):
            calls = as_list(as_dict(as_dict(choice).get("message")).get("tool_calls"))
            if calls and as_dict(choice).get("finish_reason") == "stop":
                report.add("OC-22", join("/choices", index, "finish_reason"),
                           f"the response carries {len(calls)} tool call(s) but finish_reason is 'stop', and the "
                           "request's tool_choice does not name a function: an agent loop stops here")


def _forced(choice: Any) -> bool:
    """tool_choice names one function (or custom tool): OpenAI then answers finish_reason "stop"."""
    if not isinstance(choice, dict):
        return False
    kind = choice.get("type")
    return kind in ("function", "custom") and isinstance(as_dict(choice.get(kind)).get("name"), str)


def declared(request: dict[str, Any]) -> set[str]:
    declared = set()
    for tool in as_list(request.get("tools")):
        kind = as_dict(tool).get("type")
        name = as_dict(as_dict(tool).get(kind if kind in ("function", "custom") else "function")).get("name")
        if isinstance(name, str):
            declared.add(name)
    declared.update(f["name"] for f in as_list(request.get("functions")) if isinstance(as_dict(f).get("name"), str))
    return declared


def _calls(response: dict[str, Any]) -> list[tuple[str, Any]]:
    calls = []
    for index, choice in enumerate(as_list(response.get("choices"))):
        message = as_dict(as_dict(choice).get("message"))
        base = join("/choices", index, "message")
        for position, call in enumerate(as_list(message.get("tool_calls"))):
            kind = "custom" if as_dict(call).get("type") == "custom" else "function"
            name = as_dict(as_dict(call).get(kind)).get("name")
            calls.append((join(base, "tool_calls", position, kind, "name"), name))
        if isinstance(message.get("function_call"), dict):
            calls.append((join(base, "function_call", "name"), message["function_call"].get("name")))
    return calls


def check_finish_reason(report: Report, reason: Any, calls: int, legacy: bool, pointer: str) -> None:
    """OC-22, for a whole response or the end of a stream."""
    if reason is None:
        return
    if not isinstance(reason, str) or reason not in FINISH_REASONS:
        report.add("OC-22", pointer, f"finish_reason {short(reason)} is not one of {', '.join(sorted(FINISH_REASONS))}")
    elif calls and reason == "stop":
        # What OpenAI answers to a forced call: judged against the request in check_exchange.
        report.add("OC-22", pointer, f"the response carries {calls} tool call(s) with finish_reason 'stop', what "
                                     "OpenAI answers when tool_choice names a function", Severity.INFO)
    elif calls and reason != "tool_calls":
        report.add("OC-22", pointer, f"the response carries {calls} tool call(s) but finish_reason is {reason!r}")
    elif reason == "tool_calls" and not calls:
        report.add("OC-22", pointer, "finish_reason is 'tool_calls' but the response has no tool calls")
    elif reason == "function_call" and not legacy:
        report.add("OC-22", pointer, "finish_reason is 'function_call' but the response has no function_call")
