"""Gemini generateContent (GM-* in docs/rules.md), for the Gemini API and Vertex: function declarations and
their proto-strict Schema, toolConfig, turn structure of contents, and responses. Proto JSON accepts
camelCase and snake_case field names alike, so both are read. Streams are in `streams.py`."""

from __future__ import annotations

import re
from typing import Any

from .fields import camel, doubled, field, items, whole
from .schema import findings, type_name
from ...dialect import Dialect
from ...profiles import Profile
from ...violations import Severity
from ...pointer import join
from ...rules.base import (Report, as_dict, as_list, check_history, check_ranges, check_tool_exchange,
                           check_tool_name, remember_name, short)
from ...rules import tolerance
from ...rules.schema import check_json_schema
from . import limits

_VERTEX_ONLY = ("enterpriseWebSearch",)
_GEMINI_API_ONLY = ("fileSearch", "mcpServers")
_MODES = ("AUTO", "ANY", "NONE", "VALIDATED", "MODE_UNSPECIFIED")
# Model-dependent verdicts (GM-08, GM-11, GM-13 in docs/rules.md). Gemini 1 and 2 reject a function
# calling config without declarations (Gemini 3 accepts it), and neither need a call's signature back
# nor sign every call turn themselves: their own later turns often come unsigned (gemini-2.5-flash in
# Arize-ai/openinference's google-adk cassette test_google_adk_instrumentor_multi_tool_call.yaml and
# Mirascope/mirascope's calls-tool-and-resumes-with-results.har, both answered 200; Gemini 3 rejects a
# dropped one).
_GEMINI_1_OR_2 = re.compile(r"(models/)?gemini-[12]\.")
_REJECTS_TEXT_BESIDE_RESPONSE = re.compile(r"(models/)?(gemini-3\.1-flash-lite|gemma-4)")  # 2.5 accepts it


def _known_to_reject(pattern: re.Pattern[str], profile: Profile) -> Severity:
    return Severity.ERROR if pattern.match(profile.model) else Severity.WARNING


def check_name(report: Report, profile: Profile, name: Any, pointer: str, what: str) -> None:
    check_tool_name(report, profile, name, pointer, what, "GM-02", verb="must")


def check_request(payload: Any, profile: Profile, report: Report) -> None:
    if not isinstance(payload, dict):
        return
    key, generation = field(payload, "generationConfig")
    if profile.reaches_provider and isinstance(generation, dict):
        check_ranges(report, "GM-21", generation, limits.ranges(profile), limits.FIELDS, join("", key))
    for where, name in doubled(payload):
        report.add("GM-16", where, f"{name!r} is also written in snake_case here; Gemini reads one of the two, "
                                   "so send each field once")
    names: dict[str, str] = {}
    declarations = 0
    declared_params: dict[str, bool] = {}
    tools = payload.get("tools")
    known = whole(tools)  # every declaration can be read: the names toolConfig may refer to are all known
    for base, tool in items(tools, "/tools"):
        if not isinstance(tool, dict):
            report.add("GM-01", base, f"tool is {short(tool)}, not an object")
            continue
        for kind in tool:
            if profile.vertex and kind in _GEMINI_API_ONLY or not profile.vertex and kind in _VERTEX_ONLY:
                where = "Vertex" if kind in _VERTEX_ONLY else "the Gemini API"
                report.add("GM-01", join(base, kind), f"tool kind {kind!r} exists only on {where}")
        key, decls = field(tool, "functionDeclarations")
        known = known and whole(decls)
        for where, decl in items(decls, join(base, key)):
            declarations += 1
            _check_declaration(report, profile, decl, where, names, declared_params)
    if profile.max_tools is not None and declarations > profile.max_tools:
        report.add("GM-01", "/tools", f"{declarations} function declarations; {profile.name} accepts at most "
                                      f"{profile.max_tools}")
    _check_tool_config(report, profile, payload, names, declared_params, known)
    check_history(report, "GM-20", payload, "contents", "Content object", _HISTORY, one=True)
    _check_contents(report, profile, payload.get("contents"))


def _check_declaration(report: Report, profile: Profile, decl: Any, base: str, names: dict[str, str],
                       declared_params: dict[str, bool]) -> None:
    if not isinstance(decl, dict):
        report.add("GM-02", base, f"function declaration is {short(decl)}, not an object",
                   why="A function declaration is an object {name, description?, parameters?…}; Gemini answers 400 "
                       "for '{{path}}'.")
        return
    name = decl.get("name")
    check_name(report, profile, name, join(base, "name"), "function")
    label = f"function {name!r}" if isinstance(name, str) else "function"
    remember_name(report, "GM-14", names, name, join(base, "name"), "function")
    params_key, parameters = field(decl, "parameters")
    json_key, json_schema = field(decl, "parametersJsonSchema")
    if parameters is not None and json_schema is not None:
        report.add("GM-05", join(base, json_key), f"{label}: parametersJsonSchema and parameters are both set")
    if isinstance(name, str):
        declared_params[name] = parameters is not None or json_schema is not None
    if parameters is not None:
        for rule, where, message, severity in findings(parameters, join(base, params_key), what=label,
                                                       vertex=profile.vertex):
            report.add(rule, where, message, severity)
        root = parameters.get("type") if isinstance(parameters, dict) else None
        # Parameters that are no Schema object at all are GM-04's finding alone.
        if profile.vertex and isinstance(parameters, dict) and type_name(root) != "OBJECT":
            report.add("GM-06", join(base, params_key, "type") if isinstance(parameters, dict) and "type" in parameters
                       else join(base, params_key), f"{label}: Vertex needs the parameters root to be OBJECT")
    if json_schema is not None:
        check_json_schema(report, json_schema, join(base, json_key), "XL-01", what=label)


def _check_tool_config(report: Report, profile: Profile, payload: dict[str, Any], names: dict[str, str],
                       declared_params: dict[str, bool], known: bool) -> None:
    """GM-13; what depends on the declared names only when every declaration could be read (`known`)."""
    config_key, config = field(payload, "toolConfig")
    if config is None:
        return
    fcc_key, fcc = field(as_dict(config), "functionCallingConfig")
    if not isinstance(fcc, dict):
        return
    base = join("", config_key, fcc_key)
    mode = fcc.get("mode")
    upper = mode.upper() if isinstance(mode, str) else None
    if mode is not None and upper not in _MODES:
        report.add("GM-13", join(base, "mode"), f"mode {short(mode)} is not AUTO|ANY|NONE|VALIDATED")
    if known and not names and upper != "NONE":
        severity = _known_to_reject(_GEMINI_1_OR_2, profile)
        report.add("GM-13", base, "functionCallingConfig is set without function_declarations"
                   + (f" ({profile.model} rejects it)" if severity is Severity.ERROR else
                      " (Gemini 2.x rejects it, Gemini 3 accepts it beside built-in tools)"), severity)
    allowed_key, allowed = field(fcc, "allowedFunctionNames")
    if allowed is not None:
        if upper not in ("ANY", "VALIDATED"):
            report.add("GM-13", join(base, allowed_key), f"allowedFunctionNames is only valid with mode ANY, not "
                                                         f"{short(mode)}")
        for position, allowed_name in enumerate(as_list(allowed)):
            if known and names and not (isinstance(allowed_name, str) and allowed_name in names):
                report.add("GM-13", join(base, allowed_key, position), f"allowedFunctionNames names "
                                                                       f"{short(allowed_name)}, which is not declared")
    if profile.vertex and upper == "ANY":
        for name, has_params in declared_params.items():
            if not has_params:
                report.add("GM-06", names[name], f"mode ANY with function {name!r} that has no parameters "
                                                  "(INVALID_ARGUMENT on Vertex)")


def _parts(content: dict[str, Any]) -> list[Any]:
    return as_list(content.get("parts"))


def check_call_part(report: Report, part: dict[str, Any], key: str, where: str) -> None:
    """GM-08 for one functionCall part (request history or response)."""
    call = part[key]
    if not isinstance(call, dict):
        report.add("GM-08", join(where, key), f"functionCall is {short(call)}, not an object")
        return
    if not isinstance(call.get("name"), str) or not call["name"]:
        report.add("GM-08", join(where, key, "name"), "functionCall has no name")
    if "args" in call and call["args"] is not None and not isinstance(call["args"], dict):
        detail = "a JSON string; send the decoded object" if isinstance(call["args"], str) else short(call["args"])
        report.add("GM-08", join(where, key, "args"), f"functionCall args is {detail}, not an object")
    for inner in ("thoughtSignature", "thought_signature"):
        if inner in call:
            report.add("GM-08", join(where, key, inner), "thoughtSignature belongs beside functionCall in the part, "
                                                         "not inside it")


def _turns(contents: list[tuple[str, Any]]) -> list[tuple[str, Any, list[tuple[str, dict[str, Any]]]]]:
    """Consecutive contents of one role as the API merges them before checking the turn structure:
    (pointer of the first content, role, [(pointer, part)])."""
    turns: list[tuple[str, Any, list[tuple[str, dict[str, Any]]]]] = []
    for pointer, content in contents:
        if not isinstance(content, dict):
            continue
        role = content.get("role", "user")
        if not turns or turns[-1][1] != role:
            turns.append((pointer, role, []))
        parts_key, parts = field(content, "parts")
        turns[-1][2].extend((where, part) for where, part in items(parts, join(pointer, parts_key))
                            if isinstance(part, dict))
    return turns


def _paired(contents: list[tuple[str, Any]]) -> bool:
    """Whether calls can be paired with their responses: every content, part, call and response is an
    object (a hole of another type is reported where it is, and hides what it called or answered)."""
    for _, content in contents:
        parts = field(content, "parts")[1] if isinstance(content, dict) else None
        if not isinstance(content, dict) or not whole(parts):
            return False
        for part in parts if isinstance(parts, list) else (parts,) if parts is not None else ():
            if any(not isinstance(field(part, key)[1], (dict, type(None))) for key in ("functionCall",
                                                                                      "functionResponse")):
                return False
    return True


_HISTORY = ("Gemini, and servers compatible with its API, read contents as a list of Content objects (or one) and "
            "refuse the request at a value of another type: here {{value}} at '{{path}}'.")


def _check_contents(report: Report, profile: Profile, value: Any) -> None:
    contents = items(value, "/contents")
    for pointer, content in contents:
        role = as_dict(content).get("role", "user")
        if isinstance(content, dict) and role not in ("user", "model") \
                and not tolerance.role_taken(Dialect.GEMINI, role, _part_kinds(content)):
            report.add("GM-07", join(pointer, "role"), f"role {short(role)} is not user|model")
    paired = _paired(contents)
    previous = ""  # kind of the previous turn: user | response | call | model
    pending: tuple[str, list[tuple[Any, Any, str]]] | None = None  # (turn pointer, [(name, id, pointer)])
    call_ids: dict[str, str] = {}
    signed_turns, unsigned_turns = 0, []
    for base, role, parts in _turns(contents):
        calls: list[tuple[Any, Any, str]] = []
        responses: list[tuple[Any, Any, str]] = []
        texts: list[str] = []
        signed = False
        for where, part in parts:
            call_key, call = field(part, "functionCall")
            response_key, response = field(part, "functionResponse")
            if call_key in part:
                if role != "model":
                    report.add("GM-07", join(where, call_key), f"functionCall part in a {short(role)} turn; calls "
                                                               "belong in model turns")
                check_call_part(report, part, call_key, where)
                if role == "user":
                    continue  # GM-07 said where it belongs; a user turn is no call turn
                call = as_dict(call)
                call_id = call.get("id")
                if isinstance(call_id, str):
                    if call_id in call_ids:
                        report.add("GM-12", join(where, call_key, "id"), f"functionCall id {short(call_id)} is "
                                                                         f"already used at {call_ids[call_id]}")
                    else:
                        call_ids[call_id] = join(where, call_key, "id")
                calls.append((call.get("name"), call_id, where))
                signed = signed or field(part, "thoughtSignature")[1] is not None
            elif response_key in part:
                if role == "model":
                    report.add("GM-07", join(where, response_key), "functionResponse part in a model turn; "
                                                                   "responses belong in user turns")
                _check_response_part(report, response, join(where, response_key))
                response = as_dict(response)
                responses.append((response.get("name"), response.get("id"), where))
            elif "text" in part:
                texts.append(where)
        if calls and responses and paired:
            report.add("GM-10", responses[0][2], "a function-call turn also holds functionResponse parts")
        if pending is not None and not responses:
            _unanswered(report, pending, paired)
            pending = None
        if calls:
            if previous not in ("user", "response") and paired:
                report.add("GM-10", calls[0][2],
                           "a function-call turn must come right after a user turn or a function-response turn"
                           + (" (history starts with a model call)" if base == contents[0][0] else ""))
            if signed:
                signed_turns += 1
            else:
                unsigned_turns.append(calls[0][2])
            pending = (base, calls)
            previous = "call"
        elif responses:
            if pending is None:
                if paired:
                    report.add("GM-10", responses[0][2], "a function-response turn must directly follow its "
                                                         "function-call turn")
            else:
                if paired:
                    _match(report, pending[1], responses, base)
                pending = None
            severity = _known_to_reject(_REJECTS_TEXT_BESIDE_RESPONSE, profile)
            # Per content: text in its own content after the responses is the documented remedy.
            holders = {where.rsplit("/parts/", 1)[0] for _, _, where in responses}
            for where in (t for t in texts if t.rsplit("/parts/", 1)[0] in holders):
                report.add("GM-11", where, "text next to functionResponse parts in one turn; newer models "
                                           "(gemini-3.1-flash-lite, gemma-4) reject it", severity)
            previous = "response"
        else:
            previous = "model" if role == "model" else "user"
    if pending is not None:
        _unanswered(report, pending, paired)
    if signed_turns:
        severity = Severity.INFO if _GEMINI_1_OR_2.match(profile.model) else Severity.WARNING
        for where in unsigned_turns:
            report.add("GM-08", where, "this function-call turn has no thoughtSignature while others do: a "
                                       "dropped signature is rejected by Gemini 3", severity)


def _unanswered(report: Report, pending: tuple[str, list[tuple[Any, Any, str]]], paired: bool) -> None:
    base, calls = pending
    names = ", ".join(repr(name) for name, _, _ in calls)
    if paired:
        report.add("GM-10", base, f"function-call turn ({names}) is not answered by the next turn")


def _match(report: Report, calls: list[tuple[Any, Any, str]], responses: list[tuple[Any, Any, str]],
           base: str) -> None:
    if len(responses) != len(calls):
        report.add("GM-10", base, f"{len(responses)} functionResponse part(s) for {len(calls)} functionCall "
                                  "part(s); the counts must be equal")
    expected = sorted(str(name) for name, _, _ in calls)
    got = sorted(str(name) for name, _, _ in responses)
    if len(responses) == len(calls) and expected != got:
        report.add("GM-10", base, f"functionResponse names {got} do not match the calls {expected}")
    ids = {call_id for _, call_id, _ in calls if isinstance(call_id, str)}
    named_ids: dict[str, list[str]] = {}  # a name that is a list or an object names no call (unhashable)
    for name, call_id, _ in calls:
        if isinstance(name, str) and isinstance(call_id, str) and call_id:
            named_ids.setdefault(name, []).append(call_id)
    for name, response_id, where in responses:
        if isinstance(response_id, str) and ids and response_id not in ids:
            report.add("GM-12", join(where, "functionResponse", "id"),
                       f"functionResponse id {short(response_id)} echoes no functionCall id of the call turn")
        elif response_id is None and isinstance(name, str) and name in named_ids:
            # Gemini 3 mints ids and pairs by them: a response that drops its call's id gets an empty
            # STOP answer, not a 400 (earendil-works/pi#7494, BerriAI/litellm#24453).
            report.add("GM-12", join(where, "functionResponse"),
                       f"functionResponse for {short(name)} has no id, and its call has one "
                       f"({', '.join(named_ids[name])}): Gemini 3 then answers an empty STOP",
                       hint="Copy functionCall.id into functionResponse.id.")


def _part_kinds(content: dict[str, Any]) -> set[str]:
    """The kinds of a turn's parts, in lowerCamelCase (text, functionCall, functionResponse, …)."""
    return {camel(key) for part in as_list(content.get("parts")) if isinstance(part, dict) for key in part
            if camel(key) not in ("thoughtSignature", "thought")}


def _check_response_part(report: Report, response: Any, where: str) -> None:
    if not isinstance(response, dict):
        report.add("GM-09", where, f"functionResponse is {short(response)}, not an object")
        return
    if not isinstance(response.get("name"), str) or not response["name"]:
        report.add("GM-09", join(where, "name"), "functionResponse has no name")
    if "response" not in response:
        if not tolerance.defaulted(Dialect.GEMINI, "FunctionResponse", "response"):
            report.add("GM-09", join(where, "response"), "functionResponse has no response object")
    elif not isinstance(response["response"], dict):
        report.add("GM-09", join(where, "response"), f"functionResponse.response is {short(response['response'])}, "
                                                     "not an object; wrap it as {\"output\": …}")


def check_response(payload: Any, profile: Profile, report: Report) -> None:
    if not isinstance(payload, dict):
        return
    check_turn(payload, report)
    for index, candidate in enumerate(as_list(payload.get("candidates"))):
        content = as_dict(as_dict(candidate).get("content"))
        check_candidate_parts(report, _parts(content), join("/candidates", index, "content", "parts"))


def check_candidate_parts(report: Report, parts: list[Any], base: str) -> None:
    """GM-08/GM-11/GM-12 for the parts of one (possibly reassembled) candidate."""
    ids: dict[str, str] = {}
    without_id: list[str] = []
    has_text = False
    calls = 0
    for position, part in enumerate(parts):
        if not isinstance(part, dict):
            continue
        where = join(base, position)
        key, call = field(part, "functionCall")
        if key in part:
            calls += 1
            check_call_part(report, part, key, where)
            call_id = as_dict(call).get("id")
            if isinstance(call_id, str):
                if call_id in ids:
                    report.add("GM-12", join(where, key, "id"), f"functionCall id {short(call_id)} repeats "
                                                                f"{ids[call_id]}")
                ids[call_id] = join(where, key, "id")
            else:
                without_id.append(where)
        elif isinstance(part.get("text"), str) and not part.get("thought"):
            has_text = True
    if len(without_id) > 1:
        report.add("GM-12", without_id[0], f"{len(without_id)} parallel functionCall parts without id: clients must "
                                           "synthesise unique ids and not echo them back", Severity.INFO)
    if has_text and calls:
        report.add("GM-11", base, "the candidate carries text and functionCall parts: read every part, not "
                                  "parts[0]", Severity.INFO)


def check_turn(payload: dict[str, Any], report: Report) -> None:
    """GM-18: a finished response holds a candidate with text or a call, for a JSON body or a
    reassembled stream. A blocked prompt (promptFeedback.blockReason) and a finishReason other than
    STOP (SAFETY, MAX_TOKENS, MALFORMED_FUNCTION_CALL, ...) say themselves why there is none."""
    _, feedback = field(payload, "promptFeedback")
    if field(as_dict(feedback), "blockReason")[1]:
        return
    candidates = as_list(payload.get("candidates"))
    # Proto JSON omits an empty list: a response with no candidate has none of the key, and is told
    # from a body of another kind by the fields every generateContent answer carries.
    if not candidates and "candidates" not in payload and not any(field(payload, key)[1] is not None for key in (
            "usageMetadata", "modelVersion", "responseId")):
        return
    if not candidates:
        report.add("GM-18", "/candidates" if "candidates" in payload else "",
                   "the response has no candidate and no blockReason: there is no turn to read")
        return
    for index, candidate in enumerate(candidates):
        candidate = as_dict(candidate)
        reason = field(candidate, "finishReason")[1]
        if reason not in (None, "STOP"):
            continue
        parts = _parts(as_dict(candidate.get("content")))
        if not any(isinstance(part, dict) and not part.get("thought") and (
                part.get("text") or field(part, "functionCall")[1] is not None or any(
                    key not in ("text", "thought", "thoughtSignature", "thought_signature") for key in part))
                   for part in parts):
            report.add("GM-18", join("/candidates", index, "content"),
                       f"candidate {index} (finishReason {short(reason)}) holds no text and no functionCall")


def check_exchange(request: Any, response: Any, profile: Profile, report: Report, *, streamed: bool) -> None:
    check_tool_exchange(request, response, report, streamed=streamed, turn=check_turn, declared=declared,
                        calls=_calls)


def declared(request: dict[str, Any]) -> set[str]:
    declared = set()
    for tool in as_list(request.get("tools")):
        for declaration in as_list(field(as_dict(tool), "functionDeclarations")[1]):
            if isinstance(as_dict(declaration).get("name"), str):
                declared.add(declaration["name"])
    return declared


def _calls(response: dict[str, Any]) -> list[tuple[str, Any]]:
    calls = []
    for index, candidate in enumerate(as_list(response.get("candidates"))):
        for position, part in enumerate(_parts(as_dict(as_dict(candidate).get("content")))):
            key, call = field(as_dict(part), "functionCall")
            if isinstance(call, dict):
                calls.append((join("/candidates", index, "content", "parts", position, key, "name"), call.get("name")))
    return calls
