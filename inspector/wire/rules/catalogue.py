"""Every rule the checker knows: default severity, why (the contract and the provider's answer), the
usual fix, and what the provider does (its effect) at each severity the rule is reported at. Each
dialect's rules are records in its folder (dialects/<name>/records.py, collected through its home);
the cross-dialect rules are here. docs/rules.md is generated from them; a finding may override why and hint when its case differs (a more specific
hint), and its severity when a profile makes it worse or milder, which picks the effect for it.

A why describes the rule's contract, never one instance of it: where it quotes the provider's error,
the value and place come from the finding ({{value}}, {{path}}, ... : `base.facts`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..dialects import Derived
from ..violations import Effect, Severity

# One letter each, so that the table below reads as a table; `I` is info, never a digit.
E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO  # noqa: E741
REJ, MAY, IGN, CHG, ACC, CLI = (Effect.REJECTS, Effect.MAY_REJECT, Effect.IGNORES, Effect.CHANGES, Effect.ACCEPTS,
                                Effect.BREAKS_CLIENT)


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: Severity
    why: str
    hint: str
    effect: Effect  # at the rule's own severity
    # At the other severities a finding of the rule may take (a milder profile, a variant of the
    # defect): what the provider does then, and why, where that differs from the rule's own.
    at: dict[Severity, Effect] = field(default_factory=dict)
    why_at: dict[Severity, str] = field(default_factory=dict)

    def effect_at(self, severity: Severity) -> Effect:
        return self.at.get(severity, self.effect)

    def why_for(self, severity: Severity) -> str:
        return self.why_at.get(severity, self.why)


# Whys shared by rules that report the same variant in several dialects (their records import them).
GENAI_KEYWORD = ("{{key}}: {{value}} is genai Schema, not JSON Schema; the provider accepts the schema and ignores "
                  "the keyword, so what it says (nullability, property order, an enum format) is lost to the model.")
EMPTY_REJECTED = "{{key}}: [] is rejected (\"[] is too short\"): the API needs at least one item."
EMPTY_IGNORED = "{{key}}: [] declares nothing; the API accepts it and ignores it."
NULL_READ_AS_ABSENT = "{{key}} is not nullable in the published schema; OpenAI reads null as absent."

_CROSS_DIALECT = [
    Rule("XL-01", E, "JSON-Schema consumers (OpenAI, Anthropic, MCP) validate tool schemas as JSON Schema with "
         "lower-case types, and reject the schema at '{{path}}' (it holds {{value}}).",
         "Convert: lower-case types, nullable → [\"x\",\"null\"], drop propertyOrdering.", REJ, {W: IGN},
         why_at={W: GENAI_KEYWORD}),
    Rule("XL-02", E, "Names outside ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ need an injective, reversible alias when they "
         "cross dialects.",
         "Alias as sanitised name + short sha256, kept in a map and reversed on calls and history.", REJ),
    Rule("XL-03", E, "Duplicate tool names make dispatch ambiguous; Anthropic, Gemini and compatible servers "
         "reject them (\"Tool names must be unique\").",
         "Keep one tool per name: dedupe servers by endpoint (host+path), or prefix names with a server id.", REJ),
    Rule("XL-04", E, "Call ids must be unique across the whole transcript; a repeated id pairs results with "
         "the wrong call.",
         "Give every call a distinct id (deterministic and injective when rewritten).", REJ),
    Rule("XL-05", W, "Legacy function messages carry no id; each pairs with the nearest preceding unanswered "
         "function_call of the same name, and an unpaired one is an orphan downstream.",
         "Give every function message a preceding function_call of the same name, or drop it.", MAY),
    Rule("XL-06", E, "Every dialect rejects a result with no pending call and a call with no result.",
         "Repair explicitly: synthesise a \"result unavailable\" output or drop the pair, and record it.", REJ),
    Rule("XL-07", W, "Tool results and text in one turn must be split (results first); dropping the text "
         "loses it.",
         "Keep the results first and the text in its own message.", CHG),
    Rule("XL-08", E, "Chat and Responses want exactly one JSON-text encoding of an object; Anthropic and "
         "Gemini want an object.",
         "Encode the arguments object exactly once; unwrap repeated encodings, wrap non-objects under a key.", REJ,
         {W: MAY}, why_at={W: "Responses takes any text as replayed arguments, but strict compatible upstreams reject "
                              "arguments that are not one JSON text of an object, and consumers that decode them "
                              "fail."}),
    Rule("XL-09", E, "Built-in tools must be mapped to the target's equivalent or dropped with a warning, never "
         "degraded into a function with an empty name.",
         "Map the built-in tool, or drop it and say so.", REJ),
    Rule("XL-10", I, "null for an optional field means absent, and the provider reads {{key}}: null so.",
         "Omit the field instead of sending null or [].", IGN, {E: REJ},
         why_at={E: EMPTY_REJECTED, W: EMPTY_IGNORED}),
    Rule("XL-11", E, "A named tool_choice must reference an existing tool in the target's shape.",
         "Name a declared (aliased) tool in the dialect's tool_choice shape.", REJ),
    Rule("XL-12", E, "Re-chunked streams must keep id/name on the first delta of every call, stable indices, "
         "no index -1 and no duplicate summary chunk (its arguments get counted twice).",
         "Emit each call's arguments once, as fragments keyed by a stable index.", CLI),
    Rule("XL-13", E, "strict:true on a schema that is not strict-compliant makes OpenAI answer 400.",
         "Transform the schema to the strict subset, or send strict:false.", REJ),
    Rule("XL-14", E, "Opaque state (thoughtSignature, reasoning items, signed and redacted thinking blocks) must "
         "round-trip unchanged and in order within its dialect: the provider verifies it and refuses a call turn "
         "whose state is missing or altered (\"Invalid signature in thinking block\", a function_call \"provided "
         "without its required 'reasoning' item\", Gemini 3's missing thought_signature).",
         "Replay the opaque items exactly as received, beside the calls they came with.", REJ),
    Rule("XL-15", W, "Tool-result content that the target cannot carry (images in a Chat tool message, "
         "isError) is lost.",
         "Move media to a follow-up user message and express errors in the result text.", CHG),
    # Rules that need the request and its response together (check.check_exchange).
    Rule("XL-16", E, "The response calls a tool the request did not declare: the client has no function to "
         "dispatch it to (agent frameworks raise \"tool not found\" or feed an error back), and a translator or "
         "alias map that lost a name is the usual cause.",
         "Restore the declared name (reverse the alias), or declare every tool the model may call.", CLI),
]

def _catalogue() -> dict[str, Rule]:
    from ..dialects import homes

    return {rule.id: rule for rule in [*(rule for each in homes() for rule in each.records), *_CROSS_DIALECT]}


# Each dialect's rules, from its home (dialects/<name>/records.py), in `Dialect` order, then the
# cross-dialect rules above.
RULES: Mapping[str, Rule] = Derived(_catalogue)
