"""Where the wire layers find this dialect's parts."""

from ...dialect import Dialect
from ...rules.spec import Spec
from ...sse import SSE
from ...violations import Severity
from .. import Home, Paths
from . import SHORT
from . import bridge, fix, mock, opaque, providers, records, rules, shape, stream, summary, tolerances

HOME = Home(Dialect.ANTHROPIC, rules=rules, reassemble=stream.reassemble, is_final=stream.is_final,
            is_response=shape.is_response, fix=fix.fix, summary=summary,
            mock_response=mock.anthropic_message, mock_events=mock.anthropic_stream, mock_error=mock.anthropic_error, bridge=bridge,
            endpoint=shape.ENDPOINT, request_path=shape.request_path, history="messages",
            short=SHORT, framing=SSE, framing_for=None, paths=Paths(shape.claims), names=shape.NAMES,
            ids=shape.IDS, judged=shape.JUDGED, stream_event=shape.stream_event, marks=shape.marks, describe=shape.describe,
            records=records.RULES, references=records.REFERENCE, declared=rules.declared, profiles=providers.PROFILES, providers=(providers.ANTHROPIC,),
            spec=Spec("anthropic.json", "anthropic", "AN-14", None, Severity.WARNING),
            tool_declaration=bridge.emit_tools, tool_result=bridge.emit_tool_result, tolerances=tolerances.TOLERANCES, opaque=opaque.carried)
