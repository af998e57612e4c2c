"""OpenAI Responses's rule records: each rule's catalogue entry (severity, why, fix, the provider's effect)
and its reference (title, evidence), in id order. `rules/catalogue.py` and `rules/reference.py`
collect them from the dialect's home; the rules that report them are in `rules.py`."""

from __future__ import annotations

from ...rules.catalogue import NULL_READ_AS_ABSENT, E, I, W, ACC, CHG, CLI, IGN, MAY, REJ, Rule

RULES = [
    Rule("OR-01", E, "Each Responses tool type has required fields; unknown types are rejected.",
         "Fill the required fields of the tool type, or drop the tool with a warning.", REJ),
    Rule("OR-02", E, "A Responses function tool is flat, {\"type\":\"function\",\"name\",\"parameters\",…} with "
         "parameters a JSON Schema object that has properties at its root; the nested Chat shape is invalid here, "
         "and OpenAI answers 400 naming '{{path}}' (\"object schema missing properties\" for a bare object).",
         "Move name/description/parameters/strict up out of \"function\"; declare a function without arguments "
         "as {\"type\":\"object\",\"properties\":{}}.", REJ),
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
         why_at={I: NULL_READ_AS_ABSENT}),
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
    # OpenAI Realtime (GA; dialects/openai_responses/realtime.py): the events of one socket.
    Rule("RT-01", E, "A function_call_output item answers the function_call the server announced with that "
         "call_id (response.output_item.*, conversation.item.*); an output for a call_id this session never "
         "announced pairs with no call, and the model never reads it as a call's result.",
         "Send the call_id of the function_call item the output answers.", MAY),
    Rule("RT-02", W, "The model answers a function_call after reading its function_call_output; a response.create "
         "sent while a call has no output yet starts a response without the result it asked for.",
         "Create every pending call's function_call_output (conversation.item.create) before response.create.",
         CHG),
    Rule("RT-03", E, "A Realtime conversation has one active response at a time: a response.create before the "
         "active one's response.done is refused (error conversation_already_has_active_response, \"Conversation "
         "already has an active response in progress … Wait until the response is finished\"), and no "
         "response.done follows it.",
         "Wait for response.done (or send response.cancel and wait for its response.done) before the next "
         "response.create; with server VAD the server may have created one already.", REJ),
    Rule("RT-04", E, "The Realtime beta is shut down: OpenAI-Beta: realtime=v1 asks for it, and beta event names "
         "(response.text.delta, response.audio.delta, response.audio_transcript.*, conversation.item.created) are "
         "not the GA names a GA client waits for (response.output_text.*, response.output_audio.*, "
         "response.output_audio_transcript.*, conversation.item.added).",
         "Drop realtime=v1 from OpenAI-Beta and speak the GA event names.", REJ),
    Rule("RT-05", E, "Realtime tools are flat, {\"type\":\"function\",\"name\",\"description\",\"parameters\"}, "
         "and tool_choice is auto|none|required or {\"type\":\"function\",\"name\"}; the Chat shape (under "
         "function) leaves the tool without a name and the session.update is refused at '{{path}}'.",
         "Move name, description and parameters up beside type.", REJ),
]

REFERENCE: dict[str, tuple[str, tuple[str, ...]]] = {
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
    'RT-01': ('A Realtime function_call_output answers an announced call_id', (
        '[S-OAI-PY-RT] `realtime_conversation_item_function_call_output.py` (call_id)',
        '[D-OAI-RT]',
    )),
    'RT-02': ('Realtime calls get their output before the next response.create', (
        '[D-OAI-RT] (function calling: add the function_call_output, then response.create)',
        'https://github.com/pipecat-ai/pipecat/pull/3960',
    )),
    'RT-03': ('One active Realtime response at a time', (
        '[S-OAI-PY-RT] `realtime_error_event.py`',
        'https://github.com/openai/openai-agents-python/issues/1466',
        'https://github.com/livekit/agents/issues/6817',
        'https://github.com/pipecat-ai/pipecat/pull/3960',
    )),
    'RT-04': ('GA Realtime sessions speak no beta', (
        '[D-OAI-RT] (GA event names; the beta header realtime=v1)',
        'https://github.com/twilio-samples/speech-assistant-openai-realtime-api-node/pull/40',
    )),
    'RT-05': ('Realtime tools are flat function definitions', (
        '[S-OAI-PY-RT] `realtime_function_tool.py` (type, name, description, parameters)',
    )),
}
