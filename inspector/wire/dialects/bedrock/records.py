"""Bedrock Converse's rule records: each rule's catalogue entry (severity, why, fix, the provider's
effect) and its reference (title, evidence), in id order. `rules/catalogue.py` and
`rules/reference.py` collect them from the dialect's home; the rules that report them are in
`rules.py` and `stream.py`."""

from __future__ import annotations

from ...rules.catalogue import CLI, E, REJ, W, Rule

_MODEL = "botocore's service model bedrock-runtime (botocore/data/bedrock-runtime/2023-09-30/service-2.json)"

RULES = [
    Rule("BR-01", E, "toolConfig.tools is a non-empty list of {toolSpec: {name, description?, inputSchema: {json: "
         "<JSON Schema>}}} (or systemTool, cachePoint); the schema is wrapped in `json` and its root is an object.",
         "Send each tool as {\"toolSpec\": {\"name\": …, \"inputSchema\": {\"json\": {\"type\": \"object\", …}}}}.",
         REJ),
    Rule("BR-02", E, "Bedrock checks tool names against [a-zA-Z0-9_-]+, 1 to 64 characters (ToolName): a name with "
         "a dot or a slash (an MCP server's prefix) is refused with a ValidationException.",
         "Give the tool a reversible alias and map it back on toolUse blocks.", REJ),
    Rule("BR-03", E, "Tool names are unique within toolConfig.tools.",
         "Keep one declaration per name (dedupe, or prefix with the server id).", REJ),
    Rule("BR-04", E, "A toolUse block is {toolUseId, name, input} in an assistant message: toolUseId matches "
         "[a-zA-Z0-9_.:-]+ (at most 64, unique in the request) and input is a JSON object.",
         "Send input as an object (decode a JSON string once) and rewrite ids to the allowed charset.", REJ),
    Rule("BR-05", E, "A toolResult in a user message answers a toolUse of the assistant message before it, by its "
         "toolUseId, once: Bedrock refuses a result whose id no toolUse in the previous turn carries.",
         "Drop the orphan result or restore the toolUse it answers.", REJ),
    Rule("BR-06", E, "Every toolUse is answered by a toolResult in the next user message; Bedrock refuses a history "
         "with a toolUse left unanswered.",
         "Answer every toolUse in the next user message (a toolResult with status error if need be).", REJ),
    Rule("BR-07", E, "\"The toolConfig field must be defined when using toolUse and toolResult content blocks.\"",
         "Send the toolConfig of the conversation's tools with every request whose history holds tool blocks.",
         REJ),
    Rule("BR-08", E, "toolChoice is one of {auto: {}}, {any: {}} or {tool: {name}} naming a declared tool; there is "
         "no \"none\" (leave toolConfig out to keep the model from calling tools); and the path's model takes the "
         "member (Meta Llama models neither tool nor any, Mistral and gpt-oss models no tool).",
         "Use a Converse toolChoice shape (OpenAI \"required\" -> any, named -> tool).", REJ),
    Rule("BR-09", E, "messages is a list of {role: user|assistant, content: [content blocks]}; each block holds "
         "exactly one member (text, image, document, toolUse, toolResult, …); a toolResult's content is a list of "
         "{json}, {text}, {image}, {document}, {video} or {searchResult} blocks and its status success or error; "
         "and the path's model takes the media block where it sits (Nova no document or video from s3Location "
         "inside a toolResult, Claude no document from s3Location outside one, no image from s3Location, no video).",
         "Send content as a list of one-member blocks; a tool's output as [{\"text\": …}] or [{\"json\": {…}}].",
         REJ),
    Rule("BR-10", E, "ConverseStream clients (boto3) join contentBlockDelta toolUse.input fragments per "
         "contentBlockIndex and parse them as one JSON object when the block stops, and read stopReason: "
         "'tool_use' exactly when the answer holds toolUse blocks (or 'max_tokens': cut at the limit, maybe "
         "mid-call).",
         "Send contentBlockStart (toolUseId, name), the input's fragments and contentBlockStop per block, and "
         "stopReason tool_use when toolUse blocks were sent.", CLI, {W: CLI}),
    Rule("BR-11", E, "ConverseStream delivers errors met mid-answer as exception events inside the HTTP 200 "
         "(modelStreamErrorException, throttlingException, …); botocore raises them and the answer is cut.",
         "Retry the turn; a throttlingException asks to slow down.", CLI),
    Rule("BR-12", E, "inferenceConfig holds maxTokens of at least 1, temperature and topP between 0 and 1, or Bedrock "
         "refuses the request with a ValidationException.",
         "Send values within the ranges InferenceConfiguration gives.", REJ),
    # The spec layer (rules/spec.py): the whole request against botocore's model of ConverseRequest.
    Rule("BR-13", E, "Bedrock validates the request against its service model and answers a ValidationException "
         "naming the field ({{dots}}; it holds {{value}}); boto3 refuses it before sending.",
         "Send the field in the shape botocore's ConverseRequest gives.", REJ),
    Rule("BR-14", E, "A ConverseResponse is {output: {message: {role, content: [blocks]}}, stopReason, usage, "
         "metrics}; boto3 parses it by the service model and the agent reads output.message.content.",
         "Send the response in the shape botocore's ConverseResponse gives.", CLI),
]

REFERENCE: dict[str, tuple[str, tuple[str, ...]]] = {
    "BR-01": ("A tool is a toolSpec with inputSchema.json (Bedrock)", (
        f"{_MODEL}: `ToolConfiguration`, `Tool` (a union), `ToolSpecification`, `ToolInputSchema` (a union of json)",
        "https://docs.aws.amazon.com/bedrock/latest/userguide/tool-use-inference-call.html",
    )),
    "BR-02": ("Tool names match [a-zA-Z0-9_-]{1,64} (Bedrock)", (
        f"{_MODEL}: `ToolName` (pattern [a-zA-Z0-9_-]+, min 1, max 64)",
    )),
    "BR-03": ("Tool names are unique (Bedrock)", (
        "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolSpecification.html",
    )),
    "BR-04": ("A toolUse has a valid toolUseId, a name and an object input", (
        f"{_MODEL}: `ToolUseBlock` (toolUseId, name, input required), `ToolUseId` (pattern [a-zA-Z0-9_.:-]+, max 64)",
    )),
    "BR-05": ("A toolResult answers a toolUse of the previous message", (
        f"{_MODEL}: `ToolResultBlock` (toolUseId, content required)",
        "https://docs.aws.amazon.com/bedrock/latest/userguide/tool-use-inference-call.html (the result goes in the "
        "next user message with the toolUseId of the request)",
    )),
    "BR-06": ("Every toolUse gets a toolResult in the next user message", (
        "https://docs.aws.amazon.com/bedrock/latest/userguide/tool-use-inference-call.html",
    )),
    "BR-07": ("toolConfig is present when the history holds tool blocks", (
        "ValidationException text: \"The toolConfig field must be defined when using toolUse and toolResult content "
        "blocks.\"",
        f"{_MODEL}: `ToolConfiguration`",
    )),
    "BR-08": ("toolChoice is auto, any or tool (no none)", (
        f"{_MODEL}: `ToolChoice` (a union of auto, any, tool), `SpecificToolChoice` (name required); `ToolChoice.tool`: "
        "\"Only supported by Anthropic Claude 3 and Amazon Nova models.\"",
        "ValidationException texts recorded by clients that fall back: \"This model doesn't support the toolConfig."
        "toolChoice.tool field. Remove toolConfig.toolChoice.tool and try again.\" (litellm's Bedrock docs for "
        "mistral.mistral-large-2402-v1:0; us.meta.llama4-maverick-17b-instruct-v1:0, openai.gpt-oss-20b-1:0) and "
        "\"… toolConfig.toolChoice.any …\" (Meta Llama 3.1 70B, 3.3 70B and 4 Maverick in a public benchmark's "
        "table of model errors; https://github.com/strands-agents/harness-sdk/issues/1241)",
    )),
    "BR-09": ("Messages and tool results have Converse's content blocks", (
        f"{_MODEL}: `Message`, `ContentBlock` (a union), `ToolResultContentBlock` (a union), `ToolResultStatus`",
        "pydantic/pydantic-ai:tests/models/cassettes/test_multimodal_tool_returns/test_multimodal_tool_return_matrix"
        "[…-bedrock_nova|…-bedrock_claude].yaml (each media block and source, in and beside a toolResult, sent to "
        "us.amazon.nova-2-lite-v1:0 and us.anthropic.claude-sonnet-4-5-20250929-v1:0: the 400s \"Malformed input "
        "request: #/messages/2/content/0: extraneous key [toolResult] is not permitted\", \"messages.2.content.2."
        "document.source.type: Field required\", \"This model doesn't support the s3Uri field\" and \"… the video "
        "content block\", and the 200s beside them)",
    )),
    "BR-10": ("Streamed toolUse input fragments and stopReason", (
        f"{_MODEL}: `ConverseStreamOutput`, `ContentBlockStartEvent`, `ToolUseBlockDelta` (input: a string), "
        "`MessageStopEvent`, `StopReason`",
        "https://docs.aws.amazon.com/bedrock/latest/userguide/conversation-inference-call.html (ConverseStream)",
    )),
    "BR-11": ("Exceptions inside a ConverseStream answer", (
        f"{_MODEL}: `ConverseStreamOutput` members internalServerException, modelStreamErrorException, "
        "validationException, throttlingException, serviceUnavailableException",
        "botocore/eventstream.py (an :message-type exception frame is raised as the named error)",
    )),
    "BR-12": ("Inference values within their ranges (Bedrock)", (
        f"{_MODEL}: `InferenceConfiguration` (maxTokens min 1, temperature and topP 0..1)",
    )),
    "BR-13": ("The request matches botocore's model of ConverseRequest", (
        f"{_MODEL}: `ConverseRequest`, `ConverseStreamRequest` (read as JSON Schema by dialects/bedrock/spec.py)",
        "botocore/validate.py (boto3's ParamValidationError before the request is sent)",
    )),
    "BR-14": ("A Converse response has its output message, usage and metrics", (
        f"{_MODEL}: `ConverseResponse` (output, stopReason, usage, metrics required), `ConverseOutput`, `Message`",
    )),
}
