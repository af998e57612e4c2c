"""Translation between dialects with loss reports (issue 4). Pure: no I/O.

    bridge = get_bridge(Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES)
    sent = bridge.request(body, "/v1/chat/completions")     # .payload, .path, .losses, .state
    back = bridge.response(upstream_body, sent.state)        # .payload, .losses
    relay = bridge.stream(sent.state)                        # .feed(bytes) -> bytes, .close(), .losses
"""

from __future__ import annotations

import time
from typing import Any, Literal

from .. import jsonsafe
from ..dialect import Dialect
from ..dialects import home
from .bridge import PAIRS, Bridge, RequestTranslation, ResponseTranslation, StreamTranslator, get_bridge
from ..violations import Severity, Violation
from .model import Loss, State, TranslationError, UnsupportedPair

__all__ = ["PAIRS", "Bridge", "Loss", "RequestTranslation", "ResponseTranslation", "State", "StreamTranslator",
           "TranslationError", "UnsupportedPair", "get_bridge", "output_errors", "translate_document"]


def translate_document(payload: Any, source: Dialect | str, target: Dialect | str,
                       kind: Literal["request", "response"] = "request") -> tuple[dict[str, Any], list[Loss]]:
    """One document from `source` into `target`. A request goes through the bridge source->target;
    a response through the bridge target->source (the way a response travels). From MCP, a
    tools/list result becomes `{"tools": [...]}` and a tools/call result the target's result item.
    An MCP document nested deeper than can be written back raises jsonsafe.Unfaithful. Every error
    the source's own checker finds in the document is reported as "carried": no translation mends
    it, and the output may have it too."""
    source, target = Dialect(source), Dialect(target)
    translated, losses = _translate(payload, source, target, kind)
    if source is not Dialect.MCP:
        # Imported here: the checker loads every dialect's home, whose bridges import this package.
        from ..check import check_request, check_response

        judge = check_request if kind == "request" else check_response
        losses.extend(Loss(v.pointer, None, "carried", f"the input already has this error: {v.message}", v.rule)
                      for v in judge(payload, source) if v.severity is Severity.ERROR)
    return translated, losses


def output_errors(translated: Any, target: Dialect | str, kind: Literal["request", "response"] = "request",
                  source: Dialect | str | None = None) -> list[Violation]:
    """The error findings of the translated document's own dialect (the target for a request, the
    source for a response): a translation with any is not a payload the provider takes. An MCP
    document becomes a fragment (tools, one result item), which no request checker judges whole."""
    from ..check import check_request, check_response  # see translate_document

    dialect = Dialect(target) if kind == "request" else Dialect(source or target)
    if source is not None and Dialect(source) is Dialect.MCP:
        return []
    judged = check_request(translated, dialect) if kind == "request" else check_response(translated, dialect)
    return [v for v in judged if v.severity is Severity.ERROR]


def _translate(payload: Any, source: Dialect, target: Dialect,
               kind: Literal["request", "response"]) -> tuple[dict[str, Any], list[Loss]]:
    if source is Dialect.MCP:
        # Imported here: MCP's bridge writes into every other dialect's bridge, and those import
        # this package, so a module-level import would be a cycle whichever loads first.
        from ..dialects.mcp import bridge as mcp

        if target is Dialect.MCP:
            raise UnsupportedPair("MCP to MCP is not a translation")
        jsonsafe.check_writable(payload)  # the schema walks recurse: refuse nesting they cannot take
        return mcp.tools(payload, target) if mcp.kind_of(payload) == "tools" else mcp.result_item(payload, target)
    if kind == "response":
        bridge = get_bridge(target, source)
        translated = bridge.response(payload, State(target, source, created=int(time.time())))
        return translated.payload, translated.losses
    bridge = get_bridge(source, target)
    model = str(payload.get("model") or "") if isinstance(payload, dict) else ""
    request_path = home(source).request_path
    assert request_path is not None  # get_bridge refused a source without one
    path = request_path("/v1", model, False)
    request = bridge.request(payload, path)
    return request.payload, request.losses
