"""Time to translate a 1 MB tool-calling conversation (about 500 messages, 50 tools, parallel
calls) for every offered pair, and to relay a 1 MB stream. Target: <= 100 ms per pair.

    .venv/bin/python tests/bench/translate_speed.py
"""

from __future__ import annotations

import statistics
import time

import orjson

from inspector.wire.dialect import Dialect
from inspector.wire.dialects.bedrock.stream import encode_event
from inspector.wire.translate import PAIRS, get_bridge

PATHS = {Dialect.OPENAI_CHAT: "/v1/chat/completions", Dialect.OPENAI_RESPONSES: "/v1/responses",
         Dialect.ANTHROPIC: "/v1/messages", Dialect.GEMINI: "/v1beta/models/gemini-2.5-flash:generateContent",
         Dialect.BEDROCK: "/model/amazon.nova-pro-v1%3A0/converse"}
RUNS = 7


def conversation(target_bytes: int = 1 << 20) -> dict:
    tools = [{"type": "function", "function": {
        "name": f"tool_{i}.run", "description": "Does thing number %d with care." % i,
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "what to look for"},
            "limit": {"type": "integer"}, "flags": {"type": "array", "items": {"type": "string"}}},
            "required": ["query"]}}} for i in range(50)]
    messages: list[dict] = [{"role": "system", "content": "You are a careful agent. " * 20}]
    turn = 0
    while len(orjson.dumps({"messages": messages, "tools": tools})) < target_bytes:
        turn += 1
        messages.append({"role": "user", "content": f"Step {turn}: " + "please continue the analysis. " * 30})
        calls = [{"id": f"call_{turn}_{k}", "type": "function", "function": {
            "name": f"tool_{(turn + k) % 50}.run",
            "arguments": orjson.dumps({"query": "lorem ipsum " * 6, "limit": k, "flags": ["a", "b"]}).decode()}}
            for k in range(3)]
        messages.append({"role": "assistant", "content": "Running three tools.", "tool_calls": calls})
        messages.extend({"role": "tool", "tool_call_id": c["id"], "content": "result row with a little payload, id 12345\n" * 40} for c in calls)
    return {"model": "gpt-4o", "messages": messages, "tools": tools}


def stream_body(target_bytes: int = 1 << 20) -> bytes:
    chunks = []
    size = 0
    i = 0
    while size < target_bytes:
        event = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                 "choices": [{"index": 0, "delta": {"content": f"token{i} "}, "finish_reason": None}]}
        chunk = b"data: " + orjson.dumps(event) + b"\n\n"
        chunks.append(chunk)
        size += len(chunk)
        i += 1
    return b"".join(chunks) + b"data: [DONE]\n\n"


def converse_stream_body(target_bytes: int = 1 << 20) -> bytes:
    """ConverseStream text deltas as event-stream frames, about `target_bytes` long."""
    frames = [encode_event({"messageStart": {"role": "assistant"}})]
    size = i = 0
    while size < target_bytes:
        frame = encode_event({"contentBlockDelta": {"delta": {"text": f"token{i} "}, "contentBlockIndex": 0}})
        frames.append(frame)
        size += len(frame)
        i += 1
    return b"".join(frames) + encode_event({"contentBlockStop": {"contentBlockIndex": 0}}) + \
        encode_event({"messageStop": {"stopReason": "end_turn"}})


def timed(fn) -> float:
    samples = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def main() -> None:
    chat = conversation()
    sources = {Dialect.OPENAI_CHAT: chat}
    for dialect in (Dialect.OPENAI_RESPONSES, Dialect.ANTHROPIC, Dialect.GEMINI, Dialect.BEDROCK):
        sources[dialect] = get_bridge(Dialect.OPENAI_CHAT, dialect).request(chat, PATHS[Dialect.OPENAI_CHAT]).payload
    print(f"request translation, median of {RUNS} runs (target <= 100 ms per 1 MB)")
    print(f"{'pair':40} {'input':>9} {'messages':>9} {'ms':>8} {'MB/s':>7}")
    worst = 0.0
    for source, target in PAIRS:
        payload = sources[source]
        size = len(orjson.dumps(payload))
        bridge = get_bridge(source, target)
        ms = timed(lambda: bridge.request(payload, PATHS[source]))
        worst = max(worst, ms)
        count = len(payload.get("messages") or payload.get("input") or payload.get("contents") or [])
        print(f"{source.value + ' -> ' + target.value:40} {size / 1e6:7.2f}MB {count:9d} {ms:8.1f} {size / 1e3 / ms:7.1f}")
    body = stream_body()
    print(f"\nstream relay of {len(body) / 1e6:.2f} MB of chat chunks, fed 4 KiB at a time")
    streams = [(source, Dialect.OPENAI_CHAT, body) for source in
               (Dialect.OPENAI_RESPONSES, Dialect.ANTHROPIC, Dialect.GEMINI, Dialect.BEDROCK)]
    converse = converse_stream_body()
    streams += [(source, Dialect.BEDROCK, converse) for source in
                (Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES, Dialect.ANTHROPIC, Dialect.GEMINI)]
    for source, target, body in streams:
        if target is Dialect.BEDROCK and source is Dialect.OPENAI_CHAT:
            print(f"stream relay of {len(body) / 1e6:.2f} MB of ConverseStream frames, fed 4 KiB at a time")
        bridge = get_bridge(source, target)
        state = bridge.request(sources[source], PATHS[source]).state

        def relay() -> None:
            translator = bridge.stream(state)
            for i in range(0, len(body), 4096):
                translator.feed(body[i:i + 4096])
            translator.close()

        ms = timed(relay)
        print(f"{target.value + ' stream -> ' + source.value:40} {ms:8.1f} ms {len(body) / 1e3 / ms:7.1f} MB/s")
    print(f"\nworst request pair: {worst:.1f} ms ({'within' if worst <= 100 else 'OVER'} the 100 ms target)")


if __name__ == "__main__":
    main()
