"""How right the checker is on traffic real providers accepted or rejected.

Reads the corpus `tests/bench/corpus.py` builds (recorded provider exchanges, outside the repository)
and runs the checker the way the recorder does: dialect from the request path, profile from the
upstream URL (its host, and the API version in its path), the model from the body or Gemini's path. Prints figures, asserts nothing:
- exchanges per dialect and provider;
- accepted requests (2xx) with >= 1 error and with >= 1 warning, by rule, one example each;
- accepted responses and streams with findings, by rule;
- rejected requests (4xx other than 401/403/404/429, about the request itself) flagged or not, with
  the provider's message for each one not flagged.
Goals (issues 8 and 18): no error on an accepted request that the provider's behaviour does not
justify, warnings on <= 3 % of them, >= 85 % of the shape/value rejections flagged.

Several corpora are reported one after the other, then side by side, per source repository: the
spread between corpora of different sources is what says whether the rules generalise. The
default corpora: the one corpus.py builds (pydantic-ai and the other sources of issue 8, outside the
repository) and tests/data/real_traffic/corpus.jsonl, cases written for issue 18 after exchanges
recorded by other projects (each line names the cassette it follows).

Run: .venv/bin/python tests/bench/real_traffic.py [--corpus DIR/corpus.jsonl ...]"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from inspector.wire import check, profiles
from inspector.wire.dialect import Dialect, from_path, is_stream_path
from inspector.wire.summary import request_facts
from inspector.wire.violations import Severity, Violation

DEFAULT_CORPUS = Path.home() / ".cache" / "toolwire-inspect" / "corpus" / "corpus.jsonl"
WRITTEN_CORPUS = Path(__file__).resolve().parents[1] / "data" / "real_traffic" / "corpus.jsonl"

# Rejections that say nothing about the request's own shape or values, by why, matched on the
# provider's message; each is listed by the report, so the set-aside stays visible.
_SET_ASIDE = [
    # authentication, a missing model or file, quota, the provider's own failure, content behind a
    # URL or inside a file that the checker cannot read
    ("not about the request", re.compile(
        r"credit balance|quota|billing|rate limit|api key|permission|not found|does not exist|"
        r"model identifier is invalid|"
        r"model_not_found|overloaded|internal error|try again later|unsupported_file|file type you uploaded|"
        r"could not (be )?download|failed to download|unable to download|cannot fetch content|"
        r"url_not_accessible|error while downloading|invalid image|unsupported image|could not process image|"
        r"timed? ?out|"
        r"organization must be verified|deprecated|decommissioned|no longer (available|supported)",
        re.IGNORECASE)),
    # valid for other models of the same API: which model supports what is not a contract rule
    # (audio parts are refused with "text or image_url" by models without audio input), except where
    # the catalogue reads the model from the path and knows (_BY_MODEL)
    ("a model capability", re.compile(
        r"with this model|this model does(n't| not) support|not supported (by|for) (this|the) model|"
        r"not supported with the '[^']+' model|"
        r"content blocks are expected to be either text or image_url", re.IGNORECASE)),
    # Groq validates the call the model generated and answers 400 when the model got it wrong
    ("the model's own output", re.compile(r"tool call validation failed|model did not call a tool",
                                          re.IGNORECASE)),
    # an error body a test wrote into its cassette by hand (ruby-openai's "Test error", type test_error)
    ("written by the test, not the provider", re.compile(r"^Test error$")),
    # the request's size in tokens, which only the model's tokenizer counts
    ("a size in tokens", re.compile(r"prompt is too long|prompt too long|maximum context length|context window|"
                                    r"input token count|total length of all messages is too long|"
                                    r"input tokens exceeded", re.IGNORECASE)),
]
_IGNORED_STATUS = {401, 403, 404, 429}
# Model capabilities the rules judge from the model in the path, so counted as rejections of the request:
# Bedrock Converse's Claude models refuse the video blocks and the images from s3Location that Nova
# models take (BR-09, recorded in pydantic-ai's test_multimodal_tool_return_matrix cassettes).
_BY_MODEL = {Dialect.BEDROCK: re.compile(r"doesn't support the (video content block|s3Uri field)")}


@dataclass
class Tally:
    total: int = 0
    flagged: int = 0
    by_rule: Counter = field(default_factory=Counter)
    example: dict[str, tuple[dict, Violation]] = field(default_factory=dict)

    def add(self, provenance: dict, violations: list[Violation]) -> None:
        self.total += 1
        if not violations:
            return
        self.flagged += 1
        for rule in {v.rule for v in violations}:
            self.by_rule[rule] += 1
            self.example.setdefault(rule, (provenance, next(v for v in violations if v.rule == rule)))

    def print(self, title: str) -> None:
        share = 100 * self.flagged / self.total if self.total else 0.0
        print(f"  {title}: {self.flagged} of {self.total} ({share:.1f} %)")
        for rule, count in self.by_rule.most_common():
            provenance, violation = self.example[rule]
            print(f"    {rule:8} {count:5}   e.g. {_where(provenance)} {violation.pointer or '/'}: {violation.message}")


def _where(provenance: dict) -> str:
    return f"{provenance['repo']}:{provenance['path']}#{provenance['index']}"


def _provider_message(response: Any, text: str | None) -> str:
    if isinstance(response, dict):
        error = response.get("error")
        if isinstance(error, dict):
            return str(error.get("message") or error)
        if isinstance(error, str):
            return error
        if isinstance(response.get("message"), str):
            return response["message"]
        if isinstance(response.get("detail"), (str, list)):
            return str(response["detail"])
    if isinstance(response, list) and response and isinstance(response[0], dict):
        return _provider_message(response[0], None)
    return (text or str(response))[:300]


def _severities(violations: list[Violation], severity: Severity) -> list[Violation]:
    return [v for v in violations if v.severity is severity]


@dataclass
class Source:
    """One source repository's figures, for the side-by-side table."""

    accepted: int = 0
    accepted_errors: int = 0
    accepted_warnings: int = 0
    rejected: int = 0
    flagged: int = 0


def run(corpus: Path) -> dict[str, Source]:
    per_provider: Counter = Counter()
    with_tools: Counter = Counter()
    skipped: Counter = Counter()
    accepted_errors, accepted_warnings = Tally(), Tally()
    response_errors, response_warnings = Tally(), Tally()
    rejected = Tally()
    set_aside: dict[str, list[tuple[dict, int, str]]] = defaultdict(list)
    unflagged: list[tuple[dict, int, str]] = []
    set_aside_accepted: list[tuple[dict, Violation]] = []
    per_dialect_accepted: dict[Dialect, Tally] = defaultdict(Tally)
    sources: dict[str, Source] = defaultdict(Source)

    with corpus.open("rb") as lines:
        for line in lines:
            exchange = orjson.loads(line)
            dialect = from_path(exchange["path"])
            if dialect is None:
                skipped["path of no dialect (media, embeddings, other APIs)"] += 1
                continue
            request, status, provenance = exchange["request"], exchange["status"], exchange["provenance"]
            if not isinstance(request, dict) and not (dialect is Dialect.MCP and isinstance(request, list)):
                skipped[f"{dialect.value}: request body absent or not JSON"] += 1
                continue
            host = exchange["host"]
            per_provider[(dialect.value, host)] += 1
            model, tools = request_facts(request, dialect, exchange["path"])
            with_tools[dialect.value] += tools > 0
            # The profile as the recorder picks it: from the upstream URL, its host and its path.
            profile = profiles.for_upstream(f"https://{host}{exchange['path']}", dialect)
            profile = profiles.with_model(profile, model)
            headers = [tuple(pair) for pair in exchange.get("headers", [])]
            profile = profiles.with_headers(profile, headers)
            found = check.check_request(request, dialect, profile)
            unknowable = _needs_unkept_header(exchange, headers, found)
            if unknowable:
                found = [violation for violation in found if violation not in unknowable]
                set_aside_accepted.extend((provenance, violation) for violation in unknowable)
            source = sources[provenance["repo"]]
            if status is not None and 200 <= status < 300:
                source.accepted += 1
                source.accepted_errors += bool(_severities(found, Severity.ERROR))
                source.accepted_warnings += bool(_severities(found, Severity.WARNING))
                accepted_errors.add(provenance, _severities(found, Severity.ERROR))
                accepted_warnings.add(provenance, _severities(found, Severity.WARNING))
                per_dialect_accepted[dialect].add(provenance, _severities(found, Severity.ERROR))
                _check_response(exchange, dialect, profile, response_errors, response_warnings)
            elif status is not None and 400 <= status < 500 and status not in _IGNORED_STATUS:
                message = _provider_message(exchange["response"], exchange["response_text"])
                why = next((why for why, pattern in _SET_ASIDE if pattern.search(message)), None)
                judged = dialect in _BY_MODEL and _BY_MODEL[dialect].search(message) is not None
                if why is not None and not judged:
                    set_aside[why].append((provenance, status, message))
                    continue
                errors = _severities(found, Severity.ERROR)
                source.rejected += 1
                source.flagged += bool(errors)
                rejected.add(provenance, errors)
                if not errors:
                    unflagged.append((provenance, status, message))
            else:
                skipped[f"status {status}"] += 1

    print(f"Corpus: {corpus}")
    print("Exchanges checked, per dialect and provider host:")
    for (dialect_name, host), count in sorted(per_provider.items()):
        print(f"  {dialect_name:17} {host:55} {count:5}")
    print(f"  total {sum(per_provider.values())}")
    for dialect_name, count in sorted(with_tools.items()):
        print(f"  {dialect_name:17} {count:5} declare tools")
    for reason, count in skipped.most_common():
        print(f"  not checked: {reason}: {count}")
    print("\nRequests the provider accepted (2xx):")
    accepted_errors.print("with >= 1 error")
    accepted_warnings.print("with >= 1 warning")
    for dialect, tally in sorted(per_dialect_accepted.items()):
        print(f"    {dialect.value:17} {tally.flagged} of {tally.total} with an error")
    if set_aside_accepted:
        print(f"  set aside, needs an anthropic-beta header the cassette may not have kept ({len(set_aside_accepted)}):")
        for provenance, violation in set_aside_accepted:
            print(f"    {violation.rule} {_where(provenance)} {violation.pointer}")
    print("\nResponses and streams of accepted requests:")
    response_errors.print("with >= 1 error")
    response_warnings.print("with >= 1 warning")
    print("\nRequests the provider rejected for the request itself (4xx but 401/403/404/429):")
    rejected.print("flagged with >= 1 error")
    for provenance, status, message in unflagged:
        print(f"    not flagged: {status} {_where(provenance)}: {message[:200]}")
    for why, rejections in set_aside.items():
        print(f"  set aside, {why} ({len(rejections)}):")
        for provenance, status, message in rejections:
            print(f"    {status} {_where(provenance)}: {message[:160]}")
    return dict(sources)


def _needs_unkept_header(exchange: dict, headers: list[tuple[str, ...]], found: list[Violation]) -> list[Violation]:
    """The findings that only a beta header would clear, on a request whose cassette cannot say
    whether it carried one: sent by the SDK's beta client (`?beta=true`: it sends anthropic-beta) from a
    cassette that filtered that header out, or from a cassette that kept no request header at all (R's
    vcr, ellmer). The corpus cannot tell, so neither can the figure."""
    unknown = "beta=true" in exchange["path"] or not exchange.get("headers_kept", True)
    if not unknown or any(name.lower() == "anthropic-beta" for name, _ in headers):
        return []
    return [violation for violation in found if "anthropic-beta" in violation.message + violation.hint]


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f} %" if whole else "    -  "


def print_side_by_side(results: dict[Path, dict[str, Source]]) -> None:
    print("\nSide by side, per source (accepted with an error / with a warning, rejections flagged):")
    print(f"  {'corpus':28} {'source':34} {'accepted':>8} {'error':>8} {'warning':>8} {'rejected':>8} {'flagged':>8}")
    for corpus, sources in results.items():
        total = Source()
        for name, source in sorted(sources.items()):
            print(f"  {corpus.parent.name + '/' + corpus.name:28.28} {name:34.34} {source.accepted:8} "
                  f"{_share(source.accepted_errors, source.accepted):>8} "
                  f"{_share(source.accepted_warnings, source.accepted):>8} {source.rejected:8} "
                  f"{_share(source.flagged, source.rejected):>8}")
            for key in vars(total):
                setattr(total, key, getattr(total, key) + getattr(source, key))
        print(f"  {'':28} {'all sources':34} {total.accepted:8} {_share(total.accepted_errors, total.accepted):>8} "
              f"{_share(total.accepted_warnings, total.accepted):>8} {total.rejected:8} "
              f"{_share(total.flagged, total.rejected):>8}")


def _check_response(exchange: dict, dialect: Dialect, profile: profiles.Profile,
                    errors: Tally, warnings: Tally) -> None:
    response, text = exchange["response"], exchange["response_text"]
    if text is not None:
        found = check.check_stream(text.encode(), dialect, profile)
    elif isinstance(response, list) and (dialect is Dialect.GEMINI or is_stream_path(exchange["path"])):
        found = check.check_stream(orjson.dumps(response), dialect, profile)
    elif isinstance(response, dict):
        found = check.check_response(response, dialect, profile)
    else:
        return
    errors.add(exchange["provenance"], _severities(found, Severity.ERROR))
    warnings.add(exchange["provenance"], _severities(found, Severity.WARNING))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, action="append",
                        help=f"a corpus.jsonl (repeatable; default: {DEFAULT_CORPUS} and {WRITTEN_CORPUS})")
    args = parser.parse_args(argv)
    corpora = args.corpus or [DEFAULT_CORPUS, WRITTEN_CORPUS]
    results = {}
    for corpus in corpora:
        if not corpus.exists():
            print(f"no corpus at {corpus}: build it with tests/bench/corpus.py (see its docstring)\n")
            continue
        results[corpus] = run(corpus)
        print()
    if not results:
        return 1
    print_side_by_side(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
