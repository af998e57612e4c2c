"""A fake model's answer as the Responses API writes it: a `response`, or its named stream events."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...canned import Call, split


def responses_result(text: str | None = None, calls: Iterable[Call] = (), model: str = "gpt-4o-mini") -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if text is not None:
        output.append({"type": "message", "id": "msg_mock", "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]})
    for n, call in enumerate(calls):
        output.append({"type": "function_call", "id": f"fc_mock_{n}", "call_id": call.id, "name": call.name,
                       "arguments": call.arguments, "status": "completed"})
    return {
        "id": "resp_mock", "object": "response", "created_at": 1700000000, "status": "completed", "model": model,
        "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                  "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
    }


def responses_stream(text: str | None = None, calls: Iterable[Call] = (), model: str = "gpt-4o-mini",
                     pieces: int = 3) -> list[tuple[str, dict[str, Any]]]:
    calls = list(calls)
    final = responses_result(text, calls, model)
    in_progress = {**final, "status": "in_progress", "output": []}
    events: list[tuple[str, dict[str, Any]]] = []

    def emit(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": len(events), **data}))

    emit("response.created", response=in_progress)
    for index, item in enumerate(final["output"]):
        if item["type"] == "message":
            emit("response.output_item.added", output_index=index, item={**item, "status": "in_progress", "content": []})
            part = {"type": "output_text", "text": "", "annotations": []}
            emit("response.content_part.added", item_id=item["id"], output_index=index, content_index=0, part=part)
            for piece in split(text or "", pieces):
                emit("response.output_text.delta", item_id=item["id"], output_index=index, content_index=0,
                     delta=piece, logprobs=[])
            emit("response.output_text.done", item_id=item["id"], output_index=index, content_index=0,
                 text=text, logprobs=[])
            emit("response.content_part.done", item_id=item["id"], output_index=index, content_index=0,
                 part=item["content"][0])
        else:
            emit("response.output_item.added", output_index=index,
                 item={**item, "arguments": "", "status": "in_progress"})
            for piece in split(item["arguments"], pieces):
                emit("response.function_call_arguments.delta", item_id=item["id"], output_index=index, delta=piece)
            emit("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                 arguments=item["arguments"])
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.completed", response=final)
    return events

