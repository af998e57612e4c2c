"""OpenAI Responses (OR-* in docs/rules.md): flat function tools, built-in tool types, tool_choice, input items
and their call/output pairing, and responses. Streams are in `streams.py`."""

from __future__ import annotations

from typing import Any

from ...profiles import Profile
from ...pointer import join
from ...violations import Severity
from ...rules.base import (Report, as_dict, as_list, check_history, check_null_or_empty, check_ranges, mentions,
                           check_tool_exchange, check_tool_name, readable, remember_name, short)
from ..openai_chat.rules import DEGRADED_TOOL, check_arguments_text, check_root_properties
from ...rules.schema import check_json_schema, check_strict
from . import limits

# Built-in tool types and the fields each requires (OR-01).
BUILTIN_REQUIRED: dict[str, tuple[str, ...]] = {
    "file_search": ("vector_store_ids",),
    "computer": (),
    "computer_use": (),
    "computer_use_preview": ("environment", "display_width", "display_height"),
    "web_search": (), "web_search_2025_08_26": (),
    "web_search_preview": (), "web_search_preview_2025_03_11": (),
    "mcp": ("server_label",),
    "code_interpreter": ("container",),
    "programmatic_tool_calling": (),
    "image_generation": (),
    "local_shell": (), "shell": (),
    "custom": ("name",),
    "namespace": ("name", "description", "tools"),
    "tool_search": (),
    "apply_patch": (),
}
_HOSTED_CHOICES = frozenset({"file_search", "web_search_preview", "computer", "computer_use_preview", "computer_use",
                             "web_search_preview_2025_03_11", "image_generation", "code_interpreter",
                             "apply_patch", "shell", "programmatic_tool_calling"})
_INPUT_ROLES = frozenset({"user", "assistant", "system", "developer"})
_OUTPUT_PARTS = frozenset({"input_text", "input_image", "input_file"})
# What an assistant message replayed as input may hold (OR-18): the model's own parts, never input parts.
_ASSISTANT_PARTS = frozenset({"output_text", "refusal"})
# file_data MIME families the API refuses in an input_file (OR-16); audio goes in input_audio.
_NOT_FILES = ("audio/", "video/")
MAX_OUTPUT_CHARS = 10_485_760


def check_name(report: Report, profile: Profile, name: Any, pointer: str, what: str,
               unnamed: tuple[str, str] | None = None) -> None:
    check_tool_name(report, profile, name, pointer, what, "OR-03",
                    unnamed=DEGRADED_TOOL if what == "tool" else unnamed)


def _check_tool(report: Report, profile: Profile, tool: Any, pointer: str, names: dict[str, str]) -> None:
    if not isinstance(tool, dict):
        report.add("OR-01", pointer, f"tool is {short(tool)}, not an object")
        return
    kind = tool.get("type")
    if kind == "function":
        if isinstance(tool.get("function"), dict):
            report.add("OR-02", join(pointer, "function"), "nested Chat tool shape {type, function:{…}}; "
                                                           "Responses function tools are flat")
            return
        name = tool.get("name")
        check_name(report, profile, name, join(pointer, "name"), "tool")
        remember_name(report, "XL-03", names, name, join(pointer, "name"))
        label = f"function {name!r}" if isinstance(name, str) else "function"
        parameters = tool.get("parameters")
        if parameters is None:
            return
        where = join(pointer, "parameters")
        if not isinstance(parameters, dict):
            report.add("OR-02", where, f"{label}: parameters is {short(parameters)}, not a JSON Schema object")
            return
        check_json_schema(report, parameters, where, "XL-01", what=label)
        if tool.get("strict") is True:  # the strict subset's own rule names the missing properties
            check_strict(report, parameters, where, "XL-13", what=label)
        else:
            check_root_properties(report, profile, parameters, where, "OR-02", label)
        return
    if not isinstance(kind, str) or kind not in BUILTIN_REQUIRED:
        report.add("OR-01", join(pointer, "type"), f"tool type {short(kind)} is not a Responses tool type")
        return
    for field in BUILTIN_REQUIRED[kind]:
        if tool.get(field) is None:
            report.add("OR-01", join(pointer, field), f"{kind} tool needs {field}")
    if kind in ("custom", "namespace"):
        check_name(report, profile, tool.get("name"), join(pointer, "name"), f"{kind} tool")
        remember_name(report, "XL-03", names, tool.get("name"), join(pointer, "name"))


# Where a Responses request's conversation comes from: its own input, a stored prompt template, or a
# history kept server-side. The schema marks none of them required; the API needs one.
_CONVERSATION_SOURCES = ("input", "prompt", "previous_response_id", "conversation")


def check_request(payload: Any, profile: Profile, report: Report) -> None:
    if not isinstance(payload, dict):
        return
    if profile.reaches_provider:
        check_ranges(report, "OR-19", payload, limits.ranges(profile), limits.FIELDS)
    names: dict[str, str] = {}
    tools = as_list(payload.get("tools"))
    # An empty list is accepted as no tools: the OpenAI Agents SDK sends `tools: []` on every call
    # of an agent without tools (pydantic/logfire tests/otel_integrations/cassettes/test_openai_agents/,
    # 5 requests answered 200). Only a tool_choice that needs a tool makes it an error.
    if check_null_or_empty(report, payload, "tools", "", "XL-10",
                           empty=Severity.INFO if payload.get("tool_choice") in (None, "none", "auto")
                           else Severity.ERROR):
        if not isinstance(payload["tools"], list):
            report.add("OR-01", "/tools", "tools must be an array")
        for index, tool in enumerate(tools):
            _check_tool(report, profile, tool, join("/tools", index), names)
    if readable(payload.get("tools")):
        _check_tool_choice(report, payload, names)
    # Either keeps the history server-side: an output may answer a call this request does not hold.
    server_history = next((key for key in ("previous_response_id", "conversation") if payload.get(key) is not None),
                          None)
    if server_history is not None:
        report.add("OR-11", join("", server_history), "history is server-side: call/output pairing is checked only "
                                                      "within this request")
    check_history(report, "OR-13", payload, "input", "item object", _HISTORY, text=True)
    if all(payload.get(key) is None for key in _CONVERSATION_SOURCES):
        report.add("OR-13", "/input", "the request has none of input, prompt, previous_response_id and conversation: "
                                      "there is nothing to respond to (\"Missing required parameter: 'input'\")",
                   why="The schema marks none of input, prompt, previous_response_id and conversation required, but "
                       "the API needs one of them to know the conversation, and answers 400 \"Missing required "
                       "parameter: 'input'\".")
    _check_input(report, profile, payload.get("input"), server_history=server_history is not None)
    fmt = as_dict(as_dict(payload.get("text")).get("format"))
    # JSON mode needs the prompt to ask for JSON: judged where this request holds the whole prompt
    # (a stored prompt template or server-side history may carry the word).
    if fmt.get("type") == "json_object" and profile.published_schema and profile.reaches_provider \
            and server_history is None and payload.get("prompt") is None and payload.get("input") is not None \
            and not mentions([payload.get("input"), payload.get("instructions")], "json"):
        report.add("OR-20", "/text/format/type", "text.format is json_object, but neither input nor instructions "
                                                 "contains the word 'json'")
    if fmt.get("type") == "json_schema" and fmt.get("strict") is True:
        # A strict text format is held to the same subset as a strict tool.
        check_strict(report, fmt.get("schema"), "/text/format/schema", "XL-13",
                     what=f"text format {short(fmt.get('name'))}")


def _check_tool_choice(report: Report, payload: dict[str, Any], names: dict[str, str]) -> None:
    if "tool_choice" not in payload:
        return
    choice = payload["tool_choice"]
    if choice is None:
        report.add("XL-10", "/tool_choice", "tool_choice is null; treated as absent")
        return
    if isinstance(choice, str):
        if choice not in ("none", "auto", "required"):
            report.add("OR-04", "/tool_choice", f"tool_choice {short(choice)} is not none|auto|required")
        return
    if not isinstance(choice, dict):
        report.add("OR-04", "/tool_choice", f"tool_choice is {short(choice)}")
        return
    kind = choice.get("type")
    if kind in ("function", "custom"):
        if isinstance(choice.get("function"), dict):
            report.add("OR-04", "/tool_choice/function", "nested Chat tool_choice shape; Responses uses the flat "
                                                         "{type:'function', name}")
            return
        name = choice.get("name")
        if not isinstance(name, str):
            report.add("OR-04", "/tool_choice/name", f"{kind} tool_choice needs name")
        elif name not in names:
            report.add("XL-11", "/tool_choice/name", f"tool_choice names {short(name)}, which is not among the tools")
    elif kind == "allowed_tools":
        if choice.get("mode") not in ("auto", "required") or not isinstance(choice.get("tools"), list):
            report.add("OR-04", "/tool_choice", "allowed_tools needs mode auto|required and a tools list")
    elif kind == "mcp":
        if not isinstance(choice.get("server_label"), str):
            report.add("OR-04", "/tool_choice/server_label", "mcp tool_choice needs server_label")
    elif not isinstance(kind, str) or kind not in _HOSTED_CHOICES:
        report.add("OR-04", "/tool_choice/type", f"tool_choice type {short(kind)} is not a Responses shape")


_HISTORY = ("Responses servers read input as text or a list of item objects and refuse the request at a value of "
            "another type: here {{value}} at '{{path}}'.")


def _check_input(report: Report, profile: Profile, items: Any, *, server_history: bool) -> None:
    if not isinstance(items, list):
        return
    ids: dict[str, str] = {}
    pending: dict[str, str] = {}  # call_id -> pointer of the call, not yet answered
    interrupted: dict[str, str] = {}  # calls whose output has not come before another message item
    searches: set[str] = set()  # call_ids of tool_search_call items
    # An item_reference points at a stored item (the Vercel AI SDK sends stored calls this way): the
    # call an output after it answers may be that item, whose call_id the request does not show.
    referenced = False
    # Calls are paired with their outputs only over items that are all objects (base.readable).
    paired = readable(items)
    for index, item in enumerate(items):
        base = join("/input", index)
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "reasoning" and not profile.own_item_ids and index + 1 < len(items):
            _check_after_reasoning(report, item, items[index + 1], base)
        if kind == "function_call":
            call_id = check_call_item(report, profile, item, base, ids)
            if call_id is not None:
                pending[call_id] = join(base, "call_id")
        elif kind == "tool_search_call":
            # A client-executed tool search may be answered by a function_call_output (OR-08 in docs/rules.md);
            # a hosted one is not answered at all.
            if isinstance(item.get("call_id"), str):
                searches.add(item["call_id"])
        elif kind == "item_reference":
            referenced = True
        elif kind == "function_call_output":
            _check_output_item(report, item, base, pending, interrupted, ids,
                               server_history or referenced or not paired or str(item.get("call_id")) in searches)
        elif kind in (None, "message") and "role" in item:
            role = item.get("role")
            if role == "tool":
                report.add("OR-05", join(base, "role"), "role 'tool' does not exist in Responses input")
            elif not isinstance(role, str) or role not in _INPUT_ROLES:
                report.add("OR-05", join(base, "role"), f"role {short(role)} is not user|assistant|system|developer")
            elif role == "assistant":
                _check_assistant_parts(report, item.get("content"), join(base, "content"))
            _check_files(report, item.get("content"), join(base, "content"))
            if role == "assistant":
                # The model's next turn ends the calls' turn; a user, system or developer message between a
                # call and its output is accepted (issue 18: recorded as answered 200).
                interrupted.update(pending)
                pending.clear()
    for call_id, pointer in {**interrupted, **pending}.items() if paired else ():
        report.add("OR-08", pointer, f"function_call {short(call_id)} has no function_call_output "
                                     "(\"No tool output found\")")


def _check_after_reasoning(report: Report, item: dict[str, Any], following: Any, base: str) -> None:
    """OR-17: a replayed reasoning item is tied to the output item the model produced after it; a
    message without an id (rewritten history) is not that item. Servers that mint their own ids
    (DeepSeek) accept it (recorded)."""
    if isinstance(item.get("id"), str) and isinstance(following, dict) and "role" in following \
            and following.get("type", "message") == "message" and "id" not in following:
        report.add("OR-17", base, f"reasoning item {short(item['id'])} is followed by a message without an id, "
                                  "not the output item it produced")


def _check_assistant_parts(report: Report, content: Any, base: str) -> None:
    for position, part in enumerate(as_list(content)):
        kind = part.get("type") if isinstance(part, dict) else None
        if isinstance(kind, str) and kind not in _ASSISTANT_PARTS:
            report.add("OR-18", join(base, position), f"an assistant message holds a {short(kind)} part; it takes "
                                                     "output_text and refusal")


def _check_files(report: Report, parts: Any, base: str) -> None:
    """OR-16: an input_file's inline file_data must be a base64 data URL of a file type the API reads."""
    for position, part in enumerate(as_list(parts)):
        if not (isinstance(part, dict) and part.get("type") == "input_file" and isinstance(part.get("file_data"), str)):
            continue
        data = part["file_data"]
        where = join(base, position, "file_data")
        if not data.startswith("data:") or "," not in data[:256]:
            report.add("OR-16", where, "file_data is not a data URL (data:<MIME type>;base64,…)")
            continue
        mime = data[5:data.index(",")].split(";", 1)[0].lower()
        if mime.startswith(_NOT_FILES):
            report.add("OR-16", where, f"file_data is {short(mime)}, a MIME type input_file does not take"
                                       + ("; send audio as input_audio" if mime.startswith("audio/") else ""))


def check_call_item(report: Report, profile: Profile, item: dict[str, Any], base: str,
                    ids: dict[str, str], unnamed: tuple[str, str] | None = None) -> str | None:
    """OR-06 for one function_call item (input, or output with `unnamed` = OR-12). Returns its call_id."""
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        report.add("OR-06", join(base, "call_id"), "function_call has no call_id")
        call_id = None
    elif call_id in ids:
        report.add("XL-04", join(base, "call_id"), f"call_id {short(call_id)} is already used at {ids[call_id]}")
    else:
        ids[call_id] = join(base, "call_id")
    check_name(report, profile, item.get("name"), join(base, "name"), "called function", unnamed)
    if "arguments" not in item:
        report.add("OR-06", join(base, "arguments"), "function_call has no arguments")
    else:
        check_arguments_text(report, profile, item["arguments"], join(base, "arguments"), rule="XL-08")
    item_id = item.get("id")
    if item_id is not None and not (isinstance(item_id, str) and item_id.startswith("fc")):
        report.add("OR-06", join(base, "id"), f"function_call id {short(item_id)} does not begin with 'fc' "
                                             "(\"Expected an ID that begins with 'fc'\")"
                   + (f"; {profile.name} makes its own ids, OpenAI would refuse them" if profile.own_item_ids else ""),
                   Severity.WARNING if profile.own_item_ids else None)
    return call_id


def _check_output_item(report: Report, item: dict[str, Any], base: str, pending: dict[str, str],
                       interrupted: dict[str, str], ids: dict[str, str], unseen_calls: bool) -> None:
    output = item.get("output")
    if isinstance(output, str):
        if len(output) > MAX_OUTPUT_CHARS:
            report.add("OR-07", join(base, "output"), f"output is {len(output)} characters (max {MAX_OUTPUT_CHARS})")
    elif isinstance(output, list):
        _check_files(report, output, join(base, "output"))
        for position, part in enumerate(output):
            if not (isinstance(part, dict) and isinstance(part.get("type"), str) and part["type"] in _OUTPUT_PARTS):
                kind = part.get("type") if isinstance(part, dict) else part
                report.add("OR-07", join(base, "output", position), f"output part {short(kind)} is not "
                                                                    "input_text|input_image|input_file")
    else:
        report.add("OR-07", join(base, "output"), "function_call_output needs output (a string or input parts)")
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not 1 <= len(call_id) <= 64:
        report.add("OR-07", join(base, "call_id"), "function_call_output needs a call_id of 1..64 characters")
        return
    if call_id in pending:
        del pending[call_id]
    elif call_id in interrupted:
        del interrupted[call_id]
        report.add("OR-08", join(base, "call_id"), f"output for {short(call_id)} comes after other message items; "
                                                   "it must follow its call")
    elif call_id in ids:
        report.add("OR-08", join(base, "call_id"), f"call {short(call_id)} is answered twice")
    elif not unseen_calls:  # the call may be server-side, a client tool search, or in a hole
        report.add("OR-08", join(base, "call_id"), f"no function_call with call_id {short(call_id)} precedes this "
                                                   "output (\"No tool call found\")")


def check_response(payload: Any, profile: Profile, report: Report) -> None:
    if not isinstance(payload, dict):
        return
    output = payload.get("output")
    if output is not None and not isinstance(output, list):
        report.add("OR-15", "/output", f"output is {short(output)}, not a list of items", Severity.ERROR,
                   why=_UNREADABLE)
    for index, item in enumerate(as_list(output)):
        if not isinstance(item, dict):
            report.add("OR-15", join("/output", index), f"output item is {short(item)}, not an object", Severity.ERROR,
                       why=_UNREADABLE)
    if readable(output):  # what the output holds is known
        check_turn(payload, report)
    ids: dict[str, str] = {}
    for index, item in enumerate(as_list(output)):
        if isinstance(item, dict) and item.get("type") == "function_call":
            check_call_item(report, profile, item, join("/output", index), ids,
                            ("OR-12", f"the response ({short(payload.get('status'))}) holds a function_call "
                                      "without a name"))


_UNREADABLE = ("A client parses the response's output as a list of item objects; a value of another type fails "
               "there and the agent gets no turn.")

# A response in these states says itself why it holds no turn.
_EXPLAINED = frozenset({"incomplete", "failed", "cancelled", "queued", "in_progress"})


def check_turn(payload: dict[str, Any], report: Report) -> None:
    """OR-15: a finished response holds something for the client: a message with content or a call
    (reasoning items alone give the agent nothing), for a JSON body or a reassembled stream."""
    status = payload.get("status")
    if (isinstance(status, str) and status in _EXPLAINED) or not (payload.get("object") == "response" or "output" in payload):
        return  # explained, or not a response object at all
    output = payload.get("output")
    usable = [item for item in as_list(output) if isinstance(item, dict) and item.get("type") != "reasoning"
              and (item.get("type") != "message" or as_list(item.get("content")))]
    if not usable:
        report.add("OR-15", "/output", f"the {short(payload.get('status', 'completed'))} response holds "
                                       + ("reasoning only" if as_list(output) else "no output item")
                                       + ": no message and no call")


def check_exchange(request: Any, response: Any, profile: Profile, report: Report, *, streamed: bool) -> None:
    check_tool_exchange(request, response, report, streamed=streamed, turn=check_turn, declared=declared,
                        calls=_calls)


def declared(request: dict[str, Any]) -> set[str]:
    declared = set()
    for tool in as_list(request.get("tools")):
        tool = tool if isinstance(tool, dict) else {}
        for each in (tool, *as_list(tool.get("tools"))):  # a namespace holds tools of its own
            if isinstance(each, dict) and each.get("type") in ("function", "custom") and isinstance(
                    each.get("name"), str):
                declared.add(each["name"])
    return declared


def _calls(response: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(join("/output", index, "name"), item.get("name")) for index, item in enumerate(as_list(response.get(
        "output"))) if isinstance(item, dict) and item.get("type") in ("function_call", "custom_tool_call")]
