"""Where the wire layers find this dialect's parts."""

from ...dialect import Dialect
from ...sse import SSE
from ...rules.spec import Spec
from ...violations import Severity
from .. import Home, Paths
from . import SHORT
from . import bridge, fix, mock, providers, records, rules, shape, stream, summary, tolerances

HOME = Home(Dialect.OPENAI_CHAT, rules=rules, reassemble=stream.reassemble, is_final=stream.is_final,
            is_response=shape.is_response, fix=fix.fix, summary=summary,
            mock_response=mock.chat_completion, mock_events=mock.chat_stream, mock_error=mock.openai_error, bridge=bridge,
            endpoint=shape.ENDPOINT, request_path=shape.request_path, history="messages",
            short=SHORT, framing=SSE, framing_for=None, paths=Paths(shape.claims, model=shape.deployment), names=shape.NAMES, ids=shape.IDS,
            judged=shape.JUDGED, stream_event=shape.stream_event, marks=shape.marks, describe=shape.describe,
            records=records.RULES, references=records.REFERENCE, declared=rules.declared, profiles=providers.PROFILES, providers=(providers.OPENAI, providers.AZURE, providers.COMPATIBLE),
            spec=Spec("openai.json", "openai-chat", "OC-28", "OC-29", Severity.INFO),
            tool_declaration=bridge.emit_tools, tool_result=bridge.emit_tool_result, tolerances=tolerances.TOLERANCES)
