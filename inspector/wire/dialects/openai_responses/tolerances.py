"""Where OpenAI Responses endpoints accept what the published definition refuses (the kinds and how the
spec layer reads them: rules/tolerance.py)."""

from ...rules.tolerance import Tolerance

_RUBY_LLM = "crmne/ruby_llm:spec/fixtures/vcr_cassettes/"
_PYDANTIC_AI = "pydantic/pydantic-ai:tests/models/cassettes/test_openai_responses/"

TOLERANCES = (
    Tolerance("default", "InputImageContent", "detail",
              _RUBY_LLM + "activerecord_actsas_attachment_handling_handles_attachments_in_ask_method.yml "
              "(an input_image without detail, answered 200); the SDK's ResponseInputImage: \"Defaults to auto\""),
    Tolerance("param", "InputImageContent", "InputImageContentParamAutoParam",
              "openai.json itself: the request param the document defines for an input image (detail optional)"),
    Tolerance("param", "InputFileContent", "InputFileContentParam",
              "openai.json itself: the request param the document defines for an input file"),
    Tolerance("param", "FunctionTool", "FunctionToolParam",
              _PYDANTIC_AI + " (function tools without strict, 14 requests answered 200): strict defaults"),
    Tolerance("output-only", "ReasoningItem", "id",
              _RUBY_LLM + "chat_basic_chat_functionality_openai_gpt-5-nano_can_handle_multi-turn_conversations.yml "
              "(store: false, a reasoning item with encrypted_content and no id replayed, answered 200)"),
    Tolerance("output-only", "OutputMessage", "id",
              "https://platform.openai.com/docs/guides/conversation-state (assistant output replayed as input "
              "by content alone); " + _RUBY_LLM + "chat_basic_chat_functionality_openai_gpt-5-nano_"
              "can_handle_multi-turn_conversations.yml"),
    Tolerance("output-only", "OutputMessage", "status",
              "as OutputMessage.id: the API sets status on the items it returns"),
    Tolerance("output-only", "ImageGenToolCall", "status",
              _PYDANTIC_AI + "test_openai_responses_image_generation_with_tools.yaml (replayed by id and type)"),
    Tolerance("output-only", "ImageGenToolCall", "result",
              _PYDANTIC_AI + "test_openai_responses_image_generation_with_tools.yaml (replayed by id and type)"),
    Tolerance("typo", "MCPApprovalResponse", "request_id",
              "openai.json: MCPApprovalResponse requires request_id but defines approval_request_id, the field "
              "https://platform.openai.com/docs/guides/tools-remote-mcp shows clients sending"),
    Tolerance("typo", "LocalShellToolCallOutput", "call_id",
              "openai.json: LocalShellToolCallOutput requires call_id but defines only id, output, status and type, "
              "the fields of openai-python's LocalShellCallOutput (types/responses/response_input_item_param.py)"),
    Tolerance("undocumented", None, "client_metadata",
              "openai/codex (codex-rs/codex-api builds the Responses request Codex sends api.openai.com); relays "
              "of that traffic in public code carry `\"client_metadata\":{\"codex_version\":…}` on accepted "
              "requests; issue 18's recorded Codex traffic, answered 200"),
    Tolerance("history", None, "assistant output parts", where=r"/input/\d+/content/\d+",
              keyword="oneOf", evidence="pydantic/pydantic-ai:tests/models/cassettes/test_openai_responses/ "
              "(18 requests answered 200: an assistant message's output_text/refusal parts replayed as an "
              "EasyInputMessage, whose schema lists only input parts)", values=("output_text", "refusal"),
              item=(("role", "assistant"),)),
)
