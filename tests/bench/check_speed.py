"""How fast the contract checker reads a 1 MB tool-calling conversation (about 500 messages, 50 tools,
parallel calls), per dialect: parse + check, and check alone. Target: ≤ 50 ms per MB on one core.

Run: .venv/bin/python tests/bench/check_speed.py"""

from __future__ import annotations

import statistics
import time

import orjson

from inspector.wire import check
from inspector.wire.dialect import Dialect
from inspector.wire.fix import fix
from inspector.wire.translate import get_bridge

TARGET_BYTES = 1_000_000


# The check's own CPU time, not the wall clock: on a shared machine (CI, eight helpers on two cores)
# wall time measures the neighbours; one thread's CPU seconds are what the check costs.
clock = time.process_time


def tools(count: int = 50) -> list[dict]:
    return [{"type": "function", "function": {
        "name": f"tool_{i}", "description": f"Tool number {i} does a thing with its inputs. " * 3,
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "what to look for"},
            "limit": {"type": "integer", "minimum": 1},
            "filters": {"type": "array", "items": {"type": "object", "properties": {
                "field": {"type": "string"}, "value": {"type": ["string", "null"]}}}},
            "mode": {"type": "string", "enum": ["fast", "deep"]}}, "required": ["query"]}}}
        for i in range(count)]


def chat_conversation() -> dict:
    messages: list[dict] = [{"role": "system", "content": "You are a careful agent. " * 20}]
    turn = 0
    while len(messages) < 500:
        turn += 1
        messages.append({"role": "user", "content": f"Step {turn}: look into item {turn}. " * 10})
        calls = [{"id": f"call_{turn}_{k}", "type": "function", "function": {
            "name": f"tool_{(turn + k) % 50}",
            "arguments": orjson.dumps({"query": f"item {turn} part {k}", "limit": k + 1,
                                       "filters": [{"field": "f", "value": "v" * 20}] * 3}).decode()}}
            for k in range(3)]
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": "result line of text. " * 40}
                     for c in calls]
        messages.append({"role": "assistant", "content": "Noted the results for this step. " * 8})
    payload = {"model": "gpt-test", "tools": tools(), "parallel_tool_calls": True, "messages": messages}
    results = [m for m in messages if m["role"] == "tool"]
    deficit = TARGET_BYTES - len(orjson.dumps(payload))
    for message in results:  # pad the tool results until the body is about 1 MB
        message["content"] += "x" * max(0, deficit // len(results))
    return payload


def anthropic_conversation(chat: dict) -> dict:
    messages = []
    for message in chat["messages"][1:]:
        if message["role"] == "assistant" and message.get("tool_calls"):
            messages.append({"role": "assistant", "content": [
                {"type": "tool_use", "id": c["id"], "name": c["function"]["name"],
                 "input": orjson.loads(c["function"]["arguments"])} for c in message["tool_calls"]]})
        elif message["role"] == "tool":
            if messages[-1]["role"] != "user" or isinstance(messages[-1]["content"], str):
                messages.append({"role": "user", "content": []})
            messages[-1]["content"].append({"type": "tool_result", "tool_use_id": message["tool_call_id"],
                                            "content": message["content"]})
        else:
            messages.append({"role": message["role"], "content": message["content"]})
    return {"model": "claude", "max_tokens": 100, "messages": messages, "tools": [
        {"name": t["function"]["name"], "description": t["function"]["description"],
         "input_schema": t["function"]["parameters"]} for t in chat["tools"]]}


def chat_stream() -> bytes:
    """About 1 MB of chat chunks: 3 parallel calls interleaved, arguments in 40-character fragments."""
    arguments = orjson.dumps({"query": "q" * 60_000, "limit": 3}).decode()
    events = [{"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": k, "id": f"call_{k}", "type": "function", "function": {"name": f"tool_{k}", "arguments": ""}}]}}]}
        for k in range(3)]
    for start in range(0, len(arguments), 40):
        for k in range(3):
            events.append({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": k, "function": {"arguments": arguments[start:start + 40]}}]}}]})
    events.append({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {},
                                                                  "finish_reason": "tool_calls"}]})
    return b"".join(b"data: " + orjson.dumps(e) + b"\n\n" for e in events) + b"data: [DONE]\n\n"


def measure_stream(body: bytes, runs: int = 10) -> float:
    assert check.check_stream(body, "openai-chat") == []
    times = []
    for _ in range(runs):
        start = clock()
        check.check_stream(body, "openai-chat")
        times.append(clock() - start)
    megabytes = len(body) / 1e6
    per_mb = statistics.median(times) * 1000 / megabytes
    print(f"{'openai-chat stream':<28} {megabytes:5.2f} MB  parse+check {per_mb:6.1f} ms/MB "
          f"({megabytes / statistics.median(times):6.1f} MB/s)   ({body.count(b'data: ')} SSE events)")
    return per_mb


def measure(label: str, body: bytes, dialect: str, runs: int = 30) -> float:
    parsed = orjson.loads(body)
    assert [v for v in check.check_request(parsed, dialect) if v.severity.value == "error"] == [], label
    full, only = [], []
    for _ in range(runs):
        start = clock()
        check.check_request(orjson.loads(body), dialect)
        middle = clock()
        check.check_request(parsed, dialect)
        end = clock()
        full.append(middle - start)
        only.append(end - middle)
    megabytes = len(body) / 1e6
    parse_check = statistics.median(full) * 1000 / megabytes
    check_only = statistics.median(only) * 1000 / megabytes
    print(f"{label:<28} {len(body) / 1e6:5.2f} MB  parse+check {parse_check:6.1f} ms/MB "
          f"({megabytes / statistics.median(full):6.1f} MB/s)   check only {check_only:6.1f} ms/MB "
          f"({megabytes / statistics.median(only):6.1f} MB/s)")
    return parse_check


def main() -> None:
    chat = chat_conversation()
    body = orjson.dumps(chat)
    messages = len(chat["messages"])
    calls = sum(len(m.get("tool_calls") or []) for m in chat["messages"])
    print(f"conversation: {messages} messages, {len(chat['tools'])} tools, {calls} tool calls (3 parallel per turn)")
    worst = measure("openai-chat request", body, "openai-chat")
    worst = max(worst, measure("anthropic request", orjson.dumps(anthropic_conversation(chat)), "anthropic"))
    gemini = get_bridge(Dialect.OPENAI_CHAT, Dialect.GEMINI).request(chat, "/v1/chat/completions").payload
    worst = max(worst, measure("gemini request", orjson.dumps(gemini), "gemini"))
    worst = max(worst, measure_stream(chat_stream()))
    start = clock()
    fix(chat, "openai-chat")
    print(f"fix (clean 1 MB chat, copy + scan)   {(clock() - start) * 1000:6.1f} ms")
    print(f"target ≤ 50 ms/MB of CPU: {'met' if worst <= 50 else 'NOT met'} (worst {worst:.1f} ms/MB)")


if __name__ == "__main__":
    main()
