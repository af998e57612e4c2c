"""Anthropic Messages's rule records: each rule's catalogue entry (severity, why, fix, the provider's effect)
and its reference (title, evidence), in id order. `rules/catalogue.py` and `rules/reference.py`
collect them from the dialect's home; the rules that report them are in `rules.py`."""

from __future__ import annotations

from ...rules.catalogue import E, W, CHG, CLI, MAY, REJ, Rule

RULES = [
    Rule("AN-01", E, "A custom tool needs name and input_schema with type:\"object\"; a tool of another type is "
         "a versioned Anthropic tool, or an MCP connector's mcp_toolset sent with its beta header.",
         "Send input_schema as a JSON Schema object ({\"type\":\"object\",\"properties\":{…}}).", REJ),
    Rule("AN-02", E, "Anthropic checks names against ^[a-zA-Z0-9_-]{1,128}$ (64 on older endpoints): "
         "\"String should match pattern\".",
         "Give the tool a reversible alias and map it back on tool_use blocks.", REJ, {W: MAY},
         why_at={W: "Anthropic takes names up to 128 characters today; endpoints from before mid-2025 and the other "
                "dialects stop at 64 and reject this one."}),
    Rule("AN-03", E, "\"tools: Tool names must be unique.\"",
         "Keep one declaration per name (dedupe, or prefix with the server id).", REJ),
    Rule("AN-04", E, "Server tools have a versioned type with a fixed name and options of their own (web search takes "
         "allowed_domains or blocked_domains, not both); their calls and results live in the assistant message "
         "and get no client tool_result.",
         "Use the fixed name for the server tool type; never answer a server_tool_use with a tool_result.", REJ),
    Rule("AN-05", E, "A tool_use needs an id matching ^[a-zA-Z0-9_-]+$ (≤64, unique in the request) and input as an "
         "object; Anthropic answers 400 naming '{{dots}}' (which holds {{type}} here).",
         "Send input as a JSON object (decode a JSON string once) and rewrite ids to the allowed "
         "charset.", REJ, {W: CHG},
         why_at={W: "Anthropic accepts the same tool_use id in two turns, but a client or proxy that pairs results "
                    "by id "
                "pairs them with whichever call it finds first."}),
    Rule("AN-06", E, "A tool_result is {type, tool_use_id, content?: string | text/image/document/"
         "search_result blocks, is_error?}.",
         "Send content as a string or a list of allowed blocks.", REJ),
    Rule("AN-07", E, "\"tool_use ids were found without tool_result blocks immediately after … Each tool_use "
         "block must have a corresponding tool_result block in the next message.\"",
         "Answer every tool_use in the next user message (a synthesised is_error result if need be).", REJ),
    Rule("AN-08", E, "\"unexpected tool_use_id found in tool_result blocks … Each tool_result block must have "
         "a corresponding tool_use block in the previous message.\"",
         "Drop the orphan result or restore the assistant tool_use it answers.", REJ),
    Rule("AN-09", E, "\"Messages following tool_use blocks must begin with a matching number of tool_result "
         "blocks.\"",
         "Put the tool_result blocks first in the user message, text after them.", REJ),
    Rule("AN-10", E, "tool_choice is {\"type\":\"auto\"|\"any\"|\"none\"} or {\"type\":\"tool\",\"name\"} naming a "
         "declared tool, and needs tools.",
         "Use an Anthropic tool_choice shape (OpenAI \"required\" → any, named → tool).", REJ),
    Rule("AN-11", E, "\"Thinking may not be enabled when tool_choice forces tool use.\"",
         "With thinking enabled use tool_choice auto or none.", REJ),
    Rule("AN-12", E, "\"all messages must have non-empty content except for the optional final assistant "
         "message\"; and \"at least one message is required\".",
         "Remove the empty message or give it content; send at least one user message.", REJ),
    Rule("AN-13", E, "Stream clients join input_json_delta per content-block index and read stop_reason; "
         "mis-keyed deltas corrupt the input ({…}{…}).",
         "Send content_block_start/delta/stop with one index per block and stop_reason \"tool_use\" when "
         "tool_use blocks were sent.", CLI),
    # The spec layer (rules/spec.py): the whole request against the Anthropic SDK's request types.
    Rule("AN-14", E, "Anthropic validates the request against its API definition and answers 400 field by field "
         "(\"{{dots}}: …\"; it holds {{value}}).",
         "Send the field in the shape the Anthropic SDK's MessageCreateParams types give.", REJ, {W: MAY},
         why_at={W: "The Anthropic SDK's types do not make {{key}} nullable; whether the API reads null as absent or "
                "rejects it is not recorded."}),
    Rule("AN-15", W, "Anthropic does end a turn with no content (documented after tool results, with "
         "end_turn); the agent then has nothing to show or run, and replaying the empty assistant message is "
         "rejected (AN-12).",
         "Retry the turn (without text right after the tool results), or send the user a continuation prompt.",
         CLI),
    Rule("AN-16", E, "max_tokens counts the thinking as well as the answer, so Anthropic rejects a request whose "
         "max_tokens is not above thinking.budget_tokens (\"max_tokens must be greater than "
         "thinking.budget_tokens\"), unless the request opts into interleaved thinking (anthropic-beta: "
         "interleaved-thinking-2025-05-14), where the budget spans the turn's thinking blocks.",
         "Raise max_tokens above budget_tokens (budget plus the answer's length), or lower the budget.", REJ),
    Rule("AN-17", E, "Anthropic answers 400 for {{key}} {{value}} (\"{{dots}}: Input should be …\"): temperature and "
         "top_p go from 0 to 1 only (OpenAI's temperature goes to 2), top_k from 0, max_tokens from 1, and a thinking "
         "budget_tokens from 1024.",
         "Send the value within Anthropic's range: halve an OpenAI temperature's scale rather than cut it at 1 "
         "if the spread matters; a budget of 1024 or more.", REJ),
    Rule("AN-18", E, "Anthropic takes at most four cache_control breakpoints in one request, counted over tools, "
         "system and every message block; a fifth is refused (\"A maximum of 4 blocks with cache_control may be "
         "provided\"), including breakpoints a relay or a gateway adds to the client's own.",
         "Keep four: the latest breakpoints cover the longest prefix, so drop the earliest extra ones (fix mode "
         "does).", REJ),
    Rule("AN-19", W, "A provider that serves Claude on its own endpoint (Vertex AI, Bedrock) takes fewer beta flags "
         "than Anthropic's API and refuses the whole request over one it does not know: \"Unexpected value(s) "
         "`effort-2025-11-24` for the `anthropic-beta` header\". A relay or client that forwards the flags it "
         "would send Anthropic meets that 400 on every turn.",
         "Send only the flags the provider takes (the profile's list); drop the feature the flag asks for, or "
         "send the request to Anthropic's API.", MAY),
]

REFERENCE: dict[str, tuple[str, tuple[str, ...]]] = {
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
        'https://github.com/langchain-ai/langchain/pull/31696 (an empty messages list: "at least one message is '
        'required"); https://github.com/Helicone/helicone/pull/5257 and '
        'https://github.com/arthur-ai/arthur-engine/pull/1302 (only a system message, mapped to `system`, leaves '
        'messages empty and is refused)',
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
    'AN-19': ('Beta flags the provider takes (Vertex AI, Bedrock)', (
        'https://github.com/BerriAI/litellm/blob/main/litellm/anthropic_beta_headers_config.json (the flags '
        'forwarded per provider; vertex_ai: the vertex-anthropic profile\'s list)',
        'https://github.com/anthropics/claude-code/issues/34802 (Vertex: "Unexpected value(s) '
        '`adaptive-thinking-2026-01-28`, `effort-2025-11-24` for the `anthropic-beta` header")',
        'https://github.com/anthropics/claude-code/issues/21625 (Vertex via LiteLLM: prompt-caching-scope-2026-01-05)',
        'https://github.com/vercel/ai/issues/10981 (Vertex: structured-outputs-2025-11-13)',
        'https://github.com/Aider-AI/aider/issues/2439 (Vertex: pdfs-2024-09-25)',
        'https://github.com/anthropics/claude-code/issues/1229 (interleaved-thinking-2025-05-14 refused, then '
        'enabled on Vertex for Opus 4 and Sonnet 4 in every region: a near miss)',
    )),
}
