"""Bedrock Converse's tool-calling contract (BR-* in docs/rules.md), from botocore's service model
`bedrock-runtime` (ToolConfiguration, ToolSpecification, ToolUseBlock, ToolResultBlock, ToolChoice,
StopReason) and the ValidationException texts Bedrock answers with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...dialect import Dialect
from ...pointer import join
from ...profiles import Profile
from ...rules.base import (Report, as_dict, as_list, check_history, check_ranges, check_tool_exchange, check_tool_name,
                           remember_name, short, show_json)
from ...rules.schema import check_json_schema
from ...violations import Severity
from . import limits
from .shape import IDS, base_model

_HISTORY = "Bedrock reads messages as a list of {role, content: [blocks]} objects."
_CHOICES = ("auto", "any", "tool")
_RESULT_BLOCKS = ("json", "text", "image", "document", "video", "searchResult")
_STOPS = ("end_turn", "tool_use", "max_tokens", "stop_sequence", "guardrail_intervened", "content_filtered",
          "malformed_model_output", "malformed_tool_use", "model_context_window_exceeded")


def _single(block: Any) -> tuple[str, Any] | None:
    """A union member (ContentBlock, Tool, ToolChoice): its one key and value; None when it has not one."""
    if isinstance(block, dict) and len(block) == 1:
        return next(iter(block.items()))
    return None


def check_request(payload: Any, profile: Profile, report: Report) -> None:
    if not isinstance(payload, dict):
        return
    config = payload.get("inferenceConfig")
    if profile.reaches_provider and isinstance(config, dict):
        check_ranges(report, "BR-12", config, limits.ranges(profile), limits.FIELDS, "/inferenceConfig",
                     dialect=Dialect.BEDROCK)
    names = _check_tool_config(report, profile, payload)
    check_history(report, "BR-09", payload, "messages", "message object", _HISTORY)
    holds_tool_blocks = _check_messages(report, profile, as_list(payload.get("messages")))
    if profile.reaches_provider:
        _check_model_blocks(report, profile, as_list(payload.get("messages")))
    if holds_tool_blocks and names is None:
        report.add("BR-07", "/toolConfig" if "toolConfig" in payload else "", "the messages hold "
                   f"{holds_tool_blocks} but the request has no toolConfig")


def _check_tool_config(report: Report, profile: Profile, payload: dict[str, Any]) -> dict[str, str] | None:
    """BR-01..03 and BR-08; the declared names and where, None without a toolConfig."""
    config = payload.get("toolConfig")
    if config is None:
        return None
    if not isinstance(config, dict) or not isinstance(config.get("tools"), list) or not config["tools"]:
        report.add("BR-01", "/toolConfig/tools" if isinstance(config, dict) else "/toolConfig",
                   f"toolConfig needs tools, a non-empty list (it holds {show_json(as_dict(config).get('tools'))})")
        return {}
    names: dict[str, str] = {}
    for index, tool in enumerate(config["tools"]):
        where = join("/toolConfig/tools", index)
        member = _single(tool)
        if member is None or member[0] not in ("toolSpec", "systemTool", "cachePoint"):
            report.add("BR-01", where, f"tool is {short(tool)}, not one of {{toolSpec}}, {{systemTool}}, {{cachePoint}}")
            continue
        if member[0] != "toolSpec":
            continue
        spec = member[1]
        at = join(where, "toolSpec")
        if not isinstance(spec, dict):
            report.add("BR-01", at, f"toolSpec is {short(spec)}, not an object")
            continue
        name = spec.get("name")
        if check_tool_name(report, profile, name, join(at, "name"), "toolSpec", "BR-02"):
            remember_name(report, "BR-03", names, name, join(at, "name"))
        schema = spec.get("inputSchema")
        json_schema = as_dict(schema).get("json")
        if isinstance(schema, dict) and set(schema) == {"json"} and not isinstance(json_schema, dict):
            report.add("BR-01", join(at, "inputSchema", "json"), f"inputSchema.json is {short(json_schema)}, not a "
                       "JSON Schema object")
            continue
        if not isinstance(schema, dict) or set(schema) != {"json"} or not isinstance(json_schema, dict):
            report.add("BR-01", join(at, "inputSchema"), f"inputSchema is {short(schema)}: it must be "
                       "{\"json\": <a JSON Schema object>}")
            continue
        if json_schema.get("type") != "object":
            report.add("BR-01", join(at, "inputSchema", "json", "type") if "type" in json_schema
                       else join(at, "inputSchema", "json"), "inputSchema.json must have type 'object'")
        check_json_schema(report, json_schema, join(at, "inputSchema", "json"), "XL-01", what="toolSpec")
    _check_tool_choice(report, profile, config.get("toolChoice"), names)
    return names


# The toolChoice members the path's model refuses (BR-08), by the foundation model's id prefix, each with
# the models that answered so. botocore's ToolChoice.tool: "Only supported by Anthropic Claude 3 and Amazon
# Nova models." Recorded 400 "This model doesn't support the toolConfig.toolChoice.tool field. Remove
# toolConfig.toolChoice.tool and try again." (litellm's Bedrock docs: mistral.mistral-large-2402-v1:0; clients'
# fallbacks for us.meta.llama4-maverick-17b-instruct-v1:0, openai.gpt-oss-20b-1:0) and "… toolChoice.any …"
# (meta llama-3.1-70b, llama-3.3-70b, llama-4-maverick; strands-agents/harness-sdk#1241). Claude and Nova took
# both (pydantic-ai's recorded Converse requests with {tool: {name}} and {any: {}}).
_CHOICE_REFUSED = {"tool": ("meta.llama", "mistral.", "openai.gpt-oss"), "any": ("meta.llama",)}
_CHOICE_WHY = ("Bedrock answers 400 \"This model doesn't support the {{dots}} field. Remove {{dots}} and try again.\" "
               "for the path's model: it does not take this toolChoice member (Anthropic Claude and Amazon Nova models "
               "take every one).")


def _check_tool_choice(report: Report, profile: Profile, choice: Any, names: dict[str, str]) -> None:
    if choice is None:
        return
    member = _single(choice)
    if member is not None and member[0] in _CHOICES and not isinstance(member[1], dict):
        report.add("BR-08", join("/toolConfig/toolChoice", member[0]), f"toolChoice.{member[0]} is "
                   f"{short(member[1])}, not an object")
        return
    if member is None or member[0] not in _CHOICES:
        hint = " (Bedrock has no 'none': leave toolConfig out to stop tool use)" if "none" in as_dict(choice) else ""
        report.add("BR-08", "/toolConfig/toolChoice", f"toolChoice is {short(choice)}, not one of {{auto: {{}}}}, "
                   f"{{any: {{}}}}, {{tool: {{name}}}}" + hint)
        return
    if member[0] == "tool":
        name = member[1].get("name")
        if not isinstance(name, str) or not name:
            report.add("BR-08", "/toolConfig/toolChoice/tool", "toolChoice {tool} needs the name of a tool")
        elif name not in names:
            report.add("BR-08", "/toolConfig/toolChoice/tool/name", f"toolChoice names {short(name)}, which is not "
                                                                    "among the tools")
    model = base_model(profile.model)
    if profile.reaches_provider and model.startswith(_CHOICE_REFUSED.get(member[0], ())):
        fallback = "omit toolChoice (auto)" if model.startswith(_CHOICE_REFUSED["any"]) else "send {any: {}}"
        report.add("BR-08", join("/toolConfig/toolChoice", member[0]), f"toolChoice.{member[0]}: {profile.model} "
                   "does not take it", why=_CHOICE_WHY,
                   hint=f"For this model, {fallback}; Anthropic Claude and Amazon Nova models take every toolChoice.")


def _check_messages(report: Report, profile: Profile, messages: list[Any]) -> str:
    """BR-04..06 and BR-09 over the history; what tool blocks it holds ("" for none), for BR-07. The
    pairing (BR-05, BR-06) is judged only on a history whose every message and block could be read:
    a call or result of the wrong type is its own finding, not an orphan elsewhere."""
    pending: dict[str, str] = {}  # toolUseId -> where, of the last assistant message
    seen: dict[str, str] = {}
    kinds: set[str] = set()
    pairs = Report(report.where, report.document, response=report.response)
    whole = True
    for number, message in enumerate(messages):
        base = join("/messages", number)
        if not isinstance(message, dict):
            whole = False
            continue
        role, content = message.get("role"), message.get("content")
        if role not in ("user", "assistant"):
            report.add("BR-09", join(base, "role"), f"role is {short(role)}, not 'user' or 'assistant'")
        if not isinstance(content, list) or not content:
            report.add("BR-09", join(base, "content"), f"content is {show_json(content)}, not a non-empty list of "
                                                       "content blocks")
            whole = whole and isinstance(content, list)
            content = []
        answered: set[str] = set()
        uses: dict[str, str] = {}
        # A tool Bedrock runs itself (a systemTool: Nova's code interpreter) is called and answered
        # in the same assistant message ("type": "server_tool_use", then its typed toolResult).
        served: set[str] = set()
        for position, block in enumerate(content):
            where = join(base, "content", position)
            member = _single(block)
            if member is None:
                report.add("BR-09", where, f"content block is {short(block)}: it must hold exactly one member "
                                           "(text, toolUse, toolResult, image, …)")
                whole = False
                continue
            kind, value = member
            whole = whole and (kind not in ("toolUse", "toolResult") or isinstance(value, dict))
            if kind == "toolUse":
                kinds.add("toolUse blocks")
                if role != "assistant":
                    report.add("BR-04", where, "a toolUse block in a user message: only the assistant calls tools")
                found = _check_tool_use(report, profile, value, join(where, "toolUse"), seen)
                if found is not None and value.get("type") == "server_tool_use" and role == "assistant":
                    served.add(found)
                elif found is not None:
                    uses[found] = join(where, "toolUse")
            elif kind == "toolResult":
                kinds.add("toolResult blocks")
                if role != "user" and isinstance(value, dict) and isinstance(value.get("toolUseId"), str) \
                        and value["toolUseId"] in served:
                    continue  # the server's own answer to its own tool
                if role != "user":
                    report.add("BR-05", where, "a toolResult block in an assistant message")
                    continue
                _check_tool_result(report, pairs, value, join(where, "toolResult"), pending, answered)
        if pending:
            # The calls of the assistant message before this one are answered here or never.
            for use_id, where in pending.items():
                if use_id not in answered:
                    pairs.add("BR-06", where, f"toolUse {short(use_id)} has no toolResult in the next user message")
        pending = uses if role == "assistant" else {}
    if whole:
        report.violations.extend(pairs.violations)
    return " and ".join(sorted(kinds, reverse=True))


def _check_tool_use(report: Report, profile: Profile, use: Any, where: str, seen: dict[str, str]) -> str | None:
    """BR-04 for one toolUse; its id when usable."""
    if not isinstance(use, dict):
        report.add("BR-04", where, f"toolUse is {short(use)}, not an object")
        return None
    check_tool_name(report, profile, use.get("name"), join(where, "name"), "toolUse", "BR-02")
    if not isinstance(use.get("input"), dict):
        report.add("BR-04", join(where, "input"), f"toolUse input is {show_json(use.get('input'))}, not an object")
    use_id = use.get("toolUseId")
    pattern, limit = IDS
    if not isinstance(use_id, str) or not use_id:
        report.add("BR-04", join(where, "toolUseId"), "toolUse has no toolUseId")
        return None
    if not pattern.fullmatch(use_id):
        report.add("BR-04", join(where, "toolUseId"), f"toolUseId {short(use_id)} must match [a-zA-Z0-9_.:-]+ and be "
                                                      f"at most {limit} characters")
        return None
    if use_id in seen:
        report.add("BR-04", join(where, "toolUseId"), f"toolUseId {short(use_id)} is already used at {seen[use_id]}")
        return None
    seen[use_id] = join(where, "toolUseId")
    return use_id


def _check_tool_result(report: Report, pairs: Report, result: Any, where: str, pending: dict[str, str],
                       answered: set[str]) -> None:
    if not isinstance(result, dict):
        report.add("BR-09", where, f"toolResult is {short(result)}, not an object")
        return
    use_id = result.get("toolUseId")
    if not isinstance(use_id, str) or not use_id:
        report.add("BR-05", join(where, "toolUseId"), "toolResult has no toolUseId")
    elif use_id in answered:
        pairs.add("BR-05", join(where, "toolUseId"), f"toolUse {short(use_id)} is answered twice")
    elif use_id not in pending:
        pairs.add("BR-05", join(where, "toolUseId"), f"toolResult answers {short(use_id)}, which the previous "
                                                     "assistant message does not call")
    else:
        answered.add(use_id)
    status = result.get("status")
    if status is not None and status not in ("success", "error"):
        report.add("BR-09", join(where, "status"), f"status is {short(status)}, not 'success' or 'error'")
    content = result.get("content")
    if not isinstance(content, list):
        report.add("BR-09", join(where, "content"), f"toolResult content is {show_json(content)}, not a list of "
                                                    "blocks")
        return
    for position, block in enumerate(content):
        member = _single(block)
        if member is None or member[0] not in _RESULT_BLOCKS:
            report.add("BR-09", join(where, "content", position), f"toolResult content block {short(block)} is not "
                       "one of {json}, {text}, {image}, {document}, {video}, {searchResult}")


@dataclass(frozen=True, slots=True)
class _Refusal:
    """A media block Converse takes from some models and refuses from others (BR-09): the models (by
    the foundation model's id prefix), the block, its source (None: any), where it sits (True inside a
    toolResult, False in the message itself, None either), and what the model answers."""

    models: str
    block: str
    source: str | None
    in_result: bool | None
    # where the finding sits, as the model's answer names it: the message's content block ("message"),
    # the media block ("media") or its source ("source")
    at: str
    why: str  # a template (base.facts) over the finding's pointer
    hint: str


# Recorded (pydantic-ai tests/models/cassettes/test_multimodal_tool_returns/test_multimodal_tool_return_matrix[…]
# .yaml, us.amazon.nova-2-lite-v1:0 and us.anthropic.claude-sonnet-4-5-20250929-v1:0, each shape sent to both).
_REFUSALS = (
    # [direct-uploaded_file-document-bedrock_nova], [direct-uploaded_file-video-bedrock_nova]: 400; the same
    # image in a toolResult and the same document beside the toolResult ([tool_return_content-…-nova]): 200.
    *(_Refusal("amazon.nova", block, "s3Location", True, "message",
               "Amazon Nova models refuse a toolResult holding a " + block + " from s3Location: 400 \"Malformed input "
               "request: #{{pointer}}: extraneous key [toolResult] is not permitted\" (an image from s3Location "
               "there, or the " + block + " beside the toolResult, is taken).",
               "Send the " + block + " as a block of the user message beside the toolResult, or its bytes.")
      for block in ("document", "video")),
    # [tool_return_content-uploaded_file-document-bedrock_claude]: 400; the same document inside the
    # toolResult ([direct-uploaded_file-document-bedrock_claude]) and from bytes beside it: 200.
    _Refusal("anthropic.claude", "document", "s3Location", False, "source",
             "Claude models on Bedrock answer 400 \"{{dots}}.type: Field required\" to a document from s3Location "
             "in the message itself (the Anthropic API's document source has a type; Bedrock maps none for S3 "
             "there); inside a toolResult the same document is taken.",
             "Send the document's bytes, or put it inside the toolResult."),
    # [direct-uploaded_file-image-bedrock_claude], [tool_return_content-uploaded_file-image-bedrock_claude]: 400.
    _Refusal("anthropic.claude", "image", "s3Location", None, "media",
             "Claude models on Bedrock answer 400 \"This model doesn't support the s3Uri field. Remove s3Uri and try "
             "again.\" to the image at {{dots}}; Nova models take it.",
             "Send the image's bytes."),
    # Every video placement and source for Claude ([direct-binary-video-bedrock_claude], […-url-video-…]): 400;
    # Nova takes each of them.
    _Refusal("anthropic.claude", "video", None, None, "media",
             "Claude models on Bedrock take no video: 400 \"This model doesn't support the video content block "
             "that you provided.\" (the block at {{dots}}); Nova models take it.",
             "Leave the video out for Claude models, or describe it in text."),
)


def _check_model_blocks(report: Report, profile: Profile, messages: list[Any]) -> None:
    """BR-09's model-specific part: the media blocks the path's model refuses where others take them."""
    model = base_model(profile.model)
    refusals = [refusal for refusal in _REFUSALS if model.startswith(refusal.models)]
    if not refusals:
        return
    for number, message in enumerate(messages):
        content = as_dict(message).get("content")
        for position, block in enumerate(content if isinstance(content, list) else ()):
            where = join("/messages", number, "content", position)
            member = _single(block)
            if member is None:
                continue
            if member[0] != "toolResult":
                _refused(report, profile, refusals, member, where, False, where)
                continue
            results = as_dict(member[1]).get("content")
            for inner, item in enumerate(results if isinstance(results, list) else ()):
                found = _single(item)
                if found is not None:
                    _refused(report, profile, refusals, found, join(where, "toolResult", "content", inner), True, where)


def _refused(report: Report, profile: Profile, refusals: list[_Refusal], member: tuple[str, Any], where: str,
             in_result: bool, block: str) -> None:
    kind, value = member
    source = as_dict(as_dict(value).get("source"))
    for refusal in refusals:
        if refusal.block != kind or refusal.in_result not in (None, in_result):
            continue
        if refusal.source is not None and refusal.source not in source:
            continue
        pointer = {"message": block, "media": join(where, kind), "source": join(where, kind, "source")}[refusal.at]
        origin = f" from {refusal.source}" if refusal.source else ""
        place = " inside a toolResult" if in_result else ""
        report.add("BR-09", pointer, f"a {kind}{origin}{place}: {profile.model} refuses it", why=refusal.why,
                   hint=refusal.hint)
        return


def check_response(payload: Any, profile: Profile, report: Report) -> None:
    """BR-14, the response's shape, then its calls (BR-04) and stop reason (BR-10), which are judged
    only when its content could be read."""
    if not isinstance(payload, dict):
        return
    content = _response_content(report, payload)
    for key in ("usage", "metrics"):
        if key in payload and not isinstance(payload[key], dict):
            report.add("BR-14", join("", key), f"{key} is {show_json(payload[key])}, not an object")
    if content is None:
        return
    seen: dict[str, str] = {}
    calls = 0
    for position, block in enumerate(content):
        member = _single(block)
        if member is None:
            report.add("BR-14", join("/output/message/content", position), f"content block is {short(block)}: it "
                       "must hold exactly one member (text, toolUse, …)")
            return
        if member[0] == "toolUse":
            calls += 1
            if _check_tool_use(report, profile, member[1], join("/output/message/content", position, "toolUse"),
                               seen) is None and not isinstance(member[1], dict):
                return
    check_stop_reason(report, payload.get("stopReason"), calls, "/stopReason")


def _response_content(report: Report, payload: dict[str, Any]) -> list[Any] | None:
    """The content blocks of the response's message; None, reported, where one level is not readable."""
    at = ""
    node: Any = payload
    for key, kind in (("output", dict), ("message", dict), ("content", list)):
        at = join(at, key)
        node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, kind):
            if node is not None or key != "output":
                report.add("BR-14", at, f"{at[1:].replace('/', '.')} is {show_json(node)}, not "
                           + ("a list of content blocks" if kind is list else "an object"))
            return None
    return list(node)


def check_stop_reason(report: Report, reason: Any, calls: int, pointer: str) -> None:
    """BR-10: stopReason is one StopReason value, tool_use exactly when the answer calls tools (or
    max_tokens: the answer was cut, maybe mid-call)."""
    if reason not in _STOPS:
        report.add("BR-10", pointer, f"stopReason {short(reason)} is not a StopReason value", Severity.WARNING)
    elif calls and reason not in ("tool_use", "max_tokens"):
        report.add("BR-10", pointer, f"the message has {calls} toolUse block(s) but stopReason is {reason!r}")
    elif reason == "tool_use" and not calls:
        report.add("BR-10", pointer, "stopReason is 'tool_use' but the message has no toolUse block")


def _turn(payload: dict[str, Any], report: Report) -> None:
    """What a JSON body's check_response says of a stream's reassembled answer is said while
    reassembling (stream.reassemble); nothing more to add."""


def check_exchange(request: Any, response: Any, profile: Profile, report: Report, *, streamed: bool) -> None:
    check_tool_exchange(request, response, report, streamed=streamed, turn=_turn, declared=declared, calls=_calls)


def declared(request: dict[str, Any]) -> set[str]:
    return {spec["name"] for tool in as_list(as_dict(request.get("toolConfig")).get("tools"))
            if isinstance(spec := as_dict(as_dict(tool).get("toolSpec")), dict) and isinstance(spec.get("name"), str)}


def _calls(response: dict[str, Any]) -> list[tuple[str, Any]]:
    message = as_dict(as_dict(response.get("output")).get("message"))
    return [(join("/output/message/content", position, "toolUse", "name"), as_dict(block.get("toolUse")).get("name"))
            for position, block in enumerate(as_list(message.get("content")))
            if isinstance(block, dict) and "toolUse" in block]
