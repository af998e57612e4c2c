"""A dialect is one folder (issue 17): the package with Bedrock's folder deleted, its `Dialect` member
and its translation pairs removed (and nothing else edited) imports, derives every table keyed by
dialect from the homes left, holds each of them to the homes conformance checks, and translates and
checks exactly as the whole package does. The copy lives in a tmp directory and is read in a
subprocess with the copy first on sys.path; the whole package answers the same probe here."""

from __future__ import annotations

import importlib.util
import itertools
import os
import re
import shutil
import subprocess
import sys
from enum import Enum
from pathlib import Path
from typing import Any

import orjson

import inspector

ROOT = Path(__file__).parents[2]
CONFORMANCE = ROOT / "tests" / "wire" / "test_homes_conformance.py"
# The one conformance test that names Bedrock's variant (that some folder contributes one): the copy
# has none, so it is the one not run on either side.
NAMES_BEDROCK = "test_some_folder_contributes_a_variant"

# Every edit the removal makes outside Bedrock's folder: (file in the package, the text removed).
EDITS = (
    ("wire/dialect.py", '    BEDROCK = "bedrock"\n'),
    ("wire/translate/bridge.py",
     "    (Dialect.OPENAI_CHAT, Dialect.BEDROCK), (Dialect.BEDROCK, Dialect.OPENAI_CHAT),\n"
     "    (Dialect.OPENAI_RESPONSES, Dialect.BEDROCK), (Dialect.BEDROCK, Dialect.OPENAI_RESPONSES),\n"
     "    (Dialect.ANTHROPIC, Dialect.BEDROCK), (Dialect.BEDROCK, Dialect.ANTHROPIC),\n"
     "    (Dialect.GEMINI, Dialect.BEDROCK), (Dialect.BEDROCK, Dialect.GEMINI),\n"),
)

CHAT = {
    "model": "gpt-4.1",
    "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21 C"},
    ],
    "tools": [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather by city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
}
# An Anthropic request with a tool name the API refuses and a tool_use left unanswered.
ANTHROPIC = {
    "model": "claude-sonnet-4-6", "max_tokens": 256,
    "tools": [{"name": "get weather", "input_schema": {"type": "object"}}],
    "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get weather",
                                           "input": {"city": "Paris"}}]},
        {"role": "user", "content": "And in Oslo?"},
    ],
}
PATHS = ("/v1/messages", "/model/m/invoke", "/model/m/invoke-with-response-stream", "/model/m/converse",
         "/v1/chat/completions", "/v1beta/models/gemini-2.5-flash:streamGenerateContent")


def _label(value: Any) -> str:
    if isinstance(value, Enum):
        return str(value.value)
    profile = getattr(value, "profile", None)  # a Variant
    return profile.name if profile is not None else str(value)


def _conformance() -> list[str]:
    """Every case of tests/wire/test_homes_conformance.py (but the one naming Bedrock) run on the
    package imported, each expanded over its parametrize marks: the ids of those run, in order."""
    spec = importlib.util.spec_from_file_location("homes_conformance", CONFORMANCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ran = []
    for name, test in vars(module).items():
        if not name.startswith("test_") or name == NAMES_BEDROCK:
            continue
        grids: list[list[dict[str, Any]]] = []
        for mark in getattr(test, "pytestmark", []):
            if mark.name == "parametrize":
                names = [n.strip() for n in mark.args[0].split(",")] if isinstance(mark.args[0], str) else mark.args[0]
                grids.append([dict(zip(names, value if len(names) > 1 else (value,), strict=True))
                              for value in mark.args[1]])
        for combination in itertools.product(*grids):
            arguments = {key: value for part in combination for key, value in part.items()}
            test(**arguments)
            ran.append(f"{name}[{'-'.join(_label(v) for v in arguments.values())}]")
    return ran


def probe() -> dict[str, Any]:
    """What the package imported derives from its homes, its conformance run, and one translation
    and check round trip, as JSON values."""
    from inspector.clients import SETTINGS
    from inspector.proxy.connect import DEFAULT_INTERCEPTS
    from inspector.proxy.routes import DEFAULT_ROUTES
    from inspector.tui.format import DIALECT_SHORT
    from inspector.wire import profiles
    from inspector.wire.check import check_request
    from inspector.wire.dialect import from_path, is_stream_path
    from inspector.wire.dialects import auth_headers, homes
    from inspector.wire.naming import ID_RULES, NAME_RULES
    from inspector.wire.rules.catalogue import RULES
    from inspector.wire.rules.spec import SPECS
    from inspector.wire.streams import stream_types
    from inspector.wire.translate import PAIRS, output_errors, translate_document

    translated, losses = translate_document(CHAT, "openai-chat", "anthropic")
    return {
        "package": inspector.__file__,
        "tables": {
            "homes": [each.dialect.value for each in homes()],
            "profiles": {name: p.dialect.value for name, p in profiles.PROFILES.items()},
            "defaults": {d.value: name for d, name in profiles.DEFAULTS.items()},
            "provider_hosts": {d.value: host for d, host in profiles.PROVIDER_HOSTS.items()},
            "name_rules": sorted(d.value for d in NAME_RULES), "id_rules": sorted(d.value for d in ID_RULES),
            "specs": sorted(d.value for d in SPECS), "rules": list(RULES), "short": dict(DIALECT_SHORT),
            "settings": [s.name for s in SETTINGS], "routes": [(r.name, r.upstream) for r in DEFAULT_ROUTES],
            "intercepts": list(DEFAULT_INTERCEPTS), "stream_types": sorted(stream_types()),
            "auth_headers": sorted(auth_headers()), "pairs": [(s.value, t.value) for s, t in PAIRS],
            "paths": [(path, getattr(from_path(path), "value", None), is_stream_path(path)) for path in PATHS],
        },
        "conformance": _conformance(),
        "translated": translated,
        "losses": [(loss.source, loss.target, loss.kind, loss.why, loss.rule) for loss in losses],
        "translated_errors": [(v.rule, v.pointer) for v in output_errors(translated, "anthropic")],
        "checked": [(v.rule, v.pointer, v.severity.value, v.message) for v in check_request(ANTHROPIC, "anthropic")],
    }


def _without_bedrock(tmp_path: Path) -> Path:
    """A copy of the package without Bedrock: its folder deleted, and `EDITS` each made once."""
    copy = tmp_path / "copy"
    package = copy / "inspector"
    shutil.copytree(Path(inspector.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.rmtree(package / "wire" / "dialects" / "bedrock")
    for name, removed in EDITS:
        file = package / name
        text = file.read_text()
        assert text.count(removed) == 1, name
        file.write_text(text.replace(removed, ""))
    return copy


def test_the_package_without_bedrocks_folder_works_as_the_whole_one_does_without_bedrock(tmp_path):
    copy = _without_bedrock(tmp_path)
    # Nothing left names the member or loads the folder (prose that mentions Bedrock is not code).
    named = [str(file.relative_to(copy)) for file in sorted(copy.rglob("*.py"))
             if re.search(r"Dialect\.BEDROCK|dialects\.bedrock|from \.+bedrock\b|import bedrock\b", file.read_text())]
    assert named == []
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", "import orjson, tests.bedrock.test_one_folder as t; "
                           "print(orjson.dumps(t.probe()).decode())"],
                          cwd=copy, env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    without = orjson.loads(done.stdout)
    whole = orjson.loads(orjson.dumps(probe()))
    assert without["package"] == str(copy / "inspector" / "__init__.py")
    assert whole["package"] == inspector.__file__ != without["package"]

    # The tables are the whole package's, less exactly what Bedrock's folder contributed: its dialect,
    # its profile and the anthropic variant's, its rules, provider, route, intercept, settings, framing.
    tables, kept = whole["tables"], without["tables"]
    assert kept["homes"] == [d for d in tables["homes"] if d != "bedrock"] == [
        "openai-chat", "openai-responses", "anthropic", "gemini", "mcp"]
    assert set(tables["profiles"]) - set(kept["profiles"]) == {"bedrock", "bedrock-anthropic"}
    assert kept["profiles"] == {name: d for name, d in tables["profiles"].items()
                                if name not in ("bedrock", "bedrock-anthropic")}
    for key in ("defaults", "provider_hosts", "short"):
        assert kept[key] == {d: value for d, value in tables[key].items() if d != "bedrock"}, key
    for key in ("name_rules", "id_rules", "specs"):
        assert kept[key] == [d for d in tables[key] if d != "bedrock"], key
    assert kept["rules"] == [rule for rule in tables["rules"] if not rule.startswith("BR-")]
    assert kept["routes"] == [route for route in tables["routes"] if route[0] != "bedrock"]
    assert kept["intercepts"] == [host for host in tables["intercepts"] if host != "bedrock-runtime.*.amazonaws.com"]
    assert kept["settings"] == [name for name in tables["settings"]
                                if name not in ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "ANTHROPIC_BEDROCK_BASE_URL")]
    assert kept["stream_types"] == ["text/event-stream"]
    assert tables["stream_types"] == ["application/vnd.amazon.eventstream", "text/event-stream"]
    assert set(tables["auth_headers"]) - set(kept["auth_headers"]) == {"x-amz-security-token"}
    assert kept["pairs"] == [pair for pair in tables["pairs"] if "bedrock" not in pair]
    assert kept["paths"] == [
        ["/v1/messages", "anthropic", False], ["/model/m/invoke", None, False],
        ["/model/m/invoke-with-response-stream", None, False], ["/model/m/converse", None, False],
        ["/v1/chat/completions", "openai-chat", False],
        ["/v1beta/models/gemini-2.5-flash:streamGenerateContent", "gemini", True]]
    assert tables["paths"][1:4] == [["/model/m/invoke", "anthropic", False],
                                    ["/model/m/invoke-with-response-stream", "anthropic", True],
                                    ["/model/m/converse", "bedrock", False]]

    # Every conformance case passed in the copy for each dialect left; the whole package's others are Bedrock's.
    assert without["conformance"] == [case for case in whole["conformance"] if "bedrock" not in case]
    assert [case for case in whole["conformance"] if "bedrock" in case] == [
        "test_a_home_has_every_part[bedrock]", "test_the_shared_tables_are_the_homes[bedrock]",
        "test_a_variant_is_read_as_part_of_the_dialect_it_serves[bedrock-bedrock-anthropic]",
        "test_its_rules_have_records_and_references[bedrock]", "test_its_paths_claim_the_requests_it_sends[False-bedrock]",
        "test_its_paths_claim_the_requests_it_sends[True-bedrock]",
        "test_its_framing_round_trips_its_mock_stream_and_describes_each_event[-bedrock]",
        "test_its_framing_round_trips_its_mock_stream_and_describes_each_event[alt=sse-bedrock]"]
    assert "test_a_home_has_every_part[anthropic]" in without["conformance"]

    # The translation and the checker answer exactly as they do in the whole package.
    for key in ("translated", "losses", "translated_errors", "checked"):
        assert without[key] == whole[key], key
    assert whole["translated"]["messages"][1]["content"] == [
        {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}}]
    assert whole["translated_errors"] == []
    assert [(rule, pointer) for rule, pointer, *_ in whole["checked"]] == [
        ("AN-02", "/tools/0/name"), ("AN-02", "/messages/1/content/0/name"), ("AN-07", "/messages/1/content/0/id")]
