"""Where the wire layers find this dialect's parts."""

from ...dialect import Dialect
from ...sse import SSE
from ...rules.spec import Spec
from ...violations import Severity
from .. import Home, Paths
from . import SHORT
from ..openai_chat import providers
from ..openai_chat.mock import openai_error
from ..openai_chat.shape import NAMES
from . import bridge, fix, mock, opaque, records, rules, shape, stream, summary, tolerances

HOME = Home(Dialect.OPENAI_RESPONSES, rules=rules, reassemble=stream.reassemble, is_final=stream.is_final,
            is_response=shape.is_response, fix=fix.fix, summary=summary,
            mock_response=mock.responses_result, mock_events=mock.responses_stream, mock_error=openai_error,
            bridge=bridge,
            endpoint=shape.ENDPOINT, request_path=shape.request_path, history="input",
            short=SHORT, framing=SSE, framing_for=None, paths=Paths(shape.claims), names=NAMES, ids=shape.IDS,
            judged=shape.JUDGED, stream_event=shape.stream_event, marks=shape.marks, describe=shape.describe,
            records=records.RULES, references=records.REFERENCE, declared=rules.declared, profiles=providers.PROFILES, providers=(providers.OPENAI, providers.AZURE, providers.COMPATIBLE),
            spec=Spec("openai.json", "openai-responses", "OR-13", "OR-14", Severity.INFO),
            tool_declaration=bridge.emit_tools, tool_result=bridge.emit_tool_result, tolerances=tolerances.TOLERANCES, opaque=opaque.carried)
