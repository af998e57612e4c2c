"""Every rule the checker knows: default severity, why (the contract and the provider's answer), the
usual fix, and what the provider does (its effect) at each severity the rule is reported at. docs/rules.md is
generated from it; a finding may override why and hint when its case differs (a more specific
hint), and its severity when a profile makes it worse or milder, which picks the effect for it.

A why describes the rule's contract, never one instance of it: where it quotes the provider's error,
the value and place come from the finding ({{value}}, {{path}}, ... : `base.facts`)."""

from __future__ import annotations

from dataclasses import dataclass, field

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


# Whys shared by rules that report the same variant in several dialects.
_GENAI_KEYWORD = ("{{key}}: {{value}} is genai Schema, not JSON Schema; the provider accepts the schema and ignores "
                  "the keyword, so what it says (nullability, property order, an enum format) is lost to the model.")
_EMPTY_REJECTED = "{{key}}: [] is rejected (\"[] is too short\"): the API needs at least one item."
_EMPTY_IGNORED = "{{key}}: [] declares nothing; the API accepts it and ignores it."
_NULL_READ_AS_ABSENT = "{{key}} is not nullable in the published schema; OpenAI reads null as absent."

_RULES = [
    # OpenAI Chat Completions
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
    Rule("OC-05", E, "parameters must be a JSON Schema object with lower-case types; OpenAI validates it and "
                     "answers 400 "
         "naming the value ({{value}} at '{{path}}' \"is not valid under any of the given schemas\").",
         "Convert the genai Schema to JSON Schema: lower-case types, nullable → [\"x\",\"null\"], "
         "drop propertyOrdering.", REJ, {W: IGN},
         why_at={W: _GENAI_KEYWORD}),
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
         why_at={E: _EMPTY_REJECTED, W: _EMPTY_IGNORED}),
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
         why_at={I: _NULL_READ_AS_ABSENT}),
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
    # OpenAI Responses
    Rule("OR-01", E, "Each Responses tool type has required fields; unknown types are rejected.",
         "Fill the required fields of the tool type, or drop the tool with a warning.", REJ),
    Rule("OR-02", E, "A Responses function tool is flat, {\"type\":\"function\",\"name\",\"parameters\",…} with "
         "parameters a JSON Schema object; the nested Chat shape is invalid here, and OpenAI answers 400 naming "
         "'{{path}}'.",
         "Move name/description/parameters/strict up out of \"function\".", REJ),
    Rule("OR-03", E, "Responses checks names against ^[a-zA-Z0-9_-]+$ (\"string does not match pattern\").",
         "Give the tool a reversible alias and map it back on function_call items.", REJ),
    Rule("OR-04", E, "tool_choice must be none|auto|required, a flat {\"type\":\"function\",\"name\"}, "
         "allowed_tools, a hosted tool type, mcp or custom.",
         "Use the flat {\"type\":\"function\",\"name\":…} and name a declared tool.", REJ),
    Rule("OR-05", E, "Responses input has no role:\"tool\" (\"Invalid value: {{value}}. Supported values are: "
                     "'assistant', "
         "'system', 'developer', and 'user'.\").",
         "Send tool results as {\"type\":\"function_call_output\",\"call_id\",\"output\"} items.", REJ),
    Rule("OR-06", E, "A function_call item needs type, call_id, name and arguments (a string), and a replayed id "
                     "must begin "
         "with 'fc'; OpenAI answers 400 naming '{{path}}'.",
         "Fill call_id/name/arguments; drop an id that is not an fc_ id.", REJ, {W: MAY},
         why_at={W: "OpenAI answers 400 for a replayed function_call id that does not begin with 'fc' (\"Expected "
                    "an ID "
                "that begins with 'fc'\"); this endpoint makes its own ids and accepts {{value}}."}),
    Rule("OR-07", E, "A function_call_output needs call_id (1..64 chars) and output: a string (at most 10,485,760 "
         "characters) or input_text/input_image/input_file parts; OpenAI answers 400 naming '{{path}}'.",
         "Send the result as a string or a list of input parts with the call's call_id.", REJ),
    Rule("OR-08", E, "Pairing is checked server-side: \"No tool call found for function call output\" / "
         "\"No tool output found for function call\".",
         "Answer every function_call with a function_call_output right after it; drop orphan outputs.", REJ),
    Rule("OR-09", E, "A replayed function_call that followed a reasoning item needs that item (\"Item provided "
         "without its required 'reasoning' item\").",
         "Replay reasoning items unchanged, or drop the id of the dependent call.", REJ),
    Rule("OR-10", E, "Streamed argument deltas are keyed by item_id/output_index, not call_id; mis-keyed or "
         "inconsistent events corrupt the arguments a client rebuilds.",
         "Emit output_item.added, then deltas and done with the item's id, and a done text equal to the "
         "concatenated deltas.", CLI),
    Rule("OR-11", I, "previous_response_id (or conversation) keeps the history server-side: calls and outputs "
         "in it cannot be paired from this request alone.",
         "A proxy that bridges to Chat must rebuild the history, and with it the pairing.", ACC),
    Rule("OR-12", E, "A function_call output item needs a name: a client cannot dispatch a nameless call, so a "
         "response holding one is not a usable completed response.",
         "Carry the name of every call through, or end the response as failed/incomplete.", CLI),
    # The spec layer (rules/spec.py): the whole request against OpenAI's published OpenAPI document.
    Rule("OR-13", E, "api.openai.com validates the request against its published schema and answers 400 naming the "
                     "field "
         "(\"Invalid '{{path}}'…\"; it holds {{value}}).",
         "Send the field in the shape and range the schema gives (openai-openapi's CreateResponse).", REJ, {I: IGN},
         why_at={I: _NULL_READ_AS_ABSENT}),
    Rule("OR-14", E, "The Responses API rejects fields it does not define (\"Unknown parameter: '{{path}}'.\"); Chat's "
         "spellings are the usual cause (response_format is text.format here, max_tokens is max_output_tokens, "
         "messages is input).",
         "Remove the field, or move it where Responses takes it (response_format → text.format, "
         "max_tokens → max_output_tokens, messages → input).", REJ),
    # Turn rules, for a JSON body and a reassembled stream alike (issue 10).
    Rule("OR-15", W, "A completed response carries at least one message with content or one call; reasoning "
         "items alone give the agent nothing to show or run (clients read output_text as \"\" and stop).",
         "Return the message or the calls the model produced, or end the response as incomplete/failed with "
         "its reason.", CLI),
    Rule("OR-16", E, "An input_file's file_data must be a base64 data URL of a document type; recorded: \"Invalid "
         "file data: … Expected a base64-encoded data URL with a valid file MIME type … but got unsupported MIME "
         "type 'audio/mpeg'\".",
         "Send data:<type>;base64,… with a document type (PDF, text, office files); audio goes in input_audio.", REJ),
    Rule("OR-17", E, "A replayed reasoning item must be followed by the output item the model produced after it "
         "(its message or call, with its id); recorded: \"Item 'rs_…' of type 'reasoning' was provided without its "
         "required following item.\"",
         "Replay the output items unchanged, ids included, or drop the reasoning item with the turn it belongs to.",
         REJ),
    Rule("OR-18", E, "An assistant message replayed as input holds the model's own parts: the API answers 400 "
         "(\"Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.\") for an input "
         "part there.",
         "Write assistant text as output_text; move images and files to a user message.", REJ),
    Rule("OR-19", E, "The Responses API answers 400 for {{key}} {{value}} (\"Invalid '{{path}}': … Expected a value …\"): "
         "max_output_tokens starts at 16, where Chat takes 1, temperature goes from 0 to 2 and top_p from 0 to 1.",
         "Send max_output_tokens of at least 16 (a Chat or Anthropic client's smaller max_tokens included) and "
         "sampling values within their ranges.", REJ),
    Rule("OR-20", E, "JSON mode needs the prompt to ask for JSON: with {{value}} at '{{path}}' the Responses API "
         "answers 400 as Chat does (the input messages \"must contain the word 'json' in some form\"). The word "
         "counts in instructions and in any input item, in any case.",
         "Say in instructions or a message that the answer is JSON, or use a json_schema text format.", REJ),
    # Anthropic
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
         "message\".",
         "Remove the empty message or give it content.", REJ),
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
    # Gemini
    Rule("GM-01", E, "Vertex allows at most 128 function declarations, and some tool kinds exist only on "
         "one of the Gemini API / Vertex.",
         "Send at most 128 declarations and only tool kinds the endpoint supports.", REJ),
    Rule("GM-02", E, "\"Invalid function name. Must start with a letter or an underscore. Must be a-z, A-Z, "
         "0-9, or contain underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.\"",
         "Give the function a reversible alias within the Gemini name rule.", REJ),
    Rule("GM-03", I, "parameters is a genai Schema (OpenAPI 3.0 subset); type values are case-insensitive.",
         "Use the Schema fields, or parametersJsonSchema for full JSON Schema.", ACC),
    Rule("GM-04", E, "Gemini parses parameters proto-strictly: unknown keywords, type arrays, \"null\" types, "
         "properties/enum in the wrong place give 400 naming the field ('{{path}}', which holds {{value}}).",
         "Strip or rewrite the keyword (const → enum, [\"x\",\"null\"] → nullable), or use parametersJsonSchema.", REJ),
    Rule("GM-05", E, "parametersJsonSchema and parameters are mutually exclusive.",
         "Send only one of them.", REJ),
    Rule("GM-06", E, "Vertex requires the parameters root to be OBJECT (\"parameters schema should be of type "
         "OBJECT\"); mode ANY needs parameters on every declaration.",
         "Wrap the parameters in an OBJECT schema.", REJ),
    Rule("GM-07", E, "Content roles are only user and model (\"Please use a valid role: user, model.\"), but for "
         "the legacy role function on a turn of functionResponse parts; functionCall parts go in model turns, "
         "functionResponse parts in user turns.",
         "Use role user/model and put each part in the turn of its side.", REJ),
    Rule("GM-08", E, "A functionCall part is {functionCall:{name,args:<object>,id?}, thoughtSignature?}; "
         "Gemini 3 rejects replayed calls without their signature.",
         "Send args as an object and keep thoughtSignature beside functionCall, unchanged.", REJ, {W: MAY},
         why_at={W: "Gemini 3 models reject a replayed functionCall without its thoughtSignature; earlier models "
                "accept it, and the model of this request is not known to reject."}),
    Rule("GM-09", E, "A functionResponse needs name and response as a JSON object (\"Proto field is not "
         "repeating, cannot start list\").",
         "Wrap the result: {\"output\": …} (or {\"error\": …}).", REJ),
    Rule("GM-10", E, "A function-call turn must follow a user or function-response turn, and be answered by "
         "the next turn with as many functionResponse parts as it had functionCall parts.",
         "Answer every call in the next user turn, one functionResponse per functionCall, same names.", REJ),
    Rule("GM-11", E, "Newer models reject text next to functionResponse in one turn; on responses, reading "
         "only parts[0] loses text or calls.",
         "Move the text to its own user turn after the function responses; read every part.", REJ, {W: MAY, I: CLI},
         why_at={W: "Some models (Gemini 3) reject text next to functionResponse in one turn; the model of this "
                "request is not known to.", I: "A candidate may carry text and functionCall parts together; a "
                "client reading only parts[0] loses the rest."}),
    Rule("GM-12", W, "FunctionCall.id is optional; clients synthesise ids when absent and must keep them "
         "unique and echo real ids back.",
         "Echo functionCall.id in functionResponse.id; synthesise unique ids only when absent.", CHG, {I: CLI}),
    Rule("GM-13", E, "functionCallingConfig needs declarations, a mode AUTO|ANY|NONE|VALIDATED, and "
         "allowedFunctionNames only with ANY (naming declared functions).",
         "Send the config only with declarations; use allowedFunctionNames with mode ANY.", REJ, {W: MAY},
         why_at={W: "Some models reject this functionCallingConfig, others accept it; the model of this request "
                "is not known to reject."}),
    Rule("GM-14", E, "Duplicate function declarations are rejected with 400.",
         "Keep one declaration per name.", REJ),
    Rule("GM-15", W, "Each call arrives as a whole functionCall part, with no index; argument streaming "
         "(partialArgs/willContinue) is Vertex-only.",
         "Accumulate calls by part, never by \"current call\".", CLI),
    Rule("GM-16", W, "Gemini reads every field in lowerCamelCase and in snake_case (proto JSON); a field "
         "written in both spellings in one message is ambiguous.",
         "Write each field once, in one spelling.", CHG),
    Rule("GM-17", E, "Gemini's Schema subset: an ARRAY needs typed items, every node a type, formats are "
         "limited (STRING: enum, date-time), the parameters root must be an OBJECT (no object union), and "
         "Vertex rejects validation keywords beside anyOf.",
         "Give arrays typed items and nodes a type, drop other formats, merge a root object union, move "
         "keywords beside anyOf into its branches.", REJ, {W: MAY},
         why_at={W: "Gemini documents only some formats (STRING: enum, date-time); some models have rejected "
                "{{value}}, others ignore it."}),
    Rule("GM-18", W, "Gemini answers with no candidate, or a candidate with no parts, and finishReason STOP "
         "(no blockReason); clients read response.text as empty and an agent loop gets no turn.",
         "Retry the turn; read promptFeedback and finishReason before the parts.", CLI),
    # The spec layer (rules/spec.py): the whole request against google-genai's types.
    Rule("GM-19", E, "Gemini's JSON parser rejects fields its messages do not define: 400 \"Invalid JSON payload "
         "received. Unknown name \"…\": Cannot find field.\" (other dialects' spellings are the usual cause: "
         "max_tokens, response_format, tool_choice).",
         "Remove the field, or write it where Gemini takes it (maxOutputTokens in generationConfig, "
         "responseJsonSchema, toolConfig).", REJ),
    Rule("GM-20", E, "Gemini parses the request into its proto messages and answers 400 INVALID_ARGUMENT for a "
         "value of the wrong type or outside an enum (\"Invalid value at 'generation_config.temperature' (TYPE_FLOAT)\").",
         "Send the field in the type the message defines (google-genai's types name each one).", REJ, {I: IGN},
         why_at={I: "{{key}} takes no null in google-genai's types; Gemini's proto JSON parser reads null as the "
                "field's default."}),
    Rule("GM-21", E, "Gemini answers 400 INVALID_ARGUMENT for {{key}} {{value}}: generationConfig takes temperature "
         "from 0.0 to 2.0, topP from 0.0 to 1.0 and maxOutputTokens from 1 (the GenerationConfig reference).",
         "Send the value within its range (either spelling, maxOutputTokens or max_output_tokens).", REJ),
    # MCP
    Rule("MCP-01", E, "A tools/list result is {tools: Tool[], nextCursor?} (2026-07-28 adds resultType, "
         "cacheScope, ttlMs).",
         "Return tools as a list (and the 2026-07-28 fields together).", CLI),
    Rule("MCP-02", E, "A Tool needs name and inputSchema, a JSON object with type:\"object\" (never null); "
                      "outputSchema, "
         "when given, is an object schema, and annotation hints are booleans. Client SDKs validate the list and "
         "fail on '{{path}}'.",
         "Use {\"type\":\"object\",\"additionalProperties\":false} for a tool without arguments.", CLI),
    Rule("MCP-03", W, "Tool names SHOULD be 1–128 chars of A-Z a-z 0-9 _ - . and unique within a server; "
         "names with dots are invalid for OpenAI and Anthropic and need an alias there.",
         "Rename, or alias the tool when it crosses to another dialect.", MAY),
    Rule("MCP-04", E, "tools/call params are {name, arguments?: object, _meta…}.",
         "Send name and the arguments as a JSON object.", REJ),
    Rule("MCP-05", E, "A CallToolResult needs content: ContentBlock[] (text|image|audio|resource_link|resource); "
         "isError is a boolean.",
         "Return content as a list of typed blocks.", CLI),
    Rule("MCP-06", W, "With an outputSchema the server MUST return conforming structuredContent, and SHOULD "
         "also return the serialised JSON in a text block.",
         "Return structuredContent that matches outputSchema, plus its JSON in a text block.", CLI),
    Rule("MCP-07", I, "Unknown tools and malformed requests are JSON-RPC errors; tool failures are results with "
         "isError:true, which clients SHOULD feed back to the model.",
         "Report execution failures as isError results so the model can react.", ACC),
    Rule("MCP-08", E, "tools/call names a tool the same server's tools/list did not list; the server answers "
         "a JSON-RPC error (\"Unknown tool\") and the model's call fails.",
         "Call only listed tools; re-list after notifications/tools/list_changed; map aliased names back to "
         "the server's own.", REJ),
    # Cross-dialect
    Rule("XL-01", E, "JSON-Schema consumers (OpenAI, Anthropic, MCP) validate tool schemas as JSON Schema with "
         "lower-case types, and reject the schema at '{{path}}' (it holds {{value}}).",
         "Convert: lower-case types, nullable → [\"x\",\"null\"], drop propertyOrdering.", REJ, {W: IGN},
         why_at={W: _GENAI_KEYWORD}),
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
         why_at={E: _EMPTY_REJECTED, W: _EMPTY_IGNORED}),
    Rule("XL-11", E, "A named tool_choice must reference an existing tool in the target's shape.",
         "Name a declared (aliased) tool in the dialect's tool_choice shape.", REJ),
    Rule("XL-12", E, "Re-chunked streams must keep id/name on the first delta of every call, stable indices, "
         "no index -1 and no duplicate summary chunk (its arguments get counted twice).",
         "Emit each call's arguments once, as fragments keyed by a stable index.", CLI),
    Rule("XL-13", E, "strict:true on a schema that is not strict-compliant makes OpenAI answer 400.",
         "Transform the schema to the strict subset, or send strict:false.", REJ),
    Rule("XL-14", E, "Opaque state (thoughtSignature, reasoning items, thinking blocks) must round-trip "
         "unchanged within its dialect.",
         "Replay the opaque items exactly as received.", REJ),
    Rule("XL-15", W, "Tool-result content that the target cannot carry (images in a Chat tool message, "
         "isError) is lost.",
         "Move media to a follow-up user message and express errors in the result text.", CHG),
    # Rules that need the request and its response together (check.check_exchange).
    Rule("XL-16", E, "The response calls a tool the request did not declare: the client has no function to "
         "dispatch it to (agent frameworks raise \"tool not found\" or feed an error back), and a translator or "
         "alias map that lost a name is the usual cause.",
         "Restore the declared name (reverse the alias), or declare every tool the model may call.", CLI),
]

RULES: dict[str, Rule] = {rule.id: rule for rule in _RULES}
