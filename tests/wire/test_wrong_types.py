"""A field of the wrong JSON type is one finding at that field, and only that: the provider refuses the
request there (a client fails to parse the response there), so nothing under it (the schema's view of
a value it could not read) and nothing that follows from it elsewhere (a tool_choice "without tools",
a result "without its call", a stop reason "without calls") is reported.

Generated: every container node of each dialect's valid requests and responses in the rule tables is
swapped for each wrong type (an object for a list, a list for an object, a string for either), and the
document is checked again. A swap the provider takes as it is (text where content may be a string, one
Gemini message where a list is declared) is judged only for not raising."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from inspector.wire import check, profiles
from inspector.wire.dialect import Dialect
from inspector.wire.dialects.gemini.fields import LISTS, camel
from inspector.wire.pointer import join, split

from . import (test_rules_anthropic, test_rules_bedrock, test_rules_gemini, test_rules_mcp, test_rules_openai_chat,
               test_rules_openai_responses)
from .wire_payloads import anthropic_request, chat_request, gemini_request, responses_request

_TABLES = (test_rules_anthropic, test_rules_bedrock, test_rules_gemini, test_rules_mcp, test_rules_openai_chat,
           test_rules_openai_responses)


def _bases(kind: str) -> dict[tuple[str, str], Callable[[], Any]]:
    """The valid documents of the tables, by dialect and name, judged at the provider's own endpoint
    (whose published schema names each field's type; compatible servers' variants are not)."""
    return {(case.dialect, case.base.__name__): case.base for table in _TABLES for case in table.CASES
            if case.kind == kind and case.profile is None}


# Strings the providers take where a container is declared too: text content (Anthropic's messages,
# system and tool results; Chat's messages; Responses' input and its messages).
_TEXT = {
    Dialect.ANTHROPIC: re.compile(r"/system|/messages/\d+/content|/messages/\d+/content/\d+/content"),
    Dialect.OPENAI_CHAT: re.compile(r"/messages/\d+/content"),
    Dialect.OPENAI_RESPONSES: re.compile(r"/input|/input/\d+/content"),
}
# What a response alone does not judge: which result an MCP message holds depends on the method of the
# request it answers (the exchange judges it: test_rules_exchange).
_NOT_JUDGED = {("mcp", "/result")}


def _accepted(dialect: Dialect, pointer: str, value: Any) -> bool:
    # A Bedrock toolResult's json block is a Document: any JSON value.
    if dialect is Dialect.BEDROCK and re.fullmatch(r"/messages/\d+/content/\d+/toolResult/content/\d+/json", pointer):
        return True
    if isinstance(value, str):
        pattern = _TEXT.get(dialect)
        return pattern is not None and pattern.fullmatch(pointer) is not None
    # Gemini's parser reads one message where a list of them is declared (fields.LISTS).
    return dialect is Dialect.GEMINI and isinstance(value, dict) and camel(split(pointer)[-1]) in LISTS


def _containers(node: Any, base: str = "") -> Iterator[tuple[str, Any]]:
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        if isinstance(child, (dict, list)):
            yield join(base, key), child
            yield from _containers(child, join(base, key))


def _swapped(document: Any, pointer: str, value: Any) -> Any:
    swapped = copy.deepcopy(document)
    *path, last = split(pointer)
    node = swapped
    for token in path:
        node = node[int(token)] if isinstance(node, list) else node[token]
    node[int(last) if isinstance(node, list) else last] = value
    return swapped


def _swaps(dialect: str, kind: str, accepted: bool = False) -> Iterator[tuple[str, str, Any]]:
    """(the baseline's name, the pointer swapped, the swapped document) for every container of the
    dialect's baselines and each wrong type; with `accepted`, only the swaps the provider takes."""
    for (name, base), make in _bases(kind).items():
        if name != dialect:
            continue
        document = make()
        for pointer, node in _containers(document):
            for value in ([["x"], "x"] if isinstance(node, dict) else [{"x": 1}, "x"]):
                if _accepted(Dialect(dialect), pointer, value) == accepted and (dialect, pointer) not in _NOT_JUDGED:
                    yield base, pointer, _swapped(document, pointer, value)


DIALECTS = sorted(d.value for d in Dialect)
CHECKS = {"request": check.check_request, "response": check.check_response}


@pytest.mark.parametrize("kind", CHECKS)
def test_every_dialect_has_valid_documents_to_swap(kind):
    assert sorted({dialect for dialect, _ in _bases(kind)}) == (
        DIALECTS if kind == "request" else [d for d in DIALECTS if d != Dialect.GEMINI.value])


@pytest.mark.parametrize("kind", CHECKS)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_wrong_type_is_one_finding_at_its_field(dialect, kind):
    wrong = []
    for base, pointer, document in _swaps(dialect, kind):
        found = [(v.rule, v.pointer) for v in CHECKS[kind](document, dialect)]
        if [place for _, place in found] != [pointer]:
            wrong.append((base, pointer, found))
    assert wrong == []


@pytest.mark.parametrize("dialect", DIALECTS)
def test_what_the_provider_takes_as_it_is_raises_nothing(dialect):
    """Text where content may be a string, one Gemini message for a list: no exception, whatever follows."""
    for _, _, document in _swaps(dialect, "request", accepted=True):
        check.check_request(document, dialect)


def test_one_gemini_tool_object_is_read_as_the_list_gemini_takes_it_for():
    """Gemini's parser reads `tools` given as one object as a list of one (recorded): its declarations are
    the request's, so toolConfig names them (no GM-13) and a bad name in them is found, at its own place."""
    request = gemini_request()
    request["tools"] = request["tools"][0]
    assert check.check_request(request, "gemini") == []
    request["tools"]["functionDeclarations"][0]["name"] = "get weather"
    assert [(v.rule, v.pointer, v.severity.value) for v in check.check_request(request, "gemini")] == [
        ("GM-02", "/tools/functionDeclarations/0/name", "error")]


def test_a_tools_string_is_one_finding_in_every_dialect():
    requests = {"anthropic": anthropic_request(), "gemini": gemini_request(), "openai-chat": chat_request(),
                "openai-responses": responses_request()}
    found = {}
    for dialect, request in requests.items():
        request["tools"] = "get_weather"
        found[dialect] = [(v.rule, v.pointer, v.severity.value) for v in check.check_request(request, dialect)]
    assert found == {"anthropic": [("AN-14", "/tools", "error")], "gemini": [("GM-20", "/tools", "error")],
                     "openai-chat": [("OC-01", "/tools", "error")], "openai-responses": [("OR-01", "/tools", "error")]}


# The history of each OpenAI-family request, and an item of it.
_HISTORY = re.compile(r"/(messages|input)(/\d+)?")
COMPATIBLE = ("openai-compatible", "mistral", "openrouter")


@pytest.mark.parametrize("profile", COMPATIBLE)
@pytest.mark.parametrize("dialect", ["openai-chat", "openai-responses"])
def test_a_history_of_the_wrong_type_is_one_finding_under_compatible_profiles(dialect, profile):
    """The spec layer is off for compatible servers (they take their own variants of the rest), but
    each parses the history as a list of objects: the hand-written rules find a wrong type there, the
    same finding as at OpenAI's own endpoint."""
    swaps = [(base, pointer, document) for base, pointer, document in _swaps(dialect, "request")
             if _HISTORY.fullmatch(pointer)]
    assert len(swaps) >= 4
    wrong = []
    for base, pointer, document in swaps:
        found = [(v.rule, v.pointer, v.severity.value) for v in check.check_request(document, dialect, profile)]
        at_openai = [(v.rule, v.pointer, v.severity.value) for v in check.check_request(document, dialect)]
        if found != at_openai or [place for _, place, _ in found] != [pointer]:
            wrong.append((base, pointer, found, at_openai))
    assert wrong == []


def test_a_history_of_the_wrong_type_says_what_it_holds():
    chat, responses = chat_request(), responses_request()
    chat["messages"] = {"role": "user", "content": "hi"}
    responses["input"][1] = "hello"
    [finding] = check.check_request(chat, "openai-chat", "mistral")
    assert (finding.rule, finding.pointer, finding.severity.value, finding.message) == (
        "OC-28", "/messages", "error",
        "messages is {\"role\": \"user\", \"content\": \"hi\"}, not a list of message objects")
    assert finding.why == ("Chat servers read messages as a list of message objects and refuse the request at a "
                           "value of another type: here {\"role\": \"user\", \"content\": \"hi\"} at 'messages'.")
    [finding] = check.check_request(responses, "openai-responses", "openrouter")
    assert (finding.rule, finding.pointer, finding.severity.value, finding.message) == (
        "OR-13", "/input/1", "error", "input item is \"hello\", not an object")


@pytest.mark.parametrize("dialect", ["anthropic", "gemini"])
def test_a_history_of_the_wrong_type_is_one_finding_at_a_compatible_host(dialect):
    """An Anthropic- or Gemini-compatible gateway (profiles.for_upstream: not the official host, so no
    spec layer) gets the same one finding for a history of the wrong type as the official endpoint."""
    key = {"anthropic": "messages", "gemini": "contents"}[dialect]
    gateway = profiles.for_upstream("http://gateway.internal/v1", Dialect(dialect))
    assert not gateway.published_schema
    wrong = []
    for base, pointer, document in _swaps(dialect, "request"):
        if re.fullmatch(rf"/{key}(/\d+)?", pointer):
            found = [(v.rule, v.pointer, v.severity.value) for v in check.check_request(document, dialect, gateway)]
            if found != [(v.rule, v.pointer, v.severity.value) for v in check.check_request(document, dialect)] \
                    or [place for _, place, _ in found] != [pointer]:
                wrong.append((base, pointer, found))
    assert wrong == []



def _documents(dialect: str, kind: str) -> Iterator[tuple[str, Any]]:
    """(name, document) of every document of the dialect's rule tables: each case's trip and near miss."""
    for table in _TABLES:
        for case in table.CASES:
            if case.dialect == dialect and case.kind == kind and case.profile is None:
                for mutation in (case.trip, case.near):
                    document = mutation(copy.deepcopy(case.base()))
                    yield case.name, document


def _scalars(node: Any, base: str = "") -> Iterator[tuple[str, Any]]:
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        if isinstance(child, (dict, list)):
            yield from _scalars(child, join(base, key))
        else:
            yield join(base, key), child


@pytest.mark.parametrize("kind", CHECKS)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_container_where_a_scalar_belongs_raises_nothing(dialect, kind):
    """An id, a name, a type or a format that is a list (unhashable, like an object) is a finding, never an
    exception: the rules look such values up in their tables and sets of ids, names and formats."""
    raised, seen = [], set()
    for name, document in _documents(dialect, kind):
        for pointer, value in _scalars(document):
            if (pointer, repr(value)) in seen:  # the tables' documents share most of their fields
                continue
            seen.add((pointer, repr(value)))
            try:
                CHECKS[kind](_swapped(document, pointer, ["x"]), dialect)
            except Exception as exc:
                raised.append((name, pointer, repr(exc)))
    assert raised == []
