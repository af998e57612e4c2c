"""OpenAI Chat Completions's rule records: each rule's catalogue entry (severity, why, fix, the provider's effect)
and its reference (title, evidence), in id order. `rules/catalogue.py` and `rules/reference.py`
collect them from the dialect's home; the rules that report them are in `rules.py`."""

from __future__ import annotations

from ...rules.catalogue import EMPTY_IGNORED, EMPTY_REJECTED, GENAI_KEYWORD, NULL_READ_AS_ABSENT, E, I, W, ACC, CHG, CLI, IGN, MAY, REJ, Rule

RULES = [
    Rule("OC-01", E, "Chat takes tools as a list of objects, each of type 'function' with a function definition or "
         "'custom'; OpenAI answers 400 naming '{{path}}' (\"Supported values are: 'function' and 'custom'.\" for a "
         "type).",
         "Use {\"type\":\"function\",\"function\":{...}}; for web search use the top-level web_search_options.", REJ),
    Rule("OC-02", E, "OpenAI checks names against ^[a-zA-Z0-9_-]+$ (max 64), in tools and in history "
         "(\"string does not match pattern\").",
         "Give the tool a reversible alias (sanitised name + short hash) and map it back on tool_calls.", REJ),
    Rule("OC-03", I, "Azure OpenAI rejects descriptions over 1024 characters (\"string too long\"); "
         "api.openai.com accepted 15,664 characters in 2025-12 recordings, so elsewhere it is a portability note.",
         "Shorten the description to 1024 characters when the request may go to Azure.", MAY, {E: REJ},
         why_at={E: "This endpoint (Azure OpenAI) rejects descriptions over 1024 characters (\"string too long\")."}),
    Rule("OC-04", E, "OpenAI rejects more than 128 tools (\"array too long … maximum length 128\").",
         "Send at most 128 tools; select the ones relevant to this turn.", REJ),
    Rule("OC-05", E, "parameters must be a JSON Schema object with lower-case types and a properties map at its "
                     "root; OpenAI validates it and answers 400 naming the value ({{value}} at '{{path}}' \"is not "
                     "valid under any of the given schemas\"; a bare object: \"object schema missing properties\").",
         "Convert the genai Schema to JSON Schema: lower-case types, nullable → [\"x\",\"null\"], "
         "drop propertyOrdering; declare a function without arguments as {\"type\":\"object\",\"properties\":{}}.",
         REJ, {W: IGN},
         why_at={W: GENAI_KEYWORD}),
    Rule("OC-06", E, "With strict:true OpenAI accepts only the Structured-Outputs subset and answers 400 naming the "
         "first place outside it ('{{path}}').",
         "Make every object additionalProperties:false with properties ({} when none) all required (optional → "
         "union with null), send parameters even for a tool without arguments, or send strict:false.", REJ, {W: MAY},
         why_at={W: "strict:true asks for the Structured-Outputs subset; this endpoint does not enforce it, but OpenAI "
                "answers 400 for '{{path}}', and the guarantee strict gives holds only within the subset."}),
    Rule("OC-07", I, "A parallel tool call may not match the supplied schemas even with strict:true.",
         "Set parallel_tool_calls:false when strict guarantees matter.", CHG),
    Rule("OC-08", E, "tool_choice must be none|auto|required or a nested {\"type\":\"function\",\"function\":"
         "{\"name\"}} (or allowed_tools/custom); other shapes are rejected.",
         "Use {\"type\":\"function\",\"function\":{\"name\":…}} (the flat {\"type\":\"function\",\"name\"} is "
         "the Responses shape).", REJ),
    Rule("OC-09", I, "{{key}} is not nullable in the spec; clients send null to mean absent, and OpenAI reads it so.",
         "Omit the field instead of sending null or [].", IGN, {E: REJ},
         why_at={E: EMPTY_REJECTED, W: EMPTY_IGNORED}),
    Rule("OC-10", E, "parallel_tool_calls is a boolean (default true).",
         "Send true or false, or omit it.", REJ),
    Rule("OC-11", W, "tool_choice without tools is rejected by OpenAI-compatible servers (\"When using "
         "`tool_choice`, `tools` must be set.\"); a named choice should name a declared tool.",
         "Send tools with tool_choice, and name a declared function.", MAY, {E: REJ},
         why_at={E: "This endpoint rejects tool_choice without tools (\"When using `tool_choice`, `tools` must be "
                "set.\")."}),
    Rule("OC-12", I, "An assistant message with tool_calls may omit content (or send null); OpenAI accepts it, but "
                     "some "
         "OpenAI-compatible upstreams need the content key present.",
         "Send \"content\": null on assistant messages that only call tools.", MAY, {E: REJ},
         why_at={E: "Assistant content is a string, null, or a list of text parts or one refusal part; OpenAI answers "
                "400 for {{value}} at '{{path}}'."}),
    Rule("OC-13", E, "OpenAI rejects an empty tool_calls array (\"empty array. Expected an array with minimum "
         "length 1\").",
         "Omit tool_calls when the assistant made no calls.", REJ, {W: CLI}),
    Rule("OC-14", E, "A tool call needs id, type:\"function\", function.name and function.arguments as a string; "
         "OpenAI answers 400 naming '{{path}}' (which holds {{type}} here).",
         "Serialise the arguments object once with json.dumps and fill every required field.", REJ),
    Rule("OC-15", W, "arguments must be one JSON text of an object; OpenAI accepts anything in history, but "
         "strict compatible upstreams reject it (DashScope: \"must be in JSON format\") and consumers crash.",
         "Encode the arguments object exactly once; unwrap repeated encodings, wrap non-objects under a "
         "key.", MAY, {E: REJ}),
    Rule("OC-16", W, "Some endpoints limit tool-call ids to 40 characters (\"string too long. Expected a string "
         "with maximum length 40\"); Responses fc_/call_ ids replayed into Chat are the usual trigger.",
         "Rewrite long ids deterministically (e.g. call_ + hash) in both the call and its tool "
         "message.", MAY, {E: REJ}),
    Rule("OC-17", E, "A tool message needs role:\"tool\", tool_call_id and content (a string or text parts only); "
         "OpenAI answers 400 naming '{{path}}' (which holds {{type}} here).",
         "Always send content, \"\" for an empty result; move images to a following user message.", REJ, {W: MAY},
         why_at={W: "OpenAI answers 400 to a tool message part that is not text ('{{path}}' holds {{type}} here); "
                "this endpoint is not OpenAI's own, and servers that only speak the dialect (Ollama, vLLM) "
                "take it."}),
    Rule("OC-18", E, "\"messages with role 'tool' must be a response to a preceeding message with "
         "'tool_calls'\".",
         "Drop the orphan result, or restore the assistant message that made the call.", REJ),
    Rule("OC-19", E, "\"An assistant message with 'tool_calls' must be followed by tool messages responding to "
         "each 'tool_call_id'.\"",
         "Answer every call before the next message (a synthesised \"result unavailable\" if need be).", REJ),
    Rule("OC-20", E, "The legacy surface has shapes of its own: functions are objects, function_call is "
                     "none|auto|{name}, "
         "and a role:\"function\" message needs name and content (it carries no id and pairs by name and order "
         "with the preceding function_call); OpenAI answers 400 naming '{{path}}'.",
         "Give every role:\"function\" message the name of the call it answers, or migrate to tools.", REJ),
    Rule("OC-21", E, "Stream clients key tool-call deltas by index and treat a delta with an id as a new call; "
         "accumulators concatenate repeated strings.",
         "Send index on every delta, id/type/name only on the first delta of each call, arguments as "
         "fragments.", CLI),
    Rule("OC-22", W, "Agents decide whether to run tools from finish_reason; a mismatch stops the loop or "
         "runs nothing.",
         "End a response that carries tool_calls with finish_reason \"tool_calls\", and only such a response.", CLI,
         {I: ACC}, why_at={I: "OpenAI answers finish_reason \"stop\" by design when tool_choice names a function (the call "
                    "was forced and the turn ends with it); without the request, whether it was forced is not known, "
                    "so this is a warning only beside a request that did not force it."}),
    Rule("OC-23", I, "With stream_options.include_usage the last chunk has choices: [] and carries usage; "
         "clients that read choices[0] on every chunk crash.",
         "Guard choices[0] access when consuming the stream.", CLI),
    # Response side, found on held-out translator cases (issue 8): the clients' SDKs read these
    # fields without a guard ([S-OAI] CreateChatCompletionResponse, ChatCompletionResponseMessage,
    # ChatCompletionRequestFunctionMessage).
    Rule("OC-24", E, "A chat.completion has at least one choice; clients read choices[0] (IndexError) and an "
         "agent loop gets no message.",
         "Return one choice with the assistant message (an empty string content when there is no text).", CLI),
    Rule("OC-25", E, "An assistant message carries content, tool_calls, function_call, refusal or audio; "
         "content is \"required unless tool_calls or function_call is specified\", so an empty turn gives the "
         "agent nothing and is rejected when replayed.",
         "Send content (\"\" when there is no text) or the tool calls the model made.", CLI),
    Rule("OC-26", E, "A tool call in a response needs function.name: the client cannot dispatch it, and "
         "replaying it is rejected (OC-14).",
         "Carry the name of every call through (a translator restores the client's declared name).", CLI),
    Rule("OC-27", E, "A legacy role:\"function\" message's content is a string or null; parts or objects are "
         "not accepted.",
         "Serialise the result to a string (JSON text for structured results).", REJ),
    # The spec layer (rules/spec.py): the whole request against OpenAI's published OpenAPI document.
    Rule("OC-28", E, "api.openai.com validates the request against its published schema and answers 400 naming the "
                     "field "
         "(\"Invalid '{{path}}'…\"; it holds {{value}}).",
         "Send the field in the shape and range the schema gives (openai-openapi's "
         "CreateChatCompletionRequest).", REJ, {I: IGN},
         why_at={I: NULL_READ_AS_ABSENT}),
    Rule("OC-29", E, "OpenAI rejects parameters an endpoint does not define (\"Unknown parameter: '{{path}}'.\"); "
         "compatible servers take extras of their own, so only OpenAI's hosts are checked.",
         "Remove the field, or move it where Chat takes it (e.g. Responses' text.format is response_format "
         "here).", REJ),
    Rule("OC-30", E, "Chat takes sampling and length values within their ranges only (temperature 0–2, top_p 0–1, "
         "max_tokens / max_completion_tokens at least 1) and answers 400 for {{key}} {{value}} (\"Invalid "
         "'{{path}}': … Expected a value …\"); compatible servers take the same ranges, Mistral documents no upper "
         "temperature bound.",
         "Send the value within its range; through --translate the bridge moves it to the nearest bound and "
         "reports it.", REJ),
    Rule("OC-31", E, "JSON mode needs the prompt to ask for JSON: with {{value}} at '{{path}}' OpenAI answers 400 "
         "\"'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.\" "
         "The word counts in any message and any part, in any case; compatible servers do not check it.",
         "Say in a system or user message that the answer is JSON, or use a json_schema response format.", REJ),
]

REFERENCE: dict[str, tuple[str, tuple[str, ...]]] = {
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
}
