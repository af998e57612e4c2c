"""The rule reference: each catalogue rule's title, the dialects it judges and the evidence behind it
(`toolwire-inspect rules`, `check --explain`, SARIF's rule list and docs/rules.md all read it here).

Severity, why and fix stay in the catalogue; this module adds what a reader of the reference needs
to find the rule and check its source. Evidence items are primary sources (the keys of `SOURCES`
with the schema or file they point into) and the issues or recordings that showed the behaviour."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..dialect import DIALECT_NAMES, Dialect
from ..violations import Severity
from .catalogue import RULES

# A rule id's prefix names its dialect. An XL- (cross-dialect) rule is reported in the dialects below,
# where the dialect has no rule of its own for the defect (Chat's casing is OC-05, Anthropic's
# duplicate names AN-03…); one missing here belongs to translation and so to every dialect.
_PREFIXES = {"OC": Dialect.OPENAI_CHAT, "OR": Dialect.OPENAI_RESPONSES, "AN": Dialect.ANTHROPIC,
             "GM": Dialect.GEMINI, "MCP": Dialect.MCP}
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
    "XL-14": (Dialect.ANTHROPIC.value,),
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
}

_REFERENCE: dict[str, tuple[str, tuple[str, ...]]] = {
    'OC-01': ('Chat tools are of type function or custom', (
        '[S-OAI] `CreateChatCompletionRequest.tools` (L33105), `ChatCompletionTool` (L31921), `CustomToolChatCompletions`',
        'https://github.com/langchain-ai/langchain-litellm/issues/197',
        'https://github.com/BerriAI/litellm/issues/9914',
    )),
    'OC-02': ('Function names match ^[a-zA-Z0-9_-]+$, at most 64 characters', (
        '[S-OAI] `FunctionObject` (L40623), `ChatCompletionFunctions` (L30797)',
        'https://github.com/brekkylab/ailoy/pull/109',
        'https://github.com/mcp-use/mcp-use/issues/90',
        'https://github.com/danishjsheikh/swagger-mcp/issues/13',
    )),
    'OC-03': ('Function descriptions over 1024 characters (Azure)', (
        'https://github.com/nanbingxyz/5ire/issues/33',
    )),
    'OC-04': ('At most 128 tools', (
        'https://github.com/vishalmysore/Tools4AI/issues/16',
        'https://github.com/zed-industries/zed/issues/42393',
        '[S-OAI] L33105',
    )),
    'OC-05': ('parameters is a JSON Schema object with lower-case types', (
        '[S-OAI] `FunctionParameters` (L40649)',
        'https://github.com/google/adk-python/issues/1389',
    )),
    'OC-06': ('strict:true needs the Structured-Outputs schema subset', (
        '[S-OAI] `FunctionObject.strict`',
        '[D-OAI-SO]',
        '[S-OAI-PY-STRICT]',
        'https://github.com/trycompai/comp/pull/2792',
        'https://github.com/inngest/agent-kit/pull/66 (strict on a tool with no parameters: "\'additionalProperties\' '
        'is required to be supplied and to be false", param tools[1].function.parameters)',
        'https://github.com/spring-projects/spring-ai/issues/4776, https://github.com/everruns/everruns/pull/984 '
        '(an object without properties under strict: "object schema missing properties")',
    )),
    'OC-07': ('strict mode with parallel tool calls', (
        '[D-OAI-SO] (mirror: docs.apiyi.com function-calling page)',
    )),
    'OC-08': ('tool_choice has a Chat shape', (
        '[S-OAI] L31938, `ChatCompletionNamedToolChoice`, `ChatCompletionAllowedToolsChoice`',
        'https://github.com/BerriAI/litellm/issues/10069',
    )),
    'OC-09': ('Tool fields are not nullable; empty lists are rejected', (
        '[S-OAI] L33105',
        'https://github.com/dataelement/bisheng/issues/143',
    )),
    'OC-10': ('parallel_tool_calls is a boolean', (
        '[S-OAI] `ParallelToolCalls` (L45358)',
    )),
    'OC-11': ('tool_choice needs tools and names a declared function', (
        'https://github.com/BerriAI/litellm/issues/6228',
    )),
    'OC-12': ('Assistant tool-call messages may omit content', (
        '[S-OAI] `ChatCompletionRequestAssistantMessage` (L31216)',
        'https://github.com/BerriAI/litellm/issues/37711',
        'https://github.com/jekalmin/extended_openai_conversation/pull/456',
    )),
    'OC-13': ('tool_calls is not an empty array', (
        'https://github.com/home-assistant/core/pull/118577',
        'https://github.com/openai/openai-node/pull/1341',
    )),
    'OC-14': ('A tool call has id, type, function.name and string arguments', (
        '[S-OAI] `ChatCompletionMessageToolCall` (L31004), `ChatCompletionMessageCustomToolCall`',
        'https://github.com/aaif-goose/goose-mobile/pull/20',
    )),
    'OC-15': ('arguments is one JSON text of an object', (
        '[S-OAI] L31004 description',
        'https://github.com/JetBrains/koog/issues/2095',
        'https://github.com/livekit/agents/pull/5409',
        'https://github.com/google/adk-python/issues/665',
        'https://github.com/BerriAI/litellm/issues/20543',
    )),
    'OC-16': ('Tool-call ids of more than 40 characters', (
        'https://github.com/agno-agi/agno/issues/5382',
        'https://github.com/openclaw/openclaw/pull/875',
        'https://github.com/Portkey-AI/gateway/issues/1062',
        'https://github.com/vercel/ai/pull/17233',
    )),
    'OC-17': ('A tool message has tool_call_id and text content', (
        '[S-OAI] `ChatCompletionRequestToolMessage` (L31555), `ChatCompletionRequestToolMessageContentPart`',
        'https://github.com/openinterpreter/openinterpreter/issues/251',
    )),
    'OC-18': ('A tool message answers a call of the preceding assistant message', (
        'https://github.com/smarter-sh/smarter/issues/264',
        'https://github.com/miurla/morphic/issues/136',
        'https://github.com/FoundationAgents/OpenManus/issues/744',
    )),
    'OC-19': ('Every tool call is answered before the next message', (
        'https://github.com/microsoft/promptflow/pull/3130',
        'https://www.joseferben.com/posts/openai-tool-calls-must-be-followed-by-tool-messages',
        'https://github.com/QwenLM/qwen-code/issues/315',
    )),
    'OC-20': ('Legacy functions and function messages', (
        '[S-OAI] `ChatCompletionFunctions` (L30797), `ChatCompletionRequestFunctionMessage` (L31338), `ChatCompletionFunctionCallOption`, L33105',
    )),
    'OC-21': ('Streamed tool-call deltas', (
        '[S-OAI] L31040, `ChatCompletionStreamResponseDelta` (L31819)',
        '[S-OAI-PY-DELTA]',
        'https://github.com/BerriAI/litellm/issues/20480',
        'https://github.com/openai/codex/issues/7517',
        'https://github.com/BerriAI/litellm/issues/39796',
    )),
    'OC-22': ('finish_reason agrees with the tool calls', (
        '[S-OAI] `CreateChatCompletionStreamResponse` (L33665), `CreateChatCompletionResponse.choices`',
    )),
    'OC-23': ('The usage chunk has no choices', (
        '[S-OAI] L33665',
    )),
    'OC-24': ('A chat.completion has at least one choice', (
        '[S-OAI] `CreateChatCompletionResponse.choices`',
    )),
    'OC-25': ('An assistant message has content or tool calls', (
        '[S-OAI] `ChatCompletionRequestAssistantMessage` (L31216)',
    )),
    'OC-26': ('A tool call in a response has a name', (
        '[S-OAI] `ChatCompletionMessageToolCall` (L31004)',
    )),
    'OC-27': ('Legacy function message content is a string or null', (
        '[S-OAI] `ChatCompletionRequestFunctionMessage` (L31338)',
    )),
    'OC-28': ("The request matches OpenAI's published Chat schema", (
        '[S-OAI] `CreateChatCompletionRequest` (vendored in inspector/wire/specs)',
    )),
    'OC-29': ('No parameter Chat does not define (OpenAI hosts)', (
        '[S-OAI] `CreateChatCompletionRequest`; recorded: "Unknown parameter: \'quality\'." (images endpoint)',
        'https://platform.openai.com/docs/guides/pdf-files?api-mode=chat (a file part: file.filename + file.file_data, '
        'a base64 data URL; `data` is not a field of it)',
    )),
    'OC-30': ('Sampling and length values within their ranges (Chat)', (
        '[S-OAI] `CreateChatCompletionRequest.temperature`, `.top_p`, `.max_completion_tokens`',
        'recorded: "Invalid \'temperature\': decimal above maximum value. Expected a value <= 2"',
    )),
    'OC-31': ("json_object response format needs the word 'json' in the messages", (
        'https://platform.openai.com/docs/guides/structured-outputs#json-mode ("the API will throw an error if '
        'the string \'JSON\' does not appear somewhere in the context")',
        'https://github.com/ultimatejimmy/xray.koplugin/issues/33 (recorded 400, param "messages")',
    )),
    'OR-01': ('Responses tools have a known type and its required fields', (
        '[S-OAI] `Tool` (L63486) and each member schema',
    )),
    'OR-02': ('A Responses function tool is flat', (
        '[S-OAI] `FunctionTool` (L68569)',
    )),
    'OR-03': ('Responses tool names match ^[a-zA-Z0-9_-]+$', (
        'https://github.com/justrach/codegraff/issues/930',
        'https://github.com/openai/codex/pull/8694',
        'https://github.com/openai/openai-dotnet/issues/441',
    )),
    'OR-04': ('tool_choice has a Responses shape', (
        '[S-OAI] `ToolChoiceParam` (L63644), `ToolChoiceTypes` (L63659), `ToolChoiceFunction` (L63578)',
    )),
    'OR-05': ('Responses input items have a valid role and shape', (
        '[S-OAI] `EasyInputMessage` (L37999), `InputItem`, `Item`',
        'https://github.com/Chevey339/kelivo/pull/281',
    )),
    'OR-06': ('A function_call item has call_id, name and string arguments', (
        '[S-OAI] `FunctionToolCall` (L40661)',
        'https://github.com/continuedev/continue/pull/11785',
    )),
    'OR-07': ('A function_call_output has call_id and output', (
        '[S-OAI] `FunctionCallOutputItemParam` (L70109)',
    )),
    'OR-08': ('Calls and outputs pair by call_id', (
        'https://github.com/continuedev/continue/issues/10092',
        'https://github.com/james-6-23/codex2api/issues/414',
        'https://github.com/tjardoo/openai-client/pull/124',
        'https://github.com/leookun/cursor-byok/issues/307',
    )),
    'OR-09': ('A replayed function_call keeps its reasoning item', (
        'https://github.com/continuedev/continue/pull/11785',
    )),
    'OR-10': ('Streamed function-call argument events', (
        '[S-OAI] `ResponseFunctionCallArgumentsDeltaEvent` (L58562), `…DoneEvent` (L58608), `ResponseOutputItemAddedEvent` (L59370), `ResponseStreamEvent`',
    )),
    'OR-11': ('previous_response_id keeps history server-side', (
        '[S-OAI] `CreateResponse`, `ResponseProperties`',
    )),
    'OR-12': ('A function_call output item has a name', (
        '[S-OAI] `FunctionToolCall` (L40661)',
    )),
    'OR-13': ("The request matches OpenAI's published Responses schema", (
        '[S-OAI] `CreateResponse` (vendored in inspector/wire/specs)',
    )),
    'OR-14': ('No field the Responses API does not define', (
        '[S-OAI] `CreateResponse`',
    )),
    'OR-15': ('A completed response holds a message or a call', (
        '[S-OAI] `Response.output`, `Response.output_text`',
    )),
    'OR-16': ("An input_file's file_data is a document data URL", (
        '[S-OAI] `InputFileContent.file_data`',
        'recorded: "Invalid file data: … Expected a base64-encoded data URL with a valid file MIME type"',
    )),
    'OR-17': ('A replayed reasoning item is followed by its output item', (
        '[S-OAI] `ReasoningItem`',
        'recorded: "Item \'rs_…\' of type \'reasoning\' was provided without its required following item."',
    )),
    'OR-18': ("An assistant message replayed as input holds only the model's own parts", (
        '[S-OAI] `OutputMessage.content` (output_text, refusal)',
        'recorded: "Invalid value: \'input_text\'. Supported values are: \'output_text\' and \'refusal\'."',
    )),
    'OR-19': ('max_output_tokens at least 16, sampling values within their ranges (Responses)', (
        '[S-OAI] `CreateResponse.max_output_tokens`, `.temperature`, `.top_p`',
        'recorded: "Invalid \'max_output_tokens\': integer below minimum value. Expected a value >= 16"',
    )),
    'OR-20': ("json_object text format needs the word 'json' in the input", (
        'https://platform.openai.com/docs/guides/structured-outputs#json-mode (JSON mode, both APIs)',
        'https://github.com/ultimatejimmy/xray.koplugin/issues/33 (the Chat answer the same check gives)',
    )),
    'AN-01': ('A custom tool has name and an object input_schema', (
        '[S-ANT] `tool_param.py`',
        '[S-ANT] `beta/beta_mcp_toolset_param.py` (an `mcp_toolset` only with anthropic-beta: mcp-client-2025-11-20)',
    )),
    'AN-02': ('Tool names match ^[a-zA-Z0-9_-]{1,128}$', (
        'https://github.com/apify/tester-mcp-client/issues/11 (2025-03, {1,64})',
        'https://github.com/modelcontextprotocol/typescript-sdk/issues/413 (2025-04, {1,64})',
        'https://github.com/BerriAI/litellm/issues/12372 (2025-07, {1,128})',
        'https://github.com/modelcontextprotocol/modelcontextprotocol/issues/1345 (2025-08, {1,128})',
    )),
    'AN-03': ('Tool names are unique', (
        'https://github.com/cloudwego/eino/issues/632',
        'https://github.com/anthropics/claude-code/issues/10687',
    )),
    'AN-04': ('Server tools have a versioned type and fixed name', (
        '[S-ANT] `tool_union_param.py`, `web_search_tool_20250305_param.py`, `server_tool_use_block_param.py`',
        'https://github.com/anthropics/claude-code/issues/63626',
        'https://github.com/anthropics/claude-code/issues/89348 (a server_tool_use and its result split over two '
        'assistant messages: "Each `advisor_tool_result` block must have a corresponding `server_tool_use` block '
        'before it")',
    )),
    'AN-05': ('A tool_use has a valid id and an object input', (
        '[S-ANT] `tool_use_block_param.py`',
        'https://github.com/CopilotKit/CopilotKit/issues/3300',
        'https://github.com/BlockRunAI/ClawRouter/issues/17',
        'https://github.com/maximhq/bifrost/issues/5097',
        'https://github.com/trycua/cua/issues/524',
        'opencodex `src/adapters/tool-call-id.ts` (`MAX_TOOL_CALL_ID_LENGTH = 64`, "Anthropic rejects a tool_use.id longer than this")',
    )),
    'AN-06': ('A tool_result has tool_use_id and allowed content', (
        '[S-ANT] `tool_result_block_param.py`',
    )),
    'AN-07': ('Every tool_use is answered in the next user message', (
        'https://github.com/anthropics/claude-code/issues/8612',
        '[D-ANT-HTC]',
    )),
    'AN-08': ('A tool_result answers a tool_use of the previous message', (
        'https://github.com/anthropics/claude-code/issues/18947',
        'https://github.com/tghamm/Anthropic.SDK/issues/184',
    )),
    'AN-09': ('tool_result blocks come first in their message', (
        'https://github.com/apify/tester-mcp-client/issues/12',
        'https://github.com/BerriAI/litellm/issues/6422',
        '[D-ANT-HTC]',
    )),
    'AN-10': ('tool_choice has an Anthropic shape', (
        '[S-ANT] `tool_choice_*_param.py`',
    )),
    'AN-11': ('Extended thinking allows only auto or none tool_choice', (
        'https://github.com/mastra-ai/mastra/issues/7507',
        'https://github.com/langchain-ai/langchain/pull/35544',
    )),
    'AN-12': ('Messages have non-empty content', (
        'https://github.com/anthropics/claude-code/issues/6774',
    )),
    'AN-13': ('Streamed tool_use blocks and input_json_delta', (
        '[S-ANT] `raw_message_stream_event.py`, `raw_content_block_delta.py`, `input_json_delta.py`, `stop_reason.py`',
        'SDK accumulator `src/anthropic/lib/streaming/_messages.py` (~L469–482)',
        'https://github.com/crmne/ruby_llm/issues/710',
        'https://platform.claude.com/docs/en/agents-and-tools/tool-use/fine-grained-tool-streaming (with '
        'anthropic-beta: fine-grained-tool-streaming-2025-05-14 tool input streams unbuffered and unvalidated: '
        'invalid or partial JSON is documented, a warning then)',
    )),
    'AN-14': ("The request matches Anthropic's API definition", (
        '[S-ANT] `message_create_params.py` (vendored in inspector/wire/specs)',
        '[S-ANT] `beta/beta_container_params.py` (container: an id or {id, skills}); '
        'https://github.com/anthropics/claude-code/issues/14135 (a field the API does not take: "Extra inputs are '
        'not permitted")',
        'output_format, the structured-outputs beta\'s field, read as output_config.format: rules/tolerance.py '
        '("retired")',
        '[S-ANT] `document_block_param.py` / `image_block_param.py` (no file source) beside '
        '`beta/beta_file_document_source_param.py`; https://platform.claude.com/docs/en/build-with-claude/files '
        '(file_id sources need anthropic-beta: files-api-2025-04-14)',
    )),
    'AN-15': ('A finished message holds text or a call', (
        '[D-ANT-HTC] (an empty end_turn after tool results)',
        '[S-ANT] `message.py` (`content`, `stop_reason`)',
    )),
    'AN-16': ('max_tokens above thinking.budget_tokens', (
        '[S-ANT] `thinking_config_enabled_param.py` (`budget_tokens`), `message_create_params.py` (`max_tokens`)',
        'recorded: "max_tokens must be greater than thinking.budget_tokens"',
        'https://platform.claude.com/docs/en/build-with-claude/extended-thinking (with interleaved thinking, '
        'anthropic-beta: interleaved-thinking-2025-05-14, budget_tokens may exceed max_tokens)',
    )),
    'AN-17': ('Sampling, length and thinking-budget values within their ranges (Anthropic)', (
        '[S-ANT] `message_create_params.py` (`temperature`, `top_p`, `top_k`, `max_tokens`)',
        'recorded: "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"',
    )),
    'AN-18': ('At most four cache_control breakpoints (Anthropic)', (
        'https://platform.claude.com/docs/en/build-with-claude/prompt-caching (up to 4 cache breakpoints)',
        'reported: Wei-Shaw/sub2api#176, VicBilibily/GCMP#83 (a relay adding its own breakpoint), '
        'griffinmartin/opencode-claude-auth#121, tghamm/Anthropic.SDK#50: "A maximum of 4 blocks with '
        'cache_control may be provided. Found 5."',
    )),
    'GM-01': ('Gemini tools: one kind per entry, at most 128 declarations', (
        '[S-GEM] `Tool`',
        '[D-VTX-FC]',
    )),
    'GM-02': ("Function declaration names follow Gemini's rule", (
        '[S-GEM] `FunctionDeclaration.name`',
        'https://github.com/kaitranntt/ccs/issues/25',
        'https://github.com/router-for-me/CLIProxyAPI/issues/218',
        'https://github.com/BerriAI/litellm/issues/12543',
        '[D-VTX-FC]',
    )),
    'GM-03': ('parameters is a genai Schema', (
        '[S-GEM] `Type`, `Schema`',
        'https://github.com/googleapis/js-genai/issues/875',
        'https://github.com/router-for-me/CLIProxyAPI/issues/6038',
        'https://googleapis.github.io/js-genai/release_docs/enums/types.Type.html',
    )),
    'GM-04': ('parameters has no keyword the proto parser rejects', (
        'https://github.com/langchain-ai/langchainjs/issues/7758',
        'https://github.com/zed-industries/zed/issues/44875',
        'https://github.com/Helicone/helicone/pull/5585',
        'https://github.com/agno-agi/agno/issues/3298',
        'https://github.com/anomalyco/opencode/issues/11889',
        'https://github.com/decolua/9router/pull/380',
        'https://github.com/decolua/9router/issues/2489',
        'https://github.com/Laisky/one-api/issues/60, https://github.com/bigduu/Bodhi-AI/issues/52 '
        '(additionalProperties in parameters: "Unknown name \\"additionalProperties\\" … Cannot find field", gemini-2.0 to 3.5); '
        'https://github.com/google/adk-python/issues/1277 (the snake_case spelling, the same answer)',
    )),
    'GM-05': ('parametersJsonSchema and parameters are exclusive', (
        '[S-GEM] `FunctionDeclaration`',
    )),
    'GM-06': ('The parameters root is OBJECT (Vertex)', (
        'https://github.com/BerriAI/litellm/issues/18442',
        'https://github.com/googleapis/python-genai/issues/981',
    )),
    'GM-07': ('Content roles are user and model', (
        'https://github.com/BerriAI/litellm/pull/22046',
    )),
    'GM-08': ('A functionCall part has an object args and keeps its thoughtSignature', (
        '[S-GEM] `Part`, `FunctionCall`',
        'https://github.com/nanbingxyz/5ire/issues/405',
        'https://github.com/lbjlaq/Antigravity-Manager/issues/3202',
        'https://github.com/Wei-Shaw/claude-relay-service/pull/967',
    )),
    'GM-09': ('A functionResponse has name and an object response', (
        '[S-GEM] `FunctionResponse`',
        'https://github.com/danny-avila/LibreChat/issues/5525',
        'https://github.com/vercel/ai/pull/3589',
        'https://github.com/google-gemini/gemini-cli/issues/19436',
    )),
    'GM-10': ('Function-call turns are placed and answered in order', (
        'https://github.com/google-gemini/gemini-cli/issues/11814',
        'https://github.com/lbjlaq/Antigravity-Manager/pull/3396',
        'https://github.com/google-gemini/gemini-cli/issues/4217',
        'https://github.com/langchain-ai/langchain/issues/27799',
        'https://github.com/googleapis/python-genai/issues/81',
    )),
    'GM-11': ('Text beside functionResponse in one turn', (
        'https://github.com/TanStack/ai/pull/448',
        'https://github.com/decolua/9router/issues/2393',
        'https://github.com/mlflow/mlflow/issues/26099',
    )),
    'GM-12': ('FunctionCall ids are optional and kept when present', (
        '[S-GEM] `FunctionCall.id`, `FunctionResponse.id`',
        'https://github.com/apache/flink-agents/issues/947',
        'https://github.com/brainlid/langchain/pull/620',
    )),
    'GM-13': ('functionCallingConfig is valid for the declared tools', (
        '[S-GEM] `FunctionCallingConfig`, `FunctionCallingConfigMode`',
        'https://github.com/Chevey339/kelivo/issues/317',
    )),
    'GM-14': ('Function declarations are unique', (
        'https://github.com/google/adk-js/issues/71',
        'https://github.com/google/adk-js/pull/184',
    )),
    'GM-15': ('Streamed functionCall parts', (
        '[S-GEM] `FunctionCall.partial_args` ("not supported in Gemini API")',
        'https://github.com/brainlid/langchain/pull/620',
    )),
    'GM-16': ('One spelling per field (lowerCamelCase or snake_case)', (
        '[S-GEM]',
        'protobuf JSON mapping',
    )),
    'GM-17': ("Gemini's Schema subset", (
        'https://github.com/BerriAI/litellm (vertex schema transformation tests)',
        'https://github.com/vercel/ai (google schema conversion tests)',
        'https://github.com/google/adk-python (gemini schema utils)',
    )),
    'GM-18': ('A Gemini answer has a candidate with parts', (
        '[S-GEM] `GenerateContentResponse.candidates`, `promptFeedback`, `Candidate.finishReason`',
    )),
    'GM-19': ('No field the Gemini request messages do not define', (
        "[S-GEM] (vendored in inspector/wire/specs as gemini.json); proto3 JSON mapping's unknown-field error",
    )),
    'GM-20': ("The request matches google-genai's types", (
        '[S-GEM] (vendored in inspector/wire/specs as gemini.json)',
    )),
    'GM-21': ('generationConfig values within their ranges', (
        '[S-GEM] `GenerationConfig` (`temperature`, `top_p`, `max_output_tokens`)',
    )),
    'MCP-01': ("A tools/list result has the revision's fields", (
        '[S-MCP] `ListToolsResult` (both revisions)',
        '`tools.mdx` §Capabilities',
    )),
    'MCP-02': ('An MCP Tool has name and an object inputSchema', (
        '[S-MCP] `Tool`, `ToolAnnotations`',
        '`docs/specification/2026-07-28/server/tools.mdx` §Data Types',
    )),
    'MCP-03': ('MCP tool names follow the naming rules', (
        '`tools.mdx` §Tool Names (2025-11-25 L217ff',
        '2026-07-28 L309ff)',
    )),
    'MCP-04': ('tools/call params have name and object arguments', (
        '[S-MCP] `CallToolRequestParams`',
    )),
    'MCP-05': ('A CallToolResult has content blocks', (
        '[S-MCP] `CallToolResult` (both revisions)',
    )),
    'MCP-06': ('structuredContent conforms to the outputSchema', (
        '`tools.mdx` §Structured Content/§Output Schema',
    )),
    'MCP-07': ('Tool failures are results with isError, not protocol errors', (
        '`tools.mdx` §Error Handling',
        '[S-MCP] `CallToolResult.isError` description',
    )),
    'MCP-08': ("tools/call names a tool the server's tools/list listed", (
        '[S-MCP] `CallToolRequest`, `ListToolsResult` (a complete list has no nextCursor)',
    )),
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
    title, evidence = _REFERENCE[rule_id]
    return RuleReference(rule.id, title, rule.severity, dialects(rule.id), _TEMPLATE_FIELD.sub(r"<\1>", rule.why),
                         rule.hint, evidence)


def all_rules() -> list[RuleReference]:
    """Every catalogue rule, in catalogue order."""
    return [entry for entry in map(reference, RULES) if entry is not None]
