"""analyse() is total: whatever crossed the wire, it returns facts, never raises."""

import gzip
import tracemalloc
import zlib

import brotli
import orjson
import pytest
import zstandard

from inspector.analysis import MAX_DECODED, Analysis, BodyTooLarge, analyse, calls, decode_body, from_stored, to_stored
from inspector.flow import Flow
from inspector.wire.dialect import Dialect


def _flow(path: str, body: bytes, **kw) -> Flow:
    return Flow(id=1, session_id=1, started_at=0.0, method="POST", path=path, request_body=body, **kw)


def test_chat_request_facts():
    body = orjson.dumps({"model": "gpt-test", "tools": [{"type": "function", "function": {"name": "a"}}] * 2})
    result = analyse(_flow("/v1/chat/completions", body))
    assert (result.dialect, result.model, result.tools, result.parse_error) == (
        Dialect.OPENAI_CHAT, "gpt-test", 2, None)


def test_non_json_request_is_a_parse_error_not_an_exception():
    result = analyse(_flow("/v1/chat/completions", b"{\"model\": \"x\""))
    assert result.request is None
    assert result.parse_error.startswith("request not valid JSON: ")


def test_gzip_request_is_decoded_for_analysis():
    body = gzip.compress(b'{"model": "gz"}')
    result = analyse(_flow("/v1/messages", body, request_headers=[("content-encoding", "gzip")]))
    assert (result.dialect, result.model) == (Dialect.ANTHROPIC, "gz")


def test_gemini_model_comes_from_the_path():
    result = analyse(_flow("/v1beta/models/gemini-2.5-flash:generateContent", b'{"contents": []}'))
    assert (result.dialect, result.model) == (Dialect.GEMINI, "gemini-2.5-flash")


def test_response_tool_calls_are_counted():
    response = orjson.dumps({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}}]}}]})
    result = analyse(_flow("/v1/chat/completions", b'{"model":"m"}', status=200, response_body=response,
                           response_headers=[("content-type", "application/json")]))
    assert result.tool_calls == 2


# --- each side judged by its own dialect and profile ---------------------------------------------

def _anthropic_thinking_request(tool_name: str = "get_weather") -> dict:
    """A Claude Code-style turn replayed through `--translate anthropic:openai-chat`: the assistant turn
    came from the forwarder's translated response, which had no thinking block to give."""
    return {"model": "claude-sonnet-4-5", "max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024},
            "tools": [{"name": tool_name, "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
            "messages": [
                {"role": "user", "content": "Weather in Oslo?"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": tool_name,
                                                   "input": {"city": "Oslo"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "4°C"}]}]}


def _translated(request: dict, response: dict) -> Flow:
    from inspector.flow import Mode
    from inspector.wire.translate import get_bridge

    sent = get_bridge("anthropic", "openai-chat").request(request, "/v1/messages")
    return _flow("/v1/messages", orjson.dumps(request), mode=Mode.TRANSLATE, translate="anthropic:openai-chat",
                 upstream_url="https://api.openai.com/v1/chat/completions",
                 upstream_request_body=orjson.dumps(sent.payload), status=200, response_body=orjson.dumps(response),
                 response_headers=[("content-type", "application/json")])


ANTHROPIC_ANSWER = {"id": "msg_1", "type": "message", "role": "assistant", "model": "gpt-4o",
                    "content": [{"type": "text", "text": "4°C in Oslo."}], "stop_reason": "end_turn",
                    "usage": {"input_tokens": 1, "output_tokens": 1}}


def test_translated_client_request_is_not_held_to_anthropics_opaque_state_rules():
    result = analyse(_translated(_anthropic_thinking_request(), ANTHROPIC_ANSWER))
    assert [(v.rule, v.where, v.pointer, v.severity.value) for v in result.violations] == []


def test_the_same_request_sent_to_anthropic_is_an_xl14_error():
    body = orjson.dumps(_anthropic_thinking_request())
    result = analyse(_flow("/v1/messages", body, upstream_url="https://api.anthropic.com/v1/messages"))
    assert [(v.rule, v.where, v.pointer, v.severity.value) for v in result.violations] == [
        ("XL-14", "request", "/messages/1/content/0", "error")]


def test_a_name_the_bridge_aliased_is_marked_repaired_and_the_restored_response_name_passes():
    answer = {**ANTHROPIC_ANSWER, "content": [{"type": "tool_use", "id": "toolu_2", "name": "get.weather",
                                               "input": {"city": "Rome"}}], "stop_reason": "tool_use"}
    result = analyse(_translated(_anthropic_thinking_request("get.weather"), answer))
    assert [(v.rule, v.where, v.pointer, v.severity.value, v.message.split(":")[0]) for v in result.violations] == [
        ("AN-02", "request", "/tools/0/name", "info", "repaired on the way"),
        ("AN-02", "request", "/messages/1/content/0/name", "info", "repaired on the way")]
    assert result.errors == 0


def test_gemini_model_from_the_path_decides_model_dependent_rules():
    body = orjson.dumps({"tools": [{"googleSearch": {}}], "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
                         "contents": [{"role": "user", "parts": [{"text": "news?"}]}]})
    verdicts = {model: [(v.rule, v.severity.value) for v in analyse(_flow(
        f"/v1beta/models/{model}:generateContent", body)).violations] for model in ("gemini-2.5-flash", "gemini-3-pro")}
    assert verdicts == {"gemini-2.5-flash": [("GM-13", "error")], "gemini-3-pro": [("GM-13", "warning")]}


def test_the_upstream_paths_gemini_api_version_decides_which_fields_the_request_may_carry():
    # /v1/ answers 400 "Unknown name \"systemInstruction\": Cannot find field."; /v1beta/ takes it.
    body = orjson.dumps({"systemInstruction": {"parts": [{"text": "Be brief."}]},
                         "contents": [{"role": "user", "parts": [{"text": "Hi"}]}]})
    verdicts = {version: [(v.rule, v.pointer, v.severity.value) for v in analyse(_flow(
        f"/{version}/models/gemini-2.5-flash:generateContent", body,
        upstream_url=f"https://generativelanguage.googleapis.com/{version}/models/gemini-2.5-flash:generateContent",
    )).violations] for version in ("v1", "v1beta")}
    assert verdicts == {"v1": [("GM-19", "/systemInstruction", "error")], "v1beta": []}


def test_bedrocks_model_from_the_path_decides_which_media_blocks_it_takes():
    # pydantic-ai's recorded matrix: Nova refuses a document from S3 inside a toolResult, Claude takes it.
    body = orjson.dumps({"toolConfig": {"tools": [{"toolSpec": {"name": "get_file", "inputSchema": {"json": {
        "type": "object"}}}}]}, "messages": [
        {"role": "user", "content": [{"text": "Get the file."}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "tooluse_1", "name": "get_file", "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1", "status": "success", "content": [
            {"document": {"name": "Document 1", "format": "pdf", "source": {"s3Location": {"uri": "s3://b/d.pdf"}}}}]}}]}]})
    verdicts = {}
    for model in ("us.amazon.nova-2-lite-v1%3A0", "arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile"
                  "%2Fus.anthropic.claude-sonnet-4-5-20250929-v1%3A0"):
        path = f"/model/{model}/converse"
        result = analyse(_flow(path, body, upstream_url="https://bedrock-runtime.us-east-1.amazonaws.com" + path))
        verdicts[result.model] = [(v.rule, v.pointer, v.severity.value) for v in result.violations]
    assert verdicts == {
        "us.amazon.nova-2-lite-v1:0": [("BR-09", "/messages/2/content/0", "error")],
        "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0": []}


# -- compressed bodies: decoded (bounded) for analysis, whatever the encoding ---------------------

CALLS_RESPONSE = orjson.dumps({"choices": [{"message": {"role": "assistant", "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
    {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}}]}}]})


def _zlib_deflate(data: bytes) -> bytes:
    return zlib.compress(data)


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-15)
    return packer.compress(data) + packer.flush()


ENCODERS = {
    "gzip": lambda d: gzip.compress(d, mtime=0),
    "deflate": _zlib_deflate,
    "br": lambda d: brotli.compress(d, quality=1),
    "zstd": lambda d: zstandard.ZstdCompressor(level=1).compress(d),
}


@pytest.mark.parametrize("encoding", [*ENCODERS, "x-gzip", "raw deflate", "gzip, br", "zstd,gzip", "two gzip members"])
def test_compressed_responses_are_decoded_for_analysis(encoding):
    if encoding == "raw deflate":
        body, header = _raw_deflate(CALLS_RESPONSE), "deflate"
    elif encoding == "two gzip members":
        half = len(CALLS_RESPONSE) // 2
        body = gzip.compress(CALLS_RESPONSE[:half], mtime=0) + gzip.compress(CALLS_RESPONSE[half:], mtime=0)
        header = "gzip"
    else:
        body, header = CALLS_RESPONSE, encoding
        for name in (n.strip() for n in encoding.split(",")):
            body = ENCODERS["gzip" if name == "x-gzip" else name](body)
    headers = [("content-type", "application/json"), ("content-encoding", header)]
    assert decode_body(body, headers) == CALLS_RESPONSE
    result = analyse(_flow("/v1/chat/completions", b'{"model":"m"}', status=200, response_body=body,
                           response_headers=headers))
    assert (result.tool_calls, result.parse_error) == (2, None)


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
def test_a_decompression_bomb_is_refused_with_bounded_memory(encoding):
    bomb = ENCODERS[encoding](b"\0" * (MAX_DECODED + (16 << 20)))
    headers = [("content-type", "application/json"), ("content-encoding", encoding)]
    tracemalloc.start()
    try:
        with pytest.raises(BodyTooLarge):
            decode_body(bomb, headers)
        result = analyse(_flow("/v1/chat/completions", b'{"model":"m"}', status=200, response_body=bomb,
                               response_headers=headers))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * MAX_DECODED
    assert result.parse_error == f"response body too large to analyse after decompression (over {MAX_DECODED} bytes)"
    assert result.response is None


def test_a_body_that_is_not_what_its_encoding_says_is_analysed_as_received():
    headers = [("content-type", "application/json"), ("content-encoding", "br")]
    assert decode_body(CALLS_RESPONSE, headers) == CALLS_RESPONSE
    result = analyse(_flow("/v1/chat/completions", b'{"model":"m"}', status=200, response_body=CALLS_RESPONSE,
                           response_headers=headers))
    assert result.tool_calls == 2


def test_a_compressed_request_too_large_to_decode_is_a_parse_error():
    bomb = gzip.compress(b"\0" * (MAX_DECODED + 1))
    result = analyse(_flow("/v1/messages", bomb, request_headers=[("content-encoding", "gzip")]))
    assert result.parse_error == f"request body too large to analyse after decompression (over {MAX_DECODED} bytes)"


# --- the request and the response judged together (check.check_exchange) ---------------------------

def test_a_translated_answer_calling_a_tool_the_client_never_declared_is_xl16():
    """The bridge restores declared names (the test above); a name it did not know reaches the client
    as is, and the client has no function for it."""
    answer = {**ANTHROPIC_ANSWER, "content": [{"type": "tool_use", "id": "toolu_2", "name": "get_weather_v2",
                                               "input": {"city": "Rome"}}], "stop_reason": "tool_use"}
    result = analyse(_translated(_anthropic_thinking_request(), answer))
    assert [(v.rule, v.where, v.pointer, v.severity.value, v.effect.value) for v in result.violations] == [
        ("XL-16", "response", "/content/0/name", "error", "breaks client")]


def _chat_stream(*deltas: dict, finish: str) -> bytes:
    chunks = [{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas]
    chunks[-1]["choices"][0]["finish_reason"] = finish
    return b"".join(b"data: " + orjson.dumps(chunk) + b"\n\n" for chunk in chunks) + b"data: [DONE]\n\n"


@pytest.mark.parametrize(("status", "finish", "expected"), [
    (200, "stop", [("OC-25", "response", "/choices/0/message", "error")]),
    (200, "length", []),  # truncated: it says itself why there is nothing
    (429, "stop", []),  # an error answer is the provider's verdict, not a turn to judge
])
def test_an_empty_streamed_turn_is_judged_on_the_reassembled_response(status, finish, expected):
    stream = _chat_stream({"role": "assistant"}, {}, finish=finish)
    result = analyse(_flow("/v1/chat/completions", b'{"model":"m","messages":[{"role":"user","content":"hi"}]}',
                           status=status, streamed=True, response_body=stream,
                           response_headers=[("content-type", "text/event-stream")]))
    assert [(v.rule, v.where, v.pointer, v.severity.value) for v in result.violations] == expected
    assert result.response["choices"][0]["message"] == {"role": "assistant", "content": None}


def test_a_stored_analysis_that_cannot_be_read_back_is_analysed_again():
    """The store file is anyone's to write: what is not a stored analysis of this build is ignored."""
    flow = _flow("/v1/chat/completions", orjson.dumps({"model": "gpt-test", "messages": []}))
    fresh = analyse(flow)
    stored = to_stored(fresh, flow)
    assert stored is not None and b'"rule":"OC-28"' in stored
    assert from_stored(flow, stored) == fresh
    for hostile in (b"", b"[]", b'{"version": 1}', b'{"version": 99}', b"\xff",
                    stored.replace(b'"rule":"OC-28"', b'"rule":28'), stored.replace(b'"error"', b'"fatal"'),
                    stored.replace(b'"dialect":"openai-chat"', b'"dialect":"cobol"')):
        before = calls.copy()
        assert from_stored(flow, hostile) == fresh
        assert (calls - before)["analyse"] == 1


def test_a_reassembled_answer_nested_past_what_orjson_writes_is_not_stored():
    deep: object = "x"
    for _ in range(300):
        deep = {"a": deep}
    flow = _flow("/v1/chat/completions", b"{}", streamed=True)
    assert to_stored(Analysis(response=deep), flow) is None


def test_the_errors_a_fixed_request_has_left_are_counted_once_with_the_flow_and_stored():
    """Issue 21: the fixed diff's "N errors left" checked every repaired request again wherever it
    was shown (a thousand times in a page); the analysis counts them once and the store keeps it."""
    from inspector.analysis import fixed_errors, safe_repairs

    body = {"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}, {"role": "wizard", "content": "x"}],
            "tools": [{"type": "function", "function": {"name": "get", "parameters": {
                "type": "OBJECT", "properties": {"q": {"type": "STRING"}}}}}]}
    flow = _flow("/v1/chat/completions", orjson.dumps(body))
    before = calls.copy()
    fresh = analyse(flow)
    assert (calls - before)["fixed-check"] == 1
    # Two OC-05 that the repair fixes, and an unknown role (OC-28) that no repair can.
    assert ([v.rule for v in fresh.violations], fresh.fixed_errors_) == (["OC-05", "OC-05", "OC-28"], 1)
    stored = from_stored(flow, to_stored(fresh, flow))
    assert stored.fixed_errors_ == 1
    repaired = safe_repairs(stored)
    assert repaired is not None and len(repaired.repairs) == 2
    before = calls.copy()
    assert fixed_errors(stored, repaired) == 1
    assert (calls - before)["fixed-check"] == 0
    # Nothing to repair: nothing counted.
    clean = analyse(_flow("/v1/chat/completions", orjson.dumps({"model": "gpt-test", "messages": [
        {"role": "user", "content": "hi"}]})))
    assert clean.fixed_errors_ is None
    # A count the file says is not one is no stored analysis of this build.
    hostile = to_stored(fresh, flow).replace(b'"fixed_errors":1', b'"fixed_errors":-1')
    before = calls.copy()
    assert from_stored(flow, hostile) == fresh
    assert (calls - before)["analyse"] == 1


# --- a path no dialect claims: told by shape only when the answer bears the same dialect -------------
_EMBEDDING = orjson.dumps({"model": "text-embedding-3-small", "input": ["file_path: a.py", "file_path: b.py"],
                           "encoding_format": "base64"})
_EMBEDDED = orjson.dumps({"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": "AAAA"}],
                          "model": "text-embedding-3-small", "usage": {"prompt_tokens": 8, "total_tokens": 8}})
_RESPONSES = orjson.dumps({"model": "gpt-5", "input": [{"role": "user", "content": "Hi"}], "tools": [
    {"type": "function", "name": "get weather", "parameters": {"type": "object", "properties": {}}}]})
_RESPONDED = orjson.dumps({"id": "resp_1", "object": "response", "status": "completed", "output": [
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hi."}]}]})
# Nova's InvokeModel body (messages-v1), as traceloop/openllmetry's test_nova cassettes hold it: Converse-like
# fields Converse itself refuses.
_NOVA = orjson.dumps({"schemaVersion": "messages-v1", "messages": [{"role": "user", "content": [{"text": "Joke?"}]}],
                      "inferenceConfig": {"maxTokens": 50, "topK": 20}})
_NOVA_ANSWER = orjson.dumps({"output": {"message": {"role": "assistant", "content": [{"text": "No."}]}},
                             "stopReason": "end_turn", "usage": {"inputTokens": 3, "outputTokens": 1}})


def test_an_embedding_request_is_not_read_as_a_responses_request():
    # traceloop/openllmetry's llama-index cassettes: `input` is Responses' field too; OR-13 fired on every string.
    for path in ("/v1/embeddings", "/api/embed"):
        result = analyse(_flow(path, _EMBEDDING, status=200, response_body=_EMBEDDED))
        assert (result.dialect, result.violations) == (None, [])


def test_a_dialect_on_a_path_of_its_own_is_still_told_by_shape_near_miss():
    result = analyse(_flow("/gateway/llm", _RESPONSES, status=200, response_body=_RESPONDED))
    assert (result.dialect, [(v.rule, v.pointer) for v in result.violations]) == (
        Dialect.OPENAI_RESPONSES, [("OR-03", "/tools/0/name")])


def test_another_makers_invoke_model_is_not_read_as_converse():
    result = analyse(_flow("/model/amazon.nova-lite-v1%3A0/invoke", _NOVA, status=200, response_body=_NOVA_ANSWER))
    assert (result.dialect, result.violations) == (None, [])
    # The near miss: the same fields sent to Converse are Converse's to refuse.
    converse = analyse(_flow("/model/amazon.nova-lite-v1%3A0/converse", _NOVA, status=200, response_body=_NOVA_ANSWER))
    assert (converse.dialect, sorted(v.rule for v in converse.violations)) == (Dialect.BEDROCK, ["BR-13", "BR-13"])
