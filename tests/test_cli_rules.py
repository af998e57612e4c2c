"""The rule reference shipped with the project: `rules [ID]`, `check --explain`, docs/rules.md."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from inspector.cli import main
from inspector.report import rules_markdown
from inspector.wire.dialect import DIALECT_NAMES
from inspector.wire.rules.catalogue import RULES
from inspector.wire.rules.reference import SOURCES, all_rules, dialects

from tests.wire.test_near_misses import CASES

ROOT = Path(__file__).resolve().parent.parent


def test_every_catalogue_rule_has_a_title_evidence_and_known_source_keys():
    entries = all_rules()
    assert [entry.id for entry in entries] == list(RULES)
    assert [entry.id for entry in entries if not entry.title or not entry.evidence] == []
    keys = {key for entry in entries for item in entry.evidence for key in re.findall(r"\[([A-Z][A-Z-]+)\]", item)}
    assert sorted(keys - set(SOURCES)) == []


def test_a_rule_is_listed_for_every_dialect_a_trip_case_finds_it_in():
    misplaced = sorted({(case.rule, case.dialect) for case in CASES if case.dialect not in dialects(case.rule)} |
                       {(rule, case.dialect) for case in CASES for rule, _, _ in case.also
                        if case.dialect not in dialects(rule)})
    assert misplaced == []
    assert dialects("GM-08") == ("gemini",)
    assert dialects("XL-06") == tuple(DIALECT_NAMES)


def test_rules_lists_every_rule_on_one_line(capsys):
    assert main(["rules"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(RULES)
    assert lines[4] == "OC-05   error    openai-chat                   parameters is a JSON Schema object with lower-case types"
    assert lines[list(RULES).index("XL-06")] == "XL-06   error    all                           No orphan result and no dangling call"


def test_rules_id_prints_the_whole_entry_with_its_sources(capsys):
    assert main(["rules", "oc-05"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "OC-05  parameters is a JSON Schema object with lower-case types",
        "severity: error",
        "dialects: openai-chat",
        # The catalogue's why quotes the error with each finding's value and place; the reference names them.
        "why: parameters must be a JSON Schema object with lower-case types and a properties map at its root; OpenAI "
        "validates it and answers 400 naming the value (<value> at '<path>' \"is not valid under any of the given "
        "schemas\"; a bare object: \"object schema missing properties\").",
        f"fix: {RULES['OC-05'].hint}",
        "evidence:",
        "  - [S-OAI] `FunctionParameters` (L40649)",
        "  - https://github.com/google/adk-python/issues/1389",
        "sources:",
        f"  [S-OAI] {SOURCES['S-OAI']}",
    ]


def test_rules_refuses_an_unknown_id_and_json_has_every_field(capsys):
    assert main(["rules", "OC-05", "ZZ-1", "xl-99"]) == 2
    assert capsys.readouterr().err == "toolwire-inspect: no rule ZZ-1, xl-99; `toolwire-inspect rules` lists them\n"
    assert main(["rules", "--json", "AN-03"]) == 0
    assert json.loads(capsys.readouterr().out) == [{
        "id": "AN-03", "title": "Tool names are unique", "severity": "error", "dialects": ["anthropic"],
        "why": RULES["AN-03"].why, "fix": RULES["AN-03"].hint,
        "evidence": ["https://github.com/cloudwego/eino/issues/632",
                     "https://github.com/anthropics/claude-code/issues/10687"]}]


def test_check_explain_adds_the_rule_and_its_evidence(tmp_path, capsys):
    path = tmp_path / "req.json"
    path.write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", '
                    '"function": {"name": "f", "parameters": {"type": "OBJECT"}}}]}')
    assert main(["check", "--explain", str(path)]) == 1
    assert capsys.readouterr().out.splitlines()[1:5] == [
        "    why: parameters must be a JSON Schema object with lower-case types and a properties map at its root; "
        "OpenAI validates it and answers 400 naming the value ('OBJECT' at 'tools[0].function.parameters.type' \"is "
        "not valid under any of the given schemas\"; a bare object: \"object schema missing properties\").",
        f"    fix: {RULES['OC-05'].hint}",
        "    rule: parameters is a JSON Schema object with lower-case types (openai-chat); toolwire-inspect rules OC-05",
        "    evidence: [S-OAI] `FunctionParameters` (L40649); https://github.com/google/adk-python/issues/1389",
    ]


def test_docs_rules_md_is_what_the_catalogue_generates():
    # Regenerate with: toolwire-inspect rules --markdown > docs/rules.md
    assert (ROOT / "docs" / "rules.md").read_text() == rules_markdown()


def test_the_project_points_at_no_file_outside_it():
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    outside = re.compile(r"\.\./shared|shared/contracts|contracts\.md|/work/")
    found = []
    for name in filter(None, tracked.decode().split("\0")):
        path = ROOT / name
        if path.suffix in (".svg", ".json", ".sqlite3") or not path.is_file() or path == Path(__file__):
            continue  # pictures, data, and this test's own patterns
        text = path.read_text(errors="replace")
        found += [f"{name}: {match.group()}" for match in outside.finditer(text)]
    assert found == []


def test_a_reader_that_goes_away_ends_the_command_quietly():
    # `toolwire-inspect rules | head -1`: the pipe closes under the command; no traceback, exit 0.
    proc = subprocess.Popen([sys.executable, "-m", "inspector", "rules"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()
    assert (proc.wait(60), proc.stderr.read()) == (0, b"")
    proc.stderr.close()
