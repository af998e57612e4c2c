"""Gemini's rule records: each rule's catalogue entry (severity, why, fix, the provider's effect)
and its reference (title, evidence), in id order. `rules/catalogue.py` and `rules/reference.py`
collect them from the dialect's home; the rules that report them are in `rules.py`."""

from __future__ import annotations

from ...rules.catalogue import E, I, W, ACC, CHG, CLI, IGN, MAY, REJ, Rule

RULES = [
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
         "max_tokens, response_format, tool_choice; so are the fields only the other Google API takes, Vertex "
         "AI's retrieval or the Gemini API's store, and those the path's API version does not take: "
         "systemInstruction, tools or responseMimeType on the Gemini API's /v1/, mediaProcessing on Vertex's /v1/).",
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
    # Gemini Live (BidiGenerateContent, dialects/gemini/live.py): calls and answers across one socket.
    Rule("GM-22", E, "A toolResponse answers the model's toolCall by its id (\"the responses with the matching "
         "IDs\"); a functionResponse whose id no toolCall of this session asked for is an answer to nothing: the "
         "model is still waiting for its call's result.",
         "Answer with the id of the functionCall it is the result of (toolCall.functionCalls[].id).", MAY),
    Rule("GM-23", W, "A toolCall waits for its toolResponse; a new clientContent turn sent while a call is neither "
         "answered nor cancelled (toolCallCancellation) leaves the model without the result it asked for.",
         "Send the toolResponse for every pending call id before the next client turn.", CHG),
    Rule("GM-24", E, "A functionResponse carries the name of the call it answers; one whose name differs from the "
         "functionCall of the same id answers a different function than the one called.",
         "Echo the call's name with its id.", MAY),
]

REFERENCE: dict[str, tuple[str, tuple[str, ...]]] = {
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
        "google-genai's field descriptions \"This field is not supported in Gemini API\" / \"… in Vertex AI\" "
        "(gemini.json's `only`, written by `inspector.wire.specs.refresh gemini`)",
        "Per API version (gemini.json's `versions`, the version read from the path): the Gemini API's v1 from "
        "google-ai-generativelanguage's v1 protos (recorded 400s on /v1/: \"Unknown name \\\"systemInstruction\\\": "
        "Cannot find field.\", the same for tools, toolConfig and responseMimeType); Vertex AI's v1 and v1beta1 "
        "from the aiplatform discovery documents (google-api-python-client's discovery_cache, revision 20261106); "
        "v1beta and v1alpha take what google-genai's types give the Gemini API (their published protos lag: "
        "Google's media-resolution guide moved a part's mediaResolution from v1alpha only to v1beta)",
    )),
    'GM-20': ("The request matches google-genai's types", (
        '[S-GEM] (vendored in inspector/wire/specs as gemini.json)',
    )),
    'GM-21': ('generationConfig values within their ranges', (
        '[S-GEM] `GenerationConfig` (`temperature`, `top_p`, `max_output_tokens`)',
    )),
    'GM-22': ('A Live functionResponse answers a toolCall of the session', (
        '[D-GEM-LIVE]',
        '[S-GEM] `LiveServerToolCall.function_calls`, `FunctionResponse.id`',
    )),
    'GM-23': ('Every Live toolCall is answered before the next client turn', (
        '[D-GEM-LIVE] (BidiGenerateContentToolCall: "Request for the client to run the function calls and return '
        'the responses with the matching IDs"; BidiGenerateContentToolCallCancellation for the calls it withdraws)',
    )),
    'GM-24': ('A Live functionResponse keeps the name of its call', (
        '[D-GEM-LIVE]',
        '[S-GEM] `FunctionResponse.name`',
    )),
}
