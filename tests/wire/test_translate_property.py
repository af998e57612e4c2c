"""The translation property (issue 18): a translation's output passes the target's own checker. No
error finding on a translated request that the input did not already carry; when the input carried
one, the loss report says so; and `translate` exits non-zero when it cannot produce a valid payload.
Over every pair, every golden input, the recorded corpus, and generated requests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import examples
from inspector.cli import main
from inspector.wire.check import check_request
from inspector.wire.dialect import Dialect
from inspector.wire.translate import PAIRS, TranslationError, output_errors, translate_document
from inspector.wire.violations import Severity

from . import wire_payloads as payloads

CHAT, RESP, ANT, GEM = Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES, Dialect.ANTHROPIC, Dialect.GEMINI
BR = Dialect.BEDROCK
HERE = Path(__file__).parent
ROOT = HERE.parent
BASELINES = {CHAT: payloads.chat_request, RESP: payloads.responses_request, ANT: payloads.anthropic_request,
             GEM: payloads.gemini_request, BR: payloads.bedrock_request}
_DIALECT_OF_PATH = {"/v1/chat/completions": CHAT, "/v1/responses": RESP, "/v1/messages": ANT}


def _errors(payload: Any, dialect: Dialect) -> list[tuple[str, str]]:
    return [(v.rule, v.pointer) for v in check_request(payload, dialect) if v.severity is Severity.ERROR]


def holds(source: Dialect, target: Dialect, payload: dict[str, Any], *, mends: bool = False) -> None:
    """The property on one input: refused outright, or translated into a payload the target's
    checker passes, or (the input already invalid) the loss report names what it carried. With
    `mends`, the input's defects are ones the translation repairs (genai-typed schemas, names a
    target refuses): the output must be valid whatever the input carried."""
    try:
        translated, losses = translate_document(copy.deepcopy(payload), source, target)
    except TranslationError:
        return
    found = output_errors(translated, target)
    if mends or not _errors(payload, source):
        assert found == [], (f"{source.value} -> {target.value}: the translation has errors its input did not "
                             f"carry: {[(v.rule, v.pointer, v.message) for v in found]}\n{orjson.dumps(translated)}")
    carried = {(loss.rule, loss.source) for loss in losses if loss.kind == "carried"}
    assert carried == set(_errors(payload, source))


def _inputs() -> list[tuple[Dialect, str, dict[str, Any]]]:
    found = [(source, f"golden:{source.value}", orjson.loads((HERE / "golden" / "inputs" /
                                                               f"{source.value}.request.json").read_bytes()))
             for source in BASELINES]
    found += [(source, f"baseline:{source.value}", build()) for source, build in BASELINES.items()]
    for line in (ROOT / "data" / "real_traffic" / "corpus.jsonl").read_text().splitlines():
        record = orjson.loads(line)
        if record["path"] in _DIALECT_OF_PATH:
            found.append((_DIALECT_OF_PATH[record["path"]], f"corpus:{record['provenance']['path']}",
                          record["request"]))
    return found


CASES = [(source, target, name, payload) for source, name, payload in _inputs() for s, target in PAIRS
         if s is source]


@pytest.mark.parametrize(("source", "target", "name", "payload"), CASES,
                         ids=[f"{c[2]}->{c[1].value}" for c in CASES])
def test_every_golden_and_recorded_request_translates_into_a_valid_payload(source, target, name, payload) -> None:
    holds(source, target, payload)


# --- generated requests -----------------------------------------------------------------------------

_VALID_LEAVES = [{"type": "string"}, {"type": "integer", "minimum": 0}, {}, {"enum": ["a", "b"]},
                 {"type": ["string", "null"]}, {"type": "string", "format": "date-time"}, {"const": "x"},
                 {"description": "anything"}, {"type": "boolean"}]
# What leaks from genai into JSON-Schema dialects (the seeds' defect): upper-case types, nullable, int64.
_GENAI_LEAVES = [{"type": "STRING"}, {"type": "NUMBER"}, {"type": "boolean", "nullable": True},
                 {"type": "INTEGER", "format": "int64"}]
_NAMES = st.sampled_from(["q", "city", "tags", "type", "a.b", "limit"])


def _schemas(leaves: list[dict[str, Any]], kinds: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    nodes = st.recursive(st.sampled_from(leaves), lambda child: (
        st.builds(lambda kind, items: {"type": kind, "items": items}, st.sampled_from([k[0] for k in kinds]), child)
        | st.builds(lambda kind, props: {"type": kind, "properties": props, "required": sorted(props)[:1]},
                    st.sampled_from([k[1] for k in kinds]), st.dictionaries(_NAMES, child, min_size=1, max_size=3))
        | st.builds(lambda one, other: {"anyOf": [one, other]}, child, child)), max_leaves=6)
    return st.builds(lambda kind, props, extra: {"type": kind, "properties": props, **extra},
                     st.sampled_from([k[1] for k in kinds]), st.dictionaries(_NAMES, nodes, max_size=3),
                     st.sampled_from([{}, {"required": ["q"]}, {"additionalProperties": False}]))


# Valid schemas, and schemas with genai leaks; valid tool names, and names some target refuses.
roots = st.one_of(_schemas(_VALID_LEAVES, (("array", "object"),)), _schemas(_VALID_LEAVES, (("array", "object"),)),
                  _schemas(_VALID_LEAVES + _GENAI_LEAVES, (("array", "object"), ("ARRAY", "OBJECT"))))
tool_names = st.sampled_from(["get_weather", "lookup", "mcp__fs__read", "do-it", "find", "search.docs", "x" * 70])
efforts = st.sampled_from(["none", "minimal", "low", "medium", "high", "xhigh"])
identifiers = st.sampled_from(["u-1", "x" * 80])


def _chat(tools, effort, user, max_tokens, temperature) -> dict[str, Any]:
    body = payloads.chat_request()
    body["tools"] = [{"type": "function", "function": {"name": name, "parameters": schema}} for name, schema in tools]
    for message in body["messages"]:
        for call in message.get("tool_calls") or []:
            call["function"]["name"] = tools[0][0]
    body.update({k: v for k, v in (("reasoning_effort", effort), ("user", user), ("max_tokens", max_tokens),
                                   ("temperature", temperature)) if v is not None})
    return body


def _responses(tools, effort, user, max_tokens, temperature) -> dict[str, Any]:
    body = payloads.responses_request()
    declared = [{"type": "function", "name": name, "parameters": schema} for name, schema in tools]
    body["tools"] = [{"type": "namespace", "name": "srv", "description": "a server", "tools": declared[:1]},
                     *declared[1:]]
    for item in body["input"]:
        if item.get("type") == "function_call":
            item.update(namespace="srv", name=tools[0][0])
    body.update({k: v for k, v in (("reasoning", {"effort": effort} if effort else None), ("safety_identifier", user),
                                   ("max_output_tokens", max_tokens), ("temperature", temperature)) if v is not None})
    return body


def _anthropic(tools, effort, user, max_tokens, temperature) -> dict[str, Any]:
    body = payloads.anthropic_request()
    body["tools"] = [{"name": name, "input_schema": schema} for name, schema in tools]
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_use":
                block["name"] = tools[0][0]
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if effort not in (None, "none"):
        budget = {"minimal": 1024, "low": 1500, "medium": 5000, "high": 20000, "xhigh": 50000}[effort]
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        body["max_tokens"] = max(body["max_tokens"], budget + 1000)
        for message in body["messages"]:  # the signed block every tool-calling turn keeps while thinking (XL-14)
            if message["role"] == "assistant" and isinstance(message["content"], list):
                message["content"].insert(0, {"type": "thinking", "thinking": "...", "signature": "c2ln"})
    body.update({k: v for k, v in (("metadata", {"user_id": user} if user else None),
                                   ("temperature", temperature)) if v is not None})
    return body


def _gemini(tools, effort, user, max_tokens, temperature) -> dict[str, Any]:
    body = payloads.gemini_request()
    body["tools"] = [{"functionDeclarations": [{"name": name, "parameters": schema} for name, schema in tools]}]
    for content in body["contents"]:
        for part in content["parts"]:
            for key in ("functionCall", "functionResponse"):
                if key in part:
                    part[key]["name"] = tools[0][0]
    generation = {k: v for k, v in (("maxOutputTokens", max_tokens), ("temperature", temperature)) if v is not None}
    if effort is not None:
        generation["thinkingConfig"] = {"thinkingBudget": {"none": 0, "minimal": 512, "low": 1024, "medium": -1,
                                                           "high": 20000, "xhigh": 30000}[effort]}
    if generation:
        body["generationConfig"] = generation
    return body


def _bedrock(tools, effort, user, max_tokens, temperature) -> dict[str, Any]:
    body = payloads.bedrock_request()
    body["toolConfig"]["tools"] = [{"toolSpec": {"name": name, "inputSchema": {"json": schema}}} for name, schema in tools]
    body["toolConfig"]["toolChoice"] = {"tool": {"name": tools[0][0]}} if effort == "high" else {"auto": {}}
    for message in body["messages"]:
        for block in message["content"]:
            if "toolUse" in block:
                block["toolUse"]["name"] = tools[0][0]
    if effort not in (None, "none"):  # Converse says reasoning in the model's own fields
        body["additionalModelRequestFields"] = {"reasoning_config": {"type": "enabled", "budget_tokens": 2048}}
    if user is not None:
        body["requestMetadata"] = {"user": user}
    inference = {k: v for k, v in (("maxTokens", max_tokens), ("temperature", temperature)) if v is not None}
    body["inferenceConfig"] = inference or body["inferenceConfig"]
    return body


BUILD = {CHAT: _chat, RESP: _responses, ANT: _anthropic, GEM: _gemini, BR: _bedrock}
requests = st.builds(lambda pair, tools, effort, user, max_tokens, temperature: (
    pair, BUILD[pair[0]](tools, effort, user, max_tokens, temperature)),
    st.sampled_from(PAIRS), st.lists(st.tuples(tool_names, roots), min_size=1, max_size=3, unique_by=lambda t: t[0]),
    st.none() | efforts, st.none() | identifiers, st.none() | st.sampled_from([100, 3000, 40000]),
    st.none() | st.sampled_from([0.2, 1]))


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests)
def test_generated_requests_translate_into_valid_payloads(case) -> None:
    (source, target), payload = case
    holds(source, target, payload, mends=True)


# --- the CLI's verdict --------------------------------------------------------------------------------

def test_translate_exits_non_zero_when_it_cannot_produce_a_valid_payload(tmp_path, capsys) -> None:
    empty = tmp_path / "empty.json"
    empty.write_bytes(orjson.dumps({"model": "gpt-5", "store": False}))  # nothing to respond to (OR-13)
    assert main(["translate", "--from", "openai-responses", "--to", "openai-chat", str(empty)]) == 1
    err = capsys.readouterr().err
    assert f"{empty}:carried /input: the input already has this error" in err
    assert "the translation is not a valid openai-chat request: error OC-28 /messages" in err
    valid = tmp_path / "valid.json"
    valid.write_bytes(orjson.dumps({"model": "gpt-5", "input": "hi"}))
    assert main(["translate", "--from", "openai-responses", "--to", "openai-chat", str(valid)]) == 0


def test_translate_from_bedrock_exits_non_zero_when_it_cannot_produce_a_valid_payload(tmp_path, capsys) -> None:
    empty = tmp_path / "empty.json"
    empty.write_bytes(orjson.dumps({"messages": []}))  # Converse takes it; Chat needs a message (OC-28)
    assert main(["translate", "--from", "bedrock", "--to", "openai-chat", str(empty)]) == 1
    assert "the translation is not a valid openai-chat request: error OC-28 /messages" in capsys.readouterr().err
    valid = tmp_path / "valid.json"
    valid.write_bytes(orjson.dumps({"modelId": "amazon.nova-pro-v1:0",
                                    "messages": [{"role": "user", "content": [{"text": "hi"}]}]}))
    assert main(["translate", "--from", "bedrock", "--to", "openai-chat", str(valid)]) == 0
    assert orjson.loads(capsys.readouterr().out) == {"model": "amazon.nova-pro-v1:0",
                                                     "messages": [{"role": "user", "content": "hi"}]}
