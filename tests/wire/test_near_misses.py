"""Every rule the checker reports has a trip case and a real near miss: a valid payload, different
from the baseline (or judged under another profile), that comes as close as allowed to tripping it."""

from __future__ import annotations

from inspector.wire.check import UNDECIDABLE
from inspector.wire.rules.catalogue import RULES

from . import (test_rules_anthropic, test_rules_bedrock, test_rules_exchange, test_rules_gemini, test_rules_mcp, test_rules_openai_chat,
               test_rules_openai_responses, test_rules_sockets)
from .rule_cases import real_near_miss

CASES = [case for module in (test_rules_anthropic, test_rules_bedrock, test_rules_gemini, test_rules_mcp, test_rules_openai_chat,
                             test_rules_openai_responses, test_rules_exchange, test_rules_sockets) for case in module.CASES]

# Rules no single-payload check reports, so no case can trip them here.
NOT_REPORTED_BY_THE_CHECKER = {
    **{rule: UNDECIDABLE[rule] for rule in ("OR-09", "XL-02", "XL-07", "XL-15")},
    "GM-03": "lower-case genai types are accepted (a Google maintainer confirmed it): nothing to report",
    "XL-06": "a result with no call and a call with no result are reported per dialect (OC-18/19, OR-08, "
             "AN-07/08, GM-10); XL-06 names the translators' repair in the loss report",
}


def test_every_reported_rule_has_a_trip_case_and_a_real_near_miss():
    tripped = {case.rule for case in CASES}
    near = {case.rule for case in CASES if real_near_miss(case)}
    reported = set(RULES) - set(NOT_REPORTED_BY_THE_CHECKER)
    assert sorted(reported - tripped) == []
    assert sorted(reported - near) == []


def test_rules_said_to_be_unreported_are_indeed_never_tripped():
    assert sorted({case.rule for case in CASES} & set(NOT_REPORTED_BY_THE_CHECKER)) == []
