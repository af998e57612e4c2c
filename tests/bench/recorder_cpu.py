"""What recording costs per flow in the writer, step by step, in this process's CPU time: the
pending row's redaction, the stream-progress scrubber, the finished flow's redaction and its
analysis summary (the checker, the reassembled stream, usage), for a small Chat request and a
20-event stream, each beside a floor measured in the same run (one orjson parse of the flow's
bodies: the least any analysis does). A recorder's share of `proxy_overhead.py`'s CPU figure,
without the sockets' noise.

    .venv/bin/python tests/bench/recorder_cpu.py [--flows N]"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import orjson

from inspector.flow import Chunk, Flow, FlowState
from inspector.redact import Scrubber, redacted, scrubber
from inspector.store.analysis_worker import Analyser

KEY = "sk-bench" + "x" * 40
REQUEST = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Weather in Paris?"}],
                      "tools": [{"type": "function", "function": {"name": "weather", "parameters": {
                          "type": "object", "properties": {"city": {"type": "string"}}}}}]}).encode()
ANSWER = json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
                     "choices": [{"index": 0, "message": {"role": "assistant", "content": "Sunny."},
                                  "finish_reason": "stop"}],
                     "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}).encode()


def _event(delta: dict, finish: str | None = None) -> bytes:
    return b"data: " + json.dumps({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                                   "model": "gpt-4o-mini",
                                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).encode() + b"\n\n"


EVENTS = [_event({"role": "assistant", "content": ""}), *(_event({"content": f"word{n} "}) for n in range(18)),
          _event({}, "stop"), b"data: [DONE]\n\n"]


def flow(flow_id: int, *, stream: bool) -> Flow:
    body = b"".join(EVENTS) if stream else ANSWER
    return Flow(
        id=flow_id, session_id=1, started_at=time.time(), method="POST", path="/v1/chat/completions",
        request_headers=[("host", "127.0.0.1:9"), ("content-type", "application/json"),
                         ("authorization", f"Bearer {KEY}"), ("user-agent", "bench")],
        request_body=REQUEST, upstream_url="http://127.0.0.1:9/v1/chat/completions",
        upstream_request_headers=[("content-type", "application/json"), ("authorization", f"Bearer {KEY}")],
        status=200, response_headers=[("content-type", "text/event-stream" if stream else "application/json")],
        response_body=body, streamed=stream,
        chunks=[Chunk(n * 0.005, event) for n, event in enumerate(EVENTS)] if stream else [],
        state=FlowState.COMPLETE, latency_ms=1.0, ttfb_ms=1.0, secrets=(KEY,))


def progress_write(scrub: Scrubber, flow: Flow) -> list[bytes] | None:
    """The scrub of chunks 10 to 12 after the first 10, a stream-progress write's (none for a flow
    that did not stream: its row then reads as the scrubber's cost alone)."""
    if not flow.chunks:
        return None
    return scrub.stream(b"".join(c.data for c in flow.chunks[:10]), [c.data for c in flow.chunks[10:13]])


def per_flow(step: Callable[[Flow], object], *, stream: bool, flows: int) -> float:
    """Microseconds of CPU per flow that `step` takes (after a warm-up: caches filled as in a recorder)."""
    made = [flow(n, stream=stream) for n in range(flows)]
    for each in made[: flows // 10]:
        step(each)
    start = time.process_time()
    for each in made:
        step(each)
    return (time.process_time() - start) / flows * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flows", type=int, default=3000)
    flows = parser.parse_args().flows
    analyser = Analyser(1 << 40)  # in this process: the step, not a hand-off, is measured
    try:
        steps: list[tuple[str, Callable[[Flow], object]]] = [
            ("floor: orjson parse of the bodies", lambda f: (orjson.loads(f.request_body), orjson.loads(
                f.response_body) if not f.streamed else [orjson.loads(c.data[6:]) for c in f.chunks[:-1]])),
            ("pending row: redacted(request_only)", lambda f: redacted(f, request_only=True)),
            ("stream progress: scrubber", scrubber),
            # A write of an open stream's new chunks (the writer's every PROGRESS_INTERVAL), its
            # scrubber made: what came before is the context a secret cut across them is read in.
            ("stream progress: one write of 3 chunks", lambda f: progress_write(scrubber(f), f)),
            ("finished flow: redacted", redacted),
            ("analysis summary of the redacted flow", lambda f: analyser.summary(redacted(f))),
        ]
        print(f"recorder CPU per flow ({flows} flows each), microseconds and × the floor")
        print(f"| {'step':40s} | {'small':>8s} | {'×':>5s} | {'20-event stream':>15s} | {'×':>5s} |")
        print(f"|{'-' * 42}|{'-' * 10}|{'-' * 7}|{'-' * 17}|{'-' * 7}|")
        floor = {}
        for name, step in steps:
            small, streamed = per_flow(step, stream=False, flows=flows), per_flow(step, stream=True, flows=flows)
            floor.setdefault("small", small)
            floor.setdefault("stream", streamed)
            print(f"| {name:40s} | {small:8.1f} | {small / floor['small']:5.1f} | {streamed:15.1f} | "
                  f"{streamed / floor['stream']:5.1f} |")
    finally:
        analyser.close()


if __name__ == "__main__":
    main()
