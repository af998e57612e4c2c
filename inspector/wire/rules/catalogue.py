"""Every rule the checker knows: default severity, why the provider rejects it (or what is lost), and
the usual fix. Wording follows `contracts.md`; a finding may override any of the three when its case
differs (a profile that makes a warning an error, a more specific hint)."""

from __future__ import annotations

from dataclasses import dataclass

from ..violations import Severity

E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: Severity
    why: str
    hint: str


_RULES = [
    # OpenAI Chat Completions
    Rule("OC-01", E, "Chat accepts only tools of type 'function' or 'custom' (\"Invalid value: 'web_search'. "
         "Supported values are: 'function' and 'custom'.\").",
         "Use {\"type\":\"function\",\"function\":{...}}; for web search use the top-level web_search_options."),
    Rule("OC-02", E, "OpenAI checks names against ^[a-zA-Z0-9_-]+$ (max 64), in tools and in history "
         "(\"string does not match pattern\").",
         "Give the tool a reversible alias (sanitised name + short hash) and map it back on tool_calls."),
    Rule("OC-03", I, "Azure OpenAI rejects descriptions over 1024 characters (\"string too long\"); "
         "api.openai.com accepted 15,664 characters in 2025-12 recordings, so elsewhere it is a portability note.",
         "Shorten the description to 1024 characters when the request may go to Azure."),
    Rule("OC-04", E, "OpenAI rejects more than 128 tools (\"array too long … maximum length 128\").",
         "Send at most 128 tools; select the ones relevant to this turn."),
    Rule("OC-05", E, "parameters must be a JSON Schema object with lower-case types; OpenAI answers 400 "
         "(\"'BOOLEAN' is not valid under any of the given schemas\").",
         "Convert the genai Schema to JSON Schema: lower-case types, nullable → [\"x\",\"null\"], "
         "drop propertyOrdering."),
    Rule("OC-06", E, "With strict:true OpenAI accepts only the Structured-Outputs subset "
         "(\"additionalProperties is required to be supplied and to be false\").",
         "Make every object additionalProperties:false with all properties required (optional → union with "
         "null), or send strict:false."),
    Rule("OC-07", I, "A parallel tool call may not match the supplied schemas even with strict:true.",
         "Set parallel_tool_calls:false when strict guarantees matter."),
    Rule("OC-08", E, "tool_choice must be none|auto|required or a nested {\"type\":\"function\",\"function\":"
         "{\"name\"}} (or allowed_tools/custom); other shapes are rejected.",
         "Use {\"type\":\"function\",\"function\":{\"name\":…}} (the flat {\"type\":\"function\",\"name\"} is "
         "the Responses shape)."),
    Rule("OC-09", I, "These fields are not nullable in the spec; clients send null to mean absent, and "
         "empty lists are rejected (\"[] is too short\").",
         "Omit the field instead of sending null or []."),
    Rule("OC-10", E, "parallel_tool_calls is a boolean (default true).",
         "Send true or false, or omit it."),
    Rule("OC-11", W, "tool_choice without tools is rejected by OpenAI-compatible servers (\"When using "
         "`tool_choice`, `tools` must be set.\"); a named choice should name a declared tool.",
         "Send tools with tool_choice, and name a declared function."),
    Rule("OC-12", I, "An assistant message with tool_calls may omit content (or send null); some "
         "OpenAI-compatible upstreams need the content key present.",
         "Send \"content\": null on assistant messages that only call tools."),
    Rule("OC-13", E, "OpenAI rejects an empty tool_calls array (\"empty array. Expected an array with minimum "
         "length 1\").",
         "Omit tool_calls when the assistant made no calls."),
    Rule("OC-14", E, "A tool call needs id, type:\"function\", function.name and function.arguments as a "
         "string (\"expected a string, but got an object instead\").",
         "Serialise the arguments object once with json.dumps and fill every required field."),
    Rule("OC-15", W, "arguments must be one JSON text of an object; OpenAI accepts anything in history, but "
         "strict compatible upstreams reject it (DashScope: \"must be in JSON format\") and consumers crash.",
         "Encode the arguments object exactly once; unwrap repeated encodings, wrap non-objects under a key."),
    Rule("OC-16", W, "Some endpoints limit tool-call ids to 40 characters (\"string too long. Expected a string "
         "with maximum length 40\"); Responses fc_/call_ ids replayed into Chat are the usual trigger.",
         "Rewrite long ids deterministically (e.g. call_ + hash) in both the call and its tool message."),
    Rule("OC-17", E, "A tool message needs role:\"tool\", tool_call_id and content (a string or text parts "
         "only); without content OpenAI answers 400.",
         "Always send content, \"\" for an empty result; move images to a following user message."),
    Rule("OC-18", E, "\"messages with role 'tool' must be a response to a preceeding message with "
         "'tool_calls'\".",
         "Drop the orphan result, or restore the assistant message that made the call."),
    Rule("OC-19", E, "\"An assistant message with 'tool_calls' must be followed by tool messages responding to "
         "each 'tool_call_id'.\"",
         "Answer every call before the next message (a synthesised \"result unavailable\" if need be)."),
    Rule("OC-20", E, "Legacy function messages need name (they carry no id and pair by name and order with "
         "the preceding function_call); function_call is none|auto|{name}.",
         "Give every role:\"function\" message the name of the call it answers, or migrate to tools."),
    Rule("OC-21", E, "Stream clients key tool-call deltas by index and treat a delta with an id as a new call; "
         "accumulators concatenate repeated strings.",
         "Send index on every delta, id/type/name only on the first delta of each call, arguments as "
         "fragments."),
    Rule("OC-22", W, "Agents decide whether to run tools from finish_reason; a mismatch stops the loop or "
         "runs nothing.",
         "End a response that carries tool_calls with finish_reason \"tool_calls\", and only such a response."),
    Rule("OC-23", I, "With stream_options.include_usage the last chunk has choices: [] and carries usage; "
         "clients that read choices[0] on every chunk crash.",
         "Guard choices[0] access when consuming the stream."),
    # Response side, found on held-out translator cases (issue 8): the clients' SDKs read these
    # fields without a guard ([S-OAI] CreateChatCompletionResponse, ChatCompletionResponseMessage,
    # ChatCompletionRequestFunctionMessage).
    Rule("OC-24", E, "A chat.completion has at least one choice; clients read choices[0] (IndexError) and an "
         "agent loop gets no message.",
         "Return one choice with the assistant message (an empty string content when there is no text)."),
    Rule("OC-25", E, "An assistant message carries content, tool_calls, function_call, refusal or audio; "
         "content is \"required unless tool_calls or function_call is specified\", so an empty turn gives the "
         "agent nothing and is rejected when replayed.",
         "Send content (\"\" when there is no text) or the tool calls the model made."),
    Rule("OC-26", E, "A tool call in a response needs function.name: the client cannot dispatch it, and "
         "replaying it is rejected (OC-14).",
         "Carry the name of every call through (a translator restores the client's declared name)."),
    Rule("OC-27", E, "A legacy role:\"function\" message's content is a string or null; parts or objects are "
         "not accepted.",
         "Serialise the result to a string (JSON text for structured results)."),
    # The spec layer (rules/spec.py): the whole request against OpenAI's published OpenAPI document.
    Rule("OC-28", E, "api.openai.com validates the request against its published schema and answers 400 naming "
         "the field (recorded: \"Invalid 'messages[3]'. Content blocks are expected to be either text or "
         "image_url type.\").",
         "Send the field in the shape and range the schema gives (openai-openapi's CreateChatCompletionRequest)."),
    Rule("OC-29", E, "OpenAI rejects parameters an endpoint does not define (recorded on the images endpoint: "
         "\"Unknown parameter: 'quality'.\"); compatible servers take extras of their own, so only OpenAI's "
         "hosts are checked.",
         "Remove the field, or move it where Chat takes it (e.g. Responses' text.format is response_format "
         "here)."),
    Rule("OC-30", E, "Chat rejects sampling and length values outside their ranges: temperature 0–2, top_p 0–1, "
         "max_tokens / max_completion_tokens at least 1 (\"Invalid 'temperature': decimal above maximum value. "
         "Expected a value <= 2\"); compatible servers take the same ranges, Mistral documents no upper "
         "temperature bound.",
         "Send the value within its range; through --translate the bridge moves it to the nearest bound and "
         "reports it."),
    # OpenAI Responses
    Rule("OR-01", E, "Each Responses tool type has required fields; unknown types are rejected.",
         "Fill the required fields of the tool type, or drop the tool with a warning."),
    Rule("OR-02", E, "A Responses function tool is flat: {\"type\":\"function\",\"name\",\"parameters\",…}; the "
         "nested Chat shape is invalid here.",
         "Move name/description/parameters/strict up out of \"function\"."),
    Rule("OR-03", E, "Responses checks names against ^[a-zA-Z0-9_-]+$ (\"string does not match pattern\").",
         "Give the tool a reversible alias and map it back on function_call items."),
    Rule("OR-04", E, "tool_choice must be none|auto|required, a flat {\"type\":\"function\",\"name\"}, "
         "allowed_tools, a hosted tool type, mcp or custom.",
         "Use the flat {\"type\":\"function\",\"name\":…} and name a declared tool."),
    Rule("OR-05", E, "Responses input has no role:\"tool\" (\"Supported values are: 'assistant', 'system', "
         "'developer', and 'user'.\").",
         "Send tool results as {\"type\":\"function_call_output\",\"call_id\",\"output\"} items."),
    Rule("OR-06", E, "A function_call item needs type, call_id, name and arguments (a string); a replayed id "
         "must begin with 'fc'.",
         "Fill call_id/name/arguments; drop an id that is not an fc_ id."),
    Rule("OR-07", E, "A function_call_output needs call_id (1..64 chars) and output (a string or "
         "input_text/input_image/input_file parts).",
         "Send the result as a string or a list of input parts with the call's call_id."),
    Rule("OR-08", E, "Pairing is checked server-side: \"No tool call found for function call output\" / "
         "\"No tool output found for function call\".",
         "Answer every function_call with a function_call_output right after it; drop orphan outputs."),
    Rule("OR-09", E, "A replayed function_call that followed a reasoning item needs that item (\"Item provided "
         "without its required 'reasoning' item\").",
         "Replay reasoning items unchanged, or drop the id of the dependent call."),
    Rule("OR-10", E, "Streamed argument deltas are keyed by item_id/output_index, not call_id; mis-keyed or "
         "inconsistent events corrupt the arguments a client rebuilds.",
         "Emit output_item.added, then deltas and done with the item's id, and a done text equal to the "
         "concatenated deltas."),
    Rule("OR-11", I, "previous_response_id (or conversation) keeps the history server-side: calls and outputs "
         "in it cannot be paired from this request alone.",
         "A proxy that bridges to Chat must rebuild the history, and with it the pairing."),
    Rule("OR-12", E, "A function_call output item needs a name: a client cannot dispatch a nameless call, so a "
         "response holding one is not a usable completed response.",
         "Carry the name of every call through, or end the response as failed/incomplete."),
    # The spec layer (rules/spec.py): the whole request against OpenAI's published OpenAPI document.
    Rule("OR-13", E, "api.openai.com validates the request against its published schema and answers 400 "
         "(recorded: \"Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -1 "
         "instead.\").",
         "Send the field in the shape and range the schema gives (openai-openapi's CreateResponse)."),
    Rule("OR-14", E, "The Responses API rejects fields it does not define; Chat's spellings are the usual cause "
         "(response_format is text.format here, max_tokens is max_output_tokens, messages is input).",
         "Remove the field, or move it where Responses takes it (response_format → text.format, "
         "max_tokens → max_output_tokens, messages → input)."),
    Rule("OR-19", E, "The Responses API rejects max_output_tokens below 16 (\"Invalid 'max_output_tokens': integer "
         "below minimum value. Expected a value >= 16\"), where Chat takes 1, and temperature outside 0–2 or "
         "top_p outside 0–1.",
         "Send max_output_tokens of at least 16 (a Chat or Anthropic client's smaller max_tokens included) and "
         "sampling values within their ranges."),
    # Anthropic
    Rule("AN-01", E, "A custom tool needs name and input_schema with type:\"object\".",
         "Send input_schema as a JSON Schema object ({\"type\":\"object\",\"properties\":{…}})."),
    Rule("AN-02", E, "Anthropic checks names against ^[a-zA-Z0-9_-]{1,128}$ (64 on older endpoints): "
         "\"String should match pattern\".",
         "Give the tool a reversible alias and map it back on tool_use blocks."),
    Rule("AN-03", E, "\"tools: Tool names must be unique.\"",
         "Keep one declaration per name (dedupe, or prefix with the server id)."),
    Rule("AN-04", E, "Server tools have a versioned type with a fixed name; their calls and results live in "
         "the assistant message and get no client tool_result.",
         "Use the fixed name for the server tool type; never answer a server_tool_use with a tool_result."),
    Rule("AN-05", E, "A tool_use needs an id matching ^[a-zA-Z0-9_-]+$ (≤64, unique) and input as an object "
         "(\"Input should be a valid dictionary\").",
         "Send input as a JSON object (decode a JSON string once) and rewrite ids to the allowed charset."),
    Rule("AN-06", E, "A tool_result is {type, tool_use_id, content?: string | text/image/document/"
         "search_result blocks, is_error?}.",
         "Send content as a string or a list of allowed blocks."),
    Rule("AN-07", E, "\"tool_use ids were found without tool_result blocks immediately after … Each tool_use "
         "block must have a corresponding tool_result block in the next message.\"",
         "Answer every tool_use in the next user message (a synthesised is_error result if need be)."),
    Rule("AN-08", E, "\"unexpected tool_use_id found in tool_result blocks … Each tool_result block must have "
         "a corresponding tool_use block in the previous message.\"",
         "Drop the orphan result or restore the assistant tool_use it answers."),
    Rule("AN-09", E, "\"Messages following tool_use blocks must begin with a matching number of tool_result "
         "blocks.\"",
         "Put the tool_result blocks first in the user message, text after them."),
    Rule("AN-10", E, "tool_choice is {\"type\":\"auto\"|\"any\"|\"none\"} or {\"type\":\"tool\",\"name\"} naming a "
         "declared tool, and needs tools.",
         "Use an Anthropic tool_choice shape (OpenAI \"required\" → any, named → tool)."),
    Rule("AN-11", E, "\"Thinking may not be enabled when tool_choice forces tool use.\"",
         "With thinking enabled use tool_choice auto or none."),
    Rule("AN-12", E, "\"all messages must have non-empty content except for the optional final assistant "
         "message\".",
         "Remove the empty message or give it content."),
    Rule("AN-13", E, "Stream clients join input_json_delta per content-block index and read stop_reason; "
         "mis-keyed deltas corrupt the input ({…}{…}).",
         "Send content_block_start/delta/stop with one index per block and stop_reason \"tool_use\" when "
         "tool_use blocks were sent."),
    # The spec layer (rules/spec.py): the whole request against the Anthropic SDK's request types.
    Rule("AN-14", E, "Anthropic validates the request against its API definition and answers 400 "
         "field by field (\"messages.39.content.0.tool_use.input: Input should be a valid dictionary\").",
         "Send the field in the shape the Anthropic SDK's MessageCreateParams types give."),
    Rule("AN-17", E, "Anthropic takes temperature and top_p from 0 to 1 only (OpenAI's temperature goes to 2), "
         "top_k from 0, max_tokens from 1, and a thinking budget_tokens of at least 1024 "
         "(\"thinking.enabled.budget_tokens: Input should be greater than or equal to 1024\").",
         "Send the value within Anthropic's range: halve an OpenAI temperature's scale rather than cut it at 1 "
         "if the spread matters; a budget of 1024 or more."),
    Rule("AN-16", E, "max_tokens counts the thinking as well as the answer, so Anthropic rejects a request whose "
         "max_tokens is not above thinking.budget_tokens (\"max_tokens must be greater than "
         "thinking.budget_tokens\").",
         "Raise max_tokens above budget_tokens (budget plus the answer's length), or lower the budget."),
    # Gemini
    Rule("GM-01", E, "Vertex allows at most 128 function declarations, and some tool kinds exist only on "
         "one of the Gemini API / Vertex.",
         "Send at most 128 declarations and only tool kinds the endpoint supports."),
    Rule("GM-02", E, "\"Invalid function name. Must start with a letter or an underscore. Must be a-z, A-Z, "
         "0-9, or contain underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.\"",
         "Give the function a reversible alias within the Gemini name rule."),
    Rule("GM-03", I, "parameters is a genai Schema (OpenAPI 3.0 subset); type values are case-insensitive.",
         "Use the Schema fields, or parametersJsonSchema for full JSON Schema."),
    Rule("GM-04", E, "Gemini parses parameters proto-strictly: unknown keywords, type arrays, \"null\" types, "
         "properties/enum in the wrong place give 400 (\"Unknown name …\").",
         "Strip or rewrite the keyword (const → enum, [\"x\",\"null\"] → nullable), or use parametersJsonSchema."),
    Rule("GM-05", E, "parametersJsonSchema and parameters are mutually exclusive.",
         "Send only one of them."),
    Rule("GM-06", E, "Vertex requires the parameters root to be OBJECT (\"parameters schema should be of type "
         "OBJECT\"); mode ANY needs parameters on every declaration.",
         "Wrap the parameters in an OBJECT schema."),
    Rule("GM-07", E, "Content roles are only user and model (\"Please use a valid role: user, model.\"); "
         "functionCall parts go in model turns, functionResponse parts in user turns.",
         "Use role user/model and put each part in the turn of its side."),
    Rule("GM-08", E, "A functionCall part is {functionCall:{name,args:<object>,id?}, thoughtSignature?}; "
         "Gemini 3 rejects replayed calls without their signature.",
         "Send args as an object and keep thoughtSignature beside functionCall, unchanged."),
    Rule("GM-09", E, "A functionResponse needs name and response as a JSON object (\"Proto field is not "
         "repeating, cannot start list\").",
         "Wrap the result: {\"output\": …} (or {\"error\": …})."),
    Rule("GM-10", E, "A function-call turn must follow a user or function-response turn, and be answered by "
         "the next turn with as many functionResponse parts as it had functionCall parts.",
         "Answer every call in the next user turn, one functionResponse per functionCall, same names."),
    Rule("GM-11", E, "Newer models reject text next to functionResponse in one turn; on responses, reading "
         "only parts[0] loses text or calls.",
         "Move the text to its own user turn after the function responses; read every part."),
    Rule("GM-12", W, "FunctionCall.id is optional; clients synthesise ids when absent and must keep them "
         "unique and echo real ids back.",
         "Echo functionCall.id in functionResponse.id; synthesise unique ids only when absent."),
    Rule("GM-13", E, "functionCallingConfig needs declarations, a mode AUTO|ANY|NONE|VALIDATED, and "
         "allowedFunctionNames only with ANY (naming declared functions).",
         "Send the config only with declarations; use allowedFunctionNames with mode ANY."),
    Rule("GM-14", E, "Duplicate function declarations are rejected with 400.",
         "Keep one declaration per name."),
    Rule("GM-15", W, "Each call arrives as a whole functionCall part, with no index; argument streaming "
         "(partialArgs/willContinue) is Vertex-only.",
         "Accumulate calls by part, never by \"current call\"."),
    Rule("GM-16", W, "Gemini reads every field in lowerCamelCase and in snake_case (proto JSON); a field "
         "written in both spellings in one message is ambiguous.",
         "Write each field once, in one spelling."),
    Rule("GM-17", E, "Gemini's Schema subset: an ARRAY needs typed items, every node a type, formats are "
         "limited (STRING: enum, date-time), the parameters root must be an OBJECT (no object union), and "
         "Vertex rejects validation keywords beside anyOf.",
         "Give arrays typed items and nodes a type, drop other formats, merge a root object union, move "
         "keywords beside anyOf into its branches."),
    Rule("GM-21", E, "Gemini's generationConfig takes temperature from 0.0 to 2.0, topP from 0.0 to 1.0 and "
         "maxOutputTokens from 1 (the GenerationConfig reference); a value outside answers 400 INVALID_ARGUMENT.",
         "Send the value within its range (either spelling, maxOutputTokens or max_output_tokens)."),
    # MCP
    Rule("MCP-01", E, "A tools/list result is {tools: Tool[], nextCursor?} (2026-07-28 adds resultType, "
         "cacheScope, ttlMs).",
         "Return tools as a list (and the 2026-07-28 fields together)."),
    Rule("MCP-02", E, "A Tool needs name and inputSchema, a JSON object with type:\"object\" (never null).",
         "Use {\"type\":\"object\",\"additionalProperties\":false} for a tool without arguments."),
    Rule("MCP-03", W, "Tool names SHOULD be 1–128 chars of A-Z a-z 0-9 _ - . and unique within a server; "
         "names with dots are invalid for OpenAI and Anthropic and need an alias there.",
         "Rename, or alias the tool when it crosses to another dialect."),
    Rule("MCP-04", E, "tools/call params are {name, arguments?: object, _meta…}.",
         "Send name and the arguments as a JSON object."),
    Rule("MCP-05", E, "A CallToolResult needs content: ContentBlock[] (text|image|audio|resource_link|resource); "
         "isError is a boolean.",
         "Return content as a list of typed blocks."),
    Rule("MCP-06", W, "With an outputSchema the server MUST return conforming structuredContent, and SHOULD "
         "also return the serialised JSON in a text block.",
         "Return structuredContent that matches outputSchema, plus its JSON in a text block."),
    Rule("MCP-07", I, "Unknown tools and malformed requests are JSON-RPC errors; tool failures are results with "
         "isError:true, which clients SHOULD feed back to the model.",
         "Report execution failures as isError results so the model can react."),
    # Cross-dialect
    Rule("XL-01", E, "JSON-Schema consumers (OpenAI, Anthropic, MCP) need lower-case types; genai keywords "
         "(nullable, propertyOrdering, format:\"enum\") are not JSON Schema.",
         "Convert: lower-case types, nullable → [\"x\",\"null\"], drop propertyOrdering."),
    Rule("XL-02", E, "Names outside ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ need an injective, reversible alias when they "
         "cross dialects.",
         "Alias as sanitised name + short sha256, kept in a map and reversed on calls and history."),
    Rule("XL-03", E, "Duplicate tool names make dispatch ambiguous; Anthropic, Gemini and compatible servers "
         "reject them (\"Tool names must be unique\").",
         "Keep one tool per name: dedupe servers by endpoint (host+path), or prefix names with a server id."),
    Rule("XL-04", E, "Call ids must be unique across the whole transcript; a repeated id pairs results with "
         "the wrong call.",
         "Give every call a distinct id (deterministic and injective when rewritten)."),
    Rule("XL-05", W, "Legacy function messages carry no id; each pairs with the nearest preceding unanswered "
         "function_call of the same name, and an unpaired one is an orphan downstream.",
         "Give every function message a preceding function_call of the same name, or drop it."),
    Rule("XL-06", E, "Every dialect rejects a result with no pending call and a call with no result.",
         "Repair explicitly: synthesise a \"result unavailable\" output or drop the pair, and record it."),
    Rule("XL-07", W, "Tool results and text in one turn must be split (results first); dropping the text "
         "loses it.",
         "Keep the results first and the text in its own message."),
    Rule("XL-08", E, "Chat and Responses want exactly one JSON-text encoding of an object; Anthropic and "
         "Gemini want an object.",
         "Encode the arguments object exactly once; unwrap repeated encodings, wrap non-objects under a key."),
    Rule("XL-09", E, "Built-in tools must be mapped to the target's equivalent or dropped with a warning, never "
         "degraded into a function with an empty name.",
         "Map the built-in tool, or drop it and say so."),
    Rule("XL-10", I, "null for an optional field means absent; an empty array where the API needs at least one "
         "item is rejected.",
         "Omit the field instead of sending null or []."),
    Rule("XL-11", E, "A named tool_choice must reference an existing tool in the target's shape.",
         "Name a declared (aliased) tool in the dialect's tool_choice shape."),
    Rule("XL-12", E, "Re-chunked streams must keep id/name on the first delta of every call, stable indices, "
         "no index -1 and no duplicate summary chunk (its arguments get counted twice).",
         "Emit each call's arguments once, as fragments keyed by a stable index."),
    Rule("XL-13", E, "strict:true on a schema that is not strict-compliant makes OpenAI answer 400.",
         "Transform the schema to the strict subset, or send strict:false."),
    Rule("XL-14", E, "Opaque state (thoughtSignature, reasoning items, thinking blocks) must round-trip "
         "unchanged within its dialect.",
         "Replay the opaque items exactly as received."),
    Rule("XL-15", W, "Tool-result content that the target cannot carry (images in a Chat tool message, "
         "isError) is lost.",
         "Move media to a follow-up user message and express errors in the result text."),
]

RULES: dict[str, Rule] = {rule.id: rule for rule in _RULES}
