"""A document's dialect told by its fields alone (`check` on a file, a flow whose path names none):
each home names its own marks (`Home.marks`). The documents are as recorded in outside cassettes."""

from __future__ import annotations

import orjson
import pytest

from inspector.cli import main
from inspector.wire.dialect import Dialect, from_shape

# traceloop/openllmetry test_meta_converse, and a Converse tool loop as boto3 sends it.
CONVERSE = {"messages": [{"role": "user", "content": [{"text": "Tell me a joke about opentelemetry"}]}],
            "system": [{"text": "You are an app that knows about everything."}],
            "inferenceConfig": {"temperature": 0.5}, "additionalModelRequestFields": {}}
CONVERSE_LOOP = {"messages": [
    {"role": "user", "content": [{"text": "Weather in Paris?"}]},
    {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {"city": "Paris"}}}]},
    {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "Sunny"}]}}]}]}
# Arize-ai/openinference TestNovaInvokeModel.test_nova_converse
CONVERSE_ANSWER = {"metrics": {"latencyMs": 377}, "output": {"message": {"role": "assistant", "content": [
    {"text": "Paris."}]}}, "stopReason": "end_turn", "usage": {"inputTokens": 7, "outputTokens": 3, "totalTokens": 10}}


@pytest.mark.parametrize("document,dialect", [
    (CONVERSE, Dialect.BEDROCK), (CONVERSE_LOOP, Dialect.BEDROCK), (CONVERSE_ANSWER, Dialect.BEDROCK),
    # The near misses: each other dialect's documents of the same fields.
    ({"model": "claude-sonnet-4-5", "max_tokens": 9, "system": [{"type": "text", "text": "Be brief."}],
      "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]}, Dialect.ANTHROPIC),
    ({"model": "claude-sonnet-4-5", "max_tokens": 9, "system": [], "messages": [{"role": "user", "content": "Hi"}]},
     Dialect.ANTHROPIC),
    ({"model": "claude-sonnet-4-5", "max_tokens": 9, "system": "Be brief.", "messages": []}, Dialect.ANTHROPIC),
    ({"model": "gpt-4o", "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]},
     Dialect.OPENAI_CHAT),
    ({"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}]}, Dialect.OPENAI_CHAT),
    ({"id": "resp_1", "object": "response", "output": [{"type": "message", "role": "assistant", "content": []}]},
     Dialect.OPENAI_RESPONSES),
    ({"model": "gpt-5", "input": "Hi"}, Dialect.OPENAI_RESPONSES),
    ({"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}, Dialect.GEMINI),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, Dialect.MCP),
    # Azure's prompt filter under a 200 (traceloop): no dialect's fields.
    ({"error": {"message": "The response was filtered", "code": "content_filter"}}, None),
])
def test_each_dialect_is_told_by_its_own_marks(document, dialect):
    assert from_shape(document) is dialect


def test_a_converse_request_given_to_check_is_judged_as_bedrock(tmp_path, capsys):
    # Judged as Anthropic's it had three errors: no type on either block, no max_tokens.
    (tmp_path / "converse.json").write_bytes(orjson.dumps(CONVERSE))
    assert main(["check", str(tmp_path / "converse.json")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 file checked: 0 error(s), 0 warning(s), 0 info"
