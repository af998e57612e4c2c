"""The rule reference: each catalogue rule's title, the dialects it judges and the evidence behind it
(`toolwire-inspect rules`, `check --explain`, SARIF's rule list and docs/rules.md all read it here).

Severity, why and fix stay in the catalogue; this module adds what a reader of the reference needs
to find the rule and check its source. Evidence items are primary sources (the keys of `SOURCES`
with the schema or file they point into) and the issues or recordings that showed the behaviour."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..dialect import DIALECT_NAMES, Dialect
from ..dialects import Derived, homes
from ..violations import Severity
from .catalogue import RULES

# A rule id's prefix names its dialect (the prefix of the records in its home). An XL- (cross-dialect)
# rule is reported in the dialects below, where the dialect has no rule of its own for the defect
# (Chat's casing is OC-05, Anthropic's duplicate names AN-03…); one missing here belongs to
# translation and so to every dialect.
_PREFIXES: Mapping[str, Dialect] = Derived(lambda: {rule.id.rsplit("-", 1)[0]: each.dialect for each in homes()
                                                     for rule in each.records})
_CHAT, _RESPONSES = Dialect.OPENAI_CHAT.value, Dialect.OPENAI_RESPONSES.value
_CROSS_DIALECT: dict[str, tuple[str, ...]] = {
    "XL-01": (_RESPONSES, Dialect.ANTHROPIC.value, Dialect.GEMINI.value, Dialect.MCP.value),
    "XL-03": (_CHAT, _RESPONSES),
    "XL-04": (_CHAT, _RESPONSES),
    "XL-05": (_CHAT,),
    "XL-08": (_CHAT, _RESPONSES),
    "XL-09": (_CHAT, _RESPONSES),
    "XL-10": (_CHAT, _RESPONSES, Dialect.ANTHROPIC.value),
    "XL-11": (_RESPONSES,),
    "XL-12": (_CHAT,),
    "XL-13": (_RESPONSES,),
    "XL-14": (Dialect.ANTHROPIC.value, Dialect.GEMINI.value, _RESPONSES),
    "XL-16": (_CHAT, _RESPONSES, Dialect.ANTHROPIC.value, Dialect.GEMINI.value),
}

# A why quotes the provider's error with each finding's own value and place ({{value}}, {{path}}: see
# base.facts); the reference, about no finding, names them.
_TEMPLATE_FIELD = re.compile(r"\{\{(\w+)\}\}")

SOURCES: dict[str, str] = {
    'S-OAI': '`openai/openai-openapi` @ `f85dbe223d40` (2026-08-21), `openapi.yaml` (OpenAPI 3.1.0, info.version 2.3.0). Cited as `components.schemas.<Name>` + line in that file.',
    'S-OAI-PY-STRICT': '`openai/openai-python` `src/openai/lib/_pydantic.py` (`to_strict_json_schema`, `_ensure_strict_json_schema`)',
    'S-OAI-PY-DELTA': '`openai/openai-python` `src/openai/lib/streaming/_deltas.py` (`accumulate_delta`)',
    'D-OAI-SO': 'OpenAI Structured Outputs guide, "Supported schemas" — https://platform.openai.com/docs/guides/structured-outputs#supported-schemas ; function-calling guide strict-mode section https://platform.openai.com/docs/guides/function-calling#strict-mode',
    'S-ANT': '`anthropics/anthropic-sdk-python` @ `009b035305e0` (2026-08-08), `src/anthropic/types/*.py` (Stainless-generated "from our OpenAPI spec"; `.stats.yml` names the spec URL `storage.googleapis.com/stainless-sdk-openapi-specs/anthropic/anthropic-891ba7f9…yml`)',
    'D-ANT-HTC': 'https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls.md',
    'S-GEM': '`googleapis/python-genai` @ `66807187f212` (2026-08-21), `google/genai/types.py` (876 KB)',
    'D-VTX-FC': 'https://docs.cloud.google.com/vertex-ai/generative-ai/docs/model-reference/function-calling',
    'S-MCP': '`modelcontextprotocol/modelcontextprotocol` @ `b0f60ba5409d` (2026-08-22): `schema/2026-07-28/schema.json`, `schema/2025-11-25/schema.json`, `docs/specification/<rev>/server/tools.mdx`',
    'S-OAI-PY-RT': '`openai/openai-python` `src/openai/types/realtime/*.py` (Stainless-generated Realtime GA events: `realtime_function_tool.py`, `conversation_item_create_event.py`, `realtime_conversation_item_function_call_output.py`, `response_create_event.py`, `realtime_error_event.py`)',
    'D-OAI-RT': 'OpenAI Realtime API reference, client and server events — https://platform.openai.com/docs/api-reference/realtime ; Responses WebSocket mode — https://developers.openai.com/api/docs/guides/websocket-mode , https://developers.openai.com/api/reference/resources/responses/websocket-events',
    'D-GEM-LIVE': 'Gemini Live API reference — https://ai.google.dev/gemini-api/docs/live#bidigeneratecontenttoolcall (BidiGenerateContentToolCall, ToolResponse, ToolCallCancellation); google-genai `types.py` `LiveServerToolCall`, `LiveClientToolResponse`, `FunctionResponse`',
}

_REFERENCE: dict[str, tuple[str, tuple[str, ...]]] = {
    'XL-01': ('Schema types are cased for the target', (
        'OC-05, GM-03/04',
        'https://github.com/google/adk-python/issues/1389',
    )),
    'XL-02': ('Non-portable names get a reversible alias', (
        'OC-02, AN-02, GM-02, MCP-03',
        'https://github.com/BerriAI/litellm/issues/12372',
        'https://github.com/BerriAI/litellm/issues/15725',
        'https://github.com/defilantech/LLMKube/issues/1525',
        'https://github.com/xorbitsai/xagent/issues/1340',
        'https://github.com/mogenius/mogenius-operator/pull/840',
    )),
    'XL-03': ('No duplicate tool names after aggregation', (
        'AN-03, GM-14',
        'https://github.com/google/adk-js/issues/71',
        'https://github.com/router-for-me/CLIProxyAPI/issues/4788',
        'https://github.com/continuedev/continue/pull/5991',
        'https://github.com/google/adk-go/issues/1605 (an MCP tool shadowing built-in `google_search`)',
    )),
    'XL-04': ('Call ids are unique across the transcript', (
        'OC-16, OR-07, AN-05, GM-12',
        'https://github.com/langchain-ai/langchainjs/pull/10170',
        'https://github.com/cline/cline/pull/9768',
        'https://github.com/cloudwego/eino-ext/pull/652',
        'https://github.com/brainlid/langchain/pull/620',
        'https://github.com/router-for-me/CLIProxyAPI/issues/5149',
        'https://github.com/screenpipe/screenpipe/pull/3252',
        'https://github.com/HKUDS/nanobot/pull/4356',
    )),
    'XL-05': ('Legacy function messages pair by name and order', (
        'OC-20',
        'https://github.com/BerriAI/litellm/pull/3448',
        'https://github.com/BerriAI/litellm/issues/5344',
    )),
    'XL-06': ('No orphan result and no dangling call', (
        'https://github.com/BerriAI/litellm/issues/25669',
        'opencodex `tests/openai-chat-dangling-toolcalls.test.ts`',
    )),
    'XL-07': ('Tool results and text in one turn are split, not dropped', (
        'https://github.com/BerriAI/litellm/pull/17693',
        'https://github.com/decolua/9router/issues/2393',
        'https://github.com/TanStack/ai/pull/448',
        'https://github.com/miruamel/xuan/issues/191',
    )),
    'XL-08': ('Arguments are encoded once, as the dialect wants', (
        'OC-14/15, AN-05, GM-08',
        'https://github.com/BerriAI/litellm/issues/20480',
        'https://github.com/BerriAI/litellm/issues/27469',
        'https://github.com/BerriAI/litellm/issues/12554',
        'https://github.com/BerriAI/litellm/issues/20543',
        'https://github.com/google/adk-python/issues/665',
        'https://github.com/CopilotKit/CopilotKit/issues/3300',
    )),
    'XL-09': ('Built-in tools are mapped or dropped, never emptied', (
        'OC-01, OR-01',
        'https://github.com/BerriAI/litellm/issues/27276',
        'https://github.com/BerriAI/litellm/issues/16635',
        'https://github.com/BerriAI/litellm/issues/27454',
        'https://github.com/BerriAI/litellm/issues/35878',
        'https://github.com/BerriAI/litellm/issues/19384',
    )),
    'XL-10': ('null means absent; empty does not', (
        'OC-09, OC-12, OC-13',
        'https://github.com/BerriAI/litellm/pull/30540',
    )),
    'XL-11': ('A named tool_choice references an existing tool', (
        'OC-08, OR-04, AN-10/11, GM-13',
        'https://github.com/BerriAI/litellm/issues/24443',
    )),
    'XL-12': ('Re-chunked streams keep call ids, names and indices', (
        'https://github.com/BerriAI/litellm/issues/20480',
        'https://github.com/BerriAI/litellm/issues/39796',
        'https://github.com/BerriAI/litellm/issues/15884',
        'https://github.com/openai/codex/issues/7517',
    )),
    'XL-13': ('strict:true only on strict-compliant schemas', (
        '[S-OAI-PY-STRICT]',
        '[D-OAI-SO]',
    )),
    'XL-14': ('Opaque state round-trips unchanged', (
        'GM-08, OR-09',
        'https://github.com/BerriAI/litellm/issues/8961',
    )),
    'XL-15': ('Tool-result content the target cannot carry', (
        'OC-17, OR-07, AN-06, GM-09, MCP-05',
    )),
    'XL-16': ('The response calls only tools the request declared', (
        'OC-26, OR-12 (a call the client cannot dispatch)',
        '[S-OAI-PY-DELTA] (clients look the call up by name)',
    )),
}



# Each dialect's references, from its home (dialects/<name>/records.py), and the cross-dialect ones above.
_ALL_REFERENCES: Mapping[str, tuple[str, tuple[str, ...]]] = Derived(
    lambda: {**{key: entry for each in homes() for key, entry in each.references.items()}, **_REFERENCE})


@dataclass(frozen=True, slots=True)
class RuleReference:
    id: str
    title: str
    severity: Severity
    dialects: tuple[str, ...]
    why: str
    fix: str
    evidence: tuple[str, ...]

    @property
    def anchor(self) -> str:
        """The heading anchor of the rule in docs/rules.md (GitHub's: lower case)."""
        return self.id.lower()


def dialects(rule_id: str) -> tuple[str, ...]:
    prefix = rule_id.split("-", 1)[0]
    if prefix in _PREFIXES:
        return (_PREFIXES[prefix].value,)
    return _CROSS_DIALECT.get(rule_id, tuple(DIALECT_NAMES))


def reference(rule_id: str) -> RuleReference | None:
    """The reference entry of a catalogue rule; None for an id the catalogue does not know."""
    rule = RULES.get(rule_id)
    if rule is None:
        return None
    title, evidence = _ALL_REFERENCES[rule_id]
    return RuleReference(rule.id, title, rule.severity, dialects(rule.id), _TEMPLATE_FIELD.sub(r"<\1>", rule.why),
                         rule.hint, evidence)


def all_rules() -> list[RuleReference]:
    """Every catalogue rule, in catalogue order."""
    return [entry for entry in map(reference, RULES) if entry is not None]
