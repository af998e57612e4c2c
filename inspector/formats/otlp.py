"""OTLP/JSON trace files as a recording format: written from the flows themselves (inspector.otlp.
spans makes the GenAI spans, one trace per recorded session), read back each GenAI LLM span as a
turn, said to be rebuilt. The codec is `otlp_json`, imported here only after `require()`: it needs
the optional `[otel]` extra, and the registry (so `check` and `open`) must import without it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..otlp import OtelMissing, require
from ..redact import redacted
from .base import Exported, LoadError, Turn, WriteOptions

MARK = b'"resourceSpans"'


def read(data: bytes, document: Any, source: str) -> list[Turn]:
    try:
        require()
    except OtelMissing as exc:
        raise LoadError(f"{source}: an OTLP/JSON trace: {exc}") from exc
    from .otlp_json import OtlpError, flows

    try:
        found = flows(data, source)
    except OtlpError as exc:
        raise LoadError(str(exc)) from exc
    if not found:
        raise LoadError(f"{source}: an OTLP/JSON trace with no GenAI LLM span (gen_ai.operation.name chat, "
                        "generate_content or text_completion)")
    return [Turn(redacted(flow), where) for flow, where in found]


def write(turns: Sequence[Exported], options: WriteOptions) -> bytes:
    """The spans of the turns' flows; an OtelMissing without the extra."""
    require()
    from ..otlp import spans
    from .otlp_json import dumps

    origins = {turn.origin.id: turn.origin for turn in turns if turn.origin is not None}
    starts = {turn.flow.session_id: turn.session_started for turn in turns if turn.flow is not None}
    analysed = {turn.flow.id: turn.analysis for turn in turns if turn.flow is not None and turn.analysis is not None}
    builder = spans.TraceBuilder(options.spans or spans.options(), get=origins.get, session_started=starts.get,
                                 analysed=lambda flow: analysed.get(flow.id))
    return dumps(builder.spans([turn.flow for turn in turns if turn.flow is not None]))
