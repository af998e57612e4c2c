"""Anthropic Messages (AN-* in docs/rules.md): custom and server tools, tool_choice, tool_use / tool_result
blocks and their pairing from one message to the next, and responses. Streams are in `streams.py`."""

from __future__ import annotations

import re
from typing import Any

from ...dialect import Dialect
from ...naming import id_ok
from ...pointer import join
from ...profiles import Profile
from ...violations import Severity
from ...rules.base import (Report, as_dict, as_list, check_history, check_ranges, check_tool_exchange,
                           check_tool_name, readable, remember_name, short, show_json)
from ...rules.schema import check_json_schema
from . import limits

# Versioned client/server tool types: web_search_20250305, bash_20250124, tool_search_tool_bm25_20251119, …
_VERSIONED = re.compile(r"([a-z_0-9]+?)_(\d{8})")
# Server tools whose type fixes the name they must carry (AN-04).
_FIXED_NAMES = {"web_search": "web_search", "web_fetch": "web_fetch", "code_execution": "code_execution",
                "bash": "bash", "memory": "memory", "tool_search_tool_bm25": "tool_search_tool_bm25",
                "tool_search_tool_regex": "tool_search_tool_regex"}
_RESULT_BLOCKS = frozenset({"text", "image", "search_result", "document", "tool_reference"})
# Beta features (the anthropic-beta header, `Profile.betas`) that make valid what the API otherwise refuses:
# interleaved thinking counts the budget over the turn's thinking blocks, so it may exceed max_tokens
# (AN-16); the MCP connector's current version takes `mcp_toolset` tools (AN-01).
INTERLEAVED_THINKING = "interleaved-thinking-2025-05-14"
MCP_CONNECTOR = "mcp-client-2025-11-20"
# Fine-grained tool streaming sends tool input as the model writes it, without buffering or validating it, so
# a joined input that is not JSON is documented behaviour under it, not a stream mangled on the way (AN-13).
FINE_GRAINED_TOOL_STREAMING = "fine-grained-tool-streaming-2025-05-14"
# Content sources of type "file" (an uploaded file_id) exist only in the Files API beta: without it the
# source is none of the tags the API knows (base64, url, text, content).
FILES_API = "files-api-2025-04-14"
STOP_REASONS = frozenset({"end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal",
                          "model_context_window_exceeded"})


PORTABLE_NAME_MAX = 64  # the limit before mid-2025, and OpenAI's and Gemini's today


def check_name(report: Report, profile: Profile, name: Any, pointer: str, what: str) -> None:
    if check_tool_name(report, profile, name, pointer, what, "AN-02") and len(name) > PORTABLE_NAME_MAX:
        report.add("AN-02", pointer, f"{what} name is {len(name)} characters: accepted today, but endpoints from "
                                     f"before mid-2025 and the other dialects stop at {PORTABLE_NAME_MAX}",
                   Severity.WARNING)


def check_tool_use(report: Report, profile: Profile, block: dict[str, Any], pointer: str,
                   ids: dict[str, str], earlier: dict[str, str] | None = None) -> str | None:
    """AN-05 for one tool_use block. Returns its id when usable. `ids`: the ids of this message, which
    must be unique; `earlier`: those of earlier turns, where a repeat was accepted (AN-05 in docs/rules.md)
    but still pairs results ambiguously."""
    block_id = block.get("id")
    check_name(report, profile, block.get("name"), join(pointer, "name"), "tool_use")
    if "input" not in block or not isinstance(block["input"], dict):
        value = block.get("input")
        detail = "a JSON string; send the decoded object" if isinstance(value, str) else short(value)
        report.add("AN-05", join(pointer, "input"), f"tool_use input is {detail}, not an object "
                                                    "(\"Input should be a valid dictionary\")")
    if not isinstance(block_id, str) or not block_id:
        report.add("AN-05", join(pointer, "id"), "tool_use has no id")
        return None
    if not id_ok(block_id, Dialect.ANTHROPIC):
        report.add("AN-05", join(pointer, "id"), f"tool_use id {short(block_id)} must match ^[a-zA-Z0-9_-]+$ and "
                                                 "be at most 64 characters")
    if block_id in ids:
        report.add("AN-05", join(pointer, "id"), f"tool_use id {short(block_id)} is already used at {ids[block_id]} "
                                                 "(\"tool_use ids must be unique\")")
        return block_id
    ids[block_id] = join(pointer, "id")
    if earlier is not None and block_id in earlier:
        report.add("AN-05", join(pointer, "id"), f"tool_use id {short(block_id)} was already used by an earlier turn "
                                                 f"at {earlier[block_id]}: accepted, but its results pair ambiguously",
                   Severity.WARNING)
    return block_id


def _check_tool(report: Report, profile: Profile, tool: Any, pointer: str, names: dict[str, str]) -> None:
    if not isinstance(tool, dict):
        report.add("AN-01", pointer, f"tool is {short(tool)}, not an object")
        return
    kind = tool.get("type")
    name = tool.get("name")
    if kind in (None, "custom"):
        check_name(report, profile, name, join(pointer, "name"), "tool")
        schema = tool.get("input_schema")
        label = f"tool {name!r}" if isinstance(name, str) else "tool"
        if not isinstance(schema, dict):
            report.add("AN-01", join(pointer, "input_schema"), f"{label} needs input_schema (a JSON Schema object)")
        else:
            root = schema.get("type")
            if not (isinstance(root, str) and root.lower() == "object"):
                report.add("AN-01", join(pointer, "input_schema", "type") if "type" in schema
                           else join(pointer, "input_schema"), f"{label}: input_schema must have type 'object'")
            check_json_schema(report, schema, join(pointer, "input_schema"), "XL-01", what=label)
    elif kind == "mcp_toolset":
        if MCP_CONNECTOR not in profile.betas:
            report.add("AN-01", join(pointer, "type"), f"tool type 'mcp_toolset' is the MCP connector's, which needs "
                                                       f"the header anthropic-beta: {MCP_CONNECTOR}")
    else:
        match = _VERSIONED.fullmatch(kind) if isinstance(kind, str) else None
        if match is None:
            report.add("AN-01", join(pointer, "type"), f"tool type {short(kind)} is neither custom nor a versioned "
                                                       "Anthropic tool type")
            return
        fixed = _FIXED_NAMES.get(match.group(1))
        if fixed is not None and name != fixed:
            report.add("AN-04", join(pointer, "name"), f"{kind} must be named {fixed!r}, not {short(name)}")
        if "allowed_domains" in tool and "blocked_domains" in tool and tool["allowed_domains"] is not None \
                and tool["blocked_domains"] is not None:
            report.add("AN-04", join(pointer, "blocked_domains"), "allowed_domains and blocked_domains are exclusive")
    remember_name(report, "AN-03", names, name, join(pointer, "name"))


def check_request(payload: Any, profile: Profile, report: Report) -> None:
    if not isinstance(payload, dict):
        return
    if profile.reaches_provider:
        check_ranges(report, "AN-17", payload, limits.ranges(profile), limits.FIELDS, dialect=Dialect.ANTHROPIC)
        _check_thinking_budget(report, profile, payload)
        _check_betas(report, profile, payload)
    names: dict[str, str] = {}
    if "tools" in payload and payload["tools"] is None:
        report.add("XL-10", "/tools", "tools is null; treated as absent")
    tools = as_list(payload.get("tools"))
    for index, tool in enumerate(tools):
        _check_tool(report, profile, tool, join("/tools", index), names)
    if readable(payload.get("tools")):
        _check_tool_choice(report, payload, names, bool(tools))
    check_history(report, "AN-14", payload, "messages", "message object", _HISTORY)
    _check_container(report, payload.get("container"))
    turns, whole = _turns(report, payload.get("messages"))
    _check_messages(report, profile, turns, paired=whole)
    if FILES_API not in profile.betas:
        _check_file_sources(report, turns)
    if profile.reaches_provider:
        _check_cache_breakpoints(report, payload)
    # Only with thinking enabled does every assistant turn start with a thinking block: with "adaptive"
    # the model may not think on a turn, so a tool-calling turn without one is no sign of a dropped block
    # (Claude Code's traffic, accepted; issue 18).
    if profile.reaches_provider and as_dict(payload.get("thinking")).get("type") == "enabled":
        _check_thinking_kept(report, turns)


MAX_CACHE_BREAKPOINTS = 4


def cache_breakpoints(payload: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(pointer, block) of each block that carries cache_control, in the order Anthropic reads the
    prompt (tools, system, messages; a tool_result's own blocks after it)."""
    found: list[tuple[str, dict[str, Any]]] = []

    def blocks(items: Any, base: str) -> None:
        for index, block in enumerate(as_list(items)):
            if not isinstance(block, dict):
                continue
            where = join(base, index)
            if block.get("cache_control") is not None:
                found.append((where, block))
            if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                blocks(block["content"], join(where, "content"))

    blocks(payload.get("tools"), "/tools")
    if isinstance(payload.get("system"), list):
        blocks(payload["system"], "/system")
    for index, message in enumerate(as_list(payload.get("messages"))):
        if isinstance(message, dict) and isinstance(message.get("content"), list):
            blocks(message["content"], join("/messages", index, "content"))
    return found


def _check_cache_breakpoints(report: Report, payload: dict[str, Any]) -> None:
    found = cache_breakpoints(payload)
    if len(found) > MAX_CACHE_BREAKPOINTS:
        report.add("AN-18", join(found[MAX_CACHE_BREAKPOINTS][0], "cache_control"),
                   f"{len(found)} blocks carry cache_control; Anthropic takes at most {MAX_CACHE_BREAKPOINTS} "
                   f"(\"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
                   f"Found {len(found)}.\")")


# A container is an id, or {id, skills}; Anthropic forbids extra inputs, and the SDK's type is open.
_CONTAINER_FIELDS = frozenset({"id", "skills"})


def _check_container(report: Report, container: Any) -> None:
    """AN-14 for a container object of another shape: OpenAI's code_interpreter container
    ({type: auto, file_ids}) carried over is the usual one."""
    for key in as_dict(container):
        if key not in _CONTAINER_FIELDS:
            report.add("AN-14", join("/container", key), f"{short(key)} is not a field of container (\"Extra inputs "
                                                         "are not permitted\")",
                       hint="Send container as a container id, or {id, skills}; {type: auto} is OpenAI's "
                            "code_interpreter shape, and Anthropic makes a container when none is named.")


_HISTORY = ("Anthropic, and servers compatible with its Messages API, read messages as a list of message objects "
            "and refuse the request at a value of another type: here {{value}} at '{{dots}}'.")


def _check_thinking_budget(report: Report, profile: Profile, payload: dict[str, Any]) -> None:
    """A fixed thinking budget: at least the minimum (AN-17), and below max_tokens, which counts the
    thinking as well as the answer (AN-16), unless interleaved thinking spreads it over the turn."""
    thinking = as_dict(payload.get("thinking"))
    budget = thinking.get("budget_tokens")
    if thinking.get("type") != "enabled" or isinstance(budget, bool) or not isinstance(budget, int):
        return
    if limits.THINKING_BUDGET.fit(budget) != budget:
        report.add("AN-17", "/thinking/budget_tokens", f"budget_tokens {budget} is outside the accepted range "
                                                       f"({limits.THINKING_BUDGET.describe()})")
    max_tokens = payload.get("max_tokens")
    if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens <= budget \
            and INTERLEAVED_THINKING not in profile.betas:
        report.add("AN-16", "/max_tokens", f"max_tokens {max_tokens} is not above thinking.budget_tokens {budget}")


def _check_tool_choice(report: Report, payload: dict[str, Any], names: dict[str, str], has_tools: bool) -> None:
    if "tool_choice" not in payload:
        return
    choice = payload["tool_choice"]
    if choice is None:
        report.add("XL-10", "/tool_choice", "tool_choice is null; treated as absent")
        return
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind not in ("auto", "any", "none", "tool"):
        report.add("AN-10", "/tool_choice", f"tool_choice {short(choice)} is not {{type: auto|any|none|tool}}"
                   + (" (OpenAI strings map: required → any)" if isinstance(choice, str) else ""))
        return
    if kind == "tool":
        name = choice.get("name")
        if not isinstance(name, str):
            report.add("AN-10", "/tool_choice/name", "tool_choice {type:'tool'} needs name")
        elif name not in names:
            report.add("AN-10", "/tool_choice/name", f"tool_choice names {short(name)}, which is not among the tools")
    if kind != "none" and not has_tools:
        report.add("AN-10", "/tool_choice", "tool_choice is set but the request has no tools")
    thinking = as_dict(payload.get("thinking"))
    # Only fixed-budget thinking conflicts: "adaptive" with a forced tool was accepted (AN-11 in docs/rules.md).
    if kind in ("any", "tool") and thinking.get("type") == "enabled":
        report.add("AN-11", "/tool_choice/type", f"tool_choice {kind!r} forces tool use while thinking is enabled")


class _Turn:
    """Consecutive messages of one role, which the API merges into one turn before pairing tool_use
    with tool_result: `blocks` are (pointer, block) over all of them, `base` is the first message."""

    __slots__ = ("role", "base", "blocks")

    def __init__(self, role: Any, base: str) -> None:
        self.role = role
        self.base = base
        self.blocks: list[tuple[str, dict[str, Any]]] = []


def _turns(report: Report, messages: Any) -> tuple[list[_Turn], bool]:
    """The messages as the API pairs them (AN-12 is judged per message, before merging), and whether
    every message and block is an object: a hole of another type (reported where it is) hides what
    the turns around it call and answer, so pairing is not judged then."""
    if not isinstance(messages, list):
        return [], True
    if not messages:  # a request of only a system prompt, say, as gateways map one
        report.add("AN-12", "/messages", "messages is empty: Anthropic answers 400 \"messages: at least one message "
                                         "is required\"")
    turns: list[_Turn] = []
    whole = True
    last = len(messages) - 1
    for index, message in enumerate(messages):
        base = join("/messages", index)
        if not isinstance(message, dict):
            whole = False
            continue
        role = message.get("role")
        content = message.get("content")
        if (content == "" or content == []) and not (role == "assistant" and index == last):
            report.add("AN-12", join(base, "content"), "message content is empty")
        if not turns or turns[-1].role != role:
            turns.append(_Turn(role, base))
        if isinstance(content, str) and content:
            turns[-1].blocks.append((join(base, "content"), {"type": "text", "text": content}))
        whole = whole and (isinstance(content, str) or readable(content))
        for position, block in enumerate(as_list(content)):
            if isinstance(block, dict):
                turns[-1].blocks.append((join(base, "content", position), block))
    return turns, whole


def _only_tool_results(turn: _Turn) -> bool:
    return turn.role == "user" and bool(turn.blocks) and all(block.get("type") == "tool_result"
                                                             for _, block in turn.blocks)


def _check_messages(report: Report, profile: Profile, turns: list[_Turn], *, paired: bool) -> None:
    """Each turn's blocks; with `paired`, also each tool_use against the tool_result that answers it."""
    ids: dict[str, str] = {}  # tool_use ids of earlier turns
    pending: dict[str, str] = {}  # tool_use ids of the previous assistant turn -> pointer
    answered: set[str] = set()
    server_all: set[str] = set()
    last = len(turns) - 1
    for position, turn in enumerate(turns):
        if turn.role == "assistant":
            _unanswered(report, pending, turn.base, paired)
            turn_server: set[str] = set()  # the server tool uses of this turn
            server_ids: dict[str, str] = {}  # id -> pointer, of those it has not answered
            turn_ids: dict[str, str] = {}
            for where, block in turn.blocks:
                kind = block.get("type")
                if kind == "tool_use":
                    block_id = check_tool_use(report, profile, block, where, turn_ids, ids)
                    if block_id is not None:
                        pending[block_id] = join(where, "id")
                elif isinstance(kind, str) and kind.endswith("_tool_use"):  # server_tool_use, mcp_tool_use
                    if isinstance(block.get("id"), str):
                        server_ids[block["id"]] = join(where, "id")
                        turn_server.add(block["id"])
                elif isinstance(kind, str) and kind.endswith("_tool_result") and kind != "tool_result":
                    if not isinstance(block.get("tool_use_id"), str) or block["tool_use_id"] not in turn_server:
                        report.add("AN-04", join(where, "tool_use_id"), f"{kind} answers "
                                   f"{short(block.get('tool_use_id'))}, no server_tool_use before it in this message")
                    if isinstance(block.get("tool_use_id"), str):  # a list or an object is no id (unhashable)
                        server_ids.pop(block["tool_use_id"], None)
                elif kind == "tool_result":
                    report.add("AN-08", where, "tool_result block in an assistant message")
            # The server runs its tool inside the turn and writes the result there; a turn the client
            # sends back to be continued (pause_turn, the last message) may still wait for one, and so
            # may a turn followed only by the results of the client tools it called beside the server's
            # (the call is still in flight: Anthropic accepts that history, and refuses it once any
            # other content follows — measured by pydantic-ai, tests/models/anthropic/
            # test_unpaired_native_tool_calls.py).
            in_flight = position == last - 1 and _only_tool_results(turns[last])
            for block_id, where in server_ids.items() if paired and position < last and not in_flight else ():
                report.add("AN-04", where, f"server tool use {short(block_id)} has no result block in its own "
                                           "assistant message",
                           why="A server tool's call and its result (web_search_tool_result, mcp_tool_result, …) "
                               "live in the same assistant message; Anthropic refuses a history where the use "
                               "{{value}} at '{{dots}}' has no result there, as it refuses a result with no use "
                               "before it.",
                           hint="Keep the server tool's result block right after its use in the assistant message; "
                                "nothing may be spliced between them.")
            ids.update({k: v for k, v in turn_ids.items() if k not in ids})
            server_all |= turn_server
            answered = set()
        elif turn.role == "user":
            _check_user_blocks(report, turn, pending, answered, server_all, paired)
    _unanswered(report, pending, "", paired)


def _check_betas(report: Report, profile: Profile, payload: dict[str, Any]) -> None:
    """AN-19: a beta flag the endpoint does not take (`Profile.supported_betas`), from the anthropic-beta
    header (`Profile.betas`) or, where a provider's variant carries them in the body, `anthropic_beta`."""
    if profile.supported_betas is None:
        return
    in_body = [(join("/anthropic_beta", index), value.strip().lower())
               for index, value in enumerate(as_list(payload.get("anthropic_beta"))) if isinstance(value, str)]
    named = {value for _, value in in_body}
    found = [*in_body, *(("", beta) for beta in sorted(profile.betas - named))]
    for pointer, beta in found:
        if beta not in profile.supported_betas:
            report.add("AN-19", pointer, f"anthropic-beta {beta} is not a beta flag {profile.name} takes",
                       hint=f"Drop {beta} from the anthropic-beta values sent to {profile.name} (a relay forwarding "
                            "the client's flags must filter them per provider).")


def _check_file_sources(report: Report, turns: list[_Turn]) -> None:
    """AN-14 for an image or document source of type file (in a message or a tool result) in a request
    that does not opt into the Files API beta."""
    for turn in turns:
        for where, block in turn.blocks:
            inner = [(join(where, "content", i), b) for i, b in enumerate(as_list(block.get("content")))
                     if isinstance(b, dict)] if block.get("type") == "tool_result" else []
            for at, item in [(where, block), *inner]:
                if item.get("type") in ("document", "image") and as_dict(item.get("source")).get("type") == "file":
                    report.add("AN-14", join(at, "source", "type"), f"a {item['type']} source of type 'file' is the "
                                                                    "Files API's, which needs the header "
                                                                    f"anthropic-beta: {FILES_API}",
                               hint=f"Send anthropic-beta: {FILES_API} with the request (check --header when the "
                                    "recording lacks headers), or send the file inline as base64.")


def _check_thinking_kept(report: Report, turns: list[_Turn]) -> None:
    """XL-14: with thinking on, the last assistant turn, when it called tools, must keep its thinking block."""
    for turn in reversed(turns):
        if turn.role != "assistant":
            continue
        if any(b.get("type") == "tool_use" for _, b in turn.blocks) and turn.blocks[0][1].get("type") not in (
                "thinking", "redacted_thinking"):
            report.add("XL-14", turn.blocks[0][0], "with thinking enabled, the assistant message that called tools "
                                                   "must start with its thinking block (it was dropped)")
        return


def _unanswered(report: Report, pending: dict[str, str], next_pointer: str, paired: bool) -> None:
    for block_id, pointer in pending.items() if paired else ():
        where = f"before {next_pointer}" if next_pointer else "and the conversation ends"
        report.add("AN-07", pointer, f"tool_use {short(block_id)} has no tool_result in the next message {where}")
    pending.clear()


def _check_user_blocks(report: Report, turn: _Turn, pending: dict[str, str], answered: set[str],
                       server_all: set[str], paired: bool) -> None:
    leading = True
    first_other: str | None = None
    for where, block in turn.blocks:
        if block.get("type") != "tool_result":
            if leading and first_other is None:
                first_other = where
            leading = False
            continue
        if not leading and first_other is not None and paired:
            report.add("AN-09", first_other, "text or other blocks come before the tool_result blocks "
                                             "(\"Did not find … tool_result block(s) at the beginning\")")
            first_other = None  # report once per turn
        _check_result_content(report, block, where)
        tool_use_id = block.get("tool_use_id")
        if not isinstance(tool_use_id, str):
            report.add("AN-06", join(where, "tool_use_id"), "tool_result has no tool_use_id")
        elif not paired:
            continue
        elif tool_use_id in pending:
            del pending[tool_use_id]
            answered.add(tool_use_id)
        elif tool_use_id in answered:
            report.add("AN-08", join(where, "tool_use_id"), f"tool_use {short(tool_use_id)} is answered twice")
        elif tool_use_id in server_all:
            report.add("AN-04", join(where, "tool_use_id"), f"tool_result answers server tool call "
                                                            f"{short(tool_use_id)}; server tools get no client result")
        else:
            report.add("AN-08", join(where, "tool_use_id"), f"tool_result answers {short(tool_use_id)}, which the "
                                                            "previous message did not call")
    _unanswered(report, pending, turn.base, paired)


def _check_result_content(report: Report, block: dict[str, Any], where: str) -> None:
    if "is_error" in block and block["is_error"] is not None and not isinstance(block["is_error"], bool):
        report.add("AN-06", join(where, "is_error"), "is_error must be a boolean")
    if "content" not in block or block["content"] is None or isinstance(block["content"], str):
        return
    content = block["content"]
    if not isinstance(content, list):
        report.add("AN-06", join(where, "content"), f"tool_result content is {short(content)}")
        return
    for position, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if not isinstance(kind, str) or kind not in _RESULT_BLOCKS:
            report.add("AN-06", join(where, "content", position), f"tool_result content block {short(kind or part)} "
                                                                  "is not text|image|document|search_result|tool_reference")


def check_response(payload: Any, profile: Profile, report: Report) -> None:
    if not isinstance(payload, dict):
        return
    ids: dict[str, str] = {}
    calls = 0
    content = payload.get("content")
    if content is not None and not isinstance(content, list):
        report.add("AN-15", "/content", f"content is {short(content)}, not a list of blocks", Severity.ERROR,
                   why=_UNREADABLE)
    for position, block in enumerate(as_list(content)):
        if not isinstance(block, dict):
            report.add("AN-15", join("/content", position), f"content block is {short(block)}, not an object",
                       Severity.ERROR, why=_UNREADABLE)
        elif block.get("type") == "tool_use":
            check_tool_use(report, profile, block, join("/content", position), ids)
            calls += 1
    check_usage(report, payload, "/usage")
    if readable(content):  # what the blocks call is known: stop_reason can be held to it
        check_stop_reason(report, payload.get("stop_reason"), calls, "/stop_reason")
        check_turn(payload, report)


_UNREADABLE = ("A client parses the message's content as a list of block objects; a value of another type fails "
               "there and the agent gets no turn.")


def check_usage(report: Report, node: dict[str, Any], pointer: str) -> None:
    """AN-15 for the token counts of a message (or of a stream's message_start and message_delta)."""
    usage = node.get("usage")
    if "usage" in node and not isinstance(usage, dict):
        report.add("AN-15", pointer, f"usage is {show_json(usage)}, not an object of token counts", Severity.ERROR,
                   why=_UNREADABLE_USAGE)


_UNREADABLE_USAGE = ("A client reads the message's usage as an object of token counts (input_tokens, output_tokens); "
                     "a value of another type fails there, or leaves the agent's token accounting without the turn.")


def check_stop_reason(report: Report, reason: Any, calls: int, pointer: str) -> None:
    if reason is None:
        return
    if not isinstance(reason, str) or reason not in STOP_REASONS:
        report.add("AN-13", pointer, f"stop_reason {short(reason)} is not a known stop reason", Severity.WARNING)
    elif calls and reason not in ("tool_use", "max_tokens", "pause_turn"):
        report.add("AN-13", pointer, f"the message has {calls} tool_use block(s) but stop_reason is {reason!r}",
                   Severity.WARNING)
    elif reason == "tool_use" and not calls:
        report.add("AN-13", pointer, "stop_reason is 'tool_use' but the message has no tool_use block",
                   Severity.WARNING)


# Stop reasons that say themselves why the message may hold nothing for the client.
_EXPLAINED_STOPS = frozenset({"max_tokens", "refusal", "pause_turn", "model_context_window_exceeded", "tool_use"})


def check_turn(payload: dict[str, Any], report: Report) -> None:
    """AN-15: a finished message holds text or a call (thinking alone gives the agent nothing), for a
    JSON body or a reassembled stream. Anthropic does end turns empty (after tool results, with
    end_turn); the agent then has nothing to show or run, and the turn cannot be replayed (AN-12)."""
    reason = payload.get("stop_reason")
    if (isinstance(reason, str) and reason in _EXPLAINED_STOPS) or not (payload.get("type") == "message" or "content" in payload):
        return  # explained, or not a message at all
    blocks = as_list(payload.get("content"))
    if not any(isinstance(block, dict) and block.get("type") not in ("thinking", "redacted_thinking")
               and (block.get("type") != "text" or block.get("text")) for block in blocks):
        report.add("AN-15", "/content", f"the message (stop_reason {short(reason)}) holds "
                                        + ("only thinking or empty text" if blocks else "no content block")
                                        + ": no text and no tool_use")


def check_exchange(request: Any, response: Any, profile: Profile, report: Report, *, streamed: bool) -> None:
    check_tool_exchange(request, response, report, streamed=streamed, turn=check_turn, declared=declared,
                        calls=_calls)


def declared(request: dict[str, Any]) -> set[str]:
    return {tool["name"] for tool in as_list(request.get("tools"))
            if isinstance(tool, dict) and isinstance(tool.get("name"), str)}


def _calls(response: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(join("/content", position, "name"), block.get("name"))
            for position, block in enumerate(as_list(response.get("content")))
            if isinstance(block, dict) and block.get("type") == "tool_use"]
