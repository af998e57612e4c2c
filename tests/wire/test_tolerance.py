"""The tolerance table (rules/tolerance.py): what the providers accept though their published
definitions refuse it is no error, and the value just past each tolerance still is. Each case is
shaped after the recorded exchange its table entry cites."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from inspector.wire import check
from inspector.wire.rules import tolerance
from inspector.wire.rules.spec import SPECS
from inspector.wire.translate import translate_document

from .wire_payloads import anthropic_request, chat_request, gemini_request

IMAGE = "data:image/png;base64,iVBORw0KGgo="


def _responses(*items: Any, **fields: Any) -> dict[str, Any]:
    return {"model": "gpt-5-nano", "input": list(items), **fields}


def _user(*parts: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(parts)}


def _found(payload: Any, dialect: str) -> list[tuple[str, str, str, str]]:
    return [(v.rule, v.severity.value, v.pointer, v.message) for v in check.check_request(payload, dialect)]


def _call(call_id: str = "call_1") -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "get_weather", "arguments": '{"city":"Oslo"}'}


def _output(call_id: str = "call_1") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": "sunny"}


_TOOLS = [{"type": "function", "name": "get_weather", "strict": False,
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]

# (name, payload the API accepted, the payload one step further that it refuses, dialect, that finding)
CASES = [
    ("input_image without detail (defaults to auto)",
     _responses(_user({"type": "input_text", "text": "What do you see?"}, {"type": "input_image", "image_url": IMAGE})),
     _responses(_user({"type": "input_image", "image_url": IMAGE, "detail": "ultra"})), "openai-responses",
     [("OR-13", "error", "/input/0/content/0/detail", "\"ultra\" is not one of [\"low\", \"high\", \"auto\", "
                                                      "\"original\", null]")]),
    ("reasoning item replayed without id (store: false, encrypted_content)",
     _responses(_user({"type": "input_text", "text": "hi"}),
                {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA"}, store=False),
     _responses(_user({"type": "input_text", "text": "hi"}), {"type": "reasoning", "encrypted_content": "gAAAA"},
                store=False), "openai-responses",
     [("OR-13", "error", "/input/1", "'summary' is a required property")]),
    ("assistant output message replayed without id and status",
     _responses(_user({"type": "input_text", "text": "hi"}),
                {"type": "message", "role": "assistant", "content": [
                    {"type": "output_text", "text": "hello", "annotations": []}]}),
     _responses(_user({"type": "input_text", "text": "hi"}),
                {"type": "message", "role": "assistant", "content": "hello", "phase": "last"}), "openai-responses",
     [("OR-13", "error", "/input/1/phase", "\"last\" is not one of [\"commentary\", \"final_answer\", null]")]),
    ("mcp_approval_response with approval_request_id (the document requires a request_id it never defines)",
     _responses({"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True}),
     _responses({"type": "mcp_approval_response", "approve": True}), "openai-responses",
     [("OR-13", "error", "/input/0", "'approval_request_id' is a required property")]),
    ("Codex's client_metadata, which the document does not list",
     _responses(_user({"type": "input_text", "text": "hi"}), client_metadata={"codex_version": "0.145.0"}),
     _responses(_user({"type": "input_text", "text": "hi"}), client_metadatum={"codex_version": "0.145.0"}),
     "openai-responses",
     [("OR-14", "error", "/client_metadatum", "'client_metadatum' is not a field of this request")]),
    ("stop: [] (no stop sequence)",
     {**chat_request(), "stop": []}, {**chat_request(), "stop": ["a", "b", "c", "d", "e"]}, "openai-chat",
     [("OC-28", "error", "/stop", "has 5 items; the schema takes at most 4")]),
    ("Anthropic top_p -1 (the legacy unset)",
     {**anthropic_request(), "top_p": -1}, {**anthropic_request(), "top_p": -0.5}, "anthropic",
     [("AN-17", "error", "/top_p", "top_p -0.5 is outside the accepted range (0 to 1)")]),
    ("Gemini enums by number (enum-encoding=int)",
     {**gemini_request(), "safetySettings": [{"category": 10, "threshold": 3}]},
     {**gemini_request(), "safetySettings": [{"category": "HARM_CATEGORY_NONE", "threshold": 3}]}, "gemini",
     [("GM-20", "error", "/safetySettings/0/category",
       "\"HARM_CATEGORY_NONE\" is not one of [\"HARM_CATEGORY_UNSPECIFIED\", \"HARM_CATEGORY_HARASSMENT\", "
       "\"HARM_CATEGORY_HATE_SPEECH\", \"HARM_CATEGORY_SEXUALLY_EXPLICIT\"…")]),
    ("Gemini Schema type by proto number",
     {"contents": [{"role": "user", "parts": [{"text": "15 * 7?"}]}], "tools": [{"functionDeclarations": [
         {"name": "calculate", "parameters": {"type": 6, "properties": {"expression": {"type": 1}}}}]}]},
     {"contents": [{"role": "user", "parts": [{"text": "15 * 7?"}]}], "tools": [{"functionDeclarations": [
         {"name": "calculate", "parameters": {"type": 6, "properties": {"expression": {"type": 9}}}}]}]}, "gemini",
     [("GM-04", "error", "/tools/0/functionDeclarations/0/parameters/properties/expression/type",
       "function 'calculate': type '9' is not a genai Type")]),
]


@pytest.mark.parametrize("accepted, refused, dialect, finding", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_what_the_api_accepts_is_no_error_and_one_step_further_is(accepted, refused, dialect, finding):
    assert _found(accepted, dialect) == []
    assert _found(refused, dialect) == finding


def test_a_functionresponse_without_response_and_a_function_role_turn_are_taken():
    payload = gemini_request()
    payload["contents"][2]["role"] = "function"
    del payload["contents"][2]["parts"][0]["functionResponse"]["response"]
    assert _found(payload, "gemini") == []
    payload["contents"][2]["parts"][0]["functionResponse"]["response"] = "sunny"
    assert _found(payload, "gemini") == [
        ("GM-09", "error", "/contents/2/parts/0/functionResponse/response",
         "functionResponse.response is 'sunny', not an object; wrap it as {\"output\": …}")]


def test_an_output_after_an_item_reference_answers_the_stored_call():
    # The Vercel AI SDK points at a stored function_call by its item id; the call_id is not in the request.
    referenced = _responses(_user({"type": "input_text", "text": "Weather?"}), {"type": "item_reference", "id": "fc_1"},
                            _output(), tools=_TOOLS)
    assert _found(referenced, "openai-responses") == []
    del referenced["input"][1]
    assert _found(referenced, "openai-responses") == [
        ("OR-08", "error", "/input/1/call_id", "no function_call with call_id 'call_1' precedes this output "
                                               "(\"No tool call found\")")]


def test_a_user_message_between_a_call_and_its_output_is_taken_an_assistant_turn_is_not():
    between = _responses(_user({"type": "input_text", "text": "Weather?"}), _call(),
                         _user({"type": "input_text", "text": "go on"}), _output(), tools=_TOOLS)
    assert _found(between, "openai-responses") == []
    between["input"][2] = {"role": "assistant", "content": "Let me check."}
    assert _found(between, "openai-responses") == [
        ("OR-08", "error", "/input/3/call_id", "output for 'call_1' comes after other message items; it must "
                                               "follow its call")]


def test_a_stored_prompt_is_judged_and_a_request_with_nothing_to_answer_is_a_finding():
    prompt = {"model": "gpt-5", "prompt": {"id": "pmpt_1", "version": "2", "variables": {"city": "Oslo"}}}
    judged = check.check_document(prompt, "openai-responses", "request")
    assert (judged.error, judged.violations) == (None, [])
    empty = check.check_document({"model": "gpt-5"}, "openai-responses", "request")
    assert empty.error is None
    assert [(v.rule, v.pointer, v.message, v.why) for v in empty.violations] == [
        ("OR-13", "/input", "the request has none of input, prompt, previous_response_id and conversation: there is "
                            "nothing to respond to (\"Missing required parameter: 'input'\")",
         "The schema marks none of input, prompt, previous_response_id and conversation required, but the API "
         "needs one of them to know the conversation, and answers 400 \"Missing required parameter: 'input'\".")]


def test_adaptive_thinking_may_not_think_on_a_turn_enabled_thinking_always_does():
    payload = anthropic_request()
    payload["thinking"] = {"type": "adaptive"}
    assert _found(payload, "anthropic") == []
    payload["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    payload["max_tokens"] = 2048
    assert _found(payload, "anthropic") == [
        ("XL-14", "error", "/messages/1/content/0", "with thinking enabled, the assistant message that called tools "
                                                    "must start with its thinking block (it was dropped)")]


def test_every_required_name_a_vendored_definition_does_not_define_is_in_the_table():
    """The class of OpenAI's request_id typo: a refresh that brings another one fails here, not on traffic."""
    typos = {(t.definition, t.name) for t in tolerance.TOLERANCES if t.kind == "typo"}
    undefined = set()
    for spec in SPECS.values():
        document = spec.document() if spec.document is not None else json.loads(
            resources.files("inspector.wire.specs").joinpath(spec.file).read_text())
        for name, definition in document["$defs"].items():
            if isinstance(definition, dict) and "properties" in definition:
                undefined |= {(name, field) for field in definition.get("required", ())
                              if field not in definition["properties"]}
    assert undefined == typos


def test_every_entry_names_its_evidence_and_changes_a_definition_the_document_has():
    for entry in tolerance.TOLERANCES:
        assert entry.evidence, entry
        if entry.definition is not None and entry.kind != "default" or entry.dialects[0].value != "gemini":
            # A definition read from a library (Bedrock's, botocore's model) has no vendored file.
            files = {SPECS[d].file for d in entry.dialects if d in SPECS and SPECS[d].file}
            for spec in files:
                document = json.loads(resources.files("inspector.wire.specs").joinpath(spec).read_text())
                if entry.definition is not None:
                    assert entry.definition in document["$defs"], entry


def test_the_written_corpus_of_issue_18_is_judged_as_its_providers_answered(capsys):
    """tests/data/real_traffic/corpus.jsonl, the second corpus of tests/bench/real_traffic.py: no error on
    what the providers accepted, every rejection flagged."""
    bench = Path(__file__).resolve().parents[1] / "bench" / "real_traffic.py"
    spec = importlib.util.spec_from_file_location("real_traffic", bench)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("real_traffic", module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    sources = module.run(module.WRITTEN_CORPUS)
    capsys.readouterr()
    figures = {name: (s.accepted, s.accepted_errors, s.accepted_warnings, s.rejected, s.flagged)
               for name, s in sources.items()}
    assert figures == {"crmne/ruby_llm": (3, 0, 0, 2, 2), "tmc/langchaingo": (4, 0, 0, 1, 1)}


def test_check_judges_a_prompt_only_file_without_being_told_the_dialect(tmp_path):
    prompt, legacy = tmp_path / "prompt.json", tmp_path / "completion.json"
    prompt.write_text('{"model": "gpt-5", "prompt": {"id": "pmpt_1", "variables": {"city": "Oslo"}}}')
    legacy.write_text('{"model": "gpt-3.5-turbo-instruct", "prompt": "Say hi"}')  # /v1/completions: not Responses
    run = [sys.executable, "-m", "inspector", "check"]
    done = subprocess.run([*run, str(prompt)], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "1 file checked: 0 error(s), 0 warning(s), 0 info\n")
    done = subprocess.run([*run, str(legacy)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2


# opentelemetry-python-contrib's vertexai cassettes (test_function_call_choice.yaml): the Vertex SDK
# calls with enum-encoding=int and writes the OBJECT root as 6, which Vertex accepts.
_VERTEX_NUMBERED = {"contents": [{"role": "user", "parts": [{"text": "Weather in New Delhi?"}]}],
                    "tools": [{"functionDeclarations": [{"name": "get_current_weather", "parameters": {
                        "type": 6, "properties": {"location": {"type": 1}}}}]}]}


def test_a_vertex_parameters_root_written_as_its_proto_number_is_an_object():
    assert check.check_request(_VERTEX_NUMBERED, "gemini", "vertex") == []
    refused = json.loads(json.dumps(_VERTEX_NUMBERED))
    refused["tools"][0]["functionDeclarations"][0]["parameters"]["type"] = 1  # STRING
    assert [(v.rule, v.severity.value, v.pointer, v.message) for v in check.check_request(refused, "gemini", "vertex")
            if v.rule == "GM-06"] == [
        ("GM-06", "error", "/tools/0/functionDeclarations/0/parameters/type",
         "function 'get_current_weather': Vertex needs the parameters root to be OBJECT")]


def test_types_written_as_proto_numbers_translate_to_json_schema_types():
    payload, _ = translate_document(_VERTEX_NUMBERED, "gemini", "openai-chat")
    assert payload["tools"][0]["function"]["parameters"] == {
        "type": "object", "properties": {"location": {"type": "string"}}}
    assert check.check_request(payload, "openai-chat") == []
