"""What `check` found, written for whoever reads it: people (a line per finding), scripts (JSON),
GitHub workflow annotations, SARIF 2.1.0 for code scanning; and the rule reference (`rules`,
docs/rules.md). The CLI only chooses a format: every byte of each is decided here.

A finding's position is the line and column of its JSON pointer in the file as the user wrote it
(wire/locate.source), so annotations land where an editor shows the value, not in a reformatted copy;
in a recording, inside the body that holds it (load.FilePlaces)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any
from urllib.parse import quote

from .textsafe import shown
from .wire.dialect import DIALECT_NAMES
from .wire.rules.reference import SOURCES, RuleReference, all_rules, reference
from .wire.violations import Severity, Violation, count_by_severity

FORMATS = ("human", "json", "github", "sarif")

# Where the reference lives in the project: SARIF's helpUri and the annotations point readers there.
REFERENCE_PATH = "docs/rules.md"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_GITHUB_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


@dataclass(frozen=True, slots=True)
class Finding:
    """A violation in a checked file, with where it is in that file (1-based line and column)."""

    file: str
    line: int
    column: int
    dialect: str
    kind: str
    violation: Violation
    label: str | None = None  # how human output names the place, when not by the file (a recorded exchange)


@dataclass(frozen=True, slots=True)
class Unchecked:
    """A file that was given but not judged, and why (unreadable, empty, no dialect, nothing to judge)."""

    file: str
    reason: str


def summary(checked: int, unchecked: int, violations: Iterable[Violation]) -> str:
    """The human summary line. It counts only files the rules judged, and names the others."""
    errors, warnings, infos = count_by_severity(list(violations))
    if not checked:
        return f"nothing checked: {unchecked} file{'s' if unchecked != 1 else ''} could not be checked"
    files = f"{checked} file{'s' if checked != 1 else ''} checked"
    if unchecked:
        files += f", {unchecked} not checked"
    return f"{files}: {errors} error(s), {warnings} warning(s), {infos} info"


def human(findings: Iterable[Finding], explain: bool = False) -> Iterator[str]:
    """`file:pointer: severity RULE message`; with `explain`, the finding's why and fix and the rule's
    title and evidence under it. Each line shown safe: the file name, the pointer (built from the
    document's keys) and the message (which quotes its values) are anyone's text."""
    for finding in findings:
        violation = finding.violation
        yield shown(f"{finding.label or finding.file}:{violation.pointer}: {finding_line(violation)}")
        if explain:
            yield from explanation(violation)


def finding_line(violation: Violation) -> str:
    """`severity RULE (effect) message`: what the provider does with it beside how bad it is."""
    return f"{violation.severity.value} {violation.rule} ({violation.effect.value}) {violation.message}"


def explanation(violation: Violation) -> Iterator[str]:
    yield shown(f"    why: {violation.why}")
    yield shown(f"    fix: {violation.hint}")
    entry = reference(violation.rule)
    if entry is not None:
        yield f"    rule: {entry.title} ({', '.join(entry.dialects)}); toolwire-inspect rules {entry.id}"
        yield f"    evidence: {'; '.join(entry.evidence)}"


def records(findings: Iterable[Finding]) -> list[dict[str, Any]]:
    """`--json`: one object per finding, the violation's fields plus where it is."""
    return [{**finding.violation.to_dict(), "file": finding.file, "line": finding.line, "column": finding.column,
             "dialect": finding.dialect, "kind": finding.kind} for finding in findings]


def github(findings: Iterable[Finding], unchecked: Iterable[Unchecked] = ()) -> Iterator[str]:
    """GitHub Actions workflow commands: `::error file=F,line=L,col=C,title=RULE title::message`, one
    per finding (warning and notice for the lesser severities), and an error per file not checked."""
    for finding in findings:
        violation = finding.violation
        entry = reference(violation.rule)
        title = f"{violation.rule} {entry.title}" if entry is not None else violation.rule
        properties = {"file": finding.file, "line": str(finding.line), "col": str(finding.column), "title": title}
        yield _workflow_command(_GITHUB_COMMANDS[violation.severity], properties,
                                f"{violation.pointer}: {violation.message}")
    for item in unchecked:
        yield _workflow_command("error", {"file": item.file, "title": "not checked"}, item.reason)


def _workflow_command(command: str, properties: dict[str, str], message: str) -> str:
    # Escaping as GitHub's @actions/core does: the message loses no line break, a property value
    # cannot end its property early; then what a terminal would act on is shown (the log is a terminal).
    def data(text: str) -> str:
        return shown(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))

    def value(text: str) -> str:
        return data(text).replace(":", "%3A").replace(",", "%2C")

    return f"::{command} {','.join(f'{key}={value(text)}' for key, text in properties.items())}::{data(message)}"


def sarif(findings: Iterable[Finding], unchecked: Iterable[Unchecked] = ()) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one run: the whole catalogue as the driver's rules, each finding as a result
    at its line and column, and each file not checked as a tool notification (the run then did not
    succeed)."""
    rules = all_rules()
    index = {entry.id: position for position, entry in enumerate(rules)}
    results = [_sarif_result(finding, index) for finding in findings]
    notifications = [{"level": "error", "message": {"text": item.reason},
                      "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(item.file)}}}]}
                     for item in unchecked]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "toolwire-inspect", "version": _version(),
                                "rules": [_sarif_rule(entry) for entry in rules]}},
            "invocations": [{"executionSuccessful": not notifications, "toolExecutionNotifications": notifications}],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def _sarif_rule(entry: RuleReference) -> dict[str, Any]:
    return {
        "id": entry.id,
        "shortDescription": {"text": entry.title},
        "fullDescription": {"text": entry.why},
        "helpUri": f"{REFERENCE_PATH}#{entry.anchor}",
        "help": {"text": f"{entry.fix}\nEvidence: {'; '.join(entry.evidence)}", "markdown": _markdown_help(entry)},
        "defaultConfiguration": {"level": _SARIF_LEVELS[entry.severity]},
        "properties": {"dialects": list(entry.dialects), "evidence": list(entry.evidence)},
    }


def _sarif_result(finding: Finding, index: dict[str, int]) -> dict[str, Any]:
    violation = finding.violation
    result: dict[str, Any] = {
        "ruleId": violation.rule,
        "level": _SARIF_LEVELS[violation.severity],
        "message": {"text": f"{violation.message}. Why: {violation.why} Fix: {violation.hint}"},
        "locations": [{
            "physicalLocation": {"artifactLocation": {"uri": _uri(finding.file)},
                                 "region": {"startLine": finding.line, "startColumn": finding.column}},
            "logicalLocations": [{"fullyQualifiedName": violation.pointer or "/", "kind": "element"}],
        }],
        "properties": {"pointer": violation.pointer, "dialect": finding.dialect, "kind": finding.kind},
    }
    if violation.rule in index:
        result["ruleIndex"] = index[violation.rule]
    return result


def _uri(file: str) -> str:
    """A relative URI reference for a file name as given (SARIF wants `/` and percent-encoding)."""
    return quote(file.replace("\\", "/")) if file != "-" else "stdin"


def _version() -> str:
    try:
        return version("toolwire-inspect")
    except PackageNotFoundError:
        return "0"


def _markdown_help(entry: RuleReference) -> str:
    return "\n".join([f"**Fix:** {entry.fix}", "", "**Evidence:**", *(f"- {_link(item)}" for item in entry.evidence)])


def _link(item: str) -> str:
    """An evidence item in Markdown: a bare URL becomes a link."""
    return f"<{item}>" if item.startswith(("http://", "https://")) and " " not in item else item


def rule_lines(entry: RuleReference) -> Iterator[str]:
    """`rules ID`: one rule, every field of the reference."""
    yield f"{entry.id}  {entry.title}"
    yield f"severity: {entry.severity.value}"
    yield f"dialects: {', '.join(entry.dialects)}"
    yield f"why: {entry.why}"
    yield f"fix: {entry.fix}"
    yield "evidence:"
    yield from (f"  - {item}" for item in entry.evidence)
    keys = [key for key in SOURCES if f"[{key}]" in " ".join(entry.evidence)]
    if keys:
        yield "sources:"
        yield from (f"  [{key}] {SOURCES[key]}" for key in keys)


def rule_table(entries: Iterable[RuleReference]) -> Iterator[str]:
    """`rules`: one line per rule."""
    for entry in entries:
        dialects = "all" if len(entry.dialects) == len(DIALECT_NAMES) else ",".join(entry.dialects)
        yield f"{entry.id:<7} {entry.severity.value:<8} {dialects:<29} {entry.title}"


def rules_markdown() -> str:
    """docs/rules.md: the whole reference, generated (`toolwire-inspect rules --markdown`)."""
    rules = all_rules()
    out = ["# Rule reference", "",
           "Generated from the rule catalogue by `toolwire-inspect rules --markdown > docs/rules.md`; do not edit",
           "by hand (a test keeps it up to date). `toolwire-inspect rules ID` prints one entry.", "",
           "Severity: **error** = the provider rejects the request (or the spec marks it invalid); **warning** =",
           "accepted, but information is lost, misrouted or silently changed; **info** = a fact or normalisation",
           "worth knowing. A finding may be more severe than its rule's default under a provider profile.", "",
           "| Id | Severity | Dialects | Title |", "|---|---|---|---|"]
    out += [f"| [{entry.id}](#{entry.anchor}) | {entry.severity.value} | {', '.join(entry.dialects)} | "
            f"{_cell(entry.title)} |" for entry in rules]
    for entry in rules:
        out += ["", f"## {entry.id}", "", f"**{entry.title}**", "",
                f"Severity: {entry.severity.value}. Dialects: {', '.join(entry.dialects)}.", "",
                f"Why: {entry.why}", "", f"Fix: {entry.fix}", "", "Evidence:", "",
                *(f"- {_link(item)}" for item in entry.evidence)]
    out += ["", "## Sources", "", "The keys in square brackets above:", ""]
    out += [f"- **[{key}]** {text}" for key, text in SOURCES.items()]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
